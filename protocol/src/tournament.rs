//! Swiss tournaments on the server: what the organizer sends to create and run one, and the
//! view of a tournament (players, pairings of every round, standings) that the server sends
//! back and serves at `/api/tournaments/ID`.
//!
//! Players are named by their pairing number (1..N, the initial ranking: Turkish alphabetical
//! order of surname, then given name). Before the start the numbers follow the alphabet as
//! players are added; from the start they are fixed, and late entrants get the next numbers.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::{ClockConfig, Points, Seat, SpectatorDelay};

/// `create_tournament`: every field but `name`, `game` and `rounds` has a default.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CreateTournament {
    pub name: String,
    pub game: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub variant: Option<String>,
    /// Sets per round (match).
    #[serde(default = "crate::default_sets")]
    pub sets: u8,
    /// `null` for untimed matches; absent for 15:00 per player per set.
    #[serde(default = "crate::default_clock")]
    pub clock: Option<ClockConfig>,
    #[serde(default = "crate::default_warnings_limit")]
    pub warnings_limit: u8,
    /// The planned number of rounds.
    pub rounds: u32,
    /// The edition of the FIDE Dutch system.
    #[serde(default)]
    pub pairing: PairingRules,
    /// The edition of FIDE C.07 for tie-breaks.
    #[serde(default)]
    pub edition: TiebreakEdition,
    /// Tie-break order by code: `BH-C1`, `BH`, `SB`, `DE`, `WIN`.
    #[serde(default = "default_tiebreaks")]
    pub tiebreaks: Vec<String>,
    #[serde(default)]
    pub players: Vec<NewPlayer>,
    /// The seat of the first-ranked player in round 1 (`p1` = FIDE white, the first mover of
    /// set 1); absent: the server draws it by lot and records the draw.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub colour_lot: Option<Seat>,
    /// Pair the next round as soon as every match of a round has ended; otherwise the arbiter
    /// sends `pair_next`.
    #[serde(default)]
    pub auto_pair: bool,
    /// Half-point byes a player may ask for over the tournament.
    #[serde(default = "default_half_byes")]
    pub max_half_byes: u32,
    /// The points of the pairing-allocated bye: 1 (the default), 0.5 or 0.
    #[serde(default = "one_point")]
    pub bye_points: Points,
    /// Spectators see every board this far behind (extension).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spectator_delay: Option<SpectatorDelay>,
    /// Its rounds change the players' ratings (boards of two player accounts; bots are never
    /// rated).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub rated: bool,
}

fn one_point() -> Points {
    Points::ONE
}

pub fn default_tiebreaks() -> Vec<String> {
    ["BH-C1", "BH", "SB", "DE", "WIN"]
        .into_iter()
        .map(String::from)
        .collect()
}

fn default_half_byes() -> u32 {
    1
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PairingRules {
    /// C.04.3 as approved in April 2024 (the "2025 rules").
    #[default]
    Dutch2025,
    /// C.04.3 as applied from July 2017.
    Dutch2017,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum TiebreakEdition {
    /// C.07 with its 2026 amendment on unplayed rounds.
    #[default]
    #[serde(rename = "2026")]
    E2026,
    #[serde(rename = "2024")]
    E2024,
}

/// A player entered by the organizer.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct NewPlayer {
    pub surname: String,
    #[serde(default)]
    pub given: String,
    /// An existing account (a bot's, or a player's own) to seat; absent: the server makes a
    /// player account for this tournament and returns its token.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub account: Option<String>,
}

/// A player's pairing number and the token it plays with.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlayerToken {
    pub id: u32,
    pub name: String,
    pub account: String,
    /// The account's token, when the server made the account (shown only here).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token: Option<String>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TournamentStatus {
    /// Players may be added; nothing is paired yet.
    Registration,
    Running,
    Finished,
}

/// The settings of a tournament, fixed at creation.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TournamentSettings {
    pub name: String,
    pub game: String,
    /// The preset, resolved (never empty).
    pub variant: String,
    pub sets: u8,
    pub clock: Option<ClockConfig>,
    pub warnings_limit: u8,
    /// The planned number of rounds.
    pub rounds: u32,
    pub pairing: PairingRules,
    pub edition: TiebreakEdition,
    pub tiebreaks: Vec<String>,
    pub auto_pair: bool,
    pub max_half_byes: u32,
    #[serde(default = "one_point")]
    pub bye_points: Points,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spectator_delay: Option<SpectatorDelay>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub rated: bool,
}

/// The whole public picture of a tournament.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TournamentView {
    #[serde(rename = "tournament")]
    pub id: String,
    #[serde(flatten)]
    pub settings: TournamentSettings,
    pub status: TournamentStatus,
    /// Rounds paired so far; the last one may still be played.
    pub current_round: u32,
    /// Rounds whose every result is in.
    pub completed_rounds: u32,
    pub colour_lot: Option<ColourLot>,
    pub players: Vec<PlayerView>,
    /// Best first, after the completed rounds.
    pub standings: Vec<StandingView>,
    pub pairings: Vec<RoundView>,
    /// Assistant arbiters and the boards each looks after (extension; their tokens are never
    /// shown).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub assistants: Vec<AssistantView>,
}

/// An assistant arbiter: the power of a match arbiter on these board numbers, in every round.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct AssistantView {
    pub name: String,
    pub boards: Vec<u32>,
}

/// One line of the tournament list (`/api/tournaments`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TournamentSummary {
    #[serde(rename = "tournament")]
    pub id: String,
    pub name: String,
    pub game: String,
    pub variant: String,
    pub status: TournamentStatus,
    pub current_round: u32,
    pub rounds: u32,
    pub players: u32,
    pub created_ms: u64,
}

/// The seat of the first-ranked player in round 1, and whether the server drew it by lot.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ColourLot {
    pub seat: Seat,
    pub drawn: bool,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlayerView {
    pub id: u32,
    /// "Surname Given".
    pub name: String,
    pub surname: String,
    pub given: String,
    pub account: String,
    /// Withdrawn: not paired from this round on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub withdrawn_from: Option<u32>,
    /// Rounds in which the player takes a half-point bye.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub half_byes: Vec<u32>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StandingView {
    pub id: u32,
    pub rank: u32,
    pub name: String,
    pub points: Points,
    /// By code (`BH-C1`, `BH`, `SB`, `DE`, `WIN`).
    pub tiebreaks: BTreeMap<String, f64>,
}

/// The next round as it would be paired now, not published, and the identifier of that
/// pairing (its boards and byes), for `pair_next` to publish exactly it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PairingPreview {
    #[serde(flatten)]
    pub round: RoundView,
    /// Absent from an older server.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub pairing: String,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RoundView {
    pub round: u32,
    pub boards: Vec<BoardView>,
    /// Players not paired this round: the pairing-allocated bye, half-point byes, late
    /// entrants' zero-point byes, withdrawn players.
    pub byes: Vec<ByeView>,
    /// The pairing search stopped at its budget: the pairing may not be the best by the
    /// rules' order, so check it (`hakem tournament check`) before publishing (extension;
    /// absent when the search was complete).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub search_stopped: bool,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct BoardView {
    pub board: u32,
    /// Pairing numbers; p1 is FIDE's white (the first mover of set 1).
    pub p1: u32,
    pub p2: u32,
    #[serde(rename = "match")]
    pub match_id: String,
    /// `1-0`, `0-1`, `1/2-1/2`, forfeits `+-`, `-+`, `--`; null while the match is played.
    pub result: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ByeView {
    pub player: u32,
    pub kind: ByeKind,
    pub points: Points,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ByeKind {
    /// The pairing-allocated bye (odd number of players).
    Pairing,
    /// Asked for by the player.
    Half,
    /// A late entrant's rounds before entry.
    Zero,
    /// Withdrawn.
    Absent,
}
