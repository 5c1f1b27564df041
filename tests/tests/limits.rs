//! Limits against bad clients: floods, oversized frames, readers that stop reading; and the
//! operator's view of it all in /metrics.

use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use hakem_blackbox::{metric_in, seated_pair, Client, Server};
use serde_json::{json, Value};
use tokio::net::TcpSocket;
use tokio_tungstenite::tungstenite::Message;

#[tokio::test]
async fn a_flooding_client_is_warned_once_and_read_no_faster_than_its_rate() {
    let server = Server::start_with(&["--rate-limit", "5", "--rate-burst", "10"]);
    // The welcome says the rate, for clients to pace themselves within it.
    let told = Client::connect_url_as(&server.ws_url(), "told", "organizer-secret").await;
    assert_eq!(
        told.welcome()["rate"],
        json!({"per_second": 5.0, "burst": 10.0}),
        "{}",
        told.welcome()
    );
    told.close().await;
    let mut flooder = Client::connect(&server, "flooder", None).await;
    let started = std::time::Instant::now();
    // Within a burst of what it may send: read at the rate, not closed.
    for i in 0..18 {
        flooder.send(json!({"type": "ping", "id": i})).await;
    }
    // Every ping is answered, in order, but after the burst (less the hello) only at the rate.
    flooder.find(|f| f["re"] == json!(17)).await;
    let took = started.elapsed();
    let floor = Duration::from_secs_f64((18.0 - 9.0 - 1.0) / 5.0);
    assert!(
        took >= floor,
        "18 pings answered in {took:?}, faster than 5 a second after the burst"
    );
    let limited = flooder
        .buffered()
        .filter(|f| f["code"] == "rate_limited")
        .count();
    assert_eq!(limited, 1, "one warning for the run");
    let pongs = flooder.buffered().filter(|f| f["type"] == "pong").count();
    assert_eq!(pongs, 17, "and nothing refused");

    // A client far more than a burst ahead of its rate is closed.
    let mut flood = Client::connect(&server, "flood", None).await;
    for i in 0..200 {
        if !flood.try_send(json!({"type": "ping", "id": i})).await {
            break;
        }
    }
    let frames = flood.closed().await;
    let answered = frames.iter().filter(|f| f["type"] == "pong").count();
    assert!(
        answered < 60,
        "closed long before its 200 pings: {answered} answered"
    );

    // Others are not affected.
    let mut calm = Client::connect(&server, "calm", None).await;
    let pong = calm.request(json!({"type": "ping"})).await;
    assert_eq!(pong["type"], "pong");
}

#[tokio::test]
async fn a_spectator_that_stops_reading_is_dropped_without_slowing_the_players() {
    // The players move as fast as the server answers, far beyond what rate limits allow.
    let server = Server::start_with(&[
        "--outbox-frames",
        "8",
        "--socket-send-buffer",
        "4096",
        "--rate-limit",
        "100000",
        "--rate-burst",
        "100000",
        "--ip-rate-limit",
        "0",
    ]);
    let (mut p1, mut p2, m) = seated_pair(&server, json!({"game": "quoridor"})).await;

    // A spectator with a tiny receive window that never reads.
    let socket = TcpSocket::new_v4().unwrap();
    socket.set_recv_buffer_size(2048).unwrap();
    let stream = socket.connect(server.addr.parse().unwrap()).await.unwrap();
    let (mut lazy, _) = tokio_tungstenite::client_async(server.ws_url(), stream)
        .await
        .unwrap();
    lazy.send(Message::Text(
        json!({"type": "hello", "protocol": 1}).to_string().into(),
    ))
    .await
    .unwrap();
    lazy.send(Message::Text(
        json!({"type": "watch", "match": m.id}).to_string().into(),
    ))
    .await
    .unwrap();

    p1.accepted(json!({"type": "ready", "match": m.id})).await;
    p2.accepted(json!({"type": "ready", "match": m.id})).await;
    // Pawns walk back and forth: hundreds of events, each acknowledged promptly.
    let started = std::time::Instant::now();
    walk_pawns(&mut p1, &mut p2, &m.id, 150).await;
    assert!(
        started.elapsed() < Duration::from_secs(60),
        "players were held up"
    );

    // The spectator finds its connection closed before it has seen everything.
    let mut events = 0;
    loop {
        match tokio::time::timeout(Duration::from_secs(10), lazy.next()).await {
            Ok(Some(Ok(Message::Text(text)))) => {
                let frame: Value = serde_json::from_str(text.as_str()).unwrap();
                if frame["type"] == "event" {
                    events += 1;
                }
            }
            Ok(Some(Ok(_))) => {}
            Ok(Some(Err(_)) | None) => break,
            Err(_) => panic!("the lazy spectator was never dropped ({events} events read)"),
        }
    }
    assert!(events < 600, "it saw {events} events, all of them");
}

#[tokio::test]
async fn metrics_show_connections_matches_moves_and_errors() {
    let server = Server::start();
    let (mut p1, mut p2, m) = seated_pair(&server, json!({"game": "pente"})).await;
    p1.accepted(json!({"type": "ready", "match": m.id})).await;
    p2.accepted(json!({"type": "ready", "match": m.id})).await;
    p1.accepted(json!({"type": "move", "match": m.id, "move": "K10"}))
        .await;
    p1.refused(
        json!({"type": "move", "match": m.id, "move": "K11"}),
        "not_your_turn",
    )
    .await;
    let (status, text) = server.get("/metrics");
    assert_eq!(status, 200);
    for needle in [
        "hakem_connections{kind=\"guest\"} 2",
        "hakem_room_members{role=\"player\"} 2",
        "hakem_live_matches 1",
        "hakem_moves_total 1",
        "hakem_errors_total{code=\"not_your_turn\"} 1",
        "hakem_action_seconds",
        "hakem_store_commit_seconds",
    ] {
        assert!(text.contains(needle), "{needle} missing in\n{text}");
    }
    // Every write is timed once, when it is answered: as many as the group commits held.
    // (A batch still being answered would show more writes than commits have counted: ask
    // again until the writer is quiet.)
    let value = |text: &str, name: &str| -> f64 {
        metric_in(text, name).unwrap_or_else(|| panic!("{name} missing in\n{text}"))
    };
    let mut text = text;
    for _ in 0..20 {
        let writes = value(&text, "hakem_store_write_seconds_count");
        let batched = value(&text, "hakem_store_batch_size_sum");
        assert!(writes >= 3.0, "{writes} writes timed");
        if writes == batched {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
        text = server.get("/metrics").1;
    }
    panic!("writes timed and writes committed differ in\n{text}");
}

#[tokio::test]
async fn a_log_that_nobody_reads_holds_up_no_match() {
    // Everything is logged (trace), into a small pipe that is never read: it fills within the
    // first moves, and from then on a write to it would wait for a reader that never comes.
    // (That lines are then dropped and counted, not queued without end, is the unit tests'
    // part, in server/src/logs.rs.)
    let server = Server::start_unread(
        &["--rate-limit", "100000", "--rate-burst", "100000"],
        "trace",
    );
    let (mut p1, mut p2, m) = seated_pair(&server, json!({"game": "quoridor"})).await;
    p1.accepted(json!({"type": "ready", "match": m.id})).await;
    p2.accepted(json!({"type": "ready", "match": m.id})).await;
    walk_pawns(&mut p1, &mut p2, &m.id, 100).await;
    // The pipe is full: its writer waits in the kernel for room for its next line.
    let (waiting_bytes, capacity) = (server.unread_log_bytes(), server.unread_log_capacity());
    assert!(
        waiting_bytes >= capacity / 2,
        "the log pipe holds {waiting_bytes} bytes of {capacity}"
    );
    let waiting: Vec<String> = std::fs::read_dir(format!("/proc/{}/task", server.pid()))
        .unwrap()
        .filter_map(|task| std::fs::read_to_string(task.unwrap().path().join("wchan")).ok())
        .collect();
    assert!(
        waiting.iter().any(|wchan| wchan.ends_with("pipe_write")),
        "a thread of the server waits to write the log: {waiting:?}"
    );
    // And goes on answering over HTTP.
    assert_eq!(server.get("/healthz").0, 200);
}

/// Quoridor's pawns walk back and forth, `rounds` moves each, every move acknowledged.
async fn walk_pawns(p1: &mut Client, p2: &mut Client, match_id: &str, rounds: usize) {
    let walk = [("e2", "e8"), ("e1", "e9")];
    for round in 0..rounds {
        let (a, b) = walk[round % 2];
        p1.accepted(json!({"type": "move", "match": match_id, "move": a}))
            .await;
        p2.accepted(json!({"type": "move", "match": match_id, "move": b}))
            .await;
    }
}
