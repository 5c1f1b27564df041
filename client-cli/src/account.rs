//! `hakem account`: accounts on a live server. A player registers, logs in and out and changes
//! their password; the organizer creates, approves and disables accounts. Passwords are read
//! from standard input, one line each (never from the command line, which other users of the
//! machine can read); a terminal does not echo them.

use std::io::{BufRead, IsTerminal, Write};
use std::process::ExitCode;

use clap::{Args, Subcommand};
use hakem_protocol::{AccountKind, AccountStatus, ClientMessage, Password, ServerMessage};

use crate::organize::{ask, Authority, Server};
use crate::session::FAILURE;

#[derive(Subcommand, Debug)]
pub enum AccountCommand {
    /// Register an account of your own, when the server takes registrations; prints the
    /// session token when the account may be used at once (else it waits for the organizer).
    Register(NameArgs),
    /// Log in: prints a new session token, to give as --token to the other commands.
    Login(NameArgs),
    /// End the session of --token.
    Logout(SessionArgs),
    /// A new password for the account of the session --token: the old one, then the new one
    /// twice. Every other session of the account ends.
    Password(SessionArgs),
    /// Organizer: create an account; prints its token, shown only once.
    Create(CreateArgs),
    /// Organizer: approve an account that waits, or enable a disabled one.
    Approve(StatusArgs),
    /// Organizer: disable an account (its sessions end, its connections close).
    Disable(StatusArgs),
}

#[derive(Args, Debug)]
pub struct NameArgs {
    #[command(flatten)]
    server: Server,
    /// The account's name.
    #[arg(long)]
    name: String,
}

#[derive(Args, Debug)]
pub struct SessionArgs {
    #[command(flatten)]
    server: Server,
    /// The session token `hakem account login` printed.
    #[arg(long, value_name = "T", env = "HAKEM_TOKEN", hide_env_values = true)]
    token: String,
}

#[derive(Args, Debug)]
pub struct CreateArgs {
    #[command(flatten)]
    auth: Authority,
    /// The account's name.
    #[arg(long)]
    name: String,
    /// A bot's account rather than a player's.
    #[arg(long)]
    bot: bool,
}

#[derive(Args, Debug)]
pub struct StatusArgs {
    #[command(flatten)]
    auth: Authority,
    /// The account's name.
    name: String,
}

pub async fn run(command: AccountCommand) -> ExitCode {
    let result = match command {
        AccountCommand::Register(args) => register(args).await,
        AccountCommand::Login(args) => login(args).await,
        AccountCommand::Logout(args) => acked(
            ask(
                &args.server.server,
                Some(&args.token),
                ClientMessage::Logout,
            )
            .await,
        )
        .map(|()| eprintln!("logged out")),
        AccountCommand::Password(args) => password(args).await,
        AccountCommand::Create(args) => create(args).await,
        AccountCommand::Approve(args) => set_status(args, AccountStatus::Active).await,
        AccountCommand::Disable(args) => set_status(args, AccountStatus::Disabled).await,
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("hakem: {message}");
            ExitCode::from(FAILURE)
        }
    }
}

async fn register(args: NameArgs) -> Result<(), String> {
    let password = read_password("password")?;
    if std::io::stdin().is_terminal() && read_password("the same again")? != password {
        return Err("the two passwords differ; nothing was registered".into());
    }
    let message = ClientMessage::Register {
        name: args.name.clone(),
        password: Password(password),
    };
    match ask(&args.server.server, None, message).await? {
        ServerMessage::Registered {
            status: AccountStatus::Active,
            token: Some(token),
            ..
        } => {
            eprintln!("account {} registered; its session token:", args.name);
            println_or_quit!("{token}");
            Ok(())
        }
        ServerMessage::Registered { .. } => {
            eprintln!(
                "account {} registered: it waits for the organizer's approval; then log in",
                args.name
            );
            Ok(())
        }
        other => Err(format!("unexpected reply from the server: {other:?}")),
    }
}

async fn login(args: NameArgs) -> Result<(), String> {
    let message = ClientMessage::Login {
        name: args.name.clone(),
        password: Password(read_password("password")?),
    };
    match ask(&args.server.server, None, message).await? {
        ServerMessage::LoggedIn { token, .. } => {
            println_or_quit!("{token}");
            Ok(())
        }
        other => Err(format!("unexpected reply from the server: {other:?}")),
    }
}

async fn password(args: SessionArgs) -> Result<(), String> {
    let old = read_password("current password")?;
    let new = read_password("new password")?;
    if read_password("the new one again")? != new {
        return Err("the two new passwords differ; nothing was changed".into());
    }
    let message = ClientMessage::ChangePassword {
        password: Password(old),
        new_password: Password(new),
    };
    acked(ask(&args.server.server, Some(&args.token), message).await)
        .map(|()| eprintln!("password changed; every other session has ended"))
}

async fn create(args: CreateArgs) -> Result<(), String> {
    let kind = if args.bot {
        AccountKind::Bot
    } else {
        AccountKind::Player
    };
    let message = ClientMessage::CreateAccount {
        name: args.name.clone(),
        kind,
    };
    match ask(&args.auth.server.server, Some(&args.auth.token), message).await? {
        ServerMessage::AccountCreated { token, .. } => {
            eprintln!("account {} created; its token (shown only now):", args.name);
            println_or_quit!("{token}");
            Ok(())
        }
        other => Err(format!("unexpected reply from the server: {other:?}")),
    }
}

async fn set_status(args: StatusArgs, status: AccountStatus) -> Result<(), String> {
    let message = ClientMessage::SetAccountStatus {
        name: args.name.clone(),
        status,
    };
    acked(ask(&args.auth.server.server, Some(&args.auth.token), message).await)
        .map(|()| eprintln!("account {} is {}", args.name, status.as_str()))
}

fn acked(reply: Result<ServerMessage, String>) -> Result<(), String> {
    match reply? {
        ServerMessage::Ack { .. } => Ok(()),
        other => Err(format!("unexpected reply from the server: {other:?}")),
    }
}

/// One line of standard input; on a terminal, asked for by `prompt` and not echoed.
fn read_password(prompt: &str) -> Result<String, String> {
    let stdin = std::io::stdin();
    let terminal = stdin.is_terminal();
    let _quiet = terminal.then(|| {
        eprint!("{prompt}: ");
        let _ = std::io::stderr().flush();
        Unechoed::start()
    });
    let mut line = String::new();
    let read = stdin.lock().read_line(&mut line);
    if terminal {
        eprintln!();
    }
    match read {
        Ok(0) => Err(format!("no {prompt} on standard input")),
        Ok(_) => Ok(line.trim_end_matches(['\r', '\n']).to_string()),
        Err(e) => Err(format!("cannot read the {prompt}: {e}")),
    }
}

/// The terminal's echo, turned off until this is dropped.
struct Unechoed(Option<libc::termios>);

impl Unechoed {
    fn start() -> Unechoed {
        // SAFETY: tcgetattr and tcsetattr only read and write the termios given, for fd 0.
        unsafe {
            let mut saved: libc::termios = std::mem::zeroed();
            if libc::tcgetattr(0, &mut saved) != 0 {
                return Unechoed(None);
            }
            let mut quiet = saved;
            quiet.c_lflag &= !libc::ECHO;
            if libc::tcsetattr(0, libc::TCSANOW, &quiet) != 0 {
                return Unechoed(None);
            }
            Unechoed(Some(saved))
        }
    }
}

impl Drop for Unechoed {
    fn drop(&mut self) {
        if let Some(saved) = &self.0 {
            // SAFETY: restores the settings read in `start`.
            unsafe {
                libc::tcsetattr(0, libc::TCSANOW, saved);
            }
        }
    }
}
