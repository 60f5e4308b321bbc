//! Exact token counts for OpenAI's model families, from their own tokenizers (`tiktoken-rs`,
//! ranks built into the binary).
//!
//! A tokenizer costs about 45 MiB and a third of a second to load, and most conversations
//! never come near the window, where the stated estimate (which over-counts prose) is plenty.
//! So it is loaded in the background the first time a conversation passes half its budget,
//! and counts are exact from then on. Until it is there, the estimate stands in; it errs on the
//! side of compacting early, never of overflowing. Other families (Anthropic's, local models')
//! have no tokenizer in a maintained crate, so they keep the estimate.

use std::collections::HashMap;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, OnceLock};

use tiktoken_rs::tokenizer::{get_tokenizer, Tokenizer};
use tiktoken_rs::CoreBPE;

/// A tokenizer family IronClaw can count exactly.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Family {
    /// GPT-4o, GPT-4.1, GPT-5, the o-series and gpt-oss.
    O200k,
    /// GPT-4 and GPT-3.5.
    Cl100k,
}

/// Counts remembered by text, so a long transcript is tokenized once, not on every request.
const CACHE_ENTRIES: usize = 20_000;

struct Slot {
    bpe: OnceLock<Option<CoreBPE>>,
    loading: AtomicBool,
}

static O200K: Slot = Slot::new();
static CL100K: Slot = Slot::new();

fn counts() -> &'static Mutex<HashMap<(Family, u64), u32>> {
    static COUNTS: OnceLock<Mutex<HashMap<(Family, u64), u32>>> = OnceLock::new();
    COUNTS.get_or_init(Mutex::default)
}

impl Slot {
    const fn new() -> Self {
        Slot {
            bpe: OnceLock::new(),
            loading: AtomicBool::new(false),
        }
    }
}

impl Family {
    /// The family of `model`, by OpenAI's names; a router's prefix (`openai/gpt-4o`) is
    /// ignored. `None` for models whose tokenizer IronClaw does not have.
    pub fn of(model: &str) -> Option<Family> {
        let name = model.rsplit('/').next().unwrap_or(model);
        match get_tokenizer(name)? {
            Tokenizer::O200kBase | Tokenizer::O200kHarmony => Some(Family::O200k),
            Tokenizer::Cl100kBase => Some(Family::Cl100k),
            _ => None,
        }
    }

    fn slot(self) -> &'static Slot {
        match self {
            Family::O200k => &O200K,
            Family::Cl100k => &CL100K,
        }
    }

    /// Whether exact counts are available now.
    pub fn is_loaded(self) -> bool {
        matches!(self.slot().bpe.get(), Some(Some(_)))
    }

    /// Starts loading the tokenizer on a thread of its own, once; returns at once.
    pub fn load_in_background(self) {
        let slot = self.slot();
        if slot.loading.swap(true, Ordering::AcqRel) {
            return;
        }
        let spawned = std::thread::Builder::new()
            .name("ironclaw-tokenizer".into())
            .spawn(move || self.load_now());
        if let Err(e) = spawned {
            tracing::warn!(error = %e, "could not start loading the tokenizer; token counts stay estimates");
        }
    }

    /// Loads the tokenizer on this thread (tests and benchmarks; the agent loads in the
    /// background).
    pub fn load_now(self) -> bool {
        let loaded = self.slot().bpe.get_or_init(|| {
            let _span = tracing::info_span!("tokenizer_load", family = ?self).entered();
            let bpe = match self {
                Family::O200k => tiktoken_rs::o200k_base(),
                Family::Cl100k => tiktoken_rs::cl100k_base(),
            };
            bpe.map_err(|e| tracing::warn!(error = %e, "tokenizer failed to load; token counts stay estimates"))
                .ok()
        });
        loaded.is_some()
    }

    /// The exact token count of `text`, or `None` while the tokenizer is not loaded.
    pub fn count(self, text: &str) -> Option<u64> {
        let Some(Some(bpe)) = self.slot().bpe.get() else {
            return None;
        };
        if text.is_empty() {
            return Some(0);
        }
        let mut hasher = DefaultHasher::new();
        text.hash(&mut hasher);
        let key = (self, hasher.finish());
        if let Some(n) = counts().lock().ok().and_then(|c| c.get(&key).copied()) {
            return Some(u64::from(n));
        }
        let n = bpe.encode_ordinary(text).len();
        if let Ok(mut cache) = counts().lock() {
            if cache.len() >= CACHE_ENTRIES {
                cache.clear();
            }
            cache.insert(key, u32::try_from(n).unwrap_or(u32::MAX));
        }
        Some(n as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn openai_models_are_known_by_name_and_others_are_not() {
        for model in [
            "gpt-4o",
            "gpt-4.1-mini",
            "gpt-5",
            "o3",
            "openai/gpt-4o",
            "gpt-oss-20b",
        ] {
            assert_eq!(Family::of(model), Some(Family::O200k), "{model}");
        }
        assert_eq!(Family::of("gpt-4"), Some(Family::Cl100k));
        for model in [
            "claude-sonnet-4-5",
            "llama3.1:8b",
            "qwen3:8b",
            "mistral-large",
            "",
        ] {
            assert_eq!(Family::of(model), None, "{model}");
        }
    }

    #[test]
    fn counts_are_exact_once_loaded_and_remembered() {
        assert!(Family::O200k.load_now());
        assert!(Family::O200k.is_loaded());
        // o200k: "hello" and " world".
        assert_eq!(Family::O200k.count("hello world"), Some(2));
        assert_eq!(Family::O200k.count(""), Some(0));
        let prose = "The quick brown fox jumps over the lazy dog. ".repeat(200);
        let first = Family::O200k.count(&prose);
        assert_eq!(Family::O200k.count(&prose), first);
        // Prose is about four bytes a token, well under the stated estimate's one per three.
        let exact = first.unwrap_or(u64::MAX);
        assert!(exact * 3 < prose.len() as u64, "{exact} tokens");
    }
}
