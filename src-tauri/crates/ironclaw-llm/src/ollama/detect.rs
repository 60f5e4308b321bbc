//! Finding a local Ollama, so a person who has one needs no set-up at all.

use std::time::Duration;

use crate::endpoint::normalize_base_url;
use crate::error::{Error, Result};
use crate::http::root_cause;
use crate::openai::model_ids;

/// Where Ollama listens unless told otherwise.
pub const OLLAMA_BASE_URL: &str = "http://127.0.0.1:11434";

/// Short: the probe runs at start-up, and a local server answers in milliseconds or not at all.
const PROBE_TIMEOUT: Duration = Duration::from_millis(300);

/// Asks Ollama at `base` (default [`OLLAMA_BASE_URL`]) for its installed models, newest first.
/// An `Err` means no Ollama answered there.
pub async fn detect_ollama(base: Option<&str>) -> Result<Vec<String>> {
    let base = normalize_base_url(base.unwrap_or(OLLAMA_BASE_URL))?;
    // People paste the OpenAI-compatible address too; the native API lives beside it.
    let base = base.strip_suffix("/v1").unwrap_or(&base);
    let url = format!("{base}/api/tags");
    let client = reqwest::Client::builder()
        .timeout(PROBE_TIMEOUT)
        .build()
        .map_err(|err| Error::Config {
            field: "HTTP client".into(),
            message: root_cause(&err),
        })?;
    let unreachable = |err: reqwest::Error| Error::Unreachable {
        url: url.clone(),
        reason: if err.is_timeout() {
            format!("no answer within {} ms", PROBE_TIMEOUT.as_millis())
        } else {
            root_cause(&err)
        },
    };
    let response = client.get(&url).send().await.map_err(unreachable)?;
    if !response.status().is_success() {
        return Err(Error::malformed(
            "ollama",
            format!(
                "{url} answered HTTP {}; is this really Ollama?",
                response.status()
            ),
        ));
    }
    let value: serde_json::Value = response.json().await.map_err(|err| {
        if err.is_decode() {
            Error::malformed(
                "ollama",
                format!("`/api/tags` is not JSON: {}", root_cause(&err)),
            )
        } else {
            unreachable(err)
        }
    })?;
    model_ids(&value, "models", "name")
        .ok_or_else(|| Error::malformed("ollama", "`/api/tags` has no `models` list"))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use pretty_assertions::assert_eq;

    use super::*;
    use crate::test_support::closed_port_url;
    use crate::testing::ScriptedServer;

    #[tokio::test]
    async fn detect_ollama_lists_the_installed_models() {
        let (server, base) = ScriptedServer::start().await.unwrap();
        server.set_models(["llama3.2:3b", "qwen3:8b"]);

        assert_eq!(
            detect_ollama(Some(&base)).await.unwrap(),
            vec!["llama3.2:3b", "qwen3:8b"]
        );
        // The OpenAI-compatible address works too.
        assert_eq!(
            detect_ollama(Some(&format!("{base}/v1/")))
                .await
                .unwrap()
                .len(),
            2
        );
        assert_eq!(server.requests()[0].path, "/api/tags");
    }

    #[tokio::test]
    async fn detect_ollama_where_nothing_listens_is_unreachable() {
        let err = detect_ollama(Some(&closed_port_url().await))
            .await
            .err()
            .unwrap();
        assert!(matches!(err, Error::Unreachable { .. }), "{err:?}");
    }
}
