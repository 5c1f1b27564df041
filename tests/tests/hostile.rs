//! Hostile clients against a real server process, one test per way a single guest could take
//! the server down or around its rules: silent and dribbling connections, connection caps, a
//! clock pushed past the end of time, floods of new matches and of messages spread over many
//! connections, a crash that would refund thinking time, pages from other sites, protocol
//! violations (each closed with its status code), request ids too big for a float, and tokens
//! nobody issued.

use std::io::{Read, Write};
use std::net::TcpStream as StdTcpStream;
use std::time::{Duration, Instant};

use futures_util::{SinkExt, StreamExt};
use hakem_blackbox::{create_match, Client, Server};
use serde_json::{json, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::Message;

/// CPU seconds the process has used (user and system), from /proc.
fn cpu_seconds(pid: u32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).expect("read /proc stat");
    // Fields after the command name, which is in parentheses and may hold spaces.
    let after = &stat[stat.rfind(')').expect("comm") + 2..];
    let fields: Vec<&str> = after.split_whitespace().collect();
    let ticks: f64 = fields[11].parse::<f64>().unwrap() + fields[12].parse::<f64>().unwrap();
    ticks / 100.0
}

/// CPU the server burns over `window` while nobody asks it anything.
fn idle_cpu(server: &Server, window: Duration) -> f64 {
    let before = cpu_seconds(server.pid());
    std::thread::sleep(window);
    cpu_seconds(server.pid()) - before
}

/// Whether the server closed `stream` (EOF or reset) within `patience`.
fn closed_within(stream: &mut StdTcpStream, patience: Duration) -> bool {
    stream.set_read_timeout(Some(patience)).unwrap();
    let mut buf = [0u8; 256];
    loop {
        match stream.read(&mut buf) {
            Ok(0) => return true,
            Ok(_) => continue,
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => return false,
            Err(e) if e.kind() == std::io::ErrorKind::TimedOut => return false,
            Err(_) => return true,
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn silent_and_dribbling_connections_are_cut_and_caps_refuse_with_a_warning() {
    let server = Server::start_logging(&["--header-timeout", "1", "--max-connections-per-ip", "6"]);
    let mut silent: Vec<StdTcpStream> = (0..5)
        .map(|_| StdTcpStream::connect(&server.addr).unwrap())
        .collect();
    // An upgrade request dribbled a byte at a time never completes its head.
    let mut dribbler = StdTcpStream::connect(&server.addr).unwrap();
    dribbler.write_all(b"GET /ws HTTP/1.1\r\n").unwrap();
    // The address holds its six: the seventh is refused at once.
    let mut seventh = StdTcpStream::connect(&server.addr).unwrap();
    assert!(
        closed_within(&mut seventh, Duration::from_secs(2)),
        "a connection over the per-address cap is closed at once"
    );
    let started = Instant::now();
    for _ in 0..3 {
        let _ = dribbler.write_all(b"X");
        std::thread::sleep(Duration::from_millis(300));
    }
    for stream in silent.iter_mut().chain(std::iter::once(&mut dribbler)) {
        assert!(
            closed_within(stream, Duration::from_secs(5)),
            "a connection with no whole request head is closed after the header timeout"
        );
    }
    assert!(started.elapsed() < Duration::from_secs(8));
    // The slots are free again.
    let mut client = Client::connect(&server, "after", None).await;
    assert_eq!(
        client.request(json!({"type": "ping"})).await["type"],
        "pong"
    );
    let log = server.log();
    assert!(
        log.contains("connections_per_ip") && log.contains("header_timeout"),
        "refusals are logged: {log}"
    );
    let metrics = server.get("/metrics").1;
    assert!(
        metrics.contains(r#"hakem_limit_refusals_total{limit="connections_per_ip"}"#),
        "{metrics}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn out_of_file_descriptors_the_server_backs_off_and_recovers() {
    // A server allowed 48 open files in all: a burst of silent connections exhausts them.
    let mut command = std::process::Command::new("sh");
    command.arg("-c").arg(format!(
        "ulimit -n 48 && exec {} --listen 127.0.0.1:0 --admin-token t --database sqlite://{} \
         --header-timeout 2 --max-connections 0",
        hakem_blackbox::binary("hakem-server").display(),
        std::env::temp_dir()
            .join(format!("hakem-fd-{}.db", std::process::id()))
            .display()
    ));
    let mut proc = hakem_blackbox::Proc::spawn("hakem-server", command);
    let line = proc.expect("listening on http://");
    let addr = line.trim().rsplit("http://").next().unwrap().to_string();
    let pid = proc.pid();
    let _held: Vec<StdTcpStream> = (0..80)
        .filter_map(|_| StdTcpStream::connect(&addr).ok())
        .collect();
    let before = cpu_seconds(pid);
    std::thread::sleep(Duration::from_secs(2));
    let used = cpu_seconds(pid) - before;
    assert!(
        used < 1.0,
        "the accept loop must not spin: {used:.2} s of CPU in 2 s"
    );
    drop(_held);
    // Once the silent ones are gone, anyone is served again.
    tokio::time::sleep(Duration::from_secs(3)).await;
    let (mut ws, _) = tokio_tungstenite::connect_async(format!("ws://{addr}/ws"))
        .await
        .expect("the server accepts again");
    ws.send(Message::Text(
        json!({"type": "hello", "protocol": 1}).to_string().into(),
    ))
    .await
    .unwrap();
    let welcome = ws.next().await.unwrap().unwrap();
    assert!(welcome.to_text().unwrap().contains("welcome"));
}

/// A match with a clock, set 1 running, and its arbiter: all as one guest could make it.
async fn running_match(server: &Server) -> (Client, Client, Client, String) {
    let mut guest = Client::connect(server, "guest", None).await;
    let m = create_match(
        &mut guest,
        json!({"game": "pentago", "clock": {"initial_ms": 60000, "increment_ms": 0}}),
    )
    .await;
    let mut arbiter = Client::connect(server, "arbiter", None).await;
    arbiter
        .accepted(json!({"type": "join", "match": m.id, "arbiter_token": m.arbiter}))
        .await;
    guest
        .accepted(json!({"type": "join", "match": m.id, "seat_token": m.p1}))
        .await;
    let mut p2 = Client::connect(server, "p2", None).await;
    p2.accepted(json!({"type": "join", "match": m.id, "seat_token": m.p2}))
        .await;
    guest
        .accepted(json!({"type": "ready", "match": m.id}))
        .await;
    p2.accepted(json!({"type": "ready", "match": m.id})).await;
    let state = server.get_json(&format!("/api/matches/{}", m.id));
    if state["clocks"]["running"].is_null() {
        arbiter
            .accepted(json!({"type": "start_set", "match": m.id}))
            .await;
    }
    (guest, p2, arbiter, m.id)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_arbiter_cannot_push_a_clock_past_a_day_and_the_room_never_spins() {
    let server = Server::start();
    let (_p1, _p2, mut arbiter, id) = running_match(&server).await;
    for delta in ["9223372036854775807", "-9223372036854775808", "86400001"] {
        arbiter
            .send_text(format!(
                r#"{{"type":"adjust_clock","match":"{id}","seat":"p1","delta_ms":{delta},"id":"a{delta}"}}"#
            ))
            .await;
        let reply = arbiter
            .find(|f| f["re"] == json!(format!("a{delta}")))
            .await;
        assert_eq!(reply["code"], "bad_request", "{reply}");
    }
    // Twice the largest number: refused both times, the clocks as they were.
    for _ in 0..2 {
        arbiter
            .refused(
                json!({"type": "adjust_clock", "match": id, "seat": "p1", "delta_ms": i64::MAX}),
                "bad_request",
            )
            .await;
    }
    let state = server.get_json(&format!("/api/matches/{id}"));
    let p1_ms = state["clocks"]["p1_ms"].as_u64().unwrap();
    assert!(p1_ms <= 60_000 && p1_ms > 50_000, "{state}");
    // Within bounds an adjustment is taken.
    arbiter
        .accepted(json!({"type": "adjust_clock", "match": id, "seat": "p2", "delta_ms": 30000}))
        .await;
    let used = idle_cpu(&server, Duration::from_secs(2));
    assert!(
        used < 0.5,
        "a room with an adjusted clock must not spin: {used:.2} s of CPU in 2 s"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn guests_at_one_address_create_and_send_within_limits_the_organizer_is_exempt() {
    let server = Server::start_with(&[
        "--guest-create-burst",
        "4",
        "--guest-creates-per-minute",
        "1",
        "--guest-waiting-per-ip",
        "3",
        "--ip-rate-limit",
        "20",
        "--ip-rate-burst",
        "40",
    ]);
    let create = json!({"type": "create_match", "game": "quoridor"});
    let mut guest = Client::connect(&server, "guest", None).await;
    let mut made = Vec::new();
    for _ in 0..3 {
        let reply = guest.request(create.clone()).await;
        assert_eq!(reply["type"], "match_created", "{reply}");
        made.push(reply);
    }
    // Three wait for their players: a fourth from the same address is refused...
    let refused = guest.refused(create.clone(), "rate_limited").await;
    assert!(
        refused["message"].as_str().unwrap().contains("wait"),
        "{refused}"
    );
    // ... from another connection too.
    let mut other = Client::connect(&server, "other", None).await;
    other.refused(create.clone(), "rate_limited").await;
    // Once one starts, another may be made; then the burst (4) is spent.
    let mut players = Vec::new();
    for made in &made[..2] {
        let id = made["match"].as_str().unwrap();
        for (name, seat) in [("a", "p1"), ("b", "p2")] {
            let mut player = Client::connect(&server, name, None).await;
            let token = made["seat_tokens"][seat].as_str().unwrap();
            player
                .accepted(json!({"type": "join", "match": id, "seat_token": token}))
                .await;
            players.push(player);
        }
        for player in players.iter_mut().rev().take(2) {
            player.accepted(json!({"type": "ready", "match": id})).await;
        }
        let started = server.get_json(&format!("/api/matches/{id}"));
        assert_eq!(started["status"], "playing", "{started}");
    }
    assert_eq!(guest.request(create.clone()).await["type"], "match_created");
    let spent = guest.refused(create.clone(), "rate_limited").await;
    assert!(
        spent["message"].as_str().unwrap().contains("fast"),
        "{spent}"
    );
    // The organizer is not a guest.
    let mut organizer = Client::connect(&server, "organizer", Some("organizer-secret")).await;
    for _ in 0..10 {
        assert_eq!(
            organizer.request(create.clone()).await["type"],
            "match_created"
        );
    }

    // Messages: 5 connections at 30 each are 150 from one address; the address allows 40 at
    // once and 20 a second after (each connection alone, 20 a second and 40 at once, would let
    // all of them through at once).
    let mut flooders = Vec::new();
    for i in 0..5 {
        flooders.push(Client::connect(&server, &format!("f{i}"), None).await);
    }
    let started = Instant::now();
    for flooder in flooders.iter_mut() {
        for i in 0..30 {
            flooder.send(json!({"type": "ping", "id": i})).await;
        }
    }
    let mut limited = 0;
    for flooder in flooders.iter_mut() {
        flooder.find(|f| f["re"] == json!(29)).await;
        limited += flooder
            .buffered()
            .filter(|f| f["code"] == "rate_limited")
            .count();
    }
    let took = started.elapsed();
    // The hellos took 5 of the address's 40.
    let floor = Duration::from_secs_f64((150.0 - 35.0 - 2.0) / 20.0);
    assert!(
        took >= floor,
        "150 pings from one address answered in {took:?}: faster than its 20 a second"
    );
    assert!(limited >= 1, "the address was told to slow down");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crash_refunds_at_most_a_second_of_thinking_and_charges_no_downtime() {
    let mut server = Server::start();
    let (_p1, _p2, _arbiter, id) = running_match(&server).await;
    let state = server.get_json(&format!("/api/matches/{id}"));
    let mover = state["clocks"]["running"].as_str().unwrap().to_string();
    let key = format!("{mover}_ms");
    let at_start = state["clocks"][&key].as_u64().unwrap();
    let thinking = Duration::from_millis(3_000);
    tokio::time::sleep(thinking).await;
    server.kill();
    let down = Duration::from_millis(2_000);
    tokio::time::sleep(down).await;
    server.restart();
    let after = server.get_json(&format!("/api/matches/{id}"));
    let left = after["clocks"][&key].as_u64().unwrap();
    let charged = at_start - left;
    assert!(
        charged >= 3_000 - 1_100,
        "the mover thought 3 s before the crash and was charged {charged} ms"
    );
    assert!(
        charged < 3_000 + 1_500,
        "the 2 s the server was down are charged to nobody: charged {charged} ms"
    );
}

/// The status line of a WebSocket upgrade request with these extra headers.
fn upgrade_status(server: &Server, headers: &str) -> u16 {
    let mut stream = StdTcpStream::connect(&server.addr).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(5)))
        .unwrap();
    write!(
        stream,
        "GET /ws HTTP/1.1\r\nHost: {}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
         Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n{headers}\r\n",
        server.addr
    )
    .unwrap();
    let mut buf = [0u8; 512];
    let n = stream.read(&mut buf).unwrap_or(0);
    let text = String::from_utf8_lossy(&buf[..n]);
    text.split_whitespace()
        .nth(1)
        .and_then(|code| code.parse().ok())
        .unwrap_or(0)
}

#[test]
fn pages_of_other_sites_may_not_open_a_socket() {
    let server = Server::start_with(&["--allowed-origin", "https://club.example"]);
    let own = format!("Origin: http://{}\r\n", server.addr);
    assert_eq!(
        upgrade_status(&server, ""),
        101,
        "no Origin: a bot or terminal"
    );
    assert_eq!(upgrade_status(&server, &own), 101, "the server's own page");
    assert_eq!(
        upgrade_status(&server, "Origin: https://club.example\r\n"),
        101
    );
    assert_eq!(
        upgrade_status(&server, "Origin: https://evil.example\r\n"),
        403
    );
    assert_eq!(upgrade_status(&server, "Origin: null\r\n"), 403);
}

/// A raw WebSocket, for frames no library would send.
struct RawSocket {
    tcp: TcpStream,
}

impl RawSocket {
    async fn open(server: &Server) -> RawSocket {
        let mut tcp = TcpStream::connect(&server.addr).await.unwrap();
        let request = format!(
            "GET /ws HTTP/1.1\r\nHost: {}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
             Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n",
            server.addr
        );
        tcp.write_all(request.as_bytes()).await.unwrap();
        let mut head = Vec::new();
        while !head.ends_with(b"\r\n\r\n") {
            let mut byte = [0u8; 1];
            tcp.read_exact(&mut byte).await.unwrap();
            head.push(byte[0]);
        }
        assert!(head.starts_with(b"HTTP/1.1 101"));
        RawSocket { tcp }
    }

    /// A masked client frame with this first byte (FIN, RSV, opcode) and payload; `length`
    /// overrides the length the header claims.
    async fn frame(&mut self, first: u8, payload: &[u8], length: Option<u64>) {
        let mask = [1u8, 2, 3, 4];
        let mut out = vec![first];
        let len = length.unwrap_or(payload.len() as u64);
        if len < 126 {
            out.push(0x80 | len as u8);
        } else if len <= 0xFFFF {
            out.push(0x80 | 126);
            out.extend_from_slice(&(len as u16).to_be_bytes());
        } else {
            out.push(0x80 | 127);
            out.extend_from_slice(&len.to_be_bytes());
        }
        out.extend_from_slice(&mask);
        out.extend(payload.iter().enumerate().map(|(i, b)| b ^ mask[i % 4]));
        let _ = self.tcp.write_all(&out).await;
    }

    /// The status code of the Close frame the server sends (skipping data frames), if any.
    async fn close_code(&mut self) -> Option<u16> {
        let read = async {
            loop {
                let mut head = [0u8; 2];
                self.tcp.read_exact(&mut head).await.ok()?;
                let mut len = u64::from(head[1] & 0x7F);
                if len == 126 {
                    let mut ext = [0u8; 2];
                    self.tcp.read_exact(&mut ext).await.ok()?;
                    len = u64::from(u16::from_be_bytes(ext));
                } else if len == 127 {
                    let mut ext = [0u8; 8];
                    self.tcp.read_exact(&mut ext).await.ok()?;
                    len = u64::from_be_bytes(ext);
                }
                let mut payload = vec![0u8; len as usize];
                self.tcp.read_exact(&mut payload).await.ok()?;
                if head[0] & 0x0F == 0x8 {
                    return (payload.len() >= 2)
                        .then(|| u16::from_be_bytes([payload[0], payload[1]]));
                }
            }
        };
        tokio::time::timeout(Duration::from_secs(15), read)
            .await
            .ok()
            .flatten()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn protocol_violations_are_closed_with_their_status_codes() {
    let server = Server::start();
    // Invalid UTF-8 in a text frame: 1007.
    let mut socket = RawSocket::open(&server).await;
    socket.frame(0x81, &[0xC3, 0x28, 0xFF], None).await;
    assert_eq!(socket.close_code().await, Some(1007));
    // Reserved bits set with no extension agreed: 1002.
    let mut socket = RawSocket::open(&server).await;
    socket.frame(0xF1, b"{}", None).await;
    assert_eq!(socket.close_code().await, Some(1002));
    // A frame far over the socket's limit: 1009, without the server reading it all.
    let mut socket = RawSocket::open(&server).await;
    socket.frame(0x81, b"{", Some(64 * 1024 * 1024)).await;
    assert_eq!(socket.close_code().await, Some(1009));
    // A flood, more than a whole burst ahead of its rate: 1008 (policy).
    let mut socket = RawSocket::open(&server).await;
    let hello = json!({"type": "hello", "protocol": 1}).to_string();
    socket.frame(0x81, hello.as_bytes(), None).await;
    for _ in 0..200 {
        socket.frame(0x81, br#"{"type":"ping"}"#, None).await;
    }
    assert_eq!(socket.close_code().await, Some(1008));
    // No hello within 10 s: 1008 too.
    let mut socket = RawSocket::open(&server).await;
    assert_eq!(socket.close_code().await, Some(1008));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_clean_stop_says_going_away_to_every_connection() {
    let mut server = Server::start();
    let mut sockets = Vec::new();
    for _ in 0..3 {
        let mut socket = RawSocket::open(&server).await;
        let hello = json!({"type": "hello", "protocol": 1}).to_string();
        socket.frame(0x81, hello.as_bytes(), None).await;
        sockets.push(socket);
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    let status = std::process::Command::new("kill")
        .args(["-TERM", &server.pid().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    for socket in sockets.iter_mut() {
        assert_eq!(socket.close_code().await, Some(1001));
    }
    assert!(server.wait(), "the server exits cleanly");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn request_ids_come_back_exactly_and_unknown_tokens_are_guests() {
    let server = Server::start();
    let (mut ws, _) = tokio_tungstenite::connect_async(server.ws_url())
        .await
        .unwrap();
    let id = "123456789012345678901234567890";
    for text in [
        r#"{"type":"hello","protocol":1,"token":"no-such-token","id":1}"#.to_string(),
        format!(r#"{{"type":"ping","id":{id}}}"#),
        format!(r#"{{"type":"join","match":"nope","id":{id}.5}}"#),
    ] {
        ws.send(Message::Text(text.into())).await.unwrap();
    }
    let mut texts = Vec::new();
    while texts.len() < 3 {
        if let Some(Ok(Message::Text(text))) = ws.next().await {
            texts.push(text.to_string());
        }
    }
    let welcome: Value = serde_json::from_str(&texts[0]).unwrap();
    assert_eq!(welcome["identity"]["kind"], "guest", "{welcome}");
    assert!(texts[1].contains(&format!(r#""re":{id}"#)), "{}", texts[1]);
    assert!(
        texts[2].contains(&format!(r#""re":{id}.5"#)),
        "{}",
        texts[2]
    );
    let metrics = server.get("/metrics").1;
    assert!(
        metrics.contains(r#"hakem_connections{kind="guest"} 1"#),
        "counted as a guest: {metrics}"
    );
    assert!(!metrics.contains(r#"hakem_connections{kind="player"} 1"#));
}

/// A guest connection that says which address it forwards, as a proxy in front would.
async fn forwarded_guest(
    server: &Server,
    forwarded_for: &str,
) -> tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<TcpStream>> {
    use tokio_tungstenite::tungstenite::client::IntoClientRequest;
    let mut request = server.ws_url().into_client_request().unwrap();
    request
        .headers_mut()
        .insert("x-forwarded-for", forwarded_for.parse().unwrap());
    let (mut ws, _) = tokio_tungstenite::connect_async(request).await.unwrap();
    let hello = json!({"type": "hello", "protocol": 1}).to_string();
    ws.send(Message::Text(hello.into())).await.unwrap();
    ws.next().await.unwrap().unwrap();
    ws
}

/// Creates a quoridor match; the reply's `type` (`match_created`, or `error` and its code).
async fn create_as(
    ws: &mut tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<TcpStream>>,
) -> String {
    let create = json!({"type": "create_match", "id": "c", "game": "quoridor"}).to_string();
    ws.send(Message::Text(create.into())).await.unwrap();
    loop {
        let Some(Ok(Message::Text(text))) = ws.next().await else {
            panic!("closed")
        };
        let reply: Value = serde_json::from_str(text.as_str()).unwrap();
        if reply["re"] == "c" {
            return match reply["code"].as_str() {
                Some(code) => code.to_string(),
                None => reply["type"].as_str().unwrap().to_string(),
            };
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn behind_a_proxy_the_limits_apply_to_the_address_it_forwards() {
    let server =
        Server::start_with(&["--unlimited-ip", "127.0.0.1", "--guest-waiting-per-ip", "1"]);
    let mut first = forwarded_guest(&server, "198.51.100.9, 203.0.113.5").await;
    assert_eq!(create_as(&mut first).await, "match_created");
    assert_eq!(create_as(&mut first).await, "rate_limited");
    // Another client of the same proxy has its own allowance.
    let mut second = forwarded_guest(&server, "203.0.113.6").await;
    assert_eq!(create_as(&mut second).await, "match_created");
    // A client that is not a listed proxy is counted as itself, whatever it says.
    let liar = Server::start_with(&["--guest-waiting-per-ip", "1"]);
    let mut a = forwarded_guest(&liar, "203.0.113.7").await;
    let mut b = forwarded_guest(&liar, "203.0.113.8").await;
    assert_eq!(create_as(&mut a).await, "match_created");
    assert_eq!(create_as(&mut b).await, "rate_limited");
}
