//! The solver's verdict on each position of a finished Pentago set: on demand, bounded per
//! request, cached per position, one analysis at a time. Never for a match still being
//! played: a player cannot ask it about the game in front of them.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use hakem_engine::pentago::{solve_all, Budget, SolverTable, Value};
use hakem_games::{AnyPosition, GameKind, Side};
use hakem_protocol::{MatchStatus, Seat};
use serde::Serialize;

/// The solver's time for one position.
const PER_POSITION: Duration = Duration::from_millis(300);
/// The solver's time for one request, all positions together.
const PER_REQUEST: Duration = Duration::from_secs(3);
/// Positions remembered; the cache starts afresh when full (verdicts never change).
const CACHE_POSITIONS: usize = 20_000;

/// What the solver proved about one position, for the side to move.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct Verdict {
    /// `win`, `draw` or `loss`; absent when not proven within the budget.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub value: Option<&'static str>,
    /// Every move that keeps the value.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub keeps: Vec<String>,
}

#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct PositionAnalysis {
    /// Moves played before this position, in the set.
    pub ply: u32,
    pub to_move: Seat,
    #[serde(flatten)]
    pub verdict: Verdict,
    /// The move played from here (none after the last).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub played: Option<String>,
    /// What the move played gave away: `win` (a won position left not won) or `draw`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub thrown: Option<&'static str>,
}

#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct SetAnalysis {
    #[serde(rename = "match")]
    pub match_id: String,
    pub set: u8,
    pub variant: String,
    pub positions: Vec<PositionAnalysis>,
    /// Positions the budget left unproven (the earliest, with the most empty cells).
    pub unproven: usize,
}

/// Why there is no analysis.
#[derive(Debug, PartialEq, Eq)]
pub enum Refused {
    UnknownMatch,
    NotFinished,
    NotPentago,
    NoSuchSet,
    /// The solver is analysing another set: try again in a few seconds.
    Busy,
}

#[derive(Default)]
pub struct Analyses {
    cache: Mutex<HashMap<String, Verdict>>,
    /// One analysis at a time: the solver takes a whole core.
    running: tokio::sync::Mutex<()>,
}

impl Analyses {
    /// Analyses set `set` of the finished match; `moves` are the set's moves in notation,
    /// `first` the set's first mover.
    pub async fn analyse(
        &self,
        match_id: &str,
        status: MatchStatus,
        (game, variant): (&str, &str),
        set: u8,
        first: Seat,
        moves: Vec<String>,
    ) -> Result<SetAnalysis, Refused> {
        if status != MatchStatus::Finished {
            return Err(Refused::NotFinished);
        }
        if game != "pentago" {
            return Err(Refused::NotPentago);
        }
        // Positions after each move, from the start of the set.
        let mut positions = Vec::with_capacity(moves.len() + 1);
        let mut position =
            AnyPosition::new(GameKind::Pentago, Some(variant)).map_err(|_| Refused::NotPentago)?;
        positions.push(position.clone());
        for mv in &moves {
            if position.play_str(mv).is_err() {
                break;
            }
            positions.push(position.clone());
        }
        let keys: Vec<String> = (0..positions.len())
            .map(|i| format!("{variant} {}", moves[..i].join(" ")))
            .collect();
        let known: Vec<Option<Verdict>> = {
            let cache = self.cache.lock().unwrap_or_else(|e| e.into_inner());
            keys.iter().map(|k| cache.get(k).cloned()).collect()
        };
        // A set known already is answered at once; one to solve waits for nobody: while the
        // solver works on one request the others are told to come back.
        let everything_known = known
            .iter()
            .zip(&positions)
            .all(|(k, p)| k.is_some() || p.outcome().is_some());
        let _turn = if everything_known {
            None
        } else {
            Some(self.running.try_lock().map_err(|_| Refused::Busy)?)
        };
        let solved = tokio::task::spawn_blocking(move || solve_set(&positions, known))
            .await
            .map_err(|_| Refused::NoSuchSet)?;
        {
            let mut cache = self.cache.lock().unwrap_or_else(|e| e.into_inner());
            if cache.len() + solved.len() > CACHE_POSITIONS {
                cache.clear();
            }
            // A position tried with its whole budget gives the same answer next time, proven
            // or not: asking again costs nothing.
            for (key, (verdict, _, tried)) in keys.iter().zip(&solved) {
                if *tried {
                    cache.insert(key.clone(), verdict.clone());
                }
            }
        }
        let seat_of = |side: Side| match side {
            Side::First => first,
            Side::Second => first.other(),
        };
        let mut out: Vec<PositionAnalysis> = solved
            .iter()
            .enumerate()
            .map(|(ply, (verdict, side, _))| PositionAnalysis {
                ply: ply as u32,
                to_move: seat_of(*side),
                verdict: verdict.clone(),
                played: moves.get(ply).cloned(),
                thrown: None,
            })
            .collect();
        // A move throws away what the position held when the next position, for the
        // opponent, is no longer lost (a win given up) or is won (a draw given up).
        for ply in 0..out.len().saturating_sub(1) {
            let (now, next) = (out[ply].verdict.value, out[ply + 1].verdict.value);
            out[ply].thrown = match (now, next) {
                (Some("win"), Some("draw" | "win")) => Some("win"),
                (Some("draw"), Some("win")) => Some("draw"),
                _ => None,
            };
        }
        let unproven = out
            .iter()
            .filter(|p| p.verdict.value.is_none() && p.played.is_some())
            .count();
        Ok(SetAnalysis {
            match_id: match_id.to_string(),
            set,
            variant: variant.to_string(),
            positions: out,
            unproven,
        })
    }
}

/// Solves the positions from the last to the first (the fewest empty cells first, the
/// quickest), each within its budget and all within the request's; a finished position has no
/// verdict. Each comes with whether it was tried with its whole budget (or known already).
fn solve_set(positions: &[AnyPosition], known: Vec<Option<Verdict>>) -> Vec<(Verdict, Side, bool)> {
    let start = Instant::now();
    let mut out: Vec<(Verdict, Side, bool)> = positions
        .iter()
        .map(|p| {
            (
                Verdict {
                    value: None,
                    keeps: Vec::new(),
                },
                p.to_move(),
                false,
            )
        })
        .collect();
    let mut table = SolverTable::new(18);
    for (i, position) in positions.iter().enumerate().rev() {
        if let Some(verdict) = &known[i] {
            out[i].0 = verdict.clone();
            out[i].2 = true;
            continue;
        }
        let AnyPosition::Pentago(p) = position else {
            continue;
        };
        if position.outcome().is_some() {
            continue;
        }
        let left = PER_REQUEST.saturating_sub(start.elapsed());
        if left.is_zero() {
            break;
        }
        out[i].2 = left >= PER_POSITION;
        if let Ok((value, keeps)) = solve_all(p, Budget::time(PER_POSITION.min(left)), &mut table) {
            out[i].2 = true;
            out[i].0 = Verdict {
                value: Some(match value {
                    Value::Win => "win",
                    Value::Draw => "draw",
                    Value::Loss => "loss",
                }),
                keeps: keeps.iter().map(ToString::to_string).collect(),
            };
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const MOVES: &str = "b1sw e5sw f6sw c6nw d6nw c6nw e6sw f1nw e2nw e4ne c6nw c1sw f2nw e1nw a3se f3se e4se b1sw c4sw b6sw d2sw f1se c3sw d4ne b5nw b1se b2ne f4ne c2nw b6se f2sw";

    fn moves(n: usize) -> Vec<String> {
        MOVES.split_whitespace().take(n).map(String::from).collect()
    }

    async fn ask(
        a: &Analyses,
        status: MatchStatus,
        game: &str,
        n: usize,
    ) -> Result<SetAnalysis, Refused> {
        a.analyse("m", status, (game, "tr"), 1, Seat::P1, moves(n))
            .await
    }

    #[tokio::test]
    async fn only_finished_pentago_sets_and_one_solver_run_at_a_time() {
        let a = Analyses::default();
        assert_eq!(
            ask(&a, MatchStatus::Playing, "pentago", 31).await,
            Err(Refused::NotFinished)
        );
        assert_eq!(
            ask(&a, MatchStatus::Finished, "quoridor", 0).await,
            Err(Refused::NotPentago)
        );
        // While the solver works on one request, one that needs it is told to come back...
        let held = a.running.lock().await;
        assert_eq!(
            ask(&a, MatchStatus::Finished, "pentago", 31).await,
            Err(Refused::Busy)
        );
        drop(held);
        // ... and once the set is known, it is answered even while the solver is busy.
        let first = ask(&a, MatchStatus::Finished, "pentago", 31).await.unwrap();
        assert_eq!(first.positions.len(), 32);
        assert_eq!(first.positions[30].verdict.value, Some("win"));
        assert!(first.positions[30]
            .verdict
            .keeps
            .contains(&"f2sw".to_string()));
        // Each request tries the positions the one before had no time for; within a few, every
        // position is known, and then a request needs no solver at all.
        let mut last = first;
        for _ in 0..6 {
            last = ask(&a, MatchStatus::Finished, "pentago", 31).await.unwrap();
        }
        let _held = a.running.lock().await;
        assert_eq!(
            ask(&a, MatchStatus::Finished, "pentago", 31).await,
            Ok(last)
        );
    }
}
