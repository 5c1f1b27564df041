//! Following one match, for every client command (`play`, `watch`, `arbiter`, `bot`): one
//! connection at a time, re-opened with backoff when it drops; `join`/`watch` again with
//! `since_seq` so that nothing is missed or seen twice; the match kept as one
//! `hakem_protocol::MatchState`, folded event by event (the protocol's one fold, no rules); a
//! gap in the numbering asks for the missing events; a quiet connection is pinged.
//!
//! [`MatchLink::next`] is cancel-safe: a caller may `select!` it against its own input and
//! call it again; waits and deadlines are kept in the link, not in the future.

use std::collections::VecDeque;
use std::time::Duration;

use hakem_protocol::{ClientMessage, EventFrame, Feature, MatchState, ServerMessage};
use serde_json::Value;
use tokio::time::Instant;

use crate::connection::{reply_to, ClientError, Connection, Incoming, BROKE};

/// The first wait before reconnecting; it doubles after each failed attempt, up to
/// [`BACKOFF_MAX`]. Each wait is shortened by a random part of up to half (jitter), so that
/// the clients of a restarted server do not all knock at once.
const BACKOFF_FIRST: Duration = Duration::from_millis(250);
const BACKOFF_MAX: Duration = Duration::from_secs(5);

/// How long one connection attempt (connect and `hello`) may take.
const ATTEMPT_PATIENCE: Duration = Duration::from_secs(10);

/// With nothing from the server for this long, the link sends a `ping`; without any frame in
/// [`PING_PATIENCE`] after it, the connection is taken as lost (a cable pulled out sends no
/// close).
pub const QUIET_BEFORE_PING: Duration = Duration::from_secs(20);
pub const PING_PATIENCE: Duration = Duration::from_secs(10);

/// Times in a row the link may lose track of the match (a gap, a fresh state asked for)
/// without any progress before it gives up: the server and this client disagree.
const MAX_RESYNCS: u32 = 5;

/// The wait before reconnection attempt `attempt` (0 for the first): 0.25 s doubling up to
/// 5 s, less a random part of up to half.
pub fn backoff(attempt: u32) -> Duration {
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

/// What a link follows and how.
pub struct LinkOptions {
    pub server: String,
    /// The `hello` token, if any.
    pub token: Option<String>,
    /// The `join` or `watch` to send (its `since_seq` is the link's to set).
    pub entry: ClientMessage,
    /// How long to keep trying to get back after the connection is lost; zero: do not.
    pub reconnect_for: Duration,
    /// Retry a failing first connection too (a listening bot's matches), instead of giving up
    /// at once as a command typed with a wrong address should.
    pub retry_first: bool,
    /// Read the match's chat (people do; bots do not).
    pub chat: bool,
}

/// What happened on the link, for its user to show or act on.
#[derive(Debug)]
pub enum Happening {
    /// A `state` replaced the picture: the first one, or a fresh one after the link lost
    /// track.
    State,
    /// An event, folded into the state.
    Event(Box<EventFrame>),
    /// An event of a kind this client does not know: counted, not applied.
    Unknown { kind: String },
    /// A connection is open again after `lost_for`; the catch-up follows.
    Back { lost_for: Duration },
    /// The server acknowledged the join: the catch-up is complete.
    Joined { rejoin: bool },
    /// The direct reply to one of the caller's own requests (`ack`, `error`, ...).
    Reply(Incoming),
    /// Anything else (`your_match`, an error without `re`, `pong`, ...).
    Other(Incoming),
    /// The connection is gone; the link reconnects. Said once per loss.
    Lost { why: String },
    /// A reconnection attempt failed; the link tries again after a wait.
    Retrying { why: String },
    /// The server closed the connection after the round ended: nothing more will come.
    Closed,
}

/// Why a link stopped for good.
#[derive(Debug)]
pub enum LinkError {
    /// The server refused the join (a wrong token, no such match): waiting will not help.
    Refused {
        match_id: String,
        code: String,
        message: String,
        /// The link had been in the match before (it was getting back into it).
        rejoin: bool,
    },
    /// The connection could not be made or kept, and the time for reconnecting has passed
    /// (or reconnecting is off).
    Failed(String),
}

impl std::fmt::Display for LinkError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LinkError::Refused {
                match_id,
                code,
                message,
                rejoin,
            } => {
                let what = if *rejoin { "get back into" } else { "join" };
                write!(f, "cannot {what} match {match_id}: {message} ({code})")
            }
            LinkError::Failed(m) => f.write_str(m),
        }
    }
}

/// `0.8 s`, `12 s`, `5:00`.
pub fn format_wait(duration: Duration) -> String {
    let secs = duration.as_secs();
    if secs >= 60 {
        format!("{}:{:02}", secs / 60, secs % 60)
    } else if secs >= 10 {
        format!("{secs} s")
    } else {
        format!("{:.1} s", duration.as_secs_f64())
    }
}

pub struct MatchLink {
    opts: LinkOptions,
    match_id: String,
    conn: Option<Connection>,
    state: Option<MatchState>,
    queue: VecDeque<Happening>,
    /// The id of the join sent on this connection, until it is acknowledged.
    join_id: Option<u64>,
    /// The join on this connection was acknowledged.
    joined: bool,
    /// The link has been in the match on some connection.
    ever_joined: bool,
    /// The join on this connection follows an earlier one (a catch-up).
    rejoin: bool,
    heard_at: Instant,
    pinged: bool,
    lost_since: Option<Instant>,
    attempts: u32,
    retry_at: Option<Instant>,
    resyncs: u32,
    /// The server's clock minus this one's, in milliseconds, from the last `welcome`.
    server_offset_ms: Option<i64>,
    closed: bool,
    /// Why the last connection attempt failed (or the connection was lost).
    last_error: String,
}

fn match_of(entry: &ClientMessage) -> String {
    entry.match_id().unwrap_or_default().to_string()
}

/// The local clock, Unix milliseconds.
pub fn unix_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

/// The refusal carried by a frame, if it is an `error`: its code and message.
pub fn error_of(incoming: &Incoming) -> Option<(String, String)> {
    match incoming {
        Incoming::Message(ServerMessage::Error(error)) => {
            Some((error.code.as_str().to_string(), error.message.clone()))
        }
        Incoming::Other(value) if value.get("type").and_then(Value::as_str) == Some("error") => {
            let text = |key: &str| {
                value
                    .get(key)
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string()
            };
            Some((text("code"), text("message")))
        }
        _ => None,
    }
}

impl MatchLink {
    pub fn new(opts: LinkOptions) -> MatchLink {
        MatchLink {
            match_id: match_of(&opts.entry),
            opts,
            conn: None,
            state: None,
            queue: VecDeque::new(),
            join_id: None,
            joined: false,
            ever_joined: false,
            rejoin: false,
            heard_at: Instant::now(),
            pinged: false,
            lost_since: None,
            attempts: 0,
            retry_at: None,
            resyncs: 0,
            server_offset_ms: None,
            closed: false,
            last_error: String::new(),
        }
    }

    /// The match as the link knows it (`None` before the first `state`).
    pub fn state(&self) -> Option<&MatchState> {
        self.state.as_ref()
    }

    /// Connected and in the match.
    pub fn is_connected(&self) -> bool {
        self.conn.is_some()
    }

    /// A re-join is catching up: what the caller sees is not yet up to date.
    pub fn catching_up(&self) -> bool {
        self.rejoin && !self.joined
    }

    /// The server's clock minus this one's, in milliseconds.
    pub fn server_offset_ms(&self) -> Option<i64> {
        self.server_offset_ms
    }

    /// Sends a request on the current connection; its id comes back as the reply's `re`.
    pub async fn send(&mut self, message: ClientMessage) -> Result<u64, ClientError> {
        let Some(conn) = self.conn.as_mut() else {
            return Err(ClientError("not connected".into()));
        };
        match conn.send(message).await {
            Ok(id) => Ok(id),
            Err(e) => {
                self.lose(e.0.clone());
                Err(e)
            }
        }
    }

    /// Asks for the whole match again (a fresh `state`), when the caller no longer trusts
    /// what it has (a move it made was refused).
    pub async fn resync(&mut self) -> Result<(), LinkError> {
        self.count_resync()?;
        self.send_join(None).await;
        Ok(())
    }

    fn count_resync(&mut self) -> Result<(), LinkError> {
        self.resyncs += 1;
        if self.resyncs > MAX_RESYNCS {
            return Err(LinkError::Failed(format!(
                "lost track of match {} {MAX_RESYNCS} times in a row",
                self.match_id
            )));
        }
        Ok(())
    }

    /// Closes the connection politely, waiting a moment at most.
    pub async fn close(&mut self) {
        if let Some(conn) = self.conn.take() {
            let _ = tokio::time::timeout(Duration::from_millis(500), conn.close()).await;
        }
    }

    fn entry(&self, since_seq: Option<u64>) -> ClientMessage {
        let mut message = self.opts.entry.clone();
        match &mut message {
            ClientMessage::Join { since_seq: s, .. }
            | ClientMessage::Watch { since_seq: s, .. } => *s = since_seq,
            _ => {}
        }
        message
    }

    async fn send_join(&mut self, since_seq: Option<u64>) {
        let entry = self.entry(since_seq);
        self.joined = false;
        self.join_id = None;
        if let Some(conn) = self.conn.as_mut() {
            match conn.send(entry).await {
                Ok(id) => self.join_id = Some(id),
                Err(e) => self.lose(e.0),
            }
        }
    }

    /// The connection is gone (or no longer to be trusted).
    fn lose(&mut self, why: String) {
        self.conn = None;
        self.joined = false;
        self.join_id = None;
        let why = why.strip_prefix(BROKE).unwrap_or(&why).to_string();
        self.last_error = why.clone();
        if self.lost_since.is_none() {
            self.lost_since = Some(Instant::now());
            self.attempts = 0;
            self.retry_at = Some(Instant::now() + backoff(0));
            self.queue.push_back(Happening::Lost { why });
        }
    }

    /// The next thing that happened; reconnects by itself while it may.
    pub async fn next(&mut self) -> Result<Happening, LinkError> {
        loop {
            if let Some(happening) = self.queue.pop_front() {
                return Ok(happening);
            }
            if self.closed {
                return Ok(Happening::Closed);
            }
            if self.conn.is_none() {
                if let Some(happening) = self.connect().await? {
                    return Ok(happening);
                }
                continue;
            }
            let quiet_until = self.heard_at
                + QUIET_BEFORE_PING
                + if self.pinged {
                    PING_PATIENCE
                } else {
                    Duration::ZERO
                };
            let Some(conn) = self.conn.as_mut() else {
                continue;
            };
            tokio::select! {
                incoming = conn.recv() => match incoming {
                    Ok(Some(incoming)) => {
                        self.heard_at = Instant::now();
                        self.pinged = false;
                        self.on_frame(incoming).await?;
                    }
                    Ok(None) if self.state.as_ref().is_some_and(|s| s.status == hakem_protocol::MatchStatus::Finished) => {
                        self.conn = None;
                        self.closed = true;
                    }
                    Ok(None) => self.lose("the server closed the connection".into()),
                    Err(e) => self.lose(e.0),
                },
                _ = tokio::time::sleep_until(quiet_until) => {
                    if self.pinged {
                        self.lose(format!(
                            "no answer from the server for {} seconds",
                            (QUIET_BEFORE_PING + PING_PATIENCE).as_secs()
                        ));
                    } else {
                        self.pinged = true;
                        if let Err(e) = conn.send(ClientMessage::Ping).await {
                            self.lose(e.0);
                        }
                    }
                }
            }
        }
    }

    /// One connection attempt, after the wait it is due; `Some` for something to report.
    async fn connect(&mut self) -> Result<Option<Happening>, LinkError> {
        let first = !self.ever_joined && self.state.is_none();
        if let Some(since) = self.lost_since {
            if !first && since.elapsed() >= self.opts.reconnect_for {
                return Err(LinkError::Failed(format!(
                    "lost the connection to the server and could not get it back within {} \
                     (last: {})",
                    format_wait(self.opts.reconnect_for),
                    self.last_error
                )));
            }
        }
        if let Some(at) = self.retry_at {
            tokio::time::sleep_until(at).await;
        }
        let patience = match self.lost_since {
            Some(since) if !first => ATTEMPT_PATIENCE
                .min(self.opts.reconnect_for.saturating_sub(since.elapsed()))
                .max(Duration::from_millis(100)),
            _ => ATTEMPT_PATIENCE,
        };
        let features: &[Feature] = if self.opts.chat {
            &[Feature::Batch, Feature::Boards, Feature::Chat]
        } else {
            &[Feature::Batch, Feature::Boards]
        };
        let opened = Connection::handshake(
            &self.opts.server,
            self.opts.token.as_deref(),
            features,
            patience,
        )
        .await;
        match opened {
            Ok((conn, welcome)) => {
                let server_ms = i64::try_from(welcome.server_time_ms).unwrap_or(i64::MAX);
                self.server_offset_ms = Some(server_ms.saturating_sub(unix_ms()));
                self.conn = Some(conn);
                self.heard_at = Instant::now();
                self.pinged = false;
                self.retry_at = None;
                self.rejoin = self.state.is_some();
                let since = self.state.as_ref().map(|s| s.seq);
                self.send_join(since).await;
                Ok(self.lost_since.map(|since| Happening::Back {
                    lost_for: since.elapsed(),
                }))
            }
            Err(e) if !e.retriable => Err(LinkError::Failed(e.message)),
            Err(e) if first && !self.opts.retry_first => Err(LinkError::Failed(e.message)),
            Err(e) if self.opts.reconnect_for.is_zero() => Err(LinkError::Failed(e.message)),
            Err(e) => {
                self.last_error = e.message.clone();
                if self.lost_since.is_none() {
                    self.lost_since = Some(Instant::now());
                }
                self.attempts = self.attempts.saturating_add(1);
                self.retry_at = Some(Instant::now() + backoff(self.attempts));
                Ok(Some(Happening::Retrying { why: e.message }))
            }
        }
    }

    /// Folds an event in; a gap asks for what was missed.
    async fn fold(&mut self, frame: EventFrame) -> Result<(), LinkError> {
        let Some(state) = self.state.as_mut() else {
            // Events come only after the state; one before it has nothing to apply to.
            return Ok(());
        };
        match state.apply(&frame) {
            Ok(hakem_protocol::Applied::Applied) => {
                self.resyncs = 0;
                self.queue.push_back(Happening::Event(Box::new(frame)));
            }
            Ok(hakem_protocol::Applied::Repeated) => {}
            Err(_) => self.catch_up().await?,
        }
        Ok(())
    }

    /// The numbering has a gap: join again on this connection for the events after the last
    /// one folded in.
    async fn catch_up(&mut self) -> Result<(), LinkError> {
        self.count_resync()?;
        self.rejoin = true;
        let since = self.state.as_ref().map(|s| s.seq);
        self.send_join(since).await;
        Ok(())
    }

    /// An event this client cannot read: counted by its number, so the numbering stays whole.
    async fn skip(&mut self, value: &Value) -> Result<(), LinkError> {
        let ours = value.get("match").and_then(Value::as_str) == Some(self.match_id.as_str());
        let (Some(seq), true, Some(state)) = (
            value.get("seq").and_then(Value::as_u64),
            ours,
            self.state.as_mut(),
        ) else {
            return Ok(());
        };
        match state.skip(seq) {
            Ok(hakem_protocol::Applied::Applied) => {
                if let Some(clocks) = value
                    .get("clocks")
                    .and_then(|c| serde_json::from_value(c.clone()).ok())
                {
                    state.clocks = Some(clocks);
                }
                let kind = value
                    .pointer("/event/kind")
                    .and_then(Value::as_str)
                    .unwrap_or("unknown")
                    .to_string();
                self.queue.push_back(Happening::Unknown { kind });
            }
            Ok(hakem_protocol::Applied::Repeated) => {}
            Err(_) => self.catch_up().await?,
        }
        Ok(())
    }

    async fn on_frame(&mut self, incoming: Incoming) -> Result<(), LinkError> {
        let answers_join =
            !self.joined && self.join_id.is_some() && reply_to(&incoming) == self.join_id;
        if answers_join {
            if let Some((code, message)) = error_of(&incoming) {
                let lasting = !self.ever_joined
                    || matches!(
                        code.as_str(),
                        "unauthorized"
                            | "unknown_match"
                            | "forbidden"
                            | "bad_request"
                            | "unsupported_protocol"
                    );
                let refused = LinkError::Refused {
                    match_id: self.match_id.clone(),
                    code,
                    message,
                    rejoin: self.ever_joined,
                };
                if lasting {
                    return Err(refused);
                }
                self.lose(refused.to_string());
                return Ok(());
            }
            self.joined = true;
            self.ever_joined = true;
            self.lost_since = None;
            self.attempts = 0;
            self.queue.push_back(Happening::Joined {
                rejoin: self.rejoin,
            });
            self.rejoin = false;
            return Ok(());
        }
        match incoming {
            Incoming::Message(ServerMessage::State(state)) if state.match_id == self.match_id => {
                self.state = Some(*state);
                self.queue.push_back(Happening::State);
            }
            Incoming::Message(ServerMessage::Event(frame)) if frame.match_id == self.match_id => {
                self.fold(*frame).await?;
            }
            Incoming::Message(ServerMessage::Events { match_id, events })
                if match_id == self.match_id =>
            {
                for frame in events {
                    self.fold(frame).await?;
                }
            }
            Incoming::Other(value) => match value.get("type").and_then(Value::as_str) {
                Some("event") => self.skip(&value).await?,
                Some("events") => {
                    // A batch with an event this client cannot read: each on its own.
                    let frames = value
                        .get("events")
                        .and_then(Value::as_array)
                        .cloned()
                        .unwrap_or_default();
                    for frame in frames {
                        match serde_json::from_value::<EventFrame>(frame.clone()) {
                            Ok(frame) if frame.match_id == self.match_id => {
                                self.fold(frame).await?
                            }
                            Ok(_) => {}
                            Err(_) => self.skip(&frame).await?,
                        }
                    }
                }
                _ if reply_to(&Incoming::Other(value.clone())).is_some() => self
                    .queue
                    .push_back(Happening::Reply(Incoming::Other(value))),
                _ => self
                    .queue
                    .push_back(Happening::Other(Incoming::Other(value))),
            },
            incoming if reply_to(&incoming).is_some() => {
                self.queue.push_back(Happening::Reply(incoming))
            }
            incoming => self.queue.push_back(Happening::Other(incoming)),
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
