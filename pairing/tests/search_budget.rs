//! The pairing search says when it stopped at a budget, so that the arbiter can be told to
//! check the pairing (the vectors never reach it; a large synthetic bracket does).

use hakem_pairing::{pair_round_searched, sim::simulate, Rules};

#[test]
fn a_search_that_stops_at_its_budget_says_so() {
    let small = simulate(30, 4, 9, Rules::Dutch2025, 7);
    let (_, complete) = pair_round_searched(&small, 5, Rules::Dutch2025).unwrap();
    assert!(complete, "a small round is searched to the end");
    // 245 players, round 8, seed 2: a 35-player bracket uses up the node budget
    // (pairing/README.md, "Known limit").
    let large = simulate(245, 7, 9, Rules::Dutch2025, 2);
    let (pairing, complete) = pair_round_searched(&large, 8, Rules::Dutch2025).unwrap();
    assert!(!complete, "the budget was reached");
    assert_eq!(pairing.boards.len(), 122);
}
