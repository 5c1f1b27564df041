//! Ratings: a rated round between two player accounts changes both Glicko-2 ratings once, as
//! hakem-round computes them; unrated matches and bots change nothing; ratings and the rated
//! rounds survive a restart and are shown on the player's page.

use std::time::{Duration, Instant};

use hakem_blackbox::{Client, Database, Server};
use hakem_round::rating::{Game, Rating, START};
use serde_json::{json, Value};

const ORGANIZER: &str = "organizer-secret";

/// The player's page, once its rated rounds number `rounds` (waiting a little: rating follows
/// the round's end).
fn profile_after(server: &Server, name: &str, rounds: usize) -> Value {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let profile = server.get_json(&format!("/api/players/{name}"));
        let seen = profile["history"].as_array().map_or(0, Vec::len);
        if seen >= rounds || Instant::now() > deadline {
            assert_eq!(seen, rounds, "{profile}");
            return profile;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn rating_of(profile: &Value, pool: &str) -> Rating {
    let r = &profile["ratings"][pool];
    Rating {
        rating: r["rating"].as_f64().unwrap_or_else(|| panic!("{profile}")),
        deviation: r["deviation"].as_f64().unwrap(),
        volatility: r["volatility"].as_f64().unwrap(),
        rounds: r["rounds"].as_u64().unwrap() as u32,
    }
}

fn after(player: Rating, opponent: Rating, score: f64) -> Rating {
    player.after(&[Game { opponent, score }])
}

fn close(a: Rating, b: Rating) -> bool {
    (a.rating - b.rating).abs() < 1e-9
        && (a.deviation - b.deviation).abs() < 1e-9
        && (a.volatility - b.volatility).abs() < 1e-12
        && a.rounds == b.rounds
}

/// A match between the two accounts: one move, then its arbiter ends the round with `winner`.
async fn play(organizer: &mut Client, server: &Server, fields: Value, winner: &str) -> String {
    let mut create = json!({"type": "create_match", "game": "pente", "sets": 1,
        "accounts": {"p1": "ayse", "p2": "bora"}});
    for (key, value) in fields.as_object().unwrap() {
        create[key] = value.clone();
    }
    let created = organizer.request(create).await;
    assert_eq!(created["type"], "match_created", "{created}");
    let id = created["match"].as_str().unwrap().to_string();
    let first_move = if created_game(&fields) == "pente" {
        "K10"
    } else {
        "a1sw"
    };
    one_move_then_decide(
        server,
        &id,
        &created["seat_tokens"],
        &created["arbiter_token"],
        first_move,
        winner,
    )
    .await;
    id
}

fn created_game(fields: &Value) -> &str {
    fields["game"].as_str().unwrap_or("pente")
}

/// Both seats join and are ready, p1 makes `first_move`, then the arbiter decides the round
/// (with `first_move` empty, no move: a no-show).
async fn one_move_then_decide(
    server: &Server,
    id: &str,
    seat_tokens: &Value,
    arbiter_token: &Value,
    first_move: &str,
    winner: &str,
) {
    let mut seats = Vec::new();
    for seat in ["p1", "p2"] {
        let mut player = Client::connect(server, seat, None).await;
        player
            .accepted(json!({"type": "join", "match": id, "seat_token": seat_tokens[seat]}))
            .await;
        player.accepted(json!({"type": "ready", "match": id})).await;
        seats.push(player);
    }
    if !first_move.is_empty() {
        seats[0]
            .accepted(json!({"type": "move", "match": id, "move": first_move, "press": true}))
            .await;
    }
    let mut arbiter = Client::connect(server, "arbiter", None).await;
    arbiter
        .accepted(json!({"type": "join", "match": id, "arbiter_token": arbiter_token}))
        .await;
    arbiter
        .accepted(json!({"type": "declare", "match": id, "scope": "round", "winner": winner, "reason": "test"}))
        .await;
}

#[tokio::test]
async fn rated_rounds_change_both_ratings_once_and_survive_a_restart() {
    for database in Database::all() {
        rated_rounds_on(database).await;
    }
}

async fn rated_rounds_on(database: Database) {
    let mut server = Server::start_on(database, &[]);
    let mut organizer = Client::connect(&server, "organizer", Some(ORGANIZER)).await;
    let mut ayse_token = String::new();
    for (name, kind) in [("ayse", "player"), ("bora", "player"), ("robo", "bot")] {
        let created = organizer
            .request(json!({"type": "create_account", "name": name, "kind": kind}))
            .await;
        assert_eq!(created["type"], "account_created");
        if name == "ayse" {
            ayse_token = created["token"].as_str().unwrap().to_string();
        }
    }

    // Only two different player accounts, without the house bot, play rated.
    for accounts in [
        json!({"p1": "ayse", "p2": "robo"}),
        json!({"p1": "ayse", "p2": "ayse"}),
        json!({"p1": "ayse"}),
        json!({"p1": "ayse", "p2": "nobody"}),
    ] {
        organizer
            .refused(
                json!({"type": "create_match", "game": "pente", "rated": true, "accounts": accounts}),
                "bad_request",
            )
            .await;
    }
    organizer
        .refused(
            json!({"type": "create_match", "game": "pente", "rated": true,
                "accounts": {"p1": "ayse"}, "house_bot": {"seat": "p2"}}),
            "bad_request",
        )
        .await;

    // Nobody but the organizer puts two accounts' ratings at stake by creating a match.
    let mut guest = Client::connect(&server, "guest", None).await;
    guest
        .refused(
            json!({"type": "create_match", "game": "pente", "rated": true,
                "accounts": {"p1": "ayse", "p2": "bora"}}),
            "forbidden",
        )
        .await;

    // A newcomer's page: no ratings yet.
    let fresh = server.get_json("/api/players/ayse");
    assert_eq!(fresh["ratings"], json!({}));
    assert_eq!(fresh["kind"], "player");
    assert_eq!(server.get("/api/players/nobody").0, 404);

    // Ayşe wins a rated round, then they draw one in Pentago; an unrated round between
    // them changes nothing.
    let first = play(&mut organizer, &server, json!({"rated": true}), "p1").await;
    let state = server.match_state(&first);
    assert_eq!(state["rated"], true, "{state}");
    let (a1, b1) = (after(START, START, 1.0), after(START, START, 0.0));
    let ayse = profile_after(&server, "ayse", 1);
    assert!(close(rating_of(&ayse, "pente"), a1), "{ayse}");
    assert!(close(
        rating_of(&profile_after(&server, "bora", 1), "pente"),
        b1
    ));
    assert_eq!(ayse["ratings"]["pente"]["provisional"], true);
    assert_eq!(ayse["history"][0]["match"], first.as_str());
    // The same page over the WebSocket (what `hakem player` shows).
    let page = guest
        .request(json!({"type": "get_player", "name": "ayse"}))
        .await;
    assert_eq!(page["type"], "player", "{page}");
    for field in ["name", "kind", "ratings", "history"] {
        assert_eq!(page[field], ayse[field], "{field}: {page}");
    }
    guest
        .refused(
            json!({"type": "get_player", "name": "nobody"}),
            "unknown_account",
        )
        .await;
    assert_eq!(ayse["history"][0]["score"], 1.0);

    // Decided before its first move (a no-show): rated nobody.
    let created = organizer
        .request(
            json!({"type": "create_match", "game": "pente", "sets": 1, "rated": true,
            "accounts": {"p1": "ayse", "p2": "bora"}}),
        )
        .await;
    let no_show = created["match"].as_str().unwrap().to_string();
    one_move_then_decide(
        &server,
        &no_show,
        &created["seat_tokens"],
        &created["arbiter_token"],
        "",
        "p2",
    )
    .await;
    let unrated = play(&mut organizer, &server, json!({}), "p2").await;
    assert!(server.match_state(&unrated).get("rated").is_none());
    play(&mut organizer, &server, json!({"rated": true}), "p2").await;
    let (a2, b2) = (after(a1, b1, 0.0), after(b1, a1, 1.0));
    let ayse = profile_after(&server, "ayse", 2);
    assert!(close(rating_of(&ayse, "pente"), a2), "{ayse}");
    assert!(close(
        rating_of(&profile_after(&server, "bora", 2), "pente"),
        b2
    ));
    play(
        &mut organizer,
        &server,
        json!({"rated": true, "game": "pentago", "variant": "classic"}),
        "draw",
    )
    .await;
    let ayse = profile_after(&server, "ayse", 3);
    let (classic_a, _) = (after(START, START, 0.5), ());
    assert!(
        close(rating_of(&ayse, "pentago-classic"), classic_a),
        "{ayse}"
    );
    assert!(
        close(rating_of(&ayse, "pente"), a2),
        "pools are apart: {ayse}"
    );
    // The bot played no rated round.
    assert_eq!(server.get_json("/api/players/robo")["ratings"], json!({}));

    server.restart();
    let ayse = profile_after(&server, "ayse", 3);
    assert!(close(rating_of(&ayse, "pente"), a2), "{ayse}");
    assert!(close(rating_of(&ayse, "pentago-classic"), classic_a));
    // Newest first.
    assert_eq!(ayse["history"][2]["match"], first.as_str());

    // Every match of hers, rated or not, played or not, newest first, page by page.
    let mut listed = Vec::new();
    let mut path = "/api/players/ayse/matches?limit=2".to_string();
    loop {
        let page = server.get_json(&path);
        let lines = page["matches"].as_array().unwrap();
        assert!(lines.len() <= 2, "{page}");
        listed.extend(
            lines
                .iter()
                .map(|m| m["match"].as_str().unwrap().to_string()),
        );
        match page["next"].as_str() {
            Some(next) => path = format!("/api/players/ayse/matches?limit=2&before={next}"),
            None => break,
        }
    }
    assert_eq!(listed.len(), 5, "{listed:?}");
    assert_eq!(listed.last(), Some(&first), "the first match is the oldest");
    // The same list over the WebSocket (what `hakem player` shows).
    let mut guest = Client::connect(&server, "guest", None).await;
    let page = guest
        .request(json!({"type": "list_matches", "player": "ayse", "limit": 500}))
        .await;
    let over_ws: Vec<String> = page["matches"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["match"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(over_ws, listed, "{page}");
    guest
        .refused(
            json!({"type": "list_matches", "player": "ayse", "status": "finished"}),
            "bad_request",
        )
        .await;
    assert!(listed.contains(&no_show) && listed.contains(&unrated));
    assert_eq!(server.get("/api/players/nobody/matches").0, 404);
    assert_eq!(server.get("/api/players/ayse/matches?limit=many").0, 400);
    assert_eq!(
        server.get("/api/players/ayse/matches?before=nonsense").0,
        400
    );

    // Her data, for her: the account, every rating and rated round, every match.
    for refused in [
        vec![],
        vec!["Authorization: Bearer 0123456789abcdef0123456789abcdef"],
    ] {
        assert_eq!(server.get_with("/api/account/export", &refused).0, 401);
    }
    let bearer = format!("Authorization: Bearer {ayse_token}");
    let (status, head, body) = server.get_with("/api/account/export", &[&bearer]);
    assert_eq!(status, 200, "{body}");
    assert!(head.contains("filename*=UTF-8''hakem-ayse.json"), "{head}");
    let lower = format!("Authorization: bearer {ayse_token}");
    assert_eq!(
        server.get_with("/api/account/export", &[&lower]).0,
        200,
        "the scheme in any case"
    );
    let data: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(
        data["account"],
        json!({"name": "ayse", "kind": "player", "status": "active"})
    );
    assert_eq!(data["rated_rounds"].as_array().unwrap().len(), 3);
    assert_eq!(data["matches"].as_array().unwrap().len(), 5);
    assert!(close(rating_of(&data, "pente"), a2), "{data}");
    assert!(!body.contains(&ayse_token), "no token in the export");
}

#[tokio::test]
async fn a_rated_tournament_rates_its_boards_of_two_players_and_never_a_bot() {
    let server = Server::start();
    let mut organizer = Client::connect(&server, "organizer", Some(ORGANIZER)).await;
    let robo = organizer
        .request(json!({"type": "create_account", "name": "robo", "kind": "bot"}))
        .await;
    let mut tokens: std::collections::HashMap<String, String> = std::collections::HashMap::new();
    tokens.insert("robo".into(), robo["token"].as_str().unwrap().to_string());
    let created = organizer
        .request(
            json!({"type": "create_tournament", "name": "Rated", "game": "pente",
            "sets": 1, "rounds": 1, "rated": true, "colour_lot": "p1",
            "players": [{"surname": "Ak"}, {"surname": "Bal"}, {"surname": "Can"},
                        {"surname": "Robo", "account": "robo"}]}),
        )
        .await;
    assert_eq!(created["type"], "tournament_created", "{created}");
    let id = created["tournament"].as_str().unwrap().to_string();
    for player in created["players"].as_array().unwrap() {
        if let Some(token) = player["token"].as_str() {
            tokens.insert(
                player["account"].as_str().unwrap().to_string(),
                token.to_string(),
            );
        }
    }
    let view = organizer
        .request(json!({"type": "start_tournament", "tournament": id}))
        .await;
    assert_eq!(view["rated"], true, "{view}");
    let boards = view["pairings"][0]["boards"].as_array().unwrap().clone();
    assert_eq!(boards.len(), 2);
    let arbiter_token = created["arbiter_token"].clone();
    let players = view["players"].as_array().unwrap().clone();
    let account_of = |n: &Value| -> String {
        players[n.as_u64().unwrap() as usize - 1]["account"]
            .as_str()
            .unwrap()
            .to_string()
    };
    let mut rated_boards = 0;
    for board in &boards {
        let id = board["match"].as_str().unwrap();
        let (p1, p2) = (account_of(&board["p1"]), account_of(&board["p2"]));
        // Each player is told their seat, as at a real event.
        let mut seat_tokens = json!({});
        for (seat, account) in [("p1", &p1), ("p2", &p2)] {
            let mut player = Client::connect(&server, account, Some(&tokens[account])).await;
            let notice = player
                .find(|f| f["type"] == "your_match" && f["match"] == id)
                .await;
            seat_tokens[seat] = notice["seat_token"].clone();
        }
        one_move_then_decide(&server, id, &seat_tokens, &arbiter_token, "K10", "p1").await;
        let with_bot = p1 == "robo" || p2 == "robo";
        assert_eq!(
            server.match_state(id).get("rated").is_some(),
            !with_bot,
            "a board with a bot is played unrated"
        );
        if !with_bot {
            rated_boards += 1;
            let winner = profile_after(&server, &p1, 1);
            assert!(close(rating_of(&winner, "pente"), after(START, START, 1.0)));
        }
    }
    assert_eq!(rated_boards, 1);
    assert_eq!(server.get_json("/api/players/robo")["ratings"], json!({}));
}
