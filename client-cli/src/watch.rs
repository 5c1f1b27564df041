//! `hakem watch`: a spectator's view of a match, until the round ends.

use std::process::ExitCode;

use clap::Args;
use hakem_protocol::ClientMessage;

use crate::session::{LinkArgs, Role, Session};

#[derive(Args)]
pub struct WatchArgs {
    /// The match id.
    #[arg(long = "match", value_name = "ID")]
    pub match_id: String,
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
        // A spectator only watches; stdin is not read at all.
        parse: None,
        help: "",
        reconnect_for: args.link.reconnect_timeout,
    }
    .run()
    .await
}
