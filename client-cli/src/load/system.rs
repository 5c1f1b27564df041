//! What a process costs, read from Linux's `/proc`: CPU time used and resident memory.

use std::time::Instant;

/// `/proc/PID/stat` counts CPU time in clock ticks of 1/100 s on every Linux (USER_HZ).
const TICKS_PER_SECOND: f64 = 100.0;

/// One reading of a process.
#[derive(Clone, Copy, Debug)]
pub struct Reading {
    pub at: Instant,
    /// User and system CPU time so far, in seconds.
    pub cpu_seconds: f64,
    /// Resident memory, in bytes.
    pub rss_bytes: u64,
}

/// Reads process `pid` (`None`: this process). `None` when it is gone or this is not Linux.
pub fn read(pid: Option<u32>) -> Option<Reading> {
    let dir = match pid {
        Some(pid) => format!("/proc/{pid}"),
        None => "/proc/self".to_string(),
    };
    let stat = std::fs::read_to_string(format!("{dir}/stat")).ok()?;
    // The command name is in parentheses and may hold spaces: the fields start after it.
    let fields: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
    // After the name, field 3 of stat(5) is index 0: utime is field 14, stime field 15.
    let utime: f64 = fields.get(11)?.parse().ok()?;
    let stime: f64 = fields.get(12)?.parse().ok()?;
    let status = std::fs::read_to_string(format!("{dir}/status")).ok()?;
    let rss_kib: u64 = status
        .lines()
        .find_map(|line| line.strip_prefix("VmRSS:"))?
        .split_whitespace()
        .next()?
        .parse()
        .ok()?;
    Some(Reading {
        at: Instant::now(),
        cpu_seconds: (utime + stime) / TICKS_PER_SECOND,
        rss_bytes: rss_kib * 1024,
    })
}

/// The share of one core used between two readings, in percent.
pub fn cpu_percent(from: &Reading, to: &Reading) -> f64 {
    let wall = to.at.duration_since(from.at).as_secs_f64();
    if wall <= 0.0 {
        return 0.0;
    }
    100.0 * (to.cpu_seconds - from.cpu_seconds) / wall
}

pub fn mib(bytes: u64) -> f64 {
    bytes as f64 / (1024.0 * 1024.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_can_be_read() {
        let Some(first) = read(None) else {
            // Not Linux: nothing to read, and the tool says so when asked for a PID.
            return;
        };
        assert!(first.rss_bytes > 0);
        let mut x = 0u64;
        for i in 0..20_000_000u64 {
            x = x.wrapping_mul(31).wrapping_add(i);
        }
        std::hint::black_box(x);
        let second = read(None).unwrap();
        assert!(second.cpu_seconds >= first.cpu_seconds);
        assert!(cpu_percent(&first, &second) >= 0.0);
        assert!(read(Some(u32::MAX)).is_none());
    }
}
