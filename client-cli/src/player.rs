//! `hakem player NAME`: a player's ratings, latest rated rounds and latest matches, as their
//! page shows them.

use std::process::ExitCode;

use clap::Args;
use hakem_protocol::{ClientMessage, MatchStatus, MatchSummary, PlayerProfile, ServerMessage};

use crate::organize::{ask_each, Server};
use crate::session::FAILURE;
use crate::view::format_points;

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

/// Matches the page lists, the latest first.
const LATEST: u32 = 10;

pub async fn run(args: PlayerArgs) -> ExitCode {
    match page(&args).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("hakem: {message}");
            ExitCode::from(FAILURE)
        }
    }
}

async fn page(args: &PlayerArgs) -> Result<(), String> {
    let mut asked = vec![ClientMessage::GetPlayer {
        name: args.name.clone(),
    }];
    if !args.json {
        asked.push(ClientMessage::ListMatches {
            status: None,
            limit: Some(LATEST),
            before: None,
            player: Some(args.name.clone()),
        });
    }
    let mut replies = ask_each(&args.server.server, None, asked)
        .await?
        .into_iter();
    let profile = match replies.next() {
        Some(ServerMessage::Player { profile, .. }) => profile,
        other => return Err(format!("unexpected reply from the server: {other:?}")),
    };
    if args.json {
        println_or_quit!("{}", serde_json::to_string(&profile).unwrap_or_default());
        return Ok(());
    }
    let matches = match replies.next() {
        Some(ServerMessage::Matches { matches, .. }) => matches,
        other => return Err(format!("unexpected reply from the server: {other:?}")),
    };
    println_or_quit!("{}", render(&profile, &matches).trim_end());
    Ok(())
}

/// The page as text: a line per rating pool, the rated rounds and the matches, newest first.
fn render(profile: &PlayerProfile, matches: &[MatchSummary]) -> String {
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
    if !matches.is_empty() {
        out.push_str("latest matches:\n");
    }
    for m in matches {
        let status = match m.status {
            MatchStatus::Waiting => "waiting",
            MatchStatus::Playing => "playing",
            MatchStatus::BetweenSets => "between sets",
            MatchStatus::Finished if m.expired => "expired",
            MatchStatus::Finished => "finished",
        };
        out.push_str(&format!(
            "  {}  {} {:<10}  {} {} - {} {}  ({status})\n",
            m.match_id,
            m.game,
            m.variant,
            m.players.p1,
            format_points(m.set_points.p1),
            format_points(m.set_points.p2),
            m.players.p2
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
        assert_eq!(render(&profile, &[]), "ayse (player)\nno rated round yet\n");
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
        let line = MatchSummary {
            match_id: "k3m9".into(),
            game: "pente".into(),
            variant: "tournament".into(),
            players: hakem_protocol::PerSeat::new("ayse".into(), "bora".into()),
            status: MatchStatus::Finished,
            set: 1,
            set_points: hakem_protocol::PerSeat::new(
                hakem_protocol::Points::ONE,
                hakem_protocol::Points::ZERO,
            ),
            tournament: None,
            expired: false,
            created_ms: None,
            finished_ms: None,
        };
        let text = render(&profile, &[line]);
        assert!(
            text.ends_with(
                "latest matches:\n  k3m9  pente tournament  ayse 1 - 0 bora  (finished)\n"
            ),
            "{text}"
        );
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
