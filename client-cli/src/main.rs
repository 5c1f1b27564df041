//! `hakem`: the command-line client of the hakem tournament game server.

use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod rules;

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
    /// Offline rules tools: perft, replay, show.
    #[command(subcommand)]
    Rules(rules::RulesCommand),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Rules(cmd) => rules::run(cmd),
    }
}
