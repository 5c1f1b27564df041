//! Quoridor rules: one unit test per rule (named after it), then properties over random games.

use std::collections::HashSet;

use hakem_games::quoridor::{goal_rank, Move, Orientation, Position, Rules, Square, Wall};
use hakem_games::{perft, Game, MoveError, Outcome, Reason, Side};
use proptest::prelude::*;

fn start() -> Position {
    Position::new(Rules::standard())
}

fn after(moves: &str) -> Position {
    let mut pos = start();
    for (ply, mv) in moves.split_whitespace().enumerate() {
        if let Err(e) = pos.play_str(mv) {
            panic!("move {} ({mv}) refused: {e}\n{}", ply + 1, pos.board_text());
        }
    }
    pos
}

fn legal(pos: &Position) -> Vec<String> {
    let mut moves = Vec::new();
    pos.legal_moves(&mut moves);
    moves.iter().map(|mv| mv.to_string()).collect()
}

fn pawn_moves(pos: &Position) -> Vec<String> {
    let mut moves = Vec::new();
    pos.legal_moves(&mut moves);
    moves
        .iter()
        .filter(|mv| matches!(mv, Move::Pawn(_)))
        .map(|mv| mv.to_string())
        .collect()
}

/// The error code for `mv`, checking that the refusal left the position unchanged.
fn refused(pos: &Position, mv: &str) -> &'static str {
    let mut copy = pos.clone();
    match copy.play_str(mv) {
        Ok(_) => panic!("{mv} was accepted\n{}", pos.board_text()),
        Err(e) => {
            assert_eq!(&copy, pos, "{mv}: refusal changed the position");
            e.code()
        }
    }
}

fn sq(name: &str) -> Square {
    match Move::parse(name) {
        Ok(Move::Pawn(square)) => square,
        other => panic!("{name}: {other:?}"),
    }
}

#[test]
fn start_position_pawns_walls_and_move_count() {
    let pos = start();
    assert_eq!(pos.pawn(Side::First).to_string(), "e1");
    assert_eq!(pos.pawn(Side::Second).to_string(), "e9");
    assert_eq!(pos.walls_left(Side::First), 10);
    assert_eq!(pos.walls_left(Side::Second), 10);
    assert_eq!(pos.to_move(), Side::First);
    assert_eq!(pos.plies(), 0);
    assert_eq!(pos.outcome(), None);
    assert_eq!(pos.count_legal_moves(), 3 + 64 + 64);
    assert_eq!(pos.distance_to_goal(Side::First), Some(8));
    assert_eq!(pos.distance_to_goal(Side::Second), Some(8));
}

#[test]
fn legal_moves_pawns_in_square_order_then_horizontal_then_vertical_walls() {
    let moves = legal(&start());
    assert_eq!(&moves[..5], ["d1", "f1", "e2", "a1h", "b1h"]);
    assert_eq!(moves[3 + 63], "h8h");
    assert_eq!(moves[3 + 64], "a1v");
    assert_eq!(moves.last().unwrap(), "h8v");
}

#[test]
fn pawn_steps_one_square_orthogonally() {
    let pos = start();
    assert_eq!(pawn_moves(&pos), ["d1", "f1", "e2"]);
    assert_eq!(refused(&pos, "e3"), "not_reachable");
    assert_eq!(refused(&pos, "d2"), "not_reachable");
    assert_eq!(refused(&pos, "e1"), "not_reachable");
    assert_eq!(refused(&pos, "a9"), "not_reachable");
}

#[test]
fn pawn_may_not_step_through_wall() {
    // e1h lies above e1 and f1.
    let pos = after("e1h e8");
    assert_eq!(pawn_moves(&pos), ["d1", "f1"]);
    assert_eq!(refused(&pos, "e2"), "step_through_wall");
    let pos = after("d1v e8");
    assert_eq!(refused(&pos, "d1"), "step_through_wall");
}

#[test]
fn pawn_may_not_move_onto_opponent() {
    assert_eq!(refused(&start(), "e9"), "onto_opponent");
    let pos = after("e2 e8 e3 e7 e4 e6 e5");
    assert_eq!(refused(&pos, "e5"), "onto_opponent");
}

#[test]
fn jump_straight_over_facing_pawn() {
    // Second to move on e6, facing the first pawn on e5.
    let pos = after("e2 e8 e3 e7 e4 e6 e5");
    assert_eq!(pawn_moves(&pos), ["e4", "d6", "f6", "e7"]);
    assert_eq!(refused(&pos, "d5"), "diagonal_when_straight_possible");
    assert_eq!(refused(&pos, "f5"), "diagonal_when_straight_possible");
    let mut pos = pos;
    pos.play_str("e4").unwrap();
    assert_eq!(pos.pawn(Side::Second).to_string(), "e4");
}

#[test]
fn jump_blocked_by_wall_between_pawns() {
    // e5h separates e5 from e6.
    let pos = after("e2 e8 e3 e7 e4 e6 e5 e5h a1h");
    assert_eq!(pos.to_move(), Side::Second);
    assert_eq!(refused(&pos, "e4"), "jump_through_wall");
    assert_eq!(refused(&pos, "d5"), "jump_through_wall");
    assert_eq!(refused(&pos, "e5"), "onto_opponent");
    assert_eq!(pawn_moves(&pos), ["d6", "f6", "e7"]);
}

#[test]
fn diagonal_only_when_straight_jump_blocked_by_wall() {
    // Second on e6 faces e5; d4h lies behind e5 (below d5 and e5).
    let pos = after("e2 e8 e3 e7 e4 e6 e5 a8h d4h");
    assert_eq!(pos.to_move(), Side::Second);
    assert_eq!(refused(&pos, "e4"), "jump_through_wall");
    assert_eq!(pawn_moves(&pos), ["d5", "f5", "d6", "f6", "e7"]);
}

#[test]
fn diagonal_when_board_edge_behind_opponent() {
    // First on e8 faces the second pawn on e9 at the board edge: it may step to d9 or f9.
    let pos = after("e2 a1h e3 c1h e4 g1h e5 a3h e6 c3h e7 g3h e8 a5h");
    assert_eq!(pos.to_move(), Side::First);
    assert_eq!(pawn_moves(&pos), ["e7", "d8", "f8", "d9", "f9"]);
    assert_eq!(refused(&pos, "e9"), "onto_opponent");
}

#[test]
fn diagonal_may_not_cross_wall_beside_opponent() {
    // Edge behind e9; e8v separates e9 from f9 (and e8 from f8), so only d9 is open.
    let pos = after("e2 a1h e3 c1h e4 g1h e5 a3h e6 c3h e7 g3h e8 e8v");
    assert_eq!(pawn_moves(&pos), ["e7", "d8", "d9"]);
    assert_eq!(refused(&pos, "f9"), "diagonal_through_wall");
}

#[test]
fn diagonal_without_facing_pawn_is_not_reachable() {
    let pos = start();
    assert_eq!(refused(&pos, "d2"), "not_reachable");
    assert_eq!(refused(&pos, "f2"), "not_reachable");
}

#[test]
fn wall_may_not_overlap_a_wall() {
    let pos = after("e5h");
    assert_eq!(refused(&pos, "e5h"), "wall_overlap");
    assert_eq!(refused(&pos, "d5h"), "wall_overlap");
    assert_eq!(refused(&pos, "f5h"), "wall_overlap");
    assert!(legal(&pos).contains(&"c5h".to_string()));
    assert!(legal(&pos).contains(&"g5h".to_string()));
    let pos = after("e5v");
    assert_eq!(refused(&pos, "e4v"), "wall_overlap");
    assert_eq!(refused(&pos, "e6v"), "wall_overlap");
    assert!(legal(&pos).contains(&"e3v".to_string()));
}

#[test]
fn wall_may_not_cross_a_wall_at_its_midpoint() {
    let pos = after("e5h");
    assert_eq!(refused(&pos, "e5v"), "wall_cross");
    // Touching at an end (a T or an L) is allowed.
    let moves = legal(&pos);
    for ok in ["d5v", "f5v", "e4v", "e6v", "d4v"] {
        assert!(moves.contains(&ok.to_string()), "{ok}");
    }
}

#[test]
fn wall_may_not_cut_either_pawn_off() {
    // d1v and e1v wall in file e at ranks 1-2; d2h or e2h would close the box around e1.
    let pos = after("d1v e1v");
    assert_eq!(refused(&pos, "d2h"), "wall_blocks_own_path");
    assert_eq!(refused(&pos, "e2h"), "wall_blocks_own_path");
    let pos = after("d1v e1v a8h");
    assert_eq!(pos.to_move(), Side::Second);
    assert_eq!(refused(&pos, "d2h"), "wall_blocks_opponent_path");
    assert_eq!(refused(&pos, "e2h"), "wall_blocks_opponent_path");
    let moves = legal(&pos);
    assert!(!moves.contains(&"d2h".to_string()));
    assert!(!moves.contains(&"e2h".to_string()));
    assert!(moves.contains(&"f2h".to_string()));
    assert!(moves.contains(&"c2h".to_string()));
}

#[test]
fn wall_path_rule_ignores_pawns() {
    // Walls line file e from rank 1 to rank 4, so the first pawn's only way out passes e5,
    // where the second pawn now stands. Pawns are no obstacle for the path rule: walls stay
    // placeable.
    let pos = after("d1v e8 e1v e7 d3v e6 e3v e5");
    assert_eq!(pos.pawn(Side::Second).to_string(), "e5");
    assert_eq!(pos.distance_to_goal(Side::First), Some(8));
    let moves = legal(&pos);
    assert!(moves.contains(&"a8h".to_string()));
    assert!(moves.contains(&"e5h".to_string()));
    // Closing the corridor itself is refused.
    assert_eq!(refused(&pos, "e4h"), "wall_blocks_own_path");
    assert_eq!(refused(&pos, "d4h"), "wall_blocks_own_path");
}

#[test]
fn wall_may_not_stick_out_of_the_board() {
    let pos = start();
    assert_eq!(refused(&pos, "i5h"), "wall_off_board");
    assert_eq!(refused(&pos, "e9v"), "wall_off_board");
    assert_eq!(refused(&pos, "j1h"), "wall_off_board");
    assert_eq!(refused(&pos, "a0v"), "wall_off_board");
    assert!(Wall::new(sq("i5"), Orientation::Horizontal).is_none());
    assert!(Wall::new(sq("h8"), Orientation::Vertical).is_some());
}

#[test]
fn no_walls_left_pawn_must_move() {
    let pos = after("a1h e8 c1h e9 g1h e8 a3h e9 c3h e8 g3h e9 a5h e8 c5h e9 g5h e8 a7h e9");
    assert_eq!(pos.to_move(), Side::First);
    assert_eq!(pos.walls_left(Side::First), 0);
    assert_eq!(pos.walls_left(Side::Second), 10);
    assert_eq!(pos.walls().count(), 10);
    let moves = legal(&pos);
    assert_eq!(moves, ["d1", "f1", "e2"]);
    assert_eq!(pos.count_legal_moves(), 3);
    assert_eq!(refused(&pos, "e7h"), "no_walls_left");
    let pos = after("a1h e8 c1h e9 g1h e8 a3h e9 c3h e8 g3h e9 a5h e8 c5h e9 g5h e8 a7h e9 e2");
    assert!(legal(&pos).contains(&"e7h".to_string()));
}

#[test]
fn first_to_far_row_wins() {
    let mut pos = after("e2 e8 e3 d8 e4 d7 e5 d6 e6 d5 e7 d4 e8 d3");
    assert_eq!(pos.outcome(), None);
    pos.play_str("e9").unwrap();
    assert_eq!(pos.outcome(), Some(Outcome::win(Side::First, Reason::Goal)));
    assert_eq!(pos.outcome().unwrap().result(), "1-0");
    assert_eq!(pos.count_legal_moves(), 0);
    assert!(legal(&pos).is_empty());
    assert_eq!(refused(&pos, "d2"), "game_over");
    assert_eq!(refused(&pos, "a1h"), "game_over");
}

#[test]
fn second_player_wins_on_rank_one() {
    let pos = after("e2 e8 e3 e7 e4 e6 e5 e4 e6 e3 e7 e2 e8 e1");
    assert_eq!(
        pos.outcome(),
        Some(Outcome::win(Side::Second, Reason::Goal))
    );
    assert_eq!(pos.outcome().unwrap().result(), "0-1");
}

#[test]
fn diagonal_onto_goal_row_wins() {
    let mut pos = after("e2 a1h e3 c1h e4 g1h e5 a3h e6 c3h e7 g3h e8 a5h");
    pos.play_str("f9").unwrap();
    assert_eq!(pos.outcome(), Some(Outcome::win(Side::First, Reason::Goal)));
}

#[test]
fn ply_limit_draws_untimed_game() {
    let rules = Rules {
        ply_limit: Some(4),
        ..Rules::standard()
    };
    assert_eq!(rules.name(), "standard");
    let mut pos = Position::new(rules);
    for mv in ["e2", "e8", "e3"] {
        pos.play_str(mv).unwrap();
        assert_eq!(pos.outcome(), None);
    }
    pos.play_str("e7").unwrap();
    assert_eq!(pos.outcome(), Some(Outcome::draw(Reason::MoveLimit)));
    assert_eq!(pos.outcome().unwrap().result(), "1/2-1/2");
    assert_eq!(pos.count_legal_moves(), 0);
    assert_eq!(refused(&pos, "e4"), "game_over");
    // No limit in the preset.
    assert_eq!(Rules::standard().ply_limit, None);
}

#[test]
fn ply_limit_yields_to_a_win_on_the_last_ply() {
    let moves = "e2 e8 e3 e7 e4 e6 e5 e4 e6 e3 e7 e2 e8 e1";
    let rules = Rules {
        ply_limit: Some(14),
        ..Rules::standard()
    };
    let mut pos = Position::new(rules);
    for mv in moves.split_whitespace() {
        pos.play_str(mv).unwrap();
    }
    assert_eq!(
        pos.outcome(),
        Some(Outcome::win(Side::Second, Reason::Goal))
    );
    let zero = Position::new(Rules {
        ply_limit: Some(0),
        ..Rules::standard()
    });
    assert_eq!(zero.outcome(), Some(Outcome::draw(Reason::MoveLimit)));
}

#[test]
fn walls_per_player_rule_sets_walls_in_hand() {
    let rules = Rules {
        walls_per_player: 1,
        ..Rules::standard()
    };
    assert_eq!(rules.name(), "custom");
    let mut pos = Position::new(rules);
    pos.play_str("a1h").unwrap();
    pos.play_str("e8").unwrap();
    assert_eq!(refused(&pos, "c1h"), "no_walls_left");
}

#[test]
fn presets() {
    assert_eq!(Rules::PRESETS, ["standard"]);
    assert_eq!(Rules::preset("standard"), Some(Rules::standard()));
    assert_eq!(Rules::preset("classic"), None);
    assert_eq!(Rules::standard().name(), "standard");
    assert_eq!(Rules::standard().walls_per_player, 10);
    assert_eq!(Rules::default(), Rules::standard());
}

#[test]
fn notation_errors() {
    let pos = start();
    for bad in [
        "", "x", "5e", "e5d", "e3hh", "e", "h", "e01", " e2", "e2 ", "é2", "e-1", "ee2",
    ] {
        assert_eq!(refused(&pos, bad), "malformed", "{bad:?}");
    }
    for off in ["e10", "i10", "j5", "e0", "z99999999999999999999"] {
        assert_eq!(refused(&pos, off), "off_board", "{off:?}");
    }
    for off in ["i1h", "a9v", "z0h", "a99999999999999999999v"] {
        assert_eq!(refused(&pos, off), "wall_off_board", "{off:?}");
    }
    assert!(matches!(Move::parse("x"), Err(MoveError::Malformed(_))));
    // Capitals are read; notation is printed in lower case.
    let mut copy = pos.clone();
    assert_eq!(copy.play_str("E2").unwrap().to_string(), "e2");
    assert_eq!(Move::parse("C3H").unwrap().to_string(), "c3h");
    assert_eq!(Move::parse("h8v").unwrap().to_string(), "h8v");
}

#[test]
fn goal_ranks() {
    assert_eq!(goal_rank(Side::First), 8);
    assert_eq!(goal_rank(Side::Second), 0);
}

#[test]
fn distance_to_goal_follows_walls() {
    // A horizontal wall right in front of e1 costs one sideways step.
    let pos = after("e1h");
    assert_eq!(pos.distance_to_goal(Side::First), Some(9));
    assert_eq!(
        pos.distance_map(Side::First)[usize::from(sq("e1").index())],
        9
    );
    assert_eq!(
        pos.distance_map(Side::First)[usize::from(sq("d1").index())],
        8
    );
    assert_eq!(
        pos.distance_map(Side::Second)[usize::from(sq("e1").index())],
        0
    );
}

#[test]
fn board_text_shows_coordinates_pawns_and_walls() {
    let pos = after("e3h d5v");
    let text = pos.board_text();
    assert!(text.contains("a   b   c   d   e   f   g   h   i"), "{text}");
    assert!(
        text.lines().any(|l| l.trim_start().starts_with("9 |")),
        "{text}"
    );
    assert!(
        text.lines().any(|l| l.trim_start().starts_with("1 |")),
        "{text}"
    );
    assert!(text.contains('1') && text.contains('2'));
    assert!(text.contains("===="), "{text}");
    assert!(text.contains("walls left: 1 has 9, 2 has 9"), "{text}");
    // The vertical wall d5v is drawn on ranks 5 and 6 between d and e.
    let rank5 = text.lines().find(|l| l.starts_with(" 5 |")).unwrap();
    assert!(rank5.contains(". | ."), "{text}");
}

#[test]
fn mirrored_moves_and_positions() {
    assert_eq!(sq("a1").mirrored(), sq("i1"));
    assert_eq!(sq("e5").mirrored(), sq("e5"));
    assert_eq!(Move::parse("e3h").unwrap().mirrored().to_string(), "d3h");
    assert_eq!(Move::parse("a1v").unwrap().mirrored().to_string(), "h1v");
    assert_eq!(Move::parse("c7").unwrap().mirrored().to_string(), "g7");
    let pos = after("e3h d5v f1");
    let image = pos.mirrored();
    assert_eq!(image, after("d3h e5v d1"));
    assert_eq!(image.mirrored(), pos);
}

/// A position reached by random legal moves; `choices[i] % 3 == 0` prefers a pawn move so that
/// pawns travel while walls are still in hand.
fn random_position(choices: &[u32]) -> Position {
    let mut pos = start();
    let mut moves = Vec::new();
    for &choice in choices {
        moves.clear();
        pos.legal_moves(&mut moves);
        if moves.is_empty() {
            break;
        }
        let pawns = moves.iter().filter(|m| matches!(m, Move::Pawn(_))).count();
        let pick = if choice % 3 == 0 && pawns > 0 {
            (choice / 3) as usize % pawns
        } else {
            choice as usize % moves.len()
        };
        pos.play(moves[pick]).expect("generated move is legal");
    }
    pos
}

/// Every move the notation can express: 81 pawn squares and 128 walls.
fn every_move() -> Vec<Move> {
    let pawns = Square::all().map(Move::Pawn);
    let walls = [Orientation::Horizontal, Orientation::Vertical]
        .into_iter()
        .flat_map(|o| (0..64).filter_map(move |i| Wall::from_anchor_index(i, o)))
        .map(Move::Wall);
    pawns.chain(walls).collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn notation_round_trips_for_every_legal_move(
        choices in prop::collection::vec(any::<u32>(), 0..60)
    ) {
        let pos = random_position(&choices);
        let mut moves = Vec::new();
        pos.legal_moves(&mut moves);
        for mv in moves {
            let text = mv.to_string();
            prop_assert_eq!(pos.parse_move(&text), Ok(mv));
            prop_assert_eq!(Move::parse(&text.to_uppercase()), Ok(mv));
        }
    }

    #[test]
    fn generated_moves_are_exactly_the_moves_play_accepts(
        choices in prop::collection::vec(any::<u32>(), 0..60)
    ) {
        // Checks the pruned wall generation against play's own flood fills.
        let pos = random_position(&choices);
        let mut generated = Vec::new();
        pos.legal_moves(&mut generated);
        prop_assert_eq!(pos.count_legal_moves(), generated.len() as u64);
        let generated: HashSet<Move> = generated.into_iter().collect();
        for mv in every_move() {
            let mut copy = pos.clone();
            match copy.play(mv) {
                Ok(()) => prop_assert!(generated.contains(&mv), "{} accepted, not generated", mv),
                Err(e) => {
                    prop_assert!(!generated.contains(&mv), "{} generated, refused: {}", mv, e);
                    prop_assert_eq!(&copy, &pos);
                }
            }
        }
    }

    #[test]
    fn random_games_never_panic_and_end_consistently(
        choices in prop::collection::vec(any::<u32>(), 1..400)
    ) {
        // Mostly race along a shortest path (so games end), sometimes play anything.
        let mut pos = start();
        let mut moves = Vec::new();
        for &choice in &choices {
            if pos.outcome().is_some() {
                break;
            }
            moves.clear();
            pos.legal_moves(&mut moves);
            prop_assert!(!moves.is_empty(), "running game without moves");
            let me = pos.to_move();
            let map = pos.distance_map(me);
            let mv = if choice % 4 == 0 {
                moves[(choice / 4) as usize % moves.len()]
            } else {
                *moves
                    .iter()
                    .filter_map(|&m| match m {
                        Move::Pawn(s) => Some((map[usize::from(s.index())], m)),
                        Move::Wall(_) => None,
                    })
                    .min()
                    .map(|(_, m)| m)
                    .as_ref()
                    .unwrap_or(&moves[0])
            };
            pos.play(mv).expect("generated move is legal");
            for side in [Side::First, Side::Second] {
                let distance = pos.distance_to_goal(side);
                prop_assert!(distance.is_some(), "a pawn lost its path");
                prop_assert_eq!(distance, Some(pos.distance_map(side)[usize::from(pos.pawn(side).index())]));
            }
            prop_assert_ne!(pos.pawn(Side::First), pos.pawn(Side::Second));
            let _ = pos.board_text();
        }
        let first_home = pos.pawn(Side::First).rank() == goal_rank(Side::First);
        let second_home = pos.pawn(Side::Second).rank() == goal_rank(Side::Second);
        match pos.outcome() {
            None => prop_assert!(!first_home && !second_home),
            Some(outcome) => {
                prop_assert_eq!(outcome.reason, Reason::Goal);
                let winner = outcome.winner.expect("no draws without a ply limit");
                // The winner just moved onto its goal rank; the loser never reached its own.
                prop_assert_eq!(pos.to_move(), winner.opponent());
                prop_assert_eq!(pos.pawn(winner).rank(), goal_rank(winner));
                let loser = winner.opponent();
                prop_assert_ne!(pos.pawn(loser).rank(), goal_rank(loser));
            }
        }
    }

    #[test]
    fn perft_is_invariant_under_left_right_mirror(
        choices in prop::collection::vec(any::<u32>(), 0..60)
    ) {
        let pos = random_position(&choices);
        let image = pos.mirrored();
        prop_assert_eq!(&image.mirrored(), &pos);
        let mut moves = Vec::new();
        pos.legal_moves(&mut moves);
        let mut image_moves = Vec::new();
        image.legal_moves(&mut image_moves);
        let mirrored: HashSet<Move> = moves.iter().map(|m| m.mirrored()).collect();
        prop_assert_eq!(mirrored, image_moves.iter().copied().collect::<HashSet<Move>>());
        prop_assert_eq!(perft(&pos, 2), perft(&image, 2));
    }

    #[test]
    fn any_text_is_parsed_or_refused_without_panic(
        bytes in prop::collection::vec(any::<u8>(), 0..6),
        choices in prop::collection::vec(any::<u32>(), 0..30)
    ) {
        let pos = random_position(&choices);
        let text = String::from_utf8_lossy(&bytes);
        let mut copy = pos.clone();
        if copy.play_str(&text).is_err() {
            prop_assert_eq!(&copy, &pos);
        }
    }

    #[test]
    fn short_board_like_text_is_parsed_or_refused_without_panic(
        file in 0u8..28, rank in 0u32..12, suffix in 0usize..4
    ) {
        let letter = (b'a' + file.min(25)) as char;
        let text = format!("{letter}{rank}{}", ["", "h", "v", "x"][suffix]);
        let mut pos = start();
        let _ = pos.play_str(&text);
    }
}
