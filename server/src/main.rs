//! `hakem-server`: the match server binary.

use std::net::SocketAddr;

use clap::Parser;
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
    /// Messages a second a client may send on average (more gets `rate_limited`, then the
    /// connection is closed).
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
}

#[tokio::main]
async fn main() -> std::process::ExitCode {
    let args = Args::parse();
    let filter = EnvFilter::try_from_env("HAKEM_LOG").unwrap_or_else(|_| EnvFilter::new("info"));
    let logs = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr);
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
    let store = match hakem_server::store::Store::open(&args.database).await {
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
    let limits = hakem_server::Limits {
        rate_per_sec: args.rate_limit.max(0.1),
        rate_burst: args.rate_burst.max(1.0),
        outbox_frames: args.outbox_frames.max(8),
        socket_send_buffer: args.socket_send_buffer,
        ..hakem_server::Limits::default()
    };
    let expire_hours = if args.expire_after.is_finite() {
        args.expire_after.clamp(0.0, 24.0 * 365.0)
    } else {
        24.0
    };
    let rooms = hakem_server::RoomSettings {
        retire_after: std::time::Duration::from_secs(args.retire_after),
        expire_after: std::time::Duration::from_secs_f64(expire_hours * 3600.0),
        history: args.room_history.clamp(1, 1 << 20),
    };
    let app = hakem_server::App::new(admin_token, Some(store), limits, rooms);
    if let Err(e) = app.load_accounts().await {
        eprintln!("hakem-server: cannot load accounts: {e}");
        return std::process::ExitCode::FAILURE;
    }
    match app.restore_live_matches().await {
        Ok(0) => {}
        Ok(count) => tracing::info!(count, "live matches restored"),
        Err(e) => {
            eprintln!("hakem-server: cannot restore matches: {e}");
            return std::process::ExitCode::FAILURE;
        }
    }
    app.run_upkeep();
    match app.run_tournaments().await {
        Ok(0) => {}
        Ok(count) => tracing::info!(count, "tournaments loaded"),
        Err(e) => {
            eprintln!("hakem-server: cannot load tournaments: {e}");
            return std::process::ExitCode::FAILURE;
        }
    }
    // The signal handlers are in place before the ready line: a SIGTERM sent as soon as the
    // line is read must stop the server cleanly, not kill it.
    let shutdown = shutdown_signal();
    println!("hakem-server listening on http://{addr}");
    tracing::info!(%addr, "listening");
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
