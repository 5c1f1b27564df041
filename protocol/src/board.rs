//! The board of each game as clients draw it, typed: `state.position.board` and the `board` of
//! every event that changes the position. A client copies it; it never needs the rules.
//!
//! On the wire (unchanged since protocol v1's first `state`):
//! - Pentago: `{"rows": ["......", ...]}`, six strings from rank 6 down to rank 1, files a..f;
//!   `x` the set's first mover, `o` the second, `.` empty.
//! - Quoridor: `{"pawns": {"first": "e1", "second": "e9"}, "walls": ["e3h"],
//!   "walls_left": {"first": 10, "second": 9}}`.
//! - Pente: `{"rows": [...], "captures": {"first": 2, "second": 0}}`, nineteen strings from
//!   row 19 down to row 1, columns A..T without I; `captures` counts captured stones.

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A side of a set: its first mover or the other player.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Side {
    First,
    Second,
}

impl Side {
    pub fn other(self) -> Side {
        match self {
            Side::First => Side::Second,
            Side::Second => Side::First,
        }
    }

    fn mark(self) -> char {
        match self {
            Side::First => 'x',
            Side::Second => 'o',
        }
    }
}

/// A value per side, written `{"first":..,"second":..}`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PerSide<T> {
    pub first: T,
    pub second: T,
}

impl<T> PerSide<T> {
    pub fn new(first: T, second: T) -> PerSide<T> {
        PerSide { first, second }
    }

    pub fn get(&self, side: Side) -> &T {
        match side {
            Side::First => &self.first,
            Side::Second => &self.second,
        }
    }

    pub fn get_mut(&mut self, side: Side) -> &mut T {
        match side {
            Side::First => &mut self.first,
            Side::Second => &mut self.second,
        }
    }
}

/// Stones on a square grid of `size` x `size` points; column 0 is the left (file a, column A),
/// row 0 the bottom (rank 1).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Stones {
    size: u8,
    cells: Vec<Option<Side>>,
}

impl Stones {
    pub fn empty(size: u8) -> Stones {
        Stones {
            size,
            cells: vec![None; usize::from(size) * usize::from(size)],
        }
    }

    pub fn size(&self) -> u8 {
        self.size
    }

    fn index(&self, col: u8, row: u8) -> Option<usize> {
        (col < self.size && row < self.size)
            .then(|| usize::from(row) * usize::from(self.size) + usize::from(col))
    }

    /// The stone at a point; `None` for an empty point or one off the board.
    pub fn get(&self, col: u8, row: u8) -> Option<Side> {
        self.index(col, row).and_then(|i| self.cells[i])
    }

    /// Puts a stone on (or, with `None`, clears) a point; off the board changes nothing.
    pub fn set(&mut self, col: u8, row: u8, stone: Option<Side>) {
        if let Some(i) = self.index(col, row) {
            self.cells[i] = stone;
        }
    }

    /// How many stones `side` has on the board.
    pub fn count(&self, side: Side) -> usize {
        self.cells.iter().filter(|&&c| c == Some(side)).count()
    }

    /// The wire form: one string per row, the top row first.
    pub fn rows(&self) -> Vec<String> {
        (0..self.size)
            .rev()
            .map(|row| {
                (0..self.size)
                    .map(|col| self.get(col, row).map_or('.', Side::mark))
                    .collect()
            })
            .collect()
    }

    /// Reads the wire form; `size` rows of `size` marks (`x`, `o`, `.`).
    pub fn from_rows(rows: &[String], size: u8) -> Result<Stones, String> {
        if rows.len() != usize::from(size) {
            return Err(format!("a board of {size} rows has {}", rows.len()));
        }
        let mut stones = Stones::empty(size);
        for (i, text) in rows.iter().enumerate() {
            let row = size - 1 - i as u8;
            if text.chars().count() != usize::from(size) {
                return Err(format!("row {} is not {size} marks long", row + 1));
            }
            for (col, mark) in text.chars().enumerate() {
                let stone = match mark {
                    'x' => Some(Side::First),
                    'o' => Some(Side::Second),
                    '.' => None,
                    other => return Err(format!("{other:?} is not a mark (x, o or .)")),
                };
                stones.set(col as u8, row, stone);
            }
        }
        Ok(stones)
    }
}

pub const PENTAGO_SIZE: u8 = 6;
pub const PENTE_SIZE: u8 = 19;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PentagoBoard {
    pub stones: Stones,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct QuoridorBoard {
    /// Each side's pawn square, such as `e1`.
    pub pawns: PerSide<String>,
    /// The walls placed, in notation (`e3h`, `d5v`), in the order they were placed.
    pub walls: Vec<String>,
    pub walls_left: PerSide<u8>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PenteBoard {
    pub stones: Stones,
    /// Stones each side has captured.
    pub captures: PerSide<u32>,
}

/// The board of one of the three games.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Board {
    Pentago(PentagoBoard),
    Quoridor(QuoridorBoard),
    Pente(PenteBoard),
}

#[derive(Serialize, Deserialize)]
struct Wire {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    rows: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    captures: Option<PerSide<u32>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pawns: Option<PerSide<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    walls: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    walls_left: Option<PerSide<u8>>,
}

impl Serialize for Board {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let wire = match self {
            Board::Pentago(b) => Wire {
                rows: Some(b.stones.rows()),
                captures: None,
                pawns: None,
                walls: None,
                walls_left: None,
            },
            Board::Quoridor(b) => Wire {
                rows: None,
                captures: None,
                pawns: Some(b.pawns.clone()),
                walls: Some(b.walls.clone()),
                walls_left: Some(b.walls_left),
            },
            Board::Pente(b) => Wire {
                rows: Some(b.stones.rows()),
                captures: Some(b.captures),
                pawns: None,
                walls: None,
                walls_left: None,
            },
        };
        wire.serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for Board {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Board, D::Error> {
        use serde::de::Error;
        let wire = Wire::deserialize(deserializer)?;
        if let Some(pawns) = wire.pawns {
            return Ok(Board::Quoridor(QuoridorBoard {
                pawns,
                walls: wire.walls.unwrap_or_default(),
                walls_left: wire
                    .walls_left
                    .ok_or_else(|| D::Error::missing_field("walls_left"))?,
            }));
        }
        let rows = wire.rows.ok_or_else(|| D::Error::missing_field("rows"))?;
        if wire.captures.is_some() || rows.len() == usize::from(PENTE_SIZE) {
            return Ok(Board::Pente(PenteBoard {
                stones: Stones::from_rows(&rows, PENTE_SIZE).map_err(D::Error::custom)?,
                captures: wire.captures.unwrap_or_default(),
            }));
        }
        Ok(Board::Pentago(PentagoBoard {
            stones: Stones::from_rows(&rows, PENTAGO_SIZE).map_err(D::Error::custom)?,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn boards_keep_their_wire_form() {
        let mut stones = Stones::empty(PENTAGO_SIZE);
        stones.set(3, 3, Some(Side::First)); // d4
        stones.set(0, 0, Some(Side::Second)); // a1
        let board = Board::Pentago(PentagoBoard { stones });
        let wire = json!({"rows": ["......", "......", "...x..", "......", "......", "o....."]});
        assert_eq!(serde_json::to_value(&board).unwrap(), wire);
        assert_eq!(serde_json::from_value::<Board>(wire).unwrap(), board);

        let quoridor = json!({"pawns": {"first": "e2", "second": "e9"}, "walls": ["e3h"],
                              "walls_left": {"first": 9, "second": 10}});
        let board: Board = serde_json::from_value(quoridor.clone()).unwrap();
        assert!(matches!(&board, Board::Quoridor(q) if q.walls_left.first == 9));
        assert_eq!(serde_json::to_value(&board).unwrap(), quoridor);

        let mut rows = vec![".".repeat(19); 19];
        rows[9] = format!("{}x{}", ".".repeat(9), ".".repeat(9)); // K10
        let pente = json!({"rows": rows, "captures": {"first": 2, "second": 0}});
        let board: Board = serde_json::from_value(pente.clone()).unwrap();
        let Board::Pente(p) = &board else {
            panic!("{board:?}")
        };
        assert_eq!(p.stones.get(9, 9), Some(Side::First));
        assert_eq!(p.stones.count(Side::First), 1);
        assert_eq!(serde_json::to_value(&board).unwrap(), pente);
    }

    #[test]
    fn malformed_boards_are_refused_not_guessed() {
        for bad in [
            json!({"rows": ["......"]}),
            json!({"rows": ["......", "......", "......", "......", "......", "....z."]}),
            json!({"rows": ["...", "......", "......", "......", "......", "......"]}),
            json!({"pawns": {"first": "e1", "second": "e9"}}),
            json!({}),
            json!(7),
        ] {
            assert!(
                serde_json::from_value::<Board>(bad.clone()).is_err(),
                "{bad}"
            );
        }
        // Off the board is nothing, not a panic.
        let mut stones = Stones::empty(6);
        stones.set(6, 0, Some(Side::First));
        assert_eq!(stones.get(6, 0), None);
        assert_eq!(stones.count(Side::First), 0);
    }
}
