//! Quoridor: two pawns race across a 9x9 board while each player may instead place a wall.
//!
//! Squares are numbered `rank * 9 + file` from `a1` (0) to `i9` (80) and held in a `u128`. Which
//! steps are open is kept in four masks (`up`, `down`, `right`, `left`): bit `s` of `up` is set
//! when a pawn on `s` may step one rank up (not on rank 9, no wall in the way). A wall clears two
//! bits in two of the masks when it is placed, so pawn moves and path searches are pure bit
//! arithmetic: the path rule is a flood fill that shifts the reached set by 9 or 1 under the
//! masks until it meets the goal rank or stops growing.
//!
//! Walls are named by their lower-left anchor square, files `a`..`h` and ranks `1`..`8`, and held
//! as two `u64` bitsets (one per orientation) indexed by `rank * 8 + file`.
//!
//! Legal wall generation avoids most flood fills with two necessary conditions for a wall to take
//! a pawn's last path away: it must close a loop of walls and board edge (two of its three
//! lattice points already joined; otherwise it splits no region), and it must block a step of the
//! pawn's current shortest path. Each lattice point's group is kept up to date as walls are
//! placed, so the first test is three lookups.
//!
//! The fixed order of legal moves: pawn destinations in square order (`a1`, `b1`, ..., `i9`),
//! then horizontal walls by anchor in the same order, then vertical walls by anchor.
//!
//! A refused move names the first rule it breaks, in this order. Any move: `game_over`. A wall:
//! `no_walls_left`, `wall_overlap`, `wall_cross`, `wall_blocks_own_path`,
//! `wall_blocks_opponent_path`. A pawn move: `onto_opponent`; then by the shape of the move, a
//! one-square step across a wall is `step_through_wall`; two squares straight is
//! `not_reachable` unless over the other pawn, and `jump_through_wall` if a wall stands between
//! the pawns or behind the other pawn; a diagonal is `not_reachable` unless beside the other
//! pawn, `jump_through_wall` if a wall stands between the pawns, then
//! `diagonal_when_straight_possible`, then `diagonal_through_wall`; anything else is
//! `not_reachable`. (Notation and board bounds are checked before: `malformed`, `off_board`,
//! `wall_off_board`.)

use std::fmt;

use crate::{Game, MoveError, Outcome, Reason, Side};

/// Board size in squares per side.
const N: u8 = 9;

const fn file_squares(file: u32) -> u128 {
    let mut mask = 0;
    let mut rank = 0;
    while rank < 9 {
        mask |= 1u128 << (rank * 9 + file);
        rank += 1;
    }
    mask
}

const BOARD: u128 = (1u128 << 81) - 1;
const RANK_1: u128 = 0x1ff;
const RANK_9: u128 = 0x1ff << 72;
const FILE_A: u128 = file_squares(0);
const FILE_I: u128 = file_squares(8);

/// Indexes into the open-step masks.
const UP: usize = 0;
const DOWN: usize = 1;
const RIGHT: usize = 2;
const LEFT: usize = 3;

const OPEN_START: [u128; 4] = [
    BOARD & !RANK_9,
    BOARD & !RANK_1,
    BOARD & !FILE_I,
    BOARD & !FILE_A,
];

/// Anchor bitsets without file `a` / without file `h` (to drop bits that a shift by one wrapped
/// into the neighbouring rank).
const ANCHOR_NOT_FILE_A: u64 = !0x0101_0101_0101_0101;
const ANCHOR_NOT_FILE_H: u64 = !0x8080_8080_8080_8080;

/// Lattice points are the 10x10 corners where grooves meet, numbered `y * 10 + x`. Each point's
/// group is the smallest point joined to it through walls and the board edge; at the start the
/// edge is group 0 and every inner point is alone.
const START_GROUPS: [u8; 100] = {
    let mut groups = [0u8; 100];
    let mut i = 0;
    while i < 100 {
        let (x, y) = (i % 10, i / 10);
        if !(x == 0 || x == 9 || y == 0 || y == 9) {
            groups[i] = i as u8;
        }
        i += 1;
    }
    groups
};

/// The lattice points on the board edge.
const BORDER_POSTS: u128 = {
    let mut mask = 0u128;
    let mut i = 0;
    while i < 100 {
        if START_GROUPS[i] == 0 {
            mask |= 1u128 << i;
        }
        i += 1;
    }
    mask
};

#[inline]
fn shift(bits: u128, dir: usize) -> u128 {
    match dir {
        UP => bits << 9,
        DOWN => bits >> 9,
        RIGHT => bits << 1,
        _ => bits >> 1,
    }
}

/// Every square one open step from a square of `from`.
#[inline]
fn expand(from: u128, open: &[u128; 4]) -> u128 {
    ((from & open[UP]) << 9)
        | ((from & open[DOWN]) >> 9)
        | ((from & open[RIGHT]) << 1)
        | ((from & open[LEFT]) >> 1)
}

/// Whether some square of `goal` can be reached from `start` through open steps.
#[inline]
fn reaches(start: u128, goal: u128, open: &[u128; 4]) -> bool {
    let mut reached = start;
    loop {
        if reached & goal != 0 {
            return true;
        }
        let next = reached | expand(reached, open);
        if next == reached {
            return false;
        }
        reached = next;
    }
}

/// A square of the board, `a1` (index 0) to `i9` (80), numbered rank by rank from the bottom.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Square(u8);

impl Square {
    /// The square on `file` (0 = `a`) and `rank` (0 = rank 1), if both are below 9.
    pub const fn new(file: u8, rank: u8) -> Option<Square> {
        if file < N && rank < N {
            Some(Square(rank * N + file))
        } else {
            None
        }
    }

    /// The square with index `rank * 9 + file`, if below 81.
    pub const fn from_index(index: u8) -> Option<Square> {
        if index < N * N {
            Some(Square(index))
        } else {
            None
        }
    }

    /// All 81 squares in square order.
    pub fn all() -> impl Iterator<Item = Square> {
        (0..N * N).map(Square)
    }

    pub const fn index(self) -> u8 {
        self.0
    }

    /// 0 (`a`) to 8 (`i`).
    pub const fn file(self) -> u8 {
        self.0 % N
    }

    /// 0 (rank 1) to 8 (rank 9).
    pub const fn rank(self) -> u8 {
        self.0 / N
    }

    /// The square's image in the left-right mirror (files `a` <-> `i`).
    pub const fn mirrored(self) -> Square {
        Square(self.rank() * N + (N - 1 - self.file()))
    }

    const fn bit(self) -> u128 {
        1u128 << self.0
    }
}

impl fmt::Display for Square {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}{}", (b'a' + self.file()) as char, self.rank() + 1)
    }
}

/// The direction of a wall.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Orientation {
    /// Lies between two ranks, written `h`.
    Horizontal,
    /// Lies between two files, written `v`.
    Vertical,
}

impl Orientation {
    /// `h` or `v`.
    pub fn letter(self) -> char {
        match self {
            Orientation::Horizontal => 'h',
            Orientation::Vertical => 'v',
        }
    }
}

/// A wall two squares long, named by its lower-left anchor square (files `a`..`h`, ranks
/// `1`..`8`). `e3h` lies between ranks 3 and 4 across files e and f; `e3v` lies between files e
/// and f across ranks 3 and 4. A `Wall` value always lies on the board.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Wall {
    anchor: Square,
    orientation: Orientation,
}

impl Wall {
    /// The wall anchored at `anchor`, unless it would stick out of the board (anchor on file `i`
    /// or rank 9).
    pub fn new(anchor: Square, orientation: Orientation) -> Option<Wall> {
        if anchor.file() < N - 1 && anchor.rank() < N - 1 {
            Some(Wall {
                anchor,
                orientation,
            })
        } else {
            None
        }
    }

    /// The wall with anchor index `rank * 8 + file` (the bit numbering of the wall bitsets).
    pub fn from_anchor_index(index: u8, orientation: Orientation) -> Option<Wall> {
        if index < 64 {
            Wall::new(Square(index / 8 * N + index % 8), orientation)
        } else {
            None
        }
    }

    pub fn anchor(self) -> Square {
        self.anchor
    }

    pub fn orientation(self) -> Orientation {
        self.orientation
    }

    /// `rank * 8 + file` of the anchor: the wall's bit in [`Position::horizontal_walls`] or
    /// [`Position::vertical_walls`].
    pub fn anchor_index(self) -> u8 {
        self.anchor.rank() * 8 + self.anchor.file()
    }

    /// The wall's image in the left-right mirror (files `a` <-> `i`). A wall covers two files,
    /// so its anchor moves from file `f` to file `7 - f`.
    pub fn mirrored(self) -> Wall {
        Wall {
            anchor: Square(self.anchor.rank() * N + (N - 2 - self.anchor.file())),
            orientation: self.orientation,
        }
    }

    /// The bits this wall clears in the four open-step masks.
    fn cuts(self) -> [u128; 4] {
        let s = self.anchor.bit();
        match self.orientation {
            Orientation::Horizontal => {
                let below = s | s << 1;
                [below, below << 9, 0, 0]
            }
            Orientation::Vertical => {
                let left = s | s << 9;
                [0, 0, left, left << 1]
            }
        }
    }

    /// The wall's three lattice points (`y * 10 + x`, x and y 0..=9), end, middle, end.
    fn points(self) -> [usize; 3] {
        let (f, r) = (
            usize::from(self.anchor.file()),
            usize::from(self.anchor.rank()),
        );
        match self.orientation {
            Orientation::Horizontal => {
                let p = (r + 1) * 10 + f;
                [p, p + 1, p + 2]
            }
            Orientation::Vertical => {
                let p = r * 10 + f + 1;
                [p, p + 10, p + 20]
            }
        }
    }
}

impl fmt::Display for Wall {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}{}", self.anchor, self.orientation.letter())
    }
}

/// One move: a pawn step or jump (written as its destination, `e2`), or a wall (`e3h`, `e3v`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Move {
    Pawn(Square),
    Wall(Wall),
}

impl Move {
    /// Reads `e2`, `e3h` or `e3v` (letters in either case). Checks the notation and the board
    /// bounds only: `Malformed` for text that is not a move, `OffBoard` for a pawn square beyond
    /// `a1`..`i9`, `WallOffBoard` for a wall anchor beyond `a1`..`h8`.
    pub fn parse(text: &str) -> Result<Move, MoveError> {
        let malformed =
            |why: &str| MoveError::Malformed(format!("{text:?}: {why} (expected e2, e3h or e3v)"));
        let bytes = text.as_bytes();
        let Some(&first) = bytes.first() else {
            return Err(malformed("empty move"));
        };
        let letter = first.to_ascii_lowercase();
        if !letter.is_ascii_lowercase() {
            return Err(malformed("a move starts with a file letter"));
        }
        let digits = bytes[1..].iter().take_while(|b| b.is_ascii_digit()).count();
        if digits == 0 {
            return Err(malformed(
                "the file letter must be followed by a rank number",
            ));
        }
        if digits > 1 && bytes[1] == b'0' {
            return Err(malformed("a rank number has no leading zero"));
        }
        // Any rank of three or more digits is off the board; saturate rather than overflow.
        let rank = bytes[1..=digits]
            .iter()
            .fold(0u32, |n, d| (n * 10 + u32::from(d - b'0')).min(1000));
        let orientation = match &bytes[1 + digits..] {
            [] => None,
            [b'h' | b'H'] => Some(Orientation::Horizontal),
            [b'v' | b'V'] => Some(Orientation::Vertical),
            _ => return Err(malformed("a wall ends in h or v")),
        };
        let file = letter - b'a';
        let square = match rank {
            1..=9 => Square::new(file, (rank - 1) as u8),
            _ => None,
        };
        match orientation {
            None => square.map(Move::Pawn).ok_or(MoveError::OffBoard),
            Some(orientation) => square
                .and_then(|anchor| Wall::new(anchor, orientation))
                .map(Move::Wall)
                .ok_or(MoveError::WallOffBoard),
        }
    }

    /// The move's image in the left-right mirror (files `a` <-> `i`): legal in
    /// [`Position::mirrored`] exactly when `self` is legal in the original position.
    pub fn mirrored(self) -> Move {
        match self {
            Move::Pawn(square) => Move::Pawn(square.mirrored()),
            Move::Wall(wall) => Move::Wall(wall.mirrored()),
        }
    }
}

impl fmt::Display for Move {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Move::Pawn(square) => square.fmt(f),
            Move::Wall(wall) => wall.fmt(f),
        }
    }
}

/// The rules that presets switch.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Rules {
    /// Walls each player has at the start (10).
    pub walls_per_player: u8,
    /// When set, the game is drawn ([`Reason::MoveLimit`]) once this many plies have been played
    /// without a winner: the ruling for untimed sets. `None` in the preset.
    pub ply_limit: Option<u32>,
}

impl Rules {
    /// The preset names; the first is the default.
    pub const PRESETS: &'static [&'static str] = &["standard"];

    /// Ten walls each, no ply limit.
    pub const fn standard() -> Rules {
        Rules {
            walls_per_player: 10,
            ply_limit: None,
        }
    }

    pub fn preset(name: &str) -> Option<Rules> {
        match name {
            "standard" => Some(Rules::standard()),
            _ => None,
        }
    }

    /// `standard` for ten walls each (a ply limit is a setting of untimed sets layered on the
    /// preset, so it keeps the name), `custom` for any other wall count.
    pub fn name(&self) -> &'static str {
        if self.walls_per_player == Rules::standard().walls_per_player {
            "standard"
        } else {
            "custom"
        }
    }
}

impl Default for Rules {
    fn default() -> Rules {
        Rules::standard()
    }
}

/// The rank a side's pawn must reach: rank 9 for the first mover, rank 1 for the second.
pub fn goal_rank(side: Side) -> u8 {
    match side {
        Side::First => N - 1,
        Side::Second => 0,
    }
}

fn goal_mask(side: Side) -> u128 {
    match side {
        Side::First => RANK_9,
        Side::Second => RANK_1,
    }
}

/// A Quoridor position: pawns, walls placed and in hand, the side to move and the result.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct Position {
    rules: Rules,
    pawns: [Square; 2],
    walls_left: [u8; 2],
    /// Horizontal and vertical wall anchors, bit `rank * 8 + file`.
    h_walls: u64,
    v_walls: u64,
    /// Open-step masks indexed by `UP`, `DOWN`, `RIGHT`, `LEFT` (derived from the walls).
    open: [u128; 4],
    /// Lattice points touched by a wall or the board edge, bit `y * 10 + x` (derived from the
    /// walls).
    posts: u128,
    /// Lattice point groups (see `START_GROUPS`), derived from the walls; canonical, so equal
    /// walls give equal groups whatever the order of placement.
    groups: [u8; 100],
    to_move: Side,
    plies: u32,
    outcome: Option<Outcome>,
}

impl Position {
    /// The start position: pawns on e1 (first mover) and e9, every wall in hand.
    pub fn new(rules: Rules) -> Position {
        let mut pos = Position {
            rules,
            pawns: [Square(4), Square(8 * N + 4)],
            walls_left: [rules.walls_per_player; 2],
            h_walls: 0,
            v_walls: 0,
            open: OPEN_START,
            posts: BORDER_POSTS,
            groups: START_GROUPS,
            to_move: Side::First,
            plies: 0,
            outcome: None,
        };
        pos.check_ply_limit();
        pos
    }

    pub fn rules(&self) -> &Rules {
        &self.rules
    }

    /// The square of `side`'s pawn.
    pub fn pawn(&self, side: Side) -> Square {
        self.pawns[side.index()]
    }

    /// The walls `side` still has in hand.
    pub fn walls_left(&self, side: Side) -> u8 {
        self.walls_left[side.index()]
    }

    /// Horizontal wall anchors as a bitset, bit `rank * 8 + file` (see [`Wall::anchor_index`]).
    pub fn horizontal_walls(&self) -> u64 {
        self.h_walls
    }

    /// Vertical wall anchors as a bitset, bit `rank * 8 + file`.
    pub fn vertical_walls(&self) -> u64 {
        self.v_walls
    }

    /// The walls on the board: horizontal by anchor, then vertical by anchor.
    pub fn walls(&self) -> impl Iterator<Item = Wall> + '_ {
        bits64(self.h_walls)
            .filter_map(|i| Wall::from_anchor_index(i, Orientation::Horizontal))
            .chain(
                bits64(self.v_walls)
                    .filter_map(|i| Wall::from_anchor_index(i, Orientation::Vertical)),
            )
    }

    /// Whether a pawn may step between two orthogonally adjacent squares (no wall between).
    /// False for squares that are not adjacent.
    pub fn is_open(&self, from: Square, to: Square) -> bool {
        let dir = match i16::from(to.0) - i16::from(from.0) {
            9 => UP,
            -9 => DOWN,
            1 if from.file() < N - 1 => RIGHT,
            -1 if from.file() > 0 => LEFT,
            _ => return false,
        };
        self.open[dir] & from.bit() != 0
    }

    /// The open-step masks `[up, down, right, left]` over squares `rank * 9 + file`: bit `s` of
    /// `up` is set when a pawn on `s` may step one rank up, and so on. For search code.
    pub fn open_steps(&self) -> [u128; 4] {
        self.open
    }

    /// The number of steps `side`'s pawn needs to reach its goal rank, walls considered and the
    /// other pawn ignored (as in the path rule); `None` if it has no path (never in a position
    /// reached by legal moves).
    pub fn distance_to_goal(&self, side: Side) -> Option<u8> {
        let goal = goal_mask(side);
        let mut seen = self.pawn(side).bit();
        let mut frontier = seen;
        let mut distance = 0;
        while frontier & goal == 0 {
            frontier = expand(frontier, &self.open) & !seen;
            if frontier == 0 {
                return None;
            }
            seen |= frontier;
            distance += 1;
        }
        Some(distance)
    }

    /// For every square (by index), the number of steps from there to `side`'s goal rank, walls
    /// considered and pawns ignored; `u8::MAX` where the goal cannot be reached.
    pub fn distance_map(&self, side: Side) -> [u8; 81] {
        let mut map = [u8::MAX; 81];
        let mut frontier = goal_mask(side);
        let mut seen = frontier;
        let mut distance = 0u8;
        while frontier != 0 {
            for s in bits128(frontier) {
                map[usize::from(s)] = distance;
            }
            // Steps are symmetric, so spreading out from the goal gives distances to it.
            frontier = expand(frontier, &self.open) & !seen;
            seen |= frontier;
            distance += 1;
        }
        map
    }

    /// The squares the side to move may move its pawn to, as a bitset over square indices.
    /// Empty once the game is over.
    pub fn pawn_destinations(&self) -> u128 {
        if self.outcome.is_some() {
            return 0;
        }
        let me = self.pawn(self.to_move).bit();
        let other = self.pawn(self.to_move.opponent()).bit();
        let mut dests = 0;
        for dir in [UP, DOWN, RIGHT, LEFT] {
            if self.open[dir] & me == 0 {
                continue;
            }
            let next = shift(me, dir);
            if next != other {
                dests |= next;
            } else if self.open[dir] & other != 0 {
                dests |= shift(other, dir);
            } else {
                // Wall or edge behind the other pawn: the two sideways squares beside it.
                let sideways = if dir == UP || dir == DOWN {
                    [RIGHT, LEFT]
                } else {
                    [UP, DOWN]
                };
                for side_dir in sideways {
                    if self.open[side_dir] & other != 0 {
                        dests |= shift(other, side_dir);
                    }
                }
            }
        }
        dests
    }

    /// The walls the side to move may place, as `(horizontal, vertical)` anchor bitsets (bit
    /// `rank * 8 + file`). Empty once the game is over or with no walls in hand.
    pub fn legal_wall_masks(&self) -> (u64, u64) {
        if self.outcome.is_some() || self.walls_left[self.to_move.index()] == 0 {
            return (0, 0);
        }
        let free = self.free_anchors();
        // Only a wall that closes a loop can split a region ...
        let closing = self.loop_closing(free);
        if closing == [0, 0] {
            return (free[0], free[1]);
        }
        // ... and it can only take a pawn's last path away if it also cuts the pawn's current
        // shortest path. Only walls that do both need a flood fill. Finding the two paths costs
        // about as much as four flood fills, so with one or two candidates just flood.
        let cuts = if closing[0].count_ones() + closing[1].count_ones() <= 2 {
            [[u64::MAX; 2]; 2]
        } else {
            [
                self.path_cutting_walls(Side::First),
                self.path_cutting_walls(Side::Second),
            ]
        };
        let mut legal = free;
        for (k, orientation) in [Orientation::Horizontal, Orientation::Vertical]
            .into_iter()
            .enumerate()
        {
            for i in bits64(closing[k] & (cuts[0][k] | cuts[1][k])) {
                let Some(wall) = Wall::from_anchor_index(i, orientation) else {
                    continue;
                };
                let bit = 1u64 << i;
                let open = self.open_with(wall);
                let keeps = [Side::First, Side::Second].into_iter().all(|side| {
                    cuts[side.index()][k] & bit == 0
                        || reaches(self.pawn(side).bit(), goal_mask(side), &open)
                });
                if !keeps {
                    legal[k] &= !bit;
                }
            }
        }
        (legal[0], legal[1])
    }

    /// Anchors where a wall neither overlaps nor crosses a wall already placed,
    /// `[horizontal, vertical]`.
    fn free_anchors(&self) -> [u64; 2] {
        let (h, v) = (self.h_walls, self.v_walls);
        let blocked_h = h | ((h << 1) & ANCHOR_NOT_FILE_A) | ((h >> 1) & ANCHOR_NOT_FILE_H) | v;
        let blocked_v = v | (v << 8) | (v >> 8) | h;
        [!blocked_h, !blocked_v]
    }

    /// The anchors of `candidates` whose wall would close a loop of walls and board edge: two of
    /// its three points are already joined. A wall that closes no loop adds no face (Euler's
    /// formula), so it cannot split a region.
    fn loop_closing(&self, candidates: [u64; 2]) -> [u64; 2] {
        // Cheap bitset test first: two of the three points touch a wall or the edge at all.
        let posts = self.posts;
        let row = |y: u32, x: u32| (posts >> (y * 10 + x)) as u64 & 0xff;
        let two_of = |a: u64, b: u64, c: u64| (a & b) | (b & c) | (a & c);
        let mut touching = [0u64; 2];
        for r in 0..8 {
            // Horizontal anchor (f, r) has points (f..=f+2, r+1); vertical (f+1, r..=r+2).
            touching[0] |= two_of(row(r + 1, 0), row(r + 1, 1), row(r + 1, 2)) << (r * 8);
            touching[1] |= two_of(row(r, 1), row(r + 1, 1), row(r + 2, 1)) << (r * 8);
        }
        let mut closing = [candidates[0] & touching[0], candidates[1] & touching[1]];
        for (k, orientation) in [Orientation::Horizontal, Orientation::Vertical]
            .into_iter()
            .enumerate()
        {
            for i in bits64(closing[k]) {
                let Some(wall) = Wall::from_anchor_index(i, orientation) else {
                    continue;
                };
                let [a, b, c] = wall.points().map(|p| self.groups[p]);
                if a != b && b != c && a != c {
                    closing[k] &= !(1 << i);
                }
            }
        }
        closing
    }

    /// `[horizontal, vertical]` anchor bitsets of the walls that would block a step of one
    /// shortest path of `side`'s pawn (all anchors if it has no path).
    fn path_cutting_walls(&self, side: Side) -> [u64; 2] {
        let goal = goal_mask(side);
        let open = &self.open;
        let mut layers = [0u128; 81];
        let mut seen = self.pawn(side).bit();
        layers[0] = seen;
        let mut depth = 0;
        while layers[depth] & goal == 0 {
            let next = expand(layers[depth], open) & !seen;
            if next == 0 || depth + 1 >= layers.len() {
                return [u64::MAX; 2];
            }
            depth += 1;
            layers[depth] = next;
            seen |= next;
        }
        let mut cut = [0u64; 2];
        let mut here = (layers[depth] & goal).trailing_zeros() as u8;
        // Walk back layer by layer, recording the walls that would block each step.
        for layer in layers[..depth].iter().rev() {
            let bit = 1u128 << here;
            let (from, up_from, right_from) = if (bit >> 9) & open[UP] & layer != 0 {
                (here - 9, Some(here - 9), None)
            } else if (bit << 9) & open[DOWN] & layer != 0 {
                (here + 9, Some(here), None)
            } else if (bit >> 1) & open[RIGHT] & layer != 0 {
                (here - 1, None, Some(here - 1))
            } else if (bit << 1) & open[LEFT] & layer != 0 {
                (here + 1, None, Some(here))
            } else {
                // Unreachable for a breadth-first layering; stay correct by testing every wall.
                return [u64::MAX; 2];
            };
            if let Some(s) = up_from {
                // The step from s up to s + 9: blocked by horizontal walls anchored at s and at
                // its left neighbour.
                let (f, r) = (s % N, s / N);
                let a = r * 8 + f;
                if f < N - 1 {
                    cut[0] |= 1 << a;
                }
                if f > 0 {
                    cut[0] |= 1 << (a - 1);
                }
            }
            if let Some(s) = right_from {
                // The step from s right to s + 1: blocked by vertical walls anchored at s and
                // at the square below it.
                let (f, r) = (s % N, s / N);
                let a = r * 8 + f;
                if r < N - 1 {
                    cut[1] |= 1 << a;
                }
                if r > 0 {
                    cut[1] |= 1 << (a - 8);
                }
            }
            here = from;
        }
        cut
    }

    fn open_with(&self, wall: Wall) -> [u128; 4] {
        let cuts = wall.cuts();
        let mut open = self.open;
        for (mask, cut) in open.iter_mut().zip(cuts) {
            *mask &= !cut;
        }
        open
    }

    fn add_wall(&mut self, wall: Wall) {
        let bit = 1u64 << wall.anchor_index();
        match wall.orientation {
            Orientation::Horizontal => self.h_walls |= bit,
            Orientation::Vertical => self.v_walls |= bit,
        }
        self.open = self.open_with(wall);
        let points = wall.points();
        for p in points {
            self.posts |= 1 << p;
        }
        let joined = points.map(|p| self.groups[p]);
        let group = joined[0].min(joined[1]).min(joined[2]);
        for g in self.groups.iter_mut() {
            if joined.contains(g) {
                *g = group;
            }
        }
    }

    /// Why the side to move may not place `wall`, if it may not.
    fn check_wall(&self, wall: Wall) -> Result<(), MoveError> {
        let me = self.to_move;
        if self.walls_left[me.index()] == 0 {
            return Err(MoveError::NoWallsLeft);
        }
        let bit = 1u64 << wall.anchor_index();
        let (same, other) = match wall.orientation {
            Orientation::Horizontal => (
                self.h_walls
                    & (bit | ((bit << 1) & ANCHOR_NOT_FILE_A) | ((bit >> 1) & ANCHOR_NOT_FILE_H)),
                self.v_walls & bit,
            ),
            Orientation::Vertical => (
                self.v_walls & (bit | (bit << 8) | (bit >> 8)),
                self.h_walls & bit,
            ),
        };
        if same != 0 {
            return Err(MoveError::WallOverlap);
        }
        if other != 0 {
            return Err(MoveError::WallCross);
        }
        let open = self.open_with(wall);
        if !reaches(self.pawn(me).bit(), goal_mask(me), &open) {
            return Err(MoveError::WallBlocksOwnPath);
        }
        let them = me.opponent();
        if !reaches(self.pawn(them).bit(), goal_mask(them), &open) {
            return Err(MoveError::WallBlocksOpponentPath);
        }
        Ok(())
    }

    /// Why the side to move may not move its pawn to `dest`, if it may not.
    fn check_pawn(&self, dest: Square) -> Result<(), MoveError> {
        let me = self.pawn(self.to_move);
        let other = self.pawn(self.to_move.opponent());
        if dest == other {
            return Err(MoveError::OntoOpponent);
        }
        let df = i16::from(dest.file()) - i16::from(me.file());
        let dr = i16::from(dest.rank()) - i16::from(me.rank());
        let vertical = |d: i16| if d > 0 { UP } else { DOWN };
        let horizontal = |d: i16| if d > 0 { RIGHT } else { LEFT };
        let open = |s: Square, dir: usize| self.open[dir] & s.bit() != 0;
        let beside = |dir: usize| shift(me.bit(), dir) == other.bit();
        match (df.abs(), dr.abs()) {
            (0, 1) | (1, 0) => {
                let dir = if df == 0 {
                    vertical(dr)
                } else {
                    horizontal(df)
                };
                if open(me, dir) {
                    Ok(())
                } else {
                    Err(MoveError::StepThroughWall)
                }
            }
            (0, 2) | (2, 0) => {
                let dir = if df == 0 {
                    vertical(dr)
                } else {
                    horizontal(df)
                };
                if !beside(dir) {
                    Err(MoveError::NotReachable)
                } else if open(me, dir) && open(other, dir) {
                    Ok(())
                } else {
                    Err(MoveError::JumpThroughWall)
                }
            }
            (1, 1) => {
                // Toward the other pawn (`toward`), then sideways beside it (`aside`).
                let (toward, aside) = if beside(vertical(dr)) {
                    (vertical(dr), horizontal(df))
                } else if beside(horizontal(df)) {
                    (horizontal(df), vertical(dr))
                } else {
                    return Err(MoveError::NotReachable);
                };
                if !open(me, toward) {
                    // Not face to face: any move past the other pawn, straight or diagonal,
                    // would cross the wall between the pawns (the vectors call it a jump).
                    Err(MoveError::JumpThroughWall)
                } else if open(other, toward) {
                    Err(MoveError::DiagonalWhenStraightPossible)
                } else if !open(other, aside) {
                    Err(MoveError::DiagonalThroughWall)
                } else {
                    Ok(())
                }
            }
            _ => Err(MoveError::NotReachable),
        }
    }

    fn check_ply_limit(&mut self) {
        if let (None, Some(limit)) = (self.outcome, self.rules.ply_limit) {
            if self.plies >= limit {
                self.outcome = Some(Outcome::draw(Reason::MoveLimit));
            }
        }
    }

    /// The position's image in the left-right mirror (files `a` <-> `i`): same side to move,
    /// plies, walls in hand and result; every pawn and wall mirrored. Quoridor's rules are
    /// symmetric under this mirror, so the legal moves of the image are the images of the legal
    /// moves (a property the tests check through perft).
    pub fn mirrored(&self) -> Position {
        let mut image = Position {
            pawns: [self.pawns[0].mirrored(), self.pawns[1].mirrored()],
            h_walls: 0,
            v_walls: 0,
            open: OPEN_START,
            posts: BORDER_POSTS,
            groups: START_GROUPS,
            ..self.clone()
        };
        for wall in self.walls() {
            image.add_wall(wall.mirrored());
        }
        image
    }
}

/// Shows what defines the position, without the masks derived from the walls.
impl fmt::Debug for Position {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let walls: Vec<String> = self.walls().map(|wall| wall.to_string()).collect();
        f.debug_struct("Position")
            .field("rules", &self.rules)
            .field(
                "pawns",
                &format_args!("[{}, {}]", self.pawns[0], self.pawns[1]),
            )
            .field("walls", &walls)
            .field("walls_left", &self.walls_left)
            .field("to_move", &self.to_move)
            .field("plies", &self.plies)
            .field("outcome", &self.outcome)
            .finish()
    }
}

/// Indices of the set bits of `bits`, lowest first.
fn bits64(mut bits: u64) -> impl Iterator<Item = u8> {
    std::iter::from_fn(move || {
        (bits != 0).then(|| {
            let i = bits.trailing_zeros() as u8;
            bits &= bits - 1;
            i
        })
    })
}

fn bits128(mut bits: u128) -> impl Iterator<Item = u8> {
    std::iter::from_fn(move || {
        (bits != 0).then(|| {
            let i = bits.trailing_zeros() as u8;
            bits &= bits - 1;
            i
        })
    })
}

impl Game for Position {
    type Move = Move;

    fn to_move(&self) -> Side {
        self.to_move
    }

    fn outcome(&self) -> Option<Outcome> {
        self.outcome
    }

    fn plies(&self) -> u32 {
        self.plies
    }

    fn parse_move(&self, text: &str) -> Result<Move, MoveError> {
        Move::parse(text)
    }

    /// Pawn destinations in square order, then horizontal walls by anchor, then vertical walls
    /// by anchor.
    fn legal_moves(&self, out: &mut Vec<Move>) {
        if self.outcome.is_some() {
            return;
        }
        let pawns = self.pawn_destinations();
        let (h, v) = self.legal_wall_masks();
        out.reserve((pawns.count_ones() + h.count_ones() + v.count_ones()) as usize);
        out.extend(bits128(pawns).map(|s| Move::Pawn(Square(s))));
        // Every anchor index below 64 names a wall on the board.
        let wall = |orientation| {
            move |i: u8| {
                Move::Wall(Wall {
                    anchor: Square(i / 8 * N + i % 8),
                    orientation,
                })
            }
        };
        out.extend(bits64(h).map(wall(Orientation::Horizontal)));
        out.extend(bits64(v).map(wall(Orientation::Vertical)));
    }

    fn count_legal_moves(&self) -> u64 {
        if self.outcome.is_some() {
            return 0;
        }
        let (h, v) = self.legal_wall_masks();
        u64::from(self.pawn_destinations().count_ones() + h.count_ones() + v.count_ones())
    }

    fn play(&mut self, mv: Move) -> Result<(), MoveError> {
        if self.outcome.is_some() {
            return Err(MoveError::GameOver);
        }
        let me = self.to_move;
        match mv {
            Move::Pawn(dest) => {
                self.check_pawn(dest)?;
                self.pawns[me.index()] = dest;
                if dest.rank() == goal_rank(me) {
                    self.outcome = Some(Outcome::win(me, Reason::Goal));
                }
            }
            Move::Wall(wall) => {
                self.check_wall(wall)?;
                self.add_wall(wall);
                self.walls_left[me.index()] -= 1;
            }
        }
        self.plies = self.plies.saturating_add(1);
        self.to_move = me.opponent();
        self.check_ply_limit();
        Ok(())
    }

    /// Ranks 9 (top) to 1, files a..i; `1` is the first mover's pawn (from e1), `2` the
    /// second's. Horizontal walls are `===`, vertical walls `|`; a `=` or `|` on a corner marks
    /// the middle of a wall, so two touching walls stay distinguishable.
    fn board_text(&self) -> String {
        let mut text = String::new();
        let files = "     a   b   c   d   e   f   g   h   i\n";
        text.push_str(files);
        text.push_str("   +---+---+---+---+---+---+---+---+---+\n");
        for rank in (0..N).rev() {
            text.push_str(&format!("{:>2} |", rank + 1));
            for file in 0..N {
                let square = Square(rank * N + file);
                let mark = if square == self.pawns[0] {
                    '1'
                } else if square == self.pawns[1] {
                    '2'
                } else {
                    '.'
                };
                text.push(' ');
                text.push(mark);
                text.push(' ');
                let wall = file == N - 1 || self.open[RIGHT] & square.bit() == 0;
                text.push(if wall { '|' } else { ' ' });
            }
            text.push_str(&format!(" {}\n", rank + 1));
            if rank == 0 {
                break;
            }
            // The grooves between this rank and the one below.
            text.push_str("   +");
            let below = rank - 1;
            for file in 0..N {
                let square = Square(below * N + file);
                let wall = self.open[UP] & square.bit() == 0;
                text.push_str(if wall { "===" } else { "   " });
                if file == N - 1 {
                    text.push('+');
                } else {
                    let anchor = 1u64 << (below * 8 + file);
                    text.push(if self.h_walls & anchor != 0 {
                        '='
                    } else if self.v_walls & anchor != 0 {
                        '|'
                    } else {
                        '+'
                    });
                }
            }
            text.push('\n');
        }
        text.push_str("   +---+---+---+---+---+---+---+---+---+\n");
        text.push_str(files);
        text.push_str(&format!(
            "walls left: 1 has {}, 2 has {}\n",
            self.walls_left[0], self.walls_left[1]
        ));
        match self.outcome {
            None => {
                let mover = if self.to_move == Side::First { 1 } else { 2 };
                text.push_str(&format!("{mover} to move (ply {})\n", self.plies + 1));
            }
            Some(outcome) => text.push_str(&format!(
                "game over: {} ({})\n",
                outcome.result(),
                outcome.reason
            )),
        }
        text
    }
}
