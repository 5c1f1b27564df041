//! Player and bot accounts: a name, and a token (accounts the organizer makes) or a password and
//! its sessions (accounts that log in, see [`crate::logins`]). An account can be seated in a
//! match by name; its connections are then told `your_match` with the seat token, so that a
//! bot service (or a player's client) finds its matches without being handed tokens one by one.

use dashmap::DashMap;
use hakem_protocol::{AccountKind, AccountStatus, Seat, ServerMessage};

use crate::outbox::{ConnId, Outbox};
use crate::tokens::digest;

#[derive(Clone, Debug)]
struct Account {
    kind: AccountKind,
    status: AccountStatus,
    /// The Argon2id hash of its password, for an account that logs in.
    password_hash: Option<String>,
}

/// What a presented token is: an account's own token, or one of its sessions.
#[derive(Clone, Debug)]
struct Credential {
    account: String,
    session: bool,
}

/// Who a `hello` token speaks for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Holder {
    pub name: String,
    pub kind: AccountKind,
    /// The digest of the session token, when the token was a session's.
    pub session: Option<String>,
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
    /// Account and session tokens by their SHA-256 digest: a `hello` is one lookup however
    /// many accounts there are, and the digest of a guess tells nothing of a real token.
    by_digest: DashMap<String, Credential>,
    /// Open connections per account, with the digest of the session each said `hello` with.
    connections: DashMap<String, Vec<(ConnId, Outbox, Option<String>)>>,
    /// Seats per account, in matches that may still be live.
    seats: DashMap<String, Vec<SeatNotice>>,
    /// Each account's sessions, oldest first (at most [`SESSIONS_PER_ACCOUNT`]).
    sessions_of: DashMap<String, std::collections::VecDeque<String>>,
}

/// Sessions one account keeps: a new login past them ends the oldest.
pub const SESSIONS_PER_ACCOUNT: usize = 20;

/// Account names: 1 to 40 letters, digits, `-`, `_`, `.`.
pub fn valid_name(name: &str) -> bool {
    // Not only dots: `.` and `..` would read as paths in the pages' addresses.
    !name.chars().all(|c| c == '.')
        && (1..=40).contains(&name.chars().count())
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
    /// An account as stored; `token` is empty for one that logs in with a password.
    pub fn insert(
        &self,
        name: &str,
        kind: AccountKind,
        token: &str,
        status: AccountStatus,
        password_hash: Option<String>,
    ) {
        if !token.is_empty() {
            self.by_digest.insert(
                digest(token),
                Credential {
                    account: name.to_string(),
                    session: false,
                },
            );
        }
        self.by_name.insert(
            name.to_string(),
            Account {
                kind,
                status,
                password_hash,
            },
        );
    }

    /// Takes `name` for an account being registered (pending until stored); false if it is
    /// taken.
    pub fn reserve(&self, name: &str) -> bool {
        match self.by_name.entry(name.to_string()) {
            dashmap::Entry::Occupied(_) => false,
            dashmap::Entry::Vacant(slot) => {
                slot.insert(Account {
                    kind: AccountKind::Player,
                    status: AccountStatus::Pending,
                    password_hash: None,
                });
                true
            }
        }
    }

    /// Gives back a name [`Accounts::reserve`] took, when its account could not be stored.
    pub fn release(&self, name: &str) {
        self.by_name.remove(name);
    }

    pub fn exists(&self, name: &str) -> bool {
        self.by_name.contains_key(name)
    }

    /// The account's password hash and status, if it logs in with a password.
    pub fn password_of(&self, name: &str) -> Option<(String, AccountStatus)> {
        let account = self.by_name.get(name)?;
        Some((account.password_hash.clone()?, account.status))
    }

    pub fn kind_of(&self, name: &str) -> Option<AccountKind> {
        self.by_name.get(name).map(|a| a.kind)
    }

    pub fn status_of(&self, name: &str) -> Option<AccountStatus> {
        self.by_name.get(name).map(|a| a.status)
    }

    pub fn set_status(&self, name: &str, status: AccountStatus) {
        if let Some(mut account) = self.by_name.get_mut(name) {
            account.status = status;
        }
    }

    pub fn set_password(&self, name: &str, password_hash: String) {
        if let Some(mut account) = self.by_name.get_mut(name) {
            account.password_hash = Some(password_hash);
        }
    }

    /// A session of `name`, by the digest of its token; returns the oldest sessions it
    /// pushes out, for the caller to end.
    pub fn add_session(&self, session: String, name: &str) -> Vec<String> {
        self.by_digest.insert(
            session.clone(),
            Credential {
                account: name.to_string(),
                session: true,
            },
        );
        let mut order = self.sessions_of.entry(name.to_string()).or_default();
        order.push_back(session);
        let excess = order.len().saturating_sub(SESSIONS_PER_ACCOUNT);
        order.drain(..excess).collect()
    }

    fn forget_order(&self, name: &str, keep: impl Fn(&str) -> bool) {
        if let Some(mut order) = self.sessions_of.get_mut(name) {
            order.retain(|s| keep(s));
        }
        self.sessions_of
            .remove_if(name, |_, order| order.is_empty());
    }

    /// Ends one session; its connections are closed.
    pub fn end_session(&self, session: &str) {
        if let Some((_, credential)) = self.by_digest.remove(session) {
            self.forget_order(&credential.account, |s| s != session);
            self.close(&credential.account, "the session ended", |s| {
                s == Some(session)
            });
        }
    }

    /// Ends every session of `name` but `keep`, and closes their connections.
    pub fn end_sessions(&self, name: &str, keep: Option<&str>, reason: &'static str) {
        self.by_digest.retain(|digest, credential| {
            !(credential.session && credential.account == name && Some(digest.as_str()) != keep)
        });
        self.forget_order(name, |s| Some(s) == keep);
        self.close(name, reason, |s| s.is_some() && s != keep);
    }

    /// Closes every connection of `name`, for `reason`.
    pub fn close_all(&self, name: &str, reason: &'static str) {
        self.close(name, reason, |_| true);
    }

    fn close(&self, name: &str, reason: &'static str, which: impl Fn(Option<&str>) -> bool) {
        if let Some(connections) = self.connections.get(name) {
            for (_, outbox, session) in connections.iter() {
                if which(session.as_deref()) {
                    outbox.close(reason);
                }
            }
        }
    }

    /// The kind of `name` if it is active and, for a connection that said `hello` with a
    /// session token, that session still lasts.
    pub fn speaks_for(&self, name: &str, session: Option<&str>) -> Option<AccountKind> {
        let account = self.by_name.get(name)?;
        if account.status != AccountStatus::Active {
            return None;
        }
        if let Some(session) = session {
            self.by_digest.get(session)?;
        }
        Some(account.kind)
    }

    /// The active account that `token` speaks for.
    pub fn by_token(&self, token: &str) -> Option<Holder> {
        let digest = digest(token);
        let credential = self.by_digest.get(&digest)?.clone();
        let account = self.by_name.get(&credential.account)?;
        (account.status == AccountStatus::Active).then(|| Holder {
            name: credential.account.clone(),
            kind: account.kind,
            session: credential.session.then_some(digest),
        })
    }

    /// A connection of `name` opened: it is told of every seat for which `live` holds.
    pub fn attach(
        &self,
        name: &str,
        conn: ConnId,
        outbox: Outbox,
        session: Option<String>,
        live: impl Fn(&str) -> bool,
    ) {
        if let Some(mut seats) = self.seats.get_mut(name) {
            seats.retain(|notice| live(&notice.match_id));
            for notice in seats.iter() {
                outbox.send_message(&notice.message());
            }
        }
        self.connections
            .entry(name.to_string())
            .or_default()
            .push((conn, outbox, session));
    }

    /// A connection of `name` closed; `true` if it was the account's last.
    pub fn detach(&self, name: &str, conn: ConnId) -> bool {
        if let Some(mut connections) = self.connections.get_mut(name) {
            connections.retain(|(c, _, _)| *c != conn);
        }
        self.connections
            .remove_if(name, |_, connections| connections.is_empty())
            .is_some()
    }

    /// `name` holds a seat: remember it and tell its open connections.
    pub fn seat(&self, name: &str, notice: SeatNotice) {
        if let Some(connections) = self.connections.get(name) {
            let message = notice.message();
            for (_, outbox, _) in connections.iter() {
                outbox.send_message(&message);
            }
        }
        self.seats.entry(name.to_string()).or_default().push(notice);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_letters_digits_and_a_few_signs_and_never_only_dots() {
        for good in ["ayse", "Ayşe", "bora.kaya", "b-2_x", "..a"] {
            assert!(valid_name(good), "{good}");
        }
        for bad in ["", ".", "..", "a b", "a/b", &"x".repeat(41)] {
            assert!(!valid_name(bad), "{bad}");
        }
    }

    #[test]
    fn a_login_past_the_sessions_an_account_keeps_ends_the_oldest() {
        let accounts = Accounts::default();
        accounts.insert("ayse", AccountKind::Player, "", AccountStatus::Active, None);
        let mut pushed_out = Vec::new();
        for i in 0..SESSIONS_PER_ACCOUNT + 2 {
            pushed_out.extend(accounts.add_session(format!("s{i}"), "ayse"));
        }
        assert_eq!(pushed_out, vec!["s0".to_string(), "s1".to_string()]);
        for old in &pushed_out {
            accounts.end_session(old);
        }
        assert!(accounts.speaks_for("ayse", Some("s0")).is_none());
        assert!(accounts.speaks_for("ayse", Some("s2")).is_some());
        accounts.end_sessions("ayse", Some("s5"), "test");
        assert!(accounts.speaks_for("ayse", Some("s2")).is_none());
        assert!(accounts.speaks_for("ayse", Some("s5")).is_some());
        accounts.set_status("ayse", AccountStatus::Disabled);
        assert!(accounts.speaks_for("ayse", Some("s5")).is_none());
        assert!(accounts.speaks_for("ayse", None).is_none());
    }
}
