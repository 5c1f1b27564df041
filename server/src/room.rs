//! A match room: one tokio task that owns a match's [`Round`], receives commands on a channel,
//! numbers every event (`seq`, without gaps), and sends it to players, arbiter and spectators.
//! The room arms a timer for the running clock and ends a set on time by itself.

use std::collections::HashMap;
use std::sync::{Arc, RwLock};
use std::time::Duration;

use axum::extract::ws::Utf8Bytes;
use hakem_protocol::{
    ErrorCode, ErrorReply, Event, EventFrame, MatchState, MatchStatus, MatchSummary, PerSeat,
    PlayerInfo, PositionView, RoundResult, Seat, ServerMessage,
};
use serde_json::Value;
use tokio::sync::{mpsc, oneshot, Notify};
use tokio::time::Instant;

use hakem_round::clock::Millis;
use hakem_round::{Command, MatchConfig, Refusal, Round};
use crate::store::{MatchSpec, NewEvent, Store, StoredMatch};
use crate::tokens::{same_token, Token};
use hakem_round::board as view;
use crate::wall_clock_ms;

/// A connection, as rooms know it.
pub type ConnId = u64;

/// Commands waiting for a room; a full queue makes senders wait, never drops a move.
const ROOM_QUEUE: usize = 256;

/// The way to a connection's socket: a bounded queue of frames. A connection whose queue is
/// full is not read fast enough; it is told to close rather than slowing the room.
#[derive(Clone, Debug)]
pub struct Outbox {
    tx: mpsc::Sender<Utf8Bytes>,
    kill: Arc<Notify>,
}

impl Outbox {
    pub fn new(tx: mpsc::Sender<Utf8Bytes>, kill: Arc<Notify>) -> Outbox {
        Outbox { tx, kill }
    }

    /// Queues a frame; false when the connection is gone or too slow (and is then told to close).
    pub fn send(&self, frame: Utf8Bytes) -> bool {
        match self.tx.try_send(frame) {
            Ok(()) => true,
            Err(mpsc::error::TrySendError::Full(_)) => {
                self.kill.notify_one();
                false
            }
            Err(mpsc::error::TrySendError::Closed(_)) => false,
        }
    }

    pub fn send_message(&self, message: &ServerMessage) -> bool {
        self.send(encode(message))
    }
}

/// Serializes a server message once, to be shared by every recipient.
pub fn encode(message: &ServerMessage) -> Utf8Bytes {
    // These types always serialize; an empty frame would only mean a bug in them.
    Utf8Bytes::from(serde_json::to_string(message).unwrap_or_default())
}

/// How a connection enters a room.
#[derive(Debug)]
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
    fn metric_label(self) -> &'static str {
        match self {
            Role::Player(_) => "player",
            Role::Arbiter => "arbiter",
            Role::Spectator => "spectator",
        }
    }

    fn as_str(self) -> &'static str {
        match self {
            Role::Player(seat) => seat.as_str(),
            Role::Arbiter => "arbiter",
            Role::Spectator => "spectator",
        }
    }
}

/// A connection entering a room as a player, the arbiter or a spectator.
#[derive(Debug)]
pub struct Join {
    pub conn: ConnId,
    pub credential: Credential,
    /// Send the events after this one instead of a `state`.
    pub since_seq: Option<u64>,
    /// Include the legal moves in every `state` sent to this member.
    pub legal_moves: bool,
    pub outbox: Outbox,
    pub re: Option<Value>,
}

/// A request to the room from a connection (or from the HTTP API).
#[derive(Debug)]
pub enum RoomCommand {
    Join(Join),
    Leave {
        conn: ConnId,
    },
    /// The connection closed.
    Gone {
        conn: ConnId,
    },
    /// A player or arbiter action; the seat comes from the member's role.
    Act {
        conn: ConnId,
        action: Action,
        outbox: Outbox,
        re: Option<Value>,
        /// When the frame arrived, for the latency histogram.
        received: Instant,
    },
    /// A spectator's view of the whole state.
    Snapshot {
        reply: oneshot::Sender<MatchState>,
    },
    /// The game record, as text.
    Record {
        reply: oneshot::Sender<String>,
    },
    /// A command of the server itself (a tournament's forfeit): stored and announced like an
    /// arbiter's; the reply says whether the round accepted it.
    Decree {
        command: Command,
        /// Refuse once a set has started (a forfeit is for a match nobody has played).
        before_play: bool,
        reply: oneshot::Sender<Result<(), String>>,
    },
}

/// Where a room reports the end of its round (a tournament records the result).
pub type FinishSink = mpsc::UnboundedSender<(String, RoundResult)>;

/// An action as a member sends it, before the room knows the seat.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Action {
    Place(String),
    Rotate(String, String),
    Move(String, bool),
    Press,
    Ready,
    Resign,
    Claim(String),
    Arbiter(Command),
}

/// The handle by which the rest of the server reaches a room.
#[derive(Clone, Debug)]
pub struct RoomHandle {
    pub tx: mpsc::Sender<RoomCommand>,
    pub summary: Arc<RwLock<MatchSummary>>,
}

impl RoomHandle {
    pub fn summary(&self) -> MatchSummary {
        match self.summary.read() {
            Ok(summary) => summary.clone(),
            Err(poisoned) => poisoned.into_inner().clone(),
        }
    }
}

/// The tokens of a match, and the accounts seated in it.
#[derive(Clone, Debug)]
pub struct Tokens {
    pub seats: PerSeat<Token>,
    pub arbiter: Token,
    pub accounts: PerSeat<Option<String>>,
}

struct Member {
    role: Role,
    outbox: Outbox,
    legal_moves: bool,
}

pub struct Room {
    id: String,
    round: Round,
    tokens: Tokens,
    seq: u64,
    /// Every event frame so far, for clients that re-join with `since_seq`.
    log: Vec<Utf8Bytes>,
    members: HashMap<ConnId, Member>,
    /// Live connections per seat, to announce connects and disconnects once.
    seat_connections: PerSeat<u32>,
    epoch: Instant,
    summary: Arc<RwLock<MatchSummary>>,
    rx: mpsc::Receiver<RoomCommand>,
    /// Where events are written before anyone hears of them; `None` only in unit tests.
    store: Option<Store>,
    /// Members whose outbox overflowed or closed during a broadcast, to be removed after it.
    dropped: Vec<ConnId>,
    finished: Option<FinishSink>,
}

/// Starts a room task for a new match and returns its handle.
pub fn spawn(
    id: String,
    config: MatchConfig,
    tokens: Tokens,
    store: Option<Store>,
    finished: Option<FinishSink>,
) -> RoomHandle {
    start(
        id,
        Round::new(config),
        tokens,
        0,
        Vec::new(),
        store,
        finished,
    )
}

fn start(
    id: String,
    round: Round,
    tokens: Tokens,
    seq: u64,
    log: Vec<Utf8Bytes>,
    store: Option<Store>,
    finished: Option<FinishSink>,
) -> RoomHandle {
    let (tx, rx) = mpsc::channel(ROOM_QUEUE);
    let summary = Arc::new(RwLock::new(summary_of(&id, &round)));
    if round.status() != MatchStatus::Finished {
        metrics::gauge!("hakem_live_matches").increment(1.0);
    }
    let room = Room {
        id,
        round,
        tokens,
        seq,
        log,
        members: HashMap::new(),
        seat_connections: PerSeat::default(),
        epoch: Instant::now(),
        summary: summary.clone(),
        rx,
        store,
        dropped: Vec::new(),
        finished,
    };
    tokio::spawn(room.run());
    RoomHandle { tx, summary }
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
    }
}

/// Rebuilds a stored match by replaying its events and starts its room. The clocks continue
/// from the last recorded reading: the time the server was down is charged to nobody.
pub fn restore(
    stored: StoredMatch,
    store: Option<Store>,
    finished: Option<FinishSink>,
) -> Result<RoomHandle, String> {
    let spec = stored.spec;
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
    let mut round = Round::new(config);
    let mut log = Vec::with_capacity(stored.frames.len());
    let mut last_clocks = None;
    for (i, text) in stored.frames.into_iter().enumerate() {
        let frame = match serde_json::from_str::<ServerMessage>(&text) {
            Ok(ServerMessage::Event(frame)) if frame.seq == i as u64 + 1 => frame,
            _ => return Err(format!("match {}: event {} is damaged", stored.id, i + 1)),
        };
        round.apply(&frame.event, 0);
        if frame.clocks.is_some() {
            last_clocks = frame.clocks;
        }
        log.push(Utf8Bytes::from(text));
    }
    if let Some(reading) = last_clocks {
        round.restore_clocks(&reading, 0);
    }
    let tokens = Tokens::of_spec(&spec);
    let seq = log.len() as u64;
    Ok(start(stored.id, round, tokens, seq, log, store, finished))
}

fn summary_of(id: &str, round: &Round) -> MatchSummary {
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
    }
}

impl Room {
    async fn run(mut self) {
        // After a restart nobody is connected yet, whatever the log of a live match last said.
        for seat in Seat::BOTH {
            if *self.round.connected().get(seat) && self.round.status() != MatchStatus::Finished {
                self.run_command(None, Command::Disconnected { seat }, None, None)
                    .await;
            }
        }
        loop {
            let deadline = self
                .round
                .clock_deadline()
                .map(|ms| self.epoch + Duration::from_millis(ms));
            tokio::select! {
                command = self.rx.recv() => match command {
                    Some(command) => self.on_command(command).await,
                    None => break,
                },
                _ = sleep_until(deadline), if deadline.is_some() => {
                    self.run_command(None, Command::Flag, None, None).await;
                }
            }
        }
    }

    /// Milliseconds since the room started, on tokio's clock (paused in tests).
    fn now(&self) -> Millis {
        self.epoch.elapsed().as_millis() as Millis
    }

    async fn on_command(&mut self, command: RoomCommand) {
        match command {
            RoomCommand::Join(join) => self.join(join).await,
            RoomCommand::Leave { conn } | RoomCommand::Gone { conn } => {
                self.dropped.push(conn);
                self.settle_dropped().await;
            }
            RoomCommand::Act {
                conn,
                action,
                outbox,
                re,
                received,
            } => self.act(conn, action, &outbox, re, received).await,
            RoomCommand::Snapshot { reply } => {
                let _ = reply.send(self.state(Role::Spectator, false));
            }
            RoomCommand::Record { reply } => {
                let frames: Vec<String> = self.log.iter().map(|f| f.as_str().to_string()).collect();
                let record = hakem_round::record::record_of(&self.id, self.round.config(), &frames);
                let _ = reply.send(record.to_text());
            }
            RoomCommand::Decree {
                command,
                before_play,
                reply,
            } => {
                let begun =
                    self.round.status() != MatchStatus::Waiting || !self.round.sets().is_empty();
                let outcome = if before_play && begun {
                    Err("the match has begun".to_string())
                } else {
                    self.commit(command).await.map_err(|r| r.message)
                };
                let _ = reply.send(outcome);
                Box::pin(self.settle_dropped()).await;
            }
        }
    }

    async fn join(&mut self, join: Join) {
        let Join {
            conn,
            credential,
            since_seq,
            legal_moves,
            outbox,
            re,
        } = join;
        let role = match credential {
            Credential::Spectator => Role::Spectator,
            Credential::Arbiter(token) => {
                if !same_token(&self.tokens.arbiter, &token) {
                    self.refuse(&outbox, re, ErrorCode::Unauthorized, "wrong arbiter token");
                    return;
                }
                Role::Arbiter
            }
            Credential::Seat(token) => {
                match Seat::BOTH
                    .into_iter()
                    .find(|&seat| same_token(self.tokens.seats.get(seat), &token))
                {
                    Some(seat) => Role::Player(seat),
                    None => {
                        self.refuse(&outbox, re, ErrorCode::Unauthorized, "wrong seat token");
                        return;
                    }
                }
            }
        };
        // A second join from the same connection replaces the first.
        if self.members.contains_key(&conn) {
            self.dropped.push(conn);
            self.settle_dropped().await;
        }
        self.members.insert(
            conn,
            Member {
                role,
                outbox: outbox.clone(),
                legal_moves,
            },
        );
        metrics::gauge!("hakem_room_members", "role" => role.metric_label()).increment(1.0);
        match since_seq {
            Some(since) if since <= self.seq => {
                for frame in &self.log[since as usize..] {
                    outbox.send(frame.clone());
                }
            }
            _ => {
                let state = self.state(role, legal_moves);
                outbox.send_message(&ServerMessage::State(Box::new(state)));
            }
        }
        if let Role::Player(seat) = role {
            let count = self.seat_connections.get_mut(seat);
            *count += 1;
            if *count == 1 {
                self.run_command(None, Command::Connected { seat }, None, None)
                    .await;
            }
        }
        if re.is_some() {
            outbox.send_message(&ServerMessage::Ack {
                re,
                match_id: Some(self.id.clone()),
                seq: Some(self.seq),
            });
        }
    }

    /// Removes the members in `dropped`; a seat whose last connection went is announced.
    async fn settle_dropped(&mut self) {
        while let Some(conn) = self.dropped.pop() {
            let Some(member) = self.members.remove(&conn) else {
                continue;
            };
            metrics::gauge!("hakem_room_members", "role" => member.role.metric_label())
                .decrement(1.0);
            if let Role::Player(seat) = member.role {
                let count = self.seat_connections.get_mut(seat);
                *count = count.saturating_sub(1);
                if *count == 0 {
                    self.run_command(None, Command::Disconnected { seat }, None, None)
                        .await;
                }
            }
        }
    }

    async fn act(
        &mut self,
        conn: ConnId,
        action: Action,
        outbox: &Outbox,
        re: Option<Value>,
        received: Instant,
    ) {
        let role = self.members.get(&conn).map(|member| member.role);
        let refusal = match (role, action) {
            (Some(Role::Arbiter), Action::Arbiter(command)) => {
                return self
                    .run_command(Some(outbox), command, re, Some(received))
                    .await;
            }
            (Some(Role::Player(seat)), action) => match player_command(seat, action) {
                Some(command) => {
                    return self
                        .run_command(Some(outbox), command, re, Some(received))
                        .await
                }
                None => "only the arbiter can do that",
            },
            (None, _) => "join or watch the match first",
            (Some(Role::Arbiter), _) => "the arbiter does not play",
            (Some(Role::Spectator), _) => "spectators can only watch",
        };
        self.refuse(outbox, re, ErrorCode::Forbidden, refusal);
    }

    /// Runs a command through the round: its events are stored, then applied and sent to every
    /// member; or the sender is told why not (and nothing changed).
    async fn run_command(
        &mut self,
        sender: Option<&Outbox>,
        command: Command,
        re: Option<Value>,
        received: Option<Instant>,
    ) {
        match self.commit(command).await {
            Ok(()) => {
                if let (Some(outbox), Some(_)) = (sender, &re) {
                    outbox.send_message(&ServerMessage::Ack {
                        re,
                        match_id: Some(self.id.clone()),
                        seq: Some(self.seq),
                    });
                }
                if let Some(received) = received {
                    metrics::histogram!("hakem_action_seconds")
                        .record(received.elapsed().as_secs_f64());
                }
            }
            Err(refusal) => {
                if let Some(outbox) = sender {
                    self.send_refusal(outbox, re, refusal);
                }
            }
        }
        Box::pin(self.settle_dropped()).await;
    }

    /// Decides a command, stores its events, then applies and broadcasts them.
    async fn commit(&mut self, command: Command) -> Result<(), Refusal> {
        let now = self.now();
        let events = self.round.decide(command, now)?;
        if events.is_empty() {
            return Ok(());
        }
        let server_time_ms = wall_clock_ms();
        let mut next = self.round.clone();
        let mut frames = Vec::with_capacity(events.len());
        for (i, event) in events.into_iter().enumerate() {
            next.apply(&event, now);
            if matches!(event, Event::Moved { .. }) {
                metrics::counter!("hakem_moves_total").increment(1);
            }
            let frame = encode(&ServerMessage::Event(Box::new(EventFrame {
                match_id: self.id.clone(),
                seq: self.seq + 1 + i as u64,
                event,
                clocks: next.clocks(now, server_time_ms),
            })));
            frames.push(frame);
        }
        let finished_now =
            next.status() == MatchStatus::Finished && self.round.status() != MatchStatus::Finished;
        if let Some(store) = &self.store {
            let events = frames
                .iter()
                .enumerate()
                .map(|(i, frame)| NewEvent {
                    seq: self.seq + 1 + i as u64,
                    at_ms: server_time_ms,
                    frame: frame.as_str().to_string(),
                })
                .collect();
            if let Err(e) = store.append(&self.id, events, finished_now).await {
                tracing::error!(match_id = %self.id, error = %e, "events not stored");
                return Err(Refusal::new(
                    ErrorCode::Internal,
                    "the server could not store this action; nothing changed, try again",
                ));
            }
        }
        if finished_now {
            metrics::gauge!("hakem_live_matches").decrement(1.0);
        }
        self.round = next;
        for frame in frames {
            self.seq += 1;
            self.log.push(frame.clone());
            for (&conn, member) in &self.members {
                if !member.outbox.send(frame.clone()) {
                    self.dropped.push(conn);
                }
            }
        }
        self.publish_summary();
        self.send_turn_states();
        if finished_now {
            if let (Some(sink), Some(result)) = (&self.finished, self.round.result()) {
                let _ = sink.send((self.id.clone(), result.clone()));
            }
        }
        Ok(())
    }

    /// Members who asked for legal moves get a fresh `state` (with them) when it is their turn,
    /// so that a bot without a rules engine can play.
    fn send_turn_states(&self) {
        let (Some(mover), None) = (self.round.to_move(), self.round.awaiting_press()) else {
            return;
        };
        for member in self.members.values() {
            if member.legal_moves && member.role == Role::Player(mover) {
                let state = self.state(member.role, true);
                member
                    .outbox
                    .send_message(&ServerMessage::State(Box::new(state)));
            }
        }
    }

    fn publish_summary(&self) {
        let summary = summary_of(&self.id, &self.round);
        match self.summary.write() {
            Ok(mut slot) => *slot = summary,
            Err(poisoned) => *poisoned.into_inner() = summary,
        }
    }

    fn refuse(&self, outbox: &Outbox, re: Option<Value>, code: ErrorCode, message: &str) {
        self.send_refusal(outbox, re, Refusal::new(code, message));
    }

    fn send_refusal(&self, outbox: &Outbox, re: Option<Value>, refusal: Refusal) {
        metrics::counter!("hakem_errors_total", "code" => refusal.code.as_str()).increment(1);
        outbox.send_message(&ServerMessage::Error(ErrorReply {
            re,
            code: refusal.code,
            message: refusal.message,
            match_id: Some(self.id.clone()),
            rule: refusal.rule.map(str::to_string),
        }));
    }

    /// The whole truth, as `role` sees it.
    fn state(&self, role: Role, with_legal_moves: bool) -> MatchState {
        let round = &self.round;
        let config = round.config();
        let now = self.now();
        let ready = round.ready();
        // Who is connected is the room's live knowledge, not a fold of old events.
        let player = |seat: Seat| PlayerInfo {
            name: config.players.get(seat).clone(),
            connected: *self.seat_connections.get(seat) > 0,
            ready: *ready.get(seat),
            house_bot: config.house_bot == Some(seat),
        };
        let to_move = round.to_move();
        let legal_moves = match (with_legal_moves, role, to_move, round.position()) {
            (true, Role::Player(seat), Some(mover), Some(position)) if seat == mover => {
                Some(position.legal_moves())
            }
            (true, _, _, _) => Some(Vec::new()),
            _ => None,
        };
        MatchState {
            match_id: self.id.clone(),
            seq: self.seq,
            game: config.game.as_str().to_string(),
            variant: config.variant.to_string(),
            sets_max: config.sets,
            clock: config.clock,
            warnings_limit: config.warnings_limit,
            players: PerSeat::new(player(Seat::P1), player(Seat::P2)),
            status: round.status(),
            set: round.set_no(),
            sets: round.sets().to_vec(),
            set_points: round.set_points(),
            warnings: round.warnings(),
            round: round.result().cloned(),
            paused: round.is_paused(),
            position: PositionView {
                to_move,
                first_mover: round.first_mover(),
                moves: round.moves().to_vec(),
                pending: round.pending(),
                awaiting_press: round.awaiting_press(),
                board: round
                    .position()
                    .map_or(Value::Null, |p| view::board(p, round.pending_placement())),
                legal_moves,
            },
            clocks: round.clocks(now, wall_clock_ms()),
            you: Some(role.as_str().to_string()),
            tournament: config.tournament.clone(),
        }
    }
}

/// A player's action as a round command for `seat`; `None` for an arbiter's action.
fn player_command(seat: Seat, action: Action) -> Option<Command> {
    Some(match action {
        Action::Place(cell) => Command::Place { seat, cell },
        Action::Rotate(quadrant, dir) => Command::Rotate {
            seat,
            quadrant,
            dir,
        },
        Action::Move(mv, press) => Command::Move { seat, mv, press },
        Action::Press => Command::Press { seat },
        Action::Ready => Command::Ready { seat },
        Action::Resign => Command::Resign { seat },
        Action::Claim(text) => Command::Claim { seat, text },
        Action::Arbiter(_) => return None,
    })
}

async fn sleep_until(deadline: Option<Instant>) {
    match deadline {
        Some(deadline) => tokio::time::sleep_until(deadline).await,
        None => std::future::pending().await,
    }
}
