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
//! nothing it did not store was ever acknowledged.

pub mod route;

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use async_nats::jetstream::kv;
use dashmap::DashMap;
use futures_util::StreamExt;
use serde::{Deserialize, Serialize};

use crate::outbox::{ConnId, Outbox};
use crate::store::{Fences, Store};
use crate::App;

/// The longest a clean stop waits for NATS to take the leases back.
const LEAVE_WITHIN: Duration = Duration::from_secs(10);

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
    nodes: kv::Store,
    leases: kv::Store,
    ttl: Duration,
    /// The live incarnations, as last read.
    live: Mutex<HashSet<String>>,
    /// When this node's own key was last renewed: a node that was paused takes nothing until
    /// it has renewed it again (by then it has heard the others' renewals too).
    renewed_at: Mutex<tokio::time::Instant>,
    /// When each incarnation's key was last seen renewed, and its node's name.
    heard: Mutex<HashMap<String, (String, tokio::time::Instant)>>,
    /// Every room's lease, as the bucket was last seen.
    owners: DashMap<String, Lease>,
    /// The rooms this node owns, with their epochs; the store fences its writes with it.
    pub fences: Fences,
    /// Whether this node's key was renewed within the TTL.
    joined: AtomicBool,
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
    /// The epoch of the tournaments' lease, while this node holds it.
    tournaments: Mutex<Option<u64>>,
    pub(crate) app: Mutex<Weak<App>>,
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
        let bucket = |name: &str, max_age: Duration, storage| kv::Config {
            bucket: name.to_string(),
            history: 1,
            max_age,
            storage,
            ..Default::default()
        };
        let nodes = match jetstream.get_key_value("hakem_nodes").await {
            Ok(store) => store,
            Err(_) => jetstream
                .create_key_value(bucket(
                    "hakem_nodes",
                    settings.ttl,
                    async_nats::jetstream::stream::StorageType::Memory,
                ))
                .await
                .map_err(|e| format!("NATS bucket hakem_nodes: {e}"))?,
        };
        let leases = match jetstream.get_key_value("hakem_rooms").await {
            Ok(store) => store,
            Err(_) => jetstream
                .create_key_value(bucket(
                    "hakem_rooms",
                    Duration::ZERO,
                    async_nats::jetstream::stream::StorageType::File,
                ))
                .await
                .map_err(|e| format!("NATS bucket hakem_rooms: {e}"))?,
        };
        let cluster = Arc::new(Cluster {
            node: settings.node.clone(),
            incarnation: Mutex::new(new_incarnation()),
            client,
            nodes,
            leases,
            ttl: settings.ttl,
            live: Mutex::default(),
            heard: Mutex::default(),
            renewed_at: Mutex::new(tokio::time::Instant::now()),
            owners: DashMap::new(),
            fences: Arc::new(DashMap::new()),
            joined: AtomicBool::new(false),
            taking: DashMap::new(),
            members: DashMap::new(),
            remote_rooms: DashMap::new(),
            proxies: DashMap::new(),
            remote_sessions: DashMap::new(),
            session_members: DashMap::new(),
            tournaments: Mutex::new(None),
            app: Mutex::new(Weak::new()),
        });
        cluster.register().await?;
        Ok(cluster)
    }

    pub fn incarnation(&self) -> String {
        self.incarnation.lock().expect("incarnation").clone()
    }

    /// Whether this node is in the cluster (its key renewed within the TTL).
    pub fn is_joined(&self) -> bool {
        self.joined.load(Ordering::Relaxed)
    }

    fn app(&self) -> Option<Arc<App>> {
        self.app.lock().expect("app").upgrade()
    }

    /// Writes this node's key with its incarnation; returns the key's revision.
    async fn register(&self) -> Result<u64, String> {
        let key = NodeKey {
            node: self.node.clone(),
            incarnation: self.incarnation(),
        };
        let value = serde_json::to_vec(&key).map_err(|e| e.to_string())?;
        let revision = self
            .nodes
            .put(&self.node, value.into())
            .await
            .map_err(|e| format!("NATS: node key not written: {e}"))?;
        self.live.lock().expect("live").insert(key.incarnation);
        self.joined.store(true, Ordering::Relaxed);
        *self.renewed_at.lock().expect("renewed") = tokio::time::Instant::now();
        Ok(revision)
    }

    /// Starts the node's work in the cluster: keeping its key alive, following the rooms'
    /// leases, taking orphaned rooms, and serving the frames routed to its rooms.
    pub async fn run(self: &Arc<Cluster>, app: &Arc<App>) -> Result<(), String> {
        *self.app.lock().expect("app") = Arc::downgrade(app);
        if let Some(store) = app.store() {
            store.fence_with(self.fences.clone());
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
    async fn keep_alive(self: Arc<Cluster>) {
        let mut revision = match self.nodes.entry(&self.node).await {
            Ok(Some(entry)) => entry.revision,
            _ => 0,
        };
        let every = self.ttl / 4;
        loop {
            tokio::time::sleep(every).await;
            let key = NodeKey {
                node: self.node.clone(),
                incarnation: self.incarnation(),
            };
            let Ok(value) = serde_json::to_vec(&key) else {
                continue;
            };
            match self.nodes.update(&self.node, value.into(), revision).await {
                Ok(next) => {
                    revision = next;
                    self.joined.store(true, Ordering::Relaxed);
                    *self.renewed_at.lock().expect("renewed") = tokio::time::Instant::now();
                    metrics::counter!("hakem_cluster_lease_renewals_total").increment(1);
                }
                Err(e) => {
                    let lost = matches!(e.kind(), kv::UpdateErrorKind::WrongLastRevision);
                    tracing::warn!(error = %e, lost, "cluster: node key not renewed");
                    if !lost {
                        // NATS is out of reach: keep trying. Past the TTL the others count
                        // this node out (its rooms' writes are then refused by the fence, and
                        // end them); it says so to whoever asks.
                        if self.renewed_at.lock().expect("renewed").elapsed() >= self.ttl {
                            self.joined.store(false, Ordering::Relaxed);
                        }
                        continue;
                    }
                    self.joined.store(false, Ordering::Relaxed);
                    self.abdicate_all("this node was presumed dead by the cluster");
                    *self.incarnation.lock().expect("incarnation") = new_incarnation();
                    match self.register().await {
                        Ok(next) => {
                            revision = next;
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

    /// Gives up every room this node runs (their members are told to reconnect).
    fn abdicate_all(&self, why: &'static str) {
        let Some(app) = self.app() else { return };
        let ids: Vec<String> = self.fences.iter().map(|e| e.key().clone()).collect();
        self.fences.clear();
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

    /// Which node runs the tournaments now.
    pub async fn tournaments_holder(&self) -> Holder {
        if self.tournaments.lock().expect("tournaments").is_some() {
            return Holder::Here;
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
        if self.tournaments.lock().expect("tournaments").is_some() {
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
        let Some(epoch) = self.take_lease(TOURNAMENTS_KEY, lease.as_ref()).await? else {
            return Ok(());
        };
        *self.tournaments.lock().expect("tournaments") = Some(epoch);
        let count = crate::tournament::restore(app).await?;
        tracing::info!(count, "cluster: tournaments run here");
        Ok(())
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
        if self.renewed_at.lock().expect("renewed").elapsed() > self.ttl / 2 {
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
        let value = self.lease_value()?;
        let epoch = self
            .leases
            .create(id, value.into())
            .await
            .map_err(|e| format!("the match's lease was not taken: {e}"))?;
        if !store
            .raise_fence(id, &self.node, epoch)
            .await
            .map_err(|e| e.to_string())?
        {
            return Err("the match's fence stands higher already".into());
        }
        self.fences.insert(id.to_string(), epoch);
        metrics::gauge!("hakem_cluster_rooms_owned").set(self.fences.len() as f64);
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
        if let Some(lease) = &lease {
            if self.still_registered(lease).await {
                return Err(TakeError::Taken);
            }
        }
        let taken = self.take_lease(id, lease.as_ref()).await;
        let Some(epoch) = taken.map_err(TakeError::Failed)? else {
            return Err(TakeError::Taken);
        };
        match store.raise_fence(id, &self.node, epoch).await {
            Ok(true) => {}
            Ok(false) => return Err(TakeError::Taken),
            Err(e) => return Err(TakeError::Failed(e.to_string())),
        }
        self.fences.insert(id.to_string(), epoch);
        let alive_ms = match &lease {
            Some(lease) => store.alive_ms_of(&lease.node).await.ok().flatten(),
            None => None,
        };
        match app.restore_match(id, alive_ms).await {
            Ok(true) => {
                metrics::counter!("hakem_cluster_takeovers_total").increment(1);
                metrics::gauge!("hakem_cluster_rooms_owned").set(self.fences.len() as f64);
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
            metrics::gauge!("hakem_cluster_rooms_owned").set(self.fences.len() as f64);
            if let Err(e) = self.leases.delete_expect_revision(id, Some(epoch)).await {
                tracing::debug!(match_id = %id, error = %e, "cluster: lease not deleted");
            }
        }
    }

    /// A clean stop: every room handed over (stopped here, its lease let go, so that the
    /// other nodes take it at once), then this node's key.
    pub async fn leave(&self, app: &App) {
        // The rooms stop here first (no NATS needed), then their leases are let go; a NATS
        // out of reach holds the stop up for a few seconds at most: the others then take the
        // rooms when this node's key ages out.
        let ids: Vec<String> = self.fences.iter().map(|e| e.key().clone()).collect();
        for id in &ids {
            app.hand_over(id).await;
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
            "rooms_owned": self.fences.len(),
            "tournaments": self.tournaments.lock().expect("tournaments").is_some(),
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
