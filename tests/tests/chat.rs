//! The chat of a match and draws by agreement, through a real server: the players' and the
//! spectators' channels reach who reads them, and only clients that asked for `chat`; bad
//! messages, a fast writer, a muted one and a chat turned off change nothing; messages and
//! settings survive a restart and are in the writer's data export. Casual Pente and Quoridor
//! players may agree a set drawn; Pentago players may not.

use hakem_blackbox::{create_match, seated_pair, Client, Database, Server};
use serde_json::{json, Value};

const ORGANIZER: &str = "organizer-secret";

async fn account(organizer: &mut Client, name: &str) -> String {
    let created = organizer
        .request(json!({"type": "create_account", "name": name, "kind": "player"}))
        .await;
    created["token"].as_str().unwrap().to_string()
}

/// The next `chat` frame.
async fn chat(client: &mut Client) -> Value {
    client.find(|f| f["type"] == "chat").await
}

fn no_chat_frames(client: &Client) {
    let seen: Vec<&Value> = client
        .buffered()
        .filter(|f| f["type"].as_str().is_some_and(|t| t.starts_with("chat")))
        .collect();
    assert!(seen.is_empty(), "{}: {seen:?}", client.name);
}

/// The texts of a list of chat lines (`chat_history.lines`, an export's `chat`), in order.
fn texts(lines: &Value) -> Vec<&Value> {
    lines
        .as_array()
        .unwrap()
        .iter()
        .map(|l| &l["text"])
        .collect()
}

/// A chat message that must be refused with `code`.
async fn refused_to_say(client: &mut Client, id: &str, text: &str, code: &str) -> Value {
    client
        .refused(json!({"type": "chat", "match": id, "text": text}), code)
        .await
}

async fn say(client: &mut Client, id: &str, text: &str) -> Value {
    client
        .request(json!({"type": "chat", "match": id, "text": text}))
        .await
}

async fn chat_on_both_databases(database: Database) {
    let mut server = Server::start_on(database, &[]);
    let mut organizer = Client::connect(&server, "organizer", Some(ORGANIZER)).await;
    let ayse_token = account(&mut organizer, "ayse").await;
    let zeynep_token = account(&mut organizer, "zeynep").await;
    let m = create_match(
        &mut organizer,
        json!({"game": "pente", "players": {"p1": "Ayşe", "p2": "Bora"}, "accounts": {"p1": "ayse"}}),
    )
    .await;
    let features = ["chat"];
    let mut p1 = Client::connect_with(&server, "p1", Some(&ayse_token), &features).await;
    let mut p2 = Client::connect_with(&server, "p2", None, &features).await;
    let mut arbiter = Client::connect_with(&server, "arbiter", None, &features).await;
    let mut zeynep = Client::connect_with(&server, "zeynep", Some(&zeynep_token), &features).await;
    let mut guest = Client::connect_with(&server, "guest", None, &features).await;
    let mut v1 = Client::connect(&server, "v1", None).await;
    for (client, join) in [
        (
            &mut p1,
            json!({"type": "join", "match": m.id, "seat_token": m.p1}),
        ),
        (
            &mut p2,
            json!({"type": "join", "match": m.id, "seat_token": m.p2}),
        ),
        (
            &mut arbiter,
            json!({"type": "join", "match": m.id, "arbiter_token": m.arbiter}),
        ),
        (&mut zeynep, json!({"type": "watch", "match": m.id})),
        (&mut guest, json!({"type": "watch", "match": m.id})),
    ] {
        client.accepted(join).await;
        let history = client.find(|f| f["type"] == "chat_history").await;
        assert_eq!(history["enabled"], true, "{history}");
        assert_eq!(history["lines"], json!([]));
    }
    v1.accepted(json!({"type": "watch", "match": m.id})).await;

    // A player writes in the players' chat: the other player and the arbiter read it.
    say(&mut p1, &m.id, "  merhaba,\niyi oyunlar  ").await;
    for client in [&mut p2, &mut arbiter] {
        let line = chat(client).await;
        assert_eq!(line["channel"], "players", "{line}");
        assert_eq!(line["from"], "Ayşe");
        assert_eq!(line["role"], "p1");
        assert_eq!(line["text"], "merhaba, iyi oyunlar");
        assert_eq!(line["n"], 1);
    }
    // A spectator with an account writes in the spectators' chat; a guest may not.
    let reply = say(&mut zeynep, &m.id, "güzel hamle").await;
    assert_eq!(reply["type"], "ack", "{reply}");
    let line = chat(&mut arbiter).await;
    // Each channel numbers its own messages.
    assert_eq!(
        (&line["channel"], &line["from"], &line["n"]),
        (&json!("spectators"), &json!("zeynep"), &json!(1))
    );
    assert_eq!(chat(&mut guest).await["text"], "güzel hamle");
    refused_to_say(&mut guest, &m.id, "hi", "forbidden").await;
    // Each writes in its own channel.
    p1.refused(
        json!({"type": "chat", "match": m.id, "text": "psst", "channel": "spectators"}),
        "forbidden",
    )
    .await;
    zeynep
        .refused(
            json!({"type": "chat", "match": m.id, "text": "play e5", "channel": "players"}),
            "forbidden",
        )
        .await;
    // A player of the match watching it as a spectator neither reads nor writes there.
    let mut ayse_watching =
        Client::connect_with(&server, "ayse-watching", Some(&ayse_token), &features).await;
    ayse_watching
        .accepted(json!({"type": "watch", "match": m.id}))
        .await;
    let history = ayse_watching.find(|f| f["type"] == "chat_history").await;
    assert_eq!(history["lines"], json!([]), "{history}");
    refused_to_say(&mut ayse_watching, &m.id, "ipucu?", "forbidden").await;
    // The arbiter writes in either.
    arbiter
        .accepted(json!({"type": "chat", "match": m.id, "text": "sessiz lütfen", "channel": "spectators"}))
        .await;
    let line = zeynep
        .find(|f| f["type"] == "chat" && f["role"] == "arbiter")
        .await;
    assert_eq!(line["text"], "sessiz lütfen");

    // Bad messages change nothing.
    for bad in [
        json!({"type": "chat", "match": m.id, "text": " \n "}),
        json!({"type": "chat", "match": m.id, "text": "x".repeat(301)}),
        json!({"type": "chat", "match": m.id}),
        json!({"type": "chat", "match": m.id, "text": "hi", "channel": "everyone"}),
    ] {
        p2.refused(bad, "bad_request").await;
    }
    p2.refused(
        json!({"type": "chat", "match": "nosuchmatch", "text": "hi"}),
        "unknown_match",
    )
    .await;

    // A fast writer: a burst of five, then refused.
    for i in 0..5 {
        let reply = say(&mut p2, &m.id, &format!("hızlı {i}")).await;
        assert_eq!(reply["type"], "ack", "{reply}");
    }
    refused_to_say(&mut p2, &m.id, "one more", "rate_limited").await;

    // Moderation is the arbiter's and the organizer's.
    p1.refused(
        json!({"type": "mute", "match": m.id, "seat": "p2"}),
        "forbidden",
    )
    .await;
    arbiter
        .refused(json!({"type": "mute", "match": m.id}), "bad_request")
        .await;
    arbiter
        .accepted(json!({"type": "mute", "match": m.id, "seat": "p1"}))
        .await;
    let settings = p1.find(|f| f["type"] == "chat_settings").await;
    assert_eq!(settings["muted"], true, "{settings}");
    assert!(
        settings.get("mutes").is_none(),
        "players do not see the list"
    );
    let settings = arbiter.find(|f| f["type"] == "chat_settings").await;
    assert_eq!(settings["mutes"], json!([{"seat": "p1"}]));
    refused_to_say(&mut p1, &m.id, "but", "forbidden").await;
    arbiter
        .accepted(json!({"type": "mute", "match": m.id, "name": "zeynep"}))
        .await;
    refused_to_say(&mut zeynep, &m.id, "hey", "forbidden").await;
    arbiter
        .accepted(json!({"type": "mute", "match": m.id, "seat": "p1", "muted": false}))
        .await;
    // The arbiter turns the chat off: nobody but the arbiter writes; the organizer turns it
    // on again from the spectators' seats.
    arbiter
        .accepted(json!({"type": "set_chat", "match": m.id, "enabled": false}))
        .await;
    refused_to_say(&mut p1, &m.id, "hello?", "forbidden").await;
    organizer
        .accepted(json!({"type": "watch", "match": m.id}))
        .await;
    organizer
        .accepted(json!({"type": "set_chat", "match": m.id, "enabled": true}))
        .await;
    let reply = say(&mut p1, &m.id, "tekrar merhaba").await;
    assert_eq!(reply["type"], "ack", "{reply}");
    let last = p2
        .find(|f| f["type"] == "chat" && f["text"] == "tekrar merhaba")
        .await;
    assert_eq!(last["role"], "p1");
    let last_n = last["n"].as_u64().unwrap();

    // A client that did not ask for the chat never hears of it; the players never hear the
    // spectators.
    v1.request(json!({"type": "ping"})).await;
    no_chat_frames(&v1);
    for player in [&mut p1, &mut p2, &mut ayse_watching] {
        player.request(json!({"type": "ping"})).await;
        let overheard: Vec<&Value> = player
            .buffered()
            .filter(|f| f["type"] == "chat" && f["channel"] != "players")
            .collect();
        assert!(overheard.is_empty(), "{}: {overheard:?}", player.name);
    }

    // Stored: after a restart, the history comes back with the settings.
    for client in [p1, p2, arbiter, zeynep, guest, v1, organizer, ayse_watching] {
        client.close().await;
    }
    server.restart();
    let mut p2 = Client::connect_with(&server, "p2", None, &features).await;
    p2.accepted(json!({"type": "join", "match": m.id, "seat_token": m.p2}))
        .await;
    let history = p2.find(|f| f["type"] == "chat_history").await;
    let lines = history["lines"].as_array().unwrap();
    assert!(lines.iter().all(|l| l["channel"] == "players"), "{history}");
    assert_eq!(lines.first().unwrap()["text"], "merhaba, iyi oyunlar");
    assert_eq!(lines.last().unwrap()["n"], last_n);
    assert_eq!(lines.len(), 7, "{history}");
    let mut zeynep = Client::connect_with(&server, "zeynep", Some(&zeynep_token), &features).await;
    zeynep
        .accepted(json!({"type": "watch", "match": m.id}))
        .await;
    let history = zeynep.find(|f| f["type"] == "chat_history").await;
    assert_eq!(history["muted"], true, "still muted: {history}");
    let said = texts(&history["lines"]);
    assert_eq!(said, [&json!("güzel hamle"), &json!("sessiz lütfen")]);

    // The writer's own data lists what it wrote, and only that.
    let bearer = format!("Authorization: Bearer {ayse_token}");
    let (status, _, body) = server.get_with("/api/account/export", &[&bearer]);
    assert_eq!(status, 200, "{body}");
    let export: Value = serde_json::from_str(&body).unwrap();
    let written = texts(&export["chat"]);
    assert_eq!(
        written,
        [&json!("merhaba, iyi oyunlar"), &json!("tekrar merhaba")]
    );
}

#[tokio::test]
async fn the_chat_reaches_who_reads_it_is_moderated_and_stored_on_sqlite() {
    chat_on_both_databases(Database::sqlite()).await;
}

#[tokio::test]
async fn the_chat_reaches_who_reads_it_is_moderated_and_stored_on_postgres() {
    let Some(database) = Database::postgres() else {
        return;
    };
    chat_on_both_databases(database).await;
}

#[tokio::test]
async fn casual_pente_and_quoridor_players_may_agree_a_set_drawn() {
    let server = Server::start();
    for (game, first) in [("pente", "K10"), ("quoridor", "e2")] {
        let (mut p1, mut p2, m) = seated_pair(&server, json!({"game": game, "sets": 1})).await;
        let mut spectator = Client::connect(&server, "spectator", None).await;
        spectator
            .accepted(json!({"type": "watch", "match": m.id}))
            .await;
        let offer = json!({"type": "offer_draw", "match": m.id});
        p1.refused(offer.clone(), "set_over").await;
        p1.accepted(json!({"type": "ready", "match": m.id})).await;
        p2.accepted(json!({"type": "ready", "match": m.id})).await;
        spectator.refused(offer.clone(), "forbidden").await;

        p1.accepted(offer.clone()).await;
        let offered = p2.event("draw_offered").await;
        assert_eq!(offered["event"]["seat"], "p1", "{offered}");
        assert_eq!(server.match_state(&m.id)["draw_offer"], "p1");
        p1.refused(offer.clone(), "bad_request").await;
        // Declined: one offer per move, so p1 waits for the next move to offer again.
        p2.accepted(json!({"type": "decline_draw", "match": m.id}))
            .await;
        p1.event("draw_declined").await;
        assert!(server.match_state(&m.id).get("draw_offer").is_none());
        p1.refused(offer.clone(), "bad_request").await;
        p1.refused(
            json!({"type": "decline_draw", "match": m.id}),
            "bad_request",
        )
        .await;
        p1.accepted(json!({"type": "move", "match": m.id, "move": first}))
            .await;
        p2.accepted(offer.clone()).await;
        // The other seat's offer accepts it.
        p1.accepted(offer.clone()).await;
        let ended = spectator.event("set_ended").await;
        assert_eq!(ended["event"]["reason"], "agreement", "{ended}");
        assert_eq!(ended["event"]["winner"], Value::Null);
        let round = spectator.event("round_ended").await;
        assert_eq!(round["event"]["winner"], "draw", "{round}");
        let record = server.get(&format!("/api/matches/{}/record", m.id)).1;
        assert!(record.contains("draw offered by p1"), "{record}");
    }
    // Pentago sets end on the board.
    let (mut p1, mut p2, m) = seated_pair(&server, json!({"game": "pentago"})).await;
    p1.accepted(json!({"type": "ready", "match": m.id})).await;
    p2.accepted(json!({"type": "ready", "match": m.id})).await;
    let refusal = p1
        .refused(json!({"type": "offer_draw", "match": m.id}), "bad_request")
        .await;
    assert!(
        refusal["message"].as_str().unwrap().contains("Pente"),
        "{refusal}"
    );
}

#[tokio::test]
async fn a_finished_match_keeps_its_chat_until_its_room_retires_then_shows_it() {
    let server = Server::start_with(&["--retire-after", "1"]);
    let (_, _, m) = seated_pair(&server, json!({"game": "pente", "sets": 1})).await;
    let features = ["chat"];
    let mut p1 = Client::connect_with(&server, "p1", None, &features).await;
    let mut p2 = Client::connect_with(&server, "p2", None, &features).await;
    p1.accepted(json!({"type": "join", "match": m.id, "seat_token": m.p1}))
        .await;
    p2.accepted(json!({"type": "join", "match": m.id, "seat_token": m.p2}))
        .await;
    for p in [&mut p1, &mut p2] {
        p.accepted(json!({"type": "ready", "match": m.id})).await;
    }
    p1.accepted(json!({"type": "resign", "match": m.id})).await;
    p2.event("round_ended").await;
    // After the round, in the grace: "good game".
    let reply = say(&mut p2, &m.id, "iyi oyundu").await;
    assert_eq!(reply["type"], "ack", "{reply}");
    // Once the room has retired the chat is closed, and nothing is brought back for it.
    tokio::time::sleep(std::time::Duration::from_millis(2_500)).await;
    let refusal = refused_to_say(&mut p2, &m.id, "hâlâ burada mısın?", "forbidden").await;
    assert!(
        refusal["message"].as_str().unwrap().contains("closed"),
        "{refusal}"
    );
    // Who comes to the finished match reads what was said.
    let mut later = Client::connect_with(&server, "later", None, &features).await;
    later
        .accepted(json!({"type": "join", "match": m.id, "seat_token": m.p1}))
        .await;
    let history = later.find(|f| f["type"] == "chat_history").await;
    assert_eq!(
        history["enabled"], false,
        "read, no longer written: {history}"
    );
    let said = texts(&history["lines"]);
    assert_eq!(said, [&json!("iyi oyundu")], "{history}");
}
