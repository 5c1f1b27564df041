//! The match server, black-box: a real `hakem-server` process and real WebSocket clients.

use hakem_blackbox::{create_match, seated_pair, Client, Server};
use serde_json::{json, Value};

// Complete games from the public rules vectors.
/// Pentago `tr`, won by the first mover (double five).
const TR_FIRST_WINS: &str = "b1sw e5sw f6sw c6nw d6nw c6nw e6sw f1nw e2nw e4ne c6nw c1sw f2nw e1nw a3se f3se e4se b1sw c4sw b6sw d2sw f1se c3sw d4ne b5nw b1se b2ne f4ne c2nw b6se f2sw";
/// Pentago `tr`, won by the second mover (five).
const TR_SECOND_WINS: &str = "d1se f5ne c4nw a5se c5nw d6nw e6nw e1se f3nw a3se c4ne b5se e3sw e6se a6nw c5ne c1sw d1sw e2se c2sw f2nw c2ne";
/// Pentago `tr`, drawn on a full board.
const TR_DRAW: &str = "e3se a4nw c1nw a2se a1nw e2nw f3sw e3se e4ne b2ne a2se c4sw e4sw f1sw b3nw d6sw f5nw c3sw f6sw a5ne d3ne d2nw a4nw e5sw f5nw c5ne f4ne f4se b6se d2nw d1sw b1nw a6nw b4nw b5nw c1nw";

/// Both players send `ready`; returns the `set_started` event as p1 saw it.
async fn start_set(p1: &mut Client, p2: &mut Client, m: &str) -> Value {
    p1.accepted(json!({"type": "ready", "match": m})).await;
    p2.accepted(json!({"type": "ready", "match": m})).await;
    let seen = p2.event("set_started").await;
    let started = p1.event("set_started").await;
    assert_eq!(started, seen);
    started
}

/// Plays `moves` as whole pressed moves, `first` moving first; returns the `set_ended` event.
async fn play_set(first: &mut Client, second: &mut Client, m: &str, moves: &str) -> Value {
    let list: Vec<&str> = moves.split_whitespace().collect();
    for (i, mv) in list.iter().enumerate() {
        let mover = if i % 2 == 0 {
            &mut *first
        } else {
            &mut *second
        };
        mover
            .accepted(json!({"type": "move", "match": m, "move": mv}))
            .await;
    }
    let seen = second.event("set_ended").await;
    let ended = first.event("set_ended").await;
    assert_eq!(ended, seen);
    ended
}

fn seat_of_first_mover(set_started: &Value) -> &str {
    set_started["event"]["first_mover"]
        .as_str()
        .expect("first mover")
}

#[tokio::test]
async fn a_pentago_round_won_2_0_skips_the_third_set() {
    let server = Server::start();
    let (mut p1, mut p2, m) = seated_pair(
        &server,
        json!({"game": "pentago", "players": {"p1": "Ayşe Yılmaz", "p2": "Bora Kaya"}}),
    )
    .await;
    let mut spectator = Client::connect(&server, "spectator", None).await;
    let state = spectator
        .request(json!({"type": "watch", "match": m.id}))
        .await;
    assert_eq!(state["type"], "ack");

    // Set 1: p1 moves first and plays black.
    let started = start_set(&mut p1, &mut p2, &m.id).await;
    assert_eq!(started["event"]["set"], 1);
    assert_eq!(seat_of_first_mover(&started), "p1");
    let ended = play_set(&mut p1, &mut p2, &m.id, TR_FIRST_WINS).await;
    assert_eq!(
        ended["event"],
        json!({"kind": "set_ended", "set": 1, "first_mover": "p1", "result": "1-0", "winner": "p1", "reason": "double_five"})
    );

    // Set 2: p2 moves first (black); p1 wins as the second mover.
    let started = start_set(&mut p1, &mut p2, &m.id).await;
    assert_eq!(started["event"]["set"], 2);
    assert_eq!(seat_of_first_mover(&started), "p2");
    let ended = play_set(&mut p2, &mut p1, &m.id, TR_SECOND_WINS).await;
    assert_eq!(
        ended["event"],
        json!({"kind": "set_ended", "set": 2, "first_mover": "p2", "result": "0-1", "winner": "p1", "reason": "five"})
    );
    let round = p1.event("round_ended").await;
    assert_eq!(
        round["event"],
        json!({"kind": "round_ended", "winner": "p1", "set_points": {"p1": 2, "p2": 0}, "points": {"p1": 1, "p2": 0}, "reason": "sets"})
    );

    // No third set.
    p1.refused(json!({"type": "ready", "match": m.id}), "set_over")
        .await;
    let state = server.match_state(&m.id);
    assert_eq!(state["status"], "finished");
    assert_eq!(state["sets"].as_array().unwrap().len(), 2);
    assert_eq!(state["players"]["p1"]["name"], "Ayşe Yılmaz");

    // The spectator saw every event, numbered without gaps.
    let mut seqs = Vec::new();
    loop {
        let frame = spectator.next().await;
        if frame["type"] == "event" {
            seqs.push(frame["seq"].as_u64().unwrap());
            if frame["event"]["kind"] == "round_ended" {
                break;
            }
        }
    }
    let expected: Vec<u64> = (seqs[0]..seqs[0] + seqs.len() as u64).collect();
    assert_eq!(seqs, expected);
    assert_eq!(*seqs.last().unwrap(), state["seq"].as_u64().unwrap());
}

#[tokio::test]
async fn a_round_with_a_drawn_set_is_decided_by_set_points() {
    let server = Server::start();
    let (mut p1, mut p2, m) = seated_pair(&server, json!({"game": "pentago"})).await;

    start_set(&mut p1, &mut p2, &m.id).await;
    let ended = play_set(&mut p1, &mut p2, &m.id, TR_DRAW).await;
    assert_eq!(ended["event"]["result"], "1/2-1/2");
    assert_eq!(ended["event"]["winner"], Value::Null);
    assert_eq!(ended["event"]["reason"], "full_board");

    let started = start_set(&mut p1, &mut p2, &m.id).await;
    assert_eq!(seat_of_first_mover(&started), "p2");
    let ended = play_set(&mut p2, &mut p1, &m.id, TR_SECOND_WINS).await;
    assert_eq!(ended["event"]["winner"], "p1");

    // 1.5 to 0.5: the third set is played.
    let started = start_set(&mut p1, &mut p2, &m.id).await;
    assert_eq!(started["event"]["set"], 3);
    assert_eq!(seat_of_first_mover(&started), "p1");
    let ended = play_set(&mut p1, &mut p2, &m.id, TR_DRAW).await;
    assert_eq!(ended["event"]["result"], "1/2-1/2");
    let round = p2.event("round_ended").await;
    assert_eq!(
        round["event"],
        json!({"kind": "round_ended", "winner": "p1", "set_points": {"p1": 2, "p2": 1}, "points": {"p1": 1, "p2": 0}, "reason": "sets"})
    );
}

#[tokio::test]
async fn a_quoridor_set_and_a_pente_set_play_to_the_end_through_move() {
    let server = Server::start();
    for (game, variant, moves, reason) in [
        (
            "quoridor",
            "standard",
            "e2 e8 e3 a1h e4 c1h e5 g1h e6 a3h e7 h3h e9",
            "goal",
        ),
        (
            "pente",
            "tournament",
            "K10 A1 N10 A3 L10 A5 M10 A7 O10",
            "five",
        ),
    ] {
        let (mut p1, mut p2, m) = seated_pair(
            &server,
            json!({"game": game, "variant": variant, "sets": 1}),
        )
        .await;
        start_set(&mut p1, &mut p2, &m.id).await;
        let ended = play_set(&mut p1, &mut p2, &m.id, moves).await;
        assert_eq!(
            ended["event"],
            json!({"kind": "set_ended", "set": 1, "first_mover": "p1", "result": "1-0", "winner": "p1", "reason": reason}),
            "{game}"
        );
        let round = p2.event("round_ended").await;
        assert_eq!(round["event"]["winner"], "p1", "{game}");
        let state = server.match_state(&m.id);
        assert_eq!(state["game"], game);
        assert_eq!(
            state["position"]["moves"].as_array().unwrap().len(),
            moves.split_whitespace().count()
        );
    }
}

#[tokio::test]
async fn the_turn_passes_only_at_the_press() {
    let server = Server::start();
    let (mut p1, mut p2, m) = seated_pair(&server, json!({"game": "pentago"})).await;
    start_set(&mut p1, &mut p2, &m.id).await;
    let id = m.id.as_str();

    // Pressing before any move.
    p1.refused(json!({"type": "press", "match": id}), "move_incomplete")
        .await;
    p2.refused(
        json!({"type": "place", "match": id, "cell": "a1"}),
        "not_your_turn",
    )
    .await;

    // The placement is broadcast at once.
    p1.accepted(json!({"type": "place", "match": id, "cell": "d4"}))
        .await;
    let placed = p2.event("placed").await;
    assert_eq!(
        placed["event"],
        json!({"kind": "placed", "seat": "p1", "cell": "d4"})
    );
    let state = server.match_state(id);
    assert_eq!(state["position"]["board"]["rows"][2], "...x..");
    assert_eq!(state["position"]["pending"]["cell"], "d4");

    // Half a move: the opponent must wait, the mover cannot press yet.
    p2.refused(
        json!({"type": "place", "match": id, "cell": "a1"}),
        "press_first",
    )
    .await;
    p1.refused(json!({"type": "press", "match": id}), "move_incomplete")
        .await;
    p1.refused(
        json!({"type": "place", "match": id, "cell": "e4"}),
        "illegal_move",
    )
    .await;
    p1.refused(
        json!({"type": "rotate", "match": id, "quadrant": "ne", "dir": "ccw"}),
        "illegal_move",
    )
    .await;

    p1.accepted(json!({"type": "rotate", "match": id, "quadrant": "ne", "dir": "cw"}))
        .await;
    let rotated = p2.event("rotated").await;
    assert_eq!(
        rotated["event"],
        json!({"kind": "rotated", "seat": "p1", "quadrant": "ne", "dir": "cw"})
    );
    let moved = p2.event("moved").await;
    assert_eq!(
        moved["event"],
        json!({"kind": "moved", "seat": "p1", "move": "d4ne"})
    );
    assert_eq!(moved["clocks"]["running"], "p1");

    // Complete but not pressed: still p1's clock, and p2 may not act.
    p2.refused(
        json!({"type": "move", "match": id, "move": "a1sw"}),
        "press_first",
    )
    .await;
    p2.refused(json!({"type": "press", "match": id}), "press_first")
        .await;
    p1.refused(
        json!({"type": "move", "match": id, "move": "a1sw"}),
        "not_your_turn",
    )
    .await;

    p1.accepted(json!({"type": "press", "match": id})).await;
    let pressed = p2.event("pressed").await;
    assert_eq!(pressed["event"], json!({"kind": "pressed", "seat": "p1"}));
    assert_eq!(pressed["clocks"]["running"], "p2");

    // A whole move without a press, then the press.
    p2.accepted(json!({"type": "move", "match": id, "move": "a1sw", "press": false}))
        .await;
    p1.refused(
        json!({"type": "place", "match": id, "cell": "b2"}),
        "press_first",
    )
    .await;
    p2.accepted(json!({"type": "press", "match": id})).await;
    p1.accepted(json!({"type": "place", "match": id, "cell": "b2"}))
        .await;
}

#[tokio::test]
async fn a_player_who_does_not_move_loses_the_set_on_time() {
    let server = Server::start();
    let clock = json!({"initial_ms": 1500, "increment_ms": 0});
    let (mut p1, mut p2, m) =
        seated_pair(&server, json!({"game": "pentago", "clock": clock})).await;
    let started = start_set(&mut p1, &mut p2, &m.id).await;
    assert_eq!(started["clocks"]["p1_ms"], 1500);
    assert_eq!(started["clocks"]["running"], "p1");

    // Nobody sends anything: the server ends the set by itself.
    let ended = p2.event("set_ended").await;
    assert_eq!(
        ended["event"],
        json!({"kind": "set_ended", "set": 1, "first_mover": "p1", "result": "0-1", "winner": "p2", "reason": "time"})
    );
    assert_eq!(ended["clocks"]["p1_ms"], 0);
    assert_eq!(ended["clocks"]["p2_ms"], 1500);
    assert_eq!(ended["clocks"]["running"], Value::Null);

    // The next set starts with fresh clocks, p2 first.
    let started = start_set(&mut p1, &mut p2, &m.id).await;
    assert_eq!(started["event"]["first_mover"], "p2");
    assert_eq!(started["clocks"]["p1_ms"], 1500);
    assert_eq!(started["clocks"]["p2_ms"], 1500);
    assert_eq!(started["clocks"]["running"], "p2");
}

#[tokio::test]
async fn three_warnings_lose_the_round() {
    let server = Server::start();
    let (mut p1, mut p2, m) = seated_pair(&server, json!({"game": "pentago"})).await;
    let mut arbiter = Client::connect(&server, "arbiter", None).await;
    arbiter
        .accepted(json!({"type": "join", "match": m.id, "arbiter_token": m.arbiter}))
        .await;
    start_set(&mut p1, &mut p2, &m.id).await;
    p1.accepted(json!({"type": "move", "match": m.id, "move": "a1sw"}))
        .await;

    for count in 1..=3 {
        arbiter
            .accepted(json!({"type": "warn", "match": m.id, "seat": "p2", "reason": format!("warning {count}")}))
            .await;
        let warning = p2.event("warning").await;
        assert_eq!(
            warning["event"],
            json!({"kind": "warning", "seat": "p2", "count": count, "reason": format!("warning {count}")})
        );
    }
    let round = p1.event("round_ended").await;
    assert_eq!(
        round["event"],
        json!({"kind": "round_ended", "winner": "p1", "set_points": {"p1": 0, "p2": 0}, "points": {"p1": 1, "p2": 0}, "reason": "warnings"})
    );
    assert_eq!(round["clocks"]["running"], Value::Null);
    p2.refused(
        json!({"type": "move", "match": m.id, "move": "b2sw"}),
        "set_over",
    )
    .await;
    let state = server.match_state(&m.id);
    assert_eq!(state["status"], "finished");
    assert_eq!(state["warnings"], json!({"p1": 0, "p2": 3}));
}

#[tokio::test]
async fn the_arbiter_pauses_adjusts_declares_and_hears_claims() {
    let server = Server::start();
    let (mut p1, mut p2, m) = seated_pair(&server, json!({"game": "pentago"})).await;
    let id = m.id.as_str();
    let mut arbiter = Client::connect(&server, "arbiter", None).await;
    arbiter
        .accepted(json!({"type": "join", "match": id, "arbiter_token": m.arbiter}))
        .await;
    // The arbiter can start a set without the players' ready.
    arbiter
        .accepted(json!({"type": "start_set", "match": id}))
        .await;
    p1.event("set_started").await;

    // A claim is possible only after the opponent pressed.
    p2.refused(
        json!({"type": "claim", "match": id, "text": "?"}),
        "forbidden",
    )
    .await;
    p1.accepted(json!({"type": "move", "match": id, "move": "a1sw", "press": false}))
        .await;
    p2.refused(
        json!({"type": "claim", "match": id, "text": "?"}),
        "press_first",
    )
    .await;
    p1.accepted(json!({"type": "press", "match": id})).await;
    p2.accepted(json!({"type": "claim", "match": id, "text": "he touched two marbles"}))
        .await;
    let claim = arbiter.event("claim").await;
    assert_eq!(
        claim["event"],
        json!({"kind": "claim", "seat": "p2", "text": "he touched two marbles", "id": 1, "set": 1, "ply": 1})
    );

    arbiter
        .accepted(json!({"type": "pause", "match": id}))
        .await;
    let paused = p2.event("paused").await;
    assert_eq!(paused["clocks"]["paused"], true);
    p2.refused(
        json!({"type": "move", "match": id, "move": "b2sw"}),
        "paused",
    )
    .await;
    arbiter
        .accepted(json!({"type": "resume", "match": id}))
        .await;
    p2.event("resumed").await;

    arbiter
        .accepted(json!({"type": "adjust_clock", "match": id, "seat": "p1", "delta_ms": 60000}))
        .await;
    let adjusted = p1.event("clock_adjusted").await;
    assert_eq!(
        adjusted["event"],
        json!({"kind": "clock_adjusted", "seat": "p1", "delta_ms": 60000})
    );
    assert!(adjusted["clocks"]["p1_ms"].as_u64().unwrap() > 900_000);

    arbiter
        .accepted(json!({"type": "declare", "match": id, "scope": "set", "winner": "p1", "reason": "illegal claim upheld"}))
        .await;
    let ended = p2.event("set_ended").await;
    assert_eq!(ended["event"]["winner"], "p1");
    assert_eq!(ended["event"]["reason"], "arbiter");

    arbiter
        .accepted(json!({"type": "declare", "match": id, "scope": "round", "winner": "draw", "reason": "agreed"}))
        .await;
    let round = p1.event("round_ended").await;
    assert_eq!(round["event"]["winner"], "draw");
    assert_eq!(round["event"]["points"], json!({"p1": 0.5, "p2": 0.5}));
    assert_eq!(round["event"]["reason"], "arbiter");
}

#[tokio::test]
async fn claims_wait_for_an_absent_arbiter_across_a_restart_and_are_ruled_once() {
    let mut server = Server::start();
    let (mut p1, mut p2, m) = seated_pair(
        &server,
        json!({"game": "pentago", "players": {"p1": "Ayşe", "p2": "Bora"}}),
    )
    .await;
    let id = m.id.as_str();
    start_set(&mut p1, &mut p2, id).await;
    p1.accepted(json!({"type": "move", "match": id, "move": "a1sw"}))
        .await;
    p2.event("pressed").await;
    // No arbiter is watching when the claim is made.
    p2.accepted(json!({"type": "claim", "match": id, "text": "two marbles touched"}))
        .await;
    let open = json!([{"id": 1, "seat": "p2", "text": "two marbles touched", "set": 1, "ply": 1, "status": "open"}]);

    // Spectators and public reads do not see the claims; the arbiter and the players do.
    let mut watcher = Client::connect(&server, "watcher", None).await;
    let state = watcher.request(json!({"type": "watch", "match": id})).await;
    assert_eq!(state["type"], "ack", "{state}");
    let state = watcher.find(|v| v["type"] == "state").await;
    assert!(state.get("claims").is_none(), "{state}");
    assert!(server.match_state(id).get("claims").is_none());

    server.restart();
    let mut arbiter = Client::connect(&server, "arbiter", None).await;
    arbiter
        .accepted(json!({"type": "join", "match": id, "arbiter_token": m.arbiter}))
        .await;
    let state = arbiter.find(|v| v["type"] == "state").await;
    assert_eq!(state["claims"], open, "{state}");
    let mut p1 = Client::connect(&server, "p1", None).await;
    p1.accepted(json!({"type": "join", "match": id, "seat_token": m.p1}))
        .await;
    let state = p1.find(|v| v["type"] == "state").await;
    assert_eq!(state["claims"], open, "{state}");

    // Bad rulings change nothing.
    for (message, code) in [
        (
            json!({"type": "resolve_claim", "match": id, "claim": 2, "upheld": true}),
            "bad_request",
        ),
        (
            json!({"type": "resolve_claim", "match": id, "claim": 1, "upheld": false, "warn": true}),
            "bad_request",
        ),
        (
            json!({"type": "resolve_claim", "match": id, "claim": -1, "upheld": true}),
            "bad_request",
        ),
        (
            json!({"type": "resolve_claim", "match": id, "claim": 1}),
            "bad_request",
        ),
    ] {
        arbiter.refused(message, code).await;
    }
    p1.refused(
        json!({"type": "resolve_claim", "match": id, "claim": 1, "upheld": false}),
        "forbidden",
    )
    .await;

    // Upheld with a warning to the claimant's opponent.
    arbiter
        .accepted(json!({"type": "resolve_claim", "match": id, "claim": 1, "upheld": true, "reason": "seen on the video", "warn": true}))
        .await;
    let resolved = p1.event("claim_resolved").await;
    assert_eq!(
        resolved["event"],
        json!({"kind": "claim_resolved", "claim": 1, "upheld": true, "reason": "seen on the video"})
    );
    let warning = p1.event("warning").await;
    assert_eq!(warning["event"]["seat"], "p1");
    assert_eq!(warning["event"]["count"], 1);
    arbiter
        .refused(
            json!({"type": "resolve_claim", "match": id, "claim": 1, "upheld": false}),
            "bad_request",
        )
        .await;

    // A later arbiter sees the ruling; the record keeps the claim and the ruling.
    let mut later = Client::connect(&server, "later", None).await;
    later
        .accepted(json!({"type": "join", "match": id, "arbiter_token": m.arbiter}))
        .await;
    let state = later.find(|v| v["type"] == "state").await;
    assert_eq!(state["claims"][0]["status"], "upheld");
    assert_eq!(state["claims"][0]["ruling"], "seen on the video");
    assert_eq!(state["warnings"]["p1"], 1);
    let (status, record) = server.get(&format!("/api/matches/{id}/record"));
    assert_eq!(status, 200);
    assert!(
        record.contains("{set 1: claim 1 (ply 1) by p2: two marbles touched}"),
        "{record}"
    );
    assert!(
        record.contains("{set 1: claim 1 upheld: seen on the video}"),
        "{record}"
    );
}

#[tokio::test]
async fn a_resigned_set_goes_to_the_opponent() {
    let server = Server::start();
    let (mut p1, mut p2, m) = seated_pair(&server, json!({"game": "pente"})).await;
    start_set(&mut p1, &mut p2, &m.id).await;
    p2.accepted(json!({"type": "resign", "match": m.id})).await;
    let ended = p1.event("set_ended").await;
    assert_eq!(ended["event"]["winner"], "p1");
    assert_eq!(ended["event"]["reason"], "resign");
}

#[tokio::test]
async fn every_error_code_leaves_the_match_unchanged() {
    let server = Server::start();
    let (mut p1, mut p2, m) = seated_pair(&server, json!({"game": "pentago"})).await;
    let id = m.id.as_str();

    // set_over: no set yet.
    p1.refused(
        json!({"type": "move", "match": id, "move": "a1sw"}),
        "set_over",
    )
    .await;
    start_set(&mut p1, &mut p2, &m.id).await;
    p1.accepted(json!({"type": "move", "match": id, "move": "d4ne"}))
        .await;
    let before = server.match_state(id);

    let mut spectator = Client::connect(&server, "spectator", None).await;
    spectator
        .accepted(json!({"type": "watch", "match": id}))
        .await;
    let mut stranger = Client::connect(&server, "stranger", None).await;
    let mut intruder = Client::connect(&server, "intruder", None).await;

    // Malformed input: the connection stays open.
    p2.send_text("{not json".into()).await;
    let error = p2.find(|f| f["type"] == "error").await;
    assert_eq!(error["code"], "bad_request");
    p2.refused(json!({"type": "teleport", "match": id}), "bad_request")
        .await;
    let missing = p2
        .refused(json!({"type": "place", "match": id}), "bad_request")
        .await;
    assert!(
        missing["message"].as_str().unwrap().contains("cell"),
        "{missing}"
    );
    p2.refused(
        json!({"type": "move", "match": id, "move": "z9xx"}),
        "bad_request",
    )
    .await;
    let pong = p2.request(json!({"type": "ping"})).await;
    assert_eq!(pong["type"], "pong");

    // Oversized frames.
    let big = format!(
        r#"{{"type":"claim","match":"{id}","text":"{}"}}"#,
        "x".repeat(20_000)
    );
    p2.send_text(big).await;
    let error = p2.find(|f| f["type"] == "error").await;
    assert_eq!(error["code"], "too_large");

    // Wrong tokens, strangers, spectators.
    intruder
        .refused(
            json!({"type": "join", "match": id, "seat_token": "0".repeat(32)}),
            "unauthorized",
        )
        .await;
    intruder
        .refused(
            json!({"type": "join", "match": id, "arbiter_token": m.p1}),
            "unauthorized",
        )
        .await;
    stranger
        .refused(
            json!({"type": "move", "match": id, "move": "a1sw"}),
            "forbidden",
        )
        .await;
    spectator
        .refused(
            json!({"type": "move", "match": id, "move": "a1sw"}),
            "forbidden",
        )
        .await;
    spectator
        .refused(
            json!({"type": "warn", "match": id, "seat": "p1"}),
            "forbidden",
        )
        .await;
    p2.refused(
        json!({"type": "warn", "match": id, "seat": "p1"}),
        "forbidden",
    )
    .await;
    p2.refused(
        json!({"type": "watch", "match": "nosuchmatch"}),
        "unknown_match",
    )
    .await;
    p2.refused(
        json!({"type": "move", "match": "nosuchmatch", "move": "a1sw"}),
        "unknown_match",
    )
    .await;

    // Turn order and rules.
    p1.refused(
        json!({"type": "move", "match": id, "move": "a1sw"}),
        "not_your_turn",
    )
    .await;
    let illegal = p2
        .refused(
            json!({"type": "move", "match": id, "move": "d6ne"}),
            "illegal_move",
        )
        .await;
    assert_eq!(illegal["rule"], "occupied", "{illegal}");
    p2.refused(
        json!({"type": "move", "match": id, "move": "a1sw'"}),
        "illegal_move",
    )
    .await;
    p2.refused(json!({"type": "press", "match": id}), "move_incomplete")
        .await;
    p2.refused(
        json!({"type": "rotate", "match": id, "quadrant": "ne", "dir": "cw"}),
        "illegal_move",
    )
    .await;

    assert_eq!(server.match_state(id), before);

    // After all that, play goes on.
    p2.accepted(json!({"type": "move", "match": id, "move": "a1sw"}))
        .await;
}

#[tokio::test]
async fn hello_must_come_first_and_speak_protocol_1() {
    let server = Server::start();
    let mut client = Client::connect_raw(&server, "raw").await;
    client
        .refused(json!({"type": "list_matches"}), "bad_request")
        .await;
    client
        .refused(
            json!({"type": "hello", "protocol": 2}),
            "unsupported_protocol",
        )
        .await;
    client
        .send(json!({"type": "hello", "protocol": 1, "token": "organizer-secret"}))
        .await;
    let welcome = client.next().await;
    assert_eq!(welcome["type"], "welcome");
    assert_eq!(welcome["identity"]["kind"], "organizer");
    let list = client.request(json!({"type": "list_matches"})).await;
    assert_eq!(list["type"], "matches");
}

#[tokio::test]
async fn a_silent_connection_is_closed_after_ten_seconds() {
    let server = Server::start();
    let mut client = Client::connect_raw(&server, "silent").await;
    let frames = client.closed().await;
    assert!(
        frames.iter().any(|f| f["code"] == "unauthorized"),
        "{frames:?}"
    );
}

#[tokio::test]
async fn a_dropped_player_is_announced_and_can_rejoin_the_seat() {
    let server = Server::start();
    let (mut p1, p2, m) = seated_pair(&server, json!({"game": "pentago"})).await;
    p2.close().await;
    let gone = p1.event("player_disconnected").await;
    assert_eq!(gone["event"]["seat"], "p2");
    assert_eq!(
        server.match_state(&m.id)["players"]["p2"]["connected"],
        false
    );

    let mut again = Client::connect(&server, "p2 again", None).await;
    let reply = again
        .request(json!({"type": "join", "match": m.id, "seat_token": m.p2}))
        .await;
    assert_eq!(reply["type"], "ack");
    let state = again.find(|f| f["type"] == "state").await;
    assert_eq!(state["you"], "p2");
    let back = p1.event("player_connected").await;
    assert_eq!(back["event"]["seat"], "p2");
}

#[tokio::test]
async fn matches_are_listed_over_http_and_websocket() {
    let server = Server::start();
    let mut client = Client::connect(&server, "organizer", None).await;
    let m = create_match(&mut client, json!({"game": "quoridor", "clock": null})).await;
    let (status, body) = server.get("/healthz");
    assert_eq!(status, 200, "{body}");
    let list = server.get_json("/api/matches");
    assert!(list["matches"]
        .as_array()
        .unwrap()
        .iter()
        .any(|entry| entry["match"] == m.id.as_str() && entry["game"] == "quoridor"));
    let state = server.match_state(&m.id);
    assert_eq!(state["status"], "waiting");
    assert_eq!(state["clock"], Value::Null);
    let (status, _) = server.get("/api/matches/nosuchmatch");
    assert_eq!(status, 404);
    let bad = client
        .request(json!({"type": "create_match", "game": "chess"}))
        .await;
    assert_eq!(bad["code"], "bad_request");
}

#[tokio::test]
async fn one_connection_can_hold_several_matches() {
    let server = Server::start();
    let mut organizer = Client::connect(&server, "organizer", None).await;
    let a = create_match(&mut organizer, json!({"game": "pente"})).await;
    let b = create_match(&mut organizer, json!({"game": "quoridor"})).await;
    // One client sits at p1 in both matches, another at p2 in both.
    let mut x = Client::connect(&server, "x", None).await;
    let mut y = Client::connect(&server, "y", None).await;
    for (m, token_x, token_y) in [(&a, &a.p1, &a.p2), (&b, &b.p1, &b.p2)] {
        x.accepted(json!({"type": "join", "match": m.id, "seat_token": token_x}))
            .await;
        y.accepted(json!({"type": "join", "match": m.id, "seat_token": token_y}))
            .await;
        x.accepted(json!({"type": "ready", "match": m.id})).await;
        y.accepted(json!({"type": "ready", "match": m.id})).await;
    }
    x.accepted(json!({"type": "move", "match": a.id, "move": "K10"}))
        .await;
    x.accepted(json!({"type": "move", "match": b.id, "move": "e2"}))
        .await;
    let pente = y
        .find(|f| {
            f["type"] == "event" && f["event"]["kind"] == "moved" && f["match"] == a.id.as_str()
        })
        .await;
    assert_eq!(pente["event"]["move"], "K10");
    let quoridor = y
        .find(|f| {
            f["type"] == "event" && f["event"]["kind"] == "moved" && f["match"] == b.id.as_str()
        })
        .await;
    assert_eq!(quoridor["event"]["move"], "e2");
    // A move is checked against its own match's rules.
    y.refused(
        json!({"type": "move", "match": a.id, "move": "e8h"}),
        "bad_request",
    )
    .await;
    y.accepted(json!({"type": "move", "match": b.id, "move": "e8h"}))
        .await;
}
