//! Harness for black-box tests: starts the real `hakem-server` binary on a free port and talks
//! to it with real WebSocket and HTTP clients.

mod process;
mod relay;

pub use process::Proc;
pub use relay::Relay;

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream as StdTcpStream;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use serde_json::{json, Value};
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

/// How long a test waits for a frame it expects.
pub const PATIENCE: Duration = Duration::from_secs(10);

/// The value of one sample in a `/metrics` text: `sample` is the name with its labels as
/// written there (`hakem_rooms`, `hakem_errors_total{code="bad_request"}`).
pub fn metric_in(text: &str, sample: &str) -> Option<f64> {
    text.lines().find_map(|line| {
        let (key, value) = line.rsplit_once(' ')?;
        (key == sample).then(|| value.parse().ok()).flatten()
    })
}

/// A workspace binary, built by `cargo test --workspace` beside the test executables.
pub fn binary(name: &str) -> PathBuf {
    let exe = std::env::current_exe().expect("test executable path");
    // target/<profile>/deps/<test> -> target/<profile>/<name>
    let dir = exe
        .parent()
        .and_then(|deps| deps.parent())
        .expect("target directory");
    let path = dir.join(name);
    assert!(
        path.exists(),
        "{} is missing: run `cargo build --workspace` (cargo test --workspace builds it)",
        path.display()
    );
    path
}

/// Runs `hakem` to its end without input.
pub fn hakem(args: &[&str]) -> std::process::Output {
    Command::new(binary("hakem"))
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("run hakem")
}

/// Runs `hakem` to its end with `input` on its standard input.
pub fn hakem_with_input(args: &[&str], input: &str) -> std::process::Output {
    use std::io::Write;
    let mut child = Command::new(binary("hakem"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run hakem");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(input.as_bytes())
        .expect("write hakem's input");
    child.wait_with_output().expect("wait for hakem")
}

/// Is `CI=true` set? Then a missing tool is a failure, not a reason to skip.
pub fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| v == "true")
}

/// True when `python3` can import `module` (from the PyPI package `package`); under `CI=true`
/// its absence fails the test, elsewhere the test is skipped with a message.
pub fn python_has(module: &str, package: &str) -> bool {
    let ok = Command::new("python3")
        .args(["-c", &format!("import {module}")])
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        assert!(
            !in_ci(),
            "CI=true but python3 with the {package} package is missing"
        );
        eprintln!("skipping: python3 with the {package} package is not installed");
    }
    ok
}

static NEXT_DATABASE: AtomicU32 = AtomicU32::new(0);

/// A database for one server (and its restarts).
#[derive(Clone, Debug)]
pub struct Database {
    pub url: String,
    pub kind: &'static str,
}

impl Database {
    /// A fresh SQLite file in a new temporary directory.
    pub fn sqlite() -> Database {
        let n = NEXT_DATABASE.fetch_add(1, Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("hakem-test-{}-{n}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temporary directory");
        let file = dir.join("hakem.db");
        let _ = std::fs::remove_file(&file);
        Database {
            url: format!("sqlite://{}", file.display()),
            kind: "sqlite",
        }
    }

    /// A fresh PostgreSQL database, created through `HAKEM_TEST_POSTGRES` (a URL of a
    /// database the test user can connect to, with the right to create databases). `None`
    /// when the variable is not set; under `CI=true` that is a failure.
    pub fn postgres() -> Option<Database> {
        let Ok(admin) = std::env::var("HAKEM_TEST_POSTGRES") else {
            assert!(
                !in_ci(),
                "CI=true but HAKEM_TEST_POSTGRES is not set: .ci/run must start PostgreSQL"
            );
            eprintln!("skipping the PostgreSQL run: HAKEM_TEST_POSTGRES is not set");
            return None;
        };
        let n = NEXT_DATABASE.fetch_add(1, Ordering::Relaxed);
        let name = format!("hakem_test_{}_{n}", std::process::id());
        let status = Command::new("psql")
            .args([
                admin.as_str(),
                "-q",
                "-c",
                &format!("DROP DATABASE IF EXISTS {name}"),
            ])
            .args(["-c", &format!("CREATE DATABASE {name}")])
            .env("PGOPTIONS", "--client-min-messages=warning")
            .status()
            .expect("run psql");
        assert!(status.success(), "could not create database {name}");
        let (base, _) = admin.rsplit_once('/').expect("a URL with a database name");
        Some(Database {
            url: format!("{base}/{name}"),
            kind: "postgres",
        })
    }

    /// SQLite always, PostgreSQL when available.
    pub fn all() -> Vec<Database> {
        let mut all = vec![Database::sqlite()];
        all.extend(Database::postgres());
        all
    }
}

static NEXT_LOG: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// A running `hakem-server` process, killed when dropped.
pub struct Server {
    child: Child,
    /// `127.0.0.1:PORT`
    pub addr: String,
    pub database: Database,
    /// Where the server's log goes, when a test reads it.
    log: Option<PathBuf>,
    /// The log as a pipe that nobody reads, kept open (see [`Server::start_unread`]).
    unread_log: Option<std::os::fd::OwnedFd>,
}

impl Server {
    /// A server on a fresh SQLite database.
    pub fn start() -> Server {
        Server::start_on(Database::sqlite(), &[])
    }

    pub fn start_with(args: &[&str]) -> Server {
        Server::start_on(Database::sqlite(), args)
    }

    /// A server on `database`; `args` may name a `--listen` address (a free port by default).
    pub fn start_on(database: Database, args: &[&str]) -> Server {
        Server::launch(database, args, None)
    }

    /// A server whose log (warnings and worse) a test reads with [`Server::log`].
    pub fn start_logging(args: &[&str]) -> Server {
        let file = std::env::temp_dir().join(format!(
            "hakem-log-{}-{}.txt",
            std::process::id(),
            NEXT_LOG.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
        ));
        Server::launch(Database::sqlite(), args, Some(file))
    }

    /// A server whose log goes into a pipe that nobody reads: once the pipe is full, every
    /// write to it would wait.
    pub fn start_unread(args: &[&str], log_filter: &str) -> Server {
        use std::os::fd::{FromRawFd, OwnedFd};
        let mut ends: [libc::c_int; 2] = [-1; 2];
        // SAFETY: pipe2 writes two new descriptors into `ends`, each then owned exactly once;
        // F_SETPIPE_SZ only sets the capacity of that pipe. The smallest pipe Linux makes (a
        // page) fills within a few log lines, however few the server writes.
        let (reader, writer, capacity) = unsafe {
            assert_eq!(libc::pipe2(ends.as_mut_ptr(), libc::O_CLOEXEC), 0, "pipe2");
            let (reader, writer) = (OwnedFd::from_raw_fd(ends[0]), OwnedFd::from_raw_fd(ends[1]));
            let capacity = libc::fcntl(ends[0], libc::F_SETPIPE_SZ, 4096);
            (reader, writer, capacity)
        };
        assert!(capacity > 0, "F_SETPIPE_SZ on the log pipe");
        let mut server = Server::spawn(
            Database::sqlite(),
            args,
            Stdio::from(writer),
            log_filter,
            None,
        );
        server.unread_log = Some(reader);
        server
    }

    /// How many bytes the unread pipe of [`Server::start_unread`] holds at most.
    pub fn unread_log_capacity(&self) -> usize {
        use std::os::fd::AsRawFd;
        let Some(pipe) = &self.unread_log else {
            return 0;
        };
        // SAFETY: F_GETPIPE_SZ only reads the capacity of the pipe whose descriptor we own.
        let capacity = unsafe { libc::fcntl(pipe.as_raw_fd(), libc::F_GETPIPE_SZ) };
        usize::try_from(capacity).unwrap_or(0)
    }

    /// How many bytes of the log wait in the unread pipe of [`Server::start_unread`].
    pub fn unread_log_bytes(&self) -> usize {
        use std::os::fd::AsRawFd;
        let Some(pipe) = &self.unread_log else {
            return 0;
        };
        let mut waiting: libc::c_int = 0;
        // SAFETY: FIONREAD writes one int, the bytes readable from the descriptor we own.
        let done = unsafe { libc::ioctl(pipe.as_raw_fd(), libc::FIONREAD, &mut waiting) };
        assert_eq!(done, 0, "FIONREAD on the log pipe");
        usize::try_from(waiting).unwrap_or(0)
    }

    /// The log so far.
    pub fn log(&self) -> String {
        self.log
            .as_ref()
            .and_then(|file| std::fs::read_to_string(file).ok())
            .unwrap_or_default()
    }

    fn launch(database: Database, args: &[&str], log: Option<PathBuf>) -> Server {
        let stderr = match &log {
            Some(file) => Stdio::from(std::fs::File::create(file).expect("create the log file")),
            None => Stdio::inherit(),
        };
        let filter = std::env::var("HAKEM_TEST_LOG").unwrap_or_else(|_| "warn".into());
        Server::spawn(database, args, stderr, &filter, log)
    }

    fn spawn(
        database: Database,
        args: &[&str],
        stderr: Stdio,
        log_filter: &str,
        log: Option<PathBuf>,
    ) -> Server {
        let listen: &[&str] = if args.contains(&"--listen") {
            &[]
        } else {
            &["--listen", "127.0.0.1:0"]
        };
        let mut child = Command::new(binary("hakem-server"))
            .args(listen)
            .args(["--admin-token", "organizer-secret"])
            .args(["--database", &database.url])
            .args(args)
            .env("HAKEM_LOG", log_filter)
            .stdout(Stdio::piped())
            .stderr(stderr)
            .spawn()
            .expect("start hakem-server");
        let stdout = child.stdout.take().expect("stdout");
        let mut line = String::new();
        BufReader::new(stdout)
            .read_line(&mut line)
            .expect("read the ready line");
        let addr = line
            .trim()
            .strip_prefix("hakem-server listening on http://")
            .unwrap_or_else(|| panic!("unexpected first line {line:?}"))
            .to_string();
        Server {
            child,
            addr,
            database,
            log,
            unread_log: None,
        }
    }

    /// A new server process on the same database and the same port (after [`Server::kill`]),
    /// so that clients can reconnect to the address they know.
    pub fn restart(&mut self) {
        self.restart_with(&[]);
    }

    /// [`Server::restart`] with `args` for the new process.
    pub fn restart_with(&mut self, args: &[&str]) {
        self.kill();
        let listen = self.addr.clone();
        let mut all = vec!["--listen", listen.as_str()];
        all.extend_from_slice(args);
        let next = Server::start_on(self.database.clone(), &all);
        let old = std::mem::replace(self, next);
        std::mem::forget(old);
    }

    pub fn ws_url(&self) -> String {
        format!("ws://{}/ws", self.addr)
    }

    /// A plain HTTP GET; returns the status code and the body.
    pub fn get(&self, path: &str) -> (u16, String) {
        let (status, _, body) = self.get_with(path, &[]);
        (status, body)
    }

    /// A plain HTTP GET with extra header lines (`Name: value`); returns the status code, the
    /// response's head and the body.
    pub fn get_with(&self, path: &str, headers: &[&str]) -> (u16, String, String) {
        let mut stream = StdTcpStream::connect(&self.addr).expect("connect for HTTP");
        stream
            .set_read_timeout(Some(PATIENCE))
            .expect("read timeout");
        let extra: String = headers.iter().map(|h| format!("{h}\r\n")).collect();
        write!(
            stream,
            "GET {path} HTTP/1.1\r\nHost: {}\r\n{extra}Connection: close\r\n\r\n",
            self.addr
        )
        .expect("send request");
        let mut response = String::new();
        stream.read_to_string(&mut response).expect("read response");
        let status = response
            .split_whitespace()
            .nth(1)
            .and_then(|code| code.parse().ok())
            .unwrap_or(0);
        let (head, body) = response
            .split_once("\r\n\r\n")
            .map(|(head, body)| (head.to_string(), body.to_string()))
            .unwrap_or_default();
        (status, head, body)
    }

    /// `GET` of a JSON document.
    pub fn get_json(&self, path: &str) -> Value {
        let (status, body) = self.get(path);
        assert_eq!(status, 200, "GET {path}: {body}");
        serde_json::from_str(&body).unwrap_or_else(|e| panic!("GET {path}: {e}: {body}"))
    }

    /// The match state through HTTP, without the parts that change with time alone.
    pub fn match_state(&self, id: &str) -> Value {
        let mut state = self.get_json(&format!("/api/matches/{id}"));
        if let Some(object) = state.as_object_mut() {
            object.remove("clocks");
        }
        state
    }

    /// Kills the process at once (SIGKILL).
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// The process id, for signals.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Waits at most `patience` for the process to exit: whether it exited successfully, or
    /// `None` if it is still running.
    pub fn wait_within(&mut self, patience: Duration) -> Option<bool> {
        let deadline = std::time::Instant::now() + patience;
        loop {
            if let Ok(Some(status)) = self.child.try_wait() {
                return Some(status.success());
            }
            if std::time::Instant::now() >= deadline {
                return None;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Waits for the process to exit and returns whether it exited successfully.
    pub fn wait(&mut self) -> bool {
        self.child.wait().map(|s| s.success()).unwrap_or(false)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.kill();
    }
}

/// A WebSocket client that keeps every frame it has read but not yet consumed.
pub struct Client {
    ws: WebSocketStream<MaybeTlsStream<TcpStream>>,
    inbox: VecDeque<Value>,
    next_id: u64,
    pub name: String,
    /// The `welcome`, when the connection was opened by [`Client::connect_url_as`].
    welcome: Value,
}

impl Client {
    /// Connects without saying hello.
    pub async fn connect_raw(server: &Server, name: &str) -> Client {
        Client::connect_raw_url(&server.ws_url(), name)
            .await
            .expect("WebSocket connect")
    }

    /// Connects to a `ws://` URL without saying hello; `None` if nobody answers there.
    pub async fn connect_raw_url(url: &str, name: &str) -> Option<Client> {
        let (ws, _) = tokio::time::timeout(PATIENCE, tokio_tungstenite::connect_async(url))
            .await
            .ok()?
            .ok()?;
        Some(Client {
            ws,
            inbox: VecDeque::new(),
            next_id: 1,
            name: name.to_string(),
            welcome: Value::Null,
        })
    }

    /// Connects to a `ws://` URL and says hello as a guest; `None` if that fails.
    pub async fn try_connect_url(url: &str, name: &str) -> Option<Client> {
        let mut client = Client::connect_raw_url(url, name).await?;
        let hello = json!({"type": "hello", "protocol": 1, "client": "blackbox/1"});
        if !client.try_send(hello).await {
            return None;
        }
        let welcome = client.try_next().await?;
        (welcome["type"] == "welcome").then_some(client)
    }

    /// Connects to a `ws://` URL and says hello with `token`.
    pub async fn connect_url_as(url: &str, name: &str, token: &str) -> Client {
        let mut client = Client::connect_raw_url(url, name)
            .await
            .expect("WebSocket connect");
        client
            .send(json!({"type": "hello", "protocol": 1, "client": "blackbox/1", "token": token}))
            .await;
        let welcome = client.next().await;
        assert_eq!(welcome["type"], "welcome", "{name}: {welcome}");
        client.welcome = welcome;
        client
    }

    /// What the `welcome` of [`Client::connect_url_as`] said of the connection's identity.
    pub fn welcome_identity(&self) -> &Value {
        &self.welcome["identity"]
    }

    /// The `welcome` of [`Client::connect_url_as`].
    pub fn welcome(&self) -> &Value {
        &self.welcome
    }

    /// The next frame, or `None` once the connection is closed (or silent for long).
    pub async fn try_next(&mut self) -> Option<Value> {
        if let Some(frame) = self.inbox.pop_front() {
            return Some(frame);
        }
        match tokio::time::timeout(PATIENCE, self.ws.next()).await {
            Ok(Some(Ok(Message::Text(text)))) => serde_json::from_str(text.as_str()).ok(),
            Ok(Some(Ok(Message::Close(_)))) | Ok(None) | Ok(Some(Err(_))) | Err(_) => None,
            Ok(Some(Ok(_))) => Box::pin(self.try_next()).await,
        }
    }

    /// [`Client::request`] that answers `None` instead of failing when the connection closes.
    pub async fn try_request(&mut self, mut message: Value) -> Option<Value> {
        let id = format!("{}-{}", self.name, self.next_id);
        self.next_id += 1;
        message["id"] = json!(id);
        if !self.try_send(message).await {
            return None;
        }
        if let Some(i) = self.inbox.iter().position(|f| f["re"] == json!(id)) {
            return self.inbox.remove(i);
        }
        loop {
            match tokio::time::timeout(PATIENCE, self.ws.next()).await {
                Ok(Some(Ok(Message::Text(text)))) => {
                    let frame: Value = serde_json::from_str(text.as_str()).ok()?;
                    if frame["re"] == json!(id) {
                        return Some(frame);
                    }
                    self.inbox.push_back(frame);
                }
                Ok(Some(Ok(Message::Close(_)))) | Ok(None) | Ok(Some(Err(_))) | Err(_) => {
                    return None
                }
                Ok(Some(Ok(_))) => {}
            }
        }
    }

    /// Connects and says hello (as a guest, or with `token`).
    pub async fn connect(server: &Server, name: &str, token: Option<&str>) -> Client {
        Client::connect_with(server, name, token, &[]).await
    }

    /// Connects and says hello asking for the extensions `features`.
    pub async fn connect_with(
        server: &Server,
        name: &str,
        token: Option<&str>,
        features: &[&str],
    ) -> Client {
        let mut client = Client::connect_raw(server, name).await;
        let mut hello = json!({"type": "hello", "protocol": 1, "client": "blackbox/1"});
        if let Some(token) = token {
            hello["token"] = json!(token);
        }
        if !features.is_empty() {
            hello["features"] = json!(features);
        }
        client.send(hello).await;
        let welcome = client.next().await;
        assert_eq!(welcome["type"], "welcome", "{}: {welcome}", client.name);
        client
    }

    pub async fn send(&mut self, message: Value) {
        self.send_text(message.to_string()).await;
    }

    /// Sends a frame; false when the connection is already closed.
    pub async fn try_send(&mut self, message: Value) -> bool {
        self.ws
            .send(Message::Text(message.to_string().into()))
            .await
            .is_ok()
    }

    pub async fn send_text(&mut self, text: String) {
        self.ws
            .send(Message::Text(text.into()))
            .await
            .expect("send a frame");
    }

    /// Reads one frame from the socket (not the inbox), or `None` when the socket closed.
    async fn read(&mut self) -> Option<Value> {
        self.read_within(PATIENCE).await
    }

    async fn read_within(&mut self, patience: Duration) -> Option<Value> {
        loop {
            let frame = tokio::time::timeout(patience, self.ws.next())
                .await
                .unwrap_or_else(|_| panic!("{}: no frame within {patience:?}", self.name));
            match frame {
                Some(Ok(Message::Text(text))) => {
                    return Some(serde_json::from_str(text.as_str()).expect("JSON frame"))
                }
                Some(Ok(Message::Close(_))) | None | Some(Err(_)) => return None,
                Some(Ok(_)) => continue,
            }
        }
    }

    /// The next frame, in order.
    pub async fn next(&mut self) -> Value {
        if let Some(frame) = self.inbox.pop_front() {
            return frame;
        }
        let name = self.name.clone();
        self.read()
            .await
            .unwrap_or_else(|| panic!("{name}: connection closed"))
    }

    /// The first frame (buffered or new) that satisfies `wanted`; frames before it stay
    /// buffered, in order.
    pub async fn find(&mut self, wanted: impl Fn(&Value) -> bool) -> Value {
        if let Some(i) = self.inbox.iter().position(&wanted) {
            return self.inbox.remove(i).expect("index in range");
        }
        loop {
            let name = self.name.clone();
            let frame = self
                .read()
                .await
                .unwrap_or_else(|| panic!("{name}: connection closed while waiting"));
            if wanted(&frame) {
                return frame;
            }
            self.inbox.push_back(frame);
        }
    }

    /// The next event of `kind`, dropping the frames before it.
    pub async fn event(&mut self, kind: &str) -> Value {
        loop {
            let frame = self.next().await;
            if frame["type"] == "event" && frame["event"]["kind"] == kind {
                return frame;
            }
        }
    }

    /// Sends `message` with a fresh `id` and returns the direct reply (`ack`, `error`,
    /// `match_created`, `matches`, `pong`), leaving other frames buffered.
    pub async fn request(&mut self, mut message: Value) -> Value {
        let id = format!("{}-{}", self.name, self.next_id);
        self.next_id += 1;
        message["id"] = json!(id);
        self.send(message).await;
        self.find(|frame| frame["re"] == json!(id)).await
    }

    /// Sends a request that must be refused with `code`; returns the error.
    pub async fn refused(&mut self, message: Value, code: &str) -> Value {
        let reply = self.request(message.clone()).await;
        assert_eq!(
            reply["type"], "error",
            "{}: {message} -> {reply}",
            self.name
        );
        assert_eq!(reply["code"], code, "{}: {message} -> {reply}", self.name);
        assert!(
            reply["message"].as_str().is_some_and(|m| !m.is_empty()),
            "{reply}"
        );
        reply
    }

    /// Sends a request that must be accepted; returns the ack.
    pub async fn accepted(&mut self, message: Value) -> Value {
        let reply = self.request(message.clone()).await;
        assert_eq!(reply["type"], "ack", "{}: {message} -> {reply}", self.name);
        reply
    }

    /// Frames read so far and not consumed.
    pub fn buffered(&self) -> impl Iterator<Item = &Value> {
        self.inbox.iter()
    }

    /// Drops buffered frames.
    pub fn clear(&mut self) {
        self.inbox.clear();
    }

    /// Waits for the server to close the connection; returns the frames read before that.
    pub async fn closed(&mut self) -> Vec<Value> {
        let mut frames: Vec<Value> = self.inbox.drain(..).collect();
        while let Some(frame) = self.read_within(3 * PATIENCE).await {
            frames.push(frame);
        }
        frames
    }

    pub async fn close(mut self) {
        let _ = self.ws.close(None).await;
    }
}

/// A created match with its tokens.
pub struct Match {
    pub id: String,
    pub p1: String,
    pub p2: String,
    pub arbiter: String,
}

/// Creates a match through `client` with the given `create_match` fields.
pub async fn create_match(client: &mut Client, fields: Value) -> Match {
    let mut message = json!({"type": "create_match"});
    for (key, value) in fields.as_object().expect("fields object") {
        message[key] = value.clone();
    }
    let reply = client.request(message).await;
    assert_eq!(reply["type"], "match_created", "{reply}");
    let text = |v: &Value| v.as_str().expect("string").to_string();
    Match {
        id: text(&reply["match"]),
        p1: text(&reply["seat_tokens"]["p1"]),
        p2: text(&reply["seat_tokens"]["p2"]),
        arbiter: text(&reply["arbiter_token"]),
    }
}

/// Two players seated in a new match; returns (p1, p2, match).
pub async fn seated_pair(server: &Server, fields: Value) -> (Client, Client, Match) {
    let mut p1 = Client::connect(server, "p1", None).await;
    let m = create_match(&mut p1, fields).await;
    let mut p2 = Client::connect(server, "p2", None).await;
    let state = p1
        .request(json!({"type": "join", "match": m.id, "seat_token": m.p1}))
        .await;
    assert_eq!(state["type"], "ack", "{state}");
    let state = p2
        .request(json!({"type": "join", "match": m.id, "seat_token": m.p2}))
        .await;
    assert_eq!(state["type"], "ack", "{state}");
    (p1, p2, m)
}
