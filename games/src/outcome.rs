use std::fmt;

/// A side, by order of play in the current game.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Side {
    /// The player who moves first (Pentago black, Pente White, Quoridor from e1).
    First,
    /// The player who moves second.
    Second,
}

impl Side {
    /// The other side.
    pub fn opponent(self) -> Side {
        match self {
            Side::First => Side::Second,
            Side::Second => Side::First,
        }
    }

    /// 0 for the first mover, 1 for the second (for indexing per-side arrays).
    pub fn index(self) -> usize {
        self as usize
    }
}

/// Why a game ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Reason {
    /// Only one player has five in a row.
    Five,
    /// Both players have five after the move.
    DoubleFive,
    /// The move gave five only to the mover's opponent.
    OpponentFive,
    /// The board is full and nobody has five.
    FullBoard,
    /// A Quoridor pawn reached its goal row.
    Goal,
    /// A Pente player captured ten or more stones.
    Captures,
    /// An untimed Quoridor set reached its ply limit.
    MoveLimit,
}

impl Reason {
    /// The snake_case name used in notation, records and the wire protocol.
    pub fn as_str(self) -> &'static str {
        match self {
            Reason::Five => "five",
            Reason::DoubleFive => "double_five",
            Reason::OpponentFive => "opponent_five",
            Reason::FullBoard => "full_board",
            Reason::Goal => "goal",
            Reason::Captures => "captures",
            Reason::MoveLimit => "move_limit",
        }
    }
}

impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The result of a finished game.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Outcome {
    /// The winner, or `None` for a draw.
    pub winner: Option<Side>,
    pub reason: Reason,
}

impl Outcome {
    pub fn win(winner: Side, reason: Reason) -> Outcome {
        Outcome {
            winner: Some(winner),
            reason,
        }
    }

    pub fn draw(reason: Reason) -> Outcome {
        Outcome {
            winner: None,
            reason,
        }
    }

    /// `1-0` (first mover wins), `0-1` or `1/2-1/2`.
    pub fn result(&self) -> &'static str {
        match self.winner {
            Some(Side::First) => "1-0",
            Some(Side::Second) => "0-1",
            None => "1/2-1/2",
        }
    }
}
