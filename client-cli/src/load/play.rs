//! The clients of a load run: match slots (two players playing one match after another),
//! spectators, flag probes and idle connections. Each speaks protocol v1 through the client's
//! one [`Connection`], and reads frames with the tool's small parser.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use hakem_games::{AnyPosition, GameKind};
use hakem_protocol::Feature;
use hdrhistogram::Histogram;
use serde_json::json;
use tokio::sync::mpsc;
use tokio::time::Instant;

use super::frame::Frame;
use crate::connection::Connection;

/// A frame this long overdue counts as lost.
const LOST_AFTER: Duration = Duration::from_secs(10);

/// What every client of one load process shares: the plan and the tallies.
pub struct Run {
    pub server: String,
    pub token: Option<String>,
    pub features: Vec<Feature>,
    pub game: GameKind,
    pub variant: Option<String>,
    pub clock_ms: u64,
    pub think: Duration,
    pub late: Duration,
    /// When moves start to count, and when the run stops making them.
    pub window: (Instant, Instant),
    pub tally: Mutex<Tally>,
    next_id: AtomicU64,
}

/// What a load process measured.
pub struct Tally {
    /// Move latency in microseconds: the mover's frame written to the opponent's `moved` read.
    pub latency: Histogram<u64>,
    /// How late after the exact moment of expiry a set ended on time, in microseconds.
    pub flag_lateness: Histogram<u64>,
    /// Match creation in microseconds: `create_match` written to its reply read, for every
    /// match, the ramp's included (a new match waits for its commit like a move).
    pub creation: Histogram<u64>,
    pub moves: u64,
    pub late: u64,
    pub lost: u64,
    pub errors: u64,
    pub connect_failures: u64,
    pub matches: u64,
    pub spectator_frames: u64,
}

pub fn histogram() -> Histogram<u64> {
    // 1 µs to 10 minutes at three significant digits.
    Histogram::new_with_bounds(1, 600_000_000, 3).expect("valid histogram bounds")
}

/// Records `duration` in microseconds (at least one: the histogram's lowest value).
fn record(histogram: &mut Histogram<u64>, duration: Duration) {
    histogram.saturating_record(duration.as_micros().max(1) as u64);
}

impl Run {
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        server: String,
        token: Option<String>,
        features: Vec<Feature>,
        game: GameKind,
        variant: Option<String>,
        clock_ms: u64,
        think: Duration,
        late: Duration,
        window: (Instant, Instant),
    ) -> Run {
        Run {
            server,
            token,
            features,
            game,
            variant,
            clock_ms,
            think,
            late,
            window,
            tally: Mutex::new(Tally {
                latency: histogram(),
                flag_lateness: histogram(),
                creation: histogram(),
                moves: 0,
                late: 0,
                lost: 0,
                errors: 0,
                connect_failures: 0,
                matches: 0,
                spectator_frames: 0,
            }),
            next_id: AtomicU64::new(1),
        }
    }

    fn tally(&self, change: impl FnOnce(&mut Tally)) {
        let mut tally = self.tally.lock().unwrap_or_else(|e| e.into_inner());
        change(&mut tally);
    }

    fn id(&self) -> u64 {
        self.next_id.fetch_add(1, Ordering::Relaxed)
    }

    fn in_window(&self, at: Instant) -> bool {
        at >= self.window.0 && at < self.window.1
    }

    fn over(&self) -> bool {
        Instant::now() >= self.window.1
    }

    async fn connect(&self) -> Option<Connection> {
        while !self.over() {
            match Connection::handshake(
                &self.server,
                self.token.as_deref(),
                &self.features,
                Duration::from_secs(10),
            )
            .await
            {
                Ok((connection, _)) => return Some(connection),
                Err(_) => {
                    self.tally(|t| t.connect_failures += 1);
                    tokio::time::sleep(Duration::from_secs(1)).await;
                }
            }
        }
        None
    }

    fn create_message(&self, id: u64, clock_ms: u64) -> String {
        let clock = if clock_ms == 0 {
            serde_json::Value::Null
        } else {
            json!({"initial_ms": clock_ms, "increment_ms": 0})
        };
        let mut create = json!({"type": "create_match", "id": id, "game": self.game.as_str(),
            "sets": 1, "clock": clock, "players": {"p1": "load p1", "p2": "load p2"}});
        if let Some(variant) = &self.variant {
            create["variant"] = json!(variant);
        }
        create.to_string()
    }
}

/// Reads frames until one satisfies `wanted` (true) or `deadline` passes or the connection
/// ends (false).
async fn wait_for(
    conn: &mut Connection,
    deadline: Instant,
    mut wanted: impl FnMut(&Frame) -> bool,
) -> bool {
    loop {
        let text = match tokio::time::timeout_at(deadline, conn.recv_text()).await {
            Ok(Ok(Some(text))) => text,
            _ => return false,
        };
        if let Some(frame) = Frame::parse(text.as_str()) {
            if wanted(&frame) {
                return true;
            }
        }
    }
}

/// Sends a request and waits for its reply; true for an accepting one (not `error`).
async fn request(conn: &mut Connection, id: u64, text: String) -> Result<bool, ()> {
    conn.send_text(text).await.map_err(|_| ())?;
    let mut accepted = false;
    let deadline = Instant::now() + LOST_AFTER;
    if wait_for(conn, deadline, |f| {
        accepted = f.kind != "error";
        f.re == Some(id)
    })
    .await
    {
        Ok(accepted)
    } else {
        Err(())
    }
}

/// A new match with both players seated and its set started: its id, and when p2 (who readies
/// last) read `set_started`.
async fn open_match(
    run: &Run,
    p1: &mut Connection,
    p2: &mut Connection,
    clock_ms: u64,
) -> Result<(String, Option<Instant>), ()> {
    let id = run.id();
    let asked = Instant::now();
    p1.send_text(run.create_message(id, clock_ms))
        .await
        .map_err(|_| ())?;
    let mut created = None;
    let deadline = Instant::now() + LOST_AFTER;
    let answered = wait_for(p1, deadline, |f| {
        if f.re != Some(id) {
            return false;
        }
        if let (Some(m), Some(tokens)) = (&f.match_id, &f.seat_tokens) {
            created = Some((m.to_string(), tokens.p1.to_string(), tokens.p2.to_string()));
        }
        true
    })
    .await;
    let Some((match_id, t1, t2)) = created.filter(|_| answered) else {
        run.tally(|t| t.errors += 1);
        return Err(());
    };
    let creation = asked.elapsed();
    run.tally(|t| record(&mut t.creation, creation));
    for (conn, token) in [(&mut *p1, &t1), (&mut *p2, &t2)] {
        let id = run.id();
        let join = json!({"type": "join", "id": id, "match": match_id, "seat_token": token});
        if !request(conn, id, join.to_string()).await? {
            run.tally(|t| t.errors += 1);
            return Err(());
        }
    }
    let mut started = None;
    for conn in [&mut *p1, &mut *p2] {
        let id = run.id();
        let ready = json!({"type": "ready", "id": id, "match": match_id});
        conn.send_text(ready.to_string()).await.map_err(|_| ())?;
        let mut accepted = false;
        let answered = wait_for(conn, Instant::now() + LOST_AFTER, |f| {
            f.each_event(|m, e| {
                if m == match_id && e.kind == "set_started" {
                    started = Some(Instant::now());
                }
            });
            accepted = f.kind != "error";
            f.re == Some(id)
        })
        .await;
        if !(answered && accepted) {
            run.tally(|t| t.errors += 1);
            return Err(());
        }
    }
    run.tally(|t| t.matches += 1);
    Ok((match_id, started))
}

/// A small, fast generator for think times and move choices; no need for more.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }

    /// Between half and one and a half of `mean`, so that matches do not move in lockstep.
    fn around(&mut self, mean: Duration) -> Duration {
        mean.mul_f64(0.5 + (self.next() % 1000) as f64 / 1000.0)
    }
}

/// One match at a time, again and again, until the window closes: two players, every move a
/// `move` with `press`, each timed from the mover's frame to the opponent's `moved`. Each new
/// match is announced to `spectators`, who watch it.
pub async fn slot(run: Arc<Run>, index: u64, spectators: Vec<mpsc::UnboundedSender<String>>) {
    let Some(mut p1) = run.connect().await else {
        return;
    };
    let Some(mut p2) = run.connect().await else {
        return;
    };
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15 ^ (index + 1).wrapping_mul(0x2545_f491_4f6c_dd1d));
    while !run.over() {
        let Ok((match_id, _)) = open_match(&run, &mut p1, &mut p2, run.clock_ms).await else {
            tokio::time::sleep(Duration::from_secs(1)).await;
            continue;
        };
        for spectator in &spectators {
            let _ = spectator.send(match_id.clone());
        }
        let Ok(mut position) = AnyPosition::new(run.game, run.variant.as_deref()) else {
            return;
        };
        let seats = [("p1", &mut p1), ("p2", &mut p2)];
        let mut mover = 0;
        while position.outcome().is_none() && !run.over() {
            tokio::time::sleep(rng.around(run.think)).await;
            let legal = position.legal_moves();
            let mv = legal[rng.below(legal.len())].clone();
            let id = run.id();
            let text =
                json!({"type": "move", "id": id, "match": match_id, "move": mv, "press": true})
                    .to_string();
            let seat = seats[mover].0;
            let sent = Instant::now();
            if seats[mover].1.send_text(text).await.is_err() {
                return;
            }
            let opponent = &mut *seats[1 - mover].1;
            let mut got = None;
            let seen = wait_for(opponent, sent + LOST_AFTER, |f| {
                f.each_event(|m, e| {
                    if m == match_id && e.kind == "moved" && e.seat.as_deref() == Some(seat) {
                        got = Some(Instant::now());
                    }
                });
                got.is_some()
            })
            .await;
            let accepted = request_reply(seats[mover].1, id).await;
            match (seen, got, accepted) {
                (true, Some(at), Some(true)) => {
                    let latency = at.duration_since(sent);
                    if run.in_window(sent) {
                        run.tally(|t| {
                            record(&mut t.latency, latency);
                            t.moves += 1;
                            if latency > run.late {
                                t.late += 1;
                            }
                        });
                    }
                }
                (_, _, Some(false)) => {
                    run.tally(|t| t.errors += 1);
                    break;
                }
                _ => {
                    if run.in_window(sent) {
                        run.tally(|t| t.lost += 1);
                    }
                    break;
                }
            }
            if position.play_str(&mv).is_err() {
                break;
            }
            mover = 1 - mover;
        }
        if run.over() && position.outcome().is_none() {
            // The window closed mid-match: end it (one set a match, so one resignation ends
            // the round), so that a run leaves no live match behind.
            let id = run.id();
            let resign = json!({"type": "resign", "id": id, "match": match_id});
            if seats[0].1.send_text(resign.to_string()).await.is_ok() {
                let _ = request_reply(seats[0].1, id).await;
            }
        }
    }
}

/// The reply to request `id` already sent: `Some(true)` accepted, `Some(false)` refused.
async fn request_reply(conn: &mut Connection, id: u64) -> Option<bool> {
    let mut accepted = false;
    wait_for(conn, Instant::now() + LOST_AFTER, |f| {
        accepted = f.kind != "error";
        f.re == Some(id)
    })
    .await
    .then_some(accepted)
}

/// A spectator connection: watches each match its slots announce (leaving the one before) and
/// reads every frame, as a browser would.
pub async fn spectator(run: Arc<Run>, mut matches: mpsc::UnboundedReceiver<String>) {
    let Some(mut conn) = run.connect().await else {
        return;
    };
    let mut frames: u64 = 0;
    let stop = tokio::time::sleep_until(run.window.1);
    tokio::pin!(stop);
    loop {
        tokio::select! {
            next = matches.recv() => {
                let Some(match_id) = next else { break };
                let watch = json!({"type": "watch", "id": run.id(), "match": match_id});
                if conn.send_text(watch.to_string()).await.is_err() {
                    break;
                }
            }
            frame = conn.recv_text() => match frame {
                Ok(Some(_)) => frames += 1,
                _ => break,
            },
            _ = &mut stop => break,
        }
    }
    run.tally(|t| t.spectator_frames += frames);
    conn.close().await;
}

/// Sets that end on time: a match whose first mover never moves, timed from `set_started` to
/// `set_ended` (reason `time`) against the clock's initial time.
pub async fn flag_probe(run: Arc<Run>, flag_ms: u64) {
    let Some(mut p1) = run.connect().await else {
        return;
    };
    let Some(mut p2) = run.connect().await else {
        return;
    };
    while !run.over() {
        let Ok((match_id, Some(started))) = open_match(&run, &mut p1, &mut p2, flag_ms).await
        else {
            tokio::time::sleep(Duration::from_secs(1)).await;
            continue;
        };
        let mut ended = None;
        let deadline = Instant::now() + Duration::from_millis(flag_ms) + LOST_AFTER;
        wait_for(&mut p2, deadline, |f| {
            f.each_event(|m, e| {
                if m == match_id && e.kind == "set_ended" && e.reason.as_deref() == Some("time") {
                    ended = Some(Instant::now());
                }
            });
            ended.is_some()
        })
        .await;
        if let Some(ended) = ended {
            let expected = started + Duration::from_millis(flag_ms);
            let late = ended.saturating_duration_since(expected);
            if run.in_window(ended) {
                run.tally(|t| record(&mut t.flag_lateness, late));
            }
        }
    }
}

/// Connections that say `hello` and nothing more, held until the window closes.
pub async fn idle(run: Arc<Run>, count: usize, opened: Arc<AtomicU64>) {
    let mut held = Vec::with_capacity(count);
    for _ in 0..count {
        if let Some(conn) = run.connect().await {
            held.push(conn);
            opened.fetch_add(1, Ordering::Relaxed);
        }
    }
    tokio::time::sleep_until(run.window.1).await;
    drop(held);
}
