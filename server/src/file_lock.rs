//! One process at a time on a file: an exclusive lock on a file beside it, which the system
//! lets go of when the process ends, a crash included. The holder's process id is written in
//! the lock file, so that the one refused can say who holds it. Holders within one process
//! share the lock: tests open a database again while an earlier store of it lingers.

use std::collections::HashMap;
use std::io::{Read, Seek, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

/// An exclusive lock, held until the last of its holders in this process lets go of it.
#[derive(Debug)]
pub(crate) struct FileLock {
    // Closing the file lets go of the lock.
    _file: std::fs::File,
}

/// The locks this process holds, by the lock file's canonical path.
static HELD: Mutex<Option<HashMap<PathBuf, Weak<FileLock>>>> = Mutex::new(None);

/// How often a refused lock is tried again while the holder may be stopping.
const RETRY_EVERY: Duration = Duration::from_millis(100);

/// Why the lock was not taken.
#[derive(Debug)]
pub(crate) enum Refused {
    /// Another process holds it (its process id, when it wrote one).
    Held(Option<u32>),
    Io(std::io::Error),
}

/// Locks `lock_file` (created if missing) for this process, trying again for up to
/// `patience` while another process holds it (a server that is stopping lets go of it when
/// its process ends).
pub(crate) async fn lock(lock_file: &Path, patience: Duration) -> Result<Arc<FileLock>, Refused> {
    let deadline = Instant::now() + patience;
    loop {
        match try_lock(lock_file) {
            Err(Refused::Held(_)) if Instant::now() < deadline => {
                tokio::time::sleep(RETRY_EVERY).await;
            }
            outcome => return outcome,
        }
    }
}

fn try_lock(lock_file: &Path) -> Result<Arc<FileLock>, Refused> {
    let mut file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(lock_file)
        .map_err(Refused::Io)?;
    let key = lock_file.canonicalize().map_err(Refused::Io)?;
    let mut held = HELD.lock().unwrap_or_else(|e| e.into_inner());
    let held = held.get_or_insert_with(HashMap::new);
    held.retain(|_, lock| lock.strong_count() > 0);
    if let Some(lock) = held.get(&key).and_then(Weak::upgrade) {
        return Ok(lock);
    }
    if !exclusive(&file).map_err(Refused::Io)? {
        let mut text = String::new();
        let _ = file.read_to_string(&mut text);
        return Err(Refused::Held(text.trim().parse().ok()));
    }
    // The holder's id, for the message of whoever is refused next.
    file.set_len(0).map_err(Refused::Io)?;
    file.rewind().map_err(Refused::Io)?;
    writeln!(file, "{}", std::process::id()).map_err(Refused::Io)?;
    let lock = Arc::new(FileLock { _file: file });
    held.insert(key, Arc::downgrade(&lock));
    Ok(lock)
}

/// Takes the file's exclusive lock without waiting: whether it was free.
#[cfg(unix)]
fn exclusive(file: &std::fs::File) -> std::io::Result<bool> {
    use std::os::fd::AsRawFd;
    // SAFETY: flock only locks the open file the descriptor names; the descriptor is the
    // file's own and stays open while the call runs.
    if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } == 0 {
        return Ok(true);
    }
    let e = std::io::Error::last_os_error();
    match e.raw_os_error() {
        Some(libc::EWOULDBLOCK) => Ok(false),
        _ => Err(e),
    }
}

/// Elsewhere nothing is locked.
#[cfg(not(unix))]
fn exclusive(_file: &std::fs::File) -> std::io::Result<bool> {
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lock_file() -> PathBuf {
        let dir = std::env::temp_dir().join(format!("hakem-lock-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        dir.join(format!("{}.lock", crate::tokens::new_id()))
    }

    #[tokio::test]
    async fn holders_in_one_process_share_the_lock_and_it_is_taken_again_once_let_go() {
        let file = lock_file();
        let first = lock(&file, Duration::ZERO).await.unwrap();
        let second = lock(&file, Duration::ZERO).await.unwrap();
        assert!(Arc::ptr_eq(&first, &second));
        assert_eq!(
            std::fs::read_to_string(&file).unwrap().trim(),
            std::process::id().to_string()
        );
        drop((first, second));
        // Let go: a lock of the file's own (another process's, as far as flock knows) is
        // now free, and taken by no one else.
        let other = std::fs::File::open(&file).unwrap();
        assert!(exclusive(&other).unwrap());
        drop(other);
        lock(&file, Duration::ZERO).await.unwrap();
    }

    #[cfg(unix)]
    #[tokio::test]
    async fn a_lock_held_elsewhere_is_refused_with_its_holder_after_the_patience() {
        let file = lock_file();
        std::fs::write(&file, "4242\n").unwrap();
        // A second open file of the same path stands for another process: flock locks
        // open files, not processes.
        let elsewhere = std::fs::File::open(&file).unwrap();
        assert!(exclusive(&elsewhere).unwrap());
        let started = Instant::now();
        match lock(&file, Duration::from_millis(300)).await {
            Err(Refused::Held(holder)) => assert_eq!(holder, Some(4242)),
            other => panic!("not refused: {other:?}"),
        }
        assert!(started.elapsed() >= Duration::from_millis(300));
        drop(elsewhere);
        lock(&file, Duration::ZERO).await.unwrap();
    }
}
