//! Spectators who see a match late (a tournament's anti-cheat setting): the actions held back
//! from them, and the round as they see it. Players and the arbiter are not held back.

use std::collections::VecDeque;
use std::sync::Arc;

use hakem_protocol::{Event, EventFrame, SpectatorDelay};
use hakem_round::{Millis, Round};
use tokio::time::Instant;

/// Entries held back at most. Past it, the newest action joins the entry before it and is
/// shown with it, when the later of the two is due: nothing is ever shown early (a player who
/// reconnects again and again cannot push moves out), and what is held stays bounded by what
/// players may send over the delay.
const MAX_HELD: usize = 2048;

/// Actions held back together: shown once `due` has come and `delay.moves` moves were made
/// after the last of them.
struct Held<T> {
    due: Instant,
    /// Moves made up to and with the last action.
    moves_at: u64,
    items: Vec<T>,
}

pub(super) struct Delayed<T> {
    pub delay: SpectatorDelay,
    /// The round after event `shown_seq`, as spectators see it.
    pub shown: Arc<Round>,
    pub shown_seq: u64,
    held: VecDeque<Held<T>>,
    /// Moves made in the match so far.
    moves: u64,
}

impl<T> Delayed<T> {
    pub fn new(delay: SpectatorDelay, shown: Round, shown_seq: u64) -> Delayed<T> {
        Delayed {
            delay,
            shown: Arc::new(shown),
            shown_seq,
            held: VecDeque::new(),
            moves: 0,
        }
    }

    /// Holds back an action whose events are `frames`, until `due`.
    pub fn hold(&mut self, due: Instant, frames: &[EventFrame], item: T) {
        self.count_moves(frames);
        // A marble placed and not yet turned is the first half of the move to come: it is
        // shown with that move, not before.
        let half = frames
            .iter()
            .any(|f| matches!(f.event, Event::Placed { .. }))
            && !frames.iter().any(|f| {
                matches!(
                    f.event,
                    Event::Moved { .. } | Event::SetEnded(_) | Event::RoundEnded(_)
                )
            });
        let moves_at = self.moves + u64::from(half);
        let full = self.held.len() >= MAX_HELD;
        match self.held.back_mut() {
            Some(last) if full => {
                last.due = last.due.max(due);
                last.moves_at = last.moves_at.max(moves_at);
                last.items.push(item);
            }
            _ => self.held.push_back(Held {
                due,
                moves_at,
                items: vec![item],
            }),
        }
    }

    fn count_moves(&mut self, frames: &[EventFrame]) {
        self.moves += frames
            .iter()
            .filter(|f| matches!(f.event, Event::Moved { .. }))
            .count() as u64;
    }

    /// Moves made after the action's.
    fn moves_after(&self, held: &Held<T>) -> u64 {
        self.moves.saturating_sub(held.moves_at)
    }

    fn releasable(&self, held: &Held<T>, now: Instant) -> bool {
        held.due <= now && self.moves_after(held) >= u64::from(self.delay.moves)
    }

    /// When the oldest held action is due, if only time holds it back (a move to come
    /// releases the others).
    pub fn next_due(&self) -> Option<Instant> {
        let first = self.held.front()?;
        (self.moves_after(first) >= u64::from(self.delay.moves)).then_some(first.due)
    }

    /// Takes the actions to show now, oldest first: those due, or with `all` every one (the
    /// round is over).
    pub fn release(&mut self, now: Instant, all: bool) -> Vec<T> {
        let mut out = Vec::new();
        while let Some(first) = self.held.front() {
            if !(all || self.releasable(first, now)) {
                break;
            }
            out.extend(
                self.held
                    .pop_front()
                    .into_iter()
                    .flat_map(|held| held.items),
            );
        }
        out
    }

    /// Applies events now shown to the round spectators see; its clocks read what they read
    /// right after the last of them, running from `now`.
    pub fn show(&mut self, frames: &[EventFrame], now: Millis) {
        let round = Arc::make_mut(&mut self.shown);
        let mut clocks = None;
        for frame in frames {
            round.apply(&frame.event, now);
            clocks = frame.clocks.or(clocks);
            self.shown_seq = frame.seq;
        }
        if let Some(reading) = clocks {
            round.restore_clocks(&reading, now);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hakem_protocol::{PerSeat, Seat};
    use hakem_round::{Command, MatchConfig};
    use std::time::Duration;

    /// A Pentago match under way: both ready, and the frames of each step after.
    fn steps() -> (Round, Vec<Vec<EventFrame>>) {
        let config = MatchConfig::new("pentago", None, 3, None, 3, PerSeat::default()).unwrap();
        let mut round = Round::new(config);
        let mut all = Vec::new();
        let mut seq = 1;
        let commands = [
            Command::Ready { seat: Seat::P1 },
            Command::Ready { seat: Seat::P2 },
        ];
        for command in commands {
            let (next, frames) = round.step(command, 0, 0, "m", seq).unwrap();
            seq += frames.len() as u64;
            round = next;
            all.push(frames);
        }
        for _ in 0..3 {
            let seat = round.to_move().unwrap();
            let command = Command::Move {
                seat,
                mv: round.legal_moves(seat)[0].clone(),
                press: true,
            };
            let (next, frames) = round.step(command, 0, 0, "m", seq).unwrap();
            seq += frames.len() as u64;
            round = next;
            all.push(frames);
        }
        (round, all)
    }

    #[test]
    fn actions_are_shown_when_old_enough_and_enough_moves_came_after() {
        let (end, steps) = steps();
        let first = Round::new(end.config().clone());
        let now = Instant::now();
        let delay = SpectatorDelay {
            seconds: 10,
            moves: 1,
        };
        let mut delayed = Delayed::new(delay, first, 0);
        for (i, frames) in steps.iter().enumerate() {
            delayed.hold(now + Duration::from_secs(10 + i as u64), frames, i);
        }
        // Nothing is old enough yet.
        assert!(delayed.release(now, false).is_empty());
        // All are old enough; a move came after each but the last, which waits for a move
        // to come.
        let shown = delayed.release(now + Duration::from_secs(60), false);
        assert_eq!(shown, [0, 1, 2, 3]);
        assert_eq!(
            delayed.next_due(),
            None,
            "only a move releases the last one"
        );
        for i in shown {
            delayed.show(&steps[i], 0);
        }
        assert_eq!(delayed.shown_seq, steps[3].last().unwrap().seq);
        assert_eq!(delayed.shown.moves().len(), 2);
        // The round's end shows the rest.
        let rest = delayed.release(now, true);
        assert_eq!(rest, [4]);
        delayed.show(&steps[4], 0);
        assert_eq!(delayed.shown.moves(), end.moves());
        assert_eq!(delayed.shown_seq, steps[4].last().unwrap().seq);
    }

    #[test]
    fn a_marble_placed_and_not_yet_turned_waits_for_its_move() {
        let (round, steps) = steps();
        let mut seq = steps.last().unwrap().last().unwrap().seq + 1;
        let seat = round.to_move().unwrap();
        let cell = round.legal_moves(seat)[0][..2].to_string();
        let (round, placed) = round
            .step(Command::Place { seat, cell }, 0, 0, "m", seq)
            .unwrap();
        seq += placed.len() as u64;
        let rotate = Command::Rotate {
            seat,
            quadrant: "sw".into(),
            dir: "cw".into(),
        };
        let (round, turned) = round.step(rotate, 0, 0, "m", seq).unwrap();
        assert!(turned
            .iter()
            .any(|f| matches!(f.event, Event::Moved { .. })));
        let now = Instant::now();
        let delay = SpectatorDelay {
            seconds: 0,
            moves: 1,
        };
        let mut delayed = Delayed::new(delay, Round::new(round.config().clone()), 0);
        delayed.hold(now, &placed, "placed");
        assert!(
            delayed.release(now, false).is_empty(),
            "the marble waits for its move"
        );
        delayed.hold(now, &turned, "turned");
        // One move was made, the one the marble began: one behind, neither is shown yet.
        assert!(delayed.release(now, false).is_empty());
        seq += turned.len() as u64;
        let (round, pressed) = round.step(Command::Press { seat }, 0, 0, "m", seq).unwrap();
        delayed.hold(now, &pressed, "pressed");
        seq += pressed.len() as u64;
        let seat = round.to_move().unwrap();
        let next = Command::Move {
            seat,
            mv: round.legal_moves(seat)[0].clone(),
            press: true,
        };
        let (_, next) = round.step(next, 0, 0, "m", seq).unwrap();
        delayed.hold(now, &next, "next");
        assert_eq!(delayed.release(now, false), ["placed", "turned", "pressed"]);
    }

    #[test]
    fn time_alone_holds_back_until_due() {
        let (end, steps) = steps();
        let now = Instant::now();
        let delay = SpectatorDelay {
            seconds: 5,
            moves: 0,
        };
        let mut delayed = Delayed::new(delay, Round::new(end.config().clone()), 0);
        delayed.hold(now + Duration::from_secs(5), &steps[0], 0);
        delayed.hold(now + Duration::from_secs(6), &steps[1], 1);
        assert_eq!(delayed.next_due(), Some(now + Duration::from_secs(5)));
        assert_eq!(delayed.release(now + Duration::from_secs(5), false), [0]);
        assert_eq!(delayed.next_due(), Some(now + Duration::from_secs(6)));
    }

    #[test]
    fn past_the_bound_actions_are_held_together_and_none_is_shown_early() {
        let (end, steps) = steps();
        let now = Instant::now();
        let delay = SpectatorDelay {
            seconds: 3600,
            moves: 0,
        };
        let mut delayed = Delayed::new(delay, Round::new(end.config().clone()), 0);
        let count = MAX_HELD + 10;
        for i in 0..count {
            let due = now + Duration::from_secs(3600 + i as u64);
            delayed.hold(due, &steps[0], i);
        }
        assert_eq!(delayed.held.len(), MAX_HELD);
        assert!(delayed.release(now, false).is_empty());
        let last_own = now + Duration::from_secs(3600 + MAX_HELD as u64 - 1);
        let shown = delayed.release(last_own, false);
        assert_eq!(shown, (0..MAX_HELD - 1).collect::<Vec<_>>());
        // The last entry holds the rest until the newest of them is due.
        assert!(delayed.release(last_own, false).is_empty());
        let newest = now + Duration::from_secs(3600 + count as u64 - 1);
        let rest = delayed.release(newest, false);
        assert_eq!(rest, (MAX_HELD - 1..count).collect::<Vec<_>>());
    }
}
