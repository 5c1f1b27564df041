//! What the server's in-process tests start from: a server on a store, a tournament to
//! create, the organizer as caller.

use std::sync::Arc;

use hakem_protocol::tournament::{default_tiebreaks, CreateTournament, NewPlayer};
use hakem_protocol::Seat;

use crate::store::Store;
use crate::tournament::Caller;
use crate::{App, Limits, RoomSettings};

pub async fn server(url: &str) -> Arc<App> {
    let store = Store::open(url).await.expect("open the store");
    App::new(
        "organizer".into(),
        Some(store),
        Limits::default(),
        RoomSettings::default(),
    )
}

/// A server started on `url` as `hakem-server` starts: accounts, live matches, then the
/// tournaments and what came in while it was down; returns it and how many tournaments it
/// loaded.
pub async fn restarted(url: &str) -> (Arc<App>, usize) {
    let app = server(url).await;
    app.load_accounts().await.unwrap();
    app.restore_live_matches().await.unwrap();
    let tournaments = app.run_results().await.unwrap();
    (app, tournaments)
}

pub fn player(surname: &str) -> NewPlayer {
    NewPlayer {
        surname: surname.to_string(),
        given: String::new(),
        account: None,
    }
}

pub fn create(players: &[&str]) -> CreateTournament {
    CreateTournament {
        name: "Fixture".into(),
        game: "pente".into(),
        variant: None,
        sets: 1,
        clock: None,
        warnings_limit: 3,
        rounds: 3,
        pairing: Default::default(),
        edition: Default::default(),
        tiebreaks: default_tiebreaks(),
        players: players.iter().map(|s| player(s)).collect(),
        colour_lot: Some(Seat::P1),
        auto_pair: false,
        max_half_byes: 1,
        bye_points: hakem_protocol::Points::ONE,
        spectator_delay: None,
        rated: false,
    }
}

pub fn organizer() -> Caller {
    Caller {
        organizer: true,
        ..Caller::default()
    }
}
