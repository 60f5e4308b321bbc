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

#[cfg(test)]
mod tests {
    use super::*;

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
