//! A program under test (`hakem`, a Python bot) driven through its stdin and read line by line
//! from its stdout, as a person at a terminal or a script with pipes would use it.

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::thread;
use std::time::{Duration, Instant};

use crate::PATIENCE;

/// A running program whose output lines are collected as they come; killed when dropped.
pub struct Proc {
    pub name: String,
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: Arc<(Mutex<Vec<String>>, Condvar)>,
    /// The whole of stderr, once the program has ended.
    stderr: Option<thread::JoinHandle<String>>,
    /// The thread reading stdout, which ends at its end.
    stdout_reader: Option<thread::JoinHandle<()>>,
    /// Lines before this index have been matched by `expect` already.
    cursor: usize,
}

impl Proc {
    pub fn spawn(name: &str, mut command: Command) -> Proc {
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("{name}: cannot start: {e}"));
        let stdout = Arc::new((Mutex::new(Vec::new()), Condvar::new()));
        let out = child.stdout.take().expect("stdout");
        let lines = stdout.clone();
        let stdout_reader = thread::spawn(move || {
            for line in BufReader::new(out).lines() {
                let Ok(line) = line else { break };
                let (list, ready) = &*lines;
                list.lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .push(line);
                ready.notify_all();
            }
        });
        let mut err = child.stderr.take().expect("stderr");
        let stderr = thread::spawn(move || {
            let mut all = String::new();
            let _ = err.read_to_string(&mut all);
            all
        });
        Proc {
            name: name.to_string(),
            stdin: child.stdin.take(),
            child,
            stdout,
            stderr: Some(stderr),
            stdout_reader: Some(stdout_reader),
            cursor: 0,
        }
    }

    /// The process id, for signals.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Makes `expect` search from the first line again (for lines whose order is not fixed).
    pub fn rewind(&mut self) {
        self.cursor = 0;
    }

    /// Everything written on stdout so far.
    pub fn output(&self) -> String {
        self.stdout
            .0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .join("\n")
    }

    /// Everything written on stderr; waits for the program to end.
    pub fn stderr(&mut self) -> String {
        self.stderr
            .take()
            .map(|reader| reader.join().unwrap_or_default())
            .unwrap_or_default()
    }

    /// Types one line.
    pub fn send(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().expect("stdin still open");
        writeln!(stdin, "{line}").expect("write to stdin");
        stdin.flush().expect("flush");
    }

    /// Closes stdin, as Ctrl-D or the end of a piped file does.
    pub fn close_stdin(&mut self) {
        self.stdin = None;
    }

    /// Waits (up to [`PATIENCE`]) for a line containing `text` after the last one matched.
    pub fn expect(&mut self, text: &str) -> String {
        self.expect_within(text, PATIENCE)
    }

    /// Waits for a line containing `text` after the last one matched; returns it.
    pub fn expect_within(&mut self, text: &str, patience: Duration) -> String {
        let deadline = Instant::now() + patience;
        let (list, ready) = &*self.stdout;
        let mut lines = list.lock().unwrap_or_else(PoisonError::into_inner);
        loop {
            if let Some(i) = lines[self.cursor..].iter().position(|l| l.contains(text)) {
                self.cursor += i + 1;
                return lines[self.cursor - 1].clone();
            }
            let now = Instant::now();
            if now >= deadline {
                let output = lines.join("\n");
                drop(lines);
                let _ = self.child.kill();
                let stderr = self.stderr();
                panic!(
                    "{}: no line with {text:?} within {patience:?}; stdout:\n{output}\nstderr:\n{stderr}",
                    self.name
                );
            }
            lines = ready
                .wait_timeout(lines, deadline - now)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
    }

    /// Waits (up to [`PATIENCE`]) for the program to end by itself; returns its exit code.
    /// Its stdout and stderr stay readable.
    pub fn exit_code(&mut self) -> i32 {
        self.wait_for_exit(PATIENCE)
    }

    /// Waits for the program to end by itself; returns its exit code, stdout and stderr.
    pub fn finish(&mut self, patience: Duration) -> (i32, String, String) {
        let code = self.wait_for_exit(patience);
        (code, self.output(), self.stderr())
    }

    fn wait_for_exit(&mut self, patience: Duration) -> i32 {
        let deadline = Instant::now() + patience;
        loop {
            if let Some(status) = self.child.try_wait().expect("try_wait") {
                // The last lines may still be on their way to the reader.
                if let Some(reader) = self.stdout_reader.take() {
                    let _ = reader.join();
                }
                return status.code().unwrap_or(-1);
            }
            if Instant::now() >= deadline {
                let _ = self.child.kill();
                let stderr = self.stderr();
                panic!(
                    "{}: still running after {patience:?}; stdout:\n{}\nstderr:\n{stderr}",
                    self.name,
                    self.output()
                );
            }
            thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
