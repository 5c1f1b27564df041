//! A player's match list: a match whose listing a crash lost is listed at the next start, and
//! the matches of a database from before the list existed are listed too.

use hakem_protocol::{AccountKind, CreateMatch, PerSeat};

use crate::tournament::fixtures::{restarted, server};

#[tokio::test]
async fn matches_a_crash_left_unlisted_are_listed_at_the_next_start() {
    let path = std::env::temp_dir().join(format!("hakem-listing-{}.db", std::process::id()));
    let _ = std::fs::remove_file(&path);
    let url = format!("sqlite://{}", path.display());
    let first = server(&url).await;
    first
        .create_account("ayse", AccountKind::Player)
        .await
        .unwrap();
    let mut ids = Vec::new();
    for _ in 0..3 {
        let mut create = CreateMatch::new("pente");
        create.accounts = PerSeat::new(Some("ayse".into()), None);
        ids.push(first.open_match(create, None).await.unwrap().match_id);
    }
    // A guest's match is nobody's.
    first
        .open_match(CreateMatch::new("pente"), None)
        .await
        .unwrap();
    assert_eq!(
        first
            .matches_of("ayse", None, None)
            .await
            .unwrap()
            .matches
            .len(),
        3
    );
    drop(first);

    // The listing of the last two is lost, as if the server died before writing it.
    let pool = sqlx::SqlitePool::connect(&url).await.unwrap();
    for id in &ids[1..] {
        sqlx::query("DELETE FROM match_players WHERE match_id = ?1")
            .bind(id)
            .execute(&pool)
            .await
            .unwrap();
    }
    pool.close().await;

    let (second, _) = restarted(&url).await;
    let listed = second.matches_of("ayse", None, None).await.unwrap().matches;
    let mut got: Vec<&str> = listed.iter().map(|m| m.match_id.as_str()).collect();
    got.sort_unstable();
    let mut expected: Vec<&str> = ids.iter().map(String::as_str).collect();
    expected.sort_unstable();
    assert_eq!(got, expected, "all three");
    let keys: Vec<(Option<u64>, &str)> = listed
        .iter()
        .map(|m| (m.created_ms, m.match_id.as_str()))
        .collect();
    assert!(
        keys.windows(2).all(|w| w[0] > w[1]),
        "newest first: {keys:?}"
    );
    let _ = std::fs::remove_file(&path);
}
