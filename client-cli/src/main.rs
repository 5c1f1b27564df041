//! `hakem`: the command-line client of the hakem tournament game server.

use std::future::Future;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

#[macro_use]
mod output;

mod account;
mod arbiter;
mod bot;
mod connection;
mod create;
mod follow;
mod load;
mod lobby;
mod organize;
mod play;
mod player;
mod relay;
mod rules;
mod session;
mod standings;
mod tournament;
mod view;
mod watch;

#[derive(Parser)]
#[command(
    name = "hakem",
    version,
    about = "hakem: play, watch, arbitrate and organize mind-sport tournaments"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Create a match on a server; print its id, the seat tokens and the arbiter token.
    Create(create::CreateArgs),
    /// Take a seat in a match and play it from the terminal (line commands on stdin); with
    /// --vs-bot, play a new match against a built-in bot at once.
    Play(bot::PlayCommand),
    /// Follow a match as a spectator until the round ends.
    Watch(watch::WatchArgs),
    /// Run a match as its arbiter: warnings, pauses, clock adjustments, decisions.
    Arbiter(arbiter::ArbiterArgs),
    /// Play a seat with a built-in engine (or, with --listen, every match of a bot account).
    Bot(bot::BotArgs),
    /// Offline rules tools: perft, replay, show.
    #[command(subcommand)]
    Rules(rules::RulesCommand),
    /// Accounts: register, log in and out, change a password; the organizer creates,
    /// approves and disables accounts.
    #[command(subcommand)]
    Account(account::AccountCommand),
    /// The lobby: list the open seeks, offer a game and wait for a taker, or accept one; offer
    /// a rematch after a round.
    #[command(subcommand)]
    Lobby(lobby::LobbyCommand),
    /// A player's ratings and latest rated rounds.
    Player(player::PlayerArgs),
    /// Swiss tournaments: run one on the server (create, start, pair-next, withdraw, ...) and
    /// the arbiter's tools on TRF files (pair, check, standings).
    #[command(subcommand)]
    Tournament(tournament::TournamentCommand),
    /// Load test: N matches with M spectators each against a server; move latency, errors,
    /// the server's CPU and memory. See docs/performance.md.
    Load(load::LoadArgs),
    /// The bare WebSocket relay that `hakem load` measures as a baseline.
    Relay(relay::RelayArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Create(args) => run_async(create::run(args)),
        Command::Play(cmd) if cmd.vs.vs_bot => run_async(bot::vs_bot(cmd)),
        Command::Play(cmd) => run_async(play::run(cmd.play)),
        Command::Bot(args) => run_async(bot::run(args)),
        Command::Watch(args) => run_async(watch::run(args)),
        Command::Arbiter(args) => run_async(arbiter::run(args)),
        Command::Rules(cmd) => rules::run(cmd),
        Command::Account(cmd) => run_async(account::run(cmd)),
        Command::Lobby(cmd) => run_async(lobby::run(cmd)),
        Command::Player(args) => run_async(player::run(args)),
        Command::Tournament(cmd) => run_async(tournament::run(cmd)),
        Command::Load(args) => run_threaded(load::run(args)),
        Command::Relay(args) => run_threaded(relay::run(args)),
    }
}

/// Runs a network command on a single-threaded runtime: one connection needs no more, and the
/// build machines are small.
fn run_async(command: impl Future<Output = ExitCode>) -> ExitCode {
    run_on(tokio::runtime::Builder::new_current_thread(), command)
}

/// The load tool and the relay use every core, as a server does.
fn run_threaded(command: impl Future<Output = ExitCode>) -> ExitCode {
    run_on(tokio::runtime::Builder::new_multi_thread(), command)
}

fn run_on(
    mut builder: tokio::runtime::Builder,
    command: impl Future<Output = ExitCode>,
) -> ExitCode {
    match builder.enable_all().build() {
        Ok(runtime) => runtime.block_on(command),
        Err(e) => {
            eprintln!("hakem: cannot start the network runtime: {e}");
            ExitCode::from(session::FAILURE)
        }
    }
}
