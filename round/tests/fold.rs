//! The one fold of a match (`hakem_protocol::MatchState::apply`) against the round itself:
//! random players and arbiters act on a round, and after every accepted command, folding its
//! events into the state a client had gives exactly the round's own state. Clients that follow
//! the fold therefore see what the server sees, without any rules of their own.

mod common;

use common::{command, config, intent, intent_with_draws, Intent, WALL};
use hakem_protocol::MatchState;
use hakem_round::Round;
use proptest::prelude::*;

/// Plays `intents` on a round and checks after each command that the client's fold of the
/// events is the round's own state.
fn fold_follows_the_round(
    game: usize,
    timed: bool,
    intents: &[Intent],
) -> Result<(), TestCaseError> {
    let mut round = Round::new(config(game, timed));
    let mut now = 0u64;
    let mut seq = 0u64;
    let mut client: MatchState = round.state("m", 0, now, WALL);
    for intent in intents {
        let command = command(&round, intent, &mut now);
        let mut moved_on = false;
        match round.step(command.clone(), now, WALL, "m", seq + 1) {
            Ok((next, frames)) => {
                moved_on = !frames.is_empty();
                for frame in &frames {
                    // Through the wire, as a client gets it.
                    let text = serde_json::to_string(frame).unwrap();
                    let frame = serde_json::from_str(&text).unwrap();
                    client.apply(&frame).unwrap();
                }
                seq += frames.len() as u64;
                round = next;
            }
            Err(_) => {
                // A refusal changes nothing: the round's state is still the client's.
            }
        }
        let mut truth = round.state("m", seq, now, WALL);
        if !moved_on {
            // Time passed with no event: a client counts a running clock down itself from
            // the last reading, which is all the fold knows.
            truth.clocks = client.clocks;
        }
        prop_assert_eq!(&client, &truth, "after {:?}", command);
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    #[test]
    fn folding_the_events_gives_the_rounds_own_state(
        game in 0usize..4,
        timed in any::<bool>(),
        intents in prop::collection::vec(intent(), 1..250),
    ) {
        fold_follows_the_round(game, timed, &intents)?;
    }

    #[test]
    fn folding_the_events_gives_the_rounds_own_state_with_draw_offers(
        game in 2usize..4,
        timed in any::<bool>(),
        intents in prop::collection::vec(intent_with_draws(), 1..250),
    ) {
        fold_follows_the_round(game, timed, &intents)?;
    }
}
