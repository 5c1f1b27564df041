//! Synthetic tournaments for benchmarks and tests: rounds paired by this crate, results drawn
//! from a small deterministic generator (no external randomness, so runs repeat exactly).

use crate::dutch::{pair_round, Rules};
use crate::{Colour, Player, ResultCode, RoundEntry, Tournament};

/// A tiny linear congruential generator; quality is irrelevant here, repeatability is not.
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 33
    }
}

/// A tournament of `players` players with `played` rounds already paired and played, out of
/// `total` rounds. Higher-ranked players win more often; about a quarter of games are drawn.
pub fn simulate(players: u32, played: usize, total: u32, rules: Rules, seed: u64) -> Tournament {
    let mut t = Tournament {
        name: format!("sim {players}"),
        total_rounds: Some(total),
        initial_colour: Some(Colour::White),
        pab_halves: None,
        players: (1..=players)
            .map(|id| Player {
                id,
                name: format!("Player {id:04}"),
                rating: Some(2800u32.saturating_sub(id)),
                ..Player::default()
            })
            .collect(),
        other_lines: Vec::new(),
    };
    let mut rng = Lcg(seed);
    for round in 1..=played {
        let Ok(p) = pair_round(&t, rules) else {
            break;
        };
        let mut entries = Vec::new();
        for (w, b) in p.boards {
            let r = rng.next() % 100;
            // The lower pairing number is the stronger player.
            let w_strong = w < b;
            let (rw, rb) = if r < 25 {
                (ResultCode::Draw, ResultCode::Draw)
            } else if (r < 70) == w_strong {
                (ResultCode::Win, ResultCode::Loss)
            } else {
                (ResultCode::Loss, ResultCode::Win)
            };
            entries.push((
                w,
                RoundEntry {
                    opponent: Some(b),
                    colour: Some(Colour::White),
                    result: rw,
                },
            ));
            entries.push((
                b,
                RoundEntry {
                    opponent: Some(w),
                    colour: Some(Colour::Black),
                    result: rb,
                },
            ));
        }
        if let Some(b) = p.bye {
            entries.push((
                b,
                RoundEntry {
                    opponent: None,
                    colour: None,
                    result: ResultCode::Pab,
                },
            ));
        }
        t.record_round(round, &entries);
    }
    for i in 0..t.players.len() {
        t.players[i].points = t.points_after(i, played, t.pab());
    }
    t
}
