//! The server core, from outside: late joiners get the match so far, a client far behind gets
//! every event it missed exactly once and in order (from the store, at its own pace), finished
//! rooms leave memory and their matches stay readable, lists are paged, matches nobody plays
//! expire, the opt-in extensions (`batch`, `boards`) change nothing for a v1 client, and
//! spectators of a match with a spectator delay see it late, across a restart.

use std::time::{Duration, Instant};

use hakem_blackbox::{create_match, metric_in, Client, Match, Server};
use serde_json::{json, Value};

/// Pentago `tr`, won by the first mover (from the durability tests).
const TR_FIRST_WINS: [&str; 31] = [
    "b1sw", "e5sw", "f6sw", "c6nw", "d6nw", "c6nw", "e6sw", "f1nw", "e2nw", "e4ne", "c6nw", "c1sw",
    "f2nw", "e1nw", "a3se", "f3se", "e4se", "b1sw", "c4sw", "b6sw", "d2sw", "f1se", "c3sw", "d4ne",
    "b5nw", "b1se", "b2ne", "f4ne", "c2nw", "b6se", "f2sw",
];

async fn hello(server: &Server, name: &str, features: &[&str]) -> Client {
    let mut client = Client::connect_raw(server, name).await;
    client
        .send(json!({"type": "hello", "protocol": 1, "features": features}))
        .await;
    let welcome = client.next().await;
    assert_eq!(welcome["type"], "welcome", "{welcome}");
    let granted: Vec<&str> = welcome["features"]
        .as_array()
        .map(|f| f.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    assert_eq!(granted, features, "{welcome}");
    client
}

/// Two seated players with the set started; `features` for both.
async fn started(server: &Server, features: &[&str], fields: Value) -> (Client, Client, Match) {
    let mut p1 = hello(server, "p1", features).await;
    let m = create_match(&mut p1, fields).await;
    let mut p2 = hello(server, "p2", features).await;
    p1.accepted(json!({"type": "join", "match": m.id, "seat_token": m.p1}))
        .await;
    p2.accepted(json!({"type": "join", "match": m.id, "seat_token": m.p2}))
        .await;
    p1.accepted(json!({"type": "ready", "match": m.id})).await;
    p2.accepted(json!({"type": "ready", "match": m.id})).await;
    (p1, p2, m)
}

async fn play(p1: &mut Client, p2: &mut Client, id: &str, moves: &[&str]) -> u64 {
    let mut seq = 0;
    for (i, mv) in moves.iter().enumerate() {
        let mover = if i % 2 == 0 { &mut *p1 } else { &mut *p2 };
        let ack = mover
            .accepted(json!({"type": "move", "match": id, "move": mv}))
            .await;
        seq = ack["seq"].as_u64().unwrap();
    }
    seq
}

/// Every frame up to the reply to request `id`, events of batches taken apart.
async fn until_reply(client: &mut Client, id: &str) -> Vec<Value> {
    let mut frames = Vec::new();
    loop {
        let frame = client.next().await;
        if frame["re"] == json!(id) {
            assert_eq!(frame["type"], "ack", "{frame}");
            return frames;
        }
        match frame["type"].as_str() {
            Some("events") => frames.extend(frame["events"].as_array().unwrap().iter().cloned()),
            _ => frames.push(frame),
        }
    }
}

fn seqs(frames: &[Value]) -> Vec<u64> {
    frames
        .iter()
        .filter(|f| f["type"] == "event")
        .map(|f| f["seq"].as_u64().unwrap())
        .collect()
}

#[tokio::test]
async fn a_late_joiner_gets_the_match_from_its_first_state() {
    let server = Server::start();
    let (mut p1, mut p2, m) = started(&server, &[], json!({"game": "pentago"})).await;
    let last = play(&mut p1, &mut p2, &m.id, &TR_FIRST_WINS[..8]).await;

    let mut late = hello(&server, "late", &["boards"]).await;
    late.send(json!({"type": "watch", "match": m.id, "history": true, "id": "w"}))
        .await;
    let frames = until_reply(&mut late, "w").await;
    let first = &frames[0];
    assert_eq!(first["type"], "state", "{first}");
    assert_eq!(first["seq"], 0, "the match as it was created");
    assert_eq!(first["status"], "waiting");
    assert_eq!(seqs(&frames), (1..=last).collect::<Vec<_>>());
    // With `boards`, every move brings the board after it.
    let moved: Vec<&Value> = frames
        .iter()
        .filter(|f| f["event"]["kind"] == "moved")
        .collect();
    assert_eq!(moved.len(), 8);
    assert!(moved.iter().all(|f| f["event"]["board"]["rows"].is_array()));
    let state = server.match_state(&m.id);
    assert_eq!(moved[7]["event"]["board"], state["position"]["board"]);
}

#[tokio::test]
async fn a_client_far_behind_gets_every_event_once_in_order_from_the_store() {
    // Only 4 events kept in memory: most of the catch-up comes from the store.
    let server = Server::start_with(&["--room-history", "4"]);
    let (mut p1, mut p2, m) = started(&server, &[], json!({"game": "pentago"})).await;
    let seen = p1.event("set_started").await["seq"].as_u64().unwrap();
    let last = play(&mut p1, &mut p2, &m.id, &TR_FIRST_WINS[..20]).await;
    assert!(last - seen > 30, "{seen} {last}");

    let mut back = hello(&server, "back", &[]).await;
    back.send(json!({"type": "watch", "match": m.id, "since_seq": seen, "id": "w"}))
        .await;
    let frames = until_reply(&mut back, "w").await;
    assert!(frames.iter().all(|f| f["type"] == "event"), "no state");
    assert_eq!(seqs(&frames), (seen + 1..=last).collect::<Vec<_>>());
    // A v1 client (no `boards`) gets the frames of protocol v1, from memory and store alike.
    assert!(frames.iter().all(|f| f["event"].get("board").is_none()));
    // And the match goes on live after the catch-up.
    p1.accepted(json!({"type": "move", "match": m.id, "move": TR_FIRST_WINS[20]}))
        .await;
    let next = back.event("moved").await;
    assert_eq!(next["seq"].as_u64().unwrap(), last + 1);
}

#[tokio::test]
async fn one_frame_per_action_for_those_who_ask_and_v1_frames_for_the_others() {
    let server = Server::start();
    let (mut p1, mut p2, m) =
        started(&server, &["batch", "boards"], json!({"game": "pente"})).await;
    let mut plain = hello(&server, "plain", &[]).await;
    plain
        .accepted(json!({"type": "watch", "match": m.id}))
        .await;
    plain.clear();
    p2.clear();
    p1.send(json!({"type": "move", "match": m.id, "move": "K10", "id": "k"}))
        .await;
    let batch = p2.find(|f| f["type"] == "events").await;
    assert_eq!(batch["match"], json!(m.id));
    let kinds: Vec<&str> = batch["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["event"]["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["moved", "pressed"]);
    assert_eq!(batch["events"][0]["event"]["board"]["captures"]["first"], 0);
    // The v1 spectator: two frames, numbered the same, and no board.
    let moved = plain.next().await;
    let pressed = plain.next().await;
    assert_eq!(
        moved["event"],
        json!({"kind": "moved", "seat": "p1", "move": "K10"})
    );
    assert_eq!(pressed["event"]["kind"], "pressed");
    assert_eq!(moved["seq"], batch["events"][0]["seq"]);
    assert_eq!(pressed["seq"], batch["events"][1]["seq"]);
    // Unknown extensions are ignored, not refused.
    let mut newer = Client::connect_raw(&server, "newer").await;
    newer
        .send(json!({"type": "hello", "protocol": 1, "features": ["telepathy", "batch"]}))
        .await;
    assert_eq!(newer.next().await["features"], json!(["batch"]));
}

#[tokio::test]
async fn a_match_plays_the_same_on_one_thread_and_on_several() {
    // A thread per core is the default (two on the machines the suite runs on, which every
    // other test uses); one thread, and more threads than cores, are run here.
    for workers in ["1", "3"] {
        let server = Server::start_with(&["--workers", workers]);
        let (mut p1, mut p2, m) =
            started(&server, &[], json!({"game": "pentago", "sets": 1})).await;
        let mut watcher = hello(&server, "watcher", &[]).await;
        watcher
            .accepted(json!({"type": "watch", "match": m.id}))
            .await;
        play(&mut p1, &mut p2, &m.id, &TR_FIRST_WINS).await;
        let ended = watcher.event("round_ended").await;
        assert_eq!(ended["event"]["winner"], "p1", "{workers} workers: {ended}");
        let state = server.match_state(&m.id);
        assert_eq!(state["status"], "finished", "{workers} workers");
        assert_eq!(state["round"]["winner"], "p1", "{workers} workers");
    }
}

/// Waits until `done` holds, or fails after `patience`.
async fn eventually(what: &str, patience: Duration, mut done: impl FnMut() -> bool) {
    let start = Instant::now();
    while !done() {
        assert!(start.elapsed() < patience, "{what} within {patience:?}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

fn metric(server: &Server, name: &str) -> f64 {
    let (_, text) = server.get("/metrics");
    metric_in(&text, name).unwrap_or(0.0)
}

#[tokio::test]
async fn a_finished_room_leaves_memory_and_its_match_stays_readable() {
    let server = Server::start_with(&["--retire-after", "1"]);
    let (mut p1, mut p2, m) = started(&server, &[], json!({"game": "pentago", "sets": 1})).await;
    play(&mut p1, &mut p2, &m.id, &TR_FIRST_WINS).await;
    p1.event("round_ended").await;
    let finished = server.match_state(&m.id);
    assert_eq!(finished["status"], "finished");
    assert_eq!(metric(&server, "hakem_rooms"), 1.0);

    eventually("the room retires", Duration::from_secs(10), || {
        metric(&server, "hakem_rooms") == 0.0
    })
    .await;
    // Read from the store: the same state (nobody at the table any more), the record, a
    // spectator, and no room for any of them.
    let mut stored = server.match_state(&m.id);
    for seat in ["p1", "p2"] {
        assert_eq!(stored["players"][seat]["connected"], false);
        stored["players"][seat]["connected"] = json!(true);
    }
    assert_eq!(stored["round"], finished["round"]);
    assert_eq!(stored["position"], finished["position"]);
    let finished = server.match_state(&m.id);
    let (status, record) = server.get(&format!("/api/matches/{}/record", m.id));
    assert_eq!(status, 200);
    assert!(record.contains("[Result \"1-0\"]"), "{record}");
    let mut late = hello(&server, "late", &[]).await;
    late.send(json!({"type": "watch", "match": m.id, "history": true, "id": "w"}))
        .await;
    let frames = until_reply(&mut late, "w").await;
    assert_eq!(frames[0]["seq"], 0);
    let last = finished["seq"].as_u64().unwrap();
    assert_eq!(seqs(&frames), (1..=last).collect::<Vec<_>>());
    assert_eq!(
        metric(&server, "hakem_rooms"),
        0.0,
        "looking leaves no room"
    );
    // The players left when it retired; a player coming back to it is told where it stands.
    let mut p1 = hello(&server, "p1 again", &[]).await;
    let state = p1
        .request(json!({"type": "join", "match": m.id, "seat_token": m.p1}))
        .await;
    assert_eq!(state["type"], "ack", "{state}");
    // Acting in it starts its room again (an act may change it), and is answered by the round.
    p1.refused(json!({"type": "ready", "match": m.id}), "set_over")
        .await;
    p1.refused(
        json!({"type": "join", "match": m.id, "seat_token": "0".repeat(32)}),
        "unauthorized",
    )
    .await;
}

#[tokio::test]
async fn the_match_list_shows_live_matches_and_pages_through_finished_ones() {
    let server = Server::start();
    let mut organizer = hello(&server, "organizer", &[]).await;
    let mut arbiter_of = Vec::new();
    for i in 0..5 {
        let m = create_match(
            &mut organizer,
            json!({"game": "pentago", "players": {"p1": format!("A{i}"), "p2": "B"}}),
        )
        .await;
        arbiter_of.push(m);
    }
    // Three of them end.
    for m in &arbiter_of[..3] {
        let mut arbiter = hello(&server, "arbiter", &[]).await;
        arbiter
            .accepted(json!({"type": "join", "match": m.id, "arbiter_token": m.arbiter}))
            .await;
        arbiter
            .accepted(json!({"type": "declare", "match": m.id, "scope": "round", "winner": "draw", "reason": "agreed"}))
            .await;
    }
    let live = server.get_json("/api/matches");
    let ids = |page: &Value| -> Vec<String> {
        page["matches"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["match"].as_str().unwrap().to_string())
            .collect()
    };
    let mut expected_live: Vec<String> = arbiter_of[3..].iter().map(|m| m.id.clone()).collect();
    let mut got = ids(&live);
    expected_live.sort();
    got.sort();
    assert_eq!(got, expected_live);
    // Finished, two a page, most recent first, until there is no `next`.
    let mut seen = Vec::new();
    let mut path = "/api/matches?status=finished&limit=2".to_string();
    loop {
        let page = server.get_json(&path);
        assert!(page["matches"].as_array().unwrap().len() <= 2);
        seen.extend(ids(&page));
        match page["next"].as_str() {
            Some(next) => path = format!("/api/matches?status=finished&limit=2&before={next}"),
            None => break,
        }
    }
    let finished: Vec<String> = arbiter_of[..3].iter().rev().map(|m| m.id.clone()).collect();
    let mut seen_sorted = seen.clone();
    seen_sorted.sort();
    let mut finished_sorted = finished.clone();
    finished_sorted.sort();
    assert_eq!(seen_sorted, finished_sorted);
    // The same through the socket.
    let reply = organizer
        .request(json!({"type": "list_matches", "status": "finished", "limit": 500}))
        .await;
    assert_eq!(reply["matches"].as_array().unwrap().len(), 3);
    assert!(reply.get("next").is_none());
    // Bad paging is refused with a reason, not guessed.
    let (status, body) = server.get("/api/matches?status=finished&before=yesterday");
    assert_eq!(status, 400, "{body}");
    let (status, _) = server.get("/api/matches?status=everything");
    assert_eq!(status, 400);
    organizer
        .refused(
            json!({"type": "list_matches", "status": "finished", "before": "x"}),
            "bad_request",
        )
        .await;
}

#[tokio::test]
async fn a_match_nobody_plays_expires() {
    // A thousandth of an hour: 3.6 s.
    let server = Server::start_with(&["--expire-after", "0.001", "--retire-after", "1"]);
    let mut guest = hello(&server, "guest", &[]).await;
    let idle = create_match(&mut guest, json!({"game": "quoridor"})).await;
    let played = create_match(&mut guest, json!({"game": "quoridor"})).await;
    // A player at the table of the second keeps it.
    let mut p1 = hello(&server, "p1", &[]).await;
    p1.accepted(json!({"type": "join", "match": played.id, "seat_token": played.p1}))
        .await;
    let mut watcher = hello(&server, "watcher", &[]).await;
    watcher
        .accepted(json!({"type": "watch", "match": idle.id}))
        .await;
    let expired = watcher.event("expired").await;
    assert_eq!(expired["event"], json!({"kind": "expired"}));
    let state = server.match_state(&idle.id);
    assert_eq!(state["status"], "finished");
    assert_eq!(state["expired"], true);
    assert!(state["round"].is_null());
    assert_eq!(server.match_state(&played.id)["status"], "waiting");
    let page = server.get_json("/api/matches?status=finished");
    assert_eq!(page["matches"][0]["match"], json!(idle.id));
    assert_eq!(page["matches"][0]["expired"], true);
}

#[tokio::test]
async fn a_claim_on_a_retired_match_still_reaches_a_later_arbiter() {
    let server = Server::start_with(&["--retire-after", "1"]);
    let (mut p1, mut p2, m) = started(&server, &[], json!({"game": "pentago", "sets": 1})).await;
    play(&mut p1, &mut p2, &m.id, &TR_FIRST_WINS).await;
    p1.event("round_ended").await;
    // The loser may still claim against the move that ended the set.
    p2.accepted(json!({"type": "claim", "match": m.id, "text": "the last turn was two quadrants"}))
        .await;
    eventually("the room retires", Duration::from_secs(10), || {
        metric(&server, "hakem_rooms") == 0.0
    })
    .await;
    // Read from the store: the arbiter and the players see the claim; a spectator does not.
    for (name, join) in [
        (
            "arbiter",
            json!({"type": "join", "match": m.id, "arbiter_token": m.arbiter}),
        ),
        (
            "arbiter with history",
            json!({"type": "join", "match": m.id, "arbiter_token": m.arbiter, "history": true}),
        ),
        (
            "p1",
            json!({"type": "join", "match": m.id, "seat_token": m.p1}),
        ),
    ] {
        let mut c = hello(&server, name, &[]).await;
        let mut message = join.clone();
        message["id"] = json!("j");
        c.send(message).await;
        let frames = until_reply(&mut c, "j").await;
        let states: Vec<&Value> = frames.iter().filter(|f| f["type"] == "state").collect();
        let state = states.last().expect("a state");
        if name == "arbiter with history" {
            // The first state, then the events: the claim is among them and the list is kept.
            assert_eq!(state["claims"], json!([]), "{name}: {state}");
            assert!(
                frames.iter().any(|f| f["event"]["kind"] == "claim"),
                "{name}"
            );
        } else {
            assert_eq!(
                state["claims"][0]["text"], "the last turn was two quadrants",
                "{name}: {state}"
            );
            assert_eq!(state["claims"][0]["status"], "open");
        }
    }
    let mut spectator = hello(&server, "spectator", &[]).await;
    spectator
        .send(json!({"type": "watch", "match": m.id, "id": "w"}))
        .await;
    let frames = until_reply(&mut spectator, "w").await;
    let state = frames
        .iter()
        .find(|f| f["type"] == "state")
        .expect("a state");
    assert!(state.get("claims").is_none(), "{state}");
}

fn moves_shown(server: &Server, id: &str) -> usize {
    server.match_state(id)["position"]["moves"]
        .as_array()
        .map_or(0, Vec::len)
}

#[tokio::test]
async fn spectators_see_a_delayed_match_late_and_players_live_across_a_restart() {
    let mut server = Server::start();
    let mut organizer = hello(&server, "organizer", &[]).await;
    let refused = organizer
        .refused(
            json!({"type": "create_match", "game": "pentago",
                   "spectator_delay": {"seconds": 99999}}),
            "bad_request",
        )
        .await;
    assert!(
        refused["message"]
            .as_str()
            .unwrap()
            .contains("at most 3600"),
        "{refused}"
    );

    let delay = json!({"game": "pentago", "spectator_delay": {"seconds": 3}});
    let (mut p1, mut p2, m) = started(&server, &[], delay).await;
    let mut watcher = hello(&server, "watcher", &[]).await;
    let frames = {
        watcher
            .send(json!({"type": "watch", "match": m.id, "history": true, "id": "w"}))
            .await;
        until_reply(&mut watcher, "w").await
    };
    let last = play(&mut p1, &mut p2, &m.id, &TR_FIRST_WINS[..4]).await;
    // The players saw every move; the public sees none of them yet, nor does the record.
    assert_eq!(frames[0]["type"], "state");
    assert!(seqs(&frames).iter().all(|&seq| seq < last), "{frames:?}");
    let state = server.match_state(&m.id);
    assert_eq!(state["spectator_delay"]["seconds"], 3, "{state}");
    assert!(state["seq"].as_u64().unwrap() < last, "{state}");
    assert_eq!(moves_shown(&server, &m.id), 0);
    let (_, record) = server.get(&format!("/api/matches/{}/record", m.id));
    assert!(!record.contains(TR_FIRST_WINS[0]), "{record}");

    // Three seconds on, the spectator has been sent the moves, in order, and the public sees them.
    let moved = watcher
        .find(|f| f["event"]["kind"] == "moved" && f["event"]["move"] == TR_FIRST_WINS[3])
        .await;
    assert!(moved["seq"].as_u64().unwrap() <= last);
    watcher.find(|f| f["seq"] == last).await;
    assert_eq!(moves_shown(&server, &m.id), 4);

    // Two moves more, and the server is restarted at once: the public still sees four moves,
    // then six once they are old enough.
    for (i, mv) in TR_FIRST_WINS.iter().enumerate().skip(4).take(2) {
        let mover = if i % 2 == 0 { &mut p1 } else { &mut p2 };
        mover
            .accepted(json!({"type": "move", "match": m.id, "move": mv}))
            .await;
    }
    server.restart();
    assert_eq!(moves_shown(&server, &m.id), 4);
    eventually(
        "the moves made before the restart shown",
        Duration::from_secs(10),
        || moves_shown(&server, &m.id) == 6,
    )
    .await;
}
