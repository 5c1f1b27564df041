//! A player's data, exported on their request: the account, its ratings and rated rounds,
//! its matches and the chat messages it wrote, as one JSON document.

use crate::App;
use hakem_protocol::RatingView;

/// The most rated rounds and matches an export lists (the latest ones).
const EXPORT_MAX: usize = 10_000;

/// What the server keeps of `account`, for its owner: the account (never its password's hash
/// nor its tokens), its ratings and every rated round, its matches, newest first, and its chat
/// messages, oldest first.
pub async fn account(app: &App, account: &str) -> Result<serde_json::Value, String> {
    let kind = app
        .accounts
        .kind_of(account)
        .ok_or_else(|| format!("no account {account:?}"))?;
    let (ratings, history, chat) = match app.store() {
        Some(store) => {
            let chat = store
                .chat_of_account(account, EXPORT_MAX as u32)
                .await
                .map_err(|e| e.to_string())?;
            let history = store
                .rating_history(account, EXPORT_MAX as u32)
                .await
                .map_err(|e| e.to_string())?;
            let ratings = store
                .ratings(Some(account))
                .await
                .map_err(|e| e.to_string())?;
            (ratings, history, chat)
        }
        None => (Vec::new(), Vec::new(), Vec::new()),
    };
    let ratings: std::collections::BTreeMap<String, RatingView> = ratings
        .into_iter()
        .map(|(_, pool, r)| (pool, RatingView::from(&r)))
        .collect();
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
            "kind": kind,
            "status": app.accounts.status_of(account).map(|s| s.as_str()),
        },
        "ratings": ratings,
        "rated_rounds": history,
        "matches": matches,
        "chat": chat,
        "exported_ms": crate::wall_clock_ms(),
    }))
}
