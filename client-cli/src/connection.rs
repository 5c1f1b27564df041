//! The WebSocket connection to a hakem server: the address, the `hello` handshake, and frames
//! in and out. Nothing the server sends can make the client panic: a frame this client does not
//! understand comes out as [`Incoming::Other`].

use std::fmt;
use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use hakem_protocol::{
    ClientFrame, ClientMessage, ErrorCode, Feature, Identity, MessageRate, ServerMessage,
    TokenBucket, PROTOCOL_VERSION,
};
use serde_json::Value;
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::{Message, Utf8Bytes};
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

/// Where `hakem-server` listens when started without flags.
pub const DEFAULT_SERVER: &str = "ws://127.0.0.1:8080/ws";

/// How long to wait for the server to answer the connection and the `hello`.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

/// How the message of a connection that failed while in use begins.
pub const BROKE: &str = "the connection to the server broke: ";

/// A failure that ends the command with exit status 1.
#[derive(Debug)]
pub struct ClientError(pub String);

impl fmt::Display for ClientError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl From<String> for ClientError {
    fn from(message: String) -> ClientError {
        ClientError(message)
    }
}

/// Reads `--server`: a `ws://` or `wss://` URL; `http(s)://` (as the server prints its address)
/// and a bare `HOST:PORT` are accepted too, and a URL without a path gets `/ws`. Several
/// addresses, comma-separated, are the nodes of a cluster: each connection goes to the next
/// one, so that a client whose node is lost reconnects to another.
pub fn parse_server_url(text: &str) -> Result<String, String> {
    if text.contains(',') {
        let all: Result<Vec<String>, String> = text
            .split(',')
            .filter(|part| !part.trim().is_empty())
            .map(parse_one_server_url)
            .collect();
        return all.map(|all| all.join(","));
    }
    parse_one_server_url(text)
}

fn parse_one_server_url(text: &str) -> Result<String, String> {
    let text = text.trim();
    let (scheme, rest) = match text.split_once("://") {
        Some((scheme, rest)) => (scheme.to_ascii_lowercase(), rest),
        None => ("ws".to_string(), text),
    };
    let scheme = match scheme.as_str() {
        "ws" | "http" => "ws",
        "wss" | "https" => "wss",
        other => {
            return Err(format!(
                "unsupported scheme {other}://; use ws://HOST:PORT/ws"
            ))
        }
    };
    if rest.is_empty() || rest.starts_with('/') {
        return Err("the server address has no host; use ws://HOST:PORT/ws".to_string());
    }
    if rest.chars().any(char::is_whitespace) {
        return Err("the server address contains a space".to_string());
    }
    if rest.contains('/') {
        Ok(format!("{scheme}://{rest}"))
    } else {
        Ok(format!("{scheme}://{rest}/ws"))
    }
}

/// Why [`Connection::open_within`] failed.
#[derive(Debug)]
pub struct OpenError {
    pub message: String,
    /// Whether the same attempt may succeed later (the server is down or busy), as opposed to a
    /// refusal that waiting will not change.
    pub retriable: bool,
}

/// `10 seconds`, `2.5 seconds`.
fn seconds(duration: Duration) -> String {
    if duration.subsec_millis() == 0 {
        format!("{} seconds", duration.as_secs())
    } else {
        format!("{:.1} seconds", duration.as_secs_f64())
    }
}

/// A frame from the server.
#[derive(Debug)]
pub enum Incoming {
    Message(ServerMessage),
    /// Valid JSON that this client's protocol types do not describe (a newer server's
    /// extension, say); callers look into it as far as they can.
    Other(Value),
}

pub struct Connection {
    ws: WebSocketStream<MaybeTlsStream<TcpStream>>,
    next_id: u64,
    pacer: Pacer,
}

/// Keeps what a connection sends within the message rate its server gave in `welcome`: the
/// server reads a faster client late and closes one that runs a whole burst ahead, so a loop
/// that sends many messages at once waits its turn here. Half the burst and nine tenths of
/// the rate are used, leaving room for frames that arrive bunched.
struct Pacer(TokenBucket);

impl Pacer {
    fn new(rate: MessageRate) -> Pacer {
        Pacer(TokenBucket::new(
            rate.per_second.max(0.1) * 0.9,
            (rate.burst / 2.0).floor().max(1.0),
            tokio::time::Instant::now().into_std(),
        ))
    }

    /// Waits until one more message may go.
    async fn turn(&mut self) {
        while let Some(wait) = self.0.take(tokio::time::Instant::now().into_std()) {
            // Never less than the timer's own step: a wait rounded down to nothing would
            // come back to the same moment.
            tokio::time::sleep(wait.max(Duration::from_millis(1))).await;
        }
    }
}

/// What protocol v1 allows a connection when the `welcome` does not say (an older server).
const DEFAULT_RATE: MessageRate = MessageRate {
    per_second: 20.0,
    burst: 40.0,
};

/// What the server said in its `welcome`.
#[derive(Clone, Debug)]
pub struct Welcome {
    pub identity: Identity,
    /// The server's clock (Unix milliseconds) at the welcome.
    pub server_time_ms: u64,
}

impl Connection {
    /// Connects and says `hello` as a guest; seats and the arbiter's chair are taken by `join`.
    pub async fn open(url: &str) -> Result<Connection, ClientError> {
        Connection::open_within(url, HANDSHAKE_TIMEOUT)
            .await
            .map_err(|e| ClientError(e.message))
    }

    /// Connects and says `hello` with `token` (the organizer's, an arbiter's or an account's).
    pub async fn open_as(url: &str, token: &str) -> Result<Connection, ClientError> {
        Connection::handshake(url, Some(token), &[], HANDSHAKE_TIMEOUT)
            .await
            .map(|(connection, _)| connection)
            .map_err(|e| ClientError(e.message))
    }

    /// [`Connection::open`], waiting at most `patience` for each step of the handshake; the
    /// error says whether trying again later may help.
    pub async fn open_within(url: &str, patience: Duration) -> Result<Connection, OpenError> {
        Connection::handshake(url, None, &[], patience)
            .await
            .map(|(connection, _)| connection)
    }

    /// Connects and says `hello` with `token` (if any), asking for `features`; waits at most
    /// `patience` for each step. Returns the connection and what the `welcome` said.
    pub async fn handshake(
        url: &str,
        token: Option<&str>,
        features: &[Feature],
        patience: Duration,
    ) -> Result<(Connection, Welcome), OpenError> {
        // The nodes of a cluster, tried in turn from the one after the last tried.
        static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let urls: Vec<&str> = url.split(',').collect();
        let start = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let mut last = None;
        for k in 0..urls.len() {
            let url = urls[(start + k) % urls.len()];
            match Connection::handshake_one(url, token, features, patience).await {
                Ok(done) => return Ok(done),
                Err(e) if !e.retriable => return Err(e),
                Err(e) => last = Some(e),
            }
        }
        Err(last.unwrap_or(OpenError {
            message: "no server address".into(),
            retriable: false,
        }))
    }

    async fn handshake_one(
        url: &str,
        token: Option<&str>,
        features: &[Feature],
        patience: Duration,
    ) -> Result<(Connection, Welcome), OpenError> {
        let retry = |message: String| OpenError {
            message,
            retriable: true,
        };
        let within = seconds(patience);
        let connecting = tokio_tungstenite::connect_async(url);
        let (ws, _) = tokio::time::timeout(patience, connecting)
            .await
            .map_err(|_| retry(format!("no answer from {url} within {within}")))?
            .map_err(|e| retry(format!("cannot connect to {url}: {e}")))?;
        let mut connection = Connection {
            ws,
            next_id: 1,
            pacer: Pacer::new(DEFAULT_RATE),
        };
        connection
            .send(ClientMessage::Hello {
                protocol: PROTOCOL_VERSION,
                client: Some(format!("hakem-cli/{}", env!("CARGO_PKG_VERSION"))),
                token: token.map(str::to_string),
                features: features.iter().map(|f| f.as_str().to_string()).collect(),
            })
            .await
            .map_err(|e| retry(e.0))?;
        let welcome = tokio::time::timeout(patience, async {
            loop {
                match connection.recv().await.map_err(|e| retry(e.0))? {
                    None => {
                        return Err(retry(
                            "the server closed the connection during the handshake".into(),
                        ))
                    }
                    Some(Incoming::Message(ServerMessage::Welcome {
                        identity,
                        server_time_ms,
                        rate,
                        ..
                    })) => {
                        connection.pacer = Pacer::new(rate.unwrap_or(DEFAULT_RATE));
                        return Ok(Welcome {
                            identity,
                            server_time_ms,
                        });
                    }
                    Some(Incoming::Message(ServerMessage::Error(error))) => {
                        return Err(OpenError {
                            message: format!(
                                "the server refused the connection: {} ({})",
                                error.message, error.code
                            ),
                            // A wrong token or protocol stays wrong; a busy server
                            // (rate_limited, internal) may be fine a moment later.
                            retriable: !matches!(
                                error.code,
                                ErrorCode::UnsupportedProtocol
                                    | ErrorCode::Unauthorized
                                    | ErrorCode::Forbidden
                            ),
                        });
                    }
                    // Nothing else is expected before the welcome; skip it.
                    Some(_) => {}
                }
            }
        });
        let welcome = welcome
            .await
            .map_err(|_| retry(format!("{url} did not answer hello within {within}")))??;
        Ok((connection, welcome))
    }

    /// Sends a frame as it is, unpaced: the load tool writes its own JSON and keeps its own
    /// rate.
    pub async fn send_text(&mut self, text: String) -> Result<(), ClientError> {
        self.ws
            .send(Message::Text(text.into()))
            .await
            .map_err(|e| ClientError(format!("cannot send to the server: {e}")))
    }

    /// The next text frame as it is, or `None` once the server has closed the connection.
    pub async fn recv_text(&mut self) -> Result<Option<Utf8Bytes>, ClientError> {
        loop {
            match self.ws.next().await {
                None | Some(Ok(Message::Close(_))) => return Ok(None),
                Some(Err(e)) => return Err(ClientError(format!("{BROKE}{e}"))),
                Some(Ok(Message::Text(text))) => return Ok(Some(text)),
                Some(Ok(_)) => {}
            }
        }
    }

    /// Sends a message with a fresh `id`; returns that id, which the reply carries as `re`.
    pub async fn send(&mut self, message: ClientMessage) -> Result<u64, ClientError> {
        let id = self.next_id;
        self.next_id += 1;
        let frame = ClientFrame {
            id: Some(hakem_protocol::RequestId::from(id)),
            message,
        };
        let text = serde_json::to_string(&frame)
            .map_err(|e| ClientError(format!("cannot encode a message: {e}")))?;
        self.pacer.turn().await;
        self.ws
            .send(Message::Text(text.into()))
            .await
            .map_err(|e| ClientError(format!("cannot send to the server: {e}")))?;
        Ok(id)
    }

    /// The next frame, or `None` once the server has closed the connection.
    pub async fn recv(&mut self) -> Result<Option<Incoming>, ClientError> {
        // Binary frames are not part of the protocol; pings are answered by the library.
        Ok(self.recv_text().await?.map(|text| decode(text.as_str())))
    }

    /// Sends `message` and waits for its direct reply (`re` = its id), skipping other frames.
    pub async fn request(&mut self, message: ClientMessage) -> Result<Incoming, ClientError> {
        self.request_within(message, HANDSHAKE_TIMEOUT).await
    }

    /// [`Connection::request`], waiting up to `patience` for the reply.
    pub async fn request_within(
        &mut self,
        message: ClientMessage,
        patience: Duration,
    ) -> Result<Incoming, ClientError> {
        let id = self.send(message).await?;
        let reply = tokio::time::timeout(patience, async {
            loop {
                match self.recv().await? {
                    None => {
                        return Err(ClientError(
                            "the server closed the connection before replying".into(),
                        ))
                    }
                    Some(incoming) if reply_to(&incoming) == Some(id) => return Ok(incoming),
                    Some(_) => {}
                }
            }
        });
        reply.await.map_err(|_| {
            ClientError(format!(
                "no reply from the server within {}",
                seconds(patience)
            ))
        })?
    }

    /// Closes politely; errors do not matter at that point.
    pub async fn close(mut self) {
        let _ = self.ws.close(None).await;
    }
}

fn decode(text: &str) -> Incoming {
    match serde_json::from_str::<ServerMessage>(text) {
        Ok(message) => Incoming::Message(message),
        Err(_) => Incoming::Other(serde_json::from_str(text).unwrap_or(Value::Null)),
    }
}

/// The id of the request a frame answers, if it is a direct reply.
pub fn reply_to(incoming: &Incoming) -> Option<u64> {
    match incoming {
        Incoming::Message(message) => message.re().and_then(hakem_protocol::RequestId::as_u64),
        Incoming::Other(value) => value.get("re").and_then(Value::as_u64),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn server_addresses_are_normalised() {
        let ok = |text: &str| parse_server_url(text).unwrap();
        assert_eq!(ok("ws://127.0.0.1:8080/ws"), "ws://127.0.0.1:8080/ws");
        assert_eq!(ok("http://127.0.0.1:9000"), "ws://127.0.0.1:9000/ws");
        assert_eq!(ok("https://hakem.example"), "wss://hakem.example/ws");
        assert_eq!(ok("localhost:8080"), "ws://localhost:8080/ws");
        assert_eq!(ok("ws://h:1/custom/path"), "ws://h:1/custom/path");
        assert!(parse_server_url("ftp://h").is_err());
        assert_eq!(
            parse_server_url("a:1, http://b:2").unwrap(),
            "ws://a:1/ws,ws://b:2/ws"
        );
        assert!(parse_server_url("a:1,ftp://b").is_err());
        assert!(parse_server_url("ws://").is_err());
        assert!(parse_server_url("").is_err());
    }

    #[tokio::test(start_paused = true)]
    async fn messages_are_paced_within_the_servers_rate() {
        let mut pacer = Pacer::new(MessageRate {
            per_second: 10.0,
            burst: 8.0,
        });
        let start = tokio::time::Instant::now();
        // Half the burst at once, then nine a second.
        for _ in 0..4 {
            pacer.turn().await;
        }
        assert_eq!(start.elapsed(), Duration::ZERO);
        for _ in 0..9 {
            pacer.turn().await;
        }
        let took = start.elapsed().as_secs_f64();
        assert!((0.99..1.01).contains(&took), "{took}");
    }

    #[test]
    fn unknown_frames_do_not_fail() {
        assert!(matches!(
            decode(r#"{"type":"event","match":"m","seq":1,"event":{"kind":"fireworks"}}"#),
            Incoming::Other(_)
        ));
        assert!(matches!(decode("not json"), Incoming::Other(Value::Null)));
        let error = decode(r#"{"type":"error","re":4,"code":"new_code","message":"m"}"#);
        assert_eq!(reply_to(&error), Some(4));
    }
}
