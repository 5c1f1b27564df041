//! A tournament and its matches, as its owner reaches them: the current round's matches are
//! created with the players' accounts seated (which tells them `your_match`), a match's state
//! is read, and forfeits and entered results end matches by decree.
//!
//! A match of a tournament is named `TOURNAMENT-rRbB` (round R, board B): its tournament is
//! known from its id, and a crash between storing a pairing and creating its matches is mended
//! by creating the missing ones.

use hakem_protocol::{CreateMatch, MatchState, PerSeat, Scope, Winner};
use hakem_round::Command;

use super::{Board, Tournament};
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
            rated: t.settings.rated,
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
    if let Some(room) = app.live(match_id) {
        return room.decree(command, before_play).await;
    }
    // In a cluster the board's room may run at another node.
    if let Some(cluster) = app.cluster() {
        if let Some(owner) = cluster.lease(match_id).await {
            if owner.incarnation != cluster.incarnation() {
                return crate::cluster::route::declare(
                    cluster,
                    &owner.incarnation,
                    match_id,
                    winner,
                    reason,
                    before_play,
                )
                .await;
            }
        }
    }
    if app.match_exists(match_id).await {
        Err("the match has ended".into())
    } else {
        Err("no such match".into())
    }
}
