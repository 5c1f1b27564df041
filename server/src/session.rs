//! One WebSocket connection: the `hello` handshake, reading client frames, routing them to
//! rooms, and writing whatever the rooms and the session queue for it.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use axum::extract::ws::{Message, Utf8Bytes, WebSocket};
use futures_util::{SinkExt, StreamExt};
use hakem_protocol::{
    parse_client_frame, ClientMessage, CreateMatch, ErrorCode, ErrorReply, Identity, IdentityKind,
    ServerMessage, MAX_FRAME_BYTES, PROTOCOL_VERSION,
};
use serde_json::Value;
use tokio::sync::{mpsc, Notify};

use crate::room::{Action, ConnId, Credential, Outbox, RoomCommand, RoomHandle};
use crate::round::Command;
use crate::tokens::same_token;
use crate::App;

/// Frames queued for one connection before it counts as not reading.
const OUTBOX_FRAMES: usize = 1024;

/// A connection must say `hello` within this time.
const HELLO_TIMEOUT: Duration = Duration::from_secs(10);

pub async fn serve(socket: WebSocket, app: Arc<App>) {
    let conn = app.next_conn_id();
    let (tx, mut rx) = mpsc::channel::<Utf8Bytes>(OUTBOX_FRAMES);
    let kill = Arc::new(Notify::new());
    let outbox = Outbox::new(tx, kill.clone());
    let (mut sink, mut stream) = socket.split();
    let writer = tokio::spawn(async move {
        while let Some(frame) = rx.recv().await {
            if sink.send(Message::Text(frame)).await.is_err() {
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
        joined: HashMap::new(),
    };
    let hello_deadline = tokio::time::Instant::now() + HELLO_TIMEOUT;
    loop {
        let frame = tokio::select! {
            frame = stream.next() => frame,
            _ = kill.notified() => break,
            _ = tokio::time::sleep_until(hello_deadline), if session.identity.is_none() => {
                session.error(None, ErrorCode::Unauthorized, "no hello within 10 seconds");
                break;
            }
        };
        match frame {
            Some(Ok(Message::Text(text))) => session.on_text(text.as_str()).await,
            Some(Ok(Message::Binary(_))) => {
                session.error(None, ErrorCode::BadRequest, "send text frames with JSON")
            }
            Some(Ok(Message::Ping(_) | Message::Pong(_))) => {}
            Some(Ok(Message::Close(_)) | Err(_)) | None => break,
        }
    }
    session.leave_all().await;
    drop(session);
    // The writer ends once every room has dropped this connection's outbox; it is only
    // waited on briefly so that a final error frame can go out.
    let _ = tokio::time::timeout(Duration::from_secs(1), writer).await;
}

struct Session {
    conn: ConnId,
    app: Arc<App>,
    outbox: Outbox,
    identity: Option<Identity>,
    /// A token given in `hello`, used by a `join` that names none.
    token: Option<String>,
    joined: HashMap<String, RoomHandle>,
}

impl Session {
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
        let token = token.filter(|t| !t.is_empty());
        let kind = match &token {
            None => IdentityKind::Guest,
            Some(token) if same_token(&self.app.admin_token, token) => IdentityKind::Organizer,
            // Other tokens are seat or arbiter tokens, checked by the room on `join`.
            Some(_) => IdentityKind::Player,
        };
        let identity = Identity {
            kind,
            name: String::new(),
        };
        self.identity = Some(identity.clone());
        self.token = token.filter(|_| kind == IdentityKind::Player);
        self.send(&ServerMessage::Welcome {
            protocol: PROTOCOL_VERSION,
            session: format!("s{}", self.conn),
            identity,
            server_time_ms: crate::wall_clock_ms(),
        });
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
        let command = RoomCommand::Join {
            conn: self.conn,
            credential,
            since_seq,
            legal_moves,
            outbox: self.outbox.clone(),
            re: re.clone(),
        };
        if room.tx.send(command).await.is_err() {
            self.error(re, ErrorCode::Internal, "the match room has stopped");
            return;
        }
        self.joined.insert(match_id, room);
    }

    async fn leave_all(&mut self) {
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
