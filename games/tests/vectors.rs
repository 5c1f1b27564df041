//! Runs the public test vectors (copied byte for byte from the project's shared vectors into
//! `tests/vectors/`): perft counts, finished games with results and reasons, illegal moves.

use hakem_games::{AnyPosition, GameKind};

struct Case<'a> {
    line: usize,
    preset: &'a str,
    moves: Vec<&'a str>,
    third: &'a str,
    fourth: &'a str,
}

fn cases(text: &str) -> Vec<Case<'_>> {
    text.lines()
        .enumerate()
        .filter(|(_, line)| !line.is_empty())
        .map(|(i, line)| {
            let fields: Vec<&str> = line.split('\t').collect();
            assert_eq!(fields.len(), 4, "line {}: expected 4 fields", i + 1);
            Case {
                line: i + 1,
                preset: fields[0],
                moves: fields[1].split_whitespace().collect(),
                third: fields[2],
                fourth: fields[3],
            }
        })
        .collect()
}

fn read(game: GameKind, file: &str) -> String {
    let path = format!(
        "{}/tests/vectors/{}/{file}",
        env!("CARGO_MANIFEST_DIR"),
        game.as_str()
    );
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn position_after(game: GameKind, case: &Case<'_>) -> AnyPosition {
    let mut pos = AnyPosition::new(game, Some(case.preset)).expect("known preset");
    for (ply, mv) in case.moves.iter().enumerate() {
        if let Err(e) = pos.play_str(mv) {
            panic!(
                "line {}: move {} ({mv}) refused: {e} [{}]",
                case.line,
                ply + 1,
                e.code()
            );
        }
    }
    pos
}

fn check_perft(game: GameKind) {
    let text = read(game, "perft.tsv");
    let all = cases(&text);
    assert!(!all.is_empty());
    for case in &all {
        let pos = position_after(game, case);
        let depth: u32 = case.third.parse().unwrap();
        let expected: u64 = case.fourth.parse().unwrap();
        assert_eq!(
            pos.perft(depth),
            expected,
            "{game} perft line {}: {} depth {depth}",
            case.line,
            case.preset
        );
    }
}

fn check_results(game: GameKind) {
    let text = read(game, "results.tsv");
    let all = cases(&text);
    assert!(!all.is_empty());
    for case in &all {
        let pos = position_after(game, case);
        match pos.outcome() {
            None => {
                assert_eq!(case.third, "*", "{game} results line {}", case.line);
                assert_eq!(case.fourth, "-", "{game} results line {}", case.line);
            }
            Some(outcome) => {
                assert_eq!(
                    (outcome.result(), outcome.reason.as_str()),
                    (case.third, case.fourth),
                    "{game} results line {}",
                    case.line
                );
                // The game was not over before its last move.
                let mut before = case.moves.clone();
                before.pop();
                let earlier = Case {
                    moves: before,
                    ..*case
                };
                assert_eq!(position_after(game, &earlier).outcome(), None);
            }
        }
    }
}

fn check_illegal(game: GameKind) {
    let text = read(game, "illegal.tsv");
    let all = cases(&text);
    assert!(!all.is_empty());
    for case in &all {
        let mut pos = position_after(game, case);
        let before = pos.clone();
        assert_eq!(
            pos.outcome().is_some(),
            case.fourth == "game_over",
            "{game} illegal line {}",
            case.line
        );
        match pos.play_str(case.third) {
            Ok(_) => panic!(
                "{game} illegal line {}: {} was accepted",
                case.line, case.third
            ),
            Err(e) => assert_eq!(
                e.code(),
                case.fourth,
                "{game} illegal line {}: {} refused as {e}",
                case.line,
                case.third
            ),
        }
        assert_eq!(
            pos, before,
            "{game} illegal line {}: position changed",
            case.line
        );
    }
}

#[test]
fn pentago_perft() {
    check_perft(GameKind::Pentago);
}

#[test]
fn pentago_results() {
    check_results(GameKind::Pentago);
}

#[test]
fn pentago_illegal() {
    check_illegal(GameKind::Pentago);
}

#[test]
fn quoridor_perft() {
    check_perft(GameKind::Quoridor);
}

#[test]
fn quoridor_results() {
    check_results(GameKind::Quoridor);
}

#[test]
fn quoridor_illegal() {
    check_illegal(GameKind::Quoridor);
}

#[test]
fn pente_perft() {
    check_perft(GameKind::Pente);
}

#[test]
fn pente_results() {
    check_results(GameKind::Pente);
}

#[test]
fn pente_illegal() {
    check_illegal(GameKind::Pente);
}
