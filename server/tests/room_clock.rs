//! A room's own timer under tokio's paused clock: the set ends on time at exactly the configured
//! moment, not a millisecond early, without any message arriving.

use std::sync::Arc;
use std::time::Duration;

use hakem_protocol::{ClockConfig, PerSeat, ServerMessage};
use hakem_server::room::{self, Action, Credential, Join, Outbox, RoomCommand, RoomHandle, Tokens};
use hakem_round::MatchConfig;
use tokio::sync::{mpsc, Notify};

struct Member {
    outbox: Outbox,
    rx: mpsc::Receiver<axum::extract::ws::Utf8Bytes>,
}

impl Member {
    fn new() -> Member {
        let (tx, rx) = mpsc::channel(1024);
        Member {
            outbox: Outbox::new(tx, Arc::new(Notify::new())),
            rx,
        }
    }

    /// Every frame queued so far.
    fn drain(&mut self) -> Vec<ServerMessage> {
        let mut out = Vec::new();
        while let Ok(frame) = self.rx.try_recv() {
            out.push(serde_json::from_str(frame.as_str()).unwrap());
        }
        out
    }
}

fn event_kinds(messages: &[ServerMessage]) -> Vec<&'static str> {
    messages
        .iter()
        .filter_map(|m| match m {
            ServerMessage::Event(frame) => Some(frame.event.kind()),
            _ => None,
        })
        .collect()
}

/// Lets the room task run everything it can without moving the clock.
async fn settle() {
    for _ in 0..50 {
        tokio::task::yield_now().await;
    }
}

async fn send(room: &RoomHandle, command: RoomCommand) {
    room.tx.send(command).await.unwrap();
    settle().await;
}

async fn seated_room(clock: ClockConfig) -> (RoomHandle, Member, Member) {
    let config = MatchConfig::new("pentago", None, 3, Some(clock), 3, PerSeat::default()).unwrap();
    let tokens = Tokens {
        seats: PerSeat::new("a".repeat(32), "b".repeat(32)),
        arbiter: "c".repeat(32),
        accounts: PerSeat::default(),
    };
    let room = room::spawn("m1".into(), config, tokens, None, None);
    let (p1, p2) = (Member::new(), Member::new());
    for (conn, member, token) in [(1, &p1, "a"), (2, &p2, "b")] {
        send(
            &room,
            RoomCommand::Join(Join {
                conn,
                credential: Credential::Seat(token.repeat(32)),
                since_seq: None,
                legal_moves: false,
                outbox: member.outbox.clone(),
                re: None,
            }),
        )
        .await;
    }
    for (conn, member) in [(1, &p1), (2, &p2)] {
        send(
            &room,
            RoomCommand::Act {
                conn,
                action: Action::Ready,
                outbox: member.outbox.clone(),
                re: None,
                received: tokio::time::Instant::now(),
            },
        )
        .await;
    }
    (room, p1, p2)
}

#[tokio::test(start_paused = true)]
async fn the_set_ends_on_time_exactly_at_the_configured_time() {
    let clock = ClockConfig::default();
    let (_room, mut p1, _p2) = seated_room(clock).await;
    assert!(event_kinds(&p1.drain()).contains(&"set_started"));

    tokio::time::advance(Duration::from_millis(clock.initial_ms - 1)).await;
    settle().await;
    assert_eq!(
        event_kinds(&p1.drain()),
        Vec::<&str>::new(),
        "a millisecond early"
    );

    tokio::time::advance(Duration::from_millis(1)).await;
    settle().await;
    let messages = p1.drain();
    assert_eq!(event_kinds(&messages), ["set_ended"]);
    let ServerMessage::Event(frame) = &messages[0] else {
        panic!("{messages:?}")
    };
    let hakem_protocol::Event::SetEnded(result) = &frame.event else {
        panic!("{frame:?}")
    };
    assert_eq!(result.reason, "time");
    assert_eq!(result.winner, Some(hakem_protocol::Seat::P2));
    let clocks = frame.clocks.unwrap();
    assert_eq!((clocks.p1_ms, clocks.p2_ms), (0, clock.initial_ms));
}

#[tokio::test(start_paused = true)]
async fn a_move_and_press_hand_the_running_clock_to_the_opponent() {
    let clock = ClockConfig {
        initial_ms: 60_000,
        increment_ms: 0,
    };
    let (room, mut p1, mut p2) = seated_room(clock).await;
    p1.drain();
    p2.drain();
    tokio::time::advance(Duration::from_millis(20_000)).await;
    send(
        &room,
        RoomCommand::Act {
            conn: 1,
            action: Action::Move("a1sw".into(), true),
            outbox: p1.outbox.clone(),
            re: None,
            received: tokio::time::Instant::now(),
        },
    )
    .await;
    assert_eq!(event_kinds(&p2.drain()), ["moved", "pressed"]);

    // p1 used 20 s; p2 now has the full minute from the press.
    tokio::time::advance(Duration::from_millis(59_999)).await;
    settle().await;
    assert!(event_kinds(&p2.drain()).is_empty());
    tokio::time::advance(Duration::from_millis(1)).await;
    settle().await;
    let messages = p2.drain();
    let ServerMessage::Event(frame) = &messages[0] else {
        panic!("{messages:?}")
    };
    let clocks = frame.clocks.unwrap();
    assert_eq!((clocks.p1_ms, clocks.p2_ms), (40_000, 0));
}
