//! The round as a pure state machine: up to three sets with alternating first movers, set
//! points, warnings, the arbiter's acts, the clock and the move-then-press rhythm.
//!
//! A command is first *decided* against the current state, which either refuses it (changing
//! nothing) or turns it into events; the events are then *applied* one by one. The state is
//! the fold of its events, so a stored event log rebuilds a room exactly. Time comes in as a
//! value; nothing here sleeps or reads a clock.

use hakem_games::pentago::{self, Direction, Quadrant, Turn};
use hakem_games::quoridor;
use hakem_games::{AnyPosition, GameKind, MoveError, Side};
use hakem_protocol::{
    ClaimStatus, ClaimView, ClockConfig, Clocks, ErrorCode, Event, EventFrame, GameResult,
    MatchState, MatchStatus, Pending, PerSeat, PlayerInfo, Points, PositionView, RoundReason,
    RoundResult, Scope, Seat, SetReason, SetResult, Winner,
};

use crate::board::board_of;

use crate::clock::{Clock, Millis, MAX_CLOCK_MS};

/// The longest claim text the arbiter is sent.
const MAX_CLAIM_CHARS: usize = 500;

/// The rules of one match, fixed when it is created.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MatchConfig {
    pub game: GameKind,
    /// The canonical preset name.
    pub variant: &'static str,
    /// The most sets the round can have (3).
    pub sets: u8,
    /// `None`: untimed.
    pub clock: Option<ClockConfig>,
    pub warnings_limit: u8,
    pub players: PerSeat<String>,
    /// Untimed sets of a game without a natural end (Quoridor) are drawn after this many plies.
    pub untimed_ply_limit: u32,
    /// The tournament the match is a round of, if any.
    pub tournament: Option<String>,
    /// The seat the server's own bot plays, if any.
    pub house_bot: Option<Seat>,
    /// The round's result changes the players' ratings.
    pub rated: bool,
}

/// Plies after which an untimed Quoridor set is drawn (rules: the clock ends endless games; an
/// untimed set needs a limit instead).
pub const DEFAULT_UNTIMED_PLY_LIMIT: u32 = 400;

impl MatchConfig {
    /// A checked configuration: a known game and variant, 1 to 7 sets, a warnings limit of at
    /// least 1, and a clock of at least one second.
    pub fn new(
        game: &str,
        variant: Option<&str>,
        sets: u8,
        clock: Option<ClockConfig>,
        warnings_limit: u8,
        players: PerSeat<String>,
    ) -> Result<MatchConfig, String> {
        let kind: GameKind = game
            .parse()
            .map_err(|e: hakem_games::UnknownGame| e.to_string())?;
        let start = AnyPosition::new(kind, variant).map_err(|e| e.to_string())?;
        if !(1..=7).contains(&sets) {
            return Err("sets must be between 1 and 7".into());
        }
        if warnings_limit == 0 {
            return Err("warnings_limit must be at least 1".into());
        }
        if let Some(clock) = clock {
            if clock.initial_ms < 1_000 || clock.initial_ms > 24 * 3_600_000 {
                return Err("clock.initial_ms must be between 1000 and 86400000".into());
            }
            if clock.increment_ms > 3_600_000 {
                return Err("clock.increment_ms must be at most 3600000".into());
            }
        }
        let name = |n: &String, default: &str| {
            let n = n.trim();
            if n.is_empty() {
                default.to_string()
            } else {
                n.chars().take(100).collect()
            }
        };
        Ok(MatchConfig {
            game: kind,
            variant: start.variant(),
            sets,
            clock,
            warnings_limit,
            players: PerSeat::new(name(&players.p1, "Player 1"), name(&players.p2, "Player 2")),
            untimed_ply_limit: DEFAULT_UNTIMED_PLY_LIMIT,
            tournament: None,
            house_bot: None,
            rated: false,
        })
    }

    /// The first mover of set `n` (1-based): p1, p2, p1, ...
    pub fn first_mover(set: u8) -> Seat {
        if set % 2 == 1 {
            Seat::P1
        } else {
            Seat::P2
        }
    }

    fn start_position(&self) -> AnyPosition {
        if self.game == GameKind::Quoridor && self.clock.is_none() {
            return AnyPosition::Quoridor(quoridor::Position::new(quoridor::Rules {
                ply_limit: Some(self.untimed_ply_limit),
                ..quoridor::Rules::standard()
            }));
        }
        AnyPosition::new(self.game, Some(self.variant))
            .unwrap_or_else(|_| AnyPosition::new(self.game, None).expect("default variant"))
    }
}

/// Why a command was refused: a stable code and words for people.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Refusal {
    pub code: ErrorCode,
    pub message: String,
    /// For `illegal_move`: the rule broken.
    pub rule: Option<&'static str>,
}

impl Refusal {
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Refusal {
        Refusal {
            code,
            message: message.into(),
            rule: None,
        }
    }

    fn illegal(error: MoveError) -> Refusal {
        let code = if error.is_notation() {
            ErrorCode::BadRequest
        } else {
            ErrorCode::IllegalMove
        };
        Refusal {
            code,
            message: error.to_string(),
            rule: Some(error.code()),
        }
    }
}

/// What a participant or the room's timer asks of the round.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Command {
    Place {
        seat: Seat,
        cell: String,
    },
    Rotate {
        seat: Seat,
        quadrant: String,
        dir: String,
    },
    Move {
        seat: Seat,
        mv: String,
        press: bool,
    },
    Press {
        seat: Seat,
    },
    Ready {
        seat: Seat,
    },
    Resign {
        seat: Seat,
    },
    /// Offers a draw of the set, or accepts the opponent's offer.
    OfferDraw {
        seat: Seat,
    },
    DeclineDraw {
        seat: Seat,
    },
    Claim {
        seat: Seat,
        text: String,
    },
    Warn {
        seat: Seat,
        reason: String,
    },
    /// The arbiter's ruling on a claim; `warn` warns the claimant's opponent with `reason`.
    ResolveClaim {
        claim: u32,
        upheld: bool,
        reason: String,
        warn: bool,
    },
    Pause,
    Resume,
    AdjustClock {
        seat: Seat,
        delta_ms: i64,
    },
    StartSet,
    Declare {
        scope: Scope,
        winner: Winner,
        reason: String,
    },
    /// The room's timer: the running clock may have reached zero.
    Flag,
    /// The room's timer: nobody came to play; the match ends unplayed.
    Expire,
    Connected {
        seat: Seat,
    },
    Disconnected {
        seat: Seat,
    },
}

/// The half of a Pentago move made so far, before the press.
#[derive(Clone, Debug, PartialEq, Eq)]
struct HalfMove {
    seat: Seat,
    placement: pentago::Placement,
    turn: Option<Turn>,
}

/// The play of the current (or last) set.
#[derive(Clone, Debug)]
struct SetPlay {
    position: AnyPosition,
    first_mover: Seat,
    moves: Vec<String>,
    half: Option<HalfMove>,
    /// The seat whose completed move waits for its press.
    awaiting_press: Option<Seat>,
}

impl SetPlay {
    fn seat_of(&self, side: Side) -> Seat {
        match side {
            Side::First => self.first_mover,
            Side::Second => self.first_mover.other(),
        }
    }

    /// The seat whose turn it is to move (ignoring a pending press).
    fn mover(&self) -> Seat {
        self.seat_of(self.position.to_move())
    }
}

#[derive(Clone, Debug)]
pub struct Round {
    config: MatchConfig,
    status: MatchStatus,
    set_no: u8,
    sets: Vec<SetResult>,
    set_points: PerSeat<Points>,
    warnings: PerSeat<u8>,
    result: Option<RoundResult>,
    ready: PerSeat<bool>,
    connected: PerSeat<bool>,
    paused: bool,
    clock: Option<Clock>,
    play: Option<SetPlay>,
    /// The seat that may claim against the opponent's last move.
    claimable_by: Option<Seat>,
    /// Every claim made, with its ruling.
    claims: Vec<ClaimView>,
    /// The match ended unplayed: nobody came.
    expired: bool,
    /// The seat whose draw offer is open.
    draw_offer: Option<Seat>,
    /// Where each seat last offered a draw (set, plies played): one offer per move.
    last_draw_offer: PerSeat<Option<(u8, usize)>>,
}

impl Round {
    pub fn new(config: MatchConfig) -> Round {
        Round {
            clock: config.clock.map(Clock::new),
            config,
            status: MatchStatus::Waiting,
            set_no: 0,
            sets: Vec::new(),
            set_points: PerSeat::default(),
            warnings: PerSeat::default(),
            result: None,
            ready: PerSeat::default(),
            connected: PerSeat::default(),
            paused: false,
            play: None,
            claimable_by: None,
            claims: Vec::new(),
            expired: false,
            draw_offer: None,
            last_draw_offer: PerSeat::default(),
        }
    }

    /// Every claim of the match with its ruling, oldest first.
    pub fn claims(&self) -> &[ClaimView] {
        &self.claims
    }

    pub fn config(&self) -> &MatchConfig {
        &self.config
    }

    pub fn status(&self) -> MatchStatus {
        self.status
    }

    pub fn set_no(&self) -> u8 {
        self.set_no
    }

    pub fn set_points(&self) -> PerSeat<Points> {
        self.set_points
    }

    /// When the running clock reaches zero, on the caller's time scale.
    pub fn clock_deadline(&self) -> Option<Millis> {
        if self.status != MatchStatus::Playing {
            return None;
        }
        self.clock.as_ref().and_then(Clock::deadline)
    }

    pub fn clocks(&self, now: Millis, server_time_ms: u64) -> Option<Clocks> {
        self.clock
            .as_ref()
            .map(|clock| clock.reading(now, server_time_ms))
    }

    /// Decides and applies a command: the events it caused, or why it was refused (and then
    /// nothing changed).
    pub fn handle(&mut self, command: Command, now: Millis) -> Result<Vec<Event>, Refusal> {
        let events = self.decide(command, now)?;
        for event in &events {
            self.apply(event, now);
        }
        Ok(events)
    }

    /// Decides a command and works out the round after it, without changing this one: the
    /// next round and the command's events as frames, numbered from `first_seq`, each with the
    /// clocks as they stand right after it. A room stores the frames, and only then takes the
    /// next round and sends them.
    pub fn step(
        &self,
        command: Command,
        now: Millis,
        server_time_ms: u64,
        match_id: &str,
        first_seq: u64,
    ) -> Result<(Round, Vec<EventFrame>), Refusal> {
        let events = self.decide(command, now)?;
        let mut next = self.clone();
        let mut frames = Vec::with_capacity(events.len());
        for (i, event) in events.into_iter().enumerate() {
            next.apply(&event, now);
            frames.push(EventFrame {
                match_id: match_id.to_string(),
                seq: first_seq + i as u64,
                event,
                clocks: next.clocks(now, server_time_ms),
            });
        }
        Ok((next, frames))
    }

    // -----------------------------------------------------------------------------------------
    // Decide

    pub fn decide(&self, command: Command, now: Millis) -> Result<Vec<Event>, Refusal> {
        match command {
            Command::Place { seat, cell } => self.decide_place(seat, &cell),
            Command::Rotate {
                seat,
                quadrant,
                dir,
            } => self.decide_rotate(seat, &quadrant, &dir),
            Command::Move { seat, mv, press } => self.decide_move(seat, &mv, press),
            Command::Press { seat } => self.decide_press(seat),
            Command::Ready { seat } => self.decide_ready(seat),
            Command::Resign { seat } => {
                self.require_playing()?;
                Ok(self.set_end(Some(seat.other()), SetReason::Resign))
            }
            Command::OfferDraw { seat } => self.decide_offer_draw(seat),
            Command::DeclineDraw { seat } => {
                self.require_playing()?;
                if self.draw_offer != Some(seat.other()) {
                    return Err(Refusal::new(
                        ErrorCode::BadRequest,
                        "there is no draw offer to decline",
                    ));
                }
                Ok(vec![Event::DrawDeclined { seat }])
            }
            Command::Claim { seat, text } => self.decide_claim(seat, text),
            Command::Warn { seat, reason } => self.decide_warn(seat, reason),
            Command::ResolveClaim {
                claim,
                upheld,
                reason,
                warn,
            } => self.decide_resolve_claim(claim, upheld, reason, warn),
            Command::Pause => {
                self.require_playing()?;
                if self.paused {
                    return Err(Refusal::new(
                        ErrorCode::BadRequest,
                        "the clocks are already paused",
                    ));
                }
                Ok(vec![Event::Paused])
            }
            Command::Resume => {
                if !self.paused {
                    return Err(Refusal::new(
                        ErrorCode::BadRequest,
                        "the clocks are not paused",
                    ));
                }
                Ok(vec![Event::Resumed])
            }
            Command::AdjustClock { seat, delta_ms } => {
                if self.clock.is_none() {
                    return Err(Refusal::new(ErrorCode::BadRequest, "this match is untimed"));
                }
                self.require_playing()?;
                if delta_ms.unsigned_abs() > MAX_CLOCK_MS {
                    return Err(Refusal::new(
                        ErrorCode::BadRequest,
                        "delta_ms moves a clock by at most 24 hours (86400000) either way",
                    ));
                }
                let left = self.clock.as_ref().map_or(0, |c| c.remaining(seat, now));
                if delta_ms > 0 && left.saturating_add(delta_ms.unsigned_abs()) > MAX_CLOCK_MS {
                    return Err(Refusal::new(
                        ErrorCode::BadRequest,
                        "a clock holds at most 24 hours (86400000 ms)",
                    ));
                }
                Ok(vec![Event::ClockAdjusted { seat, delta_ms }])
            }
            Command::StartSet => self.decide_start_set(),
            Command::Declare {
                scope,
                winner,
                reason,
            } => self.decide_declare(scope, winner, reason),
            Command::Flag => Ok(self.decide_flag(now)),
            Command::Expire => {
                if self.status != MatchStatus::Waiting || !self.sets.is_empty() {
                    return Err(Refusal::new(
                        ErrorCode::BadRequest,
                        "only a match that never started expires",
                    ));
                }
                Ok(vec![Event::Expired])
            }
            Command::Connected { seat } => Ok(vec![Event::PlayerConnected { seat }]),
            Command::Disconnected { seat } => Ok(vec![Event::PlayerDisconnected { seat }]),
        }
    }

    fn require_playing(&self) -> Result<&SetPlay, Refusal> {
        match (self.status, &self.play) {
            (MatchStatus::Playing, Some(play)) => Ok(play),
            (MatchStatus::Finished, _) => {
                Err(Refusal::new(ErrorCode::SetOver, "the round is over"))
            }
            _ => Err(Refusal::new(ErrorCode::SetOver, "no set is being played")),
        }
    }

    /// The checks every move action shares: a set is on, the clocks run, it is `seat`'s turn
    /// and the opponent has pressed.
    fn require_turn(&self, seat: Seat) -> Result<&SetPlay, Refusal> {
        let play = self.require_playing()?;
        if self.paused {
            return Err(Refusal::new(
                ErrorCode::Paused,
                "the arbiter has paused the clocks",
            ));
        }
        if let Some(waiting) = play.awaiting_press {
            return Err(if waiting == seat {
                Refusal::new(
                    ErrorCode::NotYourTurn,
                    "your move is complete: press the clock",
                )
            } else {
                Refusal::new(
                    ErrorCode::PressFirst,
                    "the opponent has not pressed the clock yet",
                )
            });
        }
        if let Some(half) = &play.half {
            if half.seat != seat {
                return Err(Refusal::new(
                    ErrorCode::PressFirst,
                    "the opponent has not finished the move and pressed the clock yet",
                ));
            }
        }
        if play.mover() != seat {
            return Err(Refusal::new(ErrorCode::NotYourTurn, "it is not your turn"));
        }
        Ok(play)
    }

    fn pentago(play: &SetPlay) -> Result<&pentago::Position, Refusal> {
        match &play.position {
            AnyPosition::Pentago(position) => Ok(position),
            _ => Err(Refusal::new(
                ErrorCode::BadRequest,
                "place and rotate are for Pentago; send the whole move with `move`",
            )),
        }
    }

    /// Touch-move: a placement is final, so only a turn may follow it.
    fn placed_already(half: &HalfMove) -> Refusal {
        Refusal::new(
            ErrorCode::IllegalMove,
            format!(
                "you have placed on {}: a placement is final, turn a quadrant",
                half.placement.cell()
            ),
        )
    }

    fn decide_place(&self, seat: Seat, cell: &str) -> Result<Vec<Event>, Refusal> {
        let play = self.require_turn(seat)?;
        let position = Self::pentago(play)?;
        if let Some(half) = &play.half {
            return Err(Self::placed_already(half));
        }
        let parsed = pentago::Move::parse(cell).map_err(Refusal::illegal)?;
        if parsed.turn.is_some() {
            return Err(Refusal::new(
                ErrorCode::BadRequest,
                "`cell` is a cell such as d4; send the whole move with `move`",
            ));
        }
        let placement = position.place(parsed.cell).map_err(Refusal::illegal)?;
        let mut events = vec![Event::Placed {
            seat,
            cell: parsed.cell.to_string(),
            board: Some(board_of(&play.position, Some(&placement))),
        }];
        if placement.is_winning() {
            // A classic winning placement ends the set at once; no turn, no press.
            let mv = placement.finish().map_err(Refusal::illegal)?;
            events.extend(self.completed_move(play, seat, mv.to_string(), false)?);
        }
        Ok(events)
    }

    fn decide_rotate(&self, seat: Seat, quadrant: &str, dir: &str) -> Result<Vec<Event>, Refusal> {
        let play = self.require_turn(seat)?;
        Self::pentago(play)?;
        let Some(half) = &play.half else {
            return Err(Refusal::new(
                ErrorCode::IllegalMove,
                "place a marble before turning a quadrant",
            ));
        };
        let quadrant = Quadrant::ALL
            .into_iter()
            .find(|q| q.as_str() == quadrant)
            .ok_or_else(|| {
                Refusal::new(ErrorCode::BadRequest, "`quadrant` must be sw, se, nw or ne")
            })?;
        let direction = Direction::parse(dir)
            .ok_or_else(|| Refusal::new(ErrorCode::BadRequest, "`dir` must be cw or ccw"))?;
        let mv = half
            .placement
            .turn(Turn::new(quadrant, direction))
            .map_err(Refusal::illegal)?;
        let mut events = vec![Event::Rotated {
            seat,
            quadrant: quadrant.as_str().to_string(),
            dir: direction.as_str().to_string(),
        }];
        events.extend(self.completed_move(play, seat, mv.to_string(), false)?);
        Ok(events)
    }

    fn decide_move(&self, seat: Seat, mv: &str, press: bool) -> Result<Vec<Event>, Refusal> {
        let play = self.require_turn(seat)?;
        if let Some(half) = &play.half {
            return Err(Self::placed_already(half));
        }
        self.completed_move(play, seat, mv.to_string(), press)
    }

    /// The events of a completed move: `moved`, then the end of the set if the move ends it
    /// (no press needed), else `pressed` when asked for.
    fn completed_move(
        &self,
        play: &SetPlay,
        seat: Seat,
        mv: String,
        press: bool,
    ) -> Result<Vec<Event>, Refusal> {
        let mut after = play.position.clone();
        let canonical = after.play_str(&mv).map_err(Refusal::illegal)?;
        let mut events = vec![Event::Moved {
            seat,
            mv: canonical,
            board: Some(board_of(&after, None)),
        }];
        match after.outcome() {
            Some(outcome) => {
                let winner = outcome.winner.map(|side| play.seat_of(side));
                events.extend(self.set_end(winner, SetReason::parse(outcome.reason.as_str())));
            }
            None if press => events.push(Event::Pressed { seat }),
            None => {}
        }
        Ok(events)
    }

    fn decide_press(&self, seat: Seat) -> Result<Vec<Event>, Refusal> {
        let play = self.require_playing()?;
        if self.paused {
            return Err(Refusal::new(
                ErrorCode::Paused,
                "the arbiter has paused the clocks",
            ));
        }
        match play.awaiting_press {
            Some(waiting) if waiting == seat => return Ok(vec![Event::Pressed { seat }]),
            Some(_) => {
                return Err(Refusal::new(
                    ErrorCode::PressFirst,
                    "the opponent has not pressed the clock yet",
                ))
            }
            None => {}
        }
        if play.half.as_ref().is_some_and(|half| half.seat != seat) {
            return Err(Refusal::new(
                ErrorCode::PressFirst,
                "the opponent has not finished the move and pressed the clock yet",
            ));
        }
        if play.mover() == seat {
            let message = if play.half.is_some() {
                "the move is not complete: turn a quadrant before pressing"
            } else {
                "make a move before pressing the clock"
            };
            return Err(Refusal::new(ErrorCode::MoveIncomplete, message));
        }
        Err(Refusal::new(ErrorCode::NotYourTurn, "it is not your turn"))
    }

    /// A draw offer, or the acceptance of the opponent's. Only in casual Pente and Quoridor
    /// (Pentago sets end by the board; a tournament's results are the board's or the
    /// arbiter's), and once per move.
    fn decide_offer_draw(&self, seat: Seat) -> Result<Vec<Event>, Refusal> {
        if !self.draws_by_agreement() {
            return Err(Refusal::new(
                ErrorCode::BadRequest,
                "draw offers are for casual Pente and Quoridor matches: a Pentago set ends on \
                 the board, and a tournament's results are the board's or the arbiter's",
            ));
        }
        let play = self.require_playing()?;
        if self.draw_offer == Some(seat.other()) {
            return Ok(self.set_end(None, SetReason::Agreement));
        }
        if self.draw_offer == Some(seat) {
            return Err(Refusal::new(
                ErrorCode::BadRequest,
                "your draw offer is waiting for the opponent's answer",
            ));
        }
        if *self.last_draw_offer.get(seat) == Some((self.set_no, play.moves.len())) {
            return Err(Refusal::new(
                ErrorCode::BadRequest,
                "one draw offer per move: offer again after the next move",
            ));
        }
        Ok(vec![Event::DrawOffered { seat }])
    }

    /// Whether the players may agree a set drawn: casual Pente and Quoridor, not against the
    /// house bot (which never answers).
    pub fn draws_by_agreement(&self) -> bool {
        matches!(self.config.game, GameKind::Pente | GameKind::Quoridor)
            && self.config.tournament.is_none()
            && self.config.house_bot.is_none()
    }

    /// The seat whose draw offer waits for an answer.
    pub fn draw_offer(&self) -> Option<Seat> {
        self.draw_offer
    }

    fn decide_ready(&self, seat: Seat) -> Result<Vec<Event>, Refusal> {
        match self.status {
            MatchStatus::Finished => {
                return Err(Refusal::new(ErrorCode::SetOver, "the round is over"))
            }
            MatchStatus::Playing => {
                return Err(Refusal::new(
                    ErrorCode::BadRequest,
                    "the set is already under way",
                ))
            }
            MatchStatus::Waiting | MatchStatus::BetweenSets => {}
        }
        if *self.ready.get(seat) {
            return Ok(Vec::new());
        }
        let mut events = vec![Event::Ready { seat }];
        if *self.ready.get(seat.other()) {
            events.push(self.next_set_start());
        }
        Ok(events)
    }

    fn next_set_start(&self) -> Event {
        let set = self.set_no + 1;
        let first_mover = MatchConfig::first_mover(set);
        Event::SetStarted {
            set,
            first_mover,
            board: Some(board_of(&self.config.start_position(), None)),
            colours: hakem_protocol::seat_colours(self.config.game.as_str(), Some(first_mover)),
        }
    }

    fn decide_start_set(&self) -> Result<Vec<Event>, Refusal> {
        match self.status {
            MatchStatus::Waiting | MatchStatus::BetweenSets => Ok(vec![self.next_set_start()]),
            MatchStatus::Playing => Err(Refusal::new(
                ErrorCode::BadRequest,
                "a set is already being played",
            )),
            MatchStatus::Finished => Err(Refusal::new(ErrorCode::SetOver, "the round is over")),
        }
    }

    fn decide_claim(&self, seat: Seat, text: String) -> Result<Vec<Event>, Refusal> {
        if text.chars().count() > MAX_CLAIM_CHARS {
            return Err(Refusal::new(
                ErrorCode::BadRequest,
                format!("a claim is at most {MAX_CLAIM_CHARS} characters"),
            ));
        }
        if self.claimable_by == Some(seat) {
            return Ok(vec![Event::Claim {
                seat,
                text,
                id: Some(self.claims.len() as u32 + 1),
                set: Some(self.set_no),
                ply: Some(self.moves().len() as u32),
            }]);
        }
        let opponent_mid_move = self.play.as_ref().is_some_and(|play| {
            play.awaiting_press == Some(seat.other())
                || play.half.as_ref().is_some_and(|h| h.seat == seat.other())
        });
        if self.status == MatchStatus::Playing && opponent_mid_move {
            return Err(Refusal::new(
                ErrorCode::PressFirst,
                "a claim can be made only after the opponent has pressed the clock",
            ));
        }
        Err(Refusal::new(
            ErrorCode::Forbidden,
            "a claim is about the opponent's last move, made before you move yourself",
        ))
    }

    fn decide_resolve_claim(
        &self,
        claim: u32,
        upheld: bool,
        reason: String,
        warn: bool,
    ) -> Result<Vec<Event>, Refusal> {
        let bad = |message: String| Err(Refusal::new(ErrorCode::BadRequest, message));
        let Some(found) = self.claims.iter().find(|c| c.id == claim) else {
            return bad(format!("this match has no claim {claim}"));
        };
        if found.status != ClaimStatus::Open {
            return bad(format!("claim {claim} has been ruled on already"));
        }
        if reason.chars().count() > MAX_CLAIM_CHARS {
            return bad(format!(
                "a ruling's reason is at most {MAX_CLAIM_CHARS} characters"
            ));
        }
        if warn && !upheld {
            return bad("a warning comes only with an upheld claim".to_string());
        }
        let mut events = Vec::new();
        if warn {
            // The warning goes to the claimant's opponent; refused once the round is over.
            events = self.decide_warn(found.seat.other(), reason.clone())?;
        }
        events.insert(
            0,
            Event::ClaimResolved {
                claim,
                upheld,
                reason,
            },
        );
        Ok(events)
    }

    fn decide_warn(&self, seat: Seat, reason: String) -> Result<Vec<Event>, Refusal> {
        if self.status == MatchStatus::Finished {
            return Err(Refusal::new(ErrorCode::SetOver, "the round is over"));
        }
        let count = self.warnings.get(seat) + 1;
        let mut events = vec![Event::Warning {
            seat,
            count,
            reason,
        }];
        if count >= self.config.warnings_limit {
            let winner = seat.other();
            events.push(Event::RoundEnded(RoundResult {
                winner: Winner::from_seat(Some(winner)),
                set_points: self.set_points,
                points: round_points(Some(winner)),
                reason: RoundReason::Warnings,
            }));
        }
        Ok(events)
    }

    fn decide_declare(
        &self,
        scope: Scope,
        winner: Winner,
        reason: String,
    ) -> Result<Vec<Event>, Refusal> {
        let declared = Event::Declared {
            scope,
            winner,
            reason,
        };
        match scope {
            Scope::Set => {
                self.require_playing()?;
                let mut events = vec![declared];
                events.extend(self.set_end(winner.seat(), SetReason::Arbiter));
                Ok(events)
            }
            Scope::Round => {
                if self.status == MatchStatus::Finished {
                    return Err(Refusal::new(ErrorCode::SetOver, "the round is over"));
                }
                Ok(vec![
                    declared,
                    Event::RoundEnded(RoundResult {
                        winner,
                        set_points: self.set_points,
                        points: round_points(winner.seat()),
                        reason: RoundReason::Arbiter,
                    }),
                ])
            }
        }
    }

    fn decide_flag(&self, now: Millis) -> Vec<Event> {
        if self.status != MatchStatus::Playing {
            return Vec::new();
        }
        match self.clock.as_ref().and_then(|clock| clock.flagged(now)) {
            Some(seat) => self.set_end(Some(seat.other()), SetReason::Time),
            None => Vec::new(),
        }
    }

    /// `set_ended`, and `round_ended` when that set decides the round.
    fn set_end(&self, winner: Option<Seat>, reason: SetReason) -> Vec<Event> {
        let first_mover = self.play.as_ref().map_or(Seat::P1, |play| play.first_mover);
        let result = GameResult::of(winner, first_mover);
        let mut events = vec![Event::SetEnded(SetResult {
            set: self.set_no,
            first_mover,
            result,
            winner,
            reason,
        })];
        let mut points = self.set_points;
        add_set_points(&mut points, winner);
        let decided = Seat::BOTH
            .iter()
            .any(|&seat| points.get(seat).halves > u32::from(self.config.sets));
        if decided || self.set_no >= self.config.sets {
            let round_winner = match points.p1.cmp(&points.p2) {
                std::cmp::Ordering::Greater => Some(Seat::P1),
                std::cmp::Ordering::Less => Some(Seat::P2),
                std::cmp::Ordering::Equal => None,
            };
            events.push(Event::RoundEnded(RoundResult {
                winner: Winner::from_seat(round_winner),
                set_points: points,
                points: round_points(round_winner),
                reason: RoundReason::Sets,
            }));
        }
        events
    }

    // -----------------------------------------------------------------------------------------
    // Apply

    /// Applies one event. Events come from [`Round::decide`] (or a stored log of them), so they
    /// fit the state; one that does not is ignored rather than corrupting it.
    pub fn apply(&mut self, event: &Event, now: Millis) {
        match event {
            Event::SetStarted {
                set, first_mover, ..
            } => {
                self.set_no = *set;
                self.status = MatchStatus::Playing;
                self.ready = PerSeat::default();
                self.paused = false;
                self.claimable_by = None;
                self.play = Some(SetPlay {
                    position: self.config.start_position(),
                    first_mover: *first_mover,
                    moves: Vec::new(),
                    half: None,
                    awaiting_press: None,
                });
                if let Some(clock) = &mut self.clock {
                    clock.start_set(*first_mover, now);
                }
            }
            Event::Placed { seat, cell, .. } => {
                if let Some(play) = &mut self.play {
                    let placement = match (&play.position, pentago::Move::parse(cell)) {
                        (AnyPosition::Pentago(position), Ok(mv)) => position.place(mv.cell).ok(),
                        _ => None,
                    };
                    if let Some(placement) = placement {
                        play.half = Some(HalfMove {
                            seat: *seat,
                            placement,
                            turn: None,
                        });
                    }
                }
                self.claimable_by = None;
            }
            Event::Rotated { quadrant, dir, .. } => {
                let turn = Quadrant::ALL
                    .into_iter()
                    .find(|q| q.as_str() == quadrant)
                    .zip(Direction::parse(dir))
                    .map(|(q, d)| Turn::new(q, d));
                if let Some(half) = self.play.as_mut().and_then(|p| p.half.as_mut()) {
                    half.turn = turn;
                }
            }
            Event::Moved { seat, mv, .. } => {
                // A move answers the opponent's draw offer: no.
                if self.draw_offer == Some(seat.other()) {
                    self.draw_offer = None;
                }
                if let Some(play) = &mut self.play {
                    if play.position.play_str(mv).is_ok() {
                        play.moves.push(mv.clone());
                        play.half = None;
                        play.awaiting_press = play.position.outcome().is_none().then_some(*seat);
                    }
                }
                self.claimable_by = None;
            }
            Event::Pressed { seat } => {
                if let Some(play) = &mut self.play {
                    play.awaiting_press = None;
                }
                if let Some(clock) = &mut self.clock {
                    clock.press(now);
                }
                self.claimable_by = Some(seat.other());
            }
            Event::SetEnded(result) => {
                self.draw_offer = None;
                add_set_points(&mut self.set_points, result.winner);
                self.sets.push(result.clone());
                self.status = MatchStatus::BetweenSets;
                self.paused = false;
                // A set won on the board can still be claimed against by the loser.
                self.claimable_by = match (&self.play, result.winner) {
                    (Some(play), Some(winner)) if result.reason.is_on_the_board() => {
                        play.position.outcome().map(|_| winner.other())
                    }
                    _ => None,
                };
                // A marble placed and not turned stays where it was placed (touch-move: it is
                // on the board), though the move was never completed.
                if let Some(play) = &mut self.play {
                    play.awaiting_press = None;
                }
                if let Some(clock) = &mut self.clock {
                    clock.stop(now);
                }
            }
            Event::Warning { seat, count, .. } => {
                *self.warnings.get_mut(*seat) = *count;
            }
            Event::RoundEnded(result) => {
                self.draw_offer = None;
                self.result = Some(result.clone());
                self.status = MatchStatus::Finished;
                self.paused = false;
                // A marble placed and not turned stays where it was placed (touch-move: it is
                // on the board), though the move was never completed.
                if let Some(play) = &mut self.play {
                    play.awaiting_press = None;
                }
                if let Some(clock) = &mut self.clock {
                    clock.stop(now);
                }
            }
            Event::Paused => {
                self.paused = true;
                if let Some(clock) = &mut self.clock {
                    clock.pause(now);
                }
            }
            Event::Resumed => {
                self.paused = false;
                if let Some(clock) = &mut self.clock {
                    clock.resume(now);
                }
            }
            Event::ClockAdjusted { seat, delta_ms } => {
                if let Some(clock) = &mut self.clock {
                    clock.adjust(*seat, *delta_ms, now);
                }
            }
            Event::Claim { .. } => {
                // One claim per move.
                self.claimable_by = None;
                let ply = self.moves().len() as u32;
                hakem_protocol::fold_claim(&mut self.claims, event, self.set_no, ply);
            }
            Event::ClaimResolved { .. } => {
                let ply = self.moves().len() as u32;
                hakem_protocol::fold_claim(&mut self.claims, event, self.set_no, ply);
            }
            Event::PlayerConnected { seat } => *self.connected.get_mut(*seat) = true,
            Event::PlayerDisconnected { seat } => *self.connected.get_mut(*seat) = false,
            Event::Ready { seat } => *self.ready.get_mut(*seat) = true,
            Event::DrawOffered { seat } => {
                self.draw_offer = Some(*seat);
                *self.last_draw_offer.get_mut(*seat) = Some((self.set_no, self.moves().len()));
            }
            Event::DrawDeclined { .. } => self.draw_offer = None,
            Event::Declared { .. } => {}
            Event::Expired => {
                self.status = MatchStatus::Finished;
                self.expired = true;
            }
        }
    }

    /// Sets the clocks to a recorded reading (restoring a stored match).
    pub fn restore_clocks(&mut self, reading: &Clocks, now: Millis) {
        if let Some(clock) = &mut self.clock {
            clock.restore(reading, now);
        }
    }

    /// Takes `ms` off the running clock (time used while no event recorded it: thinking
    /// before a crash).
    pub fn charge_running_clock(&mut self, ms: u64) {
        if self.status != MatchStatus::Playing {
            return;
        }
        if let Some(clock) = &mut self.clock {
            clock.charge(ms);
        }
    }

    // -----------------------------------------------------------------------------------------
    // Views

    /// The whole truth at `now`, as a spectator sees it (`you` unset, no legal moves): what
    /// `state` carries, and what folding every event so far into the match's first state gives.
    pub fn state(&self, match_id: &str, seq: u64, now: Millis, server_time_ms: u64) -> MatchState {
        let config = &self.config;
        let player = |seat: Seat| PlayerInfo {
            name: config.players.get(seat).clone(),
            connected: *self.connected.get(seat),
            ready: *self.ready.get(seat),
            house_bot: config.house_bot == Some(seat),
        };
        MatchState {
            match_id: match_id.to_string(),
            seq,
            game: config.game.as_str().to_string(),
            variant: config.variant.to_string(),
            sets_max: config.sets,
            clock: config.clock,
            warnings_limit: config.warnings_limit,
            players: PerSeat::new(player(Seat::P1), player(Seat::P2)),
            status: self.status,
            set: self.set_no,
            sets: self.sets.clone(),
            set_points: self.set_points,
            warnings: self.warnings,
            round: self.result.clone(),
            paused: self.paused,
            position: PositionView {
                to_move: self.to_move(),
                first_mover: self.first_mover(),
                moves: self.moves().to_vec(),
                pending: self.pending(),
                awaiting_press: self.awaiting_press(),
                board: self
                    .position()
                    .map(|p| board_of(p, self.pending_placement())),
                legal_moves: None,
            },
            clocks: self.clocks(now, server_time_ms),
            you: None,
            tournament: config.tournament.clone(),
            expired: self.expired,
            rated: config.rated,
            colours: hakem_protocol::seat_colours(config.game.as_str(), self.first_mover()),
            claims: None,
            spectator_delay: None,
            draw_offer: self.draw_offer,
        }
    }

    /// The legal moves of the position when `seat` is the one to act, none otherwise (a
    /// Pentago client finds the turns of its placed marble among them).
    pub fn legal_moves(&self, seat: Seat) -> Vec<String> {
        match (self.to_move(), self.position()) {
            (Some(mover), Some(position)) if mover == seat => position.legal_moves(),
            _ => Vec::new(),
        }
    }

    pub fn is_expired(&self) -> bool {
        self.expired
    }

    /// Whether anything was played: a set decided or a move made (a round decided before its
    /// first move, a no-show or a forfeit, was not).
    pub fn was_played(&self) -> bool {
        !self.sets.is_empty() || !self.moves().is_empty()
    }

    pub fn sets(&self) -> &[SetResult] {
        &self.sets
    }

    pub fn warnings(&self) -> PerSeat<u8> {
        self.warnings
    }

    pub fn result(&self) -> Option<&RoundResult> {
        self.result.as_ref()
    }

    pub fn ready(&self) -> PerSeat<bool> {
        self.ready
    }

    pub fn connected(&self) -> PerSeat<bool> {
        self.connected
    }

    pub fn is_paused(&self) -> bool {
        self.paused
    }

    /// The current (or last) set's position, if a set has started.
    pub fn position(&self) -> Option<&AnyPosition> {
        self.play.as_ref().map(|play| &play.position)
    }

    pub fn first_mover(&self) -> Option<Seat> {
        self.play.as_ref().map(|play| play.first_mover)
    }

    pub fn moves(&self) -> &[String] {
        self.play.as_ref().map_or(&[], |play| &play.moves)
    }

    pub fn awaiting_press(&self) -> Option<Seat> {
        self.play.as_ref().and_then(|play| play.awaiting_press)
    }

    /// The seat expected to act next in the running set.
    pub fn to_move(&self) -> Option<Seat> {
        if self.status != MatchStatus::Playing {
            return None;
        }
        let play = self.play.as_ref()?;
        Some(play.awaiting_press.unwrap_or_else(|| play.mover()))
    }

    /// A placement (and turn) not yet pressed, in the protocol's terms.
    pub fn pending(&self) -> Option<Pending> {
        if self.status != MatchStatus::Playing {
            return None;
        }
        let play = self.play.as_ref()?;
        if let Some(half) = &play.half {
            return Some(Pending {
                seat: half.seat,
                cell: half.placement.cell().to_string(),
                quadrant: half.turn.map(|t| t.quadrant.as_str().to_string()),
                dir: half.turn.map(|t| t.direction.as_str().to_string()),
            });
        }
        None
    }

    /// The board with a pending placement shown on it (Pentago): the stone is visible to all
    /// as soon as it is placed.
    pub fn pending_placement(&self) -> Option<&pentago::Placement> {
        let half = self.play.as_ref()?.half.as_ref()?;
        Some(&half.placement)
    }
}

fn add_set_points(points: &mut PerSeat<Points>, winner: Option<Seat>) {
    match winner {
        Some(seat) => *points.get_mut(seat) += Points::ONE,
        None => {
            points.p1 += Points::HALF;
            points.p2 += Points::HALF;
        }
    }
}

/// Round points: 1 to the winner and 0 to the loser, or 1/2 each.
fn round_points(winner: Option<Seat>) -> PerSeat<Points> {
    match winner {
        Some(Seat::P1) => PerSeat::new(Points::ONE, Points::ZERO),
        Some(Seat::P2) => PerSeat::new(Points::ZERO, Points::ONE),
        None => PerSeat::new(Points::HALF, Points::HALF),
    }
}
