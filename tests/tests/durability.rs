//! Nothing lost: the server is killed with SIGKILL and restarted on the same database, on SQLite
//! and (when available) PostgreSQL. Every acknowledged action must be there afterwards, with
//! `seq` continuing, and the match must play on to its end.

use hakem_blackbox::{create_match, Client, Database, Match, Server};
use serde_json::{json, Value};

/// Pentago `tr`, won by the first mover.
const TR_FIRST_WINS: [&str; 31] = [
    "b1sw", "e5sw", "f6sw", "c6nw", "d6nw", "c6nw", "e6sw", "f1nw", "e2nw", "e4ne", "c6nw", "c1sw",
    "f2nw", "e1nw", "a3se", "f3se", "e4se", "b1sw", "c4sw", "b6sw", "d2sw", "f1se", "c3sw", "d4ne",
    "b5nw", "b1se", "b2ne", "f4ne", "c2nw", "b6se", "f2sw",
];

async fn join(server: &Server, name: &str, m: &Match, token: &str) -> Client {
    let mut client = Client::connect(server, name, None).await;
    client
        .accepted(json!({"type": "join", "match": m.id, "seat_token": token}))
        .await;
    client
}

async fn seated(server: &Server) -> (Client, Client, Match) {
    let mut p1 = Client::connect(server, "p1", None).await;
    let m = create_match(
        &mut p1,
        json!({"game": "pentago", "players": {"p1": "Ayşe", "p2": "Bora"}}),
    )
    .await;
    p1.accepted(json!({"type": "join", "match": m.id, "seat_token": m.p1}))
        .await;
    let p2 = join(server, "p2", &m, &m.p2).await;
    (p1, p2, m)
}

async fn start_set(p1: &mut Client, p2: &mut Client, id: &str) {
    p1.accepted(json!({"type": "ready", "match": id})).await;
    p2.accepted(json!({"type": "ready", "match": id})).await;
}

/// Plays `moves` alternately, starting with `first`; returns the seq of the last ack.
async fn play(first: &mut Client, second: &mut Client, id: &str, moves: &[&str]) -> u64 {
    let mut seq = 0;
    for (i, mv) in moves.iter().enumerate() {
        let mover = if i % 2 == 0 {
            &mut *first
        } else {
            &mut *second
        };
        let ack = mover
            .accepted(json!({"type": "move", "match": id, "move": mv}))
            .await;
        seq = ack["seq"].as_u64().unwrap();
    }
    seq
}

fn moves_of(state: &Value) -> Vec<String> {
    state["position"]["moves"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m.as_str().unwrap().to_string())
        .collect()
}

async fn killed_mid_set(database: Database) {
    let mut server = Server::start_on(database.clone(), &[]);
    let (mut p1, mut p2, m) = seated(&server).await;
    start_set(&mut p1, &mut p2, &m.id).await;
    let acked = play(&mut p1, &mut p2, &m.id, &TR_FIRST_WINS[..10]).await;
    let before = server.match_state(&m.id);

    server.restart();

    let state = server.match_state(&m.id);
    assert_eq!(moves_of(&state), TR_FIRST_WINS[..10], "{}", database.kind);
    assert_eq!(state["status"], "playing");
    assert_eq!(state["set"], 1);
    assert_eq!(state["position"]["board"], before["position"]["board"]);
    // Both players dropped with the server: that is recorded, after the acknowledged moves.
    assert!(state["seq"].as_u64().unwrap() >= acked);
    assert_eq!(state["players"]["p1"]["connected"], false);

    let mut p1 = join(&server, "p1 again", &m, &m.p1).await;
    let mut p2 = join(&server, "p2 again", &m, &m.p2).await;
    let seq = play(&mut p1, &mut p2, &m.id, &TR_FIRST_WINS[10..]).await;
    assert!(seq > acked);
    let ended = p2.event("set_ended").await;
    assert_eq!(ended["event"]["winner"], "p1", "{}", database.kind);
    assert_eq!(ended["event"]["reason"], "double_five");

    // The numbering never restarted and has no gap.
    let state = server.match_state(&m.id);
    assert_eq!(
        state["seq"].as_u64().unwrap(),
        ended["seq"].as_u64().unwrap()
    );
}

async fn killed_with_a_move_pending(database: Database) {
    let mut server = Server::start_on(database.clone(), &[]);
    let (mut p1, mut p2, m) = seated(&server).await;
    start_set(&mut p1, &mut p2, &m.id).await;
    play(&mut p1, &mut p2, &m.id, &TR_FIRST_WINS[..4]).await;
    p1.accepted(json!({"type": "place", "match": m.id, "cell": "d6"}))
        .await;

    server.restart();

    let state = server.match_state(&m.id);
    assert_eq!(
        state["position"]["pending"],
        json!({"seat": "p1", "cell": "d6"}),
        "{}",
        database.kind
    );
    assert_eq!(state["position"]["to_move"], "p1");
    let mut p1 = join(&server, "p1 again", &m, &m.p1).await;
    let mut p2 = join(&server, "p2 again", &m, &m.p2).await;
    // The placement is final: p2 still waits, and p1 completes the move with a turn.
    p2.refused(
        json!({"type": "move", "match": m.id, "move": "a1sw"}),
        "press_first",
    )
    .await;
    p1.accepted(json!({"type": "rotate", "match": m.id, "quadrant": "nw", "dir": "cw"}))
        .await;
    let moved = p2.event("moved").await;
    assert_eq!(moved["event"]["move"], "d6nw");
    p1.accepted(json!({"type": "press", "match": m.id})).await;
    p2.accepted(json!({"type": "move", "match": m.id, "move": "a1sw"}))
        .await;
}

async fn killed_between_sets(database: Database) {
    let mut server = Server::start_on(database.clone(), &[]);
    let (mut p1, mut p2, m) = seated(&server).await;
    start_set(&mut p1, &mut p2, &m.id).await;
    play(&mut p1, &mut p2, &m.id, &TR_FIRST_WINS).await;
    p1.event("set_ended").await;
    let arbiter_warning = {
        let mut arbiter = Client::connect(&server, "arbiter", None).await;
        arbiter
            .accepted(json!({"type": "join", "match": m.id, "arbiter_token": m.arbiter}))
            .await;
        arbiter
            .accepted(json!({"type": "warn", "match": m.id, "seat": "p2", "reason": "noise"}))
            .await
    };
    assert_eq!(arbiter_warning["type"], "ack");

    server.restart();

    let state = server.match_state(&m.id);
    assert_eq!(state["status"], "between_sets", "{}", database.kind);
    assert_eq!(state["set_points"], json!({"p1": 1, "p2": 0}));
    assert_eq!(state["warnings"], json!({"p1": 0, "p2": 1}));
    assert_eq!(state["sets"][0]["winner"], "p1");
    let mut p1 = join(&server, "p1 again", &m, &m.p1).await;
    let mut p2 = join(&server, "p2 again", &m, &m.p2).await;
    start_set(&mut p1, &mut p2, &m.id).await;
    let started = p1.event("set_started").await;
    // A client that asked for no extension sees the event of protocol v1, to the letter.
    assert_eq!(
        started["event"],
        json!({"kind": "set_started", "set": 2, "first_mover": "p2"})
    );
    assert_eq!(started["clocks"]["p1_ms"], 900000);
}

async fn clocks_continue_from_the_last_reading(database: Database) {
    let mut server = Server::start_on(database.clone(), &[]);
    let (mut p1, mut p2, m) = seated(&server).await;
    start_set(&mut p1, &mut p2, &m.id).await;
    p1.accepted(json!({"type": "move", "match": m.id, "move": "a1sw"}))
        .await;
    let pressed = p2.event("pressed").await;
    let reading = &pressed["clocks"];
    std::thread::sleep(std::time::Duration::from_millis(300));

    server.restart();
    std::thread::sleep(std::time::Duration::from_millis(300));

    let state = server.get_json(&format!("/api/matches/{}", m.id));
    let clocks = &state["clocks"];
    assert_eq!(clocks["running"], "p2", "{}", database.kind);
    assert_eq!(clocks["p1_ms"], reading["p1_ms"]);
    let p2_before = reading["p2_ms"].as_u64().unwrap();
    let p2_now = clocks["p2_ms"].as_u64().unwrap();
    // p2's clock runs again since the restart, but the 300 ms before the kill and the downtime
    // are charged to nobody.
    assert!(p2_now <= p2_before, "{p2_now} > {p2_before}");
    assert!(p2_before - p2_now < 5_000, "{p2_before} -> {p2_now}");
}

async fn finished_matches_stay_readable(database: Database) {
    let mut server = Server::start_on(database.clone(), &[]);
    let (mut p1, mut p2, m) = seated(&server).await;
    let mut arbiter = Client::connect(&server, "arbiter", None).await;
    arbiter
        .accepted(json!({"type": "join", "match": m.id, "arbiter_token": m.arbiter}))
        .await;
    start_set(&mut p1, &mut p2, &m.id).await;
    arbiter
        .accepted(json!({"type": "declare", "match": m.id, "scope": "round", "winner": "p2", "reason": "forfeit"}))
        .await;
    let before = server.match_state(&m.id);
    assert_eq!(before["status"], "finished");

    server.restart();

    let after = server.match_state(&m.id);
    assert_eq!(after["round"], before["round"], "{}", database.kind);
    assert_eq!(after["seq"], before["seq"], "{before}\n{after}");
}

async fn reconnecting_clients_get_exactly_what_they_missed(database: Database) {
    let server = Server::start_on(database, &[]);
    let (mut p1, mut p2, m) = seated(&server).await;
    let mut spectator = Client::connect(&server, "spectator", None).await;
    spectator
        .accepted(json!({"type": "watch", "match": m.id}))
        .await;
    start_set(&mut p1, &mut p2, &m.id).await;
    let seen = p1.event("set_started").await["seq"].as_u64().unwrap();
    spectator.close().await;

    play(&mut p1, &mut p2, &m.id, &TR_FIRST_WINS[..3]).await;

    let mut spectator = Client::connect(&server, "spectator again", None).await;
    spectator
        .send(json!({"type": "watch", "match": m.id, "since_seq": seen, "id": 1}))
        .await;
    let mut got = Vec::new();
    loop {
        let frame = spectator.next().await;
        assert_ne!(
            frame["type"], "state",
            "missed events, not a state: {frame}"
        );
        if frame["type"] == "ack" {
            break;
        }
        got.push(frame["seq"].as_u64().unwrap());
    }
    let expected: Vec<u64> = (seen + 1..=seen + got.len() as u64).collect();
    assert_eq!(got, expected);
    // moved + pressed per move.
    assert_eq!(got.len(), 6);

    // A client that is ahead (a restarted server with a shorter log) gets a fresh state.
    p2.send(json!({"type": "join", "match": m.id, "seat_token": m.p2, "since_seq": 10_000}))
        .await;
    let state = p2.find(|f| f["type"] == "state").await;
    assert_eq!(state["you"], "p2");
}

#[tokio::test]
async fn a_killed_server_keeps_every_acknowledged_move() {
    for database in Database::all() {
        killed_mid_set(database).await;
    }
}

#[tokio::test]
async fn a_killed_server_keeps_a_placement_that_waits_for_its_turn() {
    for database in Database::all() {
        killed_with_a_move_pending(database).await;
    }
}

#[tokio::test]
async fn a_killed_server_resumes_between_sets() {
    for database in Database::all() {
        killed_between_sets(database).await;
    }
}

#[tokio::test]
async fn after_a_restart_clocks_continue_from_the_last_reading() {
    for database in Database::all() {
        clocks_continue_from_the_last_reading(database).await;
    }
}

#[tokio::test]
async fn finished_matches_stay_readable_after_a_restart() {
    for database in Database::all() {
        finished_matches_stay_readable(database).await;
    }
}

#[tokio::test]
async fn a_rejoin_with_since_seq_gets_exactly_the_missed_events() {
    for database in Database::all() {
        reconnecting_clients_get_exactly_what_they_missed(database).await;
    }
}

/// A second server started on the SQLite file of a running one (by its path or by a link to
/// it) is refused, naming the first, and changes nothing: the first goes on, and once it is
/// gone (killed), a server starts on the file again with every acknowledged move.
#[tokio::test]
async fn a_second_server_on_a_running_servers_sqlite_file_is_refused() {
    let database = Database::sqlite();
    let mut server = Server::start_on(database.clone(), &[]);
    let (mut p1, mut p2, m) = seated(&server).await;
    start_set(&mut p1, &mut p2, &m.id).await;
    play(&mut p1, &mut p2, &m.id, &TR_FIRST_WINS[..4]).await;

    // By the file's own path, and by a link to it.
    let file = database
        .url
        .strip_prefix("sqlite://")
        .expect("a SQLite URL");
    let link = format!("{file}-link.db");
    std::os::unix::fs::symlink(file, &link).unwrap();
    for url in [database.url.clone(), format!("sqlite://{link}")] {
        let mut second = std::process::Command::new(hakem_blackbox::binary("hakem-server"))
            .args([
                "--listen",
                "127.0.0.1:0",
                "--admin-token",
                "organizer-secret",
            ])
            .args(["--database", &url])
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("run a second hakem-server");
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
        while second.try_wait().unwrap().is_none() {
            if std::time::Instant::now() > deadline {
                let _ = second.kill();
                panic!("a second server runs on the first one's SQLite file ({url})");
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        let second = second.wait_with_output().unwrap();
        assert!(!second.status.success());
        let message = String::from_utf8_lossy(&second.stderr);
        assert!(
            message.contains(&format!(
                "in use by another server, process {}",
                server.pid()
            )),
            "{message}"
        );
        assert!(second.stdout.is_empty(), "the second server listened");
    }

    // The first plays on, undisturbed.
    play(&mut p1, &mut p2, &m.id, &TR_FIRST_WINS[4..6]).await;
    assert_eq!(moves_of(&server.match_state(&m.id)), TR_FIRST_WINS[..6]);

    server.restart();
    assert_eq!(moves_of(&server.match_state(&m.id)), TR_FIRST_WINS[..6]);
}
