use crate::Game;

/// The number of leaves of the game tree `depth` moves below `pos`. A finished game is a leaf at
/// any remaining depth; every legal move is a separate branch.
pub fn perft<G: Game>(pos: &G, depth: u32) -> u64 {
    if depth == 0 || pos.outcome().is_some() {
        return 1;
    }
    if depth == 1 {
        return pos.count_legal_moves();
    }
    let mut moves = Vec::new();
    pos.legal_moves(&mut moves);
    moves
        .iter()
        .map(|&mv| {
            let mut next = pos.clone();
            // A move from legal_moves is legal by construction.
            next.play(mv).expect("generated move is legal");
            perft(&next, depth - 1)
        })
        .sum()
}
