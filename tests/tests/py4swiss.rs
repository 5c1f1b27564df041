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
#[ignore = "py4swiss disagrees on 19 of 1149 rounds (2 of 131 in these 20 tournaments): see pairing/crosscheck/README.md"]
fn dutch2017_agrees_with_py4swiss_on_random_tournaments() {
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
        out.status.success() && summary.contains(" passed, 0 failed"),
        "hakem (dutch2017) and py4swiss differ:\n{stdout}\n{stderr}"
    );
}
