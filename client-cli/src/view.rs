//! What a client knows about a match: the `state` snapshot, kept up to date by the events that
//! follow it, and how that is written on a terminal (the board, the clocks, the score, one line
//! per event).
//!
//! The board is rebuilt locally by replaying the set's moves with the rules engine, since events
//! carry moves, not boards. The clocks are the last reading from the server, counted down
//! locally for the running seat until the next reading arrives.

use std::time::Instant;

use hakem_games::pentago::{self, Cell};
use hakem_games::{AnyPosition, GameKind, Side};
use hakem_protocol::{
    Clocks, Event, EventFrame, MatchState, MatchStatus, Pending, PerSeat, Points, RoundResult,
    Scope, Seat, SetResult, Winner,
};
use serde_json::Value;

use crate::rules::side_name;

pub struct View {
    pub match_id: String,
    game: Option<GameKind>,
    game_name: String,
    variant: String,
    sets_max: u8,
    warnings_limit: u8,
    names: PerSeat<String>,
    connected: PerSeat<bool>,
    ready: PerSeat<bool>,
    pub status: MatchStatus,
    set: u8,
    sets: Vec<SetResult>,
    set_points: PerSeat<Points>,
    warnings: PerSeat<u8>,
    round: Option<RoundResult>,
    paused: bool,
    first_mover: Option<Seat>,
    moves: Vec<String>,
    pending: Option<Pending>,
    awaiting_press: Option<Seat>,
    /// The set's position after `moves`; `None` when this client cannot replay them (an unknown
    /// game, or moves its rules engine refuses), and the server's picture is shown instead.
    position: Option<AnyPosition>,
    /// The server's picture of the board from the last snapshot.
    board_json: Value,
    clocks: Option<(Clocks, Instant)>,
    /// `p1`, `p2`, `arbiter` or `spectator`.
    pub you: Option<String>,
}

impl View {
    pub fn from_state(state: MatchState) -> View {
        let game = state.game.parse::<GameKind>().ok();
        let mut view = View {
            match_id: state.match_id,
            game,
            game_name: state.game,
            variant: state.variant,
            sets_max: state.sets_max,
            warnings_limit: state.warnings_limit,
            names: PerSeat::new(state.players.p1.name, state.players.p2.name),
            connected: PerSeat::new(state.players.p1.connected, state.players.p2.connected),
            ready: PerSeat::new(state.players.p1.ready, state.players.p2.ready),
            status: state.status,
            set: state.set,
            sets: state.sets,
            set_points: state.set_points,
            warnings: state.warnings,
            round: state.round,
            paused: state.paused,
            first_mover: state.position.first_mover,
            moves: state.position.moves,
            pending: state.position.pending,
            awaiting_press: state.position.awaiting_press,
            position: None,
            board_json: state.position.board,
            clocks: state.clocks.map(|c| (c, Instant::now())),
            you: state.you,
        };
        view.position = view.replay();
        view
    }

    /// The position after the current set's moves, if this client's rules engine can play them.
    fn replay(&self) -> Option<AnyPosition> {
        let mut position = AnyPosition::new(self.game?, Some(&self.variant)).ok()?;
        for mv in &self.moves {
            position.play_str(mv).ok()?;
        }
        Some(position)
    }

    /// The seat this client plays, if it is a player.
    pub fn my_seat(&self) -> Option<Seat> {
        match self.you.as_deref() {
            Some("p1") => Some(Seat::P1),
            Some("p2") => Some(Seat::P2),
            _ => None,
        }
    }

    pub fn is_finished(&self) -> bool {
        self.status == MatchStatus::Finished
    }

    /// Applies one event, as the server's own state machine does.
    pub fn apply(&mut self, frame: &EventFrame) {
        if let Some(clocks) = frame.clocks {
            self.clocks = Some((clocks, Instant::now()));
        }
        match &frame.event {
            Event::SetStarted { set, first_mover } => {
                self.set = *set;
                self.status = MatchStatus::Playing;
                self.first_mover = Some(*first_mover);
                self.moves.clear();
                self.pending = None;
                self.awaiting_press = None;
                self.ready = PerSeat::default();
                self.paused = false;
                self.board_json = Value::Null;
                self.position = self.replay();
            }
            Event::Placed { seat, cell } => {
                self.pending = Some(Pending {
                    seat: *seat,
                    cell: cell.clone(),
                    quadrant: None,
                    dir: None,
                });
            }
            Event::Rotated { quadrant, dir, .. } => {
                if let Some(pending) = &mut self.pending {
                    pending.quadrant = Some(quadrant.clone());
                    pending.dir = Some(dir.clone());
                }
            }
            Event::Moved { seat, mv } => {
                self.moves.push(mv.clone());
                if let Some(position) = &mut self.position {
                    if position.play_str(mv).is_err() {
                        self.position = None;
                    }
                }
                self.pending = None;
                // A move that ends the set is followed at once by `set_ended`, which clears this.
                self.awaiting_press = Some(*seat);
            }
            Event::Pressed { .. } => self.awaiting_press = None,
            Event::SetEnded(result) => {
                // Saturating: numbers from the server must not be able to crash the client.
                let add = |points: &mut Points, halves: u32| {
                    points.halves = points.halves.saturating_add(halves);
                };
                match result.winner {
                    Some(seat) => add(self.set_points.get_mut(seat), 2),
                    None => {
                        add(&mut self.set_points.p1, 1);
                        add(&mut self.set_points.p2, 1);
                    }
                }
                self.sets.push(result.clone());
                self.status = MatchStatus::BetweenSets;
                self.pending = None;
                self.awaiting_press = None;
                self.paused = false;
            }
            Event::Warning { seat, count, .. } => *self.warnings.get_mut(*seat) = *count,
            Event::RoundEnded(result) => {
                self.set_points = result.set_points;
                self.round = Some(result.clone());
                self.status = MatchStatus::Finished;
                self.pending = None;
                self.awaiting_press = None;
                self.paused = false;
            }
            Event::Paused => self.paused = true,
            Event::Resumed => self.paused = false,
            Event::PlayerConnected { seat } => *self.connected.get_mut(*seat) = true,
            Event::PlayerDisconnected { seat } => *self.connected.get_mut(*seat) = false,
            Event::Ready { seat } => *self.ready.get_mut(*seat) = true,
            Event::ClockAdjusted { .. } | Event::Claim { .. } | Event::Declared { .. } => {}
        }
    }

    /// Takes the clock reading of an event this client does not understand.
    pub fn apply_clocks(&mut self, clocks: Option<Clocks>) {
        if let Some(clocks) = clocks {
            self.clocks = Some((clocks, Instant::now()));
        }
    }

    /// The seat expected to act: the mover, or the seat that still has to press.
    fn to_act(&self) -> Option<Seat> {
        if self.status != MatchStatus::Playing {
            return None;
        }
        if let Some(seat) = self.awaiting_press {
            return Some(seat);
        }
        let first = self.first_mover?;
        Some(match self.position.as_ref()?.to_move() {
            Side::First => first,
            Side::Second => first.other(),
        })
    }

    /// A seat's name in the game's own terms for the current set: black or white in Pentago.
    fn colour(&self, seat: Seat) -> Option<&'static str> {
        let game = self.game?;
        let first = self.first_mover?;
        let side = if seat == first {
            Side::First
        } else {
            Side::Second
        };
        Some(side_name(game, side))
    }

    /// `p1 (Ayşe Yılmaz)`, or `p1` for a nameless seat.
    pub fn who(&self, seat: Seat) -> String {
        let name = self.names.get(seat);
        if name.is_empty() {
            seat.to_string()
        } else {
            format!("{seat} ({name})")
        }
    }

    /// A seat's remaining time now: the last reading, less the time since then if it runs.
    fn remaining_ms(&self, seat: Seat) -> Option<u64> {
        let (clocks, at) = self.clocks.as_ref()?;
        let reading = clocks.remaining(seat);
        if clocks.running == Some(seat) && !clocks.paused && self.status == MatchStatus::Playing {
            let elapsed = u64::try_from(at.elapsed().as_millis()).unwrap_or(u64::MAX);
            Some(reading.saturating_sub(elapsed))
        } else {
            Some(reading)
        }
    }

    /// Both clocks on one line after `label`, e.g.
    /// `clocks: p1 (Ayşe) black 14:52 running | p2 (Bora) white 15:00`.
    pub fn clock_line(&self, label: &str) -> String {
        let Some((clocks, _)) = &self.clocks else {
            return format!("{label}: untimed match");
        };
        let one = |seat: Seat| {
            let mut text = self.who(seat);
            if let Some(colour) = self.colour(seat) {
                text.push(' ');
                text.push_str(colour);
            }
            text.push(' ');
            text.push_str(&format_ms(self.remaining_ms(seat).unwrap_or(0)));
            if clocks.running == Some(seat)
                && !clocks.paused
                && !self.paused
                && self.status == MatchStatus::Playing
            {
                text.push_str(" running");
            }
            text
        };
        let paused = if clocks.paused || self.paused {
            " (paused by the arbiter)"
        } else {
            ""
        };
        format!("{label}: {} | {}{paused}", one(Seat::P1), one(Seat::P2))
    }

    fn score_line(&self) -> String {
        let mut line = format!(
            "{} {} | set {} of {} | set score {} {} - {} {} | warnings {} {} {} {} (limit {})",
            self.game_name,
            self.variant,
            self.set.max(1),
            self.sets_max,
            Seat::P1,
            format_points(self.set_points.p1),
            format_points(self.set_points.p2),
            Seat::P2,
            Seat::P1,
            self.warnings.p1,
            Seat::P2,
            self.warnings.p2,
            self.warnings_limit,
        );
        for seat in Seat::BOTH {
            if !self.connected.get(seat) {
                line.push_str(&format!(" | {seat} not connected"));
            }
        }
        line
    }

    /// `p1 (Ayşe, you)` for this client's own seat, else as [`View::who`].
    fn who_you(&self, seat: Seat) -> String {
        if self.my_seat() != Some(seat) {
            return self.who(seat);
        }
        let name = self.names.get(seat);
        if name.is_empty() {
            format!("{seat} (you)")
        } else {
            format!("{seat} ({name}, you)")
        }
    }

    /// What happens next, addressed to this client's role.
    fn turn_line(&self) -> String {
        let mine = self.my_seat();
        match self.status {
            MatchStatus::Waiting | MatchStatus::BetweenSets => {
                let waiting: Vec<String> = Seat::BOTH
                    .into_iter()
                    .filter(|&seat| !self.ready.get(seat))
                    .map(|seat| self.who_you(seat))
                    .collect();
                let next = if self.status == MatchStatus::Waiting {
                    1
                } else {
                    self.set.saturating_add(1)
                };
                let hint = match mine {
                    Some(seat) if !self.ready.get(seat) => ": type `ready`",
                    _ => "",
                };
                format!(
                    "set {next} starts when both players are ready (waiting for {}){hint}",
                    waiting.join(" and ")
                )
            }
            MatchStatus::Finished => match &self.round {
                Some(round) => round_text(self, round),
                None => "the round is over".to_string(),
            },
            MatchStatus::Playing => {
                let Some(seat) = self.to_act() else {
                    return "set in progress".to_string();
                };
                let paused = if self.paused {
                    " (clocks paused by the arbiter)"
                } else {
                    ""
                };
                let yours = mine == Some(seat);
                if self.awaiting_press == Some(seat) {
                    let hint = if yours { ": type `press`" } else { "" };
                    format!("{} to press the clock{hint}{paused}", self.who_you(seat))
                } else {
                    let hint = if yours { ": your turn" } else { "" };
                    format!("{} to move{hint}{paused}", self.who_you(seat))
                }
            }
        }
    }

    fn pending_line(&self) -> Option<String> {
        let pending = self.pending.as_ref()?;
        Some(match (&pending.quadrant, &pending.dir) {
            (Some(quadrant), Some(dir)) => format!(
                "{} placed {} and turned {quadrant} {dir}, not yet pressed",
                pending.seat, pending.cell
            ),
            _ => format!(
                "{} placed {}, quadrant not yet turned",
                pending.seat, pending.cell
            ),
        })
    }

    /// The board as text, with a Pentago marble that is placed but not yet turned on it.
    fn board_text(&self) -> Option<String> {
        match &self.position {
            Some(AnyPosition::Pentago(position)) => {
                let placement = self
                    .pending
                    .as_ref()
                    .filter(|p| p.quadrant.is_none())
                    .and_then(|p| pentago::Move::parse(&p.cell).ok())
                    .and_then(|mv| position.place(mv.cell).ok());
                Some(match placement {
                    Some(placement) => pentago_text(|cell| placement.stone_at(cell)),
                    None => pentago_text(|cell| position.stone_at(cell)),
                })
            }
            Some(position) => Some(position.board_text()),
            None => server_rows(&self.board_json),
        }
    }

    /// The whole picture: board, score, clocks, whose turn.
    pub fn render(&self) -> String {
        let mut out = String::new();
        if self.status != MatchStatus::Waiting {
            if let Some(board) = self.board_text() {
                out.push_str(&board);
            }
            if !self.moves.is_empty() {
                out.push_str(&format!("moves: {}\n", self.moves.join(" ")));
            }
        }
        out.push_str(&self.score_line());
        out.push('\n');
        out.push_str(&self.clock_line("clocks"));
        out.push('\n');
        if let Some(line) = self.pending_line() {
            out.push_str(&line);
            out.push('\n');
        }
        out.push_str(&self.turn_line());
        out.push('\n');
        out
    }

    /// The finished sets, one line each, for a client that joins late.
    pub fn history(&self) -> Vec<String> {
        self.sets.iter().map(|set| set_text(self, set)).collect()
    }

    /// One readable line for an event (without the leading marker).
    pub fn event_line(&self, event: &Event) -> String {
        match event {
            Event::SetStarted { set, first_mover } => {
                let colour = self
                    .colour(*first_mover)
                    .map(|c| format!(" and plays {c}"))
                    .unwrap_or_default();
                format!(
                    "set {set} started: {} moves first{colour}",
                    self.who(*first_mover)
                )
            }
            Event::Placed { seat, cell } => format!("{seat} placed {cell}"),
            Event::Rotated {
                seat,
                quadrant,
                dir,
            } => {
                let dir = match dir.as_str() {
                    "cw" => "clockwise",
                    "ccw" => "counter-clockwise",
                    other => other,
                };
                format!("{seat} turned {quadrant} {dir}")
            }
            Event::Moved { seat, mv } => format!("{seat} moved {mv}"),
            Event::Pressed { seat } => format!("{seat} pressed the clock"),
            Event::SetEnded(result) => set_text(self, result),
            Event::Warning {
                seat,
                count,
                reason,
            } => format!(
                "warning to {} ({count} of {}){}",
                self.who(*seat),
                self.warnings_limit,
                reason_suffix(reason)
            ),
            Event::RoundEnded(result) => round_text(self, result),
            Event::Paused => "the arbiter paused the clocks".to_string(),
            Event::Resumed => "the arbiter resumed the clocks".to_string(),
            Event::ClockAdjusted { seat, delta_ms } => {
                let sign = if *delta_ms < 0 { "-" } else { "+" };
                format!(
                    "the arbiter adjusted {seat}'s clock by {sign}{}",
                    format_ms(delta_ms.unsigned_abs())
                )
            }
            Event::Claim { seat, text } => format!("claim by {}: {text}", self.who(*seat)),
            Event::PlayerConnected { seat } => format!("{} connected", self.who(*seat)),
            Event::PlayerDisconnected { seat } => format!("{} disconnected", self.who(*seat)),
            Event::Ready { seat } => format!("{seat} is ready"),
            Event::Declared {
                scope,
                winner,
                reason,
            } => {
                let scope = match scope {
                    Scope::Set => "the set",
                    Scope::Round => "the round",
                };
                let decision = match winner.seat() {
                    Some(seat) => format!("won by {}", self.who(seat)),
                    None => "drawn".to_string(),
                };
                format!(
                    "the arbiter declared {scope} {decision}{}",
                    reason_suffix(reason)
                )
            }
        }
    }
}

fn reason_suffix(reason: &str) -> String {
    if reason.trim().is_empty() {
        String::new()
    } else {
        format!(": {reason}")
    }
}

fn set_text(view: &View, set: &SetResult) -> String {
    let outcome = match set.winner {
        Some(seat) => format!("{} wins", view.who(seat)),
        None => "drawn".to_string(),
    };
    format!(
        "set {} ended {}: {outcome} by {}",
        set.set, set.result, set.reason
    )
}

fn round_text(view: &View, round: &RoundResult) -> String {
    let outcome = match round.winner {
        Winner::Draw => "the round is drawn".to_string(),
        winner => match winner.seat() {
            Some(seat) => format!("{} wins the round", view.who(seat)),
            None => "the round is over".to_string(),
        },
    };
    format!(
        "round over: {outcome}, set points {} {} - {} {} (by {})",
        Seat::P1,
        format_points(round.set_points.p1),
        format_points(round.set_points.p2),
        Seat::P2,
        round.reason
    )
}

/// `2`, `1.5`, `0.5`.
pub fn format_points(points: Points) -> String {
    if points.halves % 2 == 0 {
        (points.halves / 2).to_string()
    } else {
        format!("{}.5", points.halves / 2)
    }
}

/// `14:05`; tenths below 20 seconds, when they matter: `0:09.4`.
pub fn format_ms(ms: u64) -> String {
    let minutes = ms / 60_000;
    let seconds = (ms / 1000) % 60;
    if ms < 20_000 {
        format!("{minutes}:{seconds:02}.{}", (ms / 100) % 10)
    } else {
        format!("{minutes}:{seconds:02}")
    }
}

/// A Pentago board in the rules engine's own layout (rank 6 on top, quadrants separated).
fn pentago_text(stone_at: impl Fn(Cell) -> Option<Side>) -> String {
    let mut out = String::from("    a b c   d e f\n");
    for rank in (0..6u8).rev() {
        if rank == 2 {
            out.push_str("   -------+-------\n");
        }
        out.push_str(&format!(" {} ", rank + 1));
        for file in 0..6u8 {
            if file == 3 {
                out.push_str(" |");
            }
            let mark = match Cell::new(file, rank).and_then(&stone_at) {
                Some(Side::First) => 'x',
                Some(Side::Second) => 'o',
                None => '.',
            };
            out.push(' ');
            out.push(mark);
        }
        out.push_str(&format!("  {}\n", rank + 1));
    }
    out.push_str("    a b c   d e f\n");
    out
}

/// The server's `rows` picture, for a game this client cannot replay.
fn server_rows(board: &Value) -> Option<String> {
    let rows = board.get("rows")?.as_array()?;
    let mut out = String::new();
    for row in rows {
        out.push_str("  ");
        out.push_str(row.as_str()?);
        out.push('\n');
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use hakem_protocol::{PlayerInfo, PositionView};

    fn state() -> MatchState {
        let player = |name: &str| PlayerInfo {
            name: name.to_string(),
            connected: true,
            ready: false,
            house_bot: false,
        };
        MatchState {
            match_id: "m1".into(),
            seq: 0,
            game: "pentago".into(),
            variant: "classic".into(),
            sets_max: 3,
            clock: None,
            warnings_limit: 3,
            players: PerSeat::new(player("Ayşe"), player("")),
            status: MatchStatus::Waiting,
            set: 0,
            sets: Vec::new(),
            set_points: PerSeat::default(),
            warnings: PerSeat::default(),
            round: None,
            paused: false,
            position: PositionView {
                to_move: None,
                first_mover: None,
                moves: Vec::new(),
                pending: None,
                awaiting_press: None,
                board: Value::Null,
                legal_moves: None,
            },
            clocks: Some(Clocks {
                p1_ms: 60_000,
                p2_ms: 60_000,
                running: None,
                paused: false,
                server_time_ms: 0,
            }),
            you: Some("p2".into()),
            tournament: None,
        }
    }

    fn frame(seq: u64, event: Event, running: Option<Seat>) -> EventFrame {
        EventFrame {
            match_id: "m1".into(),
            seq,
            event,
            clocks: Some(Clocks {
                p1_ms: 60_000,
                p2_ms: 60_000,
                running,
                paused: false,
                server_time_ms: 0,
            }),
        }
    }

    #[test]
    fn events_update_board_turn_and_score() {
        let mut view = View::from_state(state());
        assert!(view.render().contains("type `ready`"));
        view.apply(&frame(
            1,
            Event::SetStarted {
                set: 1,
                first_mover: Seat::P1,
            },
            Some(Seat::P1),
        ));
        assert!(view.render().contains("p1 (Ayşe) to move"));
        view.apply(&frame(
            2,
            Event::Placed {
                seat: Seat::P1,
                cell: "a1".into(),
            },
            Some(Seat::P1),
        ));
        // The placed marble shows before the turn.
        let text = view.render();
        assert!(text.contains(" 1  x . . | . . .  1"), "{text}");
        assert!(
            text.contains("p1 placed a1, quadrant not yet turned"),
            "{text}"
        );
        view.apply(&frame(
            3,
            Event::Moved {
                seat: Seat::P1,
                mv: "a1se".into(),
            },
            Some(Seat::P1),
        ));
        assert!(view.render().contains("p1 (Ayşe) to press the clock"));
        view.apply(&frame(4, Event::Pressed { seat: Seat::P1 }, Some(Seat::P2)));
        let text = view.render();
        assert!(text.contains("p2 (you) to move: your turn"), "{text}");
        assert!(text.contains("p2 white 1:00 running"), "{text}");
        view.apply(&frame(
            5,
            Event::SetEnded(SetResult {
                set: 1,
                first_mover: Seat::P1,
                result: "1/2-1/2".into(),
                winner: None,
                reason: "arbiter".into(),
            }),
            None,
        ));
        assert!(view.render().contains("set score p1 0.5 - 0.5 p2"));
        assert_eq!(view.history(), ["set 1 ended 1/2-1/2: drawn by arbiter"]);
    }

    #[test]
    fn a_move_the_engine_refuses_falls_back_to_no_board() {
        let mut view = View::from_state(state());
        view.apply(&frame(
            1,
            Event::SetStarted {
                set: 1,
                first_mover: Seat::P1,
            },
            None,
        ));
        view.apply(&frame(
            2,
            Event::Moved {
                seat: Seat::P1,
                mv: "zz9".into(),
            },
            None,
        ));
        assert!(view.render().contains("moves: zz9"));
    }

    #[test]
    fn nonsense_from_the_server_does_not_crash_the_client() {
        let mut state = state();
        state.game = "chess".into();
        state.set = u8::MAX;
        state.status = MatchStatus::BetweenSets;
        state.set_points = PerSeat::new(Points { halves: u32::MAX }, Points::ZERO);
        state.position.board = serde_json::json!({"rows": ["..x", 7]});
        state.clocks = Some(Clocks {
            p1_ms: u64::MAX,
            p2_ms: 0,
            running: Some(Seat::P1),
            paused: false,
            server_time_ms: 0,
        });
        let mut view = View::from_state(state);
        view.render();
        for event in [
            Event::Rotated {
                seat: Seat::P2,
                quadrant: "zz".into(),
                dir: "sideways".into(),
            },
            Event::Pressed { seat: Seat::P1 },
            Event::SetEnded(SetResult {
                set: 0,
                first_mover: Seat::P2,
                result: String::new(),
                winner: Some(Seat::P1),
                reason: String::new(),
            }),
            Event::ClockAdjusted {
                seat: Seat::P1,
                delta_ms: i64::MIN,
            },
            Event::Warning {
                seat: Seat::P2,
                count: u8::MAX,
                reason: String::new(),
            },
        ] {
            view.apply(&frame(9, event.clone(), Some(Seat::P1)));
            view.event_line(&event);
            view.render();
        }
        assert_eq!(view.set_points.p1.halves, u32::MAX);
    }

    #[test]
    fn times_are_written_as_a_clock_shows_them() {
        assert_eq!(format_ms(900_000), "15:00");
        assert_eq!(format_ms(61_999), "1:01");
        assert_eq!(format_ms(9_450), "0:09.4");
        assert_eq!(format_points(Points { halves: 3 }), "1.5");
    }
}
