//! hakem-round: a match's round and a Swiss tournament as pure state machines, with time passed
//! in as a value. Nothing here does I/O, sleeps or reads a clock; the server's rooms and
//! tournament tasks drive these, store their events and tell people.
//!
//! - [`round`]: the sets of a match, warnings, the arbiter's acts, the move-then-press rhythm.
//! - [`clock`]: the chess clock as arithmetic.
//! - [`board`]: the typed board clients draw, from a rules position.
//! - [`record`]: the game record of a match, from its events.
//! - [`tournament`]: a Swiss tournament as data, and every change made to it.
//! - [`rating`]: Glicko-2 ratings, one pool per game.

pub mod board;
pub mod clock;
pub mod rating;
pub mod record;
pub mod round;
pub mod tournament;

pub use clock::{Clock, Millis};
pub use round::{Command, MatchConfig, Refusal, Round};
