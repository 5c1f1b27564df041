//! Placeholder: being written.
use crate::{Game, MoveError, Outcome, Side};
use std::fmt;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rules { name: &'static str }

impl Rules {
    pub const PRESETS: &'static [&'static str] = &["tournament", "free"];
    pub fn preset(name: &str) -> Option<Rules> {
        Self::PRESETS.iter().find(|p| **p == name).map(|p| Rules { name: p })
    }
    pub fn name(&self) -> &'static str { self.name }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Move;
impl fmt::Display for Move {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result { f.write_str("?") }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Position { rules: Rules }

impl Position {
    pub fn new(rules: Rules) -> Position { Position { rules } }
    pub fn rules(&self) -> &Rules { &self.rules }
}

impl Game for Position {
    type Move = Move;
    fn to_move(&self) -> Side { Side::First }
    fn outcome(&self) -> Option<Outcome> { None }
    fn plies(&self) -> u32 { 0 }
    fn parse_move(&self, text: &str) -> Result<Move, MoveError> { Err(MoveError::Malformed(text.into())) }
    fn legal_moves(&self, _out: &mut Vec<Move>) {}
    fn play(&mut self, _mv: Move) -> Result<(), MoveError> { Err(MoveError::GameOver) }
    fn board_text(&self) -> String { String::new() }
}
