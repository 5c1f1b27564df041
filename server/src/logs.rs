//! The server's log lines, written by a thread of their own. Rooms and connections share a
//! thread per core, or one (see `--workers`); a log written there would make the rooms wait
//! whenever the reader of the log is slow (a pipe nobody drains, a terminal that is scrolled
//! back, a busy journal). Here a line is queued and the caller goes on; when the queue is full,
//! lines are dropped and counted, and the log says how many.

use std::io::Write;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, SyncSender, TrySendError};
use std::sync::Arc;
use std::time::Duration;

/// Lines waiting to be written at most (a few MiB of text).
pub const QUEUED_LINES: usize = 16_384;

/// Where the log's lines go, for `tracing_subscriber::fmt().with_writer(...)`.
pub struct Logs {
    lines: SyncSender<Message>,
    dropped: Arc<AtomicU64>,
}

/// Ends the log when dropped: what is queued is written first (for up to a second).
pub struct Flush {
    lines: SyncSender<Message>,
    written: Receiver<()>,
}

enum Message {
    Line(Vec<u8>),
    /// Write what came before, then say so.
    Flush,
}

impl Logs {
    /// Starts the thread that writes the log's lines to `out`.
    pub fn to(out: impl Write + Send + 'static, queued: usize) -> (Logs, Flush) {
        let (lines, queue) = mpsc::sync_channel(queued);
        let (flushed, written) = mpsc::sync_channel(1);
        let dropped = Arc::new(AtomicU64::new(0));
        let counted = dropped.clone();
        let spawned = std::thread::Builder::new()
            .name("hakem-logs".into())
            .spawn(move || write_lines(out, queue, counted, flushed));
        if let Err(e) = spawned {
            eprintln!("hakem-server: no thread for the log ({e}); log lines are dropped");
        }
        let flush = Flush {
            lines: lines.clone(),
            written,
        };
        (Logs { lines, dropped }, flush)
    }

    /// Lines dropped so far because the queue was full.
    pub fn dropped(&self) -> u64 {
        self.dropped.load(Ordering::Relaxed)
    }

    fn queue(&self, line: Vec<u8>) {
        match self.lines.try_send(Message::Line(line)) {
            Ok(()) => {}
            Err(TrySendError::Full(_)) => {
                self.dropped.fetch_add(1, Ordering::Relaxed);
                metrics::counter!("hakem_log_lines_dropped_total").increment(1);
            }
            // The writer is gone (it could not start, or its output broke): nothing to do.
            Err(TrySendError::Disconnected(_)) => {}
        }
    }
}

fn write_lines(
    mut out: impl Write,
    queue: Receiver<Message>,
    dropped: Arc<AtomicU64>,
    flushed: SyncSender<()>,
) {
    let mut told = 0;
    // Says how many lines were dropped since it last said so: once the queue has been
    // written out, so that the note comes after the lines that were kept.
    let mut tell = |out: &mut dyn Write| {
        let now = dropped.load(Ordering::Relaxed);
        if now > told {
            let _ = writeln!(
                out,
                "hakem-server: {} log lines dropped (the log was not read fast enough)",
                now - told
            );
            told = now;
        }
    };
    loop {
        let message = match queue.try_recv() {
            Ok(message) => message,
            Err(mpsc::TryRecvError::Empty) => {
                tell(&mut out);
                match queue.recv() {
                    Ok(message) => message,
                    Err(_) => break,
                }
            }
            Err(mpsc::TryRecvError::Disconnected) => break,
        };
        match message {
            // A broken output (a closed pipe) is not the server's end: lines are lost.
            Message::Line(line) => {
                let _ = out.write_all(&line);
            }
            Message::Flush => {
                tell(&mut out);
                let _ = out.flush();
                let _ = flushed.try_send(());
            }
        }
    }
}

impl Drop for Flush {
    fn drop(&mut self) {
        // Bounded: a log whose reader is gone must not keep the server from exiting.
        let until = std::time::Instant::now() + Duration::from_secs(1);
        let mut flush = Message::Flush;
        loop {
            match self.lines.try_send(flush) {
                Ok(()) => break,
                Err(TrySendError::Full(again)) if std::time::Instant::now() < until => {
                    flush = again;
                    std::thread::sleep(Duration::from_millis(5));
                }
                Err(_) => return,
            }
        }
        let _ = self
            .written
            .recv_timeout(until.saturating_duration_since(std::time::Instant::now()));
    }
}

/// One line as the formatter writes it; queued whole when it is done.
pub struct Line<'a> {
    logs: &'a Logs,
    text: Vec<u8>,
}

impl Write for Line<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.text.extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Drop for Line<'_> {
    fn drop(&mut self) {
        if !self.text.is_empty() {
            self.logs.queue(std::mem::take(&mut self.text));
        }
    }
}

impl<'a> tracing_subscriber::fmt::MakeWriter<'a> for Logs {
    type Writer = Line<'a>;

    fn make_writer(&'a self) -> Line<'a> {
        Line {
            logs: self,
            text: Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Condvar, Mutex};
    use tracing_subscriber::fmt::MakeWriter;

    /// Whether the gate is open, and what went through it.
    type Passed = Mutex<(bool, Vec<u8>)>;

    /// An output that takes nothing until it is opened, then keeps what it is given.
    #[derive(Clone, Default)]
    struct Gate(Arc<(Passed, Condvar)>);

    impl Gate {
        fn open(&self) {
            self.0 .0.lock().unwrap().0 = true;
            self.0 .1.notify_all();
        }

        fn text(&self) -> String {
            String::from_utf8(self.0 .0.lock().unwrap().1.clone()).unwrap()
        }
    }

    impl Write for Gate {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            let (lock, opened) = &*self.0;
            let mut state = opened.wait_while(lock.lock().unwrap(), |s| !s.0).unwrap();
            state.1.extend_from_slice(buf);
            Ok(buf.len())
        }

        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    fn log(logs: &Logs, text: &str) {
        writeln!(logs.make_writer(), "{text}").unwrap();
    }

    #[test]
    fn a_log_nobody_reads_holds_up_no_caller_and_counts_what_it_dropped() {
        let gate = Gate::default();
        let (logs, flush) = Logs::to(gate.clone(), 8);
        // The writer holds one line at the gate and 8 wait: the rest are dropped at once.
        for n in 0..100 {
            log(&logs, &format!("line {n}"));
        }
        let dropped = logs.dropped();
        assert!((91..=92).contains(&dropped), "{dropped} dropped");
        gate.open();
        drop(flush);
        let text = gate.text();
        let lines: Vec<&str> = text.lines().collect();
        assert!(lines.starts_with(&["line 0", "line 1"]), "{text}");
        assert_eq!(
            lines.iter().filter(|l| l.starts_with("line ")).count() as u64,
            100 - dropped
        );
        assert_eq!(
            lines.last().copied(),
            Some(
                format!(
                    "hakem-server: {dropped} log lines dropped (the log was not read fast enough)"
                )
                .as_str()
            )
        );
    }

    #[test]
    fn lines_are_written_whole_and_in_order_before_the_log_ends() {
        let gate = Gate::default();
        gate.open();
        let (logs, flush) = Logs::to(gate.clone(), QUEUED_LINES);
        for n in 0..1_000 {
            let mut line = logs.make_writer();
            // A line may come in several writes: it is queued as one.
            write!(line, "line ").unwrap();
            writeln!(line, "{n}").unwrap();
        }
        drop(flush);
        let expected: String = (0..1_000).map(|n| format!("line {n}\n")).collect();
        assert_eq!(gate.text(), expected);
        assert_eq!(logs.dropped(), 0);
    }
}
