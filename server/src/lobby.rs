//! The lobby: accounts' open offers of a casual game (seeks). A seek lasts until another
//! account accepts it (the match is then created with both seated), its poster cancels it, or
//! the poster's last connection closes. Watchers are told each change as it happens.

use std::sync::Mutex;

use hakem_protocol::{AccountKind, ErrorCode, NewSeek, PerSeat, SeekView, DEFAULT_WARNINGS_LIMIT};
use hakem_round::MatchConfig;
use tokio::sync::broadcast;

use crate::tokens::new_id;

/// Open seeks one account may have at once.
pub const SEEKS_PER_ACCOUNT: usize = 3;
/// Open seeks in all: the lobby stays a list a person can read.
pub const MAX_SEEKS: usize = 1000;

/// A change of the lobby, as watchers are told it.
#[derive(Clone, Debug)]
pub enum Change {
    Added(SeekView),
    Removed {
        seek: String,
        match_id: Option<String>,
    },
}

pub struct Lobby {
    /// Oldest first.
    seeks: Mutex<Vec<Open>>,
    changes: broadcast::Sender<Change>,
}

impl Default for Lobby {
    fn default() -> Lobby {
        Lobby {
            seeks: Mutex::new(Vec::new()),
            // A watcher this far behind is sent the whole lobby again.
            changes: broadcast::channel(256).0,
        }
    }
}

/// A seek in the lobby; `taken` while the match of the account that accepted it is being
/// created (it is then neither shown nor taken again, and comes back if that fails).
struct Open {
    view: SeekView,
    taken: bool,
}

/// Why the lobby said no.
pub type Refused = (ErrorCode, String);

fn refused(code: ErrorCode, message: impl Into<String>) -> Refused {
    (code, message.into())
}

impl Lobby {
    fn seeks(&self) -> std::sync::MutexGuard<'_, Vec<Open>> {
        // A panic while holding the lock leaves a list that is still a valid list.
        self.seeks
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// The open seeks `viewer` sees, and the changes from then on.
    pub fn watch(&self, viewer: Option<&str>) -> (Vec<SeekView>, broadcast::Receiver<Change>) {
        let seeks = self.seeks();
        // Subscribed under the lock: no change falls between the list and the first change.
        (shown(&seeks, viewer), self.changes.subscribe())
    }

    pub fn snapshot(&self, viewer: Option<&str>) -> Vec<SeekView> {
        shown(&self.seeks(), viewer)
    }

    /// `account` offers a game.
    pub fn post(
        &self,
        account: &str,
        kind: AccountKind,
        seek: NewSeek,
        now_ms: u64,
    ) -> Result<SeekView, Refused> {
        let config = MatchConfig::new(
            &seek.game,
            seek.variant.as_deref(),
            seek.sets,
            seek.clock,
            DEFAULT_WARNINGS_LIMIT,
            PerSeat::default(),
        )
        .map_err(|m| refused(ErrorCode::BadRequest, m))?;
        if seek.rated && kind != AccountKind::Player {
            return Err(refused(ErrorCode::BadRequest, "bots are not rated"));
        }
        if seek.to.as_deref() == Some(account) {
            return Err(refused(
                ErrorCode::BadRequest,
                "a challenge is to another account",
            ));
        }
        let view = SeekView {
            seek: new_id(),
            account: account.to_string(),
            game: config.game.as_str().to_string(),
            variant: config.variant.to_string(),
            sets: config.sets,
            clock: config.clock,
            rated: seek.rated,
            to: seek.to,
            created_ms: now_ms,
        };
        let mut seeks = self.seeks();
        if seeks.iter().filter(|s| s.view.account == account).count() >= SEEKS_PER_ACCOUNT {
            return Err(refused(
                ErrorCode::RateLimited,
                format!("an account has at most {SEEKS_PER_ACCOUNT} open seeks"),
            ));
        }
        if seeks.len() >= MAX_SEEKS {
            return Err(refused(
                ErrorCode::RateLimited,
                "the lobby is full: accept a seek, or try again later",
            ));
        }
        seeks.push(Open {
            view: view.clone(),
            taken: false,
        });
        let _ = self.changes.send(Change::Added(view.clone()));
        Ok(view)
    }

    /// `account` withdraws its seek.
    pub fn cancel(&self, account: &str, id: &str) -> Result<(), Refused> {
        let mut seeks = self.seeks();
        let found = seeks
            .iter()
            .position(|s| s.view.seek == id && s.view.seen_by(Some(account)));
        let Some(i) = found else {
            return Err(no_seek(id));
        };
        if seeks[i].view.account != account {
            return Err(refused(
                ErrorCode::Forbidden,
                "that seek is another account's",
            ));
        }
        if seeks[i].taken {
            return Err(refused(
                ErrorCode::BadRequest,
                "that seek is being accepted",
            ));
        }
        seeks.remove(i);
        let _ = self.changes.send(Change::Removed {
            seek: id.to_string(),
            match_id: None,
        });
        Ok(())
    }

    /// `account` takes a seek (to create its match); [`Lobby::matched`] or [`Lobby::give_back`]
    /// follows.
    pub fn take(&self, account: &str, kind: AccountKind, id: &str) -> Result<SeekView, Refused> {
        let mut seeks = self.seeks();
        let Some(open) = seeks.iter_mut().find(|s| s.view.seek == id && !s.taken) else {
            return Err(no_seek(id));
        };
        if open.view.account == account {
            return Err(refused(ErrorCode::BadRequest, "that seek is your own"));
        }
        if !open.view.seen_by(Some(account)) {
            // Another account's challenge: as if it were not there.
            return Err(no_seek(id));
        }
        if open.view.rated && kind != AccountKind::Player {
            return Err(refused(ErrorCode::BadRequest, "bots are not rated"));
        }
        open.taken = true;
        Ok(open.view.clone())
    }

    /// A taken seek became `match_id`.
    pub fn matched(&self, seek: &SeekView, match_id: &str) {
        let mut seeks = self.seeks();
        seeks.retain(|s| s.view.seek != seek.seek);
        let _ = self.changes.send(Change::Removed {
            seek: seek.seek.clone(),
            match_id: Some(match_id.to_string()),
        });
    }

    /// A taken seek whose match could not be created is open again, unless its poster left
    /// meanwhile (it is gone then).
    pub fn give_back(&self, seek: &SeekView) {
        if let Some(open) = self.seeks().iter_mut().find(|s| s.view.seek == seek.seek) {
            open.taken = false;
        }
    }

    /// `account`'s last connection closed: its seeks go.
    pub fn leave(&self, account: &str) {
        let mut seeks = self.seeks();
        seeks.retain(|s| {
            let keep = s.view.account != account;
            if !keep {
                let _ = self.changes.send(Change::Removed {
                    seek: s.view.seek.clone(),
                    match_id: None,
                });
            }
            keep
        });
    }
}

/// The open seeks `viewer` sees, oldest first.
fn shown(seeks: &[Open], viewer: Option<&str>) -> Vec<SeekView> {
    seeks
        .iter()
        .filter(|s| !s.taken && s.view.seen_by(viewer))
        .map(|s| s.view.clone())
        .collect()
}

fn no_seek(id: &str) -> Refused {
    refused(
        ErrorCode::BadRequest,
        format!("no open seek {id:?} (taken, cancelled, or its poster left)"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pente() -> NewSeek {
        NewSeek {
            game: "pente".into(),
            variant: None,
            sets: 1,
            clock: None,
            rated: false,
            to: None,
        }
    }

    #[test]
    fn a_taken_seek_is_hidden_and_comes_back_only_if_its_poster_stayed() {
        let lobby = Lobby::default();
        let seek = lobby.post("ayse", AccountKind::Player, pente(), 1).unwrap();
        let taken = lobby.take("bora", AccountKind::Player, &seek.seek).unwrap();
        assert!(
            lobby.snapshot(None).is_empty(),
            "not shown while its match is made"
        );
        assert!(lobby.take("cem", AccountKind::Player, &seek.seek).is_err());
        assert!(lobby.cancel("ayse", &seek.seek).is_err(), "being accepted");
        lobby.give_back(&taken);
        assert_eq!(lobby.snapshot(None), vec![seek.clone()]);

        // Its poster leaves while it is taken: the failed match does not bring it back.
        let taken = lobby.take("bora", AccountKind::Player, &seek.seek).unwrap();
        lobby.leave("ayse");
        lobby.give_back(&taken);
        assert!(lobby.snapshot(None).is_empty());
    }

    #[test]
    fn seeks_are_bounded_per_account() {
        let lobby = Lobby::default();
        for _ in 0..SEEKS_PER_ACCOUNT {
            lobby.post("ayse", AccountKind::Player, pente(), 1).unwrap();
        }
        let (code, _) = lobby
            .post("ayse", AccountKind::Player, pente(), 1)
            .unwrap_err();
        assert_eq!(code, ErrorCode::RateLimited);
        assert!(lobby.post("bora", AccountKind::Player, pente(), 1).is_ok());
    }
}
