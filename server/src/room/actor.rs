//! The room task: owns a match's round, numbers its events without gaps, stores them before
//! anyone hears of them, sends them to every member, arms the timers (the running clock, the
//! expiry of a match nobody plays, the retirement of a finished one) and publishes its state.

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;
use std::time::Duration;

use axum::extract::ws::Utf8Bytes;
use hakem_protocol::RequestId;
use hakem_protocol::{
    ErrorCode, ErrorReply, Event, EventFrame, MatchState, MatchStatus, PerSeat, Seat, ServerMessage,
};
use hakem_round::{Command, Millis, Refusal, Round};
use tokio::sync::{mpsc, watch};
use tokio::time::Instant;

use super::chat::{self, Chat, Speaker};
use super::delay::Delayed;
use super::RematchStep;
use super::{
    role_of, summary_of_round, Action, Credential, FinishSink, Join, LocalRoom, Published, Queued,
    Role, RoomCommand, RoomSettings, Rooms, Shown, Start, Tokens, ROOM_QUEUE,
};
use crate::outbox::{self, encode, ConnId, Outbox};
use crate::store::{Finish, NewEvent, Store};
use crate::wall_clock_ms;

struct Member {
    role: Role,
    outbox: Outbox,
    legal_moves: bool,
    batch: bool,
    boards: bool,
    /// Told of rematch offers (asked for at `hello`, or offered one itself).
    rematch: bool,
    /// Reads the chat.
    chat: bool,
    /// Who the member was when it came in: what it reads of the chat.
    speaker: Speaker,
}

/// One action's frames, as each kind of member takes them: with boards (as stored) or without
/// (protocol v1 as it was), one frame each or in one `events` frame.
struct Encoded {
    frames: Vec<EventFrame>,
    full: Vec<Utf8Bytes>,
}

impl Encoded {
    fn frames(&self, boards: bool) -> Vec<Utf8Bytes> {
        if boards {
            return self.full.clone();
        }
        self.frames
            .iter()
            .zip(&self.full)
            .map(|(frame, full)| match frame.event.without_board() {
                Some(event) => {
                    let plain = EventFrame {
                        event,
                        ..frame.clone()
                    };
                    encode(&ServerMessage::Event(Box::new(plain)))
                }
                None => full.clone(),
            })
            .collect()
    }
}

/// What the room's single timer waits for next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Timer {
    /// The running clock reaches zero.
    Flag,
    /// Nobody came to play.
    Expire,
    /// The round is over and the grace has passed.
    Retire,
    /// Spectators who see the match late are due the next events.
    Release,
}

/// Who a broadcast goes to.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Audience {
    Everyone,
    /// The players and the arbiter: spectators see the match late.
    NotSpectators,
    Spectators,
}

impl Audience {
    fn includes(self, role: Role) -> bool {
        match self {
            Audience::Everyone => true,
            Audience::NotSpectators => role != Role::Spectator,
            Audience::Spectators => role == Role::Spectator,
        }
    }
}

struct Room {
    id: Arc<str>,
    instance: u64,
    round: Arc<Round>,
    tokens: Tokens,
    seq: u64,
    /// The last events (all of them without a store), for members who come back.
    recent: VecDeque<Utf8Bytes>,
    history: usize,
    members: HashMap<ConnId, Member>,
    /// Live connections per seat, to announce connects and disconnects once.
    seat_connections: PerSeat<u32>,
    epoch: Instant,
    /// The room's time of its last change, on the scale of [`Room::now`]: an action is
    /// timed when it was read, but never before this, so the clocks never run backwards.
    last_at: Millis,
    /// When the command being handled was queued (an action: read); what it causes is timed
    /// then. `None` while the room's own timers act: they act now.
    handling: Option<Instant>,
    /// Not before then do the clock's and the expiry's timers act again: their last command
    /// could not be stored.
    retry_at: Option<Instant>,
    created_ms: u64,
    /// When a match nobody plays expires.
    expires_at: Instant,
    /// When a finished room leaves memory.
    retire_at: Option<Instant>,
    settings: RoomSettings,
    published: watch::Sender<Arc<Published>>,
    rx: mpsc::Receiver<Queued>,
    /// Where events are written before anyone hears of them; `None` only in unit tests.
    store: Option<Store>,
    /// Members whose outbox overflowed or closed during a broadcast, to be removed after it.
    dropped: Vec<ConnId>,
    finished: Option<FinishSink>,
    rooms: Arc<Rooms>,
    /// What spectators are shown when they see the match late, until the round is over.
    delayed: Option<Delayed<Encoded>>,
    rematch: Rematch,
    /// The chat, read from the store when first needed (boxed: most rooms never need it).
    chat: Option<Box<Chat>>,
    /// The room ends now, for this reason (another node owns it; see [`Room::abdicate`]).
    abdicated: Option<&'static str>,
    abdicated_done: Option<tokio::sync::oneshot::Sender<()>>,
}

/// A rematch of the finished round: offers, then the match both asked for.
#[derive(Default)]
struct Rematch {
    offered: PerSeat<bool>,
    /// Being created by the second offer's connection.
    creating: bool,
    /// The new match and its seat tokens (the seats are swapped: p1 here is p2 there).
    made: Option<(String, PerSeat<String>)>,
}

pub(super) fn spawn(start: Start, instance: u64, rooms: Arc<Rooms>) -> LocalRoom {
    let Start {
        id,
        round,
        tokens,
        frames,
        times,
        created_ms,
        store,
        finished,
        settings,
        spectator_delay,
    } = start;
    let (tx, rx) = mpsc::channel(ROOM_QUEUE);
    let seq = frames.len() as u64;
    // Without a store, memory is the only history there is; a finished match's history is
    // read from the store.
    let history = match (&store, round.status()) {
        (None, _) => usize::MAX,
        (Some(_), MatchStatus::Finished) => 0,
        (Some(_), _) => settings.history.max(1),
    };
    let epoch = Instant::now();
    let delayed = spectator_delay
        .filter(|delay| !delay.is_live() && round.status() != MatchStatus::Finished)
        .map(|delay| held_back(delay, &round, &frames, &times, created_ms, epoch));
    let keep = frames.len().saturating_sub(history);
    let recent: VecDeque<Utf8Bytes> = frames.into_iter().skip(keep).map(Utf8Bytes::from).collect();
    // The expiry counts from the match's creation, across restarts.
    let age = Duration::from_millis(wall_clock_ms().saturating_sub(created_ms));
    let expires_at = epoch + settings.expire_after.saturating_sub(age);
    let id: Arc<str> = Arc::from(id);
    let round = Arc::new(round);
    let restarted = round.status() != MatchStatus::Finished
        && (*round.connected().get(hakem_protocol::Seat::P1)
            || *round.connected().get(hakem_protocol::Seat::P2));
    let (published, subscribed) = watch::channel(Arc::new(Published {
        id: id.clone(),
        round: round.clone(),
        seq,
        shown: delayed.as_ref().map(shown_of),
        epoch,
        created_ms,
        restarted,
    }));
    metrics::gauge!("hakem_rooms").increment(1.0);
    if round.status() != MatchStatus::Finished {
        metrics::gauge!("hakem_live_matches").increment(1.0);
    }
    let retire_at =
        (round.status() == MatchStatus::Finished).then(|| epoch + settings.retire_after);
    let room = Room {
        id,
        instance,
        round,
        tokens,
        seq,
        recent,
        history,
        members: HashMap::new(),
        seat_connections: PerSeat::default(),
        epoch,
        last_at: 0,
        handling: None,
        retry_at: None,
        created_ms,
        expires_at,
        retire_at,
        settings,
        published,
        rx,
        store,
        dropped: Vec::new(),
        finished,
        rooms,
        delayed,
        rematch: Rematch::default(),
        chat: None,
        abdicated: None,
        abdicated_done: None,
    };
    tokio::spawn(room.run());
    LocalRoom {
        instance,
        tx,
        published: subscribed,
    }
}

/// What spectators are shown of a match restarted from the store: the actions older than the
/// delay and those the moves since let through; the others are held back as before the
/// restart. An action's events were stored together, at one moment (`times`).
fn held_back(
    delay: hakem_protocol::SpectatorDelay,
    round: &Round,
    frames: &[String],
    times: &[u64],
    created_ms: u64,
    epoch: Instant,
) -> Delayed<Encoded> {
    let mut delayed = Delayed::new(delay, Round::new(round.config().clone()), 0);
    let now_ms = wall_clock_ms();
    let mut at_ms = created_ms;
    let mut action: Option<(u64, Encoded)> = None;
    let hold = |delayed: &mut Delayed<Encoded>, (at_ms, encoded): (u64, Encoded)| {
        let age = Duration::from_millis(now_ms.saturating_sub(at_ms));
        let due = epoch + Duration::from_secs(u64::from(delay.seconds)).saturating_sub(age);
        let frames = encoded.frames.clone();
        delayed.hold(due, &frames, encoded);
    };
    for (i, text) in frames.iter().enumerate() {
        let Ok(ServerMessage::Event(frame)) = serde_json::from_str::<ServerMessage>(text) else {
            // Stored frames were read once already (the round is their fold); one that does
            // not read now holds nothing back.
            return Delayed::new(delay, round.clone(), frames.len() as u64);
        };
        at_ms = times.get(i).copied().unwrap_or(at_ms);
        match &mut action {
            Some((started, encoded)) if *started == at_ms => {
                encoded.frames.push(*frame);
                encoded.full.push(Utf8Bytes::from(text.clone()));
            }
            _ => {
                let next = Encoded {
                    frames: vec![*frame],
                    full: vec![Utf8Bytes::from(text.clone())],
                };
                if let Some(done) = action.replace((at_ms, next)) {
                    hold(&mut delayed, done);
                }
            }
        }
    }
    if let Some(done) = action {
        hold(&mut delayed, done);
    }
    for encoded in delayed.release(epoch, false) {
        delayed.show(&encoded.frames, 0);
    }
    delayed
}

fn shown_of(delayed: &Delayed<Encoded>) -> Shown {
    Shown {
        round: delayed.shown.clone(),
        seq: delayed.shown_seq,
        delay: delayed.delay,
    }
}

/// How long a timer whose command could not be stored waits before it tries again.
const TIMER_RETRY_AFTER: Duration = Duration::from_secs(1);

async fn sleep_until(deadline: Option<Instant>) {
    match deadline {
        Some(deadline) => tokio::time::sleep_until(deadline).await,
        None => std::future::pending().await,
    }
}

impl Room {
    async fn run(mut self) {
        // After a restart nobody is connected yet, whatever the log of a live match last said.
        for seat in hakem_protocol::Seat::BOTH {
            if *self.round.connected().get(seat) && self.round.status() != MatchStatus::Finished {
                self.run_command(None, Command::Disconnected { seat }, None, None)
                    .await;
            }
        }
        loop {
            let (timer, deadline) = self.next_timer();
            tokio::select! {
                queued = self.rx.recv() => match queued {
                    Some(queued) => self.on_queued(queued).await,
                    None => break,
                },
                _ = sleep_until(deadline), if deadline.is_some() => match timer {
                    Some(Timer::Flag) => Box::pin(self.flag()).await,
                    Some(Timer::Expire) => {
                        let at = self.time();
                        let stored = self.commit(Command::Expire, at).await;
                        self.timer_done(stored).await;
                    }
                    Some(Timer::Release) => {
                        self.release_shown(false);
                        self.settle_dropped().await;
                    }
                    Some(Timer::Retire) | None => break,
                },
            }
            if self.abdicated.is_some() {
                return self.abdicate().await;
            }
        }
        self.retire().await;
    }

    /// Ends the room without writing anything more: another node owns it now (or will, as
    /// this node stops). Members, and whoever still waits in the queue, are told to go to
    /// the match again, and find it at its new owner.
    async fn abdicate(mut self) {
        let why = self.abdicated.unwrap_or("the match moved to another node");
        self.rooms.retire(&self.id, self.instance);
        self.rx.close();
        while let Some(Queued { command, .. }) = self.rx.recv().await {
            match command {
                RoomCommand::Join(join) => join.outbox.close_away(why),
                RoomCommand::Act { outbox, .. } => outbox.close_away(why),
                _ => {}
            }
        }
        for member in self.members.values() {
            member.outbox.close_away(why);
            metrics::gauge!("hakem_room_members", "role" => member.role.metric_label())
                .decrement(1.0);
        }
        metrics::gauge!("hakem_rooms").decrement(1.0);
        if self.round.status() != MatchStatus::Finished {
            metrics::gauge!("hakem_live_matches").decrement(1.0);
        }
        tracing::info!(match_id = %self.id, why, "room handed over");
        if let Some(done) = self.abdicated_done.take() {
            let _ = done.send(());
        }
    }

    /// The earliest of the timers that apply now.
    fn next_timer(&self) -> (Option<Timer>, Option<Instant>) {
        let flag = self
            .round
            .clock_deadline()
            .and_then(|ms| self.epoch.checked_add(Duration::from_millis(ms)));
        let expire = self.expires().then_some(self.expires_at);
        let (flag, expire) = match self.retry_at {
            Some(retry) => (flag.map(|at| at.max(retry)), expire.map(|at| at.max(retry))),
            None => (flag, expire),
        };
        let release = self.delayed.as_ref().and_then(Delayed::next_due);
        [
            (Timer::Flag, flag),
            (Timer::Expire, expire),
            (Timer::Retire, self.retire_at),
            (Timer::Release, release),
        ]
        .into_iter()
        .filter_map(|(timer, at)| at.map(|at| (timer, at)))
        .min_by_key(|&(_, at)| at)
        .map_or((None, None), |(timer, at)| (Some(timer), Some(at)))
    }

    /// Whether the match may expire: its first set never started, it is no tournament's
    /// board (the arbiter forfeits those), and no player (but the house bot) is at it.
    fn expires(&self) -> bool {
        let config = self.round.config();
        self.round.status() == MatchStatus::Waiting
            && self.round.sets().is_empty()
            && config.tournament.is_none()
            && hakem_protocol::Seat::BOTH.iter().all(|&seat| {
                config.house_bot == Some(seat) || *self.seat_connections.get(seat) == 0
            })
    }

    /// The running clock's timer fired. What is already queued was read before now, some of
    /// it perhaps before the clock ran out: it goes first, each action at the moment it was
    /// read, so that a press that reached the server in time counts.
    async fn flag(&mut self) {
        for _ in 0..self.rx.len() {
            let Ok(queued) = self.rx.try_recv() else {
                break;
            };
            self.on_queued(queued).await;
            if self.abdicated.is_some() {
                return;
            }
        }
        let stored = self.end_on_time(self.time()).await;
        self.timer_done(stored).await;
    }

    /// After a timer's command: one that could not be stored (and has been logged) is tried
    /// again a while later, not at once and again and again while the store fails.
    async fn timer_done(&mut self, stored: Result<(), Refusal>) {
        self.retry_at = stored.is_err().then(|| Instant::now() + TIMER_RETRY_AFTER);
        self.settle_dropped().await;
    }

    /// Ends the set on time if the running clock reached zero by `at`.
    async fn end_on_time(&mut self, at: Millis) -> Result<(), Refusal> {
        let deadline = self.round.clock_deadline();
        let before = self.round.sets().len();
        self.commit(Command::Flag, at).await?;
        if let (Some(deadline), true) = (deadline, self.round.sets().len() > before) {
            let expired = self.epoch + Duration::from_millis(deadline);
            metrics::histogram!("hakem_flag_lateness_seconds")
                .record(expired.elapsed().as_secs_f64());
        }
        Ok(())
    }

    /// Leaves the registry, answers what is still queued, and ends.
    async fn retire(mut self) {
        self.rooms.retire(&self.id, self.instance);
        self.rx.close();
        while let Some(queued) = self.rx.recv().await {
            self.on_queued(queued).await;
        }
        // Whoever is still connected is told the seats are empty: a later reader of the match
        // finds nobody at it.
        for seat in hakem_protocol::Seat::BOTH {
            if *self.round.connected().get(seat) {
                self.run_command(None, Command::Disconnected { seat }, None, None)
                    .await;
            }
        }
        for member in self.members.values() {
            metrics::gauge!("hakem_room_members", "role" => member.role.metric_label())
                .decrement(1.0);
        }
        metrics::gauge!("hakem_rooms").decrement(1.0);
        self.rooms.retired(&self.id).await;
        tracing::debug!(match_id = %self.id, "room retired");
    }

    /// Milliseconds since the room started, on tokio's clock (paused in tests).
    fn now(&self) -> Millis {
        self.epoch.elapsed().as_millis() as Millis
    }

    /// The room's time for what it does now: the moment the command being handled was queued
    /// (an action: read), not the later one the room got to it, as a press counts when it is
    /// made; now for the room's own timers; never before the room's last change.
    fn time(&self) -> Millis {
        let now = self.now();
        let queued = self.handling.map_or(now, |queued| {
            queued.saturating_duration_since(self.epoch).as_millis() as Millis
        });
        queued.min(now).max(self.last_at)
    }

    async fn on_queued(&mut self, Queued { at, command }: Queued) {
        self.handling = Some(at);
        self.on_command(command, at).await;
        self.handling = None;
    }

    async fn on_command(&mut self, command: RoomCommand, at: Instant) {
        match command {
            RoomCommand::Join(join) => self.join(*join).await,
            RoomCommand::Leave { conn } => {
                self.dropped.push(conn);
                self.settle_dropped().await;
            }
            RoomCommand::Act {
                conn,
                action,
                outbox,
                re,
            } => self.act(conn, action, &outbox, re, at).await,
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
                    let at = self.time();
                    self.commit(command, at).await.map_err(|r| r.message)
                };
                let _ = reply.send(outcome);
                Box::pin(self.settle_dropped()).await;
            }
            RoomCommand::OfferRematch { conn, reply } => {
                let _ = reply.send(self.offer_rematch(conn));
            }
            RoomCommand::RematchMade { made } => self.rematch_made(made),
            RoomCommand::Abdicate { why, done } => {
                self.abdicated = Some(why);
                self.abdicated_done = done;
            }
        }
    }

    /// A seat's rematch offer: told to the other seat, or, from the second seat, the match to
    /// create (seats swapped, so that the other player moves first).
    fn offer_rematch(&mut self, conn: ConnId) -> Result<RematchStep, String> {
        let Some(Role::Player(seat)) = self.members.get(&conn).map(|m| m.role) else {
            return Err("only a seated player offers a rematch".into());
        };
        if self.round.status() != MatchStatus::Finished {
            return Err("the round is not over".into());
        }
        let config = self.round.config();
        if config.tournament.is_some() {
            return Err("a tournament's match has no rematch: the pairing decides".into());
        }
        if config.house_bot.is_some() {
            return Err("against the computer, start a new match from the lobby".into());
        }
        if let Some((match_id, tokens)) = &self.rematch.made {
            let new_seat = seat.other();
            return Ok(RematchStep::Made {
                match_id: match_id.clone(),
                seat_token: tokens.get(new_seat).clone(),
                seat: new_seat,
            });
        }
        *self.rematch.offered.get_mut(seat) = true;
        // Whoever offers understands the answer.
        if let Some(member) = self.members.get_mut(&conn) {
            member.rematch = true;
        }
        if !self.rematch.offered.get(seat.other()) || self.rematch.creating {
            let notice = ServerMessage::RematchOffered {
                match_id: self.id.to_string(),
                seat,
            };
            self.tell_seat(seat.other(), &notice);
            return Ok(RematchStep::Offered);
        }
        self.rematch.creating = true;
        let mut create = hakem_protocol::CreateMatch::new(config.game.as_str());
        create.variant = Some(config.variant.to_string());
        create.sets = config.sets;
        create.clock = config.clock;
        create.warnings_limit = config.warnings_limit;
        create.rated = config.rated;
        create.players = PerSeat::new(config.players.p2.clone(), config.players.p1.clone());
        create.accounts = PerSeat::new(
            self.tokens.accounts.p2.clone(),
            self.tokens.accounts.p1.clone(),
        );
        Ok(RematchStep::Create(Box::new(create)))
    }

    /// The rematch was created: each seat's members here are given their seat there.
    fn rematch_made(&mut self, made: Option<(String, PerSeat<String>)>) {
        self.rematch.creating = false;
        let Some((match_id, tokens)) = made else {
            self.rematch.offered = PerSeat::default();
            return;
        };
        for seat in Seat::BOTH {
            let new_seat = seat.other();
            let message = ServerMessage::Rematch {
                re: None,
                match_id: self.id.to_string(),
                new_match: match_id.clone(),
                seat: new_seat,
                seat_token: tokens.get(new_seat).clone(),
            };
            self.tell_seat(seat, &message);
        }
        self.rematch.made = Some((match_id, tokens));
    }

    /// A frame for the members at `seat` that are told of rematches (v1 clients never are).
    fn tell_seat(&self, seat: Seat, message: &ServerMessage) {
        let frame = crate::outbox::encode(message);
        for member in self.members.values() {
            if member.role == Role::Player(seat) && member.rematch {
                member.outbox.send(frame.clone());
            }
        }
    }

    /// Reads the chat from the store, once.
    async fn load_chat(&mut self) {
        if self.chat.is_some() {
            return;
        }
        // Off in a tournament's match until the arbiter turns it on.
        let default_on = self.round.config().tournament.is_none();
        let stored = match &self.store {
            Some(store) => match store.chat(&self.id, chat::RECENT as u32).await {
                Ok(stored) => Some(stored),
                Err(e) => {
                    tracing::error!(match_id = %self.id, error = %e, "chat not read");
                    return;
                }
            },
            None => None,
        };
        self.chat = Some(Box::new(chat::restored(stored, default_on)));
    }

    /// What the chat knows of this match.
    fn chat_match(&self) -> chat::Match<'_> {
        chat::Match {
            players: &self.round.config().players,
            accounts: &self.tokens.accounts,
        }
    }

    async fn chat_request(
        &mut self,
        conn: ConnId,
        outbox: &Outbox,
        re: Option<RequestId>,
        request: super::ChatRequest,
    ) {
        use super::ChatAction;
        let Some(role) = self.members.get(&conn).map(|m| m.role) else {
            return self.refuse(
                outbox,
                re,
                ErrorCode::Forbidden,
                "join or watch the match first",
            );
        };
        self.load_chat().await;
        if self.chat.is_none() {
            return self.refuse(
                outbox,
                re,
                ErrorCode::Internal,
                "the chat could not be read; try again",
            );
        }
        let someone = chat::Someone {
            role,
            speaker: &request.speaker,
        };
        match request.action {
            ChatAction::Say { channel, text } => {
                self.say(someone, outbox, re, channel, &text).await
            }
            ChatAction::Mute { target, muted } => match chat::mute_target(target) {
                Ok(target) => {
                    self.moderate(someone, outbox, re, |settings| {
                        settings.set_muted(target, muted)
                    })
                    .await
                }
                Err(message) => self.refuse(outbox, re, ErrorCode::BadRequest, &message),
            },
            ChatAction::Switch(enabled) => {
                self.moderate(someone, outbox, re, |settings| {
                    settings.enabled = enabled;
                    Ok(())
                })
                .await
            }
        }
    }

    /// A member's chat message: checked, stored, then sent to the members who read its
    /// channel.
    async fn say(
        &mut self,
        someone: chat::Someone<'_>,
        outbox: &Outbox,
        re: Option<RequestId>,
        channel: Option<hakem_protocol::ChatChannel>,
        text: &str,
    ) {
        let config = self.round.config();
        let game = chat::Match {
            players: &config.players,
            accounts: &self.tokens.accounts,
        };
        let Some(chat) = &mut self.chat else { return };
        let written = chat.write(
            someone,
            game,
            channel,
            text,
            Instant::now(),
            wall_clock_ms(),
        );
        let (mut line, account) = match written {
            Ok(written) => written,
            Err(refused) => {
                let (code, message) = match refused {
                    chat::Refused::Forbidden(message) => {
                        (ErrorCode::Forbidden, message.to_string())
                    }
                    chat::Refused::Bad(message) => (ErrorCode::BadRequest, message),
                    chat::Refused::TooFast => (
                        ErrorCode::RateLimited,
                        "you write too fast: 5 messages, then one every 2 seconds".to_string(),
                    ),
                };
                return self.refuse(outbox, re, code, &message);
            }
        };
        line.match_id = self.id.to_string();
        if let Some(store) = &self.store {
            if let Err(e) = store.add_chat(&line, account.as_deref()).await {
                tracing::error!(match_id = %self.id, error = %e, "chat message not stored");
                return self.refuse(
                    outbox,
                    re,
                    ErrorCode::Internal,
                    "the server could not store this message; try again",
                );
            }
        }
        metrics::counter!("hakem_chat_messages_total").increment(1);
        let frame = encode(&ServerMessage::Chat(line.clone()));
        let game = chat::Match {
            players: &self.round.config().players,
            accounts: &self.tokens.accounts,
        };
        let mut dropped = Vec::new();
        for (&conn, member) in &self.members {
            let reader = chat::Someone {
                role: member.role,
                speaker: &member.speaker,
            };
            if member.chat
                && chat::reads(reader, line.channel, game)
                && !member.outbox.send(frame.clone())
            {
                dropped.push(conn);
            }
        }
        self.dropped.extend(dropped);
        if let Some(chat) = &mut self.chat {
            chat.keep(line);
        }
        self.ack(outbox, re);
        self.settle_dropped().await;
    }

    fn ack(&self, outbox: &Outbox, re: Option<RequestId>) {
        if re.is_some() {
            outbox.send_message(&ServerMessage::Ack {
                re,
                match_id: Some(self.id.to_string()),
                seq: None,
            });
        }
    }

    /// The arbiter's or the organizer's change of the chat's settings: made on a copy, stored,
    /// then taken and told to every member that reads the chat.
    async fn moderate(
        &mut self,
        someone: chat::Someone<'_>,
        outbox: &Outbox,
        re: Option<RequestId>,
        change: impl FnOnce(&mut chat::Settings) -> Result<(), String>,
    ) {
        if !chat::moderates(someone) {
            return self.refuse(
                outbox,
                re,
                ErrorCode::Forbidden,
                "only the arbiter or the organizer moderates the chat",
            );
        }
        let Some(chat) = &self.chat else { return };
        let mut next = chat.settings.clone();
        if let Err(message) = change(&mut next) {
            return self.refuse(outbox, re, ErrorCode::BadRequest, &message);
        }
        if let Some(store) = &self.store {
            let mutes = serde_json::to_string(&next.mutes).unwrap_or_else(|_| "[]".into());
            if let Err(e) = store
                .save_chat_settings(&self.id, next.enabled, &mutes)
                .await
            {
                if e.is_fenced() {
                    // Another node took the room: nothing more is written or told here.
                    self.abdicated = Some("the match moved to another node");
                }
                tracing::error!(match_id = %self.id, error = %e, "chat settings not stored");
                return self.refuse(
                    outbox,
                    re,
                    ErrorCode::Internal,
                    "the server could not store this; nothing changed, try again",
                );
            }
        }
        let Some(chat) = &mut self.chat else { return };
        chat.settings = next;
        let game = chat::Match {
            players: &self.round.config().players,
            accounts: &self.tokens.accounts,
        };
        for member in self.members.values().filter(|member| member.chat) {
            let reader = chat::Someone {
                role: member.role,
                speaker: &member.speaker,
            };
            member
                .outbox
                .send_message(&chat.settings_message(&self.id, reader, game));
        }
        self.ack(outbox, re);
    }

    /// The state `role` sees now, with the legal moves if asked for.
    fn state(&self, role: Role, with_legal_moves: bool) -> MatchState {
        let (round, seq) = match (&self.delayed, role) {
            (Some(delayed), Role::Spectator) => (&*delayed.shown, delayed.shown_seq),
            _ => (&*self.round, self.seq),
        };
        let mut state = round.state(&self.id, seq, self.now(), wall_clock_ms());
        state.you = Some(role.as_str().to_string());
        state.spectator_delay = self.delayed.as_ref().map(|delayed| delayed.delay);
        // Claims are between the players and the arbiter.
        if role != Role::Spectator {
            state.claims = Some(self.round.claims().to_vec());
        }
        if with_legal_moves {
            state.position.legal_moves = Some(match role {
                Role::Player(seat) => self.round.legal_moves(seat),
                _ => Vec::new(),
            });
        }
        state
    }

    async fn join(&mut self, join: Join) {
        let Join {
            conn,
            credential,
            since_seq,
            history,
            legal_moves,
            batch,
            boards,
            rematch,
            chat,
            speaker,
            outbox,
            re,
        } = join;
        let Some(role) = role_of(&credential, &self.tokens) else {
            let message = match credential {
                Credential::Arbiter(_) => "wrong arbiter token",
                _ => "wrong seat token",
            };
            self.refuse(&outbox, re, ErrorCode::Unauthorized, message);
            return;
        };
        // A second join from the same connection replaces the first; in the same role (a
        // client catching up after a gap) nobody left or came.
        let again = self.members.get(&conn).is_some_and(|m| m.role == role);
        if self.members.contains_key(&conn) && !again {
            self.dropped.push(conn);
            self.settle_dropped().await;
        }
        if again {
            metrics::gauge!("hakem_room_members", "role" => role.metric_label()).decrement(1.0);
        }
        self.members.insert(
            conn,
            Member {
                role,
                outbox: outbox.clone(),
                legal_moves,
                batch,
                boards,
                rematch,
                chat,
                speaker,
            },
        );
        metrics::gauge!("hakem_room_members", "role" => role.metric_label()).increment(1.0);
        // The last event this member may see now.
        let last = self.last_seq_for(role);
        match since_seq {
            Some(since) if since <= last => self.catch_up(&outbox, since + 1, last, boards),
            None if history => {
                // The match as it was created, then everything since: the member folds it all.
                let mut first =
                    Round::new(self.round.config().clone()).state(&self.id, 0, 0, wall_clock_ms());
                first.you = Some(role.as_str().to_string());
                first.spectator_delay = self.delayed.as_ref().map(|delayed| delayed.delay);
                if role != Role::Spectator {
                    // None yet: the claims come with the events that follow.
                    first.claims = Some(Vec::new());
                }
                outbox.send_message(&ServerMessage::State(Box::new(first)));
                self.catch_up(&outbox, 1, last, boards);
                if legal_moves {
                    let state = self.state(role, true);
                    outbox.send_message(&ServerMessage::State(Box::new(state)));
                }
            }
            _ => {
                let state = self.state(role, legal_moves);
                outbox.send_message(&ServerMessage::State(Box::new(state)));
            }
        }
        if chat {
            Box::pin(self.load_chat()).await;
            if let (Some(member), Some(chat)) = (self.members.get(&conn), &self.chat) {
                let reader = chat::Someone {
                    role,
                    speaker: &member.speaker,
                };
                outbox.send_message(&chat.history(&self.id, reader, self.chat_match()));
            }
        }
        if let (Role::Player(seat), false) = (role, again) {
            let count = self.seat_connections.get_mut(seat);
            *count += 1;
            if *count == 1 && self.round.status() != MatchStatus::Finished {
                self.run_command(None, Command::Connected { seat }, None, None)
                    .await;
            }
        }
        if re.is_some() {
            outbox.send_message(&ServerMessage::Ack {
                re,
                match_id: Some(self.id.to_string()),
                seq: Some(self.last_seq_for(role)),
            });
        }
    }

    /// The last event `role` is shown: every one, but for spectators who see the match late.
    fn last_seq_for(&self, role: Role) -> u64 {
        match (&self.delayed, role) {
            (Some(delayed), Role::Spectator) => delayed.shown_seq,
            _ => self.seq,
        }
    }

    /// Sends the events from `from` to `to`: those no longer in memory as a replay from the
    /// store (read at the pace the member reads), then those in memory.
    fn catch_up(&self, outbox: &Outbox, from: u64, to: u64, boards: bool) {
        if from > to {
            return;
        }
        let first_kept = self.seq + 1 - self.recent.len() as u64;
        if from < first_kept {
            outbox.replay(self.id.clone(), from, to.min(first_kept - 1), boards);
        }
        let skip = from.saturating_sub(first_kept) as usize;
        let take = (to + 1).saturating_sub(from.max(first_kept)) as usize;
        for frame in self.recent.iter().skip(skip).take(take) {
            if boards {
                outbox.send(frame.clone());
            } else {
                outbox.send(outbox::without_board(frame.as_str()));
            }
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
                if *count == 0 && *self.round.connected().get(seat) {
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
        re: Option<RequestId>,
        received: Instant,
    ) {
        let role = self.members.get(&conn).map(|member| member.role);
        let action = match action {
            // Boxed, as every rarely taken path of the room: its future stays small.
            Action::Chat(request) => {
                return Box::pin(self.chat_request(conn, outbox, re, *request)).await
            }
            action => action,
        };
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
        re: Option<RequestId>,
        received: Option<Instant>,
    ) {
        let at = self.time();
        match self.commit(command, at).await {
            Ok(()) => {
                if let (Some(outbox), Some(_)) = (sender, &re) {
                    outbox.send_message(&ServerMessage::Ack {
                        re,
                        match_id: Some(self.id.to_string()),
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

    /// Decides a command at the room's time `at`, stores its events, then applies and
    /// broadcasts them.
    async fn commit(&mut self, command: Command, at: Millis) -> Result<(), Refusal> {
        if !matches!(command, Command::Flag)
            && self.round.clock_deadline().is_some_and(|ms| ms <= at)
        {
            // The running clock ran out before this: the set ends on time first (and if that
            // cannot be stored, nothing after it is decided).
            Box::pin(self.end_on_time(at)).await?;
        }
        // The wall-clock moment of `at`: the clocks are read, and the events stamped, as of it.
        let server_time_ms = wall_clock_ms().saturating_sub(self.now().saturating_sub(at));
        let (next, frames) =
            self.round
                .step(command, at, server_time_ms, &self.id, self.seq + 1)?;
        if frames.is_empty() {
            return Ok(());
        }
        let count = frames.len() as u64;
        let full = frames
            .iter()
            .map(|frame| {
                if matches!(frame.event, Event::Moved { .. }) {
                    metrics::counter!("hakem_moves_total").increment(1);
                }
                encode_event(frame)
            })
            .collect();
        let encoded = Encoded { frames, full };
        let finished_now =
            next.status() == MatchStatus::Finished && self.round.status() != MatchStatus::Finished;
        let seq = self.seq + count;
        if let Some(store) = &self.store {
            let events = encoded
                .full
                .iter()
                .enumerate()
                .map(|(i, frame)| NewEvent {
                    seq: self.seq + 1 + i as u64,
                    at_ms: server_time_ms,
                    frame: frame.as_str().to_string(),
                })
                .collect();
            let finish = finished_now.then(|| {
                let summary =
                    summary_of_round(&self.id, &next, self.created_ms, Some(server_time_ms));
                Finish {
                    at_ms: server_time_ms,
                    summary: serde_json::to_string(&summary).unwrap_or_default(),
                }
            });
            if let Err(e) = store.append(&self.id, events, finish).await {
                if e.is_fenced() {
                    // Another node took the room: nothing more is written or told here.
                    self.abdicated = Some("the match moved to another node");
                }
                tracing::error!(match_id = %self.id, error = %e, "events not stored");
                return Err(Refusal::new(
                    ErrorCode::Internal,
                    "the server could not store this action; nothing changed, try again",
                ));
            }
            // The store works again: the timers need not wait for it.
            self.retry_at = None;
        }
        if finished_now {
            metrics::gauge!("hakem_live_matches").decrement(1.0);
            self.retire_at = Some(Instant::now() + self.settings.retire_after);
            // Nobody plays on: whoever comes back reads the store, and the room keeps no
            // history through its grace.
            if self.store.is_some() {
                self.history = 0;
            }
        }
        self.round = Arc::new(next);
        self.seq = seq;
        self.last_at = at;
        for frame in &encoded.full {
            self.recent.push_back(frame.clone());
        }
        while self.recent.len() > self.history {
            self.recent.pop_front();
        }
        if self.history == 0 {
            self.recent = VecDeque::new();
        }
        match &mut self.delayed {
            Some(delayed) => {
                let due = self.epoch
                    + Duration::from_millis(at)
                    + Duration::from_secs(u64::from(delayed.delay.seconds));
                self.broadcast(&encoded, Audience::NotSpectators);
                if let Some(delayed) = &mut self.delayed {
                    let frames = encoded.frames.clone();
                    delayed.hold(due, &frames, encoded);
                }
                // Moves let earlier events through; the round's end lets every one through.
                self.release_shown(finished_now);
            }
            None => self.broadcast(&encoded, Audience::Everyone),
        }
        self.publish();
        self.send_turn_states();
        if finished_now {
            if let (Some(sink), Some(result)) = (&self.finished, self.round.result()) {
                // Rated only if something was played here: a forfeit, a no-show or a round
                // decided before its first move rates nobody.
                let played = self.round.was_played();
                let _ = sink.send(super::Finished {
                    match_id: self.id.to_string(),
                    result: result.clone(),
                    rated: super::Rated::of(self.round.config(), &self.tokens.accounts)
                        .filter(|_| played),
                });
            }
        }
        Ok(())
    }

    /// Shows spectators who see the match late the events now due (with `all`, every one:
    /// the round is over, and from then on they see it live).
    fn release_shown(&mut self, all: bool) {
        let now = self.now();
        let Some(delayed) = &mut self.delayed else {
            return;
        };
        let released = delayed.release(Instant::now(), all);
        for encoded in &released {
            delayed.show(&encoded.frames, now);
        }
        for encoded in &released {
            self.broadcast(encoded, Audience::Spectators);
        }
        if all {
            self.delayed = None;
        }
        if !released.is_empty() || all {
            self.publish();
        }
    }

    /// Sends one action's frames to every member of `audience`: each alone, or in one
    /// `events` frame to members who asked for batches; with boards to those who asked for
    /// them.
    fn broadcast(&mut self, encoded: &Encoded, audience: Audience) {
        // [boards][batched], made when a member first needs it.
        let mut made: [[Option<Vec<Utf8Bytes>>; 2]; 2] = Default::default();
        for (&conn, member) in &self.members {
            if !audience.includes(member.role) {
                continue;
            }
            let batched = member.batch && encoded.full.len() > 1;
            let frames =
                made[usize::from(member.boards)][usize::from(batched)].get_or_insert_with(|| {
                    let frames = encoded.frames(member.boards);
                    if batched {
                        vec![outbox::batch(&self.id, &frames)]
                    } else {
                        frames
                    }
                });
            if !frames.iter().all(|frame| member.outbox.send(frame.clone())) {
                self.dropped.push(conn);
            }
        }
    }

    fn publish(&self) {
        self.published.send_replace(Arc::new(Published {
            id: self.id.clone(),
            round: self.round.clone(),
            seq: self.seq,
            shown: self.delayed.as_ref().map(shown_of),
            epoch: self.epoch,
            created_ms: self.created_ms,
            restarted: false,
        }));
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

    fn refuse(&self, outbox: &Outbox, re: Option<RequestId>, code: ErrorCode, message: &str) {
        self.send_refusal(outbox, re, Refusal::new(code, message));
    }

    fn send_refusal(&self, outbox: &Outbox, re: Option<RequestId>, refusal: Refusal) {
        metrics::counter!("hakem_errors_total", "code" => refusal.code.as_str()).increment(1);
        outbox.send_message(&ServerMessage::Error(ErrorReply {
            re,
            code: refusal.code,
            message: refusal.message,
            match_id: Some(self.id.to_string()),
            rule: refusal.rule.map(str::to_string),
            preview: None,
        }));
    }
}

/// An event frame as sent: `{"type":"event", ...the frame}` (what `ServerMessage::Event`
/// writes), without moving the frame into a message.
fn encode_event(frame: &EventFrame) -> Utf8Bytes {
    struct Tagged<'a>(&'a EventFrame);
    impl serde::Serialize for Tagged<'_> {
        fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
            use serde::ser::SerializeStruct;
            let mut s = serializer.serialize_struct("EventFrame", 5)?;
            s.serialize_field("type", "event")?;
            s.serialize_field("match", &self.0.match_id)?;
            s.serialize_field("seq", &self.0.seq)?;
            s.serialize_field("event", &self.0.event)?;
            s.serialize_field("clocks", &self.0.clocks)?;
            s.end()
        }
    }
    Utf8Bytes::from(serde_json::to_string(&Tagged(frame)).unwrap_or_default())
}

#[cfg(test)]
#[test]
fn an_event_frame_is_written_as_the_message_would_be() {
    let frame = EventFrame {
        match_id: "m\"1".into(),
        seq: 7,
        event: Event::Pressed {
            seat: hakem_protocol::Seat::P2,
        },
        clocks: None,
    };
    assert_eq!(
        encode_event(&frame).as_str(),
        encode(&ServerMessage::Event(Box::new(frame))).as_str()
    );
}

/// A player's action as a round command for `seat`; `None` for an arbiter's action.
fn player_command(seat: hakem_protocol::Seat, action: Action) -> Option<Command> {
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
        Action::OfferDraw => Command::OfferDraw { seat },
        Action::DeclineDraw => Command::DeclineDraw { seat },
        Action::Claim(text) => Command::Claim { seat, text },
        Action::Arbiter(_) | Action::Chat(_) => return None,
    })
}
