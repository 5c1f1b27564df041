//! Plays engines against each other and prints a table: each level against the level below it
//! (and random against level 1, greedy against level 2).
//!
//! `cargo run --release -p hakem-engine --example tournament -- [game] [sets] [ms_per_move] [variant] [pairs]`
//!
//! `pairs` (e.g. `4:3,5:4`) plays only those pairs; a variant of `-` keeps the default one.
//!
//! Sets alternate who moves first; each starts from a random opening of `OPENING` plies so that
//! deterministic levels do not replay one game. A win scores 1, a draw 1/2.

use std::time::{Duration, Instant};

use hakem_engine::{new_engine, Engine, EngineKind, Rng};
use hakem_games::{AnyPosition, GameKind, Side};

/// Random plies before the engines take over.
const OPENING: u32 = 2;
/// Sets longer than this (Quoridor can wander) are scored as draws.
const MAX_PLIES: u32 = 300;

fn engine(name: &str, seed: u64) -> Box<dyn Engine> {
    match name {
        "random" => new_engine(EngineKind::Random, 1, seed),
        "greedy" => new_engine(EngineKind::Greedy, 1, seed),
        level => new_engine(EngineKind::Search, level.parse().unwrap_or(1), seed),
    }
}

/// Plays one set; returns the score of `a` (1, 1/2 or 0).
fn play_set(
    kind: GameKind,
    variant: Option<&str>,
    a: &mut dyn Engine,
    b: &mut dyn Engine,
    a_first: bool,
    budget: Duration,
    rng: &mut Rng,
) -> f64 {
    let Ok(mut position) = AnyPosition::new(kind, variant) else {
        return 0.5;
    };
    while position.outcome().is_none() && position.plies() < MAX_PLIES {
        let a_to_move = (position.to_move() == Side::First) == a_first;
        let mv = if position.plies() < OPENING {
            let moves = position.legal_moves();
            moves.get(rng.below(moves.len())).cloned()
        } else if a_to_move {
            a.choose(&position, budget)
        } else {
            b.choose(&position, budget)
        };
        let Some(mv) = mv else { break };
        if position.play_str(&mv).is_err() {
            // An illegal move loses the set.
            return if a_to_move { 0.0 } else { 1.0 };
        }
    }
    match position.outcome().and_then(|o| o.winner) {
        Some(side) => {
            if (side == Side::First) == a_first {
                1.0
            } else {
                0.0
            }
        }
        None => 0.5,
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let kind: GameKind = args
        .get(1)
        .and_then(|g| g.parse().ok())
        .unwrap_or(GameKind::Pentago);
    let sets: usize = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(100);
    let ms: u64 = args.get(3).and_then(|s| s.parse().ok()).unwrap_or(20);
    let variant = args.get(4).map(String::as_str).filter(|v| *v != "-");
    let only: Option<Vec<(String, String)>> = args.get(5).map(|list| {
        list.split(',')
            .filter_map(|pair| pair.split_once(':'))
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect()
    });
    let budget = Duration::from_millis(ms);
    let pairs = [
        ("1", "random"),
        ("2", "greedy"),
        ("2", "1"),
        ("3", "2"),
        ("4", "3"),
        ("5", "4"),
    ];
    println!(
        "{kind} {}: {sets} sets per pair, {ms} ms per move, {OPENING} random opening plies",
        variant.unwrap_or(kind.default_variant())
    );
    println!("| stronger | weaker | score of stronger | wins-draws-losses | time |");
    println!("|---|---|---|---|---|");
    let mut rng = Rng::new(2026);
    for (strong, weak) in pairs {
        if only
            .as_ref()
            .is_some_and(|o| !o.iter().any(|(a, b)| a == strong && b == weak))
        {
            continue;
        }
        let start = Instant::now();
        let mut a = engine(strong, rng.next_u64());
        let mut b = engine(weak, rng.next_u64());
        let (mut score, mut w, mut d, mut l) = (0.0, 0, 0, 0);
        for set in 0..sets {
            let s = play_set(
                kind,
                variant,
                a.as_mut(),
                b.as_mut(),
                set % 2 == 0,
                budget,
                &mut rng,
            );
            score += s;
            match s {
                s if s > 0.75 => w += 1,
                s if s < 0.25 => l += 1,
                _ => d += 1,
            }
        }
        println!(
            "| {strong} | {weak} | {:.1}% | {w}-{d}-{l} | {:.1} s |",
            100.0 * score / sets as f64,
            start.elapsed().as_secs_f64()
        );
    }
}
