//! Solves every line of the shared Pentago solve vectors and prints the time and nodes of each.
//!
//! `cargo run --release -p hakem-engine --example solve_vectors [max_seconds] [first_line] [solver]`
//!
//! `solver` is `solve` (the default: what [`solve`] picks), `search` (the alpha-beta search
//! alone) or `mid` (the midgame solver alone: classic lines only, every best move compared).

use std::time::Duration;

use hakem_engine::pentago::{mid, solve, solve_by_search, Budget, Solution, SolveError};
use hakem_games::pentago::{Move, Position, Rules};
use hakem_games::Game;

/// CPU time of this process, every thread (Linux: user and system time from /proc/self/stat),
/// for rates that do not depend on other load; the midgame solver works on every core.
fn cpu_time() -> Option<Duration> {
    let text = std::fs::read_to_string("/proc/self/stat").ok()?;
    let fields: Vec<&str> = text.rsplit_once(')')?.1.split_whitespace().collect();
    // utime and stime (fields 14 and 15 of the line) in ticks of 10 ms.
    let ticks: u64 = fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?;
    Some(Duration::from_millis(ticks * 10))
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let max = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(10.0);
    let first: usize = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(1);
    let solver = args.get(3).map_or("solve", String::as_str);
    let text = include_str!("../../games/tests/vectors/pentago/solve.tsv");
    let cpu_start = cpu_time();
    let (mut agree, mut total, mut nodes, mut secs) = (0, 0, 0u64, 0.0);
    for (i, line) in text.lines().enumerate().skip(first - 1) {
        let f: Vec<&str> = line.split('\t').collect();
        let Some(rules) = Rules::preset(f[0]) else {
            continue;
        };
        let mut position = Position::new(rules);
        for token in f[1].split_whitespace() {
            position.play_str(token).expect("legal");
        }
        let best: Vec<Move> = f[3]
            .split_whitespace()
            .filter_map(|t| Move::parse(t).ok())
            .collect();
        let budget = Budget::time(Duration::from_secs_f64(max));
        // (solution, every best move agrees) by the chosen solver.
        let result: Result<(Solution, bool), SolveError> = match solver {
            "mid" => match mid::solve(&position, budget) {
                None => continue,
                Some(r) => r.map(|m| {
                    let all = m.best == best;
                    (
                        Solution {
                            value: m.value,
                            best: m.best[0],
                            nodes: m.nodes,
                            elapsed: m.elapsed,
                        },
                        all,
                    )
                }),
            },
            "search" => solve_by_search(&position, budget).map(|s| (s, true)),
            _ => solve(&position, budget).map(|s| (s, true)),
        };
        total += 1;
        match result {
            Ok((s, all)) => {
                let ok = s.value.as_str() == f[2] && best.contains(&s.best) && all;
                agree += usize::from(ok);
                nodes += s.nodes;
                secs += s.elapsed.as_secs_f64();
                println!(
                    "{:3} {:7} {:2} {:4} {:4} {:>10} nodes {:8.1} ms {:6.2} Mn/s{}",
                    i + 1,
                    f[0],
                    position.marbles(),
                    f[2],
                    s.value.as_str(),
                    s.nodes,
                    s.elapsed.as_secs_f64() * 1e3,
                    s.nodes as f64 / s.elapsed.as_secs_f64().max(1e-9) / 1e6,
                    if ok { "" } else { "  DISAGREES" }
                );
            }
            Err(e) => println!(
                "{:3} {:7} {:2} {:4} refused: {e}",
                i + 1,
                f[0],
                position.marbles(),
                f[2]
            ),
        }
    }
    println!(
        "{agree}/{total} agree; {nodes} nodes in {secs:.2} s = {:.2} M nodes/s",
        nodes as f64 / secs / 1e6
    );
    if let Some(cpu) = cpu_start.zip(cpu_time()).map(|(a, b)| b.saturating_sub(a)) {
        println!(
            "CPU time {:.2} s = {:.2} M nodes per CPU second",
            cpu.as_secs_f64(),
            nodes as f64 / cpu.as_secs_f64().max(1e-9) / 1e6
        );
    }
}
