//! The room's timer against random players and arbiters: the room sleeps until the round's
//! clock deadline and then sends `Flag`, as `server/src/room/actor.rs` does. Whatever anyone
//! sends (clock adjustments of any size included), a deadline that has fired never comes back:
//! after the flag the next deadline is later or there is none, so a room can never fire its
//! timer in a loop.

mod common;

use common::{command, config, intent, Intent, WALL};
use hakem_round::{Command, Round};
use proptest::prelude::*;

/// What the room does while time passes: fires at each deadline on the way to `until`.
fn wait(round: &mut Round, now: &mut u64, until: u64, seq: &mut u64) -> Result<(), TestCaseError> {
    let mut fired = 0;
    while let Some(deadline) = round.clock_deadline() {
        if deadline > until {
            break;
        }
        *now = (*now).max(deadline);
        if let Ok((next, frames)) = round.step(Command::Flag, *now, WALL, "m", *seq + 1) {
            *seq += frames.len() as u64;
            *round = next;
        }
        fired += 1;
        let after = round.clock_deadline();
        prop_assert!(
            !matches!(after, Some(later) if later <= deadline),
            "the timer fired at {} and is due again at {:?}",
            deadline,
            after
        );
        // One flag per set at most, and a round has a handful of sets.
        prop_assert!(fired <= 8, "the timer fired {} times in one wait", fired);
    }
    *now = (*now).max(until);
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    #[test]
    fn a_deadline_fires_once(
        game in 0usize..4,
        intents in prop::collection::vec(intent(), 1..250),
    ) {
        let mut round = Round::new(config(game, true));
        let mut now = 0u64;
        let mut seq = 0u64;
        for intent in &intents {
            if let Intent::Wait(ms) = intent {
                let until = now + ms;
                wait(&mut round, &mut now, until, &mut seq)?;
                continue;
            }
            let command = command(&round, intent, &mut now);
            if let Ok((next, frames)) = round.step(command, now, WALL, "m", seq + 1) {
                seq += frames.len() as u64;
                round = next;
            }
            if let Some(deadline) = round.clock_deadline() {
                prop_assert!(
                    deadline <= now + hakem_round::clock::MAX_CLOCK_MS,
                    "a deadline {} ms away", deadline - now
                );
            }
            // A deadline already due fires at once, as the room's timer would.
            let until = now;
            wait(&mut round, &mut now, until, &mut seq)?;
        }
    }
}

#[test]
fn an_adjustment_beyond_a_day_is_refused_and_changes_nothing() {
    use hakem_protocol::{ErrorCode, Seat};
    let mut round = Round::new(config(0, true));
    for command in [
        Command::Ready { seat: Seat::P1 },
        Command::Ready { seat: Seat::P2 },
    ] {
        round.handle(command, 0).unwrap();
    }
    if round.clock_deadline().is_none() {
        round.handle(Command::StartSet, 0).unwrap();
    }
    let before = round.state("m", 0, 10, WALL);
    for delta_ms in [i64::MAX, i64::MIN, 86_400_001, -86_400_001] {
        let refusal = round
            .handle(
                Command::AdjustClock {
                    seat: Seat::P1,
                    delta_ms,
                },
                10,
            )
            .unwrap_err();
        assert_eq!(refusal.code, ErrorCode::BadRequest, "{delta_ms}");
    }
    // 60 s left: adding a whole day would hold more than a day.
    let refusal = round
        .handle(
            Command::AdjustClock {
                seat: Seat::P1,
                delta_ms: 86_400_000,
            },
            10,
        )
        .unwrap_err();
    assert_eq!(refusal.code, ErrorCode::BadRequest);
    assert_eq!(round.state("m", 0, 10, WALL), before);
    // Taking a day away leaves nothing on the clock, and the flag falls at once.
    round
        .handle(
            Command::AdjustClock {
                seat: Seat::P1,
                delta_ms: -86_400_000,
            },
            10,
        )
        .unwrap();
    assert_eq!(round.clock_deadline(), Some(10));
}
