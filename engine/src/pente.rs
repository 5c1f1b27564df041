//! Pente: a threat-space search for forced wins, then alpha-beta over candidate points near the
//! stones.
//!
//! Every five-point window of the board that holds stones of one colour only is a potential
//! five; its weight grows steeply with its stones, so fours and open threes (which lie in
//! several such windows) dominate the score, and captures count by the pairs taken. Candidate
//! moves are the empty points within two of a stone, ranked by what they make for the mover
//! (attack) and what they take from the opponent (defence, i.e. blocks), plus captures.
//!
//! A threat-space search for forced wins ([`threats`]) comes first from level 3 on.
//!
//! Levels: the depth grows from 1 to 4 plies; level 5 searches fewer moves inside the tree (6)
//! so that it reaches a ply deeper within the same time; the root moves are reordered by the
//! previous iteration's values; levels 2, 3 and 4 play the second-best root move (when it is
//! not lost and within `NOISE_MARGIN`) 25%, 55% and 40% of the time. From level 3 on, a threat
//! search comes first: a four and its win at level 3, one three and up to 4 and 6 fours at levels
//! 4 and 5 (2 000, 10 000 and 40 000 nodes). Levels 4 and 5 also defend against wins by up to 1
//! and 6 fours. Facing one, they search only the moves that may stop it. They drop root moves
//! after which the opponent has one, unless every move leaves one. Each threat search gets at
//! most a quarter of the level's time.

use std::time::{Duration, Instant};

use hakem_games::pente::{Move, Point, Position, SIZE};
use hakem_games::{Game, Side};

use crate::Rng;

mod threats;

use threats::threat_answers;
pub use threats::{threat_search, ThreatLimits, Threats};

const N: i32 = SIZE as i32;
const WIN: i32 = 10_000_000;
/// Weight of a window holding 0..5 stones of one colour only.
const WINDOW: [i32; 6] = [0, 1, 12, 150, 2_000, 100_000];
const DIRS: [(i32, i32); 4] = [(1, 0), (0, 1), (1, 1), (1, -1)];
/// How much worse than the best a second-best move a lower level may play can be.
const NOISE_MARGIN: i32 = 400;

/// The board as cells: 0 empty, 1 first mover, 2 second mover.
fn grid(p: &Position) -> [u8; 361] {
    let mut g = [0u8; 361];
    for (side, value) in [(Side::First, 1u8), (Side::Second, 2u8)] {
        for (row, bits) in p.bit_rows(side).iter().enumerate() {
            let mut rest = *bits;
            while rest != 0 {
                let col = rest.trailing_zeros() as usize;
                rest &= rest - 1;
                if col < 19 {
                    g[row * 19 + col] = value;
                }
            }
        }
    }
    g
}

fn at(g: &[u8; 361], col: i32, row: i32) -> Option<u8> {
    if (0..N).contains(&col) && (0..N).contains(&row) {
        Some(g[(row * N + col) as usize])
    } else {
        None
    }
}

/// Captures are worth more as they near the ten that win.
fn capture_score(stones: u16) -> i32 {
    let pairs = i32::from(stones / 2);
    [0, 60, 150, 400, 2_000, WIN / 2]
        .get(pairs as usize)
        .copied()
        .unwrap_or(WIN / 2)
}

/// The score of `p` for the side to move.
fn evaluate(p: &Position) -> i32 {
    if let Some(outcome) = p.outcome() {
        return match outcome.winner {
            Some(side) if side == p.to_move() => WIN,
            Some(_) => -WIN,
            None => 0,
        };
    }
    let g = grid(p);
    let me = if p.to_move() == Side::First { 1 } else { 2 };
    let mut score = [0i32; 3];
    for (dc, dr) in DIRS {
        for row in 0..N {
            for col in 0..N {
                let (ec, er) = (col + 4 * dc, row + 4 * dr);
                if !(0..N).contains(&ec) || !(0..N).contains(&er) {
                    continue;
                }
                let mut count = [0usize; 3];
                for k in 0..5 {
                    let v = g[((row + k * dr) * N + col + k * dc) as usize];
                    count[usize::from(v)] += 1;
                }
                if count[1] == 0 {
                    score[2] += WINDOW[count[2]];
                } else if count[2] == 0 {
                    score[1] += WINDOW[count[1]];
                }
            }
        }
    }
    let opp = 3 - me;
    let side = |v: usize| if v == 1 { Side::First } else { Side::Second };
    // The side to move gets the next stone: its threats count for more.
    score[me] * 3 / 2 - score[opp] + capture_score(p.captures(side(me)))
        - capture_score(p.captures(side(opp)))
}

/// What a stone of `who` at (col, row) would make, over the windows through it.
fn point_value(g: &[u8; 361], col: i32, row: i32, who: u8) -> i32 {
    let other = 3 - who;
    let mut value = 0;
    for (dc, dr) in DIRS {
        for start in -4..=0 {
            let mut mine = 0;
            let mut blocked = false;
            for k in 0..5 {
                let (c, r) = (col + (start + k) * dc, row + (start + k) * dr);
                match at(g, c, r) {
                    None => blocked = true,
                    Some(v) if v == other => blocked = true,
                    Some(v) if v == who => mine += 1,
                    _ => {}
                }
            }
            if !blocked {
                value += WINDOW[(mine + 1).min(5)];
            }
        }
        // Capture: who _ O O who along this line, both ways.
        for sign in [-1, 1] {
            let (c1, r1) = (col + sign * dc, row + sign * dr);
            let (c2, r2) = (col + 2 * sign * dc, row + 2 * sign * dr);
            let (c3, r3) = (col + 3 * sign * dc, row + 3 * sign * dr);
            if at(g, c1, r1) == Some(other)
                && at(g, c2, r2) == Some(other)
                && at(g, c3, r3) == Some(who)
            {
                value += 800;
            }
        }
    }
    value
}

/// Legal candidate points near the stones, best first by attack plus defence, at most `limit`.
fn candidates(p: &Position, limit: usize) -> Vec<(i32, Move)> {
    let g = grid(p);
    let me = if p.to_move() == Side::First { 1 } else { 2 };
    let mut near = [false; 361];
    let mut any = false;
    for row in 0..N {
        for col in 0..N {
            if g[(row * N + col) as usize] != 0 {
                any = true;
                for dr in -2..=2 {
                    for dc in -2..=2 {
                        if at(&g, col + dc, row + dr) == Some(0) {
                            near[((row + dr) * N + col + dc) as usize] = true;
                        }
                    }
                }
            }
        }
    }
    let mut out = Vec::new();
    if !any {
        let mut all = Vec::new();
        p.legal_moves(&mut all);
        return all.into_iter().take(limit).map(|m| (0, m)).collect();
    }
    for (i, &is_near) in near.iter().enumerate() {
        if !is_near {
            continue;
        }
        let Some(point) = Point::from_index(i) else {
            continue;
        };
        let mv = Move(point);
        if p.check(mv).is_err() {
            continue;
        }
        let (col, row) = (i32::from(point.col()), i32::from(point.row()));
        let score = point_value(&g, col, row, me) + point_value(&g, col, row, 3 - me) * 9 / 10;
        out.push((score, mv));
    }
    if out.is_empty() {
        // The tournament rule can forbid every near point: take any legal move.
        let mut all = Vec::new();
        p.legal_moves(&mut all);
        return all.into_iter().take(limit).map(|m| (0, m)).collect();
    }
    out.sort_by_key(|c| std::cmp::Reverse(c.0));
    out.truncate(limit);
    out
}

struct Ctx {
    deadline: Instant,
    stopped: bool,
    nodes: u64,
    width: usize,
}

fn negamax(p: &Position, depth: u32, mut alpha: i32, beta: i32, ctx: &mut Ctx) -> i32 {
    ctx.nodes += 1;
    if ctx.nodes % 64 == 0 && Instant::now() >= ctx.deadline {
        ctx.stopped = true;
    }
    if depth == 0 || p.outcome().is_some() || ctx.stopped {
        return evaluate(p);
    }
    let mut best = -WIN - 1;
    for (_, mv) in candidates(p, ctx.width) {
        let mut child = p.clone();
        if child.play(mv).is_err() {
            continue;
        }
        let v = -negamax(&child, depth - 1, -beta, -alpha, ctx);
        best = best.max(v);
        alpha = alpha.max(v);
        if alpha >= beta || ctx.stopped {
            break;
        }
    }
    if best == -WIN - 1 {
        evaluate(p)
    } else {
        best
    }
}

/// The best move by the candidates' attack and defence value, ties at random.
pub fn greedy_move(p: &Position, seed: u64) -> Option<Move> {
    if p.outcome().is_some() {
        return None;
    }
    let list = candidates(p, 400);
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
    if level <= 1 {
        let list = candidates(p, 6);
        return list.get(rng.below(list.len())).map(|c| c.1);
    }
    // Levels trade strength for time: deeper search, a longer time cap and, from level 3 on, a
    // smaller chance of settling for the second-best move as the level grows (level 2, one ply
    // deep, takes it 25% of the time; the chances were tuned with the tournament example).
    let (max_depth, root_width, width, cap_ms, noise_percent) = match level {
        2 => (1, 16, 12, 100, 25),
        3 => (2, 14, 10, 400, 55),
        4 => (3, 13, 9, 1_500, 40),
        _ => (4, 13, 6, 4_000, 0),
    };
    // From level 3 on, a threat search for a win first: a four and its win at level 3, one
    // three and up to 4 or 6 fours at levels 4 and 5. Levels 4 and 5 also defend against the
    // opponent's wins by fours, up to 1 or 6 of them. (A second three at level 5 did no better
    // in the tournament example at 20 ms per move: it leaves the alpha-beta search less time.)
    let limits = |threes, fours, nodes| ThreatLimits {
        threes,
        fours,
        width: 10,
        nodes,
        deadline: None,
    };
    let (attack, defence) = match level {
        2 => (None, None),
        3 => (Some(limits(0, 1, 2_000)), None),
        4 => (Some(limits(1, 4, 10_000)), Some(limits(0, 1, 10_000))),
        _ => (Some(limits(1, 6, 40_000)), Some(limits(0, 6, 40_000))),
    };
    let time = budget.min(Duration::from_millis(cap_ms));
    let mut ctx = Ctx {
        deadline: Instant::now() + time,
        stopped: false,
        nodes: 0,
        width,
    };
    // Each threat search (up to three) gets at most a quarter of the time; the alpha-beta search
    // has the rest.
    let quarter = |limits: ThreatLimits| ThreatLimits {
        deadline: Some(Instant::now() + time / 4),
        ..limits
    };
    if let Some(Threats::Win(mv)) = attack.map(|limits| threat_search(p, quarter(limits))) {
        return Some(mv);
    }
    let mut list = candidates(p, root_width);
    if let Some(limits) = defence {
        // Facing a win by fours, only the moves that may stop it.
        let answers = threat_answers(p, quarter(limits)).unwrap_or_default();
        if !answers.is_empty() {
            list = answers
                .into_iter()
                .take(root_width)
                .map(|m| (0, m))
                .collect();
        }
    }
    let noisy = noise_percent > 0 && rng.below(100) < noise_percent;
    let mut best = list.first()?.1;
    let mut second = None;
    let mut children = Vec::new();
    for &(_, mv) in &list {
        let mut child = p.clone();
        if child.play(mv).is_ok() {
            if child
                .outcome()
                .is_some_and(|o| o.winner == Some(p.to_move()))
            {
                return Some(mv);
            }
            children.push((mv, child));
        }
    }
    if let Some(limits) = defence {
        // Root moves after which the opponent wins by fours are lost: dropped, unless all are.
        let each = ThreatLimits {
            nodes: limits.nodes / 8,
            ..quarter(limits)
        };
        let safe: Vec<bool> = children
            .iter()
            .map(|(_, child)| !matches!(threat_search(child, each), Threats::Win(_)))
            .collect();
        if safe.contains(&true) {
            let mut flags = safe.into_iter();
            children.retain(|_| flags.next().unwrap_or(true));
            best = children.first().map_or(best, |c| c.0);
        }
    }
    for depth in 1..=max_depth {
        let mut alpha = -WIN - 1;
        let mut values = Vec::with_capacity(children.len());
        for (i, (mv, child)) in children.iter().enumerate() {
            // A noisy move needs the exact value of every root move, not only the best one.
            let bound = if noisy { -WIN - 1 } else { alpha };
            let v = -negamax(child, depth - 1, -WIN - 1, -bound, &mut ctx);
            if ctx.stopped {
                break;
            }
            alpha = alpha.max(v);
            values.push((v, *mv, i));
        }
        if ctx.stopped {
            break;
        }
        // Stable: equal values keep the candidate ordering. The next iteration searches the
        // moves in this order (the best first prunes the most).
        values.sort_by_key(|c| std::cmp::Reverse(c.0));
        let order: Vec<usize> = values.iter().map(|c| c.2).collect();
        let mut slots: Vec<Option<(Move, Position)>> = children.drain(..).map(Some).collect();
        children = order.iter().filter_map(|&i| slots[i].take()).collect();
        if let Some(&(top, mv, _)) = values.first() {
            best = mv;
            // The second-best move, when it is neither lost nor much worse than the best.
            second = values
                .get(1)
                .filter(|c| c.0 > -WIN / 4 && c.0 >= top - NOISE_MARGIN)
                .map(|c| c.1);
        }
    }
    if noisy {
        if let Some(mv) = second {
            return Some(mv);
        }
    }
    Some(best)
}
