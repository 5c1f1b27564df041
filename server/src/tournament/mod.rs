//! Swiss tournaments on the server: the registry of live tournaments, the organizer's and the
//! arbiter's commands, and the link to matches (a tournament creates its round's matches with
//! its players' accounts seated, and records each result when the match's round ends).
//!
//! Every change is made on a copy, stored, and only then put in place and announced, as with
//! match events. One lock per tournament keeps its changes in order. A match of a tournament is
//! named `TOURNAMENT-rRbB` (round R, board B), so that a crash between storing a pairing and
//! creating its matches is mended at the next start by creating the missing ones.

mod model;

use std::sync::Arc;

use dashmap::DashMap;
use hakem_protocol::tournament::{
    ColourLot, CreateTournament, NewPlayer, PlayerToken, TournamentStatus, TournamentSummary,
    TournamentView,
};
use hakem_protocol::{AccountKind, CreateMatch, ErrorCode, PerSeat, RoundResult, Scope, Seat};
use tokio::sync::{oneshot, Mutex};

pub use model::{settings_of, Board, BoardResult, Refused, Tournament};

use crate::room::RoomCommand;
use crate::round::Command;
use crate::tokens::{new_id, new_token, same_token};
use crate::{App, CreateError};

#[derive(Default)]
pub struct Tournaments {
    by_id: DashMap<String, Arc<Mutex<Tournament>>>,
}

/// Why a tournament command was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    pub code: ErrorCode,
    pub message: String,
}

impl Failure {
    fn new(code: ErrorCode, message: impl Into<String>) -> Failure {
        Failure {
            code,
            message: message.into(),
        }
    }
}

impl From<Refused> for Failure {
    fn from(refused: Refused) -> Failure {
        match refused {
            Refused::Invalid(message) => Failure::new(ErrorCode::BadRequest, message),
            Refused::NoPairing => Failure::new(
                ErrorCode::NoPairing,
                "the pairing system finds no valid pairing for the next round",
            ),
        }
    }
}

impl From<CreateError> for Failure {
    fn from(e: CreateError) -> Failure {
        match e {
            CreateError::Invalid(message) => Failure::new(ErrorCode::BadRequest, message),
            CreateError::Store(message) => Failure::new(ErrorCode::Internal, message),
        }
    }
}

/// Who sends a tournament command.
#[derive(Debug, Clone, Copy, Default)]
pub struct Caller<'a> {
    pub organizer: bool,
    /// The account the connection speaks for.
    pub account: Option<&'a str>,
    /// The tournament's arbiter token, if the message carried one.
    pub arbiter_token: Option<&'a str>,
}

impl Caller<'_> {
    fn arbitrates(&self, t: &Tournament) -> bool {
        self.organizer
            || self
                .arbiter_token
                .is_some_and(|token| same_token(&t.arbiter_token, token))
    }

    /// The arbiter, or the player `player` themselves.
    fn speaks_for(&self, t: &Tournament, player: u32) -> bool {
        self.arbitrates(t)
            || self
                .account
                .is_some_and(|account| t.id_of_account(account) == Some(player))
    }
}

fn forbidden() -> Failure {
    Failure::new(
        ErrorCode::Forbidden,
        "only the organizer or the tournament's arbiter can do that",
    )
}

/// The tournament a match belongs to: the part of its id before the first `-`.
fn tournament_of(match_id: &str) -> Option<&str> {
    match_id.split_once("-r").map(|(id, _)| id)
}

/// What `create_tournament` answers.
pub struct Created {
    pub id: String,
    pub arbiter_token: String,
    pub players: Vec<PlayerToken>,
}

impl Tournaments {
    fn get(&self, id: &str) -> Result<Arc<Mutex<Tournament>>, Failure> {
        self.by_id
            .get(id)
            .map(|entry| entry.value().clone())
            .ok_or_else(|| {
                Failure::new(
                    ErrorCode::UnknownTournament,
                    format!("no tournament {id:?}"),
                )
            })
    }

    pub async fn view(&self, id: &str) -> Result<TournamentView, Failure> {
        Ok(self.get(id)?.lock().await.view())
    }

    pub async fn trf(&self, id: &str) -> Result<String, Failure> {
        Ok(self.get(id)?.lock().await.trf())
    }

    /// Every tournament, oldest first.
    pub async fn summaries(&self) -> Vec<TournamentSummary> {
        let all: Vec<_> = self.by_id.iter().map(|e| e.value().clone()).collect();
        let mut out = Vec::with_capacity(all.len());
        for handle in all {
            let t = handle.lock().await;
            out.push(TournamentSummary {
                id: t.id.clone(),
                name: t.settings.name.clone(),
                game: t.settings.game.clone(),
                variant: t.settings.variant.clone(),
                status: t.status,
                current_round: t.current_round(),
                rounds: t.settings.rounds,
                players: t.players.len() as u32,
                created_ms: t.created_ms,
            });
        }
        out.sort_by(|a, b| (a.created_ms, &a.id).cmp(&(b.created_ms, &b.id)));
        out
    }
}

async fn save(app: &App, t: &Tournament) -> Result<(), Failure> {
    let Some(store) = app.store() else {
        return Ok(());
    };
    let state = serde_json::to_string(t)
        .map_err(|e| Failure::new(ErrorCode::Internal, format!("cannot encode: {e}")))?;
    store
        .save_tournament(&t.id, &state, t.created_ms)
        .await
        .map_err(|e| {
            tracing::error!(tournament = %t.id, error = %e, "tournament not stored");
            Failure::new(
                ErrorCode::Internal,
                "the server could not store this change; nothing changed, try again",
            )
        })
}

/// The account a player plays with: the one named, which must exist, or a new one.
async fn account_for(
    app: &App,
    t: &mut Tournament,
    named: Option<String>,
) -> Result<(String, Option<String>), Failure> {
    match named {
        Some(name) if app.accounts.exists(&name) => Ok((name, None)),
        Some(name) => Err(Failure::new(
            ErrorCode::BadRequest,
            format!("no account {name:?}"),
        )),
        None => {
            let name = t.next_account_name();
            let token = app.create_account(&name, AccountKind::Player).await?;
            Ok((name, Some(token)))
        }
    }
}

/// `create_tournament` (the organizer only: the session checks).
pub async fn create(app: &App, create: CreateTournament) -> Result<Created, Failure> {
    let settings = settings_of(&create).map_err(|m| Failure::new(ErrorCode::BadRequest, m))?;
    let id = loop {
        let id = new_id();
        if !app.tournaments.by_id.contains_key(&id) {
            break id;
        }
    };
    let mut t = Tournament::new(id.clone(), crate::wall_clock_ms(), settings, new_token());
    t.colour_lot = create
        .colour_lot
        .map(|seat| ColourLot { seat, drawn: false });
    let players = enter(app, &mut t, create.players).await?;
    save(app, &t).await?;
    let created = Created {
        id: id.clone(),
        arbiter_token: t.arbiter_token.clone(),
        players,
    };
    tracing::info!(tournament = %id, players = t.players.len(), "tournament created");
    app.tournaments.by_id.insert(id, Arc::new(Mutex::new(t)));
    Ok(created)
}

/// Enters `players` into `t`, making accounts for those without one; returns their numbers
/// (after all of them are in: before the start, numbers follow the alphabet) and tokens.
/// Every name is checked on a copy before any account is made, so that a refusal leaves
/// nothing behind.
async fn enter(
    app: &App,
    t: &mut Tournament,
    players: Vec<NewPlayer>,
) -> Result<Vec<PlayerToken>, Failure> {
    let mut trial = t.clone();
    for (i, player) in players.iter().enumerate() {
        if let Some(name) = &player.account {
            if !app.accounts.exists(name) {
                return Err(Failure::new(
                    ErrorCode::BadRequest,
                    format!("player {}: no account {name:?}", i + 1),
                ));
            }
        }
        let account = player
            .account
            .clone()
            .unwrap_or_else(|| format!("{}-new{i}", t.id));
        trial
            .add_player(&player.surname, &player.given, account)
            .map_err(|r| {
                let Failure { code, message } = Failure::from(r);
                Failure::new(code, format!("player {}: {message}", i + 1))
            })?;
    }
    let mut accounts = Vec::with_capacity(players.len());
    for player in players {
        let (account, token) = account_for(app, t, player.account).await?;
        t.add_player(&player.surname, &player.given, account.clone())?;
        accounts.push((account, token));
    }
    let mut entered: Vec<PlayerToken> = accounts
        .into_iter()
        .filter_map(|(account, token)| {
            let id = t.id_of_account(&account)?;
            Some(PlayerToken {
                id,
                name: t.players[id as usize - 1].name(),
                account,
                token,
            })
        })
        .collect();
    entered.sort_by_key(|p| p.id);
    Ok(entered)
}

/// More players (late entries once the tournament runs).
pub async fn add_players(
    app: &App,
    id: &str,
    caller: Caller<'_>,
    players: Vec<NewPlayer>,
) -> Result<Vec<PlayerToken>, Failure> {
    let handle = app.tournaments.get(id)?;
    let mut t = handle.lock().await;
    if !caller.arbitrates(&t) {
        return Err(forbidden());
    }
    if players.is_empty() {
        return Err(Failure::new(ErrorCode::BadRequest, "no players to add"));
    }
    let mut next = t.clone();
    let entered = enter(app, &mut next, players).await?;
    save(app, &next).await?;
    *t = next;
    tracing::info!(tournament = %id, players = entered.len(), "players entered");
    Ok(entered)
}

/// Runs `change` on a copy of the tournament, stores it, puts it in place, and creates the
/// current round's matches if it paired one.
async fn change<T>(
    app: &App,
    id: &str,
    allowed: impl FnOnce(&Tournament) -> bool,
    change: impl FnOnce(&mut Tournament) -> Result<T, Refused>,
) -> Result<(T, TournamentView), Failure> {
    let handle = app.tournaments.get(id)?;
    let mut t = handle.lock().await;
    if !allowed(&t) {
        return Err(forbidden());
    }
    let mut next = t.clone();
    let out = change(&mut next)?;
    save(app, &next).await?;
    *t = next;
    open_matches(app, &t).await;
    Ok((out, t.view()))
}

/// Ranks the players, settles the colour lot (given now, given at creation, or else drawn
/// now) and pairs round 1.
pub async fn start(
    app: &App,
    id: &str,
    caller: Caller<'_>,
    lot: Option<Seat>,
) -> Result<TournamentView, Failure> {
    let given = lot.map(|seat| ColourLot { seat, drawn: false });
    let (round, view) = change(
        app,
        id,
        |t| caller.arbitrates(t),
        |t| {
            let lot = given.or(t.colour_lot).unwrap_or_else(|| ColourLot {
                seat: draw_lot(),
                drawn: true,
            });
            t.start(lot)?;
            t.pair_next()
        },
    )
    .await?;
    tracing::info!(tournament = %id, round, "tournament started");
    Ok(view)
}

/// A fair coin from the operating system's generator.
fn draw_lot() -> Seat {
    if new_token().as_bytes()[0] % 2 == 0 {
        Seat::P1
    } else {
        Seat::P2
    }
}

pub async fn pair_next(app: &App, id: &str, caller: Caller<'_>) -> Result<TournamentView, Failure> {
    let (round, view) = change(app, id, |t| caller.arbitrates(t), Tournament::pair_next).await?;
    tracing::info!(tournament = %id, round, "round paired");
    Ok(view)
}

pub async fn withdraw(
    app: &App,
    id: &str,
    caller: Caller<'_>,
    player: u32,
) -> Result<TournamentView, Failure> {
    let ((), view) = change(
        app,
        id,
        |t| caller.speaks_for(t, player),
        |t| t.withdraw(player),
    )
    .await?;
    Ok(view)
}

pub async fn request_bye(
    app: &App,
    id: &str,
    caller: Caller<'_>,
    player: u32,
    round: u32,
) -> Result<TournamentView, Failure> {
    let ((), view) = change(
        app,
        id,
        |t| caller.speaks_for(t, player),
        |t| t.request_bye(player, round),
    )
    .await?;
    Ok(view)
}

/// The arbiter's forfeit for a no-show: recorded, then the match is ended by decree.
pub async fn forfeit(
    app: &App,
    id: &str,
    caller: Caller<'_>,
    player: u32,
) -> Result<TournamentView, Failure> {
    let (outcome, _) = change(app, id, |t| caller.arbitrates(t), |t| t.forfeit(player)).await?;
    if let Some(winner) = outcome.end_with {
        let command = Command::Declare {
            scope: Scope::Round,
            winner,
            reason: format!("forfeit: player {player} did not show up"),
        };
        if let Err(e) = decree(app, &outcome.match_id, command).await {
            // The tournament's record stands; the match may have ended on its own meanwhile.
            tracing::warn!(match_id = %outcome.match_id, error = %e, "forfeit not applied to the match");
        }
    }
    // A forfeit may complete the round.
    after_result(app, id).await;
    app.tournaments.view(id).await
}

async fn decree(app: &App, match_id: &str, command: Command) -> Result<(), String> {
    let room = app
        .room(match_id)
        .await
        .ok_or_else(|| format!("no match {match_id}"))?;
    let (reply, answer) = oneshot::channel();
    room.tx
        .send(RoomCommand::Decree { command, reply })
        .await
        .map_err(|_| "the room has stopped".to_string())?;
    answer
        .await
        .map_err(|_| "the room has stopped".to_string())?
}

/// Creates the matches of the current round that do not exist yet.
async fn open_matches(app: &App, t: &Tournament) {
    let boards: Vec<Board> = t.open_boards().cloned().collect();
    for board in boards {
        if app.room(&board.match_id).await.is_some() {
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
        };
        let opened = app
            .open_match(
                create,
                Some(board.match_id.clone()),
                Some(t.arbiter_token.clone()),
            )
            .await;
        if let Err(e) = opened {
            // Left for the next start (or the next change) to try again.
            tracing::error!(match_id = %board.match_id, error = ?e, "tournament match not created");
        }
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
    let mut t = handle.lock().await;
    let mut next = t.clone();
    if !next.record(match_id, result) {
        return;
    }
    if save(app, &next).await.is_err() {
        return;
    }
    *t = next;
    drop(t);
    after_result(app, id).await;
}

/// With automatic pairing, a complete round is followed by the next one at once.
async fn after_result(app: &App, id: &str) {
    let Ok(handle) = app.tournaments.get(id) else {
        return;
    };
    let mut t = handle.lock().await;
    if !t.wants_pairing() {
        return;
    }
    let mut next = t.clone();
    match next.pair_next() {
        Ok(round) => {
            if save(app, &next).await.is_ok() {
                *t = next;
                open_matches(app, &t).await;
                tracing::info!(tournament = %id, round, "round paired automatically");
            }
        }
        Err(e) => tracing::warn!(tournament = %id, error = ?e, "next round not paired"),
    }
}

/// Loads every stored tournament and brings it up to date with its matches.
pub async fn restore(app: &App) -> Result<usize, String> {
    let Some(store) = app.store() else {
        return Ok(0);
    };
    let all = store.tournaments().await.map_err(|e| e.to_string())?;
    let count = all.len();
    for (id, state) in all {
        let t: Tournament = match serde_json::from_str(&state) {
            Ok(t) => t,
            Err(e) => {
                tracing::error!(tournament = %id, error = %e, "tournament not restored");
                continue;
            }
        };
        app.tournaments
            .by_id
            .insert(id.clone(), Arc::new(Mutex::new(t)));
        catch_up(app, &id).await;
    }
    Ok(count)
}

/// Creates the current round's missing matches and records the results of those that ended
/// while nobody was listening.
async fn catch_up(app: &App, id: &str) {
    let Ok(handle) = app.tournaments.get(id) else {
        return;
    };
    let open: Vec<String> = {
        let t = handle.lock().await;
        if t.status != TournamentStatus::Running {
            return;
        }
        open_matches(app, &t).await;
        t.open_boards().map(|b| b.match_id.clone()).collect()
    };
    for match_id in open {
        let Some(room) = app.room(&match_id).await else {
            continue;
        };
        let (reply, answer) = oneshot::channel();
        if room.tx.send(RoomCommand::Snapshot { reply }).await.is_err() {
            continue;
        }
        if let Ok(state) = answer.await {
            if let Some(result) = state.round {
                match_finished(app, &match_id, &result).await;
            }
        }
    }
    after_result(app, id).await;
}
