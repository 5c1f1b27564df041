//! Accounts that log in: registration (when the server takes it), login with a password kept
//! only as its Argon2id hash, sessions as revocable tokens kept only as their digest, logout,
//! password change, and the organizer's approval and disabling. Guessing is slowed per address
//! (the guard) and per account; hashing runs off the runtime, two at a time, so that a flood of
//! logins cannot take every core.

use std::net::IpAddr;
use std::num::NonZeroU32;

use argon2::password_hash::{PasswordHash, PasswordHasher, PasswordVerifier, SaltString};
use argon2::Argon2;
use governor::{DefaultKeyedRateLimiter, Quota, RateLimiter};
use hakem_protocol::{AccountKind, AccountStatus, ErrorCode, PASSWORD_CHARS};
use tokio::sync::Semaphore;

use crate::accounts::valid_name;
use crate::store::StoredAccount;
use crate::tokens::{digest, new_token};
use crate::App;

/// Whether guests may make accounts of their own.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Registration {
    /// Only the organizer makes accounts.
    #[default]
    Closed,
    /// A guest registers and may log in at once.
    Open,
    /// A guest registers; the account waits for the organizer's approval.
    Approval,
}

impl std::str::FromStr for Registration {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "closed" => Ok(Registration::Closed),
            "open" => Ok(Registration::Open),
            "approval" => Ok(Registration::Approval),
            other => Err(format!(
                "unknown registration {other:?} (closed, open or approval)"
            )),
        }
    }
}

/// Why a login command was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refused {
    pub code: ErrorCode,
    pub message: String,
}

fn refused(code: ErrorCode, message: impl Into<String>) -> Refused {
    Refused {
        code,
        message: message.into(),
    }
}

/// The one answer to a wrong name or a wrong password: which of the two is not said.
fn wrong() -> Refused {
    refused(ErrorCode::Unauthorized, "wrong account name or password")
}

fn not_stored(e: impl std::fmt::Display) -> Refused {
    tracing::error!(error = %e, "account change not stored");
    refused(
        ErrorCode::Internal,
        "the server could not store this; nothing changed, try again",
    )
}

/// Login attempts one account takes a minute (after a burst of as many), from anywhere: a
/// guesser spread over many addresses still gets five guesses a minute.
const ATTEMPTS_PER_MINUTE: u32 = 5;

/// Login attempts per account, of one server.
pub struct Attempts(DefaultKeyedRateLimiter<String>);

impl Default for Attempts {
    fn default() -> Attempts {
        let rate = NonZeroU32::new(ATTEMPTS_PER_MINUTE).expect("non-zero");
        Attempts(RateLimiter::keyed(Quota::per_minute(rate)))
    }
}

impl Attempts {
    /// One more attempt on `name`: within its allowance?
    fn take(&self, name: &str) -> bool {
        self.0.check_key(&name.to_string()).is_ok()
    }

    /// Forgets accounts whose attempts are back at their full allowance.
    pub fn upkeep(&self) {
        self.0.retain_recent();
        self.0.shrink_to_fit();
    }
}

/// Hashes at most this many passwords at once (each takes about 19 MiB and tens of ms).
static HASHING: Semaphore = Semaphore::const_new(2);

async fn off_the_runtime<T: Send + 'static>(
    work: impl FnOnce() -> T + Send + 'static,
) -> Result<T, Refused> {
    let _permit = HASHING
        .acquire()
        .await
        .map_err(|_| refused(ErrorCode::Internal, "the server is stopping"))?;
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|_| refused(ErrorCode::Internal, "the password could not be checked"))
}

/// The Argon2id hash of `password` (a PHC string: the parameters and salt travel with it).
async fn hash(password: String) -> Result<String, Refused> {
    let mut salt = [0u8; 16];
    getrandom::fill(&mut salt).map_err(|_| refused(ErrorCode::Internal, "no randomness"))?;
    off_the_runtime(move || {
        let salt = SaltString::encode_b64(&salt).map_err(|e| e.to_string())?;
        Argon2::default()
            .hash_password(password.as_bytes(), &salt)
            .map(|h| h.to_string())
            .map_err(|e| e.to_string())
    })
    .await?
    .map_err(|e| {
        refused(
            ErrorCode::Internal,
            format!("cannot hash the password: {e}"),
        )
    })
}

async fn verify(password: String, phc: String) -> Result<bool, Refused> {
    off_the_runtime(move || {
        PasswordHash::new(&phc)
            .map(|parsed| {
                Argon2::default()
                    .verify_password(password.as_bytes(), &parsed)
                    .is_ok()
            })
            .unwrap_or(false)
    })
    .await
}

fn check_password(password: &str) -> Result<(), Refused> {
    if PASSWORD_CHARS.contains(&password.chars().count()) {
        Ok(())
    } else {
        Err(refused(
            ErrorCode::BadRequest,
            format!(
                "a password is {} to {} characters",
                PASSWORD_CHARS.start(),
                PASSWORD_CHARS.end()
            ),
        ))
    }
}

/// A login or registration from `ip`: within the address's allowance, or refused.
fn admit(app: &App, ip: Option<IpAddr>) -> Result<(), Refused> {
    match ip {
        Some(ip) if !app.guard.login(ip) => Err(refused(
            ErrorCode::RateLimited,
            "too many logins from this address: wait a minute",
        )),
        _ => Ok(()),
    }
}

/// Starts a session of `name`: its token, shown once; only its digest is kept.
async fn open_session(app: &App, name: &str) -> Result<String, Refused> {
    let token = new_token();
    let session = digest(&token);
    if let Some(store) = app.store() {
        store
            .add_session(&session, name, crate::wall_clock_ms())
            .await
            .map_err(not_stored)?;
    }
    for old in app.accounts.add_session(session, name) {
        // Past the sessions an account keeps: the oldest ends.
        if let Some(store) = app.store() {
            store.remove_session(&old).await.map_err(not_stored)?;
        }
        app.accounts.end_session(&old);
    }
    Ok(token)
}

/// `register`: a guest's own account. Answers its status and, when it is active at once, a
/// session token.
pub async fn register(
    app: &App,
    ip: Option<IpAddr>,
    name: &str,
    password: String,
) -> Result<(AccountStatus, Option<String>), Refused> {
    let status = match app.limits.registration {
        Registration::Closed => {
            return Err(refused(
                ErrorCode::Forbidden,
                "this server does not take registrations: the organizer makes the accounts",
            ))
        }
        Registration::Open => AccountStatus::Active,
        Registration::Approval => AccountStatus::Pending,
    };
    if !valid_name(name) {
        return Err(refused(
            ErrorCode::BadRequest,
            "an account name is 1 to 40 letters, digits, '-', '_' or '.'",
        ));
    }
    check_password(&password)?;
    admit(app, ip)?;
    // Taken before the slow hash, so that two guests cannot register the same name.
    if !app.accounts.reserve(name) {
        return Err(refused(
            ErrorCode::BadRequest,
            format!("the name {name:?} is taken"),
        ));
    }
    let stored = async {
        let password_hash = hash(password).await?;
        if let Some(store) = app.store() {
            let account = StoredAccount {
                name: name.to_string(),
                kind: crate::accounts::kind_name(AccountKind::Player).to_string(),
                token: String::new(),
                password_hash: Some(password_hash.clone()),
                status: status.as_str().to_string(),
            };
            store
                .create_account(&account, crate::wall_clock_ms())
                .await
                .map_err(not_stored)?;
        }
        Ok(password_hash)
    }
    .await;
    let password_hash = match stored {
        Ok(hash) => hash,
        Err(e) => {
            app.accounts.release(name);
            return Err(e);
        }
    };
    app.accounts
        .insert(name, AccountKind::Player, "", status, Some(password_hash));
    tracing::info!(
        account = name,
        status = status.as_str(),
        "account registered"
    );
    let token = match status {
        AccountStatus::Active => Some(open_session(app, name).await.map_err(|_| {
            refused(
                ErrorCode::Internal,
                "the account is registered, but no session could be started: log in",
            )
        })?),
        _ => None,
    };
    Ok((status, token))
}

/// `login`: a session token for a name and its password.
pub async fn login(
    app: &App,
    ip: Option<IpAddr>,
    name: &str,
    password: String,
) -> Result<String, Refused> {
    admit(app, ip)?;
    if password.chars().count() > *PASSWORD_CHARS.end() {
        return Err(wrong());
    }
    let Some((phc, status)) = app.accounts.password_of(name) else {
        return Err(wrong());
    };
    if !app.attempts.take(name) {
        return Err(refused(
            ErrorCode::RateLimited,
            "too many logins to this account: wait a minute",
        ));
    }
    if !verify(password, phc).await? {
        tracing::info!(account = name, "wrong password");
        return Err(wrong());
    }
    // Said only to whoever knows the password.
    match status {
        AccountStatus::Active => open_session(app, name).await,
        AccountStatus::Pending => Err(refused(
            ErrorCode::Forbidden,
            "the account waits for the organizer's approval",
        )),
        AccountStatus::Disabled => Err(refused(
            ErrorCode::Forbidden,
            "the account is disabled: ask the organizer",
        )),
    }
}

/// `logout`: the session ends (its connections are closed).
pub async fn logout(app: &App, session: &str) -> Result<(), Refused> {
    if let Some(store) = app.store() {
        store.remove_session(session).await.map_err(not_stored)?;
    }
    app.accounts.end_session(session);
    Ok(())
}

/// `change_password`: the old password again, then the new one; every other session ends.
pub async fn change_password(
    app: &App,
    name: &str,
    session: &str,
    old: String,
    new: String,
) -> Result<(), Refused> {
    check_password(&new)?;
    let Some((phc, _)) = app.accounts.password_of(name) else {
        return Err(refused(
            ErrorCode::BadRequest,
            "this account has no password (the organizer made it with a token)",
        ));
    };
    if !app.attempts.take(name) {
        return Err(refused(
            ErrorCode::RateLimited,
            "too many attempts on this account: wait a minute",
        ));
    }
    if !verify(old, phc).await? {
        return Err(wrong());
    }
    let password_hash = hash(new).await?;
    if let Some(store) = app.store() {
        store
            .set_password(name, &password_hash, session)
            .await
            .map_err(not_stored)?;
    }
    app.accounts.set_password(name, password_hash);
    app.accounts
        .end_sessions(name, Some(session), "the password was changed");
    tracing::info!(account = name, "password changed");
    Ok(())
}

/// `set_account_status` (the organizer only: the session checks). Disabling ends the
/// account's sessions and closes its connections.
pub async fn set_status(app: &App, name: &str, status: AccountStatus) -> Result<(), Refused> {
    if status == AccountStatus::Pending {
        return Err(refused(
            ErrorCode::BadRequest,
            "an account is set active or disabled",
        ));
    }
    if app.accounts.status_of(name).is_none() {
        return Err(refused(
            ErrorCode::BadRequest,
            format!("no account {name:?}"),
        ));
    }
    let disable = status == AccountStatus::Disabled;
    if let Some(store) = app.store() {
        store
            .set_account_status(name, status.as_str(), disable)
            .await
            .map_err(not_stored)?;
    }
    app.accounts.set_status(name, status);
    if disable {
        app.accounts
            .end_sessions(name, None, "the account was disabled");
        app.accounts.close_all(name, "the account was disabled");
    }
    tracing::info!(
        account = name,
        status = status.as_str(),
        "account status set"
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_password_is_kept_as_an_argon2id_hash_that_checks_it() {
        let phc = hash("kış-kupası-2026".into()).await.unwrap();
        assert!(phc.starts_with("$argon2id$v=19$"), "{phc}");
        assert!(!phc.contains("kupası"));
        assert!(verify("kış-kupası-2026".into(), phc.clone()).await.unwrap());
        assert!(!verify("kış-kupası-2025".into(), phc.clone()).await.unwrap());
        // The same password hashes differently each time (its own salt).
        assert_ne!(phc, hash("kış-kupası-2026".into()).await.unwrap());
        // A stored hash that is not one refuses every password rather than failing open.
        assert!(!verify("anything".into(), "not a hash".into())
            .await
            .unwrap());
    }

    #[test]
    fn passwords_are_checked_for_length_in_characters() {
        assert!(check_password("12345678").is_ok());
        assert!(check_password("ığüşöçİĞ").is_ok(), "8 characters, 16 bytes");
        assert_eq!(
            check_password("1234567").unwrap_err().code,
            ErrorCode::BadRequest
        );
        assert!(check_password(&"x".repeat(128)).is_ok());
        assert!(check_password(&"x".repeat(129)).is_err());
    }

    #[test]
    fn registration_settings_are_named() {
        for (text, setting) in [
            ("closed", Registration::Closed),
            ("open", Registration::Open),
            ("approval", Registration::Approval),
        ] {
            assert_eq!(text.parse::<Registration>(), Ok(setting));
        }
        assert!("yes".parse::<Registration>().is_err());
    }
}
