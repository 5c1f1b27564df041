//! Accounts that log in: registration when the organizer allows it (open or with approval),
//! login with a password, sessions that survive a restart and end at logout, a password
//! change, an account disabled, and the limits on guessing.

use hakem_blackbox::{hakem_with_input, Client, Database, Server};
use serde_json::{json, Value};

const ORGANIZER: &str = "organizer-secret";
const PASSWORD: &str = "kış-kupası-2026";

/// Says hello with `token`; returns the welcome's identity.
async fn hello(server: &Server, name: &str, token: &str) -> (Client, Value) {
    let mut client = Client::connect_raw(server, name).await;
    client
        .send(json!({"type": "hello", "protocol": 1, "token": token}))
        .await;
    let welcome = client.next().await;
    assert_eq!(welcome["type"], "welcome", "{welcome}");
    (client, welcome["identity"].clone())
}

async fn login(client: &mut Client, name: &str, password: &str) -> Value {
    client
        .request(json!({"type": "login", "name": name, "password": password}))
        .await
}

fn token_of(reply: &Value) -> String {
    let token = reply["token"].as_str().unwrap_or_else(|| panic!("{reply}"));
    assert!(
        token.len() == 32 && token.chars().all(|c| c.is_ascii_hexdigit()),
        "{reply}"
    );
    token.to_string()
}

#[tokio::test]
async fn registration_is_closed_unless_the_organizer_opens_it() {
    let server = Server::start();
    let mut guest = Client::connect(&server, "guest", None).await;
    let refused = guest
        .refused(
            json!({"type": "register", "name": "ayse", "password": PASSWORD}),
            "forbidden",
        )
        .await;
    assert!(refused["message"].as_str().unwrap().contains("organizer"));
    guest
        .refused(
            json!({"type": "login", "name": "ayse", "password": PASSWORD}),
            "unauthorized",
        )
        .await;
    guest
        .refused(json!({"type": "logout"}), "bad_request")
        .await;
    guest
        .refused(
            json!({"type": "change_password", "password": PASSWORD, "new_password": "something-else"}),
            "bad_request",
        )
        .await;
    guest
        .refused(
            json!({"type": "set_account_status", "name": "ayse", "status": "disabled"}),
            "forbidden",
        )
        .await;
    // Malformed: a number for a password, a status that does not exist.
    guest
        .refused(
            json!({"type": "login", "name": "ayse", "password": 12345678}),
            "bad_request",
        )
        .await;
    let mut organizer = Client::connect(&server, "organizer", Some(ORGANIZER)).await;
    organizer
        .refused(
            json!({"type": "set_account_status", "name": "ayse", "status": "sleeping"}),
            "bad_request",
        )
        .await;
    organizer
        .refused(
            json!({"type": "set_account_status", "name": "ayse", "status": "disabled"}),
            "bad_request",
        )
        .await;
}

#[tokio::test]
async fn a_player_registers_logs_in_and_comes_back_after_a_restart() {
    for database in Database::all() {
        let kind = database.kind;
        let mut server = Server::start_on(database, &["--registration", "open"]);
        let mut guest = Client::connect(&server, "guest", None).await;
        for (name, password) in [("ayse", "short"), ("no spaces", PASSWORD)] {
            guest
                .refused(
                    json!({"type": "register", "name": name, "password": password}),
                    "bad_request",
                )
                .await;
        }
        let long = "x".repeat(129);
        guest
            .refused(
                json!({"type": "register", "name": "ayse", "password": long}),
                "bad_request",
            )
            .await;
        let registered = guest
            .request(json!({"type": "register", "name": "ayse", "password": PASSWORD}))
            .await;
        assert_eq!(registered["type"], "registered", "{kind}: {registered}");
        assert_eq!(registered["status"], "active");
        let first = token_of(&registered);
        let mut other = Client::connect(&server, "other guest", None).await;
        let taken = other
            .refused(
                json!({"type": "register", "name": "ayse", "password": PASSWORD}),
                "bad_request",
            )
            .await;
        assert!(taken["message"].as_str().unwrap().contains("taken"));

        let (first_conn, identity) = hello(&server, "first session", &first).await;
        assert_eq!(identity, json!({"kind": "player", "name": "ayse"}));

        // Wrong password and unknown name get the same answer.
        let wrong = login(&mut other, "ayse", "not-the-password").await;
        let unknown = login(&mut other, "nobody", PASSWORD).await;
        assert_eq!(wrong["code"], "unauthorized", "{wrong}");
        assert_eq!(wrong["message"], unknown["message"]);
        let logged_in = login(&mut other, "ayse", PASSWORD).await;
        assert_eq!(logged_in["type"], "logged_in", "{logged_in}");
        assert_eq!(logged_in["name"], "ayse");
        let second = token_of(&logged_in);
        assert_ne!(first, second);

        // Seated by name like any account.
        let (mut second_conn, _) = hello(&server, "second session", &second).await;
        let mut organizer = Client::connect(&server, "organizer", Some(ORGANIZER)).await;
        let created = organizer
            .request(json!({"type": "create_match", "game": "pente", "accounts": {"p1": "ayse"}}))
            .await;
        let notice = second_conn.find(|f| f["type"] == "your_match").await;
        assert_eq!(notice["match"], created["match"]);

        // Neither the password nor a session token is in the database.
        if kind == "sqlite" {
            let file = server
                .database
                .url
                .trim_start_matches("sqlite://")
                .to_string();
            let mut bytes = std::fs::read(&file).unwrap();
            bytes.extend(std::fs::read(format!("{file}-wal")).unwrap_or_default());
            for secret in [PASSWORD, &first, &second] {
                assert!(
                    !bytes.windows(secret.len()).any(|w| w == secret.as_bytes()),
                    "{secret:?} is stored"
                );
            }
            assert!(
                bytes.windows(9).any(|w| w == b"$argon2id"),
                "a hash is stored"
            );
        }

        // Sessions survive a restart.
        drop((first_conn, second_conn));
        server.restart_with(&["--registration", "open"]);
        let (mut first_conn, identity) = hello(&server, "first again", &first).await;
        assert_eq!(identity["name"], "ayse", "{kind}");
        let (_, stranger) = hello(&server, "stranger", "0123456789abcdef0123456789abcdef").await;
        assert_eq!(stranger["kind"], "guest");
        let (mut second_conn, _) = hello(&server, "second again", &second).await;

        // A password change needs the old one, and ends every other session.
        second_conn
            .refused(
                json!({"type": "change_password", "password": "not-the-password", "new_password": "a-new-password"}),
                "unauthorized",
            )
            .await;
        second_conn
            .refused(
                json!({"type": "change_password", "password": PASSWORD, "new_password": "short"}),
                "bad_request",
            )
            .await;
        second_conn
            .accepted(json!({"type": "change_password", "password": PASSWORD, "new_password": "a-new-password"}))
            .await;
        first_conn.closed().await;
        let (_, ended) = hello(&server, "first after the change", &first).await;
        assert_eq!(ended["kind"], "guest", "{kind}: the other session ended");
        let mut guest = Client::connect(&server, "guest again", None).await;
        assert_eq!(
            login(&mut guest, "ayse", PASSWORD).await["code"],
            "unauthorized"
        );
        assert_eq!(
            login(&mut guest, "ayse", "a-new-password").await["type"],
            "logged_in"
        );

        // Logout: acknowledged, then the connection closes and its token is worth nothing.
        second_conn.accepted(json!({"type": "logout"})).await;
        second_conn.closed().await;
        let (_, after) = hello(&server, "after logout", &second).await;
        assert_eq!(after["kind"], "guest", "{kind}");
        server.restart_with(&["--registration", "open"]);
        let (_, after) = hello(&server, "after logout and restart", &second).await;
        assert_eq!(after["kind"], "guest", "{kind}: the logout was stored");
    }
}

#[tokio::test]
async fn the_organizer_approves_and_disables_accounts() {
    let mut server = Server::start_with(&["--registration", "approval"]);
    let mut guest = Client::connect(&server, "guest", None).await;
    let registered = guest
        .request(json!({"type": "register", "name": "bora", "password": PASSWORD}))
        .await;
    assert_eq!(registered["status"], "pending", "{registered}");
    assert!(registered.get("token").is_none(), "{registered}");
    let waiting = login(&mut guest, "bora", PASSWORD).await;
    assert_eq!(waiting["code"], "forbidden", "{waiting}");
    assert!(waiting["message"].as_str().unwrap().contains("approval"));

    let mut organizer = Client::connect(&server, "organizer", Some(ORGANIZER)).await;
    organizer
        .refused(
            json!({"type": "set_account_status", "name": "bora", "status": "pending"}),
            "bad_request",
        )
        .await;
    organizer
        .accepted(json!({"type": "set_account_status", "name": "bora", "status": "active"}))
        .await;
    let token = token_of(&login(&mut guest, "bora", PASSWORD).await);
    let (mut bora, identity) = hello(&server, "bora", &token).await;
    assert_eq!(identity["name"], "bora");

    // Disabled: the connection closes, the session and the password are refused.
    organizer
        .accepted(json!({"type": "set_account_status", "name": "bora", "status": "disabled"}))
        .await;
    bora.closed().await;
    let (_, after) = hello(&server, "bora again", &token).await;
    assert_eq!(after["kind"], "guest");
    let disabled = login(&mut guest, "bora", PASSWORD).await;
    assert_eq!(disabled["code"], "forbidden");
    assert!(disabled["message"].as_str().unwrap().contains("disabled"));

    // An account the organizer made (with a token) can be disabled and enabled again, and
    // that is stored.
    let created = organizer
        .request(json!({"type": "create_account", "name": "cem"}))
        .await;
    let cem = created["token"].as_str().unwrap().to_string();
    organizer
        .accepted(json!({"type": "set_account_status", "name": "cem", "status": "disabled"}))
        .await;
    server.restart_with(&["--registration", "approval"]);
    let (_, identity) = hello(&server, "cem", &cem).await;
    assert_eq!(identity["kind"], "guest", "disabled across a restart");
    let mut organizer = Client::connect(&server, "organizer", Some(ORGANIZER)).await;
    organizer
        .accepted(json!({"type": "set_account_status", "name": "cem", "status": "active"}))
        .await;
    let (_, identity) = hello(&server, "cem", &cem).await;
    assert_eq!(identity, json!({"kind": "player", "name": "cem"}));
    // A password change is for accounts that have one.
    let (mut cem_conn, _) = hello(&server, "cem", &cem).await;
    cem_conn
        .refused(
            json!({"type": "change_password", "password": PASSWORD, "new_password": "a-new-password"}),
            "bad_request",
        )
        .await;
}

#[tokio::test]
async fn guessing_is_slowed_per_address_and_per_account() {
    // Per address: three logins or registrations a minute here.
    let server = Server::start_with(&["--registration", "open", "--logins-per-minute", "3"]);
    let mut guest = Client::connect(&server, "guesser", None).await;
    for _ in 0..3 {
        assert_eq!(
            login(&mut guest, "ayse", "guess-guess").await["code"],
            "unauthorized"
        );
    }
    let limited = login(&mut guest, "ayse", "guess-guess").await;
    assert_eq!(limited["code"], "rate_limited", "{limited}");
    let limited = guest
        .request(json!({"type": "register", "name": "deniz", "password": PASSWORD}))
        .await;
    assert_eq!(limited["code"], "rate_limited", "{limited}");

    // Per account: five attempts a minute, from anywhere, even with the right password.
    let server = Server::start_with(&["--registration", "open", "--logins-per-minute", "0"]);
    let mut guest = Client::connect(&server, "guest", None).await;
    let registered = guest
        .request(json!({"type": "register", "name": "ayse", "password": PASSWORD}))
        .await;
    assert_eq!(registered["status"], "active");
    for i in 0..5 {
        let mut guesser = Client::connect(&server, &format!("guesser {i}"), None).await;
        assert_eq!(
            login(&mut guesser, "ayse", "guess-guess").await["code"],
            "unauthorized"
        );
    }
    let limited = login(&mut guest, "ayse", PASSWORD).await;
    assert_eq!(limited["code"], "rate_limited", "{limited}");
    // Another account is not held up by it.
    let other = guest
        .request(json!({"type": "register", "name": "bora", "password": PASSWORD}))
        .await;
    assert_eq!(other["type"], "registered");
    assert_eq!(
        login(&mut guest, "bora", PASSWORD).await["type"],
        "logged_in"
    );
}

/// `hakem account`, with what it printed to standard output (trimmed) and standard error.
fn account(args: &[&str], input: &str) -> (bool, String, String) {
    let mut all = vec!["account"];
    all.extend_from_slice(args);
    let out = hakem_with_input(&all, input);
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).trim().to_string(),
        String::from_utf8_lossy(&out.stderr).to_string(),
    )
}

#[tokio::test]
async fn the_terminal_registers_logs_in_changes_the_password_and_logs_out() {
    let server = Server::start_with(&["--registration", "approval"]);
    let url = server.ws_url();
    let url = url.as_str();
    let (ok, out, err) = account(
        &["register", "--server", url, "--name", "deniz"],
        &format!("{PASSWORD}\n"),
    );
    assert!(ok, "{err}");
    assert!(out.is_empty(), "no token while the account waits: {out}");
    assert!(err.contains("approval"), "{err}");
    // (Each login below counts against the account's five a minute.)
    let (ok, _, err) = account(
        &["approve", "--server", url, "--token", ORGANIZER, "deniz"],
        "",
    );
    assert!(ok, "{err}");
    let (ok, _, err) = account(
        &["login", "--server", url, "--name", "deniz"],
        "not-the-password\n",
    );
    assert!(
        !ok && err.contains("wrong account name or password"),
        "{err}"
    );
    let (ok, token, err) = account(
        &["login", "--server", url, "--name", "deniz"],
        &format!("{PASSWORD}\n"),
    );
    assert!(ok, "{err}");
    let (_, identity) = hello(&server, "deniz", &token).await;
    assert_eq!(identity, json!({"kind": "player", "name": "deniz"}));

    // The new password twice: two different ones change nothing.
    let (ok, _, err) = account(
        &["password", "--server", url, "--token", &token],
        &format!("{PASSWORD}\nthe-new-one\nanother-one\n"),
    );
    assert!(!ok && err.contains("differ"), "{err}");
    let (ok, _, err) = account(
        &["password", "--server", url, "--token", &token],
        &format!("{PASSWORD}\nthe-new-one\nthe-new-one\n"),
    );
    assert!(ok, "{err}");
    let (ok, _, err) = account(
        &["login", "--server", url, "--name", "deniz"],
        "the-new-one\n",
    );
    assert!(ok, "{err}");

    let (ok, _, err) = account(&["logout", "--server", url, "--token", &token], "");
    assert!(ok, "{err}");
    let (_, identity) = hello(&server, "deniz after logout", &token).await;
    assert_eq!(identity["kind"], "guest");
    let (ok, _, err) = account(
        &["disable", "--server", url, "--token", ORGANIZER, "deniz"],
        "",
    );
    assert!(ok, "{err}");
    let (ok, _, err) = account(
        &["login", "--server", url, "--name", "deniz"],
        "the-new-one\n",
    );
    assert!(!ok && err.contains("disabled"), "{err}");
    // The organizer's own accounts, from the terminal.
    let (ok, token, err) = account(
        &[
            "create", "--server", url, "--token", ORGANIZER, "--name", "ece", "--bot",
        ],
        "",
    );
    assert!(ok, "{err}");
    let (_, identity) = hello(&server, "ece", &token).await;
    assert_eq!(identity, json!({"kind": "bot", "name": "ece"}));
    let (ok, _, err) = account(
        &[
            "create",
            "--server",
            url,
            "--token",
            "not-the-organizer",
            "--name",
            "fus",
        ],
        "",
    );
    assert!(!ok && err.contains("organizer"), "{err}");
}
