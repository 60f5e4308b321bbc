//! Reading `provider.yaml`: every problem is reported with the file, the field and what the
//! field accepts, and the values that would only fail later (a bad URL, an empty key variable,
//! a header name HTTP cannot carry) are checked here, where the file can still be named.

use std::path::Path;

use crate::config::ProviderConfig;
use crate::endpoint::normalize_base_url;
use crate::error::{Error, Result};

const KINDS: &str = "openai, anthropic or ollama";

impl ProviderConfig {
    /// Parses and checks the text of a `provider.yaml`; `file` is only used in messages.
    pub fn from_yaml(text: &str, file: &Path) -> Result<ProviderConfig> {
        let invalid = |field: &str, message: String| Error::Config {
            field: if field.is_empty() || field == "." {
                file.display().to_string()
            } else {
                format!("{field} in {}", file.display())
            },
            message,
        };
        ironclaw_protocol::config_limits::check_yaml_limits(text)
            .map_err(|message| invalid("", message))?;
        let deserializer = serde_yaml_ng::Deserializer::from_str(text);
        let config: ProviderConfig =
            serde_path_to_error::deserialize(deserializer).map_err(|e| {
                let field = e.path().to_string();
                let mut message = e.inner().to_string();
                if message.starts_with("missing field `kind`") {
                    message = format!("{message}: set kind to {KINDS}");
                }
                invalid(&field, message)
            })?;
        // The main provider, then each of more_models (a provider of its own, or the main
        // one's server with another model).
        check(&config, "", &invalid)?;
        for (i, (_, more)) in config.choices().iter().enumerate().skip(1) {
            check(more, &format!("more_models[{}].", i - 1), &invalid)?;
        }
        Ok(config)
    }
}

/// The values that would only fail later, checked where the file can still be named.
fn check(
    config: &ProviderConfig,
    prefix: &str,
    invalid: &dyn Fn(&str, String) -> Error,
) -> Result<()> {
    if let Some(url) = &config.base_url {
        normalize_base_url(url)
            .map_err(|e| invalid(&format!("{prefix}base_url"), e.to_string()))?;
    }
    if let Some(var) = &config.api_key_env {
        let usable = !var.is_empty()
            && var.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
            && !var.as_bytes()[0].is_ascii_digit();
        if !usable {
            return Err(invalid(
                &format!("{prefix}api_key_env"),
                format!(
                    "{var:?} is not an environment variable name; use letters, digits and \
                     '_', like OPENAI_API_KEY"
                ),
            ));
        }
    }
    for (name, value) in &config.headers {
        if reqwest::header::HeaderName::from_bytes(name.as_bytes()).is_err() {
            return Err(invalid(
                &format!("{prefix}headers.{name}"),
                "not a valid HTTP header name (letters, digits and '-', no spaces)".into(),
            ));
        }
        if reqwest::header::HeaderValue::from_str(value).is_err() {
            return Err(invalid(
                &format!("{prefix}headers.{name}"),
                "the value holds characters HTTP headers cannot carry (line breaks, \
                 control characters)"
                    .into(),
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::config::ProviderKind;

    fn error(text: &str) -> String {
        ProviderConfig::from_yaml(text, Path::new("/c/provider.yaml"))
            .unwrap_err()
            .to_string()
    }

    #[test]
    fn a_good_file_parses() {
        let c = ProviderConfig::from_yaml(
            "kind: openai\nbase_url: http://127.0.0.1:8080/v1\nmodel: m\napi_key_env: MY_KEY\nheaders: {X-Title: IronClaw}\n",
            Path::new("p.yaml"),
        )
        .unwrap();
        assert_eq!(c.kind, ProviderKind::OpenAi);
        assert_eq!(
            c.headers.get("X-Title").map(String::as_str),
            Some("IronClaw")
        );
    }

    #[test]
    fn every_error_names_the_file_the_field_and_what_it_accepts() {
        for (text, wanted) in [
            (
                "kind: gpt",
                &[
                    "kind in /c/provider.yaml",
                    "`openai`, `anthropic`, `ollama`",
                ][..],
            ),
            (
                "kind: openai\nmodle: x",
                &["/c/provider.yaml", "unknown field `modle`", "`model`"],
            ),
            (
                "kind: openai\nheaders: [a]",
                &["headers in /c/provider.yaml", "expected a map"],
            ),
            (
                "model: x",
                &[
                    "/c/provider.yaml",
                    "missing field `kind`",
                    "openai, anthropic or ollama",
                ],
            ),
            (
                "kind: openai\nbase_url: nope",
                &["base_url in /c/provider.yaml", "not a URL"],
            ),
            (
                "kind: openai\napi_key_env: ''",
                &["api_key_env in /c/provider.yaml", "OPENAI_API_KEY"],
            ),
            (
                "kind: openai\nheaders: {'bad name': x}",
                &["headers.bad name in", "header name"],
            ),
            (
                "kind: openai\nheaders: {X-A: \"a\\nb\"}",
                &["headers.X-A in", "line breaks"],
            ),
            ("{", &["/c/provider.yaml"]),
        ] {
            let message = error(text);
            for w in wanted {
                assert!(message.contains(w), "{text:?}: {message:?} lacks {w:?}");
            }
        }
    }
}
