//! Game-playing engines for hakem: a random player, a one-ply greedy player and a searching
//! player with levels 1..5 for each game, behind one game-independent [`Engine`] trait, plus the
//! exact Pentago solver ([`pentago::solve`]).
//!
//! Engines take an [`AnyPosition`] and a time budget and answer a move in the game's notation, as
//! the `hakem bot` client sends it. They never panic on any position: a finished game gives
//! `None`.

use std::time::Duration;

use hakem_games::AnyPosition;

pub mod pentago;
pub mod pente;
pub mod quoridor;

/// A player that picks moves.
pub trait Engine: Send {
    /// A short name, e.g. `search-3`.
    fn name(&self) -> String;

    /// A legal move in notation for the side to move, within about `budget` of thinking time;
    /// `None` when the game is over.
    fn choose(&mut self, position: &AnyPosition, budget: Duration) -> Option<String>;
}

/// Which kind of engine.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum EngineKind {
    /// Uniformly random legal moves.
    Random,
    /// The best move one ply deep by a static score.
    Greedy,
    /// Alpha-beta search; its strength is set by the level.
    Search,
}

impl EngineKind {
    pub fn parse(name: &str) -> Option<EngineKind> {
        match name {
            "random" => Some(EngineKind::Random),
            "greedy" => Some(EngineKind::Greedy),
            "search" => Some(EngineKind::Search),
            _ => None,
        }
    }
}

/// The lowest and highest level of [`EngineKind::Search`].
pub const LEVELS: std::ops::RangeInclusive<u8> = 1..=5;

/// A new engine; `level` (clamped to 1..5) matters only for [`EngineKind::Search`]; `seed`
/// drives the engine's randomness (the same seed gives the same choices for the same positions
/// when the search is not cut by time).
pub fn new_engine(kind: EngineKind, level: u8, seed: u64) -> Box<dyn Engine> {
    match kind {
        EngineKind::Random => Box::new(RandomEngine {
            rng: Rng::new(seed),
        }),
        EngineKind::Greedy => Box::new(GreedyEngine {
            rng: Rng::new(seed),
        }),
        EngineKind::Search => Box::new(SearchEngine::new(level, seed)),
    }
}

/// A small fast generator (SplitMix64): the engines need varied, not secure, choices.
#[derive(Clone, Debug)]
pub struct Rng(u64);

pub(crate) fn splitmix(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        splitmix(self.0)
    }

    /// A number below `n` (0 when `n` is 0).
    pub fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next_u64() % n as u64) as usize
        }
    }
}

/// Plays a uniformly random legal move.
pub struct RandomEngine {
    rng: Rng,
}

impl Engine for RandomEngine {
    fn name(&self) -> String {
        "random".into()
    }

    fn choose(&mut self, position: &AnyPosition, _budget: Duration) -> Option<String> {
        let moves = position.legal_moves();
        let i = self.rng.below(moves.len());
        moves.into_iter().nth(i)
    }
}

/// Plays the best move one ply deep (an immediate win, never a move that lets the opponent win
/// at once when another exists), ties broken at random.
pub struct GreedyEngine {
    rng: Rng,
}

impl Engine for GreedyEngine {
    fn name(&self) -> String {
        "greedy".into()
    }

    fn choose(&mut self, position: &AnyPosition, _budget: Duration) -> Option<String> {
        let seed = self.rng.next_u64();
        let mv = match position {
            AnyPosition::Pentago(p) => pentago::greedy_move(p, 2, seed).map(|m| m.to_string()),
            AnyPosition::Quoridor(p) => quoridor::greedy_move(p, seed).map(|m| m.to_string()),
            AnyPosition::Pente(p) => pente::greedy_move(p, seed).map(|m| m.to_string()),
        };
        mv.or_else(|| fallback(position, &mut self.rng))
    }
}

/// Any legal move: the engines' last resort, so that a bot never stalls.
fn fallback(position: &AnyPosition, rng: &mut Rng) -> Option<String> {
    let moves = position.legal_moves();
    let i = rng.below(moves.len());
    moves.into_iter().nth(i)
}

/// The searching engine of a level.
pub struct SearchEngine {
    level: u8,
    rng: Rng,
    pentago: Option<pentago::Searcher>,
    solver: Option<pentago::SolverTable>,
}

impl SearchEngine {
    pub fn new(level: u8, seed: u64) -> SearchEngine {
        SearchEngine {
            level: level.clamp(*LEVELS.start(), *LEVELS.end()),
            rng: Rng::new(seed),
            pentago: None,
            solver: None,
        }
    }

    pub fn level(&self) -> u8 {
        self.level
    }

    fn pentago_move(
        &mut self,
        position: &hakem_games::pentago::Position,
        budget: Duration,
    ) -> Option<String> {
        let seed = self.rng.next_u64();
        // Level 1 takes a win in one and otherwise plays at random, level 2 looks one ply deep
        // (no move that lets the opponent win at once) with a little noise; levels 3
        // and 4 search two and three plies; level 5 searches as deep as the time allows and
        // solves the endgame exactly.
        let (max_depth, noise, cap_ms) = match self.level {
            1 => {
                return pentago::winning_move(position)
                    .map(|m| m.to_string())
                    .or_else(|| fallback(&AnyPosition::Pentago(*position), &mut self.rng))
            }
            2 => return pentago::greedy_move(position, 4, seed).map(|m| m.to_string()),
            3 => (2, 0, 1_000),
            4 => (3, 0, 3_000),
            _ => (36, 0, 10_000),
        };
        let time = budget.min(Duration::from_millis(cap_ms));
        let empties = 36 - position.marbles();
        if self.level >= 5 && empties <= 16 {
            // A proved result beats any heuristic; a third of the time is spent trying.
            let table = self
                .solver
                .get_or_insert_with(|| pentago::SolverTable::new(18));
            if let Ok(solution) =
                pentago::solve_with(position, pentago::Budget::time(time / 3), table)
            {
                if solution.value != pentago::Value::Loss {
                    return Some(solution.best.to_string());
                }
            }
        }
        let searcher = self
            .pentago
            .get_or_insert_with(|| pentago::Searcher::new(18));
        let limits = pentago::SearchLimits {
            max_depth,
            budget: pentago::Budget::time(time),
            noise,
            seed,
        };
        searcher
            .search(position, limits)
            .map(|r| r.best.to_string())
    }
}

impl Engine for SearchEngine {
    fn name(&self) -> String {
        format!("search-{}", self.level)
    }

    fn choose(&mut self, position: &AnyPosition, budget: Duration) -> Option<String> {
        let mv = match position {
            AnyPosition::Pentago(p) => self.pentago_move(p, budget),
            AnyPosition::Quoridor(p) => {
                quoridor::search_move(p, self.level, budget, self.rng.next_u64())
                    .map(|m| m.to_string())
            }
            AnyPosition::Pente(p) => pente::search_move(p, self.level, budget, self.rng.next_u64())
                .map(|m| m.to_string()),
        };
        // The engines only produce legal moves; checking costs little and keeps a bot safe.
        match mv {
            Some(mv) if position.check_str(&mv).is_ok() => Some(mv),
            _ => fallback(position, &mut self.rng),
        }
    }
}
