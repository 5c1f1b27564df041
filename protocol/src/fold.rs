//! The one fold of a match: a `state` kept up to date by the events that follow it, exactly as
//! the server's round changes. Clients (the terminal, bots, tests) follow a match with
//! [`MatchState::apply`] and never need the rules: every event that changes the position
//! carries the board.

use crate::{Event, EventFrame, MatchStatus, PerSeat, Points, Seat};

/// What [`MatchState::apply`] did with a frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Applied {
    /// The next event: the state moved on.
    Applied,
    /// An event already folded in (sent again after a re-join): nothing changed.
    Repeated,
}

/// An event that does not follow the last one: the state is not changed, and the client should
/// ask for what it missed (`join`/`watch` with `since_seq`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Gap {
    /// The seq the state expected next.
    pub expected: u64,
    pub got: u64,
}

impl std::fmt::Display for Gap {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "event {} came when {} was expected: some went missing",
            self.got, self.expected
        )
    }
}

fn add_set_points(points: &mut PerSeat<Points>, winner: Option<Seat>) {
    // Saturating: numbers from a server must not be able to crash a client.
    let mut add = |seat: Seat, halves: u32| {
        let p = points.get_mut(seat);
        p.halves = p.halves.saturating_add(halves);
    };
    match winner {
        Some(seat) => add(seat, 2),
        None => {
            add(Seat::P1, 1);
            add(Seat::P2, 1);
        }
    }
}

impl crate::MatchState {
    /// Folds one event frame into the state. Frames of another match, and frames already
    /// applied, change nothing; a frame after a gap is refused.
    pub fn apply(&mut self, frame: &EventFrame) -> Result<Applied, Gap> {
        if frame.match_id != self.match_id || frame.seq <= self.seq {
            return Ok(Applied::Repeated);
        }
        self.step(frame.seq)?;
        self.clocks = frame.clocks;
        self.fold(&frame.event);
        Ok(Applied::Applied)
    }

    /// Counts an event this client cannot read (a newer server's kind) without applying it,
    /// so that the numbering stays whole.
    pub fn skip(&mut self, seq: u64) -> Result<Applied, Gap> {
        if seq <= self.seq {
            return Ok(Applied::Repeated);
        }
        self.step(seq)?;
        Ok(Applied::Applied)
    }

    fn step(&mut self, seq: u64) -> Result<(), Gap> {
        let expected = self.seq.saturating_add(1);
        if seq != expected {
            return Err(Gap { expected, got: seq });
        }
        self.seq = seq;
        Ok(())
    }

    fn fold(&mut self, event: &Event) {
        let position = &mut self.position;
        // Whose turn it is changes with almost every event: the legal moves of the last
        // `state` no longer hold (a fresh `state` brings new ones to a client that asked).
        if !matches!(
            event,
            Event::PlayerConnected { .. }
                | Event::PlayerDisconnected { .. }
                | Event::Ready { .. }
                | Event::Claim { .. }
                | Event::ClaimResolved { .. }
                | Event::Warning { .. }
                | Event::DrawOffered { .. }
                | Event::DrawDeclined { .. }
        ) {
            position.legal_moves = None;
        }
        match event {
            Event::SetStarted {
                set,
                first_mover,
                board,
                colours,
            } => {
                self.set = *set;
                self.status = MatchStatus::Playing;
                self.paused = false;
                self.players.p1.ready = false;
                self.players.p2.ready = false;
                position.to_move = Some(*first_mover);
                position.first_mover = Some(*first_mover);
                // Events stored before colours were sent have none: the rule gives them.
                self.colours =
                    colours.or_else(|| crate::seat_colours(&self.game, Some(*first_mover)));
                position.moves.clear();
                position.pending = None;
                position.awaiting_press = None;
                position.board = board.clone();
            }
            Event::Placed { seat, cell, board } => {
                position.pending = Some(crate::Pending {
                    seat: *seat,
                    cell: cell.clone(),
                    quadrant: None,
                    dir: None,
                });
                if board.is_some() {
                    position.board = board.clone();
                }
            }
            Event::Rotated { quadrant, dir, .. } => {
                if let Some(pending) = &mut position.pending {
                    pending.quadrant = Some(quadrant.clone());
                    pending.dir = Some(dir.clone());
                }
            }
            Event::Moved { seat, mv, board } => {
                // Moving answers the opponent's draw offer: no.
                if self.draw_offer == Some(seat.other()) {
                    self.draw_offer = None;
                }
                position.moves.push(mv.clone());
                position.pending = None;
                // The mover still has to press; a move that ends the set is followed at once by
                // `set_ended`, which clears this.
                position.awaiting_press = Some(*seat);
                position.to_move = Some(*seat);
                if board.is_some() {
                    position.board = board.clone();
                }
            }
            Event::Pressed { seat } => {
                position.awaiting_press = None;
                position.to_move = Some(seat.other());
            }
            Event::SetEnded(result) => {
                self.draw_offer = None;
                add_set_points(&mut self.set_points, result.winner);
                self.sets.push(result.clone());
                self.status = MatchStatus::BetweenSets;
                self.paused = false;
                position.to_move = None;
                position.pending = None;
                position.awaiting_press = None;
            }
            Event::Warning { seat, count, .. } => *self.warnings.get_mut(*seat) = *count,
            Event::RoundEnded(result) => {
                self.draw_offer = None;
                self.set_points = result.set_points;
                self.round = Some(result.clone());
                self.status = MatchStatus::Finished;
                self.paused = false;
                position.to_move = None;
                position.pending = None;
                position.awaiting_press = None;
            }
            Event::Expired => {
                self.status = MatchStatus::Finished;
                self.expired = true;
            }
            Event::Paused => self.paused = true,
            Event::Resumed => self.paused = false,
            Event::PlayerConnected { seat } => self.players.get_mut(*seat).connected = true,
            Event::PlayerDisconnected { seat } => self.players.get_mut(*seat).connected = false,
            Event::Ready { seat } => self.players.get_mut(*seat).ready = true,
            Event::Claim { .. } | Event::ClaimResolved { .. } => {
                // Only a reader who is shown the claims (arbiter, players) keeps them.
                if let Some(claims) = &mut self.claims {
                    let ply = position.moves.len() as u32;
                    crate::claims::fold_claim(claims, event, self.set, ply);
                }
            }
            Event::DrawOffered { seat } => self.draw_offer = Some(*seat),
            Event::DrawDeclined { .. } => self.draw_offer = None,
            Event::ClockAdjusted { .. } | Event::Declared { .. } => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::board::{PentagoBoard, Stones};
    use crate::*;

    fn state() -> MatchState {
        let player = |name: &str| PlayerInfo {
            name: name.into(),
            connected: false,
            ready: false,
            house_bot: false,
        };
        MatchState {
            match_id: "m".into(),
            seq: 0,
            game: "pentago".into(),
            variant: "tr".into(),
            sets_max: 3,
            clock: None,
            warnings_limit: 3,
            players: PerSeat::new(player("Ayşe"), player("Bora")),
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
            clocks: None,
            you: Some("spectator".into()),
            tournament: None,
            expired: false,
            rated: false,
            colours: crate::seat_colours("pentago", None),
            claims: Some(Vec::new()),
            spectator_delay: None,
            draw_offer: None,
        }
    }

    fn frame(seq: u64, event: Event) -> EventFrame {
        EventFrame {
            match_id: "m".into(),
            seq,
            event,
            clocks: None,
        }
    }

    fn board(first: &[(u8, u8)]) -> Option<Board> {
        let mut stones = Stones::empty(6);
        for &(c, r) in first {
            stones.set(c, r, Some(Side::First));
        }
        Some(Board::Pentago(PentagoBoard { stones }))
    }

    #[test]
    fn a_new_set_brings_its_colours() {
        use crate::StoneColour::{Black, White};
        // Pentago: the colours stay with the seats although p2 moves first in set 2.
        let mut s = state();
        let started = |set, first_mover, colours| Event::SetStarted {
            set,
            first_mover,
            board: None,
            colours,
        };
        let sent = crate::seat_colours("pentago", Some(Seat::P2));
        s.apply(&frame(1, started(2, Seat::P2, sent))).unwrap();
        assert_eq!(s.colours, Some(PerSeat::new(Black, White)));
        // Pente: White is each set's first mover; an event stored without colours gets them
        // from the rule.
        let mut s = state();
        s.game = "pente".into();
        s.colours = None;
        s.apply(&frame(1, started(1, Seat::P1, None))).unwrap();
        assert_eq!(s.colours, Some(PerSeat::new(White, Black)));
        s.apply(&frame(2, started(2, Seat::P2, None))).unwrap();
        assert_eq!(s.colours, Some(PerSeat::new(Black, White)));
        // Quoridor pawns have no colour.
        assert_eq!(crate::seat_colours("quoridor", Some(Seat::P1)), None);
    }

    #[test]
    fn events_move_the_state_on_in_order() {
        let mut s = state();
        let events = [
            Event::PlayerConnected { seat: Seat::P1 },
            Event::Ready { seat: Seat::P1 },
            Event::SetStarted {
                set: 1,
                first_mover: Seat::P1,
                board: board(&[]),
                colours: None,
            },
            Event::Placed {
                seat: Seat::P1,
                cell: "a1".into(),
                board: board(&[(0, 0)]),
            },
            Event::Rotated {
                seat: Seat::P1,
                quadrant: "sw".into(),
                dir: "cw".into(),
            },
            Event::Moved {
                seat: Seat::P1,
                mv: "a1sw".into(),
                board: board(&[(2, 0)]),
            },
        ];
        for (i, event) in events.into_iter().enumerate() {
            assert_eq!(s.apply(&frame(i as u64 + 1, event)), Ok(Applied::Applied));
        }
        assert_eq!(s.status, MatchStatus::Playing);
        assert!(s.players.p1.connected && !s.players.p1.ready);
        assert_eq!(s.position.moves, ["a1sw"]);
        assert_eq!(s.position.awaiting_press, Some(Seat::P1));
        assert_eq!(s.position.board, board(&[(2, 0)]));
        s.apply(&frame(7, Event::Pressed { seat: Seat::P1 }))
            .unwrap();
        assert_eq!(s.position.to_move, Some(Seat::P2));
        assert_eq!(s.position.awaiting_press, None);
        s.apply(&frame(
            8,
            Event::SetEnded(SetResult {
                set: 1,
                first_mover: Seat::P1,
                result: GameResult::Draw,
                winner: None,
                reason: SetReason::Arbiter,
            }),
        ))
        .unwrap();
        assert_eq!(s.set_points, PerSeat::new(Points::HALF, Points::HALF));
        assert_eq!(s.status, MatchStatus::BetweenSets);
        assert_eq!(s.position.to_move, None);
    }

    #[test]
    fn repeats_change_nothing_and_gaps_are_refused() {
        let mut s = state();
        s.apply(&frame(1, Event::Paused)).unwrap();
        assert_eq!(s.apply(&frame(1, Event::Resumed)), Ok(Applied::Repeated));
        assert!(s.paused);
        assert_eq!(
            s.apply(&frame(3, Event::Resumed)),
            Err(Gap {
                expected: 2,
                got: 3
            })
        );
        assert!(s.paused && s.seq == 1);
        // Another match's frame is not this one's.
        let mut other = frame(2, Event::Resumed);
        other.match_id = "n".into();
        assert_eq!(s.apply(&other), Ok(Applied::Repeated));
        assert_eq!(s.skip(2), Ok(Applied::Applied));
        assert_eq!(s.seq, 2);
        // Numbers a hostile server might send do not overflow.
        s.seq = u64::MAX;
        assert_eq!(
            s.apply(&frame(u64::MAX, Event::Paused)),
            Ok(Applied::Repeated)
        );
        s.set_points = PerSeat::new(Points { halves: u32::MAX }, Points::ZERO);
        s.seq = 9;
        s.apply(&frame(
            10,
            Event::SetEnded(SetResult {
                set: 9,
                first_mover: Seat::P2,
                result: GameResult::FirstMoverWins,
                winner: Some(Seat::P1),
                reason: SetReason::Other("new_reason".into()),
            }),
        ))
        .unwrap();
        assert_eq!(s.set_points.p1.halves, u32::MAX);
    }

    #[test]
    fn a_draw_offer_stands_until_answered_by_a_move_a_refusal_or_the_end() {
        let mut s = state();
        s.game = "pente".into();
        let mut seq = 0;
        let mut apply = |s: &mut MatchState, event: Event| {
            seq += 1;
            s.apply(&frame(seq, event)).unwrap();
        };
        apply(&mut s, Event::DrawOffered { seat: Seat::P1 });
        assert_eq!(s.draw_offer, Some(Seat::P1));
        // The offerer's own move leaves the offer standing; the opponent's answers it.
        let moved = |seat| Event::Moved {
            seat,
            mv: "K10".into(),
            board: None,
        };
        apply(&mut s, moved(Seat::P1));
        assert_eq!(s.draw_offer, Some(Seat::P1));
        apply(&mut s, moved(Seat::P2));
        assert_eq!(s.draw_offer, None);
        apply(&mut s, Event::DrawOffered { seat: Seat::P2 });
        apply(&mut s, Event::DrawDeclined { seat: Seat::P1 });
        assert_eq!(s.draw_offer, None);
        apply(&mut s, Event::DrawOffered { seat: Seat::P2 });
        apply(
            &mut s,
            Event::SetEnded(SetResult {
                set: 1,
                first_mover: Seat::P1,
                result: GameResult::Draw,
                winner: None,
                reason: SetReason::Agreement,
            }),
        );
        assert_eq!(s.draw_offer, None);
        assert_eq!(s.sets[0].reason.as_str(), "agreement");
    }
}
