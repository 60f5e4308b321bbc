//! How many tokens a model can read at once (prompt and answer together), and how sure we are.
//!
//! Order, first match wins: the person's setting (`context_window` in the provider config, or
//! `IRONCLAW_CONTEXT_WINDOW`); what the provider says about the model; the table of known
//! models below; otherwise a conservative default, so an unknown model is compacted early
//! rather than failing late.

use serde::{Deserialize, Serialize};

/// Used for a model nobody described: small enough for most local models' defaults.
pub const DEFAULT_CONTEXT_WINDOW: u32 = 8_192;

/// How the model asks to run code.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolMode {
    /// Tool calls, unless the provider says the model has none, or its first answer shows code
    /// blocks instead of calling the tool.
    #[default]
    Auto,
    /// Always the provider's tool calls.
    Native,
    /// Fenced code blocks in the answer's text (models without tool calling).
    CodeBlocks,
}

/// Where a [`ContextWindow`] came from, to show the person why IronClaw thinks so.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum WindowSource {
    Setting,
    Provider,
    KnownModel,
    Default,
    /// Said by the server when it refused a longer request (learnt, kept per model).
    Refused,
}

impl WindowSource {
    pub fn describe(self) -> &'static str {
        match self {
            WindowSource::Setting => "from your setting",
            WindowSource::Provider => "as the provider reports it",
            WindowSource::KnownModel => "known for this model",
            WindowSource::Default => {
                "a cautious default for an unknown model; set context_window to change it"
            }
            WindowSource::Refused => "as the server said when it refused a longer request",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ContextWindow {
    pub tokens: u32,
    pub source: WindowSource,
}

impl ContextWindow {
    pub fn new(tokens: u32, source: WindowSource) -> Self {
        ContextWindow { tokens, source }
    }
}

/// Known windows by model-name prefix, most specific first. Names are matched after dropping
/// a provider prefix (`openai/`, `anthropic/` as OpenRouter writes them) and an Ollama tag is
/// kept (`llama3.1:8b` matches `llama3.1`). Sources: each vendor's model documentation.
const KNOWN: &[(&str, u32)] = &[
    ("gpt-4.1", 1_047_576),
    ("gpt-5", 400_000),
    ("gpt-4o", 128_000),
    ("gpt-4-turbo", 128_000),
    ("gpt-4", 8_192),
    ("gpt-3.5-turbo", 16_385),
    ("gpt-oss", 131_072),
    ("o1", 200_000),
    ("o3", 200_000),
    ("o4-mini", 200_000),
    ("claude", 200_000),
    ("gemini", 1_048_576),
    ("deepseek", 128_000),
    ("grok", 131_072),
    ("mistral-large", 131_072),
    ("mistral-small", 131_072),
    ("magistral", 40_000),
    ("codestral", 256_000),
    ("llama3.1", 131_072),
    ("llama3.2", 131_072),
    ("llama3.3", 131_072),
    ("llama3", 8_192),
    ("qwen3", 40_960),
    ("qwen2.5", 32_768),
    ("phi4", 16_384),
    ("gemma3", 131_072),
];

/// The window of a model in the table, if it is there.
pub fn known_context_window(model: &str) -> Option<u32> {
    let name = model
        .rsplit('/')
        .next()
        .unwrap_or(model)
        .to_ascii_lowercase();
    KNOWN
        .iter()
        .find(|(prefix, _)| name.starts_with(prefix))
        .map(|(_, tokens)| *tokens)
}

/// The setting if there is one, else what the provider reported, else the table, else the
/// default.
pub fn choose_window(setting: Option<u32>, reported: Option<u32>, model: &str) -> ContextWindow {
    if let Some(tokens) = setting.filter(|t| *t > 0) {
        return ContextWindow::new(tokens, WindowSource::Setting);
    }
    if let Some(tokens) = reported.filter(|t| *t > 0) {
        return ContextWindow::new(tokens, WindowSource::Provider);
    }
    match known_context_window(model) {
        Some(tokens) => ContextWindow::new(tokens, WindowSource::KnownModel),
        None => ContextWindow::new(DEFAULT_CONTEXT_WINDOW, WindowSource::Default),
    }
}

/// The window a server named when it refused a request as too long, from its own words:
/// OpenAI's and vLLM's ("maximum context length is 2250 tokens"), Anthropic's ("210000 tokens >
/// 200000 maximum"), llama.cpp's ("exceeds the available context size (4096 tokens)") and
/// Ollama's and others' ("context length of 4096", "n_ctx = 4096", "num_ctx: 2048"). Numbers
/// that say how long the request was are not it. `None` when no window is named.
pub fn window_from_refusal(message: &str) -> Option<u32> {
    const NAMES: &[&str] = &[
        "maximum context length",
        "max context length",
        "context length",
        "context size",
        "context window",
        "maximum context",
        "n_ctx",
        "num_ctx",
        "max_model_len",
        "n_ctx_slot",
    ];
    let lower = message.to_ascii_lowercase();
    let bytes = lower.as_bytes();
    let mut found: Option<u32> = None;
    let mut i = 0;
    while i < bytes.len() {
        if !bytes[i].is_ascii_digit() {
            i += 1;
            continue;
        }
        let start = i;
        while i < bytes.len() && (bytes[i].is_ascii_digit() || bytes[i] == b',') {
            i += 1;
        }
        let Ok(n) = lower[start..i].replace(',', "").parse::<u64>() else {
            continue;
        };
        let before = lower[..start].trim_end_matches([' ', '(', ':', '=', '"']);
        let before = ["is", "of", "to"]
            .iter()
            .find_map(|w| before.strip_suffix(w).filter(|b| b.ends_with(' ')))
            .map_or(before, |b| b.trim_end());
        let after = &lower[i..];
        let names_it = NAMES.iter().any(|name| before.ends_with(name))
            || after.starts_with(" maximum")
            || after.starts_with(" tokens maximum");
        if names_it && (256..=100_000_000).contains(&n) {
            let n = n as u32;
            found = Some(found.map_or(n, |f| f.min(n)));
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refusal_names_the_window_in_each_servers_words() {
        let cases = [
            // OpenAI (and vLLM, and OpenAI-compatible servers that copy it).
            ("This model's maximum context length is 2250 tokens. However, your messages resulted in 3071 tokens. Please reduce the length of the messages.", Some(2250)),
            ("This model's maximum context length is 4096 tokens. However, you requested 5000 tokens (4000 in the messages, 1000 in the completion).", Some(4096)),
            // Anthropic.
            ("prompt is too long: 210517 tokens > 200000 maximum", Some(200_000)),
            // llama.cpp's server.
            ("the request exceeds the available context size (4096 tokens), try increasing it", Some(4096)),
            ("request (5120 tokens) exceeds the available context size (4096 tokens), try increasing it", Some(4096)),
            // Ollama and others.
            ("input length exceeds the context length of 2048", Some(2048)),
            ("requested tokens (9000) exceed context window of 8,192", Some(8192)),
            ("llama_decode failed: n_ctx = 2048", Some(2048)),
            // Says how much too long, not how long: no window.
            ("prompt too long; exceeded max context length by 100 tokens", None),
            ("the conversation is too long", None),
        ];
        for (message, window) in cases {
            assert_eq!(window_from_refusal(message), window, "{message}");
        }
    }

    #[test]
    fn the_most_specific_prefix_wins_and_provider_prefixes_are_ignored() {
        assert_eq!(known_context_window("gpt-4o-mini"), Some(128_000));
        assert_eq!(known_context_window("gpt-4-0613"), Some(8_192));
        assert_eq!(known_context_window("openai/gpt-4.1-mini"), Some(1_047_576));
        assert_eq!(known_context_window("llama3.1:8b"), Some(131_072));
        assert_eq!(known_context_window("Claude-Sonnet-4-5"), Some(200_000));
        assert_eq!(known_context_window("my-finetune"), None);
    }

    #[test]
    fn a_setting_beats_the_provider_which_beats_the_table() {
        assert_eq!(
            choose_window(Some(4096), Some(32_768), "gpt-4o"),
            ContextWindow::new(4096, WindowSource::Setting)
        );
        assert_eq!(
            choose_window(None, Some(32_768), "gpt-4o"),
            ContextWindow::new(32_768, WindowSource::Provider)
        );
        assert_eq!(
            choose_window(Some(0), None, "gpt-4o").source,
            WindowSource::KnownModel
        );
        assert_eq!(
            choose_window(None, None, "mystery").tokens,
            DEFAULT_CONTEXT_WINDOW
        );
    }
}
