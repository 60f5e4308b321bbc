//! Whether a model reads images. Only Ollama says so (`/api/show`'s `capabilities`); for the
//! others the model's name decides, which a person overrides with `images:` in provider.yaml.
//! A wrong "no" costs a note telling the person how to turn images on; a wrong "yes" costs the
//! provider's error, which names the model. Guessing "no" for unknown names is therefore the
//! safer side.

use crate::config::ProviderKind;
use crate::provider::Provider;

/// The setting aside: what the provider says, else [`by_name`].
pub async fn reads_images(provider: &dyn Provider, model: &str) -> bool {
    match provider.supports_images(model).await {
        Some(says) => says,
        None => {
            let kind = if provider.id().starts_with("anthropic") {
                ProviderKind::Anthropic
            } else {
                ProviderKind::OpenAi
            };
            by_name(kind, model)
        }
    }
}

/// A guess from the model's name: the families that read images as of late 2026.
pub fn by_name(kind: ProviderKind, model: &str) -> bool {
    let name = model.to_ascii_lowercase();
    // The part after a router's `vendor/` prefix (OpenRouter's `openai/gpt-4o`).
    let base = name.rsplit('/').next().unwrap_or(&name);
    if kind == ProviderKind::Anthropic || base.starts_with("claude") {
        // Every Claude from 3 on; Claude 2 and Instant did not.
        return !(base.starts_with("claude-2") || base.starts_with("claude-instant"));
    }
    const TEXT_ONLY: &[&str] = &["gpt-3.5", "o1-mini", "o3-mini", "gpt-4-0", "gpt-4-32k"];
    if TEXT_ONLY.iter().any(|p| base.starts_with(p)) || base == "gpt-4" {
        return false;
    }
    const READERS: &[&str] = &[
        "gpt-4o",
        "chatgpt-4o",
        "gpt-4.1",
        "gpt-4.5",
        "gpt-4-turbo",
        "gpt-5",
        "o1",
        "o3",
        "o4",
        "gemini",
        "gemma3",
        "gemma-3",
        "llama4",
        "llama-4",
        "pixtral",
        "grok-4",
    ];
    const MARKS: &[&str] = &["vision", "-vl", "vl-", "llava", "minicpm-v", "moondream"];
    READERS.iter().any(|p| base.starts_with(p)) || MARKS.iter().any(|m| base.contains(m))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_that_read_images_and_names_that_do_not() {
        let yes = [
            (ProviderKind::Anthropic, "claude-sonnet-4-5"),
            (ProviderKind::OpenAi, "gpt-4o-mini"),
            (ProviderKind::OpenAi, "openai/gpt-5"),
            (ProviderKind::OpenAi, "gemini-2.5-flash"),
            (ProviderKind::Ollama, "llama3.2-vision:11b"),
            (ProviderKind::Ollama, "qwen2.5-vl:7b"),
            (ProviderKind::OpenAi, "o3"),
        ];
        let no = [
            (ProviderKind::Anthropic, "claude-2.1"),
            (ProviderKind::OpenAi, "gpt-3.5-turbo"),
            (ProviderKind::OpenAi, "gpt-4"),
            (ProviderKind::OpenAi, "o3-mini"),
            (ProviderKind::Ollama, "qwen3:8b"),
            (ProviderKind::OpenAi, "mock-model"),
        ];
        for (kind, name) in yes {
            assert!(by_name(kind, name), "{name} reads images");
        }
        for (kind, name) in no {
            assert!(!by_name(kind, name), "{name} does not read images");
        }
    }
}
