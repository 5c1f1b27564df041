//! Exact, fast rules of the games hakem runs: Pentago (`tr` and `classic` presets), Quoridor
//! (`standard`) and Pente (`tournament` and `free`).
//!
//! Every game has the same shape: a position type implementing [`Game`], with legal-move
//! generation, applying a move, the side to move, the result with its [`Reason`], and parsing and
//! printing of moves in the notation of the rules. [`AnyPosition`] holds any of them when the
//! caller (the server, the command line) does not know which game it is running.
//!
//! Sides are named by the order of play, not by colour: [`Side::First`] is the set's first mover
//! (black in Pentago, White in Pente, the pawn on e1 in Quoridor).
//!
//! Nothing here panics on input: an illegal or malformed move is a [`MoveError`] and leaves the
//! position unchanged.

mod any;
mod error;
mod outcome;
pub mod pentago;
pub mod pente;
mod perft;
pub mod quoridor;
pub mod record;

pub use any::{AnyPosition, GameKind, UnknownGame, UnknownVariant};
pub use error::MoveError;
pub use outcome::{Outcome, Reason, Side};
pub use perft::perft;

/// The common interface of the three games.
pub trait Game: Clone {
    /// One complete move.
    type Move: Copy + Eq + std::fmt::Debug + std::fmt::Display;

    /// The side whose turn it is (meaningful while the game is running).
    fn to_move(&self) -> Side;

    /// The result, once the game is over.
    fn outcome(&self) -> Option<Outcome>;

    /// Number of moves played since the start.
    fn plies(&self) -> u32;

    /// Reads a move in this game's notation. Checks the notation (and that a point is on the
    /// board), not legality in this position.
    fn parse_move(&self, text: &str) -> Result<Self::Move, MoveError>;

    /// Appends every legal move, in the game's fixed order, to `out`. Nothing when the game is over.
    fn legal_moves(&self, out: &mut Vec<Self::Move>);

    /// The number of legal moves. Games override this when counting is cheaper than listing.
    fn count_legal_moves(&self) -> u64 {
        let mut moves = Vec::new();
        self.legal_moves(&mut moves);
        moves.len() as u64
    }

    /// Plays `mv` if it is legal; otherwise says why and changes nothing.
    fn play(&mut self, mv: Self::Move) -> Result<(), MoveError>;

    /// Parses and plays one move token; returns the move as played.
    fn play_str(&mut self, text: &str) -> Result<Self::Move, MoveError> {
        let mv = self.parse_move(text)?;
        self.play(mv)?;
        Ok(mv)
    }

    /// A readable picture of the board with coordinates, for terminals.
    fn board_text(&self) -> String;
}
