//! The bot's own WebSocket connection: unlike the terminal client's, its `hello` may carry a
//! token (a bot account's, for `--listen`), and frames the protocol types do not describe are
//! kept as JSON so that an unknown event still moves the bot's event count on.

use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use hakem_protocol::{
    ClientFrame, ClientMessage, ErrorCode, Identity, ServerMessage, PROTOCOL_VERSION,
};
use serde_json::Value;
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

/// A frame from the server.
#[derive(Debug)]
pub enum Frame {
    Message(ServerMessage),
    /// Valid JSON (or `null` for anything else) that the protocol types do not describe.
    Other(Value),
}

impl Frame {
    /// The id of the request this frame answers, if it is a direct reply.
    pub fn reply_to(&self) -> Option<u64> {
        let re = match self {
            Frame::Message(message) => message.re(),
            Frame::Other(value) => value.get("re"),
        };
        re.and_then(Value::as_u64)
    }
}

/// Why [`Link::open`] failed.
#[derive(Debug)]
pub struct OpenError {
    pub message: String,
    /// Whether trying again later may help (the server is down or busy), as opposed to a
    /// refusal that waiting will not change.
    pub retriable: bool,
}

pub struct Link {
    ws: WebSocketStream<MaybeTlsStream<TcpStream>>,
    next_id: u64,
}

impl Link {
    /// Connects and says `hello` (with `token`, if any); waits at most `patience` for each
    /// step. Returns the identity the server gave the connection and the server's clock
    /// (Unix milliseconds) at the welcome.
    pub async fn open(
        url: &str,
        token: Option<&str>,
        patience: Duration,
    ) -> Result<(Link, Identity, u64), OpenError> {
        let retry = |message: String| OpenError {
            message,
            retriable: true,
        };
        let (ws, _) = tokio::time::timeout(patience, tokio_tungstenite::connect_async(url))
            .await
            .map_err(|_| retry(format!("no answer from {url} within {patience:?}")))?
            .map_err(|e| retry(format!("cannot connect to {url}: {e}")))?;
        let mut link = Link { ws, next_id: 1 };
        link.send(ClientMessage::Hello {
            protocol: PROTOCOL_VERSION,
            client: Some(format!("hakem-bot/{}", env!("CARGO_PKG_VERSION"))),
            token: token.map(str::to_string),
            features: Vec::new(),
        })
        .await
        .map_err(retry)?;
        let welcome = async {
            loop {
                match link.recv().await.map_err(retry)? {
                    None => {
                        return Err(retry(
                            "the server closed the connection during the handshake".into(),
                        ))
                    }
                    Some(Frame::Message(ServerMessage::Welcome {
                        identity,
                        server_time_ms,
                        ..
                    })) => return Ok((identity, server_time_ms)),
                    Some(Frame::Message(ServerMessage::Error(error))) => {
                        return Err(OpenError {
                            message: format!(
                                "the server refused the connection: {} ({})",
                                error.message, error.code
                            ),
                            // A wrong token or protocol stays wrong; a busy server may not be.
                            retriable: !matches!(
                                error.code,
                                ErrorCode::UnsupportedProtocol
                                    | ErrorCode::Unauthorized
                                    | ErrorCode::Forbidden
                            ),
                        });
                    }
                    Some(_) => {}
                }
            }
        };
        let (identity, server_time_ms) = tokio::time::timeout(patience, welcome)
            .await
            .map_err(|_| retry(format!("{url} did not answer hello within {patience:?}")))??;
        Ok((link, identity, server_time_ms))
    }

    /// Sends a message with a fresh `id`; returns that id, which the reply carries as `re`.
    pub async fn send(&mut self, message: ClientMessage) -> Result<u64, String> {
        let id = self.next_id;
        self.next_id += 1;
        let frame = ClientFrame {
            id: Some(Value::from(id)),
            message,
        };
        let text =
            serde_json::to_string(&frame).map_err(|e| format!("cannot encode a message: {e}"))?;
        self.ws
            .send(Message::Text(text.into()))
            .await
            .map_err(|e| format!("cannot send to the server: {e}"))?;
        Ok(id)
    }

    /// The next frame, or `None` once the server has closed the connection.
    pub async fn recv(&mut self) -> Result<Option<Frame>, String> {
        loop {
            match self.ws.next().await {
                None | Some(Ok(Message::Close(_))) => return Ok(None),
                Some(Err(e)) => return Err(format!("the connection broke: {e}")),
                Some(Ok(Message::Text(text))) => return Ok(Some(decode(text.as_str()))),
                // Binary frames are not part of the protocol; pings are answered by the library.
                Some(Ok(_)) => {}
            }
        }
    }

    /// Closes politely, waiting a moment at most: the outcome no longer depends on it.
    pub async fn close(mut self) {
        let _ = tokio::time::timeout(Duration::from_millis(500), self.ws.close(None)).await;
    }
}

/// The local clock, Unix milliseconds.
pub fn unix_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

pub fn decode(text: &str) -> Frame {
    match serde_json::from_str::<ServerMessage>(text) {
        Ok(message) => Frame::Message(message),
        Err(_) => Frame::Other(serde_json::from_str(text).unwrap_or(Value::Null)),
    }
}
