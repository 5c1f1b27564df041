//! The solver against the shared solve vectors and against a brute-force minimax.

use std::time::{Duration, Instant};

use hakem_engine::pentago::{solve, solve_all, solve_with, Budget, SolveError, SolverTable, Value};
use hakem_engine::Rng;
use hakem_games::pentago::{Move, Position, Rules};
use hakem_games::Game;

struct Case {
    line: usize,
    position: Position,
    value: Value,
    best: Vec<Move>,
}

fn cases() -> Vec<Case> {
    let text = include_str!("../../games/tests/vectors/pentago/solve.tsv");
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let fields: Vec<&str> = line.split('\t').collect();
        assert_eq!(fields.len(), 4, "line {}: {line}", i + 1);
        let rules = Rules::preset(fields[0]).expect("preset");
        let mut position = Position::new(rules);
        for token in fields[1].split_whitespace() {
            position.play_str(token).expect("legal move");
        }
        let value = match fields[2] {
            "win" => Value::Win,
            "draw" => Value::Draw,
            "loss" => Value::Loss,
            other => panic!("line {}: value {other}", i + 1),
        };
        let best = fields[3]
            .split_whitespace()
            .map(|t| Move::parse(t).expect("move"))
            .collect();
        out.push(Case {
            line: i + 1,
            position,
            value,
            best,
        });
    }
    out
}

// The budgets are generous (the hardest line takes about 3 s of CPU): the machine that runs the
// tests may be shared, and a refusal fails the test.
#[test]
fn values_and_best_moves_agree_with_the_vectors() {
    let mut table = SolverTable::new(20);
    let mut worst = Duration::ZERO;
    let cases = cases();
    for case in &cases {
        table.clear();
        let solution = solve_with(
            &case.position,
            Budget::time(Duration::from_secs(300)),
            &mut table,
        )
        .unwrap_or_else(|e| panic!("line {}: {e}", case.line));
        assert_eq!(solution.value, case.value, "line {}", case.line);
        assert!(
            case.best.contains(&solution.best),
            "line {}: {} is not among the best moves",
            case.line,
            solution.best
        );
        worst = worst.max(solution.elapsed);
    }
    eprintln!("{} positions agree; slowest {:?}", cases.len(), worst);
}

#[test]
fn every_best_move_agrees_on_a_sample() {
    let mut table = SolverTable::new(20);
    let cases = cases();
    // Every third line with 22 or more marbles: the full list needs the exact value of every
    // move, and below 22 marbles that costs minutes, not seconds.
    let mut checked = 0;
    for case in cases
        .iter()
        .step_by(3)
        .filter(|c| c.position.marbles() >= 22)
    {
        checked += 1;
        let (value, moves) = solve_all(
            &case.position,
            Budget::time(Duration::from_secs(300)),
            &mut table,
        )
        .unwrap_or_else(|e| panic!("line {}: {e}", case.line));
        assert_eq!(value, case.value, "line {}", case.line);
        assert_eq!(moves, case.best, "line {}", case.line);
    }
    eprintln!("{checked} full move lists agree");
}

/// Plain minimax over every legal move, for positions with few empty cells.
fn brute_force(position: &Position) -> i8 {
    let mut moves = Vec::new();
    position.legal_moves(&mut moves);
    let me = position.to_move();
    let mut best = -1;
    for mv in moves {
        let mut child = *position;
        child.play(mv).expect("legal");
        let v = match child.outcome() {
            Some(o) => match o.winner {
                Some(w) if w == me => 1,
                Some(_) => -1,
                None => 0,
            },
            None => -brute_force(&child),
        };
        best = best.max(v);
        if best == 1 {
            break;
        }
    }
    best
}

fn random_position(rng: &mut Rng, rules: Rules, marbles: u32) -> Option<Position> {
    let mut position = Position::new(rules);
    let mut moves = Vec::new();
    while position.marbles() < marbles {
        moves.clear();
        position.legal_moves(&mut moves);
        let mv = *moves.get(rng.below(moves.len()))?;
        position.play(mv).ok()?;
        if position.outcome().is_some() {
            return None;
        }
    }
    Some(position)
}

#[test]
fn values_agree_with_brute_force_minimax() {
    let mut rng = Rng::new(7);
    let mut checked = [0usize; 3];
    let start = Instant::now();
    for rules in [Rules::tr(), Rules::classic()] {
        let mut per_value = [0usize; 3];
        let mut tries = 0;
        while per_value.iter().sum::<usize>() < 60 && tries < 20_000 {
            tries += 1;
            // Few empty cells (tr 4..5, classic 3..4: eight turns a move), for plain minimax.
            let marbles = if rules == Rules::tr() { 31 } else { 32 } + rng.below(2) as u32;
            let Some(position) = random_position(&mut rng, rules, marbles) else {
                continue;
            };
            let expected = brute_force(&position);
            let slot = (expected + 1) as usize;
            // Random play mostly leaves wins: keep a balance of the three values.
            if per_value[slot] >= 20 {
                continue;
            }
            let solution = solve(&position, Budget::nodes(10_000_000)).expect("solved");
            let got = match solution.value {
                Value::Win => 1,
                Value::Draw => 0,
                Value::Loss => -1,
            };
            assert_eq!(got, expected, "{:?}\n{}", rules, position.board_text());
            // The best move really achieves the value.
            let mut child = position;
            child.play(solution.best).expect("legal best move");
            let achieved = match child.outcome() {
                Some(o) => match o.winner {
                    Some(w) if w == position.to_move() => 1,
                    Some(_) => -1,
                    None => 0,
                },
                None => -brute_force(&child),
            };
            assert_eq!(achieved, expected, "best move {}", solution.best);
            per_value[slot] += 1;
            checked[slot] += 1;
        }
    }
    eprintln!(
        "loss/draw/win checked: {checked:?} in {:?}",
        start.elapsed()
    );
    assert!(checked.iter().all(|&n| n >= 20), "{checked:?}");
}

#[test]
fn refuses_when_the_budget_runs_out() {
    let position = Position::new(Rules::tr());
    match solve(&position, Budget::nodes(5_000)) {
        Err(SolveError::OutOfBudget { .. }) => {}
        other => panic!("expected a refusal, got {other:?}"),
    }
    let mut done = Position::new(Rules::classic());
    for token in [
        "a1sw", "a6sw", "b1sw", "b6sw", "c1sw", "c6sw", "d1sw", "d6sw", "e1sw",
    ] {
        let _ = done.play_str(token);
    }
    let _ = solve(&done, Budget::nodes(1_000));
}
