//! `hakem watch`: a spectator's view of a match, until the round ends.

use std::process::ExitCode;
use std::time::Duration;

use clap::Args;
use hakem_protocol::ClientMessage;

use crate::connection::{parse_server_url, DEFAULT_SERVER};
use crate::session::{parse_reconnect_timeout, Role, Session, DEFAULT_RECONNECT};

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
    /// How long to keep trying to reconnect after the connection is lost: seconds or MM:SS;
    /// 0 exits at once instead.
    #[arg(long, value_name = "SECONDS", env = "HAKEM_RECONNECT_TIMEOUT",
          default_value = DEFAULT_RECONNECT,
          value_parser = parse_reconnect_timeout)]
    pub reconnect_timeout: Duration,
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
        reconnect_for: args.reconnect_timeout,
    }
    .run()
    .await
}
