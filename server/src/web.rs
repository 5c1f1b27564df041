//! The browser client: the files of `web/`, embedded in the binary so that one binary serves
//! everything. `/` is the page; its scripts, style sheet and icon are under `/assets/`. The page
//! routes by the URL's fragment (`/#/match/ID?seat=TOKEN`), so no other path is needed.

use axum::extract::Path;
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;

/// One embedded file: its name under `/assets/`, its content type and its bytes.
struct Asset {
    name: &'static str,
    content_type: &'static str,
    body: &'static [u8],
}

macro_rules! asset {
    ($name:literal, $content_type:expr) => {
        Asset {
            name: $name,
            content_type: $content_type,
            body: include_bytes!(concat!("../../web/", $name)),
        }
    };
}

const JS: &str = "text/javascript; charset=utf-8";

/// Every file of `web/` (a test checks that none is forgotten).
const ASSETS: &[Asset] = &[
    asset!("index.html", "text/html; charset=utf-8"),
    asset!("style.css", "text/css; charset=utf-8"),
    asset!("account.js", JS),
    asset!("app.js", JS),
    asset!("board.js", JS),
    asset!("chat.js", JS),
    asset!("desk.js", JS),
    asset!("fold.js", JS),
    asset!("i18n.js", JS),
    asset!("lobby.js", JS),
    asset!("match.js", JS),
    asset!("net.js", JS),
    asset!("player.js", JS),
    asset!("position.js", JS),
    asset!("replay.js", JS),
    asset!("sound.js", JS),
    asset!("tournament.js", JS),
    asset!("ui.js", JS),
    asset!("words.js", JS),
    asset!("favicon.svg", "image/svg+xml"),
];

fn find(name: &str) -> Option<&'static Asset> {
    ASSETS.iter().find(|asset| asset.name == name)
}

fn serve(asset: &'static Asset) -> Response {
    (
        [
            (header::CONTENT_TYPE, asset.content_type),
            // Small files, and a new binary may bring new ones: revalidate every time.
            (header::CACHE_CONTROL, "no-cache"),
            (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
            (header::REFERRER_POLICY, "no-referrer"),
        ],
        asset.body,
    )
        .into_response()
}

async fn index() -> Response {
    match find("index.html") {
        Some(asset) => serve(asset),
        None => StatusCode::NOT_FOUND.into_response(),
    }
}

async fn file(Path(name): Path<String>) -> Response {
    match find(&name) {
        Some(asset) if name != "index.html" => serve(asset),
        _ => (StatusCode::NOT_FOUND, "no such file").into_response(),
    }
}

/// The web client's routes, for any router state: `/`, `/index.html` and `/assets/{file}`.
pub fn routes<S: Clone + Send + Sync + 'static>() -> Router<S> {
    Router::new()
        .route("/", get(index))
        .route("/index.html", get(index))
        .route("/assets/{file}", get(file))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_file_of_web_is_embedded_with_its_type() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../web");
        let mut names: Vec<String> = std::fs::read_dir(&dir)
            .expect("web/")
            .filter_map(|entry| entry.ok())
            .filter(|entry| entry.path().is_file())
            .map(|entry| entry.file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        let mut embedded: Vec<String> = ASSETS.iter().map(|a| a.name.to_string()).collect();
        embedded.sort();
        assert_eq!(names, embedded, "add new files of web/ to ASSETS in web.rs");
        for asset in ASSETS {
            let ext = asset.name.rsplit('.').next().unwrap_or("");
            let expected = match ext {
                "html" => "text/html",
                "css" => "text/css",
                "js" => "text/javascript",
                "svg" => "image/svg+xml",
                other => panic!("no content type for .{other}"),
            };
            assert!(asset.content_type.starts_with(expected), "{}", asset.name);
            assert!(!asset.body.is_empty(), "{}", asset.name);
        }
    }

    #[test]
    fn the_page_loads_its_module_from_assets() {
        let page = std::str::from_utf8(find("index.html").unwrap().body).unwrap();
        assert!(page.contains(r#"src="/assets/app.js""#));
        assert!(page.contains(r#"href="/assets/style.css""#));
    }
}
