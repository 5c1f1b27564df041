//! `hakem-server`: the match server binary.

use std::net::SocketAddr;

use clap::Parser;

/// jemalloc rather than the system's allocator: a server allocates and frees small buffers for
/// every frame of every connection, and the system's allocator spent a seventh of the server's
/// CPU doing it under load (see docs/performance.md).
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

/// Freed pages go back to the system within about a second, by jemalloc's own background
/// thread, so that a server whose matches ended shrinks again without being asked. jemalloc
/// is also the C library's `malloc`, so SQLite's memory is returned the same way; on the
/// systems where it cannot be (Apple's, Android, DragonFly) its functions keep the prefix
/// `_rjem_`, and so does the name of their settings.
#[allow(non_upper_case_globals)]
#[cfg_attr(
    not(any(
        target_vendor = "apple",
        target_os = "android",
        target_os = "dragonfly"
    )),
    export_name = "malloc_conf"
)]
#[cfg_attr(
    any(
        target_vendor = "apple",
        target_os = "android",
        target_os = "dragonfly"
    ),
    export_name = "_rjem_malloc_conf"
)]
pub static malloc_conf: &[u8] = b"background_thread:true,dirty_decay_ms:1000,muzzy_decay_ms:0\0";
use tracing_subscriber::EnvFilter;

#[derive(Parser)]
#[command(
    name = "hakem-server",
    version,
    about = "The hakem tournament game server"
)]
struct Args {
    /// Address to listen on; port 0 picks a free port (printed when ready).
    #[arg(long, env = "HAKEM_LISTEN", default_value = "127.0.0.1:8080")]
    listen: SocketAddr,
    /// Threads that run rooms and connections. 0 (the default) takes one per core; 1 runs them
    /// all on one thread, with no hand-offs between threads: a little less CPU for a longer
    /// tail when the machine is busy (docs/performance.md).
    #[arg(long, env = "HAKEM_WORKERS", default_value_t = 0)]
    workers: usize,
    /// Where matches are stored: sqlite://FILE (created if missing) or postgres://...
    #[arg(long, env = "HAKEM_DATABASE", default_value = "sqlite://hakem.db")]
    database: String,
    /// The organizer's token. Without one the server makes one at its first start, stores it,
    /// and prints it once.
    #[arg(long, env = "HAKEM_ADMIN_TOKEN", hide_env_values = true)]
    admin_token: Option<String>,
    /// Log lines as JSON objects.
    #[arg(long, env = "HAKEM_LOG_JSON")]
    log_json: bool,
    /// Messages a second a client may send on average (beyond it, the connection is read no
    /// faster and told `rate_limited` once; a whole burst ahead of it, it is closed).
    #[arg(long, env = "HAKEM_RATE_LIMIT", default_value_t = 20.0)]
    rate_limit: f64,
    /// Messages a client may send in one burst.
    #[arg(long, env = "HAKEM_RATE_BURST", default_value_t = 40.0)]
    rate_burst: f64,
    /// Frames queued for a client that does not read before it is disconnected.
    #[arg(long, env = "HAKEM_OUTBOX_FRAMES", default_value_t = 1024)]
    outbox_frames: usize,
    /// The kernel send buffer of each client socket, in bytes (the system default if unset).
    #[arg(long)]
    socket_send_buffer: Option<usize>,
    /// Seconds a room whose round is over stays in memory before it retires (its match is
    /// then read from the database).
    #[arg(
        long,
        env = "HAKEM_RETIRE_AFTER",
        value_name = "SECONDS",
        default_value_t = 60
    )]
    retire_after: u64,
    /// On SQLite, microseconds a commit of a few writes waits, from its oldest write's
    /// arrival, for more writes to share it: less CPU for a little more latency (0: none; at
    /// most 5000).
    #[arg(
        long,
        env = "HAKEM_COMMIT_WAIT",
        value_name = "MICROSECONDS",
        default_value_t = 300,
        value_parser = clap::value_parser!(u64).range(0..=5_000)
    )]
    commit_wait: u64,
    /// Hours after which a match still waiting for its first set, with nobody at it, expires.
    #[arg(
        long,
        env = "HAKEM_EXPIRE_AFTER",
        value_name = "HOURS",
        default_value_t = 24.0
    )]
    expire_after: f64,
    /// Events of each live match kept in memory for clients that come back (older ones are
    /// read from the database).
    #[arg(
        long,
        env = "HAKEM_ROOM_HISTORY",
        value_name = "EVENTS",
        default_value_t = 256
    )]
    room_history: usize,
    /// Connections open at once in all [default: 50000, or fewer if the open-file limit
    /// allows fewer; 0: as many as it allows].
    #[arg(long, env = "HAKEM_MAX_CONNECTIONS")]
    max_connections: Option<usize>,
    /// Connections open at once from one address (0: no limit).
    #[arg(long, env = "HAKEM_MAX_CONNECTIONS_PER_IP", default_value_t = 1_000)]
    max_connections_per_ip: usize,
    /// Seconds a client has to send a whole HTTP request head (WebSocket upgrades included).
    #[arg(
        long,
        env = "HAKEM_HEADER_TIMEOUT",
        value_name = "SECONDS",
        default_value_t = 10
    )]
    header_timeout: u64,
    /// Messages a second from one address over all its connections (0: no limit).
    #[arg(long, env = "HAKEM_IP_RATE_LIMIT", default_value_t = 200)]
    ip_rate_limit: u32,
    /// Messages one address may send in one burst.
    #[arg(long, env = "HAKEM_IP_RATE_BURST", default_value_t = 400)]
    ip_rate_burst: u32,
    /// Matches guests at one address may create in one burst.
    #[arg(long, env = "HAKEM_GUEST_CREATE_BURST", default_value_t = 30)]
    guest_create_burst: u32,
    /// Matches guests at one address may create a minute after the burst (0: no limit).
    #[arg(long, env = "HAKEM_GUEST_CREATES_PER_MINUTE", default_value_t = 10)]
    guest_creates_per_minute: u32,
    /// Matches created by guests at one address that may wait for their players at once
    /// (0: no limit).
    #[arg(long, env = "HAKEM_GUEST_WAITING_PER_IP", default_value_t = 50)]
    guest_waiting_per_ip: usize,
    /// An address the per-address limits do not apply to, such as a reverse proxy in front or
    /// a load test's machine (repeatable).
    #[arg(
        long = "unlimited-ip",
        value_name = "IP",
        env = "HAKEM_UNLIMITED_IPS",
        value_delimiter = ','
    )]
    unlimited_ips: Vec<std::net::IpAddr>,
    /// A web origin (`https://host[:port]`) besides the server's own whose pages may open
    /// `/ws` (repeatable).
    #[arg(
        long = "allowed-origin",
        value_name = "ORIGIN",
        env = "HAKEM_ALLOWED_ORIGINS",
        value_delimiter = ','
    )]
    allowed_origins: Vec<String>,
    /// Whether guests may make accounts of their own: `closed` (only the organizer makes
    /// accounts), `open`, or `approval` (each waits for the organizer's approval).
    #[arg(long, env = "HAKEM_REGISTRATION", default_value = "closed")]
    registration: hakem_server::Registration,
    /// Logins and registrations from one address a minute (0: no limit).
    #[arg(long, env = "HAKEM_LOGINS_PER_MINUTE", default_value_t = 10)]
    logins_per_minute: u32,
    /// Joins a cluster through this NATS server (`nats://host:4222`, several comma-separated):
    /// rooms are then owned by one node at a time and reachable from every node. Needs a
    /// PostgreSQL database shared by the nodes. Without it the server runs alone.
    #[arg(long, env = "HAKEM_NATS", value_name = "URL")]
    nats: Option<String>,
    /// This node's name in the cluster (letters, digits, - and _) [default: the host name].
    #[arg(long, env = "HAKEM_NODE")]
    node: Option<String>,
    /// Milliseconds after which a node that stopped renewing its lease is presumed dead and
    /// its rooms are taken over by the others.
    #[arg(long, env = "HAKEM_LEASE_TTL_MS", default_value_t = 3000)]
    lease_ttl_ms: u64,
}

/// The host's name, as the node's name by default.
fn host_name() -> String {
    std::fs::read_to_string("/etc/hostname")
        .ok()
        .map(|name| name.trim().to_string())
        .filter(|name| !name.is_empty())
        .unwrap_or_else(|| "hakem".to_string())
}

/// Raises the soft open-file limit to the hard one (each connection is a descriptor) and
/// returns it.
fn open_file_limit() -> Option<u64> {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit and setrlimit only read and write the struct passed in.
    unsafe {
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) != 0 {
            return None;
        }
        if limit.rlim_cur < limit.rlim_max {
            let raised = libc::rlimit {
                rlim_cur: limit.rlim_max,
                rlim_max: limit.rlim_max,
            };
            if libc::setrlimit(libc::RLIMIT_NOFILE, &raised) == 0 {
                limit = raised;
            }
        }
    }
    Some(limit.rlim_cur)
}

fn main() -> std::process::ExitCode {
    let args = Args::parse();
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let workers = match args.workers {
        0 => cores,
        n => n,
    };
    let runtime = match workers {
        1 => tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build(),
        n => tokio::runtime::Builder::new_multi_thread()
            .worker_threads(n)
            .enable_all()
            .build(),
    };
    match runtime {
        Ok(runtime) => runtime.block_on(serve(args)),
        Err(e) => {
            eprintln!("hakem-server: cannot start: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}

async fn serve(args: Args) -> std::process::ExitCode {
    let filter = EnvFilter::try_from_env("HAKEM_LOG").unwrap_or_else(|_| EnvFilter::new("info"));
    // Written by a thread of their own: a slow reader of the log never holds up the rooms.
    let (writer, _flush_logs) =
        hakem_server::logs::Logs::to(std::io::stderr(), hakem_server::logs::QUEUED_LINES);
    let logs = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(writer);
    if args.log_json {
        logs.json().init();
    } else {
        logs.init();
    }

    let metrics = match hakem_server::http::metrics_recorder() {
        Ok(handle) => {
            tokio::spawn(hakem_server::http::metrics_upkeep(handle.clone()));
            Some(handle)
        }
        Err(e) => {
            tracing::warn!(error = %e, "metrics disabled");
            None
        }
    };
    let node = args
        .nats
        .as_ref()
        .map(|_| args.node.clone().unwrap_or_else(host_name));
    let settings = hakem_server::store::StoreSettings {
        in_cluster: node.is_some(),
        commit_wait: std::time::Duration::from_micros(args.commit_wait),
        ..Default::default()
    };
    let store = match hakem_server::store::Store::open_with(&args.database, settings).await {
        Ok(store) => store,
        Err(e) => {
            eprintln!(
                "hakem-server: cannot open the database {}: {e}",
                args.database
            );
            return std::process::ExitCode::FAILURE;
        }
    };
    let admin_token = match args.admin_token {
        Some(token) if !token.is_empty() => token,
        _ => {
            let fresh = hakem_server::new_token();
            match store.setting_or_insert("admin_token", &fresh).await {
                Ok(token) => {
                    if token == fresh {
                        eprintln!("hakem-server organizer token (shown once, keep it): {token}");
                    }
                    token
                }
                Err(e) => {
                    eprintln!("hakem-server: {e}");
                    return std::process::ExitCode::FAILURE;
                }
            }
        }
    };
    let listener = match tokio::net::TcpListener::bind(args.listen).await {
        Ok(listener) => listener,
        Err(e) => {
            eprintln!("hakem-server: cannot listen on {}: {e}", args.listen);
            return std::process::ExitCode::FAILURE;
        }
    };
    let addr = listener.local_addr().unwrap_or(args.listen);
    // Descriptors kept back from connections: the database, the listener, logs.
    const RESERVED_FILES: u64 = 64;
    let by_files = open_file_limit().map_or(usize::MAX, |n| {
        n.saturating_sub(RESERVED_FILES).max(16) as usize
    });
    let max_connections = match args.max_connections {
        None => by_files.min(50_000),
        Some(0) => by_files,
        Some(asked) => {
            if by_files < asked {
                tracing::warn!(
                    max_connections = by_files,
                    "the open-file limit allows fewer connections than --max-connections"
                );
            }
            asked.min(by_files)
        }
    };
    let limits = hakem_server::Limits {
        rate_per_sec: args.rate_limit.max(0.1),
        rate_burst: args.rate_burst.max(1.0),
        outbox_frames: args.outbox_frames.max(8),
        socket_send_buffer: args.socket_send_buffer,
        address: hakem_server::guard::AddressLimits {
            max_connections,
            max_connections_per_ip: args.max_connections_per_ip,
            header_read_timeout: std::time::Duration::from_secs(args.header_timeout.clamp(1, 3600)),
            ip_rate_per_sec: args.ip_rate_limit,
            ip_rate_burst: args.ip_rate_burst.max(1),
            guest_create_burst: args.guest_create_burst.max(1),
            guest_create_per_minute: args.guest_creates_per_minute,
            guest_waiting_per_ip: args.guest_waiting_per_ip,
            logins_per_minute: args.logins_per_minute,
            unlimited: args.unlimited_ips,
        },
        allowed_origins: args.allowed_origins,
        registration: args.registration,
        ..hakem_server::Limits::default()
    };
    let expire_hours = if args.expire_after.is_finite() {
        args.expire_after.clamp(0.0, 24.0 * 365.0)
    } else {
        24.0
    };
    let rooms = hakem_server::RoomSettings {
        retire_after: std::time::Duration::from_secs(args.retire_after.min(7 * 86_400)),
        expire_after: std::time::Duration::from_secs_f64(expire_hours * 3600.0),
        history: args.room_history.clamp(1, 1 << 20),
    };
    let app = hakem_server::App::new(admin_token, Some(store), limits, rooms);
    if let Err(e) = app.load_accounts().await {
        eprintln!("hakem-server: cannot load accounts: {e}");
        return std::process::ExitCode::FAILURE;
    }
    if let (Some(url), Some(node)) = (&args.nats, &node) {
        // In a cluster, the live matches are taken by whichever node finds them orphaned.
        let settings = hakem_server::cluster::Settings {
            url: url.clone(),
            node: node.clone(),
            ttl: std::time::Duration::from_millis(args.lease_ttl_ms.clamp(500, 60_000)),
        };
        let joined = match hakem_server::cluster::Cluster::join(&settings).await {
            Ok(cluster) => app.join_cluster(cluster).await,
            Err(e) => Err(e),
        };
        if let Err(e) = joined {
            eprintln!("hakem-server: cannot join the cluster: {e}");
            return std::process::ExitCode::FAILURE;
        }
        tracing::info!(%node, nats = %url, "joined the cluster");
    } else {
        match app.restore_live_matches().await {
            Ok(0) => {}
            Ok(count) => tracing::info!(count, "live matches restored"),
            Err(e) => {
                eprintln!("hakem-server: cannot restore matches: {e}");
                return std::process::ExitCode::FAILURE;
            }
        }
    }
    app.run_upkeep();
    match app.run_results().await {
        Ok(0) => {}
        Ok(count) => tracing::info!(count, "tournaments loaded"),
        Err(e) => {
            eprintln!("hakem-server: cannot load tournaments: {e}");
            return std::process::ExitCode::FAILURE;
        }
    }
    // The signal handlers are in place before the ready line: a SIGTERM sent as soon as the
    // line is read must stop the server cleanly, not kill it.
    let signal = shutdown_signal();
    let stopping = app.clone();
    let shutdown = async move {
        signal.await;
        // A node of a cluster hands its rooms over before it stops taking frames.
        if let Some(cluster) = stopping.cluster() {
            cluster.leave(&stopping).await;
        }
    };
    println!("hakem-server listening on http://{addr}");
    let workers = tokio::runtime::Handle::current().metrics().num_workers();
    tracing::info!(%addr, workers, "listening");
    match hakem_server::http::serve(listener, app, metrics, shutdown).await {
        Ok(()) => {
            tracing::info!("shut down");
            std::process::ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("hakem-server: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}

/// Ctrl-C or SIGTERM. The handlers are installed when this is called, not when the future is
/// first polled.
#[cfg(unix)]
fn shutdown_signal() -> impl std::future::Future<Output = ()> {
    use tokio::signal::unix::{signal, SignalKind};
    let term = signal(SignalKind::terminate()).ok();
    let interrupt = signal(SignalKind::interrupt()).ok();
    async move {
        let wait = |stream: Option<tokio::signal::unix::Signal>| async move {
            match stream {
                Some(mut stream) => {
                    stream.recv().await;
                }
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            _ = wait(term) => {},
            _ = wait(interrupt) => {},
        }
    }
}

#[cfg(not(unix))]
fn shutdown_signal() -> impl std::future::Future<Output = ()> {
    async {
        let _ = tokio::signal::ctrl_c().await;
    }
}
