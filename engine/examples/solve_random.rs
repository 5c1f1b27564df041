//! Solves Pentago positions reached by random legal play, to measure the solver on positions
//! nobody chose: each line gives the value, nodes, wall-clock time and the CPU time of the
//! whole process (every thread) during the solve; the last line the process's peak memory.
//!
//! `cargo run --release -p hakem-engine --example solve_random -- PRESET MARBLES COUNT [MAX_SECONDS] [SEED] [SOLVER]`
//!
//! SOLVER is `solve` (the default: what [`solve`] picks), `mid` (the midgame solver alone, classic
//! positions) or `search` (the alpha-beta search alone).

use std::time::Duration;

use hakem_engine::pentago::{mid, solve, solve_by_search, Budget};
use hakem_games::pentago::{Position, Rules};
use hakem_games::Game;

/// CPU time of this process, all threads (Linux), from /proc/self/stat (user + system ticks).
fn process_cpu() -> Option<Duration> {
    let text = std::fs::read_to_string("/proc/self/stat").ok()?;
    let fields: Vec<&str> = text.rsplit_once(')')?.1.split_whitespace().collect();
    // utime and stime are fields 14 and 15 of the line, 12 and 13 after the command name.
    let ticks: u64 = fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?;
    Some(Duration::from_millis(ticks * 10))
}

/// The process's peak resident memory (VmHWM), in MiB.
fn peak_mib() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = text.lines().find(|l| l.starts_with("VmHWM:"))?;
    Some(line.split_whitespace().nth(1)?.parse::<u64>().ok()? / 1024)
}

/// A small deterministic generator (xorshift), so that a seed names the same positions.
struct Random(u64);

impl Random {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n as u64) as usize
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let rules = Rules::preset(args.get(1).map_or("classic", String::as_str)).expect("a preset");
    let marbles: u32 = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(18);
    let count: usize = args.get(3).and_then(|s| s.parse().ok()).unwrap_or(5);
    let max: f64 = args.get(4).and_then(|s| s.parse().ok()).unwrap_or(60.0);
    let mut random = Random(args.get(5).and_then(|s| s.parse().ok()).unwrap_or(1) | 1);
    let solver = args.get(6).map_or("solve", String::as_str);
    let mut moves = Vec::new();
    let mut solved = 0;
    while solved < count {
        let mut position = Position::new(rules);
        let mut line = Vec::new();
        while position.marbles() < marbles && position.outcome().is_none() {
            moves.clear();
            position.legal_moves(&mut moves);
            let mv = moves[random.below(moves.len())];
            line.push(mv.to_string());
            position.play(mv).expect("legal");
        }
        if position.outcome().is_some() {
            continue;
        }
        solved += 1;
        let budget = Budget::time(Duration::from_secs_f64(max));
        let cpu = process_cpu();
        let result = match solver {
            "mid" => mid::solve(&position, budget)
                .expect("a classic position the midgame solver takes")
                .map(|s| (s.value, s.nodes, s.elapsed)),
            "search" => solve_by_search(&position, budget).map(|s| (s.value, s.nodes, s.elapsed)),
            _ => solve(&position, budget).map(|s| (s.value, s.nodes, s.elapsed)),
        };
        let cpu = cpu
            .zip(process_cpu())
            .map_or(0.0, |(a, b)| b.saturating_sub(a).as_secs_f64() * 1e3);
        match result {
            Ok((value, nodes, elapsed)) => println!(
                "{:4} {:>11} nodes {:9.1} ms {:9.0} ms CPU  {}",
                value.as_str(),
                nodes,
                elapsed.as_secs_f64() * 1e3,
                cpu,
                line.join(" ")
            ),
            Err(e) => println!("refused: {e} ({cpu:.0} ms CPU)  {}", line.join(" ")),
        }
    }
    if let Some(mib) = peak_mib() {
        println!("peak memory {mib} MiB");
    }
}
