//! Black-box tests of `hakem rules`: the real binary against the public vectors.

use std::process::{Command, Output};

fn hakem(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_hakem"))
        .args(args)
        .output()
        .expect("run hakem")
}

fn stdout(out: &Output) -> String {
    String::from_utf8(out.stdout.clone()).expect("utf-8 output")
}

/// Lines of a vector file of the games crate: preset, moves, third, fourth.
fn vectors(game: &str, file: &str) -> Vec<[String; 4]> {
    let path = format!(
        "{}/../games/tests/vectors/{game}/{file}",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{path}: {e}"))
        .lines()
        .map(|line| {
            let f: Vec<&str> = line.split('\t').collect();
            [f[0], f[1], f[2], f[3]].map(String::from)
        })
        .collect()
}

const GAMES: [&str; 3] = ["pentago", "quoridor", "pente"];

#[test]
fn perft_prints_the_count_and_nothing_else() {
    for game in GAMES {
        // The shallow cases of each file keep this quick; the games crate runs them all.
        for [preset, moves, depth, count] in vectors(game, "perft.tsv")
            .into_iter()
            .filter(|v| v[2] != "3")
        {
            let out = hakem(&[
                "rules",
                "perft",
                "--game",
                game,
                "--variant",
                &preset,
                "--moves",
                &moves,
                "--depth",
                &depth,
            ]);
            assert!(out.status.success(), "{game} {moves}: {out:?}");
            assert_eq!(
                stdout(&out),
                format!("{count}\n"),
                "{game} {preset} {moves} {depth}"
            );
        }
    }
}

#[test]
fn replay_json_gives_result_reason_and_plies() {
    for game in GAMES {
        for [preset, moves, result, reason] in vectors(game, "results.tsv") {
            let out = hakem(&[
                "rules",
                "replay",
                "--game",
                game,
                "--variant",
                &preset,
                "--moves",
                &moves,
                "--json",
            ]);
            assert!(out.status.success(), "{game} {moves}: {out:?}");
            let value: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
            let plies = moves.split_whitespace().count();
            let reason = if reason == "-" {
                serde_json::Value::Null
            } else {
                reason.clone().into()
            };
            assert_eq!(
                value,
                serde_json::json!({"result": result, "reason": reason, "plies": plies}),
                "{game} {preset} {moves}"
            );
        }
    }
}

#[test]
fn replay_refuses_illegal_and_malformed_moves_with_status_2() {
    for game in GAMES {
        for [preset, before, bad, why] in vectors(game, "illegal.tsv") {
            let moves = format!("{before} {bad}");
            let out = hakem(&[
                "rules",
                "replay",
                "--game",
                game,
                "--variant",
                &preset,
                "--moves",
                &moves,
                "--json",
            ]);
            assert_eq!(out.status.code(), Some(2), "{game} {moves}");
            let value: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
            let expected_error = if why == "malformed" {
                "bad_notation"
            } else {
                "illegal_move"
            };
            assert_eq!(value["error"], expected_error, "{game} {moves}");
            assert_eq!(value["code"], why.as_str(), "{game} {moves}");
            assert_eq!(value["move"], bad.as_str());
            assert_eq!(value["ply"], before.split_whitespace().count() + 1);
            assert!(value["message"].as_str().is_some_and(|m| !m.is_empty()));
        }
    }
}

#[test]
fn replay_without_json_prints_the_board_and_the_result() {
    let out = hakem(&[
        "rules",
        "replay",
        "--game",
        "pentago",
        "--variant",
        "classic",
        "--moves",
        "c1nw a6se' e6ne f4nw a1se' e6nw f6ne' b4se d1sw' c2se' f3ne' b1se e1se",
    ]);
    assert!(out.status.success());
    let text = stdout(&out);
    assert!(text.contains("a b c   d e f"), "{text}");
    assert!(
        text.contains("1-0 black wins by five after 13 moves"),
        "{text}"
    );
}

#[test]
fn show_prints_a_board_with_coordinates_for_each_game() {
    for (game, moves, marks) in [
        ("pentago", "a1sw", vec![" 6 ", "x"]),
        ("quoridor", "e2 e8 e3h", vec!["a", "i", " 9"]),
        ("pente", "K10 L11", vec!["T", "19", "K"]),
    ] {
        let out = hakem(&["rules", "show", "--game", game, "--moves", moves, "--legal"]);
        assert!(out.status.success(), "{game}: {out:?}");
        let text = stdout(&out);
        for mark in marks {
            assert!(text.contains(mark), "{game}: {mark:?} missing in\n{text}");
        }
        assert!(text.contains("legal moves: "), "{text}");
    }
}

#[test]
fn unknown_game_or_variant_is_a_usage_error() {
    let out = hakem(&["rules", "perft", "--game", "chess", "--depth", "1"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown game"));
    let out = hakem(&[
        "rules",
        "replay",
        "--game",
        "pente",
        "--variant",
        "renju",
        "--json",
    ]);
    assert_eq!(out.status.code(), Some(2));
    let value: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(value["error"], "bad_variant");
}

#[test]
fn solve_gives_the_exact_value_and_a_best_move() {
    // A sample of the solver vectors (the engine crate checks them all).
    for [preset, moves, value, best] in vectors("pentago", "solve.tsv").into_iter().step_by(7) {
        let out = hakem(&[
            "rules",
            "solve",
            "--game",
            "pentago",
            "--variant",
            &preset,
            "--moves",
            &moves,
            "--json",
        ]);
        assert!(out.status.success(), "{moves}: {out:?}");
        let answer: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
        assert_eq!(answer["value"], value.as_str(), "{preset} {moves}");
        let chosen = answer["best"].as_str().unwrap();
        assert!(
            best.split_whitespace().any(|m| m == chosen),
            "{preset} {moves}: {chosen} not in {best}"
        );
        assert!(answer["nodes"].is_u64() && answer["ms"].is_u64());
    }
}

#[test]
fn solve_refuses_rather_than_guesses() {
    // The empty board cannot be solved in a millisecond.
    let out = hakem(&[
        "rules", "solve", "--game", "pentago", "--max-ms", "1", "--json",
    ]);
    assert_eq!(out.status.code(), Some(1));
    let answer: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(answer["error"], "out_of_budget");
    let out = hakem(&["rules", "solve", "--game", "quoridor", "--json"]);
    assert_eq!(out.status.code(), Some(2));
}
