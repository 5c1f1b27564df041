//! A room's chat under tokio's paused clock: a tournament board's chat is off until its arbiter
//! turns it on; a writer's pace holds across coming in again.

use std::sync::Arc;

use hakem_protocol::{ErrorCode, PerSeat, ServerMessage};
use hakem_round::MatchConfig;

use super::chat::Speaker;
use super::test_support::{self, act, join, settle, Member};
use super::{Action, ChatAction, ChatRequest, Credential, LocalRoom, RoomSettings, Rooms};

fn start(rooms: &Arc<Rooms>, tournament: Option<&str>) -> LocalRoom {
    let mut config = MatchConfig::new("pente", None, 1, None, 3, PerSeat::default()).unwrap();
    config.tournament = tournament.map(str::to_string);
    test_support::start(rooms, config, RoomSettings::default(), None)
}

async fn enter(room: &LocalRoom, conn: u64, member: &Member, credential: Credential) {
    let mut join = join(conn, member, credential);
    join.chat = true;
    room.join(join).await.unwrap();
    settle().await;
}

fn say(text: &str) -> Action {
    Action::Chat(Box::new(ChatRequest {
        action: ChatAction::Say {
            channel: None,
            text: text.into(),
        },
        speaker: Speaker::default(),
    }))
}

fn refusal(member: &mut Member) -> Option<ErrorCode> {
    member.events().into_iter().find_map(|m| match m {
        ServerMessage::Error(error) => Some(error.code),
        _ => None,
    })
}

fn heard(member: &mut Member) -> Vec<String> {
    member
        .events()
        .into_iter()
        .filter_map(|m| match m {
            ServerMessage::Chat(line) => Some(line.text),
            _ => None,
        })
        .collect()
}

fn switch(enabled: bool) -> Action {
    Action::Chat(Box::new(ChatRequest {
        action: ChatAction::Switch(enabled),
        speaker: Speaker::default(),
    }))
}

#[tokio::test(start_paused = true)]
async fn a_tournament_board_has_no_chat_until_its_arbiter_turns_it_on() {
    let rooms = Arc::new(Rooms::default());
    let room = start(&rooms, Some("t1"));
    let (mut player, mut arbiter) = (Member::new(), Member::new());
    enter(&room, 1, &player, Credential::Seat("a".repeat(32))).await;
    enter(&room, 3, &arbiter, Credential::Arbiter("c".repeat(32))).await;
    let history = |member: &mut Member| {
        member.events().into_iter().find_map(|m| match m {
            ServerMessage::ChatHistory { enabled, .. } => Some(enabled),
            _ => None,
        })
    };
    assert_eq!(history(&mut player), Some(false));
    assert_eq!(history(&mut arbiter), Some(false));
    act(&room, 1, &player, say("gg")).await;
    assert_eq!(refusal(&mut player), Some(ErrorCode::Forbidden));
    // A player cannot turn it on; the arbiter can.
    act(&room, 1, &player, switch(true)).await;
    assert_eq!(refusal(&mut player), Some(ErrorCode::Forbidden));
    act(&room, 3, &arbiter, switch(true)).await;
    let settings = player.events().into_iter().find_map(|m| match m {
        ServerMessage::ChatSettings { enabled, .. } => Some(enabled),
        _ => None,
    });
    assert_eq!(settings, Some(true));
    act(&room, 1, &player, say("gg")).await;
    assert_eq!(heard(&mut arbiter), ["gg"]);
}

#[tokio::test(start_paused = true)]
async fn coming_in_again_does_not_give_a_writer_a_fresh_burst() {
    let rooms = Arc::new(Rooms::default());
    let room = start(&rooms, None);
    let (mut player, mut arbiter) = (Member::new(), Member::new());
    enter(&room, 3, &arbiter, Credential::Arbiter("c".repeat(32))).await;
    enter(&room, 1, &player, Credential::Seat("a".repeat(32))).await;
    for i in 0..5 {
        act(&room, 1, &player, say(&format!("m{i}"))).await;
    }
    // The same seat from another connection, and the same connection again: still too fast.
    let second = Member::new();
    enter(&room, 2, &second, Credential::Seat("a".repeat(32))).await;
    act(&room, 2, &second, say("again")).await;
    enter(&room, 1, &player, Credential::Seat("a".repeat(32))).await;
    player.events();
    act(&room, 1, &player, say("and again")).await;
    assert_eq!(refusal(&mut player), Some(ErrorCode::RateLimited));
    assert_eq!(heard(&mut arbiter), ["m0", "m1", "m2", "m3", "m4"]);
    tokio::time::advance(std::time::Duration::from_secs(2)).await;
    act(&room, 1, &player, say("later")).await;
    assert_eq!(heard(&mut arbiter), ["later"]);
}
