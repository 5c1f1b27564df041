//! Swiss tournaments on the server. Each tournament is owned by one task, as a room owns its
//! match ([`owner`]): it runs the organizer's and the arbiter's commands and the results of
//! its matches one at a time, and stores every change (as the model's [`Change`]s, with a
//! snapshot now and then) before putting it in place and announcing it. Everyone else reaches
//! it through its [`Handle`] and reads what it last published. [`model`] is the tournament as
//! data; [`link`] ties it to its matches.

#[cfg(test)]
pub(crate) mod fixtures;
mod link;
mod owner;
#[cfg(test)]
mod owner_tests;
#[cfg(test)]
mod restore_tests;

use hakem_round::tournament as model;

use std::sync::Arc;

use dashmap::DashMap;
use hakem_protocol::tournament::{
    ColourLot, CreateTournament, NewPlayer, PairingPreview, PlayerToken, RoundView,
    TournamentSummary, TournamentView,
};
use hakem_protocol::{AccountKind, ErrorCode, RoundResult, Seat};
use tokio::sync::{mpsc, oneshot, watch};

pub use model::{settings_of, Board, BoardResult, Change, Refused, Tournament};

use crate::tokens::{new_id, new_token, same_token};
use crate::{App, CreateError};
use owner::{Command, Owner};

#[derive(Default)]
pub struct Tournaments {
    by_id: DashMap<String, Handle>,
}

/// What a tournament's owner last stored: the tournament, its view, and the frame that tells a
/// watcher of it, encoded once for all of them. Reads and watchers use this and never wait on
/// the owner.
pub struct Published {
    pub view: TournamentView,
    pub frame: axum::extract::ws::Utf8Bytes,
    tournament: Arc<Tournament>,
}

impl Published {
    fn of(t: Arc<Tournament>) -> Arc<Published> {
        let view = t.view();
        let frame = crate::outbox::encode(&hakem_protocol::ServerMessage::Tournament {
            re: None,
            view: Box::new(view.clone()),
        });
        Arc::new(Published {
            view,
            frame,
            tournament: t,
        })
    }
}

/// The commands a tournament's owner has not taken yet: enough for a burst of arbiters and
/// players, after which askers wait their turn (each connection asks one thing at a time).
const MAILBOX: usize = 64;

/// The way to a tournament's owner, and what it last published.
#[derive(Clone)]
struct Handle {
    commands: mpsc::Sender<Command>,
    /// Results of its matches: unbounded so that a room never waits on a tournament (each
    /// match reports once).
    results: mpsc::UnboundedSender<(String, RoundResult)>,
    published: watch::Receiver<Arc<Published>>,
    created_ms: u64,
}

impl Handle {
    /// Asks the owner and waits for its answer.
    async fn ask<T>(&self, command: impl FnOnce(owner::Reply<T>) -> Command) -> Result<T, Failure> {
        let (reply, answer) = oneshot::channel();
        let gone = || Failure::new(ErrorCode::Internal, "the tournament is not running");
        self.commands
            .send(command(reply))
            .await
            .map_err(|_| gone())?;
        answer.await.map_err(|_| gone())?
    }

    fn tournament(&self) -> Arc<Tournament> {
        self.published.borrow().tournament.clone()
    }
}

/// Why a tournament command was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    pub code: ErrorCode,
    pub message: String,
    /// For `pairing_changed`: the pairing as it is now.
    pub preview: Option<Box<PairingPreview>>,
}

impl Failure {
    pub(crate) fn new(code: ErrorCode, message: impl Into<String>) -> Failure {
        Failure {
            code,
            message: message.into(),
            preview: None,
        }
    }
}

/// The identifier of a round's pairing: a digest of its number, its boards (number and both
/// players, in their seats) and its byes (player, kind, points). Two pairings with the same
/// identifier publish the same round.
pub fn pairing_id(round: &RoundView) -> String {
    use sha2::{Digest, Sha256};
    use std::fmt::Write as _;
    let mut text = format!("round {}\n", round.round);
    for b in &round.boards {
        let _ = writeln!(text, "board {} {} {}", b.board, b.p1, b.p2);
    }
    for bye in &round.byes {
        // The kind by its name on the wire (`half`), which stays as it is.
        let kind = serde_json::to_value(bye.kind).unwrap_or_default();
        let kind = kind.as_str().unwrap_or_default();
        let _ = writeln!(text, "bye {} {kind} {}", bye.player, bye.points.halves);
    }
    let digest = Sha256::digest(text.as_bytes());
    // 64 bits tell apart any two pairings an arbiter will ever compare.
    digest[..8].iter().map(|b| format!("{b:02x}")).collect()
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
#[derive(Debug, Clone, Default)]
pub struct Caller {
    pub organizer: bool,
    /// The account the connection speaks for.
    pub account: Option<String>,
    /// The tournament's arbiter token, if the message carried one.
    pub arbiter_token: Option<String>,
}

impl Caller {
    fn arbitrates(&self, t: &Tournament) -> bool {
        self.organizer
            || self
                .arbiter_token
                .as_deref()
                .is_some_and(|token| same_token(&t.arbiter_token, token))
    }

    /// The arbiter, or the player `player` themselves.
    fn speaks_for(&self, t: &Tournament, player: u32) -> bool {
        self.arbitrates(t)
            || self
                .account
                .as_deref()
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
    /// Puts a stored tournament in the hands of its own owner task.
    fn insert(&self, app: &Arc<App>, t: Tournament) -> Handle {
        let created_ms = t.created_ms;
        let id = t.id.clone();
        let (owner, published) = Owner::new(Arc::downgrade(app), Arc::new(t));
        let (commands, commands_rx) = mpsc::channel(MAILBOX);
        let (results, results_rx) = mpsc::unbounded_channel();
        tokio::spawn(owner.run(commands_rx, results_rx));
        let handle = Handle {
            commands,
            results,
            published,
            created_ms,
        };
        self.by_id.insert(id, handle.clone());
        handle
    }

    /// Stops every tournament's owner here (in a cluster, another node runs them now).
    pub fn unload_all(&self) {
        self.by_id.clear();
    }

    /// The tournament's view now and after each change; only the latest view is kept, so a
    /// slow watcher skips to it.
    pub fn watch(&self, id: &str) -> Result<watch::Receiver<Arc<Published>>, Failure> {
        Ok(self.get(id)?.published)
    }

    /// A room reports the end of its round: its tournament's owner records the result. Never
    /// waits.
    pub fn match_finished(&self, match_id: &str, result: RoundResult) {
        let Some(handle) = link::tournament_of(match_id).and_then(|id| self.by_id.get(id)) else {
            return;
        };
        // Fails only if the owner is gone, and then so is the server.
        let _ = handle.results.send((match_id.to_string(), result));
    }

    /// The arbiter token of the match's tournament, when `token` is that of an assistant
    /// arbiter who looks after the match's board: the assistant then joins as its arbiter.
    pub fn assistant_credential(&self, match_id: &str, token: &str) -> Option<String> {
        let t = self.by_id.get(link::tournament_of(match_id)?)?.tournament();
        let board = t.board_number(match_id)?;
        t.assistants
            .iter()
            .any(|a| a.boards.contains(&board) && same_token(&a.token, token))
            .then(|| t.arbiter_token.clone())
    }

    fn get(&self, id: &str) -> Result<Handle, Failure> {
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
        Ok(self.get(id)?.published.borrow().view.clone())
    }

    pub fn trf(&self, id: &str) -> Result<String, Failure> {
        Ok(self.get(id)?.tournament().trf())
    }

    /// Every tournament, oldest first.
    pub fn summaries(&self) -> Vec<TournamentSummary> {
        let mut out: Vec<TournamentSummary> = self
            .by_id
            .iter()
            .map(|e| {
                let v = e.value().published.borrow().view.clone();
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

/// A tournament's whole state is written again after this many changes, so that a restart
/// replays at most as many.
const SNAPSHOT_EVERY: u64 = 64;

/// Stores the changes made to `t` (the tournament as it is about to be); with `created`, the
/// whole of it too.
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
            if e.is_fenced() {
                if let Some(cluster) = app.cluster() {
                    cluster.tournaments_fenced(app);
                }
            }
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
pub async fn create(app: &Arc<App>, create: CreateTournament) -> Result<Created, Failure> {
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
    store(app, &mut t, true).await?;
    let created = Created {
        id: id.clone(),
        arbiter_token: t.arbiter_token.clone(),
        players,
    };
    tracing::info!(tournament = %id, players = t.players.len(), "tournament created");
    app.tournaments.insert(app, t);
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
                let Failure { code, message, .. } = Failure::from(r);
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

/// The colour lot, drawn fairly.
fn draw_lot() -> Seat {
    if crate::tokens::coin() {
        Seat::P1
    } else {
        Seat::P2
    }
}

/// What `add_assistant` answers: the assistant as named, with the token shown only now.
pub struct AssistantAdded {
    pub name: String,
    pub boards: Vec<u32>,
    pub token: String,
}

// The commands, each answered by the tournament's owner (see [`owner`] for what each does).

/// More players (late entries once the tournament runs).
pub async fn add_players(
    app: &App,
    id: &str,
    caller: Caller,
    players: Vec<NewPlayer>,
) -> Result<Vec<PlayerToken>, Failure> {
    let handle = app.tournaments.get(id)?;
    handle
        .ask(|reply| Command::AddPlayers {
            caller,
            players,
            reply,
        })
        .await
}

/// Ranks the players, settles the colour lot and pairs round 1.
pub async fn start(
    app: &App,
    id: &str,
    caller: Caller,
    lot: Option<Seat>,
) -> Result<TournamentView, Failure> {
    let handle = app.tournaments.get(id)?;
    handle
        .ask(|reply| Command::Start { caller, lot, reply })
        .await
}

/// Pairs and publishes the next round; with `expected` (a [`pairing_id`] shown in a preview),
/// only if that is the pairing it gets.
pub async fn pair_next(
    app: &App,
    id: &str,
    caller: Caller,
    expected: Option<String>,
) -> Result<TournamentView, Failure> {
    let handle = app.tournaments.get(id)?;
    handle
        .ask(|reply| Command::PairNext {
            caller,
            expected,
            reply,
        })
        .await
}

/// The next round as `pair_next` would pair it now, not published.
pub async fn preview(app: &App, id: &str, caller: Caller) -> Result<PairingPreview, Failure> {
    let handle = app.tournaments.get(id)?;
    handle.ask(|reply| Command::Preview { caller, reply }).await
}

pub async fn add_assistant(
    app: &App,
    id: &str,
    caller: Caller,
    name: String,
    boards: Vec<u32>,
) -> Result<AssistantAdded, Failure> {
    let handle = app.tournaments.get(id)?;
    handle
        .ask(|reply| Command::AddAssistant {
            caller,
            name,
            boards,
            reply,
        })
        .await
}

/// The arbiter enters or corrects a board's result (`1-0`, `0-1`, `1/2-1/2`, `+-`, `-+`, `--`).
pub async fn set_result(
    app: &App,
    id: &str,
    caller: Caller,
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
    handle
        .ask(|reply| Command::SetResult {
            caller,
            round,
            board,
            result,
            reply,
        })
        .await
}

pub async fn withdraw(
    app: &App,
    id: &str,
    caller: Caller,
    player: u32,
) -> Result<TournamentView, Failure> {
    let handle = app.tournaments.get(id)?;
    handle
        .ask(|reply| Command::Withdraw {
            caller,
            player,
            reply,
        })
        .await
}

pub async fn request_bye(
    app: &App,
    id: &str,
    caller: Caller,
    player: u32,
    round: u32,
) -> Result<TournamentView, Failure> {
    let handle = app.tournaments.get(id)?;
    handle
        .ask(|reply| Command::RequestBye {
            caller,
            player,
            round,
            reply,
        })
        .await
}

/// The arbiter's forfeit for a no-show (only before the match has begun).
pub async fn forfeit(
    app: &App,
    id: &str,
    caller: Caller,
    player: u32,
    round: Option<u32>,
    double: bool,
) -> Result<TournamentView, Failure> {
    let handle = app.tournaments.get(id)?;
    handle
        .ask(|reply| Command::Forfeit {
            caller,
            player,
            round,
            double,
            reply,
        })
        .await
}

/// Loads every stored tournament, gives each its owner, and brings it up to date with its
/// matches; returns how many were loaded.
pub async fn restore(app: &Arc<App>) -> Result<usize, String> {
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
        let handle = app.tournaments.insert(app, t);
        let (reply, done) = oneshot::channel();
        if handle
            .commands
            .send(Command::CatchUp { reply })
            .await
            .is_ok()
        {
            let _ = done.await;
        }
        count += 1;
    }
    Ok(count)
}

#[cfg(test)]
mod pairing_id_tests {
    use super::pairing_id;
    use hakem_protocol::tournament::{BoardView, ByeKind, ByeView, RoundView};
    use hakem_protocol::Points;
    use sha2::{Digest, Sha256};

    #[test]
    fn a_pairings_identifier_is_the_digest_of_its_boards_and_byes_by_their_wire_names() {
        let round = RoundView {
            round: 3,
            boards: vec![BoardView {
                board: 1,
                p1: 4,
                p2: 2,
                match_id: "m".into(),
                result: None,
            }],
            byes: vec![
                ByeView {
                    player: 1,
                    kind: ByeKind::Half,
                    points: Points::HALF,
                },
                ByeView {
                    player: 3,
                    kind: ByeKind::Pairing,
                    points: Points::ONE,
                },
            ],
            search_stopped: false,
        };
        let text = "round 3\nboard 1 4 2\nbye 1 half 1\nbye 3 pairing 2\n";
        let digest = Sha256::digest(text.as_bytes());
        let expected: String = digest[..8].iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(pairing_id(&round), expected);
    }
}
