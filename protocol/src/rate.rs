//! The message rate as a token bucket: the server holds each connection to the rate its
//! `welcome` states ([`crate::MessageRate`]), and a client paces what it sends within it. Time
//! is passed in, so that it is the caller's clock (the server's is paused in tests).

use std::time::{Duration, Instant};

/// Allows `per_second` messages a second on average and bursts of `burst`.
#[derive(Clone, Debug)]
pub struct TokenBucket {
    per_second: f64,
    burst: f64,
    tokens: f64,
    last: Instant,
}

impl TokenBucket {
    /// A bucket full at `now`.
    pub fn new(per_second: f64, burst: f64, now: Instant) -> TokenBucket {
        TokenBucket {
            per_second,
            burst,
            tokens: burst,
            last: now,
        }
    }

    /// The most messages it lets through at once.
    pub fn burst(&self) -> f64 {
        self.burst
    }

    /// Takes a token at `now`, or says how long until there is one (and takes none).
    pub fn take(&mut self, now: Instant) -> Option<Duration> {
        let earned = now.saturating_duration_since(self.last).as_secs_f64() * self.per_second;
        self.tokens = (self.tokens + earned).min(self.burst);
        self.last = self.last.max(now);
        if self.tokens >= 1.0 {
            self.tokens -= 1.0;
            None
        } else {
            Some(Duration::from_secs_f64(
                (1.0 - self.tokens) / self.per_second,
            ))
        }
    }

    /// Returns a token taken for a message that still has to wait for something else.
    pub fn give_back(&mut self) {
        self.tokens = (self.tokens + 1.0).min(self.burst);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_burst_at_once_then_the_rate() {
        let start = Instant::now();
        let mut bucket = TokenBucket::new(4.0, 3.0, start);
        for _ in 0..3 {
            assert_eq!(bucket.take(start), None);
        }
        assert_eq!(bucket.take(start), Some(Duration::from_millis(250)));
        // Asking again takes nothing.
        assert_eq!(bucket.take(start), Some(Duration::from_millis(250)));
        let later = start + Duration::from_millis(250);
        assert_eq!(bucket.take(later), None);
        assert_eq!(bucket.take(later), Some(Duration::from_millis(250)));
        // A long pause refills it to the burst, no further.
        let much_later = later + Duration::from_secs(60);
        for _ in 0..3 {
            assert_eq!(bucket.take(much_later), None);
        }
        assert!(bucket.take(much_later).is_some());
    }

    #[test]
    fn a_token_given_back_is_taken_again_but_never_beyond_the_burst() {
        let start = Instant::now();
        let mut bucket = TokenBucket::new(1.0, 2.0, start);
        assert_eq!(bucket.take(start), None);
        bucket.give_back();
        bucket.give_back();
        assert_eq!(bucket.burst(), 2.0);
        assert_eq!(bucket.take(start), None);
        assert_eq!(bucket.take(start), None);
        assert_eq!(bucket.take(start), Some(Duration::from_secs(1)));
    }

    #[test]
    fn an_earlier_time_than_the_last_earns_nothing() {
        let start = Instant::now() + Duration::from_secs(1);
        let mut bucket = TokenBucket::new(10.0, 1.0, start);
        assert_eq!(bucket.take(start), None);
        assert_eq!(
            bucket.take(start - Duration::from_secs(1)),
            Some(Duration::from_millis(100))
        );
    }
}
