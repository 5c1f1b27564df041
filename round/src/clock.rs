//! The chess clock as plain arithmetic: the caller passes the current time in, as milliseconds
//! on a monotonic scale of its choosing (a room counts from its own start). Nothing here reads
//! a clock or sleeps, so every rule can be tested exactly.

use hakem_protocol::{ClockConfig, Clocks, PerSeat, Seat};

/// Milliseconds on the caller's monotonic scale.
pub type Millis = u64;

/// The most a clock may hold: a day. Larger readings are arbiter typos or attacks, and a
/// bound keeps every sum below far from overflow.
pub const MAX_CLOCK_MS: u64 = 24 * 3_600_000;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Clock {
    config: ClockConfig,
    /// Time left at `since` (for the running seat) or now (for the other).
    remaining: PerSeat<u64>,
    running: Option<Seat>,
    /// When the running seat's time last started going down.
    since: Millis,
    paused: bool,
}

impl Clock {
    /// Both clocks at the configured time, neither running.
    pub fn new(config: ClockConfig) -> Clock {
        Clock {
            config,
            remaining: PerSeat::new(config.initial_ms, config.initial_ms),
            running: None,
            since: 0,
            paused: false,
        }
    }

    pub fn config(&self) -> ClockConfig {
        self.config
    }

    /// Resets both clocks to the configured time for a new set and starts `first`'s.
    pub fn start_set(&mut self, first: Seat, now: Millis) {
        self.remaining = PerSeat::new(self.config.initial_ms, self.config.initial_ms);
        self.paused = false;
        self.start(first, now);
    }

    fn start(&mut self, seat: Seat, now: Millis) {
        self.running = Some(seat);
        self.since = now;
    }

    /// Charges the running seat for the time since it started and restarts the count at `now`.
    fn settle(&mut self, now: Millis) {
        if let (Some(seat), false) = (self.running, self.paused) {
            let elapsed = now.saturating_sub(self.since);
            let left = self.remaining.get_mut(seat);
            *left = left.saturating_sub(elapsed);
        }
        self.since = now;
    }

    /// Time left for `seat` at `now`.
    pub fn remaining(&self, seat: Seat, now: Millis) -> u64 {
        let left = *self.remaining.get(seat);
        if self.running == Some(seat) && !self.paused {
            left.saturating_sub(now.saturating_sub(self.since))
        } else {
            left
        }
    }

    /// The press: the mover's clock stops (the increment is added) and the other's starts.
    pub fn press(&mut self, now: Millis) {
        self.settle(now);
        if let Some(seat) = self.running {
            let left = self.remaining.get_mut(seat);
            *left = left
                .saturating_add(self.config.increment_ms)
                .min(MAX_CLOCK_MS);
            self.start(seat.other(), now);
        }
    }

    /// Stops both clocks (the set is over).
    pub fn stop(&mut self, now: Millis) {
        self.settle(now);
        self.running = None;
        self.paused = false;
    }

    pub fn pause(&mut self, now: Millis) {
        self.settle(now);
        self.paused = true;
    }

    pub fn resume(&mut self, now: Millis) {
        self.settle(now);
        self.paused = false;
        self.since = now;
    }

    pub fn is_paused(&self) -> bool {
        self.paused
    }

    pub fn running(&self) -> Option<Seat> {
        self.running
    }

    /// Adds `delta_ms` (negative: removes) to `seat`'s time; never below zero nor above
    /// [`MAX_CLOCK_MS`].
    pub fn adjust(&mut self, seat: Seat, delta_ms: i64, now: Millis) {
        self.settle(now);
        let left = self.remaining.get_mut(seat);
        *left = if delta_ms >= 0 {
            left.saturating_add(delta_ms.unsigned_abs())
                .min(MAX_CLOCK_MS)
        } else {
            left.saturating_sub(delta_ms.unsigned_abs())
        };
    }

    /// The moment the running clock reaches zero, if one is running.
    pub fn deadline(&self) -> Option<Millis> {
        match (self.running, self.paused) {
            // Saturating: a deadline past the end of time is never, not a wrapped moment in
            // the past that would fire at once and forever.
            (Some(seat), false) => Some(self.since.saturating_add(*self.remaining.get(seat))),
            _ => None,
        }
    }

    /// The seat whose time has run out at `now`, if any.
    pub fn flagged(&self, now: Millis) -> Option<Seat> {
        self.running
            .filter(|&seat| !self.paused && self.remaining(seat, now) == 0)
    }

    /// Sets the clocks to a recorded reading, as of `now` (used when a match is restored: the
    /// time the server was down is charged to nobody).
    pub fn restore(&mut self, reading: &Clocks, now: Millis) {
        self.remaining = PerSeat::new(reading.p1_ms, reading.p2_ms);
        self.running = reading.running;
        self.paused = reading.paused;
        self.since = now;
    }

    /// Takes `ms` off the running seat's time (never below zero); nothing if no clock runs.
    pub fn charge(&mut self, ms: u64) {
        if let (Some(seat), false) = (self.running, self.paused) {
            let left = self.remaining.get_mut(seat);
            *left = left.saturating_sub(ms);
        }
    }

    /// The reading at `now`, stamped with the wall-clock time for clients.
    pub fn reading(&self, now: Millis, server_time_ms: u64) -> Clocks {
        Clocks {
            p1_ms: self.remaining(Seat::P1, now),
            p2_ms: self.remaining(Seat::P2, now),
            running: self.running,
            paused: self.paused,
            server_time_ms,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIN: u64 = 60_000;

    fn clock(initial_ms: u64, increment_ms: u64) -> Clock {
        Clock::new(ClockConfig {
            initial_ms,
            increment_ms,
        })
    }

    #[test]
    fn the_movers_clock_runs_until_the_press() {
        let mut c = clock(15 * MIN, 0);
        c.start_set(Seat::P1, 1_000);
        assert_eq!(c.remaining(Seat::P1, 11_000), 15 * MIN - 10_000);
        assert_eq!(c.remaining(Seat::P2, 11_000), 15 * MIN);
        c.press(11_000);
        assert_eq!(c.running(), Some(Seat::P2));
        assert_eq!(c.remaining(Seat::P1, 20_000), 15 * MIN - 10_000);
        assert_eq!(c.remaining(Seat::P2, 20_000), 15 * MIN - 9_000);
    }

    #[test]
    fn the_increment_is_added_at_the_press() {
        let mut c = clock(MIN, 2_000);
        c.start_set(Seat::P1, 0);
        c.press(5_000);
        assert_eq!(c.remaining(Seat::P1, 5_000), MIN - 5_000 + 2_000);
    }

    #[test]
    fn the_deadline_is_exactly_when_the_time_is_used_up() {
        let mut c = clock(15 * MIN, 0);
        c.start_set(Seat::P1, 500);
        assert_eq!(c.deadline(), Some(500 + 15 * MIN));
        assert_eq!(c.flagged(500 + 15 * MIN - 1), None);
        assert_eq!(c.flagged(500 + 15 * MIN), Some(Seat::P1));
    }

    #[test]
    fn each_set_resets_both_clocks() {
        let mut c = clock(MIN, 0);
        c.start_set(Seat::P1, 0);
        c.press(10_000);
        c.stop(15_000);
        c.start_set(Seat::P2, 20_000);
        assert_eq!(c.remaining(Seat::P1, 20_000), MIN);
        assert_eq!(c.remaining(Seat::P2, 20_000), MIN);
        assert_eq!(c.running(), Some(Seat::P2));
    }

    #[test]
    fn a_paused_clock_does_not_run_and_has_no_deadline() {
        let mut c = clock(MIN, 0);
        c.start_set(Seat::P1, 0);
        c.pause(10_000);
        assert_eq!(c.deadline(), None);
        assert_eq!(c.remaining(Seat::P1, 50_000), MIN - 10_000);
        c.resume(50_000);
        assert_eq!(c.remaining(Seat::P1, 55_000), MIN - 15_000);
        assert_eq!(c.deadline(), Some(50_000 + MIN - 10_000));
    }

    #[test]
    fn adjust_adds_or_removes_time_never_below_zero() {
        let mut c = clock(MIN, 0);
        c.start_set(Seat::P1, 0);
        c.adjust(Seat::P2, 30_000, 1_000);
        assert_eq!(c.remaining(Seat::P2, 1_000), MIN + 30_000);
        c.adjust(Seat::P1, -10_000, 1_000);
        assert_eq!(c.remaining(Seat::P1, 1_000), MIN - 11_000);
        c.adjust(Seat::P1, -10 * MIN as i64, 2_000);
        assert_eq!(c.remaining(Seat::P1, 2_000), 0);
        assert_eq!(c.flagged(2_000), Some(Seat::P1));
    }

    #[test]
    fn a_stopped_clock_keeps_its_reading() {
        let mut c = clock(MIN, 0);
        c.start_set(Seat::P2, 0);
        c.stop(7_000);
        assert_eq!(c.running(), None);
        assert_eq!(c.remaining(Seat::P2, 100_000), MIN - 7_000);
        assert_eq!(c.deadline(), None);
    }

    #[test]
    fn charge_takes_time_off_the_running_clock_only() {
        let mut c = clock(MIN, 0);
        c.start_set(Seat::P1, 0);
        c.charge(1_500);
        assert_eq!(c.remaining(Seat::P1, 0), MIN - 1_500);
        assert_eq!(c.remaining(Seat::P2, 0), MIN);
        c.charge(10 * MIN);
        assert_eq!(c.remaining(Seat::P1, 0), 0);
        let mut paused = clock(MIN, 0);
        paused.start_set(Seat::P2, 0);
        paused.pause(0);
        paused.charge(1_000);
        assert_eq!(paused.remaining(Seat::P2, 0), MIN);
    }

    #[test]
    fn restore_continues_from_the_reading_without_charging_the_gap() {
        let mut c = clock(MIN, 0);
        let reading = Clocks {
            p1_ms: 40_000,
            p2_ms: 30_000,
            running: Some(Seat::P2),
            paused: false,
            server_time_ms: 0,
        };
        c.restore(&reading, 1_000_000);
        assert_eq!(c.remaining(Seat::P2, 1_000_000), 30_000);
        assert_eq!(c.deadline(), Some(1_030_000));
    }
}
