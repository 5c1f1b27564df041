//! Swiss tournaments on the server: the registry of live tournaments and the organizer's and
//! the arbiter's commands. [`model`] is the tournament as data; [`link`] ties it to its
//! matches.
//!
//! Every change is made on a copy, stored (as the model's [`Change`]s, with a snapshot now and
//! then), and only then put in place and announced, as with match events. One lock per
//! tournament keeps its changes in order.

mod link;
#[cfg(test)]
mod restore_tests;

use hakem_round::tournament as model;

use std::sync::Arc;

use dashmap::DashMap;
use hakem_protocol::tournament::{
    ColourLot, CreateTournament, NewPlayer, PlayerToken, RoundView, TournamentSummary,
    TournamentView,
};
use hakem_protocol::{AccountKind, ErrorCode, MatchStatus, Seat};
use tokio::sync::{watch, Mutex};

pub use link::{match_finished, restore};
pub use model::{settings_of, Board, BoardResult, Change, Refused, Tournament};

use crate::tokens::{new_id, new_token, same_token};
use crate::{App, CreateError};

#[derive(Default)]
pub struct Tournaments {
    by_id: DashMap<String, Arc<Entry>>,
}

/// A tournament's view as last stored, and the frame that tells a watcher of it, encoded once
/// for all of them.
pub struct Published {
    pub view: TournamentView,
    pub frame: axum::extract::ws::Utf8Bytes,
}

impl Published {
    fn of(t: &Tournament) -> Arc<Published> {
        let view = t.view();
        let frame = crate::outbox::encode(&hakem_protocol::ServerMessage::Tournament {
            re: None,
            view: Box::new(view.clone()),
        });
        Arc::new(Published { view, frame })
    }
}

/// One tournament: its one lock, and its latest view for those who read or watch it (reads
/// never wait behind a change being stored or a round being paired).
pub struct Entry {
    tournament: Mutex<Tournament>,
    view: watch::Sender<Arc<Published>>,
    created_ms: u64,
}

impl Entry {
    async fn lock(&self) -> tokio::sync::MutexGuard<'_, Tournament> {
        self.tournament.lock().await
    }
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

/// What `create_tournament` answers.
pub struct Created {
    pub id: String,
    pub arbiter_token: String,
    pub players: Vec<PlayerToken>,
}

impl Tournaments {
    fn insert(&self, t: Tournament) {
        let (view, _) = watch::channel(Published::of(&t));
        let id = t.id.clone();
        let entry = Entry {
            created_ms: t.created_ms,
            tournament: Mutex::new(t),
            view,
        };
        self.by_id.insert(id, Arc::new(entry));
    }

    /// The tournament's view now and after each change; only the latest view is kept, so a
    /// slow watcher skips to it.
    pub fn watch(&self, id: &str) -> Result<watch::Receiver<Arc<Published>>, Failure> {
        Ok(self.get(id)?.view.subscribe())
    }

    /// Tells the watchers of `t` its new view (after the change is stored).
    fn publish(&self, t: &Tournament) {
        // Kept current even when nobody watches: a new watcher starts from it.
        if let Some(entry) = self.by_id.get(&t.id) {
            entry.view.send_replace(Published::of(t));
        }
    }

    /// The arbiter token of the match's tournament, when `token` is that of an assistant
    /// arbiter who looks after the match's board: the assistant then joins as its arbiter.
    pub async fn assistant_credential(&self, match_id: &str, token: &str) -> Option<String> {
        let entry = self
            .by_id
            .get(link::tournament_of(match_id)?)?
            .value()
            .clone();
        let t = entry.lock().await;
        let board = t.board_number(match_id)?;
        t.assistants
            .iter()
            .any(|a| a.boards.contains(&board) && same_token(&a.token, token))
            .then(|| t.arbiter_token.clone())
    }

    fn get(&self, id: &str) -> Result<Arc<Entry>, Failure> {
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

    /// The tournament as last stored.
    pub fn view(&self, id: &str) -> Result<TournamentView, Failure> {
        Ok(self.get(id)?.view.borrow().view.clone())
    }

    pub async fn trf(&self, id: &str) -> Result<String, Failure> {
        Ok(self.get(id)?.lock().await.trf())
    }

    /// Every tournament, oldest first.
    pub fn summaries(&self) -> Vec<TournamentSummary> {
        let mut out: Vec<TournamentSummary> = self
            .by_id
            .iter()
            .map(|e| {
                let v = e.value().view.borrow().view.clone();
                TournamentSummary {
                    id: v.id.clone(),
                    name: v.settings.name.clone(),
                    game: v.settings.game.clone(),
                    variant: v.settings.variant.clone(),
                    status: v.status,
                    current_round: v.current_round,
                    rounds: v.settings.rounds,
                    players: v.players.len() as u32,
                    created_ms: e.value().created_ms,
                }
            })
            .collect();
        out.sort_by(|a, b| (a.created_ms, &a.id).cmp(&(b.created_ms, &b.id)));
        out
    }
}

/// Stores the changes made to `t` (the tournament as it is about to be, under its lock), then
/// tells its watchers.
async fn save(app: &App, t: &mut Tournament, created: bool) -> Result<(), Failure> {
    store(app, t, created).await?;
    app.tournaments.publish(t);
    Ok(())
}

/// A tournament's whole state is written again after this many changes, so that a restart
/// replays at most as many.
const SNAPSHOT_EVERY: u64 = 64;

async fn store(app: &App, t: &mut Tournament, created: bool) -> Result<(), Failure> {
    let first_seq = t.changes_applied + 1;
    let changes = t.take_changes();
    let Some(store) = app.store() else {
        return Ok(());
    };
    if changes.is_empty() && !created {
        return Ok(());
    }
    let encode =
        |e: serde_json::Error| Failure::new(ErrorCode::Internal, format!("cannot encode: {e}"));
    let lines: Vec<String> = changes
        .iter()
        .map(serde_json::to_string)
        .collect::<Result<_, _>>()
        .map_err(encode)?;
    // A snapshot at creation, and whenever the count of changes passes a multiple.
    let crossed = t.changes_applied / SNAPSHOT_EVERY != (first_seq - 1) / SNAPSHOT_EVERY;
    let snapshot = if created || crossed {
        Some(serde_json::to_string(&*t).map_err(encode)?)
    } else {
        None
    };
    store
        .save_tournament_changes(&t.id, t.created_ms, first_seq, &lines, snapshot.as_deref())
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
            // A name made before a failed change may exist already: never reuse one.
            let name = loop {
                let name = t.next_account_name();
                if !app.accounts.exists(&name) {
                    break name;
                }
            };
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
    save(app, &mut t, true).await?;
    let created = Created {
        id: id.clone(),
        arbiter_token: t.arbiter_token.clone(),
        players,
    };
    tracing::info!(tournament = %id, players = t.players.len(), "tournament created");
    app.tournaments.insert(t);
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
    save(app, &mut next, false).await?;
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
    let out = apply(app, &mut t, change).await?;
    // The view `save` published: computed once a change.
    let view = handle.view.borrow().view.clone();
    Ok((out, view))
}

/// The copy, store and swap steps of a change, under the caller's lock; a change that paired
/// a round also creates its matches.
async fn apply<T>(
    app: &App,
    t: &mut Tournament,
    change: impl FnOnce(&mut Tournament) -> Result<T, Refused>,
) -> Result<T, Failure> {
    let mut next = t.clone();
    let out = change(&mut next)?;
    save(app, &mut next, false).await?;
    let paired = next.current_round() != t.current_round();
    *t = next;
    if paired {
        link::open_matches(app, t).await;
    }
    Ok(out)
}

/// Pairs the next round without holding up the other tasks of a multi-threaded runtime
/// (pairing a large round takes a fraction of a second).
fn pair_off_the_runtime(t: &mut Tournament) -> Result<u32, Refused> {
    off_the_runtime(|| t.pair_next())
}

fn off_the_runtime<T>(work: impl FnOnce() -> T) -> T {
    match tokio::runtime::Handle::try_current().map(|h| h.runtime_flavor()) {
        Ok(tokio::runtime::RuntimeFlavor::MultiThread) => tokio::task::block_in_place(work),
        _ => work(),
    }
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
            pair_off_the_runtime(t)
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
    if !caller.arbitrates(&*app.tournaments.get(id)?.lock().await) {
        return Err(forbidden());
    }
    // Results a failed store write left unrecorded are picked up first.
    link::catch_up(app, id).await;
    let (round, view) = change(app, id, |t| caller.arbitrates(t), pair_off_the_runtime).await?;
    tracing::info!(tournament = %id, round, "round paired");
    if view
        .pairings
        .iter()
        .any(|r| r.round == round && r.search_stopped)
    {
        tracing::warn!(tournament = %id, round, "the pairing search stopped at its budget: check the pairing");
    }
    Ok(view)
}

/// What `add_assistant` answers: the assistant as named, with the token shown only now.
pub struct AssistantAdded {
    pub name: String,
    pub boards: Vec<u32>,
    pub token: String,
}

/// The chief arbiter names an assistant arbiter for some board numbers, in every round.
pub async fn add_assistant(
    app: &App,
    id: &str,
    caller: Caller<'_>,
    name: &str,
    boards: &[u32],
) -> Result<AssistantAdded, Failure> {
    let (added, _) = change(
        app,
        id,
        |t| caller.arbitrates(t),
        |t| {
            let a = t.add_assistant(name, boards, new_token())?;
            Ok(AssistantAdded {
                name: a.name.clone(),
                boards: a.boards.clone(),
                token: a.token.clone(),
            })
        },
    )
    .await?;
    tracing::info!(tournament = %id, boards = ?added.boards, "assistant arbiter named");
    Ok(added)
}

/// The next round as `pair_next` would pair it now, paired on a copy that is then dropped:
/// the arbiter sees the pairing before publishing it. Pairing is deterministic, so `pair_next`
/// publishes this pairing unless something changes in between.
pub async fn preview(app: &App, id: &str, caller: Caller<'_>) -> Result<RoundView, Failure> {
    if !caller.arbitrates(&*app.tournaments.get(id)?.lock().await) {
        return Err(forbidden());
    }
    link::catch_up(app, id).await;
    let mut trial = app.tournaments.get(id)?.lock().await.clone();
    let round = pair_off_the_runtime(&mut trial)?;
    trial
        .view()
        .pairings
        .into_iter()
        .find(|r| r.round == round)
        .ok_or_else(|| Failure::new(ErrorCode::Internal, "the paired round is missing"))
}

/// The arbiter enters a board's result (a board played over the board) or corrects one. A
/// result entered for a board still being played ends its match with that result; a
/// correction changes the tournament's result only.
pub async fn set_result(
    app: &App,
    id: &str,
    caller: Caller<'_>,
    round: u32,
    board: u32,
    result: &str,
) -> Result<TournamentView, Failure> {
    let result = BoardResult::parse(result).ok_or_else(|| {
        Failure::new(
            ErrorCode::BadRequest,
            format!("{result:?} is not a result: 1-0, 0-1, 1/2-1/2, +-, -+ or --"),
        )
    })?;
    let handle = app.tournaments.get(id)?;
    let mut t = handle.lock().await;
    if !caller.arbitrates(&t) {
        return Err(forbidden());
    }
    let (match_id, new) = apply(app, &mut t, |t| t.set_result(round, board, result)).await?;
    drop(t);
    tracing::info!(tournament = %id, round, board, result = result.text(), new, "result set by the arbiter");
    if new {
        let reason = format!("result {} entered by the arbiter", result.text());
        if let Err(e) = link::end_by_decree(app, &match_id, result.winner(), &reason, false).await {
            // Ended meanwhile (its own result stays in its record), or never opened.
            tracing::info!(%match_id, error = %e, "match not ended by the entered result");
        }
    }
    link::after_result(app, id).await;
    app.tournaments.view(id)
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

/// The arbiter's forfeit for a no-show. A match that has begun (a set started) or ended is not
/// a no-show: the arbiter decides it in the match, with `declare`. The forfeit is stored, then
/// the match is ended by decree if it still has not begun (again at the next start if the
/// server stops between); if it began meanwhile, the forfeit is taken back.
pub async fn forfeit(
    app: &App,
    id: &str,
    caller: Caller<'_>,
    player: u32,
    round: Option<u32>,
    double: bool,
) -> Result<TournamentView, Failure> {
    let handle = app.tournaments.get(id)?;
    let mut t = handle.lock().await;
    if !caller.arbitrates(&t) {
        return Err(forbidden());
    }
    let board = t.current_board(player, round)?.clone();
    let begun = || {
        Failure::new(
            ErrorCode::BadRequest,
            format!(
                "the match of player {player} has begun; the arbiter decides it there (declare)"
            ),
        )
    };
    if board.result.is_none() {
        if let Some(state) = link::snapshot(app, &board.match_id).await {
            if let Some(result) = &state.round {
                // Its end is on its way to the tournament: record it now.
                apply(app, &mut t, |t| Ok(t.record(&board.match_id, result))).await?;
                drop(t);
                link::after_result(app, id).await;
                return Err(Failure::new(
                    ErrorCode::BadRequest,
                    format!("the match of player {player} has ended; its result is recorded"),
                ));
            }
            if state.status != MatchStatus::Waiting || !state.sets.is_empty() {
                return Err(begun());
            }
        }
    }
    let outcome = apply(app, &mut t, |t| t.forfeit(player, round, double)).await?;
    if let Err(e) = link::end_by_forfeit(app, &outcome.match_id, outcome.end_with, true).await {
        tracing::info!(match_id = %outcome.match_id, error = %e, "forfeit taken back");
        apply(app, &mut t, |t| {
            t.undo_forfeit(&outcome.match_id);
            Ok(())
        })
        .await?;
        return Err(begun());
    }
    drop(t);
    // A forfeit may complete the round.
    link::after_result(app, id).await;
    app.tournaments.view(id)
}
