//! The `hakem-server` process: ready line, shutdown on SIGTERM, bad arguments.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

#[test]
fn prints_its_address_when_ready_and_stops_cleanly_on_sigterm() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_hakem-server"))
        .args(["--listen", "127.0.0.1:0", "--admin-token", "t"])
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
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot listen"));
}
