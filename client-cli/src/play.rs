//! `hakem play`: a player's seat in a match, one command per line on stdin.

use std::process::ExitCode;

use clap::Args;
use hakem_protocol::ClientMessage;

use crate::session::{Input, LinkArgs, Role, Session};

#[derive(Args)]
pub struct PlayArgs {
    /// The match id, as `hakem create` printed it.
    #[arg(long = "match", value_name = "ID")]
    pub match_id: String,
    /// Your seat token (p1 or p2), as `hakem create` printed it.
    #[arg(long, value_name = "T")]
    pub token: String,
    #[command(flatten)]
    pub link: LinkArgs,
}

const HELP: &str = "\
commands:
  d4ne                a whole move in the game's notation, pressed at once
                      (Pentago d4ne, d4ne' counter-clockwise in classic, d4 a winning placement
                      in classic; Quoridor e2, e3h, e3v; Pente K10)
  move d4ne           the same
  place d4            Pentago: place a marble (final once accepted)
  rotate ne [cw|ccw]  Pentago: turn a quadrant (clockwise unless ccw)
  press               press the clock: completes the move and passes the turn
  ready               ready for the next set (the set starts when both players are)
  resign              resign the current set
  draw                casual Pente and Quoridor: offer a draw of the set, or accept the
                      opponent's offer
  decline             decline the opponent's draw offer
  claim TEXT          a claim to the arbiter about the opponent's last move
  say TEXT            a message in the players' chat (the opponent and the arbiter read it)
  time                both clocks now
  board               the board and the score again
  help                this list
  quit                leave (the clock keeps running)
";

pub async fn run(args: PlayArgs) -> ExitCode {
    Session {
        server: args.link.server,
        match_id: args.match_id.clone(),
        role: Role::Player,
        enter: ClientMessage::Join {
            match_id: args.match_id,
            seat_token: Some(args.token),
            arbiter_token: None,
            since_seq: None,
            legal_moves: false,
            history: false,
        },
        parse: Some(parse),
        help: HELP,
        reconnect_for: args.link.reconnect_timeout,
        token: None,
    }
    .run()
    .await
}

/// Reads one line typed by a player.
pub fn parse(line: &str, match_id: &str) -> Input {
    let words: Vec<&str> = line.split_whitespace().collect();
    let Some((&first, rest)) = words.split_first() else {
        return Input::Nothing;
    };
    let match_id = match_id.to_string();
    let send = |message: ClientMessage, what: String| Input::Send { message, what };
    match first.to_ascii_lowercase().as_str() {
        "place" => match rest {
            [cell] => send(
                ClientMessage::Place {
                    match_id,
                    cell: cell.to_ascii_lowercase(),
                },
                format!("place {cell}"),
            ),
            _ => Input::Invalid("usage: place CELL, e.g. place d4".into()),
        },
        "rotate" | "turn" => {
            let (quadrant, dir) = match rest {
                [quadrant] => (quadrant.to_ascii_lowercase(), "cw".to_string()),
                [quadrant, dir] => (quadrant.to_ascii_lowercase(), dir.to_ascii_lowercase()),
                _ => {
                    return Input::Invalid(
                        "usage: rotate QUADRANT [cw|ccw], e.g. rotate ne cw".into(),
                    )
                }
            };
            if !["sw", "se", "nw", "ne"].contains(&quadrant.as_str()) {
                return Input::Invalid(format!("{quadrant:?} is not a quadrant: sw, se, nw or ne"));
            }
            if !["cw", "ccw"].contains(&dir.as_str()) {
                return Input::Invalid(format!("{dir:?} is not a direction: cw or ccw"));
            }
            let what = format!("rotate {quadrant} {dir}");
            send(
                ClientMessage::Rotate {
                    match_id,
                    quadrant,
                    dir,
                },
                what,
            )
        }
        "move" => match rest {
            [mv] => whole_move(match_id, mv),
            _ => Input::Invalid("usage: move MOVE, e.g. move d4ne".into()),
        },
        "press" if rest.is_empty() => send(ClientMessage::Press { match_id }, "press".into()),
        "ready" if rest.is_empty() => send(ClientMessage::Ready { match_id }, "ready".into()),
        "resign" if rest.is_empty() => send(ClientMessage::Resign { match_id }, "resign".into()),
        "draw" if rest.is_empty() => send(ClientMessage::OfferDraw { match_id }, "draw".into()),
        "decline" if rest.is_empty() => {
            send(ClientMessage::DeclineDraw { match_id }, "decline".into())
        }
        "say" | "chat" => say(match_id, rest, None),
        "claim" if rest.is_empty() => {
            Input::Invalid("usage: claim TEXT, e.g. claim p2 turned two quadrants".into())
        }
        "claim" => send(
            ClientMessage::Claim {
                match_id,
                text: rest.join(" "),
            },
            "claim".into(),
        ),
        "time" | "clock" | "clocks" => Input::Time,
        "board" => Input::Board,
        "help" | "?" => Input::Help,
        "quit" | "exit" => Input::Quit,
        _ if rest.is_empty() && looks_like_a_move(first) => whole_move(match_id, first),
        _ => Input::Invalid(format!("unknown command {first:?}")),
    }
}

/// `say TEXT`: a chat message (in `channel`, or the writer's own).
pub fn say(
    match_id: String,
    words: &[&str],
    channel: Option<hakem_protocol::ChatChannel>,
) -> Input {
    if words.is_empty() {
        return Input::Invalid("usage: say TEXT, e.g. say good game".into());
    }
    Input::Send {
        message: ClientMessage::Chat {
            match_id,
            text: words.join(" "),
            channel,
        },
        what: "the chat message".into(),
    }
}

/// A word shaped like a move in one of the games' notations (a file letter, then a rank
/// number: `d4ne`, `e3h`, `K10`), so that a mistyped command (`fly`) is not sent as a move.
fn looks_like_a_move(word: &str) -> bool {
    let mut chars = word.chars();
    matches!(
        (chars.next(), chars.next()),
        (Some(file), Some(rank)) if file.is_ascii_alphabetic() && rank.is_ascii_digit()
    ) && chars.all(|c| c.is_ascii_alphanumeric() || c == '\'')
}

fn whole_move(match_id: String, mv: &str) -> Input {
    Input::Send {
        message: ClientMessage::Move {
            match_id,
            mv: mv.to_string(),
            press: true,
        },
        what: format!("move {mv}"),
    }
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
    fn lines_become_messages() {
        assert_eq!(
            sent("d4ne'"),
            ClientMessage::Move {
                match_id: "m".into(),
                mv: "d4ne'".into(),
                press: true
            }
        );
        assert_eq!(sent("  K10 "), sent("move K10"));
        assert_eq!(
            sent("place D4"),
            ClientMessage::Place {
                match_id: "m".into(),
                cell: "d4".into()
            }
        );
        assert_eq!(sent("rotate ne"), sent("rotate NE cw"));
        assert_eq!(
            sent("claim he turned   two quadrants"),
            ClientMessage::Claim {
                match_id: "m".into(),
                text: "he turned two quadrants".into()
            }
        );
        assert_eq!(
            sent("say  iyi   oyunlar"),
            ClientMessage::Chat {
                match_id: "m".into(),
                text: "iyi oyunlar".into(),
                channel: None
            }
        );
        assert_eq!(
            sent("draw"),
            ClientMessage::OfferDraw {
                match_id: "m".into()
            }
        );
        assert!(matches!(parse("say", "m"), Input::Invalid(_)));
        assert_eq!(
            sent("PRESS"),
            ClientMessage::Press {
                match_id: "m".into()
            }
        );
    }

    #[test]
    fn local_commands_and_mistakes() {
        assert_eq!(parse("", "m"), Input::Nothing);
        assert_eq!(parse("time", "m"), Input::Time);
        assert_eq!(parse("quit", "m"), Input::Quit);
        assert!(matches!(parse("rotate xx cw", "m"), Input::Invalid(_)));
        assert!(matches!(parse("rotate ne left", "m"), Input::Invalid(_)));
        assert!(matches!(parse("place", "m"), Input::Invalid(_)));
        assert!(matches!(parse("claim", "m"), Input::Invalid(_)));
        assert!(matches!(parse("fly to e4", "m"), Input::Invalid(_)));
        // A word that is not shaped like a move is a mistyped command, not a move.
        assert_eq!(
            parse("fly", "m"),
            Input::Invalid("unknown command \"fly\"".into())
        );
        assert!(matches!(parse("e3h", "m"), Input::Send { .. }));
        assert!(matches!(parse("a1", "m"), Input::Send { .. }));
        assert!(matches!(parse("4d", "m"), Input::Invalid(_)));
    }
}
