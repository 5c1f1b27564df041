//! hakem-server: the authoritative match server.
//!
//! One tokio task per live match ([`room`]) owns its round (`hakem_round`); connections
//! ([`session`]) reach rooms only through room handles, looked up in the registry. A room whose
//! round is over retires; its match is then read from the store ([`archive`]). The HTTP side
//! ([`http`]) serves the WebSocket endpoint and read-only JSON; [`store`] keeps everything.

mod accounts;
mod analysis;
mod archive;
pub mod cluster;
mod export;
mod file_lock;
pub mod guard;
mod house_bot;
pub mod http;
mod listen;
#[cfg(test)]
mod listing_tests;
mod lobby;
mod logins;
pub mod logs;
mod outbox;
mod ratings;
mod room;
mod session;
pub mod store;
mod tokens;
pub mod tournament;
mod web;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use hakem_protocol::{
    AccountKind, AccountStatus, CreateMatch, ListStatus, MatchState, MatchStatus, MatchSummary,
    PerSeat, Seat, SpectatorDelay,
};
use hakem_round::MatchConfig;

use crate::accounts::{Accounts, SeatNotice};
use crate::archive::Archived;
pub use crate::logins::Registration;
pub use crate::room::RoomSettings;
use crate::room::{FinishSink, LocalRoom, RoomHandle, Rooms, Start, Tokens};
use crate::store::Store;
use crate::tokens::new_id;
pub use crate::tokens::new_token;

/// What every connection shares: the rooms, the store and the server's settings.
pub struct App {
    rooms: Arc<Rooms>,
    next_conn: AtomicU64,
    /// The organizer's token.
    admin_token: String,
    store: Option<Store>,
    limits: Limits,
    /// What each address may take: connections, messages, new matches.
    guard: Arc<guard::Guard>,
    /// Becomes true when the server stops: sessions close with 1001 (going away).
    stopping: tokio::sync::watch::Sender<bool>,
    room_settings: RoomSettings,
    accounts: Accounts,
    /// Login attempts per account.
    attempts: logins::Attempts,
    ratings: ratings::Ratings,
    lobby: lobby::Lobby,
    tournaments: tournament::Tournaments,
    archive: archive::Cache,
    analyses: analysis::Analyses,
    /// Rooms report finished rounds here; the tournaments and the ratings listen.
    finished: FinishSink,
    finished_rx: std::sync::Mutex<Option<tokio::sync::mpsc::UnboundedReceiver<room::Finished>>>,
    /// This node's place in a cluster, if it runs in one.
    cluster: std::sync::OnceLock<Arc<cluster::Cluster>>,
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
    /// Limits per address and on connections in all.
    pub address: guard::AddressLimits,
    /// Web origins besides the server's own whose pages may open `/ws` (`https://host:port`).
    pub allowed_origins: Vec<String>,
    /// Whether guests may register accounts of their own.
    pub registration: logins::Registration,
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
            address: guard::AddressLimits::default(),
            allowed_origins: Vec::new(),
            registration: logins::Registration::Closed,
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

/// The most matches one list answer holds, and how many it holds unless told.
pub const LIST_MAX: u32 = 500;
pub const LIST_DEFAULT: u32 = 100;

/// A page of the match list: its lines and, if there are more, where the next page starts.
pub struct Page {
    pub matches: Vec<MatchSummary>,
    pub next: Option<String>,
}

/// A list request's page size (checked) and cursor (parsed).
fn page_query(
    limit: Option<u32>,
    before: Option<&str>,
) -> Result<(u32, Option<(u64, String)>), String> {
    let limit = limit.unwrap_or(LIST_DEFAULT).clamp(1, LIST_MAX);
    let before = match before {
        Some(text) => Some(read_cursor(text).ok_or("`before` is not a cursor of this list")?),
        None => None,
    };
    Ok((limit, before))
}

/// `MS.ID`, the cursor of a page: the time and id of its last line.
fn cursor(ms: u64, id: &str) -> String {
    format!("{ms}.{id}")
}

fn read_cursor(text: &str) -> Option<(u64, String)> {
    let (ms, id) = text.split_once('.')?;
    (id.len() <= 64).then_some(())?;
    Some((ms.parse().ok()?, id.to_string()))
}

impl App {
    /// `store`: where matches are kept; `None` keeps them in memory only (for tests of the
    /// server's logic, never for a real server).
    pub fn new(
        admin_token: String,
        store: Option<Store>,
        limits: Limits,
        room_settings: RoomSettings,
    ) -> Arc<App> {
        let (finished, finished_rx) = tokio::sync::mpsc::unbounded_channel();
        Arc::new(App {
            rooms: Arc::new(Rooms::default()),
            next_conn: AtomicU64::new(1),
            admin_token,
            store,
            guard: guard::Guard::new(limits.address.clone()),
            stopping: tokio::sync::watch::channel(false).0,
            limits,
            room_settings,
            accounts: Accounts::default(),
            attempts: logins::Attempts::default(),
            ratings: ratings::Ratings::default(),
            lobby: lobby::Lobby::default(),
            tournaments: tournament::Tournaments::default(),
            archive: archive::Cache::default(),
            analyses: analysis::Analyses::default(),
            finished,
            finished_rx: std::sync::Mutex::new(Some(finished_rx)),
            cluster: std::sync::OnceLock::new(),
        })
    }

    /// Runs this server as a node of `cluster`: rooms are taken and routed by it from now on.
    pub async fn join_cluster(
        self: &Arc<App>,
        cluster: Arc<cluster::Cluster>,
    ) -> Result<(), String> {
        if !self.store.as_ref().is_some_and(Store::is_postgres) {
            return Err(
                "a cluster's nodes share one PostgreSQL database (--database postgres://...)"
                    .into(),
            );
        }
        self.rooms.on_retire(cluster.clone());
        let _ = self.cluster.set(cluster.clone());
        cluster.run(self).await
    }

    pub fn cluster(&self) -> Option<&Arc<cluster::Cluster>> {
        self.cluster.get()
    }

    /// Ends a room here at once, writing nothing more (another node owns it now).
    pub(crate) fn abdicate(&self, match_id: &str, why: &'static str) {
        if let Some(room) = self.rooms.get(match_id) {
            tokio::spawn(async move { room.abdicate(why).await });
        }
    }

    /// Stops a room here before its lease is let go, as the node stops: its writes are done
    /// when this returns.
    pub(crate) async fn hand_over(&self, match_id: &str) {
        if let Some(room) = self.rooms.get(match_id) {
            room.abdicate("the server is stopping: reconnect").await;
        }
    }

    /// Starts the room of a stored match that is not finished (a node taking it over);
    /// false if the match is finished. Running clocks are charged up to `alive_ms`.
    pub(crate) async fn restore_match(
        &self,
        match_id: &str,
        alive_ms: Option<u64>,
    ) -> Result<bool, String> {
        let Some(store) = &self.store else {
            return Ok(false);
        };
        let Some(stored) = store.load(match_id).await.map_err(|e| e.to_string())? else {
            return Err(format!("no match {match_id} in the store"));
        };
        if stored.finished {
            return Ok(false);
        }
        let created_ms = stored.created_ms;
        let (spec, replayed) = room::replay(stored, alive_ms)?;
        self.archive.forget(match_id);
        self.start_stored(store, match_id.to_string(), spec, replayed, created_ms);
        Ok(true)
    }

    /// Starts the room of a live match replayed from the store, its accounts seated.
    fn start_stored(
        &self,
        store: &Store,
        id: String,
        spec: store::MatchSpec,
        replayed: room::Replayed,
        created_ms: u64,
    ) {
        let start = self.stored_start(store, id, &spec, replayed, created_ms);
        self.seat_accounts(&start.id, &spec.game, &spec.variant, &start.tokens);
        self.start_room(start, spec.house_bot);
    }

    /// What a room of a stored match, replayed, starts from.
    fn stored_start(
        &self,
        store: &Store,
        id: String,
        spec: &store::MatchSpec,
        replayed: room::Replayed,
        created_ms: u64,
    ) -> Start {
        Start {
            id,
            round: replayed.round,
            tokens: Tokens::of_spec(spec),
            frames: replayed.frames,
            times: replayed.times,
            created_ms,
            store: Some(store.clone()),
            finished: Some(self.finished.clone()),
            settings: self.room_settings,
            spectator_delay: spec.spectator_delay,
        }
    }

    /// The arbiter token a tournament's assistant arbiter joins a board with (see
    /// [`tournament::Tournaments::assistant_credential`]), asked of the node that runs the
    /// tournaments when that is another.
    pub(crate) async fn assistant_credential(&self, match_id: &str, token: &str) -> Option<String> {
        if let Some(cluster) = self.cluster() {
            if let cluster::Holder::Elsewhere(at) = cluster.tournaments_holder().await {
                return cluster::route::assistant_credential(cluster, &at, match_id, token).await;
            }
        }
        self.tournaments.assistant_credential(match_id, token)
    }

    /// The lines of the live matches of this node.
    pub(crate) fn local_summaries(&self) -> Vec<MatchSummary> {
        self.rooms
            .handles()
            .iter()
            .map(LocalRoom::summary)
            .filter(|s| s.status != MatchStatus::Finished)
            .collect()
    }

    /// In a cluster: the room of a match not running here, at the node that owns it, or
    /// taken here if nobody does (its owner died, or it was let go).
    async fn find_in_cluster(&self, match_id: &str) -> Option<RoomHandle> {
        let cluster = self.cluster()?.clone();
        if !cluster::valid_key(match_id) {
            return None;
        }
        // A room retiring here still holds its lease for a moment.
        for _ in 0..100 {
            if let Some(room) = self.live(match_id) {
                return Some(RoomHandle::Local(room));
            }
            let lease = cluster.lease(match_id).await;
            match &lease {
                Some(lease) if lease.incarnation == cluster.incarnation() => {
                    tokio::time::sleep(std::time::Duration::from_millis(20)).await;
                    continue;
                }
                Some(lease) if cluster.is_alive(lease).await => {
                    return Some(RoomHandle::Remote(cluster::route::RemoteRoom::new(
                        cluster.clone(),
                        lease.incarnation.clone(),
                        match_id,
                    )));
                }
                _ => {}
            }
            let store = self.store.as_ref()?;
            if !matches!(store.is_unfinished(match_id).await, Ok(true)) {
                return None;
            }
            match cluster.take(self, store, match_id, lease).await {
                Ok(()) => {}
                Err(cluster::TakeError::Taken) => {
                    tokio::time::sleep(std::time::Duration::from_millis(20)).await;
                }
                Err(cluster::TakeError::Failed(e)) => {
                    tracing::warn!(%match_id, error = %e, "cluster: room not taken");
                    return None;
                }
            }
        }
        None
    }

    pub fn store(&self) -> Option<&Store> {
        self.store.as_ref()
    }

    /// Starts the server's own upkeep: addresses that went quiet are forgotten by the limits.
    pub fn run_upkeep(self: &Arc<App>) {
        let app = Arc::downgrade(self);
        tokio::spawn(async move {
            let mut every = tokio::time::interval(std::time::Duration::from_secs(60));
            loop {
                every.tick().await;
                let Some(app) = app.upgrade() else { break };
                app.guard.upkeep(|id| app.is_waiting(id));
                app.attempts.upkeep();
            }
        });
    }

    /// Is the match in memory, waiting for its first set?
    pub(crate) fn is_waiting(&self, match_id: &str) -> bool {
        self.rooms
            .get(match_id)
            .is_some_and(|room| room.status() == MatchStatus::Waiting)
    }

    /// Loads the tournaments from the store, brings each up to date with its matches (results
    /// that came in while the server was down, matches not yet created), rates the rounds
    /// that ended unrated, and from then on hands every round that ends to its tournament and,
    /// when rated, to the ratings. Call once, after [`App::restore_live_matches`]; returns how
    /// many tournaments were loaded.
    pub async fn run_results(self: &Arc<App>) -> Result<usize, String> {
        let receiver = self
            .finished_rx
            .lock()
            .map_err(|_| "tournaments already running".to_string())?
            .take();
        let Some(mut receiver) = receiver else {
            return Err("tournaments already running".into());
        };
        // In a cluster, the node that holds the tournaments' lease loads them when it takes it.
        let count = match self.cluster() {
            Some(_) => 0,
            None => tournament::restore(self).await?,
        };
        if let Err(e) = self.index_unlisted().await {
            tracing::error!(error = %e, "matches not listed under their accounts");
        }
        match ratings::catch_up(self).await {
            Ok(0) => {}
            Ok(rated) => tracing::info!(rated, "rounds that ended unrated were rated"),
            Err(e) => tracing::error!(error = %e, "unrated rounds not looked for"),
        }
        let app = self.clone();
        tokio::spawn(async move {
            // One round at a time: ratings are updated in the order rounds end.
            while let Some(finished) = receiver.recv().await {
                let room::Finished {
                    match_id,
                    result,
                    rated,
                } = finished;
                if let Some(rated) = &rated {
                    ratings::rate(&app, &match_id, rated, &result).await;
                }
                match app.cluster() {
                    // Told to the node that runs the tournaments, wherever the room ran.
                    Some(cluster) => {
                        cluster::route::match_finished(cluster, &match_id, &result).await
                    }
                    None => app.tournaments.match_finished(&match_id, result),
                }
            }
        });
        Ok(count)
    }

    /// Loads the accounts from the store.
    pub async fn load_accounts(&self) -> Result<usize, String> {
        let count = self.refresh_accounts().await?;
        ratings::Ratings::load(self).await?;
        Ok(count)
    }

    /// Reads the accounts and their sessions from the store again (a cluster's nodes learn
    /// so of the accounts made, changed or logged in at the others).
    pub(crate) async fn refresh_accounts(&self) -> Result<usize, String> {
        let Some(store) = &self.store else {
            return Ok(0);
        };
        let all = store.accounts().await.map_err(|e| e.to_string())?;
        for account in all.iter().cloned() {
            // A status this version does not know keeps the account out of use.
            let status = AccountStatus::parse(&account.status).unwrap_or(AccountStatus::Disabled);
            self.accounts.insert(
                &account.name,
                accounts::kind_of(&account.kind),
                &account.token,
                status,
                account.password_hash,
            );
        }
        for (session, name) in store.sessions().await.map_err(|e| e.to_string())? {
            // Stored sessions are never more than an account keeps.
            let _ = self.accounts.add_session(session, &name);
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
                password_hash: None,
                status: AccountStatus::Active.as_str().to_string(),
            };
            store
                .create_account(&account, wall_clock_ms())
                .await
                .map_err(|e| CreateError::Store(e.to_string()))?;
        }
        self.accounts
            .insert(name, kind, &token, AccountStatus::Active, None);
        Ok(token)
    }

    /// Is the match live (in memory and not finished)?
    pub(crate) fn is_live(&self, match_id: &str) -> bool {
        self.rooms
            .get(match_id)
            .is_some_and(|room| room.status() != MatchStatus::Finished)
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

    fn start_room(&self, start: Start, house_bot: Option<hakem_protocol::HouseBot>) -> LocalRoom {
        let config = start.round.config().clone();
        let tokens = start.tokens.clone();
        let handle = self.rooms.start(start);
        if let (Some(bot), false) = (house_bot, handle.status() == MatchStatus::Finished) {
            house_bot::spawn(
                handle.clone(),
                bot.seat,
                tokens.seats.get(bot.seat).clone(),
                config.game,
                config.variant,
                bot.level,
            );
        }
        handle
    }

    /// Rebuilds every unfinished match from the store; returns how many.
    pub async fn restore_live_matches(&self) -> Result<usize, String> {
        let Some(store) = &self.store else {
            return Ok(0);
        };
        let live = store.live_matches().await.map_err(|e| e.to_string())?;
        let count = live.len();
        let alive_ms = store.last_alive_ms();
        for stored in live {
            let id = stored.id.clone();
            let created_ms = stored.created_ms;
            match room::replay(stored, alive_ms) {
                Ok((spec, replayed)) => self.start_stored(store, id, spec, replayed, created_ms),
                Err(e) => tracing::error!(match_id = %id, error = %e, "match not restored"),
            }
        }
        Ok(count)
    }

    pub(crate) fn next_conn_id(&self) -> u64 {
        self.next_conn.fetch_add(1, Ordering::Relaxed)
    }

    /// The room of a live match on this node (or of a finished one still in its grace).
    pub(crate) fn live(&self, match_id: &str) -> Option<LocalRoom> {
        self.rooms.get(match_id)
    }

    /// A match that is only in the store, read once and cached.
    async fn archived(&self, match_id: &str) -> Option<Arc<Archived>> {
        if match_id.len() > 64 {
            return None;
        }
        if let Some(archived) = self.archive.get(match_id) {
            return Some(archived);
        }
        let store = self.store.as_ref()?;
        let stored = match store.load(match_id).await {
            Ok(Some(stored)) => stored,
            Ok(None) => return None,
            Err(e) => {
                tracing::error!(%match_id, error = %e, "match not loaded");
                return None;
            }
        };
        match Archived::of(stored) {
            Ok(archived) => {
                let archived = Arc::new(archived);
                self.archive.put(match_id, archived.clone());
                Some(archived)
            }
            Err(e) => {
                tracing::error!(%match_id, error = %e, "match not replayed");
                None
            }
        }
    }

    /// Where a match is: its live room, or the store.
    pub(crate) async fn find(&self, match_id: &str) -> Option<Found> {
        if let Some(room) = self.live(match_id) {
            return Some(Found::Live(RoomHandle::Local(room)));
        }
        if self.cluster().is_some() {
            if let Some(room) = Box::pin(self.find_in_cluster(match_id)).await {
                return Some(Found::Live(room));
            }
        }
        self.archived(match_id).await.map(Found::Archived)
    }

    /// A finished match's room started again from the store, because someone acts in it (a
    /// claim against the last move, say); it retires again after the grace.
    pub(crate) async fn revive(&self, match_id: &str) -> Option<RoomHandle> {
        if let Some(room) = self.live(match_id) {
            return Some(RoomHandle::Local(room));
        }
        if let Some(cluster) = self.cluster() {
            if let Some(room) = Box::pin(self.find_in_cluster(match_id)).await {
                return Some(room);
            }
            // Finished: taken here to be acted in, under a lease of its own.
            let store = self.store.as_ref()?;
            if Box::pin(cluster.claim_new(store, match_id)).await.is_err() {
                return Box::pin(self.find_in_cluster(match_id)).await;
            }
        }
        let store = self.store.as_ref()?;
        let stored = store.load(match_id).await.ok()??;
        let created_ms = stored.created_ms;
        let (spec, replayed) = room::replay(stored, None).ok()?;
        self.archive.forget(match_id);
        let start = self.stored_start(store, match_id.to_string(), &spec, replayed, created_ms);
        Some(RoomHandle::Local(self.start_room(start, None)))
    }

    /// The spectator's state of a match, live or stored.
    pub async fn match_state(&self, match_id: &str) -> Option<MatchState> {
        match self.find(match_id).await? {
            Found::Live(room) => room.state().await,
            Found::Archived(archived) => Some(archived.state()),
        }
    }

    /// Whether a match exists, live or stored.
    pub async fn match_exists(&self, match_id: &str) -> bool {
        self.find(match_id).await.is_some()
    }

    /// The game record of a match, from its stored events.
    pub async fn record(&self, match_id: &str) -> Option<String> {
        Some(self.stored_record(match_id).await?.to_text())
    }

    /// A match's record as the public may read it: from the store, and of a match spectators
    /// see late only as far as they see it.
    async fn stored_record(&self, match_id: &str) -> Option<hakem_games::record::Record> {
        let stored = match &self.store {
            Some(store) if match_id.len() <= 64 => store.load(match_id).await.ok()??,
            _ => return None,
        };
        let config = room::config_of(&stored.spec).ok()?;
        let mut frames = stored.frames;
        if let Some(room) = self.live(match_id) {
            frames.truncate(room.public_seq() as usize);
        }
        Some(hakem_round::record::record_of(&stored.id, &config, &frames))
    }

    /// The solver's verdict on every position of set `set` of a finished Pentago match.
    pub async fn analyse(
        &self,
        match_id: &str,
        set: u8,
    ) -> Result<analysis::SetAnalysis, analysis::Refused> {
        use analysis::Refused;
        let state = self
            .match_state(match_id)
            .await
            .ok_or(Refused::UnknownMatch)?;
        if state.status != hakem_protocol::MatchStatus::Finished {
            return Err(Refused::NotFinished);
        }
        let record = self
            .stored_record(match_id)
            .await
            .ok_or(Refused::UnknownMatch)?;
        let block = record
            .blocks
            .iter()
            .find(|b| b.tag("Set") == Some(set.to_string().as_str()))
            .ok_or(Refused::NoSuchSet)?;
        let first = match block.tag("FirstMover") {
            Some("p2") => hakem_protocol::Seat::P2,
            _ => hakem_protocol::Seat::P1,
        };
        let moves = block.moves.iter().map(|m| m.notation.clone()).collect();
        self.analyses
            .analyse(
                match_id,
                state.status,
                (&state.game, &state.variant),
                set,
                first,
                moves,
            )
            .await
    }

    /// A page of the match list: the live matches, the newest first, or the finished ones,
    /// the most recently finished first.
    pub async fn list(
        &self,
        status: ListStatus,
        limit: Option<u32>,
        before: Option<&str>,
    ) -> Result<Page, String> {
        let (limit, before) = page_query(limit, before)?;
        match status {
            ListStatus::Live => {
                let mut all = self.local_summaries();
                if let Some(cluster) = self.cluster() {
                    all.extend(cluster::route::remote_summaries(cluster).await);
                }
                let mut all: Vec<MatchSummary> = all
                    .into_iter()
                    .filter(|s| match &before {
                        Some((ms, id)) => (s.created_ms.unwrap_or(0), &s.match_id) < (*ms, id),
                        None => true,
                    })
                    .collect();
                all.sort_by(|a, b| (b.created_ms, &b.match_id).cmp(&(a.created_ms, &a.match_id)));
                let more = all.len() > limit as usize;
                all.truncate(limit as usize);
                let next = more
                    .then(|| all.last())
                    .flatten()
                    .map(|s| cursor(s.created_ms.unwrap_or(0), &s.match_id));
                Ok(Page { matches: all, next })
            }
            ListStatus::Finished => {
                let Some(store) = &self.store else {
                    return Ok(Page {
                        matches: Vec::new(),
                        next: None,
                    });
                };
                let lines = store
                    .finished(before, limit + 1)
                    .await
                    .map_err(|e| e.to_string())?;
                let more = lines.len() > limit as usize;
                let mut matches = Vec::with_capacity(lines.len());
                let mut last = None;
                for line in lines.into_iter().take(limit as usize) {
                    last = Some(cursor(line.finished_ms, &line.id));
                    let summary = match line.summary.as_deref().map(serde_json::from_str) {
                        Some(Ok(summary)) => Some(summary),
                        // Finished before summaries were stored: read the match itself.
                        _ => self
                            .archived(&line.id)
                            .await
                            .map(|a| a.summary(Some(line.finished_ms))),
                    };
                    matches.extend(summary);
                }
                Ok(Page {
                    matches,
                    next: if more { last } else { None },
                })
            }
        }
    }

    /// Lists under their accounts the matches created since the last one listed (all of them
    /// on the first start of this version).
    async fn index_unlisted(&self) -> Result<(), String> {
        let Some(store) = &self.store else {
            return Ok(());
        };
        for (id, created_ms, spec) in store.matches_to_index().await.map_err(|e| e.to_string())? {
            let Ok(spec) = serde_json::from_str::<store::MatchSpec>(&spec) else {
                continue;
            };
            if !spec.accounts.is_empty() {
                store
                    .index_match(&id, &spec.accounts, created_ms)
                    .await
                    .map_err(|e| e.to_string())?;
            }
        }
        Ok(())
    }

    /// An account's matches, newest first: the live ones as they stand, the finished ones as
    /// they ended. `before` is the `next` of the page before.
    pub async fn matches_of(
        &self,
        account: &str,
        limit: Option<u32>,
        before: Option<&str>,
    ) -> Result<Page, String> {
        let (limit, before) = page_query(limit, before)?;
        let Some(store) = &self.store else {
            return Ok(Page {
                matches: Vec::new(),
                next: None,
            });
        };
        let rows = store
            .matches_of(account, before, limit + 1)
            .await
            .map_err(|e| e.to_string())?;
        let more = rows.len() > limit as usize;
        let mut matches = Vec::with_capacity(rows.len().min(limit as usize));
        let mut last = None;
        for (id, created_ms, summary) in rows.into_iter().take(limit as usize) {
            last = Some(cursor(created_ms, &id));
            let line = match (self.rooms.get(&id), summary) {
                (Some(room), _) => Some(room.summary()),
                (None, Some(summary)) => serde_json::from_str::<MatchSummary>(&summary).ok(),
                // Neither live nor finished: a match that was never restored.
                (None, None) => None,
            };
            matches.extend(line);
        }
        Ok(Page {
            matches,
            next: last.filter(|_| more),
        })
    }

    pub fn account_exists(&self, name: &str) -> bool {
        self.accounts.exists(name)
    }

    /// The active account a token (its own, or a session's) speaks for.
    pub fn account_of_token(&self, token: &str) -> Option<String> {
        (!token.is_empty())
            .then(|| self.accounts.by_token(token))
            .flatten()
            .map(|holder| holder.name)
    }

    /// Two different player accounts, and no house bot: a match that may be rated.
    fn may_be_rated(&self, create: &CreateMatch) -> bool {
        let player = |name: &Option<String>| {
            name.as_deref().and_then(|name| self.accounts.kind_of(name))
                == Some(AccountKind::Player)
        };
        create.house_bot.is_none()
            && player(&create.accounts.p1)
            && player(&create.accounts.p2)
            && create.accounts.p1 != create.accounts.p2
    }

    /// Checks a `create_match` request and starts its room; for a tournament's board (`board`),
    /// its id and arbiter token are the tournament's choice (readable ids, one arbiter token for
    /// all).
    pub async fn open_match(
        &self,
        mut create: CreateMatch,
        board: Option<TournamentBoard>,
    ) -> Result<Created, CreateError> {
        let spectator_delay =
            SpectatorDelay::checked(create.spectator_delay).map_err(CreateError::Invalid)?;
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
                // Not "hakem bot": in Turkish "hakem" is the arbiter.
                *name = format!("computer (level {})", bot.level);
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
        if create.rated && !self.may_be_rated(&create) {
            if board.is_none() {
                return Err(CreateError::Invalid(
                    "a rated match seats two different player accounts (bots are not rated)".into(),
                ));
            }
            // A rated tournament's board with a bot, or an account not a player's: played
            // unrated, as the tournament's own rules say.
            create.rated = false;
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
        config.rated = create.rated;
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
                if !self.rooms.contains(&id) {
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
        let created_ms = wall_clock_ms();
        if let (Some(cluster), Some(store)) = (self.cluster(), &self.store) {
            Box::pin(cluster.claim_new(store, &match_id))
                .await
                .map_err(CreateError::Store)?;
        }
        if let Some(store) = &self.store {
            let mut spec = room::spec_of(&config, &tokens);
            spec.house_bot = create.house_bot;
            spec.spectator_delay = spectator_delay;
            if let Err(e) = store.create_match(&match_id, &spec, created_ms).await {
                if let Some(cluster) = self.cluster() {
                    Box::pin(cluster.release(&match_id)).await;
                }
                return Err(CreateError::Store(e.to_string()));
            }
            if !create.accounts.is_empty() {
                if let Err(e) = store
                    .index_match(&match_id, &create.accounts, created_ms)
                    .await
                {
                    // The match itself is stored: its listing is tried again a little later
                    // (and at the next start, if the server stops first).
                    tracing::warn!(%match_id, error = %e, "match not listed under its accounts yet");
                    let (store, id, accounts) =
                        (store.clone(), match_id.clone(), create.accounts.clone());
                    tokio::spawn(async move {
                        for wait in [1, 5, 30, 120] {
                            tokio::time::sleep(std::time::Duration::from_secs(wait)).await;
                            if store.index_match(&id, &accounts, created_ms).await.is_ok() {
                                return;
                            }
                        }
                        tracing::error!(match_id = %id, "match not listed under its accounts");
                    });
                }
            }
        }
        let (game, variant) = (config.game, config.variant);
        let start = Start {
            id: match_id.clone(),
            round: hakem_round::Round::new(config),
            tokens: tokens.clone(),
            frames: Vec::new(),
            times: Vec::new(),
            created_ms,
            store: self.store.clone(),
            finished: Some(self.finished.clone()),
            settings: self.room_settings,
            spectator_delay,
        };
        self.start_room(start, create.house_bot);
        self.seat_accounts(&match_id, game.as_str(), variant, &tokens);
        tracing::info!(%match_id, game = %create.game, "match created");
        Ok(Created {
            match_id,
            seat_tokens,
            arbiter_token,
        })
    }
}

/// Where a match was found.
pub(crate) enum Found {
    Live(RoomHandle),
    Archived(Arc<Archived>),
}

/// Milliseconds since the Unix epoch, for clients to line their clocks up with the server's.
pub fn wall_clock_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}
