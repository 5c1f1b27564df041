//! Game records: exported by the server, read back and verified by `hakem rules replay --record`.

use std::process::Command;

use hakem_blackbox::{binary, seated_pair, Client, Server};
use serde_json::{json, Value};

const TR_FIRST_WINS: &str = "b1sw e5sw f6sw c6nw d6nw c6nw e6sw f1nw e2nw e4ne c6nw c1sw f2nw e1nw a3se f3se e4se b1sw c4sw b6sw d2sw f1se c3sw d4ne b5nw b1se b2ne f4ne c2nw b6se f2sw";
const TR_SECOND_WINS: &str = "d1se f5ne c4nw a5se c5nw d6nw e6nw e1se f3nw a3se c4ne b5se e3sw e6se a6nw c5ne c1sw d1sw e2se c2sw f2nw c2ne";

async fn play(first: &mut Client, second: &mut Client, id: &str, moves: &str) {
    first.accepted(json!({"type": "ready", "match": id})).await;
    second.accepted(json!({"type": "ready", "match": id})).await;
    for (i, mv) in moves.split_whitespace().enumerate() {
        let mover = if i % 2 == 0 {
            &mut *first
        } else {
            &mut *second
        };
        mover
            .accepted(json!({"type": "move", "match": id, "move": mv}))
            .await;
    }
}

fn verify(text: &str) -> (Option<i32>, Value) {
    let dir = std::env::temp_dir().join(format!("hakem-record-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join(format!("{}.txt", text.len()));
    std::fs::write(&file, text).unwrap();
    let out = Command::new(binary("hakem"))
        .args(["rules", "replay", "--record"])
        .arg(&file)
        .arg("--json")
        .output()
        .unwrap();
    let value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    (out.status.code(), value)
}

#[tokio::test]
async fn an_exported_record_replays_and_verifies() {
    let server = Server::start();
    let (mut p1, mut p2, m) = seated_pair(
        &server,
        json!({"game": "pentago", "players": {"p1": "Ayşe Yılmaz", "p2": "Bora Kaya"}}),
    )
    .await;
    let mut arbiter = Client::connect(&server, "arbiter", None).await;
    arbiter
        .accepted(json!({"type": "join", "match": m.id, "arbiter_token": m.arbiter}))
        .await;
    play(&mut p1, &mut p2, &m.id, TR_FIRST_WINS).await;
    arbiter
        .accepted(json!({"type": "warn", "match": m.id, "seat": "p2", "reason": "late"}))
        .await;
    play(&mut p2, &mut p1, &m.id, TR_SECOND_WINS).await;
    p1.event("round_ended").await;

    let (status, text) = server.get(&format!("/api/matches/{}/record", m.id));
    assert_eq!(status, 200);
    assert!(text.contains("[Game \"Pentago\"]"), "{text}");
    assert!(text.contains("[P1 \"Ayşe Yılmaz\"]"), "{text}");
    assert!(text.contains("[FirstMover \"p2\"]"), "{text}");
    // Colours stay with the seats: p1 black and p2 white in both sets, white first in set 2.
    assert_eq!(text.matches("[Black \"Ayşe Yılmaz\"]").count(), 2, "{text}");
    assert_eq!(text.matches("[White \"Bora Kaya\"]").count(), 2, "{text}");
    assert!(text.contains("[RoundWinner \"p1\"]"), "{text}");
    assert!(text.contains("warning p2 1: late"), "{text}");
    // The clock reading after each press follows the move.
    assert!(text.contains("1. b1sw {"), "{text}");

    let (code, report) = verify(&text);
    assert_eq!(code, Some(0), "{report}");
    assert_eq!(report["ok"], true);
    assert_eq!(report["sets"][0]["result"], "1-0");
    assert_eq!(report["sets"][0]["reason"], "double_five");
    assert_eq!(report["sets"][1]["result"], "0-1");
    assert_eq!(report["sets"][1]["plies"], 22);

    // A tampered record is caught.
    let tampered = text.replacen("e5sw", "e5se", 1);
    let (code, report) = verify(&tampered);
    assert_eq!(code, Some(2), "{report}");
    assert_eq!(report["ok"], false);
    let (code, _) = verify("this is not a record");
    assert_eq!(code, Some(2));

    let (status, _) = server.get("/api/matches/nosuchmatch/record");
    assert_eq!(status, 404);
}

#[tokio::test]
async fn a_finished_pentago_set_is_analysed_by_the_solver_never_a_live_one() {
    let server = Server::start();
    let (mut p1, mut p2, m) = seated_pair(
        &server,
        json!({"game": "pentago", "sets": 1, "players": {"p1": "Ayşe", "p2": "Bora"}}),
    )
    .await;
    // Not while the match is played.
    let (status, body) = server.get(&format!("/api/matches/{}/analysis?set=1", m.id));
    assert_eq!(status, 409, "{body}");
    assert!(body.contains("never during play"), "{body}");

    play(&mut p1, &mut p2, &m.id, TR_FIRST_WINS).await;
    p1.event("round_ended").await;
    let plies = TR_FIRST_WINS.split_whitespace().count();
    let analysis = server.get_json(&format!("/api/matches/{}/analysis?set=1", m.id));
    let positions = analysis["positions"].as_array().unwrap();
    assert_eq!(positions.len(), plies + 1, "{analysis}");
    // The last position is over: no verdict. The one before: the mover (p1) wins, and the
    // move played is among those that keep the win.
    let last = &positions[plies];
    assert!(last.get("value").is_none(), "{last}");
    let before = &positions[plies - 1];
    assert_eq!(before["to_move"], "p1");
    assert_eq!(before["value"], "win", "{before}");
    assert_eq!(before["played"], "f2sw");
    let keeps: Vec<&str> = before["keeps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| k.as_str().unwrap())
        .collect();
    assert!(keeps.contains(&"f2sw"), "{keeps:?}");
    // Every proven verdict is one of the three, and a second request is served the same.
    for p in positions {
        if let Some(v) = p.get("value") {
            assert!(
                ["win", "draw", "loss"].contains(&v.as_str().unwrap()),
                "{p}"
            );
        }
    }
    let again = server.get_json(&format!("/api/matches/{}/analysis?set=1", m.id));
    assert_eq!(again["positions"][plies - 1], *before);

    // Refusals.
    for (query, code) in [("?set=2", 400), ("?set=abc", 400), ("?set=999", 400)] {
        let (status, body) = server.get(&format!("/api/matches/{}/analysis{query}", m.id));
        assert_eq!(status, code, "{query}: {body}");
    }
    let (status, _) = server.get("/api/matches/nosuchmatch/analysis");
    assert_eq!(status, 404);
}
