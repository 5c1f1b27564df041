//! The tie-break fixtures are whole tournaments paired by the reference engine under the 2025
//! rules: the pairing checker must find every one of their rounds in agreement.

use std::fs;
use std::path::Path;

use hakem_pairing::{check_rounds, parse_trf, Rules};

#[test]
fn finished_tournaments_recheck_clean() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/vectors/swiss/tiebreaks");
    let mut rounds = 0;
    let mut bad = Vec::new();
    for e in fs::read_dir(&dir).unwrap() {
        let path = e.unwrap().path();
        if path.extension().and_then(|x| x.to_str()) != Some("trf") {
            continue;
        }
        let t = parse_trf(&fs::read_to_string(&path).unwrap()).unwrap();
        rounds += t.completed_rounds();
        for d in check_rounds(&t, Rules::Dutch2025) {
            bad.push(format!("{} round {}", path.display(), d.round));
        }
    }
    eprintln!("checked {rounds} rounds");
    assert_eq!(rounds, 105);
    assert!(bad.is_empty(), "rounds that differ: {bad:?}");
}
