//! hakem's Glicko-2 against an independent implementation (the PyPI package `pyglicko2`,
//! written from the same paper), on random histories: every rating, deviation and volatility
//! agrees to within 1e-6 after hundreds of rated rounds.

use std::io::Write;
use std::process::{Command, Stdio};

use hakem_blackbox::python_has;
use hakem_round::rating::{Game, Rating, START, TAU};
use serde_json::{json, Value};

/// A small deterministic generator (xorshift), so that a failure can be replayed.
struct Random(u64);

impl Random {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }
}

/// Each rated round, one rating period for both players, from the ratings before it.
const SCRIPT: &str = r#"
import json, sys
import pyglicko2 as g
history = json.load(sys.stdin)
with g.system(history["tau"]):
    players = [g.Player() for _ in range(history["players"])]
    for a, b, score in history["rounds"]:
        s = {1.0: g.Outcome.WIN, 0.5: g.Outcome.DRAW, 0.0: g.Outcome.LOSS}[score]
        g.update(players[a], players[b], s)
json.dump([[p.r, p.RD, p.σ] for p in players], sys.stdout)
"#;

#[test]
fn ratings_agree_with_an_independent_implementation_on_random_histories() {
    if !python_has("pyglicko2", "pyglicko2") {
        return;
    }
    for seed in [1u64, 7, 2026] {
        let mut random = Random(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
        let players = 12;
        let mut ratings = vec![START; players];
        let mut rounds = Vec::new();
        for _ in 0..400 {
            let a = random.below(players as u64) as usize;
            let b = (a + 1 + random.below(players as u64 - 1) as usize) % players;
            let score = [1.0, 0.5, 0.0][random.below(3) as usize];
            let (ra, rb): (Rating, Rating) = (ratings[a], ratings[b]);
            ratings[a] = ra.after(&[Game {
                opponent: rb,
                score,
            }]);
            ratings[b] = rb.after(&[Game {
                opponent: ra,
                score: 1.0 - score,
            }]);
            rounds.push(json!([a, b, score]));
        }
        let history = json!({"tau": TAU, "players": players, "rounds": rounds});
        let mut child = Command::new("python3")
            .args(["-c", SCRIPT])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("run python3");
        child
            .stdin
            .take()
            .unwrap()
            .write_all(history.to_string().as_bytes())
            .unwrap();
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success(), "the reference failed");
        let theirs: Vec<Value> = serde_json::from_slice(&out.stdout).unwrap();
        for (i, (mine, theirs)) in ratings.iter().zip(&theirs).enumerate() {
            let theirs: Vec<f64> = theirs
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_f64().unwrap())
                .collect();
            for (what, m, t) in [
                ("rating", mine.rating, theirs[0]),
                ("deviation", mine.deviation, theirs[1]),
                ("volatility", mine.volatility, theirs[2]),
            ] {
                assert!(
                    (m - t).abs() < 1e-6,
                    "seed {seed}, player {i}: {what} {m} here, {t} by the reference"
                );
            }
        }
        assert!(ratings.iter().all(|r| r.rounds > 0));
    }
}
