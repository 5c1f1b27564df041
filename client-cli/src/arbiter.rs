//! `hakem arbiter`: the arbiter's chair of a match, one command per line on stdin.

use std::process::ExitCode;

use clap::Args;
use hakem_protocol::{ChatChannel, ClientMessage, Scope, Seat, Winner};

use crate::session::{Input, LinkArgs, Role, Session};

#[derive(Args)]
pub struct ArbiterArgs {
    /// The match id.
    #[arg(long = "match", value_name = "ID")]
    pub match_id: String,
    /// The arbiter token, as `hakem create` printed it.
    #[arg(long, value_name = "T")]
    pub token: String,
    #[command(flatten)]
    pub link: LinkArgs,
}

const HELP: &str = "\
commands:
  warn p1|p2 REASON                    a warning (they add up over the round; the limit loses it)
  uphold N [warn] REASON               uphold claim N; with `warn`, the claimant's opponent is warned
  reject N REASON                      reject claim N
  pause                                stop both clocks
  resume                               restart the running clock
  adjust p1|p2 +SECONDS|-SECONDS       add or remove time, e.g. adjust p2 +60, adjust p1 -1:30
  start                                start the next set without waiting for both `ready`
  declare set|round p1|p2|draw REASON  decide the set or the round
  say [spectators] TEXT                a message in the players' chat (or the spectators')
  mute p1|p2|NAME                      mute a seat or a spectator's account in the chat
  unmute p1|p2|NAME                    let them write again
  chat on|off                          turn the match's chat on or off
  time                                 both clocks now
  board                                the board and the score again
  help                                 this list
  quit                                 leave
Claims from the players are shown as they arrive, and every open claim with the board.
";

pub async fn run(args: ArbiterArgs) -> ExitCode {
    Session {
        server: args.link.server,
        match_id: args.match_id.clone(),
        role: Role::Arbiter,
        enter: ClientMessage::Join {
            match_id: args.match_id,
            seat_token: None,
            arbiter_token: Some(args.token),
            since_seq: None,
            legal_moves: false,
            history: true,
        },
        parse: Some(parse),
        help: HELP,
        reconnect_for: args.link.reconnect_timeout,
        token: None,
    }
    .run()
    .await
}

/// Reads one line typed by the arbiter.
pub fn parse(line: &str, match_id: &str) -> Input {
    let words: Vec<&str> = line.split_whitespace().collect();
    let Some((&first, rest)) = words.split_first() else {
        return Input::Nothing;
    };
    let match_id = match_id.to_string();
    let what = line.trim().to_string();
    let send = |message: ClientMessage| Input::Send {
        message,
        what: what.clone(),
    };
    match first.to_ascii_lowercase().as_str() {
        "warn" => match rest.split_first() {
            Some((seat, reason)) => match seat_of(seat) {
                Ok(seat) => send(ClientMessage::Warn {
                    match_id,
                    seat,
                    reason: reason.join(" "),
                }),
                Err(why) => Input::Invalid(why),
            },
            None => Input::Invalid("usage: warn p1|p2 REASON".into()),
        },
        "uphold" | "reject" => {
            let upheld = first.eq_ignore_ascii_case("uphold");
            let usage = if upheld {
                "usage: uphold N [warn] REASON"
            } else {
                "usage: reject N REASON"
            };
            let Some((number, mut reason)) = rest.split_first() else {
                return Input::Invalid(usage.into());
            };
            let Ok(claim) = number.parse::<u32>() else {
                return Input::Invalid(format!("{number:?} is not a claim number; {usage}"));
            };
            let warn = upheld
                && reason
                    .first()
                    .is_some_and(|w| w.eq_ignore_ascii_case("warn"));
            if warn {
                reason = &reason[1..];
            }
            send(ClientMessage::ResolveClaim {
                match_id,
                claim,
                upheld,
                reason: reason.join(" "),
                warn,
            })
        }
        "pause" if rest.is_empty() => send(ClientMessage::Pause { match_id }),
        "resume" if rest.is_empty() => send(ClientMessage::Resume { match_id }),
        "start" | "start_set" if rest.is_empty() => send(ClientMessage::StartSet { match_id }),
        "adjust" | "adjust_clock" => match rest {
            [seat, delta] => match (seat_of(seat), delta_ms(delta)) {
                (Ok(seat), Ok(delta_ms)) => send(ClientMessage::AdjustClock {
                    match_id,
                    seat,
                    delta_ms,
                }),
                (Err(why), _) | (_, Err(why)) => Input::Invalid(why),
            },
            _ => Input::Invalid("usage: adjust p1|p2 +SECONDS, e.g. adjust p2 +60".into()),
        },
        "declare" => match rest {
            [scope, winner, reason @ ..] => {
                let scope = match scope.to_ascii_lowercase().as_str() {
                    "set" => Scope::Set,
                    "round" => Scope::Round,
                    _ => return Input::Invalid(format!("{scope:?} is not set or round")),
                };
                let winner = match winner.to_ascii_lowercase().as_str() {
                    "p1" => Winner::P1,
                    "p2" => Winner::P2,
                    "draw" => Winner::Draw,
                    _ => return Input::Invalid(format!("{winner:?} is not p1, p2 or draw")),
                };
                send(ClientMessage::Declare {
                    match_id,
                    scope,
                    winner,
                    reason: reason.join(" "),
                })
            }
            _ => Input::Invalid("usage: declare set|round p1|p2|draw REASON".into()),
        },
        "say" | "chat"
            if rest
                .first()
                .is_some_and(|w| w.eq_ignore_ascii_case("spectators")) =>
        {
            crate::play::say(match_id, &rest[1..], Some(ChatChannel::Spectators))
        }
        "chat"
            if rest.len() == 1
                && (rest[0].eq_ignore_ascii_case("on") || rest[0].eq_ignore_ascii_case("off")) =>
        {
            send(ClientMessage::SetChat {
                match_id,
                enabled: rest[0].eq_ignore_ascii_case("on"),
            })
        }
        "say" | "chat" => crate::play::say(match_id, rest, Some(ChatChannel::Players)),
        "mute" | "unmute" => match rest {
            [who] => {
                let (seat, name) = match seat_of(who) {
                    Ok(seat) => (Some(seat), None),
                    Err(_) => (None, Some(who.to_string())),
                };
                send(ClientMessage::Mute {
                    match_id,
                    seat,
                    name,
                    muted: first.eq_ignore_ascii_case("mute"),
                })
            }
            _ => Input::Invalid(format!("usage: {first} p1|p2|NAME")),
        },
        "time" | "clock" | "clocks" => Input::Time,
        "board" => Input::Board,
        "help" | "?" => Input::Help,
        "quit" | "exit" => Input::Quit,
        _ => Input::Invalid(format!("unknown command {first:?}")),
    }
}

fn seat_of(text: &str) -> Result<Seat, String> {
    match text.to_ascii_lowercase().as_str() {
        "p1" => Ok(Seat::P1),
        "p2" => Ok(Seat::P2),
        _ => Err(format!("{text:?} is not a seat: p1 or p2")),
    }
}

/// A signed time in seconds (`+60`, `-2.5`) or minutes and seconds (`+1:30`), in milliseconds.
fn delta_ms(text: &str) -> Result<i64, String> {
    let bad = || format!("{text:?} is not a time such as +60, -30 or +1:30");
    let (negative, magnitude) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text.strip_prefix('+').unwrap_or(text)),
    };
    let seconds = crate::session::parse_seconds(magnitude).ok_or_else(bad)?;
    // Ten hours either way is far beyond any clock; the bound keeps the cast exact.
    if !seconds.is_finite() || !(0.0..=36_000.0).contains(&seconds) {
        return Err(bad());
    }
    let ms = (seconds * 1000.0).round() as i64;
    Ok(if negative { -ms } else { ms })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sent(line: &str) -> ClientMessage {
        match parse(line, "m") {
            Input::Send { message, .. } => message,
            other => panic!("{line}: {other:?}"),
        }
    }

    #[test]
    fn arbiter_lines_become_messages() {
        assert_eq!(
            sent("warn p1 touched two marbles"),
            ClientMessage::Warn {
                match_id: "m".into(),
                seat: Seat::P1,
                reason: "touched two marbles".into()
            }
        );
        assert_eq!(
            sent("adjust P2 +60"),
            ClientMessage::AdjustClock {
                match_id: "m".into(),
                seat: Seat::P2,
                delta_ms: 60_000
            }
        );
        assert_eq!(
            sent("declare round draw agreed"),
            ClientMessage::Declare {
                match_id: "m".into(),
                scope: Scope::Round,
                winner: Winner::Draw,
                reason: "agreed".into()
            }
        );
        assert_eq!(
            sent("say spectators quiet please"),
            ClientMessage::Chat {
                match_id: "m".into(),
                text: "quiet please".into(),
                channel: Some(ChatChannel::Spectators)
            }
        );
        assert_eq!(
            sent("chat ON"),
            ClientMessage::SetChat {
                match_id: "m".into(),
                enabled: true
            }
        );
        assert_eq!(
            sent("chat off"),
            ClientMessage::SetChat {
                match_id: "m".into(),
                enabled: false
            }
        );
        assert_eq!(
            sent("unmute zeynep"),
            ClientMessage::Mute {
                match_id: "m".into(),
                seat: None,
                name: Some("zeynep".into()),
                muted: false
            }
        );
        assert_eq!(
            sent("mute P2"),
            ClientMessage::Mute {
                match_id: "m".into(),
                seat: Some(Seat::P2),
                name: None,
                muted: true
            }
        );
        assert_eq!(
            sent("start"),
            ClientMessage::StartSet {
                match_id: "m".into()
            }
        );
    }

    #[test]
    fn times_and_mistakes() {
        assert_eq!(delta_ms("-1:30"), Ok(-90_000));
        assert_eq!(delta_ms("2.5"), Ok(2_500));
        assert!(delta_ms("+1:75").is_err());
        assert!(delta_ms("soon").is_err());
        assert!(delta_ms("1e300").is_err());
        assert!(matches!(parse("warn p3 x", "m"), Input::Invalid(_)));
        assert!(matches!(parse("declare game p1", "m"), Input::Invalid(_)));
        assert!(matches!(parse("declare set p1", "m"), Input::Send { .. }));
        assert!(matches!(parse("d4ne", "m"), Input::Invalid(_)));
    }
}
