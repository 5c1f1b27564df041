//! Pentago search: an exact win/draw/loss solver and a depth-limited alpha-beta for the levels.
//! Classic positions with few empty cells go to the midgame solver instead ([`mid`]).
//!
//! Both work on their own copy of the board: two packed `u64` bitboards (the side to move's
//! marbles first), laid out like `hakem_games::pentago` (quadrant `q` in bits `16q..16q+9`), so
//! a quarter turn is one 512-entry table lookup and five-in-a-row is four lookups.
//!
//! Internal moves are `u16`: the packed bit of the cell in the low 6 bits and a turn code above
//! (`quadrant * 2 + direction`, 0 = clockwise; [`BARE`] for a classic winning placement).

use std::sync::OnceLock;
use std::time::{Duration, Instant};

use hakem_games::pentago::{Cell, Direction, DoubleFive, Move, Position, Quadrant, Rules, Turn};
use hakem_games::Game;

pub mod mid;

/// The 36 cells of the packed layout.
const FULL: u64 = 0x01ff_01ff_01ff_01ff;
/// Turn code of a move without a turn.
const BARE: u16 = 8;
/// Most children a node can have: 36 cells x 8 turns.
const MAX_MOVES: usize = 288;
/// The marble-count bound is only worth its cost below this many marbles to place (measured:
/// at 3 or more it prunes about 1% of the nodes and costs 20% of the time).
const COUNT_BOUND_MOVES: u32 = 1;
/// Deepest truncated win probe of the solver's iterative deepening.
const MAX_PROBE_DEPTH: u8 = 7;
/// Nodes with at least this many empty cells order their children by the static score.
const ORDER_EVAL_EMPTIES: u32 = 7;

// ---------------------------------------------------------------------------------------------
// Tables, built once.

struct Tables {
    /// `rot[dir][bits]`: a quadrant's 9 bits after a clockwise (0) or counter-clockwise (1) turn.
    rot: [[u16; 512]; 2],
    /// `win[q][bits]`: the lines (of 32) whose cells in quadrant `q` are all in `bits`.
    win: [[u32; 512]; 4],
    /// `anyrot[q][bits]`: lines that some rotation of quadrant `q` could fill from `bits`; a side
    /// whose marbles and empty cells give no line here can never make five.
    anyrot: [[u32; 512]; 4],
    /// `bitrot[turn][bit]`: where a single marble at packed `bit` goes under `turn`.
    bitrot: [[u64; 64]; 8],
    /// `sym_tern[s][bits]`: the quadrant's bits under board symmetry `s`, in base 3 (digit 1).
    sym_tern: [[u16; 512]; 8],
    /// `sym_quad[s][q]`: the quadrant that `q` goes to under symmetry `s`.
    sym_quad: [[u8; 4]; 8],
    /// Packed bit -> packed bit, and turn code -> turn code, under each symmetry.
    sym_bit: [[u8; 64]; 8],
    sym_turn: [[u8; 9]; 8],
    /// The inverse of each symmetry.
    sym_inv: [u8; 8],
    /// The 32 lines as packed masks, and each line's cells in each quadrant (9-bit masks).
    lines: [u64; 32],
    line_parts: [[u16; 4]; 32],
    /// Packed bit of each cell index (rank * 6 + file), and back.
    cell_bit: [u8; 36],
    bit_cell: [u8; 64],
}

fn tables() -> &'static Tables {
    static TABLES: OnceLock<Box<Tables>> = OnceLock::new();
    TABLES.get_or_init(build_tables)
}

fn packed_bit(file: u8, rank: u8) -> u8 {
    let quadrant = (rank / 3) * 2 + file / 3;
    16 * quadrant + (rank % 3) * 3 + file % 3
}

/// The cell (file, rank) under symmetry `s`: mirror (s >= 4) first, then s % 4 clockwise quarter
/// turns, the same convention as `hakem_games::pentago::Symmetry`.
fn sym_coords(s: usize, file: u8, rank: u8) -> (u8, u8) {
    let (mut x, mut y) = (file, rank);
    if s >= 4 {
        x = 5 - x;
    }
    for _ in 0..s % 4 {
        (x, y) = (y, 5 - x);
    }
    (x, y)
}

fn build_tables() -> Box<Tables> {
    let mut t = Box::new(Tables {
        rot: [[0; 512]; 2],
        win: [[0; 512]; 4],
        anyrot: [[0; 512]; 4],
        bitrot: [[0; 64]; 8],
        sym_tern: [[0; 512]; 8],
        sym_quad: [[0; 4]; 8],
        sym_bit: [[0; 64]; 8],
        sym_turn: [[0; 9]; 8],
        sym_inv: [0; 8],
        lines: [0; 32],
        line_parts: [[0; 4]; 32],
        cell_bit: [0; 36],
        bit_cell: [0; 64],
    });
    for bits in 0..512usize {
        for (dir, clockwise) in [(0, true), (1, false)] {
            let mut out = 0u16;
            for local in 0..9 {
                if bits & (1 << local) != 0 {
                    let (row, col) = (local / 3, local % 3);
                    let (r, c) = if clockwise {
                        (2 - col, row)
                    } else {
                        (col, 2 - row)
                    };
                    out |= 1 << (r * 3 + c);
                }
            }
            t.rot[dir][bits] = out;
        }
    }
    for i in 0..36u8 {
        let bit = packed_bit(i % 6, i / 6);
        t.cell_bit[usize::from(i)] = bit;
        t.bit_cell[usize::from(bit)] = i;
    }
    let mut n = 0;
    for (df, dr) in [(1i32, 0i32), (0, 1), (1, 1), (-1, 1)] {
        for start in 0..36i32 {
            let (f0, r0) = (start % 6, start / 6);
            let (f4, r4) = (f0 + 4 * df, r0 + 4 * dr);
            if (0..6).contains(&f4) && r4 < 6 {
                let mut mask = 0u64;
                for k in 0..5 {
                    mask |= 1 << packed_bit((f0 + k * df) as u8, (r0 + k * dr) as u8);
                }
                t.lines[n] = mask;
                n += 1;
            }
        }
    }
    for (line, parts) in t.lines.iter().zip(t.line_parts.iter_mut()) {
        for (q, part) in parts.iter_mut().enumerate() {
            *part = ((line >> (16 * q)) & 0x1ff) as u16;
        }
    }
    for q in 0..4 {
        for bits in 0..512usize {
            let packed = (bits as u64) << (16 * q);
            let mut set = 0u32;
            for (i, line) in t.lines.iter().enumerate() {
                let part = line & (0x1ff << (16 * q));
                if packed & part == part {
                    set |= 1 << i;
                }
            }
            t.win[q][bits] = set;
        }
    }
    for q in 0..4 {
        for bits in 0..512usize {
            let mut b = bits;
            let mut any = 0;
            for _ in 0..4 {
                any |= t.win[q][b];
                b = usize::from(t.rot[0][b]);
            }
            t.anyrot[q][bits] = any;
        }
    }
    for turn in 0..8usize {
        let (q, dir) = (turn / 2, turn % 2);
        for bit in 0..64usize {
            let in_quadrant = bit / 16 == q && bit % 16 < 9;
            t.bitrot[turn][bit] = if in_quadrant {
                u64::from(t.rot[dir][1 << (bit % 16)]) << (16 * q)
            } else {
                1 << bit
            };
        }
    }
    let mut pow3 = [0u16; 9];
    for (i, p) in pow3.iter_mut().enumerate() {
        *p = 3u16.pow(i as u32);
    }
    for s in 0..8 {
        for q in 0..4u8 {
            // The quadrant's centre tells where the quadrant goes.
            let (x, y) = sym_coords(s, 1 + 3 * (q % 2), 1 + 3 * (q / 2));
            t.sym_quad[s][usize::from(q)] = (y / 3) * 2 + x / 3;
        }
        for cell in 0..36u8 {
            let (x, y) = sym_coords(s, cell % 6, cell / 6);
            t.sym_bit[s][usize::from(packed_bit(cell % 6, cell / 6))] = packed_bit(x, y);
        }
        for turn in 0..8u8 {
            let q = t.sym_quad[s][usize::from(turn / 2)];
            let dir = (turn % 2) ^ u8::from(s >= 4);
            t.sym_turn[s][usize::from(turn)] = q * 2 + dir;
        }
        t.sym_turn[s][8] = 8;
        // Every quadrant changes its inside the same way, so quadrant sw's cells tell.
        for bits in 0..512usize {
            let mut tern = 0u16;
            for local in 0..9u8 {
                if bits & (1 << local) != 0 {
                    let (x, y) = sym_coords(s, local % 3, local / 3);
                    tern += pow3[usize::from((y % 3) * 3 + x % 3)];
                }
            }
            t.sym_tern[s][bits] = tern;
        }
    }
    for s in 0..8 {
        for u in 0..8 {
            let identity = (0..36u8).all(|c| {
                let b = usize::from(packed_bit(c % 6, c / 6));
                usize::from(t.sym_bit[u][usize::from(t.sym_bit[s][b])]) == b
            });
            if identity {
                t.sym_inv[s] = u as u8;
            }
        }
    }
    t
}

// ---------------------------------------------------------------------------------------------
// Board primitives.

#[inline(always)]
fn five(t: &Tables, x: u64) -> bool {
    t.win[0][(x & 0x1ff) as usize]
        & t.win[1][((x >> 16) & 0x1ff) as usize]
        & t.win[2][((x >> 32) & 0x1ff) as usize]
        & t.win[3][((x >> 48) & 0x1ff) as usize]
        != 0
}

/// Could a side with marbles `x` make five with at most `moves` more marbles, on `x` and the
/// empty cells `empty`, under any rotations of the quadrants? Exact in the count, generous in
/// the turns; false means it never can.
#[inline]
fn can_five_within(t: &Tables, x: u64, empty: u64, moves: u32) -> bool {
    let avail = x | empty;
    let alive = t.anyrot[0][(avail & 0x1ff) as usize]
        & t.anyrot[1][((avail >> 16) & 0x1ff) as usize]
        & t.anyrot[2][((avail >> 32) & 0x1ff) as usize]
        & t.anyrot[3][((avail >> 48) & 0x1ff) as usize];
    if alive == 0 {
        return false;
    }
    if moves >= COUNT_BOUND_MOVES {
        return true;
    }
    // The four rotations of each quadrant's marbles and available cells.
    let mut rx = [[0u16; 4]; 4];
    let mut ra = [[0u16; 4]; 4];
    for q in 0..4 {
        rx[q][0] = ((x >> (16 * q)) & 0x1ff) as u16;
        ra[q][0] = ((avail >> (16 * q)) & 0x1ff) as u16;
        for k in 1..4 {
            rx[q][k] = t.rot[0][usize::from(rx[q][k - 1])];
            ra[q][k] = t.rot[0][usize::from(ra[q][k - 1])];
        }
    }
    let mut rest = alive;
    while rest != 0 {
        let i = rest.trailing_zeros() as usize;
        rest &= rest - 1;
        let mut need = 0;
        for q in 0..4 {
            let part = t.line_parts[i][q];
            if part == 0 {
                continue;
            }
            let mut best = 9;
            for k in 0..4 {
                if part & !ra[q][k] == 0 {
                    best = best.min((part & !rx[q][k]).count_ones());
                }
            }
            need += best;
        }
        if need <= moves {
            return true;
        }
    }
    false
}

#[inline(always)]
fn rotate(t: &Tables, x: u64, turn: usize) -> u64 {
    let shift = 16 * (turn / 2);
    let part = ((x >> shift) & 0x1ff) as usize;
    (x & !(0x1ff << shift)) | (u64::from(t.rot[turn % 2][part]) << shift)
}

/// The symmetry-reduced key of (me, opp): the smallest base-3 encoding over the symmetries of
/// the rules (4 rotations, or 8 with mirrors), 15 bits per quadrant. It is exact (no two
/// positions share a key), so the table needs no separate verification. Also returns the
/// symmetry that gives the minimum, to carry moves in and out of the canonical frame.
#[inline]
fn canonical_key(t: &Tables, me: u64, opp: u64, symmetries: usize) -> (u64, usize) {
    let mq = [
        (me & 0x1ff) as usize,
        ((me >> 16) & 0x1ff) as usize,
        ((me >> 32) & 0x1ff) as usize,
        ((me >> 48) & 0x1ff) as usize,
    ];
    let oq = [
        (opp & 0x1ff) as usize,
        ((opp >> 16) & 0x1ff) as usize,
        ((opp >> 32) & 0x1ff) as usize,
        ((opp >> 48) & 0x1ff) as usize,
    ];
    let mut best = (u64::MAX, 0);
    for s in 0..symmetries {
        let tern = &t.sym_tern[s];
        let dst = &t.sym_quad[s];
        let mut key = 0u64;
        for q in 0..4 {
            let v = u64::from(tern[mq[q]]) + 2 * u64::from(tern[oq[q]]);
            key |= v << (15 * u32::from(dst[q]));
        }
        if key < best.0 {
            best = (key, s);
        }
    }
    best
}

fn map_move(t: &Tables, mv: u16, s: usize) -> u16 {
    let bit = usize::from(mv & 63);
    let turn = usize::from(mv >> 6).min(8);
    u16::from(t.sym_bit[s][bit]) | (u16::from(t.sym_turn[s][turn]) << 6)
}

/// The rule switches, as the inner loops want them.
#[derive(Clone, Copy, Debug)]
struct Flags {
    ccw: bool,
    empty_turns: bool,
    placement_wins: bool,
    double_five_wins: bool,
    symmetries: usize,
}

impl Flags {
    fn new(rules: &Rules) -> Flags {
        Flags {
            ccw: !rules.clockwise_only,
            empty_turns: rules.empty_quadrant_turns,
            placement_wins: rules.placement_wins,
            double_five_wins: rules.double_five == DoubleFive::MoverWins,
            symmetries: rules.symmetries().len(),
        }
    }
}

/// What a move does at once.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Effect {
    Win,
    Draw,
    Loss,
    /// The game goes on; the child's boards (its side to move first).
    Next(u64, u64),
}

#[derive(Clone, Copy, Default)]
struct Child {
    me: u64,
    opp: u64,
    mv: u16,
    score: i32,
}

/// The children of a node, with the immediate results sorted out.
struct Expansion {
    /// A move that wins at once, if any.
    win: Option<u16>,
    /// A move that draws at once (double five under classic, or the last cell), if any.
    draw: Option<u16>,
    /// A move that loses at once, if any (to have a move to return when all lose).
    loss: Option<u16>,
    len: usize,
}

/// Fills `out` with the non-terminal children of (me, opp); stops at the first winning move.
/// Moves that give the same child as one already listed for the same cell (a turn that leaves
/// its quadrant unchanged, or a counter-clockwise turn equal to the clockwise one) are skipped.
#[inline]
fn expand(t: &Tables, f: Flags, me: u64, opp: u64, out: &mut [Child]) -> Expansion {
    let occ = me | opp;
    let empty = FULL & !occ;
    let last = empty.count_ones() == 1;
    let mut exp = Expansion {
        win: None,
        draw: None,
        loss: None,
        len: 0,
    };
    let mut me_rot = [0u64; 8];
    let mut opp_rot = [0u64; 8];
    let mut opp_five = [false; 8];
    for turn in 0..8 {
        if turn % 2 == 1 && !f.ccw {
            continue;
        }
        me_rot[turn] = rotate(t, me, turn);
        opp_rot[turn] = rotate(t, opp, turn);
        opp_five[turn] = five(t, opp_rot[turn]);
    }
    let step = if f.ccw { 1 } else { 2 };
    let mut rest = empty;
    while rest != 0 {
        let bit = rest.trailing_zeros() as usize;
        rest &= rest - 1;
        let placed = me | (1 << bit);
        if f.placement_wins && five(t, placed) {
            exp.win = Some(bit as u16 | (BARE << 6));
            return exp;
        }
        let occ_after = occ | (1 << bit);
        let mut seen_noop = false;
        let mut turn = 0;
        while turn < 8 {
            let q = turn / 2;
            if !f.empty_turns && (occ_after >> (16 * q)) & 0x1ff == 0 {
                turn += step;
                continue;
            }
            let m = me_rot[turn] | t.bitrot[turn][bit];
            let o = opp_rot[turn];
            let mv = bit as u16 | ((turn as u16) << 6);
            if m == placed && o == opp {
                // The turn changes nothing: one such move per cell is enough.
                if seen_noop {
                    turn += step;
                    continue;
                }
                seen_noop = true;
            } else if turn % 2 == 1 && exp.len > 0 {
                let prev = out[exp.len - 1];
                if prev.mv == (mv - (1 << 6)) && prev.opp == m && prev.me == o {
                    turn += step;
                    continue;
                }
            }
            let mine = five(t, m);
            let effect = match (mine, opp_five[turn]) {
                (true, true) if f.double_five_wins => Effect::Win,
                (true, true) => Effect::Draw,
                (true, false) => Effect::Win,
                (false, true) => Effect::Loss,
                (false, false) if last => Effect::Draw,
                (false, false) => Effect::Next(o, m),
            };
            match effect {
                Effect::Win => {
                    exp.win = Some(mv);
                    return exp;
                }
                Effect::Draw => {
                    exp.draw.get_or_insert(mv);
                }
                Effect::Loss => {
                    exp.loss.get_or_insert(mv);
                }
                Effect::Next(cm, co) => {
                    out[exp.len] = Child {
                        me: cm,
                        opp: co,
                        mv,
                        score: 0,
                    };
                    exp.len += 1;
                }
            }
            turn += step;
        }
    }
    exp
}

/// What the side to move can do at once, for the leaves of the search.
enum Immediate {
    Win,
    /// Every move loses at once.
    OnlyLosses,
    /// No move goes on: each draws or loses at once (and one draws).
    OnlyDrawsOrLosses,
    Open,
}

fn immediate(t: &Tables, f: Flags, me: u64, opp: u64) -> Immediate {
    let occ = me | opp;
    let empty = FULL & !occ;
    let last = empty.count_ones() == 1;
    if f.placement_wins {
        let mut rest = empty;
        while rest != 0 {
            let bit = rest.trailing_zeros();
            rest &= rest - 1;
            if five(t, me | (1 << bit)) {
                return Immediate::Win;
            }
        }
    }
    let (mut open, mut draw) = (false, false);
    let step = if f.ccw { 1 } else { 2 };
    let mut turn = 0;
    while turn < 8 {
        let q = turn / 2;
        let r = rotate(t, me, turn);
        let o5 = five(t, rotate(t, opp, turn));
        let mut rest = empty;
        while rest != 0 {
            let bit = rest.trailing_zeros() as usize;
            rest &= rest - 1;
            if !f.empty_turns && ((occ | (1 << bit)) >> (16 * q)) & 0x1ff == 0 {
                continue;
            }
            match (five(t, r | t.bitrot[turn][bit]), o5) {
                (true, false) => return Immediate::Win,
                (true, true) if f.double_five_wins => return Immediate::Win,
                (true, true) => draw = true,
                (false, true) => {}
                (false, false) if last => draw = true,
                (false, false) => open = true,
            }
        }
        turn += step;
    }
    if open {
        Immediate::Open
    } else if draw {
        Immediate::OnlyDrawsOrLosses
    } else {
        Immediate::OnlyLosses
    }
}

/// The cells (as a packed mask) where the side `me` could place and win at once with some turn.
#[inline]
fn winning_cells(t: &Tables, f: Flags, me: u64, opp: u64) -> u64 {
    let empty = FULL & !(me | opp);
    let mut cells = 0u64;
    for turn in 0..8 {
        if turn % 2 == 1 && !f.ccw {
            continue;
        }
        let r = rotate(t, me, turn);
        let o5 = five(t, rotate(t, opp, turn));
        if o5 && !f.double_five_wins {
            continue;
        }
        let mut rest = empty & !cells;
        while rest != 0 {
            let bit = rest.trailing_zeros() as usize;
            rest &= rest - 1;
            if five(t, r | t.bitrot[turn][bit]) {
                cells |= 1 << bit;
            }
        }
    }
    if f.placement_wins {
        let mut rest = empty & !cells;
        while rest != 0 {
            let bit = rest.trailing_zeros() as usize;
            rest &= rest - 1;
            if five(t, me | (1 << bit)) {
                cells |= 1 << bit;
            }
        }
    }
    cells
}

/// Converts an internal move to the rules crate's move.
fn to_move(t: &Tables, mv: u16) -> Option<Move> {
    let cell = Cell::from_index(*t.bit_cell.get(usize::from(mv & 63))?)?;
    let turn = mv >> 6;
    if turn == BARE {
        return Some(Move::bare(cell));
    }
    let quadrant = *Quadrant::ALL.get(usize::from(turn / 2))?;
    let direction = if turn % 2 == 0 {
        Direction::Clockwise
    } else {
        Direction::CounterClockwise
    };
    Some(Move::new(cell, Turn::new(quadrant, direction)))
}

fn from_move(t: &Tables, mv: Move) -> u16 {
    let bit = u16::from(t.cell_bit[usize::from(mv.cell.index())]);
    let turn = match mv.turn {
        None => BARE,
        Some(turn) => {
            turn.quadrant as u16 * 2 + u16::from(turn.direction == Direction::CounterClockwise)
        }
    };
    bit | (turn << 6)
}

/// (me, opp) of a position: the side to move's marbles first.
fn boards(position: &Position) -> (u64, u64) {
    let [first, second] = position.bitboards();
    if position.marbles() % 2 == 0 {
        (first, second)
    } else {
        (second, first)
    }
}

// ---------------------------------------------------------------------------------------------
// Budgets.

/// Limits on a search: a number of nodes, a wall-clock time, or both.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Budget {
    pub nodes: Option<u64>,
    pub time: Option<Duration>,
}

impl Budget {
    pub fn nodes(nodes: u64) -> Budget {
        Budget {
            nodes: Some(nodes),
            time: None,
        }
    }

    pub fn time(time: Duration) -> Budget {
        Budget {
            nodes: None,
            time: Some(time),
        }
    }

    pub fn unlimited() -> Budget {
        Budget::default()
    }
}

struct Clock {
    start: Instant,
    deadline: Option<Instant>,
    max_nodes: u64,
    nodes: u64,
    stopped: bool,
}

impl Clock {
    fn new(budget: Budget) -> Clock {
        let start = Instant::now();
        Clock {
            start,
            deadline: budget.time.and_then(|d| start.checked_add(d)),
            max_nodes: budget.nodes.unwrap_or(u64::MAX),
            nodes: 0,
            stopped: false,
        }
    }

    /// Counts a node; true when the budget has run out.
    #[inline(always)]
    fn tick(&mut self) -> bool {
        self.nodes += 1;
        if self.nodes & 1023 == 0 {
            if self.nodes >= self.max_nodes {
                self.stopped = true;
            }
            if let Some(deadline) = self.deadline {
                if Instant::now() >= deadline {
                    self.stopped = true;
                }
            }
        }
        self.stopped
    }
}

// ---------------------------------------------------------------------------------------------
// The exact solver.

/// The game-theoretic value for the side to move.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Value {
    Loss,
    Draw,
    Win,
}

impl Value {
    pub fn as_str(self) -> &'static str {
        match self {
            Value::Win => "win",
            Value::Draw => "draw",
            Value::Loss => "loss",
        }
    }

    fn from_i8(v: i8) -> Value {
        match v.signum() {
            1 => Value::Win,
            0 => Value::Draw,
            _ => Value::Loss,
        }
    }
}

impl std::fmt::Display for Value {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// An exact result.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Solution {
    pub value: Value,
    /// A move that achieves `value` (any move when every move loses).
    pub best: Move,
    pub nodes: u64,
    pub elapsed: Duration,
}

/// Why the solver gave no answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SolveError {
    /// The budget ran out before the value was proved; nothing is claimed.
    OutOfBudget { nodes: u64, elapsed: Duration },
    /// The game is already over: there is nothing to solve.
    GameOver,
}

impl std::fmt::Display for SolveError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SolveError::OutOfBudget { nodes, elapsed } => write!(
                f,
                "not solved within the budget ({nodes} nodes, {} ms)",
                elapsed.as_millis()
            ),
            SolveError::GameOver => f.write_str("the game is over"),
        }
    }
}

impl std::error::Error for SolveError {}

/// One slot of the solver's table: the exact key and what is known of the value.
#[derive(Clone, Copy, Default)]
struct SolveEntry {
    /// Key + 1, so that 0 marks an empty slot.
    key: u64,
    lo: i8,
    hi: i8,
    /// Empty cells at the node: bigger subtrees are kept in preference.
    empties: u8,
    /// Best move in the canonical frame.
    mv: u16,
}

/// A transposition table for the solver; keep one across solves of related positions to reuse
/// what was proved (entries are exact facts, never stale).
pub struct SolverTable {
    slots: Vec<SolveEntry>,
    mask: usize,
    /// The rules the entries were proved under: a table is cleared when they change.
    rules: Option<Rules>,
}

impl SolverTable {
    /// A table of about `2^bits` two-slot buckets (16 bytes a slot).
    pub fn new(bits: u32) -> SolverTable {
        let len = 1usize << bits.clamp(4, 25);
        SolverTable {
            slots: vec![SolveEntry::default(); 2 * len],
            mask: len - 1,
            rules: None,
        }
    }

    #[inline]
    fn index(&self, key: u64) -> usize {
        2 * ((key.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 32) as usize & self.mask)
    }

    #[inline]
    fn probe(&self, key: u64) -> Option<SolveEntry> {
        let i = self.index(key);
        self.slots[i..i + 2]
            .iter()
            .find(|e| e.key == key + 1)
            .copied()
    }

    #[inline]
    fn store(&mut self, key: u64, lo: i8, hi: i8, empties: u8, mv: u16) {
        let i = self.index(key);
        let (lo, hi) = match self.slots[i..i + 2].iter().find(|e| e.key == key + 1) {
            Some(old) => (lo.max(old.lo), hi.min(old.hi)),
            None => (lo, hi),
        };
        let entry = SolveEntry {
            key: key + 1,
            lo,
            hi,
            empties,
            mv,
        };
        // Slot 0 keeps the bigger subtree, slot 1 takes the rest.
        if self.slots[i].key == key + 1 || self.slots[i].empties <= empties {
            if self.slots[i].key != key + 1 {
                self.slots[i + 1] = self.slots[i];
            }
            self.slots[i] = entry;
        } else {
            self.slots[i + 1] = entry;
        }
    }

    pub fn clear(&mut self) {
        self.slots.fill(SolveEntry::default());
    }

    fn use_rules(&mut self, rules: Rules) {
        if self.rules != Some(rules) {
            self.clear();
            self.rules = Some(rules);
        }
    }
}

impl Default for SolverTable {
    fn default() -> SolverTable {
        SolverTable::new(20)
    }
}

struct Solver<'a> {
    t: &'static Tables,
    f: Flags,
    tt: &'a mut SolverTable,
    clock: Clock,
    history: Box<[u32; 64 * 9]>,
    /// Children of the nodes on the current path, `MAX_MOVES` per number of empty cells.
    stack: Vec<Child>,
}

impl<'a> Solver<'a> {
    /// A solver for `position` (which must still be running) with its boards from the side to
    /// move's point of view.
    fn start(
        position: &Position,
        budget: Budget,
        table: &'a mut SolverTable,
    ) -> Result<(Solver<'a>, u64, u64), SolveError> {
        if position.outcome().is_some() {
            return Err(SolveError::GameOver);
        }
        let (me, opp) = boards(position);
        table.use_rules(*position.rules());
        let solver = Solver {
            t: tables(),
            f: Flags::new(position.rules()),
            tt: table,
            clock: Clock::new(budget),
            history: Box::new([0; 64 * 9]),
            stack: vec![Child::default(); 37 * MAX_MOVES],
        };
        Ok((solver, me, opp))
    }
}

impl Solver<'_> {
    /// The value of (me, opp) for the side to move, within (alpha, beta): fail-soft negamax
    /// over -1 (loss), 0 (draw), 1 (win). Meaningless once `clock.stopped` is set.
    ///
    /// With `depth` below the number of empty cells the search may stop at a horizon, where it
    /// counts the position as a draw: wins and losses it reports are then still proved (they
    /// come only from real ends of the game), draws are not, and only the proved facts go to
    /// the table.
    fn search(&mut self, me: u64, opp: u64, mut alpha: i8, mut beta: i8, depth: u8) -> i8 {
        if self.clock.tick() {
            return 0;
        }
        let t = self.t;
        let empty = FULL & !(me | opp);
        let n = empty.count_ones();
        // Who can still make five at all, with the marbles each has left to place, bounds the
        // value before any move is tried.
        let lo_bound: i8 = if can_five_within(t, opp, empty, n / 2) {
            -1
        } else {
            0
        };
        let hi_bound: i8 = if can_five_within(t, me, empty, n.div_ceil(2)) {
            1
        } else {
            0
        };
        if lo_bound == hi_bound || lo_bound >= beta {
            return lo_bound;
        }
        if hi_bound <= alpha {
            return hi_bound;
        }
        let empties = empty.count_ones() as u8;
        // The table first: a hit saves listing the moves. Used down to two empty cells: near
        // the leaves transpositions are many (from 5 it took 4x the nodes on the vectors).
        let use_tt = empties >= 2;
        let (key, sym) = if use_tt {
            canonical_key(t, me, opp, self.f.symmetries)
        } else {
            (0, 0)
        };
        let mut tt_move = u16::MAX;
        if use_tt {
            if let Some(e) = self.tt.probe(key) {
                if e.lo >= beta || e.lo == e.hi {
                    return e.lo;
                }
                if e.hi <= alpha {
                    return e.hi;
                }
                alpha = alpha.max(e.lo);
                beta = beta.min(e.hi);
                if e.mv != u16::MAX {
                    tt_move = map_move(t, e.mv, usize::from(t.sym_inv[sym]));
                }
            }
        }
        // Each node's children live in the slot of its number of empty cells: a child has one
        // fewer, so no two nodes on the current path share a slot.
        let base = usize::from(empties) * MAX_MOVES;
        let exp = expand(t, self.f, me, opp, &mut self.stack[base..base + MAX_MOVES]);
        if exp.win.is_some() {
            return 1;
        }
        let mut best: i8 = if exp.draw.is_some() { 0 } else { -1 };
        if best >= beta || exp.len == 0 {
            return best;
        }
        let exact = depth >= empties;
        if !exact && depth <= 1 {
            // Below here nothing can prove a win for the side to move.
            return best.max(0);
        }
        alpha = alpha.max(best).max(lo_bound);
        beta = beta.min(hi_bound);
        if alpha >= beta {
            return alpha;
        }
        let (alpha0, beta0) = (alpha, beta);
        let list = base..base + exp.len;
        // The table's move first; the others are scored only if it does not cut off.
        if tt_move != u16::MAX {
            if let Some(i) = self.stack[list.clone()]
                .iter()
                .position(|c| c.mv == tt_move)
            {
                self.stack.swap(base, base + i);
                self.stack[base].score = i32::MAX;
            }
        }
        let mut scored = false;
        let mut best_move = exp.draw.unwrap_or(u16::MAX);
        for i in list.clone() {
            if i > base || self.stack[base].score != i32::MAX {
                if !scored {
                    scored = true;
                    self.score_children(me, opp, i, list.end);
                }
                // Selection: most nodes cut off after a child or two, so a full sort is waste.
                let mut top = i;
                for j in i + 1..list.end {
                    if self.stack[j].score > self.stack[top].score {
                        top = j;
                    }
                }
                self.stack.swap(i, top);
            }
            let c = self.stack[i];
            let v = -self.search(c.me, c.opp, -beta, -alpha, depth - 1);
            if self.clock.stopped {
                return 0;
            }
            if v > best {
                best = v;
                best_move = c.mv;
                if v > alpha {
                    alpha = v;
                }
                if v >= beta {
                    let h = &mut self.history[usize::from(c.mv & 63) * 9 + usize::from(c.mv >> 6)];
                    *h = h.saturating_add(u32::from(empties) * u32::from(empties));
                    break;
                }
            } else if best_move == u16::MAX {
                best_move = c.mv;
            }
        }
        let best = best.max(lo_bound);
        if use_tt {
            let (mut lo, mut hi) = if best <= alpha0 {
                (lo_bound, best)
            } else if best >= beta0 {
                (best, hi_bound)
            } else {
                (best, best)
            };
            if !exact {
                // Keep only what the horizon cannot have faked, plus the move as a hint.
                if lo < 1 {
                    lo = lo_bound;
                }
                if hi > -1 {
                    hi = hi_bound;
                }
            }
            let mv = if best_move == u16::MAX {
                u16::MAX
            } else {
                map_move(t, best_move, sym)
            };
            self.tt.store(key, lo, hi, empties, mv);
        }
        best
    }

    /// Move-ordering scores for `stack[from..to]`: placements on the opponent's winning cells
    /// (blocks) first, then by history.
    fn score_children(&mut self, me: u64, opp: u64, from: usize, to: usize) {
        let threats = winning_cells(self.t, self.f, opp, me);
        for c in self.stack[from..to].iter_mut() {
            let bit = usize::from(c.mv & 63);
            let block = if threats & (1 << bit) != 0 {
                1 << 28
            } else {
                0
            };
            c.score = block + self.history[bit * 9 + usize::from(c.mv >> 6)].min(1 << 20) as i32;
        }
        // A static look at the lines orders far better than history alone, but costs a third
        // of a node: in release builds it paid from 7 empty cells (fewer nodes from 3, but
        // more time).
        let empties = (FULL & !(me | opp)).count_ones();
        if empties >= ORDER_EVAL_EMPTIES {
            for c in self.stack[from..to].iter_mut() {
                c.score += 1024 * evaluate(self.t, c.opp, c.me);
            }
        }
    }

    /// The exact value of a child effect.
    fn effect_value(&mut self, effect: Effect) -> i8 {
        match effect {
            Effect::Win => 1,
            Effect::Draw => 0,
            Effect::Loss => -1,
            Effect::Next(me, opp) => match self.root(me, opp) {
                Some((v, _)) => -v,
                None => 0,
            },
        }
    }
}

/// What one move does in (me, opp), for the root.
fn effect_of(t: &Tables, f: Flags, me: u64, opp: u64, mv: u16) -> Effect {
    let bit = usize::from(mv & 63);
    let placed = me | (1 << bit);
    let turn = usize::from(mv >> 6);
    if turn >= 8 {
        return Effect::Win;
    }
    let m = rotate(t, placed, turn);
    let o = rotate(t, opp, turn);
    match (five(t, m), five(t, o)) {
        (true, true) if f.double_five_wins => Effect::Win,
        (true, true) => Effect::Draw,
        (true, false) => Effect::Win,
        (false, true) => Effect::Loss,
        (false, false) if (m | o) & FULL == FULL => Effect::Draw,
        (false, false) => Effect::Next(o, m),
    }
}

/// Proves the value of `position` for the side to move, with a best move, or gives up when the
/// budget runs out (it never guesses).
///
/// Classic positions with at most [`MIDGAME_EMPTIES`] empty cells go to the midgame solver
/// ([`mid`]), after a short try of the search when they have more than [`MIDGAME_DIRECT`]
/// (most such positions that are won, the search proves in milliseconds); the rest, and any
/// position whose time budget the midgame solver could not meet, to the search.
pub fn solve(position: &Position, budget: Budget) -> Result<Solution, SolveError> {
    let empties = 36 - position.marbles();
    if midgame_plan(position, budget) == Some(Plan::Direct) {
        return midgame(position, budget, Instant::now(), 0);
    }
    // A table sized to the position: clearing a large one costs more than solving a small
    // endgame (2^20 buckets from 14 empty cells, 32 MiB).
    let mut table = SolverTable::new((empties + 6).clamp(12, 20));
    solve_with(position, budget, &mut table)
}

/// Classic positions with at most this many empty cells (18 marbles or more on the board) go to
/// the midgame solver; at 18 it takes 0.51 GB for a few seconds (see [`mid::memory_bytes`]).
pub const MIDGAME_EMPTIES: u32 = 18;

/// Up to this many empty cells the midgame solver goes first: it takes at most some
/// milliseconds, where the search may take seconds.
pub const MIDGAME_DIRECT: u32 = 12;

/// The search's try before the midgame solver: this fraction of the midgame solver's nodes for
/// one pass (at 18 empty cells 0.68 M nodes, some 0.3 s).
const MIDGAME_TRY_SHARE: u64 = 128;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Plan {
    /// The midgame solver at once.
    Direct,
    /// A short try of the search, then the midgame solver.
    TryFirst,
}

/// Whether (and how) `position` goes to the midgame solver under `budget`.
fn midgame_plan(position: &Position, budget: Budget) -> Option<Plan> {
    let empties = 36 - position.marbles();
    if !mid::supports(position)
        || empties > MIDGAME_EMPTIES
        || budget
            .time
            .is_some_and(|time| !mid::pass_may_fit(empties, time))
    {
        return None;
    }
    Some(if empties <= MIDGAME_DIRECT {
        Plan::Direct
    } else {
        Plan::TryFirst
    })
}

/// What is left of `budget` after `nodes` nodes and the time since `start`.
fn budget_left(budget: Budget, start: Instant, nodes: u64) -> Budget {
    Budget {
        nodes: budget.nodes.map(|n| n.saturating_sub(nodes)),
        time: budget.time.map(|t| t.saturating_sub(start.elapsed())),
    }
}

/// The midgame solver's answer as a [`Solution`], counting `nodes` already spent since `start`.
fn midgame(
    position: &Position,
    budget: Budget,
    start: Instant,
    nodes: u64,
) -> Result<Solution, SolveError> {
    let left = budget_left(budget, start, nodes);
    match mid::solve_supported(position, left, mid::threads()) {
        Ok(m) => Ok(Solution {
            value: m.value,
            best: *m.best.first().ok_or(SolveError::GameOver)?,
            nodes: nodes + m.nodes,
            elapsed: start.elapsed(),
        }),
        Err(SolveError::OutOfBudget { nodes: more, .. }) => Err(SolveError::OutOfBudget {
            nodes: nodes + more,
            elapsed: start.elapsed(),
        }),
        Err(e) => Err(e),
    }
}

/// [`solve`] with a table that the caller keeps (and may reuse).
pub fn solve_with(
    position: &Position,
    budget: Budget,
    table: &mut SolverTable,
) -> Result<Solution, SolveError> {
    let start = Instant::now();
    let plan = midgame_plan(position, budget);
    if plan == Some(Plan::Direct) {
        return midgame(position, budget, start, 0);
    }
    if plan.is_none() {
        return search_solve_with(position, budget, table);
    }
    let empties = 36 - position.marbles();
    let try_nodes = mid::work_nodes(empties) / 2 / MIDGAME_TRY_SHARE;
    let first_try = Budget {
        nodes: Some(budget.nodes.map_or(try_nodes, |n| n.min(try_nodes))),
        time: budget.time,
    };
    let nodes = match search_solve_with(position, first_try, table) {
        Err(SolveError::OutOfBudget { nodes, .. }) => nodes,
        done => return done,
    };
    let left = budget_left(budget, start, nodes);
    if left
        .time
        .is_some_and(|time| !mid::pass_may_fit(empties, time))
    {
        // Too little time left for the midgame solver: the search goes on with it.
        return match search_solve_with(position, left, table) {
            Ok(s) => Ok(Solution {
                nodes: nodes + s.nodes,
                elapsed: start.elapsed(),
                ..s
            }),
            Err(SolveError::OutOfBudget { nodes: more, .. }) => Err(SolveError::OutOfBudget {
                nodes: nodes + more,
                elapsed: start.elapsed(),
            }),
            Err(e) => Err(e),
        };
    }
    midgame(position, budget, start, nodes)
}

/// [`solve`] by the alpha-beta search alone, whatever the position (to compare the solvers).
pub fn solve_by_search(position: &Position, budget: Budget) -> Result<Solution, SolveError> {
    let empties = 36 - position.marbles();
    let mut table = SolverTable::new((empties + 6).clamp(12, 20));
    search_solve_with(position, budget, &mut table)
}

/// [`solve_with`] by the search alone.
fn search_solve_with(
    position: &Position,
    budget: Budget,
    table: &mut SolverTable,
) -> Result<Solution, SolveError> {
    let (mut solver, me, opp) = Solver::start(position, budget, table)?;
    let t = solver.t;
    let (value, mv) = solver.root(me, opp).ok_or(SolveError::OutOfBudget {
        nodes: solver.clock.nodes,
        elapsed: solver.clock.start.elapsed(),
    })?;
    Ok(Solution {
        value: Value::from_i8(value),
        best: to_move(t, mv).ok_or(SolveError::GameOver)?,
        nodes: solver.clock.nodes,
        elapsed: solver.clock.start.elapsed(),
    })
}

impl Solver<'_> {
    /// The exact value of a running position (me, opp) and a move that achieves it; `None`
    /// when the budget ran out.
    fn root(&mut self, me: u64, opp: u64) -> Option<(i8, u16)> {
        let t = self.t;
        let mut children = vec![Child::default(); MAX_MOVES];
        let exp = expand(t, self.f, me, opp, &mut children);
        if let Some(mv) = exp.win {
            return Some((1, mv));
        }
        let fallback = exp
            .draw
            .or(exp.loss)
            .or(children[..exp.len].first().map(|c| c.mv))?;
        // Order the moves by the static score; deeper iterations reorder through the table.
        let list = &mut children[..exp.len];
        for c in list.iter_mut() {
            c.score = evaluate(t, c.opp, c.me);
        }
        list.sort_by_key(|c| std::cmp::Reverse(c.score));
        // Two null-window probes: "is it a win?", then "is it at least a draw?"; a probe's
        // result counts only when it proves its side of the window. Short wins first: the win
        // probe deepens iteratively (a win found short of the full depth is proved all the
        // same), then runs at full depth, which also proves that there is no win.
        let empties = (FULL & !(me | opp)).count_ones() as u8;
        let mut depth = 3u8;
        loop {
            // Deep truncated probes cost nearly a full one, which a draw or a loss needs anyway.
            let full = depth >= empties || depth > MAX_PROBE_DEPTH;
            for c in list.iter() {
                let d = if full { u8::MAX } else { depth - 1 };
                let v = -self.search(c.me, c.opp, -1, 0, d);
                if self.clock.stopped {
                    return None;
                }
                if v >= 1 {
                    return Some((1, c.mv));
                }
            }
            if full {
                break;
            }
            depth += 2;
        }
        if let Some(mv) = exp.draw {
            return Some((0, mv));
        }
        for c in list.iter() {
            let v = -self.search(c.me, c.opp, 0, 1, u8::MAX);
            if self.clock.stopped {
                return None;
            }
            if v >= 0 {
                return Some((0, c.mv));
            }
        }
        Some((-1, fallback))
    }
}

/// The value of `position` and every legal move that achieves it (each (cell, quadrant,
/// direction) listed separately, in the rules crate's move order).
///
/// Classic positions with at most [`MIDGAME_EMPTIES`] empty cells go to the midgame solver,
/// which finds every best move at once, unless the time budget is too short for it.
pub fn solve_all(
    position: &Position,
    budget: Budget,
    table: &mut SolverTable,
) -> Result<(Value, Vec<Move>), SolveError> {
    if midgame_plan(position, budget).is_some() {
        return mid::solve_supported(position, budget, mid::threads()).map(|m| (m.value, m.best));
    }
    search_solve_all(position, budget, table)
}

/// [`solve_all`] by the search alone.
fn search_solve_all(
    position: &Position,
    budget: Budget,
    table: &mut SolverTable,
) -> Result<(Value, Vec<Move>), SolveError> {
    let (mut solver, me, opp) = Solver::start(position, budget, table)?;
    let (t, f) = (solver.t, solver.f);
    let mut legal = Vec::new();
    position.legal_moves(&mut legal);
    let mut values = Vec::with_capacity(legal.len());
    for mv in legal {
        let v = solver.effect_value(effect_of(t, f, me, opp, from_move(t, mv)));
        if solver.clock.stopped {
            return Err(SolveError::OutOfBudget {
                nodes: solver.clock.nodes,
                elapsed: solver.clock.start.elapsed(),
            });
        }
        values.push((mv, v));
    }
    let best = values.iter().map(|&(_, v)| v).max().unwrap_or(0);
    let moves = values
        .into_iter()
        .filter(|&(_, v)| v == best)
        .map(|(mv, _)| mv)
        .collect();
    Ok((Value::from_i8(best), moves))
}

// ---------------------------------------------------------------------------------------------
// Heuristic search, for play.

const WIN_SCORE: i32 = 1_000_000;
/// Scores of a line holding 0..5 marbles of one side and none of the other.
const LINE_WEIGHT: [i32; 6] = [0, 1, 6, 40, 250, 0];

/// A static score of (me, opp) for the side to move: open lines weighted by how full they are.
fn evaluate(t: &Tables, me: u64, opp: u64) -> i32 {
    let mut score = 0;
    for &line in &t.lines {
        let m = (me & line).count_ones() as usize;
        let o = (opp & line).count_ones() as usize;
        if o == 0 {
            score += LINE_WEIGHT[m];
        } else if m == 0 {
            score -= LINE_WEIGHT[o];
        }
    }
    score
}

#[derive(Clone, Copy, Default)]
struct PlayEntry {
    key: u64,
    score: i32,
    depth: i8,
    /// 0 exact, 1 lower bound, 2 upper bound.
    kind: u8,
    mv: u16,
}

/// Settings of one search for play.
#[derive(Clone, Copy, Debug)]
pub struct SearchLimits {
    /// Deepest iteration (plies).
    pub max_depth: u32,
    pub budget: Budget,
    /// Noise added to the static score at the leaves (0 = none), for the weaker levels.
    pub noise: i32,
    /// Seed of the noise.
    pub seed: u64,
}

/// The result of a search for play.
#[derive(Clone, Debug)]
pub struct SearchResult {
    pub best: Move,
    /// Score for the side to move; `>= 900_000` a proved win, `<= -900_000` a proved loss.
    pub score: i32,
    /// Deepest completed iteration.
    pub depth: u32,
    pub nodes: u64,
}

/// Alpha-beta with iterative deepening, a symmetry-reduced table and move ordering, for play.
pub struct Searcher {
    table: Vec<PlayEntry>,
    /// The rules of the table's entries: it is cleared when they change.
    rules: Option<Rules>,
    history: Box<[u32; 64 * 9]>,
}

impl Default for Searcher {
    fn default() -> Searcher {
        Searcher::new(18)
    }
}

struct PlayCtx<'a> {
    t: &'static Tables,
    f: Flags,
    clock: Clock,
    table: &'a mut [PlayEntry],
    history: &'a mut [u32; 64 * 9],
    noise: i32,
    seed: u64,
    /// Children of the nodes on the current path, by number of empty cells (as the solver).
    stack: Vec<Child>,
}

impl PlayCtx<'_> {
    fn noise(&self, me: u64, opp: u64) -> i32 {
        if self.noise == 0 {
            return 0;
        }
        // A hash of the position and the seed: the same position scores the same within a search.
        let mut x = me ^ opp.rotate_left(29) ^ self.seed;
        x = (x ^ (x >> 31)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        x ^= x >> 31;
        (x % (2 * self.noise as u64 + 1)) as i32 - self.noise
    }

    fn search(
        &mut self,
        me: u64,
        opp: u64,
        depth: i32,
        mut alpha: i32,
        beta: i32,
        ply: i32,
    ) -> i32 {
        if self.clock.tick() {
            return 0;
        }
        let t = self.t;
        let empty = FULL & !(me | opp);
        if depth <= 0 {
            // A leaf still sees a win in one (a cheap look without listing the moves).
            return match immediate(t, self.f, me, opp) {
                Immediate::Win => WIN_SCORE - ply,
                Immediate::OnlyLosses => -(WIN_SCORE - ply - 1),
                Immediate::OnlyDrawsOrLosses => 0,
                Immediate::Open => evaluate(t, me, opp) + self.noise(me, opp),
            };
        }
        let base = empty.count_ones() as usize * MAX_MOVES;
        let exp = expand(t, self.f, me, opp, &mut self.stack[base..base + MAX_MOVES]);
        if exp.win.is_some() {
            return WIN_SCORE - ply;
        }
        let mut best = if exp.draw.is_some() {
            0
        } else {
            -(WIN_SCORE - ply - 1)
        };
        if exp.len == 0 || best >= beta {
            return best;
        }
        let (key, sym) = canonical_key(t, me, opp, self.f.symmetries);
        let mask = self.table.len() - 1;
        let slot = (key.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 32) as usize & mask;
        let mut tt_move = u16::MAX;
        let e = self.table[slot];
        if e.key == key + 1 {
            if i32::from(e.depth) >= depth {
                let cut = match e.kind {
                    0 => true,
                    1 => e.score >= beta,
                    _ => e.score <= alpha,
                };
                if cut {
                    return e.score;
                }
            }
            if e.mv != u16::MAX {
                tt_move = map_move(t, e.mv, usize::from(t.sym_inv[sym]));
            }
        }
        let alpha0 = alpha;
        let threats = winning_cells(t, self.f, opp, me);
        let list = base..base + exp.len;
        for c in self.stack[list.clone()].iter_mut() {
            let bit = usize::from(c.mv & 63);
            c.score = if c.mv == tt_move {
                i32::MAX
            } else {
                let block = if threats & (1 << bit) != 0 {
                    1 << 28
                } else {
                    0
                };
                block + self.history[bit * 9 + usize::from(c.mv >> 6)].min(1 << 27) as i32
            };
        }
        let mut best_move = u16::MAX;
        for i in list.clone() {
            // Selection rather than a sort: most nodes cut off after a few children.
            let mut top = i;
            for j in i + 1..list.end {
                if self.stack[j].score > self.stack[top].score {
                    top = j;
                }
            }
            self.stack.swap(i, top);
            let c = self.stack[i];
            let v = -self.search(c.me, c.opp, depth - 1, -beta, -alpha.max(best), ply + 1);
            if self.clock.stopped {
                return 0;
            }
            if v > best {
                best = v;
                best_move = c.mv;
                if v > alpha {
                    alpha = v;
                }
                if v >= beta {
                    let h = &mut self.history[usize::from(c.mv & 63) * 9 + usize::from(c.mv >> 6)];
                    *h = h.saturating_add((depth * depth) as u32);
                    break;
                }
            }
        }
        let kind = if best >= beta {
            1
        } else if best <= alpha0 {
            2
        } else {
            0
        };
        self.table[slot] = PlayEntry {
            key: key + 1,
            score: best,
            depth: depth.min(100) as i8,
            kind,
            mv: if best_move == u16::MAX {
                u16::MAX
            } else {
                map_move(t, best_move, sym)
            },
        };
        best
    }
}

impl Searcher {
    /// A searcher with a table of `2^bits` entries.
    pub fn new(bits: u32) -> Searcher {
        Searcher {
            table: vec![PlayEntry::default(); 1 << bits.clamp(4, 24)],
            rules: None,
            history: Box::new([0; 64 * 9]),
        }
    }

    /// Searches `position` by iterative deepening until `limits` stop it; the best move of the
    /// last completed iteration (or of the interrupted one when it already found a better move).
    /// `None` when the game is over.
    pub fn search(&mut self, position: &Position, limits: SearchLimits) -> Option<SearchResult> {
        if position.outcome().is_some() {
            return None;
        }
        let t = tables();
        let f = Flags::new(position.rules());
        let (me, opp) = boards(position);
        if self.rules != Some(*position.rules()) {
            self.table.fill(PlayEntry::default());
            self.rules = Some(*position.rules());
        }
        self.history.iter_mut().for_each(|h| *h /= 8);
        let mut ctx = PlayCtx {
            t,
            f,
            clock: Clock::new(limits.budget),
            table: &mut self.table,
            history: &mut self.history,
            noise: limits.noise,
            seed: limits.seed,
            stack: vec![Child::default(); 37 * MAX_MOVES],
        };
        let mut children = [Child::default(); MAX_MOVES];
        let exp = expand(t, f, me, opp, &mut children);
        if let Some(mv) = exp.win {
            return Some(SearchResult {
                best: to_move(t, mv)?,
                score: WIN_SCORE,
                depth: 1,
                nodes: 1,
            });
        }
        let fallback = children[..exp.len]
            .first()
            .map(|c| c.mv)
            .or(exp.draw)
            .or(exp.loss)?;
        let mut result = SearchResult {
            best: to_move(t, fallback)?,
            score: if exp.len == 0 && exp.draw.is_none() {
                -WIN_SCORE
            } else {
                0
            },
            depth: 0,
            nodes: 0,
        };
        if exp.len == 0 {
            if let Some(mv) = exp.draw {
                result.best = to_move(t, mv)?;
            }
            return Some(result);
        }
        let empties = (FULL & !(me | opp)).count_ones();
        let list = &mut children[..exp.len];
        let mut prev_best = u16::MAX;
        for depth in 1..=limits.max_depth.min(empties).max(1) {
            // Previous best first, then by the scores of the last iteration.
            let mut best = -WIN_SCORE - 1;
            let mut best_move = u16::MAX;
            let mut alpha = -WIN_SCORE - 1;
            if let Some(mv) = exp.draw {
                best = 0;
                best_move = mv;
                alpha = 0;
            }
            if prev_best != u16::MAX {
                if let Some(i) = list.iter().position(|c| c.mv == prev_best) {
                    list[..=i].rotate_right(1);
                }
            }
            let mut scored = Vec::with_capacity(list.len());
            let mut complete = true;
            for c in list.iter() {
                let v = -ctx.search(c.me, c.opp, depth as i32 - 1, -WIN_SCORE - 1, -alpha, 1);
                if ctx.clock.stopped {
                    complete = false;
                    break;
                }
                scored.push((v, *c));
                if v > best {
                    best = v;
                    best_move = c.mv;
                    alpha = alpha.max(v);
                }
            }
            if !complete {
                // A partial iteration's move is used only if it beat the previous best's score.
                if best_move != u16::MAX && best_move != prev_best && best > result.score {
                    if let Some(mv) = to_move(t, best_move) {
                        result.best = mv;
                    }
                }
                break;
            }
            scored.sort_by_key(|c| std::cmp::Reverse(c.0));
            for (slot, (_, c)) in list.iter_mut().zip(scored) {
                *slot = c;
            }
            prev_best = best_move;
            result.best = to_move(t, best_move)?;
            result.score = best;
            result.depth = depth;
            if best.abs() >= 900_000 {
                break;
            }
        }
        result.nodes = ctx.clock.nodes;
        Some(result)
    }
}

/// A move that wins at once, if there is one.
pub fn winning_move(position: &Position) -> Option<Move> {
    if position.outcome().is_some() {
        return None;
    }
    let t = tables();
    let (me, opp) = boards(position);
    let mut children = vec![Child::default(); MAX_MOVES];
    expand(t, Flags::new(position.rules()), me, opp, &mut children)
        .win
        .and_then(|mv| to_move(t, mv))
}

/// A one-ply choice: an immediate win, else the move after which the opponent has no immediate
/// win and the static score is best (`noise` added to each score).
pub fn greedy_move(position: &Position, noise: i32, seed: u64) -> Option<Move> {
    if position.outcome().is_some() {
        return None;
    }
    let t = tables();
    let f = Flags::new(position.rules());
    let (me, opp) = boards(position);
    let mut children = [Child::default(); MAX_MOVES];
    let exp = expand(t, f, me, opp, &mut children);
    if let Some(mv) = exp.win {
        return to_move(t, mv);
    }
    let mut best: Option<(i32, u16)> = exp.draw.map(|mv| (-50_000, mv));
    let mut rng = seed;
    for c in &children[..exp.len] {
        // The child's side to move is the opponent: a move that lets it win at once is last.
        let opp_wins = winning_cells(t, f, c.me, c.opp) != 0;
        rng = crate::splitmix(rng);
        let jitter = if noise > 0 {
            (rng % (2 * noise as u64 + 1)) as i32 - noise
        } else {
            0
        };
        let score = if opp_wins {
            -100_000
        } else {
            -evaluate(t, c.me, c.opp)
        } + jitter;
        if best.map_or(true, |(b, _)| score > b) {
            best = Some((score, c.mv));
        }
    }
    best.map(|(_, mv)| mv)
        .or(exp.loss)
        .and_then(|mv| to_move(t, mv))
}

#[cfg(test)]
mod tests {
    use super::*;
    use hakem_games::pentago::Symmetry;

    #[test]
    fn tables_agree_with_the_rules_crate() {
        let t = tables();
        // Symmetry s of this module is Symmetry::ALL[s] of the rules crate.
        for (s, sym) in Symmetry::ALL.iter().enumerate() {
            for cell in Cell::all() {
                let bit = t.cell_bit[usize::from(cell.index())];
                let image = t.sym_bit[s][usize::from(bit)];
                assert_eq!(
                    usize::from(t.bit_cell[usize::from(image)]),
                    usize::from(cell.transformed(*sym).index())
                );
            }
            assert_eq!(t.sym_inv[t.sym_inv[s] as usize] as usize, s);
        }
    }

    #[test]
    fn keys_are_invariant_under_symmetries() {
        let t = tables();
        let mut pos = Position::new(Rules::classic());
        for token in ["a1sw", "b2ne'", "f6se", "c4nw'", "e2sw"] {
            pos.play_str(token).unwrap();
        }
        let (me, opp) = boards(&pos);
        let (key, _) = canonical_key(t, me, opp, 8);
        for sym in Symmetry::ALL {
            let image = pos.transformed(sym);
            let (m2, o2) = boards(&image);
            assert_eq!(canonical_key(t, m2, o2, 8).0, key);
        }
    }

    #[test]
    fn moves_round_trip() {
        let t = tables();
        for cell in Cell::all() {
            for q in Quadrant::ALL {
                for d in [Direction::Clockwise, Direction::CounterClockwise] {
                    let mv = Move::new(cell, Turn::new(q, d));
                    assert_eq!(to_move(t, from_move(t, mv)), Some(mv));
                    for s in 0..8 {
                        let image = map_move(t, from_move(t, mv), s);
                        assert_eq!(to_move(t, image), Some(mv.transformed(Symmetry::ALL[s])));
                    }
                }
            }
        }
    }
}
