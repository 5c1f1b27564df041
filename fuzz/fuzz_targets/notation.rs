//! Move notation of every game and variant, played against positions reached by the fuzzer's
//! own moves: a move is played or refused, and a refusal leaves the position as it was.
#![no_main]

use hakem_games::{AnyPosition, GameKind};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&pick, rest)) = data.split_first() else {
        return;
    };
    let Ok(text) = std::str::from_utf8(rest) else {
        return;
    };
    let games = [
        (GameKind::Pentago, "tr"),
        (GameKind::Pentago, "classic"),
        (GameKind::Quoridor, "standard"),
        (GameKind::Pente, "tournament"),
    ];
    let (kind, variant) = games[usize::from(pick) % games.len()];
    let mut position = AnyPosition::new(kind, Some(variant)).expect("a known variant");
    for word in text.split_whitespace().take(64) {
        let before = position.board_text();
        let checked = position.check_str(word);
        match position.play_str(word) {
            Ok(played) => assert_eq!(checked.ok(), Some(played)),
            Err(_) => {
                assert!(checked.is_err());
                assert_eq!(position.board_text(), before, "a refused move changes nothing");
            }
        }
        if position.outcome().is_some() {
            break;
        }
    }
});
