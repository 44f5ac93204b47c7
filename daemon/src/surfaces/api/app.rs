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
/// frame it, and the link's token never leaves in a Referer. `{connect}` is `'self'`, and the
/// health route at this Vyre's name when it serves one ([`content_security_policy`]).
const CSP: &str = "default-src 'self'; img-src 'self' data: blob:; style-src 'self' 'unsafe-inline'; connect-src {connect}; frame-ancestors 'none'; base-uri 'none'; form-action 'self'";

/// The policy for the app's pages now: besides its own address, the page may ask
/// `https://<name>/v1/health` (and nothing else there), to learn whether this device reaches
/// Vyre at its name and offer to move there.
pub fn content_security_policy(names: &[String]) -> String {
    let mut connect = String::from("'self'");
    for name in names {
        // A name from the certificates contract is a DNS name; anything else is left out
        // rather than let into the header.
        if !name.is_empty()
            && name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'.')
        {
            connect.push_str(&format!(" https://{name}/v1/health"));
        }
    }
    CSP.replace("{connect}", &connect)
}

pub fn routes(router: Router<Kernel>, dir: Option<&Path>, kernel: &Kernel) -> Router<Kernel> {
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
    let app = ServeDir::new(dir).fallback(PageOrMissing(ServeFile::new(&index)));
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
        .layer(axum::middleware::map_response_with_state(
            kernel.clone(),
            with_policy,
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

/// The policy header on a page's answer, with the names served now.
async fn with_policy(
    axum::extract::State(kernel): axum::extract::State<Kernel>,
    mut res: axum::response::Response,
) -> axum::response::Response {
    use crate::kernel::contracts::certificates::Certificates;
    let names = kernel
        .get::<dyn Certificates>()
        .filter(|c| c.server_config().is_some())
        .map(|c| c.names())
        .unwrap_or_default();
    let value = HeaderValue::from_str(&content_security_policy(&names))
        .or_else(|_| HeaderValue::from_str(&content_security_policy(&[])))
        .expect("the base policy is a header value");
    res.headers_mut()
        .insert(header::CONTENT_SECURITY_POLICY, value);
    res
}

/// What `/app/` answers for a path that is no file: the page, for the app's own routes
/// (`/app/t/…`); a 404 for a missing file (a name ending as the build's files do, such as
/// `sw.js` in a build without one), so a browser never registers the page as a script or caches
/// it as one.
#[derive(Clone)]
struct PageOrMissing(ServeFile);

/// The extensions of the files a build of the app holds.
const FILE_KINDS: &[&str] = &[
    "js",
    "mjs",
    "css",
    "map",
    "json",
    "webmanifest",
    "html",
    "png",
    "svg",
    "ico",
    "webp",
    "jpg",
    "txt",
    "woff",
    "woff2",
    "wasm",
];

impl tower::Service<axum::extract::Request> for PageOrMissing {
    type Response = axum::response::Response;
    type Error = std::convert::Infallible;
    type Future = std::pin::Pin<
        Box<dyn std::future::Future<Output = Result<Self::Response, Self::Error>> + Send>,
    >;

    fn poll_ready(
        &mut self,
        _: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Result<(), Self::Error>> {
        std::task::Poll::Ready(Ok(()))
    }

    fn call(&mut self, req: axum::extract::Request) -> Self::Future {
        let last = req.uri().path().rsplit('/').next().unwrap_or("");
        let file = last
            .rsplit_once('.')
            .is_some_and(|(_, ext)| FILE_KINDS.contains(&ext.to_ascii_lowercase().as_str()));
        if file {
            let missing = ApiError::new(
                StatusCode::NOT_FOUND,
                "not_found",
                format!("the web app has no file {last:?}"),
            );
            return Box::pin(async move { Ok(missing.into_response()) });
        }
        let page = self.0.clone();
        Box::pin(async move {
            let res = tower::ServiceExt::oneshot(page, req).await?;
            Ok(res.map(axum::body::Body::new))
        })
    }
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

#[cfg(test)]
mod tests {
    use super::content_security_policy;

    #[test]
    fn the_page_may_ask_only_the_health_route_at_this_vyres_own_name() {
        let plain = content_security_policy(&[]);
        assert!(plain.contains("connect-src 'self';"), "{plain}");
        let named = content_security_policy(&["alex.vyre.run".into()]);
        assert!(
            named.contains("connect-src 'self' https://alex.vyre.run/v1/health;"),
            "{named}"
        );
        // A name that could add a directive of its own is left out.
        let odd = content_security_policy(&["x; script-src *".into(), "a b".into()]);
        assert!(odd.contains("connect-src 'self';"), "{odd}");
        assert!(!odd.contains("script-src"));
    }
}
