//! One test per Pentago rule of the rules document (section 1), named after the rule, and
//! property tests of the engine.

use hakem_games::pentago::{Cell, Direction, Move, Position, Quadrant, Rules, Turn};
use hakem_games::{perft, Game, MoveError, Outcome, Reason, Side};
use proptest::prelude::*;

fn cells(names: &str) -> Vec<Cell> {
    names
        .split_whitespace()
        .map(|name| Move::parse(name).expect("cell name").cell)
        .collect()
}

fn position(rules: Rules, black: &str, white: &str) -> Position {
    Position::from_cells(rules, &cells(black), &cells(white)).expect("valid position")
}

fn play(pos: &mut Position, text: &str) -> Result<(), MoveError> {
    pos.play_str(text).map(|_| ())
}

fn stone(pos: &Position, name: &str) -> Option<Side> {
    pos.stone_at(cells(name)[0])
}

#[test]
fn black_moves_first_and_sides_alternate() {
    let mut pos = Position::new(Rules::tr());
    assert_eq!(pos.to_move(), Side::First);
    play(&mut pos, "a1sw").unwrap();
    assert_eq!(pos.to_move(), Side::Second);
    assert_eq!(stone(&pos, "a3"), Some(Side::First));
    play(&mut pos, "f6ne").unwrap();
    assert_eq!(pos.to_move(), Side::First);
}

#[test]
fn clockwise_turn_is_seen_with_rank_six_at_the_top() {
    // a1sw leaves the marble on a3, a1sw' on c1, b1sw on a2.
    for (mv, lands) in [("a1sw", "a3"), ("a1sw'", "c1"), ("b1sw", "a2")] {
        let mut pos = Position::new(Rules::classic());
        play(&mut pos, mv).unwrap();
        assert_eq!(stone(&pos, lands), Some(Side::First), "{mv}");
    }
}

#[test]
fn tr_turns_clockwise_only() {
    let mut pos = Position::new(Rules::tr());
    assert_eq!(play(&mut pos, "a1sw'"), Err(MoveError::DirectionNotAllowed));
    assert_eq!(pos, Position::new(Rules::tr()));
    play(&mut pos, "a1sw").unwrap();
}

#[test]
fn classic_turns_either_way() {
    let mut pos = Position::new(Rules::classic());
    play(&mut pos, "a1sw'").unwrap();
    play(&mut pos, "f6ne").unwrap();
}

#[test]
fn tr_empty_quadrant_may_not_be_turned() {
    let mut pos = Position::new(Rules::tr());
    assert_eq!(play(&mut pos, "a1ne"), Err(MoveError::EmptyQuadrant));
    // The quadrant of the placed marble itself is not empty after the placement.
    play(&mut pos, "d4ne").unwrap();
}

#[test]
fn classic_empty_quadrant_may_be_turned() {
    let mut pos = Position::new(Rules::classic());
    play(&mut pos, "a1ne").unwrap();
    assert_eq!(stone(&pos, "a1"), Some(Side::First));
}

#[test]
fn occupied_cell_is_refused_and_nothing_changes() {
    let mut pos = Position::new(Rules::tr());
    play(&mut pos, "b2sw").unwrap();
    let before = pos;
    assert_eq!(play(&mut pos, "b2sw"), Err(MoveError::Occupied));
    assert_eq!(pos, before);
}

#[test]
fn tr_every_move_includes_a_turn() {
    let mut pos = Position::new(Rules::tr());
    assert_eq!(play(&mut pos, "d4"), Err(MoveError::RotationRequired));
}

#[test]
fn tr_placement_five_is_judged_after_the_turn() {
    // Black's e1 makes a1..e1, but turning se carries d1 and e1 away: play goes on.
    let mut pos = position(Rules::tr(), "a1 b1 c1 d1", "a6 c6 e6 f4");
    play(&mut pos, "e1se").unwrap();
    assert_eq!(pos.outcome(), None);
    assert!(!pos.has_five(Side::First));
    assert_eq!(stone(&pos, "d3"), Some(Side::First));
    assert_eq!(stone(&pos, "d2"), Some(Side::First));
}

#[test]
fn tr_placement_five_kept_by_the_turn_wins() {
    let mut pos = position(Rules::tr(), "a1 b1 c1 d1", "a6 c6 e6 f4");
    play(&mut pos, "e1ne").unwrap();
    assert_eq!(pos.outcome(), Some(Outcome::win(Side::First, Reason::Five)));
}

#[test]
fn classic_winning_placement_ends_the_game_at_once() {
    let mut pos = position(Rules::classic(), "a1 b1 c1 d1", "a6 c6 e6 f4");
    assert_eq!(play(&mut pos, "e1se"), Err(MoveError::TwistAfterWin));
    play(&mut pos, "e1").unwrap();
    assert_eq!(pos.outcome(), Some(Outcome::win(Side::First, Reason::Five)));
    assert_eq!(play(&mut pos, "f6ne"), Err(MoveError::GameOver));
}

#[test]
fn classic_bare_placement_needs_five() {
    let mut pos = position(Rules::classic(), "a1 b1 c1", "a6 c6 e6");
    assert_eq!(play(&mut pos, "f5"), Err(MoveError::BareWithoutFive));
}

// Black a1 b1 c1 f1 f2, white a3 b3 c3 d1 d2: turning se clockwise brings f1, f2 to d1, e1
// and d1, d2 to d3, e3, completing rank 1 for black and rank 3 for white in one turn.
const DOUBLE_BLACK: &str = "a1 b1 c1 f1 f2";
const DOUBLE_WHITE: &str = "a3 b3 c3 d1 d2";

#[test]
fn tr_double_five_wins_for_the_mover() {
    let mut pos = position(Rules::tr(), DOUBLE_BLACK, DOUBLE_WHITE);
    play(&mut pos, "a6se").unwrap();
    assert!(pos.has_five(Side::First) && pos.has_five(Side::Second));
    assert_eq!(
        pos.outcome(),
        Some(Outcome::win(Side::First, Reason::DoubleFive))
    );
}

#[test]
fn classic_double_five_is_a_draw() {
    let mut pos = position(Rules::classic(), DOUBLE_BLACK, DOUBLE_WHITE);
    play(&mut pos, "a6se").unwrap();
    assert_eq!(pos.outcome(), Some(Outcome::draw(Reason::DoubleFive)));
    assert_eq!(pos.outcome().unwrap().result(), "1/2-1/2");
}

#[test]
fn five_only_for_the_opponent_wins_for_the_opponent() {
    for rules in [Rules::tr(), Rules::classic()] {
        let mut pos = position(rules, "a1 b1 f1 f2 b5", DOUBLE_WHITE);
        play(&mut pos, "a6se").unwrap();
        assert_eq!(
            pos.outcome(),
            Some(Outcome::win(Side::Second, Reason::OpponentFive)),
            "{}",
            rules.name()
        );
        assert_eq!(pos.outcome().unwrap().result(), "0-1");
    }
}

#[test]
fn six_in_a_row_counts_as_five() {
    let mut pos = position(Rules::tr(), "a1 b1 c1 e1 f1", "a6 c6 e6 a4 f4");
    play(&mut pos, "d1nw").unwrap();
    assert_eq!(pos.outcome(), Some(Outcome::win(Side::First, Reason::Five)));
}

#[test]
fn full_board_without_five_is_a_draw() {
    // A complete game from the public vectors that ends on the 36th marble.
    let moves = "e3se a4nw c1nw a2se a1nw e2nw f3sw e3se e4ne b2ne a2se c4sw e4sw f1sw b3nw d6sw \
                 f5nw c3sw f6sw a5ne d3ne d2nw a4nw e5sw f5nw c5ne f4ne f4se b6se d2nw d1sw b1nw \
                 a6nw b4nw b5nw c1nw";
    let mut pos = Position::new(Rules::tr());
    for mv in moves.split_whitespace() {
        play(&mut pos, mv).unwrap();
    }
    assert_eq!(pos.marbles(), 36);
    assert_eq!(pos.outcome(), Some(Outcome::draw(Reason::FullBoard)));
}

#[test]
fn placement_then_turn_is_the_same_move_as_a_whole() {
    let pos = position(Rules::tr(), "a1 b1 c1", "a6 c6 e6");
    let placement = pos.place(cells("d5")[0]).unwrap();
    assert_eq!(placement.stone_at(cells("d5")[0]), Some(Side::First));
    assert_eq!(
        placement.turn(Turn::new(Quadrant::Sw, Direction::CounterClockwise)),
        Err(MoveError::DirectionNotAllowed)
    );
    assert_eq!(
        placement.turn(Turn::new(Quadrant::Se, Direction::Clockwise)),
        Err(MoveError::EmptyQuadrant)
    );
    let mv = placement
        .turn(Turn::new(Quadrant::Ne, Direction::Clockwise))
        .unwrap();
    let (mut halves, mut whole) = (pos, pos);
    halves.play(mv).unwrap();
    play(&mut whole, "d5ne").unwrap();
    assert_eq!(halves, whole);
}

#[test]
fn malformed_notation_is_an_error() {
    for text in [
        "", "d", "d4'", "dd4ne", "4dne", "h1sw", "d4ne'x", "a0nw", "d10ne", "d4nn",
    ] {
        assert!(
            matches!(Move::parse(text), Err(MoveError::Malformed(_))),
            "{text:?}"
        );
    }
}

#[test]
fn from_cells_refuses_impossible_positions() {
    let c = |s| cells(s);
    assert!(Position::from_cells(Rules::tr(), &c("a1"), &c("a1")).is_none());
    assert!(Position::from_cells(Rules::tr(), &c("a1 b1"), &c("")).is_none());
    assert!(Position::from_cells(Rules::tr(), &c("a1 b1 c1 d1 e1"), &c("a6 b6 c6 d6")).is_none());
}

// ---------------------------------------------------------------------------------------------
// Properties.

fn rules_strategy() -> impl Strategy<Value = Rules> {
    prop_oneof![Just(Rules::tr()), Just(Rules::classic())]
}

/// Plays up to `plies` moves, each chosen by the next index; returns the moves played.
fn random_game(rules: Rules, choices: &[usize]) -> (Position, Vec<Move>) {
    let mut pos = Position::new(rules);
    let mut played = Vec::new();
    let mut moves = Vec::new();
    for &choice in choices {
        moves.clear();
        pos.legal_moves(&mut moves);
        if moves.is_empty() {
            break;
        }
        let mv = moves[choice % moves.len()];
        pos.play(mv).unwrap();
        played.push(mv);
    }
    (pos, played)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn four_quarter_turns_are_the_identity(
        rules in rules_strategy(),
        choices in proptest::collection::vec(any::<usize>(), 0..30),
        quadrant in 0usize..4,
    ) {
        let (pos, _) = random_game(rules, &choices);
        for direction in [Direction::Clockwise, Direction::CounterClockwise] {
            let turn = Turn::new(Quadrant::ALL[quadrant], direction);
            let once = pos.turned(turn);
            let four = once.turned(turn).turned(turn).turned(turn);
            prop_assert_eq!(four.bitboards(), pos.bitboards());
            let back = Turn::new(turn.quadrant, match direction {
                Direction::Clockwise => Direction::CounterClockwise,
                Direction::CounterClockwise => Direction::Clockwise,
            });
            prop_assert_eq!(once.turned(back).bitboards(), pos.bitboards());
        }
    }

    #[test]
    fn notation_round_trips(rules in rules_strategy(), choices in proptest::collection::vec(any::<usize>(), 0..30)) {
        let (pos, _) = random_game(rules, &choices);
        let mut moves = Vec::new();
        pos.legal_moves(&mut moves);
        for mv in moves {
            prop_assert_eq!(Move::parse(&mv.to_string()), Ok(mv));
        }
    }

    #[test]
    fn random_games_end_with_a_result_that_fits_the_board(
        rules in rules_strategy(),
        choices in proptest::collection::vec(any::<usize>(), 36),
    ) {
        let (pos, played) = random_game(rules, &choices);
        let outcome = pos.outcome().expect("36 moves always end a game");
        let mover = if played.len() % 2 == 1 { Side::First } else { Side::Second };
        let (mine, theirs) = (pos.has_five(mover), pos.has_five(mover.opponent()));
        match outcome.reason {
            Reason::Five => {
                prop_assert_eq!(outcome.winner, Some(mover));
                prop_assert!(mine && !theirs);
            }
            Reason::DoubleFive => {
                prop_assert!(mine && theirs);
                let expected = if rules.name() == "tr" { Some(mover) } else { None };
                prop_assert_eq!(outcome.winner, expected);
            }
            Reason::OpponentFive => {
                prop_assert_eq!(outcome.winner, Some(mover.opponent()));
                prop_assert!(theirs && !mine);
            }
            Reason::FullBoard => {
                prop_assert_eq!(pos.marbles(), 36);
                prop_assert!(!mine && !theirs);
                prop_assert_eq!(outcome.winner, None);
            }
            other => prop_assert!(false, "unexpected reason {other}"),
        }
        // Counting and listing the legal moves agree along the way.
        let (mid, _) = random_game(rules, &choices[..played.len() / 2]);
        let mut moves = Vec::new();
        mid.legal_moves(&mut moves);
        prop_assert_eq!(mid.count_legal_moves(), moves.len() as u64);
    }

    #[test]
    fn perft_is_invariant_under_the_presets_symmetries(
        rules in rules_strategy(),
        choices in proptest::collection::vec(any::<usize>(), 0..10),
    ) {
        let (pos, played) = random_game(rules, &choices);
        let expected = perft(&pos, 2);
        for &symmetry in rules.symmetries() {
            let mut image = Position::new(rules);
            for mv in &played {
                image.play(mv.transformed(symmetry)).unwrap();
            }
            prop_assert_eq!(image, pos.transformed(symmetry));
            prop_assert_eq!(perft(&image, 2), expected);
        }
    }
}
