//! The FIDE Dutch system (C.04.3), 2025 rules by default and the 2017 rules as an option.
//!
//! Brackets are paired from the top score down. In each bracket the candidates are generated in
//! the order the rules define (moved-down players first against residents, then the remainder
//! by exchanges and transpositions of S2), each is checked against the absolute criteria and the
//! completion requirement (a perfect matching of everyone left, found with Edmonds' algorithm),
//! and scored by the quality criteria as a lexicographic cost. Branch and bound keeps the first
//! best candidate, which is what "the first candidate that best satisfies the criteria" means.

use std::collections::HashMap;
use std::fmt;

use crate::matching::Graph;
use crate::{Colour, ResultCode, Tournament};

/// Which edition of C.04.3 to apply.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Rules {
    /// C.04.3 as approved on 13 April 2024 (the "2025 rules").
    #[default]
    Dutch2025,
    /// C.04.3 as applied from 1 July 2017.
    Dutch2017,
}

impl std::str::FromStr for Rules {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "dutch2025" => Ok(Rules::Dutch2025),
            "dutch2017" => Ok(Rules::Dutch2017),
            other => Err(format!("unknown rules `{other}` (dutch2025 or dutch2017)")),
        }
    }
}

/// A round's pairing: boards as (white, black) pairing numbers, and the PAB receiver.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Pairing {
    pub boards: Vec<(u32, u32)>,
    pub bye: Option<u32>,
}

impl Pairing {
    /// The common engine output: the number of lines, then `white black`, the PAB as `id 0`.
    pub fn to_engine_text(&self) -> String {
        let mut s = format!("{}\n", self.boards.len() + usize::from(self.bye.is_some()));
        for (w, b) in &self.boards {
            s.push_str(&format!("{w} {b}\n"));
        }
        if let Some(b) = self.bye {
            s.push_str(&format!("{b} 0\n"));
        }
        s
    }
}

/// Why no pairing was produced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PairingError {
    /// No pairing of the round satisfies the absolute criteria.
    NoValidPairing,
    /// Nobody to pair.
    NoPlayers,
    /// More distinct scores than the engine tells apart ([`MAX_SCORE_GROUPS`]: 31 rounds of
    /// history at most, as every score is a number of half points up to twice the rounds).
    TooManyScoreGroups,
}

impl fmt::Display for PairingError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PairingError::NoValidPairing => write!(f, "NO_PAIRING"),
            PairingError::NoPlayers => write!(f, "no players to pair"),
            PairingError::TooManyScoreGroups => write!(
                f,
                "more than {MAX_SCORE_GROUPS} different scores: too many rounds to pair"
            ),
        }
    }
}

impl std::error::Error for PairingError {}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Float {
    Down,
    Up,
    None,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum PreferenceStrength {
    None,
    Mild,
    Strong,
    Absolute,
}

/// A player to be paired this round, with what the Dutch rules read from their history.
#[derive(Debug, Clone)]
struct Entrant {
    /// Pairing number.
    id: u32,
    /// Index in `Tournament::players`.
    idx: usize,
    /// 1-based position by pairing number among the players being paired.
    rank: u32,
    /// Points in half points.
    score: u32,
    /// Colour difference (A.6): games with White minus games with Black.
    colour_difference: i32,
    /// Colour preference (A.6), with its strength.
    colour_preference: Option<Colour>,
    strength: PreferenceStrength,
    /// The colour of the last two games when they were the same.
    repeated: Option<Colour>,
    /// Colours of the games played, in order.
    colours: Vec<Colour>,
    /// Floats (A.4) in the last round and the one before.
    float_last_round: Float,
    float_two_rounds_ago: Float,
    /// Not yet given a PAB, a full-point bye or a forfeit win (C.2).
    may_get_pab: bool,
    /// Rounds without a game played (2025 C.9 for the PAB receiver).
    unplayed: u32,
    /// A topscorer in the last round (A.7): more than half the maximum score.
    topscorer: bool,
    /// Rank of the player's score among the distinct scores, 0 = highest.
    score_group: usize,
}

/// Score groups a histogram can tell apart (scores rank 0 = highest): every score of 31 rounds
/// (0 to 62 half points).
const K: usize = 64;

/// The most distinct scores a round to pair may have.
pub const MAX_SCORE_GROUPS: usize = K;

/// Counts of players per score group, highest group first. Comparing two such histograms
/// lexicographically is comparing the multisets of scores from the top, which is how "minimise
/// the scores of ..." criteria compare candidates.
type Hist = [u16; K];

/// The quality of a bracket candidate; smaller is better, fields compared in order.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Cost {
    /// C.6: scores of the downfloaters.
    psd: Hist,
    /// C.7: in the next bracket, how many players cannot be paired and their scores.
    next: (u16, Hist),
    /// 2025 C.9: unplayed rounds of the PAB receiver.
    bye_unplayed: u32,
    /// Topscorer colour difference beyond 2, topscorer same colour thrice, preference not met,
    /// strong preference not met.
    colour: [u16; 4],
    /// Repeated downfloat / upfloat from the previous round, then from two rounds before.
    floats: [u16; 4],
    /// The scores involved in those repeated floats.
    float_scores: [Hist; 4],
}

impl Default for Cost {
    fn default() -> Self {
        Cost {
            psd: [0; K],
            next: (0, [0; K]),
            bye_unplayed: 0,
            colour: [0; 4],
            floats: [0; 4],
            float_scores: [[0; K]; 4],
        }
    }
}

fn float_of(t: &Tournament, idx: usize, round: usize, rules: Rules) -> Float {
    let Some(Some(e)) = t.players[idx].rounds.get(round - 1) else {
        return Float::None;
    };
    if !e.result.is_game() {
        // 2017: whoever did not play floated down. 2025: only if the round still scored.
        return if rules == Rules::Dutch2017 || e.result.halves(t.pab()) > 0 {
            Float::Down
        } else {
            Float::None
        };
    }
    let Some(o) = e.opponent else {
        return Float::None;
    };
    // Look the opponent up by number: a tournament built in code need not be in id order.
    let Some(oi) = t.players.iter().position(|p| p.id == o) else {
        return Float::None;
    };
    let mine = t.points_after(idx, round - 1, t.pab());
    let theirs = t.points_after(oi, round - 1, t.pab());
    match mine.cmp(&theirs) {
        std::cmp::Ordering::Greater => Float::Down,
        std::cmp::Ordering::Less => Float::Up,
        std::cmp::Ordering::Equal => Float::None,
    }
}

/// Pairs the next round of `t` (the first round that some player lacks an entry for).
pub fn pair_round(t: &Tournament, rules: Rules) -> Result<Pairing, PairingError> {
    let done = t.completed_rounds();
    pair_round_number(t, done + 1, rules)
}

/// Pairs round `round` of `t`, using rounds `1..round` as the history. Players with an entry for
/// `round` are absent (byes/withdrawals) and left out.
pub fn pair_round_number(
    t: &Tournament,
    round: usize,
    rules: Rules,
) -> Result<Pairing, PairingError> {
    pair_round_searched(t, round, rules).map(|(pairing, _)| pairing)
}

/// [`pair_round_number`], and whether the search was complete: `false` when a bracket's
/// search stopped at its node budget with a candidate it had not proven the best by the rules'
/// order (the arbiter is then told to check the pairing).
pub fn pair_round_searched(
    t: &Tournament,
    round: usize,
    rules: Rules,
) -> Result<(Pairing, bool), PairingError> {
    if round == 0 {
        return Err(PairingError::NoPlayers);
    }
    let hist = round - 1;
    let last_round = t.total_rounds.map(|r| r as usize == round).unwrap_or(false);
    let mut ps: Vec<Entrant> = Vec::new();
    for (idx, p) in t.players.iter().enumerate() {
        if p.rounds.get(hist).copied().flatten().is_some() {
            continue;
        }
        let entries: Vec<_> = p.rounds.iter().take(hist).flatten().copied().collect();
        let colours: Vec<Colour> = entries.iter().filter_map(|e| e.played_colour()).collect();
        let colour_difference: i32 = colours
            .iter()
            .map(|c| if *c == Colour::White { 1 } else { -1 })
            .sum();
        let repeated = match colours.as_slice() {
            [.., a, b] if a == b => Some(*a),
            _ => None,
        };
        let (colour_preference, strength) = if colours.is_empty() {
            (None, PreferenceStrength::None)
        } else if !(-1..=1).contains(&colour_difference) || repeated.is_some() {
            let c = if colour_difference > 1 {
                Colour::Black
            } else if colour_difference < -1 {
                Colour::White
            } else {
                repeated.map(Colour::invert).unwrap_or(Colour::White)
            };
            (Some(c), PreferenceStrength::Absolute)
        } else if colour_difference != 0 {
            (
                Some(if colour_difference > 0 {
                    Colour::Black
                } else {
                    Colour::White
                }),
                PreferenceStrength::Strong,
            )
        } else {
            (colours.last().map(|c| c.invert()), PreferenceStrength::Mild)
        };
        let may_get_pab = !entries.iter().any(|e| {
            matches!(
                e.result,
                ResultCode::Pab | ResultCode::FullBye | ResultCode::ForfeitWin
            )
        });
        let score = t.points_after(idx, hist, t.pab());
        ps.push(Entrant {
            rank: ps.len() as u32 + 1,
            id: p.id,
            idx,
            score,
            colour_difference,
            colour_preference,
            strength,
            repeated,
            colours,
            float_last_round: if hist >= 1 {
                float_of(t, idx, hist, rules)
            } else {
                Float::None
            },
            float_two_rounds_ago: if hist >= 2 {
                float_of(t, idx, hist - 1, rules)
            } else {
                Float::None
            },
            may_get_pab,
            unplayed: (hist as u32)
                .saturating_sub(entries.iter().filter(|e| e.result.is_game()).count() as u32),
            // Topscorers: in the last round, more than half the maximum possible score.
            topscorer: last_round && score > hist as u32,
            score_group: 0,
        });
    }
    if ps.is_empty() {
        return Err(PairingError::NoPlayers);
    }
    ps.sort_by(|a, b| b.score.cmp(&a.score).then(a.id.cmp(&b.id)));
    let n = ps.len();
    let mut rank = 0;
    for i in 0..n {
        if i > 0 && ps[i].score != ps[i - 1].score {
            rank += 1;
        }
        if rank >= K {
            return Err(PairingError::TooManyScoreGroups);
        }
        ps[i].score_group = rank;
    }
    let mut met = vec![vec![false; n]; n];
    let pos_of: HashMap<u32, usize> = ps.iter().enumerate().map(|(i, p)| (p.id, i)).collect();
    for (i, p) in ps.iter().enumerate() {
        for e in t.players[p.idx].rounds.iter().take(hist).flatten() {
            if e.result.is_game() {
                if let Some(j) = e.opponent.and_then(|o| pos_of.get(&o)) {
                    met[i][*j] = true;
                    met[*j][i] = true;
                }
            }
        }
    }
    let mut compat = vec![vec![false; n]; n];
    for i in 0..n {
        for j in 0..n {
            if i == j || met[i][j] {
                continue;
            }
            let (a, b) = (&ps[i], &ps[j]);
            let clash = a.strength == PreferenceStrength::Absolute
                && b.strength == PreferenceStrength::Absolute
                && a.colour_preference == b.colour_preference
                && !a.topscorer
                && !b.topscorer;
            compat[i][j] = !clash;
        }
    }
    let mut eng = Engine {
        ps,
        compat,
        rules,
        bye_score: u32::MAX,
        cache: HashMap::new(),
        c7_cache: HashMap::new(),
        budget: 0,
        cut_short: false,
    };
    let all: Vec<usize> = (0..n).collect();
    if !eng.completable(&all) {
        return Err(PairingError::NoValidPairing);
    }
    if n % 2 == 1 && rules != Rules::Dutch2017 {
        // 2025 rules: the PAB goes to the lowest score that still lets the round be completed.
        // The 2017 text has no such rule: each bracket pairs as many as it can (C.5) while the
        // round stays completable (C.4), and the bye falls where it falls.
        let mut scores: Vec<u32> = eng.ps.iter().map(|p| p.score).collect();
        scores.sort_unstable();
        scores.dedup();
        for s in scores {
            eng.bye_score = s;
            eng.cache.clear();
            if eng.completable(&all) {
                break;
            }
        }
        eng.cache.clear();
    }
    let pairs = eng.run()?;
    let initial = t.initial_colour.unwrap_or(Colour::White);
    let mut boards: Vec<(usize, usize)> = Vec::new();
    let mut bye = None;
    for (a, b) in pairs {
        match b {
            None => bye = Some(eng.ps[a].id),
            Some(b) => boards.push(if a < b { (a, b) } else { (b, a) }),
        }
    }
    // Board order: higher player's score, the other's score, then the higher player's number.
    boards.sort_by(|x, y| {
        let (hx, lx) = (&eng.ps[x.0], &eng.ps[x.1]);
        let (hy, ly) = (&eng.ps[y.0], &eng.ps[y.1]);
        hy.score
            .cmp(&hx.score)
            .then(ly.score.cmp(&lx.score))
            .then(hx.id.cmp(&hy.id))
    });
    let boards = boards
        .into_iter()
        .map(|(h, l)| {
            let c = colour_for_higher(&eng.ps[h], &eng.ps[l], initial, hist == 0);
            let (hid, lid) = (eng.ps[h].id, eng.ps[l].id);
            if c == Colour::White {
                (hid, lid)
            } else {
                (lid, hid)
            }
        })
        .collect();
    Ok((Pairing { boards, bye }, !eng.cut_short))
}

fn prefs_compatible(a: &Entrant, b: &Entrant) -> bool {
    a.colour_preference.is_none()
        || b.colour_preference.is_none()
        || a.colour_preference != b.colour_preference
}

/// Colour allocation (C.04.3 E): the colour of the higher-ranked player `h` against `l`.
fn colour_for_higher(h: &Entrant, l: &Entrant, initial: Colour, first_round: bool) -> Colour {
    if prefs_compatible(h, l) {
        if let Some(c) = h.colour_preference {
            return c;
        }
        if let Some(c) = l.colour_preference {
            return c.invert();
        }
    } else {
        let (hp, lp) = (
            h.colour_preference.unwrap_or(Colour::White),
            l.colour_preference.unwrap_or(Colour::White),
        );
        let (hi, li) = (h.colour_difference.abs(), l.colour_difference.abs());
        if h.strength == PreferenceStrength::Absolute
            && (hi > li || l.strength != PreferenceStrength::Absolute)
        {
            return hp;
        }
        if l.strength == PreferenceStrength::Absolute
            && (li > hi || h.strength != PreferenceStrength::Absolute)
        {
            return lp.invert();
        }
        if h.strength == PreferenceStrength::Strong && l.strength != PreferenceStrength::Strong {
            return hp;
        }
        if l.strength == PreferenceStrength::Strong && h.strength != PreferenceStrength::Strong {
            return lp.invert();
        }
        // Alternate back to the latest round in which they had different colours.
        for (a, b) in h.colours.iter().rev().zip(l.colours.iter().rev()) {
            if a != b {
                return *b;
            }
        }
        return hp;
    }
    // No preferences at all: in round 1 the boards alternate from the initial colour (the
    // higher player's position among those paired); later, the parity of the higher player's
    // pairing number decides (h0559_p016_r02, where an absent player makes the two differ).
    if (if first_round { h.rank } else { h.id }) % 2 == 1 {
        initial
    } else {
        initial.invert()
    }
}

/// A bracket's pairing: its pairs, and the players who float down from it.
type BracketPairing = (Vec<(usize, usize)>, Vec<usize>);

struct Engine {
    ps: Vec<Entrant>,
    compat: Vec<Vec<bool>>,
    rules: Rules,
    bye_score: u32,
    cache: HashMap<Vec<usize>, bool>,
    c7_cache: HashMap<Vec<usize>, (u16, Hist)>,
    budget: u64,
    /// A search stopped at a budget with a candidate not proven the best.
    cut_short: bool,
}

/// Search effort per bracket before the best candidate found so far is taken.
const NODE_BUDGET: u64 = 100_000;
/// Effort spent looking for a candidate that meets every lower bound.
const IDEAL_BUDGET: u64 = 20_000;
/// Effort after which a pair count with no candidate found is taken as impossible.
const HARD_BUDGET: u64 = 1_000_000;

struct Search<'a> {
    mdps: &'a [usize],
    lower: &'a [usize],
    /// Residents of the next bracket (empty when this is the last bracket).
    next_res: &'a [usize],
    p: usize,
    last: bool,
    /// A lower bound of every candidate's cost (reaching it ends the search).
    lb: Cost,
    /// Pair and float terms of the partial candidate being built.
    cur: Cost,
    best: Option<(Cost, BracketPairing)>,
    done: bool,
    /// First pass: only candidates reaching the lower bound are wanted, so anything that
    /// cannot reach it is cut at once.
    ideal_only: bool,
    /// Colour and strong-colour violations the rest of the remainder must still make.
    rest_colour: [u16; 2],
    /// Topscorers present: two absolute preferences may then meet, which the strong bound
    /// does not model.
    topscorers: bool,
    /// This bracket decides the PAB receiver (2025 C.9 applies).
    bye_bracket: bool,
}

fn bump(v: &mut u16, add: bool) {
    *v = if add {
        v.wrapping_add(1)
    } else {
        v.wrapping_sub(1)
    };
}

impl Engine {
    fn bye_cand(&self, i: usize) -> bool {
        self.ps[i].may_get_pab && self.ps[i].score <= self.bye_score
    }

    /// Whether `set` can be paired completely (one PAB to an eligible player when odd).
    fn completable(&mut self, set: &[usize]) -> bool {
        let mut key = set.to_vec();
        key.sort_unstable();
        if let Some(&r) = self.cache.get(&key) {
            return r;
        }
        let m = key.len();
        let odd = m % 2 == 1;
        let mut g = Graph::new(m + usize::from(odd));
        for a in 0..m {
            for b in a + 1..m {
                if self.compat[key[a]][key[b]] {
                    g.add_edge(a, b);
                }
            }
            if odd && self.bye_cand(key[a]) {
                g.add_edge(a, m);
            }
        }
        let need = m.div_ceil(2);
        let ok = g.max_matching().0 == need;
        self.cache.insert(key, ok);
        ok
    }

    /// C.7: which players of the next bracket (these floaters plus its residents) must stay
    /// unpaired there, fewest first and then lowest scores, given that the round completes.
    fn next_bracket_quality(
        &mut self,
        floats: &[usize],
        next_res: &[usize],
        rest: &[usize],
    ) -> (u16, Hist) {
        let mut nb: Vec<usize> = floats.to_vec();
        nb.extend_from_slice(next_res);
        let mut key = floats.to_vec();
        key.sort_unstable();
        if let Some(v) = self.c7_cache.get(&key) {
            return *v;
        }
        // Lowest scores first, so the first workable choice is the best one.
        let mut by_low = nb.clone();
        by_low.sort_by(|&a, &b| self.ps[a].score.cmp(&self.ps[b].score).then(b.cmp(&a)));
        let parity = nb.len() % 2;
        let mut result = (nb.len() as u16 + 1, [0; K]);
        'outer: for u in (parity..=nb.len()).step_by(2) {
            let mut seen: Vec<Hist> = Vec::new();
            for us in combos(&by_low, u, 64) {
                let mut h = [0u16; K];
                for &x in &us {
                    h[self.ps[x].score_group] += 1;
                }
                // Candidates come lowest scores first, but not strictly in histogram order.
                if seen.iter().any(|o| *o <= h) && !seen.is_empty() {
                    continue;
                }
                let inside: Vec<usize> = nb.iter().copied().filter(|x| !us.contains(x)).collect();
                if !self.completable(&inside) {
                    continue;
                }
                let mut out: Vec<usize> = us.clone();
                out.extend_from_slice(rest);
                if self.completable(&out) {
                    seen.push(h);
                }
            }
            if let Some(h) = seen.iter().min() {
                result = (u as u16, *h);
                break 'outer;
            }
        }
        self.c7_cache.insert(key, result);
        result
    }

    /// The best (C.6, C.7) pair any set of `f` floaters can give: tried over all such sets
    /// that leave the bracket pairable and the round completable (None when too many sets).
    fn best_floaters(
        &mut self,
        members: &[usize],
        lower: &[usize],
        next_res: &[usize],
        f: usize,
        floor: (Hist, (u16, Hist)),
    ) -> Option<(Hist, (u16, Hist))> {
        if f > 3 {
            return None;
        }
        let sets = combos(members, f, 4000);
        if sets.len() >= 4000 {
            return None;
        }
        let mut best: Option<(Hist, (u16, Hist))> = None;
        for fl in sets {
            let mut psd = [0u16; K];
            for &x in &fl {
                psd[self.ps[x].score_group] += 1;
            }
            if let Some((bp, _)) = &best {
                if psd > *bp {
                    continue;
                }
            }
            let inside: Vec<usize> = members
                .iter()
                .copied()
                .filter(|x| !fl.contains(x))
                .collect();
            if !self.completable(&inside) {
                continue;
            }
            let mut out = fl.clone();
            out.extend_from_slice(lower);
            if !self.completable(&out) {
                continue;
            }
            let next = self.next_bracket_quality(&fl, next_res, &lower[next_res.len()..]);
            let cand = (psd, next);
            if best.as_ref().map(|b| cand < *b).unwrap_or(true) {
                best = Some(cand);
            }
            // Nothing can beat the plain bound: stop at the first set reaching it.
            if best == Some(floor) {
                break;
            }
        }
        best
    }

    /// Whether the round may be completed with at most `k` bracket players paired outside the
    /// bracket (or given the PAB): each such pair must pass through one of `k` "portal" edges.
    fn pairs_feasible(&self, bracket: &[usize], lower: &[usize], k: usize) -> bool {
        let nb = bracket.len();
        let nl = lower.len();
        let total = nb + nl;
        let odd = total % 2 == 1;
        // Vertices: bracket, lower, the PAB dummy (if odd), then k portal pairs (u, v).
        let bye = nb + nl;
        let portal = bye + usize::from(odd);
        let mut g = Graph::new(portal + 2 * k);
        for a in 0..nb {
            for b in a + 1..nb {
                if self.compat[bracket[a]][bracket[b]] {
                    g.add_edge(a, b);
                }
            }
        }
        for a in 0..nl {
            for b in a + 1..nl {
                if self.compat[lower[a]][lower[b]] {
                    g.add_edge(nb + a, nb + b);
                }
            }
            if odd && self.bye_cand(lower[a]) {
                g.add_edge(nb + a, bye);
            }
        }
        for i in 0..k {
            let (u, v) = (portal + 2 * i, portal + 2 * i + 1);
            g.add_edge(u, v);
            for a in 0..nb {
                g.add_edge(a, u);
            }
            for b in 0..nl {
                g.add_edge(nb + b, v);
            }
            if odd {
                g.add_edge(bye, v);
            }
        }
        // Portals ignore which bracket player meets which lower one, so this can only say
        // "maybe" too often, never "no" wrongly; the search itself checks every candidate.
        2 * g.max_matching().0 == g.n
    }

    /// Pairs all brackets; returns pairs and the PAB as `(i, None)`.
    fn run(&mut self) -> Result<Vec<(usize, Option<usize>)>, PairingError> {
        let n = self.ps.len();
        let mut out = Vec::new();
        let mut mdps: Vec<usize> = Vec::new();
        let mut pos = 0;
        while pos < n {
            let s = self.ps[pos].score;
            let mut end = pos;
            while end < n && self.ps[end].score == s {
                end += 1;
            }
            let residents: Vec<usize> = (pos..end).collect();
            let lower: Vec<usize> = (end..n).collect();
            self.c7_cache.clear();
            let (pairs, floaters) = self.pair_bracket(&mdps, &residents, &lower)?;
            out.extend(pairs.into_iter().map(|(a, b)| (a, Some(b))));
            mdps = floaters;
            pos = end;
        }
        match mdps.as_slice() {
            [] => {}
            [b] if self.ps[*b].may_get_pab => out.push((*b, None)),
            _ => return Err(PairingError::NoValidPairing),
        }
        Ok(out)
    }

    fn pair_bracket(
        &mut self,
        mdps: &[usize],
        res: &[usize],
        lower: &[usize],
    ) -> Result<BracketPairing, PairingError> {
        let nb = mdps.len() + res.len();
        let last = lower.is_empty();
        let next_len = lower
            .iter()
            .take_while(|&&i| self.ps[i].score == self.ps[lower[0]].score)
            .count();
        let next_res = &lower[..next_len];
        self.budget = 0;
        let members: Vec<usize> = mdps.iter().chain(res.iter()).copied().collect();
        // 2025 C.9 applies where the PAB is decided: the bracket of the PAB receiver's score.
        let bye_bracket = self.rules == Rules::Dutch2025
            && (nb + lower.len()) % 2 == 1
            && (last || res.first().map(|&r| self.ps[r].score) == Some(self.bye_score));
        // The most pairs this bracket could form with no colour preference left unmet, and
        // with no strong preference left unmet: bounds for C.10 and C.11 (C.12/C.13 in 2025).
        let good_pairs = |strong: bool| {
            let mut g = Graph::new(nb);
            for a in 0..nb {
                for b in a + 1..nb {
                    let (x, y) = (members[a], members[b]);
                    let ok = if strong {
                        !self.strong_clash(x, y)
                    } else {
                        prefs_compatible(&self.ps[x], &self.ps[y])
                    };
                    if self.compat[x][y] && ok {
                        g.add_edge(a, b);
                    }
                }
            }
            g.max_matching().0
        };
        let (good2, good3) = (good_pairs(false), good_pairs(true));
        let p_max = (0..=nb / 2)
            .rev()
            .find(|&p| self.pairs_feasible(&members, lower, nb - 2 * p))
            .unwrap_or(0);
        for p in (0..=p_max).rev() {
            let mut lb = Cost::default();
            let f = nb - 2 * p;
            let mut by_low = members.clone();
            by_low.sort_by_key(|&i| std::cmp::Reverse(self.ps[i].score_group));
            for &i in by_low.iter().take(f) {
                lb.psd[self.ps[i].score_group] += 1;
            }
            if bye_bracket {
                lb.bye_unplayed = members
                    .iter()
                    .filter(|&&i| self.bye_cand(i))
                    .map(|&i| self.ps[i].unplayed)
                    .min()
                    .unwrap_or(0);
            }
            if !last {
                // C.7 bound: the fewest possible unpaired, with the lowest score.
                let u = (f + next_res.len()) % 2;
                if u == 1 {
                    lb.next.1[self.ps[next_res[0]].score_group] = 1;
                }
                lb.next.0 = u as u16;
                let floor = (lb.psd, lb.next);
                if let Some((psd, next)) = self.best_floaters(&members, lower, next_res, f, floor) {
                    lb.psd = psd;
                    lb.next = next;
                }
            }
            // Colour bound: each pair can hold at most one player wanting each colour.
            let w = members
                .iter()
                .filter(|&&i| self.ps[i].colour_preference == Some(Colour::White))
                .count();
            let b = members
                .iter()
                .filter(|&&i| self.ps[i].colour_preference == Some(Colour::Black))
                .count();
            let forced = w
                .saturating_sub(f)
                .max(b.saturating_sub(f))
                .saturating_sub(p);
            lb.colour[2] = forced.max(p.saturating_sub(good2)) as u16;
            lb.colour[3] = p.saturating_sub(good3) as u16;
            // A moved-down player who floated down before floats down again whether it is
            // paired here (against a lower score) or moved on: that repeat is unavoidable.
            for &m in mdps {
                if self.ps[m].score > self.ps[res.first().copied().unwrap_or(m)].score {
                    if self.ps[m].float_last_round == Float::Down {
                        lb.floats[0] += 1;
                    }
                    if self.ps[m].float_two_rounds_ago == Float::Down {
                        lb.floats[2] += 1;
                    }
                }
            }
            let mut s = Search {
                mdps,
                lower,
                next_res,
                p,
                last,
                lb,
                cur: Cost::default(),
                best: None,
                done: false,
                ideal_only: true,
                rest_colour: [0, 0],
                topscorers: members.iter().any(|&i| self.ps[i].topscorer),
                bye_bracket,
            };
            for ideal_only in [true, false] {
                s.ideal_only = ideal_only;
                s.done = false;
                self.budget = 0;
                let mut used = vec![false; res.len()];
                let mut pairs = Vec::new();
                let mut floats = Vec::new();
                self.mdp_dfs(&mut s, 0, res, &mut used, &mut pairs, &mut floats);
                if s.best.is_some() {
                    break;
                }
            }
            if let Some((_, (pairs, floaters))) = s.best {
                return Ok((pairs, floaters));
            }
        }
        Err(PairingError::NoValidPairing)
    }

    /// Moved-down players first: each takes a resident in order, or floats on (tried last).
    fn mdp_dfs(
        &mut self,
        s: &mut Search,
        i: usize,
        res: &[usize],
        used: &mut Vec<bool>,
        pairs: &mut Vec<(usize, usize)>,
        floats: &mut Vec<usize>,
    ) {
        if s.done {
            return;
        }
        self.budget += 1;
        if self.budget > HARD_BUDGET {
            s.done = true;
            self.cut_short = true;
            return;
        }
        if i == s.mdps.len() {
            let k1 = pairs.len();
            if k1 > s.p {
                return;
            }
            let q = s.p - k1;
            let rem: Vec<usize> = res
                .iter()
                .zip(used.iter())
                .filter(|(_, u)| !**u)
                .map(|(r, _)| *r)
                .collect();
            if 2 * q > rem.len() {
                return;
            }
            // This bound holds for every exchange of the remainder: without it, a hopeless MDP
            // choice is found out only after trying all exchanges of a large remainder, which
            // can use up the node budget before the best candidate is reached.
            let saved = s.rest_colour;
            s.rest_colour = [
                self.remainder_colour_bound(&rem, q, false),
                if s.topscorers {
                    0
                } else {
                    self.remainder_colour_bound(&rem, q, true)
                },
            ];
            let hopeless = self.prune(s);
            s.rest_colour = saved;
            if !hopeless {
                self.remainder(s, &rem, q, pairs, floats);
            }
            return;
        }
        let m = s.mdps[i];
        let remaining_mdps = s.mdps.len() - i - 1;
        for (j, &r) in res.iter().enumerate() {
            if used[j] || !self.compat[m][r] || pairs.len() >= s.p {
                continue;
            }
            used[j] = true;
            pairs.push((m, r));
            self.pair_terms(&mut s.cur, m, r, true);
            if !self.prune(s) {
                self.mdp_dfs(s, i + 1, res, used, pairs, floats);
            }
            self.pair_terms(&mut s.cur, m, r, false);
            pairs.pop();
            used[j] = false;
            if s.done {
                return;
            }
        }
        // Floating this MDP on is only possible if the pair count can still be reached.
        let free = used.iter().filter(|u| !**u).count();
        if pairs.len() + remaining_mdps.min(free) + (free.saturating_sub(remaining_mdps)) / 2 >= s.p
        {
            floats.push(m);
            self.floater_terms(&mut s.cur, m, true);
            if !self.prune(s) {
                self.mdp_dfs(s, i + 1, res, used, pairs, floats);
            }
            self.floater_terms(&mut s.cur, m, false);
            floats.pop();
        }
    }

    /// The homogeneous remainder: S1/S2 with exchanges, each with transpositions of S2.
    fn remainder(
        &mut self,
        s: &mut Search,
        rem: &[usize],
        q: usize,
        pairs: &mut Vec<(usize, usize)>,
        floats: &mut Vec<usize>,
    ) {
        let m = rem.len();
        let max_e = q.min(m - q);
        for e in 0..=max_e {
            for (a, b) in exchanges(q, m, e) {
                if s.done {
                    return;
                }
                let mut s1: Vec<usize> = (0..q).filter(|x| !a.contains(x)).collect();
                s1.extend(b.iter().copied());
                s1.sort_unstable();
                let mut s2: Vec<usize> = (q..m).filter(|x| !b.contains(x)).collect();
                s2.extend(a.iter().copied());
                s2.sort_unstable();
                let s1: Vec<usize> = s1.iter().map(|&x| rem[x]).collect();
                let s2: Vec<usize> = s2.iter().map(|&x| rem[x]).collect();
                let mut used = vec![false; s2.len()];
                self.transpose(s, &s1, &s2, 0, &mut used, pairs, floats);
                if self.budget > NODE_BUDGET && s.best.is_some()
                    || s.ideal_only && self.budget > IDEAL_BUDGET
                {
                    s.done = true;
                    // Looking for an ideal candidate only is a first pass, not a verdict.
                    self.cut_short |= !s.ideal_only;
                }
            }
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn transpose(
        &mut self,
        s: &mut Search,
        s1: &[usize],
        s2: &[usize],
        i: usize,
        used: &mut Vec<bool>,
        pairs: &mut Vec<(usize, usize)>,
        floats: &mut Vec<usize>,
    ) {
        if s.done {
            return;
        }
        // Effort grows with the bracket: each node costs work proportional to its size.
        self.budget += 1 + (s1.len() + s2.len()) as u64 / 8;
        if self.budget > NODE_BUDGET && s.best.is_some()
            || s.ideal_only && self.budget > IDEAL_BUDGET
            || self.budget > HARD_BUDGET
        {
            s.done = true;
            self.cut_short |= !s.ideal_only || self.budget > HARD_BUDGET;
            return;
        }
        if i == s1.len() {
            let before = floats.len();
            for (j, &x) in s2.iter().enumerate() {
                if !used[j] {
                    floats.push(x);
                }
            }
            self.leaf(s, pairs, floats);
            floats.truncate(before);
            return;
        }
        if !self.can_finish(&s1[i..], s2, used) {
            return;
        }
        let a = s1[i];
        for j in 0..s2.len() {
            let b = s2[j];
            if used[j] || !self.compat[a][b] {
                continue;
            }
            used[j] = true;
            pairs.push((a, b));
            self.pair_terms(&mut s.cur, a, b, true);
            let saved = s.rest_colour;
            s.rest_colour = [
                self.colour_bound(&s1[i + 1..], s2, used, false),
                if s.topscorers {
                    0
                } else {
                    self.colour_bound(&s1[i + 1..], s2, used, true)
                },
            ];
            // The matching bound costs a bipartite matching per node: it is worth it only once
            // the search has spent more than one straight walk down S1 (it backtracks, so the
            // counted bound is not enough, as in late rounds with many rematches).
            let walk = (s1.len() * (1 + (s1.len() + s2.len()) / 8)) as u64;
            if !self.prune(s)
                && (self.budget <= walk || self.colour_matching_bound(s, &s1[i + 1..], s2, used))
            {
                self.transpose(s, s1, s2, i + 1, used, pairs, floats);
            }
            s.rest_colour = saved;
            self.pair_terms(&mut s.cur, a, b, false);
            pairs.pop();
            used[j] = false;
            if s.done {
                return;
            }
        }
    }

    /// Whether every player left in S1 can still get a compatible partner among the free S2.
    fn can_finish(&self, s1: &[usize], s2: &[usize], used: &[bool]) -> bool {
        self.s1_matched(s1, s2, used, |_, _| true, true) == s1.len()
    }

    /// How many players left in S1 can get a compatible partner among the free S2 at once,
    /// using only the pairs `ok` allows (Kuhn's augmenting paths); with `stop`, it gives up at
    /// the first S1 player left without a partner.
    fn s1_matched(
        &self,
        s1: &[usize],
        s2: &[usize],
        used: &[bool],
        ok: impl Fn(usize, usize) -> bool,
        stop: bool,
    ) -> usize {
        #[allow(clippy::too_many_arguments)]
        fn augment(
            e: &Engine,
            ok: &dyn Fn(usize, usize) -> bool,
            a: usize,
            s1: &[usize],
            s2: &[usize],
            used: &[bool],
            owner: &mut [usize],
            seen: &mut [bool],
        ) -> bool {
            for j in 0..s2.len() {
                if used[j] || seen[j] || !e.compat[s1[a]][s2[j]] || !ok(s1[a], s2[j]) {
                    continue;
                }
                seen[j] = true;
                if owner[j] == usize::MAX || augment(e, ok, owner[j], s1, s2, used, owner, seen) {
                    owner[j] = a;
                    return true;
                }
            }
            false
        }
        let mut owner = vec![usize::MAX; s2.len()];
        let mut seen = vec![false; s2.len()];
        let mut matched = 0;
        for a in 0..s1.len() {
            // A free partner first: without it every player walks the whole chain of those
            // before it (cubic in a bracket where everyone is compatible, as in round 1).
            let free = (0..s2.len()).find(|&j| {
                !used[j] && owner[j] == usize::MAX && self.compat[s1[a]][s2[j]] && ok(s1[a], s2[j])
            });
            if let Some(j) = free {
                owner[j] = a;
                matched += 1;
                continue;
            }
            seen.iter_mut().for_each(|x| *x = false);
            if augment(self, &ok, a, s1, s2, used, &mut owner, &mut seen) {
                matched += 1;
            } else if stop {
                break;
            }
        }
        matched
    }

    /// Refines the counted colour bound of the players left in S1 with the rematches: the pairs
    /// free of a clash that can be made at once are a matching, and every other S1 player
    /// clashes. Returns false when the candidate can then no longer beat the best one.
    fn colour_matching_bound(
        &self,
        s: &mut Search,
        s1: &[usize],
        s2: &[usize],
        used: &[bool],
    ) -> bool {
        let mild = |x: usize, y: usize| prefs_compatible(&self.ps[x], &self.ps[y]);
        let good = self.s1_matched(s1, s2, used, mild, false);
        s.rest_colour[0] = s.rest_colour[0].max((s1.len() - good) as u16);
        if self.prune(s) {
            return false;
        }
        let strong = |x: usize, y: usize| !self.strong_clash(x, y);
        let good = self.s1_matched(s1, s2, used, strong, false);
        s.rest_colour[1] = s.rest_colour[1].max((s1.len() - good) as u16);
        !self.prune(s)
    }

    /// The fewest colour-preference violations (`strong`: strong-preference violations) the
    /// players left in S1 must cause against the free S2 players, from counts alone.
    fn colour_bound(&self, s1: &[usize], s2: &[usize], used: &[bool], strong: bool) -> u16 {
        let count = |v: &mut [usize; 3], i: usize| {
            let p = &self.ps[i];
            let counted = !strong || p.strength >= PreferenceStrength::Strong;
            match p.colour_preference {
                Some(Colour::White) if counted => v[0] += 1,
                Some(Colour::Black) if counted => v[1] += 1,
                _ => v[2] += 1,
            }
        };
        let mut a = [0usize; 3];
        let mut b = [0usize; 3];
        for &i in s1 {
            count(&mut a, i);
        }
        for (j, &i) in s2.iter().enumerate() {
            if !used[j] {
                count(&mut b, i);
            }
        }
        let x = a[0].min(b[1]);
        let y = a[1].min(b[0]);
        let z = (a[0] - x + a[1] - y).min(b[2]);
        let free = b[0] + b[1] + b[2] - x - y - z;
        let good = x + y + z + a[2].min(free);
        (s1.len().saturating_sub(good)) as u16
    }

    /// The fewest pairs with equal colour preferences (`strong`: equal strong preferences) that
    /// any `q` pairs of `rem` must have, whoever floats: at best the floaters all come from the
    /// larger side, and each pair holds at most one of that side without a clash.
    fn remainder_colour_bound(&self, rem: &[usize], q: usize, strong: bool) -> u16 {
        let floaters = rem.len() - 2 * q;
        let count = |c: Colour| {
            rem.iter()
                .filter(|&&i| {
                    let p = &self.ps[i];
                    p.colour_preference == Some(c)
                        && (!strong || p.strength >= PreferenceStrength::Strong)
                })
                .count()
        };
        let larger = count(Colour::White).max(count(Colour::Black));
        larger.saturating_sub(floaters + q) as u16
    }

    /// Both want the same colour strongly (not both absolutely: those are topscorers' cases).
    fn strong_clash(&self, a: usize, b: usize) -> bool {
        let (x, y) = (&self.ps[a], &self.ps[b]);
        x.colour_preference.is_some()
            && x.colour_preference == y.colour_preference
            && x.strength >= PreferenceStrength::Strong
            && y.strength >= PreferenceStrength::Strong
            && !(x.strength == PreferenceStrength::Absolute
                && y.strength == PreferenceStrength::Absolute)
    }

    /// Adds (or removes) the colour and float terms of one pair.
    fn pair_terms(&self, c: &mut Cost, a: usize, b: usize, add: bool) {
        let (x, y) = (&self.ps[a], &self.ps[b]);
        let same = x.colour_preference.is_some() && x.colour_preference == y.colour_preference;
        if same {
            if x.colour_difference.abs() > 1 && y.colour_difference.abs() > 1 {
                bump(&mut c.colour[0], add);
            }
            if x.strength == PreferenceStrength::Absolute
                && y.strength == PreferenceStrength::Absolute
            {
                let (xi, yi) = (x.colour_difference.abs(), y.colour_difference.abs());
                let bad = if xi == yi {
                    x.repeated.is_some() && x.repeated == y.repeated
                } else {
                    let loser = if xi > yi { y } else { x };
                    loser.repeated.is_some()
                        && loser.repeated == loser.colour_preference.map(Colour::invert)
                };
                if bad {
                    bump(&mut c.colour[1], add);
                }
            }
            bump(&mut c.colour[2], add);
            if self.strong_clash(a, b) {
                bump(&mut c.colour[3], add);
            }
        }
        let (hi, lo) = if x.score >= y.score { (x, y) } else { (y, x) };
        if hi.score > lo.score {
            // A repeated downfloater paired here still floats (counted), but its score
            // difference is what C.18/C.20 weigh, and pairing it here keeps that smallest:
            // only those moved on are weighed by score (see `floater_terms`).
            if hi.float_last_round == Float::Down {
                bump(&mut c.floats[0], add);
            }
            if lo.float_last_round == Float::Up {
                bump(&mut c.floats[1], add);
                bump(&mut c.float_scores[1][hi.score_group], add);
            }
            if hi.float_two_rounds_ago == Float::Down {
                bump(&mut c.floats[2], add);
            }
            if lo.float_two_rounds_ago == Float::Up {
                bump(&mut c.floats[3], add);
                bump(&mut c.float_scores[3][hi.score_group], add);
            }
        }
    }

    /// Adds (or removes) the float terms of a player who floats down from this bracket.
    fn floater_terms(&self, c: &mut Cost, f: usize, add: bool) {
        let x = &self.ps[f];
        if x.float_last_round == Float::Down {
            bump(&mut c.floats[0], add);
            bump(&mut c.float_scores[0][x.score_group], add);
        }
        if x.float_two_rounds_ago == Float::Down {
            bump(&mut c.floats[2], add);
            bump(&mut c.float_scores[2][x.score_group], add);
        }
    }

    /// Whether the partial candidate cannot beat the best one found so far.
    fn prune(&self, s: &Search) -> bool {
        let (lb, cur) = (&s.lb, &s.cur);
        let (best, strict) = match &s.best {
            Some((b, _)) => (b, false),
            None if s.ideal_only => (lb, true),
            None => return false,
        };
        let mut colour = cur.colour;
        colour[2] = (colour[2] + s.rest_colour[0]).max(lb.colour[2]);
        colour[3] = (colour[3] + s.rest_colour[1]).max(lb.colour[3]);
        let ord = lb
            .psd
            .cmp(&best.psd)
            .then_with(|| lb.next.cmp(&best.next))
            .then_with(|| lb.bye_unplayed.cmp(&best.bye_unplayed))
            .then_with(|| colour.cmp(&best.colour))
            .then_with(|| cur.floats.cmp(&best.floats))
            .then_with(|| cur.float_scores.cmp(&best.float_scores));
        if strict {
            ord == std::cmp::Ordering::Greater
        } else {
            ord != std::cmp::Ordering::Less
        }
    }

    fn leaf(&mut self, s: &mut Search, pairs: &[(usize, usize)], floats: &[usize]) {
        if pairs.len() != s.p {
            return;
        }
        let mut c = s.cur.clone();
        // Floaters of the remainder (MDP floaters are already counted in `cur`).
        for &f in floats {
            c.psd[self.ps[f].score_group] += 1;
            if !s.mdps.contains(&f) {
                self.floater_terms(&mut c, f, true);
            }
        }
        if s.last {
            if floats.len() > 1 {
                return;
            }
            if let Some(&f) = floats.first() {
                if !self.bye_cand(f) {
                    return;
                }
            }
        }
        if s.bye_bracket {
            // The PAB goes to one of these floaters (nobody lower may take it).
            c.bye_unplayed = floats
                .iter()
                .filter(|&&f| self.bye_cand(f))
                .map(|&f| self.ps[f].unplayed)
                .min()
                .unwrap_or(0);
        }
        c.next = s.lb.next;
        // The real C.7 value is at least its bound, so both cuts are safe before computing it.
        if s.ideal_only && c != s.lb {
            return;
        }
        if let Some((best, _)) = &s.best {
            if c >= *best {
                return;
            }
        }
        let mut rest: Vec<usize> = floats.to_vec();
        rest.extend_from_slice(s.lower);
        if !self.completable(&rest) {
            return;
        }
        if !s.last {
            c.next = self.next_bracket_quality(floats, s.next_res, &s.lower[s.next_res.len()..]);
            if let Some((best, _)) = &s.best {
                if c >= *best {
                    return;
                }
            }
        }
        let ideal = c == s.lb;
        if s.ideal_only && !ideal {
            return;
        }
        s.best = Some((c, (pairs.to_vec(), floats.to_vec())));
        if ideal {
            s.done = true;
        }
    }
}

/// Exchanges of `e` players between S1 = 0..q and S2 = q..m, in the order the rules try them:
/// smallest difference of the exchanged numbers' sums, then S1's highest numbers first, then
/// S2's lowest numbers first.
fn exchanges(q: usize, m: usize, e: usize) -> Vec<(Vec<usize>, Vec<usize>)> {
    if e == 0 {
        return vec![(Vec::new(), Vec::new())];
    }
    // S1 from its highest number down and S2 from its lowest up, so that a capped list keeps
    // the exchanges nearest the S1/S2 border, which the rules try first.
    let s1: Vec<usize> = (0..q).rev().collect();
    let s2: Vec<usize> = (q..m).collect();
    let c1 = combos(&s1, e, 60);
    let c2 = combos(&s2, e, 60);
    let mut out = Vec::new();
    for a in &c1 {
        for b in &c2 {
            out.push((a.clone(), b.clone()));
        }
    }
    // Sort keys computed once: difference of the sums, S1's numbers highest first (larger
    // first), then S2's numbers (smaller first).
    out.sort_by_cached_key(|(a, b)| {
        let d = b.iter().sum::<usize>() - a.iter().sum::<usize>();
        let mut r: Vec<std::cmp::Reverse<usize>> =
            a.iter().map(|&x| std::cmp::Reverse(x)).collect();
        r.sort_unstable();
        (d, r, b.clone())
    });
    out
}

fn combos(items: &[usize], k: usize, cap: usize) -> Vec<Vec<usize>> {
    fn rec(
        items: &[usize],
        k: usize,
        start: usize,
        cur: &mut Vec<usize>,
        out: &mut Vec<Vec<usize>>,
        cap: usize,
    ) {
        if out.len() >= cap {
            return;
        }
        if cur.len() == k {
            out.push(cur.clone());
            return;
        }
        for i in start..items.len() {
            cur.push(items[i]);
            rec(items, k, i + 1, cur, out, cap);
            cur.pop();
        }
    }
    let mut out = Vec::new();
    rec(items, k, 0, &mut Vec::new(), &mut out, cap);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trf::parse;
    use crate::{Player, RoundEntry};

    fn line(id: u32, pts: &str, rounds: &[&str]) -> String {
        let mut s = format!(
            "001 {id:4}      {:<33} 2000{:28}{pts:>4} {id:4}  ",
            format!("P{id}"),
            ""
        );
        for r in rounds {
            s.push_str(&format!("{r:<8}  "));
        }
        s.trim_end().to_string()
    }

    /// Players whose scores after `rounds` byes are 0, 1, 2, ... half points.
    fn one_player_per_score(players: u32, rounds: usize) -> Tournament {
        let bye = |result| {
            Some(RoundEntry {
                opponent: None,
                colour: None,
                result,
            })
        };
        Tournament {
            total_rounds: Some(rounds as u32 + 1),
            players: (1..=players)
                .map(|id| {
                    let halves = (players - id) as usize;
                    let rounds = (0..rounds)
                        .map(
                            |r| match (halves / 2 > r, halves / 2 == r && halves % 2 == 1) {
                                (true, _) => bye(ResultCode::FullBye),
                                (false, true) => bye(ResultCode::HalfBye),
                                (false, false) => bye(ResultCode::ZeroBye),
                            },
                        )
                        .collect();
                    Player {
                        id,
                        rounds,
                        ..Default::default()
                    }
                })
                .collect(),
            ..Default::default()
        }
    }

    #[test]
    fn every_score_of_thirty_one_rounds_is_its_own_group_and_more_is_an_error() {
        // 31 rounds: 63 scores, each its own group (they used to fold into 48).
        let t = one_player_per_score(64, 31);
        let distinct: std::collections::BTreeSet<u32> =
            (0..64).map(|i| t.points_after(i, 31, 2)).collect();
        assert_eq!(distinct.len(), 63);
        assert!(pair_round(&t, Rules::Dutch2025).is_ok());
        // 32 rounds allow 65 scores: refused plainly rather than paired on merged groups.
        let t = one_player_per_score(66, 32);
        assert_eq!(
            pair_round(&t, Rules::Dutch2025),
            Err(PairingError::TooManyScoreGroups)
        );
    }

    #[test]
    fn round_one_top_half_against_bottom_half() {
        let mut text = String::from("012 r1\nXXR 5\nXXC white1\n");
        for id in 1..=5 {
            text.push_str(&line(id, "0.0", &[]));
            text.push('\n');
        }
        let t = parse(&text).unwrap();
        let p = pair_round(&t, Rules::Dutch2025).unwrap();
        // 1 gets the drawn colour, 2 the other; the lowest player gets the PAB.
        assert_eq!(p.boards, vec![(1, 3), (4, 2)]);
        assert_eq!(p.bye, Some(5));
        assert_eq!(p.to_engine_text(), "3\n1 3\n4 2\n5 0\n");
    }

    #[test]
    fn rematch_only_means_no_valid_pairing() {
        let text = format!(
            "XXR 3\nXXC white1\n{}\n{}\n",
            line(1, "1.0", &["   2 w 1"]),
            line(2, "0.0", &["   1 b 0"])
        );
        let t = parse(&text).unwrap();
        assert_eq!(
            pair_round(&t, Rules::Dutch2025),
            Err(PairingError::NoValidPairing)
        );
        assert_eq!(
            pair_round(&t, Rules::Dutch2017),
            Err(PairingError::NoValidPairing)
        );
    }

    #[test]
    fn forfeited_game_is_no_meeting_and_blocks_the_pab() {
        // 1 beat 2 by forfeit: they may meet again; 1 cannot get the PAB.
        let text = format!(
            "XXR 3\nXXC white1\n{}\n{}\n{}\n",
            line(1, "1.0", &["   2 w +"]),
            line(2, "0.0", &["   1 b -"]),
            line(3, "1.0", &["0000 - U"])
        );
        let t = parse(&text).unwrap();
        let p = pair_round(&t, Rules::Dutch2025).unwrap();
        assert_eq!(p.boards.len(), 1);
        assert_ne!(p.bye, Some(1));
        assert_ne!(p.bye, Some(3));
        assert_eq!(p.bye, Some(2));
    }

    #[test]
    fn absent_players_are_left_out() {
        let text = format!(
            "XXR 3\nXXC black1\n{}\n{}\n{}\n",
            line(1, "0.0", &["0000 - H"]),
            line(2, "0.0", &[]),
            line(3, "0.0", &[])
        );
        let t = parse(&text).unwrap();
        let p = pair_round(&t, Rules::Dutch2025).unwrap();
        assert_eq!(p.boards, vec![(3, 2)]);
        assert_eq!(p.bye, None);
    }

    #[test]
    fn deterministic() {
        let t = crate::sim::simulate(41, 3, 7, Rules::Dutch2025, 3);
        let a = pair_round(&t, Rules::Dutch2025).unwrap();
        for _ in 0..3 {
            assert_eq!(pair_round(&t, Rules::Dutch2025).unwrap(), a);
        }
        // Every player present is paired exactly once.
        let mut seen: Vec<u32> = a.boards.iter().flat_map(|(w, b)| [*w, *b]).collect();
        seen.extend(a.bye);
        seen.sort_unstable();
        assert_eq!(seen, (1..=41).collect::<Vec<u32>>());
    }
}
