//! The HTTP side: `/ws` (the WebSocket protocol), `/healthz`, and read-only JSON under `/api`.

use std::future::Future;
use std::sync::Arc;

use axum::extract::rejection::QueryRejection;
use axum::extract::ws::WebSocketUpgrade;
use axum::extract::{Path, Query, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Extension, Json, Router};
use hakem_protocol::{ListStatus, MAX_FRAME_BYTES};
use metrics_exporter_prometheus::PrometheusHandle;
use serde_json::json;
use tokio::net::TcpListener;

use crate::listen::Peer;
use crate::{session, App};

pub fn router(app: Arc<App>, metrics: Option<PrometheusHandle>) -> Router {
    Router::new()
        .route(
            "/metrics",
            get(move || {
                let text = metrics
                    .as_ref()
                    .map(PrometheusHandle::render)
                    .unwrap_or_default();
                async move { ([("content-type", "text/plain; version=0.0.4")], text) }
            }),
        )
        .route("/ws", get(websocket))
        .route("/healthz", get(healthz))
        .route("/api/matches", get(list_matches))
        .route("/api/matches/{id}", get(match_state))
        .route("/api/matches/{id}/record", get(match_record))
        .route("/api/matches/{id}/analysis", get(match_analysis))
        .route("/api/tournaments", get(list_tournaments))
        .route("/api/tournaments/{id}", get(tournament_view))
        .route("/api/tournaments/{id}/trf", get(tournament_trf))
        .route("/api/players/{name}", get(player_profile))
        .route("/api/players/{name}/matches", get(player_matches))
        .route("/api/account/export", get(account_export))
        .merge(crate::web::routes())
        .with_state(app)
}

async fn websocket(
    ws: WebSocketUpgrade,
    State(app): State<Arc<App>>,
    peer: Option<Extension<Peer>>,
    headers: HeaderMap,
) -> Response {
    if let Err(origin) = origin_allowed(&headers, &app.limits.allowed_origins) {
        tracing::info!(%origin, "WebSocket from another site's page refused");
        return (
            StatusCode::FORBIDDEN,
            Json(json!({
                "code": "forbidden",
                "message": format!("pages from {origin} may not connect here"),
            })),
        )
            .into_response();
    }
    let peer = peer.map(|Extension(peer)| peer);
    let forwarded_for = headers.get("x-forwarded-for").and_then(|v| v.to_str().ok());
    let client_ip = peer
        .as_ref()
        .map(|peer| app.guard.client_ip(peer.admission.ip(), forwarded_for));
    // Frames up to 4x the protocol limit are read so that an oversized one gets a `too_large`
    // reply instead of a dropped connection; anything bigger is cut off by the socket layer.
    // The socket layer's default buffers (128 KiB each way) are far too big for tens of
    // thousands of mostly idle sockets; client frames here are a few hundred bytes (a bigger
    // one is read in several goes). A write buffer of 0 sends each frame at once.
    ws.max_message_size(4 * MAX_FRAME_BYTES)
        .max_frame_size(4 * MAX_FRAME_BYTES)
        .read_buffer_size(1024)
        .write_buffer_size(0)
        .max_write_buffer_size(256 * 1024)
        .on_upgrade(move |socket| session::serve(socket, app, peer, client_ip))
}

/// A WebSocket opened by a web page must come from a page of this server (the scheme and host
/// it was reached at, as a proxy in front says with `X-Forwarded-Proto` and
/// `X-Forwarded-Host`) or of an allowed origin; one with no `Origin` is no page's (the
/// terminal client, bots) and is let in. The refused origin is the error.
fn origin_allowed(headers: &HeaderMap, allowed: &[String]) -> Result<(), String> {
    let Some(origin) = headers.get(header::ORIGIN) else {
        return Ok(());
    };
    let origin = origin.to_str().unwrap_or("").trim().trim_end_matches('/');
    let text = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            // A proxy chain lists hops: the first is what the browser used.
            .and_then(|v| v.split(',').next())
            .map(|v| v.trim().to_ascii_lowercase())
    };
    let scheme = text("x-forwarded-proto").unwrap_or_else(|| "http".into());
    let host = text("x-forwarded-host").or_else(|| text("host"));
    let own = host.map(|host| format!("{scheme}://{host}"));
    let origin_lower = origin.to_ascii_lowercase();
    let same = own.as_deref() == Some(origin_lower.as_str());
    let listed = allowed
        .iter()
        .any(|a| a.trim_end_matches('/').eq_ignore_ascii_case(origin));
    if same || listed {
        Ok(())
    } else {
        Err(origin.to_string())
    }
}

/// `?status=live|finished&limit=N&before=CURSOR`, as `list_matches`.
#[derive(serde::Deserialize)]
struct ListQuery {
    #[serde(default)]
    status: Option<ListStatus>,
    #[serde(default)]
    limit: Option<u32>,
    #[serde(default)]
    before: Option<String>,
}

async fn list_matches(
    State(app): State<Arc<App>>,
    query: Result<Query<ListQuery>, QueryRejection>,
) -> Response {
    let Ok(Query(query)) = query else {
        return bad_request(
            "status is live or finished; limit is a number; before is the next of a page",
        );
    };
    match app
        .list(
            query.status.unwrap_or_default(),
            query.limit,
            query.before.as_deref(),
        )
        .await
    {
        Ok(page) => page_json(page),
        Err(message) => bad_request(&message),
    }
}

/// `ok`; a node of a cluster says whether it is in it (503 while it is not: a load balancer
/// sends it no one).
async fn healthz(State(app): State<Arc<App>>) -> Response {
    match app.cluster() {
        None => Json(json!({"status": "ok"})).into_response(),
        Some(cluster) => {
            let joined = cluster.is_joined();
            let status = match (joined, cluster.is_leaving()) {
                (true, _) => "ok",
                (false, true) => "leaving",
                (false, false) => "out_of_cluster",
            };
            let body = Json(json!({
                "status": status,
                "cluster": cluster.health(),
            }));
            if joined {
                body.into_response()
            } else {
                (StatusCode::SERVICE_UNAVAILABLE, body).into_response()
            }
        }
    }
}

async fn match_state(Path(id): Path<String>, State(app): State<Arc<App>>) -> Response {
    match app.match_state(&id).await {
        Some(state) => Json(state).into_response(),
        None => unknown_match(&id),
    }
}

async fn match_record(Path(id): Path<String>, State(app): State<Arc<App>>) -> Response {
    match app.record(&id).await {
        Some(text) => ([("content-type", "text/plain; charset=utf-8")], text).into_response(),
        None => unknown_match(&id),
    }
}

#[derive(serde::Deserialize)]
struct AnalysisQuery {
    set: Option<u8>,
}

/// `?set=N` (1 by default): the solver's verdict on each position of that set.
async fn match_analysis(
    Path(id): Path<String>,
    State(app): State<Arc<App>>,
    query: Result<Query<AnalysisQuery>, QueryRejection>,
) -> Response {
    use crate::analysis::Refused;
    let Ok(Query(query)) = query else {
        return bad_request("set is the number of a set of the match");
    };
    match app.analyse(&id, query.set.unwrap_or(1)).await {
        Ok(analysis) => Json(analysis).into_response(),
        Err(Refused::UnknownMatch) => unknown_match(&id),
        Err(Refused::NotFinished) => (
            StatusCode::CONFLICT,
            Json(json!({"code": "match_not_finished", "message": "a match is analysed once it is finished, never during play"})),
        )
            .into_response(),
        Err(Refused::NotPentago) => bad_request("the solver is for Pentago"),
        Err(Refused::NoSuchSet) => bad_request("this match has no such set"),
        Err(Refused::Busy) => (
            StatusCode::SERVICE_UNAVAILABLE,
            [(header::RETRY_AFTER, "3")],
            Json(json!({"code": "busy", "message": "the solver is analysing another set; try again in a few seconds"})),
        )
            .into_response(),
    }
}

fn bad_request(message: &str) -> Response {
    (
        StatusCode::BAD_REQUEST,
        Json(json!({"code": "bad_request", "message": message})),
    )
        .into_response()
}

async fn list_tournaments(State(app): State<Arc<App>>) -> Response {
    if let Some(read) = tournaments_elsewhere(&app, None).await {
        return read;
    }
    Json(json!({ "tournaments": app.tournaments.summaries() })).into_response()
}

async fn tournament_view(Path(id): Path<String>, State(app): State<Arc<App>>) -> Response {
    if let Some(read) = tournaments_elsewhere(&app, Some((&id, false))).await {
        return read;
    }
    match app.tournaments.view(&id) {
        Ok(view) => Json(view).into_response(),
        Err(failure) => not_found(failure),
    }
}

async fn tournament_trf(Path(id): Path<String>, State(app): State<Arc<App>>) -> Response {
    if let Some(read) = tournaments_elsewhere(&app, Some((&id, true))).await {
        return read;
    }
    match app.tournaments.trf(&id) {
        Ok(text) => trf_text(text),
        Err(failure) => not_found(failure),
    }
}

fn trf_text(text: String) -> Response {
    ([("content-type", "text/plain; charset=utf-8")], text).into_response()
}

/// On a node of a cluster whose tournaments another node runs: that node's answer.
async fn tournaments_elsewhere(app: &App, what: Option<(&str, bool)>) -> Option<Response> {
    use crate::cluster::route::{read_tournaments, TournamentRead};
    let cluster = app.cluster()?;
    let at = match cluster.tournaments_holder().await {
        crate::cluster::Holder::Here => return None,
        crate::cluster::Holder::Elsewhere(at) => at,
        crate::cluster::Holder::Nobody => {
            return Some(
                (
                    StatusCode::SERVICE_UNAVAILABLE,
                    [(header::RETRY_AFTER, "3")],
                    Json(json!({"code": "internal", "message": "no node runs the tournaments at this moment"})),
                )
                    .into_response(),
            )
        }
    };
    Some(match read_tournaments(cluster, &at, what).await {
        TournamentRead::List(list) => Json(json!({ "tournaments": list })).into_response(),
        TournamentRead::View(view) => Json(view).into_response(),
        TournamentRead::Trf(text) => trf_text(text),
        TournamentRead::Refused(code, message) => not_found(crate::tournament::Failure::new(code, message)),
        TournamentRead::Unavailable => (
            StatusCode::SERVICE_UNAVAILABLE,
            [(header::RETRY_AFTER, "3")],
            Json(json!({"code": "internal", "message": "the node that runs the tournaments did not answer"})),
        )
            .into_response(),
    })
}

/// A player's ratings in each pool and latest rated rounds.
async fn player_profile(Path(name): Path<String>, State(app): State<Arc<App>>) -> Response {
    match crate::ratings::Ratings::profile(&app, &name).await {
        Some(Ok(profile)) => Json(profile).into_response(),
        Some(Err(e)) => (
            StatusCode::INTERNAL_SERVER_ERROR,
            Json(json!({"code": "internal", "message": e})),
        )
            .into_response(),
        None => (
            StatusCode::NOT_FOUND,
            Json(json!({"code": "unknown_account", "message": format!("no account {name:?}")})),
        )
            .into_response(),
    }
}

/// Everything the server keeps of the account whose token (an account's or a session's)
/// comes as `Authorization: Bearer TOKEN`, as one JSON file.
async fn account_export(State(app): State<Arc<App>>, headers: HeaderMap) -> Response {
    // The scheme's name is case-insensitive (RFC 7235).
    let token = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split_once(' '))
        .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
        .map_or("", |(_, token)| token.trim());
    let Some(holder) = app.account_of_token(token) else {
        return (
            StatusCode::UNAUTHORIZED,
            Json(json!({"code": "unauthorized", "message": "send an account's token or a session token as Authorization: Bearer TOKEN"})),
        )
            .into_response();
    };
    match crate::export::account(&app, &holder).await {
        Ok(data) => (
            [(
                header::CONTENT_DISPOSITION,
                // An ASCII name for every client, the exact one for those that read RFC 6266.
                format!(
                    "attachment; filename=\"hakem-export.json\"; filename*=UTF-8''hakem-{}.json",
                    percent_encode(&holder)
                ),
            )],
            Json(data),
        )
            .into_response(),
        Err(message) => (
            StatusCode::INTERNAL_SERVER_ERROR,
            Json(json!({"code": "internal", "message": message})),
        )
            .into_response(),
    }
}

/// `%XX` for every byte of `text` but letters, digits, `-`, `_` and `.` (RFC 5987).
fn percent_encode(text: &str) -> String {
    text.bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.') {
                (b as char).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
}

/// A player's matches, newest first, paged like `/api/matches` (`?limit=N&before=CURSOR`).
async fn player_matches(
    Path(name): Path<String>,
    State(app): State<Arc<App>>,
    query: Result<Query<ListQuery>, QueryRejection>,
) -> Response {
    let Ok(Query(query)) = query else {
        return bad_request("limit is a number; before is the next of a page");
    };
    if !app.account_exists(&name) {
        return (
            StatusCode::NOT_FOUND,
            Json(json!({"code": "unknown_account", "message": format!("no account {name:?}")})),
        )
            .into_response();
    }
    match app
        .matches_of(&name, query.limit, query.before.as_deref())
        .await
    {
        Ok(page) => page_json(page),
        Err(message) => bad_request(&message),
    }
}

/// A page of match lines, with the cursor of the next page when there is one.
fn page_json(page: crate::Page) -> Response {
    let mut body = json!({ "matches": page.matches });
    if let Some(next) = page.next {
        body["next"] = json!(next);
    }
    Json(body).into_response()
}

fn not_found(failure: crate::tournament::Failure) -> Response {
    (
        StatusCode::NOT_FOUND,
        Json(json!({"code": failure.code, "message": failure.message})),
    )
        .into_response()
}

fn unknown_match(id: &str) -> Response {
    (
        StatusCode::NOT_FOUND,
        Json(json!({"code": "unknown_match", "message": format!("no match {id:?}")})),
    )
        .into_response()
}

/// The Prometheus recorder: durations as histograms with buckets from 0.1 ms to 10 s, so that
/// an operator can compute any quantile over any window (summaries cannot be aggregated).
pub fn metrics_recorder() -> Result<PrometheusHandle, String> {
    use metrics_exporter_prometheus::{Matcher, PrometheusBuilder};
    const SECONDS: &[f64] = &[
        0.0001, 0.00025, 0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5,
        10.0,
    ];
    const SIZES: &[f64] = &[
        1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0, 128.0, 256.0, 512.0, 1024.0,
    ];
    PrometheusBuilder::new()
        .set_buckets_for_metric(Matcher::Suffix("_seconds".into()), SECONDS)
        .and_then(|b| {
            b.set_buckets_for_metric(Matcher::Full("hakem_store_batch_size".into()), SIZES)
        })
        .map_err(|e| e.to_string())?
        .install_recorder()
        .map_err(|e| e.to_string())
}

/// Folds the samples recorded since the last time into the histograms, every few seconds: the
/// recorder keeps every sample until then, so without this a server nobody scrapes would grow
/// without end.
pub async fn metrics_upkeep(handle: PrometheusHandle) {
    let mut every = tokio::time::interval(std::time::Duration::from_secs(5));
    loop {
        every.tick().await;
        handle.run_upkeep();
    }
}

/// Serves until `shutdown` completes, then closes every connection (see [`crate::listen`]).
pub async fn serve(
    listener: TcpListener,
    app: Arc<App>,
    metrics: Option<PrometheusHandle>,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let send_buffer = app.limits.socket_send_buffer;
    let guard = app.guard.clone();
    let stopping = app.stopping.clone();
    crate::listen::serve(
        listener,
        router(app, metrics),
        guard,
        stopping,
        send_buffer,
        shutdown,
    )
    .await
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.insert(*name, value.parse().unwrap());
        }
        map
    }

    #[test]
    fn only_the_servers_own_pages_or_allowed_origins_open_a_socket() {
        let allowed = vec!["https://club.example".to_string()];
        let host = ("host", "hakem.example:8080");
        assert!(origin_allowed(&headers(&[host]), &allowed).is_ok());
        assert!(origin_allowed(
            &headers(&[host, ("origin", "http://hakem.example:8080")]),
            &allowed
        )
        .is_ok());
        assert!(origin_allowed(
            &headers(&[host, ("origin", "https://club.example/")]),
            &allowed
        )
        .is_ok());
        // The same host over another scheme is another origin.
        assert_eq!(
            origin_allowed(
                &headers(&[host, ("origin", "https://hakem.example:8080")]),
                &allowed
            ),
            Err("https://hakem.example:8080".into())
        );
        assert!(origin_allowed(
            &headers(&[host, ("origin", "https://evil.example")]),
            &allowed
        )
        .is_err());
        assert!(origin_allowed(&headers(&[host, ("origin", "null")]), &[]).is_err());
        // Behind a TLS proxy.
        assert!(origin_allowed(
            &headers(&[
                ("host", "127.0.0.1:8080"),
                ("x-forwarded-proto", "https"),
                ("x-forwarded-host", "hakem.example"),
                ("origin", "https://hakem.example"),
            ]),
            &[]
        )
        .is_ok());
    }
}
