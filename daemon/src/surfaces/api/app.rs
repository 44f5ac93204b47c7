//! The web app (`ui/`, built to `ui/dist`): served at `/app/`, with `/onboard` and `/login`
//! giving its page too (it reads the link's token itself) and `/` sending browsers to it. Its
//! files hold no data, so they need no credential; everything they show comes from the API.

use std::path::{Path, PathBuf};

use axum::Router;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Redirect};
use axum::routing::get;
use tower_http::services::{ServeDir, ServeFile};
use tower_http::set_header::SetResponseHeaderLayer;

use super::error::ApiError;
use crate::kernel::Kernel;

/// Where the built app is: `VYRE_UI_DIR`, else an install's folder beside the binary
/// (`paths::installed`: npm, the box image, the .deb, the Mac's app), else this checkout's `ui/dist`.
pub fn ui_dir() -> Option<PathBuf> {
    std::env::var_os("VYRE_UI_DIR")
        .map(PathBuf::from)
        .into_iter()
        .chain(crate::kernel::paths::installed_here("ui"))
        .chain([Path::new(env!("CARGO_MANIFEST_DIR")).join("../ui/dist")])
        .find(|dir| dir.join("index.html").is_file())
}

/// The page may load only its own files and talk only to this address; no other site may
/// frame it, and the link's token never leaves in a Referer.
const CSP: &str = "default-src 'self'; img-src 'self' data: blob:; style-src 'self' 'unsafe-inline'; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'";

pub fn routes(router: Router<Kernel>, dir: Option<&Path>) -> Router<Kernel> {
    let router = router.route("/", get(|| async { Redirect::to("/app/") }));
    let Some(dir) = dir.filter(|d| d.join("index.html").is_file()) else {
        return router
            .route("/app", get(not_built))
            .route("/app/", get(not_built))
            .route("/app/{*rest}", get(not_built))
            .route("/onboard", get(not_built))
            .route("/login", get(not_built));
    };
    let index = dir.join("index.html");
    let app = ServeDir::new(dir).fallback(ServeFile::new(&index));
    // Vite names each built file by its content's hash: a name never changes what it holds, so a
    // browser keeps it and loads the page without asking again. A missing one is a 404, never
    // the page in its place (cached for a year under a script's name).
    let assets = Router::new()
        .nest_service("/app/assets/", ServeDir::new(dir.join("assets")))
        .layer(SetResponseHeaderLayer::overriding(
            header::CACHE_CONTROL,
            |res: &axum::response::Response| {
                res.status()
                    .is_success()
                    .then(|| HeaderValue::from_static(IMMUTABLE))
            },
        ));
    let pages = Router::new()
        .nest_service("/app/", app)
        .route_service("/onboard", ServeFile::new(&index))
        .route_service("/login", ServeFile::new(&index))
        .layer(SetResponseHeaderLayer::overriding(
            header::CONTENT_SECURITY_POLICY,
            HeaderValue::from_static(CSP),
        ))
        .layer(SetResponseHeaderLayer::overriding(
            header::REFERRER_POLICY,
            HeaderValue::from_static("no-referrer"),
        ))
        .layer(SetResponseHeaderLayer::overriding(
            header::X_CONTENT_TYPE_OPTIONS,
            HeaderValue::from_static("nosniff"),
        ))
        // The page itself is asked for again each time (a 304 while unchanged), so a new build
        // is seen at once.
        .layer(SetResponseHeaderLayer::if_not_present(
            header::CACHE_CONTROL,
            HeaderValue::from_static("no-cache"),
        ));
    router
        .route("/app", get(|| async { Redirect::permanent("/app/") }))
        .merge(assets.layer(SetResponseHeaderLayer::overriding(
            header::X_CONTENT_TYPE_OPTIONS,
            HeaderValue::from_static("nosniff"),
        )))
        .merge(pages)
}

/// How long a browser keeps a built file whose name is its hash: a year, without asking again.
const IMMUTABLE: &str = "public, max-age=31536000, immutable";

async fn not_built() -> impl IntoResponse {
    ApiError::new(
        StatusCode::SERVICE_UNAVAILABLE,
        "app_not_built",
        "the web app is not here: in a checkout, `vyre up` builds it (or run `npm install && npm run build` in ui/); otherwise set VYRE_UI_DIR to a built app (ui/dist), or install Vyre with npm (`npm install -g vyre`), which carries it",
    )
}
