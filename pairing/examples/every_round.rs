//! Times the pairing of every round of a synthetic tournament: `cargo run --release -p
//! hakem-pairing --example every_round -- PLAYERS ROUNDS [SEED]`.

use std::time::Instant;

use hakem_pairing::{pair_round, sim::simulate, Rules};

fn main() {
    let args: Vec<u64> = std::env::args()
        .skip(1)
        .map(|a| a.parse().expect("numbers: PLAYERS ROUNDS [SEED]"))
        .collect();
    let (players, rounds) = (
        args.first().copied().unwrap_or(1000),
        args.get(1).copied().unwrap_or(9),
    );
    let seed = args.get(2).copied().unwrap_or(7);
    let mut worst = 0f64;
    for played in 0..rounds as usize {
        let t = simulate(
            players as u32,
            played,
            rounds as u32,
            Rules::Dutch2025,
            seed,
        );
        let start = Instant::now();
        let pairing = pair_round(&t, Rules::Dutch2025);
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
