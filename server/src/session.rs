//! One WebSocket connection: the `hello` handshake, reading client frames, routing them to
//! rooms, and writing whatever the rooms and the session queue for it.

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;
use std::time::Duration;

use axum::extract::ws::CloseFrame;
use axum::extract::ws::{Message, Utf8Bytes, WebSocket};
use futures_util::{SinkExt, StreamExt};
use hakem_protocol::{
    parse_client_frame, AccountKind, ClientMessage, CreateMatch, ErrorCode, ErrorReply, Feature,
    Identity, IdentityKind, ServerMessage, TournamentView, MAX_FRAME_BYTES, PROTOCOL_VERSION,
};
use hakem_protocol::{RequestId, TokenBucket};
use tokio::sync::{mpsc, oneshot};
use tokio_tungstenite::tungstenite;

use crate::listen::Peer;
use crate::outbox::{ConnId, Outbox, Outgoing};
use crate::room::{role_of, Action, ChatAction, ChatRequest, Credential, Join, Role, RoomHandle};
use crate::store::Store;
use crate::tokens::same_token;
use crate::tournament::{self, Caller, Failure};
use crate::{App, Found};
use hakem_round::Command;

/// Stored events read per page when a connection catches up from the store.
const REPLAY_PAGE: u32 = 256;
/// Queued frames written to the socket at once before it is flushed.
const WRITE_BURST: usize = 64;

/// `peer` holds the connection's place under the connection limits until the session ends;
/// `ip` is the address the session's limits apply to (a proxy's client's, see
/// [`crate::guard::Guard::client_ip`]).
pub async fn serve(
    socket: WebSocket,
    app: Arc<App>,
    peer: Option<Peer>,
    ip: Option<std::net::IpAddr>,
) {
    let _peer = peer;
    let limits = app.limits.clone();
    let conn = app.next_conn_id();
    let (tx, rx) = mpsc::channel::<Outgoing>(limits.outbox_frames);
    let kill = crate::outbox::Kill::new();
    let outbox = Outbox::new(tx, kill.clone());
    let (sink, mut stream) = socket.split();
    let (close_tx, close_rx) = oneshot::channel();
    let writer = tokio::spawn(write_loop(
        sink,
        rx,
        close_rx,
        limits.ping_interval,
        app.store().cloned(),
    ));
    let mut stopping = app.stopping.subscribe();

    let mut session = Session::new(app, conn, outbox, ip);
    // Why the connection ends, sent in the Close frame; none for a peer that left.
    let mut close: Option<Close> = None;
    // Frames read while the connection waited for its rate, in order.
    let mut pending: Pending = VecDeque::new();
    let hello_deadline = tokio::time::Instant::now() + limits.hello_timeout;
    let mut last_heard = tokio::time::Instant::now();
    let mut idle_check = tokio::time::interval(limits.ping_interval);
    loop {
        let frame = tokio::select! {
            biased;
            // First: a client that keeps sending must not outrun its own closing (a logout,
            // its account disabled, its queue overflowing).
            _ = kill.notified() => {
                let ending = kill.ending();
                close = Some(if ending.away {
                    Close::after_queue(CloseCode::Away, ending.reason)
                } else if ending.drain {
                    Close::after_queue(CloseCode::Policy, ending.reason)
                } else {
                    Close::now(CloseCode::Policy, ending.reason)
                });
                break;
            }
            frame = next_frame(&mut pending, &mut stream) => frame,
            _ = tokio::time::sleep_until(hello_deadline), if session.identity.is_none() => {
                session.error(None, ErrorCode::Unauthorized, "no hello within the time allowed");
                close = Some(Close::after_queue(CloseCode::Policy, "no hello in time"));
                break;
            }
            _ = idle_check.tick() => {
                if last_heard.elapsed() > 3 * limits.ping_interval {
                    close = Some(Close::now(CloseCode::Policy, "silent"));
                    break;
                }
                continue;
            }
            _ = stopping.wait_for(|&stopping| stopping) => {
                close = Some(Close::after_queue(CloseCode::Away, "the server is stopping"));
                break;
            }
        };
        last_heard = tokio::time::Instant::now();
        let message = match frame {
            Some(Ok(message)) => message,
            Some(Err(error)) => {
                close = close_for(error);
                break;
            }
            None => break,
        };
        let text = match message {
            Message::Text(text) => text,
            Message::Binary(_) => Utf8Bytes::from_static(""),
            Message::Ping(_) | Message::Pong(_) => continue,
            Message::Close(_) => break,
        };
        // Over its rate, a connection is read no faster than the rate: the message waits. A
        // client that goes on sending meanwhile, more than a whole burst ahead of what it may
        // send, is closed: a player or a bot waits for answers, only a flood runs ahead.
        if !session.throttle(&mut pending, &mut stream).await {
            close = Some(Close::after_queue(CloseCode::Policy, "too many messages"));
            break;
        }
        if text.is_empty() {
            session.error(None, ErrorCode::BadRequest, "send text frames with JSON");
            continue;
        }
        session.on_text(text.as_str()).await;
    }
    if let Some(identity) = &session.identity {
        metrics::gauge!("hakem_connections", "kind" => kind_label(identity.kind)).decrement(1.0);
    }
    session.leave_all().await;
    let (app, ip) = (session.app.clone(), session.ip);
    drop(session);
    if let Some(close) = close {
        if close.code == CloseCode::Policy {
            if let Some(ip) = ip {
                app.guard.refused(crate::guard::Refusal::Closed, ip);
            }
        }
        let _ = close_tx.send(close);
    }
    // Let the writer send what is queued and a Close frame while the peer's unread frames are
    // drained: closing a socket with unread input resets it, and the peer would lose our last
    // frames (a `rate_limited` error, say).
    let drain = async { while let Some(Ok(_)) = stream.next().await {} };
    let _ = tokio::time::timeout(Duration::from_secs(2), async {
        let _ = tokio::join!(writer, drain);
    })
    .await;
}

type WsStream = futures_util::stream::SplitStream<WebSocket>;
type Pending = VecDeque<Option<Result<Message, axum::Error>>>;

/// The next frame: one read while the connection waited for its rate, or a new one.
async fn next_frame(
    pending: &mut Pending,
    stream: &mut WsStream,
) -> Option<Result<Message, axum::Error>> {
    match pending.pop_front() {
        Some(frame) => frame,
        None => stream.next().await,
    }
}

/// Writes what is queued for the connection: frames as they come (several at once when they
/// queue up), and stored events read page by page as the socket takes them. Idle sockets are
/// pinged so that dead peers are noticed.
async fn write_loop(
    mut sink: futures_util::stream::SplitSink<WebSocket, Message>,
    mut rx: mpsc::Receiver<Outgoing>,
    mut close_rx: oneshot::Receiver<Close>,
    ping_every: Duration,
    store: Option<Store>,
) {
    let mut ping = tokio::time::interval_at(tokio::time::Instant::now() + ping_every, ping_every);
    let mut closing = None;
    'outer: loop {
        let item = tokio::select! {
            biased;
            item = rx.recv() => match item {
                Some(item) => item,
                None => break,
            },
            close = &mut close_rx, if closing.is_none() => match close {
                Ok(close) => {
                    closing = Some(close);
                    if close.drain {
                        // Send what is already queued first: the error that explains the close.
                        rx.close();
                        continue;
                    }
                    break;
                }
                // The session ended without a reason to give: a plain close.
                Err(_) => break,
            },
            _ = ping.tick() => {
                if sink.send(Message::Ping(Default::default())).await.is_err() {
                    break;
                }
                continue;
            }
        };
        let mut next = Some(item);
        let mut burst = 0;
        while let Some(item) = next.take() {
            match item {
                Outgoing::Frame(frame) => {
                    if sink.feed(Message::Text(frame)).await.is_err() {
                        break 'outer;
                    }
                    burst += 1;
                }
                Outgoing::Replay {
                    match_id,
                    from,
                    to,
                    boards,
                } => {
                    if !replay(&mut sink, store.as_ref(), &match_id, from, to, boards).await {
                        break 'outer;
                    }
                }
            }
            if burst < WRITE_BURST {
                next = rx.try_recv().ok();
            }
        }
        if sink.flush().await.is_err() {
            break;
        }
    }
    if closing.is_none() {
        closing = close_rx.try_recv().ok();
    }
    if let Some(close) = closing {
        let frame = CloseFrame {
            code: close.code as u16,
            reason: close.reason.into(),
        };
        let _ = tokio::time::timeout(
            Duration::from_secs(1),
            sink.send(Message::Close(Some(frame))),
        )
        .await;
    }
    let _ = sink.close().await;
}

/// The status codes hakem closes a WebSocket with (RFC 6455, section 7.4.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u16)]
enum CloseCode {
    /// The server is stopping.
    Away = 1001,
    /// The peer broke the WebSocket protocol.
    Protocol = 1002,
    /// A text frame that is not UTF-8.
    InvalidData = 1007,
    /// A limit: flooding, not reading, not saying hello.
    Policy = 1008,
    /// A frame bigger than the socket reads.
    TooBig = 1009,
}

/// Why the server closes a connection.
#[derive(Clone, Copy, Debug)]
struct Close {
    code: CloseCode,
    reason: &'static str,
    /// Send the frames already queued before the Close frame.
    drain: bool,
}

impl Close {
    fn now(code: CloseCode, reason: &'static str) -> Close {
        Close {
            code,
            reason,
            drain: false,
        }
    }

    fn after_queue(code: CloseCode, reason: &'static str) -> Close {
        Close {
            code,
            reason,
            drain: true,
        }
    }
}

/// The Close frame for a connection whose socket failed: a protocol violation gets its code;
/// a peer that vanished gets none.
fn close_for(error: axum::Error) -> Option<Close> {
    let error = error.into_inner();
    let error = error.downcast_ref::<tungstenite::Error>()?;
    use tungstenite::error::{Error, ProtocolError};
    let close = match error {
        Error::Utf8(_) => Close::now(CloseCode::InvalidData, "text frames must be UTF-8"),
        Error::Capacity(_) => Close::now(CloseCode::TooBig, "frame too large"),
        Error::Protocol(ProtocolError::ResetWithoutClosingHandshake) => return None,
        Error::Protocol(_) => Close::now(CloseCode::Protocol, "WebSocket protocol error"),
        _ => return None,
    };
    Some(close)
}

/// Sends the stored events `from..=to` of a match, a page at a time; false when the socket
/// failed. A store that fails ends the connection: the client reconnects and asks again,
/// rather than miss events.
async fn replay(
    sink: &mut futures_util::stream::SplitSink<WebSocket, Message>,
    store: Option<&Store>,
    match_id: &str,
    mut from: u64,
    to: u64,
    boards: bool,
) -> bool {
    let Some(store) = store else {
        return true;
    };
    while from <= to {
        let page = match store.frames(match_id, from, to, REPLAY_PAGE).await {
            Ok(page) => page,
            Err(e) => {
                tracing::error!(%match_id, error = %e, "stored events not read for a replay");
                return false;
            }
        };
        if page.is_empty() {
            break;
        }
        from += page.len() as u64;
        for frame in page {
            let frame = if boards {
                frame.into()
            } else {
                crate::outbox::without_board(&frame)
            };
            if sink.feed(Message::Text(frame)).await.is_err() {
                return false;
            }
        }
        if sink.flush().await.is_err() {
            return false;
        }
    }
    true
}

/// A match the connection is in: its room, or `None` for a match read from the store; and
/// how it entered, to enter again if the room has to be started anew.
struct Joined {
    room: Option<RoomHandle>,
    credential: Credential,
    legal_moves: bool,
}

fn kind_label(kind: IdentityKind) -> &'static str {
    match kind {
        IdentityKind::Guest => "guest",
        IdentityKind::Player => "player",
        IdentityKind::Bot => "bot",
        IdentityKind::Arbiter => "arbiter",
        IdentityKind::Organizer => "organizer",
    }
}

/// Tournaments one connection may follow at once.
const MAX_WATCHED_TOURNAMENTS: usize = 16;

struct Session {
    conn: ConnId,
    app: Arc<App>,
    outbox: Outbox,
    identity: Option<Identity>,
    /// A token given in `hello`, used by a `join` that names none.
    token: Option<String>,
    /// The account this connection speaks for, if its `hello` token was an account's.
    account: Option<String>,
    /// The digest of the session token `hello` gave, if it was a session's (for `logout`).
    session: Option<String>,
    /// The task that forwards the lobby's changes, after `watch_lobby`.
    lobby: Option<tokio::task::AbortHandle>,
    joined: HashMap<String, Joined>,
    /// Tournaments followed with `watch_tournament`: the task that forwards each new view.
    watching: HashMap<String, tokio::task::AbortHandle>,
    /// Extensions granted at `hello`.
    batch: bool,
    boards: bool,
    rematch: bool,
    chat: bool,
    bucket: TokenBucket,
    /// The last message had to wait for the rate limits.
    throttled: bool,
    /// The address the connection came from, counted by the per-address limits.
    ip: Option<std::net::IpAddr>,
    /// What `hello` said (a cluster's node that runs the tournaments hears it again).
    hello_token: Option<String>,
    features: Vec<String>,
    /// A session of a connection at another node of a cluster, on the node that runs the
    /// tournaments: its `welcome` was sent by that node already.
    remote: bool,
    /// Frames of this connection went to the node that runs the tournaments.
    routed: bool,
}

impl Session {
    fn new(app: Arc<App>, conn: ConnId, outbox: Outbox, ip: Option<std::net::IpAddr>) -> Session {
        let limits = app.limits.clone();
        Session {
            conn,
            app,
            outbox,
            identity: None,
            token: None,
            account: None,
            session: None,
            lobby: None,
            joined: HashMap::new(),
            watching: HashMap::new(),
            batch: false,
            boards: false,
            rematch: false,
            chat: false,
            bucket: TokenBucket::new(
                limits.rate_per_sec,
                limits.rate_burst,
                tokio::time::Instant::now().into_std(),
            ),
            throttled: false,
            ip,
            hello_token: None,
            features: Vec::new(),
            remote: false,
            routed: false,
        }
    }

    /// Waits until the connection's and its address's rates allow one more message, reading
    /// what the client sends meanwhile into `pending`; false when that is more than a burst.
    /// The first wait of a run is answered `rate_limited`, as a warning (the message is then
    /// served).
    async fn throttle(&mut self, pending: &mut Pending, stream: &mut WsStream) -> bool {
        let mut waited = false;
        let mut ended = pending
            .back()
            .is_some_and(|frame| !matches!(frame, Some(Ok(_))));
        // Bounded: a wait is at most a token's time; many connections of one address may
        // take the token first, and then this one waits again.
        for _ in 0..1_000 {
            let wait = match self.bucket.take(tokio::time::Instant::now().into_std()) {
                Some(wait) => Some(wait),
                None => self
                    .ip
                    .and_then(|ip| self.app.guard.message(ip).err())
                    .inspect(|_| self.bucket.give_back()),
            };
            let Some(wait) = wait else { break };
            if !waited && !self.throttled {
                self.error(
                    None,
                    ErrorCode::RateLimited,
                    "too many messages: slow down (they are read at the allowed rate)",
                );
                if let Some(ip) = self.ip {
                    self.app.guard.refused(crate::guard::Refusal::Messages, ip);
                }
            }
            waited = true;
            let sleep = tokio::time::sleep(wait.max(Duration::from_millis(1)));
            tokio::pin!(sleep);
            loop {
                tokio::select! {
                    _ = &mut sleep => break,
                    frame = stream.next(), if !ended => {
                        ended = !matches!(frame, Some(Ok(_)));
                        pending.push_back(frame);
                        if pending.len() as f64 > self.bucket.burst() {
                            return false;
                        }
                    }
                }
            }
        }
        self.throttled = waited;
        true
    }

    fn send(&self, message: &ServerMessage) {
        self.outbox.send_message(message);
    }

    fn error(&self, re: Option<RequestId>, code: ErrorCode, message: impl Into<String>) {
        self.refuse(re, Failure::new(code, message));
    }

    async fn on_text(&mut self, text: &str) {
        let received = tokio::time::Instant::now();
        if text.len() > MAX_FRAME_BYTES {
            self.error(
                None,
                ErrorCode::TooLarge,
                format!("a frame is at most {MAX_FRAME_BYTES} bytes"),
            );
            return;
        }
        let frame = match parse_client_frame(text) {
            Ok(frame) => frame,
            Err((re, message)) => {
                self.error(re, ErrorCode::BadRequest, message);
                return;
            }
        };
        let re = frame.id;
        if self.identity.is_some()
            && is_tournament_message(&frame.message)
            && Box::pin(self.tournaments_elsewhere(re.clone(), text)).await
        {
            return;
        }
        match frame.message {
            ClientMessage::Hello {
                protocol,
                token,
                features,
                ..
            } => self.hello(re, protocol, token, &features),
            _ if self.identity.is_none() => {
                self.error(re, ErrorCode::BadRequest, "the first message must be hello")
            }
            ClientMessage::Ping => self.send(&ServerMessage::Pong {
                re,
                server_time_ms: crate::wall_clock_ms(),
            }),
            ClientMessage::ListMatches {
                status,
                limit,
                before,
                player,
            } => match match (player, status) {
                (Some(_), Some(_)) => Err("list a player's matches without a status".to_string()),
                (Some(player), None) => {
                    Box::pin(self.app.matches_of(&player, limit, before.as_deref())).await
                }
                (None, status) => {
                    self.app
                        .list(status.unwrap_or_default(), limit, before.as_deref())
                        .await
                }
            } {
                Ok(page) => self.send(&ServerMessage::Matches {
                    re,
                    matches: page.matches,
                    next: page.next,
                }),
                Err(message) => self.error(re, ErrorCode::BadRequest, message),
            },
            ClientMessage::CreateMatch(create) => self.create(re, create).await,
            ClientMessage::CreateAccount { name, kind } => {
                if !self.is_organizer() {
                    self.error(
                        re,
                        ErrorCode::Forbidden,
                        "only the organizer creates accounts",
                    );
                    return;
                }
                match self.app.create_account(&name, kind).await {
                    Ok(token) => self.send(&ServerMessage::AccountCreated {
                        re,
                        name,
                        kind,
                        token,
                    }),
                    Err(crate::CreateError::Invalid(message)) => {
                        self.error(re, ErrorCode::BadRequest, message)
                    }
                    Err(crate::CreateError::Store(message)) => {
                        self.error(re, ErrorCode::Internal, message)
                    }
                }
            }
            ClientMessage::Register { name, password } => {
                if self.account.is_some() || self.is_organizer() {
                    return self.error(
                        re,
                        ErrorCode::BadRequest,
                        "this connection already speaks for an account",
                    );
                }
                match crate::logins::register(&self.app, self.ip, &name, password.0).await {
                    Ok((status, token)) => self.send(&ServerMessage::Registered {
                        re,
                        name,
                        status,
                        token,
                    }),
                    Err(e) => self.error(re, e.code, e.message),
                }
            }
            ClientMessage::Login { name, password } => {
                match crate::logins::login(&self.app, self.ip, &name, password.0).await {
                    Ok(token) => self.send(&ServerMessage::LoggedIn { re, name, token }),
                    Err(e) => self.error(re, e.code, e.message),
                }
            }
            ClientMessage::Logout => {
                let Some(session) = self.session.clone() else {
                    return self.error(
                        re,
                        ErrorCode::BadRequest,
                        "this connection did not say hello with a session token",
                    );
                };
                match crate::logins::logout(&self.app, &session).await {
                    Ok(()) => self.ack(re),
                    Err(e) => self.error(re, e.code, e.message),
                }
            }
            ClientMessage::ChangePassword {
                password,
                new_password,
            } => {
                let (Some(name), Some(session)) = (self.account.clone(), self.session.clone())
                else {
                    return self.error(
                        re,
                        ErrorCode::BadRequest,
                        "log in first: the password is changed by a session of the account",
                    );
                };
                let changed = crate::logins::change_password(
                    &self.app,
                    &name,
                    &session,
                    password.0,
                    new_password.0,
                )
                .await;
                match changed {
                    Ok(()) => self.ack(re),
                    Err(e) => self.error(re, e.code, e.message),
                }
            }
            ClientMessage::SetAccountStatus { name, status } => {
                if !self.is_organizer() {
                    return self.error(
                        re,
                        ErrorCode::Forbidden,
                        "only the organizer approves or disables accounts",
                    );
                }
                match crate::logins::set_status(&self.app, &name, status).await {
                    Ok(()) => self.ack(re),
                    Err(e) => self.error(re, e.code, e.message),
                }
            }
            ClientMessage::Seek(seek) => {
                let Some((name, kind)) = self.account_kind() else {
                    return self.error(re, ErrorCode::Forbidden, "seeks are for accounts: log in");
                };
                if let Some(to) = seek
                    .to
                    .as_deref()
                    .filter(|to| !self.app.accounts.exists(to))
                {
                    return self.error(re, ErrorCode::BadRequest, format!("no account {to:?}"));
                }
                match self
                    .app
                    .lobby
                    .post(&name, kind, seek, crate::wall_clock_ms())
                {
                    Ok(seek) => self.send(&ServerMessage::SeekPosted { re, seek }),
                    Err((code, message)) => self.error(re, code, message),
                }
            }
            ClientMessage::CancelSeek { seek } => {
                let Some((name, _)) = self.account_kind() else {
                    return self.error(re, ErrorCode::Forbidden, "seeks are for accounts: log in");
                };
                match self.app.lobby.cancel(&name, &seek) {
                    Ok(()) => self.ack(re),
                    Err((code, message)) => self.error(re, code, message),
                }
            }
            ClientMessage::AcceptSeek { seek } => self.accept_seek(re, &seek).await,
            ClientMessage::OfferRematch { match_id } => self.offer_rematch(re, match_id).await,
            ClientMessage::WatchLobby => self.watch_lobby(re),
            ClientMessage::UnwatchLobby => match self.lobby.take() {
                Some(task) => {
                    task.abort();
                    self.ack(re);
                }
                None => self.error(re, ErrorCode::BadRequest, "not watching the lobby"),
            },
            ClientMessage::CreateTournament(create) => {
                if !self.is_organizer() {
                    self.error(
                        re,
                        ErrorCode::Forbidden,
                        "only the organizer creates tournaments",
                    );
                    return;
                }
                match tournament::create(&self.app, create).await {
                    Ok(created) => self.send(&ServerMessage::TournamentCreated {
                        re,
                        tournament: created.id,
                        arbiter_token: created.arbiter_token,
                        players: created.players,
                    }),
                    Err(failure) => self.error(re, failure.code, failure.message),
                }
            }
            ClientMessage::AddPlayers {
                tournament: id,
                players,
                arbiter_token,
            } => {
                let caller = self.caller(arbiter_token);
                match tournament::add_players(&self.app, &id, caller, players).await {
                    Ok(players) => self.send(&ServerMessage::PlayersAdded {
                        re,
                        tournament: id,
                        players,
                    }),
                    Err(failure) => self.error(re, failure.code, failure.message),
                }
            }
            ClientMessage::StartTournament {
                tournament: id,
                colour_lot,
                arbiter_token,
            } => {
                let caller = self.caller(arbiter_token);
                let view = tournament::start(&self.app, &id, caller, colour_lot).await;
                self.send_tournament(re, view);
            }
            ClientMessage::PairNext {
                tournament: id,
                arbiter_token,
                pairing,
            } => {
                let caller = self.caller(arbiter_token);
                let view = tournament::pair_next(&self.app, &id, caller, pairing).await;
                self.send_tournament(re, view);
            }
            ClientMessage::SetResult {
                tournament: id,
                round,
                board,
                result,
                arbiter_token,
            } => {
                let caller = self.caller(arbiter_token);
                let view =
                    tournament::set_result(&self.app, &id, caller, round, board, &result).await;
                self.send_tournament(re, view);
            }
            ClientMessage::AddAssistant {
                tournament: id,
                name,
                boards,
                arbiter_token,
            } => {
                let caller = self.caller(arbiter_token);
                match tournament::add_assistant(&self.app, &id, caller, name.clone(), boards).await
                {
                    Ok(added) => self.send(&ServerMessage::AssistantAdded {
                        re,
                        tournament: id,
                        name: added.name,
                        boards: added.boards,
                        token: added.token,
                    }),
                    Err(failure) => self.error(re, failure.code, failure.message),
                }
            }
            ClientMessage::PreviewPairing {
                tournament: id,
                arbiter_token,
            } => {
                let caller = self.caller(arbiter_token);
                match tournament::preview(&self.app, &id, caller).await {
                    Ok(preview) => self.send(&ServerMessage::PairingPreview {
                        re,
                        tournament: id,
                        preview: Box::new(preview),
                    }),
                    Err(failure) => self.refuse(re, failure),
                }
            }
            ClientMessage::Withdraw {
                tournament: id,
                player,
                arbiter_token,
            } => {
                let caller = self.caller(arbiter_token);
                let view = tournament::withdraw(&self.app, &id, caller, player).await;
                self.send_tournament(re, view);
            }
            ClientMessage::RequestBye {
                tournament: id,
                player,
                round,
                arbiter_token,
            } => {
                let caller = self.caller(arbiter_token);
                let view = tournament::request_bye(&self.app, &id, caller, player, round).await;
                self.send_tournament(re, view);
            }
            ClientMessage::Forfeit {
                tournament: id,
                player,
                round,
                double,
                arbiter_token,
            } => {
                let caller = self.caller(arbiter_token);
                let view = tournament::forfeit(&self.app, &id, caller, player, round, double).await;
                self.send_tournament(re, view);
            }
            ClientMessage::GetTournament { tournament: id } => {
                let view = self.app.tournaments.view(&id);
                self.send_tournament(re, view);
            }
            ClientMessage::WatchTournament { tournament: id } => self.watch_tournament(re, id),
            ClientMessage::UnwatchTournament { tournament: id } => {
                match self.watching.remove(&id) {
                    Some(task) => {
                        task.abort();
                        self.ack(re);
                    }
                    None => self.error(re, ErrorCode::BadRequest, "not watching that tournament"),
                }
            }
            ClientMessage::GetPlayer { name } => {
                // Boxed, as the other rare reads: the connection's future stays small.
                match Box::pin(crate::ratings::Ratings::profile(&self.app, &name)).await {
                    Some(Ok(profile)) => self.send(&ServerMessage::Player {
                        re,
                        profile: Box::new(profile),
                    }),
                    Some(Err(e)) => {
                        tracing::error!(error = %e, "a player's page was not read");
                        self.error(
                            re,
                            ErrorCode::Internal,
                            "the player's page could not be read",
                        )
                    }
                    None => self.error(
                        re,
                        ErrorCode::UnknownAccount,
                        format!("no account {:?}", name.chars().take(64).collect::<String>()),
                    ),
                }
            }
            ClientMessage::ExportTrf { tournament: id } => match self.app.tournaments.trf(&id) {
                Ok(trf) => self.send(&ServerMessage::Trf {
                    re,
                    tournament: id,
                    trf,
                }),
                Err(failure) => self.error(re, failure.code, failure.message),
            },
            ClientMessage::Join {
                match_id,
                seat_token,
                arbiter_token,
                since_seq,
                legal_moves,
                history,
            } => {
                let credential = match (seat_token, arbiter_token, self.token.clone()) {
                    (Some(token), _, _) => Credential::Seat(token),
                    (None, Some(token), _) => Credential::Arbiter(token),
                    (None, None, Some(token)) => Credential::Seat(token),
                    (None, None, None) => {
                        self.error(
                            re,
                            ErrorCode::BadRequest,
                            "join needs a seat_token or an arbiter_token (to spectate, watch)",
                        );
                        return;
                    }
                };
                let entry = Entry {
                    credential,
                    since_seq,
                    history,
                    legal_moves,
                };
                self.enter(re, match_id, entry).await
            }
            ClientMessage::Watch {
                match_id,
                since_seq,
                history,
            } => {
                let entry = Entry {
                    credential: Credential::Spectator,
                    since_seq,
                    history,
                    legal_moves: false,
                };
                self.enter(re, match_id, entry).await
            }
            ClientMessage::Leave { match_id } => match self.joined.remove(&match_id) {
                Some(joined) => {
                    if let Some(room) = joined.room {
                        let _ = room.leave(self.conn).await;
                    }
                    self.send(&ServerMessage::Ack {
                        re,
                        match_id: Some(match_id),
                        seq: None,
                    });
                }
                None => self.error(re, ErrorCode::BadRequest, "not in that match"),
            },
            message => {
                let Some(match_id) = message.match_id().map(str::to_string) else {
                    self.error(re, ErrorCode::BadRequest, "unexpected message");
                    return;
                };
                let Some(action) = action_of(message, || self.speaker()) else {
                    self.error(re, ErrorCode::BadRequest, "unexpected message");
                    return;
                };
                self.act(re, match_id, action, text, received).await;
            }
        }
    }

    /// In a cluster whose tournaments another node runs: sends the frame there (its answers
    /// come back through this connection's queue) and says true.
    async fn tournaments_elsewhere(&mut self, re: Option<RequestId>, text: &str) -> bool {
        let Some(cluster) = self.app.cluster().cloned() else {
            return false;
        };
        use crate::cluster::Holder;
        match cluster.tournaments_holder_soon().await {
            Holder::Here => false,
            Holder::Nobody => {
                self.error(
                    re,
                    ErrorCode::Internal,
                    "no node runs the tournaments at this moment: try again in a few seconds",
                );
                true
            }
            Holder::Elsewhere(incarnation) => {
                self.routed = true;
                let frame = crate::cluster::route::SessionFrame {
                    conn: self.conn,
                    outbox: self.outbox.clone(),
                    token: self.hello_token.clone(),
                    features: self.features.clone(),
                    frame: text.to_string(),
                };
                if !crate::cluster::route::send_session_frame(&cluster, &incarnation, frame).await {
                    self.error(
                        re,
                        ErrorCode::Internal,
                        "the node that runs the tournaments did not answer: try again",
                    );
                }
                true
            }
        }
    }

    fn hello(
        &mut self,
        re: Option<RequestId>,
        protocol: u32,
        token: Option<String>,
        features: &[String],
    ) {
        if protocol != PROTOCOL_VERSION {
            self.error(
                re,
                ErrorCode::UnsupportedProtocol,
                format!("this server speaks protocol {PROTOCOL_VERSION}"),
            );
            return;
        }
        if self.identity.is_some() {
            self.error(re, ErrorCode::BadRequest, "hello was already said");
            return;
        }
        let token = token.filter(|t| !t.is_empty());
        self.hello_token = token.clone();
        self.features = features.to_vec();
        let account = token.as_deref().and_then(|t| self.app.accounts.by_token(t));
        let (kind, name) = match (&token, &account) {
            (None, _) => (IdentityKind::Guest, String::new()),
            (Some(token), _) if same_token(&self.app.admin_token, token) => {
                (IdentityKind::Organizer, String::new())
            }
            (Some(_), Some(holder)) if holder.kind == AccountKind::Bot => {
                (IdentityKind::Bot, holder.name.clone())
            }
            (Some(_), Some(holder)) => (IdentityKind::Player, holder.name.clone()),
            // Other tokens are seat or arbiter tokens, checked by the room on `join`: until
            // then the connection is a guest.
            (Some(_), None) => (IdentityKind::Guest, String::new()),
        };
        let granted: Vec<Feature> = features.iter().filter_map(|f| Feature::parse(f)).collect();
        self.batch = granted.contains(&Feature::Batch);
        self.boards = granted.contains(&Feature::Boards);
        self.rematch = granted.contains(&Feature::Rematch);
        self.chat = granted.contains(&Feature::Chat);
        let identity = Identity { kind, name };
        if self.identity.is_none() && !self.remote {
            metrics::gauge!("hakem_connections", "kind" => kind_label(kind)).increment(1.0);
        }
        self.identity = Some(identity.clone());
        self.token = token.filter(|_| kind == IdentityKind::Guest && account.is_none());
        if !self.remote {
            self.send(&ServerMessage::Welcome {
                protocol: PROTOCOL_VERSION,
                session: format!("s{}", self.conn),
                identity,
                server_time_ms: crate::wall_clock_ms(),
                features: granted.iter().map(|f| f.as_str().to_string()).collect(),
                rate: Some(hakem_protocol::MessageRate {
                    per_second: self.app.limits.rate_per_sec,
                    burst: self.app.limits.rate_burst,
                }),
            });
        }
        if let Some(holder) = account {
            let app = self.app.clone();
            self.app.accounts.attach(
                &holder.name,
                self.conn,
                self.outbox.clone(),
                holder.session.clone(),
                |id| app.is_live(id),
            );
            // Ended (logged out, disabled) between the lookup and the attach: closed now.
            if self
                .app
                .accounts
                .speaks_for(&holder.name, holder.session.as_deref())
                .is_none()
            {
                self.outbox.close("the session ended");
            }
            self.account = Some(holder.name);
            self.session = holder.session;
        }
    }

    /// The account this connection speaks for, with its kind, while it still may: active,
    /// and the session it said `hello` with not ended.
    fn account_kind(&self) -> Option<(String, AccountKind)> {
        let name = self.account.clone()?;
        let kind = self
            .app
            .accounts
            .speaks_for(&name, self.session.as_deref())?;
        Some((name, kind))
    }

    /// Who this connection is in a match's chat.
    fn speaker(&self) -> crate::room::Speaker {
        crate::room::Speaker {
            account: self.account_kind().map(|(name, _)| name),
            organizer: self.is_organizer(),
        }
    }

    /// Takes a seek and creates its match, the seats drawn by lot; both accounts are told
    /// `your_match`.
    async fn accept_seek(&mut self, re: Option<RequestId>, id: &str) {
        let Some((name, kind)) = self.account_kind() else {
            return self.error(re, ErrorCode::Forbidden, "seeks are for accounts: log in");
        };
        let seek = match self.app.lobby.take(&name, kind, id) {
            Ok(seek) => seek,
            Err((code, message)) => return self.error(re, code, message),
        };
        let mut create = CreateMatch::new(&seek.game);
        create.variant = Some(seek.variant.clone());
        create.sets = seek.sets;
        create.clock = seek.clock;
        create.rated = seek.rated;
        let (poster, taker) = (Some(seek.account.clone()), Some(name));
        create.accounts = if crate::tokens::coin() {
            hakem_protocol::PerSeat::new(poster, taker)
        } else {
            hakem_protocol::PerSeat::new(taker, poster)
        };
        match self.open_counted(&re, create).await {
            Some(created) => {
                self.app.lobby.matched(&seek, &created.match_id);
                self.send(&ServerMessage::Ack {
                    re,
                    match_id: Some(created.match_id),
                    seq: None,
                });
            }
            None => self.app.lobby.give_back(&seek),
        }
    }

    /// A seat's rematch offer; the second one creates the match (the room then tells both
    /// seats their new places).
    async fn offer_rematch(&mut self, re: Option<RequestId>, match_id: String) {
        let Some(room) = self.joined.get(&match_id).and_then(|j| j.room.clone()) else {
            return self.error(
                re,
                ErrorCode::BadRequest,
                "join the match first, with your seat's token",
            );
        };
        let Some(room) = room.local().cloned() else {
            return self.error(
                re,
                ErrorCode::BadRequest,
                "a rematch is offered at the node that runs the match: connect to it",
            );
        };
        let ack = |id: String| ServerMessage::Ack {
            re: re.clone(),
            match_id: Some(id),
            seq: None,
        };
        match room.offer_rematch(self.conn).await {
            Err(message) => self.error(re, ErrorCode::BadRequest, message),
            Ok(crate::room::RematchStep::Offered) => self.send(&ack(match_id)),
            Ok(crate::room::RematchStep::Made {
                match_id: new_match,
                seat_token,
                seat,
            }) => self.send(&ServerMessage::Rematch {
                re,
                match_id,
                new_match,
                seat,
                seat_token,
            }),
            Ok(crate::room::RematchStep::Create(create)) => {
                match self.open_counted(&re, *create).await {
                    Some(created) => {
                        let made = Some((created.match_id.clone(), created.seat_tokens));
                        let _ = room.rematch_made(made).await;
                        self.send(&ack(created.match_id));
                    }
                    None => {
                        let _ = room.rematch_made(None).await;
                    }
                }
            }
        }
    }

    /// Sends the open seeks, then each change (the whole list again when this connection
    /// fell too far behind).
    fn watch_lobby(&mut self, re: Option<RequestId>) {
        let viewer = self.account.clone();
        let (seeks, mut changes) = self.app.lobby.watch(viewer.as_deref());
        let mut shown: std::collections::HashSet<String> =
            seeks.iter().map(|s| s.seek.clone()).collect();
        self.send(&ServerMessage::Lobby { re, seeks });
        let outbox = self.outbox.clone();
        let app = self.app.clone();
        let task = tokio::spawn(async move {
            loop {
                // Challenges are seen by their two accounts only.
                let message = match changes.recv().await {
                    Ok(crate::lobby::Change::Added(seek)) => {
                        if !seek.seen_by(viewer.as_deref()) {
                            continue;
                        }
                        shown.insert(seek.seek.clone());
                        ServerMessage::SeekAdded { seek }
                    }
                    Ok(crate::lobby::Change::Removed { seek, match_id }) => {
                        if !shown.remove(&seek) {
                            continue;
                        }
                        ServerMessage::SeekRemoved { seek, match_id }
                    }
                    Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {
                        let seeks = app.lobby.snapshot(viewer.as_deref());
                        shown = seeks.iter().map(|s| s.seek.clone()).collect();
                        ServerMessage::Lobby { re: None, seeks }
                    }
                    Err(tokio::sync::broadcast::error::RecvError::Closed) => break,
                };
                if !outbox.send_message(&message) {
                    break;
                }
            }
        });
        if let Some(old) = self.lobby.replace(task.abort_handle()) {
            old.abort();
        }
    }

    /// Says a command about no match was done.
    fn ack(&self, re: Option<RequestId>) {
        self.send(&ServerMessage::Ack {
            re,
            match_id: None,
            seq: None,
        });
    }

    fn is_organizer(&self) -> bool {
        self.identity.as_ref().map(|i| i.kind) == Some(IdentityKind::Organizer)
    }

    fn caller(&self, arbiter_token: Option<String>) -> Caller {
        Caller {
            organizer: self.is_organizer(),
            account: self.account_kind().map(|(name, _)| name),
            arbiter_token,
        }
    }

    /// Sends the tournament's view, then each new one (only the latest, however many changes a
    /// slow reader missed) until `unwatch_tournament` or the end of the connection.
    fn watch_tournament(&mut self, re: Option<RequestId>, id: String) {
        let mut views = match self.app.tournaments.watch(&id) {
            Ok(views) => views,
            Err(failure) => return self.error(re, failure.code, failure.message),
        };
        if !self.watching.contains_key(&id) && self.watching.len() >= MAX_WATCHED_TOURNAMENTS {
            return self.error(
                re,
                ErrorCode::BadRequest,
                format!("a connection watches at most {MAX_WATCHED_TOURNAMENTS} tournaments"),
            );
        }
        let now = views.borrow_and_update().view.clone();
        self.send(&ServerMessage::Tournament {
            re,
            view: Box::new(now),
        });
        let outbox = self.outbox.clone();
        let task = tokio::spawn(async move {
            while views.changed().await.is_ok() {
                let frame = views.borrow_and_update().frame.clone();
                if !outbox.send(frame) {
                    break;
                }
            }
        });
        if let Some(old) = self.watching.insert(id, task.abort_handle()) {
            old.abort();
        }
    }

    fn send_tournament(&self, re: Option<RequestId>, view: Result<TournamentView, Failure>) {
        match view {
            Ok(view) => self.send(&ServerMessage::Tournament {
                re,
                view: Box::new(view),
            }),
            Err(failure) => self.refuse(re, failure),
        }
    }

    /// A refusal, with what it carries (a tournament command's: the pairing as it is now).
    fn refuse(&self, re: Option<RequestId>, failure: Failure) {
        metrics::counter!("hakem_errors_total", "code" => failure.code.as_str()).increment(1);
        self.send(&ServerMessage::Error(ErrorReply {
            re,
            code: failure.code,
            message: failure.message,
            match_id: None,
            rule: None,
            preview: failure.preview,
        }));
    }

    /// The address whose match-creation limits this connection's new matches count against:
    /// a guest's or a player's (who may have registered themselves); the organizer's and bot
    /// accounts' count against none.
    fn creation_ip(&self) -> Option<std::net::IpAddr> {
        let kind = self.identity.as_ref().map(|i| i.kind);
        self.ip
            .filter(|_| matches!(kind, Some(IdentityKind::Guest | IdentityKind::Player)))
    }

    /// Creates a match from this connection (a `create_match`, an accepted seek, a rematch),
    /// within its address's creation limits; a refusal is said and gives `None`.
    async fn open_counted(
        &self,
        re: &Option<RequestId>,
        create: CreateMatch,
    ) -> Option<crate::Created> {
        let limited_ip = self.creation_ip();
        if let Some(ip) = limited_ip {
            let app = &self.app;
            if let Err(refusal) = app.guard.guest_create(ip, |id| app.is_waiting(id)) {
                let message = match refusal {
                    crate::guard::Refusal::Waiting => {
                        "too many matches from this address wait for their players: \
                         start or finish some first"
                    }
                    _ => "matches are created too fast from this address: wait a minute",
                };
                self.error(re.clone(), ErrorCode::RateLimited, message);
                return None;
            }
        }
        match self.app.open_match(create, None).await {
            Ok(created) => {
                if let Some(ip) = limited_ip {
                    self.app.guard.guest_created(ip, &created.match_id);
                }
                Some(created)
            }
            Err(crate::CreateError::Invalid(message)) => {
                self.error(re.clone(), ErrorCode::BadRequest, message);
                None
            }
            Err(crate::CreateError::Store(message)) => {
                self.error(re.clone(), ErrorCode::Internal, message);
                None
            }
        }
    }

    async fn create(&self, re: Option<RequestId>, create: CreateMatch) {
        // Rated matches come from the lobby, a rematch or the organizer: nobody else may put
        // two accounts' ratings at stake.
        if create.rated && !self.is_organizer() {
            return self.error(
                re,
                ErrorCode::Forbidden,
                "rated matches are made in the lobby (a seek), by a rematch, or by the organizer",
            );
        }
        if let Some(created) = self.open_counted(&re, create).await {
            self.send(&ServerMessage::MatchCreated {
                re,
                match_id: created.match_id,
                seat_tokens: created.seat_tokens,
                arbiter_token: created.arbiter_token,
            });
        }
    }

    fn unknown_match(&self, re: Option<RequestId>, match_id: &str) {
        self.send(&ServerMessage::Error(ErrorReply {
            re,
            code: ErrorCode::UnknownMatch,
            message: format!("no match {match_id:?}"),
            match_id: Some(match_id.to_string()),
            rule: None,
            preview: None,
        }));
    }

    /// Joins or watches a match: its room answers; a match only in the store is answered from
    /// there (nothing will happen in it, so no room is started to look at it).
    async fn enter(&mut self, re: Option<RequestId>, match_id: String, mut entry: Entry) {
        // An assistant arbiter's token opens the boards they look after as their arbiter.
        if let Credential::Arbiter(token) = &entry.credential {
            if let Some(real) = Box::pin(self.app.assistant_credential(&match_id, token)).await {
                entry.credential = Credential::Arbiter(real);
            }
        }
        // A room may retire between being found and being asked: then the store has it.
        for _ in 0..2 {
            let Some(found) = self.app.find(&match_id).await else {
                self.unknown_match(re, &match_id);
                return;
            };
            match found {
                Found::Live(room) => {
                    let join = Join {
                        conn: self.conn,
                        credential: entry.credential.clone(),
                        since_seq: entry.since_seq,
                        history: entry.history,
                        legal_moves: entry.legal_moves,
                        batch: self.batch,
                        boards: self.boards,
                        rematch: self.rematch,
                        chat: self.chat,
                        speaker: self.speaker(),
                        outbox: self.outbox.clone(),
                        re: re.clone(),
                    };
                    if room.join(join).await.is_ok() {
                        self.joined.insert(
                            match_id,
                            Joined {
                                room: Some(room),
                                credential: entry.credential,
                                legal_moves: entry.legal_moves,
                            },
                        );
                        return;
                    }
                }
                Found::Archived(archived) => {
                    let Some(role) = role_of(&entry.credential, &archived.tokens) else {
                        let message = match entry.credential {
                            Credential::Arbiter(_) => "wrong arbiter token",
                            _ => "wrong seat token",
                        };
                        self.send(&ServerMessage::Error(ErrorReply {
                            re,
                            code: ErrorCode::Unauthorized,
                            message: message.into(),
                            match_id: Some(match_id),
                            rule: None,
                            preview: None,
                        }));
                        return;
                    };
                    let mut state = archived.state();
                    state.you = Some(role.as_str().to_string());
                    // Claims are between the players and the arbiter, as in a live room.
                    let shown_claims = role != Role::Spectator;
                    if shown_claims {
                        state.claims = Some(archived.claims());
                    }
                    if entry.legal_moves {
                        state.position.legal_moves = Some(Vec::new());
                    }
                    let seq = state.seq;
                    let id: Arc<str> = Arc::from(match_id.as_str());
                    match entry.since_seq {
                        Some(since) if since <= seq => {
                            self.outbox.replay(id, since + 1, seq, self.boards);
                        }
                        None if entry.history => {
                            let config = crate::room::config_of(&archived.spec);
                            if let Ok(config) = config {
                                let mut first = hakem_round::Round::new(config).state(
                                    &match_id,
                                    0,
                                    0,
                                    crate::wall_clock_ms(),
                                );
                                first.you = state.you.clone();
                                if shown_claims {
                                    first.claims = Some(Vec::new());
                                }
                                self.send(&ServerMessage::State(Box::new(first)));
                            }
                            self.outbox.replay(id, 1, seq, self.boards);
                        }
                        _ => self.send(&ServerMessage::State(Box::new(state))),
                    }
                    if self.chat {
                        Box::pin(self.send_archived_chat(&archived, role)).await;
                    }
                    if re.is_some() {
                        self.send(&ServerMessage::Ack {
                            re,
                            match_id: Some(match_id.clone()),
                            seq: Some(seq),
                        });
                    }
                    self.joined.insert(
                        match_id,
                        Joined {
                            room: None,
                            credential: entry.credential,
                            legal_moves: entry.legal_moves,
                        },
                    );
                    return;
                }
            }
        }
        self.error(re, ErrorCode::Internal, "the match room has stopped");
    }

    /// The chat of a match only in the store, as it was left, for a connection that reads it.
    async fn send_archived_chat(&self, archived: &crate::archive::Archived, role: Role) {
        use crate::room::chat;
        let Some(store) = self.app.store() else {
            return;
        };
        let stored = match store.chat(archived.id(), chat::RECENT as u32).await {
            Ok(stored) => stored,
            Err(e) => {
                tracing::error!(match_id = %archived.id(), error = %e, "chat not read");
                return;
            }
        };
        let mut restored = chat::restored(Some(stored), archived.spec.tournament.is_none());
        // Its room is gone, and the chat with it: it is read, no longer written.
        restored.settings.enabled = false;
        let speaker = self.speaker();
        let reader = chat::Someone {
            role,
            speaker: &speaker,
        };
        let game = chat::Match {
            players: &archived.spec.players,
            accounts: &archived.spec.accounts,
        };
        self.send(&restored.history(archived.id(), reader, game));
    }

    /// A player's or arbiter's action. A match whose room has retired gets its room back (an
    /// action may change it: a claim against the last move), and the connection is put back
    /// in it as it was; but its chat closed with its room.
    async fn act(
        &mut self,
        re: Option<RequestId>,
        match_id: String,
        action: Action,
        frame: &str,
        received: tokio::time::Instant,
    ) {
        for _ in 0..2 {
            let room = match self.joined.get(&match_id) {
                Some(Joined {
                    room: Some(room), ..
                }) => room.clone(),
                Some(_) if action.is_chat_message() => {
                    self.send(&ServerMessage::Error(ErrorReply {
                        re,
                        code: ErrorCode::Forbidden,
                        message: "the match is over and its chat is closed".into(),
                        match_id: Some(match_id),
                        rule: None,
                        preview: None,
                    }));
                    return;
                }
                Some(joined) => {
                    let credential = joined.credential.clone();
                    let legal_moves = joined.legal_moves;
                    let Some(room) = self.app.revive(&match_id).await else {
                        self.unknown_match(re, &match_id);
                        return;
                    };
                    let Some(seen) = room.state().await.map(|state| state.seq) else {
                        continue;
                    };
                    let join = Join {
                        conn: self.conn,
                        credential,
                        // Nothing to send: the connection has seen everything.
                        since_seq: Some(seen),
                        history: false,
                        legal_moves,
                        batch: self.batch,
                        boards: self.boards,
                        rematch: self.rematch,
                        chat: self.chat,
                        speaker: self.speaker(),
                        outbox: self.outbox.clone(),
                        re: None,
                    };
                    if room.join(join).await.is_err() {
                        continue;
                    }
                    if let Some(joined) = self.joined.get_mut(&match_id) {
                        joined.room = Some(room.clone());
                    }
                    room
                }
                // Not in the match: its room (if it runs here) says so.
                None => match self.app.live(&match_id) {
                    Some(room) => RoomHandle::Local(room),
                    None if self.app.match_exists(&match_id).await => {
                        self.error(re, ErrorCode::Forbidden, "join or watch the match first");
                        return;
                    }
                    None => {
                        self.unknown_match(re, &match_id);
                        return;
                    }
                },
            };
            let context = crate::room::ActContext {
                outbox: self.outbox.clone(),
                re: re.clone(),
                received,
                // Only a room elsewhere reads the frame again, and needs the speaker with it.
                speaker: matches!(room, RoomHandle::Remote(_)).then(|| self.speaker()),
            };
            let sent = room.act(self.conn, action.clone(), frame, context).await;
            if sent.is_ok() {
                return;
            }
            // The room retired meanwhile: enter it again through the store.
            if let Some(joined) = self.joined.get_mut(&match_id) {
                joined.room = None;
            }
        }
        self.error(re, ErrorCode::Internal, "the match room has stopped");
    }

    async fn leave_all(&mut self) {
        if self.routed {
            if let Some(cluster) = self.app.cluster() {
                Box::pin(crate::cluster::route::session_closed(cluster, self.conn)).await;
            }
        }
        for (_, task) in self.watching.drain() {
            task.abort();
        }
        if let Some(task) = self.lobby.take() {
            task.abort();
        }
        if let Some(name) = self.account.take() {
            if self.app.accounts.detach(&name, self.conn) {
                // A seek waits for a player who is there to play it.
                self.app.lobby.leave(&name);
            }
        }
        for (_, joined) in self.joined.drain() {
            if let Some(room) = joined.room {
                let _ = room.leave(self.conn).await;
            }
        }
    }
}

/// A session, at the node of a cluster that runs the tournaments, of a connection at another
/// node: its tournament frames are read here as that node's session would, and its answers go
/// back to it through `outbox`.
pub(crate) struct RemoteSession(tokio::sync::Mutex<Session>);

impl RemoteSession {
    pub(crate) fn new(
        app: Arc<App>,
        conn: ConnId,
        outbox: Outbox,
        token: Option<String>,
        features: &[String],
    ) -> RemoteSession {
        let mut session = Session::new(app, conn, outbox, None);
        session.remote = true;
        session.hello(None, PROTOCOL_VERSION, token, features);
        RemoteSession(tokio::sync::Mutex::new(session))
    }

    pub(crate) async fn on_text(&self, text: &str) {
        self.0.lock().await.on_text(text).await;
    }

    /// The connection is gone: what its session followed here ends.
    pub(crate) async fn close(&self) {
        self.0.lock().await.leave_all().await;
    }
}

/// The messages of a tournament or of the lobby (as opposed to a match's): in a cluster, one
/// node runs the tournaments and the lobby.
fn is_tournament_message(message: &ClientMessage) -> bool {
    use ClientMessage::*;
    matches!(
        message,
        Seek(_)
            | CancelSeek { .. }
            | AcceptSeek { .. }
            | WatchLobby
            | UnwatchLobby
            | CreateTournament(_)
            | AddPlayers { .. }
            | StartTournament { .. }
            | PairNext { .. }
            | SetResult { .. }
            | AddAssistant { .. }
            | PreviewPairing { .. }
            | Withdraw { .. }
            | RequestBye { .. }
            | Forfeit { .. }
            | GetTournament { .. }
            | WatchTournament { .. }
            | UnwatchTournament { .. }
            | ExportTrf { .. }
    )
}

/// How a connection asks to enter a match.
struct Entry {
    credential: Credential,
    since_seq: Option<u64>,
    history: bool,
    legal_moves: bool,
}

/// The room action of a player or arbiter message.
pub(crate) fn action_of(
    message: ClientMessage,
    speaker: impl FnOnce() -> crate::room::Speaker,
) -> Option<Action> {
    let chat = |action| {
        Action::Chat(Box::new(ChatRequest {
            action,
            speaker: speaker(),
        }))
    };
    Some(match message {
        ClientMessage::Place { cell, .. } => Action::Place(cell),
        ClientMessage::Rotate { quadrant, dir, .. } => Action::Rotate(quadrant, dir),
        ClientMessage::Press { .. } => Action::Press,
        ClientMessage::Move { mv, press, .. } => Action::Move(mv, press),
        ClientMessage::Ready { .. } => Action::Ready,
        ClientMessage::Resign { .. } => Action::Resign,
        ClientMessage::OfferDraw { .. } => Action::OfferDraw,
        ClientMessage::DeclineDraw { .. } => Action::DeclineDraw,
        ClientMessage::Claim { text, .. } => Action::Claim(text),
        ClientMessage::Chat { text, channel, .. } => chat(ChatAction::Say { channel, text }),
        ClientMessage::Mute {
            seat, name, muted, ..
        } => chat(ChatAction::Mute {
            target: hakem_protocol::ChatMute { seat, name },
            muted,
        }),
        ClientMessage::SetChat { enabled, .. } => chat(ChatAction::Switch(enabled)),
        ClientMessage::Warn { seat, reason, .. } => Action::Arbiter(Command::Warn { seat, reason }),
        ClientMessage::ResolveClaim {
            claim,
            upheld,
            reason,
            warn,
            ..
        } => Action::Arbiter(Command::ResolveClaim {
            claim,
            upheld,
            reason,
            warn,
        }),
        ClientMessage::Pause { .. } => Action::Arbiter(Command::Pause),
        ClientMessage::Resume { .. } => Action::Arbiter(Command::Resume),
        ClientMessage::AdjustClock { seat, delta_ms, .. } => {
            Action::Arbiter(Command::AdjustClock { seat, delta_ms })
        }
        ClientMessage::StartSet { .. } => Action::Arbiter(Command::StartSet),
        ClientMessage::Declare {
            scope,
            winner,
            reason,
            ..
        } => Action::Arbiter(Command::Declare {
            scope,
            winner,
            reason,
        }),
        _ => return None,
    })
}
