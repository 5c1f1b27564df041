use std::fmt;

/// Why a move was refused. The position it was tried on is unchanged.
///
/// [`MoveError::code`] gives a stable snake_case name for each kind (the names the test vectors
/// and the wire protocol use).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MoveError {
    /// The text is not a move in this game's notation.
    Malformed(String),
    /// The game is already over.
    GameOver,
    /// The cell or point already holds a stone.
    Occupied,
    /// A point or square beyond the board (`U10`, `K20`, `j5`).
    OffBoard,

    // Pentago
    /// A counter-clockwise turn under a preset that allows clockwise turns only.
    DirectionNotAllowed,
    /// A turn of a quadrant that holds no marble, under a preset that forbids it.
    EmptyQuadrant,
    /// A placement without a turn where every move must include one.
    RotationRequired,
    /// A bare placement (classic) that does not make five.
    BareWithoutFive,
    /// A turn after a placement that already made five and so ended the game (classic).
    TwistAfterWin,

    // Quoridor
    /// The wall would stick out of the board.
    WallOffBoard,
    /// The wall shares a segment with a wall already placed.
    WallOverlap,
    /// The wall crosses a wall of the other orientation at its midpoint.
    WallCross,
    /// The wall would leave the mover's own pawn without a path to its goal.
    WallBlocksOwnPath,
    /// The wall would leave the opponent's pawn without a path to its goal.
    WallBlocksOpponentPath,
    /// The mover has no walls left.
    NoWallsLeft,
    /// The destination is the other pawn's square.
    OntoOpponent,
    /// A one-square step across a wall.
    StepThroughWall,
    /// A jump over the other pawn blocked by a wall.
    JumpThroughWall,
    /// A diagonal step beside the other pawn while the straight jump is open.
    DiagonalWhenStraightPossible,
    /// A diagonal step beside the other pawn across a wall.
    DiagonalThroughWall,
    /// Any other square that the pawn cannot reach this turn.
    NotReachable,

    // Pente
    /// The game's first stone must be on the centre point.
    FirstNotCenter,
    /// The first mover's second stone is too close to the centre (tournament rule).
    TournamentRule,
}

impl MoveError {
    /// Stable snake_case name of the error kind.
    pub fn code(&self) -> &'static str {
        match self {
            MoveError::Malformed(_) => "malformed",
            MoveError::GameOver => "game_over",
            MoveError::Occupied => "occupied",
            MoveError::OffBoard => "off_board",
            MoveError::DirectionNotAllowed => "ccw_in_tr",
            MoveError::EmptyQuadrant => "empty_quadrant",
            MoveError::RotationRequired => "bare_in_tr",
            MoveError::BareWithoutFive => "bare_without_five",
            MoveError::TwistAfterWin => "twist_after_win",
            MoveError::WallOffBoard => "wall_off_board",
            MoveError::WallOverlap => "wall_overlap",
            MoveError::WallCross => "wall_cross",
            MoveError::WallBlocksOwnPath => "wall_blocks_own_path",
            MoveError::WallBlocksOpponentPath => "wall_blocks_opponent_path",
            MoveError::NoWallsLeft => "no_walls_left",
            MoveError::OntoOpponent => "onto_opponent",
            MoveError::StepThroughWall => "step_through_wall",
            MoveError::JumpThroughWall => "jump_through_wall",
            MoveError::DiagonalWhenStraightPossible => "diagonal_when_straight_possible",
            MoveError::DiagonalThroughWall => "diagonal_through_wall",
            MoveError::NotReachable => "not_reachable",
            MoveError::FirstNotCenter => "first_not_center",
            MoveError::TournamentRule => "tournament_rule",
        }
    }

    /// True when the text could not be read as a move at all (as opposed to a readable move
    /// that the rules refuse).
    pub fn is_notation(&self) -> bool {
        matches!(self, MoveError::Malformed(_))
    }
}

impl fmt::Display for MoveError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let text = match self {
            MoveError::Malformed(why) => return write!(f, "malformed move: {why}"),
            MoveError::GameOver => "the game is already over",
            MoveError::Occupied => "that cell is already occupied",
            MoveError::OffBoard => "that point is off the board",
            MoveError::DirectionNotAllowed => "this preset allows clockwise turns only",
            MoveError::EmptyQuadrant => "an empty quadrant may not be turned in this preset",
            MoveError::RotationRequired => "every move must turn a quadrant in this preset",
            MoveError::BareWithoutFive => {
                "a placement without a turn is only allowed when it makes five"
            }
            MoveError::TwistAfterWin => {
                "the placement makes five and ends the game: write the bare cell, without a turn"
            }
            MoveError::WallOffBoard => "the wall would stick out of the board",
            MoveError::WallOverlap => "the wall overlaps a wall already placed",
            MoveError::WallCross => "the wall crosses another wall",
            MoveError::WallBlocksOwnPath => "the wall would leave your pawn without a path to its goal",
            MoveError::WallBlocksOpponentPath => {
                "the wall would leave the opponent's pawn without a path to its goal"
            }
            MoveError::NoWallsLeft => "no walls left: the pawn must move",
            MoveError::OntoOpponent => "that square holds the other pawn",
            MoveError::StepThroughWall => "a wall blocks that step",
            MoveError::JumpThroughWall => "a wall blocks that jump",
            MoveError::DiagonalWhenStraightPossible => {
                "a diagonal step is only allowed when the straight jump is blocked"
            }
            MoveError::DiagonalThroughWall => "a wall blocks that diagonal step",
            MoveError::NotReachable => "the pawn cannot reach that square this turn",
            MoveError::FirstNotCenter => "the first stone must be played on the centre point",
            MoveError::TournamentRule => {
                "tournament rule: the first player's second stone must be at least three points from the centre"
            }
        };
        f.write_str(text)
    }
}

impl std::error::Error for MoveError {}
