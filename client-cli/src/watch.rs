//! `hakem watch`: a spectator's view of a match, until the round ends.

use std::process::ExitCode;

use clap::Args;
use hakem_protocol::ClientMessage;

use crate::session::{Input, LinkArgs, Role, Session};

#[derive(Args)]
pub struct WatchArgs {
    /// The match id.
    #[arg(long = "match", value_name = "ID")]
    pub match_id: String,
    /// An account's token or session token: then `say TEXT` lines on stdin write in the
    /// spectators' chat (without it, stdin is not read).
    #[arg(long, value_name = "T")]
    pub token: Option<String>,
    #[command(flatten)]
    pub link: LinkArgs,
}

pub async fn run(args: WatchArgs) -> ExitCode {
    Session {
        server: args.link.server,
        match_id: args.match_id.clone(),
        role: Role::Spectator,
        enter: ClientMessage::Watch {
            match_id: args.match_id,
            since_seq: None,
            // A spectator who comes in midway sees the match so far.
            history: true,
        },
        // A guest only watches; stdin is not read at all. An account may write in the
        // spectators' chat.
        parse: args
            .token
            .is_some()
            .then_some(parse as fn(&str, &str) -> Input),
        help: HELP,
        reconnect_for: args.link.reconnect_timeout,
        token: args.token,
    }
    .run()
    .await
}

const HELP: &str = "\
commands:
  say TEXT   a message in the spectators' chat (the other spectators and the arbiter read it)
  board      the board and the score again
  time       both clocks now
  help       this list
  quit       stop watching
";

/// Reads one line typed by a spectator who speaks for an account.
fn parse(line: &str, match_id: &str) -> Input {
    let words: Vec<&str> = line.split_whitespace().collect();
    let Some((&first, rest)) = words.split_first() else {
        return Input::Nothing;
    };
    match first.to_ascii_lowercase().as_str() {
        "say" | "chat" => crate::play::say(match_id.to_string(), rest, None),
        "board" => Input::Board,
        "time" | "clock" | "clocks" => Input::Time,
        "help" | "?" => Input::Help,
        "quit" | "exit" => Input::Quit,
        _ => Input::Invalid(format!("unknown command {first:?}")),
    }
}
