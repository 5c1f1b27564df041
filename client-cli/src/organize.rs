//! `hakem tournament create|add|start|pair-next|withdraw|bye|forfeit|show|standings|trf` on a
//! live server: the organizer's and the arbiter's side of a Swiss tournament.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use hakem_games::{AnyPosition, GameKind};
use hakem_protocol::tournament::{
    ByeKind, CreateTournament, NewPlayer, PairingPreview, PairingRules, PlayerToken, RoundView,
    TiebreakEdition, TournamentStatus, TournamentView,
};
use hakem_protocol::{ClientMessage, Points, Seat, ServerMessage};
use serde_json::json;

use crate::connection::{parse_server_url, Connection, Incoming, DEFAULT_SERVER};
use crate::create::{clock_config, parse_clock, Clock};
use crate::session::FAILURE;
use crate::standings::{print_standings, StandingRow};

const USAGE: u8 = 2;

/// How long a tournament command may take on the server.
const PATIENCE: std::time::Duration = std::time::Duration::from_secs(120);

/// The server and the token every live tournament command needs.
#[derive(Args, Debug, Clone)]
pub struct Server {
    /// The server's WebSocket address.
    #[arg(long, value_name = "URL", env = "HAKEM_SERVER", hide_env_values = true,
          default_value = DEFAULT_SERVER, value_parser = parse_server_url)]
    pub server: String,
}

#[derive(Args, Debug, Clone)]
pub struct Authority {
    #[command(flatten)]
    pub server: Server,
    /// The organizer's token or the tournament's arbiter token (a player's own account token
    /// for `withdraw` and `bye`).
    #[arg(long, value_name = "T", env = "HAKEM_TOKEN", hide_env_values = true)]
    pub token: String,
}

#[derive(Args, Debug)]
pub struct CreateArgs {
    #[command(flatten)]
    pub auth: Authority,
    /// The tournament's name.
    #[arg(long)]
    pub name: String,
    /// The planned number of rounds.
    #[arg(long, value_name = "N")]
    pub rounds: u32,
    /// Players, one per line: `surname,given[,account]` (a header line `surname,...` and lines
    /// starting with `#` are skipped; fields may be quoted).
    #[arg(long, value_name = "FILE.csv")]
    pub players: Option<PathBuf>,
    /// pentago, quoridor or pente.
    #[arg(long, value_name = "G", default_value = "pentago")]
    pub game: GameKind,
    #[arg(long, value_name = "V")]
    pub variant: Option<String>,
    /// Sets per round (3 unless given).
    #[arg(long, value_name = "N", default_value_t = 3)]
    pub sets: u8,
    /// Time per player per set, MM:SS (or whole minutes), or `none` (15:00 unless given).
    #[arg(long, value_name = "MM:SS|none", value_parser = parse_clock)]
    pub clock: Option<Clock>,
    /// Seconds added at each press.
    #[arg(long, value_name = "S")]
    pub increment: Option<u64>,
    /// Warnings that lose the round.
    #[arg(long, value_name = "N", default_value_t = 3)]
    pub warnings: u8,
    /// The edition of the FIDE Dutch system.
    #[arg(long, default_value = "dutch2025", value_parser = ["dutch2025", "dutch2017"])]
    pub pairing: String,
    /// The edition of FIDE C.07 for tie-breaks.
    #[arg(long, default_value = "2026", value_parser = ["2026", "2024"])]
    pub edition: String,
    /// Tie-break order, comma separated.
    #[arg(long, default_value = "BH-C1,BH,SB,DE,WIN")]
    pub tiebreaks: String,
    /// The seat of the first-ranked player in round 1 (p1 = white, the first mover of set 1);
    /// drawn by lot at the start if not given.
    #[arg(long, value_name = "p1|p2", value_parser = parse_seat)]
    pub colour_lot: Option<Seat>,
    /// Pair each round as soon as the previous one has ended.
    #[arg(long)]
    pub auto_pair: bool,
    /// Half-point byes a player may take.
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub max_half_byes: u32,
    /// Points of the pairing-allocated bye (odd number of players): 1, 0.5 or 0.
    #[arg(long, value_name = "P", default_value = "1", value_parser = parse_points)]
    pub bye_points: Points,
    /// Spectators see every board this many seconds behind (players and arbiters live).
    #[arg(long, value_name = "S", default_value_t = 0)]
    pub spectator_delay: u32,
    /// Spectators see every board this many moves behind.
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub spectator_delay_moves: u32,
    /// The rounds change the players' ratings (boards of two player accounts).
    #[arg(long)]
    pub rated: bool,
    /// One JSON line: {"tournament":..,"arbiter_token":..,"players":[{"id","name","account","token"}]}.
    #[arg(long)]
    pub json: bool,
}

fn parse_points(text: &str) -> Result<Points, String> {
    match text {
        "1" | "1.0" => Ok(Points::ONE),
        "0.5" | ".5" | "1/2" => Ok(Points::HALF),
        "0" | "0.0" => Ok(Points::ZERO),
        _ => Err(format!("{text:?} is 1, 0.5 or 0")),
    }
}

fn parse_seat(text: &str) -> Result<Seat, String> {
    match text {
        "p1" | "white" => Ok(Seat::P1),
        "p2" | "black" => Ok(Seat::P2),
        _ => Err(format!("{text:?} is p1 or p2")),
    }
}

#[derive(Args, Debug)]
pub struct TournamentArgs {
    #[command(flatten)]
    pub auth: Authority,
    #[arg(long, value_name = "ID")]
    pub tournament: String,
}

#[derive(Args, Debug)]
pub struct AddArgs {
    #[command(flatten)]
    pub target: TournamentArgs,
    #[arg(long)]
    pub surname: String,
    #[arg(long, default_value = "")]
    pub given: String,
    /// An existing account to seat (a bot's, say); otherwise the server makes one.
    #[arg(long)]
    pub account: Option<String>,
}

#[derive(Args, Debug)]
pub struct StartArgs {
    #[command(flatten)]
    pub target: TournamentArgs,
    /// The seat of the first-ranked player in round 1, if not drawn by lot.
    #[arg(long, value_name = "p1|p2", value_parser = parse_seat)]
    pub colour_lot: Option<Seat>,
}

#[derive(Args, Debug)]
pub struct PairNextArgs {
    #[command(flatten)]
    pub target: TournamentArgs,
    /// Show the next round as it would be paired now, without publishing it, and the command
    /// that publishes exactly that pairing.
    #[arg(long, conflicts_with = "pairing")]
    pub preview: bool,
    /// Publish only this pairing (the identifier `--preview` printed): refused, with the
    /// pairing as it is now, if anything changed since.
    #[arg(long, value_name = "ID")]
    pub pairing: Option<String>,
}

#[derive(Args, Debug)]
pub struct PlayerArgs {
    #[command(flatten)]
    pub target: TournamentArgs,
    /// The player's pairing number.
    #[arg(long, value_name = "N")]
    pub player: u32,
}

#[derive(Args, Debug)]
pub struct ByeArgs {
    #[command(flatten)]
    pub player: PlayerArgs,
    /// The round of the half-point bye (not yet paired).
    #[arg(long, value_name = "R")]
    pub round: u32,
}

#[derive(Args, Debug)]
pub struct ForfeitArgs {
    #[command(flatten)]
    pub player: PlayerArgs,
    /// The round the forfeit is for; refused unless it is the current one.
    #[arg(long, value_name = "R")]
    pub round: Option<u32>,
    /// Neither player of the board showed up.
    #[arg(long)]
    pub double: bool,
}

#[derive(Args, Debug)]
pub struct ResultArgs {
    #[command(flatten)]
    pub target: TournamentArgs,
    #[arg(long, value_name = "R")]
    pub round: u32,
    #[arg(long, value_name = "B")]
    pub board: u32,
    /// `1-0`, `0-1`, `1/2-1/2`, or a forfeit: `+-`, `-+`, `--`.
    #[arg(long, value_name = "RESULT", allow_hyphen_values = true)]
    pub result: String,
}

#[derive(Args, Debug)]
pub struct AssistantArgs {
    #[command(flatten)]
    pub target: TournamentArgs,
    /// The assistant arbiter's name.
    #[arg(long)]
    pub name: String,
    /// Board numbers, in every round: `1-5,8`.
    #[arg(long, value_name = "LIST", value_parser = parse_boards)]
    pub boards: Boards,
}

/// Board numbers given as one list (clap would read a `Vec` as repeated values).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Boards(pub Vec<u32>);

/// `1-5,8` as board numbers.
fn parse_boards(text: &str) -> Result<Boards, String> {
    let mut boards = Vec::new();
    for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let number = |s: &str| {
            s.trim()
                .parse::<u32>()
                .map_err(|_| format!("{s:?} is not a board number"))
        };
        match part.split_once('-') {
            Some((from, to)) => {
                let (from, to) = (number(from)?, number(to)?);
                if from > to || to - from > 1000 {
                    return Err(format!("{part:?} is not a range of boards"));
                }
                boards.extend(from..=to);
            }
            None => boards.push(number(part)?),
        }
    }
    if boards.is_empty() {
        return Err("no boards: say which, such as 1-5,8".into());
    }
    Ok(Boards(boards))
}

#[derive(Args, Debug)]
pub struct ViewArgs {
    #[command(flatten)]
    pub server: Server,
    #[arg(long, value_name = "ID")]
    pub tournament: String,
}

/// One tournament command on the server.
pub enum Live {
    Create(CreateArgs),
    Add(AddArgs),
    Start(StartArgs),
    PairNext(PairNextArgs),
    Withdraw(PlayerArgs),
    Bye(ByeArgs),
    Forfeit(ForfeitArgs),
    Result(ResultArgs),
    Assistant(AssistantArgs),
    Show(ViewArgs),
    Watch(ViewArgs),
    Trf(ViewArgs),
    Standings { view: ViewArgs, json: bool },
}

fn fail(message: impl std::fmt::Display) -> ExitCode {
    eprintln!("hakem: {message}");
    ExitCode::from(FAILURE)
}

/// Sends one request (after `hello` with `token`) and returns the reply.
pub(crate) async fn ask(
    server: &str,
    token: Option<&str>,
    message: ClientMessage,
) -> Result<ServerMessage, String> {
    let mut replies = ask_each(server, token, vec![message]).await?;
    Ok(replies.remove(0))
}

/// Sends requests one after another on one connection (after `hello` with `token`) and returns
/// their replies, in order; the first refusal ends it.
pub(crate) async fn ask_each(
    server: &str,
    token: Option<&str>,
    messages: Vec<ClientMessage>,
) -> Result<Vec<ServerMessage>, String> {
    let mut conn = match token {
        Some(token) => Connection::open_as(server, token).await,
        None => Connection::open(server).await,
    }
    .map_err(|e| e.0)?;
    let mut replies = Vec::with_capacity(messages.len());
    let mut outcome = Ok(());
    for message in messages {
        // Pairing a large round and creating its matches can take a while.
        match conn.request_within(message, PATIENCE).await {
            Ok(Incoming::Message(ServerMessage::Error(error))) => {
                outcome = Err(refusal(Incoming::Message(ServerMessage::Error(error))));
            }
            Ok(Incoming::Message(message)) => replies.push(message),
            Ok(other) => outcome = Err(refusal(other)),
            Err(e) => outcome = Err(e.0),
        }
        if outcome.is_err() {
            break;
        }
    }
    let _ = tokio::time::timeout(std::time::Duration::from_secs(1), conn.close()).await;
    outcome.map(|()| replies)
}

async fn ask_view(auth: &Authority, message: ClientMessage) -> Result<TournamentView, String> {
    match ask(&auth.server.server, Some(&auth.token), message).await? {
        ServerMessage::Tournament { view, .. } => Ok(*view),
        other => Err(format!("unexpected reply from the server: {other:?}")),
    }
}

pub async fn run(live: Live) -> ExitCode {
    let result = match live {
        Live::Create(args) => return create(args).await,
        Live::Add(args) => add(args).await,
        Live::Start(args) => {
            let t = &args.target;
            ask_view(
                &t.auth,
                ClientMessage::StartTournament {
                    tournament: t.tournament.clone(),
                    colour_lot: args.colour_lot,
                    arbiter_token: Some(t.auth.token.clone()),
                },
            )
            .await
            .map(|view| {
                if let Some(lot) = view.colour_lot {
                    println_or_quit!(
                        "colour lot: player 1 has {} in round 1 ({})",
                        lot.seat,
                        if lot.drawn {
                            "drawn by the server"
                        } else {
                            "given"
                        }
                    );
                }
                print_round(&view, view.current_round);
            })
        }
        Live::PairNext(args) => pair_next(&args).await,
        Live::Result(r) => ask_view(
            &r.target.auth,
            ClientMessage::SetResult {
                tournament: r.target.tournament.clone(),
                round: r.round,
                board: r.board,
                result: r.result.clone(),
                arbiter_token: Some(r.target.auth.token.clone()),
            },
        )
        .await
        .map(|view| print_round(&view, r.round)),
        Live::Assistant(a) => {
            let message = ClientMessage::AddAssistant {
                tournament: a.target.tournament.clone(),
                name: a.name.clone(),
                boards: a.boards.0.clone(),
                arbiter_token: Some(a.target.auth.token.clone()),
            };
            let auth = &a.target.auth;
            match ask(&auth.server.server, Some(&auth.token), message).await {
                Ok(ServerMessage::AssistantAdded {
                    name,
                    boards,
                    token,
                    ..
                }) => {
                    let list: Vec<String> = boards.iter().map(u32::to_string).collect();
                    println_or_quit!("assistant arbiter {name}, boards {}", list.join(" "));
                    println_or_quit!("  token  {token}   (shown once: give it to {name})");
                    println_or_quit!(
                        "  they run a board with: hakem arbiter --match MATCH --token {token}"
                    );
                    Ok(())
                }
                Ok(other) => Err(format!("unexpected reply from the server: {other:?}")),
                Err(e) => Err(e),
            }
        }
        Live::Withdraw(p) => {
            // Before the start the numbers move as players come and go: say whom it struck.
            let view = ViewArgs {
                server: p.target.auth.server.clone(),
                tournament: p.target.tournament.clone(),
            };
            let before = get_view(&view).await.ok();
            ask_view(
                &p.target.auth,
                ClientMessage::Withdraw {
                    tournament: p.target.tournament.clone(),
                    player: p.player,
                    arbiter_token: Some(p.target.auth.token.clone()),
                },
            )
            .await
            .map(|after| match player_line(&after, p.player) {
                Some((name, Some(from))) if after.status != TournamentStatus::Registration => {
                    println_or_quit!("{name} withdrawn: not paired from round {from}")
                }
                _ => println_or_quit!(
                    "{} struck from the list",
                    before
                        .as_ref()
                        .and_then(|v| player_line(v, p.player))
                        .map_or(format!("player {}", p.player), |(name, _)| name)
                ),
            })
        }
        Live::Bye(b) => ask_view(
            &b.player.target.auth,
            ClientMessage::RequestBye {
                tournament: b.player.target.tournament.clone(),
                player: b.player.player,
                round: b.round,
                arbiter_token: Some(b.player.target.auth.token.clone()),
            },
        )
        .await
        .map(|view| {
            let name = player_line(&view, b.player.player).map(|(n, _)| n);
            println_or_quit!(
                "{}: half-point bye in round {}",
                name.unwrap_or_default(),
                b.round
            );
        }),
        Live::Forfeit(f) => ask_view(
            &f.player.target.auth,
            ClientMessage::Forfeit {
                tournament: f.player.target.tournament.clone(),
                player: f.player.player,
                round: f.round,
                double: f.double,
                arbiter_token: Some(f.player.target.auth.token.clone()),
            },
        )
        .await
        .map(|view| {
            // Automatic pairing may have paired the next round already: show the forfeit's.
            let round = view
                .pairings
                .iter()
                .rev()
                .find(|r| {
                    r.boards.iter().any(|b| {
                        (b.p1 == f.player.player || b.p2 == f.player.player)
                            && matches!(b.result.as_deref(), Some("+-" | "-+" | "--"))
                    })
                })
                .map_or(view.current_round, |r| r.round);
            print_round(&view, round)
        }),
        Live::Watch(v) => watch(&v).await,
        Live::Show(v) => get_view(&v).await.map(|view| {
            let status = match view.status {
                TournamentStatus::Registration => "registration",
                TournamentStatus::Running => "running",
                TournamentStatus::Finished => "finished",
            };
            println_or_quit!(
                "{} ({} {}): {status}, round {} of {}",
                view.settings.name,
                view.settings.game,
                view.settings.variant,
                view.current_round,
                view.settings.rounds
            );
            for round in 1..=view.current_round {
                print_round(&view, round);
            }
        }),
        Live::Standings { view, json } => get_view(&view).await.map(|view| {
            let rows: Vec<StandingRow> = view
                .standings
                .iter()
                .map(|s| StandingRow {
                    id: s.id,
                    rank: s.rank,
                    name: s.name.clone(),
                    points: s.points.as_f64(),
                    tiebreaks: view
                        .settings
                        .tiebreaks
                        .iter()
                        .map(|code| (code.clone(), s.tiebreaks.get(code).copied().unwrap_or(0.0)))
                        .collect(),
                })
                .collect();
            print_standings(&rows, json);
        }),
        Live::Trf(v) => {
            let message = ClientMessage::ExportTrf {
                tournament: v.tournament.clone(),
            };
            match ask(&v.server.server, None, message).await {
                Ok(ServerMessage::Trf { trf, .. }) => {
                    print_or_quit!("{trf}");
                    Ok(())
                }
                Ok(other) => Err(format!("unexpected reply from the server: {other:?}")),
                Err(e) => Err(e),
            }
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => fail(e),
    }
}

/// `pair-next`: publishes the next round; with `--preview`, shows it unpublished and says how
/// to publish exactly it; with `--pairing`, publishes only that pairing.
async fn pair_next(args: &PairNextArgs) -> Result<(), String> {
    let t = &args.target;
    let request = if args.preview {
        ClientMessage::PreviewPairing {
            tournament: t.tournament.clone(),
            arbiter_token: Some(t.auth.token.clone()),
        }
    } else {
        ClientMessage::PairNext {
            tournament: t.tournament.clone(),
            arbiter_token: Some(t.auth.token.clone()),
            pairing: args.pairing.clone(),
        }
    };
    let mut conn = Connection::open_as(&t.auth.server.server, &t.auth.token)
        .await
        .map_err(|e| e.0)?;
    // The names, for the preview (a refused pairing shows the new one too).
    let names = ClientMessage::GetTournament {
        tournament: t.tournament.clone(),
    };
    let view = match conn.request(names).await.map_err(|e| e.0)? {
        Incoming::Message(ServerMessage::Tournament { view, .. }) => *view,
        other => return Err(refusal(other)),
    };
    let reply = conn
        .request_within(request, PATIENCE)
        .await
        .map_err(|e| e.0);
    let _ = tokio::time::timeout(std::time::Duration::from_secs(1), conn.close()).await;
    match reply? {
        Incoming::Message(ServerMessage::Tournament { view, .. }) => {
            print_round(&view, view.current_round);
            Ok(())
        }
        Incoming::Message(ServerMessage::PairingPreview { preview, .. }) => {
            print_preview(args, &view, &preview);
            Ok(())
        }
        Incoming::Message(ServerMessage::Error(error)) if error.preview.is_some() => {
            let message = refusal(Incoming::Message(ServerMessage::Error(error.clone())));
            if let Some(preview) = &error.preview {
                print_preview(args, &view, preview);
            }
            Err(message)
        }
        other => Err(refusal(other)),
    }
}

/// A pairing not yet published, its identifier, and the command that publishes it.
fn print_preview(args: &PairNextArgs, view: &TournamentView, preview: &PairingPreview) {
    let t = &args.target;
    println_or_quit!(
        "round {} as it would be paired now (not published):",
        preview.round.round
    );
    print_round_view(view, &preview.round);
    if preview.round.search_stopped {
        println_or_quit!("the pairing search stopped at its budget: check this pairing");
    }
    if preview.pairing.is_empty() {
        // An older server names no pairing.
        return;
    }
    println_or_quit!("pairing {}", preview.pairing);
    // Copied as it stands: the server and the token only when they were not in the
    // environment, so that a token kept there is not shown.
    let mut command = String::from("hakem tournament pair-next");
    if std::env::var("HAKEM_SERVER").ok().as_deref() != Some(t.auth.server.server.as_str()) {
        command += &format!(" --server {}", t.auth.server.server);
    }
    if std::env::var("HAKEM_TOKEN").ok().as_deref() != Some(t.auth.token.as_str()) {
        command += &format!(" --token {}", t.auth.token);
    }
    command += &format!(
        " --tournament {} --pairing {}",
        t.tournament, preview.pairing
    );
    println_or_quit!("publish exactly this pairing with:\n  {command}");
}

/// Follows the tournament as the server pushes it (`watch_tournament`): a line for each paired
/// round (with its boards), each result, each withdrawal, and the end with the standings' top.
/// It never asks again; it ends with the tournament, or when the connection is lost.
async fn watch(v: &ViewArgs) -> Result<(), String> {
    let mut conn = Connection::open(&v.server.server).await.map_err(|e| e.0)?;
    let message = ClientMessage::WatchTournament {
        tournament: v.tournament.clone(),
    };
    let mut view = match conn.request(message).await.map_err(|e| e.0)? {
        Incoming::Message(ServerMessage::Tournament { view, .. }) => *view,
        other => return Err(refusal(other)),
    };
    println_or_quit!(
        "watching {} ({}): round {} of {}, {} of them complete",
        view.settings.name,
        view.id,
        view.current_round,
        view.settings.rounds,
        view.completed_rounds
    );
    // Nobody reads it any more (`| head`): between rounds nothing may be written for a long
    // time, so the closed pipe is looked for rather than waited for, by one watch for the
    // whole tournament.
    let stdout_closed = crate::output::stdout_closed();
    tokio::pin!(stdout_closed);
    while view.status != TournamentStatus::Finished {
        let frame = tokio::select! {
            frame = conn.recv() => frame.map_err(|e| e.0)?,
            () = &mut stdout_closed => return Ok(()),
        };
        let next = match frame {
            None => return Err("the server closed the connection".into()),
            Some(Incoming::Message(ServerMessage::Tournament { view, .. })) => *view,
            Some(_) => continue,
        };
        for line in news(&view, &next) {
            println_or_quit!("{line}");
        }
        if next.current_round > view.current_round {
            print_round(&next, next.current_round);
        }
        view = next;
    }
    let top: Vec<String> = view
        .standings
        .iter()
        .filter(|s| s.rank == 1)
        .map(|s| s.name.clone())
        .collect();
    println_or_quit!(
        "the tournament has finished; first place: {}",
        top.join(", ")
    );
    conn.close().await;
    Ok(())
}

/// What changed between two views of a tournament, one line each.
fn news(before: &TournamentView, after: &TournamentView) -> Vec<String> {
    let mut lines = Vec::new();
    for round in &after.pairings {
        let old = before.pairings.iter().find(|r| r.round == round.round);
        for b in &round.boards {
            let was = old.and_then(|r| r.boards.iter().find(|x| x.board == b.board));
            if let Some(result) = &b.result {
                if was.and_then(|x| x.result.as_ref()) != Some(result) {
                    lines.push(format!(
                        "round {} board {}: {} - {} {result}",
                        round.round,
                        b.board,
                        name_of(after, b.p1),
                        name_of(after, b.p2)
                    ));
                }
            }
        }
    }
    for p in &after.players {
        let was = before.players.iter().find(|x| x.id == p.id);
        if p.withdrawn_from.is_some() && was.and_then(|x| x.withdrawn_from).is_none() {
            lines.push(format!("{} ({}) withdraws", p.name, p.id));
        }
        if was.is_none() {
            lines.push(format!("{} enters as number {}", p.name, p.id));
        }
    }
    if after.completed_rounds > before.completed_rounds {
        lines.push(format!(
            "every result of round {} is in",
            after.completed_rounds
        ));
    }
    lines
}

async fn get_view(v: &ViewArgs) -> Result<TournamentView, String> {
    let message = ClientMessage::GetTournament {
        tournament: v.tournament.clone(),
    };
    match ask(&v.server.server, None, message).await? {
        ServerMessage::Tournament { view, .. } => Ok(*view),
        other => Err(format!("unexpected reply from the server: {other:?}")),
    }
}

fn player_line(view: &TournamentView, id: u32) -> Option<(String, Option<u32>)> {
    view.players
        .iter()
        .find(|p| p.id == id)
        .map(|p| (p.name.clone(), p.withdrawn_from))
}

fn name_of(view: &TournamentView, id: u32) -> String {
    player_line(view, id).map(|(n, _)| n).unwrap_or_default()
}

/// A round's boards (p1 first), results and byes.
fn print_round(view: &TournamentView, round: u32) {
    let Some(r) = view.pairings.iter().find(|r| r.round == round) else {
        return;
    };
    println_or_quit!("round {round}");
    print_round_view(view, r);
}

/// The boards and byes of `r`, with the names of `view`.
fn print_round_view(view: &TournamentView, r: &RoundView) {
    for b in &r.boards {
        println_or_quit!(
            "  {:>3}. {:>4} {:<28} - {:>4} {:<28} {:<8} {}",
            b.board,
            b.p1,
            name_of(view, b.p1),
            b.p2,
            name_of(view, b.p2),
            b.result.as_deref().unwrap_or("playing"),
            b.match_id
        );
    }
    for bye in &r.byes {
        let kind = match bye.kind {
            ByeKind::Pairing => "pairing-allocated bye",
            ByeKind::Half => "half-point bye",
            ByeKind::Zero => "not yet entered",
            ByeKind::Absent => "withdrawn",
        };
        println_or_quit!(
            "       {:>4} {:<28} {kind} ({})",
            bye.player,
            name_of(view, bye.player),
            bye.points.as_f64()
        );
    }
}

async fn add(args: AddArgs) -> Result<(), String> {
    let t = &args.target;
    let message = ClientMessage::AddPlayers {
        tournament: t.tournament.clone(),
        players: vec![NewPlayer {
            surname: args.surname.clone(),
            given: args.given.clone(),
            account: args.account.clone(),
        }],
        arbiter_token: Some(t.auth.token.clone()),
    };
    match ask(&t.auth.server.server, Some(&t.auth.token), message).await? {
        ServerMessage::PlayersAdded { players, .. } => {
            for player in players {
                println_or_quit!(
                    "player {} {} (account {}){}",
                    player.id,
                    player.name,
                    player.account,
                    player
                        .token
                        .map(|token| format!(", token {token}"))
                        .unwrap_or_default()
                );
            }
            Ok(())
        }
        other => Err(format!("unexpected reply from the server: {other:?}")),
    }
}

/// Splits a player list into pieces whose frames stay well under the protocol's 16 KiB.
fn batches(players: Vec<NewPlayer>) -> Vec<Vec<NewPlayer>> {
    const BUDGET: usize = 12 * 1024;
    let mut out: Vec<Vec<NewPlayer>> = vec![Vec::new()];
    let mut size = 0;
    for player in players {
        let bytes = serde_json::to_string(&player).map_or(BUDGET, |s| s.len() + 1);
        if size + bytes > BUDGET && out.last().is_some_and(|b| !b.is_empty()) {
            out.push(Vec::new());
            size = 0;
        }
        size += bytes;
        if let Some(last) = out.last_mut() {
            last.push(player);
        }
    }
    out
}

/// A failed creation: what was made before the error, if anything.
struct Partial {
    created: Option<(String, String, Vec<PlayerToken>)>,
    error: String,
}

/// Creates the tournament with the first batch of players and adds the others; returns the
/// tournament id, its arbiter token and every player with their final number. A refusal names
/// the player by their place among all players (1 = the first).
async fn create_with_players(
    auth: &Authority,
    mut create: CreateTournament,
    players: Vec<NewPlayer>,
) -> Result<(String, String, Vec<PlayerToken>), Partial> {
    let nothing = |error: String| Partial {
        created: None,
        error,
    };
    let mut batches = batches(players).into_iter();
    create.players = batches.next().unwrap_or_default();
    let mut offset = create.players.len();
    let mut conn = Connection::open_as(&auth.server.server, &auth.token)
        .await
        .map_err(|e| nothing(e.0))?;
    let reply = conn
        .request_within(ClientMessage::CreateTournament(create), PATIENCE)
        .await
        .map_err(|e| nothing(e.0))?;
    let (id, arbiter_token, mut players) = match reply {
        Incoming::Message(ServerMessage::TournamentCreated {
            tournament,
            arbiter_token,
            players,
            ..
        }) => (tournament, arbiter_token, players),
        other => return Err(nothing(refusal(other))),
    };
    let outcome: Result<(), String> = async {
        let mut more = false;
        for batch in batches {
            more = true;
            let size = batch.len();
            let message = ClientMessage::AddPlayers {
                tournament: id.clone(),
                players: batch,
                arbiter_token: None,
            };
            match conn
                .request_within(message, PATIENCE)
                .await
                .map_err(|e| e.0)?
            {
                Incoming::Message(ServerMessage::PlayersAdded { players: added, .. }) => {
                    players.extend(added)
                }
                other => return Err(renumbered(&refusal(other), offset)),
            }
            offset += size;
        }
        if more {
            // Numbers follow the alphabet until the start: read the final ones.
            let message = ClientMessage::GetTournament {
                tournament: id.clone(),
            };
            let view = match conn.request(message).await.map_err(|e| e.0)? {
                Incoming::Message(ServerMessage::Tournament { view, .. }) => view,
                other => return Err(refusal(other)),
            };
            for p in &mut players {
                if let Some(v) = view.players.iter().find(|v| v.account == p.account) {
                    p.id = v.id;
                }
            }
            players.sort_by_key(|p| p.id);
        }
        Ok(())
    }
    .await;
    let _ = tokio::time::timeout(std::time::Duration::from_secs(1), conn.close()).await;
    match outcome {
        Ok(()) => Ok((id, arbiter_token, players)),
        Err(error) => Err(Partial {
            created: Some((id, arbiter_token, players)),
            error,
        }),
    }
}

/// The server counts players within one batch ("player 3: ..."); the person counts them in
/// the whole list.
fn renumbered(message: &str, offset: usize) -> String {
    let Some(start) = message.find("player ") else {
        return message.to_string();
    };
    let rest = &message[start + "player ".len()..];
    let digits = rest.chars().take_while(char::is_ascii_digit).count();
    match rest[..digits].parse::<usize>() {
        Ok(n) => format!(
            "{}player {}{}",
            &message[..start],
            n + offset,
            &rest[digits..]
        ),
        Err(_) => message.to_string(),
    }
}

fn refusal(reply: Incoming) -> String {
    match reply {
        Incoming::Message(ServerMessage::Error(error)) => {
            format!("the server refused: {} ({})", error.message, error.code)
        }
        other => format!("unexpected reply from the server: {other:?}"),
    }
}

async fn create(args: CreateArgs) -> ExitCode {
    if let Err(e) = AnyPosition::new(args.game, args.variant.as_deref()) {
        eprintln!("hakem: {e}");
        return ExitCode::from(USAGE);
    }
    let clock = match clock_config(args.clock, args.increment) {
        Ok(clock) => clock,
        Err(e) => {
            eprintln!("hakem: {e}");
            return ExitCode::from(USAGE);
        }
    };
    let players = match &args.players {
        None => Vec::new(),
        Some(path) => match std::fs::read_to_string(path)
            .map_err(|e| e.to_string())
            .and_then(|text| read_players(&text))
        {
            Ok(players) => players,
            Err(e) => {
                eprintln!("hakem: {}: {e}", path.display());
                return ExitCode::from(USAGE);
            }
        },
    };
    let create = CreateTournament {
        name: args.name.clone(),
        game: args.game.as_str().to_string(),
        variant: args.variant.clone(),
        sets: args.sets,
        clock,
        warnings_limit: args.warnings,
        rounds: args.rounds,
        pairing: if args.pairing == "dutch2017" {
            PairingRules::Dutch2017
        } else {
            PairingRules::Dutch2025
        },
        edition: if args.edition == "2024" {
            TiebreakEdition::E2024
        } else {
            TiebreakEdition::E2026
        },
        tiebreaks: args
            .tiebreaks
            .split(',')
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty())
            .collect(),
        players: Vec::new(),
        colour_lot: args.colour_lot,
        auto_pair: args.auto_pair,
        max_half_byes: args.max_half_byes,
        bye_points: args.bye_points,
        spectator_delay: Some(hakem_protocol::SpectatorDelay {
            seconds: args.spectator_delay,
            moves: args.spectator_delay_moves,
        })
        .filter(|d| !d.is_live()),
        rated: args.rated,
    };
    let (id, arbiter_token, players) = match create_with_players(&args.auth, create, players).await
    {
        Ok(created) => created,
        Err(Partial {
            created: None,
            error,
        }) => return fail(error),
        Err(Partial {
            created: Some((id, arbiter_token, players)),
            error,
        }) => {
            // The tournament exists: what was made must not be lost with the error.
            eprintln!(
                "hakem: tournament {id} was created (arbiter token {arbiter_token}), \
                     but adding its players stopped: {error}"
            );
            eprintln!("hakem: players entered so far, with their tokens:");
            for p in &players {
                eprintln!(
                    "  {:>4}  {:<30} {:<24} {}",
                    p.id,
                    p.name,
                    p.account,
                    p.token.as_deref().unwrap_or("(own account)")
                );
            }
            return ExitCode::from(FAILURE);
        }
    };
    if args.json {
        let line = json!({
            "tournament": id,
            "arbiter_token": arbiter_token,
            "players": players,
            "server": args.auth.server.server,
        });
        println_or_quit!("{line}");
        return ExitCode::SUCCESS;
    }
    println_or_quit!(
        "tournament {id} created: {} ({} rounds, {} players)",
        args.name,
        args.rounds,
        players.len()
    );
    println_or_quit!("  arbiter token  {arbiter_token}");
    if !players.is_empty() {
        println_or_quit!("\n  {:>4}  {:<30} {:<24} token", "no.", "player", "account");
        for p in &players {
            println_or_quit!(
                "  {:>4}  {:<30} {:<24} {}",
                p.id,
                p.name,
                p.account,
                p.token.as_deref().unwrap_or("(own account)")
            );
        }
    }
    println_or_quit!("\nnext:");
    println_or_quit!("  hakem tournament start --tournament {id} --token {arbiter_token}");
    println_or_quit!(
        "  players: hakem bot --listen --token TOKEN, or the web page with their token"
    );
    ExitCode::SUCCESS
}

/// Reads a players list: `surname,given[,account]` rows, as a spreadsheet exports them (UTF-8
/// with or without a BOM; `,` or `;` between fields, whichever the first row uses; quotes as
/// CSV has them). A header row (`surname`/`soyadı` first) and `#` comment lines are skipped.
pub fn read_players(text: &str) -> Result<Vec<NewPlayer>, String> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .comment(Some(b'#'))
        .delimiter(delimiter_of(text))
        .from_reader(text.as_bytes());
    let mut players = Vec::new();
    for row in reader.records() {
        let row = row.map_err(|e| match e.position() {
            Some(at) => format!("line {}: {e}", at.line()),
            None => e.to_string(),
        })?;
        let line = row.position().map_or(0, |at| at.line());
        // A field that runs over a line end is a quote never closed.
        if row.iter().any(|f| f.contains('\n')) {
            return Err(format!("line {line}: a quote is not closed"));
        }
        let field = |i: usize| row.get(i).map(str::trim).unwrap_or_default();
        if row.iter().all(|f| f.trim().is_empty()) {
            continue;
        }
        let first = field(0);
        if players.is_empty() && is_header(first) {
            continue;
        }
        if row.len() > 3 {
            return Err(format!(
                "line {line}: {} fields; a line is surname,given[,account]",
                row.len()
            ));
        }
        if first.is_empty() {
            return Err(format!("line {line}: the surname is empty"));
        }
        players.push(NewPlayer {
            surname: first.to_string(),
            given: field(1).to_string(),
            account: Some(field(2)).filter(|a| !a.is_empty()).map(str::to_string),
        });
    }
    Ok(players)
}

/// `;` when the first row that is not a comment has more of them than commas (spreadsheets in
/// Turkish and most European locales export so), `,` otherwise.
fn delimiter_of(text: &str) -> u8 {
    let first = text
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty() && !l.starts_with('#'))
        .unwrap_or_default();
    if first.matches(';').count() > first.matches(',').count() {
        b';'
    } else {
        b','
    }
}

fn is_header(first: &str) -> bool {
    let first = first.to_lowercase();
    ["surname", "soyadı", "soyad", "soyadi"].contains(&first.as_str())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn player_lists_are_read_from_csv() {
        let text = "\u{feff}surname,given,account\n# a comment\nYılmaz,Ayşe\n\"Kaya, Jr.\", Bora ,bot-1\n\nÖztürk,\"Can \"\"the wall\"\"\"\n";
        let players = read_players(text).unwrap();
        assert_eq!(players.len(), 3);
        assert_eq!(players[0].surname, "Yılmaz");
        assert_eq!(players[0].given, "Ayşe");
        assert_eq!(players[0].account, None);
        assert_eq!(players[1].surname, "Kaya, Jr.");
        assert_eq!(players[1].given, "Bora");
        assert_eq!(players[1].account.as_deref(), Some("bot-1"));
        assert_eq!(players[2].given, "Can \"the wall\"");
    }

    #[test]
    fn long_player_lists_go_in_frames_under_the_limit() {
        let players: Vec<NewPlayer> = (0..1000)
            .map(|i| NewPlayer {
                surname: format!("Soyadı{i}"),
                given: "Adı Uzun Bir İsim".into(),
                account: None,
            })
            .collect();
        let pieces = batches(players);
        assert!(pieces.len() > 1);
        assert_eq!(pieces.iter().map(Vec::len).sum::<usize>(), 1000);
        for piece in &pieces {
            let frame = serde_json::to_string(&ClientMessage::AddPlayers {
                tournament: "q7ww2k9d3mxa".into(),
                players: piece.clone(),
                arbiter_token: Some("0".repeat(32)),
            })
            .unwrap();
            assert!(
                frame.len() < hakem_protocol::MAX_FRAME_BYTES,
                "{}",
                frame.len()
            );
        }
        assert_eq!(batches(Vec::new()).len(), 1);
    }

    #[test]
    fn a_refused_player_is_named_by_their_place_in_the_whole_list() {
        assert_eq!(
            renumbered(
                "the server refused: player 3: no account \"x\" (bad_request)",
                150
            ),
            "the server refused: player 153: no account \"x\" (bad_request)"
        );
        assert_eq!(renumbered("no players here", 5), "no players here");
    }

    #[test]
    fn bad_player_lists_name_the_line() {
        assert!(read_players("Kaya,Bora\n,Ali\n")
            .unwrap_err()
            .starts_with("line 2"));
        assert!(read_players("\"Kaya,Bora\n").unwrap_err().contains("quote"));
        assert!(read_players("a,b,c,d\n").unwrap_err().contains("fields"));
        assert!(read_players("Kaya,Bora\n\"Öz,Can\n")
            .unwrap_err()
            .starts_with("line 2"));
    }

    #[test]
    fn board_lists_read_ranges_and_numbers() {
        assert_eq!(parse_boards("1-3, 8"), Ok(Boards(vec![1, 2, 3, 8])));
        assert_eq!(parse_boards("4"), Ok(Boards(vec![4])));
        assert!(parse_boards("").is_err());
        assert!(parse_boards("3-1").is_err());
        assert!(parse_boards("1-999999").is_err());
        assert!(parse_boards("a").is_err());
    }

    #[test]
    fn spreadsheet_exports_with_a_bom_and_semicolons_are_read() {
        // LibreOffice and Excel in a Turkish locale: a BOM, `;` between fields, CRLF, a
        // Turkish header, and commas inside names.
        let text = "\u{feff}Soyadı;Adı;Hesap\r\nYılmaz;Ayşe;\r\n\"Kaya; Jr.\";Bora, Ali;bot-1\r\nŞahin;İpek\r\n";
        let players = read_players(text).unwrap();
        let names: Vec<(&str, &str, Option<&str>)> = players
            .iter()
            .map(|p| (p.surname.as_str(), p.given.as_str(), p.account.as_deref()))
            .collect();
        assert_eq!(
            names,
            [
                ("Yılmaz", "Ayşe", None),
                ("Kaya; Jr.", "Bora, Ali", Some("bot-1")),
                ("Şahin", "İpek", None)
            ]
        );
        // The same list with commas reads the same.
        let commas =
            "surname,given,account\nYılmaz,Ayşe,\n\"Kaya; Jr.\",\"Bora, Ali\",bot-1\nŞahin,İpek\n";
        assert_eq!(read_players(commas).unwrap(), players);
    }
}
