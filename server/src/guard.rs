//! What one address may take from the server: connections, messages and new matches, counted
//! per IP (an IPv6 address per /64, the block one host gets), with every refusal logged, at
//! most once every few seconds per kind so that a flood cannot flood the log too.

use std::net::IpAddr;
use std::num::NonZeroU32;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use dashmap::DashMap;
use governor::{DefaultKeyedRateLimiter, Quota, RateLimiter};

/// The limits per address and in total; `0` turns a limit off.
#[derive(Clone, Debug)]
pub struct AddressLimits {
    /// Open connections in all (never more than the open-file limit allows).
    pub max_connections: usize,
    /// Open connections from one address.
    pub max_connections_per_ip: usize,
    /// Time to send a whole HTTP request head (a WebSocket upgrade included).
    pub header_read_timeout: Duration,
    /// Messages a second from one address, over all its connections.
    pub ip_rate_per_sec: u32,
    pub ip_rate_burst: u32,
    /// Matches guests at one address may create at once, and a minute after that.
    pub guest_create_burst: u32,
    pub guest_create_per_minute: u32,
    /// Matches made by guests at one address that may wait for their players at once.
    pub guest_waiting_per_ip: usize,
    /// Logins and registrations from one address a minute (after a burst of as many).
    pub logins_per_minute: u32,
    /// Addresses none of the per-address limits apply to (a reverse proxy, a load test).
    pub unlimited: Vec<IpAddr>,
}

impl Default for AddressLimits {
    fn default() -> AddressLimits {
        AddressLimits {
            max_connections: 50_000,
            max_connections_per_ip: 1_000,
            header_read_timeout: Duration::from_secs(10),
            ip_rate_per_sec: 200,
            ip_rate_burst: 400,
            guest_create_burst: 30,
            guest_create_per_minute: 10,
            guest_waiting_per_ip: 50,
            logins_per_minute: 10,
            unlimited: Vec::new(),
        }
    }
}

/// Why a limit said no.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refusal {
    Connections,
    ConnectionsPerIp,
    /// The request head did not arrive in time.
    HeaderTimeout,
    Messages,
    Creates,
    Waiting,
    /// Logins and registrations from one address, faster than allowed.
    Logins,
    /// A connection that flooded past its warning, did not read its frames, or never said
    /// `hello`, was closed.
    Closed,
    /// `accept` failed for want of descriptors or memory (not a refusal of anyone in
    /// particular).
    Accept,
}

const KINDS: usize = 9;

impl Refusal {
    fn index(self) -> usize {
        self as usize
    }

    fn what(self) -> &'static str {
        match self {
            Refusal::Connections => "connection refused: the server holds its most connections",
            Refusal::ConnectionsPerIp => {
                "connection refused: the address holds its most connections"
            }
            Refusal::Messages => {
                "messages slowed: a connection or address sends faster than allowed"
            }
            Refusal::Creates => "match refused: the address creates matches faster than allowed",
            Refusal::Waiting => "match refused: the address has its most matches waiting",
            Refusal::Logins => "login refused: the address logs in faster than allowed",
            Refusal::HeaderTimeout => "connection closed: no whole request head in time",
            Refusal::Closed => "connection closed by a limit (flood, not reading, no hello)",
            Refusal::Accept => "cannot accept connections (out of file descriptors or memory)",
        }
    }

    fn label(self) -> &'static str {
        match self {
            Refusal::Connections => "connections",
            Refusal::ConnectionsPerIp => "connections_per_ip",
            Refusal::Messages => "messages",
            Refusal::Creates => "creates_per_ip",
            Refusal::Waiting => "waiting_per_ip",
            Refusal::Logins => "logins_per_ip",
            Refusal::HeaderTimeout => "header_timeout",
            Refusal::Closed => "closed",
            Refusal::Accept => "accept",
        }
    }
}

/// The per-address counts of one server.
pub struct Guard {
    limits: AddressLimits,
    open: AtomicUsize,
    per_ip: DashMap<IpAddr, usize>,
    messages: Option<DefaultKeyedRateLimiter<IpAddr>>,
    creates: Option<DefaultKeyedRateLimiter<IpAddr>>,
    logins: Option<DefaultKeyedRateLimiter<IpAddr>>,
    /// Matches guests at each address made that may still be waiting.
    waiting: DashMap<IpAddr, Vec<String>>,
    log: RefusalLog,
    /// The unlimited addresses, as they are counted.
    exempt: Vec<IpAddr>,
}

/// One open connection, counted until the last clone is dropped (the HTTP connection and,
/// after an upgrade, its WebSocket session share it).
pub struct Admission {
    guard: Arc<Guard>,
    ip: IpAddr,
    key: Option<IpAddr>,
}

impl Admission {
    /// The address the connection came from.
    pub fn ip(&self) -> IpAddr {
        self.ip
    }
}

impl Drop for Admission {
    fn drop(&mut self) {
        self.guard.open.fetch_sub(1, Ordering::Relaxed);
        if let Some(key) = self.key {
            if let dashmap::Entry::Occupied(mut entry) = self.guard.per_ip.entry(key) {
                *entry.get_mut() -= 1;
                if *entry.get() == 0 {
                    entry.remove();
                }
            }
        }
        metrics::gauge!("hakem_open_connections").decrement(1.0);
    }
}

/// What an address is counted as: itself for IPv4 (an IPv4-mapped IPv6 address included),
/// its /64 for IPv6.
fn counted_as(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => IpAddr::V4(v4),
            None => IpAddr::V6((u128::from(v6) & (!0u128 << 64)).into()),
        },
        v4 => v4,
    }
}

fn quota(per_sec: u32, burst: u32) -> Option<Quota> {
    let rate = NonZeroU32::new(per_sec)?;
    Some(Quota::per_second(rate).allow_burst(NonZeroU32::new(burst).unwrap_or(rate)))
}

impl Guard {
    pub fn new(limits: AddressLimits) -> Arc<Guard> {
        let messages = quota(limits.ip_rate_per_sec, limits.ip_rate_burst).map(RateLimiter::keyed);
        let creates = NonZeroU32::new(limits.guest_create_per_minute).map(|rate| {
            let burst = NonZeroU32::new(limits.guest_create_burst).unwrap_or(rate);
            RateLimiter::keyed(Quota::per_minute(rate).allow_burst(burst))
        });
        let logins = NonZeroU32::new(limits.logins_per_minute)
            .map(|rate| RateLimiter::keyed(Quota::per_minute(rate)));
        Arc::new(Guard {
            open: AtomicUsize::new(0),
            per_ip: DashMap::new(),
            messages,
            creates,
            logins,
            waiting: DashMap::new(),
            log: RefusalLog::default(),
            exempt: limits.unlimited.iter().copied().map(counted_as).collect(),
            limits,
        })
    }

    pub fn limits(&self) -> &AddressLimits {
        &self.limits
    }

    /// The key an address is counted under, or `None` if no per-address limit applies to it.
    fn key(&self, ip: IpAddr) -> Option<IpAddr> {
        let key = counted_as(ip);
        (!self.exempt.contains(&key)).then_some(key)
    }

    /// The address a request's limits apply to: the peer's, or, when the peer is an unlimited
    /// address (a proxy in front) that says whom it forwards (`X-Forwarded-For`), the last
    /// address it names (the one the proxy itself saw; earlier ones are the client's word).
    pub fn client_ip(&self, peer: IpAddr, forwarded_for: Option<&str>) -> IpAddr {
        if self.key(peer).is_some() {
            return peer;
        }
        forwarded_for
            .and_then(|list| list.rsplit(',').next())
            .and_then(|last| last.trim().parse().ok())
            .unwrap_or(peer)
    }

    /// Counts a new connection from `ip`, or says which limit is full.
    pub fn admit(self: &Arc<Guard>, ip: IpAddr) -> Result<Admission, Refusal> {
        let total = self.open.fetch_add(1, Ordering::Relaxed) + 1;
        if self.limits.max_connections > 0 && total > self.limits.max_connections {
            self.open.fetch_sub(1, Ordering::Relaxed);
            return Err(self.refused(Refusal::Connections, ip));
        }
        let key = self.key(ip);
        if let Some(key) = key {
            let mut count = self.per_ip.entry(key).or_insert(0);
            if self.limits.max_connections_per_ip > 0
                && *count >= self.limits.max_connections_per_ip
            {
                drop(count);
                self.open.fetch_sub(1, Ordering::Relaxed);
                return Err(self.refused(Refusal::ConnectionsPerIp, ip));
            }
            *count += 1;
        }
        metrics::gauge!("hakem_open_connections").increment(1.0);
        Ok(Admission {
            guard: self.clone(),
            ip,
            key,
        })
    }

    /// One message from `ip`: allowed now, or how long until the address may send again.
    pub fn message(&self, ip: IpAddr) -> Result<(), Duration> {
        let (Some(limiter), Some(key)) = (&self.messages, self.key(ip)) else {
            return Ok(());
        };
        limiter.check_key(&key).map(|_| ()).map_err(|not_until| {
            not_until.wait_time_from(governor::clock::Clock::now(limiter.clock()))
        })
    }

    /// A guest at `ip` wants to create a match: allowed, or which limit says no.
    pub fn guest_create(
        &self,
        ip: IpAddr,
        still_waiting: impl Fn(&str) -> bool,
    ) -> Result<(), Refusal> {
        let Some(key) = self.key(ip) else {
            return Ok(());
        };
        if self.limits.guest_waiting_per_ip > 0 {
            if let Some(mut ids) = self.waiting.get_mut(&key) {
                ids.retain(|id| still_waiting(id));
                if ids.len() >= self.limits.guest_waiting_per_ip {
                    drop(ids);
                    return Err(self.refused(Refusal::Waiting, ip));
                }
            }
        }
        if let Some(limiter) = &self.creates {
            if limiter.check_key(&key).is_err() {
                return Err(self.refused(Refusal::Creates, ip));
            }
        }
        Ok(())
    }

    /// A login or registration from `ip`: within the address's allowance?
    pub fn login(&self, ip: IpAddr) -> bool {
        let (Some(limiter), Some(key)) = (&self.logins, self.key(ip)) else {
            return true;
        };
        limiter.check_key(&key).is_ok() || {
            self.refused(Refusal::Logins, ip);
            false
        }
    }

    /// A guest at `ip` created `match_id`.
    pub fn guest_created(&self, ip: IpAddr, match_id: &str) {
        if let Some(key) = self.key(ip) {
            if self.limits.guest_waiting_per_ip > 0 {
                self.waiting
                    .entry(key)
                    .or_default()
                    .push(match_id.to_string());
            }
        }
    }

    /// Forgets addresses that have been quiet long enough to be back at their full allowance.
    pub fn upkeep(&self, still_waiting: impl Fn(&str) -> bool) {
        for limiter in [&self.messages, &self.creates, &self.logins]
            .into_iter()
            .flatten()
        {
            limiter.retain_recent();
            limiter.shrink_to_fit();
        }
        self.waiting.retain(|_, ids| {
            ids.retain(|id| still_waiting(id));
            !ids.is_empty()
        });
        self.waiting.shrink_to_fit();
        self.per_ip.shrink_to_fit();
    }

    /// Counts and logs a refusal; returns it.
    pub fn refused(&self, why: Refusal, ip: IpAddr) -> Refusal {
        metrics::counter!("hakem_limit_refusals_total", "limit" => why.label()).increment(1);
        self.log.note(why, ip);
        why
    }

    /// Logs that an accept failed for want of file descriptors or memory.
    pub fn accept_failed(&self, error: &std::io::Error) {
        metrics::counter!("hakem_limit_refusals_total", "limit" => Refusal::Accept.label())
            .increment(1);
        self.log.accept_failed(error);
    }
}

/// Each kind of refusal is logged at most once per [`RefusalLog::EVERY`], with how many were
/// not logged since.
#[derive(Default)]
struct RefusalLog {
    last: Mutex<[Option<Instant>; KINDS]>,
    unlogged: [AtomicU64; KINDS],
}

impl RefusalLog {
    const EVERY: Duration = Duration::from_secs(10);

    /// True (and the count since the last line) when a line may be written for `slot` now.
    fn due(&self, slot: usize) -> Option<u64> {
        let now = Instant::now();
        let mut last = self.last.lock().unwrap_or_else(|e| e.into_inner());
        if last[slot].is_some_and(|at| now.duration_since(at) < Self::EVERY) {
            self.unlogged[slot].fetch_add(1, Ordering::Relaxed);
            return None;
        }
        last[slot] = Some(now);
        Some(self.unlogged[slot].swap(0, Ordering::Relaxed))
    }

    fn note(&self, why: Refusal, ip: IpAddr) {
        if let Some(unlogged) = self.due(why.index()) {
            tracing::warn!(%ip, limit = why.label(), also_refused = unlogged, "{}", why.what());
        }
    }

    fn accept_failed(&self, error: &std::io::Error) {
        if let Some(unlogged) = self.due(Refusal::Accept.index()) {
            tracing::warn!(
                %error,
                also_failed = unlogged,
                "{}: backing off",
                Refusal::Accept.what()
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(text: &str) -> IpAddr {
        text.parse().unwrap()
    }

    #[test]
    fn connections_are_counted_per_address_and_freed_when_dropped() {
        let guard = Guard::new(AddressLimits {
            max_connections: 3,
            max_connections_per_ip: 2,
            ..AddressLimits::default()
        });
        let a = guard.admit(ip("10.0.0.1")).unwrap();
        let _b = guard.admit(ip("10.0.0.1")).unwrap();
        assert_eq!(
            guard.admit(ip("10.0.0.1")).err(),
            Some(Refusal::ConnectionsPerIp)
        );
        // The same host over IPv4-mapped IPv6 is the same address.
        assert_eq!(
            guard.admit(ip("::ffff:10.0.0.1")).err(),
            Some(Refusal::ConnectionsPerIp)
        );
        let _c = guard.admit(ip("10.0.0.2")).unwrap();
        assert_eq!(
            guard.admit(ip("10.0.0.3")).err(),
            Some(Refusal::Connections)
        );
        drop(a);
        let _d = guard.admit(ip("10.0.0.1")).unwrap();
        assert_eq!(guard.open.load(Ordering::Relaxed), 3);
    }

    #[test]
    fn an_ipv6_host_is_its_64_block_and_exempt_addresses_are_not_counted() {
        let guard = Guard::new(AddressLimits {
            max_connections_per_ip: 1,
            unlimited: vec![ip("127.0.0.1"), ip("::1")],
            ..AddressLimits::default()
        });
        let _a = guard.admit(ip("2001:db8::1")).unwrap();
        assert!(guard.admit(ip("2001:db8::2")).is_err());
        assert!(guard.admit(ip("2001:db8:0:1::1")).is_ok());
        let _local: Vec<_> = (0..5)
            .map(|_| guard.admit(ip("127.0.0.1")).unwrap())
            .collect();
    }

    #[test]
    fn behind_an_unlimited_proxy_the_forwarded_address_is_the_clients() {
        let guard = Guard::new(AddressLimits {
            unlimited: vec![ip("127.0.0.1")],
            ..AddressLimits::default()
        });
        let proxy = ip("127.0.0.1");
        assert_eq!(
            guard.client_ip(proxy, Some("198.51.100.7, 203.0.113.5")),
            ip("203.0.113.5")
        );
        assert_eq!(guard.client_ip(proxy, Some("garbage")), proxy);
        assert_eq!(guard.client_ip(proxy, None), proxy);
        // Anyone else's word for their address is not taken.
        let other = ip("192.0.2.1");
        assert_eq!(guard.client_ip(other, Some("203.0.113.5")), other);
    }

    #[test]
    fn guests_create_within_a_burst_and_a_cap_on_waiting_matches() {
        let guard = Guard::new(AddressLimits {
            guest_create_burst: 3,
            guest_create_per_minute: 1,
            guest_waiting_per_ip: 2,
            ..AddressLimits::default()
        });
        let here = ip("10.1.1.1");
        let waiting = |_: &str| true;
        guard.guest_create(here, waiting).unwrap();
        guard.guest_created(here, "m1");
        guard.guest_create(here, waiting).unwrap();
        guard.guest_created(here, "m2");
        assert_eq!(guard.guest_create(here, waiting), Err(Refusal::Waiting));
        // Once one of them starts, another may wait; the burst is then used up.
        let started = |id: &str| id != "m1";
        guard.guest_create(here, started).unwrap();
        guard.guest_created(here, "m3");
        let none = |_: &str| false;
        assert_eq!(guard.guest_create(here, none), Err(Refusal::Creates));
        assert!(guard.guest_create(ip("10.1.1.2"), none).is_ok());
        guard.upkeep(none);
        assert!(guard.waiting.is_empty());
    }

    #[test]
    fn messages_are_limited_per_address_across_connections() {
        let guard = Guard::new(AddressLimits {
            ip_rate_per_sec: 1,
            ip_rate_burst: 5,
            ..AddressLimits::default()
        });
        let here = ip("10.2.2.2");
        let through = (0..20).filter(|_| guard.message(here).is_ok()).count();
        assert_eq!(through, 5);
        let wait = guard.message(here).unwrap_err();
        assert!(
            wait > Duration::ZERO && wait <= Duration::from_secs(1),
            "{wait:?}"
        );
        assert!(guard.message(ip("10.2.2.3")).is_ok());
    }
}
