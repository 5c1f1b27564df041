//! Writing to stdout and stderr when their reader may be gone (`hakem watch ... | head`,
//! `2>&-`): `println!` and `eprintln!` would panic on the broken pipe. Every command's output
//! goes through the macros here.

/// `println!` for a command that keeps going without its output (a bot, the relay): it has
/// work to do whether or not anybody reads what it says.
macro_rules! outln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stdout().lock(), $($arg)*);
    }};
}

/// `println!` for a command whose output is its whole point (a listing, and the live commands:
/// `watch`, `play`, `arbiter`, `tournament watch`): once the reader is gone there is nothing
/// left to do, so the command ends quietly (status 0, as `head` expects).
macro_rules! println_or_quit {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        if writeln!(std::io::stdout().lock(), $($arg)*).is_err() {
            std::process::exit(0);
        }
    }};
}

/// `print!` for a command whose output is its whole point.
macro_rules! print_or_quit {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let mut stdout = std::io::stdout().lock();
        // Flushed at once: a part line left in the buffer would hide a closed pipe.
        if write!(stdout, $($arg)*).and_then(|()| stdout.flush()).is_err() {
            std::process::exit(0);
        }
    }};
}

/// `eprintln!` that never panics. It takes the place of the standard one in every module (a
/// macro defined here comes before the prelude's): with stderr closed there is nobody to tell,
/// and the command still ends as it would have, its exit status saying how it went.
macro_rules! eprintln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr().lock(), $($arg)*);
    }};
}

/// `eprint!` that never panics, as [`eprintln!`].
macro_rules! eprint {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let mut stderr = std::io::stderr().lock();
        let _ = write!(stderr, $($arg)*).and_then(|()| stderr.flush());
    }};
}

/// Resolves once stdout is known to be closed: a pipe whose reader has gone, or no stdout at
/// all. A live command that prints only now and then (a tournament between rounds) ends then,
/// not at its next line. A terminal or a file never closes so.
pub async fn stdout_closed() {
    loop {
        let mut fd = libc::pollfd {
            fd: libc::STDOUT_FILENO,
            events: 0,
            revents: 0,
        };
        // SAFETY: one valid pollfd, and a timeout of 0: poll only reads the descriptor's state.
        let ready = unsafe { libc::poll(&mut fd, 1, 0) };
        if ready > 0 && fd.revents & (libc::POLLERR | libc::POLLHUP | libc::POLLNVAL) != 0 {
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(250)).await;
    }
}
