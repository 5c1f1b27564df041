//! Swiss tournaments on a real server: nine bots play five rounds from creation to the final
//! standings (paired by the arbiter from the terminal, re-checked from the exported TRF); byes,
//! withdrawals, late entries and forfeits; automatic pairing; a restart in the middle; and
//! every refusal.

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

use hakem_blackbox::{binary, Client, Proc, Server};
use serde_json::{json, Value};

const ORGANIZER: &str = "organizer-secret";

fn hakem(args: &[&str]) -> (i32, String, String) {
    let out = hakem_blackbox::hakem(args);
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A file in the temporary directory, unique to this test process.
fn temp_file(name: &str, text: &str) -> PathBuf {
    let path = std::env::temp_dir().join(format!("hakem-{}-{name}", std::process::id()));
    std::fs::write(&path, text).expect("write a temporary file");
    path
}

fn view(server: &Server, id: &str) -> Value {
    server.get_json(&format!("/api/tournaments/{id}"))
}

/// Polls the tournament until `done` holds.
fn wait_for(
    server: &Server,
    id: &str,
    what: &str,
    patience: Duration,
    done: impl Fn(&Value) -> bool,
) -> Value {
    let deadline = Instant::now() + patience;
    loop {
        let v = view(server, id);
        if done(&v) {
            return v;
        }
        assert!(
            Instant::now() < deadline,
            "{what}: not within {patience:?}: {v}"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

fn round_over(v: &Value) -> bool {
    v["completed_rounds"] == v["current_round"]
}

/// Every player once per round (on a board or with a bye), nobody met twice over the board (a
/// forfeited game is not a meeting: FIDE lets those two be paired again), at most one
/// pairing-allocated bye each.
fn assert_swiss_invariants(v: &Value, players: usize) {
    let mut met = HashSet::new();
    let mut byes = HashMap::new();
    for round in v["pairings"].as_array().unwrap() {
        let mut seen = Vec::new();
        for board in round["boards"].as_array().unwrap() {
            let (a, b) = (board["p1"].as_u64().unwrap(), board["p2"].as_u64().unwrap());
            let forfeit = ["+-", "-+", "--"].contains(&board["result"].as_str().unwrap_or(""));
            if !forfeit {
                assert!(
                    met.insert((a.min(b), a.max(b))),
                    "{a} and {b} met twice: {round}"
                );
            }
            seen.extend([a, b]);
        }
        for bye in round["byes"].as_array().unwrap() {
            let player = bye["player"].as_u64().unwrap();
            seen.push(player);
            if bye["kind"] == "pairing" {
                *byes.entry(player).or_insert(0) += 1;
            }
        }
        seen.sort_unstable();
        let all: Vec<u64> = (1..=players as u64).collect();
        assert_eq!(seen, all, "round {}: {round}", round["round"]);
    }
    assert!(byes.values().all(|&n| n == 1), "a second bye: {byes:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nine_bots_play_a_five_round_tournament_to_the_final_standings() {
    let server = Server::start();
    let url = server.ws_url();
    // In file order; the ranking must put them in Turkish alphabetical order. The list is as a
    // spreadsheet in a Turkish locale exports it: a BOM, `;` between fields, CRLF.
    let csv = temp_file(
        "players.csv",
        "\u{feff}Soyadı;Adı\r\nÖztürk;Oral\r\nŞahin;Selin\r\nIşık;Irmak\r\nİnce;İlker\r\nCengiz;Cem\r\nÇelik;Çağla\r\nOral;Ozan\r\nUysal;Umut\r\nÜnal;Ümit\r\n",
    );
    let (code, out, err) = hakem(&[
        "tournament",
        "create",
        "--server",
        &url,
        "--token",
        ORGANIZER,
        "--name",
        "Akıl ve Zekâ Oyunları",
        "--rounds",
        "5",
        "--clock",
        "1:00",
        "--players",
        csv.to_str().unwrap(),
        "--colour-lot",
        "p1",
        "--json",
    ]);
    assert_eq!(code, 0, "{out}{err}");
    let created: Value = serde_json::from_str(out.trim()).expect("one JSON line");
    let id = created["tournament"].as_str().unwrap().to_string();
    let arbiter = created["arbiter_token"].as_str().unwrap().to_string();
    let players = created["players"].as_array().unwrap();
    assert_eq!(players.len(), 9);
    let ranked: Vec<&str> = players
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        ranked,
        [
            "Cengiz Cem",
            "Çelik Çağla",
            "Işık Irmak",
            "İnce İlker",
            "Oral Ozan",
            "Öztürk Oral",
            "Şahin Selin",
            "Uysal Umut",
            "Ünal Ümit"
        ]
    );
    assert_eq!(view(&server, &id)["status"], "registration");

    let bots: Vec<Proc> = players
        .iter()
        .map(|p| {
            let token = p["token"].as_str().expect("a token for each new account");
            let mut command = Command::new(binary("hakem"));
            command.args([
                "bot", "--listen", "--server", &url, "--token", token, "--level", "1",
            ]);
            Proc::spawn(p["name"].as_str().unwrap(), command)
        })
        .collect();

    let (code, out, err) = hakem(&[
        "tournament",
        "start",
        "--server",
        &url,
        "--tournament",
        &id,
        "--token",
        &arbiter,
    ]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("round 1"), "{out}");
    for round in 1..=5u64 {
        let v = wait_for(
            &server,
            &id,
            &format!("round {round}"),
            Duration::from_secs(240),
            round_over,
        );
        assert_eq!(v["current_round"], round);
        if round < 5 {
            // The next round cannot be paired twice; the arbiter pairs it from the terminal.
            let (code, out, err) = hakem(&[
                "tournament",
                "pair-next",
                "--server",
                &url,
                "--tournament",
                &id,
                "--token",
                &arbiter,
            ]);
            assert_eq!(code, 0, "{out}{err}");
            assert!(out.contains(&format!("round {}", round + 1)), "{out}");
        }
    }
    let v = view(&server, &id);
    assert_eq!(v["status"], "finished", "{v}");
    assert_swiss_invariants(&v, 9);

    // Every board's result is its match's result.
    let mut total = 0.0;
    for round in v["pairings"].as_array().unwrap() {
        for board in round["boards"].as_array().unwrap() {
            let state = server.match_state(board["match"].as_str().unwrap());
            assert_eq!(state["status"], "finished");
            assert_eq!(
                state["tournament"],
                id.as_str(),
                "a match names its tournament"
            );
            let expected = match state["round"]["winner"].as_str().unwrap() {
                "p1" => "1-0",
                "p2" => "0-1",
                _ => "1/2-1/2",
            };
            assert_eq!(board["result"], expected, "{board}");
            let names = [
                &state["players"]["p1"]["name"],
                &state["players"]["p2"]["name"],
            ];
            let want = |n: &Value| &v["players"][n.as_u64().unwrap() as usize - 1]["name"];
            assert_eq!(names, [want(&board["p1"]), want(&board["p2"])]);
        }
    }
    for s in v["standings"].as_array().unwrap() {
        total += s["points"].as_f64().unwrap();
    }
    // Four games and one pairing-allocated bye (1 point) a round.
    assert_eq!(total, 25.0);

    // The TRF export re-pairs to the same rounds, and its standings are the server's.
    let (status, trf) = server.get(&format!("/api/tournaments/{id}/trf"));
    assert_eq!(status, 200);
    let (code, cli_trf, err) = hakem(&["tournament", "trf", "--server", &url, "--tournament", &id]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(cli_trf, trf);
    assert!(trf.contains("XXR 5") && trf.contains("XXC white1"), "{trf}");
    let path = temp_file("final.trf", &trf);
    let path = path.to_str().unwrap();
    let (code, out, err) = hakem(&["tournament", "check", "--trf", path]);
    assert_eq!(code, 0, "{out}{err}\n{trf}");
    assert!(out.contains("all 5 rounds agree"), "{out}");
    let (code, offline, _) = hakem(&["tournament", "standings", "--trf", path, "--json"]);
    assert_eq!(code, 0);
    let (code, live, _) = hakem(&[
        "tournament",
        "standings",
        "--server",
        &url,
        "--tournament",
        &id,
        "--json",
    ]);
    assert_eq!(code, 0);
    assert_eq!(offline, live);
    for (line, s) in offline.lines().zip(v["standings"].as_array().unwrap()) {
        let line: Value = serde_json::from_str(line).unwrap();
        assert_eq!((&line["id"], &line["rank"]), (&s["id"], &s["rank"]));
        assert_eq!(line["points"].as_f64(), s["points"].as_f64());
        assert_eq!(
            line["tiebreaks"]["BH-C1"].as_f64(),
            s["tiebreaks"]["BH-C1"].as_f64()
        );
    }
    drop(bots);
}

async fn organizer(server: &Server) -> Client {
    Client::connect(server, "organizer", Some(ORGANIZER)).await
}

/// Ends a match at once by the arbiter's decision.
async fn decide(arbiter: &mut Client, match_id: &str, token: &str, winner: &str) {
    let joined = arbiter
        .request(json!({"type": "join", "match": match_id, "arbiter_token": token}))
        .await;
    assert_eq!(joined["type"], "ack", "{joined}");
    arbiter
        .accepted(json!({"type": "declare", "match": match_id, "scope": "round", "winner": winner, "reason": "test"}))
        .await;
}

/// A two-round Pentago tournament of four players, created by the organizer: its id and its
/// arbiter token.
async fn four_players(org: &mut Client, name: &str) -> (String, String) {
    let created = org
        .request(json!({
            "type": "create_tournament", "name": name, "game": "pentago", "rounds": 2,
            "players": players(&[("Aydın", "A"), ("Balcı", "B"), ("Cömert", "C"), ("Demir", "D")]),
        }))
        .await;
    assert_eq!(created["type"], "tournament_created", "{created}");
    let text = |key: &str| created[key].as_str().unwrap().to_string();
    (text("tournament"), text("arbiter_token"))
}

fn players(names: &[(&str, &str)]) -> Value {
    Value::Array(
        names
            .iter()
            .map(|(s, g)| json!({"surname": s, "given": g}))
            .collect(),
    )
}

fn boards(v: &Value, round: usize) -> Vec<Value> {
    v["pairings"][round - 1]["boards"]
        .as_array()
        .unwrap()
        .clone()
}

fn byes(v: &Value, round: usize) -> Vec<(u64, String)> {
    v["pairings"][round - 1]["byes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| {
            (
                b["player"].as_u64().unwrap(),
                b["kind"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[tokio::test]
async fn byes_withdrawals_late_entries_and_forfeits_survive_a_restart() {
    let mut server = Server::start();
    let mut org = organizer(&server).await;
    let created = org
        .request(json!({
            "type": "create_tournament", "name": "Kış Kupası", "game": "pente", "rounds": 3,
            "clock": null, "colour_lot": "p2",
            "players": players(&[("Aydın", "Ali"), ("Bulut", "Berk"), ("Can", "Cemre"),
                                 ("Demir", "Derya"), ("Erdem", "Eda"), ("Fidan", "Ferhat")]),
        }))
        .await;
    assert_eq!(created["type"], "tournament_created", "{created}");
    let id = created["tournament"].as_str().unwrap().to_string();
    let arb = created["arbiter_token"].as_str().unwrap().to_string();
    let token_of = |n: usize| {
        created["players"][n - 1]["token"]
            .as_str()
            .unwrap()
            .to_string()
    };

    // A player asks for a half-point bye in round 2 with their own account; not for another.
    let mut bulut = Client::connect(&server, "bulut", Some(&token_of(2))).await;
    let reply = bulut
        .request(json!({"type": "request_bye", "tournament": id, "player": 2, "round": 2}))
        .await;
    assert_eq!(reply["type"], "tournament", "{reply}");
    assert_eq!(reply["players"][1]["half_byes"], json!([2]));
    bulut
        .refused(
            json!({"type": "request_bye", "tournament": id, "player": 3, "round": 2}),
            "forbidden",
        )
        .await;
    bulut
        .refused(
            json!({"type": "request_bye", "tournament": id, "player": 2, "round": 3}),
            "bad_request",
        )
        .await;
    bulut
        .refused(
            json!({"type": "request_bye", "tournament": id, "player": 2, "round": 9}),
            "bad_request",
        )
        .await;
    org.refused(
        json!({"type": "pair_next", "tournament": id}),
        "bad_request",
    )
    .await;

    // The start pairs round 1; each connected player is told of their match.
    let started = org
        .request(json!({"type": "start_tournament", "tournament": id, "arbiter_token": arb}))
        .await;
    assert_eq!(started["type"], "tournament", "{started}");
    assert_eq!(started["colour_lot"], json!({"seat": "p2", "drawn": false}));
    let round1 = boards(&started, 1);
    assert_eq!(round1.len(), 3);
    let notice = bulut.find(|f| f["type"] == "your_match").await;
    let board = round1
        .iter()
        .find(|b| b["p1"] == 2 || b["p2"] == 2)
        .unwrap();
    assert_eq!(notice["match"], board["match"]);
    assert_eq!(notice["seat"], if board["p1"] == 2 { "p1" } else { "p2" });
    assert_eq!(notice["game"], "pente");
    org.refused(
        json!({"type": "start_tournament", "tournament": id}),
        "bad_request",
    )
    .await;
    org.refused(
        json!({"type": "pair_next", "tournament": id}),
        "bad_request",
    )
    .await;
    org.refused(
        json!({"type": "add_players", "tournament": id, "players": [{"surname": ""}]}),
        "bad_request",
    )
    .await;

    // Player 1 does not show up: the arbiter forfeits them and their match ends by decree.
    let mut arbiter = Client::connect(&server, "arbiter", None).await;
    let forfeited = arbiter
        .request(json!({"type": "forfeit", "tournament": id, "player": 1, "arbiter_token": arb}))
        .await;
    assert_eq!(forfeited["type"], "tournament", "{forfeited}");
    let b1 = boards(&forfeited, 1)
        .into_iter()
        .find(|b| b["p1"] == 1 || b["p2"] == 1)
        .unwrap();
    assert_eq!(b1["result"], if b1["p1"] == 1 { "-+" } else { "+-" });
    let m1 = b1["match"].as_str().unwrap().to_string();
    let state = server.match_state(&m1);
    assert_eq!(state["status"], "finished");
    assert!(state["round"]["reason"] == "arbiter", "{state}");
    // That board is decided: its match has ended, and so a forfeit of the other player too is
    // refused (two no-shows are one forfeit with `double`).
    let opponent = if b1["p1"] == 1 { &b1["p2"] } else { &b1["p1"] };
    arbiter
        .refused(
            json!({"type": "forfeit", "tournament": id, "player": opponent, "arbiter_token": arb}),
            "bad_request",
        )
        .await;
    arbiter
        .refused(
            json!({"type": "forfeit", "tournament": id, "player": 3, "arbiter_token": "wrong"}),
            "forbidden",
        )
        .await;

    // A match that has begun is not a no-show: the arbiter decides it in the match (with the
    // tournament's arbiter token, which opens every match of the tournament).
    let others: Vec<Value> = boards(&forfeited, 1)
        .into_iter()
        .filter(|b| b["result"].is_null())
        .collect();
    assert_eq!(others.len(), 2);
    let begun = others[0]["match"].as_str().unwrap();
    let joined = arbiter
        .request(json!({"type": "join", "match": begun, "arbiter_token": arb}))
        .await;
    assert_eq!(joined["type"], "ack", "{joined}");
    arbiter
        .accepted(json!({"type": "start_set", "match": begun}))
        .await;
    let refused = arbiter
        .refused(
            json!({"type": "forfeit", "tournament": id, "player": others[0]["p1"], "arbiter_token": arb}),
            "bad_request",
        )
        .await;
    assert!(
        refused["message"].as_str().unwrap().contains("begun"),
        "{refused}"
    );
    arbiter
        .refused(
            json!({"type": "forfeit", "tournament": id, "player": others[1]["p1"], "round": 2, "arbiter_token": arb}),
            "bad_request",
        )
        .await;
    decide(&mut arbiter, begun, &arb, "p1").await;
    // Neither player of the last board came: a double forfeit, 0 for both.
    let double = arbiter
        .request(json!({"type": "forfeit", "tournament": id, "player": others[1]["p2"], "round": 1, "double": true, "arbiter_token": arb}))
        .await;
    assert_eq!(double["type"], "tournament", "{double}");
    let last = others[1]["match"].as_str().unwrap();
    let b = boards(&double, 1)
        .into_iter()
        .find(|b| b["match"] == last)
        .unwrap();
    assert_eq!(b["result"], "--");
    assert_eq!(server.match_state(last)["round"]["winner"], "draw");
    let v = wait_for(&server, &id, "round 1", Duration::from_secs(10), round_over);
    assert!(boards(&v, 1).iter().all(|b| !b["result"].is_null()));
    // The board decided in the match keeps the match's result.
    let kept = boards(&v, 1)
        .into_iter()
        .find(|b| b["match"] == begun)
        .unwrap();
    assert_eq!(kept["result"], "1-0");
    arbiter
        .refused(
            json!({"type": "forfeit", "tournament": id, "player": 3, "arbiter_token": arb}),
            "bad_request",
        )
        .await;

    // Player 6 withdraws; a late entrant comes in with a zero-point bye for round 1.
    let w = org
        .request(json!({"type": "withdraw", "tournament": id, "player": 6}))
        .await;
    assert_eq!(w["players"][5]["withdrawn_from"], 2, "{w}");
    org.refused(
        json!({"type": "withdraw", "tournament": id, "player": 6}),
        "bad_request",
    )
    .await;
    org.refused(
        json!({"type": "withdraw", "tournament": id, "player": 99}),
        "bad_request",
    )
    .await;
    let added = org
        .request(json!({"type": "add_players", "tournament": id, "players": [{"surname": "Gül", "given": "Gaye"}]}))
        .await;
    assert_eq!(added["type"], "players_added", "{added}");
    assert_eq!(added["players"][0]["id"], 7);
    assert_eq!(
        added["players"][0]["token"].as_str().map(str::len),
        Some(32)
    );

    // Round 2: player 2 has the half-point bye, 6 is out, five are paired with one PAB.
    let v = org
        .request(json!({"type": "pair_next", "tournament": id}))
        .await;
    assert_eq!(v["current_round"], 2, "{v}");
    assert_eq!(
        byes(&v, 1)
            .iter()
            .filter(|(p, k)| *p == 7 && k == "zero")
            .count(),
        1
    );
    let r2 = byes(&v, 2);
    assert!(r2.contains(&(2, "half".into())), "{r2:?}");
    assert!(r2.contains(&(6, "absent".into())), "{r2:?}");
    assert_eq!(
        r2.iter().filter(|(_, k)| k == "pairing").count(),
        1,
        "{r2:?}"
    );
    assert_eq!(boards(&v, 2).len(), 2);
    assert_swiss_invariants(&v, 7);

    // One match ends before the restart, the other after it.
    let r2 = boards(&v, 2);
    decide(&mut arbiter, r2[0]["match"].as_str().unwrap(), &arb, "draw").await;
    wait_for(
        &server,
        &id,
        "first board of round 2",
        Duration::from_secs(10),
        |v| !v["pairings"][1]["boards"][0]["result"].is_null(),
    );
    let before = view(&server, &id);
    server.restart();
    let after = view(&server, &id);
    assert_eq!(before, after);
    let mut arbiter = Client::connect(&server, "arbiter again", None).await;
    decide(&mut arbiter, r2[1]["match"].as_str().unwrap(), &arb, "p2").await;
    let v = wait_for(
        &server,
        &id,
        "round 2 after the restart",
        Duration::from_secs(10),
        round_over,
    );
    assert_eq!(boards(&v, 2)[0]["result"], "1/2-1/2");
    assert_eq!(boards(&v, 2)[1]["result"], "0-1");

    // The TRF holds the forfeit, the byes and the withdrawal, and re-pairs to the same rounds.
    let (_, trf) = server.get(&format!("/api/tournaments/{id}/trf"));
    let path = temp_file("lifecycle.trf", &trf);
    let (code, out, err) = hakem(&["tournament", "check", "--trf", path.to_str().unwrap()]);
    assert_eq!(code, 0, "{out}{err}\n{trf}");
    let line = |n: usize| {
        trf.lines()
            .find(|l| l.starts_with(&format!("001 {n:>4}")))
            .unwrap()
            .to_string()
    };
    assert!(line(2).ends_with("0000 - H"), "{trf}");
    assert!(line(6).ends_with("0000 - -"), "{trf}");
    assert!(line(7).contains("0000 - Z"), "{trf}");
    let forfeit = line(1);
    let words: Vec<&str> = forfeit.split_whitespace().collect();
    assert!(
        words
            .windows(2)
            .any(|w| matches!(w[0], "w" | "b") && w[1] == "-"),
        "{trf}"
    );
    // Standings count forfeits as 1/0, the half-point bye as 1/2, absences as 0.
    let mut expected: HashMap<u64, f64> = HashMap::new();
    for round in v["pairings"].as_array().unwrap() {
        for b in round["boards"].as_array().unwrap() {
            let (p1, p2) = match b["result"].as_str().unwrap() {
                "1-0" | "+-" => (1.0, 0.0),
                "0-1" | "-+" => (0.0, 1.0),
                "1/2-1/2" => (0.5, 0.5),
                _ => (0.0, 0.0),
            };
            *expected.entry(b["p1"].as_u64().unwrap()).or_default() += p1;
            *expected.entry(b["p2"].as_u64().unwrap()).or_default() += p2;
        }
        for bye in round["byes"].as_array().unwrap() {
            *expected.entry(bye["player"].as_u64().unwrap()).or_default() +=
                bye["points"].as_f64().unwrap();
        }
    }
    for s in v["standings"].as_array().unwrap() {
        let id = s["id"].as_u64().unwrap();
        assert_eq!(
            s["points"].as_f64(),
            Some(expected[&id]),
            "player {id}: {v}"
        );
    }
    assert!(expected[&2] >= 0.5);
}

#[tokio::test]
async fn automatic_pairing_runs_every_round_to_the_end() {
    let server = Server::start();
    let mut org = organizer(&server).await;
    let created = org
        .request(json!({
            "type": "create_tournament", "name": "Hızlı", "game": "quoridor", "rounds": 3,
            "auto_pair": true, "pairing": "dutch2017", "edition": "2024",
            "tiebreaks": ["WIN", "SB"],
            "players": players(&[("Kaya", "A"), ("Kaya", "B"), ("Kara", "C"), ("Koç", "D")]),
        }))
        .await;
    let id = created["tournament"].as_str().unwrap().to_string();
    let arb = created["arbiter_token"].as_str().unwrap().to_string();
    let started = org
        .request(json!({"type": "start_tournament", "tournament": id}))
        .await;
    assert_eq!(started["colour_lot"]["drawn"], true);
    // The arbiter follows it from the terminal: the server pushes every change.
    let mut watch = std::process::Command::new(binary("hakem"));
    watch.args([
        "tournament",
        "watch",
        "--server",
        &server.ws_url(),
        "--tournament",
        &id,
    ]);
    let mut watch = Proc::spawn("tournament watch", watch);
    watch.expect("watching Hızlı");
    let mut arbiter = Client::connect(&server, "arbiter", None).await;
    for round in 1..=3usize {
        let v = wait_for(
            &server,
            &id,
            "a paired round",
            Duration::from_secs(10),
            |v| v["current_round"] == round,
        );
        for b in boards(&v, round) {
            decide(&mut arbiter, b["match"].as_str().unwrap(), &arb, "p1").await;
        }
    }
    let v = wait_for(&server, &id, "the end", Duration::from_secs(10), |v| {
        v["status"] == "finished"
    });
    assert_eq!(v["completed_rounds"], 3);
    // Every result, every round complete and paired, and the end, as they happened.
    for round in 1..=3 {
        watch.expect(&format!("round {round} board 1: "));
        watch.expect(&format!("every result of round {round} is in"));
        if round < 3 {
            watch.expect(&format!("round {}", round + 1));
        }
    }
    watch.expect("the tournament has finished; first place: ");
    assert_eq!(watch.exit_code(), 0, "{}", watch.output());
    assert_eq!(v["pairing"], "dutch2017");
    assert_swiss_invariants(&v, 4);
    // Only the chosen tie-breaks are computed; their order is the tournament's `tiebreaks`.
    assert_eq!(v["tiebreaks"], json!(["WIN", "SB"]));
    let first = &v["standings"][0];
    let mut codes: Vec<&String> = first["tiebreaks"].as_object().unwrap().keys().collect();
    codes.sort();
    assert_eq!(codes, ["SB", "WIN"]);
    org.refused(
        json!({"type": "pair_next", "tournament": id}),
        "bad_request",
    )
    .await;
    org.refused(
        json!({"type": "request_bye", "tournament": id, "player": 1, "round": 3}),
        "bad_request",
    )
    .await;
    let list = server.get_json("/api/tournaments");
    assert_eq!(list["tournaments"][0]["tournament"], id.as_str());
    assert_eq!(list["tournaments"][0]["status"], "finished");
}

#[tokio::test]
async fn tournament_commands_are_refused_with_clear_errors() {
    let server = Server::start();
    let mut guest = Client::connect(&server, "guest", None).await;
    let create = json!({"type": "create_tournament", "name": "X", "game": "pentago", "rounds": 3});
    guest.refused(create.clone(), "forbidden").await;
    let mut org = organizer(&server).await;
    for (field, value) in [
        ("rounds", json!(0)),
        ("game", json!("chess")),
        ("variant", json!("giant")),
        ("name", json!("  ")),
        ("tiebreaks", json!(["BH", "ELO"])),
        ("bye_points", json!(2)),
        ("bye_points", json!(0.25)),
        ("players", json!([{"surname": "A", "account": "nobody"}])),
        ("players", json!([{"surname": ""}])),
    ] {
        let mut bad = create.clone();
        bad[field] = value;
        org.refused(bad, "bad_request").await;
    }
    org.refused(
        json!({"type": "create_tournament", "name": "X"}),
        "bad_request",
    )
    .await;
    org.refused(
        json!({"type": "forfeit", "tournament": "nope", "player": 1}),
        "unknown_tournament",
    )
    .await;
    org.refused(
        json!({"type": "get_tournament", "tournament": "nope"}),
        "unknown_tournament",
    )
    .await;
    org.refused(
        json!({"type": "withdraw", "tournament": "nope", "player": "one"}),
        "bad_request",
    )
    .await;
    // A player list too long for one frame is refused as a whole (the CLI splits it).
    let huge: Vec<Value> = (0..600)
        .map(|i| json!({"surname": format!("Oyuncu{i} Uzun Soyadı"), "given": "Adı"}))
        .collect();
    let mut too_many = create.clone();
    too_many["players"] = json!(huge);
    org.send(too_many).await;
    let error = org.find(|f| f["type"] == "error").await;
    assert_eq!(error["code"], "too_large", "{error}");
    let (status, body) = server.get("/api/tournaments/nope");
    assert_eq!(status, 404, "{body}");
    assert!(body.contains("unknown_tournament"), "{body}");
    assert_eq!(server.get("/api/tournaments/nope/trf").0, 404);

    // Nothing was created by the refused requests.
    assert_eq!(
        server.get_json("/api/tournaments")["tournaments"],
        json!([])
    );

    let one = org
        .request(
            json!({"type": "create_tournament", "name": "Solo", "game": "pentago", "rounds": 1,
                        "players": players(&[("Yalnız", "Yusuf")])}),
        )
        .await;
    let id = one["tournament"].as_str().unwrap();
    org.refused(
        json!({"type": "start_tournament", "tournament": id}),
        "bad_request",
    )
    .await;
    guest
        .refused(
            json!({"type": "start_tournament", "tournament": id}),
            "forbidden",
        )
        .await;
    guest
        .refused(
            json!({"type": "add_players", "tournament": id, "players": [{"surname": "Z"}]}),
            "forbidden",
        )
        .await;
    org.refused(
        json!({"type": "add_players", "tournament": id, "players": []}),
        "bad_request",
    )
    .await;
    // Before the start, a withdrawal strikes the player from the list.
    let v = org
        .request(json!({"type": "withdraw", "tournament": id, "player": 1}))
        .await;
    assert_eq!(v["players"], json!([]));
    // A guest may read the view.
    let v = guest
        .request(json!({"type": "get_tournament", "tournament": id}))
        .await;
    assert_eq!(v["status"], "registration");
}

#[tokio::test]
async fn a_long_player_list_goes_to_the_server_in_several_frames() {
    let server = Server::start();
    let url = server.ws_url();
    let mut csv = String::from("surname,given\n");
    for i in (0..400).rev() {
        csv.push_str(&format!("Oyuncu{i:03},Adı Soyadı Uzun İsim\n"));
    }
    let csv = temp_file("many.csv", &csv);
    let (code, out, err) = hakem(&[
        "tournament",
        "create",
        "--server",
        &url,
        "--token",
        ORGANIZER,
        "--name",
        "Büyük Açık",
        "--rounds",
        "9",
        "--players",
        csv.to_str().unwrap(),
        "--json",
    ]);
    assert_eq!(code, 0, "{out}{err}");
    let created: Value = serde_json::from_str(out.trim()).unwrap();
    let players = created["players"].as_array().unwrap();
    assert_eq!(players.len(), 400);
    // The numbers printed are the final ones: alphabetical, whatever frame a player came in.
    for (i, p) in players.iter().enumerate() {
        assert_eq!(p["id"], i + 1);
        assert_eq!(p["name"], format!("Oyuncu{i:03} Adı Soyadı Uzun İsim"));
    }
    let id = created["tournament"].as_str().unwrap();
    let (code, out, err) = hakem(&[
        "tournament",
        "start",
        "--server",
        &url,
        "--tournament",
        id,
        "--token",
        ORGANIZER,
    ]);
    assert_eq!(code, 0, "{out}{err}");
    let v = view(&server, id);
    assert_eq!(v["pairings"][0]["boards"].as_array().unwrap().len(), 200);
    let last = v["pairings"][0]["boards"][199]["match"].as_str().unwrap();
    assert_eq!(server.match_state(last)["status"], "waiting");
}

#[tokio::test]
async fn a_watched_tournament_comes_to_its_watchers_at_every_change() {
    let server = Server::start();
    let mut org = organizer(&server).await;
    let (id, arb) = four_players(&mut org, "Canlı").await;

    // Anyone may watch: the view now, as the reply, then a frame (without `re`) per change.
    let mut watcher = Client::connect(&server, "watcher", None).await;
    let now = watcher
        .request(json!({"type": "watch_tournament", "tournament": id}))
        .await;
    assert_eq!(now["type"], "tournament", "{now}");
    assert_eq!(now["status"], "registration");
    let pushed = |v: &Value| v["type"] == "tournament" && v.get("re").is_none();
    org.request(json!({"type": "start_tournament", "tournament": id}))
        .await;
    let started = watcher.find(pushed).await;
    assert_eq!(started["current_round"], 1);
    assert_eq!(started["status"], "running");

    // No preview while the round is being played, and none for a guest.
    let preview = json!({"type": "preview_pairing", "tournament": id, "arbiter_token": arb});
    org.refused(preview.clone(), "bad_request").await;
    watcher
        .refused(
            json!({"type": "preview_pairing", "tournament": id}),
            "forbidden",
        )
        .await;

    // A result that a room reports is pushed too: the watcher never asks again.
    let mut arbiter = Client::connect(&server, "arbiter", None).await;
    for b in boards(&started, 1) {
        decide(&mut arbiter, b["match"].as_str().unwrap(), &arb, "p1").await;
    }
    loop {
        let v = watcher.find(pushed).await;
        if v["completed_rounds"] == 1 {
            assert_eq!(v["standings"][0]["points"], 1);
            break;
        }
    }
    // The arbiter sees the next pairing before publishing it; publishing it changes nothing in
    // it, and the preview itself published nothing.
    let shown = org.request(preview).await;
    assert_eq!(shown["type"], "pairing_preview", "{shown}");
    assert_eq!(shown["round"], 2);
    assert_eq!(
        org.request(json!({"type": "get_tournament", "tournament": id}))
            .await["current_round"],
        1
    );
    assert!(!watcher.buffered().any(pushed), "a preview is not a change");
    let paired = org
        .request(json!({"type": "pair_next", "tournament": id}))
        .await;
    assert_eq!(paired["pairings"][1]["boards"], shown["boards"]);
    assert_eq!(paired["pairings"][1]["byes"], shown["byes"]);
    assert_eq!(watcher.find(pushed).await["current_round"], 2);

    // Unwatched: no more frames; watching what does not exist, or too much, is refused.
    watcher
        .accepted(json!({"type": "unwatch_tournament", "tournament": id}))
        .await;
    watcher
        .refused(
            json!({"type": "unwatch_tournament", "tournament": id}),
            "bad_request",
        )
        .await;
    org.request(json!({"type": "withdraw", "tournament": id, "player": 4}))
        .await;
    let later = watcher
        .request(json!({"type": "get_tournament", "tournament": id}))
        .await;
    assert!(later["players"][3]["withdrawn_from"].is_number(), "{later}");
    assert!(
        !watcher.buffered().any(pushed),
        "no frame after unwatch_tournament"
    );
    watcher
        .refused(
            json!({"type": "watch_tournament", "tournament": "nosuchthing"}),
            "unknown_tournament",
        )
        .await;
    for i in 0..17 {
        let other = org
            .request(json!({
                "type": "create_tournament", "name": format!("T{i}"), "game": "pente", "rounds": 1,
                "players": players(&[("Er", "A"), ("Ok", "B")]),
            }))
            .await;
        let message = json!({"type": "watch_tournament", "tournament": other["tournament"]});
        if i < 16 {
            assert_eq!(watcher.request(message).await["type"], "tournament");
        } else {
            watcher.refused(message, "bad_request").await;
        }
    }
}

#[tokio::test]
async fn standings_after_round_1_of_4_count_no_round_still_to_come() {
    // After round 1 of 4 a winner whose opponent scored 0 has Buchholz 0 and
    // Sonneborn-Berger 0: the three rounds to come are not byes, nor absences, nor draws.
    let server = Server::start();
    let mut org = organizer(&server).await;
    let created = org
        .request(json!({
            "type": "create_tournament", "name": "Dört Tur", "game": "pentago", "rounds": 4,
            "players": players(&[("Aydın", "A"), ("Balcı", "B"), ("Cömert", "C"), ("Demir", "D"), ("Ekinci", "E")]),
        }))
        .await;
    let id = created["tournament"].as_str().unwrap().to_string();
    let arb = created["arbiter_token"].as_str().unwrap().to_string();
    let started = org
        .request(json!({"type": "start_tournament", "tournament": id, "colour_lot": "p1"}))
        .await;
    let mut arbiter = Client::connect(&server, "arbiter", None).await;
    let round1 = boards(&started, 1);
    for b in &round1 {
        decide(&mut arbiter, b["match"].as_str().unwrap(), &arb, "p1").await;
    }
    let v = wait_for(
        &server,
        &id,
        "round 1 complete",
        Duration::from_secs(10),
        round_over,
    );
    let bye = byes(&v, 1);
    assert_eq!(bye.len(), 1, "five players: one bye");
    let row = |player: u64| {
        v["standings"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["id"] == player)
            .unwrap()
            .clone()
    };
    for b in &round1 {
        let (winner, loser) = (b["p1"].as_u64().unwrap(), b["p2"].as_u64().unwrap());
        assert_eq!(row(loser)["points"], 0);
        let w = row(winner);
        assert_eq!(w["points"], 1, "{w}");
        for code in ["BH-C1", "BH", "SB"] {
            assert_eq!(
                w["tiebreaks"][code], 0.0,
                "{code} of the winner {winner}: {w}"
            );
        }
        assert_eq!(w["tiebreaks"]["WIN"], 1.0, "{w}");
        // The loser's one opponent has 1 point; cut-1 leaves it out.
        let l = row(loser);
        assert_eq!(
            (
                l["tiebreaks"]["BH"].as_f64(),
                l["tiebreaks"]["BH-C1"].as_f64()
            ),
            (Some(1.0), Some(0.0)),
            "{l}"
        );
    }
    // The terminal shows the same: `hakem tournament standings --tournament`.
    let (code, out, err) = hakem(&[
        "tournament",
        "standings",
        "--server",
        &server.ws_url(),
        "--tournament",
        &id,
        "--json",
    ]);
    assert_eq!(code, 0, "{err}");
    let mut winners = 0;
    for line in out.lines() {
        let s: Value = serde_json::from_str(line).unwrap();
        if round1.iter().any(|b| b["p1"] == s["id"]) {
            winners += 1;
            for code in ["BH-C1", "BH", "SB"] {
                assert_eq!(s["tiebreaks"][code], 0.0, "{code}: {line}");
            }
        }
    }
    assert_eq!(
        winners,
        round1.len(),
        "a line for each winner of round 1:\n{out}"
    );
}

/// The `hakem tournament pair-next` command that `--preview` printed, as arguments.
fn publish_command(out: &str) -> Vec<String> {
    let line = out
        .lines()
        .find(|l| l.trim_start().starts_with("hakem tournament pair-next"))
        .unwrap_or_else(|| panic!("no command to publish in:\n{out}"));
    line.split_whitespace()
        .skip(1)
        .map(str::to_string)
        .collect()
}

fn pairing_of(out: &str) -> String {
    out.lines()
        .find_map(|l| l.strip_prefix("pairing "))
        .unwrap_or_else(|| panic!("no pairing in:\n{out}"))
        .to_string()
}

#[tokio::test]
async fn the_pairing_published_is_the_one_shown_or_nothing_is_published() {
    let server = Server::start();
    let url = server.ws_url();
    let mut org = organizer(&server).await;
    let (id, arb) = four_players(&mut org, "Önizleme").await;
    let started = org
        .request(json!({"type": "start_tournament", "tournament": id, "colour_lot": "p1"}))
        .await;
    let mut arbiter = Client::connect(&server, "arbiter", None).await;
    for b in boards(&started, 1) {
        decide(&mut arbiter, b["match"].as_str().unwrap(), &arb, "p1").await;
    }
    wait_for(
        &server,
        &id,
        "round 1 complete",
        Duration::from_secs(10),
        round_over,
    );

    // The arbiter looks at round 2 in the terminal: the boards, the pairing's identifier and
    // the command that publishes exactly it. Nothing is published.
    let preview = ["tournament", "pair-next", "--preview", "--server", &url];
    let (code, shown, err) =
        hakem(&[&preview[..], &["--token", &arb, "--tournament", &id]].concat());
    assert_eq!(code, 0, "{shown}{err}");
    assert!(
        shown.starts_with("round 2 as it would be paired now (not published):"),
        "{shown}"
    );
    let first = pairing_of(&shown);
    assert_eq!(first.len(), 16, "{first}");
    let command = publish_command(&shown);
    assert!(
        command.ends_with(&["--pairing".to_string(), first.clone()]),
        "{command:?}"
    );
    assert_eq!(
        view(&server, &id)["current_round"],
        1,
        "a preview publishes nothing"
    );
    // The same state gives the same pairing, over the protocol too.
    let again = org
        .request(json!({"type": "preview_pairing", "tournament": id, "arbiter_token": arb}))
        .await;
    assert_eq!(again["pairing"], first.as_str(), "{again}");

    // Meanwhile player 1 takes a half-point bye in round 2: the round is paired otherwise now,
    // and the pairing shown is refused, with the pairing as it is now.
    org.request(json!({"type": "request_bye", "tournament": id, "player": 1, "round": 2}))
        .await;
    let refused = org
        .refused(
            json!({"type": "pair_next", "tournament": id, "arbiter_token": arb, "pairing": first}),
            "pairing_changed",
        )
        .await;
    assert!(
        refused["message"]
            .as_str()
            .unwrap()
            .contains("nothing was published"),
        "{refused}"
    );
    let now = &refused["preview"];
    assert_eq!(now["round"], 2, "{refused}");
    let second = now["pairing"].as_str().unwrap().to_string();
    assert_ne!(second, first);
    assert!(
        now["byes"]
            .as_array()
            .unwrap()
            .iter()
            .any(|b| b["player"] == 1 && b["kind"] == "half"),
        "{now}"
    );
    assert_eq!(view(&server, &id)["current_round"], 1, "nothing published");

    // The command printed before is refused the same way in the terminal: it says why and
    // shows the pairing as it is now, with its own command.
    let args: Vec<&str> = command.iter().map(String::as_str).collect();
    let (code, out, err) = hakem(&args);
    assert_eq!(code, 1, "{out}{err}");
    assert!(err.contains("(pairing_changed)"), "{err}");
    assert!(err.contains("nothing was published"), "{err}");
    assert_eq!(pairing_of(&out), second, "{out}");
    assert_eq!(view(&server, &id)["current_round"], 1, "nothing published");

    // The new command publishes exactly the pairing it names.
    let command = publish_command(&out);
    let args: Vec<&str> = command.iter().map(String::as_str).collect();
    let (code, out, err) = hakem(&args);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.starts_with("round 2\n"), "{out}");
    let published = view(&server, &id);
    assert_eq!(published["current_round"], 2);
    assert_eq!(published["pairings"][1]["boards"], now["boards"]);
    assert_eq!(published["pairings"][1]["byes"], now["byes"]);

    // Published once: the same pairing again is refused, round 2 being played.
    org.refused(
        json!({"type": "pair_next", "tournament": id, "arbiter_token": arb, "pairing": second}),
        "bad_request",
    )
    .await;
}

#[tokio::test]
async fn the_arbiter_enters_a_result_played_over_the_board_and_corrects_another() {
    let server = Server::start();
    let mut org = organizer(&server).await;
    let (id, arb) = four_players(&mut org, "Masa").await;
    let started = org
        .request(json!({"type": "start_tournament", "tournament": id}))
        .await;
    let round1 = boards(&started, 1);
    let set = |round: u32, board: u32, result: &str| json!({"type": "set_result", "tournament": id, "round": round, "board": board, "result": result, "arbiter_token": arb});

    // Refusals change nothing.
    org.refused(set(1, 1, "2-0"), "bad_request").await;
    org.refused(set(1, 9, "1-0"), "bad_request").await;
    org.refused(set(2, 1, "1-0"), "bad_request").await;
    let mut guest = Client::connect(&server, "guest", None).await;
    guest
        .refused(
            json!({"type": "set_result", "tournament": id, "round": 1, "board": 1, "result": "1-0"}),
            "forbidden",
        )
        .await;
    assert!(view(&server, &id)["pairings"][0]["boards"][0]["result"].is_null());

    // Board 1 was played over the board: the result entered ends its match with it.
    let after = org.request(set(1, 1, "1-0")).await;
    assert_eq!(
        after["pairings"][0]["boards"][0]["result"], "1-0",
        "{after}"
    );
    let m1 = round1[0]["match"].as_str().unwrap();
    let state = server.match_state(m1);
    assert_eq!(state["status"], "finished");
    assert_eq!(state["round"]["winner"], "p1");
    let (_, record) = server.get(&format!("/api/matches/{m1}/record"));
    assert!(
        record.contains("result 1-0 entered by the arbiter"),
        "{record}"
    );
    org.refused(set(1, 1, "1-0"), "bad_request").await;

    // Board 2 ends in its match; the arbiter corrects the result given there.
    let mut arbiter = Client::connect(&server, "arbiter", None).await;
    let m2 = round1[1]["match"].as_str().unwrap();
    decide(&mut arbiter, m2, &arb, "draw").await;
    let v = wait_for(
        &server,
        &id,
        "round 1 complete",
        Duration::from_secs(10),
        |v| v["completed_rounds"] == 1,
    );
    assert_eq!(v["pairings"][0]["boards"][1]["result"], "1/2-1/2");
    // From the terminal, as `hakem tournament result`.
    let url = server.ws_url();
    let (code, out, err) = hakem(&[
        "tournament",
        "result",
        "--server",
        &url,
        "--token",
        &arb,
        "--tournament",
        &id,
        "--round",
        "1",
        "--board",
        "2",
        "--result",
        "0-1",
    ]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("0-1"), "{out}");
    let corrected = view(&server, &id);
    assert_eq!(corrected["pairings"][0]["boards"][1]["result"], "0-1");
    let p2 = round1[1]["p2"].as_u64().unwrap();
    let line = corrected["standings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["id"] == p2)
        .unwrap()
        .clone();
    assert_eq!(line["points"], 1, "{line}");
    // The match keeps what happened in it.
    assert_eq!(server.match_state(m2)["round"]["winner"], "draw");
}

#[tokio::test]
async fn an_assistant_arbiter_arbitrates_their_boards_only_in_every_round_and_after_a_restart() {
    let mut server = Server::start();
    let mut org = organizer(&server).await;
    let (id, arb) = four_players(&mut org, "Yardım").await;
    let add = |name: &str, boards: Value| json!({"type": "add_assistant", "tournament": id, "name": name, "boards": boards, "arbiter_token": arb});
    org.refused(add("", json!([2])), "bad_request").await;
    org.refused(add("Ece Hakem", json!([])), "bad_request")
        .await;
    org.refused(add("Ece Hakem", json!([0])), "bad_request")
        .await;
    org.refused(add("Ece Hakem", json!([-1])), "bad_request")
        .await;
    let mut guest = Client::connect(&server, "guest", None).await;
    guest
        .refused(
            json!({"type": "add_assistant", "tournament": id, "name": "X", "boards": [1]}),
            "forbidden",
        )
        .await;
    let added = org.request(add("Ece Hakem", json!([2, 2]))).await;
    assert_eq!(added["type"], "assistant_added", "{added}");
    assert_eq!(added["boards"], json!([2]));
    let token = added["token"].as_str().unwrap().to_string();
    // The view names the assistant and the boards, never the token.
    let v = view(&server, &id);
    assert_eq!(
        v["assistants"],
        json!([{"name": "Ece Hakem", "boards": [2]}])
    );
    assert!(!v.to_string().contains(&token));
    // From the terminal, with a list of boards.
    let url = server.ws_url();
    let (code, out, err) = hakem(&[
        "tournament",
        "assistant",
        "--server",
        &url,
        "--token",
        &arb,
        "--tournament",
        &id,
        "--name",
        "Can Yardımcı",
        "--boards",
        "1-2",
    ]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.contains("assistant arbiter Can Yardımcı, boards 1 2"),
        "{out}"
    );
    assert_eq!(view(&server, &id)["assistants"][1]["boards"], json!([1, 2]));
    let (code, _, err) = hakem(&[
        "tournament",
        "assistant",
        "--server",
        &url,
        "--token",
        &arb,
        "--tournament",
        &id,
        "--name",
        "X",
        "--boards",
        "5-2",
    ]);
    assert_ne!(code, 0);
    assert!(err.contains("not a range"), "{err}");

    let started = org
        .request(json!({"type": "start_tournament", "tournament": id}))
        .await;
    let round1 = boards(&started, 1);
    server.restart();
    let mut assistant = Client::connect(&server, "assistant", None).await;
    let m1 = round1[0]["match"].as_str().unwrap();
    let m2 = round1[1]["match"].as_str().unwrap();
    assistant
        .refused(
            json!({"type": "join", "match": m1, "arbiter_token": token}),
            "unauthorized",
        )
        .await;
    assistant
        .accepted(json!({"type": "join", "match": m2, "arbiter_token": token}))
        .await;
    let state = assistant.find(|v| v["type"] == "state").await;
    assert_eq!(state["you"], "arbiter");
    assistant
        .accepted(json!({"type": "warn", "match": m2, "seat": "p1", "reason": "noise"}))
        .await;
    // Tournament commands stay the chief arbiter's.
    assistant
        .refused(
            json!({"type": "pair_next", "tournament": id, "arbiter_token": token}),
            "forbidden",
        )
        .await;

    // Board 2 of the next round is theirs too.
    let mut org = organizer(&server).await;
    let mut arbiter = Client::connect(&server, "arbiter", None).await;
    decide(&mut arbiter, m1, &arb, "p1").await;
    decide(&mut assistant, m2, &token, "draw").await;
    wait_for(
        &server,
        &id,
        "round 1 complete",
        Duration::from_secs(10),
        |v| v["completed_rounds"] == 1,
    );
    let paired = org
        .request(json!({"type": "pair_next", "tournament": id}))
        .await;
    let next = boards(&paired, 2)[1]["match"].as_str().unwrap().to_string();
    assistant
        .accepted(json!({"type": "join", "match": next, "arbiter_token": token}))
        .await;
}

/// A tournament is stored as its changes, with a whole snapshot now and then: after a SIGKILL
/// the server replays the snapshot and every change after it, on both databases.
#[tokio::test]
async fn a_tournaments_changes_survive_a_kill_past_a_snapshot_on_both_databases() {
    for database in hakem_blackbox::Database::all() {
        let mut server = Server::start_on(database, &[]);
        let mut org = organizer(&server).await;
        let names: Vec<(String, String)> = (0..40)
            .map(|i| (format!("Oyuncu{i:02}"), "Ad".to_string()))
            .collect();
        let list: Vec<(&str, &str)> = names
            .iter()
            .map(|(s, g)| (s.as_str(), g.as_str()))
            .collect();
        let created = org
            .request(json!({
                "type": "create_tournament", "name": "Uzun", "game": "pente", "rounds": 4,
                "max_half_byes": 2, "players": players(&list),
            }))
            .await;
        assert_eq!(created["type"], "tournament_created", "{created}");
        let id = created["tournament"].as_str().unwrap().to_string();
        org.request(json!({"type": "start_tournament", "tournament": id}))
            .await;
        // 80 half-point byes: more changes than one snapshot holds.
        for round in [2, 3] {
            for player in 1..=40 {
                let v = org
                    .request(json!({"type": "request_bye", "tournament": id, "player": player, "round": round}))
                    .await;
                assert_eq!(v["type"], "tournament", "{v}");
            }
        }
        org.request(json!({"type": "withdraw", "tournament": id, "player": 7}))
            .await;
        let before = view(&server, &id);
        server.restart();
        let after = view(&server, &id);
        assert_eq!(after, before);
        assert_eq!(after["players"][0]["half_byes"], json!([2, 3]));
        // And it goes on from there: the next change is stored after the replayed ones.
        let mut org = organizer(&server).await;
        org.request(json!({"type": "withdraw", "tournament": id, "player": 8}))
            .await;
        let more = view(&server, &id);
        server.restart();
        assert_eq!(view(&server, &id), more);
        assert!(more["players"][7]["withdrawn_from"].is_number());
    }
}

#[tokio::test]
async fn a_tournament_with_a_spectator_delay_shows_its_boards_late_until_they_end() {
    let server = Server::start();
    let mut org = organizer(&server).await;
    let create = |delay: Value| {
        json!({
            "type": "create_tournament", "name": "Gecikmeli", "game": "pentago", "rounds": 1,
            "players": players(&[("Aydın", "A"), ("Balcı", "B")]),
            "spectator_delay": delay,
        })
    };
    let refused = org
        .refused(create(json!({"moves": 101})), "bad_request")
        .await;
    assert!(
        refused["message"].as_str().unwrap().contains("at most 100"),
        "{refused}"
    );
    let created = org.request(create(json!({"seconds": 60}))).await;
    assert_eq!(created["type"], "tournament_created", "{created}");
    let id = created["tournament"].as_str().unwrap().to_string();
    let arb = created["arbiter_token"].as_str().unwrap().to_string();
    assert_eq!(view(&server, &id)["spectator_delay"]["seconds"], 60);

    let started = org
        .request(json!({"type": "start_tournament", "tournament": id}))
        .await;
    let board = boards(&started, 1)[0]["match"]
        .as_str()
        .unwrap()
        .to_string();
    let state = server.match_state(&board);
    assert_eq!(state["spectator_delay"]["seconds"], 60, "{state}");

    // Its end shows the board whole at once.
    let ended = org
        .request(
            json!({"type": "set_result", "tournament": id, "round": 1, "board": 1,
                        "result": "1-0", "arbiter_token": arb}),
        )
        .await;
    assert_eq!(
        ended["pairings"][0]["boards"][0]["result"], "1-0",
        "{ended}"
    );
    let state = server.match_state(&board);
    assert_eq!(state["status"], "finished", "{state}");
    assert!(state["spectator_delay"].is_null(), "{state}");
}
