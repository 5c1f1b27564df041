//! Ratings of player accounts: Glicko-2 in one pool per game ([`hakem_round::rating`]). A
//! rated round changes its two players' ratings once, stored before anyone reads the new
//! figure; a round that ended while its rating could not be stored is rated at the next start.

use dashmap::DashMap;
use hakem_protocol::{PlayerProfile, RatingView, RoundResult, Winner};
use hakem_round::rating::{Game, Rating};

use crate::room::Rated;
use crate::store::RatedPlayer;
use crate::App;

/// Every account's rating in every pool it has played in.
#[derive(Default)]
pub struct Ratings {
    by_account: DashMap<String, Vec<(String, Rating)>>,
}

/// Rated rounds a profile lists.
const HISTORY: u32 = 100;

impl Ratings {
    fn get(&self, account: &str, pool: &str) -> Rating {
        self.by_account
            .get(account)
            .and_then(|pools| pools.iter().find(|(p, _)| p == pool).map(|(_, r)| *r))
            .unwrap_or_default()
    }

    fn set(&self, account: &str, pool: &str, rating: Rating) {
        let mut pools = self.by_account.entry(account.to_string()).or_default();
        match pools.iter_mut().find(|(p, _)| p == pool) {
            Some((_, r)) => *r = rating,
            None => pools.push((pool.to_string(), rating)),
        }
    }

    /// Loads the stored ratings.
    pub async fn load(app: &App) -> Result<usize, String> {
        let Some(store) = app.store() else {
            return Ok(0);
        };
        let all = store.ratings(None).await.map_err(|e| e.to_string())?;
        for (account, pool, rating) in &all {
            app.ratings.set(account, pool, *rating);
        }
        Ok(all.len())
    }

    /// `account`'s page: its ratings and its latest rated rounds, as stored. The rounds are
    /// read first, so that a round listed always has its rating in the figures.
    pub async fn profile(app: &App, account: &str) -> Option<Result<PlayerProfile, String>> {
        let kind = app.accounts.kind_of(account)?;
        let (ratings, history) = match app.store() {
            Some(store) => {
                let read = async {
                    let history = store.rating_history(account, HISTORY).await?;
                    let ratings = store.ratings(Some(account)).await?;
                    Ok::<_, crate::store::StoreError>((ratings, history))
                };
                match read.await {
                    Ok((ratings, history)) => (
                        ratings.into_iter().map(|(_, pool, r)| (pool, r)).collect(),
                        history,
                    ),
                    Err(e) => return Some(Err(e.to_string())),
                }
            }
            None => (
                app.ratings
                    .by_account
                    .get(account)
                    .map(|pools| pools.clone())
                    .unwrap_or_default(),
                Vec::new(),
            ),
        };
        let ratings = ratings
            .into_iter()
            .map(|(pool, r)| (pool, RatingView::from(&r)))
            .collect();
        Some(Ok(PlayerProfile {
            name: account.to_string(),
            kind,
            ratings,
            history,
        }))
    }
}

/// Rates a round that ended: each player against the other's rating before it.
pub async fn rate(app: &App, match_id: &str, rated: &Rated, result: &RoundResult) {
    let score_p1 = match result.winner {
        Winner::P1 => 1.0,
        Winner::P2 => 0.0,
        Winner::Draw => 0.5,
    };
    let (a, b) = (&rated.accounts.p1, &rated.accounts.p2);
    let (before_a, before_b) = (
        app.ratings.get(a, &rated.pool),
        app.ratings.get(b, &rated.pool),
    );
    let players = [
        RatedPlayer {
            account: a.clone(),
            score: score_p1,
            after: before_a.after(&[Game {
                opponent: before_b,
                score: score_p1,
            }]),
        },
        RatedPlayer {
            account: b.clone(),
            score: 1.0 - score_p1,
            after: before_b.after(&[Game {
                opponent: before_a,
                score: 1.0 - score_p1,
            }]),
        },
    ];
    if let Some(store) = app.store() {
        match store
            .save_rated_round(match_id, &rated.pool, &players, crate::wall_clock_ms())
            .await
        {
            Ok(true) => {}
            Ok(false) => return,
            Err(e) => {
                // Rated at the next start (the round is stored, its rating is not).
                tracing::error!(%match_id, error = %e, "rating not stored");
                return;
            }
        }
    }
    for p in &players {
        app.ratings.set(&p.account, &rated.pool, p.after);
    }
    tracing::info!(%match_id, pool = %rated.pool, p1 = %a, p2 = %b, "round rated");
}

/// Rates the rounds that ended before the server stopped and were not rated then.
pub async fn catch_up(app: &App) -> Result<usize, String> {
    let Some(store) = app.store() else {
        return Ok(0);
    };
    let ids = store.unrated_finished().await.map_err(|e| e.to_string())?;
    let mut count = 0;
    for id in ids {
        let Ok(Some(stored)) = store.load(&id).await else {
            continue;
        };
        let Ok((spec, replayed)) = crate::room::replay(stored, None) else {
            continue;
        };
        let round = replayed.round;
        // As the room decides at the round's end: rated only if something was played.
        if !round.was_played() {
            // Looked at once.
            store.not_rated(&id).await.map_err(|e| e.to_string())?;
            continue;
        }
        let (Some(rated), Some(result)) =
            (Rated::of(round.config(), &spec.accounts), round.result())
        else {
            continue;
        };
        rate(app, &id, &rated, result).await;
        count += 1;
    }
    Ok(count)
}

#[cfg(test)]
mod tests {
    use hakem_protocol::{AccountKind, CreateMatch, PerSeat, Scope, Winner};
    use hakem_round::rating::START;
    use hakem_round::Command;

    use super::*;
    use crate::tournament::fixtures::{restarted, server};

    #[tokio::test]
    async fn a_round_that_ended_unrated_is_rated_at_the_next_start_and_only_once() {
        let path = std::env::temp_dir().join(format!("hakem-ratings-{}.db", std::process::id()));
        let _ = std::fs::remove_file(&path);
        let url = format!("sqlite://{}", path.display());

        // The first server never listens for finished rounds: as if it died right after the
        // round's last event was stored, before its rating was.
        let first = server(&url).await;
        for name in ["ayse", "bora"] {
            first
                .create_account(name, AccountKind::Player)
                .await
                .unwrap();
        }
        let mut create = CreateMatch::new("pente");
        create.sets = 1;
        create.rated = true;
        create.accounts = PerSeat::new(Some("ayse".into()), Some("bora".into()));
        let created = first.open_match(create, None).await.unwrap();
        // The arbiter decides the one set: a set was played, so the round is rated.
        let declare = Command::Declare {
            scope: Scope::Set,
            winner: Winner::P2,
            reason: "test".into(),
        };
        let room = first.live(&created.match_id).unwrap();
        room.decree(Command::StartSet, false).await.unwrap();
        room.decree(declare, false).await.unwrap();
        let profile = Ratings::profile(&first, "bora").await.unwrap().unwrap();
        assert!(profile.ratings.is_empty());
        drop(room);
        drop(first);

        for start in 0..2 {
            let (next, _) = restarted(&url).await;
            let bora = Ratings::profile(&next, "bora").await.unwrap().unwrap();
            let expected = START.after(&[Game {
                opponent: START,
                score: 1.0,
            }]);
            assert_eq!(
                bora.ratings["pente"].rating, expected.rating,
                "start {start}"
            );
            assert_eq!(bora.ratings["pente"].rounds, 1, "start {start}: rated once");
            assert_eq!(bora.history.len(), 1, "start {start}");
            assert_eq!(bora.history[0].match_id, created.match_id);
        }
        let _ = std::fs::remove_file(&path);
    }
}
