//! Every engine plays only legal moves, in all three games, to the end of the game.

use std::time::Duration;

use hakem_engine::{new_engine, Engine, EngineKind, Rng};
use hakem_games::{AnyPosition, GameKind};
use proptest::prelude::*;

/// Plays a whole set between two engines; panics on an illegal move. Returns the plies played.
fn play(kind: GameKind, variant: Option<&str>, a: &mut dyn Engine, b: &mut dyn Engine) -> u32 {
    let mut position = AnyPosition::new(kind, variant).expect("variant");
    let budget = Duration::from_millis(5);
    while position.outcome().is_none() && position.plies() < 400 {
        let first = position.plies() % 2 == 0;
        let (mv, name) = if first {
            (a.choose(&position, budget), a.name())
        } else {
            (b.choose(&position, budget), b.name())
        };
        let mv = mv.unwrap_or_else(|| panic!("{name} gave no move in a running game"));
        position
            .play_str(&mv)
            .unwrap_or_else(|e| panic!("{name} played {mv}: {e}"));
    }
    // A finished game gives no move.
    if position.outcome().is_some() {
        assert_eq!(a.choose(&position, budget), None);
    }
    position.plies()
}

fn engines(seed: u64) -> Vec<Box<dyn Engine>> {
    let mut out = vec![
        new_engine(EngineKind::Random, 1, seed),
        new_engine(EngineKind::Greedy, 1, seed + 1),
    ];
    for level in 1..=5 {
        out.push(new_engine(
            EngineKind::Search,
            level,
            seed + 10 + u64::from(level),
        ));
    }
    out
}

#[test]
fn every_engine_plays_whole_legal_games_of_every_game() {
    for kind in GameKind::ALL {
        for &variant in kind.variants() {
            let mut list = engines(1);
            let n = list.len();
            for i in 0..n {
                // Each engine against the next one, both colours over the loop.
                let j = (i + 1) % n;
                let (lo, hi) = list.split_at_mut(i.max(j));
                let (a, b) = if i < j {
                    (&mut lo[i], &mut hi[0])
                } else {
                    (&mut hi[0], &mut lo[j])
                };
                let plies = play(kind, Some(variant), a.as_mut(), b.as_mut());
                assert!(plies > 0);
            }
        }
    }
}

#[test]
fn search_beats_random_at_pentago() {
    let mut wins = 0;
    for set in 0..6u64 {
        let mut search = new_engine(EngineKind::Search, 3, set);
        let mut random = new_engine(EngineKind::Random, 1, 100 + set);
        let mut position = AnyPosition::new(GameKind::Pentago, None).expect("pentago");
        let search_first = set % 2 == 0;
        while position.outcome().is_none() {
            let search_to_move = (position.plies() % 2 == 0) == search_first;
            let engine = if search_to_move {
                &mut search
            } else {
                &mut random
            };
            let mv = engine
                .choose(&position, Duration::from_millis(20))
                .expect("move");
            position.play_str(&mv).expect("legal");
        }
        let winner_first =
            position.outcome().and_then(|o| o.winner) == Some(hakem_games::Side::First);
        if winner_first == search_first && position.outcome().and_then(|o| o.winner).is_some() {
            wins += 1;
        }
    }
    assert!(wins >= 5, "search won {wins} of 6");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// From random positions of any game, every engine answers a legal move.
    #[test]
    fn engines_answer_legal_moves_from_random_positions(game in 0usize..3, plies in 0u32..60, seed in any::<u64>()) {
        let kind = GameKind::ALL[game];
        let mut rng = Rng::new(seed);
        let mut position = AnyPosition::new(kind, None).expect("game");
        for _ in 0..plies {
            if position.outcome().is_some() {
                break;
            }
            let moves = position.legal_moves();
            let mv = moves[rng.below(moves.len())].clone();
            position.play_str(&mv).expect("legal");
        }
        for mut engine in engines(seed) {
            match engine.choose(&position, Duration::from_millis(3)) {
                Some(mv) => prop_assert!(position.check_str(&mv).is_ok(), "{} chose {}", engine.name(), mv),
                None => prop_assert!(position.outcome().is_some()),
            }
        }
    }
}
