//! The 2017 rules' way through a round: the round-pairing outlook (C.04.3 of 2017, A.9).
//!
//! The 2017 text pairs each bracket looking one score group ahead only (C.7) and asks nothing
//! of the rest of the round: the completion criterion (C.4) binds only the Penultimate
//! Pairing Bracket (PPB). When the downfloaters a bracket leaves cannot, with all the players
//! below, complete the round, that bracket is the PPB: it is paired again with completion
//! first and without C.7, and every player still unpaired then forms one Collapsed Last
//! Bracket (CLB), whatever their scores. (The 2025 rules require completion of every bracket:
//! the matching of the whole round in the parent module. The two differ when a bracket's best
//! look one group ahead leads to a dead end further down: t0020_p008_r05, t0067_p017_r08.)
//!
//! So each bracket is matched on its own: its players and the next score group (for the PPB
//! and the CLB, every player left), and outside the PPB and the CLB with a spare vertex for
//! each player, since a look ahead may leave players unpaired. The pairing score difference
//! (A.8, C.6) and the floats' score differences (C.16 to C.19) are fields of counts per score
//! difference, larger differences in higher bits: a CLB pairs players of many scores.

use std::collections::BTreeMap;

use super::{bits_for, colour_criteria, Boards, Pairer, Round};
use crate::blossom::Matcher;
use crate::dutch::{Entrant, Float, PairingError};
use crate::wide::Wide;

/// A 2017 bracket: its place in the round-pairing outlook and its score differences.
pub(super) struct Outlook {
    /// The PPB, the CLB or the last bracket: completion (C.4) weighs first, C.7 not at all.
    complete: bool,
    /// The next score group is the last: C.7's pairs are then those of the rest of the round,
    /// every pair counting (more with players who may not get the PAB, so that the one left
    /// over may).
    next_is_last: bool,
    /// The first player after the bracket (the next score group), as a vertex.
    first_next: usize,
    /// The lowest score of the bracket and the next score group, in half points: a
    /// downfloater's score difference is taken from one point below it (A.8, as the reference
    /// engine reads "the lowest ranked player").
    lowest: u32,
    /// Where each score difference (half points) has its count within an SD field.
    slot: BTreeMap<u32, u32>,
    /// Bits of an SD field.
    sd_bits: u32,
}

impl Outlook {
    pub(super) fn total_bits(&self, c: u32, hist: usize) -> u32 {
        let d = self.sd_bits;
        let floats = match hist {
            0 => 0,
            1 => 2 * c + 2 * d,
            _ => 4 * c + 4 * d,
        };
        // Completion, C.5, C.6, C.7 (pairs, more room when they count PAB candidacy, and
        // scores), the four colour criteria, the floats and room for the ordering bonuses.
        2 + c + d + (c + 2) + d + 4 * c + floats + 3 * c + 1
    }

    /// One more (or one fewer) score difference `sd` in the SD field that starts at `at`.
    fn count<const L: usize>(&self, w: &mut Wide<L>, at: u32, sd: u32, more: bool) {
        let mut one = Wide::ZERO;
        one.add_shifted(1, at + self.slot[&sd]);
        *w = if more { *w + one } else { *w - one };
    }
}

impl Round<'_> {
    /// The weight of `higher`-`lower` in a 2017 bracket. An SD field holds, for the pairs of
    /// the bracket, their players' SDs as downfloaters less the pair's own SD: the larger the
    /// field, the smaller the list of SDs left (a PSD, A.8, is compared from its largest SD).
    pub(super) fn weight_2017<const L: usize>(
        &self,
        o: &Outlook,
        higher: usize,
        lower: usize,
        in_current: bool,
        in_next: bool,
    ) -> Wide<L> {
        let (h, l) = (&self.ps[higher], &self.ps[lower]);
        let (c, d) = (self.count_bits, o.sd_bits);
        let downfloater = |e: &Entrant| e.score + 2 - o.lowest;
        let pair_sd = h.score - l.score;
        let moved_down = pair_sd > 0;
        let completion =
            1 + u64::from(!self.bye_candidate(higher)) + u64::from(!self.bye_candidate(lower));
        let mut w = Wide::<L>::ZERO;
        let mut at = self.total_bits();
        // C.4, in the PPB and the CLB only.
        at -= 2;
        if o.complete {
            w.add_shifted(completion, at);
        }
        // C.5 and C.6.
        at -= c;
        w.add_shifted(in_current as u64, at);
        at -= d;
        if in_current {
            o.count(&mut w, at, downfloater(h), true);
            o.count(&mut w, at, downfloater(l), true);
            o.count(&mut w, at, pair_sd, false);
        }
        // C.7: the pairs of the next bracket, then the bracket's players paired there.
        at -= c + 2;
        if !o.complete {
            let pairs = if o.next_is_last {
                completion
            } else {
                in_next as u64
            };
            w.add_shifted(pairs, at);
        }
        at -= d;
        if !o.complete {
            if higher < o.first_next {
                o.count(&mut w, at, downfloater(h), true);
            }
            if in_current {
                o.count(&mut w, at, downfloater(l), true);
            }
        }
        // C.8 to C.11.
        for met in colour_criteria(l, h) {
            at -= c;
            w.add_shifted((in_current && met) as u64, at);
        }
        // C.12 to C.15: floats repeated from the last round and the one before.
        let floats = |back: usize| {
            if back == 1 {
                (h.float_last_round, l.float_last_round)
            } else {
                (h.float_two_rounds_ago, l.float_two_rounds_ago)
            }
        };
        let backs = 1..=self.hist.min(2);
        for back in backs.clone() {
            let (fh, fl) = floats(back);
            let down = u64::from(fl == Float::Down) + u64::from(!moved_down && fh == Float::Down);
            at -= c;
            w.add_shifted(if in_current { down } else { 0 }, at);
            at -= c;
            w.add_shifted((in_current && !(moved_down && fl == Float::Up)) as u64, at);
        }
        // C.16 to C.19: their score differences (a downfloater not paired here keeps its SD).
        for back in backs {
            let (fh, fl) = floats(back);
            at -= d;
            if in_current {
                if fl == Float::Down {
                    o.count(&mut w, at, downfloater(l), true);
                }
                if fh == Float::Down {
                    o.count(&mut w, at, downfloater(h), true);
                    if moved_down {
                        o.count(&mut w, at, pair_sd, false);
                    }
                }
            }
            at -= d;
            if in_current && moved_down && fl == Float::Up {
                o.count(&mut w, at, pair_sd, false);
            }
        }
        // Below: room for the ordering bonuses.
        debug_assert_eq!(at, 3 * c + 1);
        w
    }
}

/// Pairs a round by the 2017 rules; `ps` sorted by score (highest first) then pairing number.
pub(super) fn pair(
    ps: &[Entrant],
    compat: &[Vec<bool>],
    hist: usize,
) -> Result<Boards, PairingError> {
    let n = ps.len();
    let odd = n % 2 == 1;
    // Whether the players not yet paired can still complete the round, kept warm.
    let mut rest = Matcher::<1>::new(n + usize::from(odd));
    for (b, may_meet) in compat.iter().enumerate() {
        for a in (0..b).filter(|&a| may_meet[a]) {
            rest.set(a, b, Some(Wide::ZERO));
        }
        if odd && ps[b].may_get_pab {
            rest.set(b, n, Some(Wide::ZERO));
        }
    }
    rest.solve().map_err(|_| PairingError::NoValidPairing)?;
    let group_end = |from: usize| {
        (from..n)
            .find(|&v| ps[v].score < ps[from].score)
            .unwrap_or(n)
    };
    let mut pairs: Vec<(usize, usize)> = Vec::new();
    let mut paired = vec![false; n];
    // The bracket: moved-down players, then residents; `next` starts the next score group.
    let mut current: Vec<usize> = (0..group_end(0)).collect();
    let mut next = current.len();
    let mut mdps = 0;
    while current.len() > 1 || next < n {
        let bracket = current.len();
        let mut window = current.clone();
        let last = next == n;
        if !last {
            let end = group_end(next);
            window.extend(next..end);
            next = end;
        }
        let mut found = pair_window(ps, compat, hist, &window, mdps, bracket, last, next == n)?;
        if !last {
            for &(a, b) in &found {
                for x in 0..n + usize::from(odd) {
                    for (v, mate) in [(a, b), (b, a)] {
                        if x != v && x != mate {
                            rest.remove(v, x);
                        }
                    }
                }
            }
            if rest.solve().is_err() {
                // This bracket is the PPB: paired again with every player left as the next
                // bracket, which then collapses into the CLB (the next time round).
                window.extend(next..n);
                next = n;
                found = pair_window(ps, compat, hist, &window, mdps, bracket, true, true)?;
            }
        }
        for &(a, b) in &found {
            paired[a] = true;
            paired[b] = true;
        }
        pairs.extend(found);
        mdps = window[..bracket].iter().filter(|&&v| !paired[v]).count();
        current = window.into_iter().filter(|&v| !paired[v]).collect();
    }
    let mut out: Boards = pairs.iter().map(|&(a, b)| (a, Some(b))).collect();
    match current.as_slice() {
        [] => {}
        [b] if ps[*b].may_get_pab => out.push((*b, None)),
        _ => return Err(PairingError::NoValidPairing),
    }
    Ok(out)
}

/// Pairs the bracket `window[..bracket]` (the first `mdps` moved down) with the rest of
/// `window` as the next bracket; returns its pairs as players' indices.
#[allow(clippy::too_many_arguments)]
fn pair_window(
    ps: &[Entrant],
    compat: &[Vec<bool>],
    hist: usize,
    window: &[usize],
    mdps: usize,
    bracket: usize,
    complete: bool,
    next_is_last: bool,
) -> Result<Vec<(usize, usize)>, PairingError> {
    let len = window.len();
    let players: Vec<Entrant> = window.iter().map(|&v| ps[v].clone()).collect();
    // Two moved-down players never meet here: they would have been paired where both were.
    let may_meet: Vec<Vec<bool>> = (0..len)
        .map(|a| {
            (0..len)
                .map(|b| compat[window[a]][window[b]] && (a >= mdps || b >= mdps))
                .collect()
        })
        .collect();
    let lowest = players.iter().map(|e| e.score).min().unwrap_or(0);
    // The score differences the bracket can have, each with room for as many as may occur: a
    // downfloater's for each player, and a pair's for each player and each lower score among
    // the residents after it.
    let mut occurrences: BTreeMap<u32, usize> = BTreeMap::new();
    for i in 0..bracket {
        let s = players[i].score;
        *occurrences.entry(s + 2 - lowest).or_default() += 1;
        let mut last = None;
        for opponent in &players[mdps.max(i + 1)..bracket] {
            if last != Some(opponent.score) {
                last = Some(opponent.score);
                *occurrences.entry(s - opponent.score).or_default() += 1;
            }
        }
    }
    let mut slot = BTreeMap::new();
    let mut sd_bits = 0;
    for (sd, k) in occurrences {
        slot.insert(sd, sd_bits);
        sd_bits += bits_for(k);
    }
    let round = Round {
        ps: &players,
        compat: &may_meet,
        hist,
        count_bits: bits_for(len),
        scores_bits: 0,
        group_bits: Vec::new(),
        slot: Vec::new(),
        rank_bits: 0,
        bye_score: u32::MAX,
        bye_games_apply: false,
        played_rank: vec![0; len],
        games_bits: 0,
        outlook: Some(Outlook {
            complete,
            next_is_last: !complete && next_is_last,
            first_next: bracket,
            lowest,
            slot,
            sd_bits,
        }),
    };
    let local = match round.words() {
        0..=1 => run_window::<1>(round, mdps, bracket),
        2 => run_window::<2>(round, mdps, bracket),
        3 => run_window::<3>(round, mdps, bracket),
        4 => run_window::<4>(round, mdps, bracket),
        5..=6 => run_window::<6>(round, mdps, bracket),
        7..=8 => run_window::<8>(round, mdps, bracket),
        9..=12 => run_window::<12>(round, mdps, bracket),
        13..=16 => run_window::<16>(round, mdps, bracket),
        17..=24 => run_window::<24>(round, mdps, bracket),
        25..=32 => run_window::<32>(round, mdps, bracket),
        33..=48 => run_window::<48>(round, mdps, bracket),
        49..=64 => run_window::<64>(round, mdps, bracket),
        65..=96 => run_window::<96>(round, mdps, bracket),
        _ => Err(PairingError::TooLarge),
    }?;
    Ok(local
        .into_iter()
        .map(|(a, b)| (window[a], window[b]))
        .collect())
}

/// The bracket's matching: the window's players as vertices, then a PAB vertex when the
/// round must complete here (and the count is odd), or else a spare vertex for each player
/// (matched to one, a player is left unpaired).
fn run_window<const L: usize>(
    round: Round<'_>,
    mdps: usize,
    bracket: usize,
) -> Result<Vec<(usize, usize)>, PairingError> {
    let n = round.ps.len();
    let complete = round.outlook.as_ref().is_some_and(|o| o.complete);
    let spare = if complete { n % 2 } else { n };
    let mut pr = Pairer::<L> {
        m: Matcher::new(n + spare),
        n,
        bye: (complete && n % 2 == 1).then_some(n),
        pairs: Vec::new(),
        mates: Vec::new(),
        round,
    };
    pr.set_bye_edges();
    if !complete {
        for s in n..n + spare {
            for v in 0..s {
                pr.m.set(v, s, Some(Wide::ZERO));
            }
        }
    }
    let window: Vec<usize> = (0..n).collect();
    pr.bracket(&window, mdps, bracket, mdps, bracket)?;
    Ok(pr.pairs)
}

#[cfg(test)]
mod tests {
    use crate::dutch::{pair_round, Rules};
    use crate::trf::parse;

    /// Round 5 of 5 (t0020_p008_r05). The 2.5 bracket (1 and 4 moved down to 2) would pair
    /// 2-4, after which the rest cannot be paired: it is the PPB, all three move down and
    /// everyone left is one CLB of scores 3.5 to 0, whose smallest PSD is 1-7, 2-8, 3-5, 4-6.
    /// The 2025 rules keep the score groups apart and pair 2-5 in the 2.0 bracket (C.6 there).
    const DEAD_END: &str = "XXR 5\nXXC white1
001    1      Test0001 Player0001               2339                             3.5    1     5 w 1     4 b =     2 w 1     3 b 1
001    2      Test0002 Player0002               2172                             2.5    3     6 b 1     3 w =     1 b 0     7 w 1
001    3      Test0003 Player0003               2090                             2.0    4     7 w 1     2 b =     4 w =     1 w 0
001    4      Test0004 Player0004               2011                             3.0    2     8 b 1     1 w =     3 b =     5 w 1
001    5      Test0005 Player0005               1947                             2.0    5     1 b 0     8 w 1     6 b 1     4 b 0
001    6      Test0006 Player0006               1939                             1.5    6     2 w 0     7 b =     5 w 0     8 b 1
001    7      Test0007 Player0007               1699                             1.5    7     3 b 0     6 w =     8 b 1     2 b 0
001    8      Test0008 Player0008               1670                             0.0    8     4 w 0     5 b 0     7 w 0     6 w 0
";

    #[test]
    fn a_bracket_that_leaves_the_round_incomplete_collapses_the_rest() {
        let t = parse(DEAD_END).unwrap();
        let p = pair_round(&t, Rules::Dutch2017).unwrap();
        assert_eq!(p.boards, vec![(7, 1), (6, 4), (2, 8), (5, 3)]);
        let p = pair_round(&t, Rules::Dutch2025).unwrap();
        assert_eq!(p.boards, vec![(1, 8), (7, 4), (5, 2), (6, 3)]);
    }
}
