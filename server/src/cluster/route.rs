//! Frames for rooms owned by another node, over NATS.
//!
//! A connection here that joins a room owned elsewhere gets a [`RemoteRoom`]: its joins,
//! actions and leaves are requests to the owner (`hakem.node.<incarnation>.room`), answered
//! once the room has queued them. On the owner, the connection is a [`Proxy`]: a member of
//! the room like any other, whose queue is published to the connection's node
//! (`hakem.node.<incarnation>.member`, the connection in a header) in order; that node puts
//! each frame in the connection's own queue. A room's events thus reach every member, on
//! every node, in the room's order and numbered by the room. Frames a client sends stay in
//! the text it sent them in, and the owner reads them as its own sessions do.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use async_nats::HeaderMap;
use axum::extract::ws::Utf8Bytes;
use futures_util::StreamExt;
use hakem_protocol::tournament::{TournamentSummary, TournamentView};
use hakem_protocol::{MatchState, MatchSummary, RequestId};
use serde::{Deserialize, Serialize};
use tokio::sync::mpsc;

use super::Cluster;
use crate::outbox::{ConnId, Kill, Outbox, Outgoing};
use crate::room::{Credential, Gone, Join, Speaker};
use crate::App;

/// Frames queued for a connection of another node before they are published.
const PROXY_QUEUE: usize = 4096;

/// A request to the node that owns a room.
#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum ToOwner {
    Join {
        from: String,
        conn: ConnId,
        match_id: String,
        credential: Credential,
        since_seq: Option<u64>,
        history: bool,
        legal_moves: bool,
        batch: bool,
        boards: bool,
        rematch: bool,
        chat: bool,
        speaker: Speaker,
        re: Option<RequestId>,
    },
    /// A client's frame, as the client sent it.
    Act {
        from: String,
        conn: ConnId,
        match_id: String,
        frame: String,
        speaker: Speaker,
    },
    Leave {
        from: String,
        conn: ConnId,
        match_id: String,
    },
    State {
        match_id: String,
    },
    /// The live matches of the owner.
    List,
    /// A tournament frame of a connection at another node, to the node that runs the
    /// tournaments, with what the connection said at `hello`.
    Session {
        from: String,
        conn: ConnId,
        token: Option<String>,
        features: Vec<String>,
        frame: String,
    },
    /// That connection is gone.
    SessionClosed {
        from: String,
        conn: ConnId,
    },
    Assistant {
        match_id: String,
        token: String,
    },
    /// A tournament's decision on one of its boards (a forfeit), to the room's owner.
    Declare {
        match_id: String,
        winner: hakem_protocol::Winner,
        reason: String,
        before_play: bool,
    },
    /// A match of a tournament ended, to the node that runs the tournaments.
    Finished {
        match_id: String,
        result: hakem_protocol::RoundResult,
    },
    Tournaments,
    Tournament {
        id: String,
        trf: bool,
    },
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Reply {
    Ok,
    /// The room is not (or no longer) on that node.
    Gone,
    State {
        state: Box<MatchState>,
    },
    List {
        matches: Vec<MatchSummary>,
    },
    Credential {
        token: Option<String>,
    },
    Refused {
        message: String,
    },
    Tournaments {
        tournaments: Vec<TournamentSummary>,
    },
    Tournament {
        view: Box<TournamentView>,
    },
    Trf {
        trf: String,
    },
    Unknown {
        code: hakem_protocol::ErrorCode,
        message: String,
    },
}

/// The stored events a connection is to read, as its queue says (see [`Outgoing::Replay`]).
#[derive(Debug, Serialize, Deserialize)]
struct Replay {
    match_id: String,
    from: u64,
    to: u64,
    boards: bool,
}

fn room_subject(incarnation: &str) -> String {
    format!("hakem.node.{incarnation}.room")
}

fn member_subject(incarnation: &str) -> String {
    format!("hakem.node.{incarnation}.member")
}

/// Subscribes this incarnation's two subjects; the tasks end when the node is a new
/// incarnation.
pub(super) async fn serve(cluster: Arc<Cluster>) -> Result<(), String> {
    let incarnation = cluster.incarnation();
    let mut requests = cluster
        .client
        .subscribe(room_subject(&incarnation))
        .await
        .map_err(|e| format!("NATS: {e}"))?;
    let mut items = cluster
        .client
        .subscribe(member_subject(&incarnation))
        .await
        .map_err(|e| format!("NATS: {e}"))?;
    let owner = Arc::downgrade(&cluster);
    let mine = incarnation.clone();
    tokio::spawn(async move {
        while let Some(message) = requests.next().await {
            let Some(cluster) = owner.upgrade() else {
                break;
            };
            if cluster.incarnation() != mine {
                break;
            }
            let Some(reply_to) = message.reply.clone() else {
                continue;
            };
            // Each on its own: a busy room holds up only its own requests. A connection's
            // requests stay in order, as it waits for each answer before its next frame.
            tokio::spawn(async move {
                let reply = match serde_json::from_slice::<ToOwner>(&message.payload) {
                    Ok(request) => answer(&cluster, request).await,
                    Err(e) => {
                        tracing::warn!(error = %e, "cluster: unreadable request");
                        Reply::Gone
                    }
                };
                metrics::counter!("hakem_cluster_routed_total", "side" => "owner").increment(1);
                if let Ok(payload) = serde_json::to_vec(&reply) {
                    let _ = cluster.client.publish(reply_to, payload.into()).await;
                }
            });
        }
    });
    let members = Arc::downgrade(&cluster);
    tokio::spawn(async move {
        while let Some(message) = items.next().await {
            let Some(cluster) = members.upgrade() else {
                break;
            };
            if cluster.incarnation() != incarnation {
                break;
            }
            deliver(&cluster, &message);
        }
    });
    Ok(())
}

/// A frame from a room elsewhere, into its connection's queue here.
fn deliver(cluster: &Cluster, message: &async_nats::Message) {
    let Some(headers) = &message.headers else {
        return;
    };
    let Some(conn) = headers
        .get("hakem-conn")
        .and_then(|v| v.as_str().parse::<ConnId>().ok())
    else {
        return;
    };
    let Some(outbox) = cluster.members.get(&conn).map(|o| o.clone()) else {
        return;
    };
    // The owner's frames for connections here: counted apart from the requests this node
    // sends (`member`), each frame once.
    metrics::counter!("hakem_cluster_routed_total", "side" => "delivered").increment(1);
    match headers.get("hakem-kind").map(|v| v.as_str()) {
        Some("frame") => {
            if let Ok(text) = std::str::from_utf8(&message.payload) {
                outbox.send(Utf8Bytes::from(text.to_string()));
            }
        }
        Some("replay") => {
            if let Ok(replay) = serde_json::from_slice::<Replay>(&message.payload) {
                outbox.replay(
                    Arc::from(replay.match_id.as_str()),
                    replay.from,
                    replay.to,
                    replay.boards,
                );
            }
        }
        Some("close") => outbox.close_away("closed by the match's node"),
        _ => {}
    }
}

/// A connection of another node, as a member of this node's rooms.
pub(crate) struct Proxy {
    /// Its id among this node's connections.
    conn: ConnId,
    outbox: Outbox,
    rooms: Mutex<HashSet<String>>,
}

impl Proxy {
    /// A proxy whose queue is published to connection `conn` of incarnation `from`.
    fn new(cluster: &Arc<Cluster>, app: &App, from: &str, conn: ConnId) -> Proxy {
        let (tx, mut rx) = mpsc::channel::<Outgoing>(PROXY_QUEUE);
        let kill = Kill::new();
        let outbox = Outbox::new(tx, kill.clone());
        let client = cluster.client.clone();
        let subject = member_subject(from);
        tokio::spawn(async move {
            let headers = |kind: &'static str| {
                let mut headers = HeaderMap::new();
                headers.insert("hakem-conn", conn.to_string().as_str());
                headers.insert("hakem-kind", kind);
                headers
            };
            loop {
                tokio::select! {
                    item = rx.recv() => match item {
                        Some(Outgoing::Frame(text)) => {
                            let payload = bytes_of(text.as_str());
                            let _ = client
                                .publish_with_headers(subject.clone(), headers("frame"), payload)
                                .await;
                        }
                        Some(Outgoing::Replay { match_id, from, to, boards }) => {
                            let replay = Replay { match_id: match_id.to_string(), from, to, boards };
                            if let Ok(payload) = serde_json::to_vec(&replay) {
                                let _ = client
                                    .publish_with_headers(subject.clone(), headers("replay"), payload.into())
                                    .await;
                            }
                        }
                        None => break,
                    },
                    _ = kill.notified() => {
                        let _ = client
                            .publish_with_headers(subject.clone(), headers("close"), Default::default())
                            .await;
                        break;
                    }
                }
            }
        });
        Proxy {
            conn: app.next_conn_id(),
            outbox,
            rooms: Mutex::default(),
        }
    }
}

fn bytes_of(text: &str) -> bytes::Bytes {
    bytes::Bytes::copy_from_slice(text.as_bytes())
}

/// The owner's answer to a request.
async fn answer(cluster: &Arc<Cluster>, request: ToOwner) -> Reply {
    let Some(app) = cluster.app() else {
        return Reply::Gone;
    };
    match request {
        ToOwner::Join {
            from,
            conn,
            match_id,
            credential,
            since_seq,
            history,
            legal_moves,
            batch,
            boards,
            rematch,
            chat,
            speaker,
            re,
        } => {
            let Some(room) = app.live(&match_id) else {
                return Reply::Gone;
            };
            let (local, outbox) = {
                let proxy = cluster
                    .proxies
                    .entry((from.clone(), conn))
                    .or_insert_with(|| Proxy::new(cluster, &app, &from, conn));
                proxy.rooms.lock().expect("rooms").insert(match_id.clone());
                (proxy.conn, proxy.outbox.clone())
            };
            let join = Join {
                conn: local,
                credential,
                since_seq,
                history,
                legal_moves,
                batch,
                boards,
                rematch,
                chat,
                speaker,
                outbox,
                re,
            };
            match room.join(join).await {
                Ok(()) => Reply::Ok,
                Err(Gone) => Reply::Gone,
            }
        }
        ToOwner::Act {
            from,
            conn,
            match_id,
            frame,
            speaker,
        } => {
            let Some(room) = app.live(&match_id) else {
                return Reply::Gone;
            };
            let Some((local, outbox)) = cluster
                .proxies
                .get(&(from, conn))
                .map(|p| (p.conn, p.outbox.clone()))
            else {
                return Reply::Gone;
            };
            let Ok(parsed) = hakem_protocol::parse_client_frame(&frame) else {
                return Reply::Ok;
            };
            let Some(action) = crate::session::action_of(parsed.message, || speaker) else {
                return Reply::Ok;
            };
            match room
                .act(
                    local,
                    action,
                    outbox,
                    parsed.id,
                    tokio::time::Instant::now(),
                )
                .await
            {
                Ok(()) => Reply::Ok,
                Err(Gone) => Reply::Gone,
            }
        }
        ToOwner::Leave {
            from,
            conn,
            match_id,
        } => {
            let key = (from, conn);
            let local = cluster.proxies.get(&key).map(|proxy| {
                let mut rooms = proxy.rooms.lock().expect("rooms");
                rooms.remove(&match_id);
                (proxy.conn, rooms.is_empty())
            });
            if let Some((local, empty)) = local {
                if let Some(room) = app.live(&match_id) {
                    let _ = room.leave(local).await;
                }
                if empty {
                    cluster.proxies.remove(&key);
                }
            }
            Reply::Ok
        }
        ToOwner::State { match_id } => match app.live(&match_id) {
            Some(room) => Reply::State {
                state: Box::new(room.state()),
            },
            None => Reply::Gone,
        },
        ToOwner::List => Reply::List {
            matches: app.local_summaries(),
        },
        ToOwner::Session {
            from,
            conn,
            token,
            features,
            frame,
        } => {
            if cluster.tournaments_holder().await != super::Holder::Here {
                return Reply::Gone;
            }
            let outbox = cluster
                .proxies
                .entry((from.clone(), conn))
                .or_insert_with(|| Proxy::new(cluster, &app, &from, conn))
                .outbox
                .clone();
            let session = cluster
                .remote_sessions
                .entry((from, conn))
                .or_insert_with(|| {
                    Arc::new(crate::session::RemoteSession::new(
                        app.clone(),
                        app.next_conn_id(),
                        outbox,
                        token,
                        &features,
                    ))
                })
                .clone();
            session.on_text(&frame).await;
            Reply::Ok
        }
        ToOwner::SessionClosed { from, conn } => {
            if let Some((_, session)) = cluster.remote_sessions.remove(&(from.clone(), conn)) {
                session.close().await;
            }
            let idle = cluster
                .proxies
                .get(&(from.clone(), conn))
                .is_some_and(|p| p.rooms.lock().expect("rooms").is_empty());
            if idle {
                cluster.proxies.remove(&(from, conn));
            }
            Reply::Ok
        }
        ToOwner::Assistant { match_id, token } => Reply::Credential {
            token: app.tournaments.assistant_credential(&match_id, &token),
        },
        ToOwner::Declare {
            match_id,
            winner,
            reason,
            before_play,
        } => {
            let Some(room) = app.live(&match_id) else {
                return Reply::Gone;
            };
            let command = hakem_round::Command::Declare {
                scope: hakem_protocol::Scope::Round,
                winner,
                reason,
            };
            match room.decree(command, before_play).await {
                Ok(()) => Reply::Ok,
                Err(message) => Reply::Refused { message },
            }
        }
        ToOwner::Finished { match_id, result } => {
            app.tournaments.match_finished(&match_id, result);
            Reply::Ok
        }
        ToOwner::Tournaments => Reply::Tournaments {
            tournaments: app.tournaments.summaries(),
        },
        ToOwner::Tournament { id, trf } => {
            let read = if trf {
                app.tournaments.trf(&id).map(|trf| Reply::Trf { trf })
            } else {
                app.tournaments.view(&id).map(|view| Reply::Tournament {
                    view: Box::new(view),
                })
            };
            read.unwrap_or_else(|failure| Reply::Unknown {
                code: failure.code,
                message: failure.message,
            })
        }
    }
}

/// A tournament frame of a connection here, for the node that runs the tournaments.
pub(crate) struct SessionFrame {
    pub conn: ConnId,
    pub outbox: Outbox,
    pub token: Option<String>,
    pub features: Vec<String>,
    pub frame: String,
}

/// Sends a tournament frame to the node that runs the tournaments (`at`); its answers come
/// back through the connection's queue. False if that node did not take it.
pub(crate) async fn send_session_frame(
    cluster: &Arc<Cluster>,
    at: &str,
    frame: SessionFrame,
) -> bool {
    cluster.members.insert(frame.conn, frame.outbox.clone());
    cluster
        .session_members
        .insert(frame.conn, frame.outbox.clone());
    let request = ToOwner::Session {
        from: cluster.incarnation(),
        conn: frame.conn,
        token: frame.token,
        features: frame.features,
        frame: frame.frame,
    };
    let room = RemoteRoom::new(cluster.clone(), at.to_string(), "");
    matches!(room.request(&request).await, Ok(Reply::Ok))
}

/// A connection here whose tournament frames went elsewhere is gone.
pub(crate) async fn session_closed(cluster: &Arc<Cluster>, conn: ConnId) {
    cluster.session_members.remove(&conn);
    let in_rooms = cluster
        .remote_rooms
        .iter()
        .any(|e| e.value().contains(&conn));
    if !in_rooms {
        cluster.members.remove(&conn);
    }
    let request = ToOwner::SessionClosed {
        from: cluster.incarnation(),
        conn,
    };
    // Told to every node: the one that ran the tournaments then may not run them now.
    for incarnation in cluster.others() {
        let room = RemoteRoom::new(cluster.clone(), incarnation, "");
        let _ = room.request(&request).await;
    }
}

/// The assistant arbiter's credential, from the node that runs the tournaments (`at`).
pub(crate) async fn assistant_credential(
    cluster: &Arc<Cluster>,
    at: &str,
    match_id: &str,
    token: &str,
) -> Option<String> {
    let room = RemoteRoom::new(cluster.clone(), at.to_string(), match_id);
    let request = ToOwner::Assistant {
        match_id: match_id.to_string(),
        token: token.to_string(),
    };
    match room.request(&request).await {
        Ok(Reply::Credential { token }) => token,
        _ => None,
    }
}

/// A tournament's board ended here: its result goes to the node that runs the tournaments
/// (this one, or another; when none does, the next one reads it from the store as it starts
/// them).
pub(crate) async fn match_finished(
    cluster: &Arc<Cluster>,
    match_id: &str,
    result: &hakem_protocol::RoundResult,
) {
    let Some(app) = cluster.app() else { return };
    if cluster.runs_tournaments() {
        return app.tournaments.match_finished(match_id, result.clone());
    }
    match cluster.tournaments_holder().await {
        super::Holder::Here => app.tournaments.match_finished(match_id, result.clone()),
        super::Holder::Elsewhere(at) => {
            let room = RemoteRoom::new(cluster.clone(), at, match_id);
            let request = ToOwner::Finished {
                match_id: match_id.to_string(),
                result: result.clone(),
            };
            if room.request(&request).await.is_err() {
                tracing::warn!(%match_id, "cluster: result not told to the tournaments' node");
            }
        }
        super::Holder::Nobody => {}
    }
}

/// A tournament's forfeit on a board whose room runs at `owner`.
pub(crate) async fn declare(
    cluster: &Arc<Cluster>,
    owner: &str,
    match_id: &str,
    winner: hakem_protocol::Winner,
    reason: &str,
    before_play: bool,
) -> Result<(), String> {
    let room = RemoteRoom::new(cluster.clone(), owner.to_string(), match_id);
    let request = ToOwner::Declare {
        match_id: match_id.to_string(),
        winner,
        reason: reason.to_string(),
        before_play,
    };
    match room.request(&request).await {
        Ok(Reply::Ok) => Ok(()),
        Ok(Reply::Refused { message }) => Err(message),
        _ => Err("the match's node did not answer".into()),
    }
}

/// What the HTTP side reads of the tournaments, from the node that runs them.
pub(crate) enum TournamentRead {
    List(Vec<TournamentSummary>),
    View(Box<TournamentView>),
    Trf(String),
    Refused(hakem_protocol::ErrorCode, String),
    Unavailable,
}

pub(crate) async fn read_tournaments(
    cluster: &Arc<Cluster>,
    at: &str,
    what: Option<(&str, bool)>,
) -> TournamentRead {
    let room = RemoteRoom::new(cluster.clone(), at.to_string(), "");
    let request = match what {
        None => ToOwner::Tournaments,
        Some((id, trf)) => ToOwner::Tournament {
            id: id.to_string(),
            trf,
        },
    };
    match room.request(&request).await {
        Ok(Reply::Tournaments { tournaments }) => TournamentRead::List(tournaments),
        Ok(Reply::Tournament { view }) => TournamentRead::View(view),
        Ok(Reply::Trf { trf }) => TournamentRead::Trf(trf),
        Ok(Reply::Unknown { code, message }) => TournamentRead::Refused(code, message),
        _ => TournamentRead::Unavailable,
    }
}

/// A node is gone: its connections leave this node's rooms.
pub(super) async fn node_gone(cluster: &Arc<Cluster>, incarnation: &str) {
    let Some(app) = cluster.app() else { return };
    let keys: Vec<(String, ConnId)> = cluster
        .proxies
        .iter()
        .filter(|e| e.key().0 == incarnation)
        .map(|e| e.key().clone())
        .collect();
    for key in keys {
        if let Some((_, proxy)) = cluster.proxies.remove(&key) {
            let rooms: Vec<String> = proxy.rooms.lock().expect("rooms").drain().collect();
            for id in rooms {
                if let Some(room) = app.live(&id) {
                    let _ = room.leave(proxy.conn).await;
                }
            }
        }
    }
}

/// A room owned by another node, as this node's connections reach it.
#[derive(Clone)]
pub struct RemoteRoom {
    cluster: Arc<Cluster>,
    /// The owner's incarnation.
    owner: String,
    match_id: Arc<str>,
}

impl std::fmt::Debug for RemoteRoom {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "RemoteRoom({} at {})", self.match_id, self.owner)
    }
}

impl RemoteRoom {
    pub(crate) fn new(cluster: Arc<Cluster>, owner: String, match_id: &str) -> RemoteRoom {
        RemoteRoom {
            cluster,
            owner,
            match_id: Arc::from(match_id),
        }
    }

    async fn request(&self, request: &ToOwner) -> Result<Reply, Gone> {
        let payload = serde_json::to_vec(request).map_err(|_| Gone)?;
        metrics::counter!("hakem_cluster_routed_total", "side" => "member").increment(1);
        // An owner that does not answer within its lease's TTL is as good as gone: by then
        // another node may hold the room.
        let answer = tokio::time::timeout(
            self.cluster.ttl,
            self.cluster
                .client
                .request(room_subject(&self.owner), payload.into()),
        )
        .await;
        match answer {
            Ok(Ok(message)) => serde_json::from_slice(&message.payload).map_err(|_| Gone),
            _ => Err(Gone),
        }
    }

    fn from(&self) -> String {
        self.cluster.incarnation()
    }

    pub async fn join(&self, join: Join) -> Result<(), Gone> {
        let conn = join.conn;
        self.cluster.members.insert(conn, join.outbox.clone());
        self.cluster
            .remote_rooms
            .entry(self.match_id.to_string())
            .or_default()
            .insert(conn);
        let request = ToOwner::Join {
            from: self.from(),
            conn,
            match_id: self.match_id.to_string(),
            credential: join.credential,
            since_seq: join.since_seq,
            history: join.history,
            legal_moves: join.legal_moves,
            batch: join.batch,
            boards: join.boards,
            rematch: join.rematch,
            chat: join.chat,
            speaker: join.speaker,
            re: join.re,
        };
        match self.request(&request).await {
            Ok(Reply::Ok) => Ok(()),
            _ => {
                self.forget(conn);
                Err(Gone)
            }
        }
    }

    fn forget(&self, conn: ConnId) {
        if let Some(mut conns) = self.cluster.remote_rooms.get_mut(&*self.match_id) {
            conns.remove(&conn);
        }
        self.cluster
            .remote_rooms
            .remove_if(&*self.match_id, |_, conns| conns.is_empty());
        let elsewhere = self
            .cluster
            .remote_rooms
            .iter()
            .any(|e| e.value().contains(&conn));
        if !elsewhere {
            self.cluster.members.remove(&conn);
        }
    }

    /// A client's frame for the room, as it was sent.
    pub async fn act(&self, conn: ConnId, frame: &str, speaker: Speaker) -> Result<(), Gone> {
        let request = ToOwner::Act {
            from: self.from(),
            conn,
            match_id: self.match_id.to_string(),
            frame: frame.to_string(),
            speaker,
        };
        match self.request(&request).await {
            Ok(Reply::Ok) => Ok(()),
            _ => Err(Gone),
        }
    }

    pub async fn leave(&self, conn: ConnId) -> Result<(), Gone> {
        self.forget(conn);
        let request = ToOwner::Leave {
            from: self.from(),
            conn,
            match_id: self.match_id.to_string(),
        };
        match self.request(&request).await {
            Ok(Reply::Ok) => Ok(()),
            _ => Err(Gone),
        }
    }

    pub async fn state(&self) -> Option<MatchState> {
        let request = ToOwner::State {
            match_id: self.match_id.to_string(),
        };
        match self.request(&request).await {
            Ok(Reply::State { state }) => Some(*state),
            _ => None,
        }
    }
}

/// The live matches of the other nodes.
pub(crate) async fn remote_summaries(cluster: &Arc<Cluster>) -> Vec<MatchSummary> {
    let mut all = Vec::new();
    for incarnation in cluster.others() {
        let room = RemoteRoom::new(cluster.clone(), incarnation, "");
        if let Ok(Reply::List { matches }) = room.request(&ToOwner::List).await {
            all.extend(matches);
        }
    }
    all
}
