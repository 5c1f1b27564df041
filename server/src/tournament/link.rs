//! A tournament and its matches: the current round's matches are created with the players'
//! accounts seated (which tells them `your_match`), each finished match's result is recorded,
//! forfeits end their matches by decree, and at start every tournament catches up with what
//! happened to its matches while nobody was listening.
//!
//! A match of a tournament is named `TOURNAMENT-rRbB` (round R, board B): its tournament is
//! known from its id, and a crash between storing a pairing and creating its matches is mended
//! by creating the missing ones.

use hakem_protocol::{CreateMatch, MatchState, PerSeat, RoundResult, Scope, Winner};
use hakem_round::Command;

use super::{apply, Board, Change, Tournament};
use crate::{App, TournamentBoard};

/// The tournament of a match: tournament ids have no `-`, so it is what comes before `-r`.
pub(super) fn tournament_of(match_id: &str) -> Option<&str> {
    match_id.split_once("-r").map(|(id, _)| id)
}

/// Creates the matches of the current round that do not exist yet.
pub(super) async fn open_matches(app: &App, t: &Tournament) {
    let boards: Vec<Board> = t.open_boards().cloned().collect();
    for board in boards {
        if app.match_exists(&board.match_id).await {
            continue;
        }
        let (a, b) = (
            &t.players[board.p1 as usize - 1],
            &t.players[board.p2 as usize - 1],
        );
        let create = CreateMatch {
            game: t.settings.game.clone(),
            variant: Some(t.settings.variant.clone()),
            sets: t.settings.sets,
            clock: t.settings.clock,
            warnings_limit: t.settings.warnings_limit,
            players: PerSeat::new(a.name(), b.name()),
            accounts: PerSeat::new(Some(a.account.clone()), Some(b.account.clone())),
            house_bot: None,
            spectator_delay: t.settings.spectator_delay,
        };
        let assigned = TournamentBoard {
            tournament: t.id.clone(),
            match_id: board.match_id.clone(),
            arbiter_token: t.arbiter_token.clone(),
        };
        let opened = app.open_match(create, Some(assigned)).await;
        if let Err(e) = opened {
            // Tried again at the next pairing command and at the next start.
            tracing::error!(match_id = %board.match_id, error = ?e, "tournament match not created");
        }
    }
}

/// The spectator's state of a match, if it exists.
pub(super) async fn snapshot(app: &App, match_id: &str) -> Option<MatchState> {
    app.match_state(match_id).await
}

/// Ends a forfeited board's match by the arbiter's decision (a draw for a double forfeit);
/// with `before_play`, only if no set has started.
pub(super) async fn end_by_forfeit(
    app: &App,
    match_id: &str,
    winner: Winner,
    before_play: bool,
) -> Result<(), String> {
    let reason = match winner {
        Winner::Draw => "double forfeit: neither player showed up",
        _ => "forfeit: a player did not show up",
    };
    end_by_decree(app, match_id, winner, reason, before_play).await
}

/// Ends a board's match by the arbiter's decision, for `reason`; with `before_play`, only if
/// no set has started.
pub(super) async fn end_by_decree(
    app: &App,
    match_id: &str,
    winner: Winner,
    reason: &str,
    before_play: bool,
) -> Result<(), String> {
    let command = Command::Declare {
        scope: Scope::Round,
        winner,
        reason: reason.to_string(),
    };
    match app.live(match_id) {
        Some(room) => room.decree(command, before_play).await,
        None if app.match_exists(match_id).await => Err("the match has ended".into()),
        None => Err("no such match".into()),
    }
}

/// A room reports the end of its round: the result goes into its tournament.
pub async fn match_finished(app: &App, match_id: &str, result: &RoundResult) {
    let Some(id) = tournament_of(match_id) else {
        return;
    };
    let Ok(handle) = app.tournaments.get(id) else {
        return;
    };
    {
        let mut t = handle.lock().await;
        if !t.open_boards().any(|b| b.match_id == match_id) {
            // Decided already (a forfeit), or reported twice.
            return;
        }
        let recorded = apply(app, &mut t, |t| Ok(t.record(match_id, result))).await;
        if let Err(e) = recorded {
            // Picked up again by the next `pair_next`, or at the next start.
            tracing::error!(%match_id, error = ?e, "result not recorded");
            return;
        }
    }
    after_result(app, id).await;
}

/// With automatic pairing, a complete round is followed by the next one at once (and a round
/// that is complete as soon as it is paired, everyone having a bye, by the one after it).
pub(super) async fn after_result(app: &App, id: &str) {
    let Ok(handle) = app.tournaments.get(id) else {
        return;
    };
    let mut t = handle.lock().await;
    while t.wants_pairing() {
        match apply(app, &mut t, super::pair_off_the_runtime).await {
            Ok(round) => tracing::info!(tournament = %id, round, "round paired automatically"),
            Err(e) => {
                tracing::warn!(tournament = %id, error = ?e, "next round not paired");
                return;
            }
        }
    }
}

/// Loads every stored tournament and brings it up to date with its matches; returns how many
/// were loaded.
pub async fn restore(app: &App) -> Result<usize, String> {
    let Some(store) = app.store() else {
        return Ok(0);
    };
    let mut count = 0;
    for (id, state) in store.tournaments().await.map_err(|e| e.to_string())? {
        let mut t: Tournament = match serde_json::from_str(&state) {
            Ok(t) => t,
            Err(e) => {
                tracing::error!(tournament = %id, error = %e, "tournament not restored");
                continue;
            }
        };
        // The changes since the snapshot, in order. One that cannot be read or applied leaves
        // the tournament out (logged, its rows untouched) rather than running it from a state
        // it never had, or storing new changes over the ones not replayed.
        let changes = store
            .tournament_changes(&id, t.changes_applied)
            .await
            .map_err(|e| e.to_string())?;
        let mut replayed = Ok(());
        for line in changes {
            replayed = serde_json::from_str::<Change>(&line)
                .map_err(|e| e.to_string())
                .and_then(|change| t.replay(&change).map_err(|r| format!("{r:?}")));
            if let Err(e) = &replayed {
                tracing::error!(tournament = %id, change = %line, error = %e, "tournament change not replayed: the tournament is not loaded");
                break;
            }
        }
        if replayed.is_err() {
            continue;
        }
        app.tournaments.insert(t);
        catch_up(app, &id).await;
        count += 1;
    }
    Ok(count)
}

/// Creates the current round's missing matches, ends those decided by forfeit that still run,
/// and records the results of those that ended while the tournament was not listening.
pub(super) async fn catch_up(app: &App, id: &str) {
    let Ok(handle) = app.tournaments.get(id) else {
        return;
    };
    let (open, forfeited) = {
        let t = handle.lock().await;
        open_matches(app, &t).await;
        let open: Vec<String> = t.open_boards().map(|b| b.match_id.clone()).collect();
        let forfeited: Vec<(String, Winner)> = t
            .forfeited_boards()
            .map(|(b, winner)| (b.match_id.clone(), winner))
            .collect();
        (open, forfeited)
    };
    for (match_id, winner) in forfeited {
        // The tournament's decision stands; its match was not ended before the server stopped.
        if app.is_live(&match_id) {
            if let Err(e) = end_by_forfeit(app, &match_id, winner, false).await {
                tracing::warn!(%match_id, error = %e, "forfeit not applied to the match");
            }
        }
    }
    for match_id in open {
        if let Some(result) = snapshot(app, &match_id).await.and_then(|s| s.round) {
            match_finished(app, &match_id, &result).await;
        }
    }
    after_result(app, id).await;
}
