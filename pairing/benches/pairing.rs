//! Time to pair one round of 50, 200 and 1000 players (round 5 of 9, a typical middle round).

use criterion::{black_box, criterion_group, criterion_main, Criterion};
use hakem_pairing::{pair_round, sim::simulate, Rules};

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("dutch2025_round5");
    g.sample_size(10);
    for n in [50u32, 200, 1000] {
        let t = simulate(n, 4, 9, Rules::Dutch2025, 7);
        g.bench_function(format!("{n}_players"), |b| {
            b.iter(|| pair_round(black_box(&t), Rules::Dutch2025))
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
