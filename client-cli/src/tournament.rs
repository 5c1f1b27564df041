//! `hakem tournament`: offline tools for arbiters working on TRF files (pairing, pairing check,
//! standings with tie-breaks), and the live tournament commands of [`crate::organize`].

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Subcommand;

use crate::organize;
use crate::standings::{print_standings, StandingRow};
use hakem_pairing::{
    check_rounds, pair_round, parse_trf, standings, Edition, PairingError, Rules, Tiebreak,
    Tournament,
};

#[derive(Subcommand, Debug)]
pub enum TournamentCommand {
    /// Pair the next round of a TRF file: the number of lines, then `white black` per board,
    /// the pairing-allocated bye as `ID 0`; `NO_PAIRING` and exit 1 if none exists.
    Pair {
        /// The tournament report (TRF(x), with XXR and XXC).
        #[arg(long)]
        trf: PathBuf,
        /// The edition of the FIDE Dutch system.
        #[arg(long, default_value = "dutch2025", value_parser = ["dutch2025", "dutch2017"])]
        rules: String,
    },
    /// Re-pair every round of a TRF file and list the rounds whose pairing differs from what
    /// the rules give; exit 0 only if all agree.
    Check {
        #[arg(long)]
        trf: PathBuf,
        #[arg(long, default_value = "dutch2025", value_parser = ["dutch2025", "dutch2017"])]
        rules: String,
    },
    /// Print the standings with tie-breaks (FIDE C.07), of a TRF file or of a live tournament.
    Standings {
        /// A tournament report (TRF(x)).
        #[arg(
            long,
            required_unless_present = "tournament",
            conflicts_with = "tournament"
        )]
        trf: Option<PathBuf>,
        /// A live tournament on the server (its own edition and tie-break order apply).
        #[arg(long, value_name = "ID")]
        tournament: Option<String>,
        #[command(flatten)]
        server: organize::Server,
        /// 2026: with the 2026 amendment on unplayed rounds; 2024: the 2024 edition.
        #[arg(long, default_value = "2026", value_parser = ["2026", "2024"])]
        edition: String,
        /// Tie-break order, comma separated.
        #[arg(long, default_value = "BH-C1,BH,SB,DE,WIN")]
        tiebreaks: String,
        /// One JSON object per line.
        #[arg(long)]
        json: bool,
    },
    /// Create a live tournament on the server (organizer token): players from a CSV file,
    /// one account and token each.
    Create(organize::CreateArgs),
    /// Enter one more player (a late entry once the tournament runs).
    Add(organize::AddArgs),
    /// Rank the players, settle the colour lot and pair round 1; its matches start.
    Start(organize::StartArgs),
    /// Pair the next round (once every match of the current one has ended); with --preview,
    /// show it first without publishing it.
    PairNext(organize::PairNextArgs),
    /// Withdraw a player: not paired from the next round on.
    Withdraw(organize::PlayerArgs),
    /// A half-point bye for a player in a round not yet paired.
    Bye(organize::ByeArgs),
    /// A player did not show up: their match of the current round is lost by forfeit.
    Forfeit(organize::ForfeitArgs),
    /// Enter the result of a board played over the board (its match ends with it), or correct
    /// a result.
    Result(organize::ResultArgs),
    /// Name an assistant arbiter for some boards (in every round); prints their token once.
    Assistant(organize::AssistantArgs),
    /// Follow the tournament as it happens: paired rounds, results, withdrawals, the end (the
    /// server pushes each change; nothing is asked again).
    Watch(organize::ViewArgs),
    /// Print every round's pairings and results.
    Show(organize::ViewArgs),
    /// Print the TRF(x) of the completed rounds.
    Trf(organize::ViewArgs),
}

fn load(path: &PathBuf) -> Result<Tournament, ExitCode> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("hakem: cannot read {}: {e}", path.display());
            return Err(ExitCode::from(2));
        }
    };
    parse_trf(&text).map_err(|e| {
        eprintln!("hakem: {}: {e}", path.display());
        ExitCode::from(2)
    })
}

fn rules_of(s: &str) -> Rules {
    s.parse().unwrap_or_default()
}

pub async fn run(cmd: TournamentCommand) -> ExitCode {
    use organize::Live;
    match cmd {
        TournamentCommand::Create(args) => organize::run(Live::Create(args)).await,
        TournamentCommand::Add(args) => organize::run(Live::Add(args)).await,
        TournamentCommand::Start(args) => organize::run(Live::Start(args)).await,
        TournamentCommand::PairNext(args) => organize::run(Live::PairNext(args)).await,
        TournamentCommand::Withdraw(args) => organize::run(Live::Withdraw(args)).await,
        TournamentCommand::Bye(args) => organize::run(Live::Bye(args)).await,
        TournamentCommand::Forfeit(args) => organize::run(Live::Forfeit(args)).await,
        TournamentCommand::Result(args) => organize::run(Live::Result(args)).await,
        TournamentCommand::Assistant(args) => organize::run(Live::Assistant(args)).await,
        TournamentCommand::Show(args) => organize::run(Live::Show(args)).await,
        TournamentCommand::Watch(args) => organize::run(Live::Watch(args)).await,
        TournamentCommand::Trf(args) => organize::run(Live::Trf(args)).await,
        TournamentCommand::Standings {
            tournament: Some(tournament),
            server,
            json,
            ..
        } => {
            let view = organize::ViewArgs { server, tournament };
            organize::run(Live::Standings { view, json }).await
        }
        TournamentCommand::Pair { trf, rules } => {
            let t = match load(&trf) {
                Ok(t) => t,
                Err(c) => return c,
            };
            match pair_round(&t, rules_of(&rules)) {
                Ok(p) => {
                    print_or_quit!("{}", p.to_engine_text());
                    ExitCode::SUCCESS
                }
                Err(PairingError::NoValidPairing) => {
                    println_or_quit!("NO_PAIRING");
                    ExitCode::from(1)
                }
                Err(e) => {
                    eprintln!("hakem: {e}");
                    ExitCode::from(2)
                }
            }
        }
        TournamentCommand::Check { trf, rules } => {
            let t = match load(&trf) {
                Ok(t) => t,
                Err(c) => return c,
            };
            let diffs = check_rounds(&t, rules_of(&rules));
            let rounds = t.completed_rounds();
            for d in &diffs {
                println_or_quit!("round {}: the pairing differs from the rules", d.round);
                println_or_quit!("  recorded: {}", one_line(&d.recorded));
                match &d.expected {
                    Ok(p) => println_or_quit!("  expected: {}", one_line(p)),
                    Err(e) => println_or_quit!("  expected: {e}"),
                }
            }
            if diffs.is_empty() {
                println_or_quit!("all {rounds} rounds agree with the rules");
                ExitCode::SUCCESS
            } else {
                println_or_quit!("{} of {rounds} rounds differ", diffs.len());
                ExitCode::from(1)
            }
        }
        TournamentCommand::Standings {
            trf,
            edition,
            tiebreaks,
            json,
            ..
        } => {
            let Some(trf) = trf else {
                eprintln!("hakem: --trf FILE or --tournament ID is needed");
                return ExitCode::from(2);
            };
            let t = match load(&trf) {
                Ok(t) => t,
                Err(c) => return c,
            };
            let mut order = Vec::new();
            for code in tiebreaks
                .split(',')
                .map(str::trim)
                .filter(|s| !s.is_empty())
            {
                match Tiebreak::from_code(code) {
                    Some(tb) => order.push(tb),
                    None => {
                        eprintln!("hakem: unknown tie-break `{code}` (BH-C1, BH, SB, DE, WIN)");
                        return ExitCode::from(2);
                    }
                }
            }
            let ed = if edition == "2024" {
                Edition::E2024
            } else {
                Edition::E2026
            };
            let names: std::collections::HashMap<u32, &str> =
                t.players.iter().map(|p| (p.id, p.name.as_str())).collect();
            let rows: Vec<StandingRow> = standings(&t, ed, &order)
                .iter()
                .map(|s| StandingRow {
                    id: s.id,
                    rank: s.rank,
                    name: names.get(&s.id).copied().unwrap_or("").to_string(),
                    points: s.points as f64 / 2.0,
                    tiebreaks: Tiebreak::DEFAULT_ORDER
                        .iter()
                        .map(|tb| (tb.code().to_string(), s.value(*tb)))
                        .collect(),
                })
                .collect();
            print_standings(&rows, json);
            ExitCode::SUCCESS
        }
    }
}

fn one_line(p: &hakem_pairing::Pairing) -> String {
    let mut parts: Vec<String> = p.boards.iter().map(|(w, b)| format!("{w}-{b}")).collect();
    if let Some(b) = p.bye {
        parts.push(format!("{b}-bye"));
    }
    parts.join(" ")
}
