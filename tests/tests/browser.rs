//! The browser client's tests (web-tests/: Playwright driving Debian's Chromium) against the
//! real server binary, run from the Rust test suite so that `cargo test --workspace` covers them.
//! Without Node.js or Chromium they are skipped with a message; under `CI=true` that fails.

use std::path::{Path, PathBuf};
use std::process::Command;

use hakem_blackbox::{binary, in_ci};

fn have(program: &str) -> bool {
    Command::new(program)
        .arg("--version")
        .output()
        .is_ok_and(|out| out.status.success())
}

#[test]
fn the_browser_tests_pass_in_real_chromium() {
    let chromium = Path::new("/usr/bin/chromium");
    if !(chromium.exists() && have("node") && have("npm")) {
        assert!(
            !in_ci(),
            "CI=true but Chromium (/usr/bin/chromium), node or npm is missing: .ci/run installs them"
        );
        eprintln!("skipping the browser tests: Chromium, node or npm is not installed");
        return;
    }
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../web-tests");
    if !dir.join("node_modules").exists() {
        let status = Command::new("npm")
            .args(["ci", "--no-audit", "--no-fund"])
            .current_dir(&dir)
            .status()
            .expect("run npm ci");
        assert!(status.success(), "npm ci failed in web-tests/");
    }
    let out = Command::new("npm")
        .arg("test")
        .current_dir(&dir)
        .env("HAKEM_SERVER_BIN", binary("hakem-server"))
        .output()
        .expect("run npm test");
    let report = format!(
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    println!("{report}");
    assert!(out.status.success(), "browser tests failed:\n{report}");
}
