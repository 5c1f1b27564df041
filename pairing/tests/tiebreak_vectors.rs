//! The public tie-break vectors, under the 2024 edition and the 2026 amendment.

use std::fs;
use std::path::Path;

use hakem_pairing::{parse_trf, standings, trf::fmt_points, Edition, Tiebreak};

const DE_FIRST: [Tiebreak; 5] = [
    Tiebreak::DirectEncounter,
    Tiebreak::BuchholzCut1,
    Tiebreak::Buchholz,
    Tiebreak::SonnebornBerger,
    Tiebreak::Wins,
];

fn check(edition: Edition, suffix: &str) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/vectors/swiss/tiebreaks");
    let mut names: Vec<String> = fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().to_string())
        .filter(|n| n.ends_with(".trf"))
        .map(|n| n.trim_end_matches(".trf").to_string())
        .collect();
    names.sort();
    assert_eq!(names.len(), 15);
    let mut bad = Vec::new();
    for name in &names {
        let t = parse_trf(&fs::read_to_string(dir.join(format!("{name}.trf"))).unwrap()).unwrap();
        let want = fs::read_to_string(dir.join(format!("{name}.{suffix}"))).unwrap();
        // The vectors compute DE directly after points (their README): DE comes first here.
        let mut st = standings(&t, edition, &DE_FIRST);
        st.sort_by_key(|s| s.id);
        let mut got = String::from("id\tpoints\tBH-C1\tBH\tSB\tDE\tWIN\n");
        for s in &st {
            got.push_str(&format!(
                "{}\t{}\t{}\t{}\t{:.2}\t{}\t{}\n",
                s.id,
                fmt_points(s.points),
                fmt_points(s.bh_c1),
                fmt_points(s.bh),
                s.sb as f64 / 4.0,
                s.de,
                s.wins
            ));
        }
        for (g, w) in got.lines().zip(want.lines()) {
            if g != w {
                bad.push(format!("{name}: want `{w}` got `{g}`"));
            }
        }
    }
    assert!(
        bad.is_empty(),
        "{} lines differ:\n{}",
        bad.len(),
        bad.join("\n")
    );
}

#[test]
fn tiebreaks_2024() {
    check(Edition::E2024, "tiebreaks.tsv");
}

#[test]
fn tiebreaks_2026() {
    check(Edition::E2026, "tiebreaks-2026.tsv");
}
