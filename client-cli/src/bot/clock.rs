//! The bot's time management: how long to think about one move.

use std::time::Duration;

use hakem_games::GameKind;

/// The thinking time of every move of an untimed match, unless `--max-think` says otherwise;
/// the engines' levels cap it further.
pub const UNTIMED_BUDGET: Duration = Duration::from_secs(2);

/// The most thinking time per move in a timed match, unless `--max-think` says otherwise.
pub const TIMED_CAP: Duration = Duration::from_secs(10);

/// Always left on the clock for the network and the engine's overrun.
const SAFETY_MS: u64 = 250;

/// The bot's own moves that may still come in a set, as an estimate: exact for Pentago (the
/// board fills up), a floor for the others so that each move takes a fraction of what is left
/// and the clock never runs out however long the set goes.
pub fn moves_left(kind: GameKind, plies: u32) -> u32 {
    match kind {
        GameKind::Pentago => 36u32.saturating_sub(plies).div_ceil(2).max(1),
        GameKind::Quoridor => 40u32.saturating_sub(plies / 2).max(15),
        GameKind::Pente => 30u32.saturating_sub(plies / 2).max(12),
    }
}

/// The thinking time for one move with `remaining_ms` on the clock: an even share of the time
/// over the moves left (and a margin of two), plus most of the increment, never more than
/// `cap` and never closer to zero than a safety margin of 250 ms and a twentieth.
pub fn budget(
    remaining_ms: u64,
    increment_ms: u64,
    moves_left: u32,
    cap: Option<Duration>,
) -> Duration {
    let safety = SAFETY_MS + remaining_ms / 20;
    let usable = remaining_ms.saturating_sub(safety);
    let share = usable / (u64::from(moves_left) + 2) + increment_ms / 4 * 3;
    Duration::from_millis(share.min(usable)).min(cap.unwrap_or(TIMED_CAP))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_budget_is_a_share_of_the_time_and_never_all_of_it() {
        // 60 s for at most 18 moves: about 2.8 s each.
        let b = budget(60_000, 0, 18, None);
        assert!(
            b > Duration::from_millis(2_500) && b < Duration::from_millis(3_000),
            "{b:?}"
        );
        // Capped.
        assert_eq!(
            budget(900_000, 0, 18, Some(Duration::from_millis(100))),
            Duration::from_millis(100)
        );
        assert_eq!(budget(900_000, 0, 1, None), TIMED_CAP);
        // Almost no time: nothing to think with, but no underflow either.
        assert_eq!(budget(200, 0, 5, None), Duration::ZERO);
        assert_eq!(budget(0, 5_000, 5, None), Duration::ZERO);
        // The increment is spent only while the clock has it.
        let b = budget(10_000, 2_000, 20, None);
        assert!(b >= Duration::from_millis(1_500), "{b:?}");
        assert!(b <= Duration::from_millis(10_000 - 250 - 500), "{b:?}");
    }

    #[test]
    fn the_clock_does_not_run_out_over_a_long_set() {
        // Every move takes its whole budget plus 50 ms of overrun and network.
        for kind in GameKind::ALL {
            let mut remaining: u64 = 60_000;
            for plies in (0..400).step_by(2) {
                let b = budget(remaining, 0, moves_left(kind, plies), None);
                let spent = b.as_millis() as u64 + 50;
                assert!(spent < remaining, "{kind} ply {plies}: {remaining} ms left");
                remaining -= spent;
                if remaining < 1_000 {
                    break;
                }
            }
        }
    }
}
