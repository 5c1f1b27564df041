//! Match rooms: one tokio task per live match ([`actor`]) owns its [`Round`], numbers every
//! event, stores it before anyone hears of it, and sends it to players, arbiter and
//! spectators. The rest of the server reaches a room only through its typed [`LocalRoom`]
//! (the seam along which rooms can later live on other nodes); reads of its state never wait
//! in its queue behind moves, since the room publishes its latest state after every change.
//!
//! A room whose round is over retires after a grace period: its task ends and it leaves the
//! registry; the match stays readable from the store.

mod actor;
pub mod chat;
#[cfg(test)]
mod chat_tests;
#[cfg(test)]
mod clock_tests;
mod delay;
#[cfg(test)]
mod test_support;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use dashmap::DashMap;
use hakem_protocol::RequestId;
use hakem_protocol::{
    MatchState, MatchStatus, MatchSummary, PerSeat, RoundResult, Seat, SpectatorDelay,
};
use hakem_round::{Command, MatchConfig, Round};
use tokio::sync::{mpsc, oneshot, watch};
use tokio::time::Instant;

use crate::outbox::{ConnId, Outbox};
use crate::store::{MatchSpec, Store, StoredMatch};
use crate::tokens::Token;
pub use chat::Speaker;

/// Commands waiting for a room; a full queue makes senders wait, never drops a move.
const ROOM_QUEUE: usize = 256;

/// How a connection enters a room.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Credential {
    Seat(String),
    Arbiter(String),
    Spectator,
}

/// What a member may do in a room.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    Player(Seat),
    Arbiter,
    Spectator,
}

impl Role {
    /// `player`, `arbiter` or `spectator`.
    pub fn metric_label(self) -> &'static str {
        match self {
            Role::Player(_) => "player",
            Role::Arbiter => "arbiter",
            Role::Spectator => "spectator",
        }
    }

    /// `p1`, `p2`, `arbiter` or `spectator`: the `you` of a `state`.
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Player(seat) => seat.as_str(),
            Role::Arbiter => "arbiter",
            Role::Spectator => "spectator",
        }
    }
}

/// The role a credential gives in a match with these tokens; `None` for a wrong token.
pub fn role_of(credential: &Credential, tokens: &Tokens) -> Option<Role> {
    use crate::tokens::same_token;
    match credential {
        Credential::Spectator => Some(Role::Spectator),
        Credential::Arbiter(token) => same_token(&tokens.arbiter, token).then_some(Role::Arbiter),
        Credential::Seat(token) => Seat::BOTH
            .into_iter()
            .find(|&seat| same_token(tokens.seats.get(seat), token))
            .map(Role::Player),
    }
}

/// A connection entering a room as a player, the arbiter or a spectator.
#[derive(Debug)]
pub struct Join {
    pub conn: ConnId,
    pub credential: Credential,
    /// Send the events after this one instead of a `state`.
    pub since_seq: Option<u64>,
    /// Send the match's first state and every event since, so that the member sees the
    /// match so far (unless `since_seq` is given).
    pub history: bool,
    /// Include the legal moves in every `state` sent to this member.
    pub legal_moves: bool,
    /// The member takes the events of one action in one `events` frame.
    pub batch: bool,
    /// The member takes boards in events.
    pub boards: bool,
    /// The member is told of rematch offers.
    pub rematch: bool,
    /// The member reads the match's chat.
    pub chat: bool,
    /// Who the member is beyond its role, for the chat.
    pub speaker: Speaker,
    pub outbox: Outbox,
    pub re: Option<RequestId>,
}

/// An action as a member sends it, before the room knows the seat.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Action {
    Place(String),
    Rotate(String, String),
    Move(String, bool),
    Press,
    Ready,
    Resign,
    OfferDraw,
    DeclineDraw,
    Claim(String),
    Arbiter(Command),
    /// A chat message or the chat's moderation (boxed: rare, and larger than a move).
    Chat(Box<ChatRequest>),
}

impl Action {
    /// A message for the chat (as opposed to its moderation).
    pub fn is_chat_message(&self) -> bool {
        matches!(self, Action::Chat(request) if matches!(request.action, ChatAction::Say { .. }))
    }
}

/// What a member asks of the chat, and who asks (checked by the session at that moment).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChatRequest {
    pub action: ChatAction,
    pub speaker: Speaker,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ChatAction {
    Say {
        channel: Option<hakem_protocol::ChatChannel>,
        text: String,
    },
    /// The arbiter's or the organizer's: mutes a seat or an account, or lets it write again.
    Mute {
        target: hakem_protocol::ChatMute,
        muted: bool,
    },
    /// The arbiter's or the organizer's: the chat on or off.
    Switch(bool),
}

/// The tokens of a match, and the accounts seated in it.
#[derive(Clone, Debug)]
pub struct Tokens {
    pub seats: PerSeat<Token>,
    pub arbiter: Token,
    pub accounts: PerSeat<Option<String>>,
}

impl Tokens {
    /// The tokens and accounts recorded in a stored match.
    pub fn of_spec(spec: &MatchSpec) -> Tokens {
        Tokens {
            seats: spec.seat_tokens.clone(),
            arbiter: spec.arbiter_token.clone(),
            accounts: spec.accounts.clone(),
        }
    }
}

/// The settings and secrets of a match, as stored.
pub fn spec_of(config: &MatchConfig, tokens: &Tokens) -> MatchSpec {
    MatchSpec {
        game: config.game.as_str().to_string(),
        variant: config.variant.to_string(),
        sets: config.sets,
        clock: config.clock,
        warnings_limit: config.warnings_limit,
        players: config.players.clone(),
        untimed_ply_limit: config.untimed_ply_limit,
        seat_tokens: tokens.seats.clone(),
        arbiter_token: tokens.arbiter.clone(),
        accounts: tokens.accounts.clone(),
        house_bot: None,
        tournament: config.tournament.clone(),
        spectator_delay: None,
        rated: config.rated,
    }
}

/// The configuration of a stored match.
pub fn config_of(spec: &MatchSpec) -> Result<MatchConfig, String> {
    let mut config = MatchConfig::new(
        &spec.game,
        Some(&spec.variant),
        spec.sets,
        spec.clock,
        spec.warnings_limit,
        spec.players.clone(),
    )?;
    config.untimed_ply_limit = spec.untimed_ply_limit;
    config.tournament = spec.tournament.clone();
    config.house_bot = spec.house_bot.map(|bot| bot.seat);
    config.rated = spec.rated;
    Ok(config)
}

/// A stored match replayed: the round as its events left it, and its event frames.
pub struct Replayed {
    pub round: Round,
    pub frames: Vec<String>,
    /// When each frame was stored, if read (see [`StoredMatch::times`]).
    pub times: Vec<u64>,
}

/// Rebuilds a stored match by replaying its events; the clocks continue from the last
/// recorded reading, the running one charged up to `alive_ms` (when the server before was last
/// known alive): the time a player thought before a crash is not given back, the time the
/// server was down is charged to nobody.
pub fn replay(stored: StoredMatch, alive_ms: Option<u64>) -> Result<(MatchSpec, Replayed), String> {
    let config = config_of(&stored.spec)?;
    let mut round = Round::new(config);
    let mut last_clocks = None;
    for (i, text) in stored.frames.iter().enumerate() {
        let frame = match serde_json::from_str::<hakem_protocol::ServerMessage>(text) {
            Ok(hakem_protocol::ServerMessage::Event(frame)) if frame.seq == i as u64 + 1 => frame,
            _ => return Err(format!("match {}: event {} is damaged", stored.id, i + 1)),
        };
        round.apply(&frame.event, 0);
        if frame.clocks.is_some() {
            last_clocks = frame.clocks;
        }
    }
    if let Some(reading) = last_clocks {
        round.restore_clocks(&reading, 0);
        if let Some(alive_ms) = alive_ms {
            round.charge_running_clock(alive_ms.saturating_sub(reading.server_time_ms));
        }
    }
    Ok((
        stored.spec,
        Replayed {
            round,
            frames: stored.frames,
            times: stored.times,
        },
    ))
}

/// How long rooms live, and how much of their history they keep in memory.
#[derive(Clone, Copy, Debug)]
pub struct RoomSettings {
    /// A room whose round is over leaves memory after this long.
    pub retire_after: Duration,
    /// A match still waiting for its first set, with nobody at it, expires this long after
    /// it was created.
    pub expire_after: Duration,
    /// Events kept in memory for members who come back; older ones are read from the store.
    pub history: usize,
}

impl Default for RoomSettings {
    fn default() -> RoomSettings {
        RoomSettings {
            retire_after: Duration::from_secs(60),
            expire_after: Duration::from_secs(24 * 3600),
            history: 256,
        }
    }
}

/// Where a room reports the end of its round (a tournament records the result, a rated
/// match's players are rated).
pub type FinishSink = mpsc::UnboundedSender<Finished>;

/// A round that ended.
#[derive(Clone, Debug)]
pub struct Finished {
    pub match_id: String,
    pub result: RoundResult,
    /// The rating pool and the two accounts, when the match is rated.
    pub rated: Option<Rated>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rated {
    pub pool: String,
    pub accounts: PerSeat<String>,
}

impl Rated {
    /// A rated match's pool and players, from its configuration and the accounts seated.
    pub fn of(config: &MatchConfig, accounts: &PerSeat<Option<String>>) -> Option<Rated> {
        if !config.rated {
            return None;
        }
        Some(Rated {
            pool: hakem_round::rating::pool(config.game.as_str(), config.variant),
            accounts: PerSeat::new(accounts.p1.clone()?, accounts.p2.clone()?),
        })
    }
}

/// The room is no longer running (it retired): ask the server again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Gone;

/// What a room publishes after every change, for reads that must not wait in its queue: the
/// round itself (a room never changes a round in place, it replaces it), so that publishing
/// costs nothing and a reader works out the state it wants, clocks brought up to the moment.
#[derive(Debug)]
pub struct Published {
    pub id: Arc<str>,
    /// The round as it is (for the server's own decisions).
    pub round: Arc<Round>,
    pub seq: u64,
    /// What spectators and public reads are shown, when they see the match late.
    pub shown: Option<Shown>,
    /// The room's clock: the round's times count from here.
    pub epoch: Instant,
    pub created_ms: u64,
    /// Just restarted from the store: whoever the log says is connected is not (yet).
    pub restarted: bool,
}

/// The match as spectators see it when they see it late: the round after event `seq`.
#[derive(Clone, Debug)]
pub struct Shown {
    pub round: Arc<Round>,
    pub seq: u64,
    pub delay: SpectatorDelay,
}

impl Published {
    /// The spectator's state now (as late as spectators see it).
    pub fn state_now(&self) -> MatchState {
        let now = self.epoch.elapsed().as_millis() as hakem_round::Millis;
        let (round, seq) = self.public();
        let mut state = round.state(&self.id, seq, now, crate::wall_clock_ms());
        state.spectator_delay = self.shown.as_ref().map(|shown| shown.delay);
        if self.restarted {
            state.players.p1.connected = false;
            state.players.p2.connected = false;
        }
        state
    }

    pub fn summary(&self) -> MatchSummary {
        summary_of_round(&self.id, self.public().0, self.created_ms, None)
    }

    /// The round and the last event the public is shown.
    pub fn public(&self) -> (&Round, u64) {
        match &self.shown {
            Some(shown) => (&shown.round, shown.seq),
            None => (&self.round, self.seq),
        }
    }
}

/// A match's line in the list, from its round.
pub fn summary_of_round(
    id: &str,
    round: &Round,
    created_ms: u64,
    finished_ms: Option<u64>,
) -> MatchSummary {
    let config = round.config();
    MatchSummary {
        match_id: id.to_string(),
        game: config.game.as_str().to_string(),
        variant: config.variant.to_string(),
        players: config.players.clone(),
        status: round.status(),
        set: round.set_no(),
        set_points: round.set_points(),
        tournament: config.tournament.clone(),
        expired: round.is_expired(),
        created_ms: Some(created_ms),
        finished_ms,
    }
}

/// A command as it waits in a room's queue, with the moment it was sent (an action's: the
/// moment its frame was read). What it causes is timed then, not when the room gets to it: the
/// room may be busy, or its clock's timer may fire in between.
struct Queued {
    at: Instant,
    command: RoomCommand,
}

/// A request to a room.
enum RoomCommand {
    /// Boxed: a join is rare and larger than the rest, and every queued command takes the
    /// size of the largest.
    Join(Box<Join>),
    Leave {
        conn: ConnId,
    },
    /// Queued at the moment its frame was read.
    Act {
        conn: ConnId,
        action: Action,
        outbox: Outbox,
        re: Option<RequestId>,
    },
    Decree {
        command: Command,
        before_play: bool,
        reply: oneshot::Sender<Result<(), String>>,
    },
    /// A seated member offers a rematch of the finished round.
    OfferRematch {
        conn: ConnId,
        reply: oneshot::Sender<Result<RematchStep, String>>,
    },
    /// The rematch both seats asked for was created (`Some`, its id and seat tokens), or not.
    RematchMade {
        made: Option<(String, PerSeat<String>)>,
    },
    /// Another node owns the room now, or this node stops: the room ends at once, writing
    /// nothing more, and its members are told why (they reconnect to its new owner).
    Abdicate {
        why: &'static str,
        done: Option<oneshot::Sender<()>>,
    },
}

/// Where a rematch stands after an offer.
#[derive(Debug)]
pub enum RematchStep {
    /// Offered; the other seat is told.
    Offered,
    /// Both seats asked: the caller creates this match and reports it with
    /// [`LocalRoom::rematch_made`].
    Create(Box<hakem_protocol::CreateMatch>),
    /// Made already: this seat's new match and token.
    Made {
        match_id: String,
        seat_token: String,
        seat: Seat,
    },
}

/// The way to a room, wherever it runs: on this node, or on another node of the cluster.
/// Cheap to clone.
#[derive(Clone, Debug)]
pub enum RoomHandle {
    Local(LocalRoom),
    Remote(crate::cluster::route::RemoteRoom),
}

impl RoomHandle {
    /// Enters the room: the room answers the member itself (`state` or events, then `ack`,
    /// or an error).
    pub async fn join(&self, join: Join) -> Result<(), Gone> {
        match self {
            RoomHandle::Local(room) => room.join(join).await,
            // Boxed: a room elsewhere is the rare case, and its request is a large future in
            // every connection's task.
            RoomHandle::Remote(room) => Box::pin(room.join(join)).await,
        }
    }

    /// The connection leaves (or is gone).
    pub async fn leave(&self, conn: ConnId) -> Result<(), Gone> {
        match self {
            RoomHandle::Local(room) => room.leave(conn).await,
            RoomHandle::Remote(room) => Box::pin(room.leave(conn)).await,
        }
    }

    /// A member's action; the room answers it through `outbox`. `frame` is the client's
    /// frame as sent (a room elsewhere reads it again).
    pub async fn act(
        &self,
        conn: ConnId,
        action: Action,
        frame: &str,
        context: ActContext,
    ) -> Result<(), Gone> {
        match self {
            RoomHandle::Local(room) => {
                room.act(conn, action, context.outbox, context.re, context.received)
                    .await
            }
            RoomHandle::Remote(room) => {
                let speaker = context.speaker.unwrap_or_default();
                Box::pin(room.act(conn, frame, speaker)).await
            }
        }
    }

    /// The spectator's state now.
    pub async fn state(&self) -> Option<MatchState> {
        match self {
            RoomHandle::Local(room) => Some(room.state()),
            RoomHandle::Remote(room) => Box::pin(room.state()).await,
        }
    }

    /// The room on this node, if it runs here.
    pub fn local(&self) -> Option<&LocalRoom> {
        match self {
            RoomHandle::Local(room) => Some(room),
            RoomHandle::Remote(_) => None,
        }
    }
}

/// What goes with an action besides the action itself.
pub struct ActContext {
    pub outbox: Outbox,
    pub re: Option<RequestId>,
    /// When the frame was read: the action's time on the clocks, and the start of its latency.
    pub received: Instant,
    /// Who sends it, for a room elsewhere (a room here has it in the action).
    pub speaker: Option<Speaker>,
}

/// The way to a room running on this node. Cheap to clone.
#[derive(Clone, Debug)]
pub struct LocalRoom {
    instance: u64,
    tx: mpsc::Sender<Queued>,
    published: watch::Receiver<Arc<Published>>,
}

impl std::fmt::Debug for RoomCommand {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("RoomCommand")
    }
}

impl LocalRoom {
    async fn send(&self, command: RoomCommand) -> Result<(), Gone> {
        self.send_at(Instant::now(), command).await
    }

    async fn send_at(&self, at: Instant, command: RoomCommand) -> Result<(), Gone> {
        self.tx.send(Queued { at, command }).await.map_err(|_| Gone)
    }

    /// Enters the room: the room answers the member itself (`state` or events, then `ack`,
    /// or an error).
    pub async fn join(&self, join: Join) -> Result<(), Gone> {
        self.send(RoomCommand::Join(Box::new(join))).await
    }

    /// The connection leaves (or is gone); its seat's last connection leaving is announced.
    pub async fn leave(&self, conn: ConnId) -> Result<(), Gone> {
        self.send(RoomCommand::Leave { conn }).await
    }

    /// A member's action; the room answers it through `outbox`.
    pub async fn act(
        &self,
        conn: ConnId,
        action: Action,
        outbox: Outbox,
        re: Option<RequestId>,
        received: Instant,
    ) -> Result<(), Gone> {
        self.send_at(
            received,
            RoomCommand::Act {
                conn,
                action,
                outbox,
                re,
            },
        )
        .await
    }

    /// A command of the server itself (a tournament's forfeit), stored and announced like an
    /// arbiter's; with `before_play`, refused once a set has started. The outcome says whether
    /// the round took it.
    pub async fn decree(&self, command: Command, before_play: bool) -> Result<(), String> {
        let (reply, answer) = oneshot::channel();
        self.send(RoomCommand::Decree {
            command,
            before_play,
            reply,
        })
        .await
        .map_err(|_| "the match room has stopped".to_string())?;
        answer
            .await
            .unwrap_or_else(|_| Err("the match room has stopped".into()))
    }

    /// A seated connection offers a rematch (the round must be over).
    pub async fn offer_rematch(&self, conn: ConnId) -> Result<RematchStep, String> {
        let (reply, answer) = oneshot::channel();
        self.send(RoomCommand::OfferRematch { conn, reply })
            .await
            .map_err(|_| "the match room has stopped".to_string())?;
        answer
            .await
            .unwrap_or_else(|_| Err("the match room has stopped".into()))
    }

    /// Ends the room at once (see [`RoomCommand::Abdicate`]); waits until it has ended.
    pub async fn abdicate(&self, why: &'static str) {
        let (done, ended) = oneshot::channel();
        if self
            .send(RoomCommand::Abdicate {
                why,
                done: Some(done),
            })
            .await
            .is_ok()
        {
            let _ = ended.await;
        }
    }

    /// Reports the rematch created after [`RematchStep::Create`] (`None`: it could not be).
    pub async fn rematch_made(&self, made: Option<(String, PerSeat<String>)>) -> Result<(), Gone> {
        self.send(RoomCommand::RematchMade { made }).await
    }

    /// The latest published state, the running clock brought up to now.
    pub fn state(&self) -> MatchState {
        self.published.borrow().state_now()
    }

    pub fn summary(&self) -> MatchSummary {
        self.published.borrow().summary()
    }

    pub fn status(&self) -> MatchStatus {
        self.published.borrow().round.status()
    }

    /// The last event spectators have been shown (every event, unless they see it late).
    pub fn public_seq(&self) -> u64 {
        self.published.borrow().public().1
    }
}

/// The live rooms by match id.
#[derive(Default)]
pub struct Rooms {
    map: DashMap<String, LocalRoom>,
    next_instance: AtomicU64,
    /// In a cluster: a room that retires lets its lease go.
    cluster: std::sync::OnceLock<Arc<crate::cluster::Cluster>>,
}

/// What a room needs to start.
pub struct Start {
    pub id: String,
    pub round: Round,
    pub tokens: Tokens,
    /// The match's event frames so far (only the last ones are kept in memory).
    pub frames: Vec<String>,
    /// When each was stored, if known: spectators who see the match late are held back by it.
    pub times: Vec<u64>,
    pub created_ms: u64,
    pub store: Option<Store>,
    pub finished: Option<FinishSink>,
    pub settings: RoomSettings,
    /// Spectators see the match this far behind (`None`: live).
    pub spectator_delay: Option<SpectatorDelay>,
}

impl Rooms {
    pub fn get(&self, id: &str) -> Option<LocalRoom> {
        self.map.get(id).map(|room| room.value().clone())
    }

    pub fn contains(&self, id: &str) -> bool {
        self.map.contains_key(id)
    }

    /// Every room's handle (a snapshot of the registry).
    pub fn handles(&self) -> Vec<LocalRoom> {
        self.map.iter().map(|e| e.value().clone()).collect()
    }

    /// Starts a room and registers it, unless a room of that match runs already: then that
    /// one's handle is returned and `start` is dropped.
    pub fn start(self: &Arc<Rooms>, start: Start) -> LocalRoom {
        match self.map.entry(start.id.clone()) {
            dashmap::mapref::entry::Entry::Occupied(entry) => entry.get().clone(),
            dashmap::mapref::entry::Entry::Vacant(entry) => {
                let instance = self.next_instance.fetch_add(1, Ordering::Relaxed);
                let handle = actor::spawn(start, instance, self.clone());
                entry.insert(handle.clone());
                handle
            }
        }
    }

    /// Rooms retiring from now on let their cluster leases go.
    pub fn on_retire(&self, cluster: Arc<crate::cluster::Cluster>) {
        let _ = self.cluster.set(cluster);
    }

    /// A room retired for good: its lease, if any, is let go.
    async fn retired(&self, id: &str) {
        if let Some(cluster) = self.cluster.get() {
            cluster.release(id).await;
        }
    }

    /// Takes a retiring room out of the registry (if the entry is still that room).
    fn retire(&self, id: &str, instance: u64) {
        self.map.remove_if(id, |_, room| room.instance == instance);
    }
}
