//! The public pairing vectors: TRF history in, the reference engines' pairing out (pairs,
//! colours and the PAB must agree exactly).
//!
//! Every fixture is paired and the agreement count is printed. Fixtures not in the `DIFFER_*`
//! lists below are asserted to agree; the lists name the fixtures where this engine still gives
//! another pairing than the reference (they are reported, never counted as agreeing), and a
//! listed fixture that agrees fails the test too, so that the lists stay exact.
//! `HAKEM_FIXTURE=name` runs the matching fixtures only and prints both pairings.

use std::fs;
use std::path::Path;

use hakem_pairing::{pair_round_number, parse_trf, Rules};

/// 2025 rules: fixtures where this engine differs from the reference pairing (none: every
/// 2025 fixture must agree).
const DIFFER_2025: &[&str] = &[];

/// 2017 rules: fixtures where this engine differs from the reference pairing (none: every
/// 2017 fixture must agree, the `disputed` ones of index.tsv included).
const DIFFER_2017: &[&str] = &[];

struct Outcome {
    agree: Vec<String>,
    differ: Vec<String>,
}

fn run_folder(folder: &str, rules: Rules) -> Outcome {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/vectors/swiss")
        .join(folder);
    let mut names: Vec<String> = fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().to_string())
        .filter(|n| n.ends_with(".trf"))
        .map(|n| n.trim_end_matches(".trf").to_string())
        .collect();
    names.sort();
    let only = std::env::var("HAKEM_FIXTURE").ok();
    let mut out = Outcome {
        agree: Vec::new(),
        differ: Vec::new(),
    };
    for name in names {
        if let Some(o) = &only {
            if !name.contains(o.as_str()) {
                continue;
            }
        }
        let trf = fs::read_to_string(dir.join(format!("{name}.trf"))).unwrap();
        let want = fs::read_to_string(dir.join(format!("{name}.pairs"))).unwrap();
        let t = parse_trf(&trf).unwrap();
        let start = std::time::Instant::now();
        let round = t.completed_rounds() + 1;
        let got = match pair_round_number(&t, round, rules) {
            Ok(p) => p.to_engine_text(),
            Err(_) => "NO_PAIRING\n".to_string(),
        };
        let el = start.elapsed();
        if el.as_millis() > 2000 {
            eprintln!("slow: {name} {el:?}");
        }
        if got.trim() == want.trim() {
            out.agree.push(name);
        } else {
            if only.is_some() {
                eprintln!("{name}\nwant:\n{want}\ngot:\n{got}");
            }
            out.differ.push(name);
        }
    }
    out
}

fn check(folder: &str, rules: Rules, known: &[&str]) {
    let o = run_folder(folder, rules);
    let total = o.agree.len() + o.differ.len();
    eprintln!(
        "{folder}: {} of {total} agree; differ: {:?}",
        o.agree.len(),
        o.differ
    );
    let newly_fixed: Vec<&String> = o
        .agree
        .iter()
        .filter(|n| known.contains(&n.as_str()))
        .collect();
    let regressions: Vec<&String> = o
        .differ
        .iter()
        .filter(|n| !known.contains(&n.as_str()))
        .collect();
    assert!(
        regressions.is_empty(),
        "{folder}: fixtures that must agree differ: {regressions:?}"
    );
    assert!(
        newly_fixed.is_empty(),
        "{folder}: listed as differing but now agree, remove from the list: {newly_fixed:?}"
    );
}

#[test]
fn dutch2025_vectors() {
    check("dutch2025", Rules::Dutch2025, DIFFER_2025);
}

#[test]
fn dutch2017_vectors() {
    check("dutch2017", Rules::Dutch2017, DIFFER_2017);
}
