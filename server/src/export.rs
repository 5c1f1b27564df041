//! A player's data, exported on their request: the account, its ratings and rated rounds,
//! and its matches, as one JSON document.

use crate::ratings::Ratings;
use crate::App;

/// The most rated rounds and matches an export lists (the latest ones).
const EXPORT_MAX: usize = 10_000;

/// What the server keeps of `account`, for its owner: the account (never its password's hash
/// nor its tokens), its ratings and every rated round, and its matches, newest first.
pub async fn account(app: &App, account: &str) -> Result<serde_json::Value, String> {
    let profile = match Ratings::profile(app, account).await {
        Some(profile) => profile?,
        None => return Err(format!("no account {account:?}")),
    };
    let history = match app.store() {
        Some(store) => store
            .rating_history(account, EXPORT_MAX as u32)
            .await
            .map_err(|e| e.to_string())?,
        None => Vec::new(),
    };
    let mut matches = Vec::new();
    let mut before: Option<String> = None;
    while matches.len() < EXPORT_MAX {
        let page = app
            .matches_of(account, Some(crate::LIST_MAX), before.as_deref())
            .await?;
        matches.extend(page.matches);
        match page.next {
            Some(next) => before = Some(next),
            None => break,
        }
    }
    matches.truncate(EXPORT_MAX);
    Ok(serde_json::json!({
        "account": {
            "name": account,
            "kind": profile.kind,
            "status": app.accounts.status_of(account).map(|s| s.as_str()),
        },
        "ratings": profile.ratings,
        "rated_rounds": history,
        "matches": matches,
        "exported_ms": crate::wall_clock_ms(),
    }))
}
