//! Rules speed: `cargo bench -p hakem-games --bench rules`.
//!
//! Throughput is reported per element: one move applied and judged, one playout, one
//! legal-move generation.

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use hakem_games::{pentago, pente, quoridor, Game};

/// A small deterministic generator (xorshift64*), so every run measures the same games.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// Positions along random games, each with one legal move to play from it.
fn samples<G: Game>(start: G, count: usize, rng: &mut Rng) -> Vec<(G, G::Move)> {
    let mut out = Vec::with_capacity(count);
    let mut moves = Vec::new();
    while out.len() < count {
        let mut pos = start.clone();
        loop {
            moves.clear();
            pos.legal_moves(&mut moves);
            if moves.is_empty() || out.len() == count {
                break;
            }
            let mv = moves[rng.below(moves.len())];
            out.push((pos.clone(), mv));
            pos.play(mv).expect("legal");
        }
    }
    out
}

fn play_all<G: Game>(c: &mut Criterion, name: &str, start: G) {
    let samples = samples(start, 4096, &mut Rng(0x9e37_79b9_7f4a_7c15));
    let mut group = c.benchmark_group(name);
    group.throughput(Throughput::Elements(samples.len() as u64));
    group.bench_function("play_and_judge", |b| {
        b.iter(|| {
            let mut finished = 0u32;
            for (pos, mv) in &samples {
                let mut next = pos.clone();
                let _ = next.play(black_box(*mv));
                finished += u32::from(next.outcome().is_some());
            }
            finished
        })
    });
    group.finish();
}

fn pentago_benches(c: &mut Criterion) {
    for rules in [pentago::Rules::tr(), pentago::Rules::classic()] {
        play_all(
            c,
            &format!("pentago_{}", rules.name()),
            pentago::Position::new(rules),
        );
    }

    let mut group = c.benchmark_group("pentago_tr");
    group.throughput(Throughput::Elements(1));
    let mut rng = Rng(42);
    let mut moves = Vec::with_capacity(288);
    group.bench_function("random_playout", |b| {
        b.iter(|| {
            let mut pos = pentago::Position::new(pentago::Rules::tr());
            while pos.outcome().is_none() {
                moves.clear();
                pos.legal_moves(&mut moves);
                let _ = pos.play(moves[rng.below(moves.len())]);
            }
            pos.outcome()
        })
    });
    let positions: Vec<_> = samples(pentago::Position::new(pentago::Rules::tr()), 256, &mut rng)
        .into_iter()
        .map(|(pos, _)| pos)
        .collect();
    group.throughput(Throughput::Elements(positions.len() as u64));
    group.bench_function("legal_moves", |b| {
        b.iter(|| {
            let mut total = 0;
            for pos in &positions {
                moves.clear();
                pos.legal_moves(&mut moves);
                total += moves.len();
            }
            total
        })
    });
    group.finish();
}

fn quoridor_benches(c: &mut Criterion) {
    let start = quoridor::Position::new(quoridor::Rules::standard());
    play_all(c, "quoridor", start.clone());
    let positions: Vec<_> = samples(start, 256, &mut Rng(7))
        .into_iter()
        .map(|(pos, _)| pos)
        .collect();
    let mut group = c.benchmark_group("quoridor");
    group.throughput(Throughput::Elements(positions.len() as u64));
    let mut moves = Vec::with_capacity(256);
    group.bench_function("legal_moves", |b| {
        b.iter(|| {
            let mut total = 0;
            for pos in &positions {
                moves.clear();
                pos.legal_moves(&mut moves);
                total += moves.len();
            }
            total
        })
    });
    group.finish();
}

fn pente_benches(c: &mut Criterion) {
    play_all(c, "pente", pente::Position::new(pente::Rules::tournament()));
}

criterion_group!(benches, pentago_benches, quoridor_benches, pente_benches);
criterion_main!(benches);
