//! `hakem bot` through a real server: whole rounds of every game between two bots, against the
//! Python example bot, across a server restart, in `--listen` service mode for a bot account,
//! and `hakem play --vs-bot`.

use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

use hakem_blackbox::{binary, create_match, python_has, Client, Proc, Relay, Server};
use serde_json::{json, Value};

/// How long a whole round between two quick bots may take on a busy machine.
const ROUND_PATIENCE: Duration = Duration::from_secs(120);

/// `hakem bot` on a seat.
fn bot(name: &str, url: &str, match_id: &str, token: &str, extra: &[&str]) -> Proc {
    let mut command = Command::new(binary("hakem"));
    command
        .args([
            "bot", "--server", url, "--match", match_id, "--token", token,
        ])
        .args(extra);
    Proc::spawn(name, command)
}

/// Waits for a bot to play its round to the end, exit 0 and say nothing on stderr (no move
/// refused, no connection trouble); returns its stdout.
fn round_played(bot: &mut Proc) -> String {
    let (code, stdout, stderr) = bot.finish(ROUND_PATIENCE);
    assert_eq!(code, 0, "{}: {stdout}\n{stderr}", bot.name);
    assert!(stdout.contains("round over: "), "{}: {stdout}", bot.name);
    assert!(stderr.is_empty(), "{}: {stderr}", bot.name);
    stdout
}

/// The finished match: every set played to a result on the board, none lost on time.
fn assert_finished_on_the_board(server: &Server, match_id: &str, what: &str) -> Value {
    let state = server.match_state(match_id);
    assert_eq!(state["status"], "finished", "{what}: {state}");
    let sets = state["sets"].as_array().expect("sets");
    assert!(!sets.is_empty(), "{what}: {state}");
    for set in sets {
        assert_ne!(set["reason"], "time", "{what}: a bot lost on time: {state}");
    }
    state
}

#[tokio::test]
async fn two_bots_play_a_whole_round_of_each_game() {
    let server = Server::start();
    let mut organizer = Client::connect(&server, "organizer", None).await;
    for (i, game) in ["pentago", "quoridor", "pente"].into_iter().enumerate() {
        // One minute per set: the bots must share it out and never run out of it.
        let m = create_match(
            &mut organizer,
            json!({"game": game, "clock": {"initial_ms": 60_000, "increment_ms": 0}}),
        )
        .await;
        let seed = |n: usize| (2 * i + n).to_string();
        let mut a = bot(
            &format!("{game} p1"),
            &server.ws_url(),
            &m.id,
            &m.p1,
            &["--level", "2", "--max-think", "40", "--seed", &seed(0)],
        );
        let mut b = bot(
            &format!("{game} p2"),
            &server.ws_url(),
            &m.id,
            &m.p2,
            &["--engine", "greedy", "--seed", &seed(1)],
        );
        let out_a = round_played(&mut a);
        let out_b = round_played(&mut b);
        let state = assert_finished_on_the_board(&server, &m.id, game);
        // One line per set, the same on both sides.
        let sets = state["sets"].as_array().map_or(0, Vec::len);
        for out in [&out_a, &out_b] {
            let lines = out.lines().filter(|l| l.starts_with("set ")).count();
            assert_eq!(lines, sets, "{game}: {out}");
        }
        let winner = state["round"]["winner"].as_str().unwrap_or("?");
        let said = if winner == "draw" {
            "round over: draw".to_string()
        } else {
            format!("round over: {winner}")
        };
        assert!(out_a.contains(&said), "{game}: {out_a} vs {state}");
    }
}

#[tokio::test]
async fn the_strongest_level_shares_out_a_five_second_clock() {
    let server = Server::start();
    let mut organizer = Client::connect(&server, "organizer", None).await;
    for game in ["pentago", "quoridor", "pente"] {
        // Level 5 would think for seconds a move; with 5 s a set it must budget instead.
        let m = create_match(
            &mut organizer,
            json!({"game": game, "clock": {"initial_ms": 5_000, "increment_ms": 0}}),
        )
        .await;
        let mut strong = bot(
            &format!("{game} level 5"),
            &server.ws_url(),
            &m.id,
            &m.p1,
            &["--level", "5"],
        );
        let mut quick = bot(
            &format!("{game} level 1"),
            &server.ws_url(),
            &m.id,
            &m.p2,
            &["--level", "1"],
        );
        round_played(&mut strong);
        round_played(&mut quick);
        assert_finished_on_the_board(&server, &m.id, game);
    }
}

#[tokio::test]
async fn a_bot_that_cannot_play_exits_1() {
    let server = Server::start();
    let mut organizer = Client::connect(&server, "organizer", None).await;
    let m = create_match(&mut organizer, json!({"game": "pente"})).await;
    let url = server.ws_url();
    for (what, match_id, token, url) in [
        ("a wrong token", m.id.as_str(), "0123", url.as_str()),
        (
            "an unknown match",
            "nosuchmatch",
            m.p1.as_str(),
            url.as_str(),
        ),
        (
            "no server",
            m.id.as_str(),
            m.p1.as_str(),
            "ws://127.0.0.1:9/ws",
        ),
    ] {
        let mut b = bot(what, url, match_id, token, &[]);
        let (code, stdout, stderr) = b.finish(Duration::from_secs(30));
        assert_eq!(code, 1, "{what}: {stdout}\n{stderr}");
        assert!(stderr.starts_with("hakem: "), "{what}: {stderr}");
    }
    // A listening bot whose account token is refused.
    let mut listener = Command::new(binary("hakem"));
    listener.args([
        "bot",
        "--listen",
        "--server",
        &url,
        "--token",
        "not-an-account",
    ]);
    let mut listener = Proc::spawn("listener", listener);
    let (code, stdout, stderr) = listener.finish(Duration::from_secs(30));
    assert_eq!(code, 1, "{stdout}\n{stderr}");
    assert!(stderr.contains("no account"), "{stderr}");
}

#[tokio::test]
async fn a_bot_completes_half_a_move_left_on_its_seat() {
    let server = Server::start();
    let (mut p1, mut p2, m) =
        hakem_blackbox::seated_pair(&server, json!({"game": "pentago", "sets": 1})).await;
    for client in [&mut p1, &mut p2] {
        client.send(json!({"type": "ready", "match": m.id})).await;
    }
    p2.event("set_started").await;
    // The person on p1 places a marble and leaves; the bot takes over the seat.
    p1.accepted(json!({"type": "place", "match": m.id, "cell": "d4"}))
        .await;
    p1.close().await;
    let mut a = bot("bot p1", &server.ws_url(), &m.id, &m.p1, &["--level", "1"]);
    let moved = p2.event("moved").await;
    assert!(
        moved["event"]["move"]
            .as_str()
            .is_some_and(|mv| mv.starts_with("d4")),
        "{moved}"
    );
    p2.event("pressed").await;
    p2.close().await;
    let mut b = bot("bot p2", &server.ws_url(), &m.id, &m.p2, &["--level", "1"]);
    round_played(&mut a);
    round_played(&mut b);
    assert_finished_on_the_board(&server, &m.id, "half a move");
}

#[tokio::test]
async fn a_bot_plays_the_python_example_bot() {
    if !python_has("websockets.asyncio.client", "websockets") {
        return;
    }
    let server = Server::start();
    let mut organizer = Client::connect(&server, "organizer", None).await;
    let m = create_match(&mut organizer, json!({"game": "pentago"})).await;
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../examples/python-bot/bot.py");
    let mut python = Command::new("python3");
    python.arg(script).args([
        "--server",
        &server.ws_url(),
        "--match",
        &m.id,
        "--token",
        &m.p1,
        "--seed",
        "5",
    ]);
    let mut python = Proc::spawn("python bot", python);
    let mut ours = bot(
        "hakem bot",
        &server.ws_url(),
        &m.id,
        &m.p2,
        &["--level", "3", "--max-think", "100"],
    );
    let (code, stdout, stderr) = python.finish(ROUND_PATIENCE);
    assert_eq!(code, 0, "python: {stdout}\n{stderr}");
    assert!(stdout.contains("round over"), "python: {stdout}");
    round_played(&mut ours);
    assert_finished_on_the_board(&server, &m.id, "python vs hakem bot");
}

/// The `state` a seat with `legal_moves` gets when it is its turn.
async fn my_turn(client: &mut Client) -> Value {
    client
        .find(|f| {
            f["type"] == "state"
                && f["status"] == "playing"
                && f["position"]["to_move"] == f["you"]
                && f["position"]["legal_moves"]
                    .as_array()
                    .is_some_and(|l| !l.is_empty())
        })
        .await
}

#[tokio::test]
async fn a_bot_finishes_the_round_after_the_server_restarts_mid_set() {
    let mut server = Server::start();
    let net = Relay::start(&server.addr);
    let mut organizer = Client::connect(&server, "organizer", None).await;
    let m = create_match(
        &mut organizer,
        json!({"game": "pentago", "clock": {"initial_ms": 60_000, "increment_ms": 0}}),
    )
    .await;
    organizer.close().await;
    let mut a = bot(
        "bot p1",
        &net.ws_url(),
        &m.id,
        &m.p1,
        &["--level", "1", "--seed", "3"],
    );
    // The test plays p2 itself, slowly, so that the restart falls in the middle of set 1.
    let mut p2 = Client::connect(&server, "p2", None).await;
    let join = p2
        .request(json!({"type": "join", "match": m.id, "seat_token": m.p2, "legal_moves": true}))
        .await;
    assert_eq!(join["type"], "ack", "{join}");
    p2.send(json!({"type": "ready", "match": m.id})).await;
    for _ in 0..2 {
        let state = my_turn(&mut p2).await;
        let mv = state["position"]["legal_moves"][0].clone();
        p2.send(json!({"type": "move", "match": m.id, "move": mv}))
            .await;
    }
    // The bot has answered the second move too.
    my_turn(&mut p2).await;
    assert_eq!(server.match_state(&m.id)["status"], "playing");

    server.restart();
    net.lead_to(&server.addr);
    // The rest of the round, p2 is a bot too, straight to the new server.
    let mut b = bot(
        "bot p2",
        &server.ws_url(),
        &m.id,
        &m.p2,
        &["--level", "1", "--seed", "4"],
    );
    let (code, stdout, stderr) = a.finish(ROUND_PATIENCE);
    assert_eq!(code, 0, "p1: {stdout}\n{stderr}");
    assert!(stdout.contains("round over: "), "{stdout}");
    assert!(
        stderr.contains("connection to the server lost"),
        "the bot did not notice the restart: {stderr}"
    );
    assert!(stdout.contains("set 1: "), "{stdout}");
    round_played(&mut b);
    let state = assert_finished_on_the_board(&server, &m.id, "restart");
    assert!(
        state["sets"].as_array().is_some_and(|s| s.len() >= 2),
        "{state}"
    );
}

#[tokio::test]
async fn a_listening_bot_plays_every_match_of_its_account() {
    let server = Server::start();
    let mut organizer = Client::connect(&server, "organizer", Some("organizer-secret")).await;
    let reply = organizer
        .request(json!({"type": "create_account", "name": "alphabot", "kind": "bot"}))
        .await;
    assert_eq!(reply["type"], "account_created", "{reply}");
    let token = reply["token"].as_str().expect("token").to_string();
    let seated = json!({"p2": "alphabot"});
    // One match before the bot listens (told at hello), two after (told when created).
    let early = create_match(
        &mut organizer,
        json!({"game": "pentago", "accounts": seated}),
    )
    .await;
    let mut listener = Command::new(binary("hakem"));
    listener.args([
        "bot",
        "--listen",
        "--server",
        &server.ws_url(),
        "--token",
        &token,
    ]);
    listener.args(["--level", "1", "--max-think", "30", "--seed", "9"]);
    let mut listener = Proc::spawn("listener", listener);
    listener.expect_within("listening as alphabot", Duration::from_secs(10));
    let mut matches = vec![early];
    for game in ["quoridor", "pente"] {
        matches.push(create_match(&mut organizer, json!({"game": game, "accounts": seated})).await);
    }
    // Their p1 seats are played by ordinary bots, all at the same time.
    let mut opponents: Vec<Proc> = matches
        .iter()
        .enumerate()
        .map(|(i, m)| {
            let seed = i.to_string();
            bot(
                &format!("p1 of {}", m.id),
                &server.ws_url(),
                &m.id,
                &m.p1,
                &["--level", "1", "--seed", &seed],
            )
        })
        .collect();
    for opponent in &mut opponents {
        round_played(opponent);
    }
    for m in &matches {
        assert_finished_on_the_board(&server, &m.id, "listen");
        listener.rewind();
        listener.expect_within(&format!("[{}] round over: ", m.id), ROUND_PATIENCE);
    }
    // Ctrl-C stops the service cleanly.
    let pid = listener.pid().to_string();
    let status = Command::new("kill")
        .args(["-INT", &pid])
        .status()
        .expect("kill");
    assert!(status.success());
    let (code, stdout, stderr) = listener.finish(Duration::from_secs(10));
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    assert!(stderr.is_empty(), "{stderr}");
}

#[test]
fn play_vs_bot_starts_a_match_against_a_bot_at_once() {
    let server = Server::start();
    for game in ["pentago", "quoridor", "pente"] {
        let mut person = Command::new(binary("hakem"));
        person.args(["play", "--vs-bot", "--game", game, "--level", "1"]);
        person.args(["--server", &server.ws_url()]);
        let mut person = Proc::spawn(&format!("{game} person"), person);
        let patience = Duration::from_secs(20);
        person.expect_within("joined match", patience);
        person.send("ready");
        person.expect_within("set 1 started", patience);
        person.send("resign");
        person.expect_within("won set 1: resignation", patience);
        person.send("ready");
        person.expect_within("set 2 started", patience);
        // The bot moves first in set 2, by itself.
        person.expect_within("p2 moved ", patience);
        person.send("resign");
        person.expect_within("round over: ", patience);
        let (code, stdout, stderr) = person.finish(patience);
        assert_eq!(code, 0, "{game}: {stdout}\n{stderr}");
        assert!(stderr.is_empty(), "{game}: {stderr}");
    }
    // Leaving out the game's options for a seat of an existing match is a usage error.
    let out = Command::new(binary("hakem"))
        .args(["play", "--level", "3", "--match", "m", "--token", "t"])
        .output()
        .expect("run hakem");
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let out = Command::new(binary("hakem"))
        .args(["play"])
        .output()
        .expect("run hakem");
    assert_eq!(out.status.code(), Some(2), "{out:?}");
}
