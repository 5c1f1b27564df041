//! Matches that are only in the store (their room retired): read, replayed once and kept in a
//! small cache, so that looking at an old match never starts a room.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};

use hakem_protocol::{MatchState, MatchSummary};

use hakem_round::Round;

use crate::room::{self, Tokens};
use crate::store::{MatchSpec, StoredMatch};
use crate::wall_clock_ms;

/// The most archived matches kept in memory.
const CACHED: usize = 256;

/// A match read back from the store.
pub struct Archived {
    id: String,
    round: Round,
    seq: u64,
    pub spec: MatchSpec,
    pub tokens: Tokens,
    pub created_ms: u64,
}

impl Archived {
    pub fn id(&self) -> &str {
        &self.id
    }

    pub fn of(stored: StoredMatch) -> Result<Archived, String> {
        let id = stored.id.clone();
        let created_ms = stored.created_ms;
        let (spec, replayed) = room::replay(stored, None)?;
        Ok(Archived {
            id,
            seq: replayed.frames.len() as u64,
            round: replayed.round,
            tokens: Tokens::of_spec(&spec),
            spec,
            created_ms,
        })
    }

    /// The spectator's state.
    pub fn state(&self) -> MatchState {
        self.round.state(&self.id, self.seq, 0, wall_clock_ms())
    }

    /// Every claim of the match, for its arbiter and players.
    pub fn claims(&self) -> Vec<hakem_protocol::ClaimView> {
        self.round.claims().to_vec()
    }

    pub fn summary(&self, finished_ms: Option<u64>) -> MatchSummary {
        room::summary_of_round(&self.id, &self.round, self.created_ms, finished_ms)
    }
}

/// The matches kept, and the order they came in.
type Kept = (HashMap<String, Arc<Archived>>, VecDeque<String>);

/// The last archived matches read, the oldest forgotten first.
#[derive(Default)]
pub struct Cache {
    inner: Mutex<Kept>,
}

impl Cache {
    pub fn get(&self, id: &str) -> Option<Arc<Archived>> {
        let inner = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        inner.0.get(id).cloned()
    }

    pub fn put(&self, id: &str, archived: Arc<Archived>) {
        let mut inner = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        let (map, order) = &mut *inner;
        if map.insert(id.to_string(), archived).is_none() {
            order.push_back(id.to_string());
        }
        while order.len() > CACHED {
            if let Some(oldest) = order.pop_front() {
                map.remove(&oldest);
            }
        }
    }

    /// The match changes again (its room was started): the copy here is no longer true.
    pub fn forget(&self, id: &str) {
        let mut inner = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        let (map, order) = &mut *inner;
        if map.remove(id).is_some() {
            order.retain(|x| x != id);
        }
    }
}
