//! hakem-server: the authoritative match server.
//!
//! One tokio task per match room ([`room`]) owns the round ([`round`]) and its clock
//! ([`clock`]); connections ([`session`]) reach rooms through a map of room handles. The HTTP
//! side ([`http`]) serves the WebSocket endpoint and read-only JSON.

pub mod accounts;
pub mod house_bot;
pub mod http;
pub mod room;
pub mod session;
pub mod store;
pub mod tokens;
pub mod tournament;
pub mod web;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use dashmap::DashMap;
use hakem_games::GameKind;
use hakem_protocol::{AccountKind, CreateMatch, MatchStatus, MatchSummary, PerSeat, Seat};

use crate::accounts::{Accounts, SeatNotice};
use crate::room::{FinishSink, RoomHandle, Tokens};
use hakem_round::MatchConfig;
use crate::store::Store;
use crate::tokens::{new_id, new_token};

/// What every connection shares: the rooms, the store and the server's settings.
pub struct App {
    rooms: DashMap<String, RoomHandle>,
    next_conn: AtomicU64,
    /// The organizer's token.
    pub admin_token: String,
    store: Option<Store>,
    pub limits: Limits,
    pub accounts: Accounts,
    pub tournaments: tournament::Tournaments,
    /// Rooms report finished rounds here; the tournaments listen.
    finished: FinishSink,
    finished_rx: std::sync::Mutex<
        Option<tokio::sync::mpsc::UnboundedReceiver<(String, hakem_protocol::RoundResult)>>,
    >,
}

/// What a connection may do before the server stops listening to it.
#[derive(Clone, Debug)]
pub struct Limits {
    /// Messages a second a client may send on average.
    pub rate_per_sec: f64,
    /// Messages a client may send at once.
    pub rate_burst: f64,
    /// Frames queued for a client before it counts as not reading and is dropped.
    pub outbox_frames: usize,
    /// Time to say `hello`.
    pub hello_timeout: std::time::Duration,
    /// Idle sockets are pinged this often, and closed after three times this without a word.
    pub ping_interval: std::time::Duration,
    /// The kernel's send buffer per socket, when set (the operating system's default if not).
    pub socket_send_buffer: Option<usize>,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            rate_per_sec: 20.0,
            rate_burst: 40.0,
            outbox_frames: 1024,
            hello_timeout: std::time::Duration::from_secs(10),
            ping_interval: std::time::Duration::from_secs(30),
            socket_send_buffer: None,
        }
    }
}

/// Why a match could not be created.
#[derive(Debug)]
pub enum CreateError {
    /// The request's settings are wrong.
    Invalid(String),
    /// The match could not be stored.
    Store(String),
}

/// A tournament's board, for [`App::open_match`].
pub struct TournamentBoard {
    pub tournament: String,
    pub match_id: String,
    pub arbiter_token: String,
}

/// A match just created, with its secrets.
pub struct Created {
    pub match_id: String,
    pub seat_tokens: PerSeat<String>,
    pub arbiter_token: String,
}

impl App {
    /// `store`: where matches are kept; `None` keeps them in memory only (for tests of the
    /// server's logic, never for a real server).
    pub fn new(admin_token: String, store: Option<Store>, limits: Limits) -> Arc<App> {
        let (finished, finished_rx) = tokio::sync::mpsc::unbounded_channel();
        Arc::new(App {
            rooms: DashMap::new(),
            next_conn: AtomicU64::new(1),
            admin_token,
            store,
            limits,
            accounts: Accounts::default(),
            tournaments: tournament::Tournaments::default(),
            finished,
            finished_rx: std::sync::Mutex::new(Some(finished_rx)),
        })
    }

    pub fn store(&self) -> Option<&Store> {
        self.store.as_ref()
    }

    /// Loads the tournaments from the store, brings each up to date with its matches (results
    /// that came in while the server was down, matches not yet created), and from then on
    /// records every finished match of a tournament. Call once, after
    /// [`App::restore_live_matches`].
    pub async fn run_tournaments(self: &Arc<App>) -> Result<usize, String> {
        let receiver = self
            .finished_rx
            .lock()
            .map_err(|_| "tournaments already running".to_string())?
            .take();
        let Some(mut receiver) = receiver else {
            return Err("tournaments already running".into());
        };
        let count = tournament::restore(self).await?;
        let app = self.clone();
        tokio::spawn(async move {
            while let Some((match_id, result)) = receiver.recv().await {
                tournament::match_finished(&app, &match_id, &result).await;
            }
        });
        Ok(count)
    }

    /// Loads the accounts from the store.
    pub async fn load_accounts(&self) -> Result<usize, String> {
        let Some(store) = &self.store else {
            return Ok(0);
        };
        let all = store.accounts().await.map_err(|e| e.to_string())?;
        for account in &all {
            self.accounts.insert(
                &account.name,
                accounts::kind_of(&account.kind),
                &account.token,
            );
        }
        Ok(all.len())
    }

    /// Creates an account (organizer only: the session checks); returns its token.
    pub async fn create_account(
        &self,
        name: &str,
        kind: AccountKind,
    ) -> Result<String, CreateError> {
        if !accounts::valid_name(name) {
            return Err(CreateError::Invalid(
                "an account name is 1 to 40 letters, digits, '-', '_' or '.'".into(),
            ));
        }
        if self.accounts.exists(name) {
            return Err(CreateError::Invalid(format!(
                "the account {name:?} exists already"
            )));
        }
        let token = new_token();
        if let Some(store) = &self.store {
            let account = store::StoredAccount {
                name: name.to_string(),
                kind: accounts::kind_name(kind).to_string(),
                token: token.clone(),
            };
            store
                .create_account(&account, wall_clock_ms())
                .await
                .map_err(|e| CreateError::Store(e.to_string()))?;
        }
        self.accounts.insert(name, kind, &token);
        Ok(token)
    }

    /// Is the match live (known and not finished)?
    pub fn is_live(&self, match_id: &str) -> bool {
        self.rooms
            .get(match_id)
            .is_some_and(|room| room.summary().status != MatchStatus::Finished)
    }

    /// Remembers (and announces) the accounts seated in a match.
    fn seat_accounts(&self, match_id: &str, game: &str, variant: &str, tokens: &Tokens) {
        for seat in Seat::BOTH {
            if let Some(name) = tokens.accounts.get(seat) {
                self.accounts.seat(
                    name,
                    SeatNotice {
                        match_id: match_id.to_string(),
                        seat,
                        seat_token: tokens.seats.get(seat).clone(),
                        game: game.to_string(),
                        variant: variant.to_string(),
                    },
                );
            }
        }
    }

    /// Rebuilds every unfinished match from the store; returns how many.
    pub async fn restore_live_matches(&self) -> Result<usize, String> {
        let Some(store) = &self.store else {
            return Ok(0);
        };
        let live = store.live_matches().await.map_err(|e| e.to_string())?;
        let count = live.len();
        for stored in live {
            let id = stored.id.clone();
            let spec = stored.spec.clone();
            let tokens = Tokens::of_spec(&spec);
            self.seat_accounts(&id, &spec.game, &spec.variant, &tokens);
            match room::restore(stored, Some(store.clone()), Some(self.finished.clone())) {
                Ok(handle) => {
                    if let (Some(bot), Ok(game)) = (spec.house_bot, spec.game.parse::<GameKind>()) {
                        let variant = hakem_games::AnyPosition::new(game, Some(&spec.variant))
                            .map_or(game.default_variant(), |p| p.variant());
                        house_bot::spawn(
                            handle.clone(),
                            bot.seat,
                            tokens.seats.get(bot.seat).clone(),
                            game,
                            variant,
                            bot.level,
                        );
                    }
                    self.rooms.insert(id, handle);
                }
                Err(e) => tracing::error!(match_id = %id, error = %e, "match not restored"),
            }
        }
        Ok(count)
    }

    pub fn next_conn_id(&self) -> u64 {
        self.next_conn.fetch_add(1, Ordering::Relaxed)
    }

    /// The room of a match; a finished match that is only in the store is loaded on demand.
    pub async fn room(&self, match_id: &str) -> Option<RoomHandle> {
        if let Some(room) = self.rooms.get(match_id) {
            return Some(room.value().clone());
        }
        let store = self.store.as_ref()?;
        if match_id.len() > 64 {
            return None;
        }
        let stored = match store.load(match_id).await {
            Ok(Some(stored)) => stored,
            Ok(None) => return None,
            Err(e) => {
                tracing::error!(%match_id, error = %e, "match not loaded");
                return None;
            }
        };
        let handle =
            room::restore(stored, Some(store.clone()), Some(self.finished.clone())).ok()?;
        Some(
            self.rooms
                .entry(match_id.to_string())
                .or_insert(handle)
                .value()
                .clone(),
        )
    }

    /// Every match, newest first.
    pub fn summaries(&self) -> Vec<MatchSummary> {
        let mut all: Vec<MatchSummary> = self
            .rooms
            .iter()
            .map(|entry| entry.value().summary())
            .collect();
        all.sort_by(|a, b| a.match_id.cmp(&b.match_id));
        all
    }

    /// Checks a `create_match` request and starts its room.
    pub async fn create_match(&self, create: CreateMatch) -> Result<Created, CreateError> {
        self.open_match(create, None).await
    }

    /// [`App::create_match`], for a tournament's board when `board` is given: its id and arbiter
    /// token are the tournament's choice (readable ids, one arbiter token for all).
    pub async fn open_match(
        &self,
        mut create: CreateMatch,
        board: Option<TournamentBoard>,
    ) -> Result<Created, CreateError> {
        if let Some(bot) = create.house_bot {
            if !(1..=5).contains(&bot.level) {
                return Err(CreateError::Invalid(
                    "house_bot.level must be 1 to 5".into(),
                ));
            }
            if create.accounts.get(bot.seat).is_some() {
                return Err(CreateError::Invalid(
                    "the house bot's seat holds an account".into(),
                ));
            }
            let name = create.players.get_mut(bot.seat);
            if name.trim().is_empty() {
                *name = format!("hakem bot (level {})", bot.level);
            }
        }
        for seat in Seat::BOTH {
            if let Some(name) = create.accounts.get(seat).clone() {
                if !self.accounts.exists(&name) {
                    return Err(CreateError::Invalid(format!("no account {name:?}")));
                }
                let player = create.players.get_mut(seat);
                if player.trim().is_empty() {
                    *player = name;
                }
            }
        }
        let mut config = MatchConfig::new(
            &create.game,
            create.variant.as_deref(),
            create.sets,
            create.clock,
            create.warnings_limit,
            create.players,
        )
        .map_err(CreateError::Invalid)?;
        config.house_bot = create.house_bot.map(|bot| bot.seat);
        let (id, arbiter_token) = match board {
            Some(board) => {
                config.tournament = Some(board.tournament);
                (Some(board.match_id), Some(board.arbiter_token))
            }
            None => (None, None),
        };
        let match_id = match id {
            Some(id) => id,
            None => loop {
                let id = new_id();
                if !self.rooms.contains_key(&id) {
                    break id;
                }
            },
        };
        let seat_tokens = PerSeat::new(new_token(), new_token());
        let arbiter_token = arbiter_token.unwrap_or_else(new_token);
        let tokens = Tokens {
            seats: seat_tokens.clone(),
            arbiter: arbiter_token.clone(),
            accounts: create.accounts.clone(),
        };
        if let Some(store) = &self.store {
            let mut spec = room::spec_of(&config, &tokens);
            spec.house_bot = create.house_bot;
            store
                .create_match(&match_id, &spec, wall_clock_ms())
                .await
                .map_err(|e| CreateError::Store(e.to_string()))?;
        }
        let (game, variant) = (config.game.as_str(), config.variant);
        let house_bot = create.house_bot;
        let handle = room::spawn(
            match_id.clone(),
            config.clone(),
            tokens.clone(),
            self.store.clone(),
            Some(self.finished.clone()),
        );
        self.rooms.insert(match_id.clone(), handle.clone());
        self.seat_accounts(&match_id, game, variant, &tokens);
        if let Some(bot) = house_bot {
            house_bot::spawn(
                handle,
                bot.seat,
                tokens.seats.get(bot.seat).clone(),
                config.game,
                config.variant,
                bot.level,
            );
        }
        tracing::info!(%match_id, game = %create.game, "match created");
        Ok(Created {
            match_id,
            seat_tokens,
            arbiter_token,
        })
    }
}

/// Milliseconds since the Unix epoch, for clients to line their clocks up with the server's.
pub fn wall_clock_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}
