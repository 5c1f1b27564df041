//! Swiss pairing (FIDE Dutch system), initial ranking, standings, tie-breaks and TRF.
//!
//! Points are kept in half points (`u32`) everywhere so that sums and comparisons are exact.
//!
//! - [`trf`]: TRF(x) reading and writing (`XXR`, `XXC`; byes `U`/`F`/`H`/`Z`, forfeits, absences).
//! - [`dutch`]: the FIDE Dutch system, 2025 rules (default) or 2017 rules, each round one
//!   sequence of maximum-weight matchings (`blossom`, on `wide` integers); [`check`] re-pairs a
//!   finished tournament round by round.
//! - [`tiebreak`]: standings with BH-C1, BH, SB, DE, WIN (C.07, 2026 amendment or 2024 edition).
//! - [`ranking`]: the initial ranking in Turkish alphabetical order (ICU4X collator, `tr`).
//! - [`sim`]: deterministic synthetic tournaments for benchmarks and tests.

mod blossom;
pub mod check;
pub mod dutch;
pub mod ranking;
pub mod sim;
pub mod tiebreak;
pub mod trf;
mod wide;

pub use check::{check_rounds, RoundDiff};
pub use dutch::{pair_round, pair_round_number, Pairing, PairingError, Rules, MAX_WEIGHT_BITS};
pub use ranking::{initial_order, turkish_cmp};
pub use tiebreak::{standings, Edition, Standing, Tiebreak};
pub use trf::{parse as parse_trf, write as write_trf, TrfError};

/// A piece colour; White is p1 in hakem's terms.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Colour {
    White,
    Black,
}

impl Colour {
    pub fn invert(self) -> Colour {
        match self {
            Colour::White => Colour::Black,
            Colour::Black => Colour::White,
        }
    }
}

/// The result of one round for one player, as TRF codes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ResultCode {
    /// `1` (or `W`): won over the board.
    Win,
    /// `=` (or `D`).
    Draw,
    /// `0` (or `L`).
    Loss,
    /// `+`: won by forfeit.
    ForfeitWin,
    /// `-` with an opponent: lost by forfeit.
    ForfeitLoss,
    /// `U`: pairing-allocated bye.
    Pab,
    /// `F`: full-point bye (not pairing-allocated).
    FullBye,
    /// `H`: half-point bye.
    HalfBye,
    /// `Z`: zero-point bye.
    ZeroBye,
    /// `-` without an opponent: absent, no points.
    Absent,
}

impl ResultCode {
    /// A game played over the board.
    pub fn is_game(self) -> bool {
        matches!(self, ResultCode::Win | ResultCode::Draw | ResultCode::Loss)
    }

    /// Whether the entry names an opponent (games and forfeits).
    pub fn has_opponent(self) -> bool {
        matches!(
            self,
            ResultCode::Win
                | ResultCode::Draw
                | ResultCode::Loss
                | ResultCode::ForfeitWin
                | ResultCode::ForfeitLoss
        )
    }

    /// Points in half points, with the PAB worth `pab_halves`.
    pub fn halves(self, pab_halves: u32) -> u32 {
        match self {
            ResultCode::Win | ResultCode::ForfeitWin | ResultCode::FullBye => 2,
            ResultCode::Pab => pab_halves,
            ResultCode::Draw | ResultCode::HalfBye => 1,
            ResultCode::Loss
            | ResultCode::ForfeitLoss
            | ResultCode::ZeroBye
            | ResultCode::Absent => 0,
        }
    }
}

/// One round of one player.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct RoundEntry {
    pub opponent: Option<u32>,
    pub colour: Option<Colour>,
    pub result: ResultCode,
}

impl RoundEntry {
    pub fn played_colour(&self) -> Option<Colour> {
        if self.result.is_game() {
            self.colour
        } else {
            None
        }
    }
}

/// A player line of a TRF file.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Player {
    /// Pairing number, 1..N.
    pub id: u32,
    pub name: String,
    pub sex: String,
    pub title: String,
    pub rating: Option<u32>,
    pub federation: String,
    pub fide_id: String,
    pub birth: String,
    /// The score field, in half points.
    pub points: u32,
    pub rank: Option<u32>,
    /// Round entries; `None` where the round has no entry yet.
    pub rounds: Vec<Option<RoundEntry>>,
    /// Source line (for error messages); 0 when built in code.
    pub line: usize,
}

/// A tournament's history, as TRF(x) holds it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Tournament {
    pub name: String,
    /// `XXR`: the planned number of rounds.
    pub total_rounds: Option<u32>,
    /// `XXC`: the colour drawn for the first-ranked player in round 1.
    pub initial_colour: Option<Colour>,
    /// `BBU` (as bbpPairings reads it): the points of a pairing-allocated bye, in half points;
    /// `None` for the usual 1 point.
    pub pab_halves: Option<u32>,
    /// Sorted by pairing number, ids 1..N.
    pub players: Vec<Player>,
    /// Header lines kept as they are (written back unchanged).
    pub other_lines: Vec<String>,
}

impl Tournament {
    /// The points of a pairing-allocated bye, in half points (1 point unless `BBU` says).
    pub fn pab(&self) -> u32 {
        self.pab_halves.unwrap_or(2)
    }

    /// The number of rounds complete for every player (the round to pair is this plus one).
    pub fn completed_rounds(&self) -> usize {
        self.players
            .iter()
            .map(|p| {
                p.rounds
                    .iter()
                    .position(|e| e.is_none())
                    .unwrap_or(p.rounds.len())
            })
            .min()
            .unwrap_or(0)
    }

    /// Points of a player after the first `rounds` rounds, in half points.
    pub fn points_after(&self, idx: usize, rounds: usize, pab_halves: u32) -> u32 {
        self.players[idx]
            .rounds
            .iter()
            .take(rounds)
            .flatten()
            .map(|e| e.result.halves(pab_halves))
            .sum()
    }

    /// Records round `round` (1-based) for the given players (by pairing number, which is
    /// their position here); unknown numbers are ignored.
    pub fn record_round(&mut self, round: usize, entries: &[(u32, RoundEntry)]) {
        for (id, e) in entries {
            let Some(i) = (*id as usize).checked_sub(1) else {
                continue;
            };
            if round == 0 {
                continue;
            }
            if let Some(p) = self.players.get_mut(i) {
                if p.rounds.len() < round {
                    p.rounds.resize(round, None);
                }
                p.rounds[round - 1] = Some(*e);
            }
        }
    }
}
