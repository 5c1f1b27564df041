//! The loop shared by `hakem play`, `hakem watch` and `hakem arbiter`: join the match, print
//! the picture and one line per event, read commands from stdin, stop when the round ends.

use std::collections::HashMap;
use std::io::BufRead;
use std::process::ExitCode;
use std::time::Duration;

use hakem_protocol::{
    ChatChannel, ChatLine, ChatMute, ChatRole, ClientMessage, ErrorCode, Event, ServerMessage,
};
use serde_json::Value;
use tokio::sync::mpsc;
use tokio::time::Instant;

use crate::connection::{parse_server_url, reply_to, Incoming, DEFAULT_SERVER};
use crate::follow::{error_of, format_wait, Happening, LinkError, LinkOptions, MatchLink};
use crate::view::View;

/// The way back into a match after the client gave up reconnecting: the server keeps the seat.
const REJOIN: &str = "run the same command again to rejoin";

/// Exit status for a connection or server failure.
pub const FAILURE: u8 = 1;

/// Events of one action arrive in a burst (a whole move is `moved` and `pressed`); the board is
/// drawn once the burst is over rather than after each of them.
const REDRAW_DELAY: Duration = Duration::from_millis(40);

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
    /// `join` or `watch` (its `since_seq` is set by the link).
    pub enter: ClientMessage,
    /// Reads a command line; `None` for a session without input (watch).
    pub parse: Option<fn(&str, &str) -> Input>,
    pub help: &'static str,
    /// How long to try to reconnect after losing the connection; zero: do not.
    pub reconnect_for: Duration,
    /// The `hello` token: an account's, so that a spectator may write in the chat.
    pub token: Option<String>,
}

/// What the session keeps besides the link.
struct Screen {
    input: Option<mpsc::UnboundedReceiver<String>>,
    redraw_at: Option<Instant>,
    /// When the last clock reading arrived, to count the running clock down from it.
    clocks_at: std::time::Instant,
    /// Requests sent and not yet answered, by id, with words for them.
    requests: HashMap<u64, String>,
    greeted: bool,
    /// The last chat message shown, of each channel (the arbiter reads both).
    chat_seen: [u64; 2],
    /// The chat's settings as last shown (on, muted, the mutes for the arbiter).
    chat: Option<(bool, bool, Option<Vec<ChatMute>>)>,
}

impl Session {
    pub async fn run(self) -> ExitCode {
        match self.drive().await {
            Ok(()) => ExitCode::SUCCESS,
            Err(message) => {
                eprintln!("hakem: {message}");
                ExitCode::from(FAILURE)
            }
        }
    }

    async fn drive(&self) -> Result<(), String> {
        let mut link = MatchLink::new(LinkOptions {
            server: self.server.clone(),
            token: self.token.clone(),
            entry: self.enter.clone(),
            reconnect_for: self.reconnect_for,
            retry_first: false,
            chat: true,
        });
        let mut screen = Screen {
            input: self.parse.map(|_| stdin_lines()),
            redraw_at: None,
            clocks_at: std::time::Instant::now(),
            requests: HashMap::new(),
            greeted: false,
            chat_seen: [0, 0],
            chat: None,
        };
        let outcome = self.follow(&mut link, &mut screen).await;
        link.close().await;
        outcome
    }

    fn view<'a>(&self, link: &'a MatchLink, screen: &Screen) -> Option<View<'a>> {
        link.state().map(|state| View::new(state, screen.clocks_at))
    }

    async fn follow(&self, link: &mut MatchLink, screen: &mut Screen) -> Result<(), String> {
        // Nobody reads the match any more (`hakem watch ... | head`): leave it. One watch for
        // the whole match, not a new one for each frame.
        let stdout_closed = crate::output::stdout_closed();
        tokio::pin!(stdout_closed);
        loop {
            // While a re-join catches up (a moment), typed lines wait: they were typed after
            // the picture they refer to, and are sent once it is up to date.
            let read_input = screen.input.is_some() && !link.catching_up();
            let happening = tokio::select! {
                happening = link.next() => happening,
                line = next_line(&mut screen.input), if read_input => {
                    match line {
                        Some(line) => {
                            if !self.on_line(&line, link, screen).await {
                                return Ok(());
                            }
                        }
                        None => {
                            screen.input = None;
                            println_or_quit!("(input closed: following the match until the round ends; Ctrl-C leaves)");
                        }
                    }
                    continue;
                }
                () = &mut stdout_closed => return Ok(()),
                _ = sleep_until(screen.redraw_at), if screen.redraw_at.is_some() => {
                    screen.redraw_at = None;
                    if let Some(view) = self.view(link, screen) {
                        print_or_quit!("{}", view.render());
                    }
                    continue;
                }
            };
            let happening = match happening {
                Ok(happening) => happening,
                Err(LinkError::Refused {
                    match_id,
                    code,
                    message,
                    rejoin,
                }) => {
                    let refusal = Refusal { code, message };
                    let verb = if rejoin { "get back into" } else { self.verb() };
                    return Err(format!(
                        "cannot {verb} match {match_id}: {}",
                        refusal.plain()
                    ));
                }
                Err(LinkError::Failed(message)) => {
                    return Err(format!("{message}; {REJOIN}"));
                }
            };
            if self.on_happening(happening, link, screen)? {
                if screen.redraw_at.take().is_some() {
                    if let Some(view) = self.view(link, screen) {
                        print_or_quit!("{}", view.render());
                    }
                }
                return Ok(());
            }
        }
    }

    /// Shows what happened; `true` once the round is over (its end is shown, not merely folded
    /// in with the events of its batch).
    fn on_happening(
        &self,
        happening: Happening,
        link: &MatchLink,
        screen: &mut Screen,
    ) -> Result<bool, String> {
        let finished = link
            .state()
            .is_some_and(|s| s.status == hakem_protocol::MatchStatus::Finished);
        let ends = finished
            && !link.catching_up()
            && match &happening {
                Happening::Event(frame) => {
                    matches!(frame.event, Event::RoundEnded(_) | Event::Expired)
                }
                Happening::State | Happening::Joined { .. } | Happening::Closed => true,
                _ => false,
            };
        let redraw_soon = |screen: &mut Screen| {
            if !link.catching_up() {
                screen
                    .redraw_at
                    .get_or_insert_with(|| Instant::now() + REDRAW_DELAY);
            }
        };
        match happening {
            Happening::State => {
                screen.clocks_at = std::time::Instant::now();
                let Some(view) = self.view(link, screen) else {
                    return Ok(false);
                };
                if !screen.greeted {
                    screen.greeted = true;
                    println_or_quit!("{}", self.greeting(&view));
                    for line in view.history() {
                        println_or_quit!("* {line}");
                    }
                } else {
                    println_or_quit!(
                        "* the server sent the whole match again (it is at event {})",
                        link.state().map_or(0, |s| s.seq)
                    );
                }
                if !link.catching_up() {
                    screen.redraw_at = Some(Instant::now());
                }
            }
            Happening::Event(frame) => {
                screen.clocks_at = std::time::Instant::now();
                let Some(view) = self.view(link, screen) else {
                    return Ok(false);
                };
                let line = view.event_line(&frame.event);
                match (&frame.event, self.role) {
                    // The arbiter must not miss a claim among the moves.
                    (Event::Claim { id, .. }, Role::Arbiter) => {
                        let n = id.map_or("N".to_string(), |id| id.to_string());
                        println_or_quit!("* CLAIM: {line} (rule on it: uphold {n} [warn] REASON, or reject {n} REASON)")
                    }
                    _ => println_or_quit!("* {line}"),
                }
                if redraws(&frame.event) {
                    redraw_soon(screen);
                }
            }
            Happening::Unknown { kind } => {
                screen.clocks_at = std::time::Instant::now();
                println_or_quit!("* {kind} (an event this client does not know)");
            }
            Happening::Back { lost_for } => {
                println_or_quit!(
                    "* connection back after {}; catching up from event {}",
                    format_wait(lost_for),
                    link.state().map_or(0, |s| s.seq)
                );
            }
            Happening::Joined { rejoin } => {
                if rejoin {
                    // The whole picture again, now that it is up to date.
                    screen.redraw_at = Some(Instant::now());
                }
            }
            Happening::Reply(incoming) => {
                let id = reply_to(&incoming);
                let what = id.and_then(|id| screen.requests.remove(&id));
                if let Some((code, message)) = error_of(&incoming) {
                    let refusal = Refusal { code, message };
                    match what {
                        Some(what) => println_or_quit!("! {what} refused: {}", refusal.plain()),
                        None => println_or_quit!("! server error: {}", refusal.plain()),
                    }
                }
            }
            Happening::Other(incoming) => {
                if let Some((code, message)) = error_of(&incoming) {
                    println_or_quit!("! server error: {}", Refusal { code, message }.plain());
                } else if let Incoming::Message(message) = incoming {
                    self.show_chat(&message, screen);
                }
            }
            Happening::Lost { why } => {
                if screen.redraw_at.take().is_some() {
                    if let Some(view) = self.view(link, screen) {
                        print_or_quit!("{}", view.render());
                    }
                }
                // Requests without an answer may or may not have been carried out.
                let mut unanswered: Vec<(u64, String)> = screen.requests.drain().collect();
                unanswered.sort();
                for (_, what) in unanswered {
                    println_or_quit!("? no answer to {what} before the connection was lost: the board shows whether it was made once the connection is back");
                }
                if self.reconnect_for.is_zero() || link.state().is_none() {
                    return Err(format!("{why}; {REJOIN}"));
                }
                let refused = if self.parse.is_some() {
                    "; commands are refused until it is back"
                } else {
                    ""
                };
                println_or_quit!("* connection to the server lost ({why}); reconnecting{refused}");
            }
            Happening::Retrying { .. } => {}
            Happening::Closed => {}
        }
        Ok(ends)
    }

    /// The chat: its messages as they come, what was said before, and its settings when they
    /// change (a history sent again after a reconnection shows only what is new).
    fn show_chat(&self, message: &ServerMessage, screen: &mut Screen) {
        match message {
            ServerMessage::Chat(line) => self.chat_line(line, screen),
            ServerMessage::ChatHistory {
                enabled,
                muted,
                lines,
                mutes,
                ..
            } => {
                let new: Vec<&ChatLine> = lines
                    .iter()
                    .filter(|l| l.n > screen.chat_seen[channel_index(l.channel)])
                    .collect();
                if !new.is_empty() && screen.chat_seen == [0, 0] {
                    println_or_quit!("* the chat so far:");
                }
                for line in new {
                    self.chat_line(line, screen);
                }
                self.chat_settings(*enabled, *muted, mutes.as_deref(), screen);
            }
            ServerMessage::ChatSettings {
                enabled,
                muted,
                mutes,
                ..
            } => self.chat_settings(*enabled, *muted, mutes.as_deref(), screen),
            _ => {}
        }
    }

    fn chat_line(&self, line: &ChatLine, screen: &mut Screen) {
        let seen = &mut screen.chat_seen[channel_index(line.channel)];
        if line.n <= *seen {
            return;
        }
        *seen = line.n;
        let who = match (line.from.as_str(), line.role) {
            ("", ChatRole::Organizer) => "the organizer".to_string(),
            ("", _) => "the arbiter".to_string(),
            (name, ChatRole::P1 | ChatRole::P2) => format!("{} ({name})", line.role.as_str()),
            (name, _) => name.to_string(),
        };
        // The arbiter reads both chats: say which.
        let channel = match (self.role, line.channel) {
            (Role::Arbiter, ChatChannel::Spectators) => " [spectators]",
            (Role::Arbiter, ChatChannel::Players) => " [players]",
            _ => "",
        };
        println_or_quit!("> {who}{channel}: {}", line.text);
    }

    fn chat_settings(
        &self,
        enabled: bool,
        muted: bool,
        mutes: Option<&[ChatMute]>,
        screen: &mut Screen,
    ) {
        let now = (enabled, muted, mutes.map(<[ChatMute]>::to_vec));
        let first = screen.chat.is_none();
        if screen.chat.as_ref() == Some(&now) {
            return;
        }
        screen.chat = Some(now);
        // Said at the start only when it is not the usual: a chat that is on.
        if !first || !enabled || muted {
            println_or_quit!(
                "* the chat is {}{}",
                if enabled { "on" } else { "off" },
                if muted { "; you are muted" } else { "" }
            );
        }
        if let Some(mutes) = mutes.filter(|m| !m.is_empty() || !first) {
            let names: Vec<String> = mutes
                .iter()
                .map(|m| match (&m.seat, &m.name) {
                    (Some(seat), _) => seat.as_str().to_string(),
                    (None, Some(name)) => name.clone(),
                    (None, None) => String::new(),
                })
                .collect();
            if names.is_empty() {
                println_or_quit!("* nobody is muted");
            } else {
                println_or_quit!("* muted: {}", names.join(", "));
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

    fn greeting(&self, view: &View<'_>) -> String {
        let greeting = self.greeting_live(view);
        match (view.spectator_delay(), self.role) {
            (None, _) => greeting,
            (Some(behind), Role::Spectator) => {
                format!("{greeting}, {behind} behind the play (the players see it live)")
            }
            (Some(behind), _) => format!("{greeting}\nspectators see this match {behind} behind"),
        }
    }

    fn greeting_live(&self, view: &View<'_>) -> String {
        match self.role {
            Role::Player => {
                let seat = view
                    .my_seat()
                    .map_or_else(|| "a player".to_string(), |seat| view.who(seat));
                format!(
                    "joined match {} as {seat}; type `help` for the commands",
                    view.match_id()
                )
            }
            Role::Spectator => format!("watching match {}", view.match_id()),
            Role::Arbiter => format!(
                "arbitrating match {}; type `help` for the commands",
                view.match_id()
            ),
        }
    }

    /// Handles one line of input; `false` ends the session.
    async fn on_line(&self, line: &str, link: &mut MatchLink, screen: &mut Screen) -> bool {
        let Some(parse) = self.parse else {
            return true;
        };
        let connected = link.is_connected();
        let view = self.view(link, screen);
        match parse(line, &self.match_id) {
            Input::Send { what, .. } if !connected => println_or_quit!(
                "? {what} not sent: the connection to the server is lost; \
                 type it again once it is back"
            ),
            Input::Send { message, what } => match link.send(message).await {
                Ok(id) => {
                    screen.requests.insert(id, what);
                }
                Err(_) => {
                    println_or_quit!(
                        "? {what} may not have reached the server: the connection broke"
                    );
                }
            },
            Input::Time => match view {
                // Its own label, so that it is told apart from the clocks of a redraw.
                Some(view) if connected => println_or_quit!("{}", view.clock_line("clocks now")),
                Some(view) => println_or_quit!(
                    "{}",
                    view.clock_line("clocks now (not connected: counted from the last reading)")
                ),
                None => println_or_quit!("not in the match yet"),
            },
            Input::Board => match view {
                Some(view) => {
                    print_or_quit!("{}", view.render());
                    if !connected {
                        println_or_quit!("(not connected: the board as last seen)");
                    }
                }
                None => println_or_quit!("not in the match yet"),
            },
            Input::Help => print_or_quit!("{}", self.help),
            Input::Quit => return false,
            Input::Nothing => {}
            Input::Invalid(why) => println_or_quit!("? {why} (type `help` for the commands)"),
        }
        true
    }
}

fn channel_index(channel: ChatChannel) -> usize {
    match channel {
        ChatChannel::Players => 0,
        ChatChannel::Spectators => 1,
    }
}

/// Events that change the board, the score, the clocks, whose turn it is or the claims: the
/// picture is drawn again after them (once a burst of them is over).
fn redraws(event: &Event) -> bool {
    // A claim redraws too: the picture lists the open ones (for the arbiter and the players).
    !matches!(
        event,
        Event::PlayerConnected { .. }
            | Event::PlayerDisconnected { .. }
            | Event::Ready { .. }
            | Event::Declared { .. }
    )
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
            Some(ErrorCode::UnknownAccount) => "there is no such account",
            Some(ErrorCode::NoPairing) => "no valid pairing exists",
            Some(ErrorCode::PairingChanged) => "the pairing is no longer the one shown",
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
