//! Casual play: an account posts a seek, watchers see it come and go, another account accepts it
//! and both are seated in the match it becomes; seeks are bounded, checked, and go with their
//! poster. After a round, both players' offers make a rematch with the seats swapped.

use hakem_blackbox::{seated_pair, Client, Server};
use serde_json::{json, Value};

const ORGANIZER: &str = "organizer-secret";

/// An account's token, made by the organizer.
async fn account(organizer: &mut Client, name: &str, kind: &str) -> String {
    let created = organizer
        .request(json!({"type": "create_account", "name": name, "kind": kind}))
        .await;
    created["token"].as_str().unwrap().to_string()
}

async fn seek(client: &mut Client, fields: Value) -> Value {
    let mut message = json!({"type": "seek"});
    for (key, value) in fields.as_object().unwrap() {
        message[key] = value.clone();
    }
    client.request(message).await
}

#[tokio::test]
async fn a_seek_is_seen_accepted_and_becomes_a_match_with_both_seated() {
    let server = Server::start();
    let mut organizer = Client::connect(&server, "organizer", Some(ORGANIZER)).await;
    let ayse_token = account(&mut organizer, "ayse", "player").await;
    let bora_token = account(&mut organizer, "bora", "player").await;
    let robo_token = account(&mut organizer, "robo", "bot").await;
    let mut ayse = Client::connect(&server, "ayse", Some(&ayse_token)).await;
    let mut bora = Client::connect(&server, "bora", Some(&bora_token)).await;
    let mut robo = Client::connect(&server, "robo", Some(&robo_token)).await;
    let mut watcher = Client::connect(&server, "watcher", None).await;

    let lobby = watcher.request(json!({"type": "watch_lobby"})).await;
    assert_eq!(
        lobby,
        json!({"type": "lobby", "re": lobby["re"], "seeks": []})
    );
    // A guest watches but does not seek.
    watcher
        .refused(json!({"type": "seek", "game": "pente"}), "forbidden")
        .await;

    // Malformed and unknown offers change nothing.
    for bad in [
        json!({"game": "chess"}),
        json!({"game": "pentago", "variant": "nine"}),
        json!({"game": "pentago", "sets": 0}),
        json!({"game": "pentago", "clock": {"initial_ms": 0, "increment_ms": 0}}),
    ] {
        let reply = seek(&mut ayse, bad.clone()).await;
        assert_eq!(reply["code"], "bad_request", "{bad} -> {reply}");
    }
    let reply = seek(&mut robo, json!({"game": "pente", "rated": true})).await;
    assert_eq!(reply["code"], "bad_request", "bots are not rated: {reply}");

    let posted = seek(
        &mut ayse,
        json!({"game": "pentago", "sets": 3, "clock": {"initial_ms": 300000, "increment_ms": 0}, "rated": true}),
    )
    .await;
    assert_eq!(posted["type"], "seek_posted", "{posted}");
    let offer = posted["seek"].clone();
    assert_eq!(offer["account"], "ayse");
    assert_eq!(offer["variant"], "tr");
    assert_eq!(offer["rated"], true);
    let added = watcher.find(|f| f["type"] == "seek_added").await;
    assert_eq!(added["seek"], offer);

    // Three open seeks an account at most; a cancelled one is gone for everyone.
    let second = seek(&mut ayse, json!({"game": "pente"})).await["seek"]["seek"].clone();
    seek(&mut ayse, json!({"game": "quoridor"})).await;
    let fourth = seek(&mut ayse, json!({"game": "pente"})).await;
    assert_eq!(fourth["code"], "rate_limited", "{fourth}");
    bora.refused(json!({"type": "cancel_seek", "seek": second}), "forbidden")
        .await;
    ayse.accepted(json!({"type": "cancel_seek", "seek": second}))
        .await;
    let removed = watcher
        .find(|f| f["type"] == "seek_removed" && f["seek"] == second)
        .await;
    assert!(removed.get("match").is_none(), "{removed}");
    let now = watcher.request(json!({"type": "watch_lobby"})).await;
    assert_eq!(now["seeks"].as_array().unwrap().len(), 2, "{now}");

    // Not one's own, and not a bot for a rated game.
    ayse.refused(
        json!({"type": "accept_seek", "seek": offer["seek"]}),
        "bad_request",
    )
    .await;
    robo.refused(
        json!({"type": "accept_seek", "seek": offer["seek"]}),
        "bad_request",
    )
    .await;

    let accepted = bora
        .accepted(json!({"type": "accept_seek", "seek": offer["seek"]}))
        .await;
    let match_id = accepted["match"].as_str().unwrap().to_string();
    let gone = watcher
        .find(|f| f["type"] == "seek_removed" && f["seek"] == offer["seek"])
        .await;
    assert_eq!(gone["match"], match_id.as_str());
    let ayse_seat = ayse
        .find(|f| f["type"] == "your_match" && f["match"] == match_id.as_str())
        .await;
    let bora_seat = bora
        .find(|f| f["type"] == "your_match" && f["match"] == match_id.as_str())
        .await;
    assert_ne!(ayse_seat["seat"], bora_seat["seat"], "one seat each");
    let state = server.match_state(&match_id);
    assert_eq!(state["rated"], true, "{state}");
    assert_eq!(state["clock"]["initial_ms"], 300000, "{state}");
    let names = [
        &state["players"]["p1"]["name"],
        &state["players"]["p2"]["name"],
    ];
    assert!(names.contains(&&json!("ayse")) && names.contains(&&json!("bora")));
    bora.refused(
        json!({"type": "accept_seek", "seek": offer["seek"]}),
        "bad_request",
    )
    .await;

    // A challenge: seen by its two accounts only, accepted by the one challenged only.
    let mut bora_lobby = Client::connect(&server, "bora's lobby", Some(&bora_token)).await;
    bora_lobby.request(json!({"type": "watch_lobby"})).await;
    let mut robo_lobby = Client::connect(&server, "robo's lobby", Some(&robo_token)).await;
    robo_lobby.request(json!({"type": "watch_lobby"})).await;
    for bad in [
        json!({"game": "pente", "to": "ayse"}),
        json!({"game": "pente", "to": "nobody"}),
    ] {
        let reply = seek(&mut ayse, bad.clone()).await;
        assert_eq!(reply["code"], "bad_request", "{bad} -> {reply}");
    }
    let challenge = seek(&mut ayse, json!({"game": "pente", "to": "bora"})).await["seek"].clone();
    assert_eq!(challenge["to"], "bora");
    let seen = bora_lobby.find(|f| f["type"] == "seek_added").await;
    assert_eq!(seen["seek"], challenge);
    robo.refused(
        json!({"type": "accept_seek", "seek": challenge["seek"]}),
        "bad_request",
    )
    .await;
    let robo_sees = robo_lobby.request(json!({"type": "watch_lobby"})).await;
    let guest_sees = watcher.request(json!({"type": "watch_lobby"})).await;
    for sees in [&robo_sees, &guest_sees] {
        assert!(
            !sees["seeks"]
                .as_array()
                .unwrap()
                .iter()
                .any(|s| s["seek"] == challenge["seek"]),
            "{sees}"
        );
    }
    let taken = bora
        .accepted(json!({"type": "accept_seek", "seek": challenge["seek"]}))
        .await;
    assert!(taken["match"].is_string());
    bora_lobby
        .find(|f| f["type"] == "seek_removed" && f["seek"] == challenge["seek"])
        .await;
    assert!(
        !watcher.buffered().any(|f| f["seek"] == challenge["seek"]),
        "the guest was told nothing of the challenge"
    );

    // The seeks go with their poster's last connection.
    let mut ayse_again = Client::connect(&server, "ayse again", Some(&ayse_token)).await;
    ayse.close().await;
    ayse_again.request(json!({"type": "ping"})).await;
    let still = watcher.request(json!({"type": "watch_lobby"})).await;
    assert_eq!(still["seeks"].as_array().unwrap().len(), 1, "{still}");
    ayse_again.close().await;
    watcher
        .find(|f| f["type"] == "seek_removed" && f["match"].is_null())
        .await;
    let empty = watcher.request(json!({"type": "watch_lobby"})).await;
    assert_eq!(empty["seeks"], json!([]), "{empty}");

    watcher.accepted(json!({"type": "unwatch_lobby"})).await;
    watcher
        .refused(json!({"type": "unwatch_lobby"}), "bad_request")
        .await;
}

#[tokio::test]
async fn both_players_offer_a_rematch_and_get_the_new_match_with_the_seats_swapped() {
    let server = Server::start();
    // Ayşe's client is a v1 client that asked for nothing; Bora's asked to hear of rematches.
    let (mut p1, mut v1_p2, m) = seated_pair(
        &server,
        json!({"game": "pente", "sets": 1, "players": {"p1": "Ayşe", "p2": "Bora"}}),
    )
    .await;
    let mut p2 = Client::connect_raw(&server, "p2 with rematch").await;
    p2.send(json!({"type": "hello", "protocol": 1, "features": ["rematch"]}))
        .await;
    assert_eq!(p2.next().await["features"], json!(["rematch"]));
    p2.accepted(json!({"type": "join", "match": m.id, "seat_token": m.p2}))
        .await;
    let offer = json!({"type": "offer_rematch", "match": m.id});
    p1.accepted(json!({"type": "ready", "match": m.id})).await;
    p2.accepted(json!({"type": "ready", "match": m.id})).await;
    p1.accepted(json!({"type": "move", "match": m.id, "move": "K10"}))
        .await;
    let early = p1.refused(offer.clone(), "bad_request").await;
    assert!(
        early["message"].as_str().unwrap().contains("not over"),
        "{early}"
    );
    let mut spectator = Client::connect(&server, "spectator", None).await;
    spectator
        .accepted(json!({"type": "watch", "match": m.id}))
        .await;
    spectator.refused(offer.clone(), "bad_request").await;
    p2.accepted(json!({"type": "resign", "match": m.id})).await;

    // The first offer is told to the other seat (to the client that asked to hear of it);
    // asking twice changes nothing.
    let first = p1.accepted(offer.clone()).await;
    assert_eq!(first["match"], m.id.as_str());
    let told = p2.find(|f| f["type"] == "rematch_offered").await;
    assert_eq!(told["seat"], "p1");
    p1.accepted(offer.clone()).await;
    v1_p2.request(json!({"type": "ping"})).await;
    assert!(
        v1_p2
            .buffered()
            .all(|f| !f["type"].as_str().unwrap().starts_with("rematch")),
        "a v1 client sees protocol v1 only"
    );

    // The second makes the match: the seats swap, each is given their new token.
    let made = p2.accepted(offer.clone()).await;
    let new_match = made["match"].as_str().unwrap().to_string();
    assert_ne!(new_match, m.id);
    let for_p1 = p1.find(|f| f["type"] == "rematch").await;
    let for_p2 = p2.find(|f| f["type"] == "rematch").await;
    assert_eq!(for_p1["new_match"], new_match.as_str());
    assert_eq!(
        (&for_p1["seat"], &for_p2["seat"]),
        (&json!("p2"), &json!("p1"))
    );
    assert_ne!(for_p1["seat_token"], for_p2["seat_token"]);
    let state = server.match_state(&new_match);
    assert_eq!(state["players"]["p1"]["name"], "Bora", "{state}");
    assert_eq!(state["players"]["p2"]["name"], "Ayşe");
    assert_eq!(state["sets"], json!([]));

    // The new tokens seat them; a late offer gets the same match again.
    let mut again = Client::connect(&server, "ayşe again", None).await;
    again
        .accepted(json!({"type": "join", "match": new_match, "seat_token": for_p1["seat_token"]}))
        .await;
    let late = p1.request(offer).await;
    assert_eq!(late["type"], "rematch", "{late}");
    assert_eq!(late["seat_token"], for_p1["seat_token"]);
}

#[tokio::test]
async fn the_terminal_posts_a_seek_and_another_terminal_accepts_it() {
    use std::process::{Command, Stdio};
    let server = Server::start();
    let url = server.ws_url();
    let mut organizer = Client::connect(&server, "organizer", Some(ORGANIZER)).await;
    let ayse = account(&mut organizer, "ayse", "player").await;
    let bora = account(&mut organizer, "bora", "player").await;
    let hakem = hakem_blackbox::binary("hakem");

    let seeker = Command::new(&hakem)
        .args(["lobby", "seek", "--server", &url, "--token", &ayse])
        .args(["--game", "pente", "--clock", "5", "--json"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run hakem lobby seek");
    let mut seek_line = String::new();
    for _ in 0..100 {
        let out = hakem_blackbox::hakem(&["lobby", "list", "--server", &url]);
        assert!(out.status.success());
        seek_line = String::from_utf8_lossy(&out.stdout).trim().to_string();
        if !seek_line.is_empty() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert!(
        seek_line.contains("  ayse  pente tournament  3 sets  5:00  casual"),
        "{seek_line:?}"
    );
    let id = seek_line.split_whitespace().next().unwrap().to_string();

    // Meanwhile Ayşe, from another connection, accepts Bora's seek: that match is not the one
    // her waiting terminal asked for.
    let mut ayse_web = Client::connect(&server, "ayse's page", Some(&ayse)).await;
    let mut bora_web = Client::connect(&server, "bora's page", Some(&bora)).await;
    let other = seek(&mut bora_web, json!({"game": "quoridor"})).await["seek"]["seek"].clone();
    let elsewhere = ayse_web
        .accepted(json!({"type": "accept_seek", "seek": other}))
        .await;

    let refused = hakem_blackbox::hakem(&[
        "lobby",
        "accept",
        "--server",
        &url,
        "--token",
        &bora,
        "nosuchseek",
    ]);
    assert_eq!(refused.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&refused.stderr).contains("no open seek"));

    let accepted = hakem_blackbox::hakem(&[
        "lobby", "accept", "--server", &url, "--token", &bora, &id, "--json",
    ]);
    assert!(
        accepted.status.success(),
        "{}",
        String::from_utf8_lossy(&accepted.stderr)
    );
    let taker: Value = serde_json::from_slice(&accepted.stdout).unwrap();
    let posted = seeker.wait_with_output().unwrap();
    assert!(
        posted.status.success(),
        "{}",
        String::from_utf8_lossy(&posted.stderr)
    );
    let poster: Value = serde_json::from_slice(&posted.stdout).unwrap();
    assert_eq!(poster["match"], taker["match"]);
    assert_ne!(poster["match"], elsewhere["match"]);
    assert_ne!(poster["seat"], taker["seat"]);
    // The tokens seat them.
    let mut seat = Client::connect(&server, "poster", None).await;
    seat.accepted(
        json!({"type": "join", "match": poster["match"], "seat_token": poster["seat_token"]}),
    )
    .await;
}
