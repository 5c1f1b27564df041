//! The loop shared by `hakem play`, `hakem watch` and `hakem arbiter`: join the match, print
//! the picture and one line per event, read commands from stdin, stop when the round ends.

use std::collections::HashMap;
use std::io::BufRead;
use std::process::ExitCode;
use std::time::Duration;

use hakem_protocol::{ClientMessage, ErrorCode, Event, ServerMessage};
use serde_json::Value;
use tokio::sync::mpsc;
use tokio::time::Instant;

use crate::connection::{
    parse_server_url, reply_to, ClientError, Connection, Incoming, BROKE, DEFAULT_SERVER,
};
use crate::view::View;

/// `print!` that does not panic when stdout is gone (`hakem watch | head`): the session goes on
/// to the end of the round regardless, as the server expects of a connected client.
macro_rules! out {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = write!(std::io::stdout().lock(), $($arg)*);
    }};
}

/// `println!` that does not panic when stdout is gone.
macro_rules! outln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stdout().lock(), $($arg)*);
    }};
}

/// The way back into a match after the client gave up reconnecting: the server keeps the seat.
const REJOIN: &str = "run the same command again to rejoin";

/// Exit status for a connection or server failure.
pub const FAILURE: u8 = 1;

/// Events of one action arrive in a burst (a whole move is `moved` and `pressed`); the board is
/// drawn once the burst is over rather than after each of them.
const REDRAW_DELAY: Duration = Duration::from_millis(40);

/// The first wait before reconnecting; it doubles after each failed attempt, up to
/// [`BACKOFF_MAX`]. Each wait is shortened by a random part of up to half (jitter), so that
/// the clients of a restarted server do not all knock at once.
const BACKOFF_FIRST: Duration = Duration::from_millis(250);
const BACKOFF_MAX: Duration = Duration::from_secs(5);

/// How long one reconnection attempt may take (connect and `hello`).
const ATTEMPT_PATIENCE: Duration = Duration::from_secs(10);

/// With nothing from the server for this long, the client sends a `ping`; without any frame in
/// [`PING_PATIENCE`] after it, the connection is taken as lost (a cable pulled out sends no
/// close).
const QUIET_BEFORE_PING: Duration = Duration::from_secs(20);
const PING_PATIENCE: Duration = Duration::from_secs(10);

/// How long `play`, `watch` and `arbiter` try to reconnect by default.
pub const DEFAULT_RECONNECT: &str = "300";

/// Reads `--reconnect-timeout`: seconds (`300`, `2.5`) or minutes and seconds (`5:00`); `0`
/// turns reconnecting off.
/// Where the server is and how long to keep reconnecting to it: the options every client
/// command that stays connected shares.
#[derive(clap::Args)]
pub struct LinkArgs {
    /// The server's WebSocket address.
    #[arg(long, value_name = "URL", env = "HAKEM_SERVER", hide_env_values = true,
          default_value = DEFAULT_SERVER,
          value_parser = parse_server_url)]
    pub server: String,
    /// How long to keep trying to reconnect after the connection is lost: seconds or MM:SS;
    /// 0 exits at once instead.
    #[arg(long, value_name = "SECONDS", env = "HAKEM_RECONNECT_TIMEOUT",
          default_value = DEFAULT_RECONNECT,
          value_parser = parse_reconnect_timeout)]
    pub reconnect_timeout: Duration,
}

/// Seconds written as `SS` (a decimal) or `M:SS`, as a person types a time.
pub fn parse_seconds(text: &str) -> Option<f64> {
    match text.split_once(':') {
        Some((minutes, seconds)) => {
            let minutes: u32 = minutes.parse().ok()?;
            let seconds: f64 = seconds.parse().ok()?;
            (0.0..60.0)
                .contains(&seconds)
                .then(|| f64::from(minutes) * 60.0 + seconds)
        }
        None => text.parse().ok(),
    }
}

pub fn parse_reconnect_timeout(text: &str) -> Result<Duration, String> {
    let bad = || format!("{text:?} is not a time such as 300, 2.5 or 5:00");
    let seconds = parse_seconds(text.trim()).ok_or_else(bad)?;
    // A week is far more than anyone waits; the bound keeps the conversion exact.
    if !seconds.is_finite() || !(0.0..=604_800.0).contains(&seconds) {
        return Err(bad());
    }
    Duration::try_from_secs_f64(seconds).map_err(|_| bad())
}

/// What a line typed by the user asks for.
#[derive(Debug, PartialEq)]
pub enum Input {
    /// Send this to the server; `what` names it in an error message.
    Send {
        message: ClientMessage,
        what: String,
    },
    Time,
    Board,
    Help,
    Quit,
    /// An empty line.
    Nothing,
    /// A line that is not a command; the text says why.
    Invalid(String),
}

#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Role {
    Player,
    Spectator,
    Arbiter,
}

/// One client session in one match.
pub struct Session {
    pub server: String,
    pub match_id: String,
    pub role: Role,
    /// `join` or `watch` (its `since_seq` is set by the session).
    pub enter: ClientMessage,
    /// Reads a command line; `None` for a session without input (watch).
    pub parse: Option<fn(&str, &str) -> Input>,
    pub help: &'static str,
    /// How long to try to reconnect after losing the connection; zero: do not.
    pub reconnect_for: Duration,
}

/// The end of a session.
enum End {
    Done,
    Failed(String),
}

impl From<ClientError> for End {
    fn from(error: ClientError) -> End {
        End::Failed(error.0)
    }
}

/// How one connection's part of the session ended.
enum Step {
    End(End),
    /// The connection is gone (or no longer to be trusted); the text says why.
    Lost(String),
}

/// What the session knows across connections.
struct Progress {
    view: Option<View>,
    /// The seq of the last event applied (or of the last `state`): a re-join asks for the
    /// events after it.
    seq: Option<u64>,
    input: Option<mpsc::UnboundedReceiver<String>>,
    redraw_at: Option<Instant>,
    /// Since when the connection has been lost, while it is.
    lost_since: Option<Instant>,
    /// Failed reconnection attempts since the connection was lost.
    attempts: u32,
}

impl Session {
    pub async fn run(self) -> ExitCode {
        match self.drive().await {
            End::Done => ExitCode::SUCCESS,
            End::Failed(message) => {
                eprintln!("hakem: {message}");
                ExitCode::from(FAILURE)
            }
        }
    }

    async fn drive(&self) -> End {
        let mut progress = Progress {
            view: None,
            seq: None,
            input: self.parse.map(|_| stdin_lines()),
            redraw_at: None,
            lost_since: None,
            attempts: 0,
        };
        // The first connection is not retried: a wrong address is better said at once.
        let mut conn = match Connection::open(&self.server).await {
            Ok(conn) => conn,
            Err(e) => return e.into(),
        };
        loop {
            let step = self.follow(&mut conn, &mut progress).await;
            // Leave politely (a broken connection closes at once); the outcome is decided.
            let patience = match step {
                Step::End(_) => Duration::from_secs(1),
                Step::Lost(_) => Duration::from_millis(200),
            };
            let _ = tokio::time::timeout(patience, conn.close()).await;
            let why = match step {
                Step::End(end) => return end,
                Step::Lost(why) => why,
            };
            // Before the match was ever shown, or with reconnecting turned off, a lost
            // connection ends the command as it always did.
            if progress.view.is_none() || self.reconnect_for.is_zero() {
                return End::Failed(format!("{why}; {REJOIN}"));
            }
            if progress.lost_since.is_none() {
                if progress.redraw_at.take().is_some() {
                    if let Some(view) = &progress.view {
                        out!("{}", view.render());
                    }
                }
                let refused = if self.parse.is_some() {
                    "; commands are refused until it is back"
                } else {
                    ""
                };
                let why = why.strip_prefix(BROKE).unwrap_or(&why);
                outln!("* connection to the server lost ({why}); reconnecting{refused}");
                progress.lost_since = Some(Instant::now());
                progress.attempts = 0;
            }
            conn = match self.reconnect(&mut progress, why).await {
                Ok(conn) => conn,
                Err(end) => return end,
            };
        }
    }

    /// Opens a new connection, waiting longer between attempts, until one succeeds or the time
    /// allowed has passed. Typed commands are answered meanwhile.
    async fn reconnect(&self, progress: &mut Progress, why: String) -> Result<Connection, End> {
        let lost_since = *progress.lost_since.get_or_insert_with(Instant::now);
        let give_up_at = lost_since + self.reconnect_for;
        let mut last_error = why;
        loop {
            let now = Instant::now();
            if now >= give_up_at {
                return Err(End::Failed(format!(
                    "lost the connection to the server and could not get it back within {} \
                     (last: {last_error}); {REJOIN}",
                    format_wait(self.reconnect_for)
                )));
            }
            let wait = backoff(progress.attempts).min(give_up_at.saturating_duration_since(now));
            self.offline_until(progress, now + wait).await?;
            let patience = ATTEMPT_PATIENCE
                .min(give_up_at.saturating_duration_since(Instant::now()))
                .max(Duration::from_millis(100));
            let open = Connection::open_within(&self.server, patience);
            tokio::pin!(open);
            let result = loop {
                tokio::select! {
                    result = &mut open => break result,
                    line = next_line(&mut progress.input), if progress.input.is_some() => {
                        self.offline_line(line, progress)?;
                    }
                }
            };
            progress.attempts = progress.attempts.saturating_add(1);
            match result {
                Ok(conn) => return Ok(conn),
                Err(error) if error.retriable => last_error = error.message,
                Err(error) => return Err(End::Failed(error.message)),
            }
        }
    }

    /// Waits until `deadline` while disconnected, answering typed commands.
    async fn offline_until(&self, progress: &mut Progress, deadline: Instant) -> Result<(), End> {
        loop {
            tokio::select! {
                _ = tokio::time::sleep_until(deadline) => return Ok(()),
                line = next_line(&mut progress.input), if progress.input.is_some() => {
                    self.offline_line(line, progress)?;
                }
            }
        }
    }

    /// One line typed while there is no connection: nothing is sent, and nothing is kept to be
    /// sent later (the game may have moved on by then).
    fn offline_line(&self, line: Option<String>, progress: &mut Progress) -> Result<(), End> {
        let Some(line) = line else {
            progress.input = None;
            outln!("(input closed: following the match until the round ends; Ctrl-C leaves)");
            return Ok(());
        };
        let Some(parse) = self.parse else {
            return Ok(());
        };
        let view = progress.view.as_ref();
        match parse(&line, &self.match_id) {
            Input::Send { what, .. } => outln!(
                "? {what} not sent: the connection to the server is lost; \
                 type it again once it is back"
            ),
            Input::Time => match view {
                Some(view) => outln!(
                    "{}",
                    view.clock_line("clocks now (not connected: counted from the last reading)")
                ),
                None => outln!("not in the match yet"),
            },
            Input::Board => match view {
                Some(view) => {
                    out!("{}", view.render());
                    outln!("(not connected: the board as last seen)");
                }
                None => outln!("not in the match yet"),
            },
            Input::Help => out!("{}", self.help),
            Input::Quit => return Err(End::Done),
            Input::Nothing => {}
            Input::Invalid(why) => outln!("? {why} (type `help` for the commands)"),
        }
        Ok(())
    }

    /// The `join` or `watch` to send, asking for the events after the last one applied.
    fn entry(&self, since_seq: Option<u64>) -> ClientMessage {
        let mut message = self.enter.clone();
        match &mut message {
            ClientMessage::Join { since_seq: s, .. }
            | ClientMessage::Watch { since_seq: s, .. } => *s = since_seq,
            _ => {}
        }
        message
    }

    /// Follows the match on one connection: joins (or re-joins) it, then shows its events and
    /// sends the commands typed, until the round ends or the connection is lost.
    async fn follow(&self, conn: &mut Connection, progress: &mut Progress) -> Step {
        let rejoin = progress.view.is_some();
        let join_id = match conn.send(self.entry(progress.seq)).await {
            Ok(id) => id,
            Err(e) => return Step::Lost(e.0),
        };
        // Until the server acknowledges a re-join, the client is still catching up.
        let mut joined = false;
        let mut requests: HashMap<u64, String> = HashMap::new();
        let mut heard_at = Instant::now();
        let mut pinged = false;

        let step = loop {
            let quiet_until = heard_at
                + if pinged {
                    QUIET_BEFORE_PING + PING_PATIENCE
                } else {
                    QUIET_BEFORE_PING
                };
            tokio::select! {
                incoming = conn.recv() => {
                    let incoming = match incoming {
                        Ok(Some(incoming)) => incoming,
                        Ok(None) if progress.view.as_ref().is_some_and(View::is_finished) => {
                            break Step::End(End::Done)
                        }
                        Ok(None) => break Step::Lost("the server closed the connection".into()),
                        Err(e) => break Step::Lost(e.0),
                    };
                    heard_at = Instant::now();
                    pinged = false;
                    let answers_join = !joined && reply_to(&incoming) == Some(join_id);
                    if answers_join {
                        if let Some(error) = error_of(&incoming) {
                            break self.join_refused(rejoin, &error);
                        }
                        joined = true;
                    }
                    if rejoin && progress.lost_since.is_some() && answers_join_burst(&incoming, answers_join) {
                        let lost_since = progress.lost_since.take().unwrap_or_else(Instant::now);
                        progress.attempts = 0;
                        outln!(
                            "* connection back after {}; catching up from event {}",
                            format_wait(lost_since.elapsed()),
                            progress.seq.unwrap_or(0)
                        );
                    }
                    match self.on_frame(incoming, progress, &mut requests) {
                        // A re-join's catch-up is drawn once, when it is complete.
                        Ok(Redraw::Now | Redraw::Soon) if rejoin && !joined => {}
                        Ok(Redraw::Now) => progress.redraw_at = Some(Instant::now()),
                        Ok(Redraw::Soon) => {
                            progress
                                .redraw_at
                                .get_or_insert_with(|| Instant::now() + REDRAW_DELAY);
                        }
                        Ok(Redraw::No) => {}
                        Err(why) => break Step::Lost(why),
                    }
                    if answers_join && rejoin {
                        // The whole picture again, now that it is up to date.
                        progress.redraw_at = Some(Instant::now());
                    }
                }
                // While a re-join catches up (a moment), typed lines wait: they were typed
                // after the picture they refer to, and are sent once it is up to date.
                line = next_line(&mut progress.input), if progress.input.is_some() && (joined || !rejoin) => match line {
                    Some(line) => match self.on_line(&line, conn, progress.view.as_ref(), &mut requests).await {
                        Ok(true) => {}
                        Ok(false) => break Step::End(End::Done),
                        Err(e) => break Step::Lost(e.0),
                    },
                    None => {
                        progress.input = None;
                        outln!("(input closed: following the match until the round ends; Ctrl-C leaves)");
                    }
                },
                _ = sleep_until(progress.redraw_at), if progress.redraw_at.is_some() => {
                    progress.redraw_at = None;
                    if let Some(view) = &progress.view {
                        out!("{}", view.render());
                    }
                }
                _ = tokio::time::sleep_until(quiet_until) => {
                    if pinged {
                        break Step::Lost(format!(
                            "no answer from the server for {}",
                            format_wait(QUIET_BEFORE_PING + PING_PATIENCE)
                        ));
                    }
                    if let Err(e) = conn.send(ClientMessage::Ping).await {
                        break Step::Lost(e.0);
                    }
                    pinged = true;
                }
            }
            if let Some(view) = &progress.view {
                if view.is_finished() {
                    if progress.redraw_at.take().is_some() || (rejoin && !joined) {
                        out!("{}", view.render());
                    }
                    break Step::End(End::Done);
                }
            }
        };
        if let Step::Lost(_) = step {
            // Requests without an answer may or may not have been carried out.
            let mut unanswered: Vec<(u64, String)> = requests.into_iter().collect();
            unanswered.sort();
            for (_, what) in unanswered {
                outln!("? no answer to {what} before the connection was lost: the board shows whether it was made once the connection is back");
            }
        }
        step
    }

    /// The server refused the `join` or `watch`: a refusal that waiting will not change ends
    /// the command; a passing trouble (a busy or failing server) is retried.
    fn join_refused(&self, rejoin: bool, error: &Refusal) -> Step {
        let lasting = !rejoin
            || matches!(
                error.code.as_str(),
                "unauthorized"
                    | "unknown_match"
                    | "forbidden"
                    | "bad_request"
                    | "unsupported_protocol"
            );
        let message = if rejoin {
            format!(
                "cannot get back into match {}: {}",
                self.match_id,
                error.plain()
            )
        } else {
            format!(
                "cannot {} match {}: {}",
                self.verb(),
                self.match_id,
                error.plain()
            )
        };
        if lasting {
            Step::End(End::Failed(message))
        } else {
            Step::Lost(message)
        }
    }

    fn verb(&self) -> &'static str {
        match self.role {
            Role::Player => "join",
            Role::Spectator => "watch",
            Role::Arbiter => "arbitrate",
        }
    }

    /// Handles one frame from the server; says whether the picture changed. An event that does
    /// not follow the last one applied (one went missing) is an error: the caller re-joins.
    fn on_frame(
        &self,
        incoming: Incoming,
        progress: &mut Progress,
        requests: &mut HashMap<u64, String>,
    ) -> Result<Redraw, String> {
        match incoming {
            Incoming::Message(ServerMessage::State(state)) => {
                let seq = state.seq;
                let fresh = View::from_state(*state);
                if progress.view.is_none() {
                    outln!("{}", self.greeting(&fresh));
                    for line in fresh.history() {
                        outln!("* {line}");
                    }
                } else {
                    outln!("* the server sent the whole match again (it is at event {seq})");
                }
                progress.view = Some(fresh);
                progress.seq = Some(seq);
                Ok(Redraw::Now)
            }
            Incoming::Message(ServerMessage::Event(frame)) => {
                if !self.in_step(progress, frame.seq)? {
                    return Ok(Redraw::No);
                }
                let Some(view) = progress.view.as_mut() else {
                    // Events come only after the state; one before it has nothing to apply to.
                    return Ok(Redraw::No);
                };
                view.apply(&frame);
                progress.seq = Some(frame.seq);
                let line = view.event_line(&frame.event);
                match (&frame.event, self.role) {
                    // The arbiter must not miss a claim among the moves.
                    (Event::Claim { .. }, Role::Arbiter) => {
                        outln!("* CLAIM: {line} (decide with warn or declare)")
                    }
                    _ => outln!("* {line}"),
                }
                Ok(redraw_after(&frame.event))
            }
            Incoming::Message(ServerMessage::Ack { re, .. }) => {
                if let Some(id) = re.as_ref().and_then(Value::as_u64) {
                    requests.remove(&id);
                }
                Ok(Redraw::No)
            }
            Incoming::Message(
                ServerMessage::Welcome { .. }
                | ServerMessage::Pong { .. }
                | ServerMessage::MatchCreated { .. }
                | ServerMessage::Matches { .. },
            ) => Ok(Redraw::No),
            other => {
                if let Some(error) = error_of(&other) {
                    let what = reply_to(&other).and_then(|id| requests.remove(&id));
                    match what {
                        Some(what) => outln!("! {what} refused: {}", error.plain()),
                        None => outln!("! server error: {}", error.plain()),
                    }
                    return Ok(Redraw::No);
                }
                // An event of a kind this client does not know: say so, keep its clocks.
                if let Incoming::Other(value) = &other {
                    if value.get("type").and_then(Value::as_str) == Some("event") {
                        if let Some(seq) = value.get("seq").and_then(Value::as_u64) {
                            if !self.in_step(progress, seq)? {
                                return Ok(Redraw::No);
                            }
                        }
                        let Some(view) = progress.view.as_mut() else {
                            return Ok(Redraw::No);
                        };
                        if let Some(seq) = value.get("seq").and_then(Value::as_u64) {
                            progress.seq = Some(seq);
                        }
                        let kind = value
                            .pointer("/event/kind")
                            .and_then(Value::as_str)
                            .unwrap_or("unknown");
                        let clocks = value
                            .get("clocks")
                            .and_then(|c| serde_json::from_value(c.clone()).ok());
                        view.apply_clocks(clocks);
                        outln!("* {kind} (an event this client does not know)");
                    }
                }
                Ok(Redraw::No)
            }
        }
    }

    /// Whether the event numbered `seq` is the next one to apply: `false` for one already
    /// applied (sent again), an error for one after a gap.
    fn in_step(&self, progress: &Progress, seq: u64) -> Result<bool, String> {
        match progress.seq {
            Some(last) if seq <= last => Ok(false),
            Some(last) if seq > last.saturating_add(1) => Err(format!(
                "event {} was followed by event {seq}: some went missing",
                last
            )),
            _ => Ok(true),
        }
    }

    fn greeting(&self, view: &View) -> String {
        match self.role {
            Role::Player => {
                let seat = view
                    .my_seat()
                    .map_or_else(|| "a player".to_string(), |seat| view.who(seat));
                format!(
                    "joined match {} as {seat}; type `help` for the commands",
                    view.match_id
                )
            }
            Role::Spectator => format!("watching match {}", view.match_id),
            Role::Arbiter => format!(
                "arbitrating match {}; type `help` for the commands",
                view.match_id
            ),
        }
    }

    /// Handles one line of input; `false` ends the session.
    async fn on_line(
        &self,
        line: &str,
        conn: &mut Connection,
        view: Option<&View>,
        requests: &mut HashMap<u64, String>,
    ) -> Result<bool, ClientError> {
        let Some(parse) = self.parse else {
            return Ok(true);
        };
        match parse(line, &self.match_id) {
            Input::Send { message, what } => match conn.send(message).await {
                Ok(id) => {
                    requests.insert(id, what);
                }
                Err(e) => {
                    outln!("? {what} may not have reached the server: the connection broke");
                    return Err(e);
                }
            },
            Input::Time => match view {
                // Its own label, so that it is told apart from the clocks of a redraw.
                Some(view) => outln!("{}", view.clock_line("clocks now")),
                None => outln!("not in the match yet"),
            },
            Input::Board => match view {
                Some(view) => out!("{}", view.render()),
                None => outln!("not in the match yet"),
            },
            Input::Help => out!("{}", self.help),
            Input::Quit => return Ok(false),
            Input::Nothing => {}
            Input::Invalid(why) => outln!("? {why} (type `help` for the commands)"),
        }
        Ok(true)
    }
}

/// Whether a frame is the server's answer to a re-join: the `state`, the first missed event,
/// or the `ack` (when nothing was missed).
fn answers_join_burst(incoming: &Incoming, answers_join: bool) -> bool {
    answers_join
        || matches!(
            incoming,
            Incoming::Message(ServerMessage::State(_) | ServerMessage::Event(_))
        )
        || matches!(incoming, Incoming::Other(value)
            if value.get("type").and_then(Value::as_str) == Some("event"))
}

/// The wait before reconnection attempt `attempt` (0 for the first): 0.25 s doubling up to
/// 5 s, less a random part of up to half.
fn backoff(attempt: u32) -> Duration {
    let full = BACKOFF_FIRST
        .saturating_mul(1u32.checked_shl(attempt.min(16)).unwrap_or(u32::MAX))
        .min(BACKOFF_MAX);
    full.mul_f64(1.0 - 0.5 * random_fraction())
}

/// A number in [0, 1) that differs from one call (and one process) to the next; enough for
/// jitter, which needs no more.
fn random_fraction() -> f64 {
    use std::collections::hash_map::RandomState;
    use std::hash::{BuildHasher, Hasher};
    let mut hasher = RandomState::new().build_hasher();
    hasher.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0),
    );
    (hasher.finish() >> 11) as f64 / (1u64 << 53) as f64
}

/// `0.8 s`, `12 s`, `5:00`.
fn format_wait(duration: Duration) -> String {
    let secs = duration.as_secs();
    if secs >= 60 {
        format!("{}:{:02}", secs / 60, secs % 60)
    } else if secs >= 10 {
        format!("{secs} s")
    } else {
        format!("{:.1} s", duration.as_secs_f64())
    }
}

enum Redraw {
    Now,
    Soon,
    No,
}

/// Events that change the board, the score, the clocks or whose turn it is.
fn redraw_after(event: &Event) -> Redraw {
    match event {
        Event::SetStarted { .. }
        | Event::Placed { .. }
        | Event::Rotated { .. }
        | Event::Moved { .. }
        | Event::Pressed { .. }
        | Event::SetEnded(_)
        | Event::RoundEnded(_)
        | Event::Warning { .. }
        | Event::Paused
        | Event::Resumed
        | Event::ClockAdjusted { .. } => Redraw::Soon,
        Event::Claim { .. }
        | Event::PlayerConnected { .. }
        | Event::PlayerDisconnected { .. }
        | Event::Ready { .. }
        | Event::Declared { .. } => Redraw::No,
    }
}

/// A refusal from the server, whether or not this client knows its code.
struct Refusal {
    code: String,
    message: String,
}

impl Refusal {
    /// The refusal in plain words: what the code means, then the server's own explanation.
    fn plain(&self) -> String {
        let code = serde_json::from_value::<ErrorCode>(Value::String(self.code.clone())).ok();
        let meaning = match code {
            Some(ErrorCode::BadRequest) => "the server did not understand the request",
            Some(ErrorCode::UnsupportedProtocol) => "the server speaks another protocol version",
            Some(ErrorCode::Unauthorized) => "the token is wrong",
            Some(ErrorCode::Forbidden) => "you are not allowed to do that",
            Some(ErrorCode::UnknownMatch) => "there is no such match",
            Some(ErrorCode::UnknownTournament) => "there is no such tournament",
            Some(ErrorCode::NoPairing) => "no valid pairing exists",
            Some(ErrorCode::NotYourTurn) => "it is not your turn",
            Some(ErrorCode::IllegalMove) => "illegal move",
            Some(ErrorCode::PressFirst) => "the opponent has not pressed the clock yet",
            Some(ErrorCode::MoveIncomplete) => "the move is not complete",
            Some(ErrorCode::SetOver) => "no set is being played",
            Some(ErrorCode::Paused) => "the clocks are paused",
            Some(ErrorCode::RateLimited) => "too many messages; slow down",
            Some(ErrorCode::TooLarge) => "the message is too large",
            Some(ErrorCode::Internal) => "the server failed",
            None => "refused",
        };
        let message = self.message.trim();
        if message.is_empty() {
            meaning.to_string()
        } else if message
            .to_ascii_lowercase()
            .starts_with(&meaning.to_ascii_lowercase())
        {
            // The server's message already says it; do not say it twice.
            message.to_string()
        } else {
            format!("{meaning}: {message}")
        }
    }
}

/// The refusal in a frame, if it is an `error`.
fn error_of(incoming: &Incoming) -> Option<Refusal> {
    match incoming {
        Incoming::Message(ServerMessage::Error(error)) => Some(Refusal {
            code: error.code.as_str().to_string(),
            message: error.message.clone(),
        }),
        Incoming::Other(value) if value.get("type").and_then(Value::as_str) == Some("error") => {
            let text = |key: &str| {
                value
                    .get(key)
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string()
            };
            Some(Refusal {
                code: text("code"),
                message: text("message"),
            })
        }
        _ => None,
    }
}

/// Lines of stdin, read on a thread of their own: a blocking read cannot be cancelled, and a
/// plain thread does not keep the process alive once the session is over.
fn stdin_lines() -> mpsc::UnboundedReceiver<String> {
    let (tx, rx) = mpsc::unbounded_channel();
    std::thread::spawn(move || {
        let stdin = std::io::stdin();
        let mut lock = stdin.lock();
        let mut buf = Vec::new();
        loop {
            buf.clear();
            match lock.read_until(b'\n', &mut buf) {
                Ok(0) | Err(_) => break,
                Ok(_) => {
                    let line = String::from_utf8_lossy(&buf).trim().to_string();
                    if tx.send(line).is_err() {
                        break;
                    }
                }
            }
        }
    });
    rx
}

async fn next_line(input: &mut Option<mpsc::UnboundedReceiver<String>>) -> Option<String> {
    match input {
        Some(rx) => rx.recv().await,
        None => std::future::pending().await,
    }
}

async fn sleep_until(deadline: Option<Instant>) {
    match deadline {
        Some(deadline) => tokio::time::sleep_until(deadline).await,
        None => std::future::pending().await,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refusals_read_as_plain_words() {
        let refusal = Refusal {
            code: "not_your_turn".into(),
            message: "it is not your turn".into(),
        };
        assert_eq!(refusal.plain(), "it is not your turn");
        let refusal = Refusal {
            code: "illegal_move".into(),
            message: "the cell is occupied".into(),
        };
        assert_eq!(refusal.plain(), "illegal move: the cell is occupied");
        let refusal = Refusal {
            code: "move_incomplete".into(),
            message: "the move is not complete: turn a quadrant before pressing".into(),
        };
        assert_eq!(
            refusal.plain(),
            "the move is not complete: turn a quadrant before pressing"
        );
        let refusal = Refusal {
            code: "brand_new".into(),
            message: "".into(),
        };
        assert_eq!(refusal.plain(), "refused");
    }

    #[test]
    fn backoff_doubles_to_five_seconds_with_jitter() {
        for attempt in 0..40 {
            let full = Duration::from_millis(250 * (1u64 << attempt.min(5))).min(BACKOFF_MAX);
            let wait = backoff(attempt);
            assert!(wait <= full && wait >= full / 2, "{attempt}: {wait:?}");
        }
        let last = backoff(u32::MAX);
        assert!(last >= BACKOFF_MAX / 2 && last <= BACKOFF_MAX, "{last:?}");
        assert!((0..100).all(|_| (0.0..1.0).contains(&random_fraction())));
    }

    #[test]
    fn reconnect_timeouts_are_read() {
        let ok = |text: &str| parse_reconnect_timeout(text).unwrap();
        assert_eq!(ok("300"), Duration::from_secs(300));
        assert_eq!(ok("5:00"), Duration::from_secs(300));
        assert_eq!(ok("1.5"), Duration::from_millis(1500));
        assert_eq!(ok("0"), Duration::ZERO);
        for bad in ["", "-1", "soon", "1:75", "1e300", "NaN", "inf"] {
            assert!(parse_reconnect_timeout(bad).is_err(), "{bad}");
        }
        assert_eq!(format_wait(Duration::from_secs(300)), "5:00");
        assert_eq!(format_wait(Duration::from_millis(800)), "0.8 s");
    }
}
