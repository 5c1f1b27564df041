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

use crate::connection::{reply_to, ClientError, Connection, Incoming};
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

/// The way back into a match after a lost connection: the server keeps the seat.
const REJOIN: &str = "run the same command again to rejoin";

/// Exit status for a connection or server failure.
pub const FAILURE: u8 = 1;

/// Events of one action arrive in a burst (a whole move is `moved` and `pressed`); the board is
/// drawn once the burst is over rather than after each of them.
const REDRAW_DELAY: Duration = Duration::from_millis(40);

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
    /// `join` or `watch`.
    pub enter: ClientMessage,
    /// Reads a command line; `None` for a session without input (watch).
    pub parse: Option<fn(&str, &str) -> Input>,
    pub help: &'static str,
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
        let mut conn = match Connection::open(&self.server).await {
            Ok(conn) => conn,
            Err(e) => return e.into(),
        };
        let end = self.follow(&mut conn).await;
        // Leave politely; the outcome is already decided.
        let _ = tokio::time::timeout(Duration::from_secs(1), conn.close()).await;
        end
    }

    async fn follow(&self, conn: &mut Connection) -> End {
        let join_id = match conn.send(self.enter.clone()).await {
            Ok(id) => id,
            Err(e) => return e.into(),
        };
        let mut requests: HashMap<u64, String> = HashMap::new();
        let mut view: Option<View> = None;
        let mut redraw_at: Option<Instant> = None;
        let mut input = self.parse.map(|_| stdin_lines());

        loop {
            tokio::select! {
                incoming = conn.recv() => {
                    let incoming = match incoming {
                        Ok(Some(incoming)) => incoming,
                        Ok(None) if view.as_ref().is_some_and(View::is_finished) => return End::Done,
                        Ok(None) => {
                            return End::Failed(format!(
                                "the server closed the connection; {REJOIN}"
                            ))
                        }
                        Err(e) => return End::Failed(format!("{e}; {REJOIN}")),
                    };
                    if reply_to(&incoming) == Some(join_id) {
                        if let Some(error) = error_of(&incoming) {
                            return End::Failed(format!(
                                "cannot {} match {}: {}",
                                self.verb(),
                                self.match_id,
                                error.plain()
                            ));
                        }
                    }
                    match self.on_frame(incoming, &mut view, &mut requests) {
                        Redraw::Now => redraw_at = Some(Instant::now()),
                        Redraw::Soon => {
                            redraw_at.get_or_insert_with(|| Instant::now() + REDRAW_DELAY);
                        }
                        Redraw::No => {}
                    }
                }
                line = next_line(&mut input), if input.is_some() => match line {
                    Some(line) => match self.on_line(&line, conn, view.as_ref(), &mut requests).await {
                        Ok(true) => {}
                        Ok(false) => return End::Done,
                        Err(e) => return End::Failed(format!("{e}; {REJOIN}")),
                    },
                    None => {
                        input = None;
                        outln!("(input closed: following the match until the round ends; Ctrl-C leaves)");
                    }
                },
                _ = sleep_until(redraw_at), if redraw_at.is_some() => {
                    redraw_at = None;
                    if let Some(view) = &view {
                        out!("{}", view.render());
                    }
                }
            }
            if let Some(view) = &view {
                if view.is_finished() {
                    if redraw_at.is_some() {
                        out!("{}", view.render());
                    }
                    return End::Done;
                }
            }
        }
    }

    fn verb(&self) -> &'static str {
        match self.role {
            Role::Player => "join",
            Role::Spectator => "watch",
            Role::Arbiter => "arbitrate",
        }
    }

    /// Handles one frame from the server; says whether the picture changed.
    fn on_frame(
        &self,
        incoming: Incoming,
        view: &mut Option<View>,
        requests: &mut HashMap<u64, String>,
    ) -> Redraw {
        match incoming {
            Incoming::Message(ServerMessage::State(state)) => {
                let fresh = View::from_state(*state);
                if view.is_none() {
                    outln!("{}", self.greeting(&fresh));
                    for line in fresh.history() {
                        outln!("* {line}");
                    }
                }
                *view = Some(fresh);
                Redraw::Now
            }
            Incoming::Message(ServerMessage::Event(frame)) => {
                let Some(view) = view else {
                    // Events come only after the state; one before it has nothing to apply to.
                    return Redraw::No;
                };
                view.apply(&frame);
                let line = view.event_line(&frame.event);
                match (&frame.event, self.role) {
                    // The arbiter must not miss a claim among the moves.
                    (Event::Claim { .. }, Role::Arbiter) => {
                        outln!("* CLAIM: {line} (decide with warn or declare)")
                    }
                    _ => outln!("* {line}"),
                }
                redraw_after(&frame.event)
            }
            Incoming::Message(ServerMessage::Ack { re, .. }) => {
                if let Some(id) = re.as_ref().and_then(Value::as_u64) {
                    requests.remove(&id);
                }
                Redraw::No
            }
            Incoming::Message(
                ServerMessage::Welcome { .. }
                | ServerMessage::Pong { .. }
                | ServerMessage::MatchCreated { .. }
                | ServerMessage::Matches { .. },
            ) => Redraw::No,
            other => {
                if let Some(error) = error_of(&other) {
                    let what = reply_to(&other).and_then(|id| requests.remove(&id));
                    match what {
                        Some(what) => outln!("! {what} refused: {}", error.plain()),
                        None => outln!("! server error: {}", error.plain()),
                    }
                    return Redraw::No;
                }
                // An event of a kind this client does not know: say so, keep its clocks.
                if let (Incoming::Other(value), Some(view)) = (&other, view.as_mut()) {
                    if value.get("type").and_then(Value::as_str) == Some("event") {
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
                Redraw::No
            }
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
            Input::Send { message, what } => {
                let id = conn.send(message).await?;
                requests.insert(id, what);
            }
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
}
