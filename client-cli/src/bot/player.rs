//! One bot in one match: joins the seat, follows the match event by event with a rules
//! position of its own, thinks on a blocking thread when it is its turn, and re-joins after a
//! lost connection until the round ends.

use std::str::FromStr;
use std::time::Duration;

use hakem_engine::{new_engine, Engine, EngineKind};
use hakem_games::{AnyPosition, GameKind, Side};
use hakem_protocol::{
    ClientMessage, ClockConfig, Clocks, ErrorCode, Event, MatchState, MatchStatus, RoundResult,
    Seat, ServerMessage, SetResult, Winner,
};
use tokio::task::JoinHandle;
use tokio::time::Instant;

use super::clock;
use super::link::{unix_ms, Frame, Link};

/// How long one connection attempt (connect and `hello`) may take.
const ATTEMPT_PATIENCE: Duration = Duration::from_secs(10);

/// Quiet for this long, the bot pings; with no frame in [`PING_PATIENCE`] after that, the
/// connection is taken as lost (a dead network sends no close).
const QUIET_BEFORE_PING: Duration = Duration::from_secs(20);
const PING_PATIENCE: Duration = Duration::from_secs(10);

/// Fresh states asked for in a row (after a refused move or a gap in the events) before the
/// bot gives up: the server and the bot disagree about the rules, and asking again will not help.
const MAX_RESYNCS: u32 = 5;

/// How a bot plays.
#[derive(Clone, Debug)]
pub struct Config {
    pub engine: EngineKind,
    pub level: u8,
    pub seed: u64,
    /// The most thinking time per move; also the budget of every move when untimed.
    pub max_think: Option<Duration>,
    /// How long to keep trying to get back into the match after losing the connection.
    pub reconnect_for: Duration,
    /// Print nothing but fatal errors (the in-process bot of `hakem play --vs-bot`).
    pub quiet: bool,
    /// Retry a failing first connection too (a listening bot's matches), instead of giving
    /// up at once as a command typed with a wrong address should.
    pub retry_first: bool,
    /// Put before every line printed (the match id, in `--listen` mode).
    pub label: String,
}

/// A round that ended: the bot's seat and the result.
#[derive(Clone, Debug)]
pub struct Finished {
    pub me: Option<Seat>,
    pub round: RoundResult,
}

/// The engine's answer: the engine comes back with the move so that it keeps its tables.
type Thinking = JoinHandle<(Box<dyn Engine>, Option<String>)>;

/// Where a position stands: the set and the number of moves made in it.
type Turn = (u8, u32);

/// How one connection's part of the match ended.
enum Step {
    Done(Finished),
    Fatal(String),
    /// The connection is gone; the text says why.
    Lost(String),
    /// The bot's picture of the match is in doubt: join again for a fresh `state`.
    Resync(String),
}

/// What the bot knows about the match, across connections.
struct Game {
    cfg: Config,
    match_id: String,
    me: Option<Seat>,
    /// The seq of the last event applied (or of the last state).
    seq: Option<u64>,
    kind: Option<GameKind>,
    variant: String,
    clock: Option<ClockConfig>,
    status: MatchStatus,
    set: u8,
    paused: bool,
    /// The current (or last) set, replayed from the moves.
    position: Option<AnyPosition>,
    first_mover: Option<Seat>,
    awaiting_press: Option<Seat>,
    /// A Pentago placement made and not yet completed: the seat and the cell.
    pending: Option<(Seat, String)>,
    /// The clocks as last heard, and when.
    clocks: Option<(Clocks, Instant)>,
    /// The server's clock minus the local one, from the last welcome, in milliseconds.
    server_offset_ms: Option<i64>,
    me_ready: bool,
    /// A `ready` went out on this connection for the coming set.
    ready_sent: bool,
    /// The position a move was sent for on this connection: never two moves for one position.
    moved_for: Option<Turn>,
    /// The same for a press.
    pressed_for: Option<Turn>,
    /// The request id of the last move sent.
    move_request: Option<u64>,
    /// Sets whose result has been printed.
    printed_sets: u8,
    round: Option<RoundResult>,
    engine: Option<Box<dyn Engine>>,
    thinking: Option<(Thinking, Turn)>,
    /// Varies the seed of a replacement engine.
    engines_made: u64,
    /// The server acknowledged the join on the current connection.
    joined: bool,
    /// Moves seen, all sets together: progress that clears the count of resyncs.
    moves_seen: u64,
}

impl Game {
    fn say(&self, line: &str) {
        if !self.cfg.quiet {
            use std::io::Write as _;
            let _ = writeln!(std::io::stdout().lock(), "{}{line}", self.cfg.label);
        }
    }

    fn warn(&self, line: &str) {
        if !self.cfg.quiet {
            eprintln!("{}{line}", self.cfg.label);
        }
    }

    fn seat_of(&self, side: Side) -> Option<Seat> {
        let first = self.first_mover?;
        Some(match side {
            Side::First => first,
            Side::Second => first.other(),
        })
    }

    fn new_position(&self) -> Result<AnyPosition, String> {
        let kind = self
            .kind
            .ok_or_else(|| "the server named no game".to_string())?;
        AnyPosition::new(kind, Some(&self.variant)).map_err(|e| e.to_string())
    }

    fn turn(&self) -> Option<Turn> {
        self.position.as_ref().map(|p| (self.set, p.plies()))
    }

    /// The whole match from a `state`.
    fn apply_state(&mut self, state: MatchState) -> Result<(), String> {
        self.me = match state.you.as_deref() {
            Some("p1") => Some(Seat::P1),
            Some("p2") => Some(Seat::P2),
            Some(other) => return Err(format!("the server seated the bot as {other}")),
            None => self.me,
        };
        self.seq = Some(state.seq);
        self.kind = Some(GameKind::from_str(&state.game).map_err(|e| e.to_string())?);
        self.variant = state.variant;
        self.clock = state.clock;
        self.status = state.status;
        self.set = state.set;
        self.paused = state.paused;
        self.first_mover = state.position.first_mover;
        self.awaiting_press = state.position.awaiting_press;
        self.pending = state.position.pending.map(|p| (p.seat, p.cell));
        self.clocks = state.clocks.map(|c| (c, Instant::now()));
        self.me_ready = self
            .me
            .is_some_and(|me| state.players.get(me).ready && state.status != MatchStatus::Playing);
        let mut position = self.new_position()?;
        for mv in &state.position.moves {
            position
                .play_str(mv)
                .map_err(|e| format!("the server's move {mv} does not replay here: {e}"))?;
        }
        self.position = Some(position);
        for set in &state.sets {
            self.print_set(set);
        }
        self.round = state.round;
        Ok(())
    }

    fn print_set(&mut self, set: &SetResult) {
        if set.set <= self.printed_sets {
            return;
        }
        self.printed_sets = set.set;
        let who = match set.winner {
            Some(seat) if Some(seat) == self.me => format!("{seat} (the bot) wins"),
            Some(seat) => format!("{seat} wins"),
            None => "draw".to_string(),
        };
        self.say(&format!(
            "set {}: {who} ({}), {}",
            set.set, set.reason, set.result
        ));
    }

    /// One event, in order. An error means the bot's picture cannot be trusted any more.
    fn apply_event(&mut self, event: Event, clocks: Option<Clocks>) -> Result<(), String> {
        if let Some(c) = clocks {
            self.clocks = Some((c, Instant::now()));
        }
        match event {
            Event::SetStarted { set, first_mover } => {
                self.set = set;
                self.status = MatchStatus::Playing;
                self.first_mover = Some(first_mover);
                self.awaiting_press = None;
                self.pending = None;
                self.me_ready = false;
                self.ready_sent = false;
                self.position = Some(self.new_position()?);
            }
            Event::Placed { seat, cell } => self.pending = Some((seat, cell)),
            Event::Moved { seat, mv } => {
                let position = self
                    .position
                    .as_mut()
                    .ok_or_else(|| "a move before any set".to_string())?;
                position
                    .play_str(&mv)
                    .map_err(|e| format!("{seat} moved {mv}, which does not replay here: {e}"))?;
                self.pending = None;
                self.awaiting_press = Some(seat);
                self.moves_seen += 1;
            }
            Event::Pressed { .. } => self.awaiting_press = None,
            Event::SetEnded(result) => {
                self.status = MatchStatus::BetweenSets;
                self.awaiting_press = None;
                self.pending = None;
                self.me_ready = false;
                self.ready_sent = false;
                self.print_set(&result);
            }
            Event::RoundEnded(result) => {
                self.status = MatchStatus::Finished;
                self.round = Some(result);
            }
            Event::Paused => self.paused = true,
            Event::Resumed => self.paused = false,
            Event::Ready { seat } if Some(seat) == self.me => self.me_ready = true,
            Event::Warning {
                seat,
                count,
                reason,
            } => self.warn(&format!("the arbiter warned {seat} ({count}): {reason}")),
            _ => {}
        }
        Ok(())
    }

    /// Whether the bot is to move now, in the position it has.
    fn my_turn(&self) -> bool {
        let Some(position) = &self.position else {
            return false;
        };
        self.status == MatchStatus::Playing
            && !self.paused
            && position.outcome().is_none()
            && self.me.is_some()
            && self.seat_of(position.to_move()) == self.me
            && self.awaiting_press.is_none()
            && self.pending.is_none()
    }

    /// The thinking time for the next move.
    fn budget(&self) -> Duration {
        let plies = self.position.as_ref().map_or(0, |p| p.plies());
        let (Some(me), Some(_), Some((clocks, at))) = (self.me, self.clock, self.clocks) else {
            return self.cfg.max_think.unwrap_or(clock::UNTIMED_BUDGET);
        };
        let mut remaining = clocks.remaining(me);
        if clocks.running == Some(me) && !clocks.paused {
            // Time since the reading was received, or since the server took it: a reading
            // replayed after a reconnection is older than its arrival.
            let mut spent = u64::try_from(at.elapsed().as_millis()).unwrap_or(u64::MAX);
            if let Some(offset) = self.server_offset_ms {
                let server_now = unix_ms().saturating_add(offset);
                let taken = i64::try_from(clocks.server_time_ms).unwrap_or(i64::MAX);
                spent = spent.max(u64::try_from(server_now.saturating_sub(taken)).unwrap_or(0));
            }
            remaining = remaining.saturating_sub(spent);
        }
        let kind = self.kind.unwrap_or(GameKind::Pentago);
        let increment = self.clock.map_or(0, |c| c.increment_ms);
        clock::budget(
            remaining,
            increment,
            clock::moves_left(kind, plies),
            self.cfg.max_think,
        )
    }

    /// Sends what the position calls for: `ready`, a press, or starts thinking.
    async fn act(&mut self, link: &mut Link) -> Result<(), String> {
        let me_seat = self.me;
        if matches!(self.status, MatchStatus::Waiting | MatchStatus::BetweenSets)
            && !self.me_ready
            && !self.ready_sent
            && me_seat.is_some()
        {
            self.ready_sent = true;
            link.send(ClientMessage::Ready {
                match_id: self.match_id.clone(),
            })
            .await?;
        }
        if self.status == MatchStatus::Playing && !self.paused && self.awaiting_press.is_some() {
            // A completed move of ours waiting for its press (made by another client on our
            // seat, say): press it, once.
            if self.awaiting_press == me_seat && self.pressed_for != self.turn() {
                self.pressed_for = self.turn();
                link.send(ClientMessage::Press {
                    match_id: self.match_id.clone(),
                })
                .await?;
            }
            return Ok(());
        }
        if let Some((seat, cell)) = &self.pending {
            // Half a move of ours (placed by another client on our seat, say): turn a quadrant
            // that makes it a legal move, once, and press on the next round.
            if Some(*seat) == me_seat
                && self.status == MatchStatus::Playing
                && !self.paused
                && self.moved_for != self.turn()
            {
                let rotate = self.position.as_ref().and_then(|p| {
                    p.legal_moves().into_iter().find_map(|mv| {
                        let turn = mv.strip_prefix(cell.as_str())?;
                        let quadrant = turn.get(..2)?.to_string();
                        let dir = if turn.ends_with('\'') { "ccw" } else { "cw" };
                        Some((quadrant, dir.to_string()))
                    })
                });
                if let Some((quadrant, dir)) = rotate {
                    self.moved_for = self.turn();
                    link.send(ClientMessage::Rotate {
                        match_id: self.match_id.clone(),
                        quadrant,
                        dir,
                    })
                    .await?;
                }
            }
            return Ok(());
        }
        if !self.my_turn() || self.thinking.is_some() || self.moved_for == self.turn() {
            return Ok(());
        }
        let (Some(position), Some(turn)) = (self.position.clone(), self.turn()) else {
            return Ok(());
        };
        let budget = self.budget();
        let mut engine = match self.engine.take() {
            Some(engine) => engine,
            None => {
                self.engines_made += 1;
                new_engine(
                    self.cfg.engine,
                    self.cfg.level,
                    self.cfg
                        .seed
                        .wrapping_add(self.engines_made.wrapping_mul(7919)),
                )
            }
        };
        let handle = tokio::task::spawn_blocking(move || {
            let mv = engine.choose(&position, budget);
            (engine, mv)
        });
        self.thinking = Some((handle, turn));
        Ok(())
    }

    /// The engine answered: send its move if the position is still the one it thought about.
    async fn thought(
        &mut self,
        answer: Result<(Box<dyn Engine>, Option<String>), tokio::task::JoinError>,
        turn: Turn,
        link: &mut Link,
    ) -> Result<(), String> {
        let mv = match answer {
            Ok((engine, mv)) => {
                self.engine = Some(engine);
                mv
            }
            Err(e) => {
                // A failing engine is replaced; this move is any legal one.
                self.warn(&format!(
                    "the engine failed ({e}); playing a legal move instead"
                ));
                None
            }
        };
        if !self.my_turn() || self.turn() != Some(turn) || self.moved_for == Some(turn) {
            return Ok(());
        }
        let Some(position) = &self.position else {
            return Ok(());
        };
        let mv = match mv.filter(|mv| position.check_str(mv).is_ok()) {
            Some(mv) => mv,
            None => {
                let legal = position.legal_moves();
                if legal.is_empty() {
                    return Err("the engine found no move in a game that is not over".into());
                }
                let i = (self.cfg.seed as usize ^ turn.1 as usize) % legal.len();
                legal[i].clone()
            }
        };
        self.moved_for = Some(turn);
        self.move_request = Some(
            link.send(ClientMessage::Move {
                match_id: self.match_id.clone(),
                mv,
                press: true,
            })
            .await?,
        );
        Ok(())
    }

    /// Follows the match on one connection, from the `join` until the round ends or the
    /// connection is lost.
    async fn follow(&mut self, link: &mut Link, seat_token: &str) -> Step {
        let rejoin = self.seq.is_some();
        self.ready_sent = false;
        self.moved_for = None;
        self.pressed_for = None;
        self.move_request = None;
        let join = ClientMessage::Join {
            match_id: self.match_id.clone(),
            seat_token: Some(seat_token.to_string()),
            arbiter_token: None,
            since_seq: self.seq,
            legal_moves: false,
        };
        let join_id = match link.send(join).await {
            Ok(id) => id,
            Err(e) => return Step::Lost(e),
        };
        // Until the join is acknowledged, the frames are the catch-up: nothing is sent.
        let mut joined = false;
        let mut heard_at = Instant::now();
        let mut pinged = false;
        loop {
            let quiet_until = heard_at
                + QUIET_BEFORE_PING
                + if pinged {
                    PING_PATIENCE
                } else {
                    Duration::ZERO
                };
            let thinking = &mut self.thinking;
            tokio::select! {
                frame = link.recv() => {
                    let frame = match frame {
                        Ok(Some(frame)) => frame,
                        Ok(None) => return Step::Lost("the server closed the connection".into()),
                        Err(e) => return Step::Lost(e),
                    };
                    heard_at = Instant::now();
                    pinged = false;
                    let re = frame.reply_to();
                    if !joined && re == Some(join_id) {
                        if let Frame::Message(ServerMessage::Error(error)) = &frame {
                            let lasting = matches!(
                                error.code,
                                ErrorCode::Unauthorized
                                    | ErrorCode::UnknownMatch
                                    | ErrorCode::Forbidden
                                    | ErrorCode::BadRequest
                            );
                            let message = format!(
                                "cannot {} match {}: {} ({})",
                                if rejoin { "get back into" } else { "join" },
                                self.match_id, error.message, error.code
                            );
                            return if lasting { Step::Fatal(message) } else { Step::Lost(message) };
                        }
                        joined = true;
                        self.joined = true;
                    }
                    if let Some(step) = self.on_frame(frame, re) {
                        return step;
                    }
                }
                answer = answer_of(thinking), if thinking.is_some() => {
                    let turn = self.thinking.take().map_or((0, 0), |(_, turn)| turn);
                    if let Err(e) = self.thought(answer, turn, link).await {
                        return Step::Lost(e);
                    }
                }
                _ = tokio::time::sleep_until(quiet_until) => {
                    if pinged {
                        return Step::Lost("no answer from the server for 30 seconds".into());
                    }
                    if let Err(e) = link.send(ClientMessage::Ping).await {
                        return Step::Lost(e);
                    }
                    pinged = true;
                }
            }
            if self.status == MatchStatus::Finished {
                if let Some(round) = self.round.clone() {
                    return Step::Done(Finished { me: self.me, round });
                }
            }
            if joined {
                if let Err(e) = self.act(link).await {
                    return Step::Lost(e);
                }
            }
        }
    }

    /// One frame; `Some` ends the connection's part.
    fn on_frame(&mut self, frame: Frame, re: Option<u64>) -> Option<Step> {
        match frame {
            Frame::Message(ServerMessage::State(state)) => {
                if state.match_id != self.match_id {
                    return None;
                }
                let first = self.me.is_none();
                if let Err(e) = self.apply_state(*state) {
                    return Some(Step::Fatal(e));
                }
                if first {
                    let seat = self.me.map_or("?", Seat::as_str);
                    let game = self.kind.map_or("?", GameKind::as_str);
                    self.say(&format!("seated as {seat} in {game} {}", self.variant));
                }
            }
            Frame::Message(ServerMessage::Event(frame)) => {
                if frame.match_id != self.match_id {
                    return None;
                }
                if let Some(step) = self.in_step(frame.seq) {
                    return step;
                }
                self.seq = Some(frame.seq);
                if let Err(e) = self.apply_event(frame.event, frame.clocks) {
                    return Some(Step::Resync(e));
                }
            }
            // A `ready` crossing the end of the round, or a duplicate one, is refused
            // harmlessly; only a refused move matters.
            Frame::Message(ServerMessage::Error(error))
                if re.is_some() && re == self.move_request =>
            {
                self.move_request = None;
                return match error.code {
                    // Play waits for `resumed`, which says it is time again.
                    ErrorCode::Paused => {
                        self.paused = true;
                        self.moved_for = None;
                        None
                    }
                    // The set ended meanwhile (on time, by the arbiter): events tell.
                    ErrorCode::SetOver => None,
                    _ => Some(Step::Resync(format!(
                        "the server refused the bot's move: {} ({})",
                        error.message, error.code
                    ))),
                };
            }
            // An event the protocol types do not describe still counts in the numbering.
            Frame::Other(value) => {
                let ours = value.get("match").and_then(|m| m.as_str()) == Some(&self.match_id);
                if value.get("type").and_then(|t| t.as_str()) == Some("event") && ours {
                    if let Some(seq) = value.get("seq").and_then(|s| s.as_u64()) {
                        if let Some(step) = self.in_step(seq) {
                            return step;
                        }
                        self.seq = Some(seq);
                    }
                }
            }
            _ => {}
        }
        None
    }

    /// Checks that an event follows the last one: `Some(None)` skips a repeat, and a gap asks
    /// for the events again.
    fn in_step(&self, seq: u64) -> Option<Option<Step>> {
        match self.seq {
            Some(last) if seq <= last => Some(None),
            Some(last) if seq > last + 1 => Some(Some(Step::Resync(format!(
                "events {} to {} went missing",
                last + 1,
                seq - 1
            )))),
            _ => None,
        }
    }
}

/// The engine's answer; never ready when nothing is being thought about.
async fn answer_of(
    thinking: &mut Option<(Thinking, Turn)>,
) -> Result<(Box<dyn Engine>, Option<String>), tokio::task::JoinError> {
    match thinking {
        Some((handle, _)) => handle.await,
        None => std::future::pending().await,
    }
}

/// Plays the seat of `seat_token` in `match_id` until the round ends.
pub async fn play_match(
    server: &str,
    match_id: &str,
    seat_token: &str,
    cfg: Config,
) -> Result<Finished, String> {
    let mut game = Game::new(match_id, cfg);
    let mut lost_since: Option<Instant> = None;
    let mut attempts: u32 = 0;
    let mut resyncs: u32 = 0;
    let mut joined_once = false;
    loop {
        let link = match Link::open(server, None, ATTEMPT_PATIENCE).await {
            Ok((link, _, server_time_ms)) => {
                let server_ms = i64::try_from(server_time_ms).unwrap_or(i64::MAX);
                game.server_offset_ms = Some(server_ms.saturating_sub(unix_ms()));
                Some(link)
            }
            // The first connection is not retried: a wrong address is better said at once.
            Err(e) if !e.retriable || !(joined_once || game.cfg.retry_first) => {
                return Err(e.message)
            }
            Err(e) => {
                game.warn(&format!("reconnecting failed: {}", e.message));
                None
            }
        };
        if let Some(mut link) = link {
            game.joined = false;
            let moves_before = game.moves_seen;
            let step = game.follow(&mut link, seat_token).await;
            link.close().await;
            if game.joined {
                // Back in the match: a later loss gets the whole reconnection time again.
                joined_once = true;
                lost_since = None;
            }
            match step {
                Step::Done(finished) => {
                    game.print_round(&finished);
                    return Ok(finished);
                }
                Step::Fatal(message) => return Err(message),
                Step::Lost(why) => {
                    if lost_since.is_none() {
                        game.warn(&format!(
                            "connection to the server lost ({why}); reconnecting"
                        ));
                        lost_since = Some(Instant::now());
                        attempts = 0;
                    }
                    resyncs = 0;
                }
                Step::Resync(why) => {
                    if game.moves_seen != moves_before {
                        resyncs = 0;
                    }
                    resyncs += 1;
                    if resyncs > MAX_RESYNCS {
                        return Err(format!("the bot keeps losing track of the match: {why}"));
                    }
                    game.warn(&format!("{why}; joining again for the whole match"));
                    game.seq = None;
                    continue;
                }
            }
        }
        let since = *lost_since.get_or_insert_with(Instant::now);
        if since.elapsed() >= game.cfg.reconnect_for {
            return Err(format!(
                "could not get back into match {match_id} within {:?}",
                game.cfg.reconnect_for
            ));
        }
        tokio::time::sleep(clock::backoff(attempts, game.cfg.seed)).await;
        attempts = attempts.saturating_add(1);
    }
}

impl Game {
    fn new(match_id: &str, cfg: Config) -> Game {
        Game {
            match_id: match_id.to_string(),
            me: None,
            seq: None,
            kind: None,
            variant: String::new(),
            clock: None,
            status: MatchStatus::Waiting,
            set: 0,
            paused: false,
            position: None,
            first_mover: None,
            awaiting_press: None,
            pending: None,
            clocks: None,
            server_offset_ms: None,
            me_ready: false,
            ready_sent: false,
            moved_for: None,
            pressed_for: None,
            move_request: None,
            printed_sets: 0,
            round: None,
            engine: None,
            thinking: None,
            engines_made: 0,
            joined: false,
            moves_seen: 0,
            cfg,
        }
    }

    fn print_round(&self, finished: &Finished) {
        let round = &finished.round;
        let points = format!(
            "{}-{}",
            round.set_points.p1.as_f64(),
            round.set_points.p2.as_f64()
        );
        let who = match round.winner {
            Winner::Draw => "draw".to_string(),
            winner => {
                let seat = winner.seat().map_or("?", Seat::as_str);
                if winner.seat() == finished.me {
                    format!("{seat} (the bot) wins")
                } else {
                    format!("{seat} wins")
                }
            }
        };
        self.say(&format!(
            "round over: {who}, set points {points} ({})",
            round.reason
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn game() -> Game {
        Game::new(
            "m",
            Config {
                engine: EngineKind::Random,
                level: 1,
                seed: 1,
                max_think: None,
                reconnect_for: Duration::from_secs(1),
                quiet: true,
                retry_first: false,
                label: String::new(),
            },
        )
    }

    fn frame(value: serde_json::Value) -> Frame {
        super::super::link::decode(&value.to_string())
    }

    fn event(seq: u64, event: serde_json::Value) -> Frame {
        frame(
            json!({"type": "event", "match": "m", "seq": seq, "event": event,
            "clocks": {"p1_ms": 60000, "p2_ms": 60000, "running": "p1", "paused": false,
                       "server_time_ms": 1}}),
        )
    }

    fn state(status: &str, moves: &[&str], to_move: &str) -> Frame {
        frame(
            json!({"type": "state", "match": "m", "seq": 5, "game": "pentago",
            "variant": "tr", "sets_max": 3, "clock": {"initial_ms": 60000, "increment_ms": 0},
            "warnings_limit": 3,
            "players": {"p1": {"name": "a", "connected": true, "ready": false},
                        "p2": {"name": "b", "connected": true, "ready": false}},
            "status": status, "set": 1, "sets": [], "set_points": {"p1": 0, "p2": 0},
            "warnings": {"p1": 0, "p2": 0}, "round": null, "paused": false,
            "position": {"to_move": to_move, "first_mover": "p1", "moves": moves,
                         "pending": null, "awaiting_press": null, "board": {}},
            "clocks": null, "you": "p2"}),
        )
    }

    #[test]
    fn the_turn_follows_moves_and_presses() {
        let mut g = game();
        assert!(g
            .on_frame(state("playing", &["a1sw"], "p2"), None)
            .is_none());
        assert_eq!(g.me, Some(Seat::P2));
        assert!(g.my_turn());
        assert!(g
            .on_frame(
                event(6, json!({"kind": "moved", "seat": "p2", "move": "b2sw"})),
                None
            )
            .is_none());
        // Moved but not pressed: nobody may move yet.
        assert!(!g.my_turn());
        g.on_frame(event(7, json!({"kind": "pressed", "seat": "p2"})), None);
        assert!(!g.my_turn());
        g.on_frame(
            event(8, json!({"kind": "placed", "seat": "p1", "cell": "d4"})),
            None,
        );
        g.on_frame(
            event(
                9,
                json!({"kind": "rotated", "seat": "p1", "quadrant": "ne", "dir": "cw"}),
            ),
            None,
        );
        assert!(g
            .on_frame(
                event(10, json!({"kind": "moved", "seat": "p1", "move": "d4ne"})),
                None,
            )
            .is_none());
        assert!(!g.my_turn());
        g.on_frame(event(11, json!({"kind": "pressed", "seat": "p1"})), None);
        assert!(g.my_turn());
        g.on_frame(event(12, json!({"kind": "paused"})), None);
        assert!(!g.my_turn());
        g.on_frame(event(13, json!({"kind": "resumed"})), None);
        assert!(g.my_turn());
        assert_eq!(g.turn(), Some((1, 3)));
    }

    #[test]
    fn repeats_are_skipped_and_gaps_or_strange_moves_ask_for_the_state_again() {
        let mut g = game();
        g.on_frame(state("playing", &[], "p1"), None);
        // An event already seen changes nothing.
        g.on_frame(
            event(5, json!({"kind": "moved", "seat": "p1", "move": "a1ne"})),
            None,
        );
        assert_eq!(g.turn(), Some((1, 0)));
        assert!(matches!(
            g.on_frame(event(9, json!({"kind": "pressed", "seat": "p1"})), None),
            Some(Step::Resync(_))
        ));
        assert!(matches!(
            g.on_frame(
                event(6, json!({"kind": "moved", "seat": "p1", "move": "z9"})),
                None
            ),
            Some(Step::Resync(_))
        ));
        // An event of a kind this client does not know still counts.
        let mut g = game();
        g.on_frame(state("playing", &[], "p1"), None);
        assert!(g
            .on_frame(
                event(6, json!({"kind": "fireworks", "colour": "red"})),
                None
            )
            .is_none());
        assert_eq!(g.seq, Some(6));
        // Nonsense from the server does not panic.
        for text in [
            "",
            "null",
            "[]",
            r#"{"type":"event"}"#,
            r#"{"type":"state","match":"m"}"#,
        ] {
            g.on_frame(super::super::link::decode(text), None);
        }
        // A state naming a game this client does not know ends the match with an error.
        let mut g = game();
        let Frame::Message(message) = state("waiting", &[], "p1") else {
            panic!("the fixture is a state")
        };
        let mut strange = serde_json::to_value(message).unwrap();
        strange["game"] = json!("chess");
        assert!(matches!(
            g.on_frame(frame(strange), None),
            Some(Step::Fatal(_))
        ));
    }

    #[test]
    fn sets_and_readiness() {
        let mut g = game();
        g.on_frame(state("waiting", &[], "p1"), None);
        assert!(!g.me_ready);
        g.on_frame(event(6, json!({"kind": "ready", "seat": "p2"})), None);
        assert!(g.me_ready);
        g.on_frame(
            event(
                7,
                json!({"kind": "set_started", "set": 1, "first_mover": "p1"}),
            ),
            None,
        );
        assert!(!g.me_ready && g.status == MatchStatus::Playing);
        g.on_frame(
            event(
                8,
                json!({"kind": "set_ended", "set": 1, "first_mover": "p1",
                "result": "0-1", "winner": "p2", "reason": "resign"}),
            ),
            None,
        );
        assert_eq!(g.status, MatchStatus::BetweenSets);
        assert_eq!(g.printed_sets, 1);
        g.on_frame(
            event(
                9,
                json!({"kind": "round_ended", "winner": "p2",
                "set_points": {"p1": 0, "p2": 2}, "points": {"p1": 0, "p2": 1}, "reason": "sets"}),
            ),
            None,
        );
        assert_eq!(g.status, MatchStatus::Finished);
        assert!(g.round.is_some());
    }
}
