//! What the room tests share: a member whose frames the test reads, and the steps of joining
//! and acting under tokio's paused clock.

use hakem_protocol::{PerSeat, ServerMessage};
use tokio::sync::mpsc;

use std::sync::Arc;

use hakem_protocol::SpectatorDelay;
use hakem_round::{MatchConfig, Round};

use super::{Action, Credential, Join, LocalRoom, RoomSettings, Rooms, Start, Tokens};
use crate::outbox::{Outbox, Outgoing};

pub struct Member {
    pub outbox: Outbox,
    pub rx: mpsc::Receiver<Outgoing>,
}

impl Member {
    pub fn new() -> Member {
        let (tx, rx) = mpsc::channel(1024);
        Member {
            outbox: Outbox::new(tx, crate::outbox::Kill::new()),
            rx,
        }
    }

    /// Every frame queued so far (replays as `None`).
    pub fn drain(&mut self) -> Vec<Option<ServerMessage>> {
        let mut out = Vec::new();
        while let Ok(item) = self.rx.try_recv() {
            out.push(parse(item));
        }
        out
    }

    /// What the member is sent up to the first message `last` accepts, for rooms whose work
    /// is not all on the test's own task (a store's writer commits on a thread of its own, so
    /// the clock is not paused there; ten seconds is a stall, not a pace).
    pub async fn until(&mut self, last: impl Fn(&ServerMessage) -> bool) -> Vec<ServerMessage> {
        let mut got = Vec::new();
        loop {
            let item = tokio::time::timeout(std::time::Duration::from_secs(10), self.rx.recv());
            let Some(message) = item.await.ok().flatten().and_then(parse) else {
                panic!("no frame (or a replay) after {got:?}")
            };
            let done = last(&message);
            got.push(message);
            if done {
                return got;
            }
        }
    }

    pub fn events(&mut self) -> Vec<ServerMessage> {
        self.drain().into_iter().flatten().collect()
    }
}

/// A queued frame as the client reads it; a replay is `None`.
fn parse(item: Outgoing) -> Option<ServerMessage> {
    match item {
        Outgoing::Frame(frame) => Some(serde_json::from_str(frame.as_str()).unwrap()),
        Outgoing::Replay { .. } => None,
    }
}

/// The kinds of the events in `messages`, those of a batch included, in order.
pub fn event_kinds(messages: &[ServerMessage]) -> Vec<&'static str> {
    messages
        .iter()
        .flat_map(|m| match m {
            ServerMessage::Event(frame) => vec![frame.event.kind()],
            ServerMessage::Events { events, .. } => events.iter().map(|f| f.event.kind()).collect(),
            _ => Vec::new(),
        })
        .collect()
}

/// Lets the room task run everything it can without moving the clock.
pub async fn settle() {
    for _ in 0..50 {
        tokio::task::yield_now().await;
    }
}

pub fn tokens() -> Tokens {
    Tokens {
        seats: PerSeat::new("a".repeat(32), "b".repeat(32)),
        arbiter: "c".repeat(32),
        accounts: PerSeat::default(),
    }
}

pub fn join(conn: u64, member: &Member, credential: Credential) -> Join {
    Join {
        conn,
        credential,
        since_seq: None,
        history: false,
        legal_moves: false,
        batch: false,
        boards: true,
        rematch: false,
        chat: false,
        speaker: Default::default(),
        outbox: member.outbox.clone(),
        re: None,
    }
}

pub async fn act(room: &LocalRoom, conn: u64, member: &Member, action: Action) {
    queue_read_at(room, conn, member, action, tokio::time::Instant::now()).await;
    settle().await;
}

/// Queues `action` as a frame read at `read`, without letting the room run.
pub async fn queue_read_at(
    room: &LocalRoom,
    conn: u64,
    member: &Member,
    action: Action,
    read: tokio::time::Instant,
) {
    room.act(conn, action, member.outbox.clone(), None, read)
        .await
        .unwrap();
}

/// A room of match `m1` with no store: memory is its whole history.
pub fn start(
    rooms: &Arc<Rooms>,
    config: MatchConfig,
    settings: RoomSettings,
    spectator_delay: Option<SpectatorDelay>,
) -> LocalRoom {
    start_stored(rooms, config, settings, spectator_delay, None)
}

/// [`start`], writing to `store` when there is one (where match `m1` must be recorded).
pub fn start_stored(
    rooms: &Arc<Rooms>,
    config: MatchConfig,
    settings: RoomSettings,
    spectator_delay: Option<SpectatorDelay>,
    store: Option<crate::store::Store>,
) -> LocalRoom {
    rooms.start(Start {
        id: "m1".into(),
        round: Round::new(config),
        tokens: tokens(),
        frames: Vec::new(),
        times: Vec::new(),
        created_ms: crate::wall_clock_ms(),
        store,
        finished: None,
        settings,
        spectator_delay,
    })
}
