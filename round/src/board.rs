//! The typed board of a rules position, as clients draw it (`hakem_protocol::Board`): the
//! server puts it in `state` and in every event that changes the position.

use hakem_games::pentago::{self, Cell};
use hakem_games::{pente, AnyPosition};
use hakem_protocol::board::{
    Board, PentagoBoard, PenteBoard, PerSide, QuoridorBoard, Side, Stones, PENTAGO_SIZE, PENTE_SIZE,
};

fn side(side: hakem_games::Side) -> Side {
    match side {
        hakem_games::Side::First => Side::First,
        hakem_games::Side::Second => Side::Second,
    }
}

/// The board of `position`, with a Pentago placement that waits for its turn shown on it (a
/// placed marble is visible to everyone at once).
pub fn board_of(position: &AnyPosition, placement: Option<&pentago::Placement>) -> Board {
    match position {
        AnyPosition::Pentago(p) => {
            let mut stones = Stones::empty(PENTAGO_SIZE);
            for rank in 0..PENTAGO_SIZE {
                for file in 0..PENTAGO_SIZE {
                    let Some(cell) = Cell::new(file, rank) else {
                        continue;
                    };
                    let stone = match placement {
                        Some(placement) => placement.stone_at(cell),
                        None => p.stone_at(cell),
                    };
                    stones.set(file, rank, stone.map(side));
                }
            }
            Board::Pentago(PentagoBoard { stones })
        }
        AnyPosition::Quoridor(q) => Board::Quoridor(QuoridorBoard {
            pawns: PerSide::new(
                q.pawn(hakem_games::Side::First).to_string(),
                q.pawn(hakem_games::Side::Second).to_string(),
            ),
            walls: q.walls().map(|w| w.to_string()).collect(),
            walls_left: PerSide::new(
                q.walls_left(hakem_games::Side::First),
                q.walls_left(hakem_games::Side::Second),
            ),
        }),
        AnyPosition::Pente(p) => {
            let mut stones = Stones::empty(PENTE_SIZE);
            for row in 0..PENTE_SIZE {
                for col in 0..PENTE_SIZE {
                    if let Some(point) = pente::Point::new(col, row) {
                        stones.set(col, row, p.stone(point).map(side));
                    }
                }
            }
            Board::Pente(PenteBoard {
                stones,
                captures: PerSide::new(
                    u32::from(p.captures(hakem_games::Side::First)),
                    u32::from(p.captures(hakem_games::Side::Second)),
                ),
            })
        }
    }
}
