//! The hakem wire protocol, version 1: every WebSocket message as serde types, shared by the
//! server, the command-line client, bots and tests. `docs/protocol.md` describes each message
//! with an example.
//!
//! Text frames, one JSON object per frame, at most [`MAX_FRAME_BYTES`]. Every message has a
//! `type`; a client message may carry an `id`, and the direct reply to it carries the same value
//! as `re`. Unknown fields are ignored.

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

pub mod board;
mod claims;
mod fold;
mod rate;
mod request_id;
pub mod tournament;

pub use board::{Board, PerSide, Side};
pub use claims::fold_claim;
pub use fold::{Applied, Gap};
pub use rate::TokenBucket;
pub use request_id::RequestId;
pub use tournament::{CreateTournament, NewPlayer, PlayerToken, TournamentView};

pub const PROTOCOL_VERSION: u32 = 1;

/// Opt-in extensions of protocol v1, asked for by name in `hello.features`. A client that asks
/// for none sees exactly the v1 frames.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Feature {
    /// The events of one action come in one `events` frame instead of one `event` frame each
    /// (a `move` with `press` is `moved` and `pressed`: one frame instead of two).
    Batch,
    /// Every event that changes the position carries the board after it (`set_started`,
    /// `placed`, `moved`), so that a client draws it without the rules.
    Boards,
    /// The seats of a finished match are told of rematch offers (`rematch_offered`) and of
    /// the rematch made (`rematch`). A connection that offers one is told of it anyway.
    Rematch,
    /// The match's chat (`chat`, `chat_history`, `chat_settings`) reaches this connection.
    Chat,
}

impl Feature {
    pub const ALL: [Feature; 4] = [
        Feature::Batch,
        Feature::Boards,
        Feature::Rematch,
        Feature::Chat,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Feature::Batch => "batch",
            Feature::Boards => "boards",
            Feature::Rematch => "rematch",
            Feature::Chat => "chat",
        }
    }

    pub fn parse(name: &str) -> Option<Feature> {
        Feature::ALL.into_iter().find(|f| f.as_str() == name)
    }
}

/// The largest frame a client may send.
pub const MAX_FRAME_BYTES: usize = 16 * 1024;

/// A seat in a match: `p1` moves first in sets 1 and 3, `p2` in set 2.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Seat {
    P1,
    P2,
}

impl Seat {
    pub const BOTH: [Seat; 2] = [Seat::P1, Seat::P2];

    pub fn other(self) -> Seat {
        match self {
            Seat::P1 => Seat::P2,
            Seat::P2 => Seat::P1,
        }
    }

    pub fn index(self) -> usize {
        self as usize
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Seat::P1 => "p1",
            Seat::P2 => "p2",
        }
    }
}

impl fmt::Display for Seat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A value per seat, written `{"p1":..,"p2":..}`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PerSeat<T> {
    pub p1: T,
    pub p2: T,
}

impl<T> PerSeat<Option<T>> {
    pub fn is_empty(&self) -> bool {
        self.p1.is_none() && self.p2.is_none()
    }
}

impl<T> PerSeat<T> {
    pub fn new(p1: T, p2: T) -> PerSeat<T> {
        PerSeat { p1, p2 }
    }

    pub fn get(&self, seat: Seat) -> &T {
        match seat {
            Seat::P1 => &self.p1,
            Seat::P2 => &self.p2,
        }
    }

    pub fn get_mut(&mut self, seat: Seat) -> &mut T {
        match seat {
            Seat::P1 => &mut self.p1,
            Seat::P2 => &mut self.p2,
        }
    }
}

/// The colour of a seat's stones.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StoneColour {
    Black,
    White,
}

impl StoneColour {
    pub fn as_str(self) -> &'static str {
        match self {
            StoneColour::Black => "black",
            StoneColour::White => "white",
        }
    }
}

/// Each seat's colour (rules.md section 2), or `None` where the game has none (Quoridor) or it
/// is not known yet (Pente before a set has a first mover).
///
/// Pentago: the stones are not swapped between sets (seed 000 rule 4): p1 plays black and p2
/// white for the whole round, so white moves first in set 2. Pente: each set's first mover
/// plays White.
pub fn seat_colours(game: &str, first_mover: Option<Seat>) -> Option<PerSeat<StoneColour>> {
    match game {
        "pentago" => Some(PerSeat::new(StoneColour::Black, StoneColour::White)),
        "pente" => first_mover.map(|first| {
            let mut colours = PerSeat::new(StoneColour::Black, StoneColour::Black);
            *colours.get_mut(first) = StoneColour::White;
            colours
        }),
        _ => None,
    }
}

/// Points counted in halves (a drawn set is half a point), written as a JSON number: `2`, `0.5`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Points {
    pub halves: u32,
}

impl Points {
    pub const ZERO: Points = Points { halves: 0 };
    pub const HALF: Points = Points { halves: 1 };
    pub const ONE: Points = Points { halves: 2 };

    pub fn as_f64(self) -> f64 {
        f64::from(self.halves) / 2.0
    }
}

impl std::ops::AddAssign for Points {
    fn add_assign(&mut self, other: Points) {
        self.halves += other.halves;
    }
}

impl Serialize for Points {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        if self.halves % 2 == 0 {
            serializer.serialize_u32(self.halves / 2)
        } else {
            serializer.serialize_f64(self.as_f64())
        }
    }
}

impl<'de> Deserialize<'de> for Points {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = f64::deserialize(deserializer)?;
        let halves = value * 2.0;
        if halves < 0.0 || halves.fract() != 0.0 || halves > f64::from(u32::MAX) {
            return Err(serde::de::Error::custom("points are a multiple of 0.5"));
        }
        Ok(Points {
            halves: halves as u32,
        })
    }
}

// ---------------------------------------------------------------------------------------------
// Client to server

/// A frame from a client: the optional `id` and the message.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ClientFrame {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<RequestId>,
    #[serde(flatten)]
    pub message: ClientMessage,
}

/// Every message a client may send.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ClientMessage {
    /// Must be the first message. `token`: a player, bot, arbiter or organizer token; none for a
    /// guest.
    Hello {
        protocol: u32,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        client: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        token: Option<String>,
        /// Opt-in extensions (see [`Feature`]); the `welcome` says which are granted. Names this
        /// server does not know are ignored, so that newer clients still connect.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        features: Vec<String>,
    },
    Ping,
    CreateMatch(CreateMatch),
    /// Organizer only: a player or bot account, whose token lets it be seated by name.
    CreateAccount {
        name: String,
        #[serde(default)]
        kind: AccountKind,
    },
    /// A guest makes an account of their own, with a password (when the server lets guests
    /// register). Answered with `registered`.
    Register {
        name: String,
        password: Password,
    },
    /// A password for a session token (`logged_in`): said in a later `hello`, the token speaks
    /// for the account until `logout`.
    Login {
        name: String,
        password: Password,
    },
    /// Ends the session whose token this connection said `hello` with.
    Logout,
    /// A new password for the account this connection speaks for (by a session token); every
    /// other session of the account ends.
    ChangePassword {
        password: Password,
        new_password: Password,
    },
    /// Organizer only: approves (`active`) or disables (`disabled`) an account. A disabled
    /// account's sessions end and its connections are closed.
    SetAccountStatus {
        name: String,
        status: AccountStatus,
    },
    /// An account offers a casual game in the lobby (`seek_posted`); it stays open until
    /// someone accepts it, the account cancels it, or its last connection closes.
    Seek(NewSeek),
    CancelSeek {
        seek: String,
    },
    /// Takes an open seek: the match is created with both accounts seated (each is told
    /// `your_match`); the reply is an `ack` naming the match.
    AcceptSeek {
        seek: String,
    },
    /// The open seeks (`lobby`), then `seek_added` and `seek_removed` as they change, until
    /// `unwatch_lobby`.
    WatchLobby,
    UnwatchLobby,
    /// A seated player offers a rematch of a finished round (the other seat is told
    /// `rematch_offered`); when both have offered, the new match is created with the seats
    /// swapped and each is told `rematch` with their new seat token.
    OfferRematch {
        #[serde(rename = "match")]
        match_id: String,
    },
    /// Take a seat (with `seat_token`) or arbitrate (with `arbiter_token`).
    Join {
        #[serde(rename = "match")]
        match_id: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        seat_token: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        arbiter_token: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        since_seq: Option<u64>,
        /// Ask for the legal moves in every `state`, for bots without a rules engine.
        #[serde(default, skip_serializing_if = "is_false")]
        legal_moves: bool,
        /// Start with the match's first state and every event since (unless `since_seq`).
        #[serde(default, skip_serializing_if = "is_false")]
        history: bool,
    },
    /// Spectate.
    Watch {
        #[serde(rename = "match")]
        match_id: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        since_seq: Option<u64>,
        /// As in `join`.
        #[serde(default, skip_serializing_if = "is_false")]
        history: bool,
    },
    Leave {
        #[serde(rename = "match")]
        match_id: String,
    },
    /// The live matches (the default) or the finished ones, a page at a time.
    ListMatches {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        status: Option<ListStatus>,
        /// At most this many (default 100, at most 500).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        limit: Option<u32>,
        /// The `next` of the page before.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        before: Option<String>,
        /// Every match this account sat in, live and finished, newest first (as
        /// `/api/players/NAME/matches`; extension). Not with `status`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        player: Option<String>,
    },
    /// Pentago: the first half of a move.
    Place {
        #[serde(rename = "match")]
        match_id: String,
        cell: String,
    },
    /// Pentago: the second half of a move; `dir` is `cw` or `ccw`.
    Rotate {
        #[serde(rename = "match")]
        match_id: String,
        quadrant: String,
        dir: String,
    },
    /// Press the clock: completes the move and passes the turn.
    Press {
        #[serde(rename = "match")]
        match_id: String,
    },
    /// A whole move in the game's notation, pressed at once unless `press` is false.
    Move {
        #[serde(rename = "match")]
        match_id: String,
        #[serde(rename = "move")]
        mv: String,
        #[serde(default = "yes")]
        press: bool,
    },
    Ready {
        #[serde(rename = "match")]
        match_id: String,
    },
    Resign {
        #[serde(rename = "match")]
        match_id: String,
    },
    Claim {
        #[serde(rename = "match")]
        match_id: String,
        text: String,
    },
    /// Offers the opponent a draw of the current set, or accepts the opponent's offer
    /// (extension; casual Pente and Quoridor only).
    OfferDraw {
        #[serde(rename = "match")]
        match_id: String,
    },
    /// Declines the opponent's draw offer (extension).
    DeclineDraw {
        #[serde(rename = "match")]
        match_id: String,
    },
    /// A chat message in the match (extension): the players' channel for players, the
    /// spectators' for spectators; the arbiter names one.
    Chat {
        #[serde(rename = "match")]
        match_id: String,
        text: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        channel: Option<ChatChannel>,
    },
    /// The arbiter or the organizer mutes (or lets speak again) a seat or an account in the
    /// match's chat (extension).
    Mute {
        #[serde(rename = "match")]
        match_id: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        seat: Option<Seat>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        name: Option<String>,
        #[serde(default = "yes")]
        muted: bool,
    },
    /// The arbiter or the organizer turns the match's chat on or off (extension).
    SetChat {
        #[serde(rename = "match")]
        match_id: String,
        enabled: bool,
    },
    Warn {
        #[serde(rename = "match")]
        match_id: String,
        seat: Seat,
        #[serde(default)]
        reason: String,
    },
    /// The arbiter's ruling on claim `claim` (its `id`); upholding it may come with a warning
    /// to the opponent of the claimant (extension).
    ResolveClaim {
        #[serde(rename = "match")]
        match_id: String,
        claim: u32,
        upheld: bool,
        #[serde(default)]
        reason: String,
        #[serde(default)]
        warn: bool,
    },
    Pause {
        #[serde(rename = "match")]
        match_id: String,
    },
    Resume {
        #[serde(rename = "match")]
        match_id: String,
    },
    AdjustClock {
        #[serde(rename = "match")]
        match_id: String,
        seat: Seat,
        delta_ms: i64,
    },
    StartSet {
        #[serde(rename = "match")]
        match_id: String,
    },
    Declare {
        #[serde(rename = "match")]
        match_id: String,
        scope: Scope,
        winner: Winner,
        #[serde(default)]
        reason: String,
    },
    /// Organizer only: a Swiss tournament.
    CreateTournament(CreateTournament),
    /// Late entries (or, before the start, more players: a list too long for one
    /// `create_tournament` frame comes in several). Organizer or tournament arbiter.
    AddPlayers {
        tournament: String,
        players: Vec<NewPlayer>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        arbiter_token: Option<String>,
    },
    /// Rank the players, settle the colour lot, pair round 1 and create its matches.
    StartTournament {
        tournament: String,
        /// The seat of the first-ranked player in round 1; absent: drawn by lot.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        colour_lot: Option<Seat>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        arbiter_token: Option<String>,
    },
    /// Pair the next round once every match of the current one has ended.
    PairNext {
        tournament: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        arbiter_token: Option<String>,
        /// The `pairing` of a `pairing_preview`: publish only that pairing, and refuse with
        /// `pairing_changed` (and the pairing as it is now) if the round would be paired
        /// otherwise (extension).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pairing: Option<String>,
    },
    /// The arbiter enters (a board played over the board) or corrects the result of board
    /// `board` of round `round`: `1-0`, `0-1`, `1/2-1/2`, `+-`, `-+`, `--` (extension).
    SetResult {
        tournament: String,
        round: u32,
        board: u32,
        result: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        arbiter_token: Option<String>,
    },
    /// The chief arbiter names an assistant arbiter for these board numbers (in every round);
    /// the answer carries the assistant's token, shown once (extension).
    AddAssistant {
        tournament: String,
        name: String,
        boards: Vec<u32>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        arbiter_token: Option<String>,
    },
    /// The pairing `pair_next` would publish now, without publishing it (extension).
    PreviewPairing {
        tournament: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        arbiter_token: Option<String>,
    },
    /// The player is not paired again (the current round's match is still played or
    /// forfeited). The arbiter, or the player's own account.
    Withdraw {
        tournament: String,
        player: u32,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        arbiter_token: Option<String>,
    },
    /// A half-point bye in a round not yet paired. The arbiter, or the player's own account.
    RequestBye {
        tournament: String,
        player: u32,
        round: u32,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        arbiter_token: Option<String>,
    },
    /// The arbiter: the player did not show up for the current round and loses it by forfeit;
    /// with `double`, neither player of the board did (a second forfeit on the same board
    /// makes it double too). `round`, if given, must be the current round.
    Forfeit {
        tournament: String,
        player: u32,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        round: Option<u32>,
        #[serde(default, skip_serializing_if = "is_false")]
        double: bool,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        arbiter_token: Option<String>,
    },
    /// The tournament's view (as `/api/tournaments/ID`).
    GetTournament {
        tournament: String,
    },
    /// The tournament's view now, and again after every change until `unwatch_tournament`
    /// (extension): pages and clients follow a tournament without asking again.
    WatchTournament {
        tournament: String,
    },
    UnwatchTournament {
        tournament: String,
    },
    /// The TRF(x) of the completed rounds (as `/api/tournaments/ID/trf`).
    ExportTrf {
        tournament: String,
    },
    /// An account's ratings and latest rated rounds (as `/api/players/NAME`; extension).
    GetPlayer {
        name: String,
    },
}

fn yes() -> bool {
    true
}

fn is_false(value: &bool) -> bool {
    !*value
}

impl ClientMessage {
    /// Every `type` a client may send, for the error that names an unknown one.
    pub const TYPES: &'static [&'static str] = &[
        "hello",
        "ping",
        "create_match",
        "create_account",
        "register",
        "login",
        "logout",
        "change_password",
        "set_account_status",
        "seek",
        "cancel_seek",
        "accept_seek",
        "watch_lobby",
        "unwatch_lobby",
        "offer_rematch",
        "join",
        "watch",
        "leave",
        "list_matches",
        "place",
        "rotate",
        "press",
        "move",
        "ready",
        "resign",
        "claim",
        "offer_draw",
        "decline_draw",
        "chat",
        "mute",
        "set_chat",
        "warn",
        "resolve_claim",
        "pause",
        "resume",
        "adjust_clock",
        "start_set",
        "declare",
        "create_tournament",
        "add_players",
        "start_tournament",
        "pair_next",
        "preview_pairing",
        "set_result",
        "add_assistant",
        "withdraw",
        "request_bye",
        "forfeit",
        "get_tournament",
        "watch_tournament",
        "unwatch_tournament",
        "export_trf",
        "get_player",
    ];

    /// The match a message is about, if any.
    pub fn match_id(&self) -> Option<&str> {
        use ClientMessage::*;
        match self {
            Hello { .. }
            | Ping
            | CreateMatch(_)
            | CreateAccount { .. }
            | Register { .. }
            | Login { .. }
            | Logout
            | ChangePassword { .. }
            | SetAccountStatus { .. }
            | Seek(_)
            | CancelSeek { .. }
            | AcceptSeek { .. }
            | WatchLobby
            | UnwatchLobby
            | ListMatches { .. }
            | CreateTournament(_)
            | AddPlayers { .. }
            | StartTournament { .. }
            | PairNext { .. }
            | PreviewPairing { .. }
            | SetResult { .. }
            | AddAssistant { .. }
            | Withdraw { .. }
            | RequestBye { .. }
            | Forfeit { .. }
            | GetTournament { .. }
            | WatchTournament { .. }
            | UnwatchTournament { .. }
            | ExportTrf { .. }
            | GetPlayer { .. } => None,
            Join { match_id, .. }
            | Watch { match_id, .. }
            | Leave { match_id }
            | Place { match_id, .. }
            | Rotate { match_id, .. }
            | Press { match_id }
            | Move { match_id, .. }
            | Ready { match_id }
            | Resign { match_id }
            | Claim { match_id, .. }
            | OfferDraw { match_id }
            | DeclineDraw { match_id }
            | Chat { match_id, .. }
            | Mute { match_id, .. }
            | SetChat { match_id, .. }
            | Warn { match_id, .. }
            | ResolveClaim { match_id, .. }
            | Pause { match_id }
            | Resume { match_id }
            | AdjustClock { match_id, .. }
            | StartSet { match_id }
            | Declare { match_id, .. }
            | OfferRematch { match_id } => Some(match_id),
        }
    }
}

/// `create_match`: every field but `game` has a default.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CreateMatch {
    pub game: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub variant: Option<String>,
    #[serde(default = "default_sets")]
    pub sets: u8,
    /// `null` for an untimed match; absent for the default 15:00 with no increment.
    #[serde(default = "default_clock", skip_serializing_if = "is_default_clock")]
    pub clock: Option<ClockConfig>,
    #[serde(default = "default_warnings_limit")]
    pub warnings_limit: u8,
    #[serde(default)]
    pub players: PerSeat<String>,
    /// Accounts (by name) to seat: each is sent `your_match` with its seat token.
    #[serde(default, skip_serializing_if = "PerSeat::is_empty")]
    pub accounts: PerSeat<Option<String>>,
    /// A built-in bot that the server itself seats and plays (casual play against the computer).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub house_bot: Option<HouseBot>,
    /// Spectators see the match this far behind (extension).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spectator_delay: Option<SpectatorDelay>,
    /// The round's result changes the players' ratings (both seats must be player accounts).
    #[serde(default, skip_serializing_if = "is_false")]
    pub rated: bool,
}

/// The server's own bot in a match.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct HouseBot {
    pub seat: Seat,
    /// 1 (weakest) to 5.
    #[serde(default = "default_bot_level")]
    pub level: u8,
}

fn default_bot_level() -> u8 {
    2
}

pub(crate) fn default_sets() -> u8 {
    3
}

pub(crate) fn default_warnings_limit() -> u8 {
    DEFAULT_WARNINGS_LIMIT
}

/// Warnings that lose the round, unless a match says otherwise.
pub const DEFAULT_WARNINGS_LIMIT: u8 = 3;

pub(crate) fn default_clock() -> Option<ClockConfig> {
    Some(ClockConfig::default())
}

fn is_default_clock(clock: &Option<ClockConfig>) -> bool {
    *clock == default_clock()
}

impl CreateMatch {
    pub fn new(game: &str) -> CreateMatch {
        CreateMatch {
            game: game.to_string(),
            variant: None,
            sets: default_sets(),
            clock: default_clock(),
            warnings_limit: default_warnings_limit(),
            players: PerSeat::default(),
            accounts: PerSeat::default(),
            house_bot: None,
            spectator_delay: None,
            rated: false,
        }
    }
}

/// How far behind the play spectators see a match (extension, anti-cheat for tournament
/// boards): an event reaches spectators, and the public reads of the match, once it is
/// `seconds` old and `moves` moves have been made after it. Players and the arbiter see
/// everything at once; when the round ends, spectators see the rest at once.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SpectatorDelay {
    #[serde(default)]
    pub seconds: u32,
    #[serde(default)]
    pub moves: u32,
}

impl SpectatorDelay {
    pub const MAX_SECONDS: u32 = 3600;
    pub const MAX_MOVES: u32 = 100;

    /// No delay at all.
    pub fn is_live(&self) -> bool {
        self.seconds == 0 && self.moves == 0
    }

    /// A requested delay as the server keeps it: checked, and none at all when it is zero.
    pub fn checked(delay: Option<SpectatorDelay>) -> Result<Option<SpectatorDelay>, String> {
        match delay {
            Some(delay) => delay.check().map(|()| Some(delay).filter(|d| !d.is_live())),
            None => Ok(None),
        }
    }

    /// A delay the server holds: at most an hour and a hundred moves.
    pub fn check(&self) -> Result<(), String> {
        if self.seconds > Self::MAX_SECONDS {
            return Err(format!(
                "spectator_delay.seconds must be at most {}",
                Self::MAX_SECONDS
            ));
        }
        if self.moves > Self::MAX_MOVES {
            return Err(format!(
                "spectator_delay.moves must be at most {}",
                Self::MAX_MOVES
            ));
        }
        Ok(())
    }
}

/// The time control of every set: both clocks are reset to `initial_ms` when a set starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClockConfig {
    pub initial_ms: u64,
    #[serde(default)]
    pub increment_ms: u64,
}

impl Default for ClockConfig {
    /// 15 minutes per player per set, no increment.
    fn default() -> ClockConfig {
        ClockConfig {
            initial_ms: 15 * 60 * 1000,
            increment_ms: 0,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Scope {
    Set,
    Round,
}

/// Which matches a list shows.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ListStatus {
    /// Matches whose round is not over.
    #[default]
    Live,
    /// Matches whose round is over, the most recently finished first.
    Finished,
}

/// A seat, or a draw.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Winner {
    P1,
    P2,
    Draw,
}

impl Winner {
    pub fn seat(self) -> Option<Seat> {
        match self {
            Winner::P1 => Some(Seat::P1),
            Winner::P2 => Some(Seat::P2),
            Winner::Draw => None,
        }
    }

    pub fn from_seat(seat: Option<Seat>) -> Winner {
        match seat {
            Some(Seat::P1) => Winner::P1,
            Some(Seat::P2) => Winner::P2,
            None => Winner::Draw,
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Server to client

/// How many messages a connection may send: `burst` at once, then `per_second` on average.
/// The server reads a connection that goes faster no faster than this, and closes one that
/// runs a whole burst ahead of it.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct MessageRate {
    pub per_second: f64,
    pub burst: f64,
}

/// Every message the server sends.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ServerMessage {
    Welcome {
        protocol: u32,
        session: String,
        identity: Identity,
        server_time_ms: u64,
        /// The extensions asked for at `hello` that this connection has.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        features: Vec<String>,
        /// The message rate this connection is held to (extension; absent from an older
        /// server): a client that sends many messages at once paces them within it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        rate: Option<MessageRate>,
    },
    Pong {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        re: Option<RequestId>,
        server_time_ms: u64,
    },
    /// An account was created; its token is shown only here.
    AccountCreated {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        re: Option<RequestId>,
        name: String,
        kind: AccountKind,
        token: String,
    },
    /// An account was registered: `active` with a session `token`, or `pending` until the
    /// organizer approves it (then log in).
    Registered {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        re: Option<RequestId>,
        name: String,
        status: AccountStatus,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        token: Option<String>,
    },
    /// To the other seat of a finished match: `seat` offers a rematch.
    RematchOffered {
        #[serde(rename = "match")]
        match_id: String,
        seat: Seat,
    },
    /// The rematch both seats asked for: this seat's place in the new match.
    Rematch {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        re: Option<RequestId>,
        #[serde(rename = "match")]
        match_id: String,
        new_match: String,
        seat: Seat,
        seat_token: String,
    },
    /// A chat message, to the members who read its channel (extension `chat`).
    Chat(ChatLine),
    /// After `join`/`watch`, to a member that asked for `chat`: whether the chat is on, the
    /// member's own standing, and the last messages it may read, oldest first.
    ChatHistory {
        #[serde(rename = "match")]
        match_id: String,
        enabled: bool,
        #[serde(default, skip_serializing_if = "is_false")]
        muted: bool,
        lines: Vec<ChatLine>,
        /// Who is muted: for the arbiter and the organizer only.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        mutes: Option<Vec<ChatMute>>,
    },
    /// The chat was turned on or off, or someone was muted (extension `chat`): as in
    /// `chat_history`, without the lines.
    ChatSettings {
        #[serde(rename = "match")]
        match_id: String,
        enabled: bool,
        #[serde(default, skip_serializing_if = "is_false")]
        muted: bool,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        mutes: Option<Vec<ChatMute>>,
    },
    /// The seek just posted.
    SeekPosted {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        re: Option<RequestId>,
        seek: SeekView,
    },
    /// The open seeks, oldest first (the answer to `watch_lobby`).
    Lobby {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        re: Option<RequestId>,
        seeks: Vec<SeekView>,
    },
    /// To lobby watchers: a new seek.
    SeekAdded {
        seek: SeekView,
    },
    /// To lobby watchers: a seek is gone; `match` when it was accepted.
    SeekRemoved {
        seek: String,
        #[serde(rename = "match", default, skip_serializing_if = "Option::is_none")]
        match_id: Option<String>,
    },
    /// A session token for the account, shown only here.
    LoggedIn {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        re: Option<RequestId>,
        name: String,
        token: String,
    },
    /// To an account's connections: it is seated in a match (sent at `hello` for every live
    /// match it is seated in, and when a new one is created).
    YourMatch {
        #[serde(rename = "match")]
        match_id: String,
        seat: Seat,
        seat_token: String,
        game: String,
        variant: String,
    },
    MatchCreated {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        re: Option<RequestId>,
        #[serde(rename = "match")]
        match_id: String,
        seat_tokens: PerSeat<String>,
        arbiter_token: String,
    },
    Matches {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        re: Option<RequestId>,
        matches: Vec<MatchSummary>,
        /// There are more: ask again with this as `before`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        next: Option<String>,
    },
    /// The whole truth about a match, sent on join and watch.
    State(Box<MatchState>),
    /// One change, numbered without gaps.
    Event(Box<EventFrame>),
    /// The events of one action, in order, to a connection that asked for the `batch`
    /// extension; each is the `event` frame it would have been sent alone.
    Events {
        #[serde(rename = "match")]
        match_id: String,
        events: Vec<EventFrame>,
    },
    /// An action was accepted; `seq` is the number of the last event it produced.
    Ack {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        re: Option<RequestId>,
        #[serde(rename = "match", default, skip_serializing_if = "Option::is_none")]
        match_id: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        seq: Option<u64>,
    },
    Error(ErrorReply),
    /// A tournament was created; the tokens of the accounts made for its players are shown
    /// only here.
    TournamentCreated {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        re: Option<RequestId>,
        tournament: String,
        /// Arbitrates the tournament and every one of its matches.
        arbiter_token: String,
        players: Vec<PlayerToken>,
    },
    /// Players were added (late entries after the start); tokens as in `tournament_created`.
    PlayersAdded {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        re: Option<RequestId>,
        tournament: String,
        players: Vec<PlayerToken>,
    },
    /// A tournament's view: the answer to `get_tournament` and to every tournament command, and
    /// (without `re`) each change of a watched tournament.
    Tournament {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        re: Option<RequestId>,
        #[serde(flatten)]
        view: Box<TournamentView>,
    },
    /// The answer to `add_assistant`: the assistant's token, shown only here.
    AssistantAdded {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        re: Option<RequestId>,
        tournament: String,
        name: String,
        boards: Vec<u32>,
        token: String,
    },
    /// The answer to `preview_pairing`: the next round as `pair_next` would pair it now.
    PairingPreview {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        re: Option<RequestId>,
        tournament: String,
        #[serde(flatten)]
        preview: Box<tournament::PairingPreview>,
    },
    /// The answer to `get_player`.
    Player {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        re: Option<RequestId>,
        #[serde(flatten)]
        profile: Box<PlayerProfile>,
    },
    /// The answer to `export_trf`.
    Trf {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        re: Option<RequestId>,
        tournament: String,
        trf: String,
    },
}

impl ServerMessage {
    /// The `id` of the request this message directly answers, if it is such a reply.
    pub fn re(&self) -> Option<&RequestId> {
        use ServerMessage::*;
        match self {
            Pong { re, .. }
            | AccountCreated { re, .. }
            | Registered { re, .. }
            | LoggedIn { re, .. }
            | SeekPosted { re, .. }
            | Lobby { re, .. }
            | Rematch { re, .. }
            | MatchCreated { re, .. }
            | Matches { re, .. }
            | Ack { re, .. }
            | TournamentCreated { re, .. }
            | PlayersAdded { re, .. }
            | Tournament { re, .. }
            | PairingPreview { re, .. }
            | AssistantAdded { re, .. }
            | Player { re, .. }
            | Trf { re, .. } => re.as_ref(),
            Error(error) => error.re.as_ref(),
            Welcome { .. }
            | YourMatch { .. }
            | SeekAdded { .. }
            | SeekRemoved { .. }
            | RematchOffered { .. }
            | Chat(_)
            | ChatHistory { .. }
            | ChatSettings { .. }
            | State(_)
            | Event(_)
            | Events { .. } => None,
        }
    }
}

/// What an account is.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AccountKind {
    #[default]
    Player,
    Bot,
}

/// A seek as a client sends it: the game it offers.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct NewSeek {
    pub game: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub variant: Option<String>,
    #[serde(default = "default_sets")]
    pub sets: u8,
    /// `null`: untimed.
    #[serde(default = "default_clock", skip_serializing_if = "is_default_clock")]
    pub clock: Option<ClockConfig>,
    /// Both players' ratings change (two player accounts).
    #[serde(default, skip_serializing_if = "is_false")]
    pub rated: bool,
    /// A challenge: only this account sees the seek and may accept it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub to: Option<String>,
}

/// An open seek in the lobby.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SeekView {
    pub seek: String,
    /// The account that posted it.
    pub account: String,
    pub game: String,
    pub variant: String,
    pub sets: u8,
    pub clock: Option<ClockConfig>,
    #[serde(default, skip_serializing_if = "is_false")]
    pub rated: bool,
    /// The challenged account, when the seek is a challenge.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub to: Option<String>,
    pub created_ms: u64,
}

impl SeekView {
    /// Whether `viewer` (an account name, or none for a guest) sees this seek: everyone sees
    /// an open seek, only its two accounts a challenge.
    pub fn seen_by(&self, viewer: Option<&str>) -> bool {
        match &self.to {
            None => true,
            Some(to) => viewer.is_some_and(|v| v == to || v == self.account),
        }
    }
}

/// Whether an account may be used.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AccountStatus {
    #[default]
    Active,
    /// Registered, waiting for the organizer's approval.
    Pending,
    Disabled,
}

impl AccountStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            AccountStatus::Active => "active",
            AccountStatus::Pending => "pending",
            AccountStatus::Disabled => "disabled",
        }
    }

    pub fn parse(text: &str) -> Option<AccountStatus> {
        [
            AccountStatus::Active,
            AccountStatus::Pending,
            AccountStatus::Disabled,
        ]
        .into_iter()
        .find(|s| s.as_str() == text)
    }
}

/// A password as a client sends it: never printed (its `Debug` says only its length).
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Password(pub String);

impl fmt::Debug for Password {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Password({} characters)", self.0.chars().count())
    }
}

/// Passwords are 8 to 128 characters.
pub const PASSWORD_CHARS: std::ops::RangeInclusive<usize> = 8..=128;

/// A rating as a player's page shows it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RatingView {
    pub rating: f64,
    pub deviation: f64,
    pub volatility: f64,
    pub rounds: u32,
    /// Fewer rated rounds than it takes to trust the figure.
    pub provisional: bool,
}

/// One rated round of an account, with its rating after it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RatedRound {
    #[serde(rename = "match")]
    pub match_id: String,
    pub pool: String,
    /// 1 a win, 0.5 a draw, 0 a loss.
    pub score: f64,
    pub rating: f64,
    pub deviation: f64,
    pub at_ms: u64,
}

/// A player's ratings (by pool: `pentago-tr`, `pentago-classic`, `quoridor`, `pente`) and its
/// latest rated rounds, newest first.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PlayerProfile {
    pub name: String,
    pub kind: AccountKind,
    pub ratings: std::collections::BTreeMap<String, RatingView>,
    pub history: Vec<RatedRound>,
}

/// A match's two chats: the players' (the players and the arbiter read it) and the
/// spectators' (the spectators and the arbiter), so that nobody watching talks to a player
/// during play.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ChatChannel {
    Players,
    Spectators,
}

impl ChatChannel {
    pub fn as_str(self) -> &'static str {
        match self {
            ChatChannel::Players => "players",
            ChatChannel::Spectators => "spectators",
        }
    }

    pub fn parse(text: &str) -> Option<ChatChannel> {
        [ChatChannel::Players, ChatChannel::Spectators]
            .into_iter()
            .find(|c| c.as_str() == text)
    }
}

/// Who wrote a chat message.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ChatRole {
    P1,
    P2,
    Arbiter,
    Spectator,
    Organizer,
}

impl ChatRole {
    pub const ALL: [ChatRole; 5] = [
        ChatRole::P1,
        ChatRole::P2,
        ChatRole::Arbiter,
        ChatRole::Spectator,
        ChatRole::Organizer,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            ChatRole::P1 => "p1",
            ChatRole::P2 => "p2",
            ChatRole::Arbiter => "arbiter",
            ChatRole::Spectator => "spectator",
            ChatRole::Organizer => "organizer",
        }
    }

    pub fn parse(text: &str) -> Option<ChatRole> {
        ChatRole::ALL.into_iter().find(|r| r.as_str() == text)
    }

    pub fn of_seat(seat: Seat) -> ChatRole {
        match seat {
            Seat::P1 => ChatRole::P1,
            Seat::P2 => ChatRole::P2,
        }
    }
}

/// The most characters of one chat message.
pub const MAX_CHAT_CHARS: usize = 300;

/// One chat message.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChatLine {
    #[serde(rename = "match")]
    pub match_id: String,
    /// The message's number in its channel, from 1.
    pub n: u64,
    pub channel: ChatChannel,
    /// The writer: a seat's player name, an account's name, or empty for the arbiter and the
    /// organizer.
    pub from: String,
    pub role: ChatRole,
    pub text: String,
    pub at_ms: u64,
}

/// Who is muted in a match's chat: a seat, or an account by name.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct ChatMute {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seat: Option<Seat>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Identity {
    pub kind: IdentityKind,
    #[serde(default)]
    pub name: String,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum IdentityKind {
    Guest,
    Player,
    Bot,
    Arbiter,
    Organizer,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ErrorReply {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub re: Option<RequestId>,
    pub code: ErrorCode,
    pub message: String,
    #[serde(rename = "match", default, skip_serializing_if = "Option::is_none")]
    pub match_id: Option<String>,
    /// For `illegal_move`: the rule the move breaks (`occupied`, `ccw_in_tr`, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rule: Option<String>,
    /// For `pairing_changed`: the pairing as it would be published now.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preview: Option<Box<tournament::PairingPreview>>,
}

/// The stable error codes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorCode {
    BadRequest,
    UnsupportedProtocol,
    Unauthorized,
    Forbidden,
    UnknownMatch,
    UnknownTournament,
    /// No account of that name (extension).
    UnknownAccount,
    /// No pairing of the round satisfies the absolute criteria of the pairing system.
    NoPairing,
    /// `pair_next` named a pairing that is no longer the one the round would get (extension).
    PairingChanged,
    NotYourTurn,
    IllegalMove,
    /// The opponent has not pressed the clock yet.
    PressFirst,
    /// A press before the move is complete.
    MoveIncomplete,
    /// No set is being played.
    SetOver,
    /// The clocks are paused by the arbiter; play waits.
    Paused,
    RateLimited,
    TooLarge,
    Internal,
}

impl ErrorCode {
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::BadRequest => "bad_request",
            ErrorCode::UnsupportedProtocol => "unsupported_protocol",
            ErrorCode::Unauthorized => "unauthorized",
            ErrorCode::Forbidden => "forbidden",
            ErrorCode::UnknownMatch => "unknown_match",
            ErrorCode::UnknownTournament => "unknown_tournament",
            ErrorCode::UnknownAccount => "unknown_account",
            ErrorCode::NoPairing => "no_pairing",
            ErrorCode::PairingChanged => "pairing_changed",
            ErrorCode::NotYourTurn => "not_your_turn",
            ErrorCode::IllegalMove => "illegal_move",
            ErrorCode::PressFirst => "press_first",
            ErrorCode::MoveIncomplete => "move_incomplete",
            ErrorCode::SetOver => "set_over",
            ErrorCode::Paused => "paused",
            ErrorCode::RateLimited => "rate_limited",
            ErrorCode::TooLarge => "too_large",
            ErrorCode::Internal => "internal",
        }
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MatchStatus {
    /// Before the first set.
    Waiting,
    Playing,
    BetweenSets,
    Finished,
}

/// One line of the match list.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MatchSummary {
    #[serde(rename = "match")]
    pub match_id: String,
    pub game: String,
    pub variant: String,
    pub players: PerSeat<String>,
    pub status: MatchStatus,
    pub set: u8,
    pub set_points: PerSeat<Points>,
    /// The tournament the match is a round of, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tournament: Option<String>,
    /// The match expired before its first set.
    #[serde(default, skip_serializing_if = "is_false")]
    pub expired: bool,
    /// When the match was created (Unix milliseconds).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created_ms: Option<u64>,
    /// When its round ended (Unix milliseconds), for a finished match.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finished_ms: Option<u64>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PlayerInfo {
    pub name: String,
    pub connected: bool,
    /// Has sent `ready` for the next set.
    #[serde(default)]
    pub ready: bool,
    /// The seat is played by the server's own bot.
    #[serde(default, skip_serializing_if = "is_false")]
    pub house_bot: bool,
}

/// The clocks at one moment. `running` is the seat whose time is going down.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Clocks {
    pub p1_ms: u64,
    pub p2_ms: u64,
    pub running: Option<Seat>,
    pub paused: bool,
    pub server_time_ms: u64,
}

impl Clocks {
    pub fn remaining(&self, seat: Seat) -> u64 {
        match seat {
            Seat::P1 => self.p1_ms,
            Seat::P2 => self.p2_ms,
        }
    }
}

/// A finished set, as `set_ended` reports it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SetResult {
    pub set: u8,
    pub first_mover: Seat,
    /// From the set's first mover's side, as game records write it.
    pub result: GameResult,
    pub winner: Option<Seat>,
    pub reason: SetReason,
}

/// A set's result from its first mover's side: `1-0`, `0-1`, `1/2-1/2`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum GameResult {
    #[serde(rename = "1-0")]
    FirstMoverWins,
    #[serde(rename = "0-1")]
    SecondMoverWins,
    #[serde(rename = "1/2-1/2")]
    Draw,
}

impl GameResult {
    /// The result of a set won by `winner` (a draw for `None`) whose first mover was `first`.
    pub fn of(winner: Option<Seat>, first: Seat) -> GameResult {
        match winner {
            Some(seat) if seat == first => GameResult::FirstMoverWins,
            Some(_) => GameResult::SecondMoverWins,
            None => GameResult::Draw,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            GameResult::FirstMoverWins => "1-0",
            GameResult::SecondMoverWins => "0-1",
            GameResult::Draw => "1/2-1/2",
        }
    }
}

impl fmt::Display for GameResult {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Writes a string-valued enum as its name and reads any other name into its `Other`
/// variant, so that a reason a newer server adds does not make a frame unreadable.
macro_rules! named {
    ($(#[$doc:meta])* $name:ident { $($(#[$vdoc:meta])* $variant:ident => $text:literal,)* }) => {
        $(#[$doc])*
        #[derive(Clone, Debug, PartialEq, Eq, Hash)]
        pub enum $name {
            $($(#[$vdoc])* $variant,)*
            /// A name this build does not know.
            Other(String),
        }

        impl $name {
            pub fn as_str(&self) -> &str {
                match self {
                    $($name::$variant => $text,)*
                    $name::Other(text) => text,
                }
            }

            pub fn parse(text: &str) -> $name {
                match text {
                    $($text => $name::$variant,)*
                    other => $name::Other(other.to_string()),
                }
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl Serialize for $name {
            fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.serialize_str(self.as_str())
            }
        }

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                Ok($name::parse(&String::deserialize(deserializer)?))
            }
        }
    };
}

named! {
    /// Why a set ended.
    SetReason {
        /// Five in a row (Pentago, Pente).
        Five => "five",
        /// Pentago: the move gave five to both players.
        DoubleFive => "double_five",
        /// Pentago: the move gave five only to the opponent.
        OpponentFive => "opponent_five",
        FullBoard => "full_board",
        /// Quoridor: a pawn reached its goal row.
        Goal => "goal",
        /// Pente: ten stones captured.
        Captures => "captures",
        /// An untimed Quoridor set reached its ply limit.
        MoveLimit => "move_limit",
        Time => "time",
        Resign => "resign",
        Arbiter => "arbiter",
        /// Both players agreed to a draw (casual Pente and Quoridor).
        Agreement => "agreement",
    }
}

impl SetReason {
    /// Whether the board itself ended the set (so that the loser may still claim against the
    /// last move), as opposed to the clock, a resignation or the arbiter.
    pub fn is_on_the_board(&self) -> bool {
        !matches!(
            self,
            SetReason::Time | SetReason::Resign | SetReason::Arbiter | SetReason::Agreement
        )
    }
}

named! {
    /// Why a round ended.
    RoundReason {
        /// The sets decided it.
        Sets => "sets",
        /// A player reached the warnings limit.
        Warnings => "warnings",
        Arbiter => "arbiter",
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RoundResult {
    pub winner: Winner,
    pub set_points: PerSeat<Points>,
    pub points: PerSeat<Points>,
    pub reason: RoundReason,
}

/// A move placed or turned but not yet complete or pressed (Pentago).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Pending {
    pub seat: Seat,
    pub cell: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quadrant: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dir: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PositionView {
    /// The seat to act, while a set is being played.
    pub to_move: Option<Seat>,
    /// The set's first mover: black in Pentago, White in Pente, the pawn from e1 in Quoridor.
    pub first_mover: Option<Seat>,
    /// Completed moves of the current set, in notation.
    pub moves: Vec<String>,
    /// A placement (and turn) made but not yet pressed.
    pub pending: Option<Pending>,
    /// The seat whose completed move waits for the clock press.
    pub awaiting_press: Option<Seat>,
    /// The board (null before the first set); see [`board`].
    pub board: Option<Board>,
    /// The legal moves of the seat to act, when the client asked for them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub legal_moves: Option<Vec<String>>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MatchState {
    #[serde(rename = "match")]
    pub match_id: String,
    pub seq: u64,
    pub game: String,
    pub variant: String,
    pub sets_max: u8,
    pub clock: Option<ClockConfig>,
    pub warnings_limit: u8,
    pub players: PerSeat<PlayerInfo>,
    pub status: MatchStatus,
    pub set: u8,
    pub sets: Vec<SetResult>,
    pub set_points: PerSeat<Points>,
    pub warnings: PerSeat<u8>,
    pub round: Option<RoundResult>,
    pub paused: bool,
    pub position: PositionView,
    pub clocks: Option<Clocks>,
    /// The reader's own role in this match: `p1`, `p2`, `arbiter` or `spectator`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub you: Option<String>,
    /// The tournament the match is a round of, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tournament: Option<String>,
    /// The match expired before its first set: nobody came to play it.
    #[serde(default, skip_serializing_if = "is_false")]
    pub expired: bool,
    /// The round's result changes the two players' ratings.
    #[serde(default, skip_serializing_if = "is_false")]
    pub rated: bool,
    /// Each seat's colour in the current set ([`seat_colours`]); absent in Quoridor.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub colours: Option<PerSeat<StoneColour>>,
    /// Every claim of the match with its ruling, for the arbiter and the players (absent for
    /// spectators and in public reads).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub claims: Option<Vec<ClaimView>>,
    /// The match shows spectators its events this far behind (extension; absent when live).
    /// In a spectator's or a public state, `seq` and everything else are as of that moment.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spectator_delay: Option<SpectatorDelay>,
    /// The seat whose draw offer waits for the opponent's answer (extension).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub draw_offer: Option<Seat>,
}

/// A player's claim to the arbiter and what became of it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClaimView {
    /// The claim's number in the match, from 1.
    pub id: u32,
    pub seat: Seat,
    pub text: String,
    /// The set, and the ply in it, of the move claimed against (the opponent's last move).
    pub set: u8,
    pub ply: u32,
    pub status: ClaimStatus,
    /// The arbiter's reason, once ruled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ruling: Option<String>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ClaimStatus {
    Open,
    Upheld,
    Rejected,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct EventFrame {
    #[serde(rename = "match")]
    pub match_id: String,
    pub seq: u64,
    pub event: Event,
    pub clocks: Option<Clocks>,
}

/// What happened. The kinds and fields of the contract are fixed; others are extensions.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Event {
    SetStarted {
        set: u8,
        first_mover: Seat,
        /// The empty board of the new set (extension: a client draws it without the rules).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        board: Option<Board>,
        /// Each seat's colour in the new set (extension, sent with the board; absent in
        /// Quoridor): see [`seat_colours`].
        #[serde(default, skip_serializing_if = "Option::is_none")]
        colours: Option<PerSeat<StoneColour>>,
    },
    Placed {
        seat: Seat,
        cell: String,
        /// The board with the marble on it (extension).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        board: Option<Board>,
    },
    Rotated {
        seat: Seat,
        quadrant: String,
        dir: String,
    },
    /// A completed move in notation, however it was sent.
    Moved {
        seat: Seat,
        #[serde(rename = "move")]
        mv: String,
        /// The board after the move: the quadrant turned, the stones captured (extension).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        board: Option<Board>,
    },
    Pressed {
        seat: Seat,
    },
    SetEnded(SetResult),
    Warning {
        seat: Seat,
        count: u8,
        reason: String,
    },
    RoundEnded(RoundResult),
    Paused,
    Resumed,
    ClockAdjusted {
        seat: Seat,
        delta_ms: i64,
    },
    Claim {
        seat: Seat,
        text: String,
        /// The claim's number in the match, 1, 2, ... (extension; see [`ClaimView`]).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        id: Option<u32>,
        /// The set and the ply (1-based, in that set) of the move the claim is about.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        set: Option<u8>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        ply: Option<u32>,
    },
    /// The arbiter ruled on a claim (extension).
    ClaimResolved {
        claim: u32,
        upheld: bool,
        reason: String,
    },
    PlayerConnected {
        seat: Seat,
    },
    PlayerDisconnected {
        seat: Seat,
    },
    /// A player is ready for the next set (extension).
    Ready {
        seat: Seat,
    },
    /// The arbiter's decision, with its reason, before the `set_ended` or `round_ended` it
    /// causes (extension: the record keeps every arbiter act with its reason).
    Declared {
        scope: Scope,
        winner: Winner,
        reason: String,
    },
    /// Nobody played the match: it ends before its first set (extension).
    Expired,
    /// A player offers a draw of the set (extension): it stands until the opponent accepts
    /// (the set ends, reason `agreement`), declines, or moves.
    DrawOffered {
        seat: Seat,
    },
    /// The opponent of the seat that offered declined the draw (extension).
    DrawDeclined {
        seat: Seat,
    },
}

impl Event {
    /// The event without its board (and a new set's colours, which come with it), as a client
    /// that did not ask for boards sees it; `None` when it has neither.
    pub fn without_board(&self) -> Option<Event> {
        let mut event = self.clone();
        match &mut event {
            Event::SetStarted { board, colours, .. } => {
                if board.is_none() && colours.is_none() {
                    return None;
                }
                *board = None;
                *colours = None;
            }
            Event::Placed { board, .. } | Event::Moved { board, .. } => {
                board.take()?;
            }
            _ => return None,
        }
        Some(event)
    }

    /// The `kind` name.
    pub fn kind(&self) -> &'static str {
        match self {
            Event::SetStarted { .. } => "set_started",
            Event::Placed { .. } => "placed",
            Event::Rotated { .. } => "rotated",
            Event::Moved { .. } => "moved",
            Event::Pressed { .. } => "pressed",
            Event::SetEnded(_) => "set_ended",
            Event::Warning { .. } => "warning",
            Event::RoundEnded(_) => "round_ended",
            Event::Paused => "paused",
            Event::Resumed => "resumed",
            Event::ClockAdjusted { .. } => "clock_adjusted",
            Event::Claim { .. } => "claim",
            Event::ClaimResolved { .. } => "claim_resolved",
            Event::PlayerConnected { .. } => "player_connected",
            Event::PlayerDisconnected { .. } => "player_disconnected",
            Event::Ready { .. } => "ready",
            Event::Declared { .. } => "declared",
            Event::Expired => "expired",
            Event::DrawOffered { .. } => "draw_offered",
            Event::DrawDeclined { .. } => "draw_declined",
        }
    }
}

/// Reads a client frame, with an error message that names the problem.
pub fn parse_client_frame(text: &str) -> Result<ClientFrame, (Option<RequestId>, String)> {
    // The common case in one pass; a frame that does not read is looked at again, as a JSON
    // tree, to say what is wrong with it. The id is read again from the text, to echo it exactly.
    if let Ok(mut frame) = serde_json::from_str::<ClientFrame>(text) {
        if frame.id.is_none() {
            return Ok(frame);
        }
        if let Ok(id) = request_id::id_of(text) {
            frame.id = id;
            return Ok(frame);
        }
    }
    let value: Value =
        serde_json::from_str(text).map_err(|e| (None, format!("malformed JSON: {e}")))?;
    let Value::Object(object) = &value else {
        return Err((None, "a message must be a JSON object".to_string()));
    };
    let Ok(id) = request_id::id_of(text) else {
        return Err((None, "`id` must be a string or a number".to_string()));
    };
    match object.get("type") {
        None => return Err((id, "missing field `type`".to_string())),
        Some(Value::String(kind)) if !ClientMessage::TYPES.contains(&kind.as_str()) => {
            return Err((id, format!("unknown message type {kind:?}")));
        }
        Some(Value::String(_)) => {}
        Some(_) => return Err((id, "`type` must be a string".to_string())),
    }
    match serde_json::from_value::<ClientFrame>(value) {
        Ok(mut frame) => {
            frame.id = id;
            Ok(frame)
        }
        Err(e) => Err((id, e.to_string())),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_password_is_never_printed() {
        let message: super::ClientMessage =
            serde_json::from_str(r#"{"type":"login","name":"ayse","password":"gizli-parola"}"#)
                .unwrap();
        let printed = format!("{message:?}");
        assert!(!printed.contains("gizli"), "{printed}");
        assert!(printed.contains("12 characters"), "{printed}");
    }

    use super::*;
    use serde_json::json;

    #[test]
    fn create_match_defaults_and_explicit_null_clock() {
        let frame = parse_client_frame(r#"{"type":"create_match","game":"pentago"}"#).unwrap();
        let ClientMessage::CreateMatch(create) = frame.message else {
            panic!("{frame:?}")
        };
        assert_eq!(create.sets, 3);
        assert_eq!(create.warnings_limit, 3);
        assert_eq!(create.clock, Some(ClockConfig::default()));

        let frame = parse_client_frame(r#"{"type":"create_match","game":"quoridor","clock":null}"#)
            .unwrap();
        let ClientMessage::CreateMatch(create) = frame.message else {
            panic!("{frame:?}")
        };
        assert_eq!(create.clock, None);
    }

    #[test]
    fn ids_come_back_and_errors_name_the_problem() {
        let frame = parse_client_frame(r#"{"type":"press","match":"m1","id":7}"#).unwrap();
        assert_eq!(frame.id, Some(RequestId::from(7)));
        assert_eq!(
            frame.message,
            ClientMessage::Press {
                match_id: "m1".into()
            }
        );
        let (id, message) =
            parse_client_frame(r#"{"type":"place","match":"m1","id":"a"}"#).unwrap_err();
        assert_eq!(id, Some(RequestId::from("a")));
        assert!(message.contains("cell"), "{message}");
        let (_, message) = parse_client_frame(r#"{"type":"teleport"}"#).unwrap_err();
        assert!(message.contains("teleport"), "{message}");
        let (_, message) = parse_client_frame("[1,2]").unwrap_err();
        assert!(message.contains("object"), "{message}");
        assert!(parse_client_frame("{")
            .unwrap_err()
            .1
            .contains("malformed JSON"));
    }

    #[test]
    fn ids_are_echoed_exactly_as_written() {
        for id in [
            "123456789012345678901234567890",
            "-0.1000000000000000055511151231257827",
            "7",
            r#""\u00e7a""#,
        ] {
            for text in [
                format!(r#"{{"type":"press","match":"m1","id":{id}}}"#),
                // A frame that does not read keeps its id too.
                format!(r#"{{"type":"press","id":{id}}}"#),
            ] {
                let re = match parse_client_frame(&text) {
                    Ok(frame) => frame.id,
                    Err((re, _)) => re,
                };
                let reply = ServerMessage::Ack {
                    re,
                    match_id: None,
                    seq: None,
                };
                let out = serde_json::to_string(&reply).unwrap();
                assert!(out.contains(&format!(r#""re":{id}"#)), "{out}");
            }
        }
        for bad in [r#"{"type":"ping","id":[1]}"#, r#"{"type":"ping","id":{}}"#] {
            let (re, message) = parse_client_frame(bad).unwrap_err();
            assert_eq!(re, None);
            assert!(message.contains("`id`"), "{message}");
        }
        let frame = parse_client_frame(r#"{"type":"ping","id":null}"#).unwrap();
        assert_eq!(frame.id, None);
    }

    #[test]
    fn move_press_defaults_to_true() {
        let frame = parse_client_frame(r#"{"type":"move","match":"m","move":"d4ne"}"#).unwrap();
        assert!(matches!(
            frame.message,
            ClientMessage::Move { press: true, .. }
        ));
    }

    #[test]
    fn points_are_written_as_plain_numbers() {
        let points = PerSeat::new(Points { halves: 4 }, Points::HALF);
        assert_eq!(
            serde_json::to_value(points).unwrap(),
            json!({"p1": 2, "p2": 0.5})
        );
        let back: PerSeat<Points> = serde_json::from_value(json!({"p1": 2, "p2": 0.5})).unwrap();
        assert_eq!(back, points);
    }

    #[test]
    fn reasons_a_newer_server_adds_are_kept_not_refused() {
        let set: SetResult = serde_json::from_value(json!({"set": 1, "first_mover": "p1",
            "result": "0-1", "winner": "p2", "reason": "meteor"}))
        .unwrap();
        assert_eq!(set.reason, SetReason::Other("meteor".into()));
        assert_eq!(set.result, GameResult::SecondMoverWins);
        assert_eq!(serde_json::to_value(&set.reason).unwrap(), json!("meteor"));
        assert_eq!(SetReason::parse("double_five"), SetReason::DoubleFive);
        assert!(!SetReason::Time.is_on_the_board() && SetReason::Five.is_on_the_board());
        assert_eq!(RoundReason::parse("warnings").as_str(), "warnings");
        assert_eq!(
            GameResult::of(Some(Seat::P2), Seat::P2),
            GameResult::FirstMoverWins
        );
        assert!(serde_json::from_value::<GameResult>(json!("2-0")).is_err());
    }

    #[test]
    fn a_batch_reads_as_its_event_frames() {
        let text = r#"{"type":"events","match":"m","events":[
            {"type":"event","match":"m","seq":4,"event":{"kind":"moved","seat":"p1","move":"a1sw"},"clocks":null},
            {"type":"event","match":"m","seq":5,"event":{"kind":"pressed","seat":"p1"},"clocks":null}]}"#;
        let ServerMessage::Events { match_id, events } = serde_json::from_str(text).unwrap() else {
            panic!("an events frame")
        };
        assert_eq!(match_id, "m");
        assert_eq!(events.iter().map(|e| e.seq).collect::<Vec<_>>(), [4, 5]);
        assert_eq!(events[1].event, Event::Pressed { seat: Seat::P1 });
    }

    #[test]
    fn events_are_tagged_by_kind() {
        let event = Event::SetEnded(SetResult {
            set: 2,
            first_mover: Seat::P2,
            result: GameResult::FirstMoverWins,
            winner: Some(Seat::P2),
            reason: SetReason::Five,
        });
        assert_eq!(
            serde_json::to_value(&event).unwrap(),
            json!({"kind":"set_ended","set":2,"first_mover":"p2","result":"1-0","winner":"p2","reason":"five"})
        );
        let moved = Event::Moved {
            seat: Seat::P1,
            mv: "d4ne".into(),
            board: None,
        };
        assert_eq!(
            serde_json::to_value(&moved).unwrap(),
            json!({"kind":"moved","seat":"p1","move":"d4ne"})
        );
    }
}
