//! The tournament's owner: commands from many callers at once are taken one at a time, each
//! stored before it is answered, and the owner ends with the server.

use std::time::Duration;

use super::fixtures::{create, organizer, player, restarted, server};
use crate::tournament::{self, Caller};
use crate::{App, Limits, RoomSettings};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn commands_sent_at_once_are_taken_one_at_a_time_and_all_stored() {
    let path = std::env::temp_dir().join(format!("hakem-owner-{}.db", std::process::id()));
    let _ = std::fs::remove_file(&path);
    let url = format!("sqlite://{}", path.display());
    let app = server(&url).await;
    let id = tournament::create(&app, create(&["Ak", "Bal"]))
        .await
        .unwrap()
        .id;

    // Thirty late entries from thirty callers at once, and a withdrawal by a stranger.
    let mut entries = Vec::new();
    for i in 0..30 {
        let (app, id) = (app.clone(), id.clone());
        entries.push(tokio::spawn(async move {
            let name = format!("Player{i:02}");
            tournament::add_players(&app, &id, organizer(), vec![player(&name)]).await
        }));
    }
    let stranger = Caller {
        account: Some("nobody".into()),
        ..Caller::default()
    };
    let refused = tournament::withdraw(&app, &id, stranger, 1)
        .await
        .unwrap_err();
    assert_eq!(refused.code, hakem_protocol::ErrorCode::Forbidden);
    let mut accounts = Vec::new();
    for entry in entries {
        let entered = entry.await.unwrap().expect("every entry is taken");
        assert_eq!(entered.len(), 1);
        accounts.push(entered[0].account.clone());
    }
    accounts.sort();
    accounts.dedup();
    assert_eq!(accounts.len(), 30, "each entry has an account of its own");

    let view = app.tournaments.view(&id).unwrap();
    assert_eq!(view.players.len(), 32);
    let mut numbers: Vec<u32> = view.players.iter().map(|p| p.id).collect();
    numbers.sort_unstable();
    assert_eq!(numbers, (1..=32).collect::<Vec<u32>>());
    assert!(view.players.iter().all(|p| p.withdrawn_from.is_none()));

    // What was answered is what was stored: a server started on the same store has it all.
    let started = tournament::start(&app, &id, organizer(), None)
        .await
        .unwrap();
    assert_eq!(started.pairings.len(), 1);
    drop(app);
    let (again, tournaments) = restarted(&url).await;
    assert_eq!(tournaments, 1);
    let restored = again.tournaments.view(&id).unwrap();
    assert_eq!(
        serde_json::to_value(&restored.players).unwrap(),
        serde_json::to_value(&started.players).unwrap()
    );
    assert_eq!(
        serde_json::to_value(&restored.pairings).unwrap(),
        serde_json::to_value(&started.pairings).unwrap()
    );
    let _ = std::fs::remove_file(&path);
}

#[tokio::test]
async fn the_owner_ends_with_the_server() {
    let app = App::new(
        "organizer".into(),
        None,
        Limits::default(),
        RoomSettings::default(),
    );
    let id = tournament::create(&app, create(&["Ak", "Bal", "Can"]))
        .await
        .unwrap()
        .id;
    let mut views = app.tournaments.watch(&id).unwrap();
    drop(app);
    // The owner holds the sending side of its views: they end when it does.
    let ended = tokio::time::timeout(Duration::from_secs(10), views.changed()).await;
    assert!(
        matches!(ended, Ok(Err(_))),
        "the owner task is gone once the server is"
    );
}
