//! Pente rules (rules.md section 6): one unit test per rule, then properties checked on random
//! games against a deliberately naive model of the board.

use hakem_games::pente::{Move, Point, Position, Rules, Symmetry};
use hakem_games::{perft, Game, MoveError, Outcome, Reason, Side};
use proptest::prelude::*;

fn pt(text: &str) -> Point {
    Point::parse(text).unwrap_or_else(|e| panic!("{text}: {e}"))
}

/// The position after `moves` (space-separated) under `rules`; every move must be legal.
fn after(rules: Rules, moves: &str) -> Position {
    let mut pos = Position::new(rules);
    for (ply, mv) in moves.split_whitespace().enumerate() {
        if let Err(e) = pos.play_str(mv) {
            panic!("move {} ({mv}) refused: {e}", ply + 1);
        }
    }
    pos
}

fn refused(pos: &Position, mv: &str) -> MoveError {
    let mut copy = pos.clone();
    let err = copy.play_str(mv).expect_err(mv);
    assert_eq!(&copy, pos, "{mv} was refused but changed the position");
    err
}

fn legal(pos: &Position) -> Vec<Move> {
    let mut moves = Vec::new();
    pos.legal_moves(&mut moves);
    moves
}

// ---------------------------------------------------------------------------------------------
// Opening rules

#[test]
fn white_moves_first_and_sides_alternate() {
    let mut pos = Position::new(Rules::tournament());
    assert_eq!(pos.to_move(), Side::First);
    pos.play_str("K10").unwrap();
    assert_eq!(pos.to_move(), Side::Second);
    assert_eq!(pos.stone(pt("K10")), Some(Side::First));
    pos.play_str("A1").unwrap();
    assert_eq!(pos.to_move(), Side::First);
    assert_eq!(pos.stone(pt("A1")), Some(Side::Second));
    assert_eq!(pos.plies(), 2);
}

#[test]
fn first_stone_must_be_centre() {
    for rules in [Rules::tournament(), Rules::free()] {
        let pos = Position::new(rules);
        assert_eq!(legal(&pos), vec![Move(Point::CENTRE)]);
        assert_eq!(pos.count_legal_moves(), 1);
        for point in Point::all().filter(|&p| p != Point::CENTRE) {
            assert_eq!(refused(&pos, &point.to_string()), MoveError::FirstNotCenter);
        }
        assert!(pos.clone().play_str("K10").is_ok());
    }
}

#[test]
fn tournament_rule_third_stone_distance_three() {
    let pos = after(Rules::tournament(), "K10 A1");
    for bad in ["K8", "M12", "H12", "L9", "J10", "M8"] {
        assert_eq!(refused(&pos, bad), MoveError::TournamentRule, "{bad}");
    }
    for good in ["K7", "K13", "N13", "G7", "H7", "O10", "T19"] {
        assert!(pos.clone().play_str(good).is_ok(), "{good}");
    }
    // Exactly the 24 free points of the 5x5 square around K10 are refused.
    let moves = legal(&pos);
    assert_eq!(moves.len(), 361 - 2 - 24);
    assert_eq!(pos.count_legal_moves(), moves.len() as u64);
    for point in Point::all() {
        let in_square = point.distance(Point::CENTRE) <= 2;
        let free = pos.stone(point).is_none();
        assert_eq!(moves.contains(&Move(point)), free && !in_square, "{point}");
    }
}

#[test]
fn tournament_rule_binds_only_whites_second_stone() {
    // Black's first stone may be next to K10; White's third stone may be too.
    let pos = after(Rules::tournament(), "K10 K11 K7 L11");
    assert!(pos.clone().play_str("K9").is_ok());
    assert_eq!(pos.count_legal_moves(), 361 - 4);
}

#[test]
fn tournament_rule_refuses_occupied_point_as_occupied() {
    let pos = after(Rules::tournament(), "K10 K11");
    assert_eq!(refused(&pos, "K11"), MoveError::Occupied);
    assert_eq!(refused(&pos, "K10"), MoveError::Occupied);
}

#[test]
fn free_preset_has_no_distance_rule() {
    let pos = after(Rules::free(), "K10 K11");
    assert!(pos.clone().play_str("K9").is_ok());
    assert!(pos.clone().play_str("L11").is_ok());
    assert_eq!(pos.count_legal_moves(), 359);
    assert_eq!(legal(&pos).len(), 359);
}

// ---------------------------------------------------------------------------------------------
// Captures

#[test]
fn capture_removes_flanked_pair() {
    let before = after(Rules::tournament(), "K10 K11 A1 K12");
    let mut pos = before.clone();
    pos.play_str("K13").unwrap();
    assert_eq!(pos.stone(pt("K11")), None);
    assert_eq!(pos.stone(pt("K12")), None);
    assert_eq!(pos.stone(pt("K13")), Some(Side::First));
    assert_eq!(pos.captures(Side::First), 2);
    assert_eq!(pos.captures(Side::Second), 0);
    assert_eq!(pos.stone_count(), 3);
    let mut gone = pos.captured_by_last_move();
    gone.sort();
    assert_eq!(gone, vec![pt("K11"), pt("K12")]);
    assert_eq!(pos.last_move(), Some(Move(pt("K13"))));
    assert_eq!(pos.outcome(), None);
}

#[test]
fn capture_works_in_all_eight_directions() {
    for (dc, dr) in [
        (1, 0),
        (1, 1),
        (0, 1),
        (-1, 1),
        (-1, 0),
        (-1, -1),
        (0, -1),
        (1, -1),
    ] {
        let at = |k: i32| {
            Point::new((9 + k * dc) as u8, (9 + k * dr) as u8)
                .unwrap()
                .to_string()
        };
        // White anchors on K10 and captures by playing three steps away.
        let moves = format!("K10 {} A1 {} {}", at(1), at(2), at(3));
        let pos = after(Rules::free(), &moves);
        assert_eq!(pos.stone(pt(&at(1))), None, "{moves}");
        assert_eq!(pos.stone(pt(&at(2))), None, "{moves}");
        assert_eq!(pos.captures(Side::First), 2, "{moves}");
    }
}

#[test]
fn black_captures_too() {
    let pos = after(Rules::free(), "K10 K9 K11 A1 A2 K12");
    assert_eq!(pos.stone(pt("K10")), None);
    assert_eq!(pos.stone(pt("K11")), None);
    assert_eq!(pos.stone(pt("A2")), Some(Side::First));
    assert_eq!(pos.captures(Side::Second), 2);
}

#[test]
fn several_pairs_captured_at_once() {
    let pos = after(
        Rules::tournament(),
        "K10 K11 K16 K12 N13 K14 A1 K15 A2 L13 A3 M13",
    );
    assert_eq!(pos.captures(Side::First), 0);
    let mut pos = pos;
    pos.play_str("K13").unwrap();
    for gone in ["K11", "K12", "K14", "K15", "L13", "M13"] {
        assert_eq!(pos.stone(pt(gone)), None, "{gone}");
    }
    assert_eq!(pos.captures(Side::First), 6);
    assert_eq!(pos.captured_by_last_move().len(), 6);
    assert_eq!(pos.stone_count(), 7);
}

#[test]
fn moving_into_flanked_position_is_safe() {
    // Black K9 and K12 flank K10-K11; White completes the pair itself: nothing is captured.
    let mut pos = after(Rules::tournament(), "K10 K9 A1 K12 K11");
    assert_eq!(pos.stone(pt("K10")), Some(Side::First));
    assert_eq!(pos.stone(pt("K11")), Some(Side::First));
    assert_eq!(pos.captures(Side::Second), 0);
    assert!(pos.captured_by_last_move().is_empty());
    // And the pair stays safe afterwards: Black's next stones elsewhere capture nothing.
    pos.play_str("T19").unwrap();
    assert_eq!(pos.stone(pt("K11")), Some(Side::First));
}

#[test]
fn only_exactly_two_stones_are_captured() {
    // X O X and X O O O X capture nothing.
    let pos = after(Rules::free(), "K10 K11 A1 A19 K12");
    assert_eq!(pos.stone(pt("K11")), Some(Side::Second));
    let pos = after(Rules::free(), "K10 K11 A1 K12 A3 K13 K14");
    for kept in ["K11", "K12", "K13"] {
        assert_eq!(pos.stone(pt(kept)), Some(Side::Second), "{kept}");
    }
    assert_eq!(pos.captures(Side::First), 0);
}

#[test]
fn own_stones_are_never_captured() {
    let pos = after(Rules::free(), "K10 A1 K11 A2 K12 A3 K13");
    assert_eq!(pos.stone_count(), 7);
    assert_eq!(pos.captures(Side::First), 0);
}

#[test]
fn captured_points_can_be_played_again() {
    let mut pos = after(Rules::tournament(), "K10 K11 A1 K12 K13");
    assert_eq!(pos.count_legal_moves(), 361 - 3);
    assert!(legal(&pos).contains(&Move(pt("K11"))));
    pos.play_str("K11").unwrap();
    pos.play_str("K12").unwrap();
    assert_eq!(pos.stone(pt("K11")), Some(Side::Second));
    assert_eq!(pos.stone(pt("K12")), Some(Side::First));
}

// ---------------------------------------------------------------------------------------------
// Results

#[test]
fn five_in_a_row_wins_in_every_direction() {
    // White builds four around K10 (last stone in the middle of the line), Black plays far away.
    for (dc, dr) in [(1, 0), (0, 1), (1, 1), (1, -1)] {
        let at = |k: i32| {
            Point::new((9 + k * dc) as u8, (9 + k * dr) as u8)
                .unwrap()
                .to_string()
        };
        let moves = format!("K10 A19 {} C19 {} E19 {} G19", at(-2), at(-1), at(2));
        let mut pos = after(Rules::free(), &moves);
        assert_eq!(pos.outcome(), None, "{moves}");
        pos.play_str(&at(1)).unwrap();
        assert_eq!(
            pos.outcome(),
            Some(Outcome::win(Side::First, Reason::Five)),
            "{moves}"
        );
    }
}

#[test]
fn four_in_a_row_does_not_win() {
    let pos = after(Rules::free(), "K10 A19 L10 C19 M10 E19 N10");
    assert_eq!(pos.outcome(), None);
}

#[test]
fn black_wins_with_five() {
    let pos = after(Rules::tournament(), "K10 A1 T19 B1 T17 C1 T15 D1 T13 E1");
    assert_eq!(
        pos.outcome(),
        Some(Outcome::win(Side::Second, Reason::Five))
    );
    assert_eq!(pos.outcome().unwrap().result(), "0-1");
}

#[test]
fn six_in_a_row_wins() {
    let before = after(
        Rules::tournament(),
        "K10 A19 A1 C19 B1 E19 C1 G19 E1 J19 F1 L19",
    );
    assert_eq!(before.outcome(), None);
    let mut pos = before;
    pos.play_str("D1").unwrap();
    assert_eq!(pos.outcome(), Some(Outcome::win(Side::First, Reason::Five)));
}

/// Four White captures (8 stones) in columns A, C, E, G.
const EIGHT_CAPTURED: &str = "K10 A2 A1 A3 A4 C2 C1 C3 C4 E2 E1 E3 E4 G2 G1 G3 G4";

#[test]
fn ten_captured_stones_win() {
    let pos = after(Rules::tournament(), EIGHT_CAPTURED);
    assert_eq!(pos.captures(Side::First), 8);
    assert_eq!(pos.outcome(), None);
    let pos = after(
        Rules::tournament(),
        &format!("{EIGHT_CAPTURED} J2 J1 J3 J4"),
    );
    assert_eq!(pos.captures(Side::First), 10);
    assert_eq!(
        pos.outcome(),
        Some(Outcome::win(Side::First, Reason::Captures))
    );
}

#[test]
fn five_and_tenth_capture_on_one_move_reports_five() {
    let pos = after(
        Rules::tournament(),
        &format!("{EIGHT_CAPTURED} P6 L5 P7 M5 A19 N5 C19 O5 E19 P8 G19"),
    );
    assert_eq!(pos.outcome(), None);
    let mut pos = pos;
    pos.play_str("P5").unwrap();
    assert_eq!(pos.captures(Side::First), 10);
    assert_eq!(pos.outcome(), Some(Outcome::win(Side::First, Reason::Five)));
}

#[test]
fn captures_to_win_is_configurable() {
    let rules = Rules {
        tournament_rule: false,
        captures_to_win: 4,
    };
    assert_eq!(rules.name(), "custom");
    let pos = after(rules, "K10 A2 A1 A3 A4 C2 C1 C3");
    assert_eq!(pos.outcome(), None);
    let pos = after(rules, "K10 A2 A1 A3 A4 C2 C1 C3 C4");
    assert_eq!(
        pos.outcome(),
        Some(Outcome::win(Side::First, Reason::Captures))
    );
}

#[test]
fn full_board_is_a_draw() {
    // The one full-board game of the public vectors for each preset.
    let vectors = include_str!("vectors/pente/results.tsv");
    let mut seen = 0;
    for line in vectors.lines().filter(|l| l.ends_with("full_board")) {
        let fields: Vec<&str> = line.split('\t').collect();
        let pos = after(Rules::preset(fields[0]).unwrap(), fields[1]);
        assert_eq!(pos.outcome(), Some(Outcome::draw(Reason::FullBoard)));
        assert_eq!(pos.stone_count(), 361);
        assert_eq!(pos.count_legal_moves(), 0);
        assert!(legal(&pos).is_empty());
        seen += 1;
    }
    assert!(seen > 0);
}

#[test]
fn no_move_after_the_game_is_over() {
    let pos = after(Rules::tournament(), "K10 A1 T19 B1 T17 C1 T15 D1 T13 E1");
    assert_eq!(refused(&pos, "K11"), MoveError::GameOver);
    assert_eq!(refused(&pos, "A1"), MoveError::GameOver);
    assert!(legal(&pos).is_empty());
    assert_eq!(pos.count_legal_moves(), 0);
    assert_eq!(perft(&pos, 3), 1);
}

#[test]
fn occupied_point_is_refused() {
    let pos = after(Rules::free(), "K10 K11 A1");
    for taken in ["K10", "K11", "A1", "a1"] {
        assert_eq!(refused(&pos, taken), MoveError::Occupied);
    }
}

// ---------------------------------------------------------------------------------------------
// Notation, order, presets, board picture

#[test]
fn notation_round_trips_for_every_point() {
    let mut count = 0;
    for point in Point::all() {
        let text = point.to_string();
        assert_eq!(Point::parse(&text), Ok(point));
        assert_eq!(Point::parse(&text.to_lowercase()), Ok(point));
        assert_eq!(Point::from_index(point.index()), Some(point));
        count += 1;
    }
    assert_eq!(count, 361);
    assert_eq!(Point::CENTRE.to_string(), "K10");
    assert_eq!(Point::new(0, 0).unwrap().to_string(), "A1");
    assert_eq!(Point::new(18, 18).unwrap().to_string(), "T19");
    assert_eq!(Point::new(19, 0), None);
}

#[test]
fn lower_case_is_accepted_and_printed_upper_case() {
    let mut pos = Position::new(Rules::free());
    let mv = pos.play_str("k10").unwrap();
    assert_eq!(mv.to_string(), "K10");
    assert_eq!(pos.parse_move("t19").unwrap().to_string(), "T19");
}

#[test]
fn malformed_notation_is_rejected() {
    let pos = Position::new(Rules::tournament());
    for bad in [
        "", "K", "10K", "I10", "i10", "K1.0", "K10K", "K10,", " K10", "K10 ", "K-1", "K+1", "K010",
        "K00", "KK10", "é10", "K١٠", "10",
    ] {
        let err = pos.parse_move(bad).expect_err(bad);
        assert_eq!(err.code(), "malformed", "{bad:?}");
        assert!(err.is_notation());
    }
}

#[test]
fn off_board_is_rejected() {
    let pos = Position::new(Rules::tournament());
    for bad in [
        "U10",
        "K20",
        "A0",
        "T99",
        "V5",
        "Z1",
        "K100",
        "K99999999999999999999999",
    ] {
        assert_eq!(pos.parse_move(bad), Err(MoveError::OffBoard), "{bad:?}");
    }
}

#[test]
fn legal_moves_are_row_major_from_a1() {
    let pos = after(Rules::free(), "K10 B1");
    let moves = legal(&pos);
    let names: Vec<String> = moves.iter().take(4).map(|m| m.to_string()).collect();
    assert_eq!(names, ["A1", "C1", "D1", "E1"]);
    assert_eq!(moves.last().unwrap().to_string(), "T19");
    assert!(moves.windows(2).all(|w| w[0].0.index() < w[1].0.index()));
    assert_eq!(moves.len(), 359);
}

#[test]
fn presets_round_trip_by_name() {
    for &name in Rules::PRESETS {
        assert_eq!(Rules::preset(name).unwrap().name(), name);
    }
    assert_eq!(Rules::PRESETS[0], "tournament");
    assert_eq!(Rules::preset("tournament"), Some(Rules::tournament()));
    assert_eq!(Rules::preset("free"), Some(Rules::free()));
    assert_eq!(Rules::preset("standard"), None);
    assert!(Rules::tournament().tournament_rule);
    assert!(!Rules::free().tournament_rule);
    assert_eq!(Rules::tournament().captures_to_win, 10);
    assert_eq!(Rules::free().captures_to_win, 10);
}

#[test]
fn board_text_shows_coordinates_stones_and_captures() {
    let pos = after(Rules::tournament(), "K10 K11 A1 K12 K13");
    let text = pos.board_text();
    assert!(text.contains("A B C D E F G H J K L M N O P Q R S T"));
    assert!(!text.contains(" I "));
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines[1].trim_start().starts_with("19"));
    assert!(lines[19].trim_start().starts_with('1'));
    assert!(lines[19].contains('O'), "A1 is White");
    assert!(
        lines[7].contains("(O)"),
        "K13 is the last move: {}",
        lines[7]
    );
    assert!(text.contains("White (O) captured 2"));
    assert!(text.contains("Black (X) to move"));
}

#[test]
fn symmetries_fix_the_centre_and_invert() {
    for sym in Symmetry::ALL {
        assert_eq!(Point::CENTRE.transformed(sym), Point::CENTRE);
        for point in Point::all() {
            assert_eq!(point.transformed(sym).transformed(sym.inverse()), point);
            assert_eq!(
                point.transformed(sym).distance(Point::CENTRE),
                point.distance(Point::CENTRE)
            );
        }
    }
    assert_eq!(pt("T10").transformed(Symmetry::Rotate90), pt("K19"));
    assert_eq!(pt("A1").transformed(Symmetry::Rotate180), pt("T19"));
    assert_eq!(pt("A2").transformed(Symmetry::Diagonal), pt("B1"));
}

// ---------------------------------------------------------------------------------------------
// Properties

/// A naive model: a 19x19 array, captures found by looking at every direction.
#[derive(Clone)]
struct Model {
    board: [[Option<Side>; 19]; 19],
    captures: [u32; 2],
}

impl Model {
    fn new() -> Model {
        Model {
            board: [[None; 19]; 19],
            captures: [0; 2],
        }
    }

    fn get(&self, c: i32, r: i32) -> Option<Side> {
        if (0..19).contains(&c) && (0..19).contains(&r) {
            self.board[r as usize][c as usize]
        } else {
            None
        }
    }

    fn play(&mut self, point: Point, side: Side) {
        let (c, r) = (point.col() as i32, point.row() as i32);
        self.board[r as usize][c as usize] = Some(side);
        let them = Some(side.opponent());
        for dc in -1..=1 {
            for dr in -1..=1 {
                if (dc, dr) == (0, 0) {
                    continue;
                }
                if self.get(c + dc, r + dr) == them
                    && self.get(c + 2 * dc, r + 2 * dr) == them
                    && self.get(c + 3 * dc, r + 3 * dr) == Some(side)
                {
                    self.board[(r + dr) as usize][(c + dc) as usize] = None;
                    self.board[(r + 2 * dr) as usize][(c + 2 * dc) as usize] = None;
                    self.captures[side.index()] += 2;
                }
            }
        }
    }

    /// Whether `side` has five in a row anywhere on the board.
    fn has_five(&self, side: Side) -> bool {
        (0..19).any(|r| {
            (0..19).any(|c| {
                [(1, 0), (0, 1), (1, 1), (1, -1)]
                    .iter()
                    .any(|&(dc, dr)| (0..5).all(|k| self.get(c + k * dc, r + k * dr) == Some(side)))
            })
        })
    }
}

/// Plays a random game: each choice picks a legal move, mostly near the centre so that lines
/// and captures actually happen. Returns the moves and the final position.
fn random_game(rules: Rules, choices: &[u16]) -> (Vec<Move>, Position) {
    let mut pos = Position::new(rules);
    let mut played = Vec::new();
    let mut moves = Vec::new();
    for &choice in choices {
        moves.clear();
        pos.legal_moves(&mut moves);
        if moves.is_empty() {
            break;
        }
        let near: Vec<Move> = moves
            .iter()
            .copied()
            .filter(|m| m.0.distance(Point::CENTRE) <= 4)
            .collect();
        let pool = if near.is_empty() || choice % 8 == 0 {
            &moves
        } else {
            &near
        };
        let mv = pool[choice as usize % pool.len()];
        pos.play(mv).expect("a generated move is legal");
        played.push(mv);
    }
    (played, pos)
}

fn any_rules() -> impl Strategy<Value = Rules> {
    prop_oneof![Just(Rules::tournament()), Just(Rules::free())]
}

fn any_point() -> impl Strategy<Value = Point> {
    (0u8..19, 0u8..19).prop_map(|(c, r)| Point::new(c, r).unwrap())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn notation_round_trips(point in any_point(), lower in any::<bool>()) {
        let text = point.to_string();
        let input = if lower { text.to_lowercase() } else { text.clone() };
        prop_assert_eq!(Point::parse(&input), Ok(point));
        prop_assert_eq!(input.parse::<Move>().unwrap().to_string(), text);
    }

    #[test]
    fn parsing_any_text_never_panics(text in "\\PC{0,6}|[A-Za-z][0-9]{0,4}") {
        let pos = Position::new(Rules::tournament());
        if let Ok(mv) = pos.parse_move(&text) {
            prop_assert_eq!(mv.to_string(), text.to_uppercase());
        }
    }

    #[test]
    fn random_games_agree_with_naive_model(
        rules in any_rules(),
        choices in prop::collection::vec(any::<u16>(), 1..160),
    ) {
        let (moves, pos) = random_game(rules, &choices);
        // Replay step by step against the model.
        let mut replay = Position::new(rules);
        let mut model = Model::new();
        for (i, &mv) in moves.iter().enumerate() {
            prop_assert_eq!(replay.outcome(), None, "game over before move {}", i + 1);
            let side = replay.to_move();
            replay.play(mv).unwrap();
            model.play(mv.0, side);
            for point in Point::all() {
                prop_assert_eq!(
                    replay.stone(point),
                    model.board[point.row() as usize][point.col() as usize],
                    "{} after move {}", point, i + 1
                );
            }
            prop_assert_eq!(u32::from(replay.captures(side)), model.captures[side.index()]);
            let five_reported = replay.outcome().map(|o| o.reason) == Some(Reason::Five);
            prop_assert_eq!(five_reported, model.has_five(side), "five after move {}", i + 1);
        }
        prop_assert_eq!(&replay, &pos);

        // The result is consistent with the final board.
        let five = |s: Side| model.has_five(s);
        let caps = |s: Side| u32::from(pos.captures(s));
        match pos.outcome() {
            None => {
                prop_assert!(!five(Side::First) && !five(Side::Second));
                prop_assert!(caps(Side::First) < 10 && caps(Side::Second) < 10);
                prop_assert!(pos.stone_count() < 361);
            }
            Some(Outcome { winner: Some(w), reason: Reason::Five }) => {
                prop_assert!(five(w));
                prop_assert!(!five(w.opponent()));
                prop_assert_eq!(w, pos.to_move().opponent());
            }
            Some(Outcome { winner: Some(w), reason: Reason::Captures }) => {
                prop_assert!(caps(w) >= 10);
                prop_assert!(!five(w) && !five(w.opponent()));
                prop_assert_eq!(w, pos.to_move().opponent());
            }
            Some(Outcome { winner: None, reason: Reason::FullBoard }) => {
                prop_assert_eq!(pos.stone_count(), 361);
                prop_assert!(!five(Side::First) && !five(Side::Second));
            }
            Some(other) => prop_assert!(false, "unexpected outcome {:?}", other),
        }
        // Stones on the board = stones placed - stones lost.
        for side in [Side::First, Side::Second] {
            let placed = moves.len() as u32 / 2
                + u32::from(side == Side::First && moves.len() % 2 == 1);
            let on_board = Point::all().filter(|&p| pos.stone(p) == Some(side)).count() as u32;
            prop_assert_eq!(on_board, placed - caps(side.opponent()));
        }
    }

    #[test]
    fn legal_moves_agree_with_play(
        rules in any_rules(),
        // Short games often, so the opening rules (plies 0 and 2) are probed too.
        choices in prop_oneof![
            prop::collection::vec(any::<u16>(), 0..4),
            prop::collection::vec(any::<u16>(), 0..60),
        ],
        probe in any_point(),
    ) {
        let (_, pos) = random_game(rules, &choices);
        let moves = legal(&pos);
        prop_assert_eq!(pos.count_legal_moves(), moves.len() as u64);
        for point in Point::all() {
            // The rules, written out independently of the engine's bit masks.
            let allowed = pos.outcome().is_none()
                && pos.stone(point).is_none()
                && (pos.plies() != 0 || point == Point::CENTRE)
                && (pos.plies() != 2
                    || !rules.tournament_rule
                    || point.distance(Point::CENTRE) >= 3);
            prop_assert_eq!(moves.contains(&Move(point)), allowed, "{}", point);
            prop_assert_eq!(pos.check(Move(point)).is_ok(), allowed, "{}", point);
        }
        let mut copy = pos.clone();
        if copy.play(Move(probe)).is_err() {
            prop_assert_eq!(&copy, &pos, "a refused move changed the position");
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn perft_is_invariant_under_symmetries(
        rules in any_rules(),
        choices in prop::collection::vec(any::<u16>(), 0..10),
    ) {
        let (moves, pos) = random_game(rules, &choices);
        let expected = perft(&pos, 2);
        for sym in Symmetry::ALL {
            let mut image = Position::new(rules);
            for mv in &moves {
                image.play(mv.transformed(sym)).unwrap();
            }
            prop_assert_eq!(image.outcome(), pos.outcome());
            prop_assert_eq!(image.captures(Side::First), pos.captures(Side::First));
            for point in Point::all() {
                prop_assert_eq!(image.stone(point.transformed(sym)), pos.stone(point));
            }
            prop_assert_eq!(perft(&image, 2), expected, "{:?}", sym);
        }
    }
}
