//! `hakem player NAME`: a player's ratings and latest rated rounds, as their page shows them.

use std::process::ExitCode;

use clap::Args;
use hakem_protocol::{ClientMessage, PlayerProfile, ServerMessage};

use crate::organize::{ask, Server};
use crate::session::FAILURE;

#[derive(Args, Debug)]
pub struct PlayerArgs {
    #[command(flatten)]
    server: Server,
    /// The account's name.
    name: String,
    /// The profile as one JSON object (as `GET /api/players/NAME`).
    #[arg(long)]
    json: bool,
}

pub async fn run(args: PlayerArgs) -> ExitCode {
    let asked = ask(
        &args.server.server,
        None,
        ClientMessage::GetPlayer {
            name: args.name.clone(),
        },
    )
    .await;
    match asked {
        Ok(ServerMessage::Player { profile, .. }) => {
            if args.json {
                println_or_quit!("{}", serde_json::to_string(&profile).unwrap_or_default());
            } else {
                println_or_quit!("{}", render(&profile).trim_end());
            }
            ExitCode::SUCCESS
        }
        Ok(other) => {
            eprintln!("hakem: unexpected reply from the server: {other:?}");
            ExitCode::from(FAILURE)
        }
        Err(message) => {
            eprintln!("hakem: {message}");
            ExitCode::from(FAILURE)
        }
    }
}

/// The page as text: a line per rating pool, then the rated rounds, newest first.
fn render(profile: &PlayerProfile) -> String {
    let mut out = format!("{} ({})\n", profile.name, kind_word(profile));
    if profile.ratings.is_empty() {
        out.push_str("no rated round yet\n");
    }
    for (pool, r) in &profile.ratings {
        out.push_str(&format!(
            "  {pool:<16} {:>6.0} ± {:<4.0} {} rated round{}{}\n",
            r.rating,
            2.0 * r.deviation,
            r.rounds,
            if r.rounds == 1 { "" } else { "s" },
            if r.provisional { ", provisional" } else { "" }
        ));
    }
    if !profile.history.is_empty() {
        out.push_str("latest rated rounds:\n");
    }
    for round in &profile.history {
        let result = match round.score {
            s if s >= 1.0 => "won",
            s if s <= 0.0 => "lost",
            _ => "drew",
        };
        out.push_str(&format!(
            "  {}  {:<16} {result:<4}  -> {:.0}\n",
            round.match_id, round.pool, round.rating
        ));
    }
    out
}

fn kind_word(profile: &PlayerProfile) -> &'static str {
    match profile.kind {
        hakem_protocol::AccountKind::Player => "player",
        hakem_protocol::AccountKind::Bot => "bot",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hakem_protocol::{RatedRound, RatingView};

    #[test]
    fn a_page_reads_as_lines() {
        let mut profile = PlayerProfile {
            name: "ayse".into(),
            kind: hakem_protocol::AccountKind::Player,
            ratings: Default::default(),
            history: Vec::new(),
        };
        assert_eq!(render(&profile), "ayse (player)\nno rated round yet\n");
        profile.ratings.insert(
            "pente".into(),
            RatingView {
                rating: 1662.31,
                deviation: 290.2,
                volatility: 0.06,
                rounds: 1,
                provisional: true,
            },
        );
        profile.history.push(RatedRound {
            match_id: "k3m9".into(),
            pool: "pente".into(),
            score: 1.0,
            rating: 1662.31,
            deviation: 290.2,
            at_ms: 0,
        });
        let text = render(&profile);
        assert!(
            text.contains("pente              1662 ± 580  1 rated round, provisional"),
            "{text}"
        );
        assert!(
            text.contains("k3m9  pente            won   -> 1662"),
            "{text}"
        );
    }
}
