//! One WebSocket connection: the `hello` handshake, reading client frames, routing them to
//! rooms, and writing whatever the rooms and the session queue for it.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use axum::extract::ws::{Message, Utf8Bytes, WebSocket};
use futures_util::{SinkExt, StreamExt};
use hakem_protocol::{
    parse_client_frame, AccountKind, ClientMessage, CreateMatch, ErrorCode, ErrorReply, Identity,
    IdentityKind, ServerMessage, TournamentView, MAX_FRAME_BYTES, PROTOCOL_VERSION,
};
use serde_json::Value;
use tokio::sync::{mpsc, Notify};

use crate::room::{Action, ConnId, Credential, Join, Outbox, RoomCommand, RoomHandle};
use hakem_round::Command;
use crate::tokens::same_token;
use crate::tournament::{self, Caller, Failure};
use crate::App;

pub async fn serve(socket: WebSocket, app: Arc<App>) {
    let limits = app.limits.clone();
    let conn = app.next_conn_id();
    let (tx, mut rx) = mpsc::channel::<Utf8Bytes>(limits.outbox_frames);
    let kill = Arc::new(Notify::new());
    let outbox = Outbox::new(tx, kill.clone());
    let (mut sink, mut stream) = socket.split();
    let ping_every = limits.ping_interval;
    let writer = tokio::spawn(async move {
        let mut ping =
            tokio::time::interval_at(tokio::time::Instant::now() + ping_every, ping_every);
        loop {
            let message = tokio::select! {
                frame = rx.recv() => match frame {
                    Some(frame) => Message::Text(frame),
                    None => break,
                },
                // Idle sockets are pinged so that dead peers are noticed.
                _ = ping.tick() => Message::Ping(Default::default()),
            };
            if sink.send(message).await.is_err() {
                break;
            }
        }
        let _ = sink.close().await;
    });

    let mut session = Session {
        conn,
        app,
        outbox,
        identity: None,
        token: None,
        account: None,
        joined: HashMap::new(),
        bucket: TokenBucket::new(limits.rate_per_sec, limits.rate_burst),
        refused_in_a_row: 0,
    };
    let hello_deadline = tokio::time::Instant::now() + limits.hello_timeout;
    let mut last_heard = tokio::time::Instant::now();
    let mut idle_check = tokio::time::interval(limits.ping_interval);
    loop {
        let frame = tokio::select! {
            frame = stream.next() => frame,
            _ = kill.notified() => {
                tracing::info!(conn, "connection too slow to read its frames: closed");
                break;
            }
            _ = tokio::time::sleep_until(hello_deadline), if session.identity.is_none() => {
                session.error(None, ErrorCode::Unauthorized, "no hello within the time allowed");
                break;
            }
            _ = idle_check.tick() => {
                if last_heard.elapsed() > 3 * limits.ping_interval {
                    tracing::info!(conn, "connection silent, not even answering pings: closed");
                    break;
                }
                continue;
            }
        };
        last_heard = tokio::time::Instant::now();
        let Some(Ok(message)) = frame else {
            break;
        };
        let text = match message {
            Message::Text(text) => text,
            Message::Binary(_) => Utf8Bytes::from_static(""),
            Message::Ping(_) | Message::Pong(_) => continue,
            Message::Close(_) => break,
        };
        if !session.admit() {
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
    drop(session);
    // Let the writer send what is queued and a Close frame while the peer's unread frames are
    // drained: closing a socket with unread input resets it, and the peer would lose our last
    // frames (a `rate_limited` error, say).
    let drain = async { while let Some(Ok(_)) = stream.next().await {} };
    let _ = tokio::time::timeout(Duration::from_secs(2), async {
        let _ = tokio::join!(writer, drain);
    })
    .await;
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

/// Allows `rate` messages a second on average and bursts of `burst`.
struct TokenBucket {
    rate: f64,
    burst: f64,
    tokens: f64,
    last: tokio::time::Instant,
}

impl TokenBucket {
    fn new(rate: f64, burst: f64) -> TokenBucket {
        TokenBucket {
            rate,
            burst,
            tokens: burst,
            last: tokio::time::Instant::now(),
        }
    }

    fn take(&mut self) -> bool {
        let now = tokio::time::Instant::now();
        let earned = now.duration_since(self.last).as_secs_f64() * self.rate;
        self.tokens = (self.tokens + earned).min(self.burst);
        self.last = now;
        if self.tokens >= 1.0 {
            self.tokens -= 1.0;
            true
        } else {
            false
        }
    }
}

struct Session {
    conn: ConnId,
    app: Arc<App>,
    outbox: Outbox,
    identity: Option<Identity>,
    /// A token given in `hello`, used by a `join` that names none.
    token: Option<String>,
    /// The account this connection speaks for, if its `hello` token was an account's.
    account: Option<String>,
    joined: HashMap<String, RoomHandle>,
    bucket: TokenBucket,
    /// Messages refused for flooding since the last one accepted.
    refused_in_a_row: u32,
}

impl Session {
    /// Rate limiting: false when the connection keeps flooding and must be closed.
    fn admit(&mut self) -> bool {
        if self.bucket.take() {
            self.refused_in_a_row = 0;
            return true;
        }
        self.refused_in_a_row += 1;
        if self.refused_in_a_row == 1 {
            self.error(
                None,
                ErrorCode::RateLimited,
                "too many messages: slow down or the connection will be closed",
            );
        }
        // A client that ignores the warning for a whole burst's worth of messages is cut off.
        (self.refused_in_a_row as f64) <= self.bucket.burst
    }

    fn send(&self, message: &ServerMessage) {
        self.outbox.send_message(message);
    }

    fn error(&self, re: Option<Value>, code: ErrorCode, message: impl Into<String>) {
        metrics::counter!("hakem_errors_total", "code" => code.as_str()).increment(1);
        self.send(&ServerMessage::Error(ErrorReply {
            re,
            code,
            message: message.into(),
            match_id: None,
            rule: None,
        }));
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
        match frame.message {
            ClientMessage::Hello {
                protocol, token, ..
            } => self.hello(re, protocol, token),
            _ if self.identity.is_none() => {
                self.error(re, ErrorCode::BadRequest, "the first message must be hello")
            }
            ClientMessage::Ping => self.send(&ServerMessage::Pong {
                re,
                server_time_ms: crate::wall_clock_ms(),
            }),
            ClientMessage::ListMatches => self.send(&ServerMessage::Matches {
                re,
                matches: self.app.summaries(),
            }),
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
                let caller = self.caller(arbiter_token.as_deref());
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
                let caller = self.caller(arbiter_token.as_deref());
                let view = tournament::start(&self.app, &id, caller, colour_lot).await;
                self.send_tournament(re, view);
            }
            ClientMessage::PairNext {
                tournament: id,
                arbiter_token,
            } => {
                let caller = self.caller(arbiter_token.as_deref());
                let view = tournament::pair_next(&self.app, &id, caller).await;
                self.send_tournament(re, view);
            }
            ClientMessage::Withdraw {
                tournament: id,
                player,
                arbiter_token,
            } => {
                let caller = self.caller(arbiter_token.as_deref());
                let view = tournament::withdraw(&self.app, &id, caller, player).await;
                self.send_tournament(re, view);
            }
            ClientMessage::RequestBye {
                tournament: id,
                player,
                round,
                arbiter_token,
            } => {
                let caller = self.caller(arbiter_token.as_deref());
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
                let caller = self.caller(arbiter_token.as_deref());
                let view = tournament::forfeit(&self.app, &id, caller, player, round, double).await;
                self.send_tournament(re, view);
            }
            ClientMessage::GetTournament { tournament: id } => {
                let view = self.app.tournaments.view(&id).await;
                self.send_tournament(re, view);
            }
            ClientMessage::ExportTrf { tournament: id } => {
                match self.app.tournaments.trf(&id).await {
                    Ok(trf) => self.send(&ServerMessage::Trf {
                        re,
                        tournament: id,
                        trf,
                    }),
                    Err(failure) => self.error(re, failure.code, failure.message),
                }
            }
            ClientMessage::Join {
                match_id,
                seat_token,
                arbiter_token,
                since_seq,
                legal_moves,
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
                self.enter(re, match_id, credential, since_seq, legal_moves)
                    .await
            }
            ClientMessage::Watch {
                match_id,
                since_seq,
            } => {
                self.enter(re, match_id, Credential::Spectator, since_seq, false)
                    .await
            }
            ClientMessage::Leave { match_id } => match self.joined.remove(&match_id) {
                Some(room) => {
                    let _ = room.tx.send(RoomCommand::Leave { conn: self.conn }).await;
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
                let Some(action) = action_of(message) else {
                    self.error(re, ErrorCode::BadRequest, "unexpected message");
                    return;
                };
                let Some(room) = self.room(&match_id, re.clone()).await else {
                    return;
                };
                let command = RoomCommand::Act {
                    conn: self.conn,
                    action,
                    outbox: self.outbox.clone(),
                    re: re.clone(),
                    received,
                };
                if room.tx.send(command).await.is_err() {
                    self.error(re, ErrorCode::Internal, "the match room has stopped");
                }
            }
        }
    }

    fn hello(&mut self, re: Option<Value>, protocol: u32, token: Option<String>) {
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
        let account = token.as_deref().and_then(|t| self.app.accounts.by_token(t));
        let (kind, name) = match (&token, &account) {
            (None, _) => (IdentityKind::Guest, String::new()),
            (Some(token), _) if same_token(&self.app.admin_token, token) => {
                (IdentityKind::Organizer, String::new())
            }
            (Some(_), Some((name, AccountKind::Bot))) => (IdentityKind::Bot, name.clone()),
            (Some(_), Some((name, AccountKind::Player))) => (IdentityKind::Player, name.clone()),
            // Other tokens are seat or arbiter tokens, checked by the room on `join`.
            (Some(_), None) => (IdentityKind::Player, String::new()),
        };
        let identity = Identity { kind, name };
        if self.identity.is_none() {
            metrics::gauge!("hakem_connections", "kind" => kind_label(kind)).increment(1.0);
        }
        self.identity = Some(identity.clone());
        self.token = token.filter(|_| kind == IdentityKind::Player && account.is_none());
        self.send(&ServerMessage::Welcome {
            protocol: PROTOCOL_VERSION,
            session: format!("s{}", self.conn),
            identity,
            server_time_ms: crate::wall_clock_ms(),
            features: Vec::new(),
        });
        if let Some((name, _)) = account {
            let app = self.app.clone();
            self.app
                .accounts
                .attach(&name, self.conn, self.outbox.clone(), |id| app.is_live(id));
            self.account = Some(name);
        }
    }

    fn is_organizer(&self) -> bool {
        self.identity.as_ref().map(|i| i.kind) == Some(IdentityKind::Organizer)
    }

    fn caller<'a>(&'a self, arbiter_token: Option<&'a str>) -> Caller<'a> {
        Caller {
            organizer: self.is_organizer(),
            account: self.account.as_deref(),
            arbiter_token,
        }
    }

    fn send_tournament(&self, re: Option<Value>, view: Result<TournamentView, Failure>) {
        match view {
            Ok(view) => self.send(&ServerMessage::Tournament {
                re,
                view: Box::new(view),
            }),
            Err(failure) => self.error(re, failure.code, failure.message),
        }
    }

    async fn create(&self, re: Option<Value>, create: CreateMatch) {
        match self.app.create_match(create).await {
            Ok(created) => self.send(&ServerMessage::MatchCreated {
                re,
                match_id: created.match_id,
                seat_tokens: created.seat_tokens,
                arbiter_token: created.arbiter_token,
            }),
            Err(crate::CreateError::Invalid(message)) => {
                self.error(re, ErrorCode::BadRequest, message)
            }
            Err(crate::CreateError::Store(message)) => self.error(re, ErrorCode::Internal, message),
        }
    }

    async fn room(&self, match_id: &str, re: Option<Value>) -> Option<RoomHandle> {
        let room = self.app.room(match_id).await;
        if room.is_none() {
            self.send(&ServerMessage::Error(ErrorReply {
                re,
                code: ErrorCode::UnknownMatch,
                message: format!("no match {match_id:?}"),
                match_id: Some(match_id.to_string()),
                rule: None,
            }));
        }
        room
    }

    async fn enter(
        &mut self,
        re: Option<Value>,
        match_id: String,
        credential: Credential,
        since_seq: Option<u64>,
        legal_moves: bool,
    ) {
        let Some(room) = self.room(&match_id, re.clone()).await else {
            return;
        };
        let command = RoomCommand::Join(Join {
            conn: self.conn,
            credential,
            since_seq,
            legal_moves,
            outbox: self.outbox.clone(),
            re: re.clone(),
        });
        if room.tx.send(command).await.is_err() {
            self.error(re, ErrorCode::Internal, "the match room has stopped");
            return;
        }
        self.joined.insert(match_id, room);
    }

    async fn leave_all(&mut self) {
        if let Some(name) = self.account.take() {
            self.app.accounts.detach(&name, self.conn);
        }
        for (_, room) in self.joined.drain() {
            let _ = room.tx.send(RoomCommand::Gone { conn: self.conn }).await;
        }
    }
}

/// The room action of a player or arbiter message.
fn action_of(message: ClientMessage) -> Option<Action> {
    Some(match message {
        ClientMessage::Place { cell, .. } => Action::Place(cell),
        ClientMessage::Rotate { quadrant, dir, .. } => Action::Rotate(quadrant, dir),
        ClientMessage::Press { .. } => Action::Press,
        ClientMessage::Move { mv, press, .. } => Action::Move(mv, press),
        ClientMessage::Ready { .. } => Action::Ready,
        ClientMessage::Resign { .. } => Action::Resign,
        ClientMessage::Claim { text, .. } => Action::Claim(text),
        ClientMessage::Warn { seat, reason, .. } => Action::Arbiter(Command::Warn { seat, reason }),
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
