//! Durable storage of matches and their events, in SQLite (the default, an embedded file) or
//! PostgreSQL, with the same schema and migrations.
//!
//! Rooms append events, and new matches are created, through one writer that commits
//! everything waiting in a single transaction (group commit): each waits for its commit before
//! anyone is told, but many share one trip to the disk. A batch is one trip to the database,
//! on a connection of the writer's own where its statements are prepared once whatever the
//! batch's size: on PostgreSQL one statement taking the rows as arrays (UNNEST); on SQLite one
//! statement per table taking [`SQLITE_ROWS`] rows of `VALUES` at a time, on a thread of the
//! writer's own that calls SQLite directly (see [`spawn_sqlite_writer`]). A batch that fails is
//! written again one piece at a time, so that one room's bad append fails only that room.
//! Everything else (reads, accounts, tournaments) goes through a pool of connections.

use std::collections::HashSet;
use std::str::FromStr;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use hakem_round::rating::Rating;
use serde::{Deserialize, Serialize};
use sqlx::postgres::{PgConnection, PgPool, PgPoolOptions};
use sqlx::sqlite::{
    SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqlitePoolOptions, SqliteSynchronous,
};
use sqlx::{Connection, Row};
use tokio::sync::{mpsc, oneshot};

use hakem_protocol::{ClockConfig, HouseBot, PerSeat, RatedRound, Seat};

/// The schema, one step per version; applied in order, each once.
const MIGRATIONS: &[(i64, &str)] = &[
    (1, include_str!("../migrations/0001_matches_events.sql")),
    (2, include_str!("../migrations/0002_accounts.sql")),
    (3, include_str!("../migrations/0003_tournaments.sql")),
    (4, include_str!("../migrations/0004_finished_matches.sql")),
    (5, include_str!("../migrations/0005_tournament_changes.sql")),
    (6, include_str!("../migrations/0006_logins.sql")),
    (7, include_str!("../migrations/0007_ratings.sql")),
    (8, include_str!("../migrations/0008_match_players.sql")),
    (9, include_str!("../migrations/0009_rounds_not_rated.sql")),
    (10, include_str!("../migrations/0010_chat.sql")),
    (11, include_str!("../migrations/0011_room_leases.sql")),
    (12, include_str!("../migrations/0012_lease_handover.sql")),
    (
        13,
        include_str!("../migrations/0013_events_key_checked_by_the_writer.sql"),
    ),
    (14, include_str!("../migrations/0014_recent_events.sql")),
];

/// Steps whose text differs on PostgreSQL, by version: it replaces the one in [`MIGRATIONS`].
const POSTGRES_MIGRATIONS: &[(i64, &str)] = &[(
    13,
    include_str!("../migrations/0013_events_key_checked_by_the_writer_postgres.sql"),
)];

/// How a store is opened.
#[derive(Debug, Clone)]
pub struct StoreSettings {
    /// A node of a cluster (see [`Store::open_node`]).
    pub in_cluster: bool,
    /// On SQLite, how long a commit of a few writes waits, from its oldest write's arrival,
    /// for more writes to share it (zero: none). Each commit costs its flush to the disk
    /// whatever it holds, so fewer, fuller commits cost less CPU for a little more latency
    /// (docs/performance.md).
    pub commit_wait: Duration,
    /// On SQLite, the events appended since the last move into the events' key that make the
    /// next move due (see [`Recent`]).
    pub move_after: usize,
}

/// The default of [`StoreSettings::move_after`].
pub const MOVE_AFTER: usize = 60_000;

/// The default of [`StoreSettings::commit_wait`].
pub const COMMIT_WAIT: Duration = Duration::from_micros(300);

/// The longest [`StoreSettings::commit_wait`] a store takes (a longer one is cut to it).
const MAX_COMMIT_WAIT: Duration = Duration::from_millis(5);

impl Default for StoreSettings {
    fn default() -> StoreSettings {
        StoreSettings {
            in_cluster: false,
            commit_wait: COMMIT_WAIT,
            move_after: MOVE_AFTER,
        }
    }
}

/// Writes waiting for the writer; a full queue makes rooms wait (never drops an event).
const WRITER_QUEUE: usize = 8192;
/// The most writes committed in one transaction.
const MAX_BATCH: usize = 1024;

#[derive(Debug, Clone)]
pub struct StoreError(pub String);

impl std::fmt::Display for StoreError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "store: {}", self.0)
    }
}

impl std::error::Error for StoreError {}

impl From<sqlx::Error> for StoreError {
    fn from(e: sqlx::Error) -> StoreError {
        StoreError(e.to_string())
    }
}

/// Everything needed to rebuild a match besides its events: its settings and secrets.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct MatchSpec {
    pub game: String,
    pub variant: String,
    pub sets: u8,
    pub clock: Option<ClockConfig>,
    pub warnings_limit: u8,
    pub players: PerSeat<String>,
    pub untimed_ply_limit: u32,
    pub seat_tokens: PerSeat<String>,
    pub arbiter_token: String,
    /// Accounts seated by name, if any.
    #[serde(default)]
    pub accounts: PerSeat<Option<String>>,
    /// The server's own bot, if it plays a seat.
    #[serde(default)]
    pub house_bot: Option<HouseBot>,
    /// The tournament the match is a round of, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tournament: Option<String>,
    /// How far behind spectators see the match, if they do not see it live.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spectator_delay: Option<hakem_protocol::SpectatorDelay>,
    /// The round's result changes the players' ratings.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub rated: bool,
}

/// One player of a rated round, as stored.
#[derive(Clone, Debug, PartialEq)]
pub struct RatedPlayer {
    pub account: String,
    /// 1 a win, 0.5 a draw, 0 a loss.
    pub score: f64,
    pub after: Rating,
}

/// A match's chat as stored: its settings, if the arbiter ever changed them (on, and the
/// mutes as JSON), each channel's last messages (newest first) and how many each has.
pub struct StoredChat {
    pub settings: Option<(bool, String)>,
    pub lines: Vec<hakem_protocol::ChatLine>,
    pub counts: PerChannel<u64>,
}

/// One value for each of a match's two chats.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PerChannel<T> {
    pub players: T,
    pub spectators: T,
}

impl<T> PerChannel<T> {
    pub fn get(&self, channel: hakem_protocol::ChatChannel) -> &T {
        match channel {
            hakem_protocol::ChatChannel::Players => &self.players,
            hakem_protocol::ChatChannel::Spectators => &self.spectators,
        }
    }

    pub fn get_mut(&mut self, channel: hakem_protocol::ChatChannel) -> &mut T {
        match channel {
            hakem_protocol::ChatChannel::Players => &mut self.players,
            hakem_protocol::ChatChannel::Spectators => &mut self.spectators,
        }
    }
}

/// A chat message written by an account, as its data export lists it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct AccountChatLine {
    #[serde(rename = "match")]
    pub match_id: String,
    pub channel: hakem_protocol::ChatChannel,
    pub text: String,
    pub at_ms: u64,
}

/// A stored account.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoredAccount {
    pub name: String,
    pub kind: String,
    /// Empty for an account that logs in with a password instead.
    pub token: String,
    /// The Argon2id hash (PHC string) of its password, if it has one.
    pub password_hash: Option<String>,
    /// `active`, `pending` or `disabled`.
    pub status: String,
}

/// A stored match: its spec and its event frames (the JSON sent to clients), in `seq` order.
#[derive(Debug)]
pub struct StoredMatch {
    pub id: String,
    pub spec: MatchSpec,
    pub created_ms: u64,
    pub finished: bool,
    pub frames: Vec<String>,
    /// When each frame was stored (milliseconds since the epoch); read for the live matches
    /// of a restart only (spectators who see a match late are held back by it), empty else.
    pub times: Vec<u64>,
}

/// One event to append.
#[derive(Debug, Clone)]
pub struct NewEvent {
    pub seq: u64,
    pub at_ms: u64,
    pub frame: String,
}

/// The end of a match, written with its last events.
#[derive(Debug, Clone)]
pub struct Finish {
    pub at_ms: u64,
    /// Its line of the match list, as JSON.
    pub summary: String,
}

/// A finished match as the paged list reads it.
#[derive(Debug, Clone)]
pub struct FinishedLine {
    pub id: String,
    pub finished_ms: u64,
    pub summary: Option<String>,
}

/// One write, and where its outcome goes.
enum Write {
    Create {
        id: String,
        created_ms: u64,
        spec: String,
    },
    Append {
        match_id: String,
        events: Vec<NewEvent>,
        finished: Option<Finish>,
    },
    Chat {
        line: hakem_protocol::ChatLine,
        account: Option<String>,
    },
}

struct Job {
    write: Write,
    done: oneshot::Sender<Result<(), String>>,
    /// When the write joined the writer's queue.
    queued: Instant,
}

impl Job {
    /// Tells the writing room how its write went, and how long it waited for that, counted
    /// per write: a slow commit holds every write that queued behind it, which a time per
    /// commit does not show.
    fn answer(self, outcome: Result<(), String>) {
        metrics::histogram!("hakem_store_write_seconds")
            .record(self.queued.elapsed().as_secs_f64());
        let _ = self.done.send(outcome);
    }
}

#[derive(Clone)]
enum Db {
    Sqlite(SqlitePool),
    Postgres(PgPool),
}

/// The store handle; cheap to clone.
#[derive(Clone)]
pub struct Store {
    db: Db,
    writer: mpsc::Sender<Job>,
    /// When the server that used this database before was last known alive (wall clock ms).
    last_alive_ms: Option<u64>,
    /// In a cluster: the rooms this node owns, with their lease epochs (see [`Fences`]).
    fences: Arc<OnceLock<Fences>>,
    /// In a cluster: the epoch of the tournaments' lease while this node holds it.
    tournaments_fence: Arc<OnceLock<TournamentsFence>>,
    /// The setting the writer records the server's signs of life in.
    alive_key: AliveKey,
    /// On SQLite, the matches with events not yet moved into the events' key.
    recent: Option<RecentMatches>,
    /// On SQLite, the file's lock (see [`one_server`]), held while any handle or the writer
    /// lives: a writer that ended early does not let a second server in beside the readers.
    _sqlite_lock: Option<Arc<crate::file_lock::FileLock>>,
}

/// The epoch of the tournaments' lease while this node of a cluster holds it (`None` while it
/// does not): every tournament change it stores is committed only if `room_leases` still holds
/// that epoch for the tournaments, as a room's events are (see [`Fences`]).
pub type TournamentsFence = Arc<std::sync::Mutex<Option<u64>>>;

/// The setting the writer records signs of life in; `None`: none (a cluster's node before it
/// has joined, see [`Store::record_alive_as`]).
type AliveKey = Arc<std::sync::Mutex<Option<String>>>;

/// The holder a room's fence was raised over, as `room_leases` had it (see
/// [`Store::raise_fence`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Previous {
    pub node: Option<String>,
    pub incarnation: Option<String>,
    /// When it handed the room over, if it stopped cleanly.
    pub handed_ms: Option<u64>,
}

/// The fence of one room (or of the tournaments), read in a write's own transaction and held
/// until it ends (see [`Store::raise_fence`]).
const FENCE_STANDS: &str = "SELECT epoch FROM room_leases WHERE match_id = $1 FOR SHARE";

/// The rooms a node of a cluster owns, each with the epoch of its lease. Once set, every write
/// of a match is committed only if `room_leases` still holds this node's epoch for it, checked
/// in the write's own transaction: a node that lost a room (paused, cut off, presumed dead)
/// cannot write a single event of it after another node took it.
pub type Fences = Arc<dashmap::DashMap<String, u64>>;

/// The error of a write refused by the fence: the room belongs to another node now.
pub const FENCED: &str = "the room is owned by another node";

/// A single write refused by the fence (the group commit counts its own).
fn fenced() -> StoreError {
    metrics::counter!("hakem_cluster_fenced_writes_total").increment(1);
    StoreError(FENCED.to_string())
}

/// Refuses a write unless `room_leases` still holds this node's epoch `fence` for `key` (a
/// match id, or the tournaments'), read in the write's own transaction `tx` with `stands`
/// ([`FENCE_STANDS`] for this database) and held until it ends; `None` (outside a cluster)
/// checks nothing.
async fn check_fence<DB>(
    tx: &mut sqlx::Transaction<'_, DB>,
    stands: &str,
    key: &str,
    fence: Option<i64>,
) -> Result<(), StoreError>
where
    DB: sqlx::Database,
    for<'c> &'c mut DB::Connection: sqlx::Executor<'c, Database = DB>,
    for<'q> DB::Arguments<'q>: sqlx::IntoArguments<'q, DB>,
    for<'q> &'q str: sqlx::Encode<'q, DB> + sqlx::Type<DB>,
    (i64,): for<'r> sqlx::FromRow<'r, DB::Row>,
{
    let Some(epoch) = fence else {
        return Ok(());
    };
    let held: Option<i64> = sqlx::query_scalar(stands)
        .bind(key)
        .fetch_optional(&mut **tx)
        .await?;
    if held != Some(epoch) {
        return Err(fenced());
    }
    Ok(())
}

impl StoreError {
    /// The write was refused because another node owns the room now.
    pub fn is_fenced(&self) -> bool {
        self.0 == FENCED
    }
}

/// Runs the same statement on either database. SQL is written with `$1` placeholders, which
/// SQLite reads as numbered parameters once written `?1`.
macro_rules! on_db {
    ($db:expr, $pool:ident => $body:expr) => {
        match $db {
            Db::Sqlite($pool) => $body,
            Db::Postgres($pool) => $body,
        }
    };
}

fn sql_for(db: &Db, sql: &str) -> String {
    match db {
        Db::Sqlite(_) => sql.replace('$', "?"),
        Db::Postgres(_) => sql.to_string(),
    }
}

fn count(n: usize) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

fn ms(value: i64) -> u64 {
    u64::try_from(value).unwrap_or(0)
}

fn finished_line<R: Row>(row: &R) -> Result<FinishedLine, sqlx::Error>
where
    usize: sqlx::ColumnIndex<R>,
    for<'r> String: sqlx::Decode<'r, R::Database> + sqlx::Type<R::Database>,
    for<'r> Option<i64>: sqlx::Decode<'r, R::Database> + sqlx::Type<R::Database>,
    for<'r> Option<String>: sqlx::Decode<'r, R::Database> + sqlx::Type<R::Database>,
{
    Ok(FinishedLine {
        id: row.try_get(0)?,
        finished_ms: ms(row.try_get::<Option<i64>, _>(1)?.unwrap_or(0)),
        summary: row.try_get(2)?,
    })
}

impl Store {
    /// Opens (creating if needed) the database at `url`, `sqlite://FILE` or `postgres://...`,
    /// and brings its schema up to date.
    pub async fn open(url: &str) -> Result<Store, StoreError> {
        Store::open_node(url, false).await
    }

    /// [`Store::open`], for a node of a cluster with `in_cluster`: it records its signs of life
    /// only once it has joined, under a key of its incarnation's (see
    /// [`Store::record_alive_as`]); each node's rooms are charged up to when the incarnation
    /// that ran them was last alive.
    pub async fn open_node(url: &str, in_cluster: bool) -> Result<Store, StoreError> {
        let settings = StoreSettings {
            in_cluster,
            ..StoreSettings::default()
        };
        Store::open_with(url, settings).await
    }

    /// [`Store::open`] with `settings`.
    pub async fn open_with(url: &str, settings: StoreSettings) -> Result<Store, StoreError> {
        let in_cluster = settings.in_cluster;
        // The file the SQLite writer opens on its own thread (see `spawn_sqlite_writer`).
        let mut sqlite_file = None;
        let mut sqlite_lock = None;
        let db = if url.starts_with("postgres://") || url.starts_with("postgresql://") {
            let pool = PgPoolOptions::new()
                .max_connections(8)
                .acquire_timeout(Duration::from_secs(10))
                .connect(url)
                .await?;
            Db::Postgres(pool)
        } else if url.starts_with("sqlite:") {
            // WAL lets readers go on during a commit; FULL makes each commit survive a power
            // failure, not only a crash of the process.
            // The WAL is copied back into the database beside the writer (see `Checkpoint`),
            // not by whichever commit happens to fill it: a checkpoint inside a commit would
            // hold up every room waiting for that commit.
            let options = SqliteConnectOptions::from_str(url)?
                .create_if_missing(true)
                .journal_mode(SqliteJournalMode::Wal)
                .synchronous(SqliteSynchronous::Full)
                .busy_timeout(Duration::from_secs(10))
                .pragma("wal_autocheckpoint", "0")
                // Once copied back, a WAL grown beyond this is cut back to it. It is larger
                // than the WAL grows between two copies (see `CHECKPOINT_ROWS`): a WAL cut
                // back grows again commit by commit, and each commit that makes the file
                // longer waits for the file system to record its new size.
                .pragma("journal_size_limit", WAL_LIMIT_BYTES.to_string())
                // A page cache of 1 MiB per connection (SQLite's default is 2): the index
                // pages the writer needs fit, and an idle server stays small.
                .pragma("cache_size", "-1024");
            let file = sqlite_file_of(url, &options)?;
            // Readers' connections (and their page caches) close when they have been idle.
            let pool = SqlitePoolOptions::new()
                .max_connections(4)
                .idle_timeout(Duration::from_secs(10))
                .connect_with(options)
                .await?;
            sqlite_lock = Some(one_server(url, &file).await?);
            sqlite_file = Some(file);
            Db::Sqlite(pool)
        } else {
            return Err(StoreError(format!(
                "unsupported database URL {url:?} (use sqlite://FILE or postgres://...)"
            )));
        };
        migrate(&db).await?;
        // Read before the writer starts recording this server's own life.
        let last_alive_ms = match in_cluster {
            true => None,
            false => read_setting(&db, ALIVE_KEY)
                .await?
                .and_then(|v| v.parse().ok()),
        };
        let alive_key: AliveKey = Arc::new(std::sync::Mutex::new(
            (!in_cluster).then(|| ALIVE_KEY.to_string()),
        ));
        let (writer, queue) = mpsc::channel(WRITER_QUEUE);
        let fences: Arc<OnceLock<Fences>> = Arc::default();
        let mut recent = None;
        match &db {
            Db::Sqlite(_) => {
                let file = sqlite_file.clone().expect("a SQLite file");
                let mut writer = SqliteWriter::open(
                    file,
                    settings.commit_wait.min(MAX_COMMIT_WAIT),
                    settings.move_after.max(1),
                )
                .map_err(|e| StoreError(format!("cannot open the SQLite writer: {e}")))?;
                writer.lock = sqlite_lock.clone();
                recent = Some(writer.recent.last_seq.clone());
                spawn_sqlite_writer(write_loop(
                    Writer::Sqlite(Box::new(writer)),
                    queue,
                    alive_key.clone(),
                ))
                .map_err(|e| StoreError(format!("cannot start the SQLite writer: {e}")))?;
            }
            Db::Postgres(pool) => {
                let conn = postgres_writer_connection(pool).await?;
                tokio::spawn(write_loop(
                    Writer::Postgres(pool.clone(), Some(conn), fences.clone()),
                    queue,
                    alive_key.clone(),
                ));
            }
        }
        Ok(Store {
            db,
            writer,
            last_alive_ms,
            fences,
            tournaments_fence: Arc::default(),
            alive_key,
            recent,
            _sqlite_lock: sqlite_lock,
        })
    }

    /// Whether this is PostgreSQL (a cluster's nodes share one).
    pub fn is_postgres(&self) -> bool {
        matches!(self.db, Db::Postgres(_))
    }

    /// From now on, writes of rooms are fenced by `fences`, and tournament changes by
    /// `tournaments` (PostgreSQL only; set once).
    pub fn fence_with(&self, fences: Fences, tournaments: TournamentsFence) {
        let _ = self.fences.set(fences);
        let _ = self.tournaments_fence.set(tournaments);
    }

    /// The epoch a write of `key` (a match id, or the tournaments') is fenced with: `None`
    /// outside a cluster; refused when this node does not hold it.
    fn fence_of(&self, key: &str) -> Result<Option<i64>, StoreError> {
        let held = if key == crate::cluster::TOURNAMENTS_KEY {
            match self.tournaments_fence.get() {
                None => return Ok(None),
                Some(epoch) => *epoch.lock().expect("tournaments' fence"),
            }
        } else {
            match self.fences.get() {
                None => return Ok(None),
                Some(fences) => fences.get(key).map(|epoch| *epoch),
            }
        };
        match held {
            Some(epoch) => Ok(Some(i64::try_from(epoch).unwrap_or(i64::MAX))),
            None => Err(fenced()),
        }
    }

    /// Raises the fence of a room (or of the tournaments) to `epoch` for `incarnation` of
    /// `node`: from then on only its writes are committed. `None` if the fence stands at
    /// `epoch` or higher already (another node took the room with a later lease); else the
    /// holder it was raised over. A write of the room's former owner that is being committed
    /// holds the fence until it is; so whatever the room's events are read after this returns,
    /// they are all the events it will ever have from before.
    pub async fn raise_fence(
        &self,
        match_id: &str,
        node: &str,
        incarnation: &str,
        epoch: u64,
    ) -> Result<Option<Previous>, StoreError> {
        // The row is locked as it is read (SQLite has one writer at a time anyway).
        let lock = match self.db {
            Db::Postgres(_) => " FOR UPDATE",
            Db::Sqlite(_) => "",
        };
        let read = sql_for(
            &self.db,
            &format!(
                "SELECT node, incarnation, handed_ms FROM room_leases WHERE match_id = $1{lock}"
            ),
        );
        let raise = sql_for(
            &self.db,
            "INSERT INTO room_leases (match_id, node, incarnation, epoch, handed_ms) \
             VALUES ($1, $2, $3, $4, NULL) ON CONFLICT (match_id) DO UPDATE SET \
             node = excluded.node, incarnation = excluded.incarnation, epoch = excluded.epoch, \
             handed_ms = NULL WHERE room_leases.epoch < excluded.epoch",
        );
        let epoch = i64::try_from(epoch).unwrap_or(i64::MAX);
        // SQLite takes its write lock first: a transaction that read, then writes while the
        // store's writer commits, fails at once rather than waiting.
        let begin = match self.db {
            Db::Postgres(_) => "BEGIN",
            Db::Sqlite(_) => "BEGIN IMMEDIATE",
        };
        Ok(on_db!(&self.db, pool => {
            let mut tx = pool.begin_with(begin).await?;
            let previous = match sqlx::query(&read)
                .bind(match_id)
                .fetch_optional(&mut *tx)
                .await?
            {
                Some(row) => Previous {
                    node: row.try_get(0)?,
                    incarnation: row.try_get(1)?,
                    handed_ms: row.try_get::<Option<i64>, _>(2)?.map(ms),
                },
                None => Previous::default(),
            };
            let raised = sqlx::query(&raise)
                .bind(match_id)
                .bind(node)
                .bind(incarnation)
                .bind(epoch)
                .execute(&mut *tx)
                .await?
                .rows_affected()
                == 1;
            tx.commit().await?;
            raised.then_some(previous)
        }))
    }

    /// A node that stops cleanly records when it handed each room over: `(match id, the epoch
    /// it held it at, the moment)`. The next holder charges the player on move up to then, and
    /// nobody for the time the room waits for it. A room whose fence stands at another epoch
    /// by now is left alone.
    pub async fn record_handovers(&self, rooms: &[(String, u64, u64)]) -> Result<(), StoreError> {
        let epoch = |e: u64| i64::try_from(e).unwrap_or(i64::MAX);
        match &self.db {
            Db::Postgres(pool) => {
                sqlx::query(
                    "UPDATE room_leases SET handed_ms = t.at_ms \
                     FROM UNNEST($1::text[], $2::bigint[], $3::bigint[]) AS t(id, epoch, at_ms) \
                     WHERE room_leases.match_id = t.id AND room_leases.epoch = t.epoch",
                )
                .bind(rooms.iter().map(|r| r.0.as_str()).collect::<Vec<&str>>())
                .bind(rooms.iter().map(|r| epoch(r.1)).collect::<Vec<i64>>())
                .bind(rooms.iter().map(|r| epoch(r.2)).collect::<Vec<i64>>())
                .execute(pool)
                .await?;
            }
            Db::Sqlite(pool) => {
                let mut tx = pool.begin().await?;
                for (id, held, at_ms) in rooms {
                    sqlx::query(
                        "UPDATE room_leases SET handed_ms = ?1 WHERE match_id = ?2 AND epoch = ?3",
                    )
                    .bind(epoch(*at_ms))
                    .bind(id)
                    .bind(epoch(*held))
                    .execute(&mut *tx)
                    .await?;
                }
                tx.commit().await?;
            }
        }
        Ok(())
    }

    /// From now on the writer records the server's signs of life under `key` (a cluster's
    /// node: its incarnation's, see [`alive_key_of`]).
    pub fn record_alive_as(&self, key: String) {
        *self.alive_key.lock().expect("alive key") = Some(key);
    }

    /// When an incarnation of a node was last known alive, as its writer recorded.
    pub async fn alive_ms_of(
        &self,
        node: &str,
        incarnation: &str,
    ) -> Result<Option<u64>, StoreError> {
        Ok(read_setting(&self.db, &alive_key_of(node, incarnation))
            .await?
            .and_then(|v| v.parse().ok()))
    }

    /// Forgets the signs of life of `node`'s incarnations last alive before `before_ms`, but
    /// `keep`'s; returns how many.
    pub async fn forget_alive(
        &self,
        node: &str,
        keep: &str,
        before_ms: u64,
    ) -> Result<u64, StoreError> {
        // A prefix compared as such: `_`, allowed in node names, is a wildcard for LIKE.
        let prefix = format!("{ALIVE_KEY}.{node}.");
        let sql = sql_for(
            &self.db,
            "DELETE FROM settings WHERE substr(key, 1, length($1)) = $1 AND key <> $2 \
             AND CAST(value AS BIGINT) < $3",
        );
        Ok(on_db!(&self.db, pool => {
            sqlx::query(&sql)
                .bind(&prefix)
                .bind(keep)
                .bind(i64::try_from(before_ms).unwrap_or(i64::MAX))
                .execute(pool)
                .await?
                .rows_affected()
        }))
    }

    /// Whether the match is stored and not finished (one row read, not its events).
    pub async fn is_unfinished(&self, id: &str) -> Result<bool, StoreError> {
        let sql = sql_for(&self.db, "SELECT finished FROM matches WHERE id = $1");
        let finished: Option<i64> = on_db!(&self.db, pool => {
            match sqlx::query(&sql).bind(id).fetch_optional(pool).await? {
                Some(row) => Some(row.try_get::<i64, _>(0)?),
                None => None,
            }
        });
        Ok(finished == Some(0))
    }

    /// The ids of the matches not finished.
    pub async fn live_ids(&self) -> Result<Vec<String>, StoreError> {
        let sql = "SELECT id FROM matches WHERE finished = 0";
        Ok(on_db!(&self.db, pool => {
            sqlx::query(sql)
                .fetch_all(pool)
                .await?
                .iter()
                .map(|row| row.try_get::<String, _>(0))
                .collect::<Result<Vec<_>, _>>()?
        }))
    }

    /// The last moment the server before this one was known to be alive, as it recorded
    /// (at least every [`ALIVE_EVERY`]); `None` for a new database. A restart charges running
    /// clocks up to then.
    pub fn last_alive_ms(&self) -> Option<u64> {
        self.last_alive_ms
    }

    async fn write(&self, write: Write) -> Result<(), StoreError> {
        let (done, committed) = oneshot::channel();
        let stopped = || StoreError("the writer has stopped".into());
        self.writer
            .send(Job {
                write,
                done,
                queued: Instant::now(),
            })
            .await
            .map_err(|_| stopped())?;
        committed.await.map_err(|_| stopped())?.map_err(StoreError)
    }

    /// Records a new match; it shares the next group commit with the rooms' events.
    pub async fn create_match(
        &self,
        id: &str,
        spec: &MatchSpec,
        created_ms: u64,
    ) -> Result<(), StoreError> {
        let spec = serde_json::to_string(spec).map_err(|e| StoreError(e.to_string()))?;
        self.write(Write::Create {
            id: id.to_string(),
            created_ms,
            spec,
        })
        .await
    }

    /// Appends events of one match and waits until they are committed. `finished` marks the
    /// match as over (it is then no longer restored as a live match, and is listed from here).
    pub async fn append(
        &self,
        match_id: &str,
        events: Vec<NewEvent>,
        finished: Option<Finish>,
    ) -> Result<(), StoreError> {
        self.write(Write::Append {
            match_id: match_id.to_string(),
            events,
            finished,
        })
        .await
    }

    /// Whether any match has events not yet moved into the key (SQLite).
    fn any_recent(&self) -> bool {
        self.recent
            .as_ref()
            .is_some_and(|matches| !matches.lock().expect("recent").is_empty())
    }

    /// Where the events of `id` are read from: on SQLite, `events` and, unless none of the
    /// match's are there, the recent ones not yet moved into it (a row being moved is in both
    /// for a while: taken once).
    fn events_table(&self, id: &str) -> &'static str {
        let recent = self
            .recent
            .as_ref()
            .is_some_and(|matches| matches.lock().expect("recent").contains_key(id));
        match recent {
            true => {
                "(SELECT match_id, seq, at_ms, frame FROM events \
                 UNION SELECT match_id, seq, at_ms, frame FROM events_recent)"
            }
            false => "events",
        }
    }

    /// Every match that is not finished, with its events, oldest first.
    pub async fn live_matches(&self) -> Result<Vec<StoredMatch>, StoreError> {
        let specs = sql_for(
            &self.db,
            "SELECT id, spec, created_ms FROM matches WHERE finished = 0 ORDER BY created_ms, id",
        );
        // Each table joined on its own: a join outside a union would read every event stored.
        let live_events = |table: &str| {
            format!(
                "SELECT e.match_id, e.seq, e.frame, e.at_ms FROM {table} e \
                 JOIN matches m ON m.id = e.match_id WHERE m.finished = 0"
            )
        };
        let events = match self.any_recent() {
            true => format!(
                "SELECT match_id, frame, at_ms FROM ({} UNION {}) AS live ORDER BY match_id, seq",
                live_events("events"),
                live_events("events_recent")
            ),
            false => format!(
                "SELECT match_id, frame, at_ms FROM ({}) AS live ORDER BY match_id, seq",
                live_events("events")
            ),
        };
        type Spec = (String, String, i64);
        type Event = (String, String, i64);
        let (specs, events): (Vec<Spec>, Vec<Event>) = on_db!(&self.db, pool => {
            let specs = sqlx::query(&specs).fetch_all(pool).await?;
            let specs = specs
                .iter()
                .map(|r| Ok((r.try_get(0)?, r.try_get(1)?, r.try_get(2)?)))
                .collect::<Result<Vec<_>, sqlx::Error>>()?;
            let events = sqlx::query(&events).fetch_all(pool).await?;
            let events = events
                .iter()
                .map(|r| Ok((r.try_get(0)?, r.try_get(1)?, r.try_get(2)?)))
                .collect::<Result<Vec<_>, sqlx::Error>>()?;
            (specs, events)
        });
        let mut frames: std::collections::HashMap<String, (Vec<String>, Vec<u64>)> =
            Default::default();
        for (id, frame, at_ms) in events {
            let (texts, times) = frames.entry(id).or_default();
            texts.push(frame);
            times.push(ms(at_ms));
        }
        specs
            .into_iter()
            .map(|(id, spec, created_ms)| {
                let spec = serde_json::from_str(&spec)
                    .map_err(|e| StoreError(format!("match {id}: bad spec: {e}")))?;
                let (frames, times) = frames.remove(&id).unwrap_or_default();
                Ok(StoredMatch {
                    frames,
                    times,
                    id,
                    spec,
                    created_ms: ms(created_ms),
                    finished: false,
                })
            })
            .collect()
    }

    /// One match with its events, finished or not.
    pub async fn load(&self, id: &str) -> Result<Option<StoredMatch>, StoreError> {
        let sql = sql_for(
            &self.db,
            "SELECT spec, created_ms, finished FROM matches WHERE id = $1",
        );
        let row: Option<(String, i64, i64)> = on_db!(&self.db, pool => {
            match sqlx::query(&sql).bind(id).fetch_optional(pool).await? {
                Some(row) => Some((row.try_get(0)?, row.try_get(1)?, row.try_get(2)?)),
                None => None,
            }
        });
        let Some((spec, created_ms, finished)) = row else {
            return Ok(None);
        };
        let spec: MatchSpec = serde_json::from_str(&spec)
            .map_err(|e| StoreError(format!("match {id}: bad spec: {e}")))?;
        let frames = self.frames(id, 1, u64::MAX, u32::MAX).await?;
        Ok(Some(StoredMatch {
            id: id.to_string(),
            spec,
            created_ms: ms(created_ms),
            finished: finished != 0,
            frames,
            times: Vec::new(),
        }))
    }

    /// The event frames of a match numbered `from` to `to`, at most `limit` of them, in order.
    pub async fn frames(
        &self,
        id: &str,
        from: u64,
        to: u64,
        limit: u32,
    ) -> Result<Vec<String>, StoreError> {
        let sql = sql_for(
            &self.db,
            &format!(
                "SELECT frame FROM {} e WHERE match_id = $1 AND seq >= $2 AND seq <= $3 \
                 ORDER BY seq LIMIT $4",
                self.events_table(id)
            ),
        );
        let bound = |n: u64| i64::try_from(n).unwrap_or(i64::MAX);
        Ok(on_db!(&self.db, pool => {
            sqlx::query(&sql)
                .bind(id)
                .bind(bound(from))
                .bind(bound(to))
                .bind(i64::from(limit))
                .fetch_all(pool)
                .await?
                .iter()
                .map(|row| row.try_get::<String, _>(0))
                .collect::<Result<_, _>>()?
        }))
    }

    /// Finished matches, the most recently finished first, from just after `before` (the
    /// finish time and id of the last line of the previous page), at most `limit`.
    pub async fn finished(
        &self,
        before: Option<(u64, String)>,
        limit: u32,
    ) -> Result<Vec<FinishedLine>, StoreError> {
        let head = "SELECT id, finished_ms, summary FROM matches WHERE finished = 1";
        let order = "ORDER BY finished_ms DESC, id DESC";
        let rows = match before {
            None => {
                let sql = sql_for(&self.db, &format!("{head} {order} LIMIT $1"));
                on_db!(&self.db, pool => {
                    sqlx::query(&sql).bind(i64::from(limit)).fetch_all(pool).await?
                        .iter()
                        .map(finished_line)
                        .collect::<Result<Vec<_>, sqlx::Error>>()?
                })
            }
            Some((ms_before, id_before)) => {
                // Strictly after the cursor in the list's order.
                let sql = sql_for(
                    &self.db,
                    &format!(
                        "{head} AND (finished_ms < $1 OR (finished_ms = $1 AND id < $2)) \
                         {order} LIMIT $3"
                    ),
                );
                let ms_before = i64::try_from(ms_before).unwrap_or(i64::MAX);
                on_db!(&self.db, pool => {
                    sqlx::query(&sql)
                        .bind(ms_before)
                        .bind(&id_before)
                        .bind(i64::from(limit))
                        .fetch_all(pool)
                        .await?
                        .iter()
                        .map(finished_line)
                        .collect::<Result<Vec<_>, sqlx::Error>>()?
                })
            }
        };
        Ok(rows)
    }

    /// Records a new account; an error if the name is taken.
    pub async fn create_account(
        &self,
        account: &StoredAccount,
        created_ms: u64,
    ) -> Result<(), StoreError> {
        let sql = sql_for(
            &self.db,
            "INSERT INTO accounts (name, kind, token, created_ms, password_hash, status) \
             VALUES ($1, $2, $3, $4, $5, $6)",
        );
        on_db!(&self.db, pool => {
            sqlx::query(&sql)
                .bind(&account.name)
                .bind(&account.kind)
                .bind(&account.token)
                .bind(created_ms as i64)
                .bind(&account.password_hash)
                .bind(&account.status)
                .execute(pool)
                .await?;
        });
        Ok(())
    }

    pub async fn accounts(&self) -> Result<Vec<StoredAccount>, StoreError> {
        let sql = sql_for(
            &self.db,
            "SELECT name, kind, token, password_hash, status FROM accounts ORDER BY name",
        );
        Ok(on_db!(&self.db, pool => {
            let rows = sqlx::query(&sql).fetch_all(pool).await?;
            let mut out = Vec::with_capacity(rows.len());
            for row in rows {
                out.push(StoredAccount {
                    name: row.try_get(0)?,
                    kind: row.try_get(1)?,
                    token: row.try_get(2)?,
                    password_hash: row.try_get(3)?,
                    status: row.try_get(4)?,
                });
            }
            out
        }))
    }

    /// Sets an account's status; with `end_sessions`, its sessions end in the same
    /// transaction.
    pub async fn set_account_status(
        &self,
        name: &str,
        status: &str,
        end_sessions: bool,
    ) -> Result<(), StoreError> {
        let update = sql_for(&self.db, "UPDATE accounts SET status = $1 WHERE name = $2");
        let end = sql_for(&self.db, "DELETE FROM sessions WHERE account = $1");
        on_db!(&self.db, pool => {
            let mut tx = pool.begin().await?;
            sqlx::query(&update).bind(status).bind(name).execute(&mut *tx).await?;
            if end_sessions {
                sqlx::query(&end).bind(name).execute(&mut *tx).await?;
            }
            tx.commit().await?;
        });
        Ok(())
    }

    /// A new password hash for an account; every session but `keep` ends, in one transaction.
    pub async fn set_password(
        &self,
        name: &str,
        password_hash: &str,
        keep: &str,
    ) -> Result<(), StoreError> {
        let update = sql_for(
            &self.db,
            "UPDATE accounts SET password_hash = $1 WHERE name = $2",
        );
        let end = sql_for(
            &self.db,
            "DELETE FROM sessions WHERE account = $1 AND digest <> $2",
        );
        on_db!(&self.db, pool => {
            let mut tx = pool.begin().await?;
            sqlx::query(&update).bind(password_hash).bind(name).execute(&mut *tx).await?;
            sqlx::query(&end).bind(name).bind(keep).execute(&mut *tx).await?;
            tx.commit().await?;
        });
        Ok(())
    }

    /// Stores a session (the digest of its token).
    pub async fn add_session(
        &self,
        digest: &str,
        account: &str,
        created_ms: u64,
    ) -> Result<(), StoreError> {
        let sql = sql_for(
            &self.db,
            "INSERT INTO sessions (digest, account, created_ms) VALUES ($1, $2, $3)",
        );
        on_db!(&self.db, pool => {
            sqlx::query(&sql)
                .bind(digest)
                .bind(account)
                .bind(created_ms as i64)
                .execute(pool)
                .await?;
        });
        Ok(())
    }

    pub async fn remove_session(&self, digest: &str) -> Result<(), StoreError> {
        let sql = sql_for(&self.db, "DELETE FROM sessions WHERE digest = $1");
        on_db!(&self.db, pool => {
            sqlx::query(&sql).bind(digest).execute(pool).await?;
        });
        Ok(())
    }

    /// Stores a rated round: each player's score and rating after it, in one transaction.
    /// `false` (and nothing written) if the round was rated already.
    pub async fn save_rated_round(
        &self,
        match_id: &str,
        pool: &str,
        players: &[RatedPlayer],
        at_ms: u64,
    ) -> Result<bool, StoreError> {
        // The transaction's first statement writes: on SQLite a transaction that read first
        // could not take the write lock once the writer had committed meanwhile.
        let history = sql_for(
            &self.db,
            "INSERT INTO rating_history (match_id, account, pool, score, rating, deviation, at_ms) \
             VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (match_id, account) DO NOTHING",
        );
        let rating = sql_for(
            &self.db,
            "INSERT INTO ratings (account, pool, rating, deviation, volatility, rounds) \
             VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (account, pool) DO UPDATE SET \
             rating = excluded.rating, deviation = excluded.deviation, \
             volatility = excluded.volatility, rounds = excluded.rounds",
        );
        Ok(on_db!(&self.db, pool_ => {
            let mut tx = pool_.begin().await?;
            let mut fresh = true;
            for p in players {
                let written = sqlx::query(&history)
                    .bind(match_id)
                    .bind(&p.account)
                    .bind(pool)
                    .bind(p.score)
                    .bind(p.after.rating)
                    .bind(p.after.deviation)
                    .bind(at_ms as i64)
                    .execute(&mut *tx)
                    .await?
                    .rows_affected();
                if written == 0 {
                    // Rated already: dropping the transaction takes back what it wrote.
                    fresh = false;
                    break;
                }
                sqlx::query(&rating)
                    .bind(&p.account)
                    .bind(pool)
                    .bind(p.after.rating)
                    .bind(p.after.deviation)
                    .bind(p.after.volatility)
                    .bind(i64::from(p.after.rounds))
                    .execute(&mut *tx)
                    .await?;
            }
            if fresh {
                tx.commit().await?;
            }
            fresh
        }))
    }

    /// Stores one chat message (`account`: the account that wrote it, if any); it shares the
    /// next group commit with the rooms' events.
    pub async fn add_chat(
        &self,
        line: &hakem_protocol::ChatLine,
        account: Option<&str>,
    ) -> Result<(), StoreError> {
        self.write(Write::Chat {
            line: line.clone(),
            account: account.map(str::to_string),
        })
        .await
    }

    /// A match's chat: settings, and per channel its last `limit` messages and how many it
    /// has.
    pub async fn chat(&self, match_id: &str, limit: u32) -> Result<StoredChat, StoreError> {
        use hakem_protocol::ChatChannel;
        let settings_sql = sql_for(
            &self.db,
            "SELECT enabled, mutes FROM chat_settings WHERE match_id = $1",
        );
        let lines_sql = sql_for(
            &self.db,
            "SELECT n, author, role, text, at_ms FROM chat_messages \
             WHERE match_id = $1 AND channel = $2 ORDER BY n DESC LIMIT $3",
        );
        let settings = on_db!(&self.db, pool => {
            match sqlx::query(&settings_sql)
                .bind(match_id)
                .fetch_optional(pool)
                .await?
            {
                Some(row) => Some((row.try_get::<i64, _>(0)? != 0, row.try_get::<String, _>(1)?)),
                None => None,
            }
        });
        let mut lines = Vec::new();
        let mut counts = Vec::new();
        for channel in [ChatChannel::Players, ChatChannel::Spectators] {
            // Newest first: the first row's number is how many the channel has.
            counts.push(0);
            on_db!(&self.db, pool => {
                let rows = sqlx::query(&lines_sql)
                    .bind(match_id)
                    .bind(channel.as_str())
                    .bind(i64::from(limit))
                    .fetch_all(pool)
                    .await?;
                if let Some(row) = rows.first() {
                    *counts.last_mut().expect("pushed") = ms(row.try_get(0)?);
                }
                for row in rows {
                    let role: String = row.try_get(2)?;
                    let Some(role) = hakem_protocol::ChatRole::parse(&role) else {
                        continue;
                    };
                    lines.push(hakem_protocol::ChatLine {
                        match_id: match_id.to_string(),
                        n: ms(row.try_get(0)?),
                        channel,
                        from: row.try_get(1)?,
                        role,
                        text: row.try_get(3)?,
                        at_ms: ms(row.try_get(4)?),
                    });
                }
            });
        }
        Ok(StoredChat {
            settings,
            lines,
            counts: PerChannel {
                players: counts[0],
                spectators: counts[1],
            },
        })
    }

    /// Records a match's chat settings: on or off, and the mutes (JSON).
    pub async fn save_chat_settings(
        &self,
        match_id: &str,
        enabled: bool,
        mutes: &str,
    ) -> Result<(), StoreError> {
        let sql = sql_for(
            &self.db,
            "INSERT INTO chat_settings (match_id, enabled, mutes) VALUES ($1, $2, $3) \
             ON CONFLICT (match_id) DO UPDATE SET enabled = excluded.enabled, mutes = excluded.mutes",
        );
        // Fenced as the room's events are: a node that lost the room changes nothing of it.
        let fence = self.fence_of(match_id)?;
        let stands = sql_for(&self.db, FENCE_STANDS);
        on_db!(&self.db, pool => {
            let mut tx = pool.begin().await?;
            check_fence(&mut tx, &stands, match_id, fence).await?;
            sqlx::query(&sql)
                .bind(match_id)
                .bind(i64::from(enabled))
                .bind(mutes)
                .execute(&mut *tx)
                .await?;
            tx.commit().await?;
        });
        Ok(())
    }

    /// The chat messages an account wrote, oldest first (at most `limit`, the newest).
    pub async fn chat_of_account(
        &self,
        account: &str,
        limit: u32,
    ) -> Result<Vec<AccountChatLine>, StoreError> {
        let sql = sql_for(
            &self.db,
            "SELECT match_id, channel, text, at_ms FROM chat_messages WHERE account = $1 \
             ORDER BY at_ms DESC, match_id DESC, n DESC LIMIT $2",
        );
        let mut out = on_db!(&self.db, pool => {
            let rows = sqlx::query(&sql)
                .bind(account)
                .bind(i64::from(limit))
                .fetch_all(pool)
                .await?;
            let mut out = Vec::with_capacity(rows.len());
            for row in rows {
                let channel: String = row.try_get(1)?;
                let Some(channel) = hakem_protocol::ChatChannel::parse(&channel) else {
                    continue;
                };
                out.push(AccountChatLine {
                    match_id: row.try_get(0)?,
                    channel,
                    text: row.try_get(2)?,
                    at_ms: ms(row.try_get(3)?),
                });
            }
            out
        });
        out.reverse();
        Ok(out)
    }

    /// Notes a rated match whose round rated nobody (nothing was played in it).
    pub async fn not_rated(&self, match_id: &str) -> Result<(), StoreError> {
        let sql = sql_for(
            &self.db,
            "INSERT INTO rounds_not_rated (match_id) VALUES ($1) ON CONFLICT (match_id) DO NOTHING",
        );
        on_db!(&self.db, pool => {
            sqlx::query(&sql).bind(match_id).execute(pool).await?;
        });
        Ok(())
    }

    /// Every rating as (account, pool, rating); with `account`, that account's only.
    pub async fn ratings(
        &self,
        account: Option<&str>,
    ) -> Result<Vec<(String, String, Rating)>, StoreError> {
        let filter = if account.is_some() {
            "WHERE account = $1"
        } else {
            ""
        };
        let sql = sql_for(
            &self.db,
            &format!(
                "SELECT account, pool, rating, deviation, volatility, rounds FROM ratings \
                 {filter} ORDER BY account, pool"
            ),
        );
        Ok(on_db!(&self.db, pool => {
            let mut query = sqlx::query(&sql);
            if let Some(account) = account {
                query = query.bind(account);
            }
            let rows = query.fetch_all(pool).await?;
            let mut out = Vec::with_capacity(rows.len());
            for row in rows {
                let rounds: i64 = row.try_get(5)?;
                out.push((row.try_get(0)?, row.try_get(1)?, Rating {
                    rating: row.try_get(2)?,
                    deviation: row.try_get(3)?,
                    volatility: row.try_get(4)?,
                    rounds: u32::try_from(rounds).unwrap_or(u32::MAX),
                }));
            }
            out
        }))
    }

    /// An account's rated rounds, the latest first, at most `limit`.
    pub async fn rating_history(
        &self,
        account: &str,
        limit: u32,
    ) -> Result<Vec<RatedRound>, StoreError> {
        let sql = sql_for(
            &self.db,
            "SELECT match_id, pool, score, rating, deviation, at_ms FROM rating_history \
             WHERE account = $1 ORDER BY at_ms DESC, match_id DESC LIMIT $2",
        );
        Ok(on_db!(&self.db, pool => {
            let rows = sqlx::query(&sql).bind(account).bind(i64::from(limit)).fetch_all(pool).await?;
            let mut out = Vec::with_capacity(rows.len());
            for row in rows {
                let at_ms: i64 = row.try_get(5)?;
                out.push(RatedRound {
                    match_id: row.try_get(0)?,
                    pool: row.try_get(1)?,
                    score: row.try_get(2)?,
                    rating: row.try_get(3)?,
                    deviation: row.try_get(4)?,
                    at_ms: at_ms.max(0) as u64,
                });
            }
            out
        }))
    }

    /// Finished matches whose spec says rated and that no rating row counts yet (the server
    /// stopped between a round's end and its rating), in the order they finished.
    pub async fn unrated_finished(&self) -> Result<Vec<String>, StoreError> {
        // The spec is JSON written by serde, where a rated match has `"rated":true`; the
        // caller checks the spec itself.
        let sql = "SELECT id FROM matches WHERE finished = 1 AND spec LIKE '%\"rated\":true%' \
                   AND id NOT IN (SELECT match_id FROM rating_history) \
                   AND id NOT IN (SELECT match_id FROM rounds_not_rated) ORDER BY finished_ms, id";
        Ok(on_db!(&self.db, pool => {
            let rows = sqlx::query(sql).fetch_all(pool).await?;
            let mut out = Vec::with_capacity(rows.len());
            for row in rows {
                out.push(row.try_get(0)?);
            }
            out
        }))
    }

    /// Notes the accounts seated in a match (once; again is harmless).
    pub async fn index_match(
        &self,
        match_id: &str,
        accounts: &PerSeat<Option<String>>,
        created_ms: u64,
    ) -> Result<(), StoreError> {
        let sql = sql_for(
            &self.db,
            "INSERT INTO match_players (account, match_id, seat, created_ms) \
             VALUES ($1, $2, $3, $4) ON CONFLICT (account, match_id) DO NOTHING",
        );
        for seat in Seat::BOTH {
            let Some(account) = accounts.get(seat) else {
                continue;
            };
            on_db!(&self.db, pool => {
                sqlx::query(&sql)
                    .bind(account)
                    .bind(match_id)
                    .bind(seat.as_str())
                    .bind(created_ms as i64)
                    .execute(pool)
                    .await?;
            });
        }
        Ok(())
    }

    /// The matches created since the last one noted in `match_players` (all of them the first
    /// time), as (id, created_ms, spec): those whose accounts a crash left unnoted.
    pub async fn matches_to_index(&self) -> Result<Vec<(String, u64, String)>, StoreError> {
        let sql = "SELECT id, created_ms, spec FROM matches WHERE created_ms >= \
                   (SELECT COALESCE(MAX(created_ms), 0) FROM match_players) ORDER BY created_ms";
        Ok(on_db!(&self.db, pool => {
            let rows = sqlx::query(sql).fetch_all(pool).await?;
            let mut out = Vec::with_capacity(rows.len());
            for row in rows {
                let created_ms: i64 = row.try_get(1)?;
                out.push((row.try_get(0)?, created_ms.max(0) as u64, row.try_get(2)?));
            }
            out
        }))
    }

    /// An account's matches, newest first, strictly before `before` (created_ms, id), at most
    /// `limit`: (id, created_ms, the finished match's summary).
    pub async fn matches_of(
        &self,
        account: &str,
        before: Option<(u64, String)>,
        limit: u32,
    ) -> Result<Vec<(String, u64, Option<String>)>, StoreError> {
        let (ms, id) = before.unwrap_or((u64::MAX, String::new()));
        let sql = sql_for(
            &self.db,
            "SELECT p.match_id, p.created_ms, m.summary FROM match_players p \
             JOIN matches m ON m.id = p.match_id WHERE p.account = $1 \
             AND (p.created_ms < $2 OR (p.created_ms = $2 AND p.match_id < $3)) \
             ORDER BY p.created_ms DESC, p.match_id DESC LIMIT $4",
        );
        let ms = i64::try_from(ms).unwrap_or(i64::MAX);
        // With no cursor, `$2` is past every time and `$3` is never compared.
        Ok(on_db!(&self.db, pool => {
            let rows = sqlx::query(&sql)
                .bind(account)
                .bind(ms)
                .bind(&id)
                .bind(i64::from(limit))
                .fetch_all(pool)
                .await?;
            let mut out = Vec::with_capacity(rows.len());
            for row in rows {
                let created_ms: i64 = row.try_get(1)?;
                out.push((row.try_get(0)?, created_ms.max(0) as u64, row.try_get(2)?));
            }
            out
        }))
    }

    /// Every session as (digest, account).
    pub async fn sessions(&self) -> Result<Vec<(String, String)>, StoreError> {
        let sql = "SELECT digest, account FROM sessions ORDER BY created_ms";
        Ok(on_db!(&self.db, pool => {
            let rows = sqlx::query(sql).fetch_all(pool).await?;
            let mut out = Vec::with_capacity(rows.len());
            for row in rows {
                out.push((row.try_get(0)?, row.try_get(1)?));
            }
            out
        }))
    }

    /// Appends a tournament's changes, numbered from `first_seq`, and with `snapshot` rewrites
    /// its state (creating its row the first time), in one transaction; on a cluster's node,
    /// only while it holds the tournaments' lease (see [`TournamentsFence`]).
    pub async fn save_tournament_changes(
        &self,
        id: &str,
        created_ms: u64,
        first_seq: u64,
        changes: &[String],
        snapshot: Option<&str>,
    ) -> Result<(), StoreError> {
        let insert = sql_for(
            &self.db,
            "INSERT INTO tournament_changes (tournament, seq, change) VALUES ($1, $2, $3)",
        );
        let upsert = sql_for(
            &self.db,
            "INSERT INTO tournaments (id, created_ms, state) VALUES ($1, $2, $3) \
             ON CONFLICT (id) DO UPDATE SET state = excluded.state",
        );
        let fence = self.fence_of(crate::cluster::TOURNAMENTS_KEY)?;
        let stands = sql_for(&self.db, FENCE_STANDS);
        on_db!(&self.db, pool => {
            let mut tx = pool.begin().await?;
            check_fence(&mut tx, &stands, crate::cluster::TOURNAMENTS_KEY, fence).await?;
            for (i, change) in changes.iter().enumerate() {
                sqlx::query(&insert)
                    .bind(id)
                    .bind(i64::try_from(first_seq + i as u64).unwrap_or(i64::MAX))
                    .bind(change)
                    .execute(&mut *tx)
                    .await?;
            }
            if let Some(state) = snapshot {
                sqlx::query(&upsert)
                    .bind(id)
                    .bind(created_ms as i64)
                    .bind(state)
                    .execute(&mut *tx)
                    .await?;
            }
            tx.commit().await?;
        });
        Ok(())
    }

    /// A tournament's changes after number `after`, in order.
    pub async fn tournament_changes(
        &self,
        id: &str,
        after: u64,
    ) -> Result<Vec<String>, StoreError> {
        let sql = sql_for(
            &self.db,
            "SELECT change FROM tournament_changes WHERE tournament = $1 AND seq > $2 ORDER BY seq",
        );
        Ok(on_db!(&self.db, pool => {
            let rows = sqlx::query(&sql)
                .bind(id)
                .bind(i64::try_from(after).unwrap_or(i64::MAX))
                .fetch_all(pool)
                .await?;
            let mut out = Vec::with_capacity(rows.len());
            for row in rows {
                out.push(row.try_get(0)?);
            }
            out
        }))
    }

    /// Every tournament's state, oldest first.
    pub async fn tournaments(&self) -> Result<Vec<(String, String)>, StoreError> {
        let sql = sql_for(
            &self.db,
            "SELECT id, state FROM tournaments ORDER BY created_ms, id",
        );
        Ok(on_db!(&self.db, pool => {
            let rows = sqlx::query(&sql).fetch_all(pool).await?;
            let mut out = Vec::with_capacity(rows.len());
            for row in rows {
                out.push((row.try_get(0)?, row.try_get(1)?));
            }
            out
        }))
    }

    pub async fn setting(&self, key: &str) -> Result<Option<String>, StoreError> {
        read_setting(&self.db, key).await
    }

    /// Stores `value` under `key` unless the key is already set; returns the value in force.
    pub async fn setting_or_insert(&self, key: &str, value: &str) -> Result<String, StoreError> {
        let sql = sql_for(
            &self.db,
            "INSERT INTO settings (key, value) VALUES ($1, $2) ON CONFLICT (key) DO NOTHING",
        );
        on_db!(&self.db, pool => {
            sqlx::query(&sql).bind(key).bind(value).execute(pool).await?;
        });
        Ok(self
            .setting(key)
            .await?
            .unwrap_or_else(|| value.to_string()))
    }
}

async fn migrate(db: &Db) -> Result<(), StoreError> {
    migrate_to(db, i64::MAX).await
}

/// [`migrate`], up to schema version `last` (tests build a database of an older schema).
async fn migrate_to(db: &Db, last: i64) -> Result<(), StoreError> {
    // Nodes of a cluster starting together migrate one at a time (a lock for the length of
    // each transaction; SQLite's writer lock does the same for a file).
    const LOCK: &str = "SELECT pg_advisory_xact_lock(720311)";
    on_db!(db, pool => {
        let mut tx = pool.begin().await?;
        if matches!(db, Db::Postgres(_)) {
            sqlx::raw_sql(LOCK).execute(&mut *tx).await?;
        }
        sqlx::raw_sql("CREATE TABLE IF NOT EXISTS hakem_migrations (version BIGINT PRIMARY KEY)")
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
    });
    for (version, sql) in MIGRATIONS.iter().filter(|(version, _)| *version <= last) {
        let check = sql_for(
            db,
            "SELECT COUNT(*) FROM hakem_migrations WHERE version = $1",
        );
        let record = sql_for(db, "INSERT INTO hakem_migrations (version) VALUES ($1)");
        on_db!(db, pool => {
            let mut tx = pool.begin().await?;
            if matches!(db, Db::Postgres(_)) {
                sqlx::raw_sql(LOCK).execute(&mut *tx).await?;
            }
            let applied: i64 = sqlx::query(&check)
                .bind(version)
                .fetch_one(&mut *tx)
                .await?
                .try_get(0)?;
            if applied == 0 {
                let sql = match db {
                    Db::Postgres(_) => POSTGRES_MIGRATIONS
                        .iter()
                        .find(|(v, _)| v == version)
                        .map_or(*sql, |(_, text)| *text),
                    Db::Sqlite(_) => *sql,
                };
                sqlx::raw_sql(sql).execute(&mut *tx).await?;
                sqlx::query(&record).bind(version).execute(&mut *tx).await?;
                tx.commit().await?;
                tracing::info!(version, "database schema migrated");
            }
        });
    }
    Ok(())
}

/// The writer's own connection: its statements stay prepared on it.
enum Writer {
    Sqlite(Box<SqliteWriter>),
    /// The pool the writer takes its connection from, and keeps it out of.
    Postgres(PgPool, Option<PgConnection>, Arc<OnceLock<Fences>>),
}

/// Why a batch was not committed.
enum CommitError {
    /// These matches belong to another node now (see [`Fences`]); nothing was written.
    Fenced(HashSet<String>),
    /// The writer has no connection and could not open one; nothing was written.
    Unconnected(String),
    Failed(String),
}

/// The match a write is about.
fn match_of(write: &Write) -> &str {
    match write {
        Write::Create { id, .. } => id,
        Write::Append { match_id, .. } => match_id,
        Write::Chat { line, .. } => &line.match_id,
    }
}

/// Copying SQLite's WAL back into the database without holding up commits for the bulk of it:
/// after [`CHECKPOINT_ROWS`] rows, a connection of its own copies what the WAL holds while the
/// writer goes on committing (and once more what was added meanwhile); then the writer, at a
/// moment when no write is waiting, copies the few frames still left on its own connection,
/// after every [`COPIES_PER_RESTART`]th bulk copy. That copy reaches the end of the WAL, so the
/// next commit starts the WAL from its beginning again and the WAL stays bounded. (A copy
/// beside a writer that never stops never reaches the end.)
#[derive(Default)]
struct Checkpoint {
    rows_since: usize,
    stage: CopyStage,
    /// Bulk copies over since the writer last copied what was left itself.
    copies: usize,
    /// Set by the bulk copy when it is over.
    done: std::sync::Arc<std::sync::atomic::AtomicBool>,
}

/// Where the copy of the WAL stands.
#[derive(Default, Clone, Copy, PartialEq, Debug)]
enum CopyStage {
    /// No copy under way: the next bulk copy starts after [`CHECKPOINT_ROWS`] rows.
    #[default]
    Waiting,
    /// A bulk copy runs beside the writer.
    Bulk,
    /// The writer copies what the bulk copy left, at its next moment with no write waiting.
    Last,
}

impl Checkpoint {
    /// The bulk copy is over: after every [`COPIES_PER_RESTART`]th the writer copies what is
    /// left itself; otherwise the next bulk copy may start.
    fn copy_finished(&mut self) {
        self.copies = (self.copies + 1) % COPIES_PER_RESTART;
        self.stage = if self.copies == 0 {
            CopyStage::Last
        } else {
            CopyStage::Waiting
        };
    }
}

/// The most a copied-back WAL file keeps (`journal_size_limit`): more than it grows between
/// two starts from its beginning, so that the file is reused rather than cut and regrown.
const WAL_LIMIT_BYTES: u64 = 256 << 20;

/// Rows between two bulk copies. A commit writes whole pages to the WAL (a few for one
/// event), so this many rows make some 10-30 MiB of WAL; the fewer, the shorter the writer's
/// own final copy. Fewer rows, or more, were no better (docs/performance.md).
const CHECKPOINT_ROWS: usize = 4_000;

/// Bulk copies between two of the writer's own final copies. Each final copy holds up every
/// commit that arrives meanwhile (6-9 ms on average at 5,000 moves a second); between them the
/// bulk copies go on, so each final copy has as little to copy as if it came after every bulk
/// copy. The WAL file grows larger between two starts: 95-156 MiB at 2,000-5,000 moves a
/// second (docs/performance.md).
const COPIES_PER_RESTART: usize = 4;

/// The rows of a batch, gathered per table.
#[derive(Default)]
struct Rows<'a> {
    matches: Vec<(&'a str, i64, &'a str)>,
    events: Vec<(&'a str, i64, i64, &'a str)>,
    finished: Vec<(&'a str, i64, &'a str)>,
    chat: Vec<ChatRow<'a>>,
}

/// A chat message as a row of `chat_messages`.
struct ChatRow<'a> {
    match_id: &'a str,
    channel: &'a str,
    n: i64,
    author: &'a str,
    role: &'a str,
    account: Option<&'a str>,
    text: &'a str,
    at_ms: i64,
}

impl<'a> Rows<'a> {
    fn of(writes: impl Iterator<Item = &'a Write>) -> Rows<'a> {
        let mut rows = Rows::default();
        for write in writes {
            match write {
                Write::Create {
                    id,
                    created_ms,
                    spec,
                } => rows.matches.push((id, count(*created_ms as usize), spec)),
                Write::Append {
                    match_id,
                    events,
                    finished,
                } => {
                    for e in events {
                        rows.events.push((
                            match_id,
                            i64::try_from(e.seq).unwrap_or(i64::MAX),
                            i64::try_from(e.at_ms).unwrap_or(i64::MAX),
                            &e.frame,
                        ));
                    }
                    if let Some(finish) = finished {
                        rows.finished.push((
                            match_id,
                            i64::try_from(finish.at_ms).unwrap_or(i64::MAX),
                            &finish.summary,
                        ));
                    }
                }
                Write::Chat { line, account } => rows.chat.push(ChatRow {
                    match_id: &line.match_id,
                    channel: line.channel.as_str(),
                    n: i64::try_from(line.n).unwrap_or(i64::MAX),
                    author: &line.from,
                    role: line.role.as_str(),
                    account: account.as_deref(),
                    text: &line.text,
                    at_ms: i64::try_from(line.at_ms).unwrap_or(i64::MAX),
                }),
            }
        }
        rows
    }
}

/// Rows per SQLite statement: a batch's rows go in statements of this many, the last one
/// padded with NULL rows that are skipped, so that each table has one statement, prepared once
/// whatever the batch's size.
const SQLITE_ROWS: usize = 8;

/// `(?, ?, ...), ...`: the rows of a statement.
fn sqlite_rows(columns: usize) -> String {
    let row = format!("({})", vec!["?"; columns].join(","));
    vec![row; SQLITE_ROWS].join(",")
}

/// The texts of the SQLite writer's statements, one per table, each of [`SQLITE_ROWS`] rows;
/// padding rows are all NULL and skipped. Each event's match is looked up as it is inserted:
/// one that does not exist gives NULL, which `match_id` refuses, and the batch fails (the same
/// on PostgreSQL).
struct SqliteTexts {
    matches: String,
    events: String,
    copy_recent: String,
    finished: String,
    chat: String,
}

impl SqliteTexts {
    fn new() -> SqliteTexts {
        SqliteTexts {
            matches: format!(
                "INSERT INTO matches (id, created_ms, spec, finished) SELECT * FROM (VALUES {}) \
                 WHERE column1 IS NOT NULL",
                sqlite_rows(4)
            ),
            events: format!(
                "INSERT INTO events_recent (match_id, seq, at_ms, frame) \
                 SELECT (SELECT m.id FROM matches m WHERE m.id = column1), column2, column3, \
                 column4 FROM (VALUES {}) WHERE column1 IS NOT NULL",
                sqlite_rows(4)
            ),
            copy_recent: format!(
                "INSERT OR IGNORE INTO events (match_id, seq, at_ms, frame) \
                 SELECT * FROM (VALUES {}) WHERE column1 IS NOT NULL",
                sqlite_rows(4)
            ),
            finished: format!(
                "UPDATE matches SET finished = 1, finished_ms = v.column2, summary = v.column3 \
                 FROM (VALUES {}) AS v WHERE matches.id = v.column1",
                sqlite_rows(3)
            ),
            chat: format!(
                "INSERT INTO chat_messages (match_id, channel, n, author, role, account, text, \
                 at_ms) SELECT * FROM (VALUES {}) WHERE column1 IS NOT NULL",
                sqlite_rows(8)
            ),
        }
    }
}

/// Runs `sql`, a statement of [`SQLITE_ROWS`] rows of `N` values, over `rows`: as many times
/// as they fill it, the last time padded with NULL rows.
fn run_padded<const N: usize>(
    tx: &rusqlite::Transaction<'_>,
    sql: &str,
    rows: &[[&dyn rusqlite::ToSql; N]],
) -> rusqlite::Result<()> {
    if rows.is_empty() {
        return Ok(());
    }
    let mut statement = tx.prepare_cached(sql)?;
    for chunk in rows.chunks(SQLITE_ROWS) {
        for i in 0..SQLITE_ROWS {
            for column in 0..N {
                let index = i * N + column + 1;
                match chunk.get(i) {
                    Some(row) => statement.raw_bind_parameter(index, row[column])?,
                    None => statement.raw_bind_parameter(index, rusqlite::types::Null)?,
                }
            }
        }
        statement.raw_execute()?;
    }
    Ok(())
}

/// Commits `rows` in one transaction: each table's rows through its one statement.
fn commit_sqlite(
    conn: &mut rusqlite::Connection,
    texts: &SqliteTexts,
    rows: &Rows<'_>,
) -> rusqlite::Result<()> {
    use rusqlite::ToSql;
    let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
    let matches: Vec<[&dyn ToSql; 4]> = rows
        .matches
        .iter()
        .map(|(id, created_ms, spec)| -> [&dyn ToSql; 4] { [id, created_ms, spec, &0i64] })
        .collect();
    run_padded(&tx, &texts.matches, &matches)?;
    let events: Vec<[&dyn ToSql; 4]> = rows
        .events
        .iter()
        .map(|(id, seq, at_ms, frame)| -> [&dyn ToSql; 4] { [id, seq, at_ms, frame] })
        .collect();
    run_padded(&tx, &texts.events, &events)?;
    let finished: Vec<[&dyn ToSql; 3]> = rows
        .finished
        .iter()
        .map(|(id, at_ms, summary)| -> [&dyn ToSql; 3] { [id, at_ms, summary] })
        .collect();
    run_padded(&tx, &texts.finished, &finished)?;
    let chat: Vec<[&dyn ToSql; 8]> = rows
        .chat
        .iter()
        .map(|row| -> [&dyn ToSql; 8] {
            [
                &row.match_id,
                &row.channel,
                &row.n,
                &row.author,
                &row.role,
                &row.account,
                &row.text,
                &row.at_ms,
            ]
        })
        .collect();
    run_padded(&tx, &texts.chat, &chat)?;
    // Dropped without this, the transaction is rolled back: a failed batch leaves nothing.
    tx.commit()
}

/// The file a `sqlite:` URL names, which the writer opens on a connection of its own, outside
/// the pool (see [`SqliteWriter`]): it must be a file on disk, opened for writing with SQLite's
/// own locking, as the pool's connections open it. An in-memory or temporary database, a
/// read-only or immutable one, or another VFS would be another database for the writer, or
/// the same one without a common lock.
fn sqlite_file_of(
    url: &str,
    options: &SqliteConnectOptions,
) -> Result<std::path::PathBuf, StoreError> {
    let params = url.split_once('?').map_or("", |(_, params)| params);
    if let Some(param) = params
        .split('&')
        .find(|p| !p.is_empty() && !matches!(*p, "mode=rw" | "mode=rwc"))
    {
        return Err(StoreError(format!(
            "{url:?}: {param:?} is not supported: the server writes to a file (sqlite://FILE)"
        )));
    }
    let file = options.get_filename();
    if file.as_os_str().is_empty() || url.contains(":memory:") {
        return Err(StoreError(format!(
            "{url:?} is not a file: an in-memory or temporary database keeps nothing \
             (sqlite://FILE)"
        )));
    }
    Ok(file.to_path_buf())
}

/// How long a server waits for the SQLite file of a server that is stopping.
const ONE_SERVER_PATIENCE: Duration = Duration::from_secs(5);

/// One server per SQLite file: its writer keeps in memory the last event it stored of each
/// match whose events are not yet in the events' key (see [`Recent`]), and a second server on
/// the same file, not seeing the first's, could store an event twice. So the store and its
/// writer hold a lock on `FILE.hakem-lock` while either runs, and a second server is refused,
/// naming the first's process. A crashed server's lock goes with its process.
async fn one_server(
    url: &str,
    file: &std::path::Path,
) -> Result<Arc<crate::file_lock::FileLock>, StoreError> {
    // The file itself, whatever link or relative path named it (it exists: the pool opened it).
    let file = file
        .canonicalize()
        .map_err(|e| StoreError(format!("cannot find {}: {e}", file.display())))?;
    let mut name = file.into_os_string();
    name.push(".hakem-lock");
    let lock_file = std::path::PathBuf::from(name);
    crate::file_lock::lock(&lock_file, ONE_SERVER_PATIENCE)
        .await
        .map_err(|refused| match refused {
            crate::file_lock::Refused::Held(holder) => StoreError(format!(
                "{url:?} is in use by another server{} (it holds {}): one server per SQLite \
                 file; stop that one first (a cluster's nodes share PostgreSQL)",
                holder.map_or(String::new(), |pid| format!(", process {pid}")),
                lock_file.display()
            )),
            crate::file_lock::Refused::Io(e) => {
                StoreError(format!("cannot lock {}: {e}", lock_file.display()))
            }
        })
}

/// A connection to the SQLite file with the settings of every connection of the server's (see
/// [`Store::open_node`]).
fn sqlite_connection(path: &std::path::Path) -> rusqlite::Result<rusqlite::Connection> {
    use rusqlite::OpenFlags;
    let conn = rusqlite::Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )?;
    conn.busy_timeout(Duration::from_secs(10))?;
    conn.execute_batch(&format!(
        "PRAGMA synchronous = FULL; PRAGMA foreign_keys = ON; PRAGMA wal_autocheckpoint = 0; \
         PRAGMA journal_size_limit = {WAL_LIMIT_BYTES}; PRAGMA cache_size = -1024;"
    ))?;
    Ok(conn)
}

/// Whether a connection that failed with `e` is better opened again (the file or the disk
/// failed it), rather than kept (a constraint refused a write).
fn sqlite_broken(e: &rusqlite::Error) -> bool {
    use rusqlite::ErrorCode;
    matches!(
        e.sqlite_error_code(),
        Some(ErrorCode::SystemIoFailure | ErrorCode::CannotOpen | ErrorCode::NotADatabase)
    )
}

/// Runs a step of a move without a flush of its own (`synchronous = NORMAL`): the next batch's
/// commit flushes the WAL with it, and a step lost in a crash is taken again at the next start.
/// Not `OFF`: a step that starts the WAL afresh must still flush the WAL's new header first, or
/// a power failure could replay the old WAL over the database. Should the setting not come
/// back, the connection fails the step, and is opened again (with it) before the next batch.
fn unsynced<T>(
    conn: &mut rusqlite::Connection,
    step: impl FnOnce(&mut rusqlite::Connection) -> rusqlite::Result<T>,
) -> rusqlite::Result<T> {
    conn.execute_batch("PRAGMA synchronous = NORMAL")?;
    let outcome = step(conn);
    match conn.execute_batch("PRAGMA synchronous = FULL") {
        Ok(()) => outcome,
        Err(_) => Err(writer_error(
            rusqlite::ffi::SQLITE_IOERR,
            "the connection's flush setting could not be restored".into(),
        )),
    }
}

/// Copies `rows` into `events` in one transaction; those there already are left.
fn copy_step(
    conn: &mut rusqlite::Connection,
    sql: &str,
    rows: &[RecentRow],
) -> rusqlite::Result<()> {
    use rusqlite::ToSql;
    let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
    let rows: Vec<[&dyn ToSql; 4]> = rows
        .iter()
        .rev()
        .map(|(id, seq, at_ms, frame)| -> [&dyn ToSql; 4] { [id, seq, at_ms, frame] })
        .collect();
    run_padded(&tx, sql, &rows)?;
    tx.commit()
}

/// The last number of each match `rows` append to, checking that each event follows those
/// stored: an event numbered again is refused.
fn numbered<'a>(
    conn: &rusqlite::Connection,
    recent: &Recent,
    rows: &Rows<'a>,
) -> rusqlite::Result<std::collections::HashMap<&'a str, i64>> {
    let mut last: std::collections::HashMap<&'a str, i64> = Default::default();
    {
        // Readers wait on this lock: the database is asked with it let go.
        let stored = recent.last_seq.lock().expect("recent");
        for &(id, ..) in &rows.events {
            if let Some((n, _)) = stored.get(id) {
                last.insert(id, *n);
            }
        }
    }
    for &(id, seq, _, _) in &rows.events {
        let before = match last.get(id) {
            Some(n) => *n,
            None => conn
                .prepare_cached("SELECT COALESCE(MAX(seq), 0) FROM events WHERE match_id = ?1")?
                .query_row([id], |row| row.get(0))?,
        };
        if seq <= before {
            return Err(numbered_again(id, seq));
        }
        last.insert(id, seq);
    }
    Ok(last)
}

/// SQLite's writer: a connection of its own to the database file, used only on the writer's
/// own thread (see [`spawn_sqlite_writer`]), its statements, and the copy of its WAL.
struct SqliteWriter {
    path: std::path::PathBuf,
    conn: Option<rusqlite::Connection>,
    texts: SqliteTexts,
    checkpoint: Checkpoint,
    /// See [`StoreSettings::commit_wait`].
    commit_wait: Duration,
    recent: Recent,
    /// The file's lock (see [`one_server`]), held until the writer ends.
    lock: Option<Arc<crate::file_lock::FileLock>>,
}

/// The events in `events_recent`, not yet moved into `events`.
#[derive(Default)]
struct Recent {
    /// Rows appended since the last move began, and when the first of them was.
    rows: usize,
    since: Option<Instant>,
    /// See [`StoreSettings::move_after`].
    move_after: usize,
    /// The last number stored of each match with events in `events_recent`, and the move it
    /// was appended after (see [`Moving::generation`]): the table has no key, so the writer
    /// refuses an event numbered again itself. Readers look here whether a match has any.
    last_seq: RecentMatches,
    /// Moves begun.
    generation: u64,
    moving: Option<Moving>,
}

/// See [`Recent::last_seq`]: entered once a match's events are committed, before anyone is
/// told of them, and left once they are moved.
type RecentMatches = Arc<std::sync::Mutex<std::collections::HashMap<String, (i64, u64)>>>;

/// A move of `events_recent` into `events` under way: the rows up to `last` (a rowid), read
/// in the key's order beside the writer, go over a step at a time between the writer's
/// batches, and are then deleted a step at a time. Until they are deleted a row is in both
/// tables; reads take it once, and a move cut short by a crash is finished at the next start.
struct Moving {
    last: i64,
    generation: u64,
    stage: MoveStage,
}

enum MoveStage {
    /// The rows, read on a thread and a connection of their own.
    Reading(std::sync::mpsc::Receiver<rusqlite::Result<Vec<RecentRow>>>),
    /// Copying into `events`, from the end of the list backwards.
    Copying(Vec<RecentRow>),
    /// Deleting from `events_recent`, in the order they were appended.
    Deleting,
}

type RecentRow = (String, i64, i64, String);

/// However few events were appended, a move is due this long after the first of them: a
/// quiet server's reads of recent matches need not look through `events_recent` for long.
const MOVE_EVERY: Duration = Duration::from_secs(60);

/// Rows copied, or deleted, in one step of a move: a step holds up the writer's next batch.
const MOVE_STEP: usize = 512;

/// Moves every row of `events_recent` into `events`, in the key's order, in one transaction
/// (at the start, before any room writes).
fn move_all_recent(conn: &mut rusqlite::Connection) -> rusqlite::Result<usize> {
    let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
    let moved = tx.execute(
        "INSERT OR IGNORE INTO events (match_id, seq, at_ms, frame) \
         SELECT match_id, seq, at_ms, frame FROM events_recent ORDER BY match_id, seq",
        [],
    )?;
    tx.execute("DELETE FROM events_recent", [])?;
    tx.commit()?;
    Ok(moved)
}

/// The rows of `events_recent` up to `last`, in the key's order.
fn read_recent(path: &std::path::Path, last: i64) -> rusqlite::Result<Vec<RecentRow>> {
    let conn = sqlite_connection(path)?;
    let mut statement = conn.prepare(
        "SELECT match_id, seq, at_ms, frame FROM events_recent WHERE rowid <= ?1 \
         ORDER BY match_id DESC, seq DESC",
    )?;
    let rows = statement.query_map([last], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))?;
    rows.collect()
}

/// An event numbered again: refused as the events' key would.
fn numbered_again(match_id: &str, seq: i64) -> rusqlite::Error {
    writer_error(
        rusqlite::ffi::SQLITE_CONSTRAINT_PRIMARYKEY,
        format!("event {seq} of match {match_id} is stored already"),
    )
}

/// A failure the writer finds itself, as SQLite's own of that `code`.
fn writer_error(code: i32, message: String) -> rusqlite::Error {
    rusqlite::Error::SqliteFailure(rusqlite::ffi::Error::new(code), Some(message))
}

impl SqliteWriter {
    fn open(
        path: std::path::PathBuf,
        commit_wait: Duration,
        move_after: usize,
    ) -> rusqlite::Result<SqliteWriter> {
        let mut conn = sqlite_connection(&path)?;
        // What the last run left in `events_recent` goes into `events` before anything new.
        move_all_recent(&mut conn)?;
        Ok(SqliteWriter {
            path,
            conn: Some(conn),
            texts: SqliteTexts::new(),
            checkpoint: Checkpoint::default(),
            commit_wait,
            recent: Recent {
                move_after,
                ..Recent::default()
            },
            lock: None,
        })
    }

    /// The connection, opened again if the last one broke.
    fn connection(&mut self) -> rusqlite::Result<&mut rusqlite::Connection> {
        if self.conn.is_none() {
            self.conn = Some(sqlite_connection(&self.path)?);
        }
        Ok(self.conn.as_mut().expect("connection just opened"))
    }

    fn commit(&mut self, rows: &Rows<'_>) -> rusqlite::Result<()> {
        self.checkpoint.rows_since += rows.matches.len() + rows.events.len() + rows.chat.len();
        let texts = &self.texts;
        let conn = match self.conn.as_mut() {
            Some(conn) => conn,
            None => self.conn.insert(sqlite_connection(&self.path)?),
        };
        let outcome = numbered(conn, &self.recent, rows)
            .and_then(|last| commit_sqlite(conn, texts, rows).map(|()| last));
        self.forget_if_broken(&outcome);
        let last = outcome?;
        if !rows.events.is_empty() {
            self.recent.rows += rows.events.len();
            self.recent.since.get_or_insert_with(Instant::now);
        }
        let generation = self.recent.generation;
        let mut stored = self.recent.last_seq.lock().expect("recent");
        for (id, seq) in last {
            stored.insert(id.to_string(), (seq, generation));
        }
        Ok(())
    }

    /// Begins a move of `events_recent` into `events` when it is due (see
    /// [`StoreSettings::move_after`], [`MOVE_EVERY`]), or takes the next step of the move
    /// under way.
    fn move_recent(&mut self) {
        let Some(conn) = self.conn.as_mut() else {
            return;
        };
        let recent = &mut self.recent;
        let Some(moving) = recent.moving.as_mut() else {
            let due = recent.rows >= recent.move_after
                || recent.since.is_some_and(|t| t.elapsed() >= MOVE_EVERY);
            if !due {
                return;
            }
            let last: rusqlite::Result<Option<i64>> =
                conn.query_row("SELECT MAX(rowid) FROM events_recent", [], |r| r.get(0));
            let last = match last {
                Ok(Some(last)) => last,
                Ok(None) => {
                    recent.rows = 0;
                    recent.since = None;
                    return;
                }
                Err(e) => return tracing::warn!(error = %e, "recent events not moved"),
            };
            let (send, receive) = std::sync::mpsc::sync_channel(1);
            let path = self.path.clone();
            // Read beside the writer: a reader does not hold up commits.
            let read = move || {
                let _ = send.send(read_recent(&path, last));
            };
            if let Err(e) = std::thread::Builder::new()
                .name("hakem-recent".into())
                .spawn(read)
            {
                return tracing::warn!(error = %e, "recent events not moved");
            }
            recent.rows = 0;
            recent.since = None;
            recent.moving = Some(Moving {
                last,
                generation: recent.generation,
                stage: MoveStage::Reading(receive),
            });
            recent.generation += 1;
            return;
        };
        let started = Instant::now();
        let mut deleted_all = false;
        let outcome = match &mut moving.stage {
            MoveStage::Reading(receive) => match receive.try_recv() {
                Ok(Ok(rows)) => {
                    moving.stage = MoveStage::Copying(rows);
                    Ok(())
                }
                Ok(Err(e)) => Err(e),
                Err(std::sync::mpsc::TryRecvError::Empty) => return,
                Err(std::sync::mpsc::TryRecvError::Disconnected) => {
                    Err(rusqlite::Error::InvalidQuery)
                }
            },
            MoveStage::Copying(rows) => {
                let step = rows.len().saturating_sub(MOVE_STEP);
                let outcome = unsynced(conn, |c| {
                    copy_step(c, &self.texts.copy_recent, &rows[step..])
                });
                if outcome.is_ok() {
                    self.checkpoint.rows_since += rows.len() - step;
                    rows.truncate(step);
                    if rows.is_empty() {
                        moving.stage = MoveStage::Deleting;
                    }
                }
                outcome
            }
            MoveStage::Deleting => {
                let outcome = unsynced(conn, |c| {
                    c.prepare_cached(
                        "DELETE FROM events_recent WHERE rowid IN (SELECT rowid FROM \
                         events_recent WHERE rowid <= ?1 ORDER BY rowid LIMIT ?2)",
                    )?
                    .execute([moving.last, MOVE_STEP as i64])
                });
                // The last step deletes fewer than a whole step.
                deleted_all = outcome.as_ref().is_ok_and(|n| *n < MOVE_STEP);
                outcome.map(|_| ())
            }
        };
        metrics::histogram!("hakem_store_move_seconds").record(started.elapsed().as_secs_f64());
        if let Err(e) = outcome {
            tracing::warn!(error = %e, "recent events not moved; tried again later");
            // Begun again from its start: what was copied already is left as it is. The
            // connection is let go, whatever failed: the next one flushes every commit (see
            // `unsynced`) and is in no transaction.
            recent.moving = None;
            recent.rows = recent.rows.max(recent.move_after / 4 * 3);
            recent.since.get_or_insert_with(Instant::now);
            self.conn = None;
            return;
        }
        if deleted_all {
            // Every match last written before the move began has its events in `events` now.
            let before = moving.generation;
            recent
                .last_seq
                .lock()
                .expect("recent")
                .retain(|_, (_, generation)| *generation > before);
            recent.moving = None;
        }
    }

    /// Records that the server is alive (see [`Writer::alive`]).
    fn alive(&mut self, sql: &str, key: &str, now: &str) -> rusqlite::Result<()> {
        let outcome = self
            .connection()
            .and_then(|c| c.prepare_cached(sql)?.execute((key, now)).map(|_| ()));
        self.forget_if_broken(&outcome);
        outcome
    }

    /// After a failure, lets go of a connection that the disk or the file failed, or that is
    /// left inside a transaction (a rollback that failed): the next write opens another.
    fn forget_if_broken<T>(&mut self, outcome: &rusqlite::Result<T>) {
        if let Err(e) = outcome {
            let stuck = self.conn.as_ref().is_some_and(|c| !c.is_autocommit());
            if sqlite_broken(e) || stuck {
                self.conn = None;
            }
        }
    }
}

/// The statements every PostgreSQL batch runs, as common table expressions (see below). A
/// fenced batch (a cluster's node, see [`Fences`]) first locks the fences of its matches and
/// writes nothing unless each stands at the node's epoch: `$fence` is that part, `$go` the
/// condition every write is under, `$last` what the statement answers (the matches whose
/// fence did not stand). Each event's match is looked up as it is inserted, as on SQLite (see
/// [`sqlite_batch`]); unlike SQLite's, the lookup does not see a match created in the same
/// batch (the statement reads one snapshot), and such a batch would be written again one write
/// at a time, in order. A room appends only once its match's creation is committed, so it
/// does not arise.
macro_rules! postgres_batch {
    (fence: $fence:expr, go: $go:expr, and_go: $and_go:expr, chat: $chat:expr, last: $last:expr) => {
        concat!(
            "WITH ", $fence, "new_matches AS (
    INSERT INTO matches (id, created_ms, spec, finished)
    SELECT id, created_ms, spec, 0 FROM UNNEST($1::text[], $2::bigint[], $3::text[])
        AS t(id, created_ms, spec)", $go, "
), new_events AS (
    INSERT INTO events (match_id, seq, at_ms, frame)
    SELECT (SELECT m.id FROM matches m WHERE m.id = t.match_id), t.seq, t.at_ms, t.frame
    FROM UNNEST($4::text[], $5::bigint[], $6::bigint[], $7::text[])
        AS t(match_id, seq, at_ms, frame)", $go, "
), ended AS (
    UPDATE matches SET finished = 1, finished_ms = t.at_ms, summary = t.summary
    FROM UNNEST($8::text[], $9::bigint[], $10::text[]) AS t(id, at_ms, summary)
    WHERE matches.id = t.id", $and_go, "
)", $chat, "
", $last
        )
    };
    (chat: $chat:expr) => {
        postgres_batch!(fence: "", go: "", and_go: "", chat: $chat, last: "SELECT 1")
    };
    (fenced, $ids:literal, $epochs:literal, chat: $chat:expr) => {
        postgres_batch!(
            fence: concat!("expected AS (
    SELECT * FROM UNNEST($", $ids, "::text[], $", $epochs, "::bigint[]) AS e(id, epoch)
), locked AS (
    SELECT match_id, epoch FROM room_leases WHERE match_id IN (SELECT id FROM expected)
    FOR SHARE
), refused AS (
    SELECT e.id FROM expected e LEFT JOIN locked l ON l.match_id = e.id AND l.epoch = e.epoch
    WHERE l.match_id IS NULL
), ok AS (
    SELECT NOT EXISTS (SELECT 1 FROM refused) AS go
), "),
            go: " WHERE (SELECT go FROM ok)",
            and_go: " AND (SELECT go FROM ok)",
            chat: $chat,
            last: "SELECT id FROM refused"
        )
    };
}

/// The chat messages of a batch, when it has any.
macro_rules! chat_rows {
    ($go:literal) => {
        concat!(
            ", new_chat AS (
    INSERT INTO chat_messages (match_id, channel, n, author, role, account, text, at_ms)
    SELECT * FROM UNNEST($11::text[], $12::text[], $13::bigint[], $14::text[], $15::text[],
        $16::text[], $17::text[], $18::bigint[]) AS t",
            $go,
            "
)"
        )
    };
}

/// The same in one statement on PostgreSQL (its own transaction): the rows as arrays.
const POSTGRES_BATCH: &str = postgres_batch!(chat: "");

/// [`POSTGRES_BATCH`] with chat messages too (a batch without any uses the one above).
const POSTGRES_BATCH_WITH_CHAT: &str = postgres_batch!(chat: chat_rows!(""));

/// The fenced batches: the expected epochs as the last two arrays.
const POSTGRES_FENCED_BATCH: &str = postgres_batch!(fenced, "11", "12", chat: "");
const POSTGRES_FENCED_BATCH_WITH_CHAT: &str =
    postgres_batch!(fenced, "19", "20", chat: chat_rows!(" WHERE (SELECT go FROM ok)"));

/// The writer's connection to PostgreSQL, taken out of the readers' pool for good (its
/// settings are the writer's own), named `hakem-store` in `pg_stat_activity`. Its batches are
/// run with a generic plan, made once: left to choose, PostgreSQL planned the batch statement
/// again for every commit, a fifth of the database's time for each (docs/performance.md).
async fn postgres_writer_connection(pool: &PgPool) -> Result<PgConnection, sqlx::Error> {
    let mut conn = pool.acquire().await?.detach();
    sqlx::query("SET application_name = 'hakem-store'")
        .execute(&mut conn)
        .await?;
    // PostgreSQL 12 and later; an older one plans each batch, as before.
    if let Err(e) = sqlx::query("SET plan_cache_mode = force_generic_plan")
        .execute(&mut conn)
        .await
    {
        tracing::warn!(error = %e, "the store's writer plans every batch");
    }
    Ok(conn)
}

async fn commit_postgres(
    conn: &mut sqlx::PgConnection,
    rows: &Rows<'_>,
) -> Result<(), sqlx::Error> {
    commit_postgres_with(conn, rows, None).await.map(|_| ())
}

/// [`commit_postgres`], fenced when `fence` gives the batch's matches and this node's epoch
/// for each: then the matches whose fence did not stand are returned, and nothing was written.
async fn commit_postgres_with(
    conn: &mut sqlx::PgConnection,
    rows: &Rows<'_>,
    fence: Option<(Vec<&str>, Vec<i64>)>,
) -> Result<Vec<String>, sqlx::Error> {
    let column = |n: usize| -> Vec<&str> {
        match n {
            0 => rows.matches.iter().map(|r| r.0).collect(),
            1 => rows.matches.iter().map(|r| r.2).collect(),
            2 => rows.events.iter().map(|r| r.0).collect(),
            3 => rows.events.iter().map(|r| r.3).collect(),
            4 => rows.finished.iter().map(|r| r.0).collect(),
            _ => rows.finished.iter().map(|r| r.2).collect(),
        }
    };
    let sql = match (rows.chat.is_empty(), fence.is_some()) {
        (true, false) => POSTGRES_BATCH,
        (false, false) => POSTGRES_BATCH_WITH_CHAT,
        (true, true) => POSTGRES_FENCED_BATCH,
        (false, true) => POSTGRES_FENCED_BATCH_WITH_CHAT,
    };
    let mut query = sqlx::query(sql)
        .bind(column(0))
        .bind(rows.matches.iter().map(|r| r.1).collect::<Vec<i64>>())
        .bind(column(1))
        .bind(column(2))
        .bind(rows.events.iter().map(|r| r.1).collect::<Vec<i64>>())
        .bind(rows.events.iter().map(|r| r.2).collect::<Vec<i64>>())
        .bind(column(3))
        .bind(column(4))
        .bind(rows.finished.iter().map(|r| r.1).collect::<Vec<i64>>())
        .bind(column(5));
    if !rows.chat.is_empty() {
        let chat = &rows.chat;
        query = query
            .bind(chat.iter().map(|r| r.match_id).collect::<Vec<&str>>())
            .bind(chat.iter().map(|r| r.channel).collect::<Vec<&str>>())
            .bind(chat.iter().map(|r| r.n).collect::<Vec<i64>>())
            .bind(chat.iter().map(|r| r.author).collect::<Vec<&str>>())
            .bind(chat.iter().map(|r| r.role).collect::<Vec<&str>>())
            .bind(
                chat.iter()
                    .map(|r| r.account)
                    .collect::<Vec<Option<&str>>>(),
            )
            .bind(chat.iter().map(|r| r.text).collect::<Vec<&str>>())
            .bind(chat.iter().map(|r| r.at_ms).collect::<Vec<i64>>());
    }
    let Some((ids, epochs)) = fence else {
        return query.execute(&mut *conn).await.map(|_| Vec::new());
    };
    query
        .bind(ids)
        .bind(epochs)
        .fetch_all(&mut *conn)
        .await?
        .iter()
        .map(|row| row.try_get::<String, _>(0))
        .collect()
}

enum Fault {
    Sql(sqlx::Error),
    Fenced(HashSet<String>),
}

/// The writer's connection to PostgreSQL, opened again if the last one is gone.
async fn postgres_connected<'a>(
    pool: &PgPool,
    conn: &'a mut Option<PgConnection>,
) -> Result<&'a mut PgConnection, sqlx::Error> {
    if conn.is_none() {
        *conn = Some(postgres_writer_connection(pool).await?);
    }
    Ok(conn.as_mut().expect("connection just opened"))
}

/// How long the writer waits for PostgreSQL to answer a ping after a failed statement.
const PING_TIMEOUT: Duration = Duration::from_secs(5);

/// After a statement of the writer's failed with `e`, lets go of its connection if it no longer
/// works. One that PostgreSQL ended (a restart, `pg_terminate_backend`) fails its next statement
/// with the database's own error, not one of the socket's, and only its next use tells it apart
/// from a refused write; kept, it would fail one more write before the writer opened another.
async fn forget_if_gone(conn: &mut Option<PgConnection>, e: &sqlx::Error) {
    let works = match (e, conn.as_mut()) {
        (_, None) | (sqlx::Error::Io(_) | sqlx::Error::Protocol(_), _) => false,
        (sqlx::Error::Database(_), Some(c)) => {
            matches!(
                tokio::time::timeout(PING_TIMEOUT, c.ping()).await,
                Ok(Ok(()))
            )
        }
        (_, Some(_)) => true,
    };
    if !works {
        *conn = None;
    }
}

/// [`commit_postgres`] with the batch's fences checked in the same statement: a match not
/// fenced for this node at all is refused without asking.
async fn commit_postgres_fenced(
    conn: &mut PgConnection,
    rows: &Rows<'_>,
    writes: &[&Write],
    fences: &Fences,
) -> Result<(), Fault> {
    let ids: HashSet<&str> = writes.iter().map(|w| match_of(w)).collect();
    let mut expected = (Vec::with_capacity(ids.len()), Vec::with_capacity(ids.len()));
    let mut unfenced = HashSet::new();
    for id in ids {
        match fences.get(id) {
            Some(epoch) => {
                expected.0.push(id);
                expected.1.push(i64::try_from(*epoch).unwrap_or(i64::MAX));
            }
            None => {
                unfenced.insert(id.to_string());
            }
        }
    }
    if !unfenced.is_empty() {
        return Err(Fault::Fenced(unfenced));
    }
    let refused = commit_postgres_with(conn, rows, Some(expected))
        .await
        .map_err(Fault::Sql)?;
    if refused.is_empty() {
        Ok(())
    } else {
        Err(Fault::Fenced(refused.into_iter().collect()))
    }
}

impl Writer {
    /// Commits `writes` in one transaction on the writer's connection (opened again if the
    /// last one broke).
    async fn commit(&mut self, writes: &[&Write]) -> Result<(), CommitError> {
        let rows = Rows::of(writes.iter().copied());
        let outcome = match self {
            Writer::Sqlite(writer) => writer.commit(&rows),
            Writer::Postgres(pool, conn, fences) => {
                let c = postgres_connected(pool, conn)
                    .await
                    .map_err(|e| CommitError::Unconnected(e.to_string()))?;
                let outcome = match fences.get() {
                    Some(fences) => commit_postgres_fenced(c, &rows, writes, fences).await,
                    None => commit_postgres(c, &rows).await.map_err(Fault::Sql),
                };
                if let Err(Fault::Sql(e)) = &outcome {
                    forget_if_gone(conn, e).await;
                }
                return outcome.map_err(|fault| match fault {
                    Fault::Sql(e) => CommitError::Failed(e.to_string()),
                    Fault::Fenced(ids) => CommitError::Fenced(ids),
                });
            }
        };
        outcome.map_err(|e| CommitError::Failed(e.to_string()))
    }
}

impl Writer {
    /// How long a small batch waits for more writes: SQLite's writer only, on its own thread
    /// (PostgreSQL's runs among the rooms, which it must not hold up).
    fn commit_wait(&self) -> Option<Duration> {
        match self {
            Writer::Sqlite(writer) if !writer.commit_wait.is_zero() => Some(writer.commit_wait),
            _ => None,
        }
    }
}

/// Passes of the bulk copy: each copies what the one before left.
const CHECKPOINT_PASSES: usize = 2;

impl Writer {
    /// Starts the bulk copy of SQLite's WAL when it is due, and takes the writer's own last
    /// step of a copy when that is due and `idle` (no write waiting).
    fn checkpoint(&mut self, idle: bool) {
        if let Writer::Sqlite(writer) = self {
            writer.move_recent();
            writer.checkpoint(idle);
        }
    }

    /// Whether a move of SQLite's recent events is under way.
    fn moving(&self) -> bool {
        matches!(self, Writer::Sqlite(writer) if writer.recent.moving.is_some())
    }
}

/// Says that the bulk copy of the WAL is over when it is dropped: at the copy's end, and also
/// if its thread could not start or panicked, so that the next copy is never held back.
struct CopyOver(Arc<std::sync::atomic::AtomicBool>);

impl Drop for CopyOver {
    fn drop(&mut self) {
        self.0.store(true, std::sync::atomic::Ordering::Release);
    }
}

/// Copies what SQLite's WAL holds back into the database, as far as no reader holds it up.
fn wal_checkpoint(conn: &rusqlite::Connection) -> rusqlite::Result<()> {
    conn.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |_| Ok(()))
}

impl SqliteWriter {
    /// See [`Writer::checkpoint`].
    fn checkpoint(&mut self, idle: bool) {
        use std::sync::atomic::Ordering;
        let (Some(conn), checkpoint) = (&self.conn, &mut self.checkpoint) else {
            return;
        };
        if checkpoint.stage == CopyStage::Bulk && checkpoint.done.swap(false, Ordering::AcqRel) {
            checkpoint.copy_finished();
        }
        match checkpoint.stage {
            CopyStage::Bulk => return,
            CopyStage::Last if !idle => return,
            CopyStage::Last => {
                checkpoint.stage = CopyStage::Waiting;
                let started = Instant::now();
                if let Err(e) = wal_checkpoint(conn) {
                    tracing::warn!(error = %e, "WAL checkpoint failed");
                }
                metrics::histogram!("hakem_store_checkpoint_seconds")
                    .record(started.elapsed().as_secs_f64());
                return;
            }
            CopyStage::Waiting => {}
        }
        if checkpoint.rows_since < CHECKPOINT_ROWS {
            return;
        }
        checkpoint.stage = CopyStage::Bulk;
        checkpoint.rows_since = 0;
        let (path, over) = (self.path.clone(), CopyOver(checkpoint.done.clone()));
        // On a connection and a thread of its own, so that the writer goes on committing.
        let copy = move || {
            let _over = over;
            match sqlite_connection(&path) {
                Ok(conn) => {
                    for _ in 0..CHECKPOINT_PASSES {
                        if let Err(e) = wal_checkpoint(&conn) {
                            tracing::warn!(error = %e, "WAL checkpoint failed");
                            break;
                        }
                    }
                }
                Err(e) => tracing::warn!(error = %e, "WAL checkpoint failed"),
            }
        };
        if let Err(e) = std::thread::Builder::new()
            .name("hakem-wal-copy".into())
            .spawn(copy)
        {
            tracing::warn!(error = %e, "WAL checkpoint not started");
        }
    }
}

async fn read_setting(db: &Db, key: &str) -> Result<Option<String>, StoreError> {
    let sql = sql_for(db, "SELECT value FROM settings WHERE key = $1");
    Ok(on_db!(db, pool => {
        match sqlx::query(&sql).bind(key).fetch_optional(pool).await? {
            Some(row) => Some(row.try_get::<String, _>(0)?),
            None => None,
        }
    }))
}

/// The setting the writer keeps the server's last sign of life in.
const ALIVE_KEY: &str = "alive_ms";

/// The same for an incarnation of a cluster's node: each run of a node has its own, so that a
/// node started again at once under its name does not make its last run look alive.
pub fn alive_key_of(node: &str, incarnation: &str) -> String {
    format!("{ALIVE_KEY}.{node}.{incarnation}")
}
/// How often the writer records that the server is alive: a crash refunds a running clock at
/// most this much thinking time.
pub const ALIVE_EVERY: Duration = Duration::from_millis(500);

impl Writer {
    /// Records that the server is alive now: one small write for the whole server, on the
    /// writer's connection (opened again if the last one broke).
    async fn alive(&mut self, key: &str) {
        const SQL: &str = "INSERT INTO settings (key, value) VALUES ($1, $2) \
                           ON CONFLICT (key) DO UPDATE SET value = excluded.value";
        let now = crate::wall_clock_ms().to_string();
        let outcome = match self {
            // SQLite reads `?1` where PostgreSQL reads `$1` (see `sql_for`).
            Writer::Sqlite(writer) => writer
                .alive(&SQL.replace('$', "?"), key, &now)
                .map_err(|e| e.to_string()),
            Writer::Postgres(pool, conn, _) => match postgres_connected(pool, conn).await {
                Ok(c) => match sqlx::query(SQL).bind(key).bind(now).execute(c).await {
                    Ok(_) => Ok(()),
                    Err(e) => {
                        forget_if_gone(conn, &e).await;
                        Err(e.to_string())
                    }
                },
                Err(e) => Err(e.to_string()),
            },
        };
        if let Err(e) = outcome {
            tracing::warn!(error = %e, "the server's sign of life was not stored");
        }
    }
}

/// Without a batch to write for this long, the writer lets go of what SQLite keeps for the
/// next one (see [`Writer::release_memory`]).
const IDLE_RELEASE: Duration = Duration::from_secs(10);

impl Writer {
    /// Gives back the memory SQLite holds for writing (the prepared batches, the page cache):
    /// after a busy event they are megabytes the allocator keeps in use, and a quiet server
    /// has no use for them; the next batch prepares what it needs again.
    fn release_memory(&mut self) {
        let Some(conn) = (match self {
            Writer::Sqlite(writer) => writer.conn.as_mut(),
            Writer::Postgres(..) => None,
        }) else {
            return;
        };
        conn.flush_prepared_statement_cache();
        if let Err(e) = conn.execute_batch("PRAGMA shrink_memory") {
            tracing::warn!(error = %e, "SQLite's page cache not released");
        }
    }
}

/// Runs SQLite's writer on a thread of its own, with a runtime of its own for its queue and its
/// timer: a commit blocks that thread (SQLite is called directly, the disk's flush included),
/// never the one of rooms and connections, and the writer takes the next batch the moment it
/// arrives rather than in its turn among every connection's tasks.
fn spawn_sqlite_writer(
    writer: impl std::future::Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()?;
    std::thread::Builder::new()
        .name("hakem-store".into())
        .spawn(move || runtime.block_on(writer))?;
    Ok(())
}

/// Takes writes off the queue and commits each batch in one transaction, and records that the
/// server is alive every [`ALIVE_EVERY`] (nothing else may be written while players think).
async fn write_loop(mut writer: Writer, mut queue: mpsc::Receiver<Job>, alive_key: AliveKey) {
    let mut batch: Vec<Job> = Vec::with_capacity(MAX_BATCH);
    let mut next_alive = tokio::time::Instant::now();
    // When the last batch was written, and whether the caches were let go since.
    let mut last_batch = Instant::now();
    let mut released = true;
    loop {
        writer.checkpoint(queue.is_empty());
        if tokio::time::Instant::now() >= next_alive {
            let key = alive_key.lock().expect("alive key").clone();
            if let Some(key) = key {
                writer.alive(&key).await;
            }
            next_alive = tokio::time::Instant::now() + ALIVE_EVERY;
        }
        if !released && last_batch.elapsed() >= IDLE_RELEASE {
            writer.release_memory();
            released = true;
        }
        // A move under way takes a step on every pass: after each batch, and every
        // millisecond while no write waits.
        let wake = match writer.moving() {
            true => next_alive.min(tokio::time::Instant::now() + MOVE_PAUSE),
            false => next_alive,
        };
        let received = tokio::select! {
            biased;
            received = queue.recv_many(&mut batch, MAX_BATCH) => received,
            _ = tokio::time::sleep_until(wake) => continue,
        };
        if received == 0 {
            break;
        }
        if let Some(wait) = writer.commit_wait() {
            gather(&mut queue, &mut batch, wait);
        }
        let received = batch.len();
        let started = Instant::now();
        commit_batch(&mut writer, &mut batch).await;
        metrics::histogram!("hakem_store_commit_seconds").record(started.elapsed().as_secs_f64());
        metrics::histogram!("hakem_store_batch_size").record(received as f64);
        last_batch = Instant::now();
        released = false;
    }
}

/// Between two steps of a move while no write waits: short, but not a spin (a move's rows
/// may still be being read).
const MOVE_PAUSE: Duration = Duration::from_millis(1);

/// A batch of fewer writes than this waits for more (see [`StoreSettings::commit_wait`]); a
/// larger one, a backlog among them, is committed at once.
const WAIT_BELOW: usize = 8;

/// Lets a small batch wait until its oldest write has waited `wait`, and takes into it the
/// writes that joined the queue meanwhile. It blocks the thread: only SQLite's writer, whose
/// thread has nothing else to do meanwhile, waits (see [`Writer::commit_wait`]).
fn gather(queue: &mut mpsc::Receiver<Job>, batch: &mut Vec<Job>, wait: Duration) {
    let Some(oldest) = batch.first() else { return };
    let left = wait.saturating_sub(oldest.queued.elapsed());
    if batch.len() >= WAIT_BELOW || left.is_zero() {
        return;
    }
    std::thread::sleep(left);
    while batch.len() < MAX_BATCH {
        match queue.try_recv() {
            Ok(job) => batch.push(job),
            Err(_) => break,
        }
    }
}

/// Commits a batch and answers each of its jobs.
async fn commit_batch(writer: &mut Writer, batch: &mut Vec<Job>) {
    let all: Vec<&Write> = batch.iter().map(|job| &job.write).collect();
    match writer.commit(&all).await {
        Ok(()) => {
            for job in batch.drain(..) {
                job.answer(Ok(()));
            }
        }
        Err(CommitError::Fenced(ids)) => {
            // Those fail; the rest go on without them (nothing of the batch was written).
            tracing::warn!(
                matches = ids.len(),
                "writes of rooms owned by another node refused"
            );
            metrics::counter!("hakem_cluster_fenced_writes_total").increment(ids.len() as u64);
            let (fenced, rest): (Vec<Job>, Vec<Job>) = batch
                .drain(..)
                .partition(|job| ids.contains(match_of(&job.write)));
            for job in fenced {
                job.answer(Err(FENCED.to_string()));
            }
            *batch = rest;
            if !batch.is_empty() {
                Box::pin(commit_batch(writer, batch)).await;
            }
        }
        // Without a database, each write alone would wait as long for a connection again.
        Err(CommitError::Unconnected(e)) => fail_all(batch, e),
        Err(CommitError::Failed(e)) if batch.len() == 1 => fail_all(batch, e),
        Err(CommitError::Failed(e)) => {
            // Which write broke the batch? Each again on its own: only that one fails.
            tracing::warn!(error = %e, writes = batch.len(), "batch failed; writing one by one");
            let mut jobs = std::mem::take(batch).into_iter();
            while let Some(job) = jobs.next() {
                let outcome = match writer.commit(&[&job.write]).await {
                    Ok(()) => Ok(()),
                    Err(CommitError::Fenced(_)) => Err(FENCED.to_string()),
                    Err(CommitError::Unconnected(e)) => {
                        let mut rest: Vec<Job> = std::iter::once(job).chain(jobs).collect();
                        fail_all(&mut rest, e);
                        return;
                    }
                    Err(CommitError::Failed(e)) => {
                        tracing::error!(error = %e, "store write failed");
                        Err(e)
                    }
                };
                job.answer(outcome);
            }
        }
    }
}

/// Fails every write of `batch` with `e`.
fn fail_all(batch: &mut Vec<Job>, e: String) {
    tracing::error!(error = %e, writes = batch.len(), "store commit failed");
    for job in batch.drain(..) {
        job.answer(Err(e.clone()));
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    pub(crate) fn spec() -> MatchSpec {
        MatchSpec {
            game: "pentago".into(),
            variant: "tr".into(),
            sets: 3,
            clock: None,
            warnings_limit: 3,
            players: PerSeat::new("a".into(), "b".into()),
            untimed_ply_limit: 400,
            seat_tokens: PerSeat::new("t1".into(), "t2".into()),
            arbiter_token: "ta".into(),
            accounts: PerSeat::default(),
            house_bot: None,
            tournament: None,
            spectator_delay: None,
            rated: false,
        }
    }

    fn events(from: u64, n: u64) -> Vec<NewEvent> {
        (from..from + n)
            .map(|seq| NewEvent {
                seq,
                at_ms: 1000 + seq,
                frame: format!(r#"{{"seq":{seq}}}"#),
            })
            .collect()
    }

    /// The URL of a fresh PostgreSQL database, created from the one `HAKEM_TEST_POSTGRES`
    /// names; `None` without it (under `CI=true` it must be set).
    pub(crate) async fn fresh_postgres() -> Option<String> {
        let Ok(admin) = std::env::var("HAKEM_TEST_POSTGRES") else {
            assert!(
                std::env::var("CI").map_or(true, |v| v != "true"),
                "CI=true but HAKEM_TEST_POSTGRES is not set"
            );
            return None;
        };
        let name = format!("hakem_unit_{}", crate::tokens::new_id());
        let pool = PgPool::connect(&admin).await.unwrap();
        sqlx::raw_sql(&format!("CREATE DATABASE {name}"))
            .execute(&pool)
            .await
            .unwrap();
        pool.close().await;
        let (base, _) = admin.rsplit_once('/').unwrap();
        Some(format!("{base}/{name}"))
    }

    /// A fresh SQLite file, and a fresh PostgreSQL database when `HAKEM_TEST_POSTGRES` names
    /// one to create it from (under `CI=true` it must).
    pub(crate) async fn databases() -> Vec<Store> {
        let (_, sqlite) = sqlite_store().await;
        let mut all = vec![sqlite];
        if let Some(url) = fresh_postgres().await {
            all.push(Store::open(&url).await.unwrap());
        }
        all
    }

    #[tokio::test]
    async fn one_batch_of_many_matches_is_stored_whole_and_in_order() {
        for store in databases().await {
            let ids: Vec<String> = (0..40).map(|_| crate::tokens::new_id()).collect();
            // Created together: they share commits.
            let spec = spec();
            let creates = ids.iter().map(|id| store.create_match(id, &spec, 5));
            for result in futures_util::future::join_all(creates).await {
                result.unwrap();
            }
            let appends = ids.iter().enumerate().map(|(i, id)| {
                let finished = (i % 2 == 0).then(|| Finish {
                    at_ms: 100 + i as u64,
                    summary: format!(r#"{{"n":{i}}}"#),
                });
                store.append(id, events(1, 3 + i as u64 % 200), finished)
            });
            for result in futures_util::future::join_all(appends).await {
                result.unwrap();
            }
            for (i, id) in ids.iter().enumerate() {
                let stored = store.load(id).await.unwrap().unwrap();
                assert_eq!(stored.frames.len() as u64, 3 + i as u64 % 200);
                assert_eq!(stored.frames[2], r#"{"seq":3}"#);
                assert_eq!(stored.finished, i % 2 == 0);
                let page = store.frames(id, 2, 3, 10).await.unwrap();
                assert_eq!(page, [r#"{"seq":2}"#, r#"{"seq":3}"#]);
            }
            let live: Vec<String> = store
                .live_matches()
                .await
                .unwrap()
                .into_iter()
                .map(|m| m.id)
                .collect();
            for (i, id) in ids.iter().enumerate() {
                assert_eq!(live.contains(id), i % 2 == 1);
            }
        }
    }

    #[tokio::test]
    async fn a_bad_append_fails_alone_in_its_batch() {
        for store in databases().await {
            let good = crate::tokens::new_id();
            let bad = crate::tokens::new_id();
            store.create_match(&good, &spec(), 5).await.unwrap();
            store.create_match(&bad, &spec(), 5).await.unwrap();
            store.append(&bad, events(1, 2), None).await.unwrap();
            // seq 2 again violates the key; sent together with a good append.
            let (good_result, bad_result) = tokio::join!(
                store.append(&good, events(1, 5), None),
                store.append(&bad, events(2, 1), None),
            );
            good_result.unwrap();
            assert!(bad_result.is_err());
            assert_eq!(store.load(&good).await.unwrap().unwrap().frames.len(), 5);
            assert_eq!(store.load(&bad).await.unwrap().unwrap().frames.len(), 2);
            refuses_events_of_no_match(&store).await;
        }
    }

    /// The process of PostgreSQL that serves the store's writer, found by the name the writer
    /// gives its connection.
    async fn writer_backend(pool: &PgPool) -> i32 {
        sqlx::query_scalar(
            "SELECT pid FROM pg_stat_activity \
             WHERE datname = current_database() AND application_name = 'hakem-store'",
        )
        .fetch_one(pool)
        .await
        .unwrap()
    }

    /// PostgreSQL's writer whose connection the database ended (a restart of PostgreSQL, an
    /// operator's `pg_terminate_backend`) opens another: the write that found it gone fails,
    /// nothing of it stored, and the writes after it are stored.
    #[tokio::test]
    async fn the_postgres_writer_connects_again_when_the_database_ended_its_connection() {
        let Some(url) = fresh_postgres().await else {
            return;
        };
        // As a node of a cluster, which records no sign of life of its own: nothing but the
        // test's writes uses the writer's connection.
        let store = Store::open_node(&url, true).await.unwrap();
        let Db::Postgres(pool) = &store.db else {
            unreachable!("a PostgreSQL store")
        };
        let id = crate::tokens::new_id();
        store.create_match(&id, &spec(), 5).await.unwrap();
        store.append(&id, events(1, 1), None).await.unwrap();
        let writer = writer_backend(pool).await;
        let ended: bool = sqlx::query_scalar("SELECT pg_terminate_backend($1)")
            .bind(writer)
            .fetch_one(pool)
            .await
            .unwrap();
        assert!(ended);
        // Gone for sure before the next write.
        let mut gone = false;
        for _ in 0..100 {
            let left: i64 =
                sqlx::query_scalar("SELECT count(*) FROM pg_stat_activity WHERE pid = $1")
                    .bind(writer)
                    .fetch_one(pool)
                    .await
                    .unwrap();
            if left == 0 {
                gone = true;
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        assert!(gone, "PostgreSQL did not end the writer's connection");
        let mut failures = 0;
        let mut seq = 2;
        while seq <= 4 {
            match store.append(&id, events(seq, 1), None).await {
                Ok(()) => seq += 1,
                Err(_) if failures < 3 => failures += 1,
                Err(e) => panic!("the writer did not recover: {e}"),
            }
        }
        assert_eq!(
            failures, 1,
            "only the write that found the connection gone fails"
        );
        assert_eq!(store.load(&id).await.unwrap().unwrap().frames.len(), 4);
        let again = writer_backend(pool).await;
        assert_ne!(again, writer);
    }

    /// Without PostgreSQL, a batch fails whole after one wait for a connection, rather than
    /// each of its writes waiting again on its own: a database that never answers, where each
    /// attempt to connect is a connection accepted, and held until the writer gives up.
    #[tokio::test]
    async fn a_batch_without_a_database_fails_whole_after_one_wait_for_a_connection() {
        use std::sync::atomic::{AtomicUsize, Ordering};
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let attempts = Arc::new(AtomicUsize::new(0));
        let counted = attempts.clone();
        tokio::spawn(async move {
            let mut held = Vec::new();
            while let Ok((socket, _)) = listener.accept().await {
                counted.fetch_add(1, Ordering::SeqCst);
                held.push(socket);
            }
        });
        let pool = PgPoolOptions::new()
            .acquire_timeout(Duration::from_millis(300))
            .connect_lazy(&format!("postgres://hakem:hakem@{addr}/none"))
            .unwrap();
        let mut writer = Writer::Postgres(pool, None, Arc::default());
        let (mut batch, answers): (Vec<Job>, Vec<_>) = ["a", "b", "c"]
            .iter()
            .map(|id| answered_job(id, Instant::now()))
            .unzip();
        commit_batch(&mut writer, &mut batch).await;
        for answer in answers {
            assert!(answer.await.unwrap().is_err());
        }
        assert_eq!(attempts.load(Ordering::SeqCst), 1);
    }

    /// Events of a match that does not exist are refused, and change nothing.
    async fn refuses_events_of_no_match(store: &Store) {
        assert!(store
            .append("no-such-match", events(1, 1), None)
            .await
            .is_err());
        assert!(store
            .frames("no-such-match", 1, 10, 10)
            .await
            .unwrap()
            .is_empty());
    }

    #[tokio::test]
    async fn a_node_writes_only_the_rooms_whose_fence_stands_at_its_epoch() {
        for store in databases().await {
            if !store.is_postgres() {
                continue;
            }
            let fences: Fences = Arc::default();
            store.fence_with(fences.clone(), Arc::default());
            let (mine, lost, never) = (
                crate::tokens::new_id(),
                crate::tokens::new_id(),
                crate::tokens::new_id(),
            );
            for (id, epoch) in [(&mine, 5), (&lost, 6)] {
                let raised = store.raise_fence(id, "n1", "i1", epoch).await.unwrap();
                assert_eq!(raised, Some(Previous::default()), "nobody held it");
                fences.insert(id.clone(), epoch);
                store.create_match(id, &spec(), 5).await.unwrap();
            }
            // A match whose fence was never raised for this node is not even created.
            assert!(store
                .create_match(&never, &spec(), 5)
                .await
                .unwrap_err()
                .is_fenced());
            // Another node takes `lost` with a later lease; a lower epoch cannot take it back.
            let raised = store.raise_fence(&lost, "n2", "i2", 9).await.unwrap();
            assert_eq!(
                raised.and_then(|previous| previous.incarnation).as_deref(),
                Some("i1")
            );
            assert_eq!(store.raise_fence(&lost, "n1", "i1", 7).await.unwrap(), None);
            // In one batch: the room still ours is written, the lost one is refused alone.
            let (kept, refused) = tokio::join!(
                store.append(&mine, events(1, 3), None),
                store.append(&lost, events(1, 2), None),
            );
            kept.unwrap();
            assert!(refused.unwrap_err().is_fenced());
            assert_eq!(store.load(&mine).await.unwrap().unwrap().frames.len(), 3);
            assert!(store.load(&lost).await.unwrap().unwrap().frames.is_empty());
            assert!(store.load(&never).await.unwrap().is_none());
            // The new owner, at its epoch, writes it.
            fences.insert(lost.clone(), 9);
            store.append(&lost, events(1, 2), None).await.unwrap();
        }
    }

    #[tokio::test]
    async fn tournament_changes_are_stored_only_under_the_tournaments_lease() {
        let tournaments = crate::cluster::TOURNAMENTS_KEY;
        for store in databases().await {
            if !store.is_postgres() {
                continue;
            }
            let held: TournamentsFence = Arc::default();
            store.fence_with(Arc::default(), held.clone());
            let id = crate::tokens::new_id();
            let change = |n: u64| vec![format!(r#"{{"n":{n}}}"#)];
            // Not held here: refused, even the first change.
            let refused = store
                .save_tournament_changes(&id, 5, 1, &change(1), Some("{}"))
                .await;
            assert!(refused.unwrap_err().is_fenced());
            assert!(store
                .raise_fence(tournaments, "n1", "i1", 5)
                .await
                .unwrap()
                .is_some());
            *held.lock().unwrap() = Some(5);
            store
                .save_tournament_changes(&id, 5, 1, &change(1), Some(r#"{"at":1}"#))
                .await
                .unwrap();
            // Another node takes the tournaments: this one still believes it holds them, and
            // its change 2 and its snapshot are refused; the new holder's change 2 is stored.
            assert!(store
                .raise_fence(tournaments, "n2", "i2", 9)
                .await
                .unwrap()
                .is_some());
            let stale = store
                .save_tournament_changes(&id, 5, 2, &change(2), Some(r#"{"at":"stale"}"#))
                .await;
            assert!(stale.unwrap_err().is_fenced());
            assert_eq!(store.tournament_changes(&id, 0).await.unwrap(), change(1));
            assert_eq!(
                store.tournaments().await.unwrap(),
                vec![(id.clone(), r#"{"at":1}"#.to_string())]
            );
            *held.lock().unwrap() = Some(9);
            store
                .save_tournament_changes(&id, 5, 2, &change(22), None)
                .await
                .unwrap();
            assert_eq!(
                store.tournament_changes(&id, 0).await.unwrap(),
                [change(1), change(22)].concat()
            );
        }
    }

    #[tokio::test]
    async fn a_rooms_chat_settings_are_stored_only_by_its_owner() {
        for store in databases().await {
            if !store.is_postgres() {
                continue;
            }
            let fences: Fences = Arc::default();
            store.fence_with(fences.clone(), Arc::default());
            let id = crate::tokens::new_id();
            assert!(store
                .raise_fence(&id, "n1", "i1", 3)
                .await
                .unwrap()
                .is_some());
            fences.insert(id.clone(), 3);
            store.create_match(&id, &spec(), 5).await.unwrap();
            store.save_chat_settings(&id, false, "[]").await.unwrap();
            assert!(store
                .raise_fence(&id, "n2", "i2", 4)
                .await
                .unwrap()
                .is_some());
            let stale = store.save_chat_settings(&id, true, r#"["p2"]"#).await;
            assert!(stale.unwrap_err().is_fenced());
            let chat = store.chat(&id, 10).await.unwrap();
            assert_eq!(
                chat.settings,
                Some((false, "[]".to_string())),
                "the stale change was not stored"
            );
        }
    }

    #[tokio::test]
    async fn a_fence_raised_over_a_handover_says_when_it_was_handed_over() {
        for store in databases().await {
            let id = crate::tokens::new_id();
            assert!(store
                .raise_fence(&id, "n1", "i1", 3)
                .await
                .unwrap()
                .is_some());
            // Recorded only for the epoch it was held at: a stale record changes nothing.
            store
                .record_handovers(&[(id.clone(), 2, 1_000), (id.clone(), 3, 5_000)])
                .await
                .unwrap();
            let previous = store.raise_fence(&id, "n2", "i2", 4).await.unwrap();
            assert_eq!(
                previous,
                Some(Previous {
                    node: Some("n1".into()),
                    incarnation: Some("i1".into()),
                    handed_ms: Some(5_000),
                })
            );
            // The new holder's own handover is not recorded yet.
            let previous = store.raise_fence(&id, "n3", "i3", 5).await.unwrap();
            assert_eq!(previous.unwrap().handed_ms, None);
        }
    }

    #[tokio::test]
    async fn each_run_of_a_node_has_its_own_sign_of_life() {
        for store in databases().await {
            let node = format!("n_{}", crate::tokens::new_id());
            let other = format!("nx{}", &node[2..]);
            let (old, new) = (alive_key_of(&node, "old"), alive_key_of(&node, "new"));
            for (key, ms) in [(&old, "1000"), (&new, "9000")] {
                store.setting_or_insert(key, ms).await.unwrap();
            }
            // `_` in a name is no wildcard: another node's runs are not this one's.
            store
                .setting_or_insert(&alive_key_of(&other, "old"), "1000")
                .await
                .unwrap();
            assert_eq!(store.alive_ms_of(&node, "old").await.unwrap(), Some(1000));
            assert_eq!(store.alive_ms_of(&node, "new").await.unwrap(), Some(9000));
            assert_eq!(store.forget_alive(&node, &new, 5000).await.unwrap(), 1);
            assert_eq!(store.alive_ms_of(&node, "old").await.unwrap(), None);
            assert_eq!(store.alive_ms_of(&node, "new").await.unwrap(), Some(9000));
            assert_eq!(store.alive_ms_of(&other, "old").await.unwrap(), Some(1000));
        }
    }

    #[tokio::test]
    async fn chat_messages_share_the_group_commit_and_a_bad_one_fails_alone() {
        use hakem_protocol::{ChatChannel, ChatLine, ChatRole};
        let line = |id: &str, channel, n: u64, text: &str| ChatLine {
            match_id: id.to_string(),
            n,
            channel,
            from: "Ayşe".into(),
            role: ChatRole::P1,
            text: text.into(),
            at_ms: 1_000 + n,
        };
        for store in databases().await {
            let id = crate::tokens::new_id();
            store.create_match(&id, &spec(), 5).await.unwrap();
            store
                .add_chat(&line(&id, ChatChannel::Players, 1, "merhaba"), Some("ayse"))
                .await
                .unwrap();
            // In one batch with events: a message numbered again fails, the others are stored.
            let (twice, second, watching) = (
                line(&id, ChatChannel::Players, 1, "twice"),
                line(&id, ChatChannel::Players, 2, "iyi oyunlar"),
                line(&id, ChatChannel::Spectators, 1, "güzel"),
            );
            let (events, again, next, spectators) = tokio::join!(
                store.append(&id, events(1, 2), None),
                store.add_chat(&twice, None),
                store.add_chat(&second, Some("ayse")),
                store.add_chat(&watching, None),
            );
            events.unwrap();
            assert!(again.is_err());
            next.unwrap();
            spectators.unwrap();
            let chat = store.chat(&id, 100).await.unwrap();
            assert_eq!(
                chat.counts,
                PerChannel {
                    players: 2,
                    spectators: 1
                }
            );
            let mut texts: Vec<&str> = chat.lines.iter().map(|l| l.text.as_str()).collect();
            texts.sort_unstable();
            assert_eq!(texts, ["güzel", "iyi oyunlar", "merhaba"]);
            let mine = store.chat_of_account("ayse", 10).await.unwrap();
            let mine: Vec<&str> = mine.iter().map(|l| l.text.as_str()).collect();
            assert_eq!(mine, ["merhaba", "iyi oyunlar"]);
            assert_eq!(store.load(&id).await.unwrap().unwrap().frames.len(), 2);
        }
    }

    /// The WAL's header counts the times the WAL started again from its beginning (its
    /// checkpoint sequence number, a big-endian u32 at byte 12).
    fn wal_restarts(db: &std::path::Path) -> u32 {
        use std::io::Read;
        let mut header = [0u8; 16];
        std::fs::File::open(db.with_extension("db-wal"))
            .unwrap()
            .read_exact(&mut header)
            .unwrap();
        u32::from_be_bytes(header[12..16].try_into().unwrap())
    }

    /// A store in a fresh SQLite file, and the file.
    /// A new file name for a SQLite database of a test.
    fn fresh_sqlite_file() -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("hakem-store-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        dir.join(format!("{}.db", crate::tokens::new_id()))
    }

    pub(crate) async fn sqlite_store() -> (std::path::PathBuf, Store) {
        let file = fresh_sqlite_file();
        let store = Store::open(&format!("sqlite://{}", file.display()))
            .await
            .unwrap();
        (file, store)
    }

    /// A database of the schema before the events' foreign key was dropped, holding a match
    /// with three events: `(url, match id)`, for each database the tests have.
    async fn databases_of_version_12() -> Vec<(String, String)> {
        let mut urls = vec![format!(
            "sqlite://{}?mode=rwc",
            fresh_sqlite_file().display()
        )];
        urls.extend(fresh_postgres().await);
        let mut out = Vec::new();
        for url in urls {
            let id = crate::tokens::new_id();
            let db = match url.starts_with("postgres") {
                true => Db::Postgres(PgPool::connect(&url).await.unwrap()),
                false => Db::Sqlite(SqlitePool::connect(&url).await.unwrap()),
            };
            migrate_to(&db, 12).await.unwrap();
            let spec = serde_json::to_string(&spec()).unwrap();
            let rows = format!(
                "INSERT INTO matches (id, created_ms, spec, finished) VALUES ('{id}', 5, '{spec}', 0);
                 INSERT INTO events (match_id, seq, at_ms, frame) VALUES \
                 ('{id}', 1, 7, '{{\"seq\":1}}'), ('{id}', 2, 7, '{{\"seq\":2}}'), \
                 ('{id}', 3, 8, '{{\"seq\":3}}')"
            );
            on_db!(&db, pool => {
                sqlx::raw_sql(&rows).execute(pool).await.unwrap();
                pool.close().await;
            });
            out.push((url, id));
        }
        out
    }

    #[tokio::test]
    async fn the_events_keep_through_the_migration_that_drops_their_foreign_key() {
        for (url, id) in databases_of_version_12().await {
            let store = Store::open(&url).await.unwrap();
            let stored = store.load(&id).await.unwrap().unwrap();
            assert_eq!(
                stored.frames,
                [r#"{"seq":1}"#, r#"{"seq":2}"#, r#"{"seq":3}"#],
                "{url}"
            );
            // The key (match, seq) still holds; new events follow the old ones.
            assert!(store.append(&id, events(3, 1), None).await.is_err());
            store.append(&id, events(4, 2), None).await.unwrap();
            assert_eq!(store.load(&id).await.unwrap().unwrap().frames.len(), 5);
            // The key is gone: a row of no match is taken when written by hand...
            let orphan = sql_for(
                &store.db,
                "INSERT INTO events (match_id, seq, at_ms, frame) VALUES ('ghost', 1, 1, '{}')",
            );
            on_db!(&store.db, pool => {
                sqlx::raw_sql(&orphan).execute(pool).await.unwrap();
            });
            // ...and the writer's lookup refuses such events.
            refuses_events_of_no_match(&store).await;
        }
    }

    #[test]
    fn the_writer_finishes_every_few_bulk_copies_itself() {
        let mut checkpoint = Checkpoint::default();
        let finished: Vec<bool> = (0..2 * COPIES_PER_RESTART)
            .map(|_| {
                checkpoint.stage = CopyStage::Bulk;
                checkpoint.copy_finished();
                assert_ne!(checkpoint.stage, CopyStage::Bulk);
                checkpoint.stage == CopyStage::Last
            })
            .collect();
        let expected: Vec<bool> = (1..=2 * COPIES_PER_RESTART)
            .map(|n| n % COPIES_PER_RESTART == 0)
            .collect();
        assert_eq!(finished, expected);
    }

    /// The statements prepared on a SQLite writer's connection.
    fn prepared_statements(writer: &Writer) -> usize {
        let Some(conn) = (match writer {
            Writer::Sqlite(writer) => writer.conn.as_ref(),
            Writer::Postgres(..) => None,
        }) else {
            unreachable!("a SQLite writer with its connection")
        };
        let mut n = 0;
        // SAFETY: `sqlite3_next_stmt` only walks the connection's own list of statements,
        // here while `conn` is borrowed and on its one thread.
        unsafe {
            let db = conn.handle();
            let mut statement = rusqlite::ffi::sqlite3_next_stmt(db, std::ptr::null_mut());
            while !statement.is_null() {
                n += 1;
                statement = rusqlite::ffi::sqlite3_next_stmt(db, statement);
            }
        }
        n
    }

    /// Rows of `events` and of `events_recent` in the SQLite file.
    fn rows_of_events(file: &std::path::Path) -> (i64, i64) {
        let conn = rusqlite::Connection::open(file).unwrap();
        conn.query_row(
            "SELECT (SELECT COUNT(*) FROM events), (SELECT COUNT(*) FROM events_recent)",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap()
    }

    fn seqs(frames: &[String]) -> Vec<u64> {
        frames
            .iter()
            .map(|f| {
                serde_json::from_str::<serde_json::Value>(f).unwrap()["seq"]
                    .as_u64()
                    .unwrap()
            })
            .collect()
    }

    /// Reads of `ids`, each of which has events 1 to `last`: each event once, in order.
    async fn each_event_once(store: &Store, ids: &[String], last: u64) {
        for id in ids {
            let frames = store.frames(id, 1, u64::MAX, u32::MAX).await.unwrap();
            assert_eq!(seqs(&frames), (1..=last).collect::<Vec<_>>());
            let some = store.frames(id, 101, 150, 20).await.unwrap();
            assert_eq!(seqs(&some), (101..=120).collect::<Vec<_>>());
        }
    }

    #[tokio::test]
    async fn recent_events_are_read_once_before_during_and_after_their_move_into_the_key() {
        let (file, store) = sqlite_store().await;
        let ids: Vec<String> = (0..3).map(|_| crate::tokens::new_id()).collect();
        for id in &ids {
            store.create_match(id, &spec(), 5).await.unwrap();
        }
        // A writer that stands in for the store's, whose moves the test takes step by step.
        let mut writer = SqliteWriter::open(file.clone(), Duration::ZERO, 600).unwrap();
        writer.recent.last_seq = store.recent.clone().expect("SQLite");
        let mut writer = Writer::Sqlite(Box::new(writer));
        let append = |id: &String, from, n| Write::Append {
            match_id: id.clone(),
            events: events(from, n),
            finished: None,
        };
        // 300 events of each match: more than one step of a move.
        for id in &ids {
            assert!(writer.commit(&[&append(id, 1, 300)]).await.is_ok());
        }
        assert!(
            writer.commit(&[&append(&ids[0], 300, 1)]).await.is_err(),
            "an event numbered again, not yet moved"
        );
        assert_eq!(rows_of_events(&file), (0, 900));
        each_event_once(&store, &ids, 300).await;
        let mut seen = Vec::new();
        let deadline = Instant::now() + Duration::from_secs(10);
        while rows_of_events(&file) != (900, 0) {
            assert!(Instant::now() < deadline, "the move ended");
            writer.checkpoint(true);
            let rows = rows_of_events(&file);
            if seen.last() != Some(&rows) {
                seen.push(rows);
            }
            each_event_once(&store, &ids, 300).await;
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        // Copied in steps while still in `events_recent`, then deleted in steps.
        assert_eq!(
            seen,
            vec![(0, 900), (512, 900), (900, 900), (900, 388), (900, 0)]
        );
        assert!(store.recent.as_ref().unwrap().lock().unwrap().is_empty());
        for id in &ids {
            assert!(
                writer.commit(&[&append(id, 300, 1)]).await.is_err(),
                "an event numbered again, moved into the key"
            );
            assert!(writer.commit(&[&append(id, 7, 1)]).await.is_err());
        }
        assert!(writer.commit(&[&append(&ids[0], 301, 2)]).await.is_ok());
        let frames = store
            .frames(&ids[0], 295, u64::MAX, u32::MAX)
            .await
            .unwrap();
        assert_eq!(seqs(&frames), (295..=302).collect::<Vec<_>>());
        let live = store.live_matches().await.unwrap();
        assert_eq!(live.len(), 3);
        for m in live {
            assert_eq!(m.frames.len(), if m.id == ids[0] { 302 } else { 300 });
        }
    }

    #[tokio::test]
    async fn the_writer_moves_recent_events_into_the_key_between_its_batches() {
        let file = fresh_sqlite_file();
        let settings = StoreSettings {
            move_after: 600,
            ..StoreSettings::default()
        };
        let store = Store::open_with(&format!("sqlite://{}", file.display()), settings)
            .await
            .unwrap();
        let ids: Vec<String> = (0..2).map(|_| crate::tokens::new_id()).collect();
        for id in &ids {
            store.create_match(id, &spec(), 5).await.unwrap();
            store.append(id, events(1, 300), None).await.unwrap();
        }
        let deadline = Instant::now() + Duration::from_secs(10);
        while rows_of_events(&file) != (600, 0) {
            assert!(
                Instant::now() < deadline,
                "moved: {:?}",
                rows_of_events(&file)
            );
            each_event_once(&store, &ids, 300).await;
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
        each_event_once(&store, &ids, 300).await;
        assert!(store.append(&ids[1], events(300, 1), None).await.is_err());
        store.append(&ids[1], events(301, 1), None).await.unwrap();
        assert_eq!(rows_of_events(&file), (600, 1));
    }

    #[tokio::test]
    async fn events_left_recent_by_a_crash_or_a_move_cut_short_are_moved_at_the_next_start() {
        // A database of this schema that no writer has opened, holding what a crash leaves:
        // five recent events, three of them copied into the key by a move that did not get
        // to delete them.
        let file = fresh_sqlite_file();
        let url = format!("sqlite://{}?mode=rwc", file.display());
        let db = Db::Sqlite(SqlitePool::connect(&url).await.unwrap());
        migrate(&db).await.unwrap();
        on_db!(&db, pool => pool.close().await);
        let id = crate::tokens::new_id();
        let conn = rusqlite::Connection::open(&file).unwrap();
        conn.execute(
            "INSERT INTO matches (id, created_ms, spec, finished) VALUES (?1, 5, ?2, 0)",
            rusqlite::params![id, serde_json::to_string(&spec()).unwrap()],
        )
        .unwrap();
        for seq in 1..=5 {
            conn.execute(
                "INSERT INTO events_recent (match_id, seq, at_ms, frame) VALUES (?1, ?2, 1, ?3)",
                rusqlite::params![id, seq, format!(r#"{{"seq":{seq}}}"#)],
            )
            .unwrap();
        }
        conn.execute(
            "INSERT INTO events SELECT match_id, seq, at_ms, frame FROM events_recent \
             WHERE seq <= 3",
            [],
        )
        .unwrap();
        drop(conn);
        assert_eq!(rows_of_events(&file), (3, 5));
        let store = Store::open(&url).await.unwrap();
        assert_eq!(rows_of_events(&file), (5, 0));
        let stored = store.load(&id).await.unwrap().unwrap();
        assert_eq!(seqs(&stored.frames), vec![1, 2, 3, 4, 5]);
        assert!(store.append(&id, events(5, 1), None).await.is_err());
        store.append(&id, events(6, 1), None).await.unwrap();
        assert_eq!(rows_of_events(&file), (5, 1));
    }

    /// A SQLite writer of its own on the file of a fresh store, and a match created in it.
    async fn sqlite_writer() -> (Store, Writer, String) {
        let (file, store) = sqlite_store().await;
        let id = crate::tokens::new_id();
        store.create_match(&id, &spec(), 5).await.unwrap();
        let mut writer = SqliteWriter::open(file, Duration::ZERO, MOVE_AFTER).unwrap();
        // The store's readers look at what its writer appended; this one stands in for it.
        writer.recent.last_seq = store.recent.clone().expect("SQLite");
        let writer = Writer::Sqlite(Box::new(writer));
        (store, writer, id)
    }

    #[tokio::test]
    async fn a_batch_of_any_size_runs_the_same_few_prepared_statements() {
        let (store, mut writer, id) = sqlite_writer().await;
        let mut seq = 1;
        // Batches that fill a statement's rows once, not quite, and many times over.
        for size in [1, SQLITE_ROWS, SQLITE_ROWS + 1, 10 * SQLITE_ROWS + 3] {
            let finished = (size == 1).then(|| Finish {
                at_ms: 7,
                summary: "{}".into(),
            });
            let other = crate::tokens::new_id();
            let writes = [
                Write::Create {
                    id: other.clone(),
                    created_ms: 5,
                    spec: serde_json::to_string(&spec()).unwrap(),
                },
                Write::Append {
                    match_id: id.clone(),
                    events: events(seq, size as u64),
                    finished,
                },
                Write::Append {
                    match_id: other,
                    events: events(1, size as u64),
                    finished: None,
                },
            ];
            assert!(writer
                .commit(&writes.iter().collect::<Vec<_>>())
                .await
                .is_ok());
            seq += size as u64;
        }
        // One statement for matches, one for events, one for the finished, and the look-up
        // of a match's last number (see `numbered`): however many rows.
        assert_eq!(prepared_statements(&writer), 4);
        let stored = store.load(&id).await.unwrap().unwrap();
        let seqs: Vec<u64> = stored
            .frames
            .iter()
            .map(|f| {
                serde_json::from_str::<serde_json::Value>(f).unwrap()["seq"]
                    .as_u64()
                    .unwrap()
            })
            .collect();
        assert_eq!(seqs, (1..seq).collect::<Vec<_>>());
    }

    /// A job appending nothing to `match_id`, queued at `queued`.
    fn job(match_id: &str, queued: Instant) -> Job {
        answered_job(match_id, queued).0
    }

    /// [`job`], and where its answer arrives.
    fn answered_job(
        match_id: &str,
        queued: Instant,
    ) -> (Job, oneshot::Receiver<Result<(), String>>) {
        let (done, answer) = oneshot::channel();
        let write = Write::Append {
            match_id: match_id.into(),
            events: Vec::new(),
            finished: None,
        };
        (
            Job {
                write,
                done,
                queued,
            },
            answer,
        )
    }

    fn match_ids(batch: &[Job]) -> Vec<&str> {
        batch.iter().map(|job| match_of(&job.write)).collect()
    }

    #[test]
    fn a_small_batch_takes_in_the_writes_that_arrive_while_it_waits() {
        let (queue, mut rx) = mpsc::channel(16);
        queue.try_send(job("b", Instant::now())).unwrap();
        // "c" arrives while "a" waits: well within the wait, however slow the machine.
        let wait = Duration::from_secs(1);
        let sender = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(50));
            queue.try_send(job("c", Instant::now())).unwrap();
        });
        let mut batch = vec![job("a", Instant::now())];
        gather(&mut rx, &mut batch, wait);
        sender.join().unwrap();
        assert_eq!(match_ids(&batch), ["a", "b", "c"]);
        assert!(
            batch[0].queued.elapsed() >= wait,
            "the oldest write waited its time"
        );
        assert!(rx.try_recv().is_err());
    }

    #[test]
    fn a_batch_large_enough_or_waited_long_enough_is_committed_at_once() {
        let wait = Duration::from_millis(1);
        let (queue, mut rx) = mpsc::channel(16);
        queue.try_send(job("late", Instant::now())).unwrap();
        // A backlog...
        let mut batch: Vec<Job> = (0..WAIT_BELOW).map(|_| job("m", Instant::now())).collect();
        gather(&mut rx, &mut batch, wait);
        assert_eq!(batch.len(), WAIT_BELOW);
        // ...a write that has waited its time already (behind the last commit)...
        let long_ago = Instant::now().checked_sub(2 * wait).unwrap();
        let mut batch = vec![job("old", long_ago)];
        gather(&mut rx, &mut batch, wait);
        assert_eq!(match_ids(&batch), ["old"]);
        // ...and no wait at all leave the queue as it was.
        let mut batch = vec![job("new", Instant::now())];
        gather(&mut rx, &mut batch, Duration::ZERO);
        assert_eq!(match_ids(&batch), ["new"]);
        assert_eq!(match_of(&rx.try_recv().unwrap().write), "late");
    }

    #[tokio::test]
    async fn a_sqlite_database_that_is_not_a_file_written_with_the_servers_locks_is_refused() {
        let file = fresh_sqlite_file();
        for url in [
            "sqlite::memory:".to_string(),
            "sqlite://".to_string(),
            format!("sqlite://{}?mode=memory", file.display()),
            format!("sqlite://{}?mode=memor%79", file.display()),
            format!("sqlite://{}?mode=ro", file.display()),
            format!("sqlite://{}?immutable=true", file.display()),
            format!("sqlite://{}?vfs=unix-none", file.display()),
        ] {
            let refused = Store::open(&url).await.err();
            assert!(refused.is_some(), "{url} was opened");
        }
        assert!(!file.exists(), "a refused URL created its file");
        let store = Store::open(&format!("sqlite://{}?mode=rwc", file.display()))
            .await
            .unwrap();
        let id = crate::tokens::new_id();
        store.create_match(&id, &spec(), 5).await.unwrap();
        assert!(store.load(&id).await.unwrap().is_some());
    }

    #[tokio::test]
    async fn a_writer_that_let_go_of_its_caches_writes_on() {
        let (store, mut writer, id) = sqlite_writer().await;
        let append = |from| Write::Append {
            match_id: id.clone(),
            events: events(from, 3),
            finished: None,
        };
        assert!(writer.commit(&[&append(1)]).await.is_ok());
        // The events' statement and the look-up of the match's last number.
        assert_eq!(
            prepared_statements(&writer),
            2,
            "the batch's statements are kept for the next one"
        );
        writer.release_memory();
        assert_eq!(prepared_statements(&writer), 0);
        // The connection itself stays open, and the next batch prepares its statement again
        // (the match's last number is known to the writer by now).
        assert!(writer.commit(&[&append(4)]).await.is_ok());
        assert_eq!(prepared_statements(&writer), 1);
        let stored = store.load(&id).await.unwrap().unwrap();
        assert_eq!(stored.frames.len(), 6);
    }

    #[tokio::test]
    async fn the_wal_starts_again_and_stays_small_while_commits_go_on() {
        let (file, store) = sqlite_store().await;
        let id = crate::tokens::new_id();
        store.create_match(&id, &spec(), 5).await.unwrap();
        let restarts_before = wal_restarts(&file);
        let per_commit = 20;
        // Two starts are due after this many rows and one copy more; a copy still under way
        // when its successor is due delays the next, so allow three times as many.
        let due = ((2 * COPIES_PER_RESTART + 1) * CHECKPOINT_ROWS) as u64 / per_commit;
        let mut commits = 0;
        while wal_restarts(&file) < restarts_before + 2 && commits < 3 * due {
            store
                .append(&id, events(1 + commits * per_commit, per_commit), None)
                .await
                .unwrap();
            commits += 1;
        }
        assert!(
            wal_restarts(&file) >= restarts_before + 2,
            "the WAL never started again: {} -> {} after {commits} commits",
            restarts_before,
            wal_restarts(&file)
        );
        let wal_bytes = std::fs::metadata(file.with_extension("db-wal"))
            .unwrap()
            .len();
        assert!(
            wal_bytes <= WAL_LIMIT_BYTES,
            "the WAL grew to {wal_bytes} bytes"
        );
        let stored = store.load(&id).await.unwrap().unwrap();
        assert_eq!(stored.frames.len() as u64, commits * per_commit);
    }

    #[tokio::test]
    async fn finished_matches_page_newest_first() {
        for store in databases().await {
            let mut ids = Vec::new();
            for i in 0..7u64 {
                let id = format!("page-{}-{i}", crate::tokens::new_id());
                store.create_match(&id, &spec(), 1).await.unwrap();
                let finish = Finish {
                    // Two share a finish time: the id breaks the tie.
                    at_ms: 9_000_000_000_000 + i.min(5),
                    summary: format!(r#"{{"i":{i}}}"#),
                };
                store.append(&id, events(1, 1), Some(finish)).await.unwrap();
                ids.push(id);
            }
            let mut seen = Vec::new();
            let mut cursor = None;
            loop {
                let page = store.finished(cursor.clone(), 3).await.unwrap();
                if page.is_empty() {
                    break;
                }
                let last = page.last().unwrap();
                cursor = Some((last.finished_ms, last.id.clone()));
                seen.extend(page.into_iter().filter(|l| ids.contains(&l.id)));
                if seen.len() == ids.len() {
                    break;
                }
            }
            let mut expected = ids.clone();
            expected.reverse();
            // The two at the same time come by id, descending.
            expected.sort_by(|a, b| {
                let t = |id: &String| ids.iter().position(|x| x == id).unwrap().min(5);
                t(b).cmp(&t(a)).then(b.cmp(a))
            });
            let got: Vec<String> = seen.iter().map(|l| l.id.clone()).collect();
            assert_eq!(got, expected);
            assert!(seen.iter().all(|l| l.summary.is_some()));
        }
    }
}
