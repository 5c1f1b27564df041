//! The load tool against a real server and against its bare relay: it plays, measures and
//! reports; nothing here judges speed (docs/performance.md does, with the figures it printed).

use std::process::Command;

use hakem_blackbox::{binary, hakem, Proc, Server};
use serde_json::Value;

fn load(server: &str, extra: &[&str]) -> Value {
    let mut args = vec![
        "load",
        "--server",
        server,
        "--matches",
        "3",
        "--spectators",
        "2",
        "--think",
        "20",
        "--ramp",
        "1",
        "--warmup",
        "0",
        "--duration",
        "3",
        "--json",
    ];
    args.extend_from_slice(extra);
    let output = hakem(&args);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "hakem load failed: {stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stdout}"))
}

fn assert_played(report: &Value) {
    assert!(report["moves"].as_u64().unwrap() > 0, "{report}");
    assert_eq!(report["lost"], 0, "{report}");
    assert_eq!(report["errors"], 0, "{report}");
    assert_eq!(report["connect_failures"], 0, "{report}");
    assert!(report["spectator_frames"].as_u64().unwrap() > 0, "{report}");
    let latency = &report["latency"];
    assert_eq!(latency["count"], report["moves"], "{report}");
    assert!(latency["p50_ms"].as_f64().unwrap() <= latency["p99_ms"].as_f64().unwrap());
    assert!(latency["p99_ms"].as_f64().unwrap() <= latency["max_ms"].as_f64().unwrap());
    // Every match started was created, and its creation timed (one whose start the end of
    // the run cut short was created, not started).
    let creation = &report["match_creation"];
    assert!(
        creation["count"].as_u64().unwrap() >= report["matches_started"].as_u64().unwrap(),
        "{report}"
    );
    assert!(creation["p50_ms"].as_f64().unwrap() <= creation["max_ms"].as_f64().unwrap());
}

#[test]
fn the_load_tool_plays_against_a_server_and_reads_its_process() {
    let server = Server::start();
    let pid = server.pid().to_string();
    let report = load(
        &server.ws_url(),
        &[
            "--token",
            "organizer-secret",
            "--pid",
            &pid,
            "--features",
            "batch,boards",
            "--flag-probes",
            "1",
            "--flag-clock-ms",
            "1000",
        ],
    );
    assert_played(&report);
    assert!(report["matches_started"].as_u64().unwrap() >= 3, "{report}");
    let process = &report["server_process"];
    assert!(process["cpu_percent"].as_f64().unwrap() >= 0.0, "{report}");
    assert!(process["rss_end_mib"].as_f64().unwrap() > 1.0, "{report}");
    // The probe's sets ended on time and were measured.
    assert!(
        report["flag_lateness"]["count"].as_u64().unwrap() >= 1,
        "{report}"
    );
}

#[test]
fn the_load_tool_splits_its_work_over_processes_and_adds_it_up() {
    let server = Server::start();
    let report = load(
        &server.ws_url(),
        &["--token", "organizer-secret", "--processes", "2"],
    );
    assert_played(&report);
}

#[test]
fn the_bare_relay_is_a_baseline_the_tool_can_measure() {
    let mut command = Command::new(binary("hakem"));
    command.args(["relay", "--listen", "127.0.0.1:0"]);
    let mut relay = Proc::spawn("relay", command);
    let line = relay.expect("hakem relay listening on http://");
    let addr = line.trim().rsplit('/').next().unwrap().to_string();
    let report = load(&format!("ws://{addr}/ws"), &["--features", "batch"]);
    assert_played(&report);
}
