//! The `hakem` client, black-box: a real `hakem-server`, and real `hakem create`, `play`,
//! `watch` and `arbiter` processes driven through their stdin and read through their stdout,
//! as a person at a terminal (or a script with pipes) would use them.

use std::process::{Command, Output};
use std::thread;
use std::time::{Duration, Instant};

use hakem_blackbox::{binary, hakem, Proc, Relay, Server};
use serde_json::Value;

/// A running `hakem` process.
type Hakem = Proc;

fn spawn_hakem(name: &str, args: &[&str]) -> Hakem {
    spawn_hakem_with_env(name, args, &[])
}

fn spawn_hakem_with_env(name: &str, args: &[&str], env: &[(&str, &str)]) -> Hakem {
    let mut command = Command::new(binary("hakem"));
    command.args(args).envs(env.iter().copied());
    Proc::spawn(name, command)
}

/// A match made by `hakem create --json`.
struct Created {
    id: String,
    p1: String,
    p2: String,
    arbiter: String,
}

fn create(server: &Server, extra: &[&str]) -> Created {
    let url = server.ws_url();
    let mut args = vec!["create", "--server", url.as_str(), "--json"];
    args.extend_from_slice(extra);
    let out = hakem(&args);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{args:?}: {stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(stdout.lines().count(), 1, "one JSON line: {stdout}");
    let reply: Value = serde_json::from_str(&stdout).expect("JSON");
    assert_eq!(reply["server"], url.as_str());
    let text = |v: &Value| v.as_str().expect("a string").to_string();
    Created {
        id: text(&reply["match"]),
        p1: text(&reply["seat_tokens"]["p1"]),
        p2: text(&reply["seat_tokens"]["p2"]),
        arbiter: text(&reply["arbiter_token"]),
    }
}

fn play(server: &Server, m: &Created, name: &'static str, token: &str) -> Hakem {
    let url = server.ws_url();
    spawn_hakem(
        name,
        &["play", "--server", &url, "--match", &m.id, "--token", token],
    )
}

fn watch(server: &Server, m: &Created) -> Hakem {
    let url = server.ws_url();
    spawn_hakem("watch", &["watch", "--server", &url, "--match", &m.id])
}

fn arbiter(server: &Server, m: &Created) -> Hakem {
    let url = server.ws_url();
    spawn_hakem(
        "arbiter",
        &[
            "arbiter", "--server", &url, "--match", &m.id, "--token", &m.arbiter,
        ],
    )
}

/// Both players type `ready`; the set starts on both terminals.
fn start_set(p1: &mut Hakem, p2: &mut Hakem, set: u8) {
    p1.send("ready");
    p2.expect("p1 is ready");
    p2.send("ready");
    let started = format!("set {set} started");
    p1.expect(&started);
    p2.expect(&started);
}

/// A classic game won by a winning placement: black fills a1..a5 while white builds on the f
/// file, every turn on the empty se quadrant; `a5` ends the set without a turn or a press.
const CLASSIC_PLACEMENT_WIN: [&str; 9] = [
    "a1se", "f6se", "a2se", "f5se", "a3se", "f4se", "a4se", "e6se", "a5",
];

#[test]
fn a_classic_set_played_from_two_terminals_with_a_watcher_and_an_arbiter() {
    let server = Server::start();
    let m = create(
        &server,
        &[
            "--variant",
            "classic",
            "--sets",
            "1",
            "--p1",
            "Ayşe Yılmaz",
            "--p2",
            "Bora Kaya",
        ],
    );
    let mut watcher = watch(&server, &m);
    watcher.expect(&format!("watching match {}", m.id));
    let mut arb = arbiter(&server, &m);
    arb.expect(&format!("arbitrating match {}", m.id));
    let mut p1 = play(&server, &m, "p1", &m.p1);
    p1.expect(&format!("joined match {} as p1 (Ayşe Yılmaz)", m.id));
    let mut p2 = play(&server, &m, "p2", &m.p2);
    p2.expect(&format!("joined match {} as p2 (Bora Kaya)", m.id));

    // Refusals are told in plain words, and the client carries on.
    p1.send("press");
    p1.expect("! press refused: no set is being played");
    p1.send("fly to the moon");
    p1.expect("? unknown command");
    p1.send("fly");
    p1.expect("? unknown command \"fly\"");

    start_set(&mut p1, &mut p2, 1);
    watcher.expect("set 1 started: p1 (Ayşe Yılmaz) moves first and plays black");
    p1.expect("p1 (Ayşe Yılmaz, you) to move: your turn");

    p2.send("f6se");
    p2.expect("! move f6se refused: it is not your turn");

    // A whole move, pressed at once.
    p1.send(CLASSIC_PLACEMENT_WIN[0]);
    p2.expect("p1 moved a1se");
    p2.expect("p1 pressed the clock");
    p2.expect(" 1  x . . | . . .  1");
    p2.expect("p2 (Bora Kaya, you) to move: your turn");

    // The same kind of move in parts: the placement shows on every board before the turn.
    p2.send("place f6");
    for terminal in [&mut p1, &mut watcher] {
        terminal.expect("p2 placed f6");
        terminal.expect(" 6  . . . | . . o  6");
        terminal.expect("p2 placed f6, quadrant not yet turned");
    }
    p2.send("press");
    p2.expect("! press refused: the move is not complete");
    p2.send("rotate se cw");
    p1.expect("p2 turned se clockwise");
    p1.expect("p2 moved f6se");
    p1.expect("p2 (Bora Kaya) to press the clock");
    p2.send("press");
    p1.expect("p2 pressed the clock");

    // A claim reaches the arbiter, and an arbiter who comes later finds it open; upholding it
    // with a warning reaches everyone.
    p1.send("claim Bora pressed with the other hand");
    arb.expect("CLAIM: claim 1 by p1 (Ayşe Yılmaz): Bora pressed with the other hand");
    let mut second = arbiter(&server, &m);
    second.expect(
        "open claim 1 by p1 (Ayşe Yılmaz) about set 1 ply 2: Bora pressed with the other hand",
    );
    second.send("uphold one");
    second.expect("\"one\" is not a claim number");
    arb.send("uphold 1 warn pressed with the other hand");
    for terminal in [&mut p1, &mut p2, &mut watcher, &mut second] {
        terminal.expect("the arbiter upheld claim 1: pressed with the other hand");
        terminal.expect("warning to p2 (Bora Kaya) (1 of 3): pressed with the other hand");
        terminal.expect("warnings p1 0 p2 1 (limit 3)");
    }
    arb.send("reject 1 twice");
    arb.expect("claim 1 has been ruled on already");
    second.send("quit");
    arb.send("adjust p2 +60");
    p2.expect("the arbiter adjusted p2's clock by +1:00");
    p1.expect("the arbiter adjusted p2's clock by +1:00");

    // The clocks on request: p1's is the running one, p2's has the minute added.
    p1.send("time");
    let clocks = p1.expect("clocks now: ");
    assert!(
        clocks.contains("clocks now: p1 (Ayşe Yılmaz) black 14:5")
            && clocks.contains(" running | p2"),
        "{clocks}"
    );
    let (black, white) = clock_readings(&clocks);
    assert!(
        (14 * 60_000 + 50_000..15 * 60_000).contains(&black),
        "{clocks}"
    );
    assert!(
        (15 * 60_000 + 50_000..=16 * 60_000).contains(&white),
        "{clocks}"
    );

    // The rest of the game, each move sent once the opponent has pressed.
    for (i, mv) in CLASSIC_PLACEMENT_WIN.iter().enumerate().skip(2) {
        let (mover, other, seat) = if i % 2 == 0 {
            (&mut p1, &mut p2, "p1")
        } else {
            (&mut p2, &mut p1, "p2")
        };
        mover.send(mv);
        other.expect(&format!("{seat} moved {mv}"));
        if i + 1 < CLASSIC_PLACEMENT_WIN.len() {
            other.expect(&format!("{seat} pressed the clock"));
        }
    }

    // The set and the round end on every terminal, and each client stops by itself.
    let ended = "p1 (Ayşe Yılmaz) won set 1: five in a row";
    let round = "round over: p1 (Ayşe Yılmaz) wins the round on sets, set points p1 1 - 0 p2";
    for terminal in [&mut p1, &mut p2, &mut watcher, &mut arb] {
        terminal.expect(ended);
        terminal.expect(round);
    }
    for row in [
        " 6  . . . | . o o  6",
        " 5  x . . | . . o  5",
        " 4  x . . | . . o  4",
        " 1  x . . | . . .  1",
    ] {
        watcher.expect(row);
    }
    watcher.expect("set score p1 1 - 0 p2");
    assert_eq!(watcher.exit_code(), 0, "{}", watcher.output());
    for terminal in [&mut p1, &mut p2, &mut arb] {
        assert_eq!(terminal.exit_code(), 0, "{}", terminal.output());
    }

    // The spectator saw every move, whichever way it was sent.
    let seen = watcher.output();
    for mv in CLASSIC_PLACEMENT_WIN {
        assert!(seen.contains(&format!(" moved {mv}\n")), "{mv}: {seen}");
    }
    let state = server.match_state(&m.id);
    assert_eq!(state["status"], "finished");
    assert_eq!(state["warnings"]["p2"], 1);
}

/// `clocks now: p1 black 0:02.1 running | p2 white 0:03.0` -> (2100, 3000)
fn clock_readings(line: &str) -> (u64, u64) {
    let ms = |colour: &str| {
        let after = line.split(colour).nth(1).expect("colour in the line");
        let reading = after.split_whitespace().next().expect("a reading");
        let (minutes, seconds) = reading.split_once(':').expect("M:SS");
        let seconds: f64 = seconds.parse().expect("seconds");
        minutes.parse::<u64>().expect("minutes") * 60_000 + (seconds * 1000.0).round() as u64
    };
    (ms(" black "), ms(" white "))
}

#[test]
fn the_running_clock_counts_down_and_the_set_is_lost_on_time() {
    let server = Server::start();
    let m = create(
        &server,
        &[
            "--sets", "1", "--clock", "0:04", "--p1", "Ann", "--p2", "Ben",
        ],
    );
    let mut p1 = play(&server, &m, "p1", &m.p1);
    let mut p2 = play(&server, &m, "p2", &m.p2);
    p1.expect("joined match");
    p2.expect("joined match");
    p1.send("ready");
    p2.expect("p1 is ready");
    // Taken before the clock starts, so `elapsed` below is at least the clock's running time.
    let before_start = Instant::now();
    p2.send("ready");
    p2.expect("set 1 started");
    let pause = Duration::from_millis(1500);
    thread::sleep(pause);

    // No event has come since the set started: the client counts p1's clock down by itself.
    p2.send("time");
    let line = p2.expect("clocks now: ");
    let elapsed = before_start.elapsed().as_millis() as u64;
    let (black, white) = clock_readings(&line);
    // Readings are shown in tenths of a second, rounded down.
    assert!(black <= 4000 - pause.as_millis() as u64, "{line}");
    assert!(black + elapsed + 100 >= 4000, "{line} after {elapsed} ms");
    assert_eq!(white, 4000, "{line}");
    assert!(
        line.starts_with("clocks now: p1 (Ann) black ")
            && line.contains(" running | p2 (Ben) white "),
        "{line}"
    );

    // p1 never moves: the server flags the clock and every terminal says so.
    for terminal in [&mut p1, &mut p2] {
        terminal.expect("p2 (Ben) won set 1: time ran out");
        terminal.expect("round over: p2 (Ben) wins the round on sets, set points p1 0 - 1 p2");
    }
    assert_eq!(p1.exit_code(), 0);
    assert_eq!(p2.exit_code(), 0);
}

#[test]
fn the_arbiter_starts_pauses_and_decides_the_round() {
    let server = Server::start();
    let m = create(
        &server,
        &[
            "--game",
            "pentago",
            "--variant",
            "tr",
            "--p1",
            "Ann",
            "--p2",
            "Ben",
        ],
    );
    let mut watcher = watch(&server, &m);
    watcher.expect("watching match");
    let mut arb = arbiter(&server, &m);
    arb.expect("arbitrating match");
    let mut p1 = play(&server, &m, "p1", &m.p1);
    p1.expect("joined match");
    let mut p2 = play(&server, &m, "p2", &m.p2);
    p2.expect("joined match");

    // A player's stdin may end (a script's input ran out): the client keeps following.
    p2.close_stdin();
    p2.expect("(input closed: following the match until the round ends");

    // Players cannot do the arbiter's work; the arbiter's mistakes are caught locally.
    p1.send("warn p2 noise");
    p1.expect("? unknown command \"warn\"");
    arb.send("adjust p3 +60");
    arb.expect("? \"p3\" is not a seat: p1 or p2");

    // The arbiter starts the set without waiting for `ready`.
    arb.send("start");
    p1.expect("set 1 started: p1 (Ann) moves first and plays black");
    arb.send("pause");
    p1.expect("the arbiter paused the clocks");
    p1.expect("(paused by the arbiter)");
    p1.send("c3sw");
    p1.expect("! move c3sw refused: the clocks are paused");
    arb.send("resume");
    p1.expect("the arbiter resumed the clocks");
    p1.send("c3sw");
    p2.expect("p1 moved c3sw");

    arb.send("declare round p2 p1 left the hall");
    for terminal in [&mut p1, &mut p2, &mut watcher, &mut arb] {
        terminal.expect("the arbiter declared the round won by p2 (Ben): p1 left the hall");
        terminal.expect(
            "round over: p2 (Ben) wins the round by the arbiter's decision, set points p1 0 - 0 p2",
        );
    }
    for terminal in [&mut p1, &mut p2, &mut watcher, &mut arb] {
        assert_eq!(terminal.exit_code(), 0, "{}", terminal.output());
    }

    // A client that joins a finished match shows the result and stops at once.
    let mut late = watch(&server, &m);
    late.expect("round over: p2 (Ben) wins the round");
    assert_eq!(late.exit_code(), 0);
}

#[test]
fn play_and_watch_reconnect_across_a_network_failure_and_a_server_restart() {
    let mut server = Server::start();
    // The players and the watcher reach the server through separate relays, so that the
    // watcher alone can be cut off while the game goes on.
    let players_net = Relay::start(&server.addr);
    let watcher_net = Relay::start(&server.addr);
    let m = create(
        &server,
        &[
            "--variant",
            "classic",
            "--sets",
            "1",
            "--p1",
            "Ann",
            "--p2",
            "Ben",
        ],
    );
    let (purl, wurl) = (players_net.ws_url(), watcher_net.ws_url());
    let mut watcher = spawn_hakem("watch", &["watch", "--server", &wurl, "--match", &m.id]);
    watcher.expect("watching match");
    let mut p1 = spawn_hakem(
        "p1",
        &[
            "play", "--server", &purl, "--match", &m.id, "--token", &m.p1,
        ],
    );
    p1.expect("joined match");
    let mut p2 = spawn_hakem(
        "p2",
        &[
            "play", "--server", &purl, "--match", &m.id, "--token", &m.p2,
        ],
    );
    p2.expect("joined match");
    start_set(&mut p1, &mut p2, 1);
    let play_move = |i: usize, p1: &mut Hakem, p2: &mut Hakem| {
        let mv = CLASSIC_PLACEMENT_WIN[i];
        let (mover, other, seat) = if i % 2 == 0 {
            (p1, p2, "p1")
        } else {
            (p2, p1, "p2")
        };
        mover.send(mv);
        other.expect(&format!("{seat} moved {mv}"));
        if i + 1 < CLASSIC_PLACEMENT_WIN.len() {
            other.expect(&format!("{seat} pressed the clock"));
        }
    };
    for i in 0..3 {
        play_move(i, &mut p1, &mut p2);
    }
    watcher.expect("p1 moved a2se");

    // The watcher's network fails and stays down while two moves are made.
    watcher_net.block(true);
    watcher_net.cut();
    watcher.expect("* connection to the server lost (");
    play_move(3, &mut p1, &mut p2);
    play_move(4, &mut p1, &mut p2);
    watcher_net.block(false);
    // Back, it gets exactly the events it missed, once each, and the right picture.
    watcher.expect("* connection back after ");
    watcher.expect("p2 moved f5se");
    watcher.expect("p1 moved a3se");
    for row in [
        " 6  . . . | . . o  6",
        " 5  . . . | . . o  5",
        " 3  x . . | . . .  3",
    ] {
        watcher.expect(row);
    }

    // The server is killed in the middle of the set; everyone notices.
    server.kill();
    for terminal in [&mut p1, &mut p2, &mut watcher] {
        terminal.expect("* connection to the server lost (");
    }
    // A command typed meanwhile is refused at once, not kept for later.
    p2.send("f4se");
    p2.expect("? move f4se not sent: the connection to the server is lost");
    p2.send("time");
    p2.expect("clocks now (not connected");

    // A new server on the same database: everyone reconnects by themselves.
    server.restart();
    players_net.lead_to(&server.addr);
    watcher_net.lead_to(&server.addr);
    for terminal in [&mut p1, &mut p2, &mut watcher] {
        terminal.expect("* connection back after ");
        terminal.expect(" 5  . . . | . . o  5");
    }
    p2.expect("p2 (Ben, you) to move: your turn");

    // The players finish the set through their stdin; the watcher sees the end.
    for i in 5..CLASSIC_PLACEMENT_WIN.len() {
        play_move(i, &mut p1, &mut p2);
    }
    let ended = "p1 (Ann) won set 1: five in a row";
    let round = "round over: p1 (Ann) wins the round on sets, set points p1 1 - 0 p2";
    for terminal in [&mut p1, &mut p2, &mut watcher] {
        terminal.expect(ended);
        terminal.expect(round);
    }
    for terminal in [&mut watcher, &mut p1, &mut p2] {
        assert_eq!(terminal.exit_code(), 0, "{}", terminal.output());
        let stderr = terminal.stderr();
        assert!(stderr.is_empty(), "{}: {stderr}", terminal.name);
    }
    // Every move exactly once on the watcher's terminal, across both losses.
    let seen = watcher.output();
    for mv in CLASSIC_PLACEMENT_WIN {
        assert_eq!(
            seen.matches(&format!(" moved {mv}\n")).count(),
            1,
            "{mv}: {seen}"
        );
    }
    assert_eq!(
        seen.matches("* connection to the server lost").count(),
        2,
        "{seen}"
    );
    assert_eq!(seen.matches("* connection back after").count(), 2, "{seen}");
    assert_eq!(server.match_state(&m.id)["status"], "finished");
}

#[test]
fn a_client_gives_up_when_the_server_does_not_come_back() {
    let mut server = Server::start();
    let m = create(&server, &[]);
    let url = server.ws_url();
    let mut watcher = spawn_hakem(
        "watch",
        &[
            "watch",
            "--server",
            &url,
            "--match",
            &m.id,
            "--reconnect-timeout",
            "1",
        ],
    );
    watcher.expect("watching match");
    let mut p1 = spawn_hakem_with_env(
        "p1",
        &["play", "--server", &url, "--match", &m.id, "--token", &m.p1],
        &[("HAKEM_RECONNECT_TIMEOUT", "1.5")],
    );
    p1.expect("joined match");
    // Reconnecting turned off: the old behaviour, exit 1 at once.
    let mut arb = spawn_hakem(
        "arbiter",
        &[
            "arbiter",
            "--server",
            &url,
            "--match",
            &m.id,
            "--token",
            &m.arbiter,
            "--reconnect-timeout",
            "0",
        ],
    );
    arb.expect("arbitrating match");

    let killed = Instant::now();
    server.kill();
    p1.expect("* connection to the server lost (");
    p1.send("ready");
    p1.expect("? ready not sent: the connection to the server is lost");
    watcher.expect("* connection to the server lost (");
    for (terminal, limit) in [(&mut watcher, "1.0 s"), (&mut p1, "1.5 s")] {
        assert_eq!(terminal.exit_code(), 1, "{}", terminal.output());
        let stderr = terminal.stderr();
        assert!(
            stderr.starts_with(
                "hakem: lost the connection to the server and could not get it back within "
            ) && stderr.contains(limit)
                && stderr.contains("run the same command again to rejoin"),
            "{stderr}"
        );
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
    }
    assert!(
        killed.elapsed() >= Duration::from_secs(1),
        "{:?}",
        killed.elapsed()
    );
    assert_eq!(arb.exit_code(), 1, "{}", arb.output());
    let stderr = arb.stderr();
    assert!(
        stderr.starts_with("hakem: ") && stderr.contains("run the same command again"),
        "{stderr}"
    );
    assert!(!arb.output().contains("reconnecting"), "{}", arb.output());
}

#[test]
fn usage_errors_exit_2_and_connection_or_server_errors_exit_1() {
    let status = |out: &Output| out.status.code().unwrap_or(-1);
    let stderr = |out: &Output| String::from_utf8_lossy(&out.stderr).to_string();

    // Usage: missing or malformed arguments, checked before any connection.
    for args in [
        &["play", "--token", "t"][..],
        &["create", "--clock", "soon"],
        &["create", "--variant", "fast"],
        &["create", "--clock", "none", "--increment", "5"],
        &["watch", "--match", "m", "--server", "ftp://host"],
        &["watch", "--match", "m", "--reconnect-timeout", "soon"],
        &[
            "play",
            "--match",
            "m",
            "--token",
            "t",
            "--reconnect-timeout",
            "-5",
        ],
    ] {
        let out = hakem(args);
        assert_eq!(status(&out), 2, "{args:?}: {}", stderr(&out));
        assert!(!stderr(&out).is_empty(), "{args:?}");
    }

    // No server there.
    let out = hakem(&["watch", "--match", "m", "--server", "ws://127.0.0.1:1/ws"]);
    assert_eq!(status(&out), 1);
    assert!(
        stderr(&out).contains("cannot connect to ws://127.0.0.1:1/ws"),
        "{}",
        stderr(&out)
    );

    // The server refuses.
    let server = Server::start();
    let url = server.ws_url();
    let out = hakem(&["watch", "--match", "nosuch", "--server", &url]);
    assert_eq!(status(&out), 1);
    assert!(
        stderr(&out).contains("cannot watch match nosuch: there is no such match"),
        "{}",
        stderr(&out)
    );
    let m = create(&server, &[]);
    let out = hakem(&[
        "play", "--match", &m.id, "--token", &m.arbiter, "--server", &url,
    ]);
    assert_eq!(status(&out), 1);
    assert!(
        stderr(&out).contains("the token is wrong: wrong seat token"),
        "{}",
        stderr(&out)
    );
    let out = hakem(&["create", "--sets", "9", "--server", &url]);
    assert_eq!(status(&out), 1);
    assert!(
        stderr(&out).contains("sets must be between 1 and 7"),
        "{}",
        stderr(&out)
    );

    // The readable form of `create` gives the commands to paste, with the server's address.
    let out = hakem(&["create", "--server", &url, "--p1", "Ayşe", "--p2", "Bora"]);
    assert_eq!(status(&out), 0, "{}", stderr(&out));
    let text = String::from_utf8_lossy(&out.stdout);
    let id = text
        .lines()
        .find_map(|l| l.trim().strip_prefix("match id"))
        .map(str::trim)
        .expect("a match id line");
    assert!(
        text.contains(&format!("hakem watch --server {url} --match {id}")),
        "{text}"
    );
    assert_eq!(
        text.matches(&format!("hakem play --server {url} --match {id} --token "))
            .count(),
        2
    );
    assert!(text.contains(&format!(
        "hakem arbiter --server {url} --match {id} --token "
    )));
    assert!(text.contains(" (Ayşe)\n"), "{text}");
}

#[test]
fn chat_a_draw_by_agreement_a_rematch_and_a_players_ratings_from_the_terminal() {
    let server = Server::start();
    let url = server.ws_url();
    let made = hakem(&[
        "account",
        "create",
        "--server",
        &url,
        "--token",
        "organizer-secret",
        "--name",
        "zeynep",
    ]);
    assert!(made.status.success(), "{made:?}");
    let zeynep = String::from_utf8_lossy(&made.stdout).trim().to_string();
    let m = create(
        &server,
        &[
            "--game", "pente", "--sets", "1", "--p1", "Ayşe", "--p2", "Bora",
        ],
    );
    let mut arb = arbiter(&server, &m);
    arb.expect(&format!("arbitrating match {}", m.id));
    let mut fan = spawn_hakem(
        "fan",
        &[
            "watch", "--server", &url, "--match", &m.id, "--token", &zeynep,
        ],
    );
    fan.expect(&format!("watching match {}", m.id));
    let mut p1 = play(&server, &m, "p1", &m.p1);
    p1.expect("joined match");
    let mut p2 = play(&server, &m, "p2", &m.p2);
    p2.expect("joined match");

    // The players' chat: the opponent and the arbiter read it, the spectator does not.
    p1.send("say iyi oyunlar");
    p2.expect("> p1 (Ayşe): iyi oyunlar");
    arb.expect("> p1 (Ayşe) [players]: iyi oyunlar");
    // The spectators' chat: written by a spectator with an account.
    fan.send("say güzel başlangıç");
    arb.expect("> zeynep [spectators]: güzel başlangıç");
    fan.expect("> zeynep: güzel başlangıç");
    // The arbiter mutes a seat; that player is told and refused.
    arb.send("mute p2");
    p2.expect("* the chat is on; you are muted");
    arb.expect("* muted: p2");
    p2.send("say hey");
    p2.expect("! the chat message refused: you are not allowed to do that: you are muted");

    // A draw offered and accepted.
    start_set(&mut p1, &mut p2, 1);
    p1.send("draw");
    p2.expect("p1 (Ayşe) offers a draw of this set");
    p2.send("decline");
    p1.expect("p2 (Bora) declined the draw");
    p1.send("K10");
    p2.expect("p1 moved K10");
    p2.send("draw");
    p1.expect("p2 (Bora) offers a draw of this set");
    p1.send("draw");
    for who in [&mut p1, &mut p2] {
        who.expect("set 1 drawn: agreed by both players");
    }
    let (code, _, _) = p1.finish(Duration::from_secs(10));
    assert_eq!(code, 0);
    let (code, _, _) = p2.finish(Duration::from_secs(10));
    assert_eq!(code, 0);
    // A spectator's chat line is not for the players: theirs never showed it.
    assert!(!p1.output().contains("güzel"), "{}", p1.output());

    // A rematch from both terminals: the same new match, the seats swapped.
    let rematch = |name: &str, token: &str| {
        spawn_hakem(
            name,
            &[
                "lobby", "rematch", "--server", &url, "--match", &m.id, "--token", token, "--json",
            ],
        )
    };
    let mut r1 = rematch("rematch-p1", &m.p1);
    let mut r2 = rematch("rematch-p2", &m.p2);
    let (code1, out1, err1) = r1.finish(Duration::from_secs(20));
    let (code2, out2, err2) = r2.finish(Duration::from_secs(20));
    assert_eq!((code1, code2), (0, 0), "{err1}{err2}");
    // Whichever offered first waited for the other.
    let waited = |err: &str| err.contains("waiting for the opponent");
    assert!(waited(&err1) != waited(&err2), "{err1}|{err2}");
    let seat1: Value = serde_json::from_str(out1.trim()).expect(&out1);
    let seat2: Value = serde_json::from_str(out2.trim()).expect(&out2);
    assert_eq!(seat1["match"], seat2["match"]);
    assert_ne!(seat1["match"], m.id.as_str());
    assert_eq!(
        (&seat1["seat"], &seat2["seat"]),
        (&"p2".into(), &"p1".into())
    );
    let new = server.match_state(seat1["match"].as_str().unwrap());
    assert_eq!(new["players"]["p1"]["name"], "Bora");

    // A player's ratings: none yet; an unknown name is an error.
    let page = hakem(&["player", "--server", &url, "zeynep"]);
    assert!(page.status.success(), "{page:?}");
    let text = String::from_utf8_lossy(&page.stdout);
    assert_eq!(text, "zeynep (player)\nno rated round yet\n");
    let unknown = hakem(&["player", "--server", &url, "nobody"]);
    assert_eq!(unknown.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&unknown.stderr)
            .contains("no account \"nobody\" (unknown_account)"),
        "{unknown:?}"
    );
    arb.close_stdin();
    fan.close_stdin();
}
