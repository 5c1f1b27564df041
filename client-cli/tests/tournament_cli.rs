//! Black-box tests of `hakem`: `hakem tournament` on the FIDE fixtures, and every kind of command
//! (offline, and live on a real server) with its output closed.

use std::path::PathBuf;
use std::process::{Command, Output};

fn hakem(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_hakem"))
        .args(args)
        .output()
        .expect("run hakem")
}

fn fixture(path: &str) -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../pairing/tests/vectors/swiss")
        .join(path)
        .display()
        .to_string()
}

#[test]
fn pair_prints_the_next_round_in_the_engine_format() {
    let out = hakem(&[
        "tournament",
        "pair",
        "--trf",
        &fixture("dutch2025/t0001_p038_r06.trf"),
    ]);
    assert!(out.status.success(), "{out:?}");
    let expected = std::fs::read_to_string(fixture("dutch2025/t0001_p038_r06.pairs")).unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout), expected);

    let out = hakem(&[
        "tournament",
        "pair",
        "--trf",
        &fixture("dutch2017/t0001_p008_r02.trf"),
        "--rules",
        "dutch2017",
    ]);
    assert!(out.status.success(), "{out:?}");
    let expected = std::fs::read_to_string(fixture("dutch2017/t0001_p008_r02.pairs")).unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout), expected);
}

#[test]
fn check_agrees_with_a_correctly_paired_tournament() {
    let out = hakem(&[
        "tournament",
        "check",
        "--trf",
        &fixture("tiebreaks/tb002_p005_r03.trf"),
    ]);
    assert!(out.status.success(), "{out:?}");
}

#[test]
fn standings_give_points_and_tiebreaks_as_json() {
    let out = hakem(&[
        "tournament",
        "standings",
        "--trf",
        &fixture("tiebreaks/tb002_p005_r03.trf"),
        "--json",
    ]);
    assert!(out.status.success(), "{out:?}");
    let text = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 5);
    assert_eq!(lines[0]["rank"], 1);
    for key in ["BH-C1", "BH", "SB", "DE", "WIN"] {
        assert!(
            lines[0]["tiebreaks"].get(key).is_some(),
            "{key} in {}",
            lines[0]
        );
    }
}

#[test]
fn a_bad_file_is_a_clear_error() {
    let out = hakem(&["tournament", "pair", "--trf", "/nonexistent.trf"]);
    assert_eq!(out.status.code(), Some(2));
}

/// A pipe whose reading end is closed at once: every write to it is a broken pipe.
fn closed_pipe_run(args: &[&str], closed: Closed) -> std::process::Child {
    use std::process::Stdio;
    let mut child = Command::new(env!("CARGO_BIN_EXE_hakem"))
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run hakem");
    match closed {
        Closed::Stdout => drop(child.stdout.take()),
        Closed::Stderr => drop(child.stderr.take()),
    }
    child
}

#[derive(Clone, Copy, Debug)]
enum Closed {
    Stdout,
    Stderr,
}

/// Waits at most `patience` for `child` to end; kills it and fails if it does not.
fn ended_within(
    mut child: std::process::Child,
    patience: std::time::Duration,
    what: &str,
) -> Output {
    let deadline = std::time::Instant::now() + patience;
    while child.try_wait().expect("wait for hakem").is_none() {
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            let out = child.wait_with_output().unwrap();
            panic!(
                "{what} still ran {patience:?} after its output was closed: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    child.wait_with_output().unwrap()
}

/// `hakem tournament standings --trf f | head`: the reader is gone before the command writes.
/// Offline commands, live ones through a real server (which would otherwise follow a match or
/// a tournament to its end unread), and errors said to a closed stderr all end quietly, with
/// the status they would have had.
#[test]
fn commands_end_quietly_when_their_output_is_closed() {
    let patience = std::time::Duration::from_secs(20);
    let runs: [&[&str]; 3] = [
        &[
            "tournament",
            "standings",
            "--trf",
            &fixture("tiebreaks/tb001_p048_r11.trf"),
        ],
        &[
            "tournament",
            "pair",
            "--trf",
            &fixture("dutch2025/t0001_p038_r06.trf"),
        ],
        &["rules", "perft", "--game", "pentago", "--depth", "1"],
    ];
    for args in runs {
        let out = ended_within(closed_pipe_run(args, Closed::Stdout), patience, "offline");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{args:?}: {:?}, {stderr}", out.status);
        assert!(stderr.is_empty(), "{args:?} wrote to stderr: {stderr}");
    }

    // An error to a closed stderr: the command still ends with its own status (a panic would
    // end it with 101).
    let failing: [(&[&str], i32); 2] = [
        (&["tournament", "pair", "--trf", "/nonexistent.trf"], 2),
        (
            &[
                "watch",
                "--server",
                "ws://127.0.0.1:1/ws",
                "--match",
                "m",
                "--reconnect-timeout",
                "0",
            ],
            1,
        ),
    ];
    for (args, code) in failing {
        let out = ended_within(closed_pipe_run(args, Closed::Stderr), patience, "failing");
        assert_eq!(out.status.code(), Some(code), "{args:?}: {:?}", out.status);
    }

    // The live commands, on a real server: a match that has not begun (it would be followed
    // until its round ends) and a tournament between rounds (followed until its last round).
    let Some(server) = LiveServer::start() else {
        return;
    };
    let url = server.url.clone();
    let created = hakem(&["create", "--server", &url, "--json"]);
    assert!(created.status.success(), "{created:?}");
    let created: serde_json::Value = serde_json::from_slice(&created.stdout).unwrap();
    let text = |v: &serde_json::Value| v.as_str().unwrap().to_string();
    let (id, p1, arbiter) = (
        text(&created["match"]),
        text(&created["seat_tokens"]["p1"]),
        text(&created["arbiter_token"]),
    );
    let players =
        std::env::temp_dir().join(format!("hakem-cli-{}-players.csv", std::process::id()));
    std::fs::write(&players, "Aydın,Ali\nBalcı,Bora\n").unwrap();
    let tournament = hakem(&[
        "tournament",
        "create",
        "--server",
        &url,
        "--token",
        ORGANIZER,
        "--name",
        "Kapalı",
        "--rounds",
        "2",
        "--players",
        players.to_str().unwrap(),
        "--json",
    ]);
    assert!(tournament.status.success(), "{tournament:?}");
    let tournament: serde_json::Value = serde_json::from_slice(&tournament.stdout).unwrap();
    let tournament = text(&tournament["tournament"]);
    let live: [&[&str]; 4] = [
        &["watch", "--server", &url, "--match", &id],
        &["play", "--server", &url, "--match", &id, "--token", &p1],
        &[
            "arbiter", "--server", &url, "--match", &id, "--token", &arbiter,
        ],
        &[
            "tournament",
            "watch",
            "--server",
            &url,
            "--tournament",
            &tournament,
        ],
    ];
    for args in live {
        let out = ended_within(closed_pipe_run(args, Closed::Stdout), patience, args[0]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{args:?}: {:?}, {stderr}", out.status);
        assert!(stderr.is_empty(), "{args:?} wrote to stderr: {stderr}");
    }
    assert_eq!(
        server.get_json(&format!("/api/matches/{id}"))["status"],
        "waiting",
        "the match went on without them"
    );
    let _ = std::fs::remove_file(players);
}

const ORGANIZER: &str = "cli-tests-organizer";

/// The real `hakem-server` (built beside `hakem` by `cargo build --workspace`) on a free port,
/// with a database of its own; stopped when dropped.
struct LiveServer {
    child: std::process::Child,
    url: String,
    dir: PathBuf,
}

impl LiveServer {
    /// `None` (with a message) where the server binary is not built, except under `CI=true`.
    fn start() -> Option<LiveServer> {
        use std::io::BufRead;
        let binary = PathBuf::from(env!("CARGO_BIN_EXE_hakem")).with_file_name("hakem-server");
        if !binary.exists() {
            let why = format!(
                "{} is missing: run `cargo build -p hakem-server` for the live commands",
                binary.display()
            );
            assert!(
                std::env::var("CI").as_deref() != Ok("true"),
                "CI=true but {why}"
            );
            eprintln!("skipping the live commands: {why}");
            return None;
        }
        let dir = std::env::temp_dir().join(format!("hakem-cli-server-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let mut child = Command::new(binary)
            .args(["--listen", "127.0.0.1:0", "--admin-token", ORGANIZER])
            .arg("--database")
            .arg(format!("sqlite://{}", dir.join("hakem.db").display()))
            .env("HAKEM_LOG", "error")
            .stdout(std::process::Stdio::piped())
            .spawn()
            .expect("start hakem-server");
        let mut line = String::new();
        std::io::BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .expect("read the ready line");
        let addr = line
            .trim()
            .strip_prefix("hakem-server listening on http://")
            .unwrap_or_else(|| panic!("unexpected first line {line:?}"))
            .to_string();
        Some(LiveServer {
            child,
            url: format!("ws://{addr}/ws"),
            dir,
        })
    }

    /// A JSON document of the server's HTTP API (plain HTTP/1.0 over a socket).
    fn get_json(&self, path: &str) -> serde_json::Value {
        use std::io::{Read, Write};
        let addr = self.url.trim_start_matches("ws://").trim_end_matches("/ws");
        let mut socket = std::net::TcpStream::connect(addr).expect("connect");
        write!(socket, "GET {path} HTTP/1.0\r\nHost: {addr}\r\n\r\n").unwrap();
        let mut response = String::new();
        socket.read_to_string(&mut response).unwrap();
        let body = response.split_once("\r\n\r\n").map_or("", |(_, b)| b);
        serde_json::from_str(body).unwrap_or_else(|e| panic!("{e}: {response}"))
    }
}

impl Drop for LiveServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
