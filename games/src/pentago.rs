//! Pentago: a 6x6 board in four 3x3 quadrants; place a marble, then turn a quadrant.
//!
//! The board is a pair of `u64` bitboards, one per side, packed by quadrant: quadrant `q` holds
//! its nine cells in bits `16q..16q+9`, row by row from the bottom. With that packing a quarter
//! turn is one lookup in a 512-entry table, and five-in-a-row over the 32 lines is four lookups
//! and three ANDs: for each quadrant's contents a table gives the set of lines whose cells in that
//! quadrant are all filled (lines that miss the quadrant count as filled), and a line is complete
//! exactly when all four quadrants agree.
//!
//! The presets differ only in the fields of [`Rules`]; see the crate's rules document for them.

use std::fmt;

use crate::{Game, MoveError, Outcome, Reason, Side};

/// A cell, `a1` (0) to `f6` (35), numbered rank by rank from the bottom.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Cell(u8);

impl Cell {
    /// The cell at `file` (0 = a) and `rank` (0 = rank 1), if both are below 6.
    pub fn new(file: u8, rank: u8) -> Option<Cell> {
        (file < 6 && rank < 6).then_some(Cell(rank * 6 + file))
    }

    /// The cell with index `index` (0..36).
    pub fn from_index(index: u8) -> Option<Cell> {
        (index < 36).then_some(Cell(index))
    }

    /// All 36 cells, a1..f1, a2..f2, ..., a6..f6.
    pub fn all() -> impl Iterator<Item = Cell> {
        (0..36).map(Cell)
    }

    pub fn index(self) -> u8 {
        self.0
    }

    /// 0 = file a.
    pub fn file(self) -> u8 {
        self.0 % 6
    }

    /// 0 = rank 1.
    pub fn rank(self) -> u8 {
        self.0 / 6
    }

    /// The quadrant this cell lies in.
    pub fn quadrant(self) -> Quadrant {
        Quadrant::ALL[usize::from((self.rank() / 3) * 2 + self.file() / 3)]
    }

    /// This cell's bit in the packed bitboard.
    fn bit(self) -> u64 {
        // Cells are below 36; the mask lets the compiler drop the bounds check on this hot path.
        CELL_BITS[usize::from(self.0 & 63)]
    }

    /// The image of this cell under a symmetry of the board.
    pub fn transformed(self, symmetry: Symmetry) -> Cell {
        let (mut x, mut y) = (self.file(), self.rank());
        if symmetry.mirror {
            x = 5 - x;
        }
        for _ in 0..symmetry.quarter_turns {
            // A clockwise quarter turn, with rank 6 at the top.
            (x, y) = (y, 5 - x);
        }
        Cell(y * 6 + x)
    }
}

impl fmt::Display for Cell {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}{}", (b'a' + self.file()) as char, self.rank() + 1)
    }
}

/// One of the four quadrants.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Quadrant {
    /// a1..c3
    Sw = 0,
    /// d1..f3
    Se = 1,
    /// a4..c6
    Nw = 2,
    /// d4..f6
    Ne = 3,
}

impl Quadrant {
    pub const ALL: [Quadrant; 4] = [Quadrant::Sw, Quadrant::Se, Quadrant::Nw, Quadrant::Ne];

    pub fn as_str(self) -> &'static str {
        ["sw", "se", "nw", "ne"][self as usize]
    }

    fn parse(text: &str) -> Option<Quadrant> {
        Quadrant::ALL
            .into_iter()
            .find(|q| q.as_str().eq_ignore_ascii_case(text))
    }

    fn shift(self) -> u32 {
        16 * self as u32
    }

    /// The image of this quadrant under a symmetry of the board.
    pub fn transformed(self, symmetry: Symmetry) -> Quadrant {
        // Map the quadrant's centre cell (b2, e2, b5, e5).
        let (file, rank) = (1 + 3 * (self as u8 % 2), 1 + 3 * (self as u8 / 2));
        Cell(rank * 6 + file).transformed(symmetry).quadrant()
    }
}

impl fmt::Display for Quadrant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The direction of a quarter turn, as seen with rank 6 at the top.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Direction {
    Clockwise,
    CounterClockwise,
}

impl Direction {
    /// `cw` or `ccw`, as the wire protocol writes it.
    pub fn as_str(self) -> &'static str {
        match self {
            Direction::Clockwise => "cw",
            Direction::CounterClockwise => "ccw",
        }
    }

    pub fn parse(text: &str) -> Option<Direction> {
        match text {
            "cw" => Some(Direction::Clockwise),
            "ccw" => Some(Direction::CounterClockwise),
            _ => None,
        }
    }

    fn reversed(self) -> Direction {
        match self {
            Direction::Clockwise => Direction::CounterClockwise,
            Direction::CounterClockwise => Direction::Clockwise,
        }
    }
}

/// A quarter turn of one quadrant.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Turn {
    pub quadrant: Quadrant,
    pub direction: Direction,
}

impl Turn {
    pub fn new(quadrant: Quadrant, direction: Direction) -> Turn {
        Turn {
            quadrant,
            direction,
        }
    }

    /// Applies the turn to one side's packed bitboard.
    fn apply(self, stones: u64) -> u64 {
        let shift = self.quadrant.shift();
        let part = ((stones >> shift) & 0x1ff) as usize;
        let table = match self.direction {
            Direction::Clockwise => &ROTATE_CW,
            Direction::CounterClockwise => &ROTATE_CCW,
        };
        (stones & !(0x1ff << shift)) | (u64::from(table[part]) << shift)
    }
}

/// A complete move: a placement, then a turn. A move without a turn is a classic winning
/// placement, which ends the game before any turn.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Move {
    pub cell: Cell,
    pub turn: Option<Turn>,
}

impl Move {
    pub fn new(cell: Cell, turn: Turn) -> Move {
        Move {
            cell,
            turn: Some(turn),
        }
    }

    /// A bare placement (only legal when it wins at once under `classic`).
    pub fn bare(cell: Cell) -> Move {
        Move { cell, turn: None }
    }

    /// The image of this move under a symmetry of the board (a mirror image reverses the turn).
    pub fn transformed(self, symmetry: Symmetry) -> Move {
        Move {
            cell: self.cell.transformed(symmetry),
            turn: self.turn.map(|turn| Turn {
                quadrant: turn.quadrant.transformed(symmetry),
                direction: if symmetry.mirror {
                    turn.direction.reversed()
                } else {
                    turn.direction
                },
            }),
        }
    }

    /// Reads `d4ne`, `d4ne'` (counter-clockwise) or a bare `d4`.
    pub fn parse(text: &str) -> Result<Move, MoveError> {
        let malformed = |why: &str| MoveError::Malformed(format!("{text:?}: {why}"));
        let bytes = text.as_bytes();
        if bytes.len() < 2 {
            return Err(malformed(
                "expected a cell such as d4, then a quadrant such as ne",
            ));
        }
        let file = bytes[0].to_ascii_lowercase();
        let rank = bytes[1];
        if !(b'a'..=b'f').contains(&file) {
            return Err(malformed("the file must be a letter a to f"));
        }
        if !(b'1'..=b'6').contains(&rank) {
            return Err(malformed("the rank must be a digit 1 to 6"));
        }
        let cell = Cell((rank - b'1') * 6 + (file - b'a'));
        let rest = &text[2..];
        if rest.is_empty() {
            return Ok(Move::bare(cell));
        }
        let (quadrant, direction) = match rest.strip_suffix('\'') {
            Some(q) => (q, Direction::CounterClockwise),
            None => (rest, Direction::Clockwise),
        };
        let quadrant = Quadrant::parse(quadrant).ok_or_else(|| {
            malformed("the quadrant must be sw, se, nw or ne, then ' for counter-clockwise")
        })?;
        Ok(Move::new(cell, Turn::new(quadrant, direction)))
    }
}

impl fmt::Display for Move {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.cell)?;
        if let Some(turn) = self.turn {
            write!(f, "{}", turn.quadrant)?;
            if turn.direction == Direction::CounterClockwise {
                f.write_str("'")?;
            }
        }
        Ok(())
    }
}

/// What happens when a completed move gives five to both players.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DoubleFive {
    MoverWins,
    Draw,
}

/// The rules that the presets switch.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Rules {
    /// Only clockwise turns are allowed.
    pub clockwise_only: bool,
    /// A quadrant that holds no marble after the placement may be turned.
    pub empty_quadrant_turns: bool,
    /// A placement that makes five ends the game at once, before any turn.
    pub placement_wins: bool,
    /// The result when a completed move gives five to both players.
    pub double_five: DoubleFive,
}

impl Rules {
    /// The preset names; the first is the default.
    pub const PRESETS: &'static [&'static str] = &["tr", "classic"];

    /// Turkish tournament rules: clockwise only, no empty quadrant, judged after the turn, a
    /// double five wins for the mover.
    pub const fn tr() -> Rules {
        Rules {
            clockwise_only: true,
            empty_quadrant_turns: false,
            placement_wins: false,
            double_five: DoubleFive::MoverWins,
        }
    }

    /// The classic (Mindtwister) rules: any quadrant either way, a winning placement ends the
    /// game, a double five is a draw.
    pub const fn classic() -> Rules {
        Rules {
            clockwise_only: false,
            empty_quadrant_turns: true,
            placement_wins: true,
            double_five: DoubleFive::Draw,
        }
    }

    pub fn preset(name: &str) -> Option<Rules> {
        match name {
            "tr" => Some(Rules::tr()),
            "classic" => Some(Rules::classic()),
            _ => None,
        }
    }

    /// The preset's name, or `custom` for a combination that is not a preset.
    pub fn name(&self) -> &'static str {
        if *self == Rules::tr() {
            "tr"
        } else if *self == Rules::classic() {
            "classic"
        } else {
            "custom"
        }
    }

    /// The board symmetries under which these rules are invariant: the four rotations, and the
    /// mirror images too when both turning directions are allowed.
    pub fn symmetries(&self) -> &'static [Symmetry] {
        if self.clockwise_only {
            &Symmetry::ALL[..4]
        } else {
            &Symmetry::ALL
        }
    }

    /// May `turn` follow a placement that leaves `occupied` filled and does (`wins`) or does not
    /// make five by itself?
    #[inline]
    fn check_turn(&self, occupied: u64, wins: bool, turn: Turn) -> Result<(), MoveError> {
        if wins {
            return Err(MoveError::TwistAfterWin);
        }
        if self.clockwise_only && turn.direction == Direction::CounterClockwise {
            return Err(MoveError::DirectionNotAllowed);
        }
        if !self.empty_quadrant_turns && (occupied >> turn.quadrant.shift()) & 0x1ff == 0 {
            return Err(MoveError::EmptyQuadrant);
        }
        Ok(())
    }

    /// May a placement that does (`wins`) or does not make five end the move without a turn?
    fn check_bare(&self, wins: bool) -> Result<(), MoveError> {
        match (wins, self.placement_wins) {
            (true, _) => Ok(()),
            (false, true) => Err(MoveError::BareWithoutFive),
            (false, false) => Err(MoveError::RotationRequired),
        }
    }

    fn directions(&self) -> &'static [Direction] {
        if self.clockwise_only {
            &[Direction::Clockwise]
        } else {
            &[Direction::Clockwise, Direction::CounterClockwise]
        }
    }
}

impl Default for Rules {
    fn default() -> Rules {
        Rules::tr()
    }
}

/// A symmetry of the board: an optional left-right mirror, then clockwise quarter turns.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Symmetry {
    pub mirror: bool,
    pub quarter_turns: u8,
}

impl Symmetry {
    /// The eight symmetries; the first four are the rotations.
    pub const ALL: [Symmetry; 8] = [
        Symmetry::new(false, 0),
        Symmetry::new(false, 1),
        Symmetry::new(false, 2),
        Symmetry::new(false, 3),
        Symmetry::new(true, 0),
        Symmetry::new(true, 1),
        Symmetry::new(true, 2),
        Symmetry::new(true, 3),
    ];

    const fn new(mirror: bool, quarter_turns: u8) -> Symmetry {
        Symmetry {
            mirror,
            quarter_turns,
        }
    }
}

/// The first half of a move: a placement that the rules accept, waiting for its turn.
///
/// The server lets a player place and turn in two messages; this type carries the placement
/// between them and checks the turn against it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Placement {
    cell: Cell,
    mover: Side,
    /// The board after the placement, before any turn.
    stones: [u64; 2],
    wins: bool,
    rules: Rules,
}

impl Placement {
    pub fn cell(&self) -> Cell {
        self.cell
    }

    /// True when the placement alone makes five under `classic`: the game ends here and no turn
    /// may follow (complete it with [`Placement::finish`]).
    pub fn is_winning(&self) -> bool {
        self.wins
    }

    /// The marble on `cell` once this placement is made.
    pub fn stone_at(&self, cell: Cell) -> Option<Side> {
        stone_at(&self.stones, cell)
    }

    /// Completes the move with a turn, if the rules allow that turn after this placement.
    pub fn turn(&self, turn: Turn) -> Result<Move, MoveError> {
        self.rules
            .check_turn(self.stones[0] | self.stones[1], self.wins, turn)?;
        Ok(Move::new(self.cell, turn))
    }

    /// Completes the move without a turn: legal only for a winning placement.
    pub fn finish(&self) -> Result<Move, MoveError> {
        self.rules.check_bare(self.wins)?;
        Ok(Move::bare(self.cell))
    }

    /// The side that placed the marble.
    pub fn mover(&self) -> Side {
        self.mover
    }
}

/// A Pentago position.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Position {
    rules: Rules,
    /// Packed bitboards, indexed by [`Side::index`]: first mover (black), second (white).
    stones: [u64; 2],
    /// Marbles on the board, kept beside the bitboards: the side to move and the full-board
    /// test need it on every move, and a portable build has no popcount instruction.
    marbles: u8,
    outcome: Option<Outcome>,
}

impl Position {
    /// The empty board, black (the first mover) to move.
    pub fn new(rules: Rules) -> Position {
        Position {
            rules,
            stones: [0, 0],
            marbles: 0,
            outcome: None,
        }
    }

    pub fn rules(&self) -> &Rules {
        &self.rules
    }

    /// The marble on `cell`: the first mover's (black) or the second's (white).
    pub fn stone_at(&self, cell: Cell) -> Option<Side> {
        stone_at(&self.stones, cell)
    }

    /// Number of marbles on the board.
    pub fn marbles(&self) -> u32 {
        u32::from(self.marbles)
    }

    /// The packed bitboards (first mover, second mover), for engines that hash or search.
    /// Quadrant `q` (sw, se, nw, ne) holds its cells in bits `16q..16q+9`, row by row from the
    /// bottom, left to right.
    pub fn bitboards(&self) -> [u64; 2] {
        self.stones
    }

    /// A position with the given marbles, the side to move following from their numbers.
    /// `None` when a cell is listed twice, the numbers cannot arise in play (black has as many
    /// marbles as white, or one more), or either side already has five (the game would be over).
    pub fn from_cells(rules: Rules, first: &[Cell], second: &[Cell]) -> Option<Position> {
        let mut stones = [0u64; 2];
        for (side, cells) in [first, second].into_iter().enumerate() {
            for cell in cells {
                if (stones[0] | stones[1]) & cell.bit() != 0 {
                    return None;
                }
                stones[side] |= cell.bit();
            }
        }
        let balanced = first.len() == second.len() || first.len() == second.len() + 1;
        let position = Position {
            rules,
            stones,
            marbles: (stones[0] | stones[1]).count_ones() as u8,
            outcome: None,
        };
        let running = !has_five(stones[0]) && !has_five(stones[1]) && position.marbles() < 36;
        (balanced && running).then_some(position)
    }

    /// The board with one quadrant turned and nothing placed (for analysis and tests; not a
    /// move, and the result is not judged).
    pub fn turned(&self, turn: Turn) -> Position {
        Position {
            stones: self.stones.map(|side| turn.apply(side)),
            ..*self
        }
    }

    /// True when `side` has five (or more) in a row.
    pub fn has_five(&self, side: Side) -> bool {
        has_five(self.stones[side.index()])
    }

    /// Checks the first half of a move.
    pub fn place(&self, cell: Cell) -> Result<Placement, MoveError> {
        if self.outcome.is_some() {
            return Err(MoveError::GameOver);
        }
        let bit = cell.bit();
        if (self.stones[0] | self.stones[1]) & bit != 0 {
            return Err(MoveError::Occupied);
        }
        let mover = self.to_move();
        let mut stones = self.stones;
        stones[mover.index()] |= bit;
        Ok(Placement {
            cell,
            mover,
            stones,
            wins: self.rules.placement_wins && has_five(stones[mover.index()]),
            rules: self.rules,
        })
    }

    /// The position after a symmetry of the board; the result is a legal position under the same
    /// rules only for the rules' own [`Rules::symmetries`].
    pub fn transformed(&self, symmetry: Symmetry) -> Position {
        let mut stones = [0u64; 2];
        for cell in Cell::all() {
            if let Some(side) = self.stone_at(cell) {
                stones[side.index()] |= cell.transformed(symmetry).bit();
            }
        }
        Position { stones, ..*self }
    }

    /// Judges the board after a completed move by `mover`.
    #[inline]
    fn judge(&self, mover: Side) -> Option<Outcome> {
        let mine = has_five(self.stones[mover.index()]);
        let theirs = has_five(self.stones[mover.opponent().index()]);
        match (mine, theirs) {
            (true, true) => Some(match self.rules.double_five {
                DoubleFive::MoverWins => Outcome::win(mover, Reason::DoubleFive),
                DoubleFive::Draw => Outcome::draw(Reason::DoubleFive),
            }),
            (true, false) => Some(Outcome::win(mover, Reason::Five)),
            (false, true) => Some(Outcome::win(mover.opponent(), Reason::OpponentFive)),
            (false, false) if self.marbles() == 36 => Some(Outcome::draw(Reason::FullBoard)),
            (false, false) => None,
        }
    }
}

fn stone_at(stones: &[u64; 2], cell: Cell) -> Option<Side> {
    let bit = cell.bit();
    if stones[0] & bit != 0 {
        Some(Side::First)
    } else if stones[1] & bit != 0 {
        Some(Side::Second)
    } else {
        None
    }
}

/// Five (or more) in a row for the side whose packed bitboard is `stones`.
#[inline]
fn has_five(stones: u64) -> bool {
    let q = |i: u32| ((stones >> (16 * i)) & 0x1ff) as usize;
    WIN_LINES[0][q(0)] & WIN_LINES[1][q(1)] & WIN_LINES[2][q(2)] & WIN_LINES[3][q(3)] != 0
}

impl Game for Position {
    type Move = Move;

    fn to_move(&self) -> Side {
        if self.marbles % 2 == 0 {
            Side::First
        } else {
            Side::Second
        }
    }

    fn outcome(&self) -> Option<Outcome> {
        self.outcome
    }

    fn plies(&self) -> u32 {
        self.marbles()
    }

    fn parse_move(&self, text: &str) -> Result<Move, MoveError> {
        Move::parse(text)
    }

    fn legal_moves(&self, out: &mut Vec<Move>) {
        if self.outcome.is_some() {
            return;
        }
        let occupied = self.stones[0] | self.stones[1];
        let mine = self.stones[self.to_move().index()];
        for cell in Cell::all() {
            let bit = cell.bit();
            if occupied & bit != 0 {
                continue;
            }
            if self.rules.placement_wins && has_five(mine | bit) {
                out.push(Move::bare(cell));
                continue;
            }
            for quadrant in Quadrant::ALL {
                if !self.rules.empty_quadrant_turns
                    && ((occupied | bit) >> quadrant.shift()) & 0x1ff == 0
                {
                    continue;
                }
                for &direction in self.rules.directions() {
                    out.push(Move::new(cell, Turn::new(quadrant, direction)));
                }
            }
        }
    }

    fn count_legal_moves(&self) -> u64 {
        if self.outcome.is_some() {
            return 0;
        }
        let occupied = self.stones[0] | self.stones[1];
        let mine = self.stones[self.to_move().index()];
        let directions = self.rules.directions().len() as u64;
        let filled_quadrants = Quadrant::ALL
            .iter()
            .filter(|q| (occupied >> q.shift()) & 0x1ff != 0)
            .count() as u64;
        let mut count = 0;
        for cell in Cell::all() {
            let bit = cell.bit();
            if occupied & bit != 0 {
                continue;
            }
            count += if self.rules.placement_wins && has_five(mine | bit) {
                1
            } else if self.rules.empty_quadrant_turns {
                4 * directions
            } else {
                let opens_quadrant = (occupied >> cell.quadrant().shift()) & 0x1ff == 0;
                (filled_quadrants + u64::from(opens_quadrant)) * directions
            };
        }
        count
    }

    // The hot path of every search: the same checks as [`Position::place`] and
    // [`Placement::turn`], without building the intermediate placement.
    fn play(&mut self, mv: Move) -> Result<(), MoveError> {
        if self.outcome.is_some() {
            return Err(MoveError::GameOver);
        }
        let bit = mv.cell.bit();
        let occupied = (self.stones[0] | self.stones[1]) | bit;
        if self.stones[0] & bit != 0 || self.stones[1] & bit != 0 {
            return Err(MoveError::Occupied);
        }
        let mover = self.to_move();
        let placed = self.stones[mover.index()] | bit;
        let wins = self.rules.placement_wins && has_five(placed);
        match mv.turn {
            None => {
                self.rules.check_bare(wins)?;
                // A classic winning placement: the game ends before any turn.
                self.stones[mover.index()] = placed;
                self.marbles += 1;
                self.outcome = Some(Outcome::win(mover, Reason::Five));
            }
            Some(turn) => {
                self.rules.check_turn(occupied, wins, turn)?;
                self.stones[mover.index()] = placed;
                self.stones = self.stones.map(|side| turn.apply(side));
                self.marbles += 1;
                self.outcome = self.judge(mover);
            }
        }
        Ok(())
    }

    fn board_text(&self) -> String {
        render_board(&self.stones)
    }
}

/// The board as text: rank 6 at the top, quadrants separated, `x` black, `o` white.
pub fn render_board(stones: &[u64; 2]) -> String {
    let mut out = String::new();
    out.push_str("    a b c   d e f\n");
    for rank in (0..6u8).rev() {
        if rank == 2 {
            out.push_str("   -------+-------\n");
        }
        out.push_str(&format!(" {} ", rank + 1));
        for file in 0..6u8 {
            if file == 3 {
                out.push_str(" |");
            }
            let cell = Cell(rank * 6 + file);
            out.push(' ');
            out.push(match stone_at(stones, cell) {
                Some(Side::First) => 'x',
                Some(Side::Second) => 'o',
                None => '.',
            });
        }
        out.push_str(&format!("  {}\n", rank + 1));
    }
    out.push_str("    a b c   d e f\n");
    out
}

// ---------------------------------------------------------------------------------------------
// Tables, built at compile time.

/// The packed bit of each cell.
const CELL_BITS: [u64; 64] = {
    let mut bits = [0u64; 64];
    let mut i = 0;
    while i < 36 {
        let (file, rank) = (i % 6, i / 6);
        let quadrant = (rank / 3) * 2 + file / 3;
        let local = (rank % 3) * 3 + file % 3;
        bits[i] = 1 << (16 * quadrant + local);
        i += 1;
    }
    bits
};

/// Clockwise turn of a quadrant's 9 bits: (row, col) -> (2 - col, row), rows from the bottom.
const ROTATE_CW: [u16; 512] = rotation_table(true);
const ROTATE_CCW: [u16; 512] = rotation_table(false);

const fn rotation_table(clockwise: bool) -> [u16; 512] {
    let mut table = [0u16; 512];
    let mut bits = 0;
    while bits < 512 {
        let mut out = 0u16;
        let mut local = 0;
        while local < 9 {
            if bits & (1 << local) != 0 {
                let (row, col) = (local / 3, local % 3);
                let (r, c) = if clockwise {
                    (2 - col, row)
                } else {
                    (col, 2 - row)
                };
                out |= 1 << (r * 3 + c);
            }
            local += 1;
        }
        table[bits] = out;
        bits += 1;
    }
    table
}

/// The 32 five-cell lines, as packed masks.
const LINES: [u64; 32] = {
    let mut lines = [0u64; 32];
    let mut n = 0;
    // (file step, rank step) for rows, columns, diagonals and anti-diagonals.
    let steps: [(i32, i32); 4] = [(1, 0), (0, 1), (1, 1), (-1, 1)];
    let mut s = 0;
    while s < 4 {
        let (df, dr) = steps[s];
        let mut start: i32 = 0;
        while start < 36 {
            let (f0, r0) = (start % 6, start / 6);
            let (f4, r4) = (f0 + 4 * df, r0 + 4 * dr);
            if f4 >= 0 && f4 < 6 && r4 < 6 {
                let mut mask = 0u64;
                let mut k = 0;
                while k < 5 {
                    let cell = ((r0 + k * dr) * 6 + f0 + k * df) as usize;
                    mask |= CELL_BITS[cell];
                    k += 1;
                }
                lines[n] = mask;
                n += 1;
            }
            start += 1;
        }
        s += 1;
    }
    assert!(n == 32);
    lines
};

/// `WIN_LINES[q][bits]`: bit `i` is set when quadrant `q` holding `bits` fills every cell that
/// line `i` has in that quadrant (a line with no cell there counts as filled).
const WIN_LINES: [[u32; 512]; 4] = {
    let mut table = [[0u32; 512]; 4];
    let mut q = 0;
    while q < 4 {
        let mut bits = 0;
        while bits < 512 {
            let packed = (bits as u64) << (16 * q);
            let mut set = 0u32;
            let mut i = 0;
            while i < 32 {
                let part = LINES[i] & (0x1ff << (16 * q));
                if packed & part == part {
                    set |= 1 << i;
                }
                i += 1;
            }
            table[q][bits] = set;
            bits += 1;
        }
        q += 1;
    }
    table
};

#[cfg(test)]
mod tests {
    use super::*;

    fn cell(name: &str) -> Cell {
        Move::parse(name).unwrap().cell
    }

    #[test]
    fn lines_are_the_32_fives() {
        assert!(LINES.iter().all(|line| line.count_ones() == 5));
        let mut sorted = LINES.to_vec();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted.len(), 32);
    }

    #[test]
    fn has_five_agrees_with_the_line_masks() {
        // Every line alone is five; every line less one cell is not.
        for line in LINES {
            assert!(has_five(line));
            let mut rest = line;
            while rest != 0 {
                let low = rest & rest.wrapping_neg();
                assert!(!has_five(line & !low));
                rest &= !low;
            }
        }
    }

    #[test]
    fn clockwise_turn_moves_a1_to_a3_and_b1_to_a2() {
        let turn = Turn::new(Quadrant::Sw, Direction::Clockwise);
        assert_eq!(turn.apply(cell("a1").bit()), cell("a3").bit());
        assert_eq!(turn.apply(cell("b1").bit()), cell("a2").bit());
        let back = Turn::new(Quadrant::Sw, Direction::CounterClockwise);
        assert_eq!(back.apply(cell("a1").bit()), cell("c1").bit());
    }

    #[test]
    fn cell_symmetries_match_quadrant_symmetries() {
        for symmetry in Symmetry::ALL {
            for c in Cell::all() {
                assert_eq!(
                    c.transformed(symmetry).quadrant(),
                    c.quadrant().transformed(symmetry)
                );
            }
        }
    }
}
