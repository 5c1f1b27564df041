//! hakem-server: the authoritative match server.
//!
//! One tokio task per match room ([`room`]) owns the round ([`round`]) and its clock
//! ([`clock`]); connections ([`session`]) reach rooms through a map of room handles. The HTTP
//! side ([`http`]) serves the WebSocket endpoint and read-only JSON.

pub mod clock;
pub mod http;
pub mod record;
pub mod room;
pub mod round;
pub mod session;
pub mod store;
pub mod tokens;
pub mod view;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use dashmap::DashMap;
use hakem_protocol::{CreateMatch, MatchSummary, PerSeat};

use crate::room::{RoomHandle, Tokens};
use crate::round::MatchConfig;
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
        Arc::new(App {
            rooms: DashMap::new(),
            next_conn: AtomicU64::new(1),
            admin_token,
            store,
            limits,
        })
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
            match room::restore(stored, Some(store.clone())) {
                Ok(handle) => {
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
        let handle = room::restore(stored, Some(store.clone())).ok()?;
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
        let config = MatchConfig::new(
            &create.game,
            create.variant.as_deref(),
            create.sets,
            create.clock,
            create.warnings_limit,
            create.players,
        )
        .map_err(CreateError::Invalid)?;
        let match_id = loop {
            let id = new_id();
            if !self.rooms.contains_key(&id) {
                break id;
            }
        };
        let seat_tokens = PerSeat::new(new_token(), new_token());
        let arbiter_token = new_token();
        let tokens = Tokens {
            seats: seat_tokens.clone(),
            arbiter: arbiter_token.clone(),
        };
        if let Some(store) = &self.store {
            let spec = room::spec_of(&config, &tokens);
            store
                .create_match(&match_id, &spec, wall_clock_ms())
                .await
                .map_err(|e| CreateError::Store(e.to_string()))?;
        }
        let handle = room::spawn(match_id.clone(), config, tokens, self.store.clone());
        self.rooms.insert(match_id.clone(), handle);
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
