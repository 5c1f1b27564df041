//! Pente (rules.md section 6): 19x19 intersections, stones placed one at a time, custodial
//! captures of pairs, a win by five (or more) in a row or by capturing ten stones.
//!
//! - Board: columns `A`..`T` without `I`, rows `1`..`19` from bottom to top; the centre is `K10`.
//! - White ([`Side::First`]) moves first and must open on `K10`. Under the `tournament` preset
//!   White's second stone (the game's third) must be at Chebyshev distance 3 or more from `K10`;
//!   the `free` preset drops that rule.
//! - Placing a stone that closes `X O O X` in any of the 8 directions removes the two `O` stones;
//!   one move can capture several pairs. Placing a stone into `X O _ X` is safe.
//! - A move that makes five or more in a row wins ([`Reason::Five`]); a move that brings the
//!   mover's captured stones to [`Rules::captures_to_win`] wins ([`Reason::Captures`]); when one
//!   move does both the reason is `Five`. A full board without a winner is a draw
//!   ([`Reason::FullBoard`]).
//!
//! **Legal move order**: [`Game::legal_moves`] lists points row by row from the bottom, each row
//! from column `A` to `T`: `A1, B1, ..., T1, A2, ..., T19` (increasing [`Point::index`]).
//!
//! ```
//! use hakem_games::pente::{Point, Position, Rules};
//! use hakem_games::{Game, Side};
//!
//! let mut pos = Position::new(Rules::tournament());
//! pos.play_str("K10").unwrap();
//! pos.play_str("K11").unwrap();
//! assert_eq!(pos.play_str("K9").unwrap_err().code(), "tournament_rule");
//! pos.play_str("k7").unwrap(); // either case; printed as `K7`
//! assert_eq!(pos.stone("K7".parse::<Point>().unwrap()), Some(Side::First));
//! assert_eq!(pos.to_move(), Side::Second);
//! ```
//!
//! The board is stored as bit rows (one `u32` per row and colour, bit `c` = column `c`), and a
//! move looks only at the lines through the placed stone, so playing a move costs a few dozen
//! bit tests whatever the size of the game.

use std::fmt;
use std::str::FromStr;

use crate::{Game, MoveError, Outcome, Reason, Side};

/// Points on each side of the board.
pub const SIZE: u8 = 19;
const N: usize = SIZE as usize;
const POINTS: u16 = (N * N) as u16;
const ROW_MASK: u32 = (1 << N) - 1;
/// Column letters. `I` is skipped, as on Go and Pente boards, so it is not confused with `J`/`1`.
const COLUMNS: &[u8; N] = b"ABCDEFGHJKLMNOPQRST";
/// Coordinate (0-based) of the centre `K10` on both axes.
const MID: u8 = 9;
/// Columns (or rows) 7..=11: the 5x5 square around `K10` that the tournament rule forbids.
const NEAR_CENTRE: u32 = 0b11111 << (MID - 2);
/// The 8 directions from a placed stone, as (column step, row step); bit `k` of a capture mask
/// stands for `DIRECTIONS[k]`.
const DIRECTIONS: [(i8, i8); 8] = [
    (1, 0),
    (0, 1),
    (1, 1),
    (1, -1),
    (-1, 0),
    (0, -1),
    (-1, -1),
    (-1, 1),
];

/// The rules a preset switches.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Rules {
    /// White's second stone (the game's third stone) must be at Chebyshev distance 3 or more
    /// from `K10`, i.e. outside the 5x5 square centred on it.
    pub tournament_rule: bool,
    /// A player who has captured this many stones or more wins (10 in both presets). Captures
    /// come in pairs, so an odd value wins at the next even count; 0 makes the first stone win.
    pub captures_to_win: u8,
}

impl Rules {
    /// The preset names; the first is the default.
    pub const PRESETS: &'static [&'static str] = &["tournament", "free"];

    /// The rules of a named preset (exact, lower-case name).
    pub fn preset(name: &str) -> Option<Rules> {
        match name {
            "tournament" => Some(Rules::tournament()),
            "free" => Some(Rules::free()),
            _ => None,
        }
    }

    /// The default: tournament rule on, ten captured stones win.
    pub fn tournament() -> Rules {
        Rules {
            tournament_rule: true,
            captures_to_win: 10,
        }
    }

    /// No restriction on White's second stone; ten captured stones win.
    pub fn free() -> Rules {
        Rules {
            tournament_rule: false,
            ..Rules::tournament()
        }
    }

    /// The preset these rules are, or `custom` for a combination that is no preset.
    pub fn name(&self) -> &'static str {
        if *self == Rules::tournament() {
            "tournament"
        } else if *self == Rules::free() {
            "free"
        } else {
            "custom"
        }
    }
}

impl Default for Rules {
    fn default() -> Rules {
        Rules::tournament()
    }
}

/// One of the 8 symmetries of the square board that keep `K10` in place. Every rule of Pente
/// (including the tournament rule's square) is invariant under them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Symmetry {
    /// Every point stays.
    Identity,
    /// Quarter turn counter-clockwise (row 19 at the top): `T10` goes to `K19`.
    Rotate90,
    /// Half turn: `A1` goes to `T19`.
    Rotate180,
    /// Quarter turn clockwise: `K19` goes to `T10`.
    Rotate270,
    /// Columns reversed (`A` <-> `T`), rows kept.
    MirrorColumns,
    /// Rows reversed (`1` <-> `19`), columns kept.
    MirrorRows,
    /// Reflection in the `A1`-`T19` diagonal (column and row swapped).
    Diagonal,
    /// Reflection in the `A19`-`T1` diagonal.
    AntiDiagonal,
}

impl Symmetry {
    /// All 8, identity first.
    pub const ALL: [Symmetry; 8] = [
        Symmetry::Identity,
        Symmetry::Rotate90,
        Symmetry::Rotate180,
        Symmetry::Rotate270,
        Symmetry::MirrorColumns,
        Symmetry::MirrorRows,
        Symmetry::Diagonal,
        Symmetry::AntiDiagonal,
    ];

    /// The symmetry that undoes this one.
    pub fn inverse(self) -> Symmetry {
        match self {
            Symmetry::Rotate90 => Symmetry::Rotate270,
            Symmetry::Rotate270 => Symmetry::Rotate90,
            other => other,
        }
    }
}

/// An intersection of the board. Always on the board: the only ways to make one check bounds.
///
/// Points order (and [`Point::index`] numbers them) row by row from the bottom, `A1` first:
/// the order of legal moves.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Point {
    // Field order matters: the derived ordering is by row, then column.
    row: u8,
    col: u8,
}

impl Point {
    /// `K10`, where the game starts.
    pub const CENTRE: Point = Point { row: MID, col: MID };

    /// The point at 0-based `col` (0 = `A`, 18 = `T`) and `row` (0 = row `1`), if on the board.
    pub fn new(col: u8, row: u8) -> Option<Point> {
        (col < SIZE && row < SIZE).then_some(Point { row, col })
    }

    /// 0-based column, 0 = `A` ... 18 = `T`.
    pub fn col(self) -> u8 {
        self.col
    }

    /// 0-based row, 0 = row `1` (the bottom) ... 18 = row `19`.
    pub fn row(self) -> u8 {
        self.row
    }

    /// `row * 19 + col`: 0 for `A1`, 360 for `T19`.
    pub fn index(self) -> usize {
        self.row as usize * N + self.col as usize
    }

    /// The inverse of [`Point::index`].
    pub fn from_index(index: usize) -> Option<Point> {
        (index < N * N).then_some(Point {
            row: (index / N) as u8,
            col: (index % N) as u8,
        })
    }

    /// All 361 points, in legal-move order (`A1`, `B1`, ..., `T19`).
    pub fn all() -> impl Iterator<Item = Point> {
        (0..N * N).filter_map(Point::from_index)
    }

    /// Chebyshev distance (king steps): the tournament rule's measure.
    pub fn distance(self, other: Point) -> u8 {
        self.col
            .abs_diff(other.col)
            .max(self.row.abs_diff(other.row))
    }

    /// The image of this point under `symmetry` (about `K10`).
    pub fn transformed(self, symmetry: Symmetry) -> Point {
        let last = SIZE - 1;
        let (c, r) = (self.col, self.row);
        let (col, row) = match symmetry {
            Symmetry::Identity => (c, r),
            Symmetry::Rotate90 => (last - r, c),
            Symmetry::Rotate180 => (last - c, last - r),
            Symmetry::Rotate270 => (r, last - c),
            Symmetry::MirrorColumns => (last - c, r),
            Symmetry::MirrorRows => (c, last - r),
            Symmetry::Diagonal => (r, c),
            Symmetry::AntiDiagonal => (last - r, last - c),
        };
        Point { row, col }
    }

    /// Reads a point: a column letter (`A`..`T` without `I`, either case) then a row number
    /// `1`..`19` without leading zeros. A readable point beyond the board (`U10`, `K20`, `A0`)
    /// is [`MoveError::OffBoard`]; anything else that is not a point is [`MoveError::Malformed`].
    pub fn parse(text: &str) -> Result<Point, MoveError> {
        let malformed = || {
            // Echo at most a short prefix: the text may come from anyone over the network.
            let shown: String = text.chars().take(12).collect();
            let more = if shown.len() < text.len() { "..." } else { "" };
            MoveError::Malformed(format!(
                "{shown:?}{more} is not a point (column A..T without I, row 1..19, e.g. K10)"
            ))
        };
        let bytes = text.as_bytes();
        let Some((&letter, digits)) = bytes.split_first() else {
            return Err(malformed());
        };
        let letter = letter.to_ascii_uppercase();
        if !letter.is_ascii_uppercase()
            || letter == b'I'
            || digits.is_empty()
            || !digits.iter().all(u8::is_ascii_digit)
            || (digits.len() > 1 && digits[0] == b'0')
        {
            return Err(malformed());
        }
        let col = COLUMNS.iter().position(|&l| l == letter);
        // Three digits or more (no leading zero) is beyond row 19; skipping them avoids overflow.
        let row = match digits {
            [d] => Some(d - b'0'),
            [d1, d2] => Some((d1 - b'0') * 10 + (d2 - b'0')),
            _ => None,
        };
        match (col, row) {
            (Some(col), Some(row @ 1..=19)) => Ok(Point {
                row: row - 1,
                col: col as u8,
            }),
            _ => Err(MoveError::OffBoard),
        }
    }
}

impl fmt::Display for Point {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}{}", COLUMNS[self.col as usize] as char, self.row + 1)
    }
}

// Debug prints the notation: test failures and logs read `K10`, not `Point { row: 9, col: 9 }`.
impl fmt::Debug for Point {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl FromStr for Point {
    type Err = MoveError;

    fn from_str(text: &str) -> Result<Point, MoveError> {
        Point::parse(text)
    }
}

/// A Pente move: the point where the mover places a stone. Displays as the point (`K10`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Move(pub Point);

impl Move {
    /// The point played.
    pub fn point(self) -> Point {
        self.0
    }

    /// The move to the image point under `symmetry` (see [`Point::transformed`]).
    pub fn transformed(self, symmetry: Symmetry) -> Move {
        Move(self.0.transformed(symmetry))
    }
}

impl From<Point> for Move {
    fn from(point: Point) -> Move {
        Move(point)
    }
}

impl fmt::Display for Move {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.0, f)
    }
}

impl FromStr for Move {
    type Err = MoveError;

    fn from_str(text: &str) -> Result<Move, MoveError> {
        Point::parse(text).map(Move)
    }
}

/// A Pente position: the stones, the captures, whose turn it is and the result.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Position {
    rules: Rules,
    /// `stones[side][row]` has bit `col` set where that side has a stone.
    stones: [[u32; N]; 2],
    /// Opponent stones captured by each side.
    captures: [u16; 2],
    stones_on_board: u16,
    plies: u32,
    last: Option<Point>,
    /// Bit `k` set: the last move captured the pair in direction `DIRECTIONS[k]`.
    last_capture_dirs: u8,
    outcome: Option<Outcome>,
}

impl Position {
    /// The empty board, White to move.
    pub fn new(rules: Rules) -> Position {
        Position {
            rules,
            stones: [[0; N]; 2],
            captures: [0; 2],
            stones_on_board: 0,
            plies: 0,
            last: None,
            last_capture_dirs: 0,
            outcome: None,
        }
    }

    pub fn rules(&self) -> &Rules {
        &self.rules
    }

    /// The stone on `point`, by the side that owns it.
    pub fn stone(&self, point: Point) -> Option<Side> {
        let bit = 1 << point.col;
        let row = point.row as usize;
        if self.stones[0][row] & bit != 0 {
            Some(Side::First)
        } else if self.stones[1][row] & bit != 0 {
            Some(Side::Second)
        } else {
            None
        }
    }

    /// The number of opponent stones `side` has captured (two per pair).
    pub fn captures(&self, side: Side) -> u16 {
        self.captures[side.index()]
    }

    /// The stones of `side` as 19 bit rows: element `r` is row `r + 1`, bit `c` is column `c`
    /// (0 = `A`). For bots that evaluate patterns with bit operations.
    pub fn bit_rows(&self, side: Side) -> &[u32; N] {
        &self.stones[side.index()]
    }

    /// Stones on the board, both colours.
    pub fn stone_count(&self) -> u32 {
        u32::from(self.stones_on_board)
    }

    /// The last move played, if any.
    pub fn last_move(&self) -> Option<Move> {
        self.last.map(Move)
    }

    /// The points whose stones the last move captured (empty now), in pairs.
    pub fn captured_by_last_move(&self) -> Vec<Point> {
        let (Some(last), dirs) = (self.last, self.last_capture_dirs) else {
            return Vec::new();
        };
        let mut points = Vec::new();
        for (k, &(dc, dr)) in DIRECTIONS.iter().enumerate() {
            if dirs & (1 << k) != 0 {
                for step in 1..=2 {
                    if let Some(p) = offset(last, dc * step, dr * step) {
                        points.push(p);
                    }
                }
            }
        }
        points
    }

    /// Whether `mv` is legal here, and if not, why. [`Game::play`] runs the same check.
    pub fn check(&self, mv: Move) -> Result<(), MoveError> {
        let point = mv.0;
        if self.outcome.is_some() {
            return Err(MoveError::GameOver);
        }
        if self.stone(point).is_some() {
            return Err(MoveError::Occupied);
        }
        if self.plies == 0 && point != Point::CENTRE {
            return Err(MoveError::FirstNotCenter);
        }
        if self.plies == 2 && self.rules.tournament_rule && point.distance(Point::CENTRE) < 3 {
            return Err(MoveError::TournamentRule);
        }
        Ok(())
    }

    /// The points of row `row` (bit mask) where the side to move may play, game not over.
    fn playable(&self, row: usize) -> u32 {
        let mut free = !(self.stones[0][row] | self.stones[1][row]) & ROW_MASK;
        if self.plies == 2 && self.rules.tournament_rule && NEAR_CENTRE & (1 << row) != 0 {
            free &= !NEAR_CENTRE;
        }
        free
    }

    /// The directions (bits as in `DIRECTIONS`) in which `me`'s stone at (col, row) closes
    /// `X O O X` around two stones of `them`.
    fn capture_directions(&self, me: usize, them: usize, col: u32, row: i32) -> u8 {
        // Windows of 7 columns with `col` on bit 3: opponent rows row-2..=row+2 and own rows
        // row-3, row, row+3; then every direction is three bit tests, with no branches to
        // mispredict on random positions.
        let t: [u32; 5] = [-2, -1, 0, 1, 2].map(|k| window(&self.stones[them], row + k, col, 3));
        let m: [u32; 3] = [-3, 0, 3].map(|k| window(&self.stones[me], row + k, col, 3));
        let mut dirs = 0;
        for (i, &(dc, dr)) in DIRECTIONS.iter().enumerate() {
            let (dc, dr) = (i32::from(dc), i32::from(dr));
            let near = t[(2 + dr) as usize] >> (3 + dc);
            let far = t[(2 + 2 * dr) as usize] >> (3 + 2 * dc);
            let anchor = m[(1 + dr) as usize] >> (3 + 3 * dc);
            dirs |= ((near & far & anchor & 1) as u8) << i;
        }
        dirs
    }

    /// Whether `side`'s stone at (col, row) is part of five or more in a row.
    fn makes_five(&self, side: usize, col: u32, row: i32) -> bool {
        // The 9 points of each line centred on the stone, one line per 16-bit lane of a u64
        // (row, column, both diagonals), gathered from 9-column windows with `col` on bit 4.
        // The gaps between lanes are zero, so one five test covers all four lines.
        let rows = &self.stones[side];
        let mut lines = u64::from(window(rows, row, col, 4) & 0x1ff);
        for k in 0..9i32 {
            let w = u64::from(window(rows, row + k - 4, col, 4));
            lines |= ((w >> 4) & 1) << (16 + k) // same column
                | (w & (1 << k)) << 32 // column rises with the row
                | (w & (1 << (8 - k))) << 48; // column falls as the row rises
        }
        lines & (lines >> 1) & (lines >> 2) & (lines >> 3) & (lines >> 4) != 0
    }
}

/// Row `row` of `rows` (empty when off the board) shifted so that column `col` lands on bit
/// `shift` (at most 4); columns off either edge of the board read as empty.
#[inline(always)]
fn window(rows: &[u32; N], row: i32, col: u32, shift: u32) -> u32 {
    // A negative row wraps to a huge index and misses.
    let bits = rows.get(row as usize).copied().unwrap_or(0);
    (bits << shift) >> col
}

fn offset(point: Point, dc: i8, dr: i8) -> Option<Point> {
    let col = point.col.checked_add_signed(dc)?;
    let row = point.row.checked_add_signed(dr)?;
    Point::new(col, row)
}

impl Game for Position {
    type Move = Move;

    fn to_move(&self) -> Side {
        if self.plies % 2 == 0 {
            Side::First
        } else {
            Side::Second
        }
    }

    fn outcome(&self) -> Option<Outcome> {
        self.outcome
    }

    fn plies(&self) -> u32 {
        self.plies
    }

    fn parse_move(&self, text: &str) -> Result<Move, MoveError> {
        Point::parse(text).map(Move)
    }

    /// Points in row-major order from the bottom: `A1, B1, ..., T1, A2, ...`.
    fn legal_moves(&self, out: &mut Vec<Move>) {
        if self.outcome.is_some() {
            return;
        }
        if self.plies == 0 {
            out.push(Move(Point::CENTRE));
            return;
        }
        for row in 0..N {
            let mut free = self.playable(row);
            while free != 0 {
                let col = free.trailing_zeros() as u8;
                out.push(Move(Point {
                    row: row as u8,
                    col,
                }));
                free &= free - 1;
            }
        }
    }

    fn count_legal_moves(&self) -> u64 {
        if self.outcome.is_some() {
            0
        } else if self.plies == 0 {
            1
        } else if self.plies == 2 && self.rules.tournament_rule {
            (0..N)
                .map(|row| u64::from(self.playable(row).count_ones()))
                .sum()
        } else {
            u64::from(POINTS - self.stones_on_board)
        }
    }

    fn play(&mut self, mv: Move) -> Result<(), MoveError> {
        self.check(mv)?;
        let side = self.to_move();
        let (me, them) = (side.index(), side.opponent().index());
        let Point { row, col } = mv.0;
        self.stones[me][row as usize] |= 1 << col;
        self.stones_on_board += 1;
        self.plies += 1;
        self.last = Some(mv.0);

        let (c, r) = (u32::from(col), i32::from(row));
        let dirs = self.capture_directions(me, them, c, r);
        if dirs != 0 {
            for (k, &(dc, dr)) in DIRECTIONS.iter().enumerate() {
                if dirs & (1 << k) != 0 {
                    for step in 1..=2 {
                        // On the board: stones of `them` were found there.
                        let col = (c as i32 + step * i32::from(dc)) as u32;
                        let row = (r + step * i32::from(dr)) as usize;
                        self.stones[them][row] &= !(1 << col);
                    }
                }
            }
        }
        self.last_capture_dirs = dirs;
        let taken = 2 * dirs.count_ones() as u16;
        self.captures[me] = self.captures[me].saturating_add(taken);
        self.stones_on_board -= taken;

        // Only the mover can have gained a line or captures, and only through this stone.
        self.outcome = if self.makes_five(me, c, r) {
            Some(Outcome::win(side, Reason::Five))
        } else if self.captures[me] >= u16::from(self.rules.captures_to_win) {
            Some(Outcome::win(side, Reason::Captures))
        } else if self.stones_on_board == POINTS {
            Some(Outcome::draw(Reason::FullBoard))
        } else {
            None
        };
        Ok(())
    }

    /// Row 19 at the top; White `O`, Black `X`, empty `.` (`+` on an empty `K10`); the last
    /// stone is in parentheses. Below: captures, and whose turn it is or the result.
    fn board_text(&self) -> String {
        let mut letters = String::from("    ");
        for &l in COLUMNS {
            letters.push(' ');
            letters.push(l as char);
        }
        let mut text = letters.clone();
        text.push('\n');
        for row in (0..SIZE).rev() {
            text.push_str(&format!("{:>3} ", row + 1));
            for col in 0..SIZE {
                let point = Point { row, col };
                let is_last = self.last == Some(point);
                let after_last = col > 0 && self.last == Some(Point { row, col: col - 1 });
                text.push(if is_last {
                    '('
                } else if after_last {
                    ')'
                } else {
                    ' '
                });
                text.push(match self.stone(point) {
                    Some(Side::First) => 'O',
                    Some(Side::Second) => 'X',
                    None if point == Point::CENTRE => '+',
                    None => '.',
                });
            }
            let closing = self.last == Some(Point { row, col: SIZE - 1 });
            text.push(if closing { ')' } else { ' ' });
            text.push_str(&format!(" {}\n", row + 1));
        }
        text.push_str(&letters);
        text.push('\n');
        text.push_str(&format!(
            "White (O) captured {}, Black (X) captured {} (win at {})\n",
            self.captures[0], self.captures[1], self.rules.captures_to_win
        ));
        match self.outcome {
            Some(outcome) => text.push_str(&format!(
                "Result {} ({})\n",
                outcome.result(),
                outcome.reason
            )),
            None => {
                let who = match self.to_move() {
                    Side::First => "White (O)",
                    Side::Second => "Black (X)",
                };
                text.push_str(&format!("{who} to move\n"));
            }
        }
        text
    }
}
