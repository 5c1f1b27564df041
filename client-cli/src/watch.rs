//! `hakem watch`: a spectator's view of a match, until the round ends.

use std::process::ExitCode;

use clap::Args;
use hakem_protocol::ClientMessage;

use crate::connection::{parse_server_url, DEFAULT_SERVER};
use crate::session::{Role, Session};

#[derive(Args)]
pub struct WatchArgs {
    /// The match id.
    #[arg(long = "match", value_name = "ID")]
    pub match_id: String,
    /// The server's WebSocket address.
    #[arg(long, value_name = "URL", env = "HAKEM_SERVER", hide_env_values = true,
          default_value = DEFAULT_SERVER,
          value_parser = parse_server_url)]
    pub server: String,
}

pub async fn run(args: WatchArgs) -> ExitCode {
    Session {
        server: args.server,
        match_id: args.match_id.clone(),
        role: Role::Spectator,
        enter: ClientMessage::Watch {
            match_id: args.match_id,
            since_seq: None,
        },
        // A spectator only watches; stdin is not read at all.
        parse: None,
        help: "",
    }
    .run()
    .await
}
