//! Cross-check of `hakem tournament pair --rules dutch2017` against the `py4swiss` package
//! (PyPI) on seeded random tournaments: pairing/crosscheck/py4swiss_crosscheck.py plays them and
//! compares every round from round 2 on (pairs, colours and the bye).

use std::path::PathBuf;
use std::process::Command;

use hakem_blackbox::{binary, python_has};

/// Tournaments played by the test (seed 2017, as the script's default): about 10 s.
const TOURNAMENTS: &str = "20";

fn script() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../pairing/crosscheck/py4swiss_crosscheck.py")
}

#[test]
fn dutch2017_agrees_with_py4swiss_on_every_round_of_random_tournaments() {
    if !python_has("py4swiss.engines", "py4swiss") {
        return;
    }
    let out = Command::new("python3")
        .arg(script())
        .args([
            "--tournaments",
            TOURNAMENTS,
            "--seed",
            "2017",
            "--show",
            "3",
        ])
        .arg("--hakem")
        .arg(binary("hakem"))
        .output()
        .expect("run py4swiss_crosscheck.py");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let summary = stdout.lines().next().unwrap_or_default();
    eprintln!("{summary}");
    assert!(
        summary.contains(" passed, ") && matches!(out.status.code(), Some(0 | 1)),
        "the cross-check did not run:\n{stdout}\n{stderr}"
    );
    // Every round of these tournaments agrees (see pairing/crosscheck/README.md): the rounds
    // that differ (tournament:round) are none.
    let differing: Vec<&str> = stdout
        .lines()
        .find_map(|l| l.strip_prefix("differing rounds: "))
        .map(|l| l.split_whitespace().collect())
        .unwrap_or_default();
    assert!(
        differing.is_empty(),
        "hakem (dutch2017) and py4swiss differ in rounds {differing:?}:\n{stdout}\n{stderr}"
    );
    let passed: u32 = summary
        .split_whitespace()
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or(0);
    assert!(passed >= 100, "too few rounds compared: {summary}");
}
