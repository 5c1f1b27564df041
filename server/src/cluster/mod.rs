//! Several nodes on one PostgreSQL: each room is owned by exactly one node at a time, and a
//! frame for a room owned elsewhere is routed to its owner over NATS ([`route`]).
//!
//! Ownership lives in two NATS JetStream key-value buckets:
//! - `hakem_nodes`: one key per node, its *incarnation* (a new one at every start), kept alive
//!   by the node every quarter of the TTL; a node that stops renewing it is gone when the key
//!   ages out (the bucket's `max_age` is the TTL).
//! - `hakem_rooms`: one key per live room, the incarnation that owns it. It is taken with
//!   compare-and-set (create, or update at the revision read), and the revision it was taken
//!   at is the lease's *epoch*. It does not age: a room is orphaned when the incarnation that
//!   holds it is no longer alive, and another node then takes it at a later revision.
//!
//! The epoch is also written to the room's row of `room_leases` in PostgreSQL before the room
//! is read back, and every write of the room is committed only while that row holds the
//! writer's epoch (see [`crate::store::Fences`]): a node paused or cut off, which still
//! believes it owns a room, cannot store one event of it once another node took it, and
//! nothing it did not store was ever acknowledged. The tournaments' lease is fenced the same
//! way (see [`crate::store::TournamentsFence`]).

pub mod route;
#[cfg(test)]
mod tests;

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use async_nats::jetstream::kv;
use dashmap::DashMap;
use futures_util::StreamExt;
use serde::{Deserialize, Serialize};

use crate::outbox::{ConnId, Outbox};
use crate::store::{Fences, Previous, Store, TournamentsFence};
use crate::App;

/// The longest a clean stop waits for NATS to take the leases back.
const LEAVE_WITHIN: Duration = Duration::from_secs(10);

/// How long the signs of life of a node's past runs are kept (a room left without a node for
/// longer is charged nothing for the thinking before its node was lost).
const ALIVE_KEPT: Duration = Duration::from_secs(7 * 24 * 3600);

const NODES_BUCKET: &str = "hakem_nodes";
const ROOMS_BUCKET: &str = "hakem_rooms";

/// How often a node reads the accounts again, for those made at the other nodes.
const ACCOUNTS_EVERY: Duration = Duration::from_secs(2);

/// How a node joins a cluster.
#[derive(Clone, Debug)]
pub struct Settings {
    /// `nats://host:port` (several, comma-separated, for a NATS cluster).
    pub url: String,
    /// This node's name: letters, digits, `-` and `_`.
    pub node: String,
    /// A node that has not renewed its key for this long is presumed dead and its rooms are
    /// taken by the others.
    pub ttl: Duration,
}

/// A node as `hakem_nodes` holds it.
#[derive(Clone, Debug, Serialize, Deserialize)]
struct NodeKey {
    node: String,
    incarnation: String,
}

/// A room's lease as `hakem_rooms` holds it; `revision` is its epoch.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Lease {
    pub node: String,
    pub incarnation: String,
    #[serde(skip)]
    pub revision: u64,
}

/// The key of the tournaments' lease in the rooms bucket: one node runs every tournament (its
/// owner tasks, the pairing, the boards it opens), as one node runs each room. Match ids never
/// begin with `_`.
pub const TOURNAMENTS_KEY: &str = "_tournaments";

/// Which node runs the tournaments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Holder {
    Here,
    /// The incarnation that does.
    Elsewhere(String),
    /// None at this moment (the last one was lost; another takes them within the TTL).
    Nobody,
}

/// What became of a renewal of this node's key.
#[derive(Debug, PartialEq, Eq)]
enum Renewal {
    /// Renewed: the key's revision now.
    Renewed(u64),
    /// NATS did not answer; tried again at the next turn.
    Unreachable,
    /// The key aged out: the others presumed this node dead and may have taken its rooms.
    Lost,
}

/// Why a room could not be taken.
#[derive(Debug)]
pub enum TakeError {
    /// Another node holds it, or took it first.
    Taken,
    Failed(String),
}

/// This node's place in the cluster.
pub struct Cluster {
    pub node: String,
    /// Changes at every start, and again if the node was presumed dead and comes back.
    incarnation: Mutex<String>,
    client: async_nats::Client,
    jetstream: async_nats::jetstream::Context,
    nodes: kv::Store,
    leases: kv::Store,
    /// When the nodes bucket this node knows was made (a NATS server restarted without it
    /// makes a new one).
    nodes_made: Mutex<i128>,
    ttl: Duration,
    /// The live incarnations, as last read.
    live: Mutex<HashSet<String>>,
    /// When the last renewal of this node's own key that NATS applied was sent (the key lives
    /// a TTL from then at least): a node that was paused takes nothing until it has renewed
    /// it again (by then it has heard the others' renewals too).
    renewed_at: Mutex<tokio::time::Instant>,
    /// Until then this node takes no room from another: the nodes bucket was made again, and
    /// the others are writing their keys again.
    quiet_until: Mutex<tokio::time::Instant>,
    /// When each incarnation's key was last seen renewed, and its node's name.
    heard: Mutex<HashMap<String, (String, tokio::time::Instant)>>,
    /// Every room's lease, as the bucket was last seen.
    owners: DashMap<String, Lease>,
    /// The rooms this node owns, with their epochs; the store fences its writes with it.
    pub fences: Fences,
    /// Whether this node is registered (false from a renewal refused to its registering again).
    joined: AtomicBool,
    /// A clean stop is under way: the node takes nothing, renews nothing, and is not in the
    /// cluster for whoever asks.
    leaving: AtomicBool,
    /// Rooms being taken here right now (by the scan or by a connection asking for one).
    taking: DashMap<String, ()>,
    /// Members' side: this node's connections, by id, that are in rooms owned elsewhere.
    pub(crate) members: DashMap<ConnId, Outbox>,
    /// Members' side: per room owned elsewhere, the connections of this node in it.
    pub(crate) remote_rooms: DashMap<String, HashSet<ConnId>>,
    /// Owner's side: connections of other nodes in this node's rooms.
    pub(crate) proxies: DashMap<(String, ConnId), route::Proxy>,
    /// Owner's side: sessions of other nodes' connections, for the tournaments run here.
    pub(crate) remote_sessions: DashMap<(String, ConnId), Arc<crate::session::RemoteSession>>,
    /// Members' side: connections of this node whose tournament frames went to another node.
    pub(crate) session_members: DashMap<ConnId, Outbox>,
    /// The epoch of the tournaments' lease, while this node holds it; the store fences
    /// tournament changes with it.
    tournaments: TournamentsFence,
    /// The tournaments are loaded here (their lease held, and every one restored).
    tournaments_loaded: AtomicBool,
    pub(crate) app: Mutex<Weak<App>>,
}

/// A bucket's settings: one value a key; `max_age` ages keys out (zero: never).
fn bucket_config(
    name: &str,
    max_age: Duration,
    storage: async_nats::jetstream::stream::StorageType,
) -> kv::Config {
    kv::Config {
        bucket: name.to_string(),
        history: 1,
        max_age,
        storage,
        ..Default::default()
    }
}

/// The nodes' bucket: a key ages out a TTL after it was last written; in memory, as it is
/// written four times a TTL by every node.
fn nodes_config(ttl: Duration) -> kv::Config {
    bucket_config(
        NODES_BUCKET,
        ttl,
        async_nats::jetstream::stream::StorageType::Memory,
    )
}

fn rooms_config() -> kv::Config {
    bucket_config(
        ROOMS_BUCKET,
        Duration::ZERO,
        async_nats::jetstream::stream::StorageType::File,
    )
}

/// A bucket, made if it is missing (by this node, or by another at the same moment).
async fn open_bucket(
    jetstream: &async_nats::jetstream::Context,
    config: kv::Config,
) -> Result<kv::Store, String> {
    let name = config.bucket.clone();
    if let Ok(store) = jetstream.get_key_value(name.as_str()).await {
        return Ok(store);
    }
    match jetstream.create_key_value(config).await {
        Ok(store) => Ok(store),
        Err(e) => jetstream
            .get_key_value(name.as_str())
            .await
            .map_err(|_| format!("NATS bucket {name}: {e}")),
    }
}

/// When a bucket's stream was made, as a number.
fn made_at(store: &kv::Store) -> i128 {
    store.stream.cached_info().created.unix_timestamp_nanos()
}

/// The keys a bucket takes: a match id or node name of other characters is never looked up.
pub fn valid_key(key: &str) -> bool {
    !key.is_empty()
        && key.len() <= 64
        && key
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

fn new_incarnation() -> String {
    crate::tokens::new_id()
}

impl Cluster {
    /// Connects to NATS, makes the buckets if they are missing, and registers this node.
    pub async fn join(settings: &Settings) -> Result<Arc<Cluster>, String> {
        if !valid_key(&settings.node) {
            return Err(format!(
                "node name {:?}: use letters, digits, - and _ (at most 64)",
                settings.node
            ));
        }
        let client = async_nats::ConnectOptions::new()
            .name(format!("hakem {}", settings.node))
            .retry_on_initial_connect()
            .connect(settings.url.as_str())
            .await
            .map_err(|e| format!("NATS at {}: {e}", settings.url))?;
        let jetstream = async_nats::jetstream::new(client.clone());
        let nodes = open_bucket(&jetstream, nodes_config(settings.ttl)).await?;
        let leases = open_bucket(&jetstream, rooms_config()).await?;
        let now = tokio::time::Instant::now();
        let cluster = Arc::new(Cluster {
            node: settings.node.clone(),
            incarnation: Mutex::new(new_incarnation()),
            client,
            jetstream,
            nodes_made: Mutex::new(made_at(&nodes)),
            nodes,
            leases,
            ttl: settings.ttl,
            live: Mutex::default(),
            heard: Mutex::default(),
            renewed_at: Mutex::new(now),
            quiet_until: Mutex::new(now),
            owners: DashMap::new(),
            fences: Arc::new(DashMap::new()),
            joined: AtomicBool::new(false),
            leaving: AtomicBool::new(false),
            taking: DashMap::new(),
            members: DashMap::new(),
            remote_rooms: DashMap::new(),
            proxies: DashMap::new(),
            remote_sessions: DashMap::new(),
            session_members: DashMap::new(),
            tournaments: Arc::default(),
            tournaments_loaded: AtomicBool::new(false),
            app: Mutex::new(Weak::new()),
        });
        cluster.register().await?;
        Ok(cluster)
    }

    pub fn incarnation(&self) -> String {
        self.incarnation.lock().expect("incarnation").clone()
    }

    /// Whether this node is in the cluster: registered, its key renewed within the TTL, and
    /// not leaving.
    pub fn is_joined(&self) -> bool {
        self.joined.load(Ordering::Relaxed)
            && !self.is_leaving()
            && self.renewed_at.lock().expect("renewed").elapsed() < self.ttl
    }

    /// Whether a clean stop is under way.
    pub fn is_leaving(&self) -> bool {
        self.leaving.load(Ordering::Relaxed)
    }

    /// Whether this node holds back from the others' rooms (see [`Cluster::quiet_until`]).
    fn is_quiet(&self) -> bool {
        tokio::time::Instant::now() < *self.quiet_until.lock().expect("quiet")
    }

    /// Sets the rooms-owned gauge after a change of [`Cluster::fences`].
    fn count_owned(&self) {
        metrics::gauge!("hakem_cluster_rooms_owned").set(self.fences.len() as f64);
    }

    fn app(&self) -> Option<Arc<App>> {
        self.app.lock().expect("app").upgrade()
    }

    /// This node's key as the nodes bucket holds it.
    fn node_value(&self) -> Result<Vec<u8>, String> {
        serde_json::to_vec(&NodeKey {
            node: self.node.clone(),
            incarnation: self.incarnation(),
        })
        .map_err(|e| e.to_string())
    }

    /// Writes this node's key with its incarnation; returns the key's revision.
    async fn register(&self) -> Result<u64, String> {
        let value = self.node_value()?;
        let sent = tokio::time::Instant::now();
        let revision = self
            .nodes
            .put(&self.node, value.into())
            .await
            .map_err(|e| format!("NATS: node key not written: {e}"))?;
        self.live.lock().expect("live").insert(self.incarnation());
        self.joined.store(true, Ordering::Relaxed);
        *self.renewed_at.lock().expect("renewed") = sent;
        Ok(revision)
    }

    /// The store records this incarnation's signs of life from now on: the rooms it runs are
    /// charged up to its last one if it is lost.
    fn name_alive(&self) {
        if let Some(store) = self.app().as_ref().and_then(|app| app.store()) {
            store.record_alive_as(crate::store::alive_key_of(&self.node, &self.incarnation()));
        }
    }

    /// Starts the node's work in the cluster: keeping its key alive, following the rooms'
    /// leases, taking orphaned rooms, and serving the frames routed to its rooms.
    pub async fn run(self: &Arc<Cluster>, app: &Arc<App>) -> Result<(), String> {
        *self.app.lock().expect("app") = Arc::downgrade(app);
        if let Some(store) = app.store() {
            store.fence_with(self.fences.clone(), self.tournaments.clone());
            self.name_alive();
            let key = crate::store::alive_key_of(&self.node, &self.incarnation());
            let before = crate::wall_clock_ms().saturating_sub(ALIVE_KEPT.as_millis() as u64);
            if let Err(e) = store.forget_alive(&self.node, &key, before).await {
                tracing::warn!(error = %e, "cluster: old signs of life not forgotten");
            }
        }
        self.follow(|c| &c.nodes, Cluster::on_node).await?;
        self.follow(|c| &c.leases, Cluster::on_lease).await?;
        route::serve(self.clone()).await?;
        // Knows its peers from the start (the watch delivers every key at once; the scan
        // keeps the set up to date).
        tokio::time::sleep(Duration::from_millis(200)).await;
        let live = self.read_live().await?;
        *self.live.lock().expect("live") = live;
        let cluster = self.clone();
        tokio::spawn(async move { cluster.keep_alive().await });
        let cluster = self.clone();
        tokio::spawn(async move { cluster.scan_loop().await });
        Ok(())
    }

    /// Renews this node's key every quarter of the TTL. A renewal refused (the key aged out
    /// while the node was paused or cut off: the others presumed it dead and took its rooms)
    /// makes the node give up every room it still runs and join again as a new incarnation.
    /// A node that is leaving renews nothing (its key is deleted).
    async fn keep_alive(self: Arc<Cluster>) {
        let mut revision = match self.nodes.entry(&self.node).await {
            Ok(Some(entry)) => entry.revision,
            _ => 0,
        };
        let every = self.ttl / 4;
        loop {
            tokio::time::sleep(every).await;
            if self.is_leaving() {
                return;
            }
            match self.renew(revision).await {
                Renewal::Renewed(next) => revision = next,
                // NATS is out of reach: tried again at the next turn. Past the TTL the others
                // count this node out (its rooms' writes are then refused by the fence, and end
                // them); `is_joined` says so to whoever asks.
                Renewal::Unreachable => {}
                Renewal::Lost => {
                    if self.is_leaving() {
                        return;
                    }
                    tracing::warn!("cluster: this node was presumed dead: it joins again");
                    self.joined.store(false, Ordering::Relaxed);
                    self.abdicate_all("this node was presumed dead by the cluster");
                    *self.incarnation.lock().expect("incarnation") = new_incarnation();
                    match self.register().await {
                        Ok(next) => {
                            revision = next;
                            self.name_alive();
                            if let Err(e) = route::serve(self.clone()).await {
                                tracing::error!(error = %e, "cluster: routing not restarted");
                            }
                        }
                        Err(e) => tracing::error!(error = %e, "cluster: node not registered again"),
                    }
                }
            }
        }
    }

    /// Renews this node's key, last written at `revision`.
    async fn renew(&self, revision: u64) -> Renewal {
        let Ok(value) = self.node_value() else {
            return Renewal::Unreachable;
        };
        let sent = tokio::time::Instant::now();
        let refused = match self
            .nodes
            .update(&self.node, value.clone().into(), revision)
            .await
        {
            Ok(next) => {
                self.renewed(sent);
                return Renewal::Renewed(next);
            }
            Err(e) => e,
        };
        if !matches!(refused.kind(), kv::UpdateErrorKind::WrongLastRevision) {
            tracing::warn!(error = %refused, "cluster: node key not renewed");
            // NATS out of reach, or the bucket gone with a NATS server that restarted: made
            // again, with this node's key.
            if self.nodes_bucket_made_again().await {
                return self.put_again().await;
            }
            return Renewal::Unreachable;
        }
        // The key is not at the revision this node last wrote.
        match self.nodes.entry(&self.node).await {
            // A renewal whose answer was lost, but which NATS applied: the key is still this
            // incarnation's, at a later revision.
            Ok(Some(entry))
                if entry.operation == kv::Operation::Put
                    && serde_json::from_slice::<NodeKey>(&entry.value)
                        .is_ok_and(|key| key.incarnation == self.incarnation()) =>
            {
                let sent = tokio::time::Instant::now();
                match self
                    .nodes
                    .update(&self.node, value.into(), entry.revision)
                    .await
                {
                    Ok(next) => {
                        self.renewed(sent);
                        Renewal::Renewed(next)
                    }
                    Err(_) => Renewal::Unreachable,
                }
            }
            // Gone: it aged out while this node was paused or cut off; unless the bucket is
            // not the one this node last wrote to (made again after NATS lost it).
            Ok(_) => {
                if self.nodes_bucket_made_again().await {
                    self.put_again().await
                } else {
                    tracing::warn!(error = %refused, "cluster: node key lost");
                    Renewal::Lost
                }
            }
            Err(_) => Renewal::Unreachable,
        }
    }

    fn renewed(&self, sent: tokio::time::Instant) {
        self.joined.store(true, Ordering::Relaxed);
        *self.renewed_at.lock().expect("renewed") = sent;
        metrics::counter!("hakem_cluster_lease_renewals_total").increment(1);
    }

    /// Whether the nodes bucket is not the one this node last knew: NATS lost it (a memory
    /// bucket does not outlive a NATS server's restart) and it was made again, here (if it
    /// is missing now) or by another node. The rooms bucket is made again too if it is gone.
    async fn nodes_bucket_made_again(&self) -> bool {
        let made = match self.jetstream.get_stream(&self.nodes.stream_name).await {
            Ok(stream) => stream.cached_info().created.unix_timestamp_nanos(),
            Err(_) => match self
                .jetstream
                .create_key_value(nodes_config(self.ttl))
                .await
            {
                Ok(store) => made_at(&store),
                Err(_) => return false,
            },
        };
        if self
            .jetstream
            .get_stream(&self.leases.stream_name)
            .await
            .is_err()
        {
            let _ = self.jetstream.create_key_value(rooms_config()).await;
        }
        let mut known = self.nodes_made.lock().expect("nodes made");
        if *known == made {
            return false;
        }
        *known = made;
        tracing::warn!("cluster: the nodes bucket was made again (NATS lost it)");
        true
    }

    /// Writes this node's key again in a bucket made again, as the same incarnation: no node
    /// could presume it dead from a key it never saw age out. For one TTL it then takes no
    /// room from another node, while the others write their keys again too.
    async fn put_again(&self) -> Renewal {
        *self.quiet_until.lock().expect("quiet") = tokio::time::Instant::now() + self.ttl;
        let Ok(value) = self.node_value() else {
            return Renewal::Unreachable;
        };
        let sent = tokio::time::Instant::now();
        match self.nodes.put(&self.node, value.into()).await {
            Ok(revision) => {
                self.renewed(sent);
                Renewal::Renewed(revision)
            }
            Err(_) => Renewal::Unreachable,
        }
    }

    /// Gives up every room this node runs (their members are told to reconnect).
    fn abdicate_all(&self, why: &'static str) {
        let Some(app) = self.app() else { return };
        let ids: Vec<String> = self.fences.iter().map(|e| e.key().clone()).collect();
        self.fences.clear();
        self.count_owned();
        for id in ids {
            app.abdicate(&id, why);
        }
        self.drop_tournaments(&app);
        for entry in self.members.iter() {
            entry
                .value()
                .close_away("the match's node changed: reconnect");
        }
    }

    /// Stops running the tournaments here (another node holds their lease, or will).
    fn drop_tournaments(&self, app: &App) {
        self.tournaments_loaded.store(false, Ordering::Relaxed);
        if self
            .tournaments
            .lock()
            .expect("tournaments")
            .take()
            .is_some()
        {
            app.tournaments.unload_all();
            tracing::info!("cluster: tournaments no longer run here");
        }
        for entry in self.remote_sessions.iter() {
            let session = entry.value().clone();
            tokio::spawn(async move { session.close().await });
        }
        self.remote_sessions.clear();
    }

    /// A tournament change was refused by the fence: another node holds the tournaments'
    /// lease, though this node has not heard of it yet.
    pub(crate) fn tournaments_fenced(&self, app: &App) {
        tracing::warn!("cluster: a tournament change was refused: another node runs them");
        self.drop_tournaments(app);
    }

    /// Whether the tournaments are loaded here, under their lease (their results are handed to
    /// them here: if the lease was lost meanwhile, their changes are refused by the fence, and
    /// the next holder reads the results from the store).
    pub(crate) fn runs_tournaments(&self) -> bool {
        self.tournaments_loaded.load(Ordering::Relaxed)
            && self.tournaments.lock().expect("tournaments").is_some()
    }

    /// Which node runs the tournaments now.
    pub async fn tournaments_holder(&self) -> Holder {
        if self.tournaments.lock().expect("tournaments").is_some() {
            // Held here: run here once loaded, and while this node is in the cluster (cut off
            // from NATS, it does not know whether another took them meanwhile).
            return match self.runs_tournaments() && self.is_joined() {
                true => Holder::Here,
                false => Holder::Nobody,
            };
        }
        match self.owners.get(TOURNAMENTS_KEY).map(|l| l.clone()) {
            Some(lease) if lease.incarnation != self.incarnation() => {
                if self.is_alive(&lease).await {
                    Holder::Elsewhere(lease.incarnation)
                } else {
                    Holder::Nobody
                }
            }
            _ => Holder::Nobody,
        }
    }

    /// Takes the tournaments' lease if nobody alive holds it, and then runs them here: loaded
    /// from the store and brought up to date with their matches, as at a start.
    async fn take_tournaments(&self, app: &Arc<App>) -> Result<(), String> {
        if self.is_leaving() || self.tournaments.lock().expect("tournaments").is_some() {
            return Ok(());
        }
        let lease = self.owners.get(TOURNAMENTS_KEY).map(|l| l.clone());
        if let Some(lease) = &lease {
            if self.live.lock().expect("live").contains(&lease.incarnation) {
                return Ok(());
            }
        }
        if let Some(lease) = &lease {
            if self.still_registered(lease).await {
                return Ok(());
            }
        }
        let Some(store) = app.store() else {
            return Ok(());
        };
        let Some(epoch) = self.take_lease(TOURNAMENTS_KEY, lease.as_ref()).await? else {
            return Ok(());
        };
        // The fence first, as for a room: what a holder that lost them still writes is refused
        // from now on, and what it wrote before is read below.
        self.fence_or_let_go(store, TOURNAMENTS_KEY, epoch)
            .await?
            .ok_or("the tournaments' fence stands higher already")?;
        *self.tournaments.lock().expect("tournaments") = Some(epoch);
        match crate::tournament::restore(app).await {
            Ok(count) => {
                self.tournaments_loaded.store(true, Ordering::Relaxed);
                tracing::info!(count, "cluster: tournaments run here");
                Ok(())
            }
            Err(e) => {
                // Let go, so that they are taken again (here or at another node) and loaded
                // whole.
                self.drop_tournaments(app);
                self.let_go(TOURNAMENTS_KEY, epoch).await;
                Err(format!("tournaments not loaded: {e}"))
            }
        }
    }

    /// Raises the fence of `key` (a room, or the tournaments) to `epoch`, the lease this node
    /// has just taken; the holder it was raised over, or `None` if the fence stands higher
    /// (another node took it later). Unless it was raised, the lease is let go.
    async fn fence_or_let_go(
        &self,
        store: &Store,
        key: &str,
        epoch: u64,
    ) -> Result<Option<Previous>, String> {
        let raised = store
            .raise_fence(key, &self.node, &self.incarnation(), epoch)
            .await;
        if !matches!(raised, Ok(Some(_))) {
            self.let_go(key, epoch).await;
        }
        raised.map_err(|e| e.to_string())
    }

    /// Deletes a lease this node took at `epoch` and does not use (unless another node has
    /// taken it since).
    async fn let_go(&self, key: &str, epoch: u64) {
        if let Err(e) = self.leases.delete_expect_revision(key, Some(epoch)).await {
            tracing::debug!(key, error = %e, "cluster: lease not deleted");
        }
    }

    /// Keeps [`Cluster::owners`] up to date from the rooms bucket; a room this node runs whose
    /// lease went to another is given up, and members here of a room that changed hands are
    /// told to reconnect.
    fn on_lease(&self, entry: kv::Entry) {
        match entry.operation {
            kv::Operation::Put => {
                if let Ok(mut lease) = serde_json::from_slice::<Lease>(&entry.value) {
                    lease.revision = entry.revision;
                    self.lease_changed(&entry.key, Some(lease), entry.revision);
                }
            }
            kv::Operation::Delete | kv::Operation::Purge => {
                self.lease_changed(&entry.key, None, entry.revision);
            }
        }
    }

    /// Follows a bucket: each key's last value first, then every change, each handed to
    /// `on_entry`; watched again when the watch ends (NATS was out of reach).
    async fn follow(
        self: &Arc<Cluster>,
        bucket: fn(&Cluster) -> &kv::Store,
        on_entry: fn(&Cluster, kv::Entry),
    ) -> Result<(), String> {
        let mut watch = bucket(self)
            .watch_with_history(">")
            .await
            .map_err(|e| format!("NATS: bucket not watched: {e}"))?;
        let cluster = Arc::downgrade(self);
        tokio::spawn(async move {
            loop {
                while let Some(entry) = watch.next().await {
                    let Some(cluster) = cluster.upgrade() else {
                        return;
                    };
                    if let Ok(entry) = entry {
                        on_entry(&cluster, entry);
                    }
                }
                let Some(again) = cluster.upgrade() else {
                    return;
                };
                tokio::time::sleep(again.ttl / 4).await;
                match bucket(&again).watch_with_history(">").await {
                    Ok(next) => watch = next,
                    Err(e) => tracing::warn!(error = %e, "cluster: bucket not watched again"),
                }
            }
        });
        Ok(())
    }

    /// A change of a lease, `revision` its place in the bucket's history.
    fn lease_changed(&self, id: &str, lease: Option<Lease>, revision: u64) {
        if id == TOURNAMENTS_KEY {
            return self.tournaments_lease_changed(lease, revision);
        }
        let before = match &lease {
            Some(lease) => self.owners.insert(id.to_string(), lease.clone()),
            None => self.owners.remove(id).map(|(_, lease)| lease),
        };
        let holder = lease.as_ref().map(|l| l.incarnation.clone());
        let before = before.map(|l| l.incarnation);
        if before == holder {
            return;
        }
        // Ours, held at an older epoch than the bucket's: another node took it.
        if let (Some(lease), Some(epoch)) = (&lease, self.fences.get(id).map(|e| *e)) {
            if lease.incarnation != self.incarnation() && lease.revision > epoch {
                self.fences.remove(id);
                self.count_owned();
                if let Some(app) = self.app() {
                    app.abdicate(id, "the match moved to another node");
                }
            }
        }
        // A room that retired (its lease deleted) is read from the store by its members next
        // time; one that changed hands has a new owner to join.
        if before.is_none() || holder.is_none() {
            return;
        }
        if let Some(conns) = self.remote_rooms.get(id) {
            for conn in conns.iter() {
                if let Some(outbox) = self.members.get(conn) {
                    outbox.close_away("the match's node changed: reconnect");
                }
            }
        }
    }

    fn tournaments_lease_changed(&self, lease: Option<Lease>, revision: u64) {
        let before = match &lease {
            Some(lease) => self
                .owners
                .insert(TOURNAMENTS_KEY.to_string(), lease.clone()),
            None => self.owners.remove(TOURNAMENTS_KEY).map(|(_, lease)| lease),
        };
        let (before, holder) = (
            before.map(|l| l.incarnation),
            lease.as_ref().map(|l| l.incarnation.clone()),
        );
        if before == holder {
            return;
        }
        let mine = self.incarnation();
        // Only a change after this node took the lease takes it away (the bucket's history
        // may reach this node after its own compare-and-set has).
        let ours = *self.tournaments.lock().expect("tournaments");
        let lost = ours.is_some_and(|epoch| revision > epoch);
        if lost && holder.as_deref() != Some(mine.as_str()) {
            if let Some(app) = self.app() {
                self.drop_tournaments(&app);
            }
        }
        // Connections here whose tournament frames went to the last holder follow the next.
        if before.is_some() && before.as_deref() != Some(mine.as_str()) {
            for entry in self.session_members.iter() {
                entry
                    .value()
                    .close_away("the tournaments' node changed: reconnect");
            }
            self.session_members.clear();
        }
    }

    /// Every few hundred milliseconds: which nodes are alive; the rooms of the dead ones
    /// (and live matches nobody holds) are taken; their members here are told to reconnect.
    async fn scan_loop(self: Arc<Cluster>) {
        let every = (self.ttl / 4).max(Duration::from_millis(100));
        let mut accounts_read = tokio::time::Instant::now();
        loop {
            tokio::time::sleep(every).await;
            if !self.is_joined() {
                continue;
            }
            if accounts_read.elapsed() >= ACCOUNTS_EVERY {
                accounts_read = tokio::time::Instant::now();
                if let Some(app) = self.app() {
                    if let Err(e) = app.refresh_accounts().await {
                        tracing::warn!(error = %e, "cluster: accounts not read again");
                    }
                    if let Err(e) = crate::ratings::Ratings::load(&app).await {
                        tracing::warn!(error = %e, "cluster: ratings not read again");
                    }
                }
            }
            if let Err(e) = self.scan().await {
                tracing::warn!(error = %e, "cluster: scan failed");
            }
        }
    }

    /// The live incarnations: those whose key this node saw renewed within the TTL (see
    /// [`Cluster::on_node`]), and itself.
    async fn read_live(&self) -> Result<HashSet<String>, String> {
        let mut live: HashSet<String> = {
            let mut heard = self.heard.lock().expect("heard");
            // Long gone: forgotten (every restart is a new incarnation).
            heard.retain(|_, (_, at)| at.elapsed() < 20 * self.ttl);
            heard
                .iter()
                .filter(|(_, (_, at))| at.elapsed() < self.ttl)
                .map(|(incarnation, _)| incarnation.clone())
                .collect()
        };
        live.insert(self.incarnation());
        Ok(live)
    }

    /// A change in the nodes bucket: every renewal of a node's key is a sign of its life (the
    /// keys are renewed four times a TTL); a key deleted is a node that left.
    fn on_node(&self, entry: kv::Entry) {
        let mut heard = self.heard.lock().expect("heard");
        match entry.operation {
            kv::Operation::Put => {
                if let Ok(key) = serde_json::from_slice::<NodeKey>(&entry.value) {
                    heard.insert(key.incarnation, (key.node, tokio::time::Instant::now()));
                }
            }
            kv::Operation::Delete | kv::Operation::Purge => {
                heard.retain(|_, (node, _)| *node != entry.key);
            }
        }
    }

    async fn scan(self: &Arc<Cluster>) -> Result<(), String> {
        if self.renewed_at.lock().expect("renewed").elapsed() > self.ttl / 2 || self.is_quiet() {
            return Ok(());
        }
        let live = self.read_live().await?;
        let gone: Vec<String> = {
            let mut known = self.live.lock().expect("live");
            let gone = known.difference(&live).cloned().collect();
            *known = live.clone();
            gone
        };
        for incarnation in &gone {
            let node = self
                .heard
                .lock()
                .expect("heard")
                .get(incarnation)
                .map(|(node, _)| node.clone());
            let lease = node.map(|node| Lease {
                node,
                incarnation: incarnation.clone(),
                revision: 0,
            });
            // Not heard of lately, but still registered: busy, not gone.
            if let Some(lease) = &lease {
                if self.still_registered(lease).await {
                    continue;
                }
            }
            route::node_gone(self, incarnation).await;
        }
        let Some(app) = self.app() else {
            return Ok(());
        };
        if let Err(e) = self.take_tournaments(&app).await {
            tracing::warn!(error = %e, "cluster: tournaments not taken");
        }
        let Some(store) = app.store().cloned() else {
            return Ok(());
        };
        let ids = store.live_ids().await.map_err(|e| e.to_string())?;
        let mut orphans: Vec<(String, Option<Lease>)> = ids
            .into_iter()
            .filter(|id| !self.fences.contains_key(id) && valid_key(id))
            .filter_map(|id| match self.owners.get(&id).map(|l| l.clone()) {
                None => Some((id, None)),
                Some(lease) if !live.contains(&lease.incarnation) => Some((id, Some(lease))),
                Some(_) => None,
            })
            .collect();
        // Every node races for the same orphans; in its own order, so that they spread.
        let salt = self.incarnation();
        orphans.sort_by_cached_key(|(id, _)| {
            use std::hash::{Hash, Hasher};
            let mut h = std::collections::hash_map::DefaultHasher::new();
            (&salt, id).hash(&mut h);
            h.finish()
        });
        for (id, lease) in orphans {
            if !self.is_joined() {
                break;
            }
            match self.take(&app, &store, &id, lease).await {
                Ok(()) | Err(TakeError::Taken) => {}
                Err(TakeError::Failed(e)) => {
                    tracing::warn!(match_id = %id, error = %e, "cluster: room not taken")
                }
            }
        }
        Ok(())
    }

    /// The lease of a room, as the bucket holds it now.
    pub async fn lease(&self, id: &str) -> Option<Lease> {
        if !valid_key(id) {
            return None;
        }
        match self.leases.entry(id).await {
            Ok(Some(entry)) if entry.operation == kv::Operation::Put => {
                let mut lease: Lease = serde_json::from_slice(&entry.value).ok()?;
                lease.revision = entry.revision;
                Some(lease)
            }
            _ => None,
        }
    }

    /// Whether the holder of `lease` is alive: heard of within the TTL, or still registered.
    pub async fn is_alive(&self, lease: &Lease) -> bool {
        let heard = self.read_live().await.unwrap_or_default();
        if heard.contains(&lease.incarnation)
            || self.live.lock().expect("live").contains(&lease.incarnation)
        {
            return true;
        }
        // Not heard of lately: NATS has the last word.
        self.still_registered(lease).await
    }

    /// Claims the lease of a new match, before it is stored: its writes are fenced by it.
    pub async fn claim_new(&self, store: &Store, id: &str) -> Result<(), String> {
        if self.is_leaving() {
            return Err("this node is stopping".into());
        }
        let value = self.lease_value()?;
        let epoch = self
            .leases
            .create(id, value.into())
            .await
            .map_err(|e| format!("the match's lease was not taken: {e}"))?;
        self.fence_or_let_go(store, id, epoch)
            .await?
            .ok_or("the match's fence stands higher already")?;
        self.fences.insert(id.to_string(), epoch);
        self.count_owned();
        Ok(())
    }

    /// Whether the holder of `lease` still has its key in the nodes bucket, as NATS says now:
    /// this node's own view (the renewals it heard) may lag when it is busy, and a room is
    /// taken from a holder only once NATS itself has let the holder's key age out.
    async fn still_registered(&self, lease: &Lease) -> bool {
        match self.nodes.entry(&lease.node).await {
            Ok(Some(entry)) if entry.operation == kv::Operation::Put => {
                serde_json::from_slice::<NodeKey>(&entry.value)
                    .is_ok_and(|key| key.incarnation == lease.incarnation)
            }
            Ok(_) => false,
            // NATS did not answer: take nothing on a guess.
            Err(_) => true,
        }
    }

    /// Takes a lease by compare-and-set: created if nobody holds it, else at the revision the
    /// dead holder left; its epoch, or `None` if another node was first.
    async fn take_lease(&self, key: &str, dead: Option<&Lease>) -> Result<Option<u64>, String> {
        let value = self.lease_value()?;
        Ok(match dead {
            None => self.leases.create(key, value.into()).await.ok(),
            Some(lease) => self
                .leases
                .update(key, value.into(), lease.revision)
                .await
                .ok(),
        })
    }

    fn lease_value(&self) -> Result<Vec<u8>, String> {
        serde_json::to_vec(&Lease {
            node: self.node.clone(),
            incarnation: self.incarnation(),
            revision: 0,
        })
        .map_err(|e| e.to_string())
    }

    /// Takes an orphaned room (`lease`: the dead holder's, `None` if nobody holds it): the
    /// lease at a later epoch, then the fence, then the room as the store has it.
    pub async fn take(
        self: &Arc<Cluster>,
        app: &App,
        store: &Store,
        id: &str,
        lease: Option<Lease>,
    ) -> Result<(), TakeError> {
        if self.taking.insert(id.to_string(), ()).is_some() {
            return Err(TakeError::Taken);
        }
        let outcome = self.take_now(app, store, id, lease).await;
        self.taking.remove(id);
        outcome
    }

    async fn take_now(
        self: &Arc<Cluster>,
        app: &App,
        store: &Store,
        id: &str,
        lease: Option<Lease>,
    ) -> Result<(), TakeError> {
        if self.fences.contains_key(id) {
            return Ok(());
        }
        if self.is_leaving() {
            return Err(TakeError::Taken);
        }
        if let Some(lease) = &lease {
            if self.is_quiet() || self.still_registered(lease).await {
                return Err(TakeError::Taken);
            }
        }
        let taken = self.take_lease(id, lease.as_ref()).await;
        let Some(epoch) = taken.map_err(TakeError::Failed)? else {
            return Err(TakeError::Taken);
        };
        let previous = match self.fence_or_let_go(store, id, epoch).await {
            Ok(Some(previous)) => previous,
            Ok(None) => return Err(TakeError::Taken),
            Err(e) => return Err(TakeError::Failed(e)),
        };
        self.fences.insert(id.to_string(), epoch);
        self.count_owned();
        let charged_to = charged_to(store, &previous).await;
        match app.restore_match(id, charged_to).await {
            Ok(true) => {
                metrics::counter!("hakem_cluster_takeovers_total").increment(1);
                tracing::info!(match_id = %id, from = ?lease.map(|l| l.node), "cluster: room taken");
                Ok(())
            }
            Ok(false) => {
                // Finished meanwhile: nothing to run.
                self.release(id).await;
                Ok(())
            }
            Err(e) => {
                self.release(id).await;
                Err(TakeError::Failed(e))
            }
        }
    }

    /// Lets go of a room this node owned (it retired, or the node hands it over).
    pub async fn release(&self, id: &str) {
        if let Some((_, epoch)) = self.fences.remove(id) {
            self.count_owned();
            self.let_go(id, epoch).await;
        }
    }

    /// A clean stop: every room handed over (stopped here, its lease let go, so that the
    /// other nodes take it at once), then this node's key.
    pub async fn leave(&self, app: &App) {
        // From now on the node takes nothing (not even the rooms it hands over), renews
        // nothing, and says it is not in the cluster.
        self.leaving.store(true, Ordering::Relaxed);
        // The rooms stop here first (no NATS needed), then their leases are let go; a NATS
        // out of reach holds the stop up for a few seconds at most: the others then take the
        // rooms when this node's key ages out.
        let ids: Vec<String> = self.fences.iter().map(|e| e.key().clone()).collect();
        let mut handed = Vec::with_capacity(ids.len());
        for id in &ids {
            app.hand_over(id).await;
            if let Some(epoch) = self.fences.get(id).map(|e| *e) {
                handed.push((id.clone(), epoch, crate::wall_clock_ms()));
            }
        }
        // The moment each room stopped: its next holder charges the player on move up to it.
        if let Some(store) = app.store() {
            if let Err(e) = store.record_handovers(&handed).await {
                tracing::warn!(error = %e, "cluster: handovers not recorded");
            }
        }
        let held = *self.tournaments.lock().expect("tournaments");
        if held.is_some() {
            self.drop_tournaments(app);
        }
        let release = async {
            for id in &ids {
                self.release(id).await;
            }
            if let Some(epoch) = held {
                let _ = self
                    .leases
                    .delete_expect_revision(TOURNAMENTS_KEY, Some(epoch))
                    .await;
            }
            let _ = self.nodes.delete(&self.node).await;
            let _ = self.client.flush().await;
        };
        let released = tokio::time::timeout(LEAVE_WITHIN, release).await.is_ok();
        self.joined.store(false, Ordering::Relaxed);
        tracing::info!(
            rooms = ids.len(),
            released,
            "cluster: left, rooms handed over"
        );
    }

    /// What `/healthz` says of the cluster.
    pub fn health(&self) -> serde_json::Value {
        serde_json::json!({
            "node": self.node,
            "joined": self.is_joined(),
            "leaving": self.is_leaving(),
            "rooms_owned": self.fences.len(),
            "tournaments": self.runs_tournaments(),
            "tournaments_at": self.owners.get(TOURNAMENTS_KEY).map(|l| l.node.clone()),
            "nodes_alive": self.live.lock().expect("live").len(),
        })
    }

    /// The incarnations other than this one that this node has heard of and that have not
    /// left (a request to one that is gone fails at once: nobody answers its subject).
    pub(crate) fn others(&self) -> Vec<String> {
        let me = self.incarnation();
        self.heard
            .lock()
            .expect("heard")
            .keys()
            .filter(|i| **i != me)
            .cloned()
            .collect()
    }

    /// Which node runs the tournaments, waiting up to twice the TTL while none does (the
    /// last one was lost, and another is about to take them).
    pub async fn tournaments_holder_soon(&self) -> Holder {
        let deadline = tokio::time::Instant::now() + 2 * self.ttl;
        loop {
            let holder = self.tournaments_holder().await;
            if holder != Holder::Nobody || tokio::time::Instant::now() >= deadline {
                return holder;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
}

/// Up to when the player on move is charged in a room taken over `previous`: the moment it
/// handed the room over, or, lost, the last sign of life of the incarnation that ran it; the
/// time the room then waited for a node is charged to nobody.
async fn charged_to(store: &Store, previous: &Previous) -> Option<u64> {
    if let Some(ms) = previous.handed_ms {
        return Some(ms);
    }
    let (Some(node), Some(incarnation)) = (&previous.node, &previous.incarnation) else {
        return None;
    };
    store.alive_ms_of(node, incarnation).await.ok().flatten()
}
