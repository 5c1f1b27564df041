//! A room's own timers under tokio's paused clock: the set ends on time at exactly the
//! configured moment, not a millisecond early, without any message arriving; an action counts
//! at the moment it was read, whenever the room gets to it; a finished room
//! retires after its grace; a match nobody plays expires; events beyond the history kept in
//! memory are sent as a replay from the store; batches carry one action's events; spectators
//! who see a match late are shown each event when it is old enough.

use std::sync::Arc;
use std::time::Duration;

use hakem_protocol::{ClockConfig, ErrorCode, Event, PerSeat, Seat, ServerMessage, SpectatorDelay};
use hakem_round::{MatchConfig, Round};

use super::test_support::{self, act, event_kinds, join, queue_read_at, settle, tokens, Member};
use super::{Action, Credential, LocalRoom, RoomSettings, Rooms, Start};
use crate::outbox::Outgoing;

fn start_room(rooms: &Arc<Rooms>, clock: Option<ClockConfig>, settings: RoomSettings) -> LocalRoom {
    start_delayed(rooms, clock, settings, None)
}

fn start_delayed(
    rooms: &Arc<Rooms>,
    clock: Option<ClockConfig>,
    settings: RoomSettings,
    spectator_delay: Option<SpectatorDelay>,
) -> LocalRoom {
    let config = MatchConfig::new("pentago", None, 3, clock, 3, PerSeat::default()).unwrap();
    test_support::start(rooms, config, settings, spectator_delay)
}

async fn seated(rooms: &Arc<Rooms>, clock: ClockConfig) -> (LocalRoom, Member, Member) {
    seated_delayed(rooms, clock, None).await
}

async fn seated_delayed(
    rooms: &Arc<Rooms>,
    clock: ClockConfig,
    spectator_delay: Option<SpectatorDelay>,
) -> (LocalRoom, Member, Member) {
    let room = start_delayed(rooms, Some(clock), RoomSettings::default(), spectator_delay);
    let (p1, p2) = (Member::new(), Member::new());
    for (conn, member, token) in [(1, &p1, "a"), (2, &p2, "b")] {
        room.join(join(conn, member, Credential::Seat(token.repeat(32))))
            .await
            .unwrap();
        settle().await;
    }
    for (conn, member) in [(1, &p1), (2, &p2)] {
        act(&room, conn, member, Action::Ready).await;
    }
    (room, p1, p2)
}

#[tokio::test(start_paused = true)]
async fn the_set_ends_on_time_exactly_at_the_configured_time() {
    let rooms = Arc::new(Rooms::default());
    let clock = ClockConfig::default();
    let (_room, mut p1, _p2) = seated(&rooms, clock).await;
    assert!(event_kinds(&p1.events()).contains(&"set_started"));

    tokio::time::advance(Duration::from_millis(clock.initial_ms - 1)).await;
    settle().await;
    assert_eq!(
        event_kinds(&p1.events()),
        Vec::<&str>::new(),
        "a millisecond early"
    );

    tokio::time::advance(Duration::from_millis(1)).await;
    settle().await;
    let clocks = p1_lost_on_time(&p1.events());
    assert_eq!((clocks.p1_ms, clocks.p2_ms), (0, clock.initial_ms));
}

/// The clocks of the one event in `messages`: the set ended on time, p1's, won by p2.
fn p1_lost_on_time(messages: &[ServerMessage]) -> hakem_protocol::Clocks {
    assert_eq!(event_kinds(messages), ["set_ended"], "{messages:?}");
    let ServerMessage::Event(frame) = &messages[0] else {
        panic!("{messages:?}")
    };
    let Event::SetEnded(result) = &frame.event else {
        panic!("{frame:?}")
    };
    assert_eq!(result.reason.as_str(), "time");
    assert_eq!(result.winner, Some(Seat::P2));
    frame.clocks.unwrap()
}

/// A seated room with `initial_ms` on each clock (no increment), `after_ms` into the first
/// mover's (p1's) turn, and what its players were sent so far read.
async fn seated_into_the_set(
    initial_ms: u64,
    after_ms: u64,
) -> (Arc<Rooms>, LocalRoom, Member, Member) {
    let rooms = Arc::new(Rooms::default());
    let clock = ClockConfig {
        initial_ms,
        increment_ms: 0,
    };
    let (room, mut p1, mut p2) = seated(&rooms, clock).await;
    p1.drain();
    p2.drain();
    tokio::time::advance(Duration::from_millis(after_ms)).await;
    settle().await;
    (rooms, room, p1, p2)
}

#[tokio::test(start_paused = true)]
async fn a_move_and_press_hand_the_running_clock_to_the_opponent() {
    let (_rooms, room, p1, mut p2) = seated_into_the_set(60_000, 20_000).await;
    act(&room, 1, &p1, Action::Move("a1sw".into(), true)).await;
    assert_eq!(event_kinds(&p2.events()), ["moved", "pressed"]);
    // The published state counts the running clock down by itself.
    tokio::time::advance(Duration::from_millis(5_000)).await;
    assert_eq!(room.state().clocks.unwrap().p2_ms, 55_000);

    // p1 used 20 s; p2 now has the full minute from the press.
    tokio::time::advance(Duration::from_millis(54_999)).await;
    settle().await;
    assert!(event_kinds(&p2.events()).is_empty());
    tokio::time::advance(Duration::from_millis(1)).await;
    settle().await;
    let messages = p2.events();
    let ServerMessage::Event(frame) = &messages[0] else {
        panic!("{messages:?}")
    };
    let clocks = frame.clocks.unwrap();
    assert_eq!((clocks.p1_ms, clocks.p2_ms), (40_000, 0));
}

/// The reading the last `pressed` event sent to `member` carries.
fn pressed_clocks(member: &mut Member) -> hakem_protocol::Clocks {
    let messages = member.events();
    let pressed = messages.iter().find_map(|m| match m {
        ServerMessage::Event(frame) if frame.event.kind() == "pressed" => frame.clocks,
        _ => None,
    });
    pressed.unwrap_or_else(|| panic!("no press in {messages:?}"))
}

#[tokio::test(start_paused = true)]
async fn a_press_is_timed_when_it_reached_the_server_not_when_the_room_got_to_it() {
    let (_rooms, room, mut p1, mut p2) = seated_into_the_set(60_000, 20_000).await;
    let read = tokio::time::Instant::now();
    // The frame waited 5 s before the room got to it (a busy server, a slow disk).
    tokio::time::advance(Duration::from_millis(5_000)).await;
    queue_read_at(&room, 1, &p1, Action::Move("a1sw".into(), true), read).await;
    settle().await;
    let clocks = pressed_clocks(&mut p2);
    assert_eq!((clocks.p1_ms, clocks.p2_ms), (40_000, 60_000));
    assert_eq!(clocks.running, Some(Seat::P2));
    // The press started p2's clock at the moment it was made.
    assert_eq!(room.state().clocks.unwrap().p2_ms, 55_000);

    // And the room's time never runs backwards: an action read before the last one (a
    // second before p1's press, handled a second after it was) is timed with it.
    tokio::time::advance(Duration::from_millis(1_000)).await;
    let earlier = read - Duration::from_millis(1_000);
    queue_read_at(&room, 2, &p2, Action::Move("b2sw".into(), true), earlier).await;
    settle().await;
    let clocks = pressed_clocks(&mut p1);
    assert_eq!((clocks.p1_ms, clocks.p2_ms), (40_000, 60_000));
    // p1's clock runs from p1's own press, not from a second before it.
    assert_eq!(room.state().clocks.unwrap().p1_ms, 34_000);
}

#[tokio::test(start_paused = true)]
async fn a_press_read_before_the_clock_ran_out_counts_though_the_room_got_to_it_after() {
    // Whether the room sees its timer or the press first is the runtime's choice: either
    // way, the press counts (sixteen rooms see both ways all but once in 65,536 runs).
    for _ in 0..16 {
        let (_rooms, room, p1, mut p2) = seated_into_the_set(1_000, 990).await;
        let read = tokio::time::Instant::now();
        // The room's timer fires before it gets to the press read at 990 ms.
        tokio::time::advance(Duration::from_millis(20)).await;
        queue_read_at(&room, 1, &p1, Action::Move("a1sw".into(), true), read).await;
        settle().await;
        let messages = p2.events();
        assert_eq!(event_kinds(&messages), ["moved", "pressed"], "{messages:?}");
        let ServerMessage::Event(frame) = &messages[1] else {
            panic!("{messages:?}")
        };
        let clocks = frame.clocks.unwrap();
        assert_eq!((clocks.p1_ms, clocks.running), (10, Some(Seat::P2)));
    }
}

#[tokio::test(start_paused = true)]
async fn a_press_queued_behind_a_leave_counts_when_both_were_sent_before_the_clock_ran_out() {
    for _ in 0..16 {
        let (_rooms, room, mut p1, _p2) = seated_into_the_set(1_000, 990).await;
        // p2's connection closes, then p1's press is read, both at 990 ms; the room gets to
        // them at 1,010 ms, its timer due as well.
        room.leave(2).await.unwrap();
        let read = tokio::time::Instant::now();
        queue_read_at(&room, 1, &p1, Action::Move("a1sw".into(), true), read).await;
        tokio::time::advance(Duration::from_millis(20)).await;
        settle().await;
        let messages = p1.events();
        assert_eq!(
            event_kinds(&messages),
            ["player_disconnected", "moved", "pressed"],
            "{messages:?}"
        );
        assert_eq!(room.state().clocks.unwrap().p1_ms, 10);
    }
}

#[tokio::test(start_paused = true)]
async fn an_action_read_after_the_clock_ran_out_loses_on_time_though_the_room_got_to_it_first() {
    for _ in 0..8 {
        let (_rooms, room, mut p1, mut p2) = seated_into_the_set(1_000, 990).await;
        // Read 5 ms after the clock ran out; the room gets to it 5 ms later still, before
        // its own timer.
        let read = tokio::time::Instant::now() + Duration::from_millis(15);
        queue_read_at(&room, 1, &p1, Action::Move("a1sw".into(), true), read).await;
        tokio::time::advance(Duration::from_millis(20)).await;
        settle().await;
        assert_eq!(p1_lost_on_time(&p2.events()).p1_ms, 0);
        // The move came too late: p1 is told so, and it changed nothing.
        let refused = p1.events();
        assert!(
            refused
                .iter()
                .any(|m| matches!(m, ServerMessage::Error(e) if e.code == ErrorCode::SetOver)),
            "{refused:?}"
        );
        assert_eq!(room.state().clocks.unwrap().p1_ms, 0);
    }
}

#[tokio::test(start_paused = true)]
async fn a_finished_room_retires_after_its_grace_and_leaves_the_registry() {
    let rooms = Arc::new(Rooms::default());
    let settings = RoomSettings {
        retire_after: Duration::from_secs(60),
        ..RoomSettings::default()
    };
    let room = start_room(&rooms, None, settings);
    let arbiter = Member::new();
    room.join(join(9, &arbiter, Credential::Arbiter("c".repeat(32))))
        .await
        .unwrap();
    settle().await;
    act(
        &room,
        9,
        &arbiter,
        Action::Arbiter(hakem_round::Command::Declare {
            scope: hakem_protocol::Scope::Round,
            winner: hakem_protocol::Winner::Draw,
            reason: "agreed".into(),
        }),
    )
    .await;
    assert_eq!(room.status(), hakem_protocol::MatchStatus::Finished);
    tokio::time::advance(Duration::from_secs(59)).await;
    settle().await;
    assert!(rooms.contains("m1"), "still in its grace");
    tokio::time::advance(Duration::from_secs(1)).await;
    settle().await;
    assert!(!rooms.contains("m1"), "retired");
    assert_eq!(room.leave(9).await, Err(super::Gone));
    // Its last state stays readable through the handle a reader held.
    assert_eq!(room.state().status, hakem_protocol::MatchStatus::Finished);
}

#[tokio::test(start_paused = true)]
async fn a_match_nobody_plays_expires_and_one_being_played_does_not() {
    let rooms = Arc::new(Rooms::default());
    let settings = RoomSettings {
        expire_after: Duration::from_secs(3600),
        retire_after: Duration::from_secs(10),
        ..RoomSettings::default()
    };
    let room = start_room(&rooms, None, settings);
    let mut watcher = Member::new();
    room.join(join(5, &watcher, Credential::Spectator))
        .await
        .unwrap();
    settle().await;
    watcher.drain();
    tokio::time::advance(Duration::from_secs(3599)).await;
    settle().await;
    assert!(event_kinds(&watcher.events()).is_empty());
    tokio::time::advance(Duration::from_secs(1)).await;
    settle().await;
    assert_eq!(event_kinds(&watcher.events()), ["expired"]);
    let state = room.state();
    assert!(state.expired);
    assert_eq!(state.status, hakem_protocol::MatchStatus::Finished);
    tokio::time::advance(Duration::from_secs(10)).await;
    settle().await;
    assert!(!rooms.contains("m1"));

    // A player at the table keeps the match from expiring.
    let rooms = Arc::new(Rooms::default());
    let room = start_room(&rooms, None, settings);
    let p1 = Member::new();
    room.join(join(1, &p1, Credential::Seat("a".repeat(32))))
        .await
        .unwrap();
    tokio::time::advance(Duration::from_secs(7200)).await;
    settle().await;
    assert!(!room.state().expired);
}

#[tokio::test]
async fn a_member_far_behind_gets_a_replay_then_the_events_in_memory() {
    let rooms = Arc::new(Rooms::default());
    let settings = RoomSettings {
        history: 3,
        ..RoomSettings::default()
    };
    let config = MatchConfig::new("pentago", None, 3, None, 3, PerSeat::default()).unwrap();
    // A room with a store keeps only `history` events; without one it keeps all. Make the
    // room believe older events are stored by starting it from stored frames.
    let mut round = Round::new(config);
    let mut frames = Vec::new();
    for (i, event) in [
        Event::PlayerConnected { seat: Seat::P1 },
        Event::PlayerDisconnected { seat: Seat::P1 },
        Event::PlayerConnected { seat: Seat::P2 },
        Event::PlayerDisconnected { seat: Seat::P2 },
        Event::Ready { seat: Seat::P1 },
    ]
    .into_iter()
    .enumerate()
    {
        round.apply(&event, 0);
        let frame = hakem_protocol::EventFrame {
            match_id: "m1".into(),
            seq: i as u64 + 1,
            event,
            clocks: None,
        };
        frames.push(serde_json::to_string(&ServerMessage::Event(Box::new(frame))).unwrap());
    }
    let (_file, store) = crate::store::tests::sqlite_store().await;
    tokio::time::pause();
    let room = rooms.start(Start {
        id: "m1".into(),
        round,
        tokens: tokens(),
        frames,
        times: Vec::new(),
        created_ms: crate::wall_clock_ms(),
        store: Some(store),
        finished: None,
        settings,
        spectator_delay: None,
    });
    let mut late = Member::new();
    let mut entry = join(7, &late, Credential::Spectator);
    entry.since_seq = Some(1);
    room.join(entry).await.unwrap();
    settle().await;
    let got = late.drain();
    // 2 comes from the store, 3..5 from memory.
    assert!(got[0].is_none(), "{got:?}");
    let seqs: Vec<u64> = got[1..]
        .iter()
        .map(|m| match m {
            Some(ServerMessage::Event(frame)) => frame.seq,
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(seqs, [3, 4, 5]);
}

#[tokio::test(start_paused = true)]
async fn a_member_who_asked_for_batches_gets_one_frame_per_action() {
    let rooms = Arc::new(Rooms::default());
    let (room, mut p1, _p2) = seated(&rooms, ClockConfig::default()).await;
    let mut batched = Member::new();
    let mut entry = join(3, &batched, Credential::Spectator);
    entry.batch = true;
    room.join(entry).await.unwrap();
    settle().await;
    batched.drain();
    p1.drain();
    act(&room, 1, &p1, Action::Move("a1sw".into(), true)).await;
    let items = batched.rx.try_recv().unwrap();
    let Outgoing::Frame(frame) = items else {
        panic!("a frame")
    };
    let value: serde_json::Value = serde_json::from_str(frame.as_str()).unwrap();
    assert_eq!(value["type"], "events");
    let kinds: Vec<&str> = value["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["event"]["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["moved", "pressed"]);
    assert!(batched.rx.try_recv().is_err(), "one frame");
    // Others still get one frame per event.
    assert_eq!(event_kinds(&p1.events()), ["moved", "pressed"]);
}

fn seqs(messages: &[ServerMessage]) -> Vec<u64> {
    messages
        .iter()
        .filter_map(|m| match m {
            ServerMessage::Event(frame) => Some(frame.seq),
            _ => None,
        })
        .collect()
}

async fn spectator(room: &LocalRoom, conn: u64, history: bool) -> (Member, Vec<ServerMessage>) {
    let mut member = Member::new();
    let mut entry = join(conn, &member, Credential::Spectator);
    entry.history = history;
    room.join(entry).await.unwrap();
    settle().await;
    let messages = member.events();
    (member, messages)
}

fn state_seq(messages: &[ServerMessage]) -> Option<u64> {
    messages.iter().rev().find_map(|m| match m {
        ServerMessage::State(state) => Some(state.seq),
        _ => None,
    })
}

#[tokio::test(start_paused = true)]
async fn spectators_of_a_delayed_match_see_each_event_when_it_is_old_enough() {
    let rooms = Arc::new(Rooms::default());
    let delay = SpectatorDelay {
        seconds: 30,
        moves: 0,
    };
    let (room, mut p1, mut p2) = seated_delayed(&rooms, ClockConfig::default(), Some(delay)).await;
    let live_seq = *seqs(&p1.events()).last().unwrap();
    p2.drain();
    // Everything so far (the seats taken, the set started) happened just now: a spectator
    // arriving is shown the match as it was created, and so is the public.
    let (mut watcher, joined) = spectator(&room, 10, false).await;
    assert_eq!(state_seq(&joined), Some(0));
    assert_eq!(room.state().seq, 0);
    assert_eq!(room.state().spectator_delay, Some(delay));
    assert_eq!(room.public_seq(), 0);

    tokio::time::advance(Duration::from_secs(1)).await;
    act(&room, 1, &p1, Action::Move("a1sw".into(), true)).await;
    assert_eq!(
        event_kinds(&p2.events()),
        ["moved", "pressed"],
        "players see it live"
    );
    assert!(watcher.events().is_empty(), "the spectator does not");

    // 30 s after the start of the set, the spectator sees it start; the move a second later.
    tokio::time::advance(Duration::from_millis(29_000)).await;
    settle().await;
    let started = watcher.events();
    assert_eq!(seqs(&started), (1..=live_seq).collect::<Vec<_>>());
    assert!(event_kinds(&started).contains(&"set_started"));
    assert_eq!(room.public_seq(), live_seq);
    tokio::time::advance(Duration::from_secs(1)).await;
    settle().await;
    assert_eq!(event_kinds(&watcher.events()), ["moved", "pressed"]);
    assert_eq!(room.public_seq(), live_seq + 2);
    assert_eq!(room.state().position.moves.len(), 1);

    // A spectator coming now with the history gets exactly what is shown, no more.
    tokio::time::advance(Duration::from_secs(5)).await;
    act(&room, 2, &p2, Action::Move("f6ne".into(), true)).await;
    let (_late, history) = spectator(&room, 11, true).await;
    assert_eq!(
        seqs(&history),
        (1..=live_seq + 2).collect::<Vec<_>>(),
        "up to the first move, not the second"
    );

    // The end of the round shows the rest at once, and from then on everything is live.
    for _ in 0..2 {
        act(&room, 1, &p1, Action::Resign).await;
        for (conn, member) in [(1, &p1), (2, &p2)] {
            act(&room, conn, member, Action::Ready).await;
        }
    }
    assert_eq!(room.status(), hakem_protocol::MatchStatus::Finished);
    let rest = watcher.events();
    assert!(
        event_kinds(&rest).contains(&"round_ended"),
        "{:?}",
        event_kinds(&rest)
    );
    assert_eq!(room.public_seq(), room.state().seq);
    assert_eq!(room.state().spectator_delay, None);
}

#[tokio::test(start_paused = true)]
async fn spectators_who_see_a_match_moves_behind_see_a_move_once_the_next_is_made() {
    let rooms = Arc::new(Rooms::default());
    let delay = SpectatorDelay {
        seconds: 0,
        moves: 1,
    };
    let (room, p1, p2) = seated_delayed(&rooms, ClockConfig::default(), Some(delay)).await;
    let (mut watcher, _) = spectator(&room, 10, false).await;
    assert_eq!(room.public_seq(), 0);
    act(&room, 1, &p1, Action::Move("a1sw".into(), true)).await;
    // The first move lets through what came before it: the set's start.
    let before = watcher.events();
    assert!(event_kinds(&before).contains(&"set_started"));
    assert!(!event_kinds(&before).contains(&"moved"));
    tokio::time::advance(Duration::from_secs(600)).await;
    settle().await;
    assert!(
        watcher.events().is_empty(),
        "time alone does not show a move"
    );
    assert_eq!(room.state().position.moves.len(), 0);
    act(&room, 2, &p2, Action::Move("f6ne".into(), true)).await;
    assert_eq!(event_kinds(&watcher.events()), ["moved", "pressed"]);
    assert_eq!(room.state().position.moves.len(), 1);
}

/// A room of match `m1` writing to a fresh SQLite store where the match is recorded.
async fn stored_room(
    rooms: &Arc<Rooms>,
    clock: Option<ClockConfig>,
) -> (LocalRoom, crate::store::Store) {
    let (_file, store) = crate::store::tests::sqlite_store().await;
    let spec = crate::store::tests::spec();
    store.create_match("m1", &spec, 0).await.unwrap();
    let config = MatchConfig::new("pentago", None, 3, clock, 3, PerSeat::default()).unwrap();
    let room = test_support::start_stored(
        rooms,
        config,
        RoomSettings::default(),
        None,
        Some(store.clone()),
    );
    (room, store)
}

fn with_event(kind: &'static str) -> impl Fn(&ServerMessage) -> bool {
    move |m| event_kinds(std::slice::from_ref(m)).contains(&kind)
}

/// Both players seated and ready, and a spectator who takes batches, in a stored room (with
/// `clock`); what they were sent so far is read.
async fn stored_and_ready(
    rooms: &Arc<Rooms>,
    clock: Option<ClockConfig>,
) -> (LocalRoom, crate::store::Store, [Member; 3]) {
    let (room, store) = stored_room(rooms, clock).await;
    let (mut p1, mut p2, mut watcher) = (Member::new(), Member::new(), Member::new());
    for (conn, member, token) in [(1, &p1, "a"), (2, &p2, "b")] {
        room.join(join(conn, member, Credential::Seat(token.repeat(32))))
            .await
            .unwrap();
    }
    let mut entry = join(3, &watcher, Credential::Spectator);
    entry.batch = true;
    room.join(entry).await.unwrap();
    for (conn, member) in [(1, &p1), (2, &p2)] {
        act(&room, conn, member, Action::Ready).await;
    }
    for member in [&mut p1, &mut p2, &mut watcher] {
        member.until(with_event("set_started")).await;
    }
    (room, store, [p1, p2, watcher])
}

#[tokio::test]
async fn with_a_store_every_member_gets_an_action_once_stored_and_the_mover_its_ack_last() {
    let rooms = Arc::new(Rooms::default());
    let (room, store, [mut p1, mut p2, mut watcher]) = stored_and_ready(&rooms, None).await;
    let re: hakem_protocol::RequestId = serde_json::from_str("7").unwrap();
    room.act(
        1,
        Action::Move("a1sw".into(), true),
        p1.outbox.clone(),
        Some(re),
        tokio::time::Instant::now(),
    )
    .await
    .unwrap();
    let mover = p1.until(|m| matches!(m, ServerMessage::Ack { .. })).await;
    assert_eq!(
        event_kinds(&mover),
        ["moved", "pressed"],
        "the ack after the events"
    );
    let opponent = p2.until(with_event("pressed")).await;
    assert_eq!(event_kinds(&opponent), ["moved", "pressed"]);
    let batch = watcher.until(|_| true).await;
    assert!(
        matches!(batch[0], ServerMessage::Events { .. }),
        "one frame: {batch:?}"
    );
    assert_eq!(event_kinds(&batch), ["moved", "pressed"]);
    let stored: Vec<ServerMessage> = store
        .load("m1")
        .await
        .unwrap()
        .unwrap()
        .frames
        .iter()
        .map(|f| serde_json::from_str(f).unwrap())
        .collect();
    assert_eq!(
        event_kinds(&stored[stored.len() - 2..]),
        ["moved", "pressed"]
    );
}

/// Stores an event of match `m1` under the number its room would write next, as another
/// writer could: the room's writes are refused from then on.
async fn take_the_next_number(store: &crate::store::Store) {
    let next = store.load("m1").await.unwrap().unwrap().frames.len() as u64 + 1;
    let taken = crate::store::NewEvent {
        seq: next,
        at_ms: 0,
        frame: "{}".into(),
    };
    store.append("m1", vec![taken], None).await.unwrap();
}

#[tokio::test]
async fn a_room_whose_events_are_not_stored_tells_nobody_of_them() {
    let rooms = Arc::new(Rooms::default());
    let (room, store, [mut p1, mut p2, mut watcher]) = stored_and_ready(&rooms, None).await;
    // Another writer took the room's next number: the room's append is refused.
    take_the_next_number(&store).await;
    act(&room, 1, &p1, Action::Move("a1sw".into(), true)).await;
    let mover = p1.until(|m| matches!(m, ServerMessage::Error(_))).await;
    assert!(event_kinds(&mover).is_empty(), "{mover:?}");
    // The room tells its members before it answers the mover: had they been told, their
    // frames would be queued by now.
    assert!(p2.drain().is_empty());
    assert!(watcher.drain().is_empty());
}

/// The errors logged so far on this thread (a test's rooms run on its own thread).
fn errors_logged_here() -> usize {
    use std::collections::HashMap;
    use std::sync::{Mutex, Once};
    use std::thread::ThreadId;
    use tracing_subscriber::layer::SubscriberExt;

    static COUNTS: Mutex<Option<HashMap<ThreadId, usize>>> = Mutex::new(None);
    struct CountErrors;
    impl<S: tracing::Subscriber> tracing_subscriber::Layer<S> for CountErrors {
        fn on_event(
            &self,
            event: &tracing::Event<'_>,
            _: tracing_subscriber::layer::Context<'_, S>,
        ) {
            if *event.metadata().level() == tracing::Level::ERROR {
                let mut counts = COUNTS.lock().unwrap();
                let counts = counts.get_or_insert_with(HashMap::new);
                *counts.entry(std::thread::current().id()).or_default() += 1;
            }
        }
    }
    // One subscriber for the whole test binary: one set for a thread alone missed events
    // whose callsites other tests' threads had registered first.
    static INSTALL: Once = Once::new();
    INSTALL.call_once(|| {
        let _ = tracing::subscriber::set_global_default(
            tracing_subscriber::registry()
                .with(tracing_subscriber::filter::LevelFilter::ERROR)
                .with(CountErrors),
        );
    });
    let counts = COUNTS.lock().unwrap();
    counts
        .as_ref()
        .and_then(|counts| counts.get(&std::thread::current().id()).copied())
        .unwrap_or(0)
}

#[tokio::test]
async fn a_set_end_on_time_that_cannot_be_stored_is_tried_again_a_second_later_not_at_once() {
    let errors_before = errors_logged_here();
    let rooms = Arc::new(Rooms::default());
    let clock = ClockConfig {
        initial_ms: 1_000,
        increment_ms: 0,
    };
    let (room, store, [mut p1, _p2, _watcher]) = stored_and_ready(&rooms, Some(clock)).await;
    // Another writer took the room's next number: every write of the room fails from now on.
    take_the_next_number(&store).await;
    tokio::time::sleep(std::time::Duration::from_millis(2_600)).await;
    // The clock ran out a second into the set: tried then, and again about a second later.
    // The room logs each write that fails.
    let tries = errors_logged_here() - errors_before;
    assert!((1..=3).contains(&tries), "{tries} tries to end the set");
    assert!(event_kinds(&p1.events()).is_empty(), "nothing was stored");
    assert_eq!(room.status(), hakem_protocol::MatchStatus::Playing);
}
