//! `hakem tournament`: offline tools for arbiters working on TRF files (pairing, pairing check,
//! standings with tie-breaks).

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Subcommand;
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
    /// Print the standings with tie-breaks (FIDE C.07).
    Standings {
        #[arg(long)]
        trf: PathBuf,
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

pub fn run(cmd: TournamentCommand) -> ExitCode {
    match cmd {
        TournamentCommand::Pair { trf, rules } => {
            let t = match load(&trf) {
                Ok(t) => t,
                Err(c) => return c,
            };
            match pair_round(&t, rules_of(&rules)) {
                Ok(p) => {
                    print!("{}", p.to_engine_text());
                    ExitCode::SUCCESS
                }
                Err(PairingError::NoValidPairing) => {
                    println!("NO_PAIRING");
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
                println!("round {}: the pairing differs from the rules", d.round);
                println!("  recorded: {}", one_line(&d.recorded));
                match &d.expected {
                    Ok(p) => println!("  expected: {}", one_line(p)),
                    Err(e) => println!("  expected: {e}"),
                }
            }
            if diffs.is_empty() {
                println!("all {rounds} rounds agree with the rules");
                ExitCode::SUCCESS
            } else {
                println!("{} of {rounds} rounds differ", diffs.len());
                ExitCode::from(1)
            }
        }
        TournamentCommand::Standings {
            trf,
            edition,
            tiebreaks,
            json,
        } => {
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
            let st = standings(&t, ed, &order);
            if json {
                for s in &st {
                    // Written by hand to keep the documented key order.
                    let num = |x: f64| serde_json::Value::from(x).to_string();
                    let v = format!(
                        "{{\"id\":{},\"rank\":{},\"points\":{},\"tiebreaks\":{{\"BH-C1\":{},\"BH\":{},\"SB\":{},\"DE\":{},\"WIN\":{}}}}}",
                        s.id,
                        s.rank,
                        num(s.points as f64 / 2.0),
                        num(s.bh_c1 as f64 / 2.0),
                        num(s.bh as f64 / 2.0),
                        num(s.sb as f64 / 4.0),
                        s.de,
                        s.wins
                    );
                    println!("{v}");
                }
            } else {
                let names: std::collections::HashMap<u32, &str> =
                    t.players.iter().map(|p| (p.id, p.name.as_str())).collect();
                println!(
                    "{:>4} {:>4}  {:<32} {:>5} {:>6} {:>6} {:>6} {:>3} {:>3}",
                    "rank", "id", "name", "pts", "BH-C1", "BH", "SB", "DE", "WIN"
                );
                for s in &st {
                    println!(
                        "{:>4} {:>4}  {:<32} {:>5.1} {:>6.1} {:>6.1} {:>6.2} {:>3} {:>3}",
                        s.rank,
                        s.id,
                        names.get(&s.id).copied().unwrap_or(""),
                        s.points as f64 / 2.0,
                        s.bh_c1 as f64 / 2.0,
                        s.bh as f64 / 2.0,
                        s.sb as f64 / 4.0,
                        s.de,
                        s.wins
                    );
                }
            }
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
