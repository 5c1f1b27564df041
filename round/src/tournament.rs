//! A Swiss tournament as data: its players, rounds, pairings and results, and every change an
//! organizer, arbiter or finished match can make to it. Pure: the registry ([`super`]) stores
//! it, creates the matches and tells people.
//!
//! The history is handed to `hakem-pairing` as a TRF-shaped [`hakem_pairing::Tournament`], so
//! the live server, `hakem tournament pair` and the exported TRF all see the same thing.

use std::collections::BTreeMap;

use hakem_pairing::{
    initial_order, pair_round_number, standings, Colour, Edition, Pairing, PairingError,
    ResultCode, RoundEntry, Rules, Tiebreak,
};
use hakem_protocol::tournament::{
    AssistantView, BoardView, ByeKind, ByeView, ColourLot, CreateTournament, PairingRules,
    PlayerView, RoundView, StandingView, TiebreakEdition, TournamentSettings as Settings,
    TournamentStatus, TournamentView,
};
use hakem_protocol::{PerSeat, Points, RoundResult, Seat, SpectatorDelay, Winner};
use serde::{Deserialize, Serialize};

use crate::round::MatchConfig;

/// The longest tournament the server pairs.
pub const MAX_ROUNDS: u32 = 30;
/// The most players in one tournament.
pub const MAX_PLAYERS: usize = 2000;

/// Checks a `create_tournament` request (all but its players) and resolves its preset.
pub fn settings_of(create: &CreateTournament) -> Result<Settings, String> {
    let name = create.name.trim();
    if name.is_empty() || name.chars().count() > 100 || name.chars().any(char::is_control) {
        return Err("a tournament's name is 1 to 100 characters, on one line".into());
    }
    if create.bye_points > Points::ONE {
        return Err("bye_points is 0, 0.5 or 1".into());
    }
    if !(1..=MAX_ROUNDS).contains(&create.rounds) {
        return Err(format!("rounds must be 1 to {MAX_ROUNDS}"));
    }
    for code in &create.tiebreaks {
        if Tiebreak::from_code(code).is_none() {
            return Err(format!(
                "unknown tie-break {code:?} (BH-C1, BH, SB, DE or WIN)"
            ));
        }
    }
    let config = MatchConfig::new(
        &create.game,
        create.variant.as_deref(),
        create.sets,
        create.clock,
        create.warnings_limit,
        PerSeat::default(),
    )?;
    Ok(Settings {
        name: name.to_string(),
        game: config.game.as_str().to_string(),
        variant: config.variant.to_string(),
        sets: create.sets,
        clock: create.clock,
        warnings_limit: create.warnings_limit,
        rounds: create.rounds,
        pairing: create.pairing,
        edition: create.edition,
        tiebreaks: create.tiebreaks.clone(),
        auto_pair: create.auto_pair,
        max_half_byes: create.max_half_byes,
        bye_points: create.bye_points,
        spectator_delay: SpectatorDelay::checked(create.spectator_delay)?,
        rated: create.rated,
    })
}

fn rules(settings: &Settings) -> Rules {
    match settings.pairing {
        PairingRules::Dutch2025 => Rules::Dutch2025,
        PairingRules::Dutch2017 => Rules::Dutch2017,
    }
}

fn edition(settings: &Settings) -> Edition {
    match settings.edition {
        TiebreakEdition::E2026 => Edition::E2026,
        TiebreakEdition::E2024 => Edition::E2024,
    }
}

fn tiebreak_order(settings: &Settings) -> Vec<Tiebreak> {
    settings
        .tiebreaks
        .iter()
        .filter_map(|code| Tiebreak::from_code(code))
        .collect()
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entrant {
    pub surname: String,
    pub given: String,
    /// The account seated in this player's matches.
    pub account: String,
    #[serde(default)]
    pub withdrawn_from: Option<u32>,
    #[serde(default)]
    pub half_byes: Vec<u32>,
}

impl Entrant {
    /// As TRF writes names: "Surname, Given".
    fn trf_name(&self) -> String {
        if self.given.is_empty() {
            self.surname.clone()
        } else {
            format!("{}, {}", self.surname, self.given)
        }
    }

    pub fn name(&self) -> String {
        if self.given.is_empty() {
            self.surname.clone()
        } else {
            format!("{} {}", self.surname, self.given)
        }
    }
}

/// How a board ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BoardResult {
    P1,
    P2,
    Draw,
    /// p1 wins because p2 did not show up.
    P1ByForfeit,
    P2ByForfeit,
    DoubleForfeit,
}

impl BoardResult {
    pub const ALL: [BoardResult; 6] = [
        BoardResult::P1,
        BoardResult::P2,
        BoardResult::Draw,
        BoardResult::P1ByForfeit,
        BoardResult::P2ByForfeit,
        BoardResult::DoubleForfeit,
    ];

    /// From its text in the view: `1-0`, `0-1`, `1/2-1/2`, `+-`, `-+`, `--`.
    pub fn parse(text: &str) -> Option<BoardResult> {
        BoardResult::ALL.into_iter().find(|r| r.text() == text)
    }

    /// The winner a match ended by this result has (a draw for a double forfeit).
    pub fn winner(self) -> Winner {
        match self {
            BoardResult::P1 | BoardResult::P1ByForfeit => Winner::P1,
            BoardResult::P2 | BoardResult::P2ByForfeit => Winner::P2,
            BoardResult::Draw | BoardResult::DoubleForfeit => Winner::Draw,
        }
    }

    pub fn text(self) -> &'static str {
        match self {
            BoardResult::P1 => "1-0",
            BoardResult::P2 => "0-1",
            BoardResult::Draw => "1/2-1/2",
            BoardResult::P1ByForfeit => "+-",
            BoardResult::P2ByForfeit => "-+",
            BoardResult::DoubleForfeit => "--",
        }
    }

    /// The TRF result codes of p1 and p2.
    fn codes(self) -> (ResultCode, ResultCode) {
        use ResultCode::*;
        match self {
            BoardResult::P1 => (Win, Loss),
            BoardResult::P2 => (Loss, Win),
            BoardResult::Draw => (Draw, Draw),
            BoardResult::P1ByForfeit => (ForfeitWin, ForfeitLoss),
            BoardResult::P2ByForfeit => (ForfeitLoss, ForfeitWin),
            BoardResult::DoubleForfeit => (ForfeitLoss, ForfeitLoss),
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Board {
    pub p1: u32,
    pub p2: u32,
    pub match_id: String,
    pub result: Option<BoardResult>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Bye {
    pub player: u32,
    pub kind: ByeKind,
}

impl Bye {
    fn code(self) -> ResultCode {
        match self.kind {
            ByeKind::Pairing => ResultCode::Pab,
            ByeKind::Half => ResultCode::HalfBye,
            ByeKind::Zero => ResultCode::ZeroBye,
            ByeKind::Absent => ResultCode::Absent,
        }
    }
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RoundState {
    pub boards: Vec<Board>,
    pub byes: Vec<Bye>,
    /// A pairing search stopped at a budget (the pairing engine of earlier versions; rounds
    /// stored by them keep saying so). The engine now is exact and never sets it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub search_stopped: bool,
}

impl RoundState {
    fn complete(&self) -> bool {
        self.boards.iter().all(|b| b.result.is_some())
    }
}

/// A tournament, as stored.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Tournament {
    pub id: String,
    pub created_ms: u64,
    pub settings: Settings,
    /// Arbitrates the tournament and every one of its matches.
    pub arbiter_token: String,
    pub status: TournamentStatus,
    pub colour_lot: Option<ColourLot>,
    /// Pairing number i+1 is `players[i]`: in Turkish alphabetical order before the start,
    /// fixed from then on (late entrants appended).
    pub players: Vec<Entrant>,
    pub rounds: Vec<RoundState>,
    /// Accounts made for this tournament so far, for their names.
    pub accounts_made: u32,
    /// Assistant arbiters (none in a tournament stored before there were any).
    #[serde(default)]
    pub assistants: Vec<Assistant>,
    /// How many stored changes this state includes (0 for a state stored whole before
    /// tournaments had changes).
    #[serde(default)]
    pub changes_applied: u64,
    /// Changes made since the last [`Tournament::take_changes`], to be stored.
    #[serde(skip)]
    changes: Vec<Change>,
}

/// One change of a tournament as it is stored: what a command decided. Replaying the changes
/// in order on the tournament as it was created gives it back, without asking the pairing
/// engine again (a pairing is stored as its round, whatever a later engine would pair).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "change", rename_all = "snake_case")]
pub enum Change {
    PlayerAdded {
        surname: String,
        given: String,
        account: String,
    },
    /// The counter behind the names of the accounts made for players.
    AccountsMade {
        count: u32,
    },
    Started {
        colour_lot: ColourLot,
    },
    Paired {
        round: RoundState,
    },
    Result {
        match_id: String,
        result: BoardResult,
    },
    /// A forfeit taken back: its match began after all.
    ResultTakenBack {
        match_id: String,
    },
    Withdrawn {
        player: u32,
    },
    HalfBye {
        player: u32,
        round: u32,
    },
    AssistantAdded {
        assistant: Assistant,
    },
}

/// An assistant arbiter: a match arbiter's power on these board numbers, in every round.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Assistant {
    pub name: String,
    /// Board numbers, ascending, no repeats.
    pub boards: Vec<u32>,
    pub token: String,
}

/// Assistant arbiters one tournament may have.
pub const MAX_ASSISTANTS: usize = 64;
/// The highest board number an assistant can be given (a round of 2,000 players).
pub const MAX_BOARD: u32 = 1000;

/// Why a change was refused; nothing changed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refused {
    /// The request does not fit the tournament's state (a clear message).
    Invalid(String),
    /// The pairing system finds no valid pairing.
    NoPairing,
}

fn invalid<T>(message: impl Into<String>) -> Result<T, Refused> {
    Err(Refused::Invalid(message.into()))
}

/// What a forfeit needs from the match: end it with this winner.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ForfeitOutcome {
    pub match_id: String,
    pub end_with: Winner,
}

impl Tournament {
    pub fn new(id: String, created_ms: u64, settings: Settings, arbiter_token: String) -> Self {
        Tournament {
            id,
            created_ms,
            settings,
            arbiter_token,
            status: TournamentStatus::Registration,
            colour_lot: None,
            players: Vec::new(),
            rounds: Vec::new(),
            accounts_made: 0,
            assistants: Vec::new(),
            changes_applied: 0,
            changes: Vec::new(),
        }
    }

    /// The name of the next account made for a player of this tournament.
    pub fn next_account_name(&mut self) -> String {
        self.accounts_made += 1;
        self.changes.push(Change::AccountsMade {
            count: self.accounts_made,
        });
        format!("{}-{}", self.id, self.accounts_made)
    }

    /// The changes made since the last call, in order, to be stored; counted as applied.
    pub fn take_changes(&mut self) -> Vec<Change> {
        let changes = std::mem::take(&mut self.changes);
        self.changes_applied += changes.len() as u64;
        changes
    }

    /// Applies a stored change (restoring the tournament); one that no longer fits is refused
    /// and changes nothing.
    pub fn replay(&mut self, change: &Change) -> Result<(), Refused> {
        let mut next = self.clone();
        match change {
            Change::PlayerAdded {
                surname,
                given,
                account,
            } => {
                next.add_player(surname, given, account.clone())?;
            }
            Change::AccountsMade { count } => next.accounts_made = *count,
            Change::Started { colour_lot } => next.start(*colour_lot)?,
            Change::Paired { round } => {
                next.rounds.push(round.clone());
                next.finish_if_done();
            }
            Change::Result { match_id, result } => {
                let Some(board) = next.board_of_match(match_id) else {
                    return invalid(format!("no board with match {match_id}"));
                };
                board.result = Some(*result);
                next.finish_if_done();
            }
            Change::ResultTakenBack { match_id } => next.undo_forfeit(match_id),
            Change::Withdrawn { player } => next.withdraw(*player)?,
            Change::HalfBye { player, round } => next.request_bye(*player, *round)?,
            Change::AssistantAdded { assistant } => next.assistants.push(assistant.clone()),
        }
        next.changes.clear();
        next.changes_applied = self.changes_applied + 1;
        *self = next;
        Ok(())
    }

    /// The round being played or last played (1-based), 0 before round 1.
    pub fn current_round(&self) -> u32 {
        self.rounds.len() as u32
    }

    pub fn completed_rounds(&self) -> u32 {
        self.rounds.iter().take_while(|r| r.complete()).count() as u32
    }

    fn player(&self, id: u32) -> Result<&Entrant, Refused> {
        match id.checked_sub(1).and_then(|i| self.players.get(i as usize)) {
            Some(p) => Ok(p),
            None => invalid(format!("no player {id} in this tournament")),
        }
    }

    /// The pairing number of the player seated as `account`.
    pub fn id_of_account(&self, account: &str) -> Option<u32> {
        self.players
            .iter()
            .position(|p| p.account == account)
            .map(|i| i as u32 + 1)
    }

    /// Adds a player; returns their pairing number. Before the start, the numbers follow the
    /// Turkish alphabetical order; after it, a late entrant gets the next number and a
    /// zero-point bye for every round already paired.
    pub fn add_player(
        &mut self,
        surname: &str,
        given: &str,
        account: String,
    ) -> Result<u32, Refused> {
        let (surname, given) = (surname.trim(), given.trim());
        let fits = |s: &str, min: usize| {
            (min..=60).contains(&s.chars().count()) && !s.chars().any(char::is_control)
        };
        if !fits(surname, 1) || !fits(given, 0) {
            return invalid("a surname is 1 to 60 characters and a given name at most 60");
        }
        if self.status == TournamentStatus::Finished {
            return invalid("the tournament is over");
        }
        if self.players.len() >= MAX_PLAYERS {
            return invalid(format!("a tournament has at most {MAX_PLAYERS} players"));
        }
        if self.players.iter().any(|p| p.account == account) {
            return invalid(format!("the account {account:?} is already a player here"));
        }
        let entrant = Entrant {
            surname: surname.to_string(),
            given: given.to_string(),
            account: account.clone(),
            withdrawn_from: None,
            half_byes: Vec::new(),
        };
        self.players.push(entrant);
        self.changes.push(Change::PlayerAdded {
            surname: surname.to_string(),
            given: given.to_string(),
            account: account.clone(),
        });
        let id = self.players.len() as u32;
        if self.status == TournamentStatus::Registration {
            self.rank_players();
            return Ok(self.id_of_account(&account).unwrap_or(id));
        }
        for round in &mut self.rounds {
            round.byes.push(Bye {
                player: id,
                kind: ByeKind::Zero,
            });
        }
        Ok(id)
    }

    fn rank_players(&mut self) {
        let names: Vec<(String, String)> = self
            .players
            .iter()
            .map(|p| (p.surname.clone(), p.given.clone()))
            .collect();
        let order = initial_order(&names);
        let old = std::mem::take(&mut self.players);
        let mut slots: Vec<Option<Entrant>> = old.into_iter().map(Some).collect();
        self.players = order.into_iter().filter_map(|i| slots[i].take()).collect();
    }

    /// Fixes the ranking and the colour lot; round 1 is paired next.
    pub fn start(&mut self, lot: ColourLot) -> Result<(), Refused> {
        if self.status != TournamentStatus::Registration {
            return invalid("the tournament has started already");
        }
        if self.players.len() < 2 {
            return invalid("a tournament needs at least 2 players");
        }
        self.colour_lot = Some(lot);
        self.status = TournamentStatus::Running;
        self.changes.push(Change::Started { colour_lot: lot });
        Ok(())
    }

    /// Pairs the next round: its boards (with match ids from `match_id(round, board)`) and
    /// byes. Nothing changes if it cannot be paired.
    pub fn pair_next(&mut self) -> Result<u32, Refused> {
        match self.status {
            TournamentStatus::Registration => return invalid("start the tournament first"),
            TournamentStatus::Finished => return invalid("the tournament is over"),
            TournamentStatus::Running => {}
        }
        let round = self.current_round() + 1;
        if round > self.settings.rounds {
            return invalid(format!("all {} rounds are paired", self.settings.rounds));
        }
        if self.completed_rounds() < self.current_round() {
            return invalid(format!(
                "round {} is still being played",
                self.current_round()
            ));
        }
        let mut next = RoundState::default();
        for (i, p) in self.players.iter().enumerate() {
            let kind = if p.withdrawn_from.is_some_and(|r| r <= round) {
                ByeKind::Absent
            } else if p.half_byes.contains(&round) {
                ByeKind::Half
            } else {
                continue;
            };
            next.byes.push(Bye {
                player: i as u32 + 1,
                kind,
            });
        }
        let history = self.history_of(self.rounds.iter().chain([&next]));
        let pairing = match pair_round_number(&history, round as usize, rules(&self.settings)) {
            Ok(pairing) => pairing,
            Err(PairingError::NoValidPairing) => return Err(Refused::NoPairing),
            Err(PairingError::NoPlayers) => return invalid("nobody is left to pair"),
            // Cannot happen within MAX_ROUNDS; said plainly rather than paired wrongly.
            Err(e @ PairingError::TooLarge) => return invalid(e.to_string()),
        };
        let Pairing { boards, bye } = pairing;
        for (board, (p1, p2)) in boards.into_iter().enumerate() {
            next.boards.push(Board {
                p1,
                p2,
                match_id: format!("{}-r{round}b{}", self.id, board + 1),
                result: None,
            });
        }
        if let Some(player) = bye {
            next.byes.push(Bye {
                player,
                kind: ByeKind::Pairing,
            });
        }
        self.changes.push(Change::Paired {
            round: next.clone(),
        });
        self.rounds.push(next);
        self.finish_if_done();
        Ok(round)
    }

    fn finish_if_done(&mut self) {
        if self.current_round() == self.settings.rounds
            && self.completed_rounds() == self.current_round()
        {
            self.status = TournamentStatus::Finished;
        }
    }

    /// Whether the next round should be paired now (auto pairing, the last round complete).
    pub fn wants_pairing(&self) -> bool {
        self.settings.auto_pair
            && self.status == TournamentStatus::Running
            && self.completed_rounds() == self.current_round()
            && self.current_round() < self.settings.rounds
    }

    fn board_of_match(&mut self, match_id: &str) -> Option<&mut Board> {
        self.rounds
            .iter_mut()
            .flat_map(|r| r.boards.iter_mut())
            .find(|b| b.match_id == match_id)
    }

    /// A match of this tournament ended; true if its result was recorded (a board already
    /// decided by forfeit keeps the forfeit).
    pub fn record(&mut self, match_id: &str, result: &RoundResult) -> bool {
        let Some(board) = self.board_of_match(match_id) else {
            return false;
        };
        if board.result.is_some() {
            return false;
        }
        let result = match result.winner {
            Winner::P1 => BoardResult::P1,
            Winner::P2 => BoardResult::P2,
            Winner::Draw => BoardResult::Draw,
        };
        board.result = Some(result);
        self.changes.push(Change::Result {
            match_id: match_id.to_string(),
            result,
        });
        self.finish_if_done();
        true
    }

    /// The board of `player` in the current round (or in `round`, which must be the current
    /// one: an arbiter's command about an earlier round must not land on a later board).
    pub fn current_board(&self, player: u32, round: Option<u32>) -> Result<&Board, Refused> {
        self.player(player)?;
        let current = self.current_round();
        if current == 0 {
            return invalid("no round has been paired yet");
        }
        if self.status == TournamentStatus::Finished {
            return invalid("the tournament is over");
        }
        if let Some(round) = round.filter(|&r| r != current) {
            return invalid(format!(
                "round {round} is not the current round ({current})"
            ));
        }
        self.rounds
            .last()
            .and_then(|r| r.boards.iter().find(|b| b.p1 == player || b.p2 == player))
            .map_or_else(
                || invalid(format!("player {player} has no match in round {current}")),
                Ok,
            )
    }

    /// The player did not show up for the current round: their board is lost by forfeit; by
    /// both with `double` (both absent), or when the opponent was forfeited already.
    pub fn forfeit(
        &mut self,
        player: u32,
        round: Option<u32>,
        double: bool,
    ) -> Result<ForfeitOutcome, Refused> {
        let board = self.current_board(player, round)?;
        let seat = if board.p1 == player {
            Seat::P1
        } else {
            Seat::P2
        };
        let (result, end_with) = match (board.result, seat, double) {
            (None, _, true) => (BoardResult::DoubleForfeit, Winner::Draw),
            (None, Seat::P1, false) => (BoardResult::P2ByForfeit, Winner::P2),
            (None, Seat::P2, false) => (BoardResult::P1ByForfeit, Winner::P1),
            (Some(_), _, _) => {
                return invalid(format!(
                    "the match of player {player} has a result already (for two no-shows, \
                     forfeit with double at once)"
                ))
            }
        };
        let match_id = board.match_id.clone();
        if let Some(board) = self.board_of_match(&match_id) {
            board.result = Some(result);
        }
        self.changes.push(Change::Result {
            match_id: match_id.clone(),
            result,
        });
        self.finish_if_done();
        Ok(ForfeitOutcome { match_id, end_with })
    }

    /// The arbiter enters the result of board `board` of round `round` (a board played over
    /// the board, or one whose match cannot say it), or corrects one. Returns the board's match
    /// and whether the result is new (its match is then to be ended with it); a correction
    /// changes only the tournament's result, the match keeps its record. Rounds paired since
    /// stay as they were paired.
    pub fn set_result(
        &mut self,
        round: u32,
        board: u32,
        result: BoardResult,
    ) -> Result<(String, bool), Refused> {
        let current = self.current_round();
        if round == 0 || round > current {
            return invalid(format!(
                "round {round} has not been paired (the current round is {current})"
            ));
        }
        let Some(b) = (board as usize)
            .checked_sub(1)
            .and_then(|i| self.rounds[round as usize - 1].boards.get_mut(i))
        else {
            return invalid(format!("round {round} has no board {board}"));
        };
        if b.result == Some(result) {
            return invalid(format!(
                "board {board} of round {round} has this result already"
            ));
        }
        let new = b.result.is_none();
        b.result = Some(result);
        let match_id = b.match_id.clone();
        self.changes.push(Change::Result {
            match_id: match_id.clone(),
            result,
        });
        self.finish_if_done();
        Ok((match_id, new))
    }

    /// Names an assistant arbiter for `boards` (board numbers, in every round).
    pub fn add_assistant(
        &mut self,
        name: &str,
        boards: &[u32],
        token: String,
    ) -> Result<&Assistant, Refused> {
        let name = name.trim();
        if name.is_empty() || name.chars().count() > 100 {
            return invalid("an assistant's name is 1 to 100 characters");
        }
        if self.assistants.len() >= MAX_ASSISTANTS {
            return invalid(format!(
                "a tournament has at most {MAX_ASSISTANTS} assistant arbiters"
            ));
        }
        if boards.is_empty() || boards.iter().any(|&b| b == 0 || b > MAX_BOARD) {
            return invalid(format!(
                "boards are board numbers from 1 to {MAX_BOARD}, at least one"
            ));
        }
        let mut boards = boards.to_vec();
        boards.sort_unstable();
        boards.dedup();
        let assistant = Assistant {
            name: name.to_string(),
            boards,
            token,
        };
        self.changes.push(Change::AssistantAdded {
            assistant: assistant.clone(),
        });
        self.assistants.push(assistant);
        Ok(self.assistants.last().expect("just pushed"))
    }

    /// The board number of a match of this tournament.
    pub fn board_number(&self, match_id: &str) -> Option<u32> {
        self.rounds.iter().find_map(|r| {
            r.boards
                .iter()
                .position(|b| b.match_id == match_id)
                .map(|i| i as u32 + 1)
        })
    }

    /// Takes back a forfeit whose match could not be ended (it began meanwhile).
    pub fn undo_forfeit(&mut self, match_id: &str) {
        let Some(board) = self.board_of_match(match_id) else {
            return;
        };
        if matches!(
            board.result,
            Some(BoardResult::P1ByForfeit | BoardResult::P2ByForfeit | BoardResult::DoubleForfeit)
        ) {
            board.result = None;
            self.status = TournamentStatus::Running;
            self.changes.push(Change::ResultTakenBack {
                match_id: match_id.to_string(),
            });
        }
    }

    /// Boards of the current round decided by forfeit, with the winner their match is ended
    /// with (a draw for a double forfeit).
    pub fn forfeited_boards(&self) -> impl Iterator<Item = (&Board, Winner)> {
        self.rounds
            .last()
            .into_iter()
            .flat_map(|r| r.boards.iter())
            .filter_map(|b| match b.result {
                Some(BoardResult::P1ByForfeit) => Some((b, Winner::P1)),
                Some(BoardResult::P2ByForfeit) => Some((b, Winner::P2)),
                Some(BoardResult::DoubleForfeit) => Some((b, Winner::Draw)),
                _ => None,
            })
    }

    /// Before the start the player is struck from the list; after it, they are no longer
    /// paired from the next round on.
    pub fn withdraw(&mut self, player: u32) -> Result<(), Refused> {
        let entrant = self.player(player)?;
        match self.status {
            TournamentStatus::Finished => invalid("the tournament is over"),
            TournamentStatus::Registration => {
                self.players.remove(player as usize - 1);
                self.changes.push(Change::Withdrawn { player });
                Ok(())
            }
            TournamentStatus::Running => {
                if entrant.withdrawn_from.is_some() {
                    return invalid(format!("player {player} has withdrawn already"));
                }
                let from = self.current_round() + 1;
                self.players[player as usize - 1].withdrawn_from = Some(from);
                self.changes.push(Change::Withdrawn { player });
                Ok(())
            }
        }
    }

    /// A half-point bye in a round that is not paired yet.
    pub fn request_bye(&mut self, player: u32, round: u32) -> Result<(), Refused> {
        let entrant = self.player(player)?;
        if self.status == TournamentStatus::Finished {
            return invalid("the tournament is over");
        }
        if round <= self.current_round() || round > self.settings.rounds {
            return invalid(format!(
                "a bye can be asked for rounds {} to {}",
                self.current_round() + 1,
                self.settings.rounds
            ));
        }
        if entrant.withdrawn_from.is_some() {
            return invalid(format!("player {player} has withdrawn"));
        }
        if entrant.half_byes.contains(&round) {
            return invalid(format!(
                "player {player} has a bye in round {round} already"
            ));
        }
        if entrant.half_byes.len() as u32 >= self.settings.max_half_byes {
            return invalid(format!(
                "a player may take {} half-point bye(s) in this tournament",
                self.settings.max_half_byes
            ));
        }
        let byes = &mut self.players[player as usize - 1].half_byes;
        byes.push(round);
        byes.sort_unstable();
        self.changes.push(Change::HalfBye { player, round });
        Ok(())
    }

    /// The history as the pairing engine and TRF see it: every round stored, games without a
    /// result left out (they have no TRF code yet).
    pub fn history(&self) -> hakem_pairing::Tournament {
        self.history_of(&self.rounds)
    }

    /// [`Tournament::history`] of the given rounds (1, 2, ... in order).
    fn history_of<'a>(
        &self,
        rounds: impl IntoIterator<Item = &'a RoundState>,
    ) -> hakem_pairing::Tournament {
        let mut t = hakem_pairing::Tournament {
            name: self.settings.name.clone(),
            total_rounds: Some(self.settings.rounds),
            pab_halves: Some(self.settings.bye_points.halves).filter(|&h| h != 2),
            initial_colour: self.colour_lot.map(|lot| match lot.seat {
                Seat::P1 => Colour::White,
                Seat::P2 => Colour::Black,
            }),
            players: self
                .players
                .iter()
                .enumerate()
                .map(|(i, p)| hakem_pairing::Player {
                    id: i as u32 + 1,
                    name: p.trf_name(),
                    ..Default::default()
                })
                .collect(),
            other_lines: Vec::new(),
        };
        let mut played = 0;
        for (r, round) in rounds.into_iter().enumerate() {
            played = r + 1;
            let mut entries = Vec::new();
            for board in &round.boards {
                let Some(result) = board.result else {
                    continue;
                };
                let (c1, c2) = result.codes();
                let entry = |opponent, colour, result| RoundEntry {
                    opponent: Some(opponent),
                    colour: Some(colour),
                    result,
                };
                entries.push((board.p1, entry(board.p2, Colour::White, c1)));
                entries.push((board.p2, entry(board.p1, Colour::Black, c2)));
            }
            for bye in &round.byes {
                let entry = RoundEntry {
                    opponent: None,
                    colour: None,
                    result: bye.code(),
                };
                entries.push((bye.player, entry));
            }
            t.record_round(r + 1, &entries);
        }
        for i in 0..t.players.len() {
            t.players[i].points = t.points_after(i, played, t.pab());
        }
        t
    }

    /// The history of the rounds whose every result is in, with points and ranks, and its
    /// standings: what the view and the TRF export are made of.
    fn completed_history(&self) -> (hakem_pairing::Tournament, Vec<hakem_pairing::Standing>) {
        let done = self.completed_rounds() as usize;
        let mut t = self.history_of(&self.rounds[..done]);
        let table = standings(&t, edition(&self.settings), &tiebreak_order(&self.settings));
        for s in &table {
            if let Some(p) = t.players.get_mut(s.id as usize - 1) {
                p.rank = Some(s.rank);
            }
        }
        (t, table)
    }

    /// The FIDE TRF(x) of the completed rounds.
    pub fn trf(&self) -> String {
        hakem_pairing::write_trf(&self.completed_history().0)
    }

    pub fn view(&self) -> TournamentView {
        let (_, table) = self.completed_history();
        let order = tiebreak_order(&self.settings);
        let standings = table
            .into_iter()
            .map(|s| StandingView {
                id: s.id,
                rank: s.rank,
                name: self.players[s.id as usize - 1].name(),
                points: Points { halves: s.points },
                tiebreaks: order
                    .iter()
                    .map(|tb| (tb.code().to_string(), s.value(*tb)))
                    .collect::<BTreeMap<_, _>>(),
            })
            .collect();
        TournamentView {
            id: self.id.clone(),
            settings: self.settings.clone(),
            status: self.status,
            current_round: self.current_round(),
            completed_rounds: self.completed_rounds(),
            colour_lot: self.colour_lot,
            players: self
                .players
                .iter()
                .enumerate()
                .map(|(i, p)| PlayerView {
                    id: i as u32 + 1,
                    name: p.name(),
                    surname: p.surname.clone(),
                    given: p.given.clone(),
                    account: p.account.clone(),
                    withdrawn_from: p.withdrawn_from,
                    half_byes: p.half_byes.clone(),
                })
                .collect(),
            standings,
            pairings: self
                .rounds
                .iter()
                .enumerate()
                .map(|(r, round)| RoundView {
                    round: r as u32 + 1,
                    boards: round
                        .boards
                        .iter()
                        .enumerate()
                        .map(|(b, board)| BoardView {
                            board: b as u32 + 1,
                            p1: board.p1,
                            p2: board.p2,
                            match_id: board.match_id.clone(),
                            result: board.result.map(|r| r.text().to_string()),
                        })
                        .collect(),
                    byes: round
                        .byes
                        .iter()
                        .map(|bye| ByeView {
                            player: bye.player,
                            kind: bye.kind,
                            points: Points {
                                halves: bye.code().halves(self.settings.bye_points.halves),
                            },
                        })
                        .collect(),
                    search_stopped: round.search_stopped,
                })
                .collect(),
            assistants: self
                .assistants
                .iter()
                .map(|a| AssistantView {
                    name: a.name.clone(),
                    boards: a.boards.clone(),
                })
                .collect(),
        }
    }

    /// The boards of the current round that still wait for a result.
    pub fn open_boards(&self) -> impl Iterator<Item = &Board> {
        self.rounds
            .last()
            .into_iter()
            .flat_map(|r| r.boards.iter())
            .filter(|b| b.result.is_none())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hakem_protocol::tournament::default_tiebreaks;

    fn tournament(rounds: u32, names: &[(&str, &str)]) -> Tournament {
        let create = CreateTournament {
            name: "Test".into(),
            game: "pentago".into(),
            variant: None,
            sets: 3,
            clock: None,
            warnings_limit: 3,
            rounds,
            pairing: PairingRules::Dutch2025,
            edition: TiebreakEdition::E2026,
            tiebreaks: default_tiebreaks(),
            players: Vec::new(),
            colour_lot: None,
            auto_pair: false,
            max_half_byes: 1,
            bye_points: Points::ONE,
            spectator_delay: None,
            rated: false,
        };
        let mut t = Tournament::new("t".into(), 0, settings_of(&create).unwrap(), "a".into());
        for (i, (surname, given)) in names.iter().enumerate() {
            t.add_player(surname, given, format!("acc{i}")).unwrap();
        }
        t
    }

    const SIX: [(&str, &str); 6] = [
        ("Öztürk", "Can"),
        ("Oral", "Ece"),
        ("İnce", "Ali"),
        ("Işık", "Cem"),
        ("Çelik", "Eda"),
        ("Cengiz", "Ufuk"),
    ];

    fn p1_wins_every_board(t: &mut Tournament) {
        let result = RoundResult {
            winner: Winner::P1,
            set_points: PerSeat::default(),
            points: PerSeat::default(),
            reason: hakem_protocol::RoundReason::Sets,
        };
        let open: Vec<String> = t.open_boards().map(|b| b.match_id.clone()).collect();
        for id in open {
            assert!(t.record(&id, &result));
            assert!(!t.record(&id, &result), "a result is recorded once");
        }
    }

    #[test]
    fn the_arbiter_enters_and_corrects_results_and_the_standings_follow() {
        let mut t = tournament(2, &SIX);
        start(&mut t);
        t.pair_next().unwrap();
        let points_of = |t: &Tournament, id: u32| {
            t.view()
                .standings
                .iter()
                .find(|s| s.id == id)
                .map(|s| s.points.halves)
        };
        // Refused: a round not paired, a board that does not exist.
        assert!(t.set_result(2, 1, BoardResult::P1).is_err());
        assert!(t.set_result(1, 4, BoardResult::P1).is_err());
        assert!(t.set_result(0, 1, BoardResult::P1).is_err());
        // Entered: the board had no result, so its match is to be ended.
        let board = t.rounds[0].boards[0].clone();
        let (match_id, new) = t.set_result(1, 1, BoardResult::P2).unwrap();
        assert_eq!((match_id.as_str(), new), (board.match_id.as_str(), true));
        assert_eq!(
            t.set_result(1, 1, BoardResult::P2),
            invalid("board 1 of round 1 has this result already")
        );
        // The match's own end arriving later does not overwrite the arbiter's result.
        p1_wins_every_board(&mut t);
        assert_eq!(t.completed_rounds(), 1);
        assert_eq!(points_of(&t, board.p2), Some(2));
        // Corrected: only the tournament's result changes, and the standings with it.
        assert_eq!(
            t.set_result(1, 1, BoardResult::Draw),
            Ok((board.match_id.clone(), false))
        );
        assert_eq!(points_of(&t, board.p1), Some(1));
        assert_eq!(points_of(&t, board.p2), Some(1));
        assert_eq!(BoardResult::parse("1/2-1/2"), Some(BoardResult::Draw));
        assert_eq!(BoardResult::parse("2-0"), None);
    }

    /// Random commands, each list of changes taken as the server stores them: replaying them
    /// on the tournament as created gives the same tournament, every step of the way.
    #[test]
    fn the_stored_changes_replay_to_the_same_tournament() {
        let (mut rounds, mut results) = (0, 0);
        for seed in 1..=20u64 {
            let mut rng = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
            let mut next = |n: u64| {
                rng ^= rng << 13;
                rng ^= rng >> 7;
                rng ^= rng << 17;
                rng % n.max(1)
            };
            let mut t = tournament(5, &[]);
            let mut replayed = t.clone();
            for step in 0..120 {
                let player = next(9) as u32 + 1;
                match next(12) {
                    0 | 1 => {
                        let account = t.next_account_name();
                        let _ = t.add_player(&format!("Soyadı{}", next(50)), "Ad", account);
                    }
                    2 => {
                        let seat = if next(2) == 0 { Seat::P1 } else { Seat::P2 };
                        let _ = t.start(ColourLot { seat, drawn: true });
                    }
                    3 | 4 => {
                        let _ = t.pair_next();
                    }
                    5..=7 => {
                        let open: Vec<String> =
                            t.open_boards().map(|b| b.match_id.clone()).collect();
                        if let Some(id) = open.get(next(open.len() as u64 + 1) as usize) {
                            let winner = [Winner::P1, Winner::P2, Winner::Draw][next(3) as usize];
                            let result = RoundResult {
                                winner,
                                set_points: PerSeat::default(),
                                points: PerSeat::default(),
                                reason: hakem_protocol::RoundReason::Sets,
                            };
                            t.record(id, &result);
                        }
                    }
                    8 => {
                        let _ = t.withdraw(player);
                    }
                    9 => {
                        let _ = t.request_bye(player, t.current_round() + 1);
                    }
                    10 => {
                        if let Ok(out) = t.forfeit(player, None, next(2) == 0) {
                            if next(3) == 0 {
                                t.undo_forfeit(&out.match_id);
                            }
                        }
                    }
                    _ => {
                        let round = next(t.current_round() as u64 + 1) as u32;
                        let result = BoardResult::ALL[next(6) as usize];
                        let _ = t.set_result(round, next(4) as u32 + 1, result);
                        let _ = t.add_assistant("Yardımcı", &[next(3) as u32 + 1], "tok".into());
                    }
                }
                for change in t.take_changes() {
                    replayed
                        .replay(&change)
                        .unwrap_or_else(|e| panic!("seed {seed} step {step}: {change:?}: {e:?}"));
                }
                assert_eq!(
                    serde_json::to_value(&replayed).unwrap(),
                    serde_json::to_value(&t).unwrap(),
                    "seed {seed} step {step}"
                );
            }
            rounds += t.current_round();
            results += t
                .rounds
                .iter()
                .flat_map(|r| &r.boards)
                .filter(|b| b.result.is_some())
                .count();
        }
        // The commands went somewhere: rounds paired and results in, across the seeds.
        assert!(
            rounds >= 40 && results >= 60,
            "{rounds} rounds, {results} results"
        );
    }

    fn start(t: &mut Tournament) {
        t.start(ColourLot {
            seat: Seat::P1,
            drawn: false,
        })
        .unwrap();
    }

    #[test]
    fn players_are_numbered_in_turkish_alphabetical_order_until_the_start() {
        let t = tournament(3, &SIX);
        let surnames: Vec<&str> = t.players.iter().map(|p| p.surname.as_str()).collect();
        assert_eq!(
            surnames,
            ["Cengiz", "Çelik", "Işık", "İnce", "Oral", "Öztürk"]
        );
        assert_eq!(t.id_of_account("acc0"), Some(6));
    }

    #[test]
    fn a_late_entrant_gets_the_next_number_and_zero_point_byes() {
        let mut t = tournament(3, &SIX);
        start(&mut t);
        t.pair_next().unwrap();
        let id = t.add_player("Aksoy", "Zeynep", "late".into()).unwrap();
        assert_eq!(id, 7, "numbers are fixed once the tournament runs");
        assert_eq!(
            t.rounds[0].byes,
            [Bye {
                player: 7,
                kind: ByeKind::Zero
            }]
        );
        p1_wins_every_board(&mut t);
        t.pair_next().unwrap();
        let paired = t.rounds[1].boards.len() * 2
            + t.rounds[1]
                .byes
                .iter()
                .filter(|b| b.kind == ByeKind::Pairing)
                .count();
        assert_eq!(paired, 7);
    }

    #[test]
    fn rounds_are_paired_one_at_a_time_and_never_past_the_last() {
        let mut t = tournament(2, &SIX);
        assert!(matches!(t.pair_next(), Err(Refused::Invalid(_))));
        start(&mut t);
        assert_eq!(t.pair_next(), Ok(1));
        assert_eq!(t.rounds[0].boards[0].match_id, "t-r1b1");
        let before = t.clone();
        assert!(matches!(t.pair_next(), Err(Refused::Invalid(m)) if m.contains("still")));
        assert_eq!(t, before, "a refused change changes nothing");
        p1_wins_every_board(&mut t);
        assert!(!t.wants_pairing(), "not without auto pairing");
        assert_eq!(t.pair_next(), Ok(2));
        p1_wins_every_board(&mut t);
        assert_eq!(t.status, TournamentStatus::Finished);
        assert!(t.pair_next().is_err());
        assert!(t.add_player("Late", "", "x".into()).is_err());
    }

    #[test]
    fn a_forfeit_ends_one_board_and_a_double_one_both() {
        let mut t = tournament(3, &SIX);
        start(&mut t);
        t.pair_next().unwrap();
        let board = t.rounds[0].boards[0].clone();
        assert!(
            t.forfeit(board.p1, Some(2), false).is_err(),
            "not the current round"
        );
        let first = t.forfeit(board.p1, Some(1), false).unwrap();
        assert_eq!(first.end_with, Winner::P2);
        assert_eq!(t.rounds[0].boards[0].result, Some(BoardResult::P2ByForfeit));
        // The match's own end, reported afterwards, does not overwrite the forfeit.
        let result = RoundResult {
            winner: Winner::P2,
            set_points: PerSeat::default(),
            points: PerSeat::default(),
            reason: hakem_protocol::RoundReason::Arbiter,
        };
        assert!(!t.record(&board.match_id, &result));
        assert!(
            t.forfeit(board.p1, None, false).is_err(),
            "the same player twice"
        );
        assert!(
            t.forfeit(board.p2, None, false).is_err(),
            "a decided board stays decided: its match has ended"
        );
        let h = t.history();
        let entry = h.players[board.p1 as usize - 1].rounds[0].unwrap();
        assert_eq!(entry.result, ResultCode::ForfeitLoss);
        assert!(t.forfeit(99, None, false).is_err());
        // Both absent: a double forfeit, the match ended as a draw.
        let other = t.rounds[0].boards[1].clone();
        let both = t.forfeit(other.p2, None, true).unwrap();
        assert_eq!(both.end_with, Winner::Draw);
        assert_eq!(
            t.rounds[0].boards[1].result,
            Some(BoardResult::DoubleForfeit)
        );
        assert_eq!(t.forfeited_boards().count(), 2);
        // A forfeit whose match began meanwhile is taken back.
        t.undo_forfeit(&other.match_id);
        assert_eq!(t.rounds[0].boards[1].result, None);
        assert_eq!(t.forfeited_boards().count(), 1);
    }

    #[test]
    fn half_point_byes_are_limited_and_only_for_rounds_not_yet_paired() {
        let mut t = tournament(3, &SIX);
        t.request_bye(2, 2).unwrap();
        assert!(t.request_bye(2, 3).is_err(), "one bye each");
        assert!(t.request_bye(3, 4).is_err(), "no round 4");
        start(&mut t);
        t.pair_next().unwrap();
        assert!(t.request_bye(3, 1).is_err(), "round 1 is paired");
        p1_wins_every_board(&mut t);
        t.withdraw(4).unwrap();
        assert!(t.request_bye(4, 3).is_err(), "withdrawn");
        t.pair_next().unwrap();
        let byes: Vec<(u32, ByeKind)> = t.rounds[1]
            .byes
            .iter()
            .map(|b| (b.player, b.kind))
            .collect();
        assert!(byes.contains(&(2, ByeKind::Half)));
        assert!(byes.contains(&(4, ByeKind::Absent)));
    }

    #[test]
    fn a_withdrawal_before_the_start_strikes_the_player() {
        let mut t = tournament(3, &SIX);
        t.withdraw(1).unwrap();
        assert_eq!(t.players.len(), 5);
        assert_eq!(t.players[0].surname, "Çelik");
    }

    #[test]
    fn the_pairing_allocated_bye_is_worth_what_the_settings_say() {
        let mut t = tournament(2, &SIX[..5]);
        t.settings.bye_points = Points::HALF;
        start(&mut t);
        t.pair_next().unwrap();
        p1_wins_every_board(&mut t);
        let bye = t.rounds[0]
            .byes
            .iter()
            .find(|b| b.kind == ByeKind::Pairing)
            .unwrap()
            .player;
        let view = t.view();
        let line = view.standings.iter().find(|s| s.id == bye).unwrap();
        assert_eq!(line.points, Points::HALF);
        assert_eq!(view.pairings[0].byes[0].points, Points::HALF);
        let text = t.trf();
        assert!(text.contains("BBU  0.5"), "{text}");
        let back = hakem_pairing::parse_trf(&text).unwrap();
        assert_eq!(back.pab(), 1);
        t.pair_next().unwrap();
        p1_wins_every_board(&mut t);
        let back = hakem_pairing::parse_trf(&t.trf()).unwrap();
        assert!(hakem_pairing::check_rounds(&back, Rules::Dutch2025).is_empty());
    }

    #[test]
    fn the_trf_export_reads_back_and_re_pairs_to_the_same_rounds() {
        let mut t = tournament(4, &SIX);
        t.add_player("Yılmaz", "Ayşe", "x".into()).unwrap();
        t.request_bye(3, 2).unwrap();
        start(&mut t);
        for _ in 0..4 {
            t.pair_next().unwrap();
            p1_wins_every_board(&mut t);
        }
        assert_eq!(t.status, TournamentStatus::Finished);
        let text = t.trf();
        let back = hakem_pairing::parse_trf(&text).unwrap();
        assert_eq!(back.total_rounds, Some(4));
        assert_eq!(back.initial_colour, Some(Colour::White));
        assert_eq!(back.players.len(), 7);
        assert!(hakem_pairing::check_rounds(&back, Rules::Dutch2025).is_empty());
        let view = t.view();
        let total: u32 = view.standings.iter().map(|s| s.points.halves).sum();
        // Three games and one pairing-allocated bye a round, plus one half-point bye.
        assert_eq!(total, 4 * (3 * 2 + 2) - 2 + 1);
    }
}
