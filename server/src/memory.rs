//! Giving memory back to the system. The server's allocator (jemalloc) returns free pages by
//! itself; the C library's, which SQLite uses, keeps what it freed ready for reuse, so once
//! many rooms have retired the server asks it to return the free pages, and a server whose
//! matches ended shrinks again.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// Rooms retired since memory was last given back.
static RETIRED: AtomicU64 = AtomicU64::new(0);

/// This many retired rooms are worth a trim.
const WORTH_IT: u64 = 64;

/// A room left memory.
pub fn room_retired() {
    RETIRED.fetch_add(1, Ordering::Relaxed);
}

/// Every few seconds, when enough rooms have retired, returns the allocator's free pages to
/// the system (on a blocking thread: it walks the whole heap).
pub async fn give_back() {
    let mut every = tokio::time::interval(Duration::from_secs(10));
    loop {
        every.tick().await;
        if RETIRED.load(Ordering::Relaxed) < WORTH_IT {
            continue;
        }
        RETIRED.store(0, Ordering::Relaxed);
        let _ = tokio::task::spawn_blocking(trim).await;
    }
}

/// The server's own allocator (jemalloc, see main.rs) returns free pages by itself; SQLite
/// allocates with the C library's malloc, which has to be asked.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
pub(crate) fn trim() {
    // SAFETY: malloc_trim only releases free memory of glibc's own heaps; it touches nothing
    // the program holds.
    unsafe {
        libc::malloc_trim(0);
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
pub(crate) fn trim() {}
