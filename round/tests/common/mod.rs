//! Random participants for the round's property tests: intents resolved against the round as
//! it stands, so that most commands are ones a real player or arbiter might send (and some are
//! refused, which must change nothing).

// Each test binary that includes this module uses a part of it.
#![allow(dead_code)]

use hakem_protocol::{ClockConfig, PerSeat, Scope, Seat, Winner};
use hakem_round::{Command, MatchConfig, Round};
use proptest::prelude::*;

pub const WALL: u64 = 1_764_480_000_000;

/// What a random participant does; resolved against the round as it stands, so that most
/// commands are ones a real player might send (and some are refused, which must change nothing).
#[derive(Clone, Debug)]
pub enum Intent {
    Ready(bool),
    /// A legal move of the seat to act (chosen by index), pressed or not.
    Move(usize, bool),
    /// Pentago in halves: place (the cell of a legal move), then turn.
    Place(usize),
    Rotate(usize),
    Press(bool),
    Resign(bool),
    OfferDraw(bool),
    DeclineDraw(bool),
    Claim(bool),
    Warn(bool),
    Pause,
    Resume,
    Adjust(bool, i64),
    StartSet,
    Declare(bool, u8),
    Connect(bool, bool),
    /// Time passes and the room's timer looks at the clock.
    Wait(u64),
    Expire,
}

pub fn seat(p1: bool) -> Seat {
    if p1 {
        Seat::P1
    } else {
        Seat::P2
    }
}

/// An arbiter's clock adjustment: mostly what an arbiter would type, sometimes the extremes a
/// hostile one would.
fn delta() -> impl Strategy<Value = i64> {
    prop_oneof![
        6 => -120_000i64..120_000,
        1 => Just(i64::MAX),
        1 => Just(i64::MIN),
        1 => any::<i64>(),
        1 => -90_000_000i64..90_000_000,
    ]
}

pub fn intent() -> impl Strategy<Value = Intent> {
    prop_oneof![
        3 => any::<bool>().prop_map(Intent::Ready),
        12 => (any::<usize>(), prop::bool::weighted(0.8)).prop_map(|(i, p)| Intent::Move(i, p)),
        3 => any::<usize>().prop_map(Intent::Place),
        3 => any::<usize>().prop_map(Intent::Rotate),
        4 => any::<bool>().prop_map(Intent::Press),
        1 => any::<bool>().prop_map(Intent::Resign),
        1 => any::<bool>().prop_map(Intent::Claim),
        1 => any::<bool>().prop_map(Intent::Warn),
        1 => Just(Intent::Pause),
        1 => Just(Intent::Resume),
        1 => (any::<bool>(), delta()).prop_map(|(s, d)| Intent::Adjust(s, d)),
        1 => Just(Intent::StartSet),
        1 => (any::<bool>(), 0u8..3).prop_map(|(s, w)| Intent::Declare(s, w)),
        2 => (any::<bool>(), any::<bool>()).prop_map(|(s, c)| Intent::Connect(s, c)),
        3 => (0u64..200_000).prop_map(Intent::Wait),
        1 => Just(Intent::Expire),
    ]
}

/// [`intent`] with draw offers and refusals too (a strategy of its own, so that the stored
/// regressions of the one above still replay what they found).
pub fn intent_with_draws() -> impl Strategy<Value = Intent> {
    prop_oneof![
        12 => intent(),
        2 => any::<bool>().prop_map(Intent::OfferDraw),
        1 => any::<bool>().prop_map(Intent::DeclineDraw),
    ]
}

pub fn command(round: &Round, intent: &Intent, now: &mut u64) -> Command {
    let mover = round.to_move().unwrap_or(Seat::P1);
    let legal = round.legal_moves(mover);
    let pick = |i: usize| legal.get(i % legal.len().max(1)).cloned();
    match intent {
        Intent::Ready(p1) => Command::Ready { seat: seat(*p1) },
        Intent::Move(i, press) => Command::Move {
            seat: mover,
            mv: pick(*i).unwrap_or_else(|| "a1".into()),
            press: *press,
        },
        Intent::Place(i) => Command::Place {
            seat: mover,
            cell: pick(*i).map_or_else(|| "a1".into(), |m| m.chars().take(2).collect()),
        },
        Intent::Rotate(i) => {
            let turn = pick(*i).unwrap_or_default();
            Command::Rotate {
                seat: mover,
                quadrant: turn.chars().skip(2).take(2).collect(),
                dir: if turn.ends_with('\'') { "ccw" } else { "cw" }.into(),
            }
        }
        Intent::Press(other) => Command::Press {
            seat: if *other { mover.other() } else { mover },
        },
        Intent::Resign(p1) => Command::Resign { seat: seat(*p1) },
        Intent::OfferDraw(p1) => Command::OfferDraw { seat: seat(*p1) },
        Intent::DeclineDraw(p1) => Command::DeclineDraw { seat: seat(*p1) },
        Intent::Claim(p1) => Command::Claim {
            seat: seat(*p1),
            text: "he turned two quadrants".into(),
        },
        Intent::Warn(p1) => Command::Warn {
            seat: seat(*p1),
            reason: "noise".into(),
        },
        Intent::Pause => Command::Pause,
        Intent::Resume => Command::Resume,
        Intent::Adjust(p1, delta_ms) => Command::AdjustClock {
            seat: seat(*p1),
            delta_ms: *delta_ms,
        },
        Intent::StartSet => Command::StartSet,
        Intent::Declare(set, winner) => Command::Declare {
            scope: if *set { Scope::Set } else { Scope::Round },
            winner: [Winner::P1, Winner::P2, Winner::Draw][usize::from(*winner)],
            reason: "arbiter's decision".into(),
        },
        Intent::Connect(p1, on) => {
            if *on {
                Command::Connected { seat: seat(*p1) }
            } else {
                Command::Disconnected { seat: seat(*p1) }
            }
        }
        Intent::Wait(ms) => {
            *now += ms;
            Command::Flag
        }
        Intent::Expire => Command::Expire,
    }
}

pub fn config(game: usize, timed: bool) -> MatchConfig {
    let (game, variant) = [
        ("pentago", "tr"),
        ("pentago", "classic"),
        ("quoridor", "standard"),
        ("pente", "tournament"),
    ][game];
    let clock = timed.then_some(ClockConfig {
        initial_ms: 60_000,
        increment_ms: 1_000,
    });
    let mut config = MatchConfig::new(
        game,
        Some(variant),
        3,
        clock,
        3,
        PerSeat::new("Ayşe".into(), "Bora".into()),
    )
    .unwrap();
    config.untimed_ply_limit = 60;
    config
}
