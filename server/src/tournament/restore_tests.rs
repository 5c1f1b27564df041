//! A tournament brought up to date at start: a match result stored but never recorded by the
//! tournament (the server died in between) is recorded, and a match of the current round that
//! was never created (the server died between storing the pairing and creating it) is created.

use hakem_protocol::{MatchStatus, Scope, Winner};
use hakem_round::Command;

use super::fixtures::{create, organizer, restarted, server};
use crate::tournament;

#[tokio::test]
async fn a_tournament_catches_up_with_its_matches_at_start() {
    let path = std::env::temp_dir().join(format!("hakem-restore-{}.db", std::process::id()));
    let _ = std::fs::remove_file(&path);
    let url = format!("sqlite://{}", path.display());

    // The first server never listens for finished matches: as if it died right after a match
    // stored its last event, before the tournament heard of it.
    let first = server(&url).await;
    let created = tournament::create(&first, create(&["Ak", "Bal", "Can", "Dal"]))
        .await
        .unwrap();
    let id = created.id;
    let view = tournament::start(&first, &id, organizer(), None)
        .await
        .unwrap();
    let boards = view.pairings[0].boards.clone();
    assert_eq!(boards.len(), 2);
    let room = first.live(&boards[0].match_id).unwrap();
    let declare = Command::Declare {
        scope: Scope::Round,
        winner: Winner::P2,
        reason: "test".into(),
    };
    room.decree(declare, false).await.unwrap();
    assert_eq!(
        first.tournaments.view(&id).unwrap().pairings[0].boards[0].result,
        None
    );
    drop(first);

    // The second match's rows vanish, as if it had never been created.
    let pool = sqlx::SqlitePool::connect(&url).await.unwrap();
    for sql in [
        "DELETE FROM events WHERE match_id = ?1",
        "DELETE FROM events_recent WHERE match_id = ?1",
        "DELETE FROM matches WHERE id = ?1",
    ] {
        sqlx::query(sql)
            .bind(&boards[1].match_id)
            .execute(&pool)
            .await
            .unwrap();
    }
    pool.close().await;

    let (second, tournaments) = restarted(&url).await;
    assert_eq!(tournaments, 1);
    let view = second.tournaments.view(&id).unwrap();
    assert_eq!(view.pairings[0].boards[0].result.as_deref(), Some("0-1"));
    assert_eq!(view.pairings[0].boards[1].result, None);
    let recreated = second.live(&boards[1].match_id).unwrap();
    assert_eq!(recreated.summary().status, MatchStatus::Waiting);
    // Its players are seated by account again.
    let names = recreated.summary().players;
    let p1 = &view.players[boards[1].p1 as usize - 1].name;
    assert_eq!(&names.p1, p1);
    assert!(second.run_results().await.is_err(), "only once");
    let _ = std::fs::remove_file(&path);
}

#[tokio::test]
async fn a_change_that_cannot_be_replayed_leaves_the_tournament_out_untouched() {
    let path = std::env::temp_dir().join(format!("hakem-replay-{}.db", std::process::id()));
    let _ = std::fs::remove_file(&path);
    let url = format!("sqlite://{}", path.display());
    let first = server(&url).await;
    let created = tournament::create(&first, create(&["Ak", "Bal"]))
        .await
        .unwrap();
    drop(first);

    // A change written by something else: the server must not guess past it.
    let next = changes_of(&url, &created.id).await + 1;
    let pool = sqlx::SqlitePool::connect(&url).await.unwrap();
    sqlx::query("INSERT INTO tournament_changes (tournament, seq, change) VALUES (?1, ?2, ?3)")
        .bind(&created.id)
        .bind(next)
        .bind(r#"{"change":"withdrawn","player":99}"#)
        .execute(&pool)
        .await
        .unwrap();
    pool.close().await;

    let second = server(&url).await;
    second.load_accounts().await.unwrap();
    assert_eq!(second.run_results().await.unwrap(), 0);
    assert!(second.tournaments.view(&created.id).is_err());
    // Its rows are as they were, for someone to look at.
    assert_eq!(changes_of(&url, &created.id).await, next);
    let _ = std::fs::remove_file(&path);
}

/// How many changes of tournament `id` the database holds (numbered 1 to that).
async fn changes_of(url: &str, id: &str) -> i64 {
    let pool = sqlx::SqlitePool::connect(url).await.unwrap();
    let count = sqlx::query_scalar("SELECT COUNT(*) FROM tournament_changes WHERE tournament = ?1")
        .bind(id)
        .fetch_one(&pool)
        .await
        .unwrap();
    pool.close().await;
    count
}
