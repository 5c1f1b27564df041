//! Pente: a threat-space search for forced wins ([`threat_search`]), after Allis's for gomoku,
//! with Pente's captures.
//!
//! - A *four* is a move after which the mover wins at once unless stopped: a point that makes
//!   five or more in a row, or a capture whose pairs reach the capture target (the fifth pair).
//!   The defender's only useful replies are that point, the captures of a stone the win needs (a
//!   stone of the line, or the mover's stone at the far end of the pair), and a win of its own,
//!   which refutes the four. Every other reply loses at once, so a win by fours is proved
//!   against every legal reply.
//! - A *three* is a move after which the mover would win by fours if the opponent passed: open
//!   and split threes, capture threats, a four that sets up a three... The replies searched are
//!   derived, not looked up from patterns. The search board records every cell that the proof by
//!   fours after the pass reads. The replies are those cells, every capture, and every move that
//!   gives the defender a winning point of its own (its four, or a capture threat that would
//!   win). Any other move leaves that proof intact, so it loses too.
//! - Its board mirrors the rules of `hakem_games::pente` (the games crate judges; the tests
//!   check every win found against every legal reply with it), adds passes and undo, and keeps
//!   bit rows per line for fast scans. The opening rules are left out: the search starts from the
//!   fourth stone, and never where its stones could fill the board.
//! - Limits ([`ThreatLimits`]): threes and fours in a row, the threes tried per node (best first
//!   by the candidate score), a node budget and an optional deadline. Without a deadline the
//!   result depends only on the position and the limits.
//! - Not done: threats of a win by threes (a three must lead to fours), threes outside the
//!   candidates (points of windows with two or three of the mover's stones, captures and capture
//!   threats), a transposition table. `NotFound` says nothing about longer or quieter wins.

use std::time::Instant;

use hakem_games::pente::{Move, Point, Position};
use hakem_games::{Game, Side};

use super::{grid, point_value, DIRS, N};

const CELLS: usize = 361;
/// The 8 directions; `RAYS[a + 4]` is opposite to `RAYS[a]` and the first four are `DIRS`.
const RAYS: [(i32, i32); 8] = [
    (1, 0),
    (0, 1),
    (1, 1),
    (1, -1),
    (-1, 0),
    (0, -1),
    (-1, -1),
    (-1, 1),
];

/// The cell `k` steps from cell `i` towards `dir`, if on the board.
fn step(i: usize, (dc, dr): (i32, i32), k: i32) -> Option<usize> {
    let (col, row) = ((i % 19) as i32 + k * dc, (i / 19) as i32 + k * dr);
    ((0..N).contains(&col) && (0..N).contains(&row)).then_some((row * N + col) as usize)
}

/// Lines of the board per axis of `DIRS`, as bit rows: horizontal lines by row, vertical ones by
/// column, diagonals by `col - row + 18`, anti-diagonals by `col + row`. Bit k is column k (row k
/// on vertical lines), so neighbours on a line are neighbouring bits.
const LINES: usize = 37;

fn line_of(i: usize, axis: usize) -> (usize, usize) {
    let (col, row) = (i % 19, i / 19);
    match axis {
        0 => (row, col),
        1 => (col, row),
        2 => (col + 18 - row, col),
        _ => (col + row, col),
    }
}

fn cell_of(axis: usize, line: usize, pos: usize) -> usize {
    let (col, row) = match axis {
        0 => (pos, line),
        1 => (line, pos),
        2 => (pos, pos + 18 - line),
        _ => (pos, line - pos),
    };
    row * 19 + col
}

/// The bits of a line that are on the board.
fn on_board(axis: usize, line: usize) -> u32 {
    let (lo, hi) = match axis {
        0 | 1 if line < 19 => (0, 18),
        0 | 1 => return 0,
        _ => (line.saturating_sub(18), line.min(18)),
    };
    ((1 << (hi + 1)) - 1) & !((1 << lo) - 1)
}

/// A set of cells.
#[derive(Clone, Copy, Default)]
struct Cells([u64; 6]);

impl Cells {
    const ALL: Cells = Cells([u64::MAX; 6]);

    fn insert(&mut self, i: usize) {
        if let Some(word) = self.0.get_mut(i / 64) {
            *word |= 1 << (i % 64);
        }
    }

    fn add(&mut self, other: &Cells) {
        for (word, more) in self.0.iter_mut().zip(other.0) {
            *word |= more;
        }
    }

    fn list(&self) -> impl Iterator<Item = usize> + '_ {
        self.0
            .iter()
            .enumerate()
            .flat_map(|(w, &word)| {
                std::iter::successors(Some(word), |&rest| Some(rest & rest.wrapping_sub(1)))
                    .take_while(|&rest| rest != 0)
                    .map(move |rest| w * 64 + rest.trailing_zeros() as usize)
            })
            .filter(|&i| i < CELLS)
    }
}

/// A move (or a pass) of the threat search, kept to undo it.
struct Change {
    mover: u8,
    cell: Option<usize>,
    removed: [usize; 16],
    count: usize,
}

impl Change {
    fn cells(&self) -> impl Iterator<Item = usize> + '_ {
        self.cell
            .into_iter()
            .chain(self.removed[..self.count].iter().copied())
    }
}

/// The board of the threat search: the rules of `hakem_games::pente` (custodial captures of
/// exactly two, five or more in a row, the capture target) with passes and undo. The opening
/// rules do not apply: the search starts from the fourth stone on. Functions that take `seen`
/// record in it every cell they read, so that a proof can tell which cells it depends on.
struct Board {
    cells: [u8; CELLS],
    /// The stones of each colour (index 1 and 2) on the lines.
    lines: [[[u32; LINES]; 4]; 3],
    captures: [u16; 3],
    target: u16,
    to_move: u8,
    history: Vec<Change>,
}

/// Where a search for fours starts: the defender's winning points then. Only lines and captures
/// through the cells changed since (`history[len..]`) can have made new ones.
struct Root {
    len: usize,
    captures: [u16; 3],
    wins: Vec<usize>,
}

impl Board {
    fn new(p: &Position) -> Board {
        let count = |side| p.captures(side);
        let mut board = Board {
            cells: [0; CELLS],
            lines: [[[0; LINES]; 4]; 3],
            captures: [0, count(Side::First), count(Side::Second)],
            target: u16::from(p.rules().captures_to_win),
            to_move: if p.to_move() == Side::First { 1 } else { 2 },
            history: Vec::new(),
        };
        for (i, v) in grid(p).into_iter().enumerate() {
            board.set(i, v);
        }
        board
    }

    fn set(&mut self, i: usize, v: u8) {
        for axis in 0..4 {
            let (line, pos) = line_of(i, axis);
            for colour in 1..=2 {
                let bits = &mut self.lines[colour][axis][line];
                *bits = (*bits & !(1 << pos)) | (u32::from(v == colour as u8) << pos);
            }
        }
        self.cells[i] = v;
    }

    /// Calls `f(axis, line, empty points, stones of who, stones of the other)` for every line.
    fn each_line(&self, who: u8, mut f: impl FnMut(usize, usize, u32, u32, u32)) {
        let (me, other) = (usize::from(who), usize::from(3 - who));
        for axis in 0..4 {
            for line in 0..LINES {
                let (own, theirs) = (self.lines[me][axis][line], self.lines[other][axis][line]);
                let empty = on_board(axis, line) & !own & !theirs;
                if empty != 0 {
                    f(axis, line, empty, own, theirs);
                }
            }
        }
    }

    /// Marks the points of `bits` on a line.
    fn mark_bits(marks: &mut Cells, axis: usize, line: usize, mut bits: u32) {
        while bits != 0 {
            marks.insert(cell_of(axis, line, bits.trailing_zeros() as usize));
            bits &= bits - 1;
        }
    }

    /// The points where `who` captures (closing `who`, other, other, here on a line) and those
    /// where it would threaten to (here, other, other, empty).
    fn capture_points(&self, who: u8) -> (Cells, Cells) {
        let (mut captures, mut threats) = (Cells::default(), Cells::default());
        self.each_line(who, |axis, line, empty, own, other| {
            let up = (other << 1) & (other << 2);
            let down = (other >> 1) & (other >> 2);
            let closing = empty & ((up & (own << 3)) | (down & (own >> 3)));
            let opening = empty & ((up & (empty << 3)) | (down & (empty >> 3)));
            Board::mark_bits(&mut captures, axis, line, closing);
            Board::mark_bits(&mut threats, axis, line, opening);
        });
        (captures, threats)
    }

    fn get(&self, i: usize, seen: &mut Cells) -> u8 {
        seen.insert(i);
        self.cells[i]
    }

    fn get_at(&self, i: usize, dir: (i32, i32), k: i32, seen: &mut Cells) -> Option<u8> {
        step(i, dir, k).map(|j| self.get(j, seen))
    }

    /// Stones of `who` in a row from `i` (excluded) towards `dir`, up to 4.
    fn run(&self, who: u8, i: usize, dir: (i32, i32), seen: &mut Cells) -> i32 {
        (1..=4)
            .take_while(|&k| self.get_at(i, dir, k, seen) == Some(who))
            .count() as i32
    }

    /// The axis along which a stone of `who` at `i` is in five or more in a row.
    fn five_axis(&self, who: u8, i: usize, seen: &mut Cells) -> Option<usize> {
        (0..4).find(|&a| self.run(who, i, RAYS[a], seen) + self.run(who, i, RAYS[a + 4], seen) >= 4)
    }

    /// The directions (bits over `RAYS`) in which a stone of `who` at `i` captures a pair.
    fn capture_mask(&self, who: u8, i: usize, seen: &mut Cells) -> u8 {
        let other = 3 - who;
        let mut mask = 0;
        for (k, &dir) in RAYS.iter().enumerate() {
            if self.get_at(i, dir, 1, seen) == Some(other)
                && self.get_at(i, dir, 2, seen) == Some(other)
                && self.get_at(i, dir, 3, seen) == Some(who)
            {
                mask |= 1 << k;
            }
        }
        mask
    }

    fn capture_wins(&self, who: u8, mask: u8) -> bool {
        mask != 0 && self.captures[usize::from(who)] + 2 * mask.count_ones() as u16 >= self.target
    }

    /// Whether `who` placing a stone at `i` wins at once.
    fn wins_at(&self, who: u8, i: usize, seen: &mut Cells) -> bool {
        self.get(i, seen) == 0
            && (self.five_axis(who, i, seen).is_some()
                || self.capture_wins(who, self.capture_mask(who, i, seen)))
    }

    /// Plays the side to move at the empty cell `i`; whether that wins.
    fn play(&mut self, i: usize, seen: &mut Cells) -> bool {
        let me = self.to_move;
        seen.insert(i);
        let mask = self.capture_mask(me, i, seen);
        let mut change = Change {
            mover: me,
            cell: Some(i),
            removed: [0; 16],
            count: 0,
        };
        for (k, &dir) in RAYS.iter().enumerate() {
            if mask & (1 << k) != 0 {
                for j in [1, 2].into_iter().filter_map(|s| step(i, dir, s)) {
                    self.set(j, 0);
                    change.removed[change.count] = j;
                    change.count += 1;
                }
            }
        }
        self.set(i, me);
        self.captures[usize::from(me)] += change.count as u16;
        self.to_move = 3 - me;
        self.history.push(change);
        self.five_axis(me, i, seen).is_some() || self.captures[usize::from(me)] >= self.target
    }

    fn pass(&mut self) {
        self.history.push(Change {
            mover: self.to_move,
            cell: None,
            removed: [0; 16],
            count: 0,
        });
        self.to_move = 3 - self.to_move;
    }

    fn undo(&mut self) {
        if let Some(change) = self.history.pop() {
            let mover = change.mover;
            for &j in &change.removed[..change.count] {
                self.set(j, 3 - mover);
            }
            if let Some(i) = change.cell {
                self.set(i, 0);
            }
            self.captures[usize::from(mover)] -= change.count as u16;
            self.to_move = mover;
        }
    }

    fn changed(&self, from: usize) -> impl Iterator<Item = usize> + '_ {
        self.history
            .get(from..)
            .unwrap_or(&[])
            .iter()
            .flat_map(Change::cells)
    }

    /// Every point where `who` wins at once: five in a row, or a capture that reaches the target.
    fn win_points(&self, who: u8) -> Vec<usize> {
        let mut marks = Cells::default();
        self.each_line(who, |axis, line, empty, own, _| {
            // left[k]: the k points before are stones of `who`; right[k]: the k after.
            let (mut left, mut right) = ([u32::MAX; 5], [u32::MAX; 5]);
            for k in 1..5 {
                left[k] = left[k - 1] & (own << k);
                right[k] = right[k - 1] & (own >> k);
            }
            let five = (0..5).fold(0, |acc, k| acc | (left[k] & right[4 - k]));
            Board::mark_bits(&mut marks, axis, line, empty & five);
        });
        for i in self.capture_points(who).0.list() {
            if self.capture_wins(who, self.capture_mask(who, i, &mut Cells::default())) {
                marks.insert(i);
            }
        }
        marks.list().collect()
    }

    /// The points where `who` wins at once by a line or a capture through cell `c`, into `out`.
    fn wins_through(&self, who: u8, c: usize, seen: &mut Cells, out: &mut Vec<usize>) {
        for dir in DIRS {
            for start in -4..=0 {
                let (mut stones, mut empty) = (0, None);
                for k in start..start + 5 {
                    match self.get_at(c, dir, k, seen) {
                        Some(0) if empty.is_none() => empty = step(c, dir, k),
                        Some(v) if v == who => stones += 1,
                        _ => break,
                    }
                }
                if stones == 4 {
                    out.extend(empty);
                }
            }
        }
        let pattern = [who, 3 - who, 3 - who, 0];
        for dir in RAYS {
            for back in 0..4 {
                let matches = (0..4)
                    .all(|k| self.get_at(c, dir, k - back, seen) == Some(pattern[k as usize]));
                if let Some(landing) = step(c, dir, 3 - back).filter(|_| matches) {
                    if self.capture_wins(who, self.capture_mask(who, landing, seen)) {
                        out.push(landing);
                    }
                }
            }
        }
    }

    /// The points where `who` wins at once that are new since `history[from]`: through a cell
    /// changed since (anywhere, once `who` has captured since, or with no change yet).
    fn win_points_since(&self, who: u8, from: usize) -> Vec<usize> {
        let since = self.history.get(from..).unwrap_or(&[]);
        if since.is_empty() || since.iter().any(|c| c.mover == who && c.count > 0) {
            return self.win_points(who);
        }
        let mut out = Vec::new();
        for c in self.changed(from) {
            self.wins_through(who, c, &mut Cells::default(), &mut out);
        }
        out.sort_unstable();
        out.dedup();
        out
    }

    fn root(&self) -> Root {
        Root {
            len: self.history.len(),
            captures: self.captures,
            wins: self.win_points(3 - self.to_move),
        }
    }

    /// Whether `who` has a winning move, knowing its winning points at `root`: those are checked
    /// again, and new ones can only be in a line or capture through a cell changed since (or
    /// anywhere, once `who` has captured since).
    fn can_win(&self, who: u8, root: &Root, seen: &mut Cells) -> bool {
        if root.wins.iter().any(|&i| self.wins_at(who, i, seen)) {
            return true;
        }
        if self.captures[usize::from(who)] != root.captures[usize::from(who)] {
            *seen = Cells::ALL;
            return !self.win_points(who).is_empty();
        }
        let mut found = Vec::new();
        self.changed(root.len).any(|c| {
            self.wins_through(who, c, seen, &mut found);
            !found.is_empty()
        })
    }

    /// The moves of the other side that may stop `who` winning at `w`: `w` itself and the
    /// captures of a stone that win needs (any other move leaves it). None if `who` does not win
    /// at `w`.
    fn answers(&self, who: u8, w: usize, seen: &mut Cells) -> Option<Vec<usize>> {
        if self.get(w, seen) != 0 {
            return None;
        }
        let needed: Vec<usize> = if let Some(axis) = self.five_axis(who, w, seen) {
            [RAYS[axis], RAYS[axis + 4]]
                .into_iter()
                .flat_map(|dir| {
                    let n = self.run(who, w, dir, seen);
                    (1..=n).filter_map(move |k| step(w, dir, k))
                })
                .collect()
        } else {
            let mask = self.capture_mask(who, w, seen);
            if !self.capture_wins(who, mask) {
                return None;
            }
            (0..8)
                .filter(|k| mask & (1 << k) != 0)
                .filter_map(|k| step(w, RAYS[k], 3))
                .collect()
        };
        let other = 3 - who;
        let mut out = vec![w];
        for s in needed {
            for dir in RAYS {
                if self.get_at(s, dir, 1, seen) != Some(who) {
                    continue;
                }
                let ends = [(-1, 2), (2, -1)];
                for (anchor, landing) in ends {
                    if self.get_at(s, dir, anchor, seen) == Some(other)
                        && self.get_at(s, dir, landing, seen) == Some(0)
                    {
                        out.extend(step(s, dir, landing));
                    }
                }
            }
        }
        out.sort_unstable();
        out.dedup();
        Some(out)
    }

    /// Marks the empty points of the windows of five holding `stones` stones of `who` and none
    /// of the other side.
    fn mark_windows(&self, who: u8, stones: u32, marks: &mut Cells) {
        self.each_line(who, |axis, line, empty, own, _| {
            for start in 0..15 {
                let window = 0b11111 << start;
                if (own | empty) & window == window && (own & window).count_ones() == stones {
                    Board::mark_bits(marks, axis, line, empty & window);
                }
            }
        });
    }

    /// Marks where `who` captures and, with `threats`, where it would threaten to: every such
    /// point, or (`only_winning`) those after which a capture would win.
    fn mark_captures(&mut self, who: u8, threats: bool, only_winning: bool, marks: &mut Cells) {
        let (captures, threat_points) = self.capture_points(who);
        marks.add(&captures);
        if !threats {
            return;
        }
        for end in threat_points.list() {
            let wins = !only_winning || {
                self.cells[end] = who;
                let wins = RAYS
                    .iter()
                    .filter_map(|&dir| step(end, dir, 3))
                    .any(|landing| {
                        self.cells[landing] == 0
                            && self.capture_wins(
                                who,
                                self.capture_mask(who, landing, &mut Cells::default()),
                            )
                    });
                self.cells[end] = 0;
                wins
            };
            if wins {
                marks.insert(end);
            }
        }
    }
}

/// Limits of [`threat_search`].
#[derive(Clone, Copy, Debug)]
pub struct ThreatLimits {
    /// Threes (moves that would win by fours if the opponent passed) before the fours, at most.
    pub threes: u32,
    /// Fours (moves that threaten to win at once) in a row, at most.
    pub fours: u32,
    /// Candidate threes tried at each attacking node, best first by the move ordering.
    pub width: usize,
    /// Moves played in the search, at most.
    pub nodes: u64,
    /// Give up at this time; without one the result depends only on the position and limits.
    pub deadline: Option<Instant>,
}

/// What [`threat_search`] found for the side to move.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Threats {
    /// This move wins against every reply the rules allow.
    Win(Move),
    /// No win by threats within the limits (a longer or quieter one may exist).
    NotFound,
    /// The node budget or the deadline ran out first.
    OutOfBudget,
}

struct Tss {
    board: Board,
    limits: ThreatLimits,
    nodes: u64,
    stopped: bool,
}

impl Tss {
    fn new(p: &Position, limits: ThreatLimits) -> Tss {
        Tss {
            board: Board::new(p),
            limits,
            nodes: 0,
            stopped: false,
        }
    }

    fn play(&mut self, i: usize, seen: &mut Cells) -> bool {
        self.nodes += 1;
        if self.nodes >= self.limits.nodes
            || (self.nodes % 128 == 0 && self.limits.deadline.is_some_and(|d| Instant::now() >= d))
        {
            self.stopped = true;
        }
        self.board.play(i, seen)
    }

    /// A win for the side to move by moves that each threaten to win at once, at most `depth`
    /// of them before the winning move: that first move and the cells the proof read.
    fn fours(&mut self, root: &Root, depth: u32) -> Option<(usize, Cells)> {
        let me = self.board.to_move;
        for w in self.board.win_points_since(me, root.len) {
            let mut seen = Cells::default();
            let won = self.play(w, &mut seen);
            self.board.undo();
            if won {
                return Some((w, seen));
            }
        }
        if depth == 0 || self.stopped {
            return None;
        }
        let mut marks = Cells::default();
        self.board.mark_windows(me, 3, &mut marks);
        self.board.mark_captures(me, true, true, &mut marks);
        // Moves that make the most winning points first (two are usually decisive).
        let mut threats = Vec::new();
        for a in marks.list() {
            let mut seen = Cells::default();
            if self.play(a, &mut seen) {
                self.board.undo();
                return Some((a, seen));
            }
            let last = self.board.history.len() - 1;
            let points = self.board.win_points_since(me, last).len();
            self.board.undo();
            if points > 0 {
                threats.push((std::cmp::Reverse(points), a));
            }
        }
        threats.sort_unstable();
        for (_, a) in threats {
            let mut seen = Cells::default();
            self.play(a, &mut seen);
            let held = self.forced(root, depth, &mut seen);
            self.board.undo();
            if held {
                return Some((a, seen));
            }
            if self.stopped {
                break;
            }
        }
        None
    }

    /// After a move that threatens to win at once, with the defender to move: whether every
    /// reply loses to fours (`depth - 1` more at most). Adds to `seen` what that depends on.
    fn forced(&mut self, root: &Root, depth: u32, seen: &mut Cells) -> bool {
        let me = self.board.to_move;
        let attacker = 3 - me;
        if self.board.can_win(me, root, seen) {
            return false;
        }
        // The winning point with the fewest answers; any other reply loses to it at once.
        let last = self.board.history.len() - 1;
        let best = self
            .board
            .win_points_since(attacker, last)
            .into_iter()
            .filter_map(|w| {
                let answers = self.board.answers(attacker, w, &mut Cells::default())?;
                Some((answers.len(), w))
            })
            .min();
        let Some((_, w)) = best else {
            return false;
        };
        let Some(replies) = self.board.answers(attacker, w, seen) else {
            return false;
        };
        for r in replies {
            let mut read = Cells::default();
            let lost = self.play(r, &mut read);
            let next = if lost {
                None
            } else {
                self.fours(root, depth - 1)
            };
            self.board.undo();
            let Some((_, proof)) = next else {
                return false;
            };
            seen.add(&read);
            seen.add(&proof);
        }
        true
    }

    /// A win for the side to move by threes (at most `threes` of them) and fours.
    fn attack(&mut self, threes: u32) -> Option<usize> {
        let root = self.board.root();
        if let Some((mv, _)) = self.fours(&root, self.limits.fours) {
            return Some(mv);
        }
        if threes == 0 || self.stopped {
            return None;
        }
        let me = self.board.to_move;
        let mut marks = Cells::default();
        self.board.mark_windows(me, 2, &mut marks);
        self.board.mark_windows(me, 3, &mut marks);
        self.board.mark_captures(me, true, false, &mut marks);
        for t in self.ranked(marks, me, self.limits.width) {
            let won = self.play(t, &mut Cells::default());
            let held = won || self.holds(threes);
            self.board.undo();
            if held {
                return Some(t);
            }
            if self.stopped {
                break;
            }
        }
        None
    }

    /// After a three, with the defender to move: whether every reply loses to threats.
    fn holds(&mut self, threes: u32) -> bool {
        if !self.board.win_points(self.board.to_move).is_empty() {
            return false;
        }
        let Some(replies) = self.refutations() else {
            return false;
        };
        for d in replies {
            let lost = self.play(d, &mut Cells::default());
            let held = !lost && self.attack(threes - 1).is_some();
            self.board.undo();
            if !held {
                return false;
            }
        }
        true
    }

    /// If the side not to move would win by fours after a pass, the moves of the side to move
    /// that may stop it, most promising first; None when there is no such threat.
    ///
    /// Any other move leaves that proof intact: it is not on a cell the proof read, it captures
    /// nothing, and it gives the side to move no winning point of its own (the proof knows the
    /// defender's winning points at its start).
    fn refutations(&mut self) -> Option<Vec<usize>> {
        let me = self.board.to_move;
        self.board.pass();
        let root = self.board.root();
        let proof = self.fours(&root, self.limits.fours);
        self.board.undo();
        let (_, mut marks) = proof?;
        self.board.mark_captures(me, true, true, &mut marks);
        self.board.mark_windows(me, 3, &mut marks);
        Some(self.ranked(marks, me, CELLS))
    }

    /// The empty cells of `marks`, best first for `who` by the candidates' attack and defence
    /// value, at most `limit`.
    fn ranked(&self, marks: Cells, who: u8, limit: usize) -> Vec<usize> {
        let g = &self.board.cells;
        let mut list: Vec<(std::cmp::Reverse<i32>, usize)> = marks
            .list()
            .filter(|&i| g[i] == 0)
            .map(|i| {
                let (col, row) = ((i % 19) as i32, (i / 19) as i32);
                let value =
                    point_value(g, col, row, who) + point_value(g, col, row, 3 - who) * 9 / 10;
                (std::cmp::Reverse(value), i)
            })
            .collect();
        list.sort_unstable();
        list.into_iter().take(limit).map(|c| c.1).collect()
    }
}

/// Whether the threat search applies: its board leaves out the opening rules (the centre, the
/// tournament rule) and the draw of a full board, which the stones it may add (two per three or
/// four, and the winning one) must not reach.
fn searchable(p: &Position, limits: &ThreatLimits) -> bool {
    let added = 2 * (u64::from(limits.threes) + u64::from(limits.fours)) + 1;
    p.outcome().is_none() && p.plies() >= 3 && u64::from(p.stone_count()) + added < CELLS as u64
}

/// If the opponent of the side to move would win by fours were it to move now, the moves that may
/// stop it, best first; None when it would not (or the budget ran out).
pub(super) fn threat_answers(p: &Position, limits: ThreatLimits) -> Option<Vec<Move>> {
    if !searchable(p, &limits) {
        return None;
    }
    let cells = Tss::new(p, limits).refutations()?;
    let moves = cells.into_iter().filter_map(Point::from_index).map(Move);
    Some(moves.filter(|&m| p.check(m).is_ok()).collect())
}

/// Searches for a win of the side to move by threats: fours (moves after which it wins at once
/// unless stopped: a line of five to complete, or a capture that reaches the target), threes
/// (moves after which it would win by fours if the opponent passed) and the moves that answer
/// them. A win it reports is a forced win under the rules; see the module documentation.
pub fn threat_search(p: &Position, limits: ThreatLimits) -> Threats {
    if !searchable(p, &limits) {
        return Threats::NotFound;
    }
    let mut tss = Tss::new(p, limits);
    for threes in 0..=limits.threes {
        if let Some(i) = tss.attack(threes) {
            return Point::from_index(i).map_or(Threats::NotFound, |pt| Threats::Win(Move(pt)));
        }
        if tss.stopped {
            return Threats::OutOfBudget;
        }
    }
    Threats::NotFound
}
