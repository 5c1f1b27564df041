//! The server's own bot: a seated member of a room that plays with an engine, so that anyone
//! (in a browser, say) can play the computer without running a bot of their own.
//!
//! It is a room member like any connection: it receives the room's frames through an outbox
//! and acts through `Act` commands. It asks for the legal moves, so it gets a fresh `state`
//! whenever it is its turn, and thinks on a blocking thread so the server never waits for it.

use std::time::Duration;

use hakem_engine::{new_engine, EngineKind};
use hakem_games::{AnyPosition, GameKind};
use hakem_protocol::{MatchStatus, Seat, ServerMessage};
use tokio::sync::mpsc;

use crate::outbox::{Outbox, Outgoing};
use crate::room::{Action, Credential, Join, LocalRoom};

/// Connection ids for house bots count down from the top, away from real connections.
const FIRST_BOT_CONN: u64 = u64::MAX / 2;

/// Thinking time per move: enough for the levels to differ, short enough to feel responsive.
const THINK: Duration = Duration::from_millis(800);

/// Seats a house bot of `level` at `seat` (holding `token`) and plays until the round ends.
pub fn spawn(
    room: LocalRoom,
    seat: Seat,
    token: String,
    game: GameKind,
    variant: &'static str,
    level: u8,
) {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(FIRST_BOT_CONN);
    let conn = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    tokio::spawn(async move {
        if let Err(e) = play(room, conn, seat, token, game, variant, level).await {
            tracing::warn!(error = %e, "house bot stopped");
        }
    });
}

async fn play(
    room: LocalRoom,
    conn: u64,
    seat: Seat,
    token: String,
    game: GameKind,
    variant: &'static str,
    level: u8,
) -> Result<(), String> {
    let (tx, mut rx) = mpsc::channel(1024);
    let outbox = Outbox::new(tx, crate::outbox::Kill::new());
    let stopped = |_| "the room stopped".to_string();
    room.join(Join {
        conn,
        credential: Credential::Seat(token),
        since_seq: None,
        history: false,
        legal_moves: true,
        batch: false,
        boards: false,
        rematch: false,
        chat: false,
        speaker: Default::default(),
        outbox: outbox.clone(),
        re: None,
    })
    .await
    .map_err(stopped)?;
    let act = |action: Action| {
        room.act(
            conn,
            action,
            outbox.clone(),
            None,
            tokio::time::Instant::now(),
        )
    };
    let mut engine = Some(new_engine(
        EngineKind::Search,
        level,
        u64::from(conn as u32),
    ));
    let mut readied_for = None;
    while let Some(item) = rx.recv().await {
        // The bot reads only the states it is sent on its turn; events and replays pass by.
        let Outgoing::Frame(frame) = item else {
            continue;
        };
        if !frame.as_str().starts_with(r#"{"type":"state""#) {
            continue;
        }
        let Ok(ServerMessage::State(state)) = serde_json::from_str::<ServerMessage>(frame.as_str())
        else {
            continue;
        };
        match state.status {
            MatchStatus::Finished => return Ok(()),
            MatchStatus::Waiting | MatchStatus::BetweenSets => {
                if readied_for != Some(state.set) {
                    readied_for = Some(state.set);
                    act(Action::Ready).await.map_err(stopped)?;
                }
            }
            MatchStatus::Playing => {
                let position = &state.position;
                let my_turn = position.to_move == Some(seat)
                    && position.awaiting_press.is_none()
                    && position.pending.is_none();
                if !my_turn {
                    continue;
                }
                let mut board = AnyPosition::new(game, Some(variant)).map_err(|e| e.to_string())?;
                for mv in &position.moves {
                    board.play_str(mv).map_err(|e| e.to_string())?;
                }
                let Some(mut thinker) = engine.take() else {
                    continue;
                };
                let (thinker, choice) = tokio::task::spawn_blocking(move || {
                    let choice = thinker.choose(&board, THINK);
                    (thinker, choice)
                })
                .await
                .map_err(|e| e.to_string())?;
                engine = Some(thinker);
                if let Some(mv) = choice {
                    act(Action::Move(mv, true)).await.map_err(stopped)?;
                }
            }
        }
    }
    Ok(())
}
