//! The Dutch system as a sequence of maximum-weight matchings: exact by construction.
//!
//! Every quality criterion of C.04.3 is a field of bits in one edge weight, the more important
//! criteria in the higher bits, so that a maximum-weight perfect matching of everyone still to
//! be paired is a pairing that meets the criteria in their order of priority, the completion
//! requirement above them all. Brackets are then settled from the top score down. Within a
//! bracket the choices the rules leave to an order (which moved-down players are paired, their
//! opponents, which players are exchanged between S1 and S2, each S1 player's opponent) are
//! fixed one at a time, each by a small bonus on the edges that make the preferred choice and
//! a new matching: the bonus lies below every criterion, so a choice is taken exactly when it
//! costs no criterion, which is what "the first candidate that best satisfies the criteria"
//! means. There is no search and no budget; each decision costs one warm re-solve.
//!
//! The fields, from the highest (each counts over the pairs of the matching):
//! 1. the completion requirement and the PAB candidates (every pair counts, more with players who
//!    may not get the PAB, so that the one left out may);
//! 2. pairs in the current bracket (C.5), and their scores (C.6: the moved-down players paired);
//! 3. pairs in the next bracket and their scores (C.7, looking one bracket ahead);
//! 4. the games played by the PAB receiver's score group (2025 C.9);
//! 5. colours: topscorers' colour difference (C.10), topscorers' third same colour (C.11),
//!    colour preferences (C.12), strong preferences (C.13);
//! 6. floats: repeated downfloats and upfloats from the last round and the one before (C.14 to
//!    C.17), then the scores involved (C.18 to C.21);
//! 7. room for the ordering bonuses.
//!
//! That is the 2025 rules, which require every bracket to let the round complete. The 2017
//! rules look one score group ahead only and collapse the round when that leads to a dead end
//! (A.9): [`rules2017`] matches each bracket on its own, with the same decisions ([`Pairer`]).
//!
//! A field of scores holds only the scores of the bracket's window (its moved-down players,
//! its residents, the next score group): edges outside the window weigh no score, so the
//! layout can follow the window from bracket to bracket, and a weight of a 1,000-player
//! round takes 5 words instead of the 11 that every score of round 9 would need.

use super::{Entrant, Float, PairingError, PreferenceStrength, Rules};
use crate::blossom::{Matcher, NoPerfectMatching};
use crate::wide::Wide;

mod rules2017;
use rules2017::Outlook;

/// The widest edge weight: 96 words, room for about a thousand bits of a window's scores.
pub const MAX_WEIGHT_BITS: u32 = 96 * 64;

/// The pairs as indices into the players, the PAB as `(i, None)`.
type Boards = Vec<(usize, Option<usize>)>;

/// Bits to write `x` (0 for 0).
fn bits_for(x: usize) -> u32 {
    usize::BITS - x.leading_zeros()
}

/// What every bracket's weights read: the players, what may meet what, and the layout.
struct Round<'a> {
    ps: &'a [Entrant],
    compat: &'a [Vec<bool>],
    hist: usize,
    /// Bits of a field that counts players of one bracket.
    count_bits: u32,
    /// Bits of a field that counts players per score (every score in the bracket's window
    /// has its count in its own bits): the same for every bracket, so that the weights of the
    /// edges outside the window keep their meaning from one bracket to the next.
    scores_bits: u32,
    /// Bits of one score's count, by score group.
    group_bits: Vec<u32>,
    /// Where each score's count starts within such a field, by score group, for the scores of
    /// the window being paired (0 for the others, whose counts are 0).
    slot: Vec<u32>,
    /// Bits of a field that sums the ranks of the paired players' scores (for the PAB
    /// receiver's choice).
    rank_bits: u32,
    /// The PAB receiver's score (half points); candidates score no more than this.
    bye_score: u32,
    /// Whether 2025 C.9 applies in the bracket being paired.
    bye_games_apply: bool,
    /// For players of the PAB receiver's score: the rank of their number of unplayed rounds
    /// among the numbers there are (0 for the fewest).
    played_rank: Vec<u64>,
    /// Bits of the field that sums those ranks over a matching.
    games_bits: u32,
    /// 2017 rules: the bracket's place in the round-pairing outlook (A.9) and its layout of
    /// score differences; the weights are then those of [`rules2017`].
    outlook: Option<Outlook>,
}

impl Round<'_> {
    fn bye_candidate(&self, i: usize) -> bool {
        self.ps[i].may_get_pab && self.ps[i].score <= self.bye_score
    }

    fn total_bits(&self) -> u32 {
        if let Some(o) = &self.outlook {
            return o.total_bits(self.count_bits, self.hist);
        }
        let (c, s) = (self.count_bits, self.scores_bits);
        let floats = match self.hist {
            0 => 0,
            1 => 2 * c + 2 * s,
            _ => 4 * c + 4 * s,
        };
        2 + (c + s) * 2 + self.games_bits + 4 * c + floats + 3 * c + 1
    }

    /// The 64-bit words a weight takes: the fields, with headroom for the ordering bonuses,
    /// the sign and the matching's doubled duals (and for the PAB receiver's choice).
    fn words(&self) -> u32 {
        let bits = self.total_bits().max(1 + self.rank_bits + self.count_bits);
        (bits + 8).div_ceil(64)
    }

    /// The rank of a player's score from the lowest (0).
    fn score_rank(&self, i: usize) -> u64 {
        (self.group_bits.len() - 1 - self.ps[i].score_group) as u64
    }

    fn score_bit(&self, i: usize) -> u32 {
        self.slot[self.ps[i].score_group]
    }

    /// Lays out the score fields for a bracket's window, lower scores in the lower bits; false
    /// when its scores do not fit in the round's width.
    fn fit_window(&mut self, window: &[usize]) -> bool {
        self.slot.iter_mut().for_each(|s| *s = 0);
        let mut at = 0;
        let mut last = usize::MAX;
        for &v in window.iter().rev() {
            let g = self.ps[v].score_group;
            if g != last {
                self.slot[g] = at;
                at += self.group_bits[g];
                last = g;
            }
        }
        at <= self.scores_bits
    }

    /// The weight of `higher`-`lower` (`higher` placed first), or None when they may not meet.
    fn weight<const L: usize>(
        &self,
        higher: usize,
        lower: usize,
        in_current: bool,
        in_next: bool,
    ) -> Option<Wide<L>> {
        if !self.compat[higher][lower] {
            return None;
        }
        if let Some(o) = &self.outlook {
            return Some(self.weight_2017(o, higher, lower, in_current, in_next));
        }
        let (h, l) = (&self.ps[higher], &self.ps[lower]);
        let c = self.count_bits;
        let s = self.scores_bits;
        // Fields are written from the top down: `at` is where the next one ends.
        let mut w = Wide::<L>::ZERO;
        let mut at = self.total_bits();
        let mut field = |w: &mut Wide<L>, bits: u32, value: u64, inner: u32| {
            at -= bits;
            w.add_shifted(value, at + inner);
            at
        };
        let completion =
            1 + u64::from(!self.bye_candidate(higher)) + u64::from(!self.bye_candidate(lower));
        field(&mut w, 2, completion, 0);
        field(&mut w, c, in_current as u64, 0);
        field(&mut w, s, in_current as u64, self.score_bit(higher));
        field(&mut w, c, in_next as u64, 0);
        field(&mut w, s, in_next as u64, self.score_bit(higher));
        let mut games = 0;
        if self.bye_games_apply {
            for i in [higher, lower] {
                if self.ps[i].score == self.bye_score {
                    games += self.played_rank[i];
                }
            }
        }
        field(&mut w, self.games_bits, games, 0);
        for met in colour_criteria(l, h) {
            field(&mut w, c, (in_current && met) as u64, 0);
        }
        let floats = |back: usize| {
            let f = |e: &Entrant| {
                if back == 1 {
                    e.float_last_round
                } else {
                    e.float_two_rounds_ago
                }
            };
            (f(h), f(l))
        };
        let moved_down = h.score > l.score;
        for back in (1..=2).filter(|&b| b <= self.hist) {
            let (fh, fl) = floats(back);
            let down = u64::from(fl == Float::Down) + u64::from(!moved_down && fh == Float::Down);
            field(&mut w, c, if in_current { down } else { 0 }, 0);
            let up = !(moved_down && fl == Float::Up);
            field(&mut w, c, (in_current && up) as u64, 0);
        }
        for back in (1..=2).filter(|&b| b <= self.hist) {
            let (fh, fl) = floats(back);
            let (dl, dh) = if in_current {
                (u64::from(fl == Float::Down), u64::from(fh == Float::Down))
            } else {
                (0, 0)
            };
            let start = field(&mut w, s, dl, self.score_bit(lower));
            w.add_shifted(dh, start + self.score_bit(higher));
            let up = !(fl == Float::Up && moved_down);
            field(&mut w, s, (in_current && up) as u64, self.score_bit(higher));
        }
        // Below: room for the ordering bonuses.
        debug_assert_eq!(at, 3 * c + 1);
        Some(w)
    }
}

/// C.10 to C.13 for a pair, each true when the pair does not break it.
fn colour_criteria(p: &Entrant, o: &Entrant) -> [bool; 4] {
    let abs_pref = |e: &Entrant| e.strength == PreferenceStrength::Absolute;
    let strong = |e: &Entrant| e.strength == PreferenceStrength::Strong;
    let imbalance = |e: &Entrant| e.colour_difference.unsigned_abs();
    let differ = p.colour_preference != o.colour_preference;
    let beyond_two = imbalance(p) <= 1 || imbalance(o) <= 1 || differ;
    let third_same = !abs_pref(p)
        || !abs_pref(o)
        || differ
        || if imbalance(p) == imbalance(o) {
            p.repeated.is_none() || p.repeated != o.repeated
        } else {
            let lesser = if imbalance(p) > imbalance(o) { o } else { p };
            lesser.repeated != p.colour_preference.map(|c| c.invert())
        };
    let preference = p.colour_preference.is_none() || o.colour_preference.is_none() || differ;
    let strong_met = (!strong(p) && !abs_pref(p))
        || (!strong(o) && !abs_pref(o))
        || (abs_pref(p) && abs_pref(o))
        || differ;
    [beyond_two, third_same, preference, strong_met]
}

/// Pairs the round; `ps` sorted by score (highest first) then pairing number. Returns the pairs
/// as indices into `ps`, the PAB as `(i, None)`.
pub(super) fn pair(
    ps: &[Entrant],
    compat: &[Vec<bool>],
    rules: Rules,
    hist: usize,
) -> Result<Boards, PairingError> {
    if rules == Rules::Dutch2017 {
        return rules2017::pair(ps, compat, hist);
    }
    let n = ps.len();
    let groups = ps.last().map(|p| p.score_group + 1).unwrap_or(0);
    let mut size = vec![0usize; groups];
    for p in ps {
        size[p.score_group] += 1;
    }
    let group_bits: Vec<u32> = size.iter().map(|&k| bits_for(k)).collect();
    // Ranks of unplayed rounds summed over the players of one score: below n times the
    // number of different counts.
    let kinds = ps
        .iter()
        .map(|p| p.unplayed)
        .collect::<std::collections::BTreeSet<_>>()
        .len();
    let games_bits = bits_for(n * kinds);
    // Room for every score's count: the most any window can need.
    let every_score: u32 = group_bits.iter().sum();
    // A window holds two score groups and the players moved down into it, who are few: the
    // score fields are sized for that, and the round is paired again with room for every
    // score in the rare case a window needs more. Narrower weights are what the matching's
    // scans cost.
    let two_groups = (0..groups)
        .map(|g| group_bits[g] + group_bits.get(g + 1).copied().unwrap_or(0))
        .max()
        .unwrap_or(0);
    let mut width = fixed_width().unwrap_or(two_groups + 8).min(every_score);
    loop {
        let mut round = Round {
            ps,
            compat,
            hist,
            count_bits: bits_for(n),
            scores_bits: width,
            group_bits: group_bits.clone(),
            slot: vec![0; groups],
            rank_bits: bits_for(n * groups),
            bye_score: u32::MAX,
            bye_games_apply: false,
            played_rank: vec![0; n],
            games_bits,
            outlook: None,
        };
        // What the words hold beyond that is room for more scores, at no cost.
        if fixed_width().is_none() {
            let words = round.words();
            while round.scores_bits < every_score {
                round.scores_bits += 1;
                if round.words() > words {
                    round.scores_bits -= 1;
                    break;
                }
            }
        }
        width = round.scores_bits;
        match with_width(round, rules)? {
            Some(pairing) => return Ok(pairing),
            None if width < every_score => width = every_score,
            None => unreachable!("every score fits in the widest layout"),
        }
    }
}

/// Pairs with the round's layout, or None when a window's scores do not fit in it.
fn with_width(round: Round<'_>, rules: Rules) -> Result<Option<Boards>, PairingError> {
    // The matching's cost grows with the width: take the narrowest that holds the weights.
    match round.words() {
        0..=1 => run::<1>(round, rules),
        2 => run::<2>(round, rules),
        3 => run::<3>(round, rules),
        4 => run::<4>(round, rules),
        5 => run::<5>(round, rules),
        6 => run::<6>(round, rules),
        7 => run::<7>(round, rules),
        8 => run::<8>(round, rules),
        9 => run::<9>(round, rules),
        10 => run::<10>(round, rules),
        11 => run::<11>(round, rules),
        12 => run::<12>(round, rules),
        13..=14 => run::<14>(round, rules),
        15..=16 => run::<16>(round, rules),
        17..=20 => run::<20>(round, rules),
        21..=24 => run::<24>(round, rules),
        25..=32 => run::<32>(round, rules),
        33..=48 => run::<48>(round, rules),
        49..=64 => run::<64>(round, rules),
        65..=96 => run::<96>(round, rules),
        _ => Err(PairingError::TooLarge),
    }
}

/// The matching with the round's players as vertices 0..n, and one more vertex standing for
/// the PAB when n is odd.
struct Pairer<'a, const L: usize> {
    round: Round<'a>,
    m: Matcher<L>,
    n: usize,
    bye: Option<usize>,
    pairs: Vec<(usize, usize)>,
    mates: Vec<usize>,
}

impl<const L: usize> Pairer<'_, L> {
    /// The mate of `v`, or `v` itself when it is left for the PAB (or, in a 2017 bracket, left
    /// unpaired: matched to a vertex beyond the players).
    fn mate(&self, v: usize) -> usize {
        let m = self.mates[v];
        if m >= self.n {
            v
        } else {
            m
        }
    }

    fn set(&mut self, a: usize, b: usize, w: Option<Wide<L>>) {
        match w {
            Some(_) => self.m.set(a, b, w),
            None => self.m.remove(a, b),
        }
    }

    fn solve(&mut self) -> Result<(), PairingError> {
        self.m
            .solve()
            .map_err(|NoPerfectMatching| PairingError::NoValidPairing)?;
        // Decisions read the matching last solved, whatever was fixed since.
        self.mates = self.m.mates();
        Ok(())
    }

    /// Fixes `a`-`b` as a pair: no other edge is left at either.
    fn finalize(&mut self, a: usize, b: usize) {
        let total = self.m.len();
        for x in 0..total {
            for v in [a, b] {
                if x != v && x != a + b - v {
                    self.m.remove(v, x);
                }
            }
        }
        self.pairs.push((a.min(b), a.max(b)));
    }

    /// Edges to the PAB vertex: from every candidate.
    fn set_bye_edges(&mut self) {
        if let Some(d) = self.bye {
            for v in 0..self.n {
                let w = self.round.bye_candidate(v).then_some(Wide::ZERO);
                if self.m.get(v, d).is_some() != w.is_some() {
                    self.m.set(v, d, w);
                }
            }
        }
    }
}

fn run<const L: usize>(round: Round<'_>, rules: Rules) -> Result<Option<Boards>, PairingError> {
    let n = round.ps.len();
    let odd = n % 2 == 1;
    let ps = round.ps;
    let top_score = ps[0].score;
    let mut pr = Pairer::<L> {
        m: Matcher::new(n + usize::from(odd)),
        n,
        bye: odd.then_some(n),
        pairs: Vec::new(),
        mates: Vec::new(),
        round,
    };
    pr.set_bye_edges();
    let c = pr.round.count_bits;
    let mut bye_games = false;
    if odd && rules == Rules::Dutch2025 {
        // The PAB goes to the lowest score that lets the round complete (2025 C.2): each pair
        // weighs the score ranks of its players, so the one left over has the least.
        // Among those, a pairing keeps the top score group's players together if it can.
        for (b, pb) in ps.iter().enumerate() {
            for a in 0..b {
                let w = pr.round.compat[a][b].then(|| {
                    let mut w = Wide::<L>::from_u64(1);
                    w.shl(pr.round.rank_bits);
                    w = w + Wide::from_u64(pr.round.score_rank(a) + pr.round.score_rank(b));
                    w.shl(c);
                    w + Wide::from_u64(u64::from(pb.score >= top_score))
                });
                pr.set(b, a, w);
            }
        }
        pr.solve()?;
        let left = (0..n).find(|&v| pr.mate(v) == v).expect("one player left");
        pr.round.bye_score = ps[left].score;
        // 2025 C.9 weighs in the top bracket when the PAB receiver is a top scorer who is
        // not needed to pair the others there.
        bye_games = ps[left].score >= top_score
            && (0..n)
                .take_while(|&v| ps[v].score >= top_score)
                .all(|v| ps[pr.mate(v)].score >= top_score);
        // Pairs weigh more with players who missed more rounds, so that the one left over
        // missed the fewest.
        let unplayed = |v: usize| ps[v].unplayed;
        let mut counts: Vec<u32> = (0..n)
            .filter(|&v| ps[v].score == pr.round.bye_score)
            .map(unplayed)
            .collect();
        counts.sort_unstable();
        counts.dedup();
        let mut rank = std::collections::HashMap::new();
        for (i, g) in counts.iter().enumerate() {
            rank.insert(*g, i as u64);
        }
        pr.round.played_rank = (0..n)
            .map(|v| rank.get(&unplayed(v)).copied().unwrap_or(0))
            .collect();
        pr.set_bye_edges();
    }
    // Every player against every other: the completion requirement alone.
    for b in 0..n {
        for a in 0..b {
            let w = pr.round.weight::<L>(a, b, false, false);
            pr.set(b, a, w);
        }
    }
    pr.round.bye_games_apply = bye_games;

    // The bracket: moved-down players, then residents, then the next score group.
    let mut window: Vec<usize> = (0..n).take_while(|&v| ps[v].score >= top_score).collect();
    let mut next = window.len();
    let mut mdps = 0;
    let mut first_resident = 0;
    while window.len() > 1 || next < n {
        let bracket = window.len();
        let first_next = first_resident + (bracket - mdps);
        if next < n {
            let sc = ps[next].score;
            while next < n && ps[next].score >= sc {
                window.push(next);
                next += 1;
            }
        }
        if !pr.round.fit_window(&window) {
            return Ok(None);
        }
        pr.bracket(&window, mdps, bracket, first_resident, first_next)?;
        let mut carried = Vec::new();
        let mut new_mdps = 0;
        let bye_score = pr.round.bye_score;
        // 2025 C.9 weighs where the PAB receiver is chosen: in the bracket of its score, and in
        // the last bracket (where it may have come down to).
        let games = odd
            && rules == Rules::Dutch2025
            && first_next < n
            && (ps[first_next].score == bye_score || next == n);
        for (wi, &v) in window.iter().enumerate() {
            if wi < bracket && pr.paired(v) {
                continue;
            }
            carried.push(v);
            if wi < bracket {
                new_mdps += 1;
            }
        }
        pr.round.bye_games_apply = games;
        window = carried;
        mdps = new_mdps;
        first_resident = first_next;
    }
    let mut out: Vec<(usize, Option<usize>)> =
        pr.pairs.iter().map(|&(a, b)| (a, Some(b))).collect();
    match window.as_slice() {
        [] => {}
        [b] if pr.round.bye_candidate(*b) => out.push((*b, None)),
        _ => return Err(PairingError::NoValidPairing),
    }
    Ok(Some(out))
}

impl<const L: usize> Pairer<'_, L> {
    fn paired(&self, v: usize) -> bool {
        self.pairs.iter().any(|&(a, b)| a == v || b == v)
    }

    /// Settles one bracket: `window[..mdps]` moved down, `window[mdps..bracket]` residents, the
    /// rest the next score group. `first_resident` and `first_next` are vertex numbers.
    fn bracket(
        &mut self,
        window: &[usize],
        mdps: usize,
        bracket: usize,
        first_resident: usize,
        first_next: usize,
    ) -> Result<(), PairingError> {
        let len = window.len();
        // Two moved-down players are never paired with each other (that pair would have been
        // one more in their own bracket), but their edge is weighed in this window's layout
        // so that no weight is read in another's.
        for j in 1..mdps {
            for i in 0..j {
                let w = self.round.weight::<L>(window[i], window[j], true, false);
                self.set(window[i], window[j], w);
            }
        }
        // base[j][i] for i < j, j a resident or in the next group.
        let mut base: Vec<Vec<Option<Wide<L>>>> = vec![Vec::new(); len];
        for j in mdps..len {
            for i in 0..j {
                let w = self
                    .round
                    .weight::<L>(window[i], window[j], j < bracket, j >= bracket);
                base[j].push(w);
                self.set(window[i], window[j], w);
            }
        }
        self.solve()?;
        let in_bracket = |m: usize| m >= first_resident && m < first_next;
        let mut matched = vec![false; len];
        let plus = |w: Wide<L>, x: u64| w + Wide::from_u64(x);

        // Which moved-down players are paired: the highest first, by score.
        let mut score = u32::MAX;
        let mut left = 0;
        let mut left_matched = 0;
        for i in 0..mdps {
            let v = window[i];
            if self.round.ps[v].score < score {
                score = self.round.ps[v].score;
                left = 0;
                left_matched = 0;
                for &u in window[i..mdps]
                    .iter()
                    .take_while(|&&u| self.round.ps[u].score >= score)
                {
                    left += 1;
                    if in_bracket(self.mate(u)) {
                        left_matched += 1;
                    }
                }
            }
            if left_matched == 0 {
                continue;
            }
            if left <= left_matched {
                matched[i] = true;
                continue;
            }
            left -= 1;
            if !in_bracket(self.mate(v)) {
                for j in mdps..bracket {
                    if let Some(w) = base[j][i] {
                        self.set(v, window[j], Some(plus(w, 1)));
                    }
                }
                self.solve()?;
            }
            if in_bracket(self.mate(v)) {
                matched[i] = true;
                left_matched -= 1;
                for j in mdps..bracket {
                    if let Some(w) = base[j][i] {
                        self.set(v, window[j], Some(plus(w, (bracket - mdps) as u64 + 1)));
                    }
                }
            }
        }

        // Their opponents: each takes the highest resident it can. The bonus for that lies on
        // this player's edges only, so when the matching already pairs it with the highest
        // resident it may meet at all, no other matching can gain: no solve is needed.
        let pos = |v: usize, window: &[usize]| window.iter().position(|&u| u == v);
        for i in 0..mdps {
            if !matched[i] {
                continue;
            }
            let v = window[i];
            let first = (mdps..bracket).find(|&j| !matched[j] && base[j][i].is_some());
            if first.map(|j| window[j]) != Some(self.mate(v)) {
                let mut bonus = len as u64;
                for j in (mdps..bracket).rev() {
                    if matched[j] {
                        continue;
                    }
                    if let Some(w) = base[j][i] {
                        self.set(v, window[j], Some(plus(w, bonus)));
                        bonus += 1;
                    }
                }
                self.solve()?;
            }
            let m = self.mate(v);
            if let Some(j) = pos(m, window) {
                matched[j] = true;
            }
            self.finalize(v, m);
        }

        // The remainder: residents not paired with a moved-down player.
        let remainder: Vec<usize> = (mdps..bracket)
            .filter(|&j| self.mate(window[j]) >= first_resident)
            .collect();
        let s1 = remainder
            .iter()
            .filter(|&&j| self.mate(window[j]) < window[j])
            .count();
        let c = self.round.count_bits;
        // Fewer exchanges, then smaller differences of the exchanged numbers.
        let order = |base: &[Vec<Option<Wide<L>>>], i: usize, j: usize, ri: usize| {
            base[j][i].map(|w| {
                let mut a = Wide::<L>::from_u64(u64::from(ri < s1));
                a.shl(2 * c);
                a = a - Wide::from_u64(ri as u64);
                a.shl(1);
                w + a
            })
        };
        for (rj, &j) in remainder.iter().enumerate() {
            for (ri, &i) in remainder[..rj].iter().enumerate() {
                let w = order(&base, i, j, ri);
                self.set(window[i], window[j], w);
            }
        }
        self.solve()?;
        // A remainder player "leads" a pair when paired with a later player of the bracket.
        let leads = |me: &Self, j: usize| {
            let (v, m) = (window[j], me.mate(window[j]));
            m > v && m < first_next
        };
        let exchanges = remainder[..s1].iter().filter(|&&j| !leads(self, j)).count();

        // From S1, the lowest players are exchanged first.
        let mut to_go = exchanges;
        for ri in (0..s1).rev() {
            if to_go == 0 {
                break;
            }
            let i = remainder[ri];
            if leads(self, i) {
                for &j in &remainder[ri + 1..] {
                    if let Some(w) = order(&base, i, j, ri) {
                        self.set(window[i], window[j], Some(w - Wide::from_u64(1)));
                    }
                }
                self.solve()?;
            }
            let exchange = !leads(self, i);
            if exchange {
                to_go -= 1;
            }
            for &j in &remainder[ri + 1..] {
                if exchange {
                    base[j][i] = None;
                }
                let w = order(&base, i, j, ri);
                self.set(window[i], window[j], w);
            }
        }

        // From S2, the highest players are exchanged first.
        let mut to_go = exchanges;
        for ri in s1..remainder.len() {
            if to_go <= 1 {
                break;
            }
            let i = remainder[ri];
            let already = leads(self, i);
            if !already {
                for &j in &remainder[ri + 1..] {
                    if let Some(w) = order(&base, i, j, ri) {
                        self.set(window[i], window[j], Some(plus(w, 1)));
                    }
                }
                self.solve()?;
            }
            if leads(self, i) {
                to_go -= 1;
                for &j in &remainder[..ri] {
                    base[i][j] = None;
                    self.set(window[i], window[j], None);
                }
                for j in bracket..len {
                    base[j][i] = None;
                    self.set(window[i], window[j], None);
                }
            }
            if !already {
                for &j in &remainder[ri + 1..] {
                    let w = order(&base, i, j, ri);
                    self.set(window[i], window[j], w);
                }
            }
        }

        // Only leaders may now be paired with later players of the remainder, and only with
        // players who do not lead.
        for (ri, &i) in remainder.iter().enumerate() {
            for &j in &remainder[ri + 1..] {
                if !leads(self, i) || leads(self, j) {
                    base[j][i] = None;
                }
                self.set(window[i], window[j], base[j][i]);
            }
        }

        // Each leader, in order, takes the highest opponent it can.
        for &i in &remainder {
            if !leads(self, i) {
                continue;
            }
            let v = window[i];
            let first = remainder
                .iter()
                .copied()
                .find(|&j| j > i && !matched[j] && base[j][i].is_some());
            if first.map(|j| window[j]) != Some(self.mate(v)) {
                let mut bonus = 0u64;
                for &j in remainder.iter().rev() {
                    if j <= i || matched[j] {
                        continue;
                    }
                    if let Some(w) = base[j][i] {
                        self.set(v, window[j], Some(plus(w, bonus)));
                    }
                    bonus += 1;
                }
                self.solve()?;
            }
            let m = self.mate(v);
            matched[i] = true;
            if let Some(j) = pos(m, window) {
                matched[j] = true;
            }
            self.finalize(v, m);
        }
        Ok(())
    }
}

#[cfg(test)]
thread_local! {
    static FIXED_WIDTH: std::cell::Cell<Option<u32>> = const { std::cell::Cell::new(None) };
}

/// A width of the score fields that tests fix, to compare layouts (and to take the wider one
/// when a window does not fit).
fn fixed_width() -> Option<u32> {
    #[cfg(test)]
    return FIXED_WIDTH.with(|w| w.get());
    #[cfg(not(test))]
    None
}

/// Runs `f` with the score fields `width` bits wide at first.
#[cfg(test)]
pub(super) fn with_fixed_width<T>(width: u32, f: impl FnOnce() -> T) -> T {
    FIXED_WIDTH.with(|w| w.set(Some(width)));
    let out = f();
    FIXED_WIDTH.with(|w| w.set(None));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round(scores_bits: u32) -> Round<'static> {
        Round {
            ps: &[],
            compat: &[],
            hist: 2,
            count_bits: 12,
            scores_bits,
            group_bits: Vec::new(),
            slot: Vec::new(),
            rank_bits: 24,
            bye_score: u32::MAX,
            bye_games_apply: false,
            played_rank: Vec::new(),
            games_bits: 12,
            outlook: None,
        }
    }

    #[test]
    fn a_weight_beyond_the_widest_is_refused_rather_than_clipped() {
        // 14 count fields of 12 bits and 6 score fields: the widest weight holds 990 bits of
        // a window's scores, not 1,000.
        assert_eq!(round(990).words(), MAX_WEIGHT_BITS / 64);
        assert_eq!(round(1000).words(), MAX_WEIGHT_BITS / 64 + 1);
        assert_eq!(
            with_width(round(1000), Rules::Dutch2025),
            Err(PairingError::TooLarge)
        );
    }
}
