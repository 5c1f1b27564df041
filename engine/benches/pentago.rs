//! Pentago solver figures: nodes per second, and the time to solve the vector positions with 26
//! or more marbles (target: each within 1 s on one core).
//!
//! `cargo bench -p hakem-engine --bench pentago`

use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, Criterion};
use hakem_engine::pentago::{solve, solve_with, Budget, SolverTable};
use hakem_games::pentago::{Position, Rules};
use hakem_games::Game;

/// (line number, preset, position) of every solve vector.
fn vectors() -> Vec<(usize, &'static str, Position)> {
    let text = include_str!("../../games/tests/vectors/pentago/solve.tsv");
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let fields: Vec<&str> = line.split('\t').collect();
        let Some(rules) = fields.first().and_then(|p| Rules::preset(p)) else {
            continue;
        };
        let mut position = Position::new(rules);
        if fields.get(1).is_some_and(|moves| {
            moves
                .split_whitespace()
                .all(|m| position.play_str(m).is_ok())
        }) {
            out.push((i + 1, rules.name(), position));
        }
    }
    out
}

/// CPU time of this process, every thread (Linux: user and system time from /proc/self/stat),
/// for rates that do not depend on other load; the midgame solver works on every core.
fn cpu_time() -> Option<Duration> {
    let text = std::fs::read_to_string("/proc/self/stat").ok()?;
    let fields: Vec<&str> = text.rsplit_once(')')?.1.split_whitespace().collect();
    // utime and stime (fields 14 and 15 of the line) in ticks of 10 ms.
    let ticks: u64 = fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?;
    Some(Duration::from_millis(ticks * 10))
}
/// Solves every vector position once with `solve` (a fresh table sized to the position, as a
/// one-off caller gets).
fn summary() {
    for min_marbles in [26, 22, 0] {
        let cpu_start = cpu_time();
        let (mut nodes, mut total, mut worst, mut count) =
            (0u64, Duration::ZERO, (Duration::ZERO, 0), 0);
        for (line, _, position) in vectors() {
            if position.marbles() < min_marbles {
                continue;
            }
            let start = Instant::now();
            let solution =
                solve(&position, Budget::time(Duration::from_secs(120))).expect("solved");
            let elapsed = start.elapsed();
            nodes += solution.nodes;
            total += elapsed;
            count += 1;
            if elapsed > worst.0 {
                worst = (elapsed, line);
            }
        }
        let cpu = cpu_start.zip(cpu_time()).map(|(a, b)| b.saturating_sub(a));
        if let Some(cpu) = cpu {
            eprintln!(
                "  (CPU time {:.3} s: {:.2} M nodes per CPU second)",
                cpu.as_secs_f64(),
                nodes as f64 / cpu.as_secs_f64().max(1e-9) / 1e6
            );
        }
        eprintln!(
            "positions with >= {min_marbles} marbles: {count} solved in {:.3} s, {nodes} nodes, {:.2} M nodes/s, slowest line {} in {:.1} ms",
            total.as_secs_f64(),
            nodes as f64 / total.as_secs_f64() / 1e6,
            worst.1,
            worst.0.as_secs_f64() * 1e3
        );
    }
}

fn bench(c: &mut Criterion) {
    summary();
    let mut table = SolverTable::new(20);
    let vectors = vectors();
    let mut group = c.benchmark_group("pentago_solve");
    group.sample_size(10);
    // The three slowest positions with 26+ marbles, and one of each preset at 22.
    for wanted in [92, 85, 38, 52, 98] {
        let Some((line, preset, position)) = vectors.iter().find(|v| v.0 == wanted) else {
            continue;
        };
        let name = format!("line{line}_{preset}_{}marbles", position.marbles());
        group.bench_function(name, |b| {
            b.iter(|| {
                table.clear();
                solve_with(position, Budget::time(Duration::from_secs(120)), &mut table)
                    .expect("solved")
                    .nodes
            })
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
