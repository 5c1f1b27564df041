//! Player and bot accounts: a name and a token. An account can be seated in a match by name;
//! its connections are then told `your_match` with the seat token, so that a bot service (or a
//! player's client) finds its matches without being handed tokens one by one.

use dashmap::DashMap;
use hakem_protocol::{AccountKind, Seat, ServerMessage};

use crate::outbox::{ConnId, Outbox};
use crate::tokens::same_token;

#[derive(Clone, Debug)]
struct Account {
    kind: AccountKind,
    token: String,
}

/// A seat held by an account in a match.
#[derive(Clone, Debug)]
pub struct SeatNotice {
    pub match_id: String,
    pub seat: Seat,
    pub seat_token: String,
    pub game: String,
    pub variant: String,
}

impl SeatNotice {
    fn message(&self) -> ServerMessage {
        ServerMessage::YourMatch {
            match_id: self.match_id.clone(),
            seat: self.seat,
            seat_token: self.seat_token.clone(),
            game: self.game.clone(),
            variant: self.variant.clone(),
        }
    }
}

#[derive(Default)]
pub struct Accounts {
    by_name: DashMap<String, Account>,
    /// Open connections per account.
    sessions: DashMap<String, Vec<(ConnId, Outbox)>>,
    /// Seats per account, in matches that may still be live.
    seats: DashMap<String, Vec<SeatNotice>>,
}

/// Account names: 1 to 40 letters, digits, `-`, `_`, `.`.
pub fn valid_name(name: &str) -> bool {
    (1..=40).contains(&name.chars().count())
        && name
            .chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

pub fn kind_name(kind: AccountKind) -> &'static str {
    match kind {
        AccountKind::Player => "player",
        AccountKind::Bot => "bot",
    }
}

pub fn kind_of(name: &str) -> AccountKind {
    if name == "bot" {
        AccountKind::Bot
    } else {
        AccountKind::Player
    }
}

impl Accounts {
    pub fn insert(&self, name: &str, kind: AccountKind, token: &str) {
        self.by_name.insert(
            name.to_string(),
            Account {
                kind,
                token: token.to_string(),
            },
        );
    }

    pub fn exists(&self, name: &str) -> bool {
        self.by_name.contains_key(name)
    }

    /// The account holding `token`. Every account's token is compared in constant time.
    pub fn by_token(&self, token: &str) -> Option<(String, AccountKind)> {
        let mut found = None;
        for entry in self.by_name.iter() {
            if same_token(&entry.value().token, token) {
                found = Some((entry.key().clone(), entry.value().kind));
            }
        }
        found
    }

    /// A connection of `name` opened: it is told of every seat for which `live` holds.
    pub fn attach(&self, name: &str, conn: ConnId, outbox: Outbox, live: impl Fn(&str) -> bool) {
        if let Some(mut seats) = self.seats.get_mut(name) {
            seats.retain(|notice| live(&notice.match_id));
            for notice in seats.iter() {
                outbox.send_message(&notice.message());
            }
        }
        self.sessions
            .entry(name.to_string())
            .or_default()
            .push((conn, outbox));
    }

    pub fn detach(&self, name: &str, conn: ConnId) {
        if let Some(mut sessions) = self.sessions.get_mut(name) {
            sessions.retain(|(c, _)| *c != conn);
        }
    }

    /// `name` holds a seat: remember it and tell its open connections.
    pub fn seat(&self, name: &str, notice: SeatNotice) {
        if let Some(sessions) = self.sessions.get(name) {
            let message = notice.message();
            for (_, outbox) in sessions.iter() {
                outbox.send_message(&message);
            }
        }
        self.seats.entry(name.to_string()).or_default().push(notice);
    }
}
