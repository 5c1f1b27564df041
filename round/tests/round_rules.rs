//! The rules of the round (rules document, sections 2 and 3) on the pure state machine: one
//! test per rule, named after it. Time is passed in as milliseconds.

use hakem_protocol::{
    ClockConfig, ErrorCode, Event, MatchStatus, PerSeat, Points, Scope, Seat, Winner,
};
use hakem_round::{Command, MatchConfig, Round};

const MIN: u64 = 60_000;

fn config(game: &str, clock: Option<ClockConfig>) -> MatchConfig {
    MatchConfig::new(
        game,
        None,
        3,
        clock,
        3,
        PerSeat::new("Ayşe".into(), "Bora".into()),
    )
    .unwrap()
}

fn pentago() -> Round {
    Round::new(config("pentago", Some(ClockConfig::default())))
}

fn ok(round: &mut Round, command: Command, now: u64) -> Vec<Event> {
    round
        .handle(command.clone(), now)
        .unwrap_or_else(|refusal| panic!("{command:?} refused: {refusal:?}"))
}

fn refused(round: &mut Round, command: Command, now: u64) -> ErrorCode {
    let before = format!("{round:?}");
    let refusal = round.handle(command.clone(), now).unwrap_err();
    assert_eq!(
        format!("{round:?}"),
        before,
        "{command:?} changed the round"
    );
    refusal.code
}

fn ready_both(round: &mut Round, now: u64) -> Vec<Event> {
    let mut events = ok(round, Command::Ready { seat: Seat::P1 }, now);
    events.extend(ok(round, Command::Ready { seat: Seat::P2 }, now));
    events
}

fn mv(seat: Seat, text: &str) -> Command {
    Command::Move {
        seat,
        mv: text.into(),
        press: true,
    }
}

fn kinds(events: &[Event]) -> Vec<&'static str> {
    events.iter().map(Event::kind).collect()
}

/// Ends the running set with `winner` (or a draw) by the arbiter's declaration.
fn end_set(round: &mut Round, winner: Winner, now: u64) -> Vec<Event> {
    ok(
        round,
        Command::Declare {
            scope: Scope::Set,
            winner,
            reason: "test".into(),
        },
        now,
    )
}

fn round_ended(events: &[Event]) -> Option<&hakem_protocol::RoundResult> {
    events.iter().find_map(|e| match e {
        Event::RoundEnded(result) => Some(result),
        _ => None,
    })
}

fn points(p1: u32, p2: u32) -> PerSeat<Points> {
    PerSeat::new(Points { halves: p1 }, Points { halves: p2 })
}

#[test]
fn a_set_starts_when_both_players_are_ready() {
    let mut round = pentago();
    let events = ok(&mut round, Command::Ready { seat: Seat::P1 }, 0);
    assert_eq!(kinds(&events), ["ready"]);
    assert_eq!(round.status(), MatchStatus::Waiting);
    let events = ok(&mut round, Command::Ready { seat: Seat::P2 }, 5);
    assert_eq!(kinds(&events), ["ready", "set_started"]);
    assert_eq!(round.status(), MatchStatus::Playing);
    // The clock starts at that moment.
    assert_eq!(round.clock_deadline(), Some(5 + 15 * MIN));
}

#[test]
fn the_arbiter_can_start_a_set_without_ready() {
    let mut round = pentago();
    let events = ok(&mut round, Command::StartSet, 0);
    assert!(
        matches!(
            events.as_slice(),
            [Event::SetStarted {
                set: 1,
                first_mover: Seat::P1,
                board: Some(_),
                colours: Some(hakem_protocol::PerSeat {
                    p1: hakem_protocol::StoneColour::Black,
                    p2: hakem_protocol::StoneColour::White,
                }),
            }]
        ),
        "{events:?}"
    );
    assert_eq!(
        refused(&mut round, Command::StartSet, 1),
        ErrorCode::BadRequest
    );
}

#[test]
fn first_movers_alternate_p1_p2_p1() {
    let mut round = pentago();
    for (set, first) in [(1, Seat::P1), (2, Seat::P2), (3, Seat::P1)] {
        let events = ready_both(&mut round, 0);
        assert!(
            matches!(events.last(), Some(Event::SetStarted { set: s, first_mover: f, .. })
                if *s == set && *f == first),
            "{events:?}"
        );
        assert_eq!(round.to_move(), Some(first));
        end_set(&mut round, Winner::Draw, 10);
    }
}

#[test]
fn the_first_mover_plays_black() {
    let mut round = pentago();
    ready_both(&mut round, 0);
    end_set(&mut round, Winner::Draw, 1);
    ready_both(&mut round, 2);
    // Set 2: p2 moves first; p1 moving first is refused.
    assert_eq!(
        refused(&mut round, mv(Seat::P1, "a1sw"), 3),
        ErrorCode::NotYourTurn
    );
    ok(&mut round, mv(Seat::P2, "a1sw"), 3);
    let board = round.position().unwrap().board_text();
    // The first mover's marble is black (`x`), on a3 after the turn.
    assert!(board.contains(" 3  x . ."), "{board}");
}

#[test]
fn set_points_are_one_for_a_win_and_a_half_each_for_a_draw() {
    let mut round = pentago();
    ready_both(&mut round, 0);
    end_set(&mut round, Winner::P2, 1);
    assert_eq!(round.set_points(), points(0, 2));
    ready_both(&mut round, 2);
    end_set(&mut round, Winner::Draw, 3);
    assert_eq!(round.set_points(), points(1, 3));
}

#[test]
fn the_third_set_is_not_played_at_two_set_points() {
    let mut round = pentago();
    ready_both(&mut round, 0);
    end_set(&mut round, Winner::P1, 1);
    ready_both(&mut round, 2);
    let events = end_set(&mut round, Winner::P1, 3);
    let result = round_ended(&events).expect("the round ends 2-0");
    assert_eq!(result.winner, Winner::P1);
    assert_eq!(result.set_points, points(4, 0));
    assert_eq!(result.points, points(2, 0));
    assert_eq!(result.reason.as_str(), "sets");
    assert_eq!(round.status(), MatchStatus::Finished);
    assert_eq!(
        refused(&mut round, Command::Ready { seat: Seat::P1 }, 4),
        ErrorCode::SetOver
    );
    assert_eq!(
        refused(&mut round, Command::StartSet, 4),
        ErrorCode::SetOver
    );
}

#[test]
fn win_draw_draw_wins_the_round_2_1() {
    let mut round = pentago();
    let mut last = Vec::new();
    for winner in [Winner::P1, Winner::Draw, Winner::Draw] {
        ready_both(&mut round, 0);
        last = end_set(&mut round, winner, 1);
    }
    let result = round_ended(&last).expect("three sets end the round");
    assert_eq!(result.winner, Winner::P1);
    assert_eq!(result.set_points, points(4, 2));
    assert_eq!(result.points, points(2, 0));
}

#[test]
fn win_loss_draw_is_a_drawn_round() {
    let mut round = pentago();
    let mut last = Vec::new();
    for winner in [Winner::P1, Winner::P2, Winner::Draw] {
        ready_both(&mut round, 0);
        last = end_set(&mut round, winner, 1);
    }
    let result = round_ended(&last).unwrap();
    assert_eq!(result.winner, Winner::Draw);
    assert_eq!(result.points, points(1, 1));
}

#[test]
fn a_draw_and_a_win_still_need_the_third_set() {
    let mut round = pentago();
    ready_both(&mut round, 0);
    end_set(&mut round, Winner::Draw, 1);
    ready_both(&mut round, 2);
    let events = end_set(&mut round, Winner::P1, 3);
    assert!(round_ended(&events).is_none());
    assert_eq!(round.status(), MatchStatus::BetweenSets);
}

#[test]
fn warnings_add_up_over_the_round_across_sets() {
    let mut round = pentago();
    let warn = |seat| Command::Warn {
        seat,
        reason: "conduct".into(),
    };
    ready_both(&mut round, 0);
    ok(&mut round, warn(Seat::P1), 1);
    end_set(&mut round, Winner::P1, 2);
    ok(&mut round, warn(Seat::P1), 3);
    ready_both(&mut round, 4);
    assert_eq!(round.warnings(), PerSeat::new(2, 0));
    let events = ok(&mut round, warn(Seat::P1), 5);
    assert_eq!(kinds(&events), ["warning", "round_ended"]);
    let result = round_ended(&events).unwrap();
    // The third warning loses the round at once, whatever the set score.
    assert_eq!(result.winner, Winner::P2);
    assert_eq!(result.points, points(0, 2));
    assert_eq!(result.reason.as_str(), "warnings");
    assert_eq!(round.status(), MatchStatus::Finished);
    assert_eq!(round.clock_deadline(), None);
}

#[test]
fn the_warnings_limit_is_configurable() {
    let mut config = config("pentago", None);
    config.warnings_limit = 1;
    let mut round = Round::new(config);
    let events = ok(
        &mut round,
        Command::Warn {
            seat: Seat::P2,
            reason: String::new(),
        },
        0,
    );
    assert_eq!(round_ended(&events).unwrap().winner, Winner::P1);
}

#[test]
fn the_turn_passes_only_at_the_press() {
    let mut round = pentago();
    ready_both(&mut round, 0);
    let events = ok(
        &mut round,
        Command::Move {
            seat: Seat::P1,
            mv: "d4ne".into(),
            press: false,
        },
        1_000,
    );
    assert_eq!(kinds(&events), ["moved"]);
    assert_eq!(round.to_move(), Some(Seat::P1));
    assert_eq!(round.awaiting_press(), Some(Seat::P1));
    // The opponent acting before the press.
    assert_eq!(
        refused(&mut round, mv(Seat::P2, "a1sw"), 2_000),
        ErrorCode::PressFirst
    );
    let events = ok(&mut round, Command::Press { seat: Seat::P1 }, 3_000);
    assert_eq!(kinds(&events), ["pressed"]);
    assert_eq!(round.to_move(), Some(Seat::P2));
    // p1's clock ran until the press, p2's runs from it.
    let clocks = round.clocks(5_000, 0).unwrap();
    assert_eq!(clocks.p1_ms, 15 * MIN - 3_000);
    assert_eq!(clocks.p2_ms, 15 * MIN - 2_000);
}

#[test]
fn a_press_before_the_move_is_complete_is_refused() {
    let mut round = pentago();
    ready_both(&mut round, 0);
    assert_eq!(
        refused(&mut round, Command::Press { seat: Seat::P1 }, 1),
        ErrorCode::MoveIncomplete
    );
    ok(
        &mut round,
        Command::Place {
            seat: Seat::P1,
            cell: "d4".into(),
        },
        2,
    );
    assert_eq!(
        refused(&mut round, Command::Press { seat: Seat::P1 }, 3),
        ErrorCode::MoveIncomplete
    );
    let events = ok(
        &mut round,
        Command::Rotate {
            seat: Seat::P1,
            quadrant: "ne".into(),
            dir: "cw".into(),
        },
        4,
    );
    assert_eq!(kinds(&events), ["rotated", "moved"]);
    assert!(
        matches!(&events[1], Event::Moved { seat: Seat::P1, mv, board: Some(_) } if mv == "d4ne"),
        "{events:?}"
    );
    ok(&mut round, Command::Press { seat: Seat::P1 }, 5);
}

#[test]
fn a_placement_is_final() {
    let mut round = pentago();
    ready_both(&mut round, 0);
    let place = |cell: &str| Command::Place {
        seat: Seat::P1,
        cell: cell.into(),
    };
    ok(&mut round, place("d4"), 1);
    assert_eq!(refused(&mut round, place("e4"), 2), ErrorCode::IllegalMove);
    assert_eq!(
        refused(&mut round, mv(Seat::P1, "e4ne"), 2),
        ErrorCode::IllegalMove
    );
}

#[test]
fn a_move_that_ends_the_set_needs_no_press() {
    let mut round = Round::new(config("pente", Some(ClockConfig::default())));
    ready_both(&mut round, 0);
    let moves = ["K10", "A1", "N10", "A3", "L10", "A5", "M10", "A7"];
    for (i, m) in moves.iter().enumerate() {
        let seat = if i % 2 == 0 { Seat::P1 } else { Seat::P2 };
        ok(&mut round, mv(seat, m), i as u64);
    }
    let events = ok(
        &mut round,
        Command::Move {
            seat: Seat::P1,
            mv: "O10".into(),
            press: false,
        },
        100,
    );
    assert_eq!(kinds(&events), ["moved", "set_ended"]);
    assert_eq!(round.status(), MatchStatus::BetweenSets);
    assert_eq!(round.clock_deadline(), None);
    assert_eq!(round.awaiting_press(), None);
}

#[test]
fn the_player_whose_time_runs_out_loses_the_set() {
    let mut round = pentago();
    ready_both(&mut round, 1_000);
    let deadline = round.clock_deadline().unwrap();
    assert_eq!(deadline, 1_000 + 15 * MIN);
    assert!(ok(&mut round, Command::Flag, deadline - 1).is_empty());
    let events = ok(&mut round, Command::Flag, deadline);
    match &events[0] {
        Event::SetEnded(result) => {
            assert_eq!(result.winner, Some(Seat::P2));
            assert_eq!(result.reason.as_str(), "time");
            assert_eq!(result.result.as_str(), "0-1");
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(round.clocks(deadline, 0).unwrap().p1_ms, 0);
}

#[test]
fn both_clocks_reset_at_the_start_of_each_set() {
    let mut round = pentago();
    ready_both(&mut round, 0);
    ok(&mut round, mv(Seat::P1, "a1sw"), 100_000);
    end_set(&mut round, Winner::P1, 200_000);
    ready_both(&mut round, 300_000);
    let clocks = round.clocks(300_000, 0).unwrap();
    assert_eq!((clocks.p1_ms, clocks.p2_ms), (15 * MIN, 15 * MIN));
    assert_eq!(clocks.running, Some(Seat::P2));
}

#[test]
fn the_increment_is_added_at_each_press() {
    let clock = ClockConfig {
        initial_ms: MIN,
        increment_ms: 5_000,
    };
    let mut round = Round::new(config("pente", Some(clock)));
    ready_both(&mut round, 0);
    ok(&mut round, mv(Seat::P1, "K10"), 10_000);
    assert_eq!(round.clocks(10_000, 0).unwrap().p1_ms, MIN - 10_000 + 5_000);
}

#[test]
fn the_arbiter_pauses_and_resumes_the_clocks() {
    let mut round = pentago();
    ready_both(&mut round, 0);
    ok(&mut round, Command::Pause, 10_000);
    assert_eq!(round.clock_deadline(), None);
    assert_eq!(
        refused(&mut round, mv(Seat::P1, "a1sw"), 20_000),
        ErrorCode::Paused
    );
    assert_eq!(
        refused(&mut round, Command::Pause, 20_000),
        ErrorCode::BadRequest
    );
    ok(&mut round, Command::Resume, 50_000);
    assert_eq!(round.clocks(50_000, 0).unwrap().p1_ms, 15 * MIN - 10_000);
    assert_eq!(round.clock_deadline(), Some(50_000 + 15 * MIN - 10_000));
}

#[test]
fn the_arbiter_adds_or_removes_clock_time() {
    let mut round = pentago();
    ready_both(&mut round, 0);
    ok(
        &mut round,
        Command::AdjustClock {
            seat: Seat::P2,
            delta_ms: 60_000,
        },
        1_000,
    );
    assert_eq!(round.clocks(1_000, 0).unwrap().p2_ms, 16 * MIN);
    // Taking all of the running player's time ends the set on time at once.
    ok(
        &mut round,
        Command::AdjustClock {
            seat: Seat::P1,
            delta_ms: -20 * MIN as i64,
        },
        2_000,
    );
    assert_eq!(round.clock_deadline(), Some(2_000));
    let events = ok(&mut round, Command::Flag, 2_000);
    assert_eq!(kinds(&events), ["set_ended"]);
}

#[test]
fn the_arbiter_declares_a_set_or_the_round() {
    let mut round = pentago();
    ready_both(&mut round, 0);
    let events = ok(
        &mut round,
        Command::Declare {
            scope: Scope::Set,
            winner: Winner::P2,
            reason: "illegal move claim upheld".into(),
        },
        1,
    );
    assert_eq!(kinds(&events), ["declared", "set_ended"]);
    let events = ok(
        &mut round,
        Command::Declare {
            scope: Scope::Round,
            winner: Winner::P1,
            reason: "opponent left".into(),
        },
        2,
    );
    let result = round_ended(&events).unwrap();
    assert_eq!(
        (result.winner, result.reason.as_str()),
        (Winner::P1, "arbiter")
    );
    assert_eq!(result.points, points(2, 0));
}

#[test]
fn a_resignation_loses_the_set() {
    let mut round = pentago();
    ready_both(&mut round, 0);
    let events = ok(&mut round, Command::Resign { seat: Seat::P1 }, 1);
    match &events[0] {
        Event::SetEnded(result) => {
            assert_eq!(
                (result.winner, result.reason.as_str()),
                (Some(Seat::P2), "resign")
            )
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(
        refused(&mut round, Command::Resign { seat: Seat::P1 }, 2),
        ErrorCode::SetOver
    );
}

#[test]
fn players_of_casual_pente_and_quoridor_may_agree_a_set_drawn() {
    for game in ["pente", "quoridor"] {
        let mut round = Round::new(config(game, Some(ClockConfig::default())));
        // Not before a set is on.
        assert_eq!(
            refused(&mut round, Command::OfferDraw { seat: Seat::P1 }, 0),
            ErrorCode::SetOver
        );
        ready_both(&mut round, 0);
        let first = if game == "pente" { "K10" } else { "e2" };
        assert_eq!(
            kinds(&ok(&mut round, Command::OfferDraw { seat: Seat::P1 }, 1)),
            ["draw_offered"]
        );
        assert_eq!(round.draw_offer(), Some(Seat::P1));
        // Waiting for the answer; nothing to decline for the offerer.
        assert_eq!(
            refused(&mut round, Command::OfferDraw { seat: Seat::P1 }, 2),
            ErrorCode::BadRequest
        );
        assert_eq!(
            refused(&mut round, Command::DeclineDraw { seat: Seat::P1 }, 2),
            ErrorCode::BadRequest
        );
        assert_eq!(
            kinds(&ok(&mut round, Command::DeclineDraw { seat: Seat::P2 }, 3)),
            ["draw_declined"]
        );
        assert_eq!(round.draw_offer(), None);
        // One offer per move: again only after a move.
        assert_eq!(
            refused(&mut round, Command::OfferDraw { seat: Seat::P1 }, 4),
            ErrorCode::BadRequest
        );
        ok(&mut round, mv(Seat::P1, first), 5);
        ok(&mut round, Command::OfferDraw { seat: Seat::P1 }, 6);
        // The opponent's move answers no.
        let reply = if game == "pente" { "L11" } else { "e8" };
        ok(&mut round, mv(Seat::P2, reply), 7);
        assert_eq!(round.draw_offer(), None);
        ok(&mut round, Command::OfferDraw { seat: Seat::P2 }, 8);
        // The other seat's offer accepts it: the set is drawn by agreement.
        let events = ok(&mut round, Command::OfferDraw { seat: Seat::P1 }, 9);
        assert_eq!(kinds(&events), ["set_ended"]);
        let Event::SetEnded(result) = &events[0] else {
            unreachable!()
        };
        assert_eq!((result.winner, result.reason.as_str()), (None, "agreement"));
        assert_eq!(round.set_points(), points(1, 1));
        assert_eq!(round.draw_offer(), None);
    }
}

#[test]
fn an_open_draw_offer_ends_with_the_round_however_it_ends() {
    // The arbiter decides the round, or a third warning ends it, while an offer is open.
    for by_warnings in [false, true] {
        let mut round = Round::new(config("pente", None));
        ready_both(&mut round, 0);
        ok(&mut round, Command::OfferDraw { seat: Seat::P1 }, 1);
        if by_warnings {
            for _ in 0..3 {
                ok(
                    &mut round,
                    Command::Warn {
                        seat: Seat::P2,
                        reason: "noise".into(),
                    },
                    2,
                );
            }
        } else {
            ok(
                &mut round,
                Command::Declare {
                    scope: Scope::Round,
                    winner: Winner::P1,
                    reason: "left the hall".into(),
                },
                2,
            );
        }
        assert_eq!(round.status(), MatchStatus::Finished);
        assert_eq!(round.draw_offer(), None);
        assert_eq!(round.state("m", 0, 3, 0).draw_offer, None);
        assert_eq!(
            refused(&mut round, Command::OfferDraw { seat: Seat::P2 }, 3),
            ErrorCode::SetOver
        );
    }
}

#[test]
fn pentago_and_tournament_matches_have_no_draw_offers() {
    let mut round = pentago();
    ready_both(&mut round, 0);
    assert_eq!(
        refused(&mut round, Command::OfferDraw { seat: Seat::P1 }, 1),
        ErrorCode::BadRequest
    );
    let mut tournament = config("pente", None);
    tournament.tournament = Some("t1".into());
    let mut round = Round::new(tournament);
    ready_both(&mut round, 0);
    assert_eq!(
        refused(&mut round, Command::OfferDraw { seat: Seat::P2 }, 1),
        ErrorCode::BadRequest
    );
    let mut house = config("quoridor", None);
    house.house_bot = Some(Seat::P2);
    let mut round = Round::new(house);
    ready_both(&mut round, 0);
    assert_eq!(
        refused(&mut round, Command::OfferDraw { seat: Seat::P1 }, 1),
        ErrorCode::BadRequest
    );
}

#[test]
fn a_claim_comes_after_the_opponents_press_and_is_about_the_last_move() {
    let mut round = pentago();
    ready_both(&mut round, 0);
    let claim = |seat| Command::Claim {
        seat,
        text: "that marble was moved".into(),
    };
    assert_eq!(
        refused(&mut round, claim(Seat::P2), 1),
        ErrorCode::Forbidden
    );
    ok(
        &mut round,
        Command::Move {
            seat: Seat::P1,
            mv: "a1sw".into(),
            press: false,
        },
        2,
    );
    assert_eq!(
        refused(&mut round, claim(Seat::P2), 3),
        ErrorCode::PressFirst
    );
    ok(&mut round, Command::Press { seat: Seat::P1 }, 4);
    // The mover cannot claim against their own move.
    assert_eq!(
        refused(&mut round, claim(Seat::P1), 5),
        ErrorCode::Forbidden
    );
    assert_eq!(kinds(&ok(&mut round, claim(Seat::P2), 5)), ["claim"]);
    // One claim per move.
    assert_eq!(
        refused(&mut round, claim(Seat::P2), 6),
        ErrorCode::Forbidden
    );
    // Once the claimant has moved, the old move can no longer be claimed.
    ok(&mut round, mv(Seat::P2, "f6ne"), 7);
    assert_eq!(
        refused(&mut round, claim(Seat::P2), 8),
        ErrorCode::Forbidden
    );
}

#[test]
fn the_arbiter_rules_on_each_claim_once_and_upholding_may_warn_the_opponent() {
    use hakem_protocol::{ClaimStatus, ClaimView};
    let mut round = pentago();
    ready_both(&mut round, 0);
    let claim = |seat| Command::Claim {
        seat,
        text: "the quadrant was turned twice".into(),
    };
    let resolve = |claim, upheld, warn| Command::ResolveClaim {
        claim,
        upheld,
        reason: "seen by the arbiter".into(),
        warn,
    };
    // Nothing to rule on yet.
    assert_eq!(
        refused(&mut round, resolve(1, true, false), 1),
        ErrorCode::BadRequest
    );
    ok(&mut round, mv(Seat::P1, "a1sw"), 2);
    let events = ok(&mut round, claim(Seat::P2), 3);
    // The claim says which move it is about: set 1, ply 1.
    assert!(
        matches!(
            &events[..],
            [Event::Claim {
                id: Some(1),
                set: Some(1),
                ply: Some(1),
                ..
            }]
        ),
        "{events:?}"
    );
    ok(&mut round, mv(Seat::P2, "f6ne"), 4);
    ok(&mut round, claim(Seat::P1), 5);
    assert_eq!(
        round.claims().iter().map(|c| c.status).collect::<Vec<_>>(),
        [ClaimStatus::Open, ClaimStatus::Open]
    );
    // A warning comes only with an upheld claim.
    assert_eq!(
        refused(&mut round, resolve(1, false, true), 6),
        ErrorCode::BadRequest
    );
    // Upheld with a warning: p2 claimed, so p1 is warned, with the ruling's reason.
    let events = ok(&mut round, resolve(1, true, true), 6);
    assert_eq!(kinds(&events), ["claim_resolved", "warning"]);
    assert!(
        matches!(&events[1], Event::Warning { seat: Seat::P1, count: 1, reason } if reason == "seen by the arbiter")
    );
    // Each claim is ruled on once.
    assert_eq!(
        refused(&mut round, resolve(1, false, false), 7),
        ErrorCode::BadRequest
    );
    assert_eq!(
        kinds(&ok(&mut round, resolve(2, false, false), 7)),
        ["claim_resolved"]
    );
    assert_eq!(
        refused(&mut round, resolve(3, true, false), 8),
        ErrorCode::BadRequest
    );
    let long = Command::ResolveClaim {
        claim: 2,
        upheld: true,
        reason: "x".repeat(501),
        warn: false,
    };
    assert_eq!(refused(&mut round, long, 8), ErrorCode::BadRequest);
    assert_eq!(
        round.claims(),
        [
            ClaimView {
                id: 1,
                seat: Seat::P2,
                text: "the quadrant was turned twice".into(),
                set: 1,
                ply: 1,
                status: ClaimStatus::Upheld,
                ruling: Some("seen by the arbiter".into()),
            },
            ClaimView {
                id: 2,
                seat: Seat::P1,
                text: "the quadrant was turned twice".into(),
                set: 1,
                ply: 2,
                status: ClaimStatus::Rejected,
                ruling: Some("seen by the arbiter".into()),
            },
        ]
    );
}

#[test]
fn an_untimed_quoridor_set_is_drawn_at_the_ply_limit() {
    let mut config = config("quoridor", None);
    config.untimed_ply_limit = 4;
    let mut round = Round::new(config);
    ready_both(&mut round, 0);
    assert_eq!(round.clock_deadline(), None);
    ok(&mut round, mv(Seat::P1, "e2"), 1);
    ok(&mut round, mv(Seat::P2, "e8"), 2);
    ok(&mut round, mv(Seat::P1, "e3"), 3);
    let events = ok(&mut round, mv(Seat::P2, "e7"), 4);
    match &events[1] {
        Event::SetEnded(result) => {
            assert_eq!(
                (result.winner, result.reason.as_str()),
                (None, "move_limit")
            )
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn the_stored_events_rebuild_the_same_round() {
    let mut round = pentago();
    let mut log = Vec::new();
    let mut run = |round: &mut Round, command: Command, now: u64| {
        let events = ok(round, command, now);
        log.extend(events.into_iter().map(|e| (e, now)));
    };
    run(&mut round, Command::Ready { seat: Seat::P1 }, 0);
    run(&mut round, Command::Ready { seat: Seat::P2 }, 0);
    run(&mut round, mv(Seat::P1, "a1sw"), 1_000);
    run(
        &mut round,
        Command::Place {
            seat: Seat::P2,
            cell: "f6".into(),
        },
        2_000,
    );
    run(
        &mut round,
        Command::Warn {
            seat: Seat::P1,
            reason: "noise".into(),
        },
        2_500,
    );
    let mut rebuilt = pentago();
    for (event, now) in &log {
        rebuilt.apply(event, *now);
    }
    assert_eq!(format!("{rebuilt:?}"), format!("{round:?}"));
}

#[test]
fn bad_settings_are_refused_when_a_match_is_created() {
    let players = PerSeat::<String>::default();
    assert!(MatchConfig::new("chess", None, 3, None, 3, players.clone()).is_err());
    assert!(MatchConfig::new("pentago", Some("renju"), 3, None, 3, players.clone()).is_err());
    assert!(MatchConfig::new("pentago", None, 0, None, 3, players.clone()).is_err());
    assert!(MatchConfig::new("pentago", None, 3, None, 0, players.clone()).is_err());
    let tiny = ClockConfig {
        initial_ms: 10,
        increment_ms: 0,
    };
    assert!(MatchConfig::new("pentago", None, 3, Some(tiny), 3, players.clone()).is_err());
    let ok = MatchConfig::new("pente", None, 3, None, 3, players).unwrap();
    assert_eq!(ok.variant, "tournament");
    assert_eq!(ok.players.p1, "Player 1");
}
