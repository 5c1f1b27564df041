//! The `hakem-server` process: ready line, shutdown on SIGTERM, bad arguments.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

/// A database URL in a fresh temporary directory.
fn temp_database(name: &str) -> String {
    let dir = std::env::temp_dir().join(format!("hakem-process-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    format!("sqlite://{}", dir.join("hakem.db").display())
}

#[test]
fn prints_its_address_when_ready_and_stops_cleanly_on_sigterm() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_hakem-server"))
        .args(["--listen", "127.0.0.1:0", "--admin-token", "t"])
        .args(["--database", &temp_database("sigterm")])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start");
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let addr = line
        .trim()
        .strip_prefix("hakem-server listening on http://")
        .unwrap_or_else(|| panic!("{line:?}"));
    let port: u16 = addr.rsplit(':').next().unwrap().parse().unwrap();
    assert_ne!(port, 0, "the real port is printed");
    std::net::TcpStream::connect(addr).expect("the server accepts connections");

    let status = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .expect("send SIGTERM");
    assert!(status.success());
    let exit = child.wait().unwrap();
    assert!(exit.success(), "{exit:?}");
}

#[test]
fn an_address_in_use_is_a_clear_error() {
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = taken.local_addr().unwrap().to_string();
    let out = Command::new(env!("CARGO_BIN_EXE_hakem-server"))
        .args(["--listen", &addr, "--admin-token", "t"])
        .args(["--database", &temp_database("in-use")])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot listen"));
}

#[test]
fn a_bad_database_url_is_a_clear_error() {
    let out = Command::new(env!("CARGO_BIN_EXE_hakem-server"))
        .args(["--listen", "127.0.0.1:0", "--database", "mysql://nowhere/x"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("unsupported database URL"));
}

#[test]
fn the_organizer_token_is_made_once_and_kept() {
    let database = temp_database("admin-token");
    let first_line_of_stderr = || {
        let mut child = Command::new(env!("CARGO_BIN_EXE_hakem-server"))
            .args(["--listen", "127.0.0.1:0", "--database", &database])
            .env_remove("HAKEM_ADMIN_TOKEN")
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut ready = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut ready)
            .unwrap();
        child.kill().unwrap();
        let out = child.wait_with_output().unwrap();
        String::from_utf8_lossy(&out.stderr).to_string()
    };
    let first = first_line_of_stderr();
    assert!(first.contains("organizer token"), "{first}");
    let second = first_line_of_stderr();
    assert!(!second.contains("organizer token"), "{second}");
}
