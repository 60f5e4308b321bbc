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
        check_yaml_limits(text).map_err(|message| invalid("", message))?;
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
        if let Some(url) = &config.base_url {
            normalize_base_url(url).map_err(|e| invalid("base_url", e.to_string()))?;
        }
        if let Some(var) = &config.api_key_env {
            let usable = !var.is_empty()
                && var.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
                && !var.as_bytes()[0].is_ascii_digit();
            if !usable {
                return Err(invalid(
                    "api_key_env",
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
                    &format!("headers.{name}"),
                    "not a valid HTTP header name (letters, digits and '-', no spaces)".into(),
                ));
            }
            if reqwest::header::HeaderValue::from_str(value).is_err() {
                return Err(invalid(
                    &format!("headers.{name}"),
                    "the value holds characters HTTP headers cannot carry (line breaks, \
                     control characters)"
                        .into(),
                ));
            }
        }
        Ok(config)
    }
}

// The same pre-parse limits as the sandbox policy's (ironclaw-sandbox policy/source.rs): the
// two crates share no dependency to hold one copy.
/// The largest YAML file read, checked before parsing. The shipped files are a few KiB; the
/// parser's time grows faster than linearly with nesting, so a huge or deep file could
/// freeze whatever reads it (the app's profile list did, for seconds).
pub const MAX_YAML_BYTES: usize = 256 << 10;
/// The deepest nesting accepted (block indentation, `- ` entries and `[`/`{` together),
/// checked before parsing for the same reason. Real files stay under ten.
pub const MAX_YAML_DEPTH: usize = 64;

/// Refuses text over [`MAX_YAML_BYTES`] or nested deeper than [`MAX_YAML_DEPTH`], without
/// parsing it. The depth is over-estimated rather than under (brackets inside quotes on a line
/// with a `#` may count), which only matters for files no person writes.
pub fn check_yaml_limits(text: &str) -> std::result::Result<(), String> {
    if text.len() > MAX_YAML_BYTES {
        return Err(format!(
            "the file is {} KiB; configuration files over {} KiB are not read (is this the \
             right file?)",
            text.len() >> 10,
            MAX_YAML_BYTES >> 10
        ));
    }
    let mut indents: Vec<usize> = Vec::new();
    let mut flow = 0usize;
    for (n, line) in text.lines().enumerate() {
        let body = line.trim_start_matches(' ');
        if body.is_empty() || body.starts_with('#') {
            continue;
        }
        let indent = line.len() - body.len();
        if flow == 0 {
            while indents.last().is_some_and(|&top| top > indent) {
                indents.pop();
            }
            if indents.last().is_none_or(|&top| top < indent) {
                indents.push(indent);
            }
        }
        // `- - - x` nests one sequence per dash on the same line.
        let mut rest = body;
        let mut dashes = 0;
        while let Some(after) = rest.strip_prefix("- ").or_else(|| rest.strip_prefix("-\t")) {
            dashes += 1;
            rest = after.trim_start();
        }
        let mut quote: Option<char> = None;
        let mut line_max = flow;
        for c in rest.chars() {
            match (quote, c) {
                (Some(q), c) if c == q => quote = None,
                (Some(_), _) => {}
                (None, '\'' | '"') => quote = Some(c),
                (None, '[' | '{') => {
                    flow += 1;
                    line_max = line_max.max(flow);
                }
                (None, ']' | '}') => flow = flow.saturating_sub(1),
                (None, _) => {}
            }
        }
        let depth = indents.len() + dashes + line_max;
        if depth > MAX_YAML_DEPTH {
            return Err(format!(
                "line {}: nested {depth} levels deep; configuration files may nest at most \
                 {MAX_YAML_DEPTH} levels",
                n + 1
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
