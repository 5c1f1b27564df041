//! How a client writes a match on a terminal: the board, the clocks, the score, one line per
//! event. It reads the match as the link keeps it (the state folded event by event); every
//! board comes from the server, so nothing here knows the rules.
//!
//! The clocks are the last reading from the server, counted down locally for the running
//! seat until the next reading arrives.

use std::time::Instant;

use hakem_games::{GameKind, Side};
use hakem_protocol::board::{Board, QuoridorBoard, Stones};
use hakem_protocol::{
    Event, MatchState, MatchStatus, Points, RoundReason, RoundResult, Scope, Seat, SetReason,
    SetResult, Winner,
};

use crate::rules::side_name;

/// A match to be written out: its state and when its clock reading arrived.
pub struct View<'a> {
    state: &'a MatchState,
    clocks_at: Instant,
}

impl<'a> View<'a> {
    pub fn new(state: &'a MatchState, clocks_at: Instant) -> View<'a> {
        View { state, clocks_at }
    }

    pub fn match_id(&self) -> &str {
        &self.state.match_id
    }

    /// How far behind spectators see the match, in words ("60 s and 2 moves"), if they do
    /// not see it live.
    pub fn spectator_delay(&self) -> Option<String> {
        let delay = self.state.spectator_delay.filter(|d| !d.is_live())?;
        let mut parts = Vec::new();
        if delay.seconds > 0 {
            parts.push(format!("{} s", delay.seconds));
        }
        match delay.moves {
            0 => {}
            1 => parts.push("1 move".to_string()),
            n => parts.push(format!("{n} moves")),
        }
        Some(parts.join(" and "))
    }

    /// The seat this client plays, if it is a player.
    pub fn my_seat(&self) -> Option<Seat> {
        match self.state.you.as_deref() {
            Some("p1") => Some(Seat::P1),
            Some("p2") => Some(Seat::P2),
            _ => None,
        }
    }

    fn game(&self) -> Option<GameKind> {
        self.state.game.parse().ok()
    }

    /// The seat expected to act: the mover, or the seat that still has to press.
    fn to_act(&self) -> Option<Seat> {
        if self.state.status != MatchStatus::Playing {
            return None;
        }
        self.state.position.to_move
    }

    /// A seat's name in the game's own terms for the current set: its colour in Pentago (the
    /// same in every set) and Pente, where it starts in Quoridor.
    fn colour(&self, seat: Seat) -> Option<&'static str> {
        if let Some(colours) = &self.state.colours {
            return Some(colours.get(seat).as_str());
        }
        let game = self.game()?;
        let first = self.state.position.first_mover?;
        let side = if seat == first {
            Side::First
        } else {
            Side::Second
        };
        Some(side_name(game, side))
    }

    /// `p1 (Ayşe Yılmaz)`, or `p1` for a nameless seat.
    pub fn who(&self, seat: Seat) -> String {
        let name = &self.state.players.get(seat).name;
        if name.is_empty() {
            seat.to_string()
        } else {
            format!("{seat} ({name})")
        }
    }

    /// A seat's remaining time now: the last reading, less the time since then if it runs.
    fn remaining_ms(&self, seat: Seat) -> Option<u64> {
        let clocks = self.state.clocks.as_ref()?;
        let reading = clocks.remaining(seat);
        if clocks.running == Some(seat)
            && !clocks.paused
            && self.state.status == MatchStatus::Playing
        {
            let elapsed = u64::try_from(self.clocks_at.elapsed().as_millis()).unwrap_or(u64::MAX);
            Some(reading.saturating_sub(elapsed))
        } else {
            Some(reading)
        }
    }

    /// Both clocks on one line after `label`, e.g.
    /// `clocks: p1 (Ayşe) black 14:52 running | p2 (Bora) white 15:00`.
    pub fn clock_line(&self, label: &str) -> String {
        let Some(clocks) = &self.state.clocks else {
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
                && !self.state.paused
                && self.state.status == MatchStatus::Playing
            {
                text.push_str(" running");
            }
            text
        };
        let paused = if clocks.paused || self.state.paused {
            " (paused by the arbiter)"
        } else {
            ""
        };
        format!("{label}: {} | {}{paused}", one(Seat::P1), one(Seat::P2))
    }

    fn score_line(&self) -> String {
        let s = self.state;
        let mut line = format!(
            "{} {} | set {} of {} | set score {} {} - {} {} | warnings {} {} {} {} (limit {})",
            s.game,
            s.variant,
            s.set.max(1),
            s.sets_max,
            Seat::P1,
            format_points(s.set_points.p1),
            format_points(s.set_points.p2),
            Seat::P2,
            Seat::P1,
            s.warnings.p1,
            Seat::P2,
            s.warnings.p2,
            s.warnings_limit,
        );
        for seat in Seat::BOTH {
            if !s.players.get(seat).connected {
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
        let name = &self.state.players.get(seat).name;
        if name.is_empty() {
            format!("{seat} (you)")
        } else {
            format!("{seat} ({name}, you)")
        }
    }

    /// What happens next, addressed to this client's role.
    fn turn_line(&self) -> String {
        let s = self.state;
        let mine = self.my_seat();
        match s.status {
            MatchStatus::Waiting | MatchStatus::BetweenSets => {
                let waiting: Vec<String> = Seat::BOTH
                    .into_iter()
                    .filter(|&seat| !s.players.get(seat).ready)
                    .map(|seat| self.who_you(seat))
                    .collect();
                let next = if s.status == MatchStatus::Waiting {
                    1
                } else {
                    s.set.saturating_add(1)
                };
                let hint = match mine {
                    Some(seat) if !s.players.get(seat).ready => ": type `ready`",
                    _ => "",
                };
                format!(
                    "set {next} starts when both players are ready (waiting for {}){hint}",
                    waiting.join(" and ")
                )
            }
            MatchStatus::Finished => match &s.round {
                Some(round) => round_text(self, round),
                None if s.expired => "the match expired: nobody played it".to_string(),
                None => "the round is over".to_string(),
            },
            MatchStatus::Playing => {
                let Some(seat) = self.to_act() else {
                    return "set in progress".to_string();
                };
                let paused = if s.paused {
                    " (clocks paused by the arbiter)"
                } else {
                    ""
                };
                let yours = mine == Some(seat);
                if s.position.awaiting_press == Some(seat) {
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
        let pending = self.state.position.pending.as_ref()?;
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

    /// The whole picture: board, score, clocks, whose turn.
    pub fn render(&self) -> String {
        let s = self.state;
        let mut out = String::new();
        if s.status != MatchStatus::Waiting {
            if let Some(board) = &s.position.board {
                out.push_str(&board_text(board));
            }
            if !s.position.moves.is_empty() {
                out.push_str(&format!("moves: {}\n", s.position.moves.join(" ")));
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
        // Claims wait for the arbiter's ruling however late the arbiter comes.
        for claim in self.state.claims.iter().flatten() {
            if claim.status == hakem_protocol::ClaimStatus::Open {
                out.push_str(&format!(
                    "open claim {} by {} about set {} ply {}: {}\n",
                    claim.id,
                    self.who(claim.seat),
                    claim.set,
                    claim.ply,
                    claim.text
                ));
            }
        }
        out
    }

    /// The finished sets, one line each, for a client that joins late.
    pub fn history(&self) -> Vec<String> {
        self.state
            .sets
            .iter()
            .map(|set| set_text(self, set))
            .collect()
    }

    /// One readable line for an event (without the leading marker).
    pub fn event_line(&self, event: &Event) -> String {
        match event {
            Event::SetStarted {
                set, first_mover, ..
            } => {
                // The colours of the set that starts, whether or not the event is folded yet.
                let colour = hakem_protocol::seat_colours(&self.state.game, Some(*first_mover))
                    .map(|c| c.get(*first_mover).as_str())
                    .or_else(|| self.game().map(|g| side_name(g, Side::First)))
                    .map(|c| format!(" and plays {c}"))
                    .unwrap_or_default();
                format!(
                    "set {set} started: {} moves first{colour}",
                    self.who(*first_mover)
                )
            }
            Event::Placed { seat, cell, .. } => format!("{seat} placed {cell}"),
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
            Event::Moved { seat, mv, .. } => format!("{seat} moved {mv}"),
            Event::Pressed { seat } => format!("{seat} pressed the clock"),
            Event::SetEnded(result) => set_text(self, result),
            Event::Warning {
                seat,
                count,
                reason,
            } => format!(
                "warning to {} ({count} of {}){}",
                self.who(*seat),
                self.state.warnings_limit,
                reason_suffix(reason)
            ),
            Event::RoundEnded(result) => round_text(self, result),
            Event::Expired => "the match expired: nobody played it".to_string(),
            Event::Paused => "the arbiter paused the clocks".to_string(),
            Event::Resumed => "the arbiter resumed the clocks".to_string(),
            Event::ClockAdjusted { seat, delta_ms } => {
                let sign = if *delta_ms < 0 { "-" } else { "+" };
                format!(
                    "the arbiter adjusted {seat}'s clock by {sign}{}",
                    format_ms(delta_ms.unsigned_abs())
                )
            }
            Event::Claim { seat, text, id, .. } => {
                let number = id.map(|id| format!(" {id}")).unwrap_or_default();
                format!("claim{number} by {}: {text}", self.who(*seat))
            }
            Event::ClaimResolved {
                claim,
                upheld,
                reason,
            } => {
                let ruling = if *upheld { "upheld" } else { "rejected" };
                if reason.is_empty() {
                    format!("the arbiter {ruling} claim {claim}")
                } else {
                    format!("the arbiter {ruling} claim {claim}: {reason}")
                }
            }
            Event::PlayerConnected { seat } => format!("{} connected", self.who(*seat)),
            Event::PlayerDisconnected { seat } => format!("{} disconnected", self.who(*seat)),
            Event::Ready { seat } => format!("{seat} is ready"),
            Event::DrawOffered { seat } => {
                format!("{} offers a draw of this set", self.who(*seat))
            }
            Event::DrawDeclined { seat } => format!("{} declined the draw", self.who(*seat)),
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

/// Who won a set and how, in words: `p2 (Bora Kaya) won set 2: five in a row`. The
/// first mover's `1-0` is for the record.
fn set_text(view: &View<'_>, set: &SetResult) -> String {
    let how = set_reason_words(&set.reason);
    match set.winner {
        Some(seat) => format!("{} won set {}: {how}", view.who(seat), set.set),
        None => format!("set {} drawn: {how}", set.set),
    }
}

fn set_reason_words(reason: &SetReason) -> String {
    match reason {
        SetReason::Five => "five in a row",
        SetReason::DoubleFive => "five in a row for both, the mover wins",
        SetReason::OpponentFive => "the turn made the opponent's five",
        SetReason::FullBoard => "the board is full",
        SetReason::Goal => "the pawn reached the far side",
        SetReason::Captures => "ten stones captured",
        SetReason::MoveLimit => "the move limit",
        SetReason::Time => "time ran out",
        SetReason::Resign => "resignation",
        SetReason::Arbiter => "the arbiter's decision",
        SetReason::Agreement => "agreed by both players",
        SetReason::Other(other) => other,
    }
    .to_string()
}

fn round_reason_words(reason: &RoundReason) -> String {
    match reason {
        RoundReason::Sets => "on sets",
        RoundReason::Warnings => "on warnings",
        RoundReason::Arbiter => "by the arbiter's decision",
        RoundReason::Other(other) => other,
    }
    .to_string()
}

fn round_text(view: &View<'_>, round: &RoundResult) -> String {
    let how = round_reason_words(&round.reason);
    let outcome = match round.winner {
        Winner::Draw => format!("the round is drawn {how}"),
        winner => match winner.seat() {
            Some(seat) => format!("{} wins the round {how}", view.who(seat)),
            None => "the round is over".to_string(),
        },
    };
    format!(
        "round over: {outcome}, set points {} {} - {} {}",
        Seat::P1,
        format_points(round.set_points.p1),
        format_points(round.set_points.p2),
        Seat::P2,
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

/// The board as text: Pentago with its quadrants apart, Quoridor with its walls, Pente on its
/// grid; `x` is the set's first mover, `o` the second (in Quoridor, pawn 1 and pawn 2).
pub fn board_text(board: &Board) -> String {
    match board {
        Board::Pentago(b) => pentago_text(&b.stones),
        Board::Quoridor(b) => quoridor_text(b),
        Board::Pente(b) => {
            let mut text = pente_text(&b.stones);
            text.push_str(&format!(
                "captures: x has {}, o has {}\n",
                b.captures.first, b.captures.second
            ));
            text
        }
    }
}

fn mark(stones: &Stones, col: u8, row: u8) -> char {
    match stones.get(col, row) {
        Some(hakem_protocol::Side::First) => 'x',
        Some(hakem_protocol::Side::Second) => 'o',
        None => '.',
    }
}

/// Pentago, rank 6 on top, quadrants separated.
fn pentago_text(stones: &Stones) -> String {
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
            out.push(' ');
            out.push(mark(stones, file, rank));
        }
        out.push_str(&format!("  {}\n", rank + 1));
    }
    out.push_str("    a b c   d e f\n");
    out
}

/// Pente: columns A..T without I, row 19 on top.
fn pente_text(stones: &Stones) -> String {
    const COLUMNS: &str = "ABCDEFGHJKLMNOPQRST";
    let mut out = String::from("    ");
    for c in COLUMNS.chars() {
        out.push(' ');
        out.push(c);
    }
    out.push('\n');
    let size = stones.size();
    for row in (0..size).rev() {
        out.push_str(&format!("{:>3} ", row + 1));
        for col in 0..size {
            out.push(' ');
            out.push(mark(stones, col, row));
        }
        out.push_str(&format!("  {}\n", row + 1));
    }
    out
}

/// A Quoridor square or wall anchor `e3` as (file, rank) from 0.
fn square(text: &str) -> Option<(u8, u8)> {
    let mut chars = text.chars();
    let file = chars.next()?;
    let rank: u8 = chars.as_str().trim_end_matches(['h', 'v']).parse().ok()?;
    let file = u8::try_from(u32::from(file).checked_sub(u32::from('a'))?).ok()?;
    (file < 9 && (1..=9).contains(&rank)).then_some((file, rank - 1))
}

/// Quoridor: pawns 1 (the first mover's) and 2, walls as `===` and `|` in the grooves.
fn quoridor_text(board: &QuoridorBoard) -> String {
    const N: u8 = 9;
    let pawn = |side: &str| square(side);
    let (first, second) = (pawn(&board.pawns.first), pawn(&board.pawns.second));
    let mut horizontal = [[false; 9]; 9]; // below the groove above (file, rank)
    let mut vertical = [[false; 9]; 9]; // to the right of (file, rank)
    let mut joints_h = [[false; 9]; 9];
    let mut joints_v = [[false; 9]; 9];
    for wall in &board.walls {
        let Some((f, r)) = square(wall) else { continue };
        if f >= 8 || r >= 8 {
            continue;
        }
        let (f, r) = (usize::from(f), usize::from(r));
        if wall.ends_with('h') {
            horizontal[f][r] = true;
            horizontal[f + 1][r] = true;
            joints_h[f][r] = true;
        } else if wall.ends_with('v') {
            vertical[f][r] = true;
            vertical[f][r + 1] = true;
            joints_v[f][r] = true;
        }
    }
    let files = "     a   b   c   d   e   f   g   h   i\n";
    let mut text = String::from(files);
    text.push_str("   +---+---+---+---+---+---+---+---+---+\n");
    for rank in (0..N).rev() {
        text.push_str(&format!("{:>2} |", rank + 1));
        for file in 0..N {
            let here = Some((file, rank));
            let mark = if here == first {
                '1'
            } else if here == second {
                '2'
            } else {
                '.'
            };
            text.push(' ');
            text.push(mark);
            text.push(' ');
            let wall = file == N - 1 || vertical[usize::from(file)][usize::from(rank)];
            text.push(if wall { '|' } else { ' ' });
        }
        text.push_str(&format!(" {}\n", rank + 1));
        if rank == 0 {
            break;
        }
        let below = usize::from(rank - 1);
        text.push_str("   +");
        for file in 0..usize::from(N) {
            text.push_str(if horizontal[file][below] {
                "==="
            } else {
                "   "
            });
            if file == usize::from(N) - 1 {
                text.push('+');
            } else if joints_h[file][below] {
                text.push('=');
            } else if joints_v[file][below] {
                text.push('|');
            } else {
                text.push('+');
            }
        }
        text.push('\n');
    }
    text.push_str("   +---+---+---+---+---+---+---+---+---+\n");
    text.push_str(files);
    text.push_str(&format!(
        "walls left: 1 has {}, 2 has {}\n",
        board.walls_left.first, board.walls_left.second
    ));
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use hakem_protocol::board::{PentagoBoard, PerSide};
    use hakem_protocol::{
        Clocks, EventFrame, GameResult, PerSeat, PlayerInfo, PositionView, SetReason,
    };

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
                board: None,
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
            expired: false,
            rated: false,
            colours: hakem_protocol::seat_colours("pentago", None),
            claims: None,
            spectator_delay: None,
            draw_offer: None,
        }
    }

    #[test]
    fn the_spectator_delay_in_words() {
        let mut state = state();
        let view = |state: &MatchState| View::new(state, Instant::now()).spectator_delay();
        assert_eq!(view(&state), None);
        state.spectator_delay = Some(hakem_protocol::SpectatorDelay {
            seconds: 60,
            moves: 0,
        });
        assert_eq!(view(&state).as_deref(), Some("60 s"));
        state.spectator_delay = Some(hakem_protocol::SpectatorDelay {
            seconds: 30,
            moves: 1,
        });
        assert_eq!(view(&state).as_deref(), Some("30 s and 1 move"));
    }

    fn pentago(marks: &[(u8, u8, hakem_protocol::Side)]) -> Option<Board> {
        let mut stones = Stones::empty(6);
        for &(c, r, side) in marks {
            stones.set(c, r, Some(side));
        }
        Some(Board::Pentago(PentagoBoard { stones }))
    }

    fn apply(state: &mut MatchState, event: Event, running: Option<Seat>) {
        let frame = EventFrame {
            match_id: "m1".into(),
            seq: state.seq + 1,
            event,
            clocks: Some(Clocks {
                p1_ms: 60_000,
                p2_ms: 60_000,
                running,
                paused: false,
                server_time_ms: 0,
            }),
        };
        state.apply(&frame).unwrap();
    }

    fn render(state: &MatchState) -> String {
        View::new(state, Instant::now()).render()
    }

    #[test]
    fn events_update_board_turn_and_score() {
        use hakem_protocol::Side::First;
        let mut s = state();
        assert!(render(&s).contains("type `ready`"));
        let started = Event::SetStarted {
            set: 1,
            first_mover: Seat::P1,
            board: pentago(&[]),
            colours: None,
        };
        apply(&mut s, started, Some(Seat::P1));
        assert!(render(&s).contains("p1 (Ayşe) to move"));
        let placed = Event::Placed {
            seat: Seat::P1,
            cell: "a1".into(),
            board: pentago(&[(0, 0, First)]),
        };
        apply(&mut s, placed, Some(Seat::P1));
        // The placed marble shows before the turn: the board comes with the event.
        let text = render(&s);
        assert!(text.contains(" 1  x . . | . . .  1"), "{text}");
        assert!(
            text.contains("p1 placed a1, quadrant not yet turned"),
            "{text}"
        );
        let moved = Event::Moved {
            seat: Seat::P1,
            mv: "a1se".into(),
            board: pentago(&[(0, 0, First)]),
        };
        apply(&mut s, moved, Some(Seat::P1));
        assert!(render(&s).contains("p1 (Ayşe) to press the clock"));
        apply(&mut s, Event::Pressed { seat: Seat::P1 }, Some(Seat::P2));
        let text = render(&s);
        assert!(text.contains("p2 (you) to move: your turn"), "{text}");
        assert!(text.contains("p2 white 1:00 running"), "{text}");
        let ended = Event::SetEnded(SetResult {
            set: 1,
            first_mover: Seat::P1,
            result: GameResult::Draw,
            winner: None,
            reason: SetReason::Arbiter,
        });
        apply(&mut s, ended, None);
        assert!(render(&s).contains("set score p1 0.5 - 0.5 p2"));
        assert_eq!(
            View::new(&s, Instant::now()).history(),
            ["set 1 drawn: the arbiter's decision"]
        );
    }

    #[test]
    fn pentago_colours_stay_with_the_seats_when_white_moves_first_in_set_two() {
        let mut s = state();
        let started = Event::SetStarted {
            set: 2,
            first_mover: Seat::P2,
            board: pentago(&[]),
            colours: hakem_protocol::seat_colours("pentago", Some(Seat::P2)),
        };
        let view = View::new(&s, Instant::now());
        let line = view.event_line(&started);
        assert_eq!(line, "set 2 started: p2 moves first and plays white");
        apply(&mut s, started, Some(Seat::P2));
        let text = render(&s);
        assert!(text.contains("p1 (Ayşe) black"), "{text}");
        assert!(text.contains("p2 white 1:00 running"), "{text}");
    }

    #[test]
    fn a_quoridor_board_is_drawn_from_its_pawns_and_walls() {
        let board = QuoridorBoard {
            pawns: PerSide::new("e2".into(), "e9".into()),
            walls: vec!["e3h".into(), "a1v".into(), "z9h".into()],
            walls_left: PerSide::new(8, 10),
        };
        let text = board_text(&Board::Quoridor(board));
        // e3h lies above e3 and f3; a1v right of a1 and a2.
        assert!(
            text.contains("   +   +   +   +   +=======+   +   +   +"),
            "{text}"
        );
        assert!(
            text.contains(" 2 | . | .   .   .   1   .   .   .   . | 2"),
            "{text}"
        );
        assert!(text.contains("   +   |   +   +"), "{text}");
        assert!(text.contains(" 1 | . | .   .   ."), "{text}");
        assert!(text.contains("walls left: 1 has 8, 2 has 10"));
    }

    #[test]
    fn nonsense_from_the_server_does_not_crash_the_client() {
        let mut s = state();
        s.game = "chess".into();
        s.set = u8::MAX;
        s.status = MatchStatus::BetweenSets;
        s.set_points = PerSeat::new(Points { halves: u32::MAX }, Points::ZERO);
        s.clocks = Some(Clocks {
            p1_ms: u64::MAX,
            p2_ms: 0,
            running: Some(Seat::P1),
            paused: false,
            server_time_ms: 0,
        });
        render(&s);
        let view = View::new(&s, Instant::now());
        for event in [
            Event::Rotated {
                seat: Seat::P2,
                quadrant: "zz".into(),
                dir: "sideways".into(),
            },
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
            view.event_line(&event);
        }
        assert!(board_text(&Board::Quoridor(QuoridorBoard {
            pawns: PerSide::new("".into(), "k99".into()),
            walls: vec!["".into(), "i9v".into()],
            walls_left: PerSide::new(0, 255),
        }))
        .contains("walls left"));
    }

    #[test]
    fn times_are_written_as_a_clock_shows_them() {
        assert_eq!(format_ms(900_000), "15:00");
        assert_eq!(format_ms(61_999), "1:01");
        assert_eq!(format_ms(9_450), "0:09.4");
        assert_eq!(format_points(Points { halves: 3 }), "1.5");
    }
}
