//! Durable storage of matches and their events, in SQLite (the default, an embedded file) or
//! PostgreSQL, with the same schema and migrations.
//!
//! Rooms append events through one writer task that commits everything waiting in a single
//! transaction (group commit): a room waits for its commit before anyone is told, but many
//! rooms share one round trip to the disk.

use std::str::FromStr;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use sqlx::postgres::{PgPool, PgPoolOptions};
use sqlx::sqlite::{
    SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqlitePoolOptions, SqliteSynchronous,
};
use sqlx::Row;
use tokio::sync::{mpsc, oneshot};

use hakem_protocol::{ClockConfig, HouseBot, PerSeat};

/// The schema, one step per version; applied in order, each once.
const MIGRATIONS: &[(i64, &str)] = &[
    (1, include_str!("../migrations/0001_matches_events.sql")),
    (2, include_str!("../migrations/0002_accounts.sql")),
    (3, include_str!("../migrations/0003_tournaments.sql")),
];

/// Appends waiting for the writer; a full queue makes rooms wait (never drops an event).
const WRITER_QUEUE: usize = 4096;
/// The most appends committed in one transaction.
const MAX_BATCH: usize = 512;

#[derive(Debug)]
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
}

/// A stored account.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoredAccount {
    pub name: String,
    pub kind: String,
    pub token: String,
}

/// A stored match: its spec and its event frames (the JSON sent to clients), in `seq` order.
#[derive(Debug)]
pub struct StoredMatch {
    pub id: String,
    pub spec: MatchSpec,
    pub frames: Vec<String>,
}

/// One event to append.
#[derive(Debug)]
pub struct NewEvent {
    pub seq: u64,
    pub at_ms: u64,
    pub frame: String,
}

struct Append {
    match_id: String,
    events: Vec<NewEvent>,
    finished: bool,
    done: oneshot::Sender<Result<(), String>>,
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
    writer: mpsc::Sender<Append>,
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

impl Store {
    /// Opens (creating if needed) the database at `url`, `sqlite://FILE` or `postgres://...`,
    /// and brings its schema up to date.
    pub async fn open(url: &str) -> Result<Store, StoreError> {
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
            let options = SqliteConnectOptions::from_str(url)?
                .create_if_missing(true)
                .journal_mode(SqliteJournalMode::Wal)
                .synchronous(SqliteSynchronous::Full)
                .busy_timeout(Duration::from_secs(10));
            let pool = SqlitePoolOptions::new()
                .max_connections(4)
                .connect_with(options)
                .await?;
            Db::Sqlite(pool)
        } else {
            return Err(StoreError(format!(
                "unsupported database URL {url:?} (use sqlite://FILE or postgres://...)"
            )));
        };
        migrate(&db).await?;
        let (writer, queue) = mpsc::channel(WRITER_QUEUE);
        tokio::spawn(write_loop(db.clone(), queue));
        Ok(Store { db, writer })
    }

    /// Records a new match.
    pub async fn create_match(
        &self,
        id: &str,
        spec: &MatchSpec,
        created_ms: u64,
    ) -> Result<(), StoreError> {
        let spec = serde_json::to_string(spec).map_err(|e| StoreError(e.to_string()))?;
        let sql = sql_for(
            &self.db,
            "INSERT INTO matches (id, created_ms, spec, finished) VALUES ($1, $2, $3, 0)",
        );
        on_db!(&self.db, pool => {
            sqlx::query(&sql)
                .bind(id)
                .bind(created_ms as i64)
                .bind(&spec)
                .execute(pool)
                .await?;
        });
        Ok(())
    }

    /// Appends events of one match and waits until they are committed. `finished` marks the
    /// match as over (it is then no longer restored as a live match).
    pub async fn append(
        &self,
        match_id: &str,
        events: Vec<NewEvent>,
        finished: bool,
    ) -> Result<(), StoreError> {
        let (done, committed) = oneshot::channel();
        let append = Append {
            match_id: match_id.to_string(),
            events,
            finished,
            done,
        };
        self.writer
            .send(append)
            .await
            .map_err(|_| StoreError("the writer has stopped".into()))?;
        committed
            .await
            .map_err(|_| StoreError("the writer has stopped".into()))?
            .map_err(StoreError)
    }

    /// Every match that is not finished, with its events.
    pub async fn live_matches(&self) -> Result<Vec<StoredMatch>, StoreError> {
        let sql = sql_for(
            &self.db,
            "SELECT id FROM matches WHERE finished = 0 ORDER BY created_ms",
        );
        let ids: Vec<String> = on_db!(&self.db, pool => {
            sqlx::query(&sql)
                .fetch_all(pool)
                .await?
                .iter()
                .map(|row| row.try_get::<String, _>(0))
                .collect::<Result<_, _>>()?
        });
        let mut out = Vec::with_capacity(ids.len());
        for id in ids {
            if let Some(stored) = self.load(&id).await? {
                out.push(stored);
            }
        }
        Ok(out)
    }

    /// One match with its events, finished or not.
    pub async fn load(&self, id: &str) -> Result<Option<StoredMatch>, StoreError> {
        let sql = sql_for(&self.db, "SELECT spec FROM matches WHERE id = $1");
        let spec: Option<String> = on_db!(&self.db, pool => {
            match sqlx::query(&sql).bind(id).fetch_optional(pool).await? {
                Some(row) => Some(row.try_get::<String, _>(0)?),
                None => None,
            }
        });
        let Some(spec) = spec else {
            return Ok(None);
        };
        let spec: MatchSpec = serde_json::from_str(&spec)
            .map_err(|e| StoreError(format!("match {id}: bad spec: {e}")))?;
        let sql = sql_for(
            &self.db,
            "SELECT frame FROM events WHERE match_id = $1 ORDER BY seq",
        );
        let frames: Vec<String> = on_db!(&self.db, pool => {
            sqlx::query(&sql)
                .bind(id)
                .fetch_all(pool)
                .await?
                .iter()
                .map(|row| row.try_get::<String, _>(0))
                .collect::<Result<_, _>>()?
        });
        Ok(Some(StoredMatch {
            id: id.to_string(),
            spec,
            frames,
        }))
    }

    /// The ids of every stored match, newest first, at most `limit`.
    pub async fn match_ids(&self, limit: u32) -> Result<Vec<String>, StoreError> {
        let sql = sql_for(
            &self.db,
            "SELECT id FROM matches ORDER BY created_ms DESC LIMIT $1",
        );
        Ok(on_db!(&self.db, pool => {
            sqlx::query(&sql)
                .bind(i64::from(limit))
                .fetch_all(pool)
                .await?
                .iter()
                .map(|row| row.try_get::<String, _>(0))
                .collect::<Result<_, _>>()?
        }))
    }

    /// Records a new account; an error if the name is taken.
    pub async fn create_account(
        &self,
        account: &StoredAccount,
        created_ms: u64,
    ) -> Result<(), StoreError> {
        let sql = sql_for(
            &self.db,
            "INSERT INTO accounts (name, kind, token, created_ms) VALUES ($1, $2, $3, $4)",
        );
        on_db!(&self.db, pool => {
            sqlx::query(&sql)
                .bind(&account.name)
                .bind(&account.kind)
                .bind(&account.token)
                .bind(created_ms as i64)
                .execute(pool)
                .await?;
        });
        Ok(())
    }

    pub async fn accounts(&self) -> Result<Vec<StoredAccount>, StoreError> {
        let sql = sql_for(
            &self.db,
            "SELECT name, kind, token FROM accounts ORDER BY name",
        );
        Ok(on_db!(&self.db, pool => {
            let rows = sqlx::query(&sql).fetch_all(pool).await?;
            let mut out = Vec::with_capacity(rows.len());
            for row in rows {
                out.push(StoredAccount {
                    name: row.try_get(0)?,
                    kind: row.try_get(1)?,
                    token: row.try_get(2)?,
                });
            }
            out
        }))
    }

    /// Writes a tournament's state, creating its row the first time.
    pub async fn save_tournament(
        &self,
        id: &str,
        state: &str,
        created_ms: u64,
    ) -> Result<(), StoreError> {
        let sql = sql_for(
            &self.db,
            "INSERT INTO tournaments (id, created_ms, state) VALUES ($1, $2, $3) \
             ON CONFLICT (id) DO UPDATE SET state = excluded.state",
        );
        on_db!(&self.db, pool => {
            sqlx::query(&sql)
                .bind(id)
                .bind(created_ms as i64)
                .bind(state)
                .execute(pool)
                .await?;
        });
        Ok(())
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
        let sql = sql_for(&self.db, "SELECT value FROM settings WHERE key = $1");
        Ok(on_db!(&self.db, pool => {
            match sqlx::query(&sql).bind(key).fetch_optional(pool).await? {
                Some(row) => Some(row.try_get::<String, _>(0)?),
                None => None,
            }
        }))
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
    on_db!(db, pool => {
        sqlx::raw_sql("CREATE TABLE IF NOT EXISTS hakem_migrations (version BIGINT PRIMARY KEY)")
            .execute(pool)
            .await?;
    });
    for (version, sql) in MIGRATIONS {
        let check = sql_for(
            db,
            "SELECT COUNT(*) FROM hakem_migrations WHERE version = $1",
        );
        let record = sql_for(db, "INSERT INTO hakem_migrations (version) VALUES ($1)");
        on_db!(db, pool => {
            let mut tx = pool.begin().await?;
            let applied: i64 = sqlx::query(&check)
                .bind(version)
                .fetch_one(&mut *tx)
                .await?
                .try_get(0)?;
            if applied == 0 {
                sqlx::raw_sql(sql).execute(&mut *tx).await?;
                sqlx::query(&record).bind(version).execute(&mut *tx).await?;
                tx.commit().await?;
                tracing::info!(version, "database schema migrated");
            }
        });
    }
    Ok(())
}

/// Takes appends off the queue and commits each batch in one transaction.
async fn write_loop(db: Db, mut queue: mpsc::Receiver<Append>) {
    let insert = sql_for(
        &db,
        "INSERT INTO events (match_id, seq, at_ms, frame) VALUES ($1, $2, $3, $4)",
    );
    let finish = sql_for(&db, "UPDATE matches SET finished = 1 WHERE id = $1");
    while let Some(first) = queue.recv().await {
        let mut batch = vec![first];
        while batch.len() < MAX_BATCH {
            match queue.try_recv() {
                Ok(append) => batch.push(append),
                Err(_) => break,
            }
        }
        let started = Instant::now();
        let result: Result<(), sqlx::Error> = on_db!(&db, pool => async {
            let mut tx = pool.begin().await?;
            for append in &batch {
                for event in &append.events {
                    sqlx::query(&insert)
                        .bind(&append.match_id)
                        .bind(event.seq as i64)
                        .bind(event.at_ms as i64)
                        .bind(&event.frame)
                        .execute(&mut *tx)
                        .await?;
                }
                if append.finished {
                    sqlx::query(&finish).bind(&append.match_id).execute(&mut *tx).await?;
                }
            }
            tx.commit().await
        }
        .await);
        metrics::histogram!("hakem_store_commit_seconds").record(started.elapsed().as_secs_f64());
        metrics::histogram!("hakem_store_batch_size").record(batch.len() as f64);
        let outcome = result.map_err(|e| e.to_string());
        if let Err(e) = &outcome {
            tracing::error!(error = %e, "store commit failed");
        }
        for append in batch {
            let _ = append.done.send(outcome.clone());
        }
    }
}
