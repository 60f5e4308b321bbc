//! Token counts: exact with the model family's tokenizer where IronClaw has it (OpenAI's, see
//! [`super::tokenizer`]), else estimated.
//!
//! No maintained Rust crate covers the tokenizers of every model IronClaw talks to (local
//! models bring their own), so elsewhere counts are an estimate: one token per three bytes of UTF-8,
//! which over-counts English prose (about four characters a token) and code, and matches
//! CJK text (three bytes a character, about one token each). Each message adds a few tokens
//! of framing. Once the provider reports how many prompt tokens it counted, a tokenizer less
//! efficient than that scales the estimate up by the measured ratio plus a tenth. It never
//! scales down: some servers report only the prompt tokens they did not have cached, and an
//! under-count is what overflows a window.

use ironclaw_llm::{Message, ToolSpec};

use super::tokenizer::Family;

const BYTES_PER_TOKEN: f64 = 3.0;
/// Role markers and separators around each message.
const PER_MESSAGE: u64 = 6;
/// What one image costs: the providers' own figure for a picture of the size IronClaw sends
/// (1568 px on its long side, about 1,600 tokens at Anthropic; OpenAI's tiles come to less).
const PER_IMAGE: u64 = 1_600;
/// Headroom added to a measured ratio.
const MARGIN: f64 = 1.1;

#[derive(Debug, Clone, Copy)]
pub struct Estimator {
    scale: f64,
    /// The model's tokenizer family, when IronClaw has it; counts are exact once it is loaded.
    family: Option<Family>,
}

impl Default for Estimator {
    fn default() -> Self {
        Estimator {
            scale: 1.0,
            family: None,
        }
    }
}

impl Estimator {
    /// Counts for `model`: exact when its family's tokenizer is loaded.
    pub fn for_model(mut self, model: &str) -> Self {
        self.family = Family::of(model);
        self
    }

    pub fn family(&self) -> Option<Family> {
        self.family
    }

    fn raw_text(&self, text: &str) -> u64 {
        self.family
            .and_then(|f| f.count(text))
            .unwrap_or_else(|| (text.len() as f64 / BYTES_PER_TOKEN).ceil() as u64)
    }

    fn raw_message(&self, message: &Message) -> u64 {
        PER_MESSAGE
            + match message {
                Message::User { content, images } => {
                    self.raw_text(content) + PER_IMAGE * images.len() as u64
                }
                Message::Assistant {
                    content,
                    tool_calls,
                } => {
                    self.raw_text(content)
                        + tool_calls
                            .iter()
                            .map(|c| {
                                PER_MESSAGE
                                    + self.raw_text(&c.id)
                                    + self.raw_text(&c.name)
                                    + self.raw_text(&c.arguments)
                            })
                            .sum::<u64>()
                }
                Message::Tool {
                    call_id,
                    content,
                    images,
                    ..
                } => {
                    self.raw_text(call_id)
                        + self.raw_text(content)
                        + PER_IMAGE * images.len() as u64
                }
            }
    }

    fn raw_request(&self, system: &str, tools: &[ToolSpec], messages: &[Message]) -> u64 {
        let tools: u64 = tools
            .iter()
            .map(|t| {
                PER_MESSAGE
                    + self.raw_text(&t.name)
                    + self.raw_text(&t.description)
                    + self.raw_text(&t.parameters.to_string())
            })
            .sum();
        PER_MESSAGE
            + self.raw_text(system)
            + tools
            + messages.iter().map(|m| self.raw_message(m)).sum::<u64>()
    }

    fn scaled(&self, raw: u64) -> u64 {
        (raw as f64 * self.scale).ceil() as u64
    }

    pub fn text(&self, text: &str) -> u64 {
        self.scaled(self.raw_text(text))
    }

    pub fn message(&self, message: &Message) -> u64 {
        self.scaled(self.raw_message(message))
    }

    pub fn request(&self, system: &str, tools: &[ToolSpec], messages: &[Message]) -> u64 {
        self.scaled(self.raw_request(system, tools, messages))
    }

    /// Learns from the provider's own count for a request (`reported` prompt tokens). Counts
    /// of zero (a server that reports none) teach nothing.
    pub fn calibrate(
        &mut self,
        system: &str,
        tools: &[ToolSpec],
        messages: &[Message],
        reported: u64,
    ) {
        let raw = self.raw_request(system, tools, messages);
        if reported == 0 || raw == 0 {
            return;
        }
        // Bounded: one odd report (a server counting cached tokens apart) must not make the
        // estimate absurd either way.
        self.scale = (reported as f64 / raw as f64 * MARGIN).clamp(1.0, 3.0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn three_bytes_a_token_until_the_provider_says_otherwise() {
        let mut e = Estimator::default();
        let messages = vec![Message::user("a".repeat(3000))];
        let before = e.request("", &[], &messages);
        assert_eq!(before, 6 + 6 + 1000);
        // The provider counted twice as many: the estimate follows, with headroom.
        e.calibrate("", &[], &messages, 2 * before);
        let after = e.request("", &[], &messages);
        assert!(after >= 2 * before, "{after} < {}", 2 * before);
        // A server reporting 0 leaves it alone, and a smaller count never lowers it below
        // the stated estimate.
        e.calibrate("", &[], &messages, 0);
        assert_eq!(e.request("", &[], &messages), after);
        e.calibrate("", &[], &messages, 10);
        assert_eq!(e.request("", &[], &messages), before);
    }

    #[test]
    fn an_openai_model_is_counted_with_its_tokenizer_once_it_is_loaded() {
        let prose = Message::user("The quick brown fox jumps over the lazy dog. ".repeat(300));
        let estimate =
            Estimator::default().request("You are IronClaw.", &[], std::slice::from_ref(&prose));
        let e = Estimator::default().for_model("gpt-4o");
        assert_eq!(e.family(), Some(Family::O200k));
        assert!(Family::O200k.load_now());
        let exact = e.request("You are IronClaw.", &[], &[prose]);
        // 10 tokens a sentence, 300 of them, plus the system prompt and framing.
        assert!((3000..3100).contains(&exact), "{exact}");
        assert!(
            exact * 4 < estimate * 3,
            "{exact} vs the estimate's {estimate}"
        );
        // A model without a tokenizer here keeps the estimate.
        assert_eq!(Estimator::default().for_model("llama3.1:8b").family(), None);
    }
}
