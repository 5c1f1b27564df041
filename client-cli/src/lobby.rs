//! `hakem lobby list|seek|accept|rematch`: the server's lobby from the terminal. `seek` posts
//! an offer and waits until someone accepts it; `accept` takes one; `rematch` offers to play a
//! finished round again and waits for the opponent's offer. Each ends with the new match and
//! the seat to play it from (`hakem play --match ID --token T`).

use std::process::ExitCode;

use clap::{Args, Subcommand};
use hakem_games::GameKind;
use hakem_protocol::{ClientMessage, NewSeek, SeekView, ServerMessage};
use serde_json::json;

use crate::connection::{reply_to, Connection, Incoming};
use crate::create::{clock_config, parse_clock, Clock};
use crate::organize::{ask, Server};
use crate::session::FAILURE;

#[derive(Subcommand, Debug)]
pub enum LobbyCommand {
    /// The open seeks (with --token, the challenges to this account too).
    List(ListArgs),
    /// Offer a game and wait until someone accepts it; prints the match and your seat.
    Seek(SeekArgs),
    /// Accept a seek (its id, as `list` shows it); prints the match and your seat.
    Accept(AcceptArgs),
    /// After a round: offer the opponent a rematch (seats swapped) and wait for theirs;
    /// prints the new match and your seat in it.
    Rematch(RematchArgs),
}

#[derive(Args, Debug)]
pub struct RematchArgs {
    #[command(flatten)]
    server: Server,
    /// The finished match.
    #[arg(long = "match", value_name = "ID")]
    match_id: String,
    /// Your seat token in it.
    #[arg(long, value_name = "T")]
    token: String,
    /// How long to wait for the opponent's offer: seconds or MM:SS. An offer lasts only while
    /// the finished match is in the server's memory (a minute by default).
    #[arg(long, value_name = "SECONDS", default_value = "120",
          value_parser = crate::session::parse_reconnect_timeout)]
    wait: std::time::Duration,
    /// One JSON line: {"match":..,"seat":..,"seat_token":..}.
    #[arg(long)]
    json: bool,
}

#[derive(Args, Debug)]
pub struct ListArgs {
    #[command(flatten)]
    server: Server,
    /// An account's token or session token (none: as a guest).
    #[arg(long, value_name = "T", env = "HAKEM_TOKEN", hide_env_values = true)]
    token: Option<String>,
}

#[derive(Args, Debug)]
pub struct SeekArgs {
    #[command(flatten)]
    server: Server,
    /// The account's token or session token.
    #[arg(long, value_name = "T", env = "HAKEM_TOKEN", hide_env_values = true)]
    token: String,
    /// pentago, quoridor or pente.
    #[arg(long, value_name = "G", default_value = "pentago")]
    game: GameKind,
    /// The rules (preset): pentago tr or classic; quoridor standard; pente tournament or free.
    #[arg(long, value_name = "V")]
    variant: Option<String>,
    /// Sets in the round.
    #[arg(long, value_name = "N", default_value_t = 3)]
    sets: u8,
    /// Time per player per set, MM:SS (or whole minutes), or `none`.
    #[arg(long, value_name = "MM:SS|none", value_parser = parse_clock)]
    clock: Option<Clock>,
    /// Both players' ratings change.
    #[arg(long)]
    rated: bool,
    /// Challenge this account only.
    #[arg(long, value_name = "NAME")]
    to: Option<String>,
    /// One JSON line: {"match":..,"seat":..,"seat_token":..}.
    #[arg(long)]
    json: bool,
}

#[derive(Args, Debug)]
pub struct AcceptArgs {
    #[command(flatten)]
    server: Server,
    /// The account's token or session token.
    #[arg(long, value_name = "T", env = "HAKEM_TOKEN", hide_env_values = true)]
    token: String,
    /// The seek's id.
    seek: String,
    /// One JSON line: {"match":..,"seat":..,"seat_token":..}.
    #[arg(long)]
    json: bool,
}

pub async fn run(command: LobbyCommand) -> ExitCode {
    let result = match command {
        LobbyCommand::List(args) => list(args).await,
        LobbyCommand::Seek(args) => seek(args).await,
        LobbyCommand::Accept(args) => accept(args).await,
        LobbyCommand::Rematch(args) => rematch(args).await,
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("hakem: {message}");
            ExitCode::from(FAILURE)
        }
    }
}

/// One line a seek: its id, then what it offers.
fn line(seek: &SeekView) -> String {
    let clock = match seek.clock {
        Some(clock) => format!(
            "{}:{:02}",
            clock.initial_ms / 60_000,
            clock.initial_ms / 1000 % 60
        ),
        None => "untimed".into(),
    };
    let mut text = format!(
        "{}  {}  {} {}  {} sets  {}  {}",
        seek.seek,
        seek.account,
        seek.game,
        seek.variant,
        seek.sets,
        clock,
        if seek.rated { "rated" } else { "casual" }
    );
    if let Some(to) = &seek.to {
        text.push_str(&format!("  challenge to {to}"));
    }
    text
}

async fn list(args: ListArgs) -> Result<(), String> {
    match ask(
        &args.server.server,
        args.token.as_deref(),
        ClientMessage::WatchLobby,
    )
    .await?
    {
        ServerMessage::Lobby { seeks, .. } => {
            if seeks.is_empty() {
                eprintln!("no open seek");
            }
            for seek in &seeks {
                println_or_quit!("{}", line(seek));
            }
            Ok(())
        }
        other => Err(format!("unexpected reply from the server: {other:?}")),
    }
}

/// Where the player now plays.
struct Seated {
    match_id: String,
    seat: hakem_protocol::Seat,
    seat_token: String,
}

/// The seat a `your_match` frame gives.
fn seated_of(incoming: Incoming) -> Option<Seated> {
    match incoming {
        Incoming::Message(ServerMessage::YourMatch {
            match_id,
            seat,
            seat_token,
            ..
        }) => Some(Seated {
            match_id,
            seat,
            seat_token,
        }),
        _ => None,
    }
}

fn print_seated(server: &str, seated: &Seated, json_out: bool) {
    if json_out {
        println_or_quit!(
            "{}",
            json!({"match": seated.match_id, "seat": seated.seat, "seat_token": seated.seat_token})
        );
    } else {
        println_or_quit!(
            "match {}: you play {}. Play it with:\n  hakem play --server {} --match {} --token {}",
            seated.match_id,
            seated.seat,
            server,
            seated.match_id,
            seated.seat_token
        );
    }
}

fn refused(incoming: &Incoming) -> Option<String> {
    match incoming {
        Incoming::Message(ServerMessage::Error(e)) => Some(format!(
            "the server refused: {} ({})",
            e.message,
            e.code.as_str()
        )),
        _ => None,
    }
}

async fn seek(args: SeekArgs) -> Result<(), String> {
    let clock = clock_config(args.clock, None)?;
    let message = ClientMessage::Seek(NewSeek {
        game: args.game.as_str().to_string(),
        variant: args.variant.clone(),
        sets: args.sets,
        clock,
        rated: args.rated,
        to: args.to.clone(),
    });
    let mut conn = Connection::open_as(&args.server.server, &args.token)
        .await
        .map_err(|e| e.0)?;
    // The lobby first: its `seek_removed` says which match the seek became (a `your_match`
    // alone could be any new match of the account, made from another of its connections).
    conn.send(ClientMessage::WatchLobby)
        .await
        .map_err(|e| e.0)?;
    let id = conn.send(message).await.map_err(|e| e.0)?;
    let mut posted: Option<String> = None;
    let seated = seat_in_new_match(&mut conn, id, |incoming, reply| match incoming {
        Incoming::Message(ServerMessage::SeekPosted { seek, .. }) if reply => {
            eprintln!(
                "seek posted: {}; waiting for someone to accept it",
                line(seek)
            );
            posted = Some(seek.seek.clone());
            Ok(None)
        }
        Incoming::Message(ServerMessage::SeekRemoved { seek, match_id })
            if Some(seek) == posted.as_ref() =>
        {
            match match_id {
                Some(m) => Ok(Some(m.clone())),
                None => Err("the seek was withdrawn".into()),
            }
        }
        _ => Ok(None),
    })
    .await?;
    print_seated(&args.server.server, &seated, args.json);
    Ok(())
}

async fn accept(args: AcceptArgs) -> Result<(), String> {
    let mut conn = Connection::open_as(&args.server.server, &args.token)
        .await
        .map_err(|e| e.0)?;
    let id = conn
        .send(ClientMessage::AcceptSeek {
            seek: args.seek.clone(),
        })
        .await
        .map_err(|e| e.0)?;
    let seated = seat_in_new_match(&mut conn, id, |incoming, reply| match incoming {
        Incoming::Message(ServerMessage::Ack { match_id, .. }) if reply => Ok(match_id.clone()),
        _ => Ok(None),
    })
    .await?;
    print_seated(&args.server.server, &seated, args.json);
    Ok(())
}

async fn rematch(args: RematchArgs) -> Result<(), String> {
    let (mut conn, _) = Connection::handshake(
        &args.server.server,
        None,
        &[hakem_protocol::Feature::Rematch],
        std::time::Duration::from_secs(10),
    )
    .await
    .map_err(|e| e.message)?;
    let joined = conn
        .request(ClientMessage::Join {
            match_id: args.match_id.clone(),
            seat_token: Some(args.token.clone()),
            arbiter_token: None,
            since_seq: None,
            legal_moves: false,
            history: false,
        })
        .await
        .map_err(|e| e.0)?;
    if let Some(why) = refused(&joined) {
        return Err(why);
    }
    let id = conn
        .send(ClientMessage::OfferRematch {
            match_id: args.match_id.clone(),
        })
        .await
        .map_err(|e| e.0)?;
    let deadline = tokio::time::Instant::now() + args.wait;
    loop {
        let received = tokio::time::timeout_at(deadline, conn.recv()).await;
        let Ok(received) = received else {
            return Err(format!(
                "no rematch: the opponent did not offer one within {}",
                crate::follow::format_wait(args.wait)
            ));
        };
        let Some(incoming) = received.map_err(|e| e.0)? else {
            return Err("the server closed the connection".into());
        };
        let reply = reply_to(&incoming) == Some(id);
        if reply {
            if let Some(why) = refused(&incoming) {
                return Err(why);
            }
        }
        match incoming {
            Incoming::Message(ServerMessage::Rematch {
                match_id,
                new_match,
                seat,
                seat_token,
                ..
            }) if match_id == args.match_id => {
                let seated = Seated {
                    match_id: new_match,
                    seat,
                    seat_token,
                };
                print_seated(&args.server.server, &seated, args.json);
                return Ok(());
            }
            Incoming::Message(ServerMessage::Ack { match_id, .. })
                if reply && match_id.as_deref() == Some(args.match_id.as_str()) =>
            {
                eprintln!("rematch offered; waiting for the opponent to offer one too");
            }
            _ => {}
        }
    }
}

/// Reads frames until the seat of the new match is known. `names` looks at each frame (`true`
/// for the reply to request `id`, an error reply having ended the wait already) and gives the
/// new match's id once a frame names it; its `your_match` may come before or after that.
async fn seat_in_new_match(
    conn: &mut Connection,
    id: u64,
    mut names: impl FnMut(&Incoming, bool) -> Result<Option<String>, String>,
) -> Result<Seated, String> {
    let mut announced: Vec<Seated> = Vec::new();
    let mut new_match: Option<String> = None;
    loop {
        if let Some(new) = &new_match {
            if let Some(i) = announced.iter().position(|s| &s.match_id == new) {
                return Ok(announced.swap_remove(i));
            }
        }
        let Some(incoming) = conn.recv().await.map_err(|e| e.0)? else {
            return Err("the server closed the connection".into());
        };
        let reply = reply_to(&incoming) == Some(id);
        if reply {
            if let Some(why) = refused(&incoming) {
                return Err(why);
            }
        }
        match names(&incoming, reply)? {
            Some(named) => new_match = Some(named),
            None if !reply => announced.extend(seated_of(incoming)),
            None => {}
        }
    }
}
