//! `hakem create`: a new match on the server, with its id and tokens.

use std::process::ExitCode;

use clap::Args;
use hakem_games::{AnyPosition, GameKind};
use hakem_protocol::{ClientMessage, ClockConfig, CreateMatch, PerSeat, ServerMessage};
use serde_json::json;

use crate::connection::{parse_server_url, Connection, Incoming, DEFAULT_SERVER};
use crate::session::FAILURE;

/// Exit status for a bad command line, as clap uses.
const USAGE: u8 = 2;

#[derive(Args)]
pub struct CreateArgs {
    /// The server's WebSocket address.
    #[arg(long, value_name = "URL", env = "HAKEM_SERVER", hide_env_values = true,
          default_value = DEFAULT_SERVER,
          value_parser = parse_server_url)]
    server: String,
    /// pentago, quoridor or pente.
    #[arg(long, value_name = "G", default_value = "pentago")]
    game: GameKind,
    /// Preset: pentago tr (default) or classic; quoridor standard; pente tournament (default) or free.
    #[arg(long, value_name = "V")]
    variant: Option<String>,
    /// Sets in the round (the server's default is 3).
    #[arg(long, value_name = "N")]
    sets: Option<u8>,
    /// Time per player per set, MM:SS (or whole minutes), or `none` for an untimed match
    /// (the server's default is 15:00).
    #[arg(long, value_name = "MM:SS|none", value_parser = parse_clock)]
    clock: Option<Clock>,
    /// Seconds added to a player's clock at each press.
    #[arg(long, value_name = "S")]
    increment: Option<u64>,
    /// Warnings that lose the round (the server's default is 3).
    #[arg(long, value_name = "N")]
    warnings: Option<u8>,
    /// The name of the player in seat p1 (the first mover of sets 1 and 3).
    #[arg(long, value_name = "NAME")]
    p1: Option<String>,
    /// The name of the player in seat p2.
    #[arg(long, value_name = "NAME")]
    p2: Option<String>,
    /// Print one JSON line: {"match":..,"seat_tokens":{"p1":..,"p2":..},"arbiter_token":..,"server":..}.
    #[arg(long)]
    json: bool,
}

/// `--clock`: a time in milliseconds, or no clock.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Clock {
    Timed(u64),
    Untimed,
}

pub fn parse_clock(text: &str) -> Result<Clock, String> {
    let text = text.trim();
    if ["none", "untimed", "off"].contains(&text.to_ascii_lowercase().as_str()) {
        return Ok(Clock::Untimed);
    }
    let bad = || format!("{text:?} is not a time such as 15:00, 5 (minutes) or none");
    let (minutes, seconds) = match text.split_once(':') {
        Some((minutes, seconds)) => {
            let seconds: u64 = seconds.parse().map_err(|_| bad())?;
            if seconds >= 60 {
                return Err(bad());
            }
            (minutes.parse::<u64>().map_err(|_| bad())?, seconds)
        }
        None => (text.parse::<u64>().map_err(|_| bad())?, 0),
    };
    // More than a day per set is a typing mistake, and the bound keeps the arithmetic exact.
    if minutes > 24 * 60 {
        return Err(bad());
    }
    let ms = (minutes * 60 + seconds) * 1000;
    if ms == 0 {
        return Err("a clock of 0:00 would lose every set at once; use `none` for no clock".into());
    }
    Ok(Clock::Timed(ms))
}

/// The time control from `--clock` and `--increment`; `None` is an untimed match.
pub fn clock_config(
    clock: Option<Clock>,
    increment_s: Option<u64>,
) -> Result<Option<ClockConfig>, String> {
    let increment_ms = increment_s.map(|s| s.saturating_mul(1000));
    Ok(match (clock, increment_ms) {
        (Some(Clock::Untimed), Some(_)) => {
            return Err("--increment needs a clock; it cannot go with --clock none".into())
        }
        (Some(Clock::Untimed), None) => None,
        (Some(Clock::Timed(initial_ms)), increment) => Some(ClockConfig {
            initial_ms,
            increment_ms: increment.unwrap_or(0),
        }),
        (None, increment) => Some(ClockConfig {
            increment_ms: increment.unwrap_or(0),
            ..ClockConfig::default()
        }),
    })
}

fn usage(message: &str) -> ExitCode {
    eprintln!("hakem: {message}");
    ExitCode::from(USAGE)
}

pub async fn run(args: CreateArgs) -> ExitCode {
    // Check the preset here, so that a typing mistake is a usage error, not a server refusal.
    if let Err(e) = AnyPosition::new(args.game, args.variant.as_deref()) {
        return usage(&e.to_string());
    }
    let mut create = CreateMatch::new(args.game.as_str());
    create.variant = args.variant.clone();
    if let Some(sets) = args.sets {
        create.sets = sets;
    }
    if let Some(warnings) = args.warnings {
        create.warnings_limit = warnings;
    }
    create.clock = match clock_config(args.clock, args.increment) {
        Ok(clock) => clock,
        Err(message) => return usage(&message),
    };
    create.players = PerSeat::new(
        args.p1.clone().unwrap_or_default(),
        args.p2.clone().unwrap_or_default(),
    );

    let result = async {
        let mut conn = Connection::open(&args.server).await?;
        let reply = conn.request(ClientMessage::CreateMatch(create)).await;
        let _ = tokio::time::timeout(std::time::Duration::from_secs(1), conn.close()).await;
        reply
    }
    .await;
    match result {
        Ok(Incoming::Message(ServerMessage::MatchCreated {
            match_id,
            seat_tokens,
            arbiter_token,
            ..
        })) => {
            if args.json {
                let line = json!({
                    "match": match_id,
                    "seat_tokens": {"p1": seat_tokens.p1, "p2": seat_tokens.p2},
                    "arbiter_token": arbiter_token,
                    "server": args.server,
                });
                println_or_quit!("{line}");
            } else {
                print_or_quit!(
                    "{}",
                    summary(&args, &match_id, &seat_tokens, &arbiter_token)
                );
            }
            ExitCode::SUCCESS
        }
        Ok(Incoming::Message(ServerMessage::Error(error))) => {
            eprintln!(
                "hakem: the server refused to create the match: {} ({})",
                error.message, error.code
            );
            ExitCode::from(FAILURE)
        }
        Ok(other) => {
            eprintln!("hakem: unexpected reply from the server: {other:?}");
            ExitCode::from(FAILURE)
        }
        Err(e) => {
            eprintln!("hakem: {e}");
            ExitCode::from(FAILURE)
        }
    }
}

/// The human-readable result: the tokens and the commands to paste into each terminal.
fn summary(
    args: &CreateArgs,
    match_id: &str,
    seats: &PerSeat<String>,
    arbiter_token: &str,
) -> String {
    // The default address is left out of the command lines to keep them short.
    let server = if args.server == DEFAULT_SERVER {
        String::new()
    } else {
        format!(" --server {}", args.server)
    };
    let named = |name: &Option<String>| match name {
        Some(name) if !name.is_empty() => format!(" ({name})"),
        _ => String::new(),
    };
    let variant = args
        .variant
        .clone()
        .unwrap_or_else(|| args.game.default_variant().to_string());
    let mut out = format!("match {match_id} created ({} {variant})\n", args.game);
    out.push_str(&format!("  match id       {match_id}\n"));
    out.push_str(&format!(
        "  p1 token       {}{}\n",
        seats.p1,
        named(&args.p1)
    ));
    out.push_str(&format!(
        "  p2 token       {}{}\n",
        seats.p2,
        named(&args.p2)
    ));
    out.push_str(&format!("  arbiter token  {arbiter_token}\n"));
    out.push_str("\nrun, each in its own terminal:\n");
    out.push_str(&format!(
        "  hakem play{server} --match {match_id} --token {}\n",
        seats.p1
    ));
    out.push_str(&format!(
        "  hakem play{server} --match {match_id} --token {}\n",
        seats.p2
    ));
    out.push_str(&format!(
        "  hakem arbiter{server} --match {match_id} --token {arbiter_token}\n"
    ));
    out.push_str(&format!("  hakem watch{server} --match {match_id}\n"));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clocks_are_read_as_a_person_writes_them() {
        assert_eq!(parse_clock("15:00"), Ok(Clock::Timed(900_000)));
        assert_eq!(parse_clock("0:05"), Ok(Clock::Timed(5_000)));
        assert_eq!(parse_clock("10"), Ok(Clock::Timed(600_000)));
        assert_eq!(parse_clock("None"), Ok(Clock::Untimed));
        assert!(parse_clock("0:00").is_err());
        assert!(parse_clock("5:60").is_err());
        assert!(parse_clock("quick").is_err());
        assert!(parse_clock("-1:00").is_err());
    }
}
