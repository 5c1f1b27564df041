//! The midgame solver for classic Pentago: retrograde analysis over every position that can
//! follow a root, in the root's quadrant-local frame (the idea of Geoffrey Irving's "midsolve").
//!
//! Every position reachable from the root is a filling of some of the root's `n` empty cells
//! (which ones, and by whom) together with a rotation state `r = (r0, r1, r2, r3)`, each `r_q`
//! the number of clockwise quarter turns quadrant `q` has made since the root: the marbles
//! never move in this frame, only the state changes. A set of rotation states is a 256-bit
//! "super"; every move turns exactly one quadrant by one step, so after `k` moves only the 128
//! states with `sum(r_q) = k (mod 2)` are reachable, and a value is a 128-bit `Half`.
//!
//! The positions with `k` marbles placed since the root form a level, indexed by the
//! combinatorial number system: which cells the player who just moved holds (among the `n`),
//! then which cells the player to move holds (among the rest). The levels are solved from the
//! full board back to the root, two adjacent levels in memory at a time. A level's bit for a
//! rotation state says whether the root's side to move wins there (first pass) or does not lose
//! (second pass), so each level stores one `Half` a position. What a level stores is already
//! what its parent needs: for the parent's rotation states, whether placing this marble (and
//! then some quarter turn) reaches a good result, so a parent ORs its children.

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use super::{from_move, tables, Budget, SolveError, Value, BARE, FULL};
use hakem_games::pentago::{Move, Position, Rules};
use hakem_games::Game;

/// Most empty cells the midgame solver takes (memory grows about threefold a cell: see
/// [`memory_bytes`]).
pub const MAX_EMPTIES: u32 = 20;

/// A set of rotation states of one parity: bit `a + 2 r1 + 8 r2 + 32 r3` stands for the state
/// whose `r0` is `2a` or `2a + 1`, whichever gives the parity.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct Half(u64, u64);

impl Half {
    const ZERO: Half = Half(0, 0);
    const ONES: Half = Half(!0, !0);

    #[inline(always)]
    fn or(self, o: Half) -> Half {
        Half(self.0 | o.0, self.1 | o.1)
    }

    #[inline(always)]
    fn and(self, o: Half) -> Half {
        Half(self.0 & o.0, self.1 & o.1)
    }

    #[inline(always)]
    fn not(self) -> Half {
        Half(!self.0, !self.1)
    }

    fn get(self, bit: usize) -> bool {
        let word = if bit < 64 { self.0 } else { self.1 };
        (word >> (bit % 64)) & 1 != 0
    }

    /// The states of the other parity from which one quarter turn (any quadrant, either way)
    /// reaches a state of `self`.
    #[inline(always)]
    fn rmax(self) -> Half {
        #[inline(always)]
        fn low(x: u64) -> u64 {
            const fn rep(byte: u64) -> u64 {
                byte * 0x0101_0101_0101_0101
            }
            // r0: the two states of the other parity are a = 0 and a = 1.
            let t = (x | x >> 1) & rep(0x55);
            let y0 = t | t << 1;
            // r1: two-bit fields inside each byte, cyclically.
            let y1 = (x << 2 & rep(0xfc))
                | (x >> 6 & rep(0x03))
                | (x >> 2 & rep(0x3f))
                | (x << 6 & rep(0xc0));
            // r2: bytes inside each 32-bit word, cyclically.
            let y2 = (x << 8 & 0xffff_ff00_ffff_ff00)
                | (x >> 24 & 0x0000_00ff_0000_00ff)
                | (x >> 8 & 0x00ff_ffff_00ff_ffff)
                | (x << 24 & 0xff00_0000_ff00_0000);
            y0 | y1 | y2
        }
        // r3: the four 32-bit words; r3 +- 1 of words (w0, w1 | w2, w3) is (w1|w3, w0|w2) twice.
        let y3 = (self.0 | self.1).rotate_left(32);
        Half(low(self.0) | y3, low(self.1) | y3)
    }
}

/// The bit of rotation state `r` in its parity's [`Half`].
fn half_bit(r: [u8; 4]) -> usize {
    usize::from(r[0] / 2) + 2 * usize::from(r[1]) + 8 * usize::from(r[2]) + 32 * usize::from(r[3])
}

/// The rotation state of `bit` in the `Half` of parity `parity`.
#[cfg(test)]
fn half_state(bit: usize, parity: usize) -> [u8; 4] {
    let (r1, r2, r3) = ((bit >> 1) & 3, (bit >> 3) & 3, (bit >> 5) & 3);
    let r0 = 2 * (bit & 1) + (r1 + r2 + r3 + parity) % 2;
    [r0 as u8, r1 as u8, r2 as u8, r3 as u8]
}

// ---------------------------------------------------------------------------------------------
// Which rotation states give five.

struct WinTables {
    /// `nib[q][bits][line]`: the rotations `t` (bit t) of quadrant `q` holding `bits` after
    /// which the quadrant covers the line's cells in it (15 when the line misses `q`).
    nib: Vec<[[u8; 32]; 512]>,
    /// `alive[q][bits]`: the lines whose nibble is not 0.
    alive: Vec<[u32; 512]>,
    /// `cyl[parity][q][mask]`: the states of the parity whose `r_q` is in `mask`.
    cyl: [[[Half; 16]; 4]; 2],
    /// The quadrants each line crosses (2 or 3), and how many.
    quads: [([u8; 3], u8); 32],
}

fn win_tables() -> &'static WinTables {
    static TABLES: OnceLock<WinTables> = OnceLock::new();
    TABLES.get_or_init(|| {
        let t = tables();
        let mut w = WinTables {
            nib: vec![[[0; 32]; 512]; 4],
            alive: vec![[0; 512]; 4],
            cyl: [[[Half::ZERO; 16]; 4]; 2],
            quads: [([0; 3], 0); 32],
        };
        for q in 0..4 {
            for bits in 0..512usize {
                let mut rots = [0u16; 4];
                rots[0] = bits as u16;
                for k in 1..4 {
                    rots[k] = t.rot[0][usize::from(rots[k - 1])];
                }
                for line in 0..32 {
                    let part = t.line_parts[line][q];
                    let mut nib = 0u8;
                    for (k, &r) in rots.iter().enumerate() {
                        if part & !r == 0 {
                            nib |= 1 << k;
                        }
                    }
                    w.nib[q][bits][line] = nib;
                    if nib != 0 {
                        w.alive[q][bits] |= 1 << line;
                    }
                }
            }
        }
        for parity in 0..2 {
            for bit in 0..128 {
                let (r1, r2, r3) = ((bit >> 1) & 3, (bit >> 3) & 3, (bit >> 5) & 3);
                let r0 = 2 * (bit & 1) + (r1 + r2 + r3 + parity) % 2;
                for (q, rq) in [r0, r1, r2, r3].into_iter().enumerate() {
                    for mask in 0..16 {
                        if mask & (1 << rq) != 0 {
                            let h = &mut w.cyl[parity][q][mask];
                            if bit < 64 {
                                h.0 |= 1 << bit;
                            } else {
                                h.1 |= 1 << (bit - 64);
                            }
                        }
                    }
                }
            }
        }
        for (line, parts) in t.line_parts.iter().enumerate() {
            for (q, &part) in parts.iter().enumerate() {
                if part != 0 {
                    let (list, len) = &mut w.quads[line];
                    list[usize::from(*len)] = q as u8;
                    *len += 1;
                }
            }
        }
        w
    })
}

/// The rotation states of parity `parity` in which the marbles `stones` (packed, in the root's
/// frame) make five.
#[inline]
fn wins(w: &WinTables, stones: u64, parity: usize) -> Half {
    let qb = [
        (stones & 0x1ff) as usize,
        ((stones >> 16) & 0x1ff) as usize,
        ((stones >> 32) & 0x1ff) as usize,
        ((stones >> 48) & 0x1ff) as usize,
    ];
    let mut alive = w.alive[0][qb[0]] & w.alive[1][qb[1]] & w.alive[2][qb[2]] & w.alive[3][qb[3]];
    let cyl = &w.cyl[parity];
    let mut out = Half::ZERO;
    while alive != 0 {
        let line = alive.trailing_zeros() as usize;
        alive &= alive - 1;
        let (list, len) = w.quads[line];
        let mut h = Half::ONES;
        for &q in &list[..usize::from(len)] {
            let q = usize::from(q);
            h = h.and(cyl[q][usize::from(w.nib[q][qb[q]][line])]);
        }
        out = out.or(h);
    }
    out
}

// ---------------------------------------------------------------------------------------------
// Subsets and their indices (the combinatorial number system: a set {x_0 < x_1 < ...} has the
// index sum of C(x_i, i + 1), which counts the sets of its size in colex order).

const MAXN: usize = MAX_EMPTIES as usize;

struct Binomials([[u64; MAXN + 2]; MAXN + 2]);

impl Binomials {
    fn new() -> Binomials {
        let mut c = [[0u64; MAXN + 2]; MAXN + 2];
        for n in 0..MAXN + 2 {
            c[n][0] = 1;
            for k in 1..=n {
                c[n][k] = c[n - 1][k - 1] + c[n - 1][k];
            }
        }
        Binomials(c)
    }

    #[inline(always)]
    fn c(&self, n: usize, k: usize) -> u64 {
        if k > n {
            0
        } else {
            self.0[n][k]
        }
    }

    fn rank(&self, mut set: u32) -> u64 {
        let mut index = 0;
        let mut i = 0;
        while set != 0 {
            let x = set.trailing_zeros() as usize;
            set &= set - 1;
            i += 1;
            index += self.c(x, i);
        }
        index
    }
}

/// The `k`-subsets of `0..n` as bit masks, in index order.
fn subsets(n: usize, k: usize) -> Vec<u32> {
    let mut out = Vec::new();
    if k > n {
        return out;
    }
    if k == 0 {
        out.push(0);
        return out;
    }
    let mut set: u32 = (1 << k) - 1;
    while set < (1 << n) {
        out.push(set);
        // The next set with as many bits (Gosper).
        let low = set & set.wrapping_neg();
        let ripple = set + low;
        set = ripple | (((set ^ ripple) >> 2) / low);
    }
    out
}

/// The number of positions at level `k` (k marbles placed) below a root with `n` empty cells.
fn level_size(b: &Binomials, n: usize, k: usize) -> u64 {
    let m = k / 2;
    b.c(n, k) * b.c(k, m)
}

/// Halves of workspace: the most that two adjacent levels take.
fn workspace_halves(b: &Binomials, n: usize) -> u64 {
    (0..=n)
        .map(|k| level_size(b, n, k) + if k < n { level_size(b, n, k + 1) } else { 0 })
        .max()
        .unwrap_or(1)
}

/// Bytes of memory the midgame solver takes below a root with `empties` empty cells (16 bytes a
/// position of the two biggest adjacent levels): 0.51 GB at 18, 1.5 GB at 19, 4.3 GB at 20.
pub fn memory_bytes(empties: u32) -> u64 {
    let b = Binomials::new();
    16 * workspace_halves(&b, (empties as usize).min(MAXN))
}

/// Positions evaluated in all (each level's positions, once a pass, two passes): the solver's
/// node count.
pub fn work_nodes(empties: u32) -> u64 {
    let b = Binomials::new();
    let n = (empties as usize).min(MAXN);
    2 * (0..=n).map(|k| level_size(&b, n, k)).sum::<u64>()
}

// ---------------------------------------------------------------------------------------------
// The solver.

/// The exact result of the midgame solver.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MidSolution {
    pub value: Value,
    /// Every legal move that achieves the value, in the rules crate's move order.
    pub best: Vec<Move>,
    /// Positions evaluated: a level's positions once for each pass made (one pass when the
    /// root is a win, two otherwise; see [`work_nodes`]).
    pub nodes: u64,
    pub elapsed: Duration,
    /// Bytes of workspace used (see [`memory_bytes`]).
    pub memory: u64,
}

/// Can the midgame solver take this position: classic rules, still running, and at most
/// [`MAX_EMPTIES`] empty cells?
pub fn supports(position: &Position) -> bool {
    *position.rules() == Rules::classic()
        && position.outcome().is_none()
        && 36 - position.marbles() <= MAX_EMPTIES
}

/// Solves `position` exactly with the midgame solver: the value and every move that achieves
/// it. `None` when the solver does not take the position (see [`supports`]). The budget is
/// kept as by [`super::solve`]: a node budget is checked before each pass (a pass is
/// [`work_nodes`] / 2 positions), a time budget as the work goes; when either cannot be met the
/// answer is [`SolveError::OutOfBudget`], never a guess. A time budget that even a fast machine
/// could not meet is refused at once, before any memory is taken.
pub fn solve(position: &Position, budget: Budget) -> Option<Result<MidSolution, SolveError>> {
    if !supports(position) {
        return None;
    }
    Some(solve_supported(position, budget, threads()))
}

pub(super) fn threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get().min(8))
}

/// Positions a second that one thread surely does not exceed, to refuse a hopeless time budget
/// before any work (measured on the 2-core development machine: about 25 M a second a thread
/// at 18 empty cells, more at fewer).
const FASTEST_RATE: f64 = 60e6;

/// Could one pass over `empties` empty cells fit in `time` at all?
pub(super) fn pass_may_fit(empties: u32, time: Duration) -> bool {
    time.as_secs_f64() * FASTEST_RATE * threads() as f64 > (work_nodes(empties) / 2) as f64
}

/// The root's data shared by every level.
struct Root {
    n: usize,
    /// Packed bit of each empty cell, in increasing order.
    empties: [u8; MAXN],
    /// The side to move's marbles (A) and the other side's (B).
    a: u64,
    b: u64,
}

impl Root {
    /// The packed marbles of `base` plus the empty cells in `set` (indices into `empties`).
    #[inline]
    fn deposit(&self, base: u64, mut set: u32) -> u64 {
        let mut out = base;
        while set != 0 {
            let i = set.trailing_zeros() as usize;
            set &= set - 1;
            out |= 1 << self.empties[i];
        }
        out
    }
}

/// A zeroed workspace of `words` 64-bit words, shared by the threads (each position is written
/// by one thread, and read only after the level that wrote it is done).
///
/// It is allocated zeroed and left untouched here, so that the operating system maps its pages
/// as the threads first write them, in parallel, rather than one thread filling it first.
fn workspace(words: usize) -> Vec<AtomicU64> {
    const _: () = assert!(
        std::mem::size_of::<AtomicU64>() == std::mem::size_of::<u64>()
            && std::mem::align_of::<AtomicU64>() == std::mem::align_of::<u64>()
    );
    let mut zeroed = std::mem::ManuallyDrop::new(vec![0u64; words]);
    // Levels are read and written in many places at once, the writes all over a level: huge
    // pages took a quarter off the user time at 18 empty cells.
    if words >= 1 << 20 {
        advise_huge_pages(zeroed.as_mut_ptr().cast(), 8 * words);
    }
    // SAFETY: AtomicU64 has the same size, alignment (checked above) and bit validity as u64,
    // so the allocation, whose ownership passes from `zeroed` (never dropped), is a valid
    // Vec<AtomicU64> of the same length and capacity, with the same layout for the allocator
    // when it is freed.
    unsafe {
        Vec::from_raw_parts(
            zeroed.as_mut_ptr().cast::<AtomicU64>(),
            zeroed.len(),
            zeroed.capacity(),
        )
    }
}

#[cfg(target_os = "linux")]
fn advise_huge_pages(ptr: *mut u8, len: usize) {
    use std::ffi::{c_int, c_void};
    extern "C" {
        fn madvise(addr: *mut c_void, len: usize, advice: c_int) -> c_int;
    }
    const MADV_HUGEPAGE: c_int = 14;
    const HUGE: usize = 2 << 20;
    let from = (ptr as usize).next_multiple_of(HUGE);
    let to = (ptr as usize + len) / HUGE * HUGE;
    if to > from {
        // SAFETY: the range lies inside an allocation this function's caller owns and has not
        // touched yet; MADV_HUGEPAGE only asks the kernel to back it with huge pages and never
        // changes what the memory holds. A kernel without them answers an error, ignored.
        unsafe {
            madvise(from as *mut c_void, to - from, MADV_HUGEPAGE);
        }
    }
}

#[cfg(not(target_os = "linux"))]
fn advise_huge_pages(_ptr: *mut u8, _len: usize) {}

pub(super) fn solve_supported(
    position: &Position,
    budget: Budget,
    threads: usize,
) -> Result<MidSolution, SolveError> {
    let start = Instant::now();
    let (me, opp) = super::boards(position);
    let empty = FULL & !(me | opp);
    let n = empty.count_ones() as usize;
    let pass_nodes = work_nodes(n as u32) / 2;
    let mut done = 0u64;
    let refuse = |done: u64| SolveError::OutOfBudget {
        nodes: done,
        elapsed: start.elapsed(),
    };
    if budget
        .time
        .is_some_and(|time| !pass_may_fit(n as u32, time))
    {
        return Err(refuse(0));
    }
    let deadline = budget.time.and_then(|d| start.checked_add(d));
    let mut root = Root {
        n,
        empties: [0; MAXN],
        a: me,
        b: opp,
    };
    let mut rest = empty;
    for slot in root.empties.iter_mut().take(n) {
        *slot = rest.trailing_zeros() as u8;
        rest &= rest - 1;
    }
    let b = Binomials::new();
    let halves = workspace_halves(&b, n) as usize;
    let mut ws = Vec::new();
    // Level 1 (the root's move on each cell, before its quarter turn) and the root, per pass.
    let mut first = [vec![Half::ZERO; n], vec![Half::ZERO; n]];
    let mut root_bits = [false; 2];
    for pass in 0..2 {
        if pass == 1 && root_bits[0] {
            // A win: the first pass tells every move that wins.
            break;
        }
        if budget.nodes.is_some_and(|max| done + pass_nodes > max) {
            return Err(refuse(done));
        }
        if ws.is_empty() {
            ws = workspace(2 * halves);
        }
        for k in (0..=n).rev() {
            let level = Level::new(&root, &b, k, pass, halves);
            let out = level.run(&root, &b, &ws, threads, deadline);
            done += level_size(&b, n, k);
            match out {
                None => return Err(refuse(done)),
                Some(LevelOut::Root(bit)) => root_bits[pass] = bit,
                Some(LevelOut::First(values)) => first[pass] = values,
                Some(LevelOut::Inner) => {}
            }
        }
    }
    drop(ws);
    let value = if root_bits[0] {
        Value::Win
    } else if root_bits[1] {
        Value::Draw
    } else {
        Value::Loss
    };
    // The root's moves: a winning placement ends the game; otherwise each quarter turn leads to
    // level 1 in the state with that one quadrant turned one step.
    let t = tables();
    let mut legal = Vec::new();
    position.legal_moves(&mut legal);
    let mut best = Vec::new();
    for mv in legal {
        let code = from_move(t, mv);
        let bit = code & 63;
        let turn = code >> 6;
        let v = if turn == BARE {
            Value::Win
        } else {
            let c = root.empties[..n]
                .iter()
                .position(|&e| u16::from(e) == bit)
                .ok_or(SolveError::GameOver)?;
            let mut r = [0u8; 4];
            r[usize::from(turn / 2)] = if turn % 2 == 0 { 1 } else { 3 };
            let h = half_bit(r);
            // Pass 0 keeps "B does not lose" at level 1, pass 1 "B wins" (made only when the
            // root is no win, so that no move wins).
            if !first[0][c].get(h) {
                Value::Win
            } else if value == Value::Win || !first[1][c].get(h) {
                Value::Draw
            } else {
                Value::Loss
            }
        };
        // A move short of a win at a won root is no best move, whatever it is.
        if v == value {
            best.push(mv);
        }
    }
    debug_assert!(!best.is_empty());
    Ok(MidSolution {
        value,
        best,
        nodes: done,
        elapsed: start.elapsed(),
        memory: 16 * halves as u64,
    })
}

enum LevelOut {
    Root(bool),
    First(Vec<Half>),
    Inner,
}

/// One level of one pass, with everything its positions share.
struct Level {
    k: usize,
    n: usize,
    /// New marbles of the player to move (m) and of the player who just moved (o) since the
    /// root; the cells the player to move does not hold (w = n - m), and the empty ones
    /// (f = n - k).
    m: usize,
    o: usize,
    w: usize,
    f: usize,
    want_win: bool,
    parity: usize,
    mover_root: u64,
    /// The player to move's sets (outer loop), and the number of the other's (inner loop).
    outer: Vec<u32>,
    rel_count: usize,
    /// For each set of the other player relative to the w cells (inner loop), in index order:
    /// its o places, its f free places, and for each free place j the set's index once j is
    /// taken too (its column in the child's row).
    taken: Vec<u8>,
    free: Vec<u8>,
    child_col: Vec<u32>,
    /// Fives of the player who just moved, by its set's index: now, and one step back (the
    /// parent's placement wins).
    o_now: Vec<Half>,
    o_before: Vec<Half>,
    stride_in: u64,
    stride_out: u64,
    /// Offsets (in halves) of the input level (k + 1) and this level in the workspace.
    in_at: usize,
    out_at: usize,
}

/// How far ahead of a read the next reads of the same row are fetched (8 cache lines).
const PREFETCH_WORDS: usize = 64;

#[inline(always)]
fn prefetch(word: &AtomicU64) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch is a hint that loads nothing into the program and cannot fault, on an
    // address that is in bounds anyway; SSE is part of every x86_64 target.
    unsafe {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        _mm_prefetch::<_MM_HINT_T0>(word.as_ptr().cast::<i8>().cast_const());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = word;
}

/// A thread's tables for one outer set.
struct Scratch {
    /// Row starts of the children in the input level, by free place.
    /// (By a byte, so that a place needs no bounds check.)
    child_row: [usize; 256],
    /// The output index as a sum over the other player's cells, taken in increasing order: the
    /// a-th at relative place q adds `row_of` to the row (its set's index) and `col_of` to the
    /// column (the index of the outer set among the cells the other player does not hold:
    /// each element above the cell moves down one).
    row_of: [[u64; MAXN]; MAXN],
    col_of: [[u64; MAXN]; MAXN],
}

impl Level {
    fn new(root: &Root, b: &Binomials, k: usize, pass: usize, halves: usize) -> Level {
        let n = root.n;
        let m = k / 2;
        let o = k - m;
        let w = n - m;
        let f = n - k;
        let parity = k % 2;
        // Pass 0: "the root's side wins"; its opponent's levels keep "does not lose".
        let want_win = (pass == 0) == (k % 2 == 0);
        let (mover_root, other_root) = if k % 2 == 0 {
            (root.a, root.b)
        } else {
            (root.b, root.a)
        };
        let rel = subsets(w, o);
        let mut taken = Vec::with_capacity(rel.len() * o);
        let mut free = Vec::with_capacity(rel.len() * f);
        let mut child_col = Vec::with_capacity(rel.len() * f);
        for &r in &rel {
            for j in 0..w {
                if r & (1 << j) != 0 {
                    taken.push(j as u8);
                } else {
                    free.push(j as u8);
                    let low = r & ((1 << j) - 1);
                    let high = (r >> (j + 1)) << j;
                    child_col.push(b.rank(low | high) as u32);
                }
            }
        }
        let wt = win_tables();
        let rows = subsets(n, o);
        let mut o_now = Vec::with_capacity(rows.len());
        let mut o_before = Vec::with_capacity(rows.len());
        for &set in &rows {
            let stones = root.deposit(other_root, set);
            o_now.push(wins(wt, stones, parity));
            o_before.push(if k > 0 {
                wins(wt, stones, 1 - parity)
            } else {
                Half::ZERO
            });
        }
        let at = |level: usize| {
            if level % 2 == 0 {
                0
            } else {
                halves - level_size(b, n, level) as usize
            }
        };
        Level {
            k,
            n,
            m,
            o,
            w,
            f,
            want_win,
            parity,
            mover_root,
            outer: subsets(n, m),
            rel_count: rel.len(),
            taken,
            free,
            child_col,
            o_now,
            o_before,
            stride_in: if k < n { b.c(n - m - 1, o) } else { 0 },
            stride_out: b.c(n - o, m),
            in_at: if k < n { at(k + 1) } else { 0 },
            out_at: at(k),
        }
    }

    /// Solves the level; `None` when the deadline passed.
    fn run(
        &self,
        root: &Root,
        b: &Binomials,
        ws: &[AtomicU64],
        threads: usize,
        deadline: Option<Instant>,
    ) -> Option<LevelOut> {
        let stop = AtomicBool::new(false);
        let next = AtomicUsize::new(0);
        let size = self.outer.len() * self.rel_count;
        let threads = if size < 50_000 { 1 } else { threads };
        let chunk = (self.outer.len() / (threads * 64)).max(1);
        let work = |special: &mut Vec<Half>| {
            let mut scratch = Scratch {
                child_row: [0; 256],
                row_of: [[0; MAXN]; MAXN],
                col_of: [[0; MAXN]; MAXN],
            };
            loop {
                let from = next.fetch_add(chunk, Ordering::Relaxed);
                if from >= self.outer.len() || stop.load(Ordering::Relaxed) {
                    break;
                }
                if deadline.is_some_and(|d| Instant::now() >= d) {
                    stop.store(true, Ordering::Relaxed);
                    break;
                }
                for &set in &self.outer[from..(from + chunk).min(self.outer.len())] {
                    self.outer_set(root, b, ws, set, &mut scratch, special);
                }
            }
        };
        let mut special: Vec<Half> = Vec::new();
        if threads == 1 {
            work(&mut special);
        } else {
            std::thread::scope(|s| {
                for _ in 1..threads {
                    s.spawn(|| work(&mut Vec::new()));
                }
                work(&mut special);
            });
        }
        if stop.load(Ordering::Relaxed) {
            return None;
        }
        Some(match self.k {
            0 => LevelOut::Root(special.first().is_some_and(|h| h.get(0))),
            1 => LevelOut::First(special),
            _ => LevelOut::Inner,
        })
    }

    /// Every position whose player to move holds `set` (of the n cells).
    #[inline]
    fn outer_set(
        &self,
        root: &Root,
        b: &Binomials,
        ws: &[AtomicU64],
        set: u32,
        sc: &mut Scratch,
        special: &mut Vec<Half>,
    ) {
        let (k, n, m, o, w, f) = (self.k, self.n, self.m, self.o, self.w, self.f);
        let fm = wins(
            win_tables(),
            root.deposit(self.mover_root, set),
            self.parity,
        );
        // The cells the player to move does not hold, and the elements of `set`.
        let mut comp = [0usize; MAXN];
        let mut elems = [0usize; MAXN];
        let (mut c, mut e) = (0, 0);
        for x in 0..n {
            if set & (1 << x) == 0 {
                comp[c] = x;
                c += 1;
            } else {
                elems[e] = x;
                e += 1;
            }
        }
        if k < n {
            for (row, &x) in sc.child_row.iter_mut().zip(&comp[..w]) {
                *row = (b.rank(set | 1 << x) * self.stride_in) as usize;
            }
        }
        for a in 0..o {
            // The a-th of the other player's cells is at a relative place of at least a.
            for (q, &y) in comp.iter().enumerate().take(w).skip(a) {
                sc.row_of[a][q] = b.c(y, a + 1);
                let mut d = 0u64;
                for (i, &x) in elems[..m].iter().enumerate() {
                    if x > y {
                        d = d
                            .wrapping_add(b.c(x - a - 1, i + 1))
                            .wrapping_sub(b.c(x - a, i + 1));
                    }
                }
                sc.col_of[a][q] = d;
            }
        }
        let base = b.rank(set);
        let full_moves = if self.want_win {
            Half::ZERO
        } else {
            Half::ONES
        };
        let input = &ws[2 * self.in_at..];
        let output = &ws[2 * self.out_at..];
        let stride_out = self.stride_out as usize;
        for ri in 0..self.rel_count {
            let (mut row, mut col) = (0u64, base);
            for (a, &q) in self.taken[ri * o..ri * o + o].iter().enumerate() {
                row += sc.row_of[a][usize::from(q)];
                col = col.wrapping_add(sc.col_of[a][usize::from(q)]);
            }
            let moves = if k == n {
                full_moves
            } else {
                let mut acc = Half::ZERO;
                let places = &self.free[ri * f..ri * f + f];
                let cols = &self.child_col[ri * f..ri * f + f];
                for (&j, &cc) in places.iter().zip(cols) {
                    let at = 2 * (sc.child_row[usize::from(j)] + cc as usize);
                    // Each child's row is read in order, a position at a time, and the rows
                    // of one outer set are many: the hardware alone fell behind (this took a
                    // quarter off the time at 18 empty cells).
                    if let Some(ahead) = input.get(at + PREFETCH_WORDS) {
                        prefetch(ahead);
                    }
                    let pair = &input[at..at + 2];
                    acc = acc.or(Half(
                        pair[0].load(Ordering::Relaxed),
                        pair[1].load(Ordering::Relaxed),
                    ));
                }
                acc
            };
            let row = row as usize;
            let fo = self.o_now[row];
            let value = if self.want_win {
                fo.not().and(fm.or(moves))
            } else {
                fm.or(fo.not().and(moves))
            };
            if k >= 1 {
                let stored = value.not().rmax().or(self.o_before[row]);
                let at = 2 * (row * stride_out + col as usize);
                output[at].store(stored.0, Ordering::Relaxed);
                output[at + 1].store(stored.1, Ordering::Relaxed);
            }
            if k <= 1 {
                special.push(value);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pentago::five;

    /// The board after rotation state `r` (each quadrant turned clockwise r_q times).
    fn rotated(stones: u64, r: [u8; 4]) -> u64 {
        let t = tables();
        let mut x = stones;
        for (q, &turns) in r.iter().enumerate() {
            for _ in 0..turns {
                x = super::super::rotate(t, x, 2 * q);
            }
        }
        x
    }

    fn xorshift(s: &mut u64) -> u64 {
        *s ^= *s << 13;
        *s ^= *s >> 7;
        *s ^= *s << 17;
        *s
    }

    #[test]
    fn wins_agree_with_turning_the_board() {
        let t = tables();
        let w = win_tables();
        let mut seed = 0x1234_5678_9abc_def1u64;
        for round in 0..3000 {
            // Dense random boards of one colour, so that fives are common.
            let density = 1 + round % 3;
            let mut stones = FULL;
            for _ in 0..density {
                stones &= xorshift(&mut seed);
            }
            stones |= xorshift(&mut seed) & xorshift(&mut seed) & FULL;
            for parity in 0..2 {
                let h = wins(w, stones, parity);
                for bit in 0..128 {
                    let r = half_state(bit, parity);
                    assert_eq!(half_bit(r), bit);
                    assert_eq!(h.get(bit), five(t, rotated(stones, r)), "{stones:x} {r:?}");
                }
            }
        }
    }

    #[test]
    fn rmax_is_one_turn_back() {
        let mut seed = 99u64;
        for _ in 0..200 {
            let x = Half(xorshift(&mut seed), xorshift(&mut seed));
            for parity in 0..2 {
                let y = x.rmax();
                for bit in 0..128 {
                    let r = half_state(bit, 1 - parity);
                    let mut any = false;
                    for q in 0..4 {
                        for d in [1, 3] {
                            let mut s = r;
                            s[q] = (s[q] + d) % 4;
                            any |= x.get(half_bit(s));
                        }
                    }
                    assert_eq!(y.get(bit), any);
                }
            }
        }
    }

    #[test]
    fn subsets_are_in_index_order() {
        let b = Binomials::new();
        for n in 0..10 {
            for k in 0..=n {
                let sets = subsets(n, k);
                assert_eq!(sets.len() as u64, b.c(n, k));
                for (i, &s) in sets.iter().enumerate() {
                    assert_eq!(b.rank(s), i as u64);
                    assert_eq!(s.count_ones() as usize, k);
                }
            }
        }
        assert_eq!(memory_bytes(18), 509_693_184);
    }

    /// Positions reached by random legal play, still running.
    fn random_position(seed: &mut u64, rules: Rules, marbles: u32) -> Option<Position> {
        let mut position = Position::new(rules);
        let mut moves = Vec::new();
        while position.marbles() < marbles {
            moves.clear();
            position.legal_moves(&mut moves);
            let mv = moves[(xorshift(seed) % moves.len() as u64) as usize];
            position.play(mv).ok()?;
            if position.outcome().is_some() {
                return None;
            }
        }
        Some(position)
    }

    /// The value of `mv` in `position` for the side to move, by the search.
    fn search_value(position: &Position, mv: Move) -> Value {
        let mut child = *position;
        child.play(mv).expect("legal");
        match child.outcome() {
            Some(o) => match o.winner {
                Some(w) if w == position.to_move() => Value::Win,
                Some(_) => Value::Loss,
                None => Value::Draw,
            },
            None => {
                let s = super::super::solve_by_search(&child, Budget::unlimited()).expect("solved");
                match s.value {
                    Value::Win => Value::Loss,
                    Value::Draw => Value::Draw,
                    Value::Loss => Value::Win,
                }
            }
        }
    }

    #[test]
    fn agrees_with_the_search_on_random_positions() {
        let mut seed = 0x5eed_0001u64;
        // Random play mostly reaches wins: losses and draws are sought out.
        let mut counts = [0usize; 3];
        let mut full_lists = 0;
        let mut tries = 0;
        while counts.iter().any(|&c| c < 15) && tries < 5000 {
            tries += 1;
            let marbles = 26 + (tries % 10) as u32;
            let Some(position) = random_position(&mut seed, Rules::classic(), marbles) else {
                continue;
            };
            let mid = solve(&position, Budget::unlimited())
                .expect("supported")
                .expect("solved");
            if counts[mid.value as usize] >= 40 {
                continue;
            }
            counts[mid.value as usize] += 1;
            let search =
                super::super::solve_by_search(&position, Budget::unlimited()).expect("solved");
            assert_eq!(mid.value, search.value, "{position:?}");
            for &mv in &mid.best {
                assert_eq!(
                    search_value(&position, mv),
                    mid.value,
                    "{mv} in {position:?}"
                );
            }
            // Few empty cells: the search's list of every best move.
            if marbles >= 29 {
                let mut table = super::super::SolverTable::new(16);
                let (value, best) =
                    super::super::search_solve_all(&position, Budget::unlimited(), &mut table)
                        .expect("solved");
                assert_eq!((value, &best), (mid.value, &mid.best), "{position:?}");
                full_lists += 1;
            }
        }
        eprintln!("losses, draws, wins: {counts:?}; {full_lists} full move lists");
        assert!(counts.iter().all(|&c| c >= 15), "{counts:?}");
    }

    /// The classic lines of the solver vectors with at least `marbles` marbles: the line's
    /// number, the position, its value and every best move.
    fn classic_vectors(marbles: u32) -> Vec<(usize, Position, &'static str, Vec<Move>)> {
        let text = include_str!("../../../games/tests/vectors/pentago/solve.tsv");
        let mut out = Vec::new();
        for (i, line) in text.lines().enumerate() {
            let f: Vec<&str> = line.split('\t').collect();
            if f[0] != "classic" {
                continue;
            }
            let mut position = Position::new(Rules::classic());
            for token in f[1].split_whitespace() {
                position.play_str(token).expect("legal");
            }
            if position.marbles() < marbles {
                continue;
            }
            let best = f[3]
                .split_whitespace()
                .map(|t| Move::parse(t).unwrap())
                .collect();
            out.push((i + 1, position, f[2], best));
        }
        out
    }

    /// The midgame solver's value and best moves of each vector with `marbles` or more.
    fn check_classic_vectors(marbles: u32) -> usize {
        let vectors = classic_vectors(marbles);
        for (line, position, value, best) in &vectors {
            let mid = solve(position, Budget::unlimited())
                .expect("supported")
                .expect("solved");
            assert_eq!(mid.value.as_str(), *value, "line {line}");
            assert_eq!(&mid.best, best, "line {line}");
        }
        vectors.len()
    }

    #[test]
    fn agrees_with_the_classic_vectors() {
        // Larger ones are for the release test below and the example (solve_vectors --mid).
        let checked = check_classic_vectors(22);
        assert!(checked >= 40, "{checked}");
    }

    #[test]
    fn a_node_budget_is_checked_before_each_pass() {
        let mut seed = 0x0b0d_6e75u64;
        let (mut won, mut other) = (false, false);
        while !(won && other) {
            let Some(position) = random_position(&mut seed, Rules::classic(), 28) else {
                continue;
            };
            let pass = work_nodes(8) / 2;
            let full = solve(&position, Budget::unlimited()).unwrap().unwrap();
            let once = solve(&position, Budget::nodes(pass)).unwrap();
            if full.value == Value::Win {
                // One pass proves a win and finds every winning move.
                assert_eq!(full.nodes, pass);
                let once = once.unwrap();
                assert_eq!(
                    (once.value, &once.best, once.nodes),
                    (full.value, &full.best, pass)
                );
                won = true;
            } else {
                assert_eq!(full.nodes, 2 * pass);
                match once {
                    Err(SolveError::OutOfBudget { nodes, .. }) => assert_eq!(nodes, pass),
                    other => panic!("expected a refusal, got {other:?}"),
                }
                other = true;
            }
            assert!(matches!(
                solve(&position, Budget::nodes(pass - 1)).unwrap(),
                Err(SolveError::OutOfBudget { nodes: 0, .. })
            ));
        }
    }

    #[test]
    fn hopeless_budgets_are_refused_at_once() {
        let mut seed = 77u64;
        let position = loop {
            if let Some(p) = random_position(&mut seed, Rules::classic(), 18) {
                break p;
            }
        };
        let start = Instant::now();
        for budget in [Budget::time(Duration::from_millis(5)), Budget::nodes(1_000)] {
            assert!(matches!(
                solve(&position, budget).unwrap(),
                Err(SolveError::OutOfBudget { nodes: 0, .. })
            ));
        }
        assert!(start.elapsed() < Duration::from_millis(500));
        // The dispatch leaves such a budget to the search, which refuses or proves.
        match super::super::solve(&position, Budget::time(Duration::from_millis(5))) {
            Ok(s) => assert_eq!(
                s.value,
                super::super::solve_by_search(&position, Budget::unlimited())
                    .unwrap()
                    .value
            ),
            Err(SolveError::OutOfBudget { .. }) => {}
            Err(e) => panic!("{e}"),
        }
    }

    /// Release builds only (minutes in debug, 0.5 GB):
    /// `cargo test --release -p hakem-engine --lib mid -- --ignored`.
    #[test]
    #[ignore]
    fn big_positions_agree_with_the_search() {
        check_classic_vectors(0);
        // 18 to 22 marbles: what the search proves within its budget, the search's best move
        // among the midgame solver's.
        let mut seed = 0xb16_b055u64;
        let mut checked = [0usize; 3];
        for marbles in [18, 19, 20, 21, 22].repeat(4) {
            let Some(position) = random_position(&mut seed, Rules::classic(), marbles) else {
                continue;
            };
            let Ok(search) = super::super::solve_by_search(&position, Budget::nodes(3_000_000))
            else {
                continue;
            };
            let mid = solve(&position, Budget::unlimited()).unwrap().unwrap();
            assert_eq!(mid.value, search.value, "{position:?}");
            assert!(
                mid.best.contains(&search.best),
                "{} in {position:?}",
                search.best
            );
            checked[mid.value as usize] += 1;
        }
        eprintln!("losses, draws, wins: {checked:?}");
    }
}
