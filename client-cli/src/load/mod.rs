//! `hakem load`: what a server holds. N matches of a game with M spectators each are played
//! against a server (or the bare relay of `hakem relay`, for a baseline), with a think time, a
//! ramp, a warm-up and a measured window; the tool reports move latency (the mover's frame
//! written to the opponent's `moved` read) from an HDR histogram, moves a second, errors and,
//! given the server's PID, its CPU and memory. See docs/performance.md.

mod frame;
mod play;
mod system;

use std::process::{ExitCode, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use clap::Args;
use hakem_games::GameKind;
use hakem_protocol::Feature;
use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};
use tokio::sync::mpsc;
use tokio::time::Instant;

use crate::connection::{parse_server_url, DEFAULT_SERVER};
use play::{histogram, Run, Tally};

const FAILURE: u8 = 1;

fn parse_feature(text: &str) -> Result<Feature, String> {
    Feature::parse(text).ok_or_else(|| {
        let known: Vec<&str> = Feature::ALL.iter().map(|f| f.as_str()).collect();
        format!("{text:?} is not an extension: {}", known.join(", "))
    })
}

#[derive(Args, Clone)]
pub struct LoadArgs {
    /// The server's (or the relay's) WebSocket address.
    #[arg(long, value_name = "URL", default_value = DEFAULT_SERVER, value_parser = parse_server_url)]
    server: String,
    /// A token for `hello` (the organizer's: its matches are not held to a guest's limits).
    #[arg(
        long,
        value_name = "T",
        env = "HAKEM_LOAD_TOKEN",
        hide_env_values = true
    )]
    token: Option<String>,
    /// Matches played at once; each has two player connections.
    #[arg(long, value_name = "N", default_value_t = 100)]
    matches: u64,
    /// Spectators per match.
    #[arg(long, value_name = "M", default_value_t = 2)]
    spectators: u64,
    /// How many matches one spectator connection watches (to stay within the open-file limit).
    #[arg(long, value_name = "K", default_value_t = 1,
          value_parser = clap::value_parser!(u64).range(1..))]
    matches_per_spectator: u64,
    /// pentago, quoridor or pente.
    #[arg(long, value_name = "G", default_value = "pentago")]
    game: GameKind,
    /// The game's preset (the default one if not given).
    #[arg(long, value_name = "V")]
    variant: Option<String>,
    /// Mean thinking time before each move, in milliseconds (each is drawn from 0.5x to 1.5x).
    #[arg(long, value_name = "MS", default_value_t = 500)]
    think: u64,
    /// Each player's clock per set, in milliseconds; 0 is untimed.
    #[arg(long, value_name = "MS", default_value_t = 900_000)]
    clock_ms: u64,
    /// Seconds over which the matches start.
    #[arg(long, value_name = "S", default_value_t = 10)]
    ramp: u64,
    /// Seconds after the ramp before moves count.
    #[arg(long, value_name = "S", default_value_t = 10)]
    warmup: u64,
    /// The measured window, in seconds.
    #[arg(long, value_name = "S", default_value_t = 30)]
    duration: u64,
    /// Seconds to wait after every client has left before reading the server's memory again
    /// (matches still being played when the window closes are resigned, so that none is left).
    #[arg(long, value_name = "S", default_value_t = 0)]
    settle: u64,
    /// Extensions to ask for at hello, comma-separated (`batch,boards` as the project's own
    /// clients do; none: protocol v1 as it was).
    #[arg(long, value_name = "LIST", value_delimiter = ',', value_parser = parse_feature)]
    features: Vec<Feature>,
    /// A move seen later than this many milliseconds counts as late.
    #[arg(long, value_name = "MS", default_value_t = 100)]
    late_ms: u64,
    /// Matches with a short clock whose first mover never moves: how late sets end on time.
    #[arg(long, value_name = "K", default_value_t = 0)]
    flag_probes: u64,
    /// The clock of a flag probe, in milliseconds.
    #[arg(long, value_name = "MS", default_value_t = 1_000)]
    flag_clock_ms: u64,
    /// Connections that only say hello and stay, to measure what an idle one costs.
    #[arg(long, value_name = "N", default_value_t = 0)]
    idle: u64,
    /// The server's process id: its CPU and memory are read from /proc.
    #[arg(long, value_name = "PID")]
    pid: Option<u32>,
    /// Load processes to run (each with its share of the matches): one process may hold no
    /// more sockets than its open-file limit.
    #[arg(long, value_name = "N", default_value_t = 1,
          value_parser = clap::value_parser!(u64).range(1..=64))]
    processes: u64,
    /// Print the figures as one JSON object.
    #[arg(long)]
    json: bool,
    /// (Internal) run as worker I of --processes, printing raw tallies for the parent.
    #[arg(long, value_name = "I", hide = true)]
    worker: Option<u64>,
}

/// What one process measured, as a worker hands it to its parent.
#[derive(Serialize, Deserialize, Default)]
struct Counts {
    /// (microseconds, count) pairs.
    latency: Vec<(u64, u64)>,
    flag_lateness: Vec<(u64, u64)>,
    creation: Vec<(u64, u64)>,
    moves: u64,
    late: u64,
    lost: u64,
    errors: u64,
    connect_failures: u64,
    matches: u64,
    spectator_frames: u64,
    idle_opened: u64,
    tool_cpu_seconds: f64,
}

fn pairs(histogram: &Histogram<u64>) -> Vec<(u64, u64)> {
    histogram
        .iter_recorded()
        .map(|v| (v.value_iterated_to(), v.count_at_value()))
        .collect()
}

impl Counts {
    fn of(tally: &Tally, idle_opened: u64, tool_cpu_seconds: f64) -> Counts {
        Counts {
            latency: pairs(&tally.latency),
            flag_lateness: pairs(&tally.flag_lateness),
            creation: pairs(&tally.creation),
            moves: tally.moves,
            late: tally.late,
            lost: tally.lost,
            errors: tally.errors,
            connect_failures: tally.connect_failures,
            matches: tally.matches,
            spectator_frames: tally.spectator_frames,
            idle_opened,
            tool_cpu_seconds,
        }
    }

    fn add(&mut self, other: Counts) {
        self.latency.extend(other.latency);
        self.flag_lateness.extend(other.flag_lateness);
        self.creation.extend(other.creation);
        self.moves += other.moves;
        self.late += other.late;
        self.lost += other.lost;
        self.errors += other.errors;
        self.connect_failures += other.connect_failures;
        self.matches += other.matches;
        self.spectator_frames += other.spectator_frames;
        self.idle_opened += other.idle_opened;
        self.tool_cpu_seconds += other.tool_cpu_seconds;
    }
}

fn rebuild(pairs: &[(u64, u64)]) -> Histogram<u64> {
    let mut h = histogram();
    for &(value, count) in pairs {
        let _ = h.record_n(value, count);
    }
    h
}

/// The share of the plan that process `worker` of `processes` runs: every `processes`-th
/// match, spectator group and probe, starting at `worker`.
fn share(total: u64, worker: u64, processes: u64) -> u64 {
    (total + processes - 1 - worker) / processes
}

pub async fn run(args: LoadArgs) -> ExitCode {
    if args.worker.is_none() && args.processes > 1 {
        return parent(args).await;
    }
    let worker = args.worker.unwrap_or(0);
    let start = Instant::now();
    let ramp = Duration::from_secs(args.ramp);
    let window_start = start + ramp + Duration::from_secs(args.warmup);
    let window_end = window_start + Duration::from_secs(args.duration);
    let features = args.features.clone();
    let run = Arc::new(Run::new(
        args.server.clone(),
        args.token.clone(),
        features,
        args.game,
        args.variant.clone(),
        args.clock_ms,
        Duration::from_millis(args.think),
        Duration::from_millis(args.late_ms),
        (window_start, window_end),
    ));
    let mine = share(args.matches, worker, args.processes);
    let probes = share(args.flag_probes, worker, args.processes);
    let idle_count = share(args.idle, worker, args.processes);
    let monitor =
        (args.worker.is_none()).then(|| Monitor::start(args.pid, (window_start, window_end)));

    let mut tasks = Vec::new();
    let opened = Arc::new(AtomicU64::new(0));
    if idle_count > 0 {
        tasks.push(tokio::spawn(play::idle(
            run.clone(),
            idle_count as usize,
            opened.clone(),
        )));
    }
    // Spectator connections, each watching up to K slots' matches.
    let groups = (mine * args.spectators).div_ceil(args.matches_per_spectator);
    let mut spectator_tx = Vec::with_capacity(groups as usize);
    for _ in 0..groups {
        let (tx, rx) = mpsc::unbounded_channel();
        spectator_tx.push(tx);
        tasks.push(tokio::spawn(play::spectator(run.clone(), rx)));
    }
    let total_slots = mine + probes;
    for i in 0..mine {
        let at = start + ramp.mul_f64(i as f64 / total_slots.max(1) as f64);
        let watchers: Vec<_> = (0..args.spectators)
            .map(|k| {
                let n = i * args.spectators + k;
                spectator_tx[(n / args.matches_per_spectator) as usize].clone()
            })
            .collect();
        let run = run.clone();
        let index = worker + i * args.processes;
        tasks.push(tokio::spawn(async move {
            tokio::time::sleep_until(at).await;
            play::slot(run, index, watchers).await;
        }));
    }
    drop(spectator_tx);
    for i in 0..probes {
        let at = start + ramp.mul_f64((mine + i) as f64 / total_slots.max(1) as f64);
        let run = run.clone();
        let flag_ms = args.flag_clock_ms;
        tasks.push(tokio::spawn(async move {
            tokio::time::sleep_until(at).await;
            play::flag_probe(run, flag_ms).await;
        }));
    }
    // Bounded in time: whatever is still waiting a while after the window is stopped.
    let hard_stop = window_end + Duration::from_secs(15);
    for task in tasks {
        let abort = task.abort_handle();
        if tokio::time::timeout_at(hard_stop, task).await.is_err() {
            abort.abort();
        }
    }
    let tool_cpu = system::read(None).map_or(0.0, |r| r.cpu_seconds);
    let counts = {
        let tally = run.tally.lock().unwrap_or_else(|e| e.into_inner());
        Counts::of(&tally, opened.load(Ordering::Relaxed), tool_cpu)
    };
    if args.worker.is_some() {
        match serde_json::to_string(&counts) {
            Ok(text) => println_or_quit!("{text}"),
            Err(e) => {
                eprintln!("hakem load: {e}");
                return ExitCode::from(FAILURE);
            }
        }
        return ExitCode::SUCCESS;
    }
    let server = match monitor {
        Some(monitor) => monitor.finish(args.settle).await,
        None => None,
    };
    report(&args, counts, server)
}

/// Runs `--processes` copies of this command as workers and adds up what they measured.
async fn parent(args: LoadArgs) -> ExitCode {
    let Ok(exe) = std::env::current_exe() else {
        eprintln!("hakem load: cannot find this program to start its workers");
        return ExitCode::from(FAILURE);
    };
    let argv: Vec<String> = std::env::args().skip(1).collect();
    let mut children = Vec::new();
    for i in 0..args.processes {
        let child = tokio::process::Command::new(&exe)
            .args(&argv)
            .args(["--worker", &i.to_string()])
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .kill_on_drop(true)
            .spawn();
        match child {
            Ok(child) => children.push(child),
            Err(e) => {
                eprintln!("hakem load: cannot start a worker: {e}");
                return ExitCode::from(FAILURE);
            }
        }
    }
    let start = Instant::now();
    let window_start = start + Duration::from_secs(args.ramp + args.warmup);
    let window_end = window_start + Duration::from_secs(args.duration);
    let monitor = Monitor::start(args.pid, (window_start, window_end));
    let mut total = Counts::default();
    for child in children {
        let output = match child.wait_with_output().await {
            Ok(output) => output,
            Err(e) => {
                eprintln!("hakem load: a worker failed: {e}");
                return ExitCode::from(FAILURE);
            }
        };
        let text = String::from_utf8_lossy(&output.stdout);
        match serde_json::from_str::<Counts>(text.trim()) {
            Ok(counts) => total.add(counts),
            Err(e) => {
                eprintln!("hakem load: a worker's figures are unreadable: {e}");
                return ExitCode::from(FAILURE);
            }
        }
    }
    let server = monitor.finish(args.settle).await;
    report(&args, total, server)
}

/// The server's CPU and memory over the window, sampled once a second.
struct Monitor {
    task: Option<tokio::task::JoinHandle<()>>,
    pid: Option<u32>,
    /// The figures as of the latest sample.
    latest: Arc<std::sync::Mutex<Option<ServerFigures>>>,
}

#[derive(Serialize, Clone, Copy)]
struct ServerFigures {
    /// Before the run's first connection.
    rss_before_mib: f64,
    cpu_percent: f64,
    rss_start_mib: f64,
    rss_max_mib: f64,
    rss_end_mib: f64,
    /// After every client left and `--settle` seconds passed.
    rss_settled_mib: Option<f64>,
}

impl Monitor {
    fn start(pid: Option<u32>, (window_start, window_end): (Instant, Instant)) -> Monitor {
        let latest = Arc::new(std::sync::Mutex::new(None));
        let Some(pid) = pid else {
            return Monitor {
                task: None,
                pid,
                latest,
            };
        };
        let slot = latest.clone();
        let before = system::read(Some(pid)).map_or(0.0, |r| system::mib(r.rss_bytes));
        let task = tokio::spawn(async move {
            tokio::time::sleep_until(window_start).await;
            let Some(first) = system::read(Some(pid)) else {
                eprintln!("hakem load: cannot read process {pid} in /proc");
                return;
            };
            let mut max = first.rss_bytes;
            let mut ticker = tokio::time::interval(Duration::from_secs(1));
            ticker.tick().await;
            loop {
                let last = tokio::select! {
                    _ = ticker.tick() => false,
                    _ = tokio::time::sleep_until(window_end) => true,
                };
                let Some(now) = system::read(Some(pid)) else {
                    return;
                };
                max = max.max(now.rss_bytes);
                let figures = ServerFigures {
                    rss_before_mib: before,
                    cpu_percent: system::cpu_percent(&first, &now),
                    rss_start_mib: system::mib(first.rss_bytes),
                    rss_max_mib: system::mib(max),
                    rss_end_mib: system::mib(now.rss_bytes),
                    rss_settled_mib: None,
                };
                *slot.lock().unwrap_or_else(|e| e.into_inner()) = Some(figures);
                if last {
                    return;
                }
            }
        });
        Monitor {
            task: Some(task),
            pid: Some(pid),
            latest,
        }
    }

    async fn finish(self, settle: u64) -> Option<ServerFigures> {
        let _ = self.task?.await;
        let mut figures = self
            .latest
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take()?;
        if settle > 0 {
            tokio::time::sleep(Duration::from_secs(settle)).await;
            figures.rss_settled_mib = self
                .pid
                .and_then(|pid| system::read(Some(pid)))
                .map(|r| system::mib(r.rss_bytes));
        }
        Some(figures)
    }
}

#[derive(Serialize)]
struct Quantiles {
    count: u64,
    p50_ms: f64,
    p90_ms: f64,
    p99_ms: f64,
    p999_ms: f64,
    max_ms: f64,
}

fn quantiles(h: &Histogram<u64>) -> Quantiles {
    let ms = |us: u64| us as f64 / 1000.0;
    Quantiles {
        count: h.len(),
        p50_ms: ms(h.value_at_quantile(0.5)),
        p90_ms: ms(h.value_at_quantile(0.9)),
        p99_ms: ms(h.value_at_quantile(0.99)),
        p999_ms: ms(h.value_at_quantile(0.999)),
        max_ms: ms(h.max()),
    }
}

#[derive(Serialize)]
struct Report {
    server: String,
    matches: u64,
    spectators_per_match: u64,
    game: String,
    think_ms: u64,
    window_s: u64,
    features: Vec<String>,
    moves: u64,
    moves_per_s: f64,
    late: u64,
    late_ms: u64,
    lost: u64,
    errors: u64,
    connect_failures: u64,
    matches_started: u64,
    spectator_frames: u64,
    latency: Quantiles,
    flag_lateness: Option<Quantiles>,
    /// `create_match` to its reply, every match of the run (the ramp's included).
    match_creation: Option<Quantiles>,
    idle_connections: u64,
    server_process: Option<ServerFigures>,
    /// Server memory per idle connection, when only idle connections were opened.
    idle_kib_per_connection: Option<f64>,
    tool_cpu_percent: f64,
}

fn report(args: &LoadArgs, counts: Counts, server: Option<ServerFigures>) -> ExitCode {
    let latency = rebuild(&counts.latency);
    let flags = rebuild(&counts.flag_lateness);
    let creation = rebuild(&counts.creation);
    let elapsed = (args.ramp + args.warmup + args.duration).max(1) as f64;
    let idle_kib = server
        .filter(|_| args.matches == 0 && counts.idle_opened > 0)
        // From before the first connection: the idle ones are opened during the ramp.
        .map(|s| (s.rss_end_mib - s.rss_before_mib) * 1024.0 / counts.idle_opened as f64);
    let report = Report {
        server: args.server.clone(),
        matches: args.matches,
        spectators_per_match: args.spectators,
        game: args.game.to_string(),
        think_ms: args.think,
        window_s: args.duration,
        features: args
            .features
            .iter()
            .map(|f| f.as_str().to_string())
            .collect(),
        moves: counts.moves,
        moves_per_s: counts.moves as f64 / args.duration.max(1) as f64,
        late: counts.late,
        late_ms: args.late_ms,
        lost: counts.lost,
        errors: counts.errors,
        connect_failures: counts.connect_failures,
        matches_started: counts.matches,
        spectator_frames: counts.spectator_frames,
        latency: quantiles(&latency),
        flag_lateness: (!flags.is_empty()).then(|| quantiles(&flags)),
        match_creation: (!creation.is_empty()).then(|| quantiles(&creation)),
        idle_connections: counts.idle_opened,
        server_process: server,
        idle_kib_per_connection: idle_kib,
        tool_cpu_percent: 100.0 * counts.tool_cpu_seconds / elapsed,
    };
    if args.json {
        match serde_json::to_string_pretty(&report) {
            Ok(text) => println_or_quit!("{text}"),
            Err(e) => {
                eprintln!("hakem load: {e}");
                return ExitCode::from(FAILURE);
            }
        }
    } else {
        print_report(&report);
    }
    if report.moves == 0 && args.matches > 0 {
        eprintln!(
            "hakem load: no move was measured (is the server at {}?)",
            args.server
        );
        return ExitCode::from(FAILURE);
    }
    ExitCode::SUCCESS
}

fn print_report(r: &Report) {
    println_or_quit!(
        "hakem load: {} matches x {} spectators, {}, think {} ms, {} s measured, extensions: {}",
        r.matches,
        r.spectators_per_match,
        r.game,
        r.think_ms,
        r.window_s,
        if r.features.is_empty() {
            "none".to_string()
        } else {
            r.features.join(",")
        }
    );
    println_or_quit!(
        "moves {} ({:.1}/s), late (> {} ms) {}, lost {}, errors {}, connection failures {}, matches started {}",
        r.moves, r.moves_per_s, r.late_ms, r.late, r.lost, r.errors, r.connect_failures, r.matches_started
    );
    let q = |name: &str, q: &Quantiles| {
        println_or_quit!(
            "{name} ms: p50 {:.2}  p90 {:.2}  p99 {:.2}  p99.9 {:.2}  max {:.2}  (n = {})",
            q.p50_ms,
            q.p90_ms,
            q.p99_ms,
            q.p999_ms,
            q.max_ms,
            q.count
        );
    };
    q("move latency", &r.latency);
    if let Some(flags) = &r.flag_lateness {
        q("flag lateness", flags);
    }
    if let Some(creation) = &r.match_creation {
        q("match creation", creation);
    }
    println_or_quit!("spectator frames read: {}", r.spectator_frames);
    if let Some(s) = &r.server_process {
        print_or_quit!(
            "server: CPU {:.1}% of a core; RSS {:.1} MiB before the run, {:.1} at the window's start, {:.1} max, {:.1} at its end",
            s.cpu_percent, s.rss_before_mib, s.rss_start_mib, s.rss_max_mib, s.rss_end_mib
        );
        match s.rss_settled_mib {
            Some(settled) => println_or_quit!(", {settled:.1} after every client left"),
            None => println_or_quit!(),
        }
    }
    if let Some(kib) = r.idle_kib_per_connection {
        println_or_quit!(
            "idle connections: {} held, {kib:.1} KiB of server memory each",
            r.idle_connections
        );
    }
    println_or_quit!("load tool: CPU {:.1}% of a core", r.tool_cpu_percent);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shares_add_up_to_the_whole() {
        for total in [0, 1, 7, 100, 5000] {
            for processes in 1..5 {
                let sum: u64 = (0..processes).map(|w| share(total, w, processes)).sum();
                assert_eq!(sum, total, "{total} over {processes}");
            }
        }
    }

    #[test]
    fn worker_figures_merge() {
        let mut a = histogram();
        a.record(1_000).unwrap();
        let mut b = histogram();
        b.record_n(3_000, 3).unwrap();
        let mut total = Counts {
            latency: pairs(&a),
            moves: 1,
            ..Counts::default()
        };
        total.add(Counts {
            latency: pairs(&b),
            moves: 3,
            ..Counts::default()
        });
        let merged = rebuild(&total.latency);
        assert_eq!(merged.len(), 4);
        assert_eq!(total.moves, 4);
        assert!(merged.value_at_quantile(0.5) >= 2_990);
    }
}
