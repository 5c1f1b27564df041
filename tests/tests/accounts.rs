//! Accounts: the organizer creates them, a match seats them by name, and their connections are
//! told `your_match`, now and after a restart.

use hakem_blackbox::{Client, Server};
use serde_json::json;

const ORGANIZER: &str = "organizer-secret";

#[tokio::test]
async fn an_account_seated_by_name_is_told_of_its_matches() {
    let mut server = Server::start();
    let mut organizer = Client::connect(&server, "organizer", Some(ORGANIZER)).await;
    let created = organizer
        .request(json!({"type": "create_account", "name": "alphabot", "kind": "bot"}))
        .await;
    assert_eq!(created["type"], "account_created", "{created}");
    let token = created["token"].as_str().unwrap().to_string();
    assert_eq!(token.len(), 32);
    organizer
        .refused(
            json!({"type": "create_account", "name": "alphabot"}),
            "bad_request",
        )
        .await;
    organizer
        .refused(
            json!({"type": "create_account", "name": "no spaces please"}),
            "bad_request",
        )
        .await;

    // Only the organizer creates accounts.
    let mut guest = Client::connect(&server, "guest", None).await;
    guest
        .refused(
            json!({"type": "create_account", "name": "sneaky"}),
            "forbidden",
        )
        .await;
    guest
        .refused(
            json!({"type": "create_match", "game": "pente", "accounts": {"p1": "nobody"}}),
            "bad_request",
        )
        .await;

    // The bot is connected when its first match is created.
    let mut bot = Client::connect_raw(&server, "bot").await;
    bot.send(json!({"type": "hello", "protocol": 1, "token": token}))
        .await;
    let welcome = bot.next().await;
    assert_eq!(
        welcome["identity"],
        json!({"kind": "bot", "name": "alphabot"})
    );
    let first = organizer
        .request(json!({"type": "create_match", "game": "pentago", "accounts": {"p2": "alphabot"}}))
        .await;
    let notice = bot.find(|f| f["type"] == "your_match").await;
    assert_eq!(notice["match"], first["match"]);
    assert_eq!(notice["seat"], "p2");
    assert_eq!(notice["seat_token"], first["seat_tokens"]["p2"]);
    assert_eq!(notice["game"], "pentago");
    let state = server.match_state(first["match"].as_str().unwrap());
    assert_eq!(state["players"]["p2"]["name"], "alphabot");

    // The seat token from the notice works.
    bot.accepted(
        json!({"type": "join", "match": notice["match"], "seat_token": notice["seat_token"]}),
    )
    .await;

    // A second match, created while the bot is away, is announced when it says hello; so is
    // the first, after a restart. A finished match is not.
    let second = organizer
        .request(
            json!({"type": "create_match", "game": "quoridor", "accounts": {"p1": "alphabot"}}),
        )
        .await;
    let mut arbiter = Client::connect(&server, "arbiter", None).await;
    arbiter
        .accepted(json!({"type": "join", "match": first["match"], "arbiter_token": first["arbiter_token"]}))
        .await;
    arbiter
        .accepted(json!({"type": "declare", "match": first["match"], "scope": "round", "winner": "draw", "reason": "test"}))
        .await;
    server.restart();
    let mut bot = Client::connect_raw(&server, "bot again").await;
    bot.send(json!({"type": "hello", "protocol": 1, "token": token}))
        .await;
    assert_eq!(bot.next().await["type"], "welcome");
    let notice = bot.find(|f| f["type"] == "your_match").await;
    assert_eq!(notice["match"], second["match"]);
    assert_eq!(notice["seat"], "p1");
    let ping = bot.request(json!({"type": "ping"})).await;
    assert_eq!(ping["type"], "pong");
    assert!(
        !bot.buffered().any(|f| f["type"] == "your_match"),
        "only live matches are announced"
    );
}
