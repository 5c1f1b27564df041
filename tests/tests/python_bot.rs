//! The Python example bot (examples/python-bot/bot.py) plays whole rounds through a real server,
//! using only the protocol and the server's list of legal moves.

use std::path::PathBuf;
use std::process::{Command, Stdio};

use hakem_blackbox::{create_match, python_has, Client, Server};
use serde_json::json;

fn bot_script() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../examples/python-bot/bot.py")
}

fn spawn_bot(server: &Server, match_id: &str, token: &str, seed: u32) -> std::process::Child {
    Command::new("python3")
        .arg(bot_script())
        .args([
            "--server",
            &server.ws_url(),
            "--match",
            match_id,
            "--token",
            token,
        ])
        .args(["--seed", &seed.to_string()])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start the Python bot")
}

#[tokio::test]
async fn two_python_bots_play_a_whole_round_of_each_game() {
    if !python_has("websockets.asyncio.client", "websockets") {
        return;
    }
    let server = Server::start();
    let mut organizer = Client::connect(&server, "organizer", None).await;
    for (i, game) in ["pentago", "quoridor", "pente"].into_iter().enumerate() {
        let m = create_match(&mut organizer, json!({"game": game})).await;
        let a = spawn_bot(&server, &m.id, &m.p1, 2 * i as u32);
        let b = spawn_bot(&server, &m.id, &m.p2, 2 * i as u32 + 1);
        for bot in [a, b] {
            let out = bot.wait_with_output().unwrap();
            let stdout = String::from_utf8_lossy(&out.stdout);
            assert!(
                out.status.success(),
                "{game}: {stdout}\n{}",
                String::from_utf8_lossy(&out.stderr)
            );
            assert!(stdout.contains("round over"), "{game}: {stdout}");
        }
        let state = server.match_state(&m.id);
        assert_eq!(state["status"], "finished", "{game}");
        assert!(!state["sets"].as_array().unwrap().is_empty());
    }
}
