//! Re-pairing a finished tournament round by round: a pairing checker for arbiters.

use crate::dutch::{pair_round_number, Pairing, PairingError, Rules};
use crate::{ResultCode, Tournament};

/// One round whose recorded pairing differs from what the rules give.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RoundDiff {
    pub round: usize,
    /// The pairing as recorded in the tournament.
    pub recorded: Pairing,
    /// What the rules give (or the error when no pairing exists).
    pub expected: Result<Pairing, PairingError>,
}

/// The pairing recorded for `round` (1-based): boards with their colours, and the PAB.
pub fn recorded_pairing(t: &Tournament, round: usize) -> Pairing {
    let mut p = Pairing::default();
    if round == 0 {
        return p;
    }
    for pl in &t.players {
        let Some(Some(e)) = pl.rounds.get(round - 1) else {
            continue;
        };
        match (e.opponent, e.result) {
            (Some(o), _)
                if e.colour == Some(crate::Colour::White) || (e.colour.is_none() && pl.id < o) =>
            {
                p.boards.push((pl.id, o))
            }
            (None, ResultCode::Pab) => p.bye = Some(pl.id),
            _ => {}
        }
    }
    p.boards.sort_unstable();
    p
}

/// The history before `round`, with the round's known absences (byes other than the PAB,
/// absences) kept so that those players are left out, as a pairing program would see it.
pub fn history_before(t: &Tournament, round: usize) -> Tournament {
    let mut h = t.clone();
    if round == 0 {
        return h;
    }
    for p in &mut h.players {
        let entry = p.rounds.get(round - 1).copied().flatten();
        p.rounds.truncate(round - 1);
        if let Some(e) = entry {
            if e.opponent.is_none() && e.result != ResultCode::Pab {
                p.rounds.resize(round - 1, None);
                p.rounds.push(Some(e));
            }
        }
    }
    h
}

/// Re-pairs every complete round and returns those that differ.
pub fn check_rounds(t: &Tournament, rules: Rules) -> Vec<RoundDiff> {
    let rounds = t.completed_rounds();
    let mut out = Vec::new();
    for r in 1..=rounds {
        let recorded = recorded_pairing(t, r);
        if recorded.boards.is_empty() && recorded.bye.is_none() {
            continue;
        }
        let h = history_before(t, r);
        let expected = pair_round_number(&h, r, rules).map(|mut p| {
            p.boards.sort_unstable();
            p
        });
        if expected.as_ref() != Ok(&recorded) {
            out.push(RoundDiff {
                round: r,
                recorded,
                expected,
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn simulated_tournament_checks_clean_and_a_swap_is_found() {
        let mut t = crate::sim::simulate(12, 4, 4, Rules::Dutch2025, 11);
        assert_eq!(check_rounds(&t, Rules::Dutch2025), vec![]);
        // Swap the colours of one board in round 3: the checker must flag round 3.
        let a = t.players[0].rounds[2].unwrap();
        let o = a.opponent.unwrap() as usize - 1;
        for i in [0, o] {
            let e = t.players[i].rounds[2].as_mut().unwrap();
            e.colour = e.colour.map(crate::Colour::invert);
        }
        // Round 3 is flagged first (later rounds may follow, their history having changed).
        let d = check_rounds(&t, Rules::Dutch2025);
        assert_eq!(d.first().map(|d| d.round), Some(3));
    }
}
