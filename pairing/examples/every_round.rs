//! Times the pairing of every round of a synthetic tournament, its earlier rounds paired by the
//! same rules: `cargo run --release -p hakem-pairing --example every_round -- PLAYERS ROUNDS
//! [SEED [RULES]]` (RULES: `dutch2025`, the default, or `dutch2017`).

use std::time::Instant;

use hakem_pairing::{pair_round, sim::simulate, Rules};

const USAGE: &str = "PLAYERS ROUNDS [SEED [RULES]]";

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let number = |i: usize, default: u64| {
        args.get(i).map_or(default, |a| {
            a.parse()
                .unwrap_or_else(|_| panic!("{a}: a number ({USAGE})"))
        })
    };
    let (players, rounds, seed) = (number(0, 1000), number(1, 9), number(2, 7));
    let rules: Rules = args.get(3).map_or(Rules::Dutch2025, |a| {
        a.parse().unwrap_or_else(|e| panic!("{e} ({USAGE})"))
    });
    let mut worst = 0f64;
    for played in 0..rounds as usize {
        let t = simulate(players as u32, played, rounds as u32, rules, seed);
        let start = Instant::now();
        let pairing = pair_round(&t, rules);
        let s = start.elapsed().as_secs_f64();
        worst = worst.max(s);
        println!(
            "round {}: {:.3} s ({})",
            played + 1,
            s,
            if pairing.is_ok() {
                "paired"
            } else {
                "no pairing"
            }
        );
    }
    println!("slowest round: {worst:.3} s");
}
