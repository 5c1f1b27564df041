use std::fmt;
use std::str::FromStr;

use crate::{pentago, pente, perft, quoridor, Game, MoveError, Outcome, Side};

/// Which game.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum GameKind {
    Pentago,
    Quoridor,
    Pente,
}

impl GameKind {
    pub const ALL: [GameKind; 3] = [GameKind::Pentago, GameKind::Quoridor, GameKind::Pente];

    /// Lower-case name: `pentago`, `quoridor`, `pente`.
    pub fn as_str(self) -> &'static str {
        match self {
            GameKind::Pentago => "pentago",
            GameKind::Quoridor => "quoridor",
            GameKind::Pente => "pente",
        }
    }

    /// The preset names of this game; the first is the default.
    pub fn variants(self) -> &'static [&'static str] {
        match self {
            GameKind::Pentago => pentago::Rules::PRESETS,
            GameKind::Quoridor => quoridor::Rules::PRESETS,
            GameKind::Pente => pente::Rules::PRESETS,
        }
    }

    pub fn default_variant(self) -> &'static str {
        self.variants()[0]
    }
}

impl fmt::Display for GameKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A game name that is not one of `pentago`, `quoridor`, `pente`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownGame(pub String);

impl fmt::Display for UnknownGame {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "unknown game {:?} (expected pentago, quoridor or pente)",
            self.0
        )
    }
}

impl std::error::Error for UnknownGame {}

impl FromStr for GameKind {
    type Err = UnknownGame;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        GameKind::ALL
            .into_iter()
            .find(|kind| kind.as_str().eq_ignore_ascii_case(s))
            .ok_or_else(|| UnknownGame(s.to_string()))
    }
}

/// A variant name that the game does not have.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownVariant {
    pub game: GameKind,
    pub variant: String,
}

impl fmt::Display for UnknownVariant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "unknown {} variant {:?} (expected one of: {})",
            self.game,
            self.variant,
            self.game.variants().join(", ")
        )
    }
}

impl std::error::Error for UnknownVariant {}

/// A position of any of the three games, for code that runs "a game" without knowing which.
/// Moves cross this boundary as notation strings.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AnyPosition {
    Pentago(pentago::Position),
    Quoridor(quoridor::Position),
    Pente(pente::Position),
}

macro_rules! each {
    ($self:expr, $pos:ident => $body:expr) => {
        match $self {
            AnyPosition::Pentago($pos) => $body,
            AnyPosition::Quoridor($pos) => $body,
            AnyPosition::Pente($pos) => $body,
        }
    };
}

impl AnyPosition {
    /// The start position of `kind` under the named preset (`None`: the default preset).
    pub fn new(kind: GameKind, variant: Option<&str>) -> Result<AnyPosition, UnknownVariant> {
        let variant = variant.unwrap_or(kind.default_variant());
        let unknown = || UnknownVariant {
            game: kind,
            variant: variant.to_string(),
        };
        Ok(match kind {
            GameKind::Pentago => AnyPosition::Pentago(pentago::Position::new(
                pentago::Rules::preset(variant).ok_or_else(unknown)?,
            )),
            GameKind::Quoridor => AnyPosition::Quoridor(quoridor::Position::new(
                quoridor::Rules::preset(variant).ok_or_else(unknown)?,
            )),
            GameKind::Pente => AnyPosition::Pente(pente::Position::new(
                pente::Rules::preset(variant).ok_or_else(unknown)?,
            )),
        })
    }

    pub fn kind(&self) -> GameKind {
        match self {
            AnyPosition::Pentago(_) => GameKind::Pentago,
            AnyPosition::Quoridor(_) => GameKind::Quoridor,
            AnyPosition::Pente(_) => GameKind::Pente,
        }
    }

    /// The preset name of the rules in force.
    pub fn variant(&self) -> &'static str {
        each!(self, pos => pos.rules().name())
    }

    pub fn to_move(&self) -> Side {
        each!(self, pos => pos.to_move())
    }

    pub fn outcome(&self) -> Option<Outcome> {
        each!(self, pos => pos.outcome())
    }

    pub fn plies(&self) -> u32 {
        each!(self, pos => pos.plies())
    }

    /// Plays one move given in notation; returns it in canonical notation.
    pub fn play_str(&mut self, text: &str) -> Result<String, MoveError> {
        each!(self, pos => pos.play_str(text).map(|mv| mv.to_string()))
    }

    /// Checks a move in notation without playing it; returns it in canonical notation.
    pub fn check_str(&self, text: &str) -> Result<String, MoveError> {
        let mut copy = self.clone();
        copy.play_str(text)
    }

    /// Every legal move in canonical notation, in the game's fixed order.
    pub fn legal_moves(&self) -> Vec<String> {
        each!(self, pos => {
            let mut moves = Vec::new();
            pos.legal_moves(&mut moves);
            moves.iter().map(|mv| mv.to_string()).collect()
        })
    }

    /// See [`crate::perft`].
    pub fn perft(&self, depth: u32) -> u64 {
        each!(self, pos => perft(pos, depth))
    }

    pub fn board_text(&self) -> String {
        each!(self, pos => pos.board_text())
    }
}
