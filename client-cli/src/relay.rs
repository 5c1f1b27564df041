//! `hakem relay`: the bare baseline for `hakem load`. A tokio-tungstenite server that answers
//! the messages the load tool sends (hello, create_match, join, watch, leave, ready, move,
//! ping) and forwards each move to the match's members as `moved` and `pressed` events, with no
//! rules, clocks or storage. A figure of hakem's is always given next to this one, measured in
//! the same run, so that a reader sees what the machine itself costs.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::process::ExitCode;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use clap::Args;
use futures_util::{SinkExt, StreamExt};
use std::borrow::Cow;

use serde::Deserialize;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;
use tokio_tungstenite::tungstenite::{Message, Utf8Bytes};

#[derive(Args)]
pub struct RelayArgs {
    /// Address to listen on; port 0 picks a free port (printed when ready).
    #[arg(long, default_value = "127.0.0.1:8090")]
    listen: SocketAddr,
}

type Outbox = mpsc::UnboundedSender<Utf8Bytes>;

struct Member {
    conn: u64,
    outbox: Outbox,
    batch: bool,
}

#[derive(Default)]
struct Room {
    members: Vec<Member>,
    ready: u8,
    seq: u64,
}

#[derive(Default)]
struct Relay {
    rooms: Mutex<HashMap<String, Room>>,
    next: AtomicU64,
}

pub async fn run(args: RelayArgs) -> ExitCode {
    let listener = match TcpListener::bind(args.listen).await {
        Ok(listener) => listener,
        Err(e) => {
            eprintln!("hakem relay: cannot listen on {}: {e}", args.listen);
            return ExitCode::from(1);
        }
    };
    let addr = listener.local_addr().unwrap_or(args.listen);
    outln!("hakem relay listening on http://{addr}");
    let relay = Arc::new(Relay::default());
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            continue;
        };
        let _ = stream.set_nodelay(true);
        tokio::spawn(serve(stream, relay.clone()));
    }
}

async fn serve(stream: TcpStream, relay: Arc<Relay>) {
    // Small buffers and frames written at once, as hakem-server's: the baseline is a lean relay.
    let config = WebSocketConfig::default()
        .read_buffer_size(4 * 1024)
        .write_buffer_size(0)
        .max_message_size(Some(64 * 1024));
    let Ok(ws) = tokio_tungstenite::accept_async_with_config(stream, Some(config)).await else {
        return;
    };
    let conn = relay.next.fetch_add(1, Ordering::Relaxed);
    let (mut sink, mut stream) = ws.split();
    let (tx, mut rx) = mpsc::unbounded_channel::<Utf8Bytes>();
    let mut batch = false;
    let mut joined: Vec<String> = Vec::new();
    loop {
        tokio::select! {
            frame = rx.recv() => {
                let Some(frame) = frame else { break };
                // Whatever else is queued goes in the same write.
                let mut failed = sink.feed(Message::Text(frame)).await.is_err();
                while let (false, Ok(frame)) = (failed, rx.try_recv()) {
                    failed = sink.feed(Message::Text(frame)).await.is_err();
                }
                if failed || sink.flush().await.is_err() {
                    break;
                }
            }
            message = stream.next() => {
                let text = match message {
                    Some(Ok(Message::Text(text))) => text,
                    Some(Ok(Message::Close(_))) | None | Some(Err(_)) => break,
                    Some(Ok(_)) => continue,
                };
                relay.handle(conn, &tx, &mut batch, &mut joined, text.as_str());
            }
        }
    }
    let mut rooms = relay.rooms.lock().unwrap_or_else(|e| e.into_inner());
    for id in joined {
        if let Some(room) = rooms.get_mut(&id) {
            room.members.retain(|m| m.conn != conn);
        }
    }
}

/// The fields of a client message the relay reads; the rest is skipped unread.
#[derive(Deserialize)]
struct Request<'a> {
    #[serde(rename = "type", borrow)]
    kind: Cow<'a, str>,
    #[serde(default)]
    id: Option<u64>,
    #[serde(rename = "match", default, borrow)]
    match_id: Cow<'a, str>,
    #[serde(default, borrow)]
    seat_token: Cow<'a, str>,
    #[serde(rename = "move", default, borrow)]
    mv: Cow<'a, str>,
    #[serde(default, borrow)]
    features: Vec<Cow<'a, str>>,
}

/// `,"re":ID` for a request that had an id.
fn re(id: Option<u64>) -> String {
    id.map(|id| format!(r#","re":{id}"#)).unwrap_or_default()
}

fn error(id: Option<u64>) -> Utf8Bytes {
    format!(
        r#"{{"type":"error"{},"code":"bad_request","message":"not understood"}}"#,
        re(id)
    )
    .into()
}

fn ack(id: Option<u64>, match_id: &str, seq: u64) -> Utf8Bytes {
    format!(
        r#"{{"type":"ack"{},"match":"{match_id}","seq":{seq}}}"#,
        re(id)
    )
    .into()
}

impl Room {
    /// Numbers `events` and sends them to every member: one frame each, or one `events`
    /// frame to members that asked for batches.
    fn broadcast(&mut self, match_id: &str, events: &[String]) {
        let frames: Vec<String> = events
            .iter()
            .map(|event| {
                self.seq += 1;
                format!(
                    r#"{{"type":"event","match":"{match_id}","seq":{},"event":{event},"clocks":null}}"#,
                    self.seq
                )
            })
            .collect();
        let batched: Utf8Bytes = format!(
            r#"{{"type":"events","match":"{match_id}","events":[{}]}}"#,
            frames.join(",")
        )
        .into();
        let single: Vec<Utf8Bytes> = frames.into_iter().map(Utf8Bytes::from).collect();
        for member in &self.members {
            if member.batch && single.len() > 1 {
                let _ = member.outbox.send(batched.clone());
            } else {
                for frame in &single {
                    let _ = member.outbox.send(frame.clone());
                }
            }
        }
    }
}

impl Relay {
    fn handle(
        &self,
        conn: u64,
        tx: &Outbox,
        batch: &mut bool,
        joined: &mut Vec<String>,
        text: &str,
    ) {
        let Ok(message) = serde_json::from_str::<Request>(text) else {
            let _ = tx.send(error(None));
            return;
        };
        let id = message.id;
        let match_id = message.match_id.as_ref();
        let mut rooms = self.rooms.lock().unwrap_or_else(|e| e.into_inner());
        let reply: Utf8Bytes = match message.kind.as_ref() {
            "hello" => {
                *batch = message.features.iter().any(|f| f == "batch");
                let features = if *batch { r#"["batch"]"# } else { "[]" };
                format!(
                    r#"{{"type":"welcome","protocol":1,"session":"s{conn}","identity":{{"kind":"guest","name":""}},"server_time_ms":0,"features":{features}}}"#
                )
                .into()
            }
            "ping" => format!(r#"{{"type":"pong"{},"server_time_ms":0}}"#, re(id)).into(),
            "create_match" => {
                let m = format!("r{}", self.next.fetch_add(1, Ordering::Relaxed));
                rooms.insert(m.clone(), Room::default());
                format!(
                    r#"{{"type":"match_created"{},"match":"{m}","seat_tokens":{{"p1":"{m}.p1","p2":"{m}.p2"}},"arbiter_token":"{m}.arbiter"}}"#,
                    re(id)
                )
                .into()
            }
            kind @ ("join" | "watch") => {
                let m = match kind {
                    "join" => message.seat_token.split('.').next().unwrap_or_default(),
                    _ => match_id,
                };
                match rooms.get_mut(m) {
                    Some(room) => {
                        room.members.push(Member {
                            conn,
                            outbox: tx.clone(),
                            batch: *batch,
                        });
                        joined.push(m.to_string());
                        ack(id, m, room.seq)
                    }
                    None => error(id),
                }
            }
            "leave" => {
                if let Some(room) = rooms.get_mut(match_id) {
                    room.members.retain(|m| m.conn != conn);
                }
                joined.retain(|m| m != match_id);
                ack(id, match_id, 0)
            }
            "ready" => match rooms.get_mut(match_id) {
                Some(room) => {
                    room.ready += 1;
                    if room.ready == 2 {
                        room.broadcast(
                            match_id,
                            &[r#"{"kind":"set_started","set":1,"first_mover":"p1"}"#.to_string()],
                        );
                    }
                    ack(id, match_id, room.seq)
                }
                None => error(id),
            },
            "move" => match rooms.get_mut(match_id) {
                Some(room) => {
                    // The mover's seat is the parity of the move: the relay keeps no rules.
                    let seat = if room.seq % 4 == 1 { "p1" } else { "p2" };
                    room.broadcast(
                        match_id,
                        &[
                            format!(
                                r#"{{"kind":"moved","seat":"{seat}","move":"{}"}}"#,
                                message.mv
                            ),
                            format!(r#"{{"kind":"pressed","seat":"{seat}"}}"#),
                        ],
                    );
                    ack(id, match_id, room.seq)
                }
                None => error(id),
            },
            _ => error(id),
        };
        let _ = tx.send(reply);
    }
}
