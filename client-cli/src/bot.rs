//! `hakem bot`: a built-in engine playing a seat through the protocol, like any other client;
//! `hakem bot --listen`: a bot account that plays every match it is seated in; and
//! `hakem play --vs-bot`: a new match against a bot started in the same process.

mod clock;
mod player;

use std::collections::HashSet;
use std::process::ExitCode;
use std::time::Duration;

use clap::{ArgMatches, Args, FromArgMatches};
use hakem_engine::EngineKind;
use hakem_games::{AnyPosition, GameKind};
use hakem_protocol::{ClientMessage, CreateMatch, IdentityKind, PerSeat, ServerMessage};
use tokio::sync::mpsc;
use tokio::time::Instant;

use crate::connection::{parse_server_url, Connection, Incoming, DEFAULT_SERVER};
use crate::follow::backoff;
use crate::play::PlayArgs;
pub use player::{play_match, Config, Finished};

/// Exit status for a failure (connection, refusal, a match the bot cannot play).
const FAILURE: u8 = 1;
/// Exit status for a bad command line, as clap uses.
const USAGE: u8 = 2;

/// How long the connection steps may take.
const PATIENCE: Duration = Duration::from_secs(10);

#[derive(Args)]
pub struct BotArgs {
    /// The match to play, as `hakem create` printed it (not with --listen).
    #[arg(long = "match", value_name = "ID", required_unless_present = "listen")]
    match_id: Option<String>,
    /// The seat token (p1 or p2); with --listen, the bot account's token.
    #[arg(
        long,
        value_name = "T",
        env = "HAKEM_BOT_TOKEN",
        hide_env_values = true
    )]
    token: String,
    /// Service mode: wait for the matches the bot account is seated in, and play them all,
    /// several at once, until interrupted (Ctrl-C).
    #[arg(long, conflicts_with = "match_id")]
    listen: bool,
    /// The server's WebSocket address.
    #[arg(long, value_name = "URL", env = "HAKEM_SERVER", hide_env_values = true,
          default_value = DEFAULT_SERVER, value_parser = parse_server_url)]
    server: String,
    /// random, greedy (one move deep) or search (alpha-beta; its strength is --level).
    #[arg(long, value_name = "E", default_value = "search", value_parser = parse_engine)]
    engine: EngineKind,
    /// The search engine's strength, 1 (weakest, fastest) to 5.
    #[arg(long, value_name = "N", default_value_t = 3,
          value_parser = clap::value_parser!(u8).range(1..=5))]
    level: u8,
    /// Seed of the engine's choices (random when not given).
    #[arg(long, value_name = "N")]
    seed: Option<u64>,
    /// The most thinking time per move in milliseconds; also the time of every move of an
    /// untimed match (default: 2000 untimed; timed, a share of the clock up to 10000).
    #[arg(long, value_name = "MS")]
    max_think: Option<u64>,
    /// How long to keep trying to get back into a match after losing the connection, seconds.
    #[arg(long, value_name = "SECONDS", default_value_t = 300)]
    reconnect_timeout: u64,
}

fn parse_engine(text: &str) -> Result<EngineKind, String> {
    EngineKind::parse(&text.to_ascii_lowercase())
        .ok_or_else(|| format!("{text:?} is not an engine: random, greedy or search"))
}

/// A seed that differs from one run to the next.
fn fresh_seed() -> u64 {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    now ^ (u64::from(std::process::id()) << 32)
}

/// A seed of its own for each match of a listening bot, from the bot's seed.
fn match_seed(seed: u64, match_id: &str) -> u64 {
    match_id.bytes().fold(seed, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
    })
}

impl BotArgs {
    fn config(&self) -> Config {
        Config {
            engine: self.engine,
            level: self.level,
            seed: self.seed.unwrap_or_else(fresh_seed),
            max_think: self.max_think.map(Duration::from_millis),
            reconnect_for: Duration::from_secs(self.reconnect_timeout),
            quiet: false,
            retry_first: false,
            label: String::new(),
        }
    }
}

fn engine_name(cfg: &Config) -> String {
    match cfg.engine {
        EngineKind::Random => "random".into(),
        EngineKind::Greedy => "greedy".into(),
        EngineKind::Search => format!("search level {}", cfg.level),
    }
}

pub async fn run(args: BotArgs) -> ExitCode {
    if args.listen {
        return listen(&args).await;
    }
    let Some(match_id) = args.match_id.clone() else {
        eprintln!("hakem: --match is needed (or --listen with a bot account token)");
        return ExitCode::from(USAGE);
    };
    let cfg = args.config();
    outln!("hakem bot ({}) joining match {match_id}", engine_name(&cfg));
    match play_match(&args.server, &match_id, &args.token, cfg).await {
        Ok(_) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("hakem: {e}");
            ExitCode::from(FAILURE)
        }
    }
}

/// Service mode: one connection with the account token hears of the matches; each is played
/// in its own task, on its own connection.
async fn listen(args: &BotArgs) -> ExitCode {
    let cfg = args.config();
    let (done_tx, mut done_rx) = mpsc::unbounded_channel::<(String, Result<Finished, String>)>();
    // Matches being played, and matches whose round this bot saw end.
    let mut playing: HashSet<String> = HashSet::new();
    let mut finished: HashSet<String> = HashSet::new();
    let mut attempts: u32 = 0;
    let mut first = true;
    let ctrl_c = tokio::signal::ctrl_c();
    tokio::pin!(ctrl_c);
    loop {
        let opened = tokio::select! {
            opened = Connection::handshake(&args.server, Some(&args.token), &[], PATIENCE) => opened,
            _ = &mut ctrl_c => return stop(&playing),
        };
        let mut link = match opened {
            Ok((link, welcome)) => {
                let identity = welcome.identity;
                if first {
                    // Any token is welcome as a seat token; only an account has a name, and
                    // without one no match would ever come.
                    let account = matches!(identity.kind, IdentityKind::Bot | IdentityKind::Player);
                    if !account || identity.name.is_empty() {
                        eprintln!("hakem: the server knows no account with this token");
                        link.close().await;
                        return ExitCode::from(FAILURE);
                    }
                    outln!(
                        "hakem bot ({}) listening as {} ({}): waiting for matches",
                        engine_name(&cfg),
                        identity.name,
                        if identity.kind == IdentityKind::Bot {
                            "bot account"
                        } else {
                            "player account"
                        }
                    );
                } else {
                    outln!("connection to the server back");
                }
                first = false;
                attempts = 0;
                link
            }
            Err(e) if first || !e.retriable => {
                eprintln!("hakem: {}", e.message);
                return ExitCode::from(FAILURE);
            }
            Err(e) => {
                eprintln!("reconnecting failed: {}", e.message);
                tokio::select! {
                    _ = tokio::time::sleep(backoff(attempts)) => {}
                    _ = &mut ctrl_c => return stop(&playing),
                }
                attempts = attempts.saturating_add(1);
                continue;
            }
        };
        let mut heard_at = Instant::now();
        let mut pinged = false;
        let why = loop {
            let quiet_until = heard_at + Duration::from_secs(if pinged { 30 } else { 20 });
            tokio::select! {
                frame = link.recv() => {
                    let frame = match frame {
                        Ok(Some(frame)) => frame,
                        Ok(None) => break "the server closed the connection".to_string(),
                        Err(e) => break e.0,
                    };
                    heard_at = Instant::now();
                    pinged = false;
                    if let Incoming::Message(ServerMessage::YourMatch { match_id, seat, seat_token, game, variant }) = frame {
                        if playing.contains(&match_id) || finished.contains(&match_id) {
                            continue;
                        }
                        outln!("[{match_id}] a match for this account: {seat} in {game} {variant}");
                        playing.insert(match_id.clone());
                        let mut cfg = cfg.clone();
                        cfg.seed = match_seed(cfg.seed, &match_id);
                        cfg.label = format!("[{match_id}] ");
                        cfg.retry_first = true;
                        let server = args.server.clone();
                        let done = done_tx.clone();
                        tokio::spawn(async move {
                            let result = play_match(&server, &match_id, &seat_token, cfg).await;
                            let _ = done.send((match_id, result));
                        });
                    }
                }
                Some((match_id, result)) = done_rx.recv() => {
                    playing.remove(&match_id);
                    match result {
                        Ok(_) => {
                            finished.insert(match_id);
                        }
                        // Told of the match again (at the next hello), the bot tries again.
                        Err(e) => eprintln!("[{match_id}] stopped: {e}"),
                    }
                }
                _ = tokio::time::sleep_until(quiet_until) => {
                    if pinged {
                        break "no answer from the server for 30 seconds".to_string();
                    }
                    if let Err(e) = link.send(ClientMessage::Ping).await {
                        break e.0;
                    }
                    pinged = true;
                }
                _ = &mut ctrl_c => {
                    link.close().await;
                    return stop(&playing);
                }
            }
        };
        link.close().await;
        eprintln!("connection to the server lost ({why}); reconnecting");
    }
}

/// Ctrl-C: the matches in progress are left (their clocks run on).
fn stop(playing: &HashSet<String>) -> ExitCode {
    if playing.is_empty() {
        outln!("stopped");
    } else {
        let mut ids: Vec<&str> = playing.iter().map(String::as_str).collect();
        ids.sort_unstable();
        outln!("stopped; left matches in progress: {}", ids.join(" "));
    }
    ExitCode::SUCCESS
}

// ---------------------------------------------------------------------------------------------
// hakem play --vs-bot

#[derive(Args)]
pub struct VsBotArgs {
    /// Play a new match against a built-in bot instead of joining one (no --match, no --token).
    #[arg(long)]
    pub vs_bot: bool,
    /// With --vs-bot: the bot's strength, 1 (weakest) to 5.
    #[arg(long, value_name = "N", default_value_t = 2, requires = "vs_bot",
          value_parser = clap::value_parser!(u8).range(1..=5))]
    pub level: u8,
    /// With --vs-bot: pentago, quoridor or pente.
    #[arg(long, value_name = "G", default_value = "pentago", requires = "vs_bot")]
    pub game: GameKind,
    /// With --vs-bot: the preset (pentago tr or classic; quoridor standard; pente tournament
    /// or free).
    #[arg(long, value_name = "V", requires = "vs_bot")]
    pub variant: Option<String>,
}

/// The arguments of `hakem play`: a seat in a match, or `--vs-bot`.
pub struct PlayCommand {
    pub play: PlayArgs,
    pub vs: VsBotArgs,
}

/// With `--vs-bot` the match and the token come from the new match, so they are not asked for.
fn seat_optional(mut cmd: clap::Command) -> clap::Command {
    for id in ["match_id", "token"] {
        if cmd.get_arguments().any(|a| a.get_id() == id) {
            cmd = cmd.mut_arg(id, |a| {
                a.required(false)
                    .required_unless_present("vs_bot")
                    .default_value("")
                    .hide_default_value(true)
            });
        }
    }
    cmd
}

impl Args for PlayCommand {
    fn augment_args(cmd: clap::Command) -> clap::Command {
        VsBotArgs::augment_args(seat_optional(PlayArgs::augment_args(cmd)))
    }

    fn augment_args_for_update(cmd: clap::Command) -> clap::Command {
        VsBotArgs::augment_args_for_update(seat_optional(PlayArgs::augment_args_for_update(cmd)))
    }
}

impl FromArgMatches for PlayCommand {
    fn from_arg_matches(matches: &ArgMatches) -> Result<Self, clap::Error> {
        Self::from_arg_matches_mut(&mut matches.clone())
    }

    fn from_arg_matches_mut(matches: &mut ArgMatches) -> Result<Self, clap::Error> {
        Ok(PlayCommand {
            play: PlayArgs::from_arg_matches_mut(matches)?,
            vs: VsBotArgs::from_arg_matches_mut(matches)?,
        })
    }

    fn update_from_arg_matches(&mut self, matches: &ArgMatches) -> Result<(), clap::Error> {
        self.update_from_arg_matches_mut(&mut matches.clone())
    }

    fn update_from_arg_matches_mut(&mut self, matches: &mut ArgMatches) -> Result<(), clap::Error> {
        self.play.update_from_arg_matches_mut(matches)?;
        self.vs.update_from_arg_matches_mut(matches)
    }
}

/// `hakem play --vs-bot`: an untimed match, the bot on p2 in a task of this process, the
/// person on p1 (first to move in sets 1 and 3) through the ordinary `hakem play`.
pub async fn vs_bot(cmd: PlayCommand) -> ExitCode {
    let PlayCommand { mut play, vs } = cmd;
    if !play.match_id.is_empty() || !play.token.is_empty() {
        eprintln!("hakem: --vs-bot creates its own match: leave out --match and --token");
        return ExitCode::from(USAGE);
    }
    if let Err(e) = AnyPosition::new(vs.game, vs.variant.as_deref()) {
        eprintln!("hakem: {e}");
        return ExitCode::from(USAGE);
    }
    let cfg = Config {
        engine: EngineKind::Search,
        level: vs.level,
        seed: fresh_seed(),
        max_think: None,
        reconnect_for: play.link.reconnect_timeout.max(Duration::from_secs(60)),
        quiet: true,
        retry_first: false,
        label: String::new(),
    };
    let mut create = CreateMatch::new(vs.game.as_str());
    create.variant = vs.variant.clone();
    // Untimed: a newcomer should be able to think, and the bot's level sets its pace.
    create.clock = None;
    create.players = PerSeat::new("You".to_string(), format!("hakem bot (level {})", vs.level));
    let created = async {
        let mut link = Connection::open(&play.link.server).await.map_err(|e| e.0)?;
        let reply = link
            .request(ClientMessage::CreateMatch(create))
            .await
            .map_err(|e| e.0)?;
        link.close().await;
        match reply {
            Incoming::Message(ServerMessage::MatchCreated {
                match_id,
                seat_tokens,
                ..
            }) => Ok((match_id, seat_tokens)),
            Incoming::Message(ServerMessage::Error(error)) => Err(format!(
                "the server refused to create the match: {} ({})",
                error.message, error.code
            )),
            other => Err(format!("unexpected reply from the server: {other:?}")),
        }
    }
    .await;
    let (match_id, tokens) = match created {
        Ok(created) => created,
        Err(e) => {
            eprintln!("hakem: {e}");
            return ExitCode::from(FAILURE);
        }
    };
    outln!(
        "match {match_id}: you (p1, first to move in sets 1 and 3) against hakem bot level {} \
         in {} {}; type `ready` to start",
        vs.level,
        vs.game,
        vs.variant
            .clone()
            .unwrap_or_else(|| vs.game.default_variant().to_string())
    );
    let server = play.link.server.clone();
    let bot_match = match_id.clone();
    let PerSeat {
        p1: person,
        p2: bot_token,
    } = tokens;
    let bot = tokio::spawn(async move {
        if let Err(e) = play_match(&server, &bot_match, &bot_token, cfg).await {
            eprintln!("* the bot stopped: {e}");
        }
    });
    play.match_id = match_id;
    play.token = person;
    let status = crate::play::run(play).await;
    bot.abort();
    status
}

#[cfg(test)]
mod tests {
    use super::*;

    fn play(args: &[&str]) -> Result<PlayCommand, clap::Error> {
        let cmd = PlayCommand::augment_args(clap::Command::new("play"));
        cmd.clone().debug_assert();
        let mut matches =
            cmd.try_get_matches_from(std::iter::once("play").chain(args.iter().copied()))?;
        PlayCommand::from_arg_matches_mut(&mut matches)
    }

    fn bot(args: &[&str]) -> Result<BotArgs, clap::Error> {
        let cmd = BotArgs::augment_args(clap::Command::new("bot"));
        cmd.clone().debug_assert();
        let mut matches =
            cmd.try_get_matches_from(std::iter::once("bot").chain(args.iter().copied()))?;
        BotArgs::from_arg_matches_mut(&mut matches)
    }

    #[test]
    fn play_takes_a_seat_or_a_new_match_against_a_bot() {
        let seat = play(&["--match", "m", "--token", "t"]).unwrap();
        assert!(!seat.vs.vs_bot);
        assert_eq!(
            (seat.play.match_id.as_str(), seat.play.token.as_str()),
            ("m", "t")
        );
        let vs = play(&["--vs-bot", "--game", "quoridor", "--level", "4"]).unwrap();
        assert!(vs.vs.vs_bot);
        assert_eq!(vs.vs.game, GameKind::Quoridor);
        assert_eq!(vs.vs.level, 4);
        assert!(vs.play.match_id.is_empty());
        assert!(play(&[]).is_err());
        assert!(play(&["--match", "m"]).is_err());
        assert!(play(&["--match", "m", "--token", "t", "--level", "2"]).is_err());
        assert!(play(&["--vs-bot", "--level", "6"]).is_err());
        assert!(play(&["--vs-bot", "--game", "chess"]).is_err());
    }

    #[test]
    fn bot_plays_a_match_or_listens() {
        let one = bot(&[
            "--match", "m", "--token", "t", "--engine", "greedy", "--seed", "3",
        ])
        .unwrap();
        assert_eq!(one.match_id.as_deref(), Some("m"));
        assert_eq!(one.engine, EngineKind::Greedy);
        assert_eq!(one.config().seed, 3);
        assert_eq!(one.level, 3);
        let service = bot(&["--listen", "--token", "t"]).unwrap();
        assert!(service.listen && service.match_id.is_none());
        assert!(bot(&["--token", "t"]).is_err());
        assert!(bot(&["--listen", "--match", "m", "--token", "t"]).is_err());
        assert!(bot(&["--match", "m", "--token", "t", "--engine", "deep"]).is_err());
        assert!(bot(&["--match", "m", "--token", "t", "--level", "0"]).is_err());
    }
}
