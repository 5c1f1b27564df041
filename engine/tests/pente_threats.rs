//! The Pente threat-space search: the wins it reports are forced wins under the rules of
//! `hakem_games::pente` (checked against every legal reply), and it reports none in positions
//! built to have none.

use std::time::Duration;

use hakem_engine::pente::{greedy_move, search_move, threat_search, ThreatLimits, Threats};
use hakem_engine::Rng;
use hakem_games::pente::{Move, Position, Rules};
use hakem_games::{Game, Side};

const LIMITS: ThreatLimits = ThreatLimits {
    threes: 1,
    fours: 6,
    width: 12,
    nodes: 200_000,
    deadline: None,
};

/// The position after `moves` (White first), checked legal.
fn position(rules: Rules, moves: &[&str]) -> Position {
    let mut p = Position::new(rules);
    for mv in moves {
        p.play_str(mv).unwrap_or_else(|e| panic!("{mv}: {e}"));
    }
    assert!(p.outcome().is_none());
    p
}

fn wins(p: &Position, side: Side) -> bool {
    p.outcome().is_some_and(|o| o.winner == Some(side))
}

/// Whether the side to move wins with `moves` moves of its own at most, whatever the opponent
/// does: every legal reply is tried, and the games crate judges every result. The attacker's
/// moves come from the threat search within `limits` (or, to win at once, from moves that won
/// elsewhere).
fn forced_win(p: &Position, limits: ThreatLimits, moves: u32, killers: &mut Vec<Move>) -> bool {
    let me = p.to_move();
    if moves == 0 {
        return false;
    }
    for &k in killers.iter() {
        let mut next = p.clone();
        if next.play(k).is_ok() && wins(&next, me) {
            return true;
        }
    }
    let limits_here = ThreatLimits {
        threes: limits.threes.min(moves - 1),
        fours: limits.fours.min(moves - 1),
        ..limits
    };
    let Threats::Win(mv) = threat_search(p, limits_here) else {
        return false;
    };
    let mut next = p.clone();
    next.play(mv).expect("the search plays legal moves");
    if wins(&next, me) {
        killers.push(mv);
        return true;
    }
    let mut replies = Vec::new();
    next.legal_moves(&mut replies);
    replies.iter().all(|&reply| {
        let mut after = next.clone();
        after.play(reply).expect("legal");
        after.outcome().is_none() && forced_win(&after, limits, moves - 1, killers)
    })
}

fn assert_forced_win(p: &Position, expected: &[&str], moves: u32) {
    let found = threat_search(p, LIMITS);
    let Threats::Win(mv) = found else {
        panic!("no win found: {found:?}\n{}", p.board_text());
    };
    assert!(
        expected.contains(&mv.to_string().as_str()),
        "{mv} is not one of {expected:?}"
    );
    assert!(
        forced_win(p, LIMITS, moves, &mut Vec::new()),
        "{mv} does not win by force\n{}",
        p.board_text()
    );
}

/// Black stones far from the play, to keep the turns alternating.
const FAR: [&str; 6] = ["B2", "D2", "B18", "D18", "S2", "S18"];

#[test]
fn four_three_wins() {
    // White K10 L10 M10 closed on the left by Black J10, and N11 N12: N10 makes a four (five at
    // O10) and an open three N10-N12.
    let p = position(
        Rules::tournament(),
        &[
            "K10", "J10", "N12", FAR[0], "L10", FAR[1], "M10", FAR[2], "N11", FAR[3],
        ],
    );
    assert_forced_win(&p, &["N10"], 3);
}

#[test]
fn a_four_that_leaves_the_opponents_five_open_does_not_win() {
    // The four-three above, but Black has B2 C2 D2 E2 (A2 is White's): Black answers N10 with
    // F2, five in a row.
    let p = position(
        Rules::tournament(),
        &[
            "K10", "J10", "N12", "B2", "L10", "C2", "M10", "D2", "N11", "E2", "A2", "S18",
        ],
    );
    let mut four = p.clone();
    four.play_str("N10").unwrap();
    four.play_str("F2").unwrap();
    assert!(wins(&four, Side::Second));
    assert_eq!(threat_search(&p, LIMITS), Threats::NotFound);
}

#[test]
fn double_open_three_wins() {
    // White N5 O5 and P7 P8: P5 makes the open three N5-P5 and the split three P5 _ P7 P8.
    let p = position(
        Rules::tournament(),
        &[
            "K10", FAR[0], "N5", FAR[1], "O5", FAR[2], "P7", FAR[3], "P8", FAR[4],
        ],
    );
    assert_forced_win(&p, &["P5"], 4);
}

/// White captures four pairs of Black on the right (8 stones), then Black's pairs G6 H6 and
/// F7 F8 stand beside the empty F6.
const WHITE_CAPTURES: [&str; 24] = [
    "K10", "Q13", "P13", "R13", "S13", "Q15", "P15", "R15", "S15", "Q17", "P17", "R17", "S17",
    "Q19", "P19", "R19", "S19", "G6", "A10", "H6", "A12", "F7", "A14", "F8",
];

#[test]
fn fifth_capture_wins() {
    // F6 threatens both pairs; saving one leaves the other, and the fifth pair wins.
    let p = position(Rules::tournament(), &WHITE_CAPTURES);
    assert_eq!(p.captures(Side::First), 8);
    assert_forced_win(&p, &["F6"], 2);
}

#[test]
fn a_capture_that_reaches_the_target_wins_at_once() {
    let mut moves = WHITE_CAPTURES.to_vec();
    moves.extend(["F6", "A16"]);
    let p = position(Rules::tournament(), &moves);
    let found = threat_search(&p, LIMITS);
    assert!(matches!(found, Threats::Win(m) if ["J6", "F9"].contains(&m.to_string().as_str())));
    assert!(forced_win(&p, LIMITS, 1, &mut Vec::new()));
}

#[test]
fn a_split_three_becomes_an_open_four() {
    // K10 _ M12 N13 on a diagonal: L11 makes the open four J9-O14 ends.
    let p = position(
        Rules::tournament(),
        &["K10", "K11", "N13", "L9", "M12", "J10"],
    );
    assert_forced_win(&p, &["L11"], 2);
}

#[test]
fn no_win_from_a_quiet_position() {
    let p = position(
        Rules::tournament(),
        &["K10", "K11", "N13", "L9", "D4", "J10"],
    );
    let limits = ThreatLimits {
        threes: 2,
        ..LIMITS
    };
    assert_eq!(threat_search(&p, limits), Threats::NotFound);
}

/// Black has captured four pairs and threatens M7, capturing M8 M9; White has the open three
/// L8 M8 N8.
const BLACK_CAPTURES: [&str; 26] = [
    "K10", "P13", "Q13", "P15", "R13", "S13", "Q15", "P17", "R15", "S15", "Q17", "P19", "R17",
    "S17", "Q19", "M10", "R19", "S19", "N8", "B2", "L8", "D2", "M9", "B18", "M8", "D18",
];

#[test]
fn no_win_when_the_four_can_be_captured_for_the_fifth_pair() {
    let p = position(Rules::tournament(), &BLACK_CAPTURES);
    assert_eq!(p.captures(Side::Second), 8);
    // Gomoku's open four: Black answers by capturing M8 M9, its fifth pair, and wins.
    let mut four = p.clone();
    four.play_str("K8").unwrap();
    four.play_str("M7").unwrap();
    assert!(wins(&four, Side::Second));
    assert_eq!(threat_search(&p, LIMITS), Threats::NotFound);
}

#[test]
fn a_four_broken_by_a_capture_is_rebuilt() {
    // Without Black's captures the same capture only delays: White plays M8 again and the open
    // four K8-N8 stands.
    let moves = [
        "K10", "M10", "N8", "B2", "L8", "D2", "M9", "B18", "M8", "D18",
    ];
    let p = position(Rules::tournament(), &moves);
    assert_forced_win(&p, &["K8", "O8", "J8", "P8"], 4);
}

#[test]
fn levels_4_and_5_play_a_win_by_threats_and_level_5_stops_one() {
    let double_three = position(
        Rules::tournament(),
        &[
            "K10", FAR[0], "N5", FAR[1], "O5", FAR[2], "P7", FAR[3], "P8", FAR[4],
        ],
    );
    for level in [4, 5] {
        let mv = search_move(&double_three, level, Duration::from_secs(2), 1);
        assert_eq!(
            mv.map(|m| m.to_string()).as_deref(),
            Some("P5"),
            "level {level}"
        );
    }
    // White threatens N10, four and three: Black's answer must leave no win by fours.
    let threatened = position(
        Rules::tournament(),
        &[
            "K10", "J10", "N12", FAR[0], "L10", FAR[1], "M10", FAR[2], "N11",
        ],
    );
    let mv = search_move(&threatened, 5, Duration::from_secs(2), 1).expect("a move");
    let mut after = threatened.clone();
    after.play(mv).expect("legal");
    let fours = ThreatLimits {
        threes: 0,
        ..LIMITS
    };
    assert_eq!(threat_search(&after, fours), Threats::NotFound, "{mv}");
}

#[test]
fn the_search_is_deterministic() {
    let positions = [
        position(Rules::tournament(), &BLACK_CAPTURES),
        position(Rules::tournament(), &WHITE_CAPTURES),
        position(
            Rules::tournament(),
            &[
                "K10", FAR[0], "N5", FAR[1], "O5", FAR[2], "P7", FAR[3], "P8", FAR[4],
            ],
        ),
    ];
    for p in &positions {
        for nodes in [50, 500, 200_000] {
            let limits = ThreatLimits {
                threes: 2,
                nodes,
                ..LIMITS
            };
            let first = threat_search(p, limits);
            for _ in 0..3 {
                assert_eq!(threat_search(&p.clone(), limits), first);
            }
        }
    }
}

#[test]
fn every_win_found_in_played_games_survives_every_reply() {
    // Greedy moves with random ones near the last stone: sharp positions, many threats.
    let (mut found, mut positions) = (0, 0);
    for game in 0..24u64 {
        let mut rng = Rng::new(game);
        let rules = if game % 2 == 0 {
            Rules::tournament()
        } else {
            Rules::free()
        };
        let mut p = Position::new(rules);
        while p.outcome().is_none() && p.plies() < 80 {
            if p.plies() >= 4 {
                positions += 1;
                if let Threats::Win(mv) = threat_search(&p, LIMITS) {
                    found += 1;
                    let moves = LIMITS.threes + LIMITS.fours + 1;
                    assert!(
                        forced_win(&p, LIMITS, moves, &mut Vec::new()),
                        "{mv} does not win by force\n{}",
                        p.board_text()
                    );
                }
            }
            let mut moves = Vec::new();
            p.legal_moves(&mut moves);
            let last = p.last_move().map(|m| m.point());
            let near: Vec<Move> = moves
                .iter()
                .copied()
                .filter(|m| last.is_some_and(|l| m.point().distance(l) <= 2))
                .collect();
            let mv = match greedy_move(&p, rng.next_u64()) {
                Some(mv) if near.is_empty() || rng.below(100) >= 35 => mv,
                _ if !near.is_empty() => near[rng.below(near.len())],
                _ => moves[rng.below(moves.len())],
            };
            p.play(mv).expect("legal");
        }
    }
    assert!(found >= 60, "only {found} wins in {positions} positions");
}
