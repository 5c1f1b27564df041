//! The server's own bot: a person plays the computer with nothing but a browser or `hakem play`.

use hakem_blackbox::{create_match, Client, Server};
use serde_json::{json, Value};

/// Plays p1's side with the first legal move the server offers, until the round ends.
async fn play_out(me: &mut Client, id: &str) -> Value {
    loop {
        let frame = me.next().await;
        if frame["type"] == "event" && frame["event"]["kind"] == "round_ended" {
            return frame;
        }
        if frame["type"] != "state" {
            continue;
        }
        let status = frame["status"].as_str().unwrap_or_default();
        if status == "waiting" || status == "between_sets" {
            if frame["players"]["p1"]["ready"] != true {
                me.send(json!({"type": "ready", "match": id})).await;
            }
            continue;
        }
        let legal = frame["position"]["legal_moves"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        if frame["position"]["to_move"] == "p1" && !legal.is_empty() {
            me.send(json!({"type": "move", "match": id, "move": legal[0]}))
                .await;
        }
    }
}

#[tokio::test]
async fn a_person_plays_the_house_bot_to_the_end() {
    let server = Server::start();
    let mut me = Client::connect(&server, "person", None).await;
    let m = create_match(
        &mut me,
        json!({"game": "pentago", "sets": 1, "clock": null, "house_bot": {"seat": "p2", "level": 1}}),
    )
    .await;
    let state = server.match_state(&m.id);
    assert_eq!(state["players"]["p2"]["name"], "computer (level 1)");
    // The state says which seat the server plays (so that a client does not offer claims
    // against it, say), and no tournament.
    assert_eq!(state["players"]["p2"]["house_bot"], true);
    assert!(state["players"]["p1"].get("house_bot").is_none(), "{state}");
    assert!(state.get("tournament").is_none(), "{state}");
    me.send(json!({"type": "join", "match": m.id, "seat_token": m.p1, "legal_moves": true}))
        .await;
    let ended = play_out(&mut me, &m.id).await;
    assert_eq!(ended["event"]["reason"], "sets");
    let state = server.match_state(&m.id);
    assert_eq!(state["status"], "finished");
    // The bot really played: half the moves (or one fewer) are p2's.
    let moves = state["position"]["moves"].as_array().unwrap().len();
    assert!(moves >= 2, "{state}");

    let bad = me
        .request(json!({"type": "create_match", "game": "pente", "house_bot": {"seat": "p1", "level": 9}}))
        .await;
    assert_eq!(bad["code"], "bad_request");
}

#[tokio::test]
async fn the_house_bot_comes_back_after_a_restart() {
    let mut server = Server::start();
    let mut me = Client::connect(&server, "person", None).await;
    let m = create_match(
        &mut me,
        json!({"game": "pente", "sets": 1, "house_bot": {"seat": "p2", "level": 1}}),
    )
    .await;
    me.accepted(json!({"type": "join", "match": m.id, "seat_token": m.p1}))
        .await;
    me.accepted(json!({"type": "ready", "match": m.id})).await;
    me.event("set_started").await;
    me.accepted(json!({"type": "move", "match": m.id, "move": "K10"}))
        .await;
    me.event("pressed").await;
    me.event("moved").await;
    server.restart();
    let mut me = Client::connect(&server, "person again", None).await;
    me.send(json!({"type": "join", "match": m.id, "seat_token": m.p1, "legal_moves": true}))
        .await;
    // The bot answers each of our moves after the restart too.
    let state = me.find(|f| f["type"] == "state").await;
    assert_eq!(
        state["players"]["p2"]["house_bot"], true,
        "kept across the restart"
    );
    let legal = state["position"]["legal_moves"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert!(!legal.is_empty(), "{state}");
    me.send(json!({"type": "move", "match": m.id, "move": legal[legal.len() / 2]}))
        .await;
    let answer = me
        .find(|f| {
            f["type"] == "event" && f["event"]["kind"] == "moved" && f["event"]["seat"] == "p2"
        })
        .await;
    assert!(answer["event"]["move"].is_string());
}
