//! Every fixture reads, and writes back byte for byte.

use std::fs;
use std::path::Path;

use hakem_pairing::{parse_trf, write_trf};

#[test]
fn fixtures_round_trip() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/vectors/swiss");
    let mut count = 0;
    let mut bad = Vec::new();
    for folder in ["dutch2025", "dutch2017", "tiebreaks"] {
        for e in fs::read_dir(root.join(folder)).unwrap() {
            let path = e.unwrap().path();
            if path.extension().and_then(|x| x.to_str()) != Some("trf") {
                continue;
            }
            let text = fs::read_to_string(&path).unwrap();
            let t = parse_trf(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            if write_trf(&t) != text {
                bad.push(path.display().to_string());
            }
            count += 1;
        }
    }
    assert_eq!(count, 467);
    assert!(bad.is_empty(), "not written back identically: {bad:?}");
}

#[test]
fn malformed_input_gives_line_numbers() {
    let text = "012 x\nXXR 5\n001    1      A                                 2000                             1.0    1     2 w 1\n001    2      B                                 1900                             0.0    2     1 q 0\n";
    let e = parse_trf(text).unwrap_err();
    assert_eq!(e.line, 4);
    // An opponent that does not exist.
    let line = "001    1      A                                 2000                             1.0    1     7 w 1";
    let e = parse_trf(&format!("012 y\n{line}\n")).unwrap_err();
    assert_eq!(e.line, 2);
    // Garbage never panics.
    for junk in [
        "001",
        "001 \u{1F642}\u{1F642}",
        "XXC",
        "001    1",
        "\u{0}\u{0}\u{0}",
    ] {
        let _ = parse_trf(junk);
    }
}

/// Mutated reports either fail with an error or pair and rank without panicking.
#[test]
fn mutated_reports_never_panic() {
    use hakem_pairing::{check_rounds, pair_round, standings, Edition, Rules, Tiebreak};
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/vectors/swiss");
    let base = fs::read_to_string(root.join("tiebreaks/tb002_p005_r03.trf")).unwrap();
    let alphabet = b" 0123456789wb-+=UHZFDLW.\n";
    let mut seed: u64 = 12345;
    let mut next = move || {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (seed >> 33) as usize
    };
    let mut parsed = 0;
    for _ in 0..2000 {
        let mut bytes = base.clone().into_bytes();
        for _ in 0..1 + next() % 4 {
            let i = next() % bytes.len();
            bytes[i] = alphabet[next() % alphabet.len()];
        }
        let text = String::from_utf8(bytes).unwrap();
        if let Ok(t) = parse_trf(&text) {
            parsed += 1;
            let _ = pair_round(&t, Rules::Dutch2025);
            let _ = pair_round(&t, Rules::Dutch2017);
            let _ = standings(&t, Edition::E2026, &Tiebreak::DEFAULT_ORDER);
            let _ = check_rounds(&t, Rules::Dutch2025);
        }
    }
    assert!(parsed > 100);
}
