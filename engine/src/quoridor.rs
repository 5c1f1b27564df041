//! Quoridor: alpha-beta over the race of shortest paths.
//!
//! The score of a position is the difference of the two pawns' BFS distances to their goals,
//! with walls in hand and the move counted. Walls are tried only where they can matter: on or
//! beside the first steps of the opponent's shortest path, and around the opponent's pawn.
//!
//! Levels: a wall in hand is worth 0.4 of a step at levels 1-3, 0.8 at level 4 and 1.2 at
//! level 5 (measured: keeping walls for when they lengthen the opponent's path most wins
//! races); the depth grows from 1 to 4 plies, and levels 2, 3 and 4 play the second-best root
//! move (when it is at most two steps worse and not lost) 30%, 15% and 8% of the time.

use std::time::{Duration, Instant};

use hakem_games::quoridor::{Move, Orientation, Position, Square, Wall};
use hakem_games::{Game, Side};

use crate::Rng;

const WIN: i32 = 100_000;
/// Moves searched at the root (best first by the one-ply score).
const ROOT_WIDTH: usize = 16;
/// Moves searched at each inner node.
const INNER_WIDTH: usize = 10;
/// How much worse (in tenths of a step) a second-best move a lower level may play can be.
const NOISE_MARGIN: i32 = 20;
/// The value of a wall in hand (in tenths of a step).
const WALL_VALUE: i32 = 4;
const WALL_VALUE_4: i32 = 8;
const WALL_VALUE_5: i32 = 12;

/// The score of `p` for the side to move.
fn evaluate(p: &Position, wall_value: i32) -> i32 {
    if let Some(outcome) = p.outcome() {
        return match outcome.winner {
            Some(side) if side == p.to_move() => WIN,
            Some(_) => -WIN,
            None => 0,
        };
    }
    let me = p.to_move();
    let opp = me.opponent();
    let d_me = i32::from(p.distance_to_goal(me).unwrap_or(100));
    let d_opp = i32::from(p.distance_to_goal(opp).unwrap_or(100));
    let walls = i32::from(p.walls_left(me)) - i32::from(p.walls_left(opp));
    // Being on move is worth about half a step in a pure race.
    10 * (d_opp - d_me) + wall_value * walls + 5
}

/// The squares of one shortest path of `side`'s pawn, from the pawn, at most `len` squares.
fn shortest_path(p: &Position, side: Side, len: usize) -> Vec<Square> {
    let map = p.distance_map(side);
    let mut path = vec![p.pawn(side)];
    let mut at = p.pawn(side);
    while path.len() < len {
        let d = map[usize::from(at.index())];
        if d == 0 || d == u8::MAX {
            break;
        }
        let next = neighbours(at)
            .into_iter()
            .flatten()
            .find(|&n| map[usize::from(n.index())].checked_add(1) == Some(d) && p.is_open(at, n));
        match next {
            Some(n) => {
                path.push(n);
                at = n;
            }
            None => break,
        }
    }
    path
}

fn neighbours(s: Square) -> [Option<Square>; 4] {
    let (f, r) = (s.file(), s.rank());
    [
        Square::new(f, r + 1),
        r.checked_sub(1).and_then(|r| Square::new(f, r)),
        Square::new(f + 1, r),
        f.checked_sub(1).and_then(|f| Square::new(f, r)),
    ]
}

/// Legal walls that touch the first steps of the opponent's shortest path or its pawn.
fn wall_candidates(p: &Position, out: &mut Vec<Move>) {
    let (legal_h, legal_v) = p.legal_wall_masks();
    if legal_h | legal_v == 0 {
        return;
    }
    let opp = p.to_move().opponent();
    let mut near_h = 0u64;
    let mut near_v = 0u64;
    for s in shortest_path(p, opp, 6) {
        let (f, r) = (i32::from(s.file()), i32::from(s.rank()));
        // Anchors of the walls that touch square (f, r) on any side.
        for df in -1..=0 {
            for dr in -1..=0 {
                let (af, ar) = (f + df, r + dr);
                if (0..8).contains(&af) && (0..8).contains(&ar) {
                    let bit = 1u64 << (ar * 8 + af);
                    near_h |= bit;
                    near_v |= bit;
                }
            }
        }
    }
    for (mask, orientation) in [
        (near_h & legal_h, Orientation::Horizontal),
        (near_v & legal_v, Orientation::Vertical),
    ] {
        let mut rest = mask;
        while rest != 0 {
            let i = rest.trailing_zeros() as u8;
            rest &= rest - 1;
            if let Some(wall) = Wall::from_anchor_index(i, orientation) {
                out.push(Move::Wall(wall));
            }
        }
    }
}

fn pawn_moves(p: &Position, out: &mut Vec<Move>) {
    let mut dests = p.pawn_destinations();
    while dests != 0 {
        let i = dests.trailing_zeros() as u8;
        dests &= dests - 1;
        if let Some(s) = Square::from_index(i) {
            out.push(Move::Pawn(s));
        }
    }
}

/// Candidate moves with their one-ply scores (for the mover), best first. Walls that do not
/// lengthen the opponent's path more than the mover's are dropped.
fn candidates(p: &Position, wall_value: i32) -> Vec<(i32, Move, Position)> {
    let mut moves = Vec::new();
    pawn_moves(p, &mut moves);
    wall_candidates(p, &mut moves);
    let me = p.to_move();
    let opp = me.opponent();
    let base_opp = i32::from(p.distance_to_goal(opp).unwrap_or(100));
    let base_me = i32::from(p.distance_to_goal(me).unwrap_or(100));
    let mut scored = Vec::with_capacity(moves.len());
    for mv in moves {
        let mut child = p.clone();
        if child.play(mv).is_err() {
            continue;
        }
        if child.outcome().is_some() {
            scored.push((-evaluate(&child, wall_value), mv, child));
            continue;
        }
        // The same score as `evaluate` from the mover's side, with the distances computed once
        // (a pawn move leaves the opponent's distance as it was).
        let d_me = i32::from(child.distance_to_goal(me).unwrap_or(100));
        let d_opp = match mv {
            Move::Pawn(_) => base_opp,
            Move::Wall(_) => {
                let d_opp = i32::from(child.distance_to_goal(opp).unwrap_or(100));
                // A wall must lengthen the opponent's path more than the mover's.
                if d_opp - base_opp <= d_me - base_me {
                    continue;
                }
                d_opp
            }
        };
        let walls = i32::from(child.walls_left(me)) - i32::from(child.walls_left(opp));
        scored.push((10 * (d_opp - d_me) + wall_value * walls - 5, mv, child));
    }
    scored.sort_by_key(|c| std::cmp::Reverse(c.0));
    scored
}

/// The `width` best candidates, plus every pawn move (a race can hinge on any of them).
fn narrowed(list: Vec<(i32, Move, Position)>, width: usize) -> Vec<(i32, Move, Position)> {
    list.into_iter()
        .enumerate()
        .filter(|(i, c)| *i < width || matches!(c.1, Move::Pawn(_)))
        .map(|(_, c)| c)
        .collect()
}

struct Ctx {
    deadline: Instant,
    stopped: bool,
    nodes: u64,
    wall_value: i32,
}

fn negamax(p: &Position, depth: u32, mut alpha: i32, beta: i32, ctx: &mut Ctx) -> i32 {
    ctx.nodes += 1;
    if ctx.nodes % 256 == 0 && Instant::now() >= ctx.deadline {
        ctx.stopped = true;
    }
    if depth == 0 || p.outcome().is_some() || ctx.stopped {
        return evaluate(p, ctx.wall_value);
    }
    let mut best = -WIN - 1;
    // Inside the tree only the most promising few moves by the one-ply score: the walls that
    // matter most lengthen the opponent's path the most.
    for (_, _, child) in narrowed(candidates(p, ctx.wall_value), INNER_WIDTH) {
        let v = -negamax(&child, depth - 1, -beta, -alpha, ctx);
        if v > best {
            best = v;
        }
        alpha = alpha.max(v);
        if alpha >= beta || ctx.stopped {
            break;
        }
    }
    if best == -WIN - 1 {
        evaluate(p, ctx.wall_value)
    } else {
        best
    }
}

/// The best move one ply deep (ties at random).
pub fn greedy_move(p: &Position, seed: u64) -> Option<Move> {
    let list = candidates(p, WALL_VALUE);
    let top = list.first()?.0;
    let ties: Vec<_> = list.iter().filter(|c| c.0 == top).collect();
    let mut rng = Rng::new(seed);
    ties.get(rng.below(ties.len())).map(|c| c.1)
}

/// The move of the search at `level` (1..5) within `budget`.
pub fn search_move(p: &Position, level: u8, budget: Duration, seed: u64) -> Option<Move> {
    if p.outcome().is_some() {
        return None;
    }
    let mut rng = Rng::new(seed);
    // Levels trade strength for time: a better evaluation (walls in hand
    // valued higher at levels 4 and 5), deeper search, a longer time cap and a smaller chance of
    // settling for the second-best move as the level grows.
    let (max_depth, cap_ms, noise_percent, wall_value) = match level {
        0 | 1 => (1, 100, 0, WALL_VALUE),
        2 => (1, 100, 30, WALL_VALUE),
        3 => (2, 300, 15, WALL_VALUE),
        4 => (3, 1_000, 8, WALL_VALUE_4),
        _ => (4, 3_000, 0, WALL_VALUE_5),
    };
    let list = candidates(p, wall_value);
    if list.is_empty() {
        return None;
    }
    if level <= 1 {
        // Level 1: about two moves in three a random candidate move, else one ply.
        if rng.below(100) < 65 {
            return list.get(rng.below(list.len())).map(|c| c.1);
        }
        return greedy_move(p, seed);
    }
    let cap = Duration::from_millis(cap_ms);
    let mut ctx = Ctx {
        deadline: Instant::now() + budget.min(cap),
        stopped: false,
        nodes: 0,
        wall_value,
    };
    let noisy = noise_percent > 0 && rng.below(100) < noise_percent;
    let mut best = list[0].1;
    let mut second = None;
    let list = narrowed(list, ROOT_WIDTH);
    for depth in 1..=max_depth {
        let mut alpha = -WIN - 1;
        let mut values = Vec::with_capacity(list.len());
        for (_, mv, child) in &list {
            // A noisy move needs the exact value of every root move, not only the best one.
            let bound = if noisy { -WIN - 1 } else { alpha };
            let v = -negamax(child, depth - 1, -WIN - 1, -bound, &mut ctx);
            if ctx.stopped {
                break;
            }
            alpha = alpha.max(v);
            values.push((v, *mv));
        }
        if ctx.stopped {
            break;
        }
        // Stable: equal values keep the move ordering.
        values.sort_by_key(|c| std::cmp::Reverse(c.0));
        if let Some(&(top, mv)) = values.first() {
            best = mv;
            // The second-best move, when it is neither lost nor much worse than the best.
            second = values
                .get(1)
                .filter(|c| c.0 > -WIN + 100 && c.0 >= top - NOISE_MARGIN)
                .map(|c| c.1);
            if top >= WIN - 100 {
                second = None;
                break;
            }
        }
    }
    if noisy {
        if let Some(mv) = second {
            return Some(mv);
        }
    }
    Some(best)
}
