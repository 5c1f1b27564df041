//! One bot in one match: follows the match through the client's one link (reconnects, catch-up
//! and the fold are the link's), thinks on a blocking thread when it is its turn, and plays
//! until the round ends. Its rules position is built from the set's moves only to give the
//! engine something to think about.

use std::time::Duration;

use hakem_engine::{new_engine, Engine, EngineKind};
use hakem_games::{AnyPosition, GameKind};
use hakem_protocol::{
    ClientMessage, ErrorCode, Event, MatchState, MatchStatus, RoundResult, Seat, SetResult, Winner,
};
use tokio::task::JoinHandle;
use tokio::time::Instant;

use super::clock;
use crate::connection::{reply_to, Incoming};
use crate::follow::{error_of, unix_ms, Happening, LinkError, LinkOptions, MatchLink};

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
    pub round: Option<RoundResult>,
}

/// The engine's answer: the engine comes back with the move so that it keeps its tables.
type Thinking = JoinHandle<(Box<dyn Engine>, Option<String>)>;

/// Where a position stands: the set and the number of moves made in it.
type Turn = (u8, usize);

/// What the bot does in the match, besides what the link knows of it.
struct Bot {
    cfg: Config,
    /// Sets whose result has been printed.
    printed_sets: u8,
    engine: Option<Box<dyn Engine>>,
    thinking: Option<(Thinking, Turn)>,
    /// Varies the seed of a replacement engine.
    engines_made: u64,
    /// The join on the current connection was acknowledged: the catch-up is over.
    joined: bool,
    /// A `ready` went out on this connection for the coming set.
    ready_sent: bool,
    /// The position a move (or a turn of a placed marble) was sent for on this connection.
    moved_for: Option<Turn>,
    /// The same for a press.
    pressed_for: Option<Turn>,
    /// The request id of the last move sent.
    move_request: Option<u64>,
    /// When the last clock reading arrived.
    clocks_at: Instant,
}

fn seat_of(state: &MatchState) -> Option<Seat> {
    match state.you.as_deref() {
        Some("p1") => Some(Seat::P1),
        Some("p2") => Some(Seat::P2),
        _ => None,
    }
}

fn turn_of(state: &MatchState) -> Turn {
    (state.set, state.position.moves.len())
}

/// The set's position, replayed from its moves for the engine.
fn position_of(state: &MatchState) -> Result<AnyPosition, String> {
    let kind: GameKind = state
        .game
        .parse()
        .map_err(|e: hakem_games::UnknownGame| e.to_string())?;
    let mut position = AnyPosition::new(kind, Some(&state.variant)).map_err(|e| e.to_string())?;
    for mv in &state.position.moves {
        position
            .play_str(mv)
            .map_err(|e| format!("the server's move {mv} does not replay here: {e}"))?;
    }
    Ok(position)
}

impl Bot {
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

    fn print_set(&mut self, me: Option<Seat>, set: &SetResult) {
        if set.set <= self.printed_sets {
            return;
        }
        self.printed_sets = set.set;
        let who = match set.winner {
            Some(seat) if Some(seat) == me => format!("{seat} (the bot) wins"),
            Some(seat) => format!("{seat} wins"),
            None => "draw".to_string(),
        };
        self.say(&format!(
            "set {}: {who} ({}), {}",
            set.set, set.reason, set.result
        ));
    }

    fn print_round(&self, finished: &Finished) {
        let Some(round) = &finished.round else {
            self.say("the match ended unplayed");
            return;
        };
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

    /// Whether the bot is to move now.
    fn my_turn(state: &MatchState) -> bool {
        let me = seat_of(state);
        me.is_some()
            && state.status == MatchStatus::Playing
            && !state.paused
            && state.position.to_move == me
            && state.position.awaiting_press.is_none()
            && state.position.pending.is_none()
    }

    /// The thinking time for the next move.
    fn budget(&self, state: &MatchState, server_offset_ms: Option<i64>) -> Duration {
        let plies = u32::try_from(state.position.moves.len()).unwrap_or(u32::MAX);
        let (Some(me), Some(config), Some(clocks)) = (seat_of(state), state.clock, state.clocks)
        else {
            return self.cfg.max_think.unwrap_or(clock::UNTIMED_BUDGET);
        };
        let mut remaining = clocks.remaining(me);
        if clocks.running == Some(me) && !clocks.paused {
            // Time since the reading was received, or since the server took it: a reading
            // replayed after a reconnection is older than its arrival.
            let mut spent = u64::try_from(self.clocks_at.elapsed().as_millis()).unwrap_or(u64::MAX);
            if let Some(offset) = server_offset_ms {
                let server_now = unix_ms().saturating_add(offset);
                let taken = i64::try_from(clocks.server_time_ms).unwrap_or(i64::MAX);
                spent = spent.max(u64::try_from(server_now.saturating_sub(taken)).unwrap_or(0));
            }
            remaining = remaining.saturating_sub(spent);
        }
        let kind = state.game.parse().unwrap_or(GameKind::Pentago);
        clock::budget(
            remaining,
            config.increment_ms,
            clock::moves_left(kind, plies),
            self.cfg.max_think,
        )
    }

    /// Sends what the match calls for: `ready`, a press, the turn of a placed marble, or
    /// starts thinking.
    async fn act(&mut self, link: &mut MatchLink) -> Result<(), String> {
        if !self.joined {
            return Ok(());
        }
        let Some(state) = link.state().cloned() else {
            return Ok(());
        };
        let me = seat_of(&state);
        let match_id = state.match_id.clone();
        let turn = turn_of(&state);
        let between = matches!(
            state.status,
            MatchStatus::Waiting | MatchStatus::BetweenSets
        );
        if let (true, Some(me)) = (between, me) {
            if !state.players.get(me).ready && !self.ready_sent {
                self.ready_sent = true;
                send(link, ClientMessage::Ready { match_id }).await;
            }
            return Ok(());
        }
        if state.status != MatchStatus::Playing || state.paused {
            return Ok(());
        }
        if let Some(waiting) = state.position.awaiting_press {
            // A completed move of ours waiting for its press (made by another client on our
            // seat, say): press it, once.
            if Some(waiting) == me && self.pressed_for != Some(turn) {
                self.pressed_for = Some(turn);
                send(link, ClientMessage::Press { match_id }).await;
            }
            return Ok(());
        }
        if let Some(pending) = &state.position.pending {
            // Half a move of ours (placed by another client on our seat, say): turn a quadrant
            // that makes it a legal move, once.
            if Some(pending.seat) == me && self.moved_for != Some(turn) {
                let position = position_of(&state)?;
                let rotate = position.legal_moves().into_iter().find_map(|mv| {
                    let rest = mv.strip_prefix(pending.cell.as_str())?;
                    let quadrant = rest.get(..2)?.to_string();
                    let dir = if rest.ends_with('\'') { "ccw" } else { "cw" };
                    Some((quadrant, dir.to_string()))
                });
                if let Some((quadrant, dir)) = rotate {
                    self.moved_for = Some(turn);
                    let rotate = ClientMessage::Rotate {
                        match_id,
                        quadrant,
                        dir,
                    };
                    send(link, rotate).await;
                }
            }
            return Ok(());
        }
        if !Bot::my_turn(&state) || self.thinking.is_some() || self.moved_for == Some(turn) {
            return Ok(());
        }
        let position = position_of(&state)?;
        let budget = self.budget(&state, link.server_offset_ms());
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
        link: &mut MatchLink,
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
        let Some(state) = link.state().cloned() else {
            return Ok(());
        };
        if !Bot::my_turn(&state) || turn_of(&state) != turn || self.moved_for == Some(turn) {
            return Ok(());
        }
        let position = position_of(&state)?;
        let mv = match mv.filter(|mv| position.check_str(mv).is_ok()) {
            Some(mv) => mv,
            None => {
                let legal = position.legal_moves();
                if legal.is_empty() {
                    return Err("the engine found no move in a game that is not over".into());
                }
                let i = (self.cfg.seed as usize ^ turn.1) % legal.len();
                legal[i].clone()
            }
        };
        self.moved_for = Some(turn);
        let message = ClientMessage::Move {
            match_id: state.match_id.clone(),
            mv,
            press: true,
        };
        self.move_request = send(link, message).await;
        Ok(())
    }

    /// A reply to one of the bot's requests. A `ready` crossing the end of the round, or a
    /// duplicate one, is refused harmlessly; only a refused move matters.
    async fn on_reply(&mut self, incoming: &Incoming, link: &mut MatchLink) -> Result<(), String> {
        let re = reply_to(incoming);
        let (Some((code, message)), true) =
            (error_of(incoming), re.is_some() && re == self.move_request)
        else {
            return Ok(());
        };
        self.move_request = None;
        match code.as_str() {
            // Play waits for `resumed`, which says it is time again.
            c if c == ErrorCode::Paused.as_str() => {
                self.moved_for = None;
            }
            // The set ended meanwhile (on time, by the arbiter): events tell.
            c if c == ErrorCode::SetOver.as_str() => {}
            _ => {
                self.warn(&format!(
                    "the server refused the bot's move: {message} ({code}); asking for the whole match again"
                ));
                self.moved_for = None;
                link.resync().await.map_err(|e| e.to_string())?;
            }
        }
        Ok(())
    }

    async fn on_happening(
        &mut self,
        happening: Happening,
        link: &mut MatchLink,
    ) -> Result<Option<Finished>, String> {
        // The round is over when its end comes (not when a batch that holds it is folded in,
        // so that each of its events is seen first).
        let ends = match &happening {
            Happening::Event(frame) => {
                matches!(frame.event, Event::RoundEnded(_) | Event::Expired)
            }
            Happening::State | Happening::Joined { .. } | Happening::Closed => true,
            _ => false,
        };
        match happening {
            Happening::State => {
                self.clocks_at = Instant::now();
                let first = self.printed_sets == 0 && !self.joined;
                if let Some(state) = link.state().cloned() {
                    let me = seat_of(&state);
                    if state
                        .you
                        .as_deref()
                        .is_some_and(|you| me.is_none() && you != "p1" && you != "p2")
                    {
                        return Err(format!(
                            "the server seated the bot as {}",
                            state.you.unwrap_or_default()
                        ));
                    }
                    if first {
                        let seat = me.map_or("?", Seat::as_str);
                        self.say(&format!(
                            "seated as {seat} in {} {}",
                            state.game, state.variant
                        ));
                    }
                    // Check at once that this client can play the game.
                    position_of(&state)?;
                    for set in &state.sets {
                        self.print_set(me, set);
                    }
                }
            }
            Happening::Event(frame) => {
                self.clocks_at = Instant::now();
                let me = link.state().and_then(seat_of);
                match &frame.event {
                    Event::SetEnded(result) => {
                        self.ready_sent = false;
                        self.print_set(me, result);
                    }
                    Event::SetStarted { .. } => self.ready_sent = false,
                    Event::Resumed => self.moved_for = None,
                    Event::Warning {
                        seat,
                        count,
                        reason,
                    } => self.warn(&format!("the arbiter warned {seat} ({count}): {reason}")),
                    _ => {}
                }
            }
            Happening::Unknown { .. } => self.clocks_at = Instant::now(),
            Happening::Joined { .. } => self.joined = true,
            Happening::Reply(incoming) => self.on_reply(&incoming, link).await?,
            Happening::Other(_) | Happening::Closed | Happening::Back { .. } => {}
            Happening::Lost { why } => {
                self.warn(&format!(
                    "connection to the server lost ({why}); reconnecting"
                ));
                self.joined = false;
                self.ready_sent = false;
                self.moved_for = None;
                self.pressed_for = None;
                self.move_request = None;
            }
            Happening::Retrying { why } => self.warn(&format!("reconnecting failed: {why}")),
        }
        let done = link
            .state()
            .filter(|s| ends && s.status == MatchStatus::Finished);
        if let (Some(state), false) = (done, link.catching_up()) {
            return Ok(Some(Finished {
                me: seat_of(state),
                round: state.round.clone(),
            }));
        }
        Ok(None)
    }
}

/// Sends on the link; a connection that broke meanwhile is the link's to report (as `Lost`),
/// and whatever was not sent is sent again on the next connection.
async fn send(link: &mut MatchLink, message: ClientMessage) -> Option<u64> {
    link.send(message).await.ok()
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
    let mut link = MatchLink::new(LinkOptions {
        server: server.to_string(),
        token: None,
        entry: ClientMessage::Join {
            match_id: match_id.to_string(),
            seat_token: Some(seat_token.to_string()),
            arbiter_token: None,
            since_seq: None,
            legal_moves: false,
            history: false,
        },
        reconnect_for: cfg.reconnect_for,
        retry_first: cfg.retry_first,
        chat: false,
    });
    let mut bot = Bot {
        cfg,
        printed_sets: 0,
        engine: None,
        thinking: None,
        engines_made: 0,
        joined: false,
        ready_sent: false,
        moved_for: None,
        pressed_for: None,
        move_request: None,
        clocks_at: Instant::now(),
    };
    let outcome = async {
        loop {
            let thinking = &mut bot.thinking;
            tokio::select! {
                happening = link.next() => {
                    let happening = happening.map_err(|e: LinkError| e.to_string())?;
                    if let Some(finished) = bot.on_happening(happening, &mut link).await? {
                        return Ok(finished);
                    }
                }
                answer = answer_of(thinking), if thinking.is_some() => {
                    let turn = bot.thinking.take().map_or((0, 0), |(_, turn)| turn);
                    bot.thought(answer, turn, &mut link).await?;
                }
            }
            bot.act(&mut link).await?;
        }
    }
    .await;
    link.close().await;
    if let Ok(finished) = &outcome {
        bot.print_round(finished);
    }
    outcome
}
