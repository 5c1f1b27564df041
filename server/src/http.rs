//! The HTTP side: `/ws` (the WebSocket protocol), `/healthz`, and read-only JSON under `/api`.

use std::future::Future;
use std::sync::Arc;

use axum::extract::rejection::QueryRejection;
use axum::extract::ws::WebSocketUpgrade;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::serve::ListenerExt;
use axum::{Json, Router};
use hakem_protocol::{ListStatus, MAX_FRAME_BYTES};
use metrics_exporter_prometheus::PrometheusHandle;
use serde_json::json;
use tokio::net::TcpListener;

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
        .route("/healthz", get(|| async { Json(json!({"status": "ok"})) }))
        .route("/api/matches", get(list_matches))
        .route("/api/matches/{id}", get(match_state))
        .route("/api/matches/{id}/record", get(match_record))
        .route("/api/tournaments", get(list_tournaments))
        .route("/api/tournaments/{id}", get(tournament_view))
        .route("/api/tournaments/{id}/trf", get(tournament_trf))
        .merge(crate::web::routes())
        .with_state(app)
}

async fn websocket(ws: WebSocketUpgrade, State(app): State<Arc<App>>) -> Response {
    // Frames up to 4x the protocol limit are read so that an oversized one gets a `too_large`
    // reply instead of a dropped connection; anything bigger is cut off by the socket layer.
    // The socket layer's default buffers (128 KiB each way) are far too big for tens of
    // thousands of mostly idle sockets; frames here are a few hundred bytes. A write buffer of 0
    // sends each frame at once.
    ws.max_message_size(4 * MAX_FRAME_BYTES)
        .max_frame_size(4 * MAX_FRAME_BYTES)
        .read_buffer_size(4 * 1024)
        .write_buffer_size(0)
        .max_write_buffer_size(256 * 1024)
        .on_upgrade(move |socket| session::serve(socket, app))
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
        Ok(page) => {
            let mut body = json!({ "matches": page.matches });
            if let Some(next) = page.next {
                body["next"] = json!(next);
            }
            Json(body).into_response()
        }
        Err(message) => bad_request(&message),
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

fn bad_request(message: &str) -> Response {
    (
        StatusCode::BAD_REQUEST,
        Json(json!({"code": "bad_request", "message": message})),
    )
        .into_response()
}

async fn list_tournaments(State(app): State<Arc<App>>) -> Response {
    Json(json!({ "tournaments": app.tournaments.summaries().await })).into_response()
}

async fn tournament_view(Path(id): Path<String>, State(app): State<Arc<App>>) -> Response {
    match app.tournaments.view(&id).await {
        Ok(view) => Json(view).into_response(),
        Err(failure) => not_found(failure),
    }
}

async fn tournament_trf(Path(id): Path<String>, State(app): State<Arc<App>>) -> Response {
    match app.tournaments.trf(&id).await {
        Ok(text) => ([("content-type", "text/plain; charset=utf-8")], text).into_response(),
        Err(failure) => not_found(failure),
    }
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

/// Serves until `shutdown` completes.
pub async fn serve(
    listener: TcpListener,
    app: Arc<App>,
    metrics: Option<PrometheusHandle>,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let send_buffer = app.limits.socket_send_buffer;
    let listener = listener.tap_io(move |tcp| {
        // Moves are small and latency matters more than packing them into fewer segments.
        let _ = tcp.set_nodelay(true);
        if let Some(bytes) = send_buffer {
            let _ = socket2::SockRef::from(&*tcp).set_send_buffer_size(bytes);
        }
    });
    axum::serve(listener, router(app, metrics))
        .with_graceful_shutdown(shutdown)
        .await
}
