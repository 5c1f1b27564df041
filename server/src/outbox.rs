//! The way to a connection's socket: a bounded queue of frames, and of replays (old events a
//! connection asked for, read from the store by its own writer at the pace the client reads,
//! rather than pushed into the queue all at once).

use std::sync::Arc;

use axum::extract::ws::Utf8Bytes;
use hakem_protocol::ServerMessage;
use tokio::sync::{mpsc, Notify};

/// A connection, as rooms and the account registry know it.
pub type ConnId = u64;

/// What a connection's writer sends, in order.
#[derive(Debug)]
pub enum Outgoing {
    Frame(Utf8Bytes),
    /// The stored events of `match_id` numbered `from` to `to`: read from the store and sent
    /// before whatever comes after this in the queue.
    Replay {
        match_id: Arc<str>,
        from: u64,
        to: u64,
        /// The connection takes boards in events (stored frames have them).
        boards: bool,
    },
}

/// Tells a connection to close, and why (the first reason given is the one it is told).
#[derive(Debug, Default)]
pub struct Kill {
    notify: Notify,
    reason: std::sync::OnceLock<Ending>,
}

/// Why a connection is told to close, and whether the frames already queued go first.
#[derive(Clone, Copy, Debug)]
pub struct Ending {
    pub reason: &'static str,
    pub drain: bool,
    /// Not the client's doing (its match moved to another node): closed as "going away",
    /// and not counted against its address.
    pub away: bool,
}

impl Kill {
    pub fn new() -> Arc<Kill> {
        Arc::new(Kill::default())
    }

    fn end(&self, ending: Ending) {
        let _ = self.reason.set(ending);
        self.notify.notify_one();
    }

    pub async fn notified(&self) {
        self.notify.notified().await
    }

    pub fn ending(&self) -> Ending {
        self.reason.get().copied().unwrap_or(Ending {
            reason: "closed by the server",
            drain: false,
            away: false,
        })
    }
}

/// A connection's queue. A connection whose queue is full is not read fast enough; it is told
/// to close rather than slowing the room.
#[derive(Clone, Debug)]
pub struct Outbox {
    tx: mpsc::Sender<Outgoing>,
    kill: Arc<Kill>,
}

impl Outbox {
    pub fn new(tx: mpsc::Sender<Outgoing>, kill: Arc<Kill>) -> Outbox {
        Outbox { tx, kill }
    }

    /// Tells the connection to close for `reason`, after the frames already queued.
    pub fn close(&self, reason: &'static str) {
        self.kill.end(Ending {
            reason,
            drain: true,
            away: false,
        });
    }

    /// Tells the connection to come back (to another node, or to this one later), after the
    /// frames already queued: nothing it did is the reason.
    pub fn close_away(&self, reason: &'static str) {
        self.kill.end(Ending {
            reason,
            drain: true,
            away: true,
        });
    }

    fn push(&self, item: Outgoing) -> bool {
        match self.tx.try_send(item) {
            Ok(()) => true,
            Err(mpsc::error::TrySendError::Full(_)) => {
                // Not after its queue: the queue is what it does not read.
                self.kill.end(Ending {
                    reason: "too slow to read its frames",
                    drain: false,
                    away: false,
                });
                false
            }
            Err(mpsc::error::TrySendError::Closed(_)) => false,
        }
    }

    /// Queues a frame; false when the connection is gone or too slow (and is then told to close).
    pub fn send(&self, frame: Utf8Bytes) -> bool {
        self.push(Outgoing::Frame(frame))
    }

    pub fn send_message(&self, message: &ServerMessage) -> bool {
        self.send(encode(message))
    }

    /// Queues the stored events `from..=to` of a match.
    pub fn replay(&self, match_id: Arc<str>, from: u64, to: u64, boards: bool) -> bool {
        self.push(Outgoing::Replay {
            match_id,
            from,
            to,
            boards,
        })
    }
}

/// Serializes a server message once, to be shared by every recipient.
pub fn encode(message: &ServerMessage) -> Utf8Bytes {
    // These types always serialize; an empty frame would only mean a bug in them.
    Utf8Bytes::from(serde_json::to_string(message).unwrap_or_default())
}

/// A stored or encoded event frame as a client that did not ask for boards sees it: the
/// frame of protocol v1, without the `board` of its event.
pub fn without_board(frame: &str) -> Utf8Bytes {
    match serde_json::from_str::<ServerMessage>(frame) {
        Ok(ServerMessage::Event(mut event)) => match event.event.without_board() {
            Some(plain) => {
                event.event = plain;
                encode(&ServerMessage::Event(event))
            }
            None => Utf8Bytes::from(frame.to_string()),
        },
        _ => Utf8Bytes::from(frame.to_string()),
    }
}

/// The events of one action in one frame (the `batch` extension): `{"type":"events",
/// "match":ID,"events":[frame, ...]}`, built from the frames as they were encoded, without
/// encoding them again.
pub fn batch(match_id: &str, frames: &[Utf8Bytes]) -> Utf8Bytes {
    let id = serde_json::to_string(match_id).unwrap_or_default();
    let mut text = String::with_capacity(40 + frames.iter().map(|f| f.len() + 1).sum::<usize>());
    text.push_str(r#"{"type":"events","match":"#);
    text.push_str(&id);
    text.push_str(r#","events":["#);
    for (i, frame) in frames.iter().enumerate() {
        if i > 0 {
            text.push(',');
        }
        text.push_str(frame.as_str());
    }
    text.push_str("]}");
    Utf8Bytes::from(text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Value};

    #[test]
    fn a_batch_is_the_frames_as_they_were_sent() {
        let frames = [
            Utf8Bytes::from(r#"{"type":"event","seq":1}"#),
            Utf8Bytes::from(r#"{"type":"event","seq":2}"#),
        ];
        let text = batch("m\"1", &frames);
        let value: Value = serde_json::from_str(text.as_str()).unwrap();
        assert_eq!(
            value,
            json!({"type": "events", "match": "m\"1", "events": [
                {"type": "event", "seq": 1}, {"type": "event", "seq": 2}]})
        );
    }

    #[test]
    fn a_frame_without_its_board_is_the_v1_frame() {
        let full = r#"{"type":"event","match":"m","seq":3,"event":{"kind":"moved","seat":"p1","move":"a1sw","board":{"rows":["......","......","......","......","......","..x..."]}},"clocks":null}"#;
        let plain: Value = serde_json::from_str(without_board(full).as_str()).unwrap();
        assert_eq!(
            plain,
            json!({"type":"event","match":"m","seq":3,
                   "event":{"kind":"moved","seat":"p1","move":"a1sw"},"clocks":null})
        );
        let other =
            r#"{"type":"event","match":"m","seq":4,"event":{"kind":"paused"},"clocks":null}"#;
        assert_eq!(without_board(other).as_str(), other);
    }

    #[test]
    fn a_full_queue_tells_the_connection_to_close() {
        let (tx, _rx) = mpsc::channel(1);
        let kill = Kill::new();
        let outbox = Outbox::new(tx, kill.clone());
        assert!(outbox.send(Utf8Bytes::from_static("a")));
        assert!(!outbox.send(Utf8Bytes::from_static("b")));
        // The notification is kept for the connection to see.
        let seen = kill.notified();
        tokio::pin!(seen);
        assert!(futures_util::FutureExt::now_or_never(seen).is_some());
    }
}
