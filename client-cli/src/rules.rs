//! `hakem rules ...`: the rules engines from the command line, without a server.

use std::process::ExitCode;

use clap::{Args, Subcommand};
use hakem_games::record::Record;
use hakem_games::{AnyPosition, GameKind, MoveError, Side};
use serde::Serialize;

#[derive(Subcommand)]
pub enum RulesCommand {
    /// Count the leaves of the game tree N moves deep (a finished game is a leaf).
    Perft {
        #[command(flatten)]
        game: GameArgs,
        /// Depth in moves.
        #[arg(long)]
        depth: u32,
    },
    /// Play a move list (or check a game record) and print the position and the result.
    Replay {
        /// pentago, quoridor or pente (not needed with --record).
        #[arg(long, required_unless_present = "record")]
        game: Option<GameKind>,
        /// Preset: pentago tr (default) or classic; quoridor standard; pente tournament (default) or free.
        #[arg(long)]
        variant: Option<String>,
        /// Moves from the start, space-separated, in the game's notation.
        #[arg(long, default_value = "", conflicts_with = "record")]
        moves: String,
        /// A game record exported by the server (`/api/matches/ID/record`): replay and verify
        /// every set.
        #[arg(long)]
        record: Option<std::path::PathBuf>,
        /// One line of JSON: {"result":..,"reason":..,"plies":N}, or an error object.
        #[arg(long)]
        json: bool,
    },
    /// The exact value of a Pentago position for the side to move, and a best move.
    Solve {
        #[command(flatten)]
        game: GameArgs,
        /// Give up (exit 1, no value claimed) after this many milliseconds.
        #[arg(long, default_value_t = 60_000)]
        max_ms: u64,
        /// One line of JSON: {"value":"win|draw|loss","best":"d4ne","nodes":N,"ms":T}.
        #[arg(long)]
        json: bool,
    },
    /// Print the board after a move list.
    Show {
        #[command(flatten)]
        game: GameArgs,
        /// Also list the legal moves.
        #[arg(long)]
        legal: bool,
    },
}

#[derive(Args)]
pub struct GameArgs {
    /// pentago, quoridor or pente.
    #[arg(long)]
    game: GameKind,
    /// Preset: pentago tr (default) or classic; quoridor standard; pente tournament (default) or free.
    #[arg(long)]
    variant: Option<String>,
    /// Moves from the start, space-separated, in the game's notation.
    #[arg(long, default_value = "")]
    moves: String,
}

/// Exit status for a bad move list or a bad variant, as for bad command-line usage.
const BAD_INPUT: u8 = 2;

/// A move the replay could not play.
struct Refused<'a> {
    ply: usize,
    text: &'a str,
    error: MoveError,
}

pub fn run(cmd: RulesCommand) -> ExitCode {
    match cmd {
        RulesCommand::Perft { game, depth } => match game.replay() {
            Ok(pos) => {
                println_or_quit!("{}", pos.perft(depth));
                ExitCode::SUCCESS
            }
            Err(failure) => failure.report(false),
        },
        RulesCommand::Replay {
            record: Some(path),
            json,
            ..
        } => verify_record(&path, json),
        RulesCommand::Replay {
            game,
            variant,
            moves,
            json,
            ..
        } => match (GameArgs {
            // clap requires --game when --record is absent.
            game: game.unwrap_or(GameKind::Pentago),
            variant,
            moves,
        })
        .replay()
        {
            Ok(pos) => {
                if json {
                    let outcome = pos.outcome();
                    print_json(&ReplayJson {
                        result: outcome.map_or("*", |o| o.result()),
                        reason: outcome.map(|o| o.reason.as_str()),
                        plies: pos.plies(),
                    });
                } else {
                    print_or_quit!("{}", pos.board_text());
                    println_or_quit!("{}", status_line(&pos));
                }
                ExitCode::SUCCESS
            }
            Err(failure) => failure.report(json),
        },
        RulesCommand::Solve { game, max_ms, json } => match game.replay() {
            Ok(pos) => solve(&pos, max_ms, json),
            Err(failure) => failure.report(json),
        },
        RulesCommand::Show { game, legal } => match game.replay() {
            Ok(pos) => {
                print_or_quit!("{}", pos.board_text());
                println_or_quit!("{}", status_line(&pos));
                if legal {
                    println_or_quit!("legal moves: {}", pos.legal_moves().join(" "));
                }
                ExitCode::SUCCESS
            }
            Err(failure) => failure.report(false),
        },
    }
}

/// Solves a Pentago position within `max_ms`; refuses rather than guesses when time runs out.
fn solve(position: &AnyPosition, max_ms: u64, json: bool) -> ExitCode {
    use hakem_engine::pentago::{solve, Budget, SolveError};
    let refuse = |error: &'static str, message: String, code: u8| {
        if json {
            print_json(&ErrorJson {
                error,
                ply: None,
                r#move: None,
                message: &message,
                code: None,
            });
        }
        eprintln!("hakem: {message}");
        ExitCode::from(code)
    };
    let AnyPosition::Pentago(pentago) = position else {
        return refuse(
            "unsupported_game",
            format!("the solver is for Pentago, not {}", position.kind()),
            BAD_INPUT,
        );
    };
    match solve(
        pentago,
        Budget::time(std::time::Duration::from_millis(max_ms)),
    ) {
        Ok(solution) => {
            let ms = solution.elapsed.as_millis() as u64;
            if json {
                print_json(&SolveJson {
                    value: solution.value.as_str(),
                    best: solution.best.to_string(),
                    nodes: solution.nodes,
                    ms,
                });
            } else {
                println_or_quit!(
                    "{} for {} to move; best move {} ({} nodes, {} ms)",
                    solution.value,
                    side_name(GameKind::Pentago, position.to_move()),
                    solution.best,
                    solution.nodes,
                    ms
                );
            }
            ExitCode::SUCCESS
        }
        Err(SolveError::OutOfBudget { nodes, elapsed }) => refuse(
            "out_of_budget",
            format!(
                "not solved within {max_ms} ms ({nodes} nodes in {} ms): no value claimed",
                elapsed.as_millis()
            ),
            1,
        ),
        Err(SolveError::GameOver) => refuse(
            "game_over",
            "the game is already over".to_string(),
            BAD_INPUT,
        ),
    }
}

#[derive(Serialize)]
struct SolveJson {
    value: &'static str,
    best: String,
    nodes: u64,
    ms: u64,
}

/// Replays every set of a record file; status 2 when any set is wrong or the file unreadable.
fn verify_record(path: &std::path::Path, json: bool) -> ExitCode {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) => {
            eprintln!("hakem: {}: {e}", path.display());
            return ExitCode::from(BAD_INPUT);
        }
    };
    let record = match Record::parse(&text) {
        Ok(record) => record,
        Err(e) => {
            if json {
                print_json(&ErrorJson {
                    error: "bad_record",
                    ply: None,
                    r#move: None,
                    message: &e.to_string(),
                    code: None,
                });
            }
            eprintln!("hakem: {}: {e}", path.display());
            return ExitCode::from(BAD_INPUT);
        }
    };
    let checks = record.verify();
    let ok = checks.iter().all(|c| c.problem.is_none());
    if json {
        let sets: Vec<_> = checks
            .iter()
            .map(|c| SetJson {
                set: &c.set,
                result: &c.result,
                reason: &c.reason,
                plies: c.plies,
                ok: c.problem.is_none(),
                problem: c.problem.as_deref(),
            })
            .collect();
        print_json(&RecordJson { ok, sets });
    } else {
        for c in &checks {
            match &c.problem {
                None => println_or_quit!(
                    "set {}: {} by {} after {} moves: verified",
                    c.set,
                    c.result,
                    c.reason,
                    c.plies
                ),
                Some(problem) => println_or_quit!("set {}: WRONG: {problem}", c.set),
            }
        }
        if let Some(round) = record.round() {
            println_or_quit!(
                "round: {} ({})",
                round.tag("RoundWinner").unwrap_or("*"),
                round.tag("RoundReason").unwrap_or("not finished")
            );
        }
    }
    if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(BAD_INPUT)
    }
}

#[derive(Serialize)]
struct RecordJson<'a> {
    ok: bool,
    sets: Vec<SetJson<'a>>,
}

#[derive(Serialize)]
struct SetJson<'a> {
    set: &'a str,
    result: &'a str,
    reason: &'a str,
    plies: usize,
    ok: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    problem: Option<&'a str>,
}

#[derive(Serialize)]
struct ReplayJson {
    result: &'static str,
    reason: Option<&'static str>,
    plies: u32,
}

/// `error` is `illegal_move` or `bad_notation` (or `bad_variant`); `code` names the broken rule.
#[derive(Serialize)]
struct ErrorJson<'a> {
    error: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    ply: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    r#move: Option<&'a str>,
    message: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    code: Option<&'static str>,
}

fn print_json(value: &impl Serialize) {
    // Serializing these plain structs cannot fail.
    println_or_quit!("{}", serde_json::to_string(value).unwrap_or_default());
}

/// Why a replay stopped.
enum Failure<'a> {
    Variant(String),
    Move(Refused<'a>),
}

impl Failure<'_> {
    fn report(&self, json: bool) -> ExitCode {
        match self {
            Failure::Variant(message) => {
                if json {
                    print_json(&ErrorJson {
                        error: "bad_variant",
                        ply: None,
                        r#move: None,
                        message,
                        code: None,
                    });
                }
                eprintln!("hakem: {message}");
            }
            Failure::Move(refused) => {
                let kind = if refused.error.is_notation() {
                    "bad_notation"
                } else {
                    "illegal_move"
                };
                if json {
                    print_json(&ErrorJson {
                        error: kind,
                        ply: Some(refused.ply),
                        r#move: Some(refused.text),
                        message: &refused.error.to_string(),
                        code: Some(refused.error.code()),
                    });
                }
                eprintln!(
                    "hakem: move {} ({}) refused: {}",
                    refused.ply, refused.text, refused.error
                );
            }
        }
        ExitCode::from(BAD_INPUT)
    }
}

impl GameArgs {
    fn replay(&self) -> Result<AnyPosition, Failure<'_>> {
        let mut pos = AnyPosition::new(self.game, self.variant.as_deref())
            .map_err(|e| Failure::Variant(e.to_string()))?;
        for (i, text) in self.moves.split_whitespace().enumerate() {
            pos.play_str(text).map_err(|error| {
                Failure::Move(Refused {
                    ply: i + 1,
                    text,
                    error,
                })
            })?;
        }
        Ok(pos)
    }
}

/// The name of a side in the game's own terms.
pub fn side_name(game: GameKind, side: Side) -> &'static str {
    match (game, side) {
        (GameKind::Pentago, Side::First) => "black",
        (GameKind::Pentago, Side::Second) => "white",
        (GameKind::Pente, Side::First) => "white",
        (GameKind::Pente, Side::Second) => "black",
        (GameKind::Quoridor, Side::First) => "first (from e1)",
        (GameKind::Quoridor, Side::Second) => "second (from e9)",
    }
}

fn status_line(pos: &AnyPosition) -> String {
    let game = pos.kind();
    match pos.outcome() {
        Some(outcome) => {
            let winner = match outcome.winner {
                Some(side) => format!("{} wins", side_name(game, side)),
                None => "draw".to_string(),
            };
            format!(
                "{game} ({}): {} {winner} by {} after {} moves",
                pos.variant(),
                outcome.result(),
                outcome.reason,
                pos.plies()
            )
        }
        None => format!(
            "{game} ({}): * {} to move after {} moves",
            pos.variant(),
            side_name(game, pos.to_move()),
            pos.plies()
        ),
    }
}
