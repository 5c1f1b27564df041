//! Black-box tests of `hakem tournament`: the real binary on the FIDE fixtures.

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

/// `hakem tournament standings --trf f | head`: the reader is gone before the command writes.
#[test]
fn commands_end_quietly_when_their_output_is_closed() {
    use std::process::Stdio;
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
        // A pipe whose reading end is closed at once: every write to it is a broken pipe.
        let mut child = Command::new(env!("CARGO_BIN_EXE_hakem"))
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("run hakem");
        drop(child.stdout.take());
        let out = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{args:?}: {:?}, {stderr}", out.status);
        assert!(stderr.is_empty(), "{args:?} wrote to stderr: {stderr}");
    }
}
