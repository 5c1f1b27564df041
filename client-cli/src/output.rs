//! Writing to stdout when its reader may be gone (`hakem tournament standings | head`):
//! `println!` would panic on the broken pipe.

/// `print!` for a command that keeps going without its output (a session in a round, a bot,
/// the relay): the server expects a connected client to stay until the end.
macro_rules! out {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = write!(std::io::stdout().lock(), $($arg)*);
    }};
}

/// `println!` for a command that keeps going without its output.
macro_rules! outln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stdout().lock(), $($arg)*);
    }};
}

/// `println!` for a command whose output is its whole point: once the reader is gone there is
/// nothing left to do, so the command ends quietly (status 0, as `head` expects).
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
        if write!(std::io::stdout().lock(), $($arg)*).is_err() {
            std::process::exit(0);
        }
    }};
}
