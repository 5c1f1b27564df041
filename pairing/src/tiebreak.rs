//! Standings and tie-breaks (FIDE C.07): Buchholz cut-1, Buchholz, Sonneborn-Berger, direct
//! encounter and number of wins, with the 2026 amendment of Article 16 (unplayed rounds) by
//! default and the 2024 edition as an option.
//!
//! Internally values are integers: points and Buchholz in half points, Sonneborn-Berger in
//! quarter points, so that sums are exact and ties are ties.

use crate::{ResultCode, RoundEntry, Tournament};

/// Which text of C.07 Article 16 to apply to unplayed rounds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Edition {
    /// The 2024 edition (applied from 1 August 2024).
    E2024,
    /// The 2026 amendment (applied from 1 March 2026).
    #[default]
    E2026,
}

/// A tie-break criterion.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tiebreak {
    BuchholzCut1,
    Buchholz,
    SonnebornBerger,
    DirectEncounter,
    Wins,
}

impl Tiebreak {
    /// The default order of the seed rules.
    pub const DEFAULT_ORDER: [Tiebreak; 5] = [
        Tiebreak::BuchholzCut1,
        Tiebreak::Buchholz,
        Tiebreak::SonnebornBerger,
        Tiebreak::DirectEncounter,
        Tiebreak::Wins,
    ];

    pub fn code(self) -> &'static str {
        match self {
            Tiebreak::BuchholzCut1 => "BH-C1",
            Tiebreak::Buchholz => "BH",
            Tiebreak::SonnebornBerger => "SB",
            Tiebreak::DirectEncounter => "DE",
            Tiebreak::Wins => "WIN",
        }
    }

    pub fn from_code(s: &str) -> Option<Tiebreak> {
        Tiebreak::DEFAULT_ORDER
            .into_iter()
            .find(|t| t.code().eq_ignore_ascii_case(s))
    }
}

/// One player's line of the standings.
#[derive(Debug, Clone, PartialEq)]
pub struct Standing {
    pub id: u32,
    /// 1-based; players equal on points and every tie-break share a rank.
    pub rank: u32,
    /// Points in half points.
    pub points: u32,
    /// Buchholz cut-1 in half points.
    pub bh_c1: u32,
    /// Buchholz in half points.
    pub bh: u32,
    /// Sonneborn-Berger in quarter points.
    pub sb: u32,
    /// Direct encounter: position inside the equal-points group, 0 if not separated.
    pub de: u32,
    pub wins: u32,
}

impl Standing {
    pub fn value(&self, t: Tiebreak) -> f64 {
        match t {
            Tiebreak::BuchholzCut1 => self.bh_c1 as f64 / 2.0,
            Tiebreak::Buchholz => self.bh as f64 / 2.0,
            Tiebreak::SonnebornBerger => self.sb as f64 / 4.0,
            Tiebreak::DirectEncounter => self.de as f64,
            Tiebreak::Wins => self.wins as f64,
        }
    }

    /// Orders two players on one criterion: `Less` when `self` ranks higher.
    fn cmp_on(&self, o: &Standing, t: Tiebreak) -> std::cmp::Ordering {
        match t {
            Tiebreak::BuchholzCut1 => o.bh_c1.cmp(&self.bh_c1),
            Tiebreak::Buchholz => o.bh.cmp(&self.bh),
            Tiebreak::SonnebornBerger => o.sb.cmp(&self.sb),
            // DE orders a group, not a pair: `standings` applies it to each tied group.
            Tiebreak::DirectEncounter => std::cmp::Ordering::Equal,
            Tiebreak::Wins => o.wins.cmp(&self.wins),
        }
    }
}

fn entries(t: &Tournament, idx: usize, rounds: usize) -> Vec<Option<RoundEntry>> {
    // Rounds past `rounds` are not part of these standings.
    let mut v: Vec<Option<RoundEntry>> = t.players[idx].rounds.clone();
    v.resize(rounds, None);
    v.truncate(rounds);
    v
}

fn is_vur(e: &Option<RoundEntry>) -> bool {
    match e {
        // A missing entry is an absence.
        None => true,
        Some(e) => matches!(
            e.result,
            ResultCode::HalfBye
                | ResultCode::ZeroBye
                | ResultCode::Absent
                | ResultCode::ForfeitLoss
        ),
    }
}

/// Computes the standings of a tournament after the rounds it holds, best first: after
/// round k of a longer event, the standings of a k-round event (rounds still to come are
/// neither played nor missed). Players sharing a rank are listed by pairing number.
pub fn standings(t: &Tournament, edition: Edition, order: &[Tiebreak]) -> Vec<Standing> {
    let n = t.players.len();
    let rounds = t.players.iter().map(|p| p.rounds.len()).max().unwrap_or(0);
    let all: Vec<Vec<Option<RoundEntry>>> = (0..n).map(|i| entries(t, i, rounds)).collect();
    let pab = t.pab();
    let halves = |e: &Option<RoundEntry>| e.map(|e| e.result.halves(pab)).unwrap_or(0);
    let points: Vec<u32> = all.iter().map(|es| es.iter().map(halves).sum()).collect();
    // Adjusted score: byes/absences after the last round that was not a VUR count as a draw.
    let adjusted: Vec<u32> = all
        .iter()
        .map(|es| {
            let last_real = es.iter().rposition(|e| !is_vur(e));
            es.iter()
                .enumerate()
                .map(|(r, e)| {
                    let no_opp = e.map(|e| e.opponent.is_none()).unwrap_or(true);
                    let after = last_real.map(|l| r > l).unwrap_or(true);
                    if no_opp && after {
                        1
                    } else {
                        halves(e)
                    }
                })
                .sum()
        })
        .collect();
    let opp_idx = |e: &RoundEntry| -> Option<usize> {
        e.opponent
            .map(|o| o as usize)
            .filter(|&o| o >= 1 && o <= n)
            .map(|o| o - 1)
    };
    let mut out: Vec<Standing> = Vec::with_capacity(n);
    for i in 0..n {
        let mut contrib: Vec<(u32, bool)> = Vec::new(); // (half points, is VUR)
        let mut sb = 0u32;
        let mut wins = 0u32;
        for e in &all[i] {
            let scored = halves(e);
            if scored == 2 {
                wins += 1;
            }
            let c = match e {
                Some(x) if x.result.is_game() => match opp_idx(x) {
                    Some(o) => adjusted[o],
                    None => points[i],
                },
                Some(x) => match (edition, opp_idx(x)) {
                    (Edition::E2024, _) => points[i],
                    (Edition::E2026, Some(o)) => points[i].min(adjusted[o]),
                    (Edition::E2026, None) => points[i].min(rounds as u32),
                },
                None => match edition {
                    Edition::E2024 => points[i],
                    Edition::E2026 => points[i].min(rounds as u32),
                },
            };
            contrib.push((c, is_vur(e)));
            sb += c * scored;
        }
        let bh: u32 = contrib.iter().map(|c| c.0).sum();
        let cut = if contrib.iter().any(|c| c.1) {
            contrib.iter().filter(|c| c.1).map(|c| c.0).min()
        } else {
            contrib.iter().map(|c| c.0).min()
        };
        out.push(Standing {
            id: t.players[i].id,
            rank: 0,
            points: points[i],
            bh_c1: bh - cut.unwrap_or(0),
            bh,
            sb,
            de: 0,
            wins,
        });
    }
    // C.07 art. 4.2: each criterion in turn separates only the players still tied after
    // points and the criteria before it, so DE is computed inside those groups.
    let mut groups: Vec<Vec<usize>> = {
        let mut idx: Vec<usize> = (0..n).collect();
        idx.sort_by(|&a, &b| points[b].cmp(&points[a]));
        split_runs(&idx, |a, b| points[a] == points[b])
    };
    for &tb in order {
        let mut next = Vec::with_capacity(groups.len());
        for group in groups {
            if group.len() < 2 {
                next.push(group);
                continue;
            }
            if tb == Tiebreak::DirectEncounter {
                let classes = de_order(&all, &group, &opp_idx);
                if classes.len() > 1 {
                    let mut pos = 1;
                    for class in &classes {
                        for &i in class {
                            out[i].de = pos;
                        }
                        pos += class.len() as u32;
                    }
                }
                next.extend(classes);
            } else {
                let mut sorted = group;
                sorted.sort_by(|&a, &b| out[a].cmp_on(&out[b], tb));
                next.extend(split_runs(&sorted, |a, b| {
                    out[a].cmp_on(&out[b], tb) == std::cmp::Ordering::Equal
                }));
            }
        }
        groups = next;
    }
    let mut ranked: Vec<Standing> = Vec::with_capacity(n);
    for group in groups {
        let rank = ranked.len() as u32 + 1;
        let mut members: Vec<usize> = group;
        members.sort_by_key(|&i| out[i].id);
        for i in members {
            let mut s = out[i].clone();
            s.rank = rank;
            ranked.push(s);
        }
    }
    ranked
}

/// Splits a sorted list into runs of neighbours that `same` holds for.
fn split_runs(sorted: &[usize], same: impl Fn(usize, usize) -> bool) -> Vec<Vec<usize>> {
    let mut runs: Vec<Vec<usize>> = Vec::new();
    for &i in sorted {
        match runs.last_mut() {
            Some(run) if same(run[0], i) => run.push(i),
            _ => runs.push(vec![i]),
        }
    }
    runs
}

/// Orders a group of players still tied by their games against each other; returns the
/// classes players fall into, best first (one class: not separated).
fn de_order(
    all: &[Vec<Option<RoundEntry>>],
    group: &[usize],
    opp_idx: &dyn Fn(&RoundEntry) -> Option<usize>,
) -> Vec<Vec<usize>> {
    if group.len() < 2 {
        return vec![group.to_vec()];
    }
    // Points (in half points, doubled again for averages: quarter units) against each member.
    let m = group.len();
    let mut score = vec![0u32; m];
    let mut missing = vec![0u32; m];
    let mut all_met = true;
    for (a, &i) in group.iter().enumerate() {
        for (b, &j) in group.iter().enumerate() {
            if a == b {
                continue;
            }
            let games: Vec<u32> = all[i]
                .iter()
                .flatten()
                .filter(|e| e.result.is_game() && opp_idx(e) == Some(j))
                .map(|e| e.result.halves(2))
                .collect();
            if games.is_empty() {
                all_met = false;
                missing[a] += 1;
            } else {
                // Average over repeated meetings, kept exact by scaling with 12.
                score[a] += games.iter().sum::<u32>() * 12 / games.len() as u32;
            }
        }
    }
    if all_met {
        let mut order: Vec<usize> = (0..m).collect();
        order.sort_by(|&x, &y| score[y].cmp(&score[x]));
        let mut classes: Vec<Vec<usize>> = Vec::new();
        let mut k = 0;
        while k < m {
            let mut e = k;
            while e < m && score[order[e]] == score[order[k]] {
                e += 1;
            }
            classes.push(order[k..e].iter().map(|&x| group[x]).collect());
            k = e;
        }
        if classes.len() == 1 {
            return classes;
        }
        return classes
            .into_iter()
            .flat_map(|c| {
                if c.len() > 1 {
                    de_order(all, &c, opp_idx)
                } else {
                    vec![c]
                }
            })
            .collect();
    }
    // Not everyone met: a player goes ahead only if no one else could still catch up, each
    // missing game counted as a win.
    let best = |a: usize| score[a] + missing[a] * 24;
    let mut order: Vec<usize> = (0..m).collect();
    order.sort_by(|&x, &y| score[y].cmp(&score[x]));
    let top = order[0];
    let ahead = order[1..].iter().all(|&o| score[top] > best(o));
    if !ahead {
        return vec![group.to_vec()];
    }
    let rest: Vec<usize> = order[1..].iter().map(|&x| group[x]).collect();
    let mut classes = vec![vec![group[top]]];
    classes.extend(de_order(all, &rest, opp_idx));
    classes
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Colour, Player, ResultCode::*};

    /// An event of `n` players with `planned` rounds; each round is a list of boards
    /// (white, black, white's result).
    fn event(n: u32, planned: u32, rounds: &[&[(u32, u32, ResultCode)]]) -> Tournament {
        let mut t = Tournament {
            total_rounds: Some(planned),
            players: (1..=n)
                .map(|id| Player {
                    id,
                    ..Default::default()
                })
                .collect(),
            ..Default::default()
        };
        for (r, boards) in rounds.iter().enumerate() {
            let mut entries = Vec::new();
            for &(w, b, res) in boards.iter() {
                let other = match res {
                    Win => Loss,
                    Loss => Win,
                    Draw => Draw,
                    ForfeitWin => ForfeitLoss,
                    ForfeitLoss => ForfeitWin,
                    x => x,
                };
                let entry = |opponent, colour, result| RoundEntry {
                    opponent: Some(opponent),
                    colour: Some(colour),
                    result,
                };
                entries.push((w, entry(b, Colour::White, res)));
                entries.push((b, entry(w, Colour::Black, other)));
            }
            t.record_round(r + 1, &entries);
        }
        t
    }

    fn by_id(table: &[Standing], id: u32) -> &Standing {
        table.iter().find(|s| s.id == id).unwrap()
    }

    #[test]
    fn rounds_still_to_come_count_for_nothing() {
        // Round 1 of 4: 1 beats 2, 3 beats 4.
        let t = event(4, 4, &[&[(1, 2, Win), (3, 4, Win)]]);
        for edition in [Edition::E2024, Edition::E2026] {
            let table = standings(&t, edition, &Tiebreak::DEFAULT_ORDER);
            let winner = by_id(&table, 1);
            assert_eq!(winner.points, 2);
            assert_eq!(
                (winner.bh, winner.bh_c1, winner.sb),
                (0, 0, 0),
                "{edition:?}"
            );
            let loser = by_id(&table, 2);
            assert_eq!((loser.bh, loser.bh_c1, loser.sb), (2, 0, 0), "{edition:?}");
        }
        // The same event once complete is unaffected by the planned total.
        let done = event(
            4,
            2,
            &[&[(1, 2, Win), (3, 4, Win)], &[(3, 1, Draw), (2, 4, Win)]],
        );
        let table = standings(&done, Edition::E2026, &Tiebreak::DEFAULT_ORDER);
        assert_eq!(by_id(&table, 1).bh, 3 + 2);
    }

    /// Players 1..6 = A, B, X, Y, Q, P. A and B end tied on points, BH-C1, BH and SB, and A
    /// beat B; X (better BH-C1) and Y (worse BH) share their points but not their Buchholz.
    fn tied_pair_after_buchholz() -> Tournament {
        let (a, b, x, y, q, p) = (1, 2, 3, 4, 5, 6);
        event(
            6,
            2,
            &[
                &[(a, b, Win), (y, p, Win), (x, q, Loss)],
                &[(x, a, Win), (b, y, Win), (q, p, Win)],
            ],
        )
    }

    #[test]
    fn direct_encounter_separates_the_players_still_tied_after_the_criteria_before_it() {
        let t = tied_pair_after_buchholz();
        let table = standings(&t, Edition::E2026, &Tiebreak::DEFAULT_ORDER);
        let order: Vec<(u32, u32)> = table.iter().map(|s| (s.id, s.rank)).collect();
        assert_eq!(order, vec![(5, 1), (3, 2), (1, 3), (2, 4), (4, 5), (6, 6)]);
        let (a, b) = (by_id(&table, 1), by_id(&table, 2));
        assert_eq!((a.bh_c1, a.bh, a.sb), (b.bh_c1, b.bh, b.sb));
        assert_eq!((a.de, b.de), (1, 2));
        assert_eq!(by_id(&table, 3).de, 0, "X was separated before DE");
    }

    #[test]
    fn direct_encounter_first_works_on_the_whole_points_group() {
        // Among A, B, X and Y (one point each) not everyone met and nobody is out of reach:
        // DE right after points separates nobody, and A and B then share a rank.
        let t = tied_pair_after_buchholz();
        let order = [
            Tiebreak::DirectEncounter,
            Tiebreak::BuchholzCut1,
            Tiebreak::Buchholz,
            Tiebreak::SonnebornBerger,
            Tiebreak::Wins,
        ];
        let table = standings(&t, Edition::E2026, &order);
        assert!(table.iter().all(|s| s.de == 0));
        assert_eq!(by_id(&table, 1).rank, by_id(&table, 2).rank);
    }

    /// Eight players, three rounds. 1, 2, 3 and 4 end on 2 points: 1 beat 2 and 3 and lost to
    /// 4; 2 and 3 never met, nor did either meet 4; 1, 2 and 3 won twice, 4 once (two draws).
    /// The others drew their way to 1 point.
    fn leader_beaten_by_a_player_with_fewer_wins(planned: u32) -> Tournament {
        event(
            8,
            planned,
            &[
                &[(1, 2, Win), (3, 7, Win), (4, 5, Draw), (6, 8, Draw)],
                &[(1, 3, Win), (2, 5, Win), (4, 6, Draw), (7, 8, Draw)],
                &[(4, 1, Win), (2, 6, Win), (3, 8, Win), (5, 7, Draw)],
            ],
        )
    }

    fn ranks(table: &[Standing], ids: &[u32]) -> Vec<(u32, u32, u32)> {
        ids.iter()
            .map(|&id| {
                let s = by_id(table, id);
                (id, s.rank, s.de)
            })
            .collect()
    }

    #[test]
    fn direct_encounter_among_three_still_tied_who_did_not_all_meet_puts_ahead_only_the_one_out_of_reach(
    ) {
        // Wins first: 4 (one win) drops out of the tie; DE then looks at 1, 2 and 3 only. 1
        // beat both; 2 and 3 never met, so neither can be put ahead of the other, and each
        // could at best draw level with the other, not with 1 (a missing game counts as won).
        let t = leader_beaten_by_a_player_with_fewer_wins(3);
        let order = [Tiebreak::Wins, Tiebreak::DirectEncounter];
        let table = standings(&t, Edition::E2026, &order);
        assert_eq!(
            ranks(&table, &[1, 2, 3, 4]),
            vec![(1, 1, 1), (2, 2, 2), (3, 2, 2), (4, 4, 0)]
        );
        // Players sharing a rank are listed by number.
        let listed: Vec<u32> = table.iter().take(4).map(|s| s.id).collect();
        assert_eq!(listed, vec![1, 2, 3, 4]);
    }

    #[test]
    fn direct_encounter_among_four_tied_separates_nobody_while_one_could_still_catch_up() {
        // DE first: the tie is 1, 2, 3 and 4. 4 beat 1 and has two games it did not play in
        // the group, so 1 is not out of reach; not everyone met, and nobody is put ahead. Wins
        // then separate 4 from the others, who stay tied.
        let t = leader_beaten_by_a_player_with_fewer_wins(3);
        let order = [Tiebreak::DirectEncounter, Tiebreak::Wins];
        let table = standings(&t, Edition::E2026, &order);
        assert_eq!(
            ranks(&table, &[1, 2, 3, 4]),
            vec![(1, 1, 0), (2, 1, 0), (3, 1, 0), (4, 4, 0)]
        );
    }

    #[test]
    fn direct_encounter_does_not_separate_three_who_all_met_and_beat_each_other_in_a_circle() {
        // 1 beat 2, 2 beat 3, 3 beat 1, and each beat one of 4, 5, 6: all met, all even.
        let t = event(
            6,
            3,
            &[
                &[(1, 2, Win), (3, 4, Win), (5, 6, Draw)],
                &[(2, 3, Win), (1, 5, Win), (4, 6, Draw)],
                &[(3, 1, Win), (2, 6, Win), (4, 5, Draw)],
            ],
        );
        let order = [Tiebreak::DirectEncounter, Tiebreak::Wins];
        let table = standings(&t, Edition::E2026, &order);
        assert_eq!(
            ranks(&table, &[1, 2, 3]),
            vec![(1, 1, 0), (2, 1, 0), (3, 1, 0)]
        );
        // With Buchholz before it the circle is broken by the opponents' points instead, and
        // DE has nobody left to separate.
        let table = standings(&t, Edition::E2026, &Tiebreak::DEFAULT_ORDER);
        assert!([1, 2, 3].iter().all(|&id| by_id(&table, id).de == 0));
    }

    #[test]
    fn standings_during_an_event_are_those_of_an_event_of_the_rounds_played() {
        // The same three rounds as part of a longer event give the same table in either
        // edition: rounds not yet played are neither byes nor absences.
        for edition in [Edition::E2024, Edition::E2026] {
            let finished = standings(
                &leader_beaten_by_a_player_with_fewer_wins(3),
                edition,
                &Tiebreak::DEFAULT_ORDER,
            );
            for planned in [4, 5, 9] {
                let during = standings(
                    &leader_beaten_by_a_player_with_fewer_wins(planned),
                    edition,
                    &Tiebreak::DEFAULT_ORDER,
                );
                assert_eq!(during, finished, "{edition:?}, {planned} rounds planned");
            }
            // Player 1's Buchholz: the points of 2, 3 and 4 (2 each); cut-1 leaves out one of
            // them; Sonneborn-Berger: the points of the two beaten (in quarter points).
            let one = by_id(&finished, 1);
            assert_eq!(
                (one.bh, one.bh_c1, one.sb),
                (12, 8, 2 * 4 * 2),
                "{edition:?}"
            );
        }
    }
}
