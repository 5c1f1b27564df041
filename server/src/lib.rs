//! hakem-server: the authoritative match server.
//!
//! One tokio task per match room ([`room`]) owns the round ([`round`]) and its clock
//! ([`clock`]); connections ([`session`]) reach rooms through a map of room handles. The HTTP
//! side ([`http`]) serves the WebSocket endpoint and read-only JSON.

pub mod clock;
pub mod http;
pub mod room;
pub mod round;
pub mod session;
pub mod tokens;
pub mod view;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use dashmap::DashMap;
use hakem_protocol::{CreateMatch, MatchSummary, PerSeat};

use crate::room::{RoomHandle, Tokens};
use crate::round::MatchConfig;
use crate::tokens::{new_id, new_token};

/// What every connection shares: the rooms and the server's settings.
pub struct App {
    rooms: DashMap<String, RoomHandle>,
    next_conn: AtomicU64,
    /// The organizer's token.
    pub admin_token: String,
}

/// A match just created, with its secrets.
pub struct Created {
    pub match_id: String,
    pub seat_tokens: PerSeat<String>,
    pub arbiter_token: String,
}

impl App {
    pub fn new(admin_token: String) -> Arc<App> {
        Arc::new(App {
            rooms: DashMap::new(),
            next_conn: AtomicU64::new(1),
            admin_token,
        })
    }

    pub fn next_conn_id(&self) -> u64 {
        self.next_conn.fetch_add(1, Ordering::Relaxed)
    }

    pub fn room(&self, match_id: &str) -> Option<RoomHandle> {
        self.rooms.get(match_id).map(|entry| entry.value().clone())
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
    pub fn create_match(&self, create: CreateMatch) -> Result<Created, String> {
        let config = MatchConfig::new(
            &create.game,
            create.variant.as_deref(),
            create.sets,
            create.clock,
            create.warnings_limit,
            create.players,
        )?;
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
        let handle = room::spawn(match_id.clone(), config, tokens);
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
