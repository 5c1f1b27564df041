//! The FIDE Dutch system (C.04.3), 2025 rules by default and the 2017 rules as an option.
//!
//! This module reads what the rules need from each player's history (score, colour
//! preference and its strength, floats, PAB eligibility), decides who may meet whom (the
//! absolute criteria), and allocates colours and orders the boards once the pairs are known.
//! Who is paired with whom is decided in [`weighted`]: every quality criterion in the weight
//! of a maximum-weight matching, exact by construction.

use std::collections::HashMap;
use std::fmt;

mod weighted;

use crate::{Colour, ResultCode, Tournament};
pub use weighted::MAX_WEIGHT_BITS;

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
    /// So many players, or so many scores in one bracket's window, that the criteria do not
    /// fit the widest edge weight ([`MAX_WEIGHT_BITS`]; far beyond any real event).
    TooLarge,
}

impl fmt::Display for PairingError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PairingError::NoValidPairing => write!(f, "NO_PAIRING"),
            PairingError::NoPlayers => write!(f, "no players to pair"),
            PairingError::TooLarge => write!(
                f,
                "too many players and scores to pair: the criteria need more than \
                 {MAX_WEIGHT_BITS} bits"
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
    let pairs = weighted::pair(&ps, &compat, rules, hist)?;
    let initial = t.initial_colour.unwrap_or(Colour::White);
    let mut boards: Vec<(usize, usize)> = Vec::new();
    let mut bye = None;
    for (a, b) in pairs {
        match b {
            None => bye = Some(ps[a].id),
            Some(b) => boards.push(if a < b { (a, b) } else { (b, a) }),
        }
    }
    // Board order: higher player's score, the other's score, then the higher player's number.
    boards.sort_by(|x, y| {
        let (hx, lx) = (&ps[x.0], &ps[x.1]);
        let (hy, ly) = (&ps[y.0], &ps[y.1]);
        hy.score
            .cmp(&hx.score)
            .then(ly.score.cmp(&lx.score))
            .then(hx.id.cmp(&hy.id))
    });
    let boards = boards
        .into_iter()
        .map(|(h, l)| {
            let c = colour_for_higher(&ps[h], &ps[l], initial, hist == 0);
            let (hid, lid) = (ps[h].id, ps[l].id);
            if c == Colour::White {
                (hid, lid)
            } else {
                (lid, hid)
            }
        })
        .collect();
    Ok(Pairing { boards, bye })
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
    fn every_score_is_its_own_group_however_many_there_are() {
        // 31 rounds: 63 scores, each its own group (they used to fold into 48).
        let t = one_player_per_score(64, 31);
        let distinct: std::collections::BTreeSet<u32> =
            (0..64).map(|i| t.points_after(i, 31, 2)).collect();
        assert_eq!(distinct.len(), 63);
        let p = pair_round(&t, Rules::Dutch2025).unwrap();
        assert_eq!(p.boards.len(), 32);
        // More rounds, more scores: still paired (there is no fixed number of groups).
        let t = one_player_per_score(120, 60);
        assert_eq!(pair_round(&t, Rules::Dutch2025).unwrap().boards.len(), 60);
        // A weight holds the scores of one bracket's window, not every score of the round.
        let t = one_player_per_score(1100, 550);
        assert_eq!(pair_round(&t, Rules::Dutch2025).unwrap().boards.len(), 550);
    }

    #[test]
    fn the_width_of_the_score_fields_changes_no_pairing() {
        // Room for every score, none (every window too wide, so the round is paired again with
        // room for every score: the fallback) and the default, which is narrower than every
        // score from round 3 on: the same pairings, round after round. (That the window's
        // layout pairs as the rules say is what the vectors check.)
        for (players, seed) in [(41, 1), (64, 2), (90, 3)] {
            for played in 0..7 {
                let t = crate::sim::simulate(players, played, 8, Rules::Dutch2025, seed);
                let default = pair_round(&t, Rules::Dutch2025);
                let widest =
                    weighted::with_fixed_width(u32::MAX, || pair_round(&t, Rules::Dutch2025));
                let narrowest = weighted::with_fixed_width(0, || pair_round(&t, Rules::Dutch2025));
                assert!(default.is_ok());
                assert_eq!(default, widest, "{players} players, round {}", played + 1);
                assert_eq!(
                    default,
                    narrowest,
                    "{players} players, round {}",
                    played + 1
                );
            }
        }
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
