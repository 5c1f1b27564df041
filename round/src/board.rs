//! The game-specific picture of a board in `state.position.board`.
//!
//! - Pentago: `{"rows": ["......", ...]}`, six strings from rank 6 down to rank 1, files a..f;
//!   `x` is the set's first mover (black), `o` the second (white), `.` empty. A pending
//!   placement is already on the board (a placed marble is visible to everyone).
//! - Quoridor: `{"pawns": {"first": "e1", "second": "e9"}, "walls": ["e3h", ...],
//!   "walls_left": {"first": 10, "second": 10}}`.
//! - Pente: `{"rows": [...]}` nineteen strings from row 19 down to row 1, columns A..T without
//!   I; `x` the first mover (White), `o` the second; `"captures": {"first": N, "second": N}`
//!   counts captured stones.

use hakem_games::pentago::{self, Cell};
use hakem_games::{pente, AnyPosition, Side};
use serde_json::{json, Value};

fn mark(side: Option<Side>) -> char {
    match side {
        Some(Side::First) => 'x',
        Some(Side::Second) => 'o',
        None => '.',
    }
}

/// The board, with a Pentago placement that waits for its turn shown on it.
pub fn board(position: &AnyPosition, placement: Option<&pentago::Placement>) -> Value {
    match position {
        AnyPosition::Pentago(p) => {
            let rows: Vec<String> = (0..6u8)
                .rev()
                .map(|rank| {
                    (0..6u8)
                        .filter_map(|file| Cell::new(file, rank))
                        .map(|cell| {
                            mark(match placement {
                                Some(placement) => placement.stone_at(cell),
                                None => p.stone_at(cell),
                            })
                        })
                        .collect()
                })
                .collect();
            json!({ "rows": rows })
        }
        AnyPosition::Quoridor(q) => json!({
            "pawns": {
                "first": q.pawn(Side::First).to_string(),
                "second": q.pawn(Side::Second).to_string(),
            },
            "walls": q.walls().map(|w| w.to_string()).collect::<Vec<_>>(),
            "walls_left": {
                "first": q.walls_left(Side::First),
                "second": q.walls_left(Side::Second),
            },
        }),
        AnyPosition::Pente(p) => {
            let rows: Vec<String> = (0..19u8)
                .rev()
                .map(|row| {
                    (0..19u8)
                        .filter_map(|col| pente::Point::new(col, row))
                        .map(|point| mark(p.stone(point)))
                        .collect()
                })
                .collect();
            json!({
                "rows": rows,
                "captures": {
                    "first": p.captures(Side::First),
                    "second": p.captures(Side::Second),
                },
            })
        }
    }
}
