//! Token counts without the model's tokenizer.
//!
//! No maintained Rust crate covers the tokenizers of every model IronClaw talks to (local
//! models bring their own), so counts are an estimate: one token per three bytes of UTF-8,
//! which over-counts English prose (about four characters a token) and code, and matches
//! CJK text (three bytes a character, about one token each). Each message adds a few tokens
//! of framing. Once the provider reports how many prompt tokens it counted, a tokenizer less
//! efficient than that scales the estimate up by the measured ratio plus a tenth. It never
//! scales down: some servers report only the prompt tokens they did not have cached, and an
//! under-count is what overflows a window.

use ironclaw_llm::{Message, ToolSpec};

const BYTES_PER_TOKEN: f64 = 3.0;
/// Role markers and separators around each message.
const PER_MESSAGE: u64 = 6;
/// Headroom added to a measured ratio.
const MARGIN: f64 = 1.1;

#[derive(Debug, Clone, Copy)]
pub struct Estimator {
    scale: f64,
}

impl Default for Estimator {
    fn default() -> Self {
        Estimator { scale: 1.0 }
    }
}

impl Estimator {
    fn raw_text(text: &str) -> u64 {
        (text.len() as f64 / BYTES_PER_TOKEN).ceil() as u64
    }

    fn raw_message(message: &Message) -> u64 {
        PER_MESSAGE
            + match message {
                Message::User { content } => Self::raw_text(content),
                Message::Assistant {
                    content,
                    tool_calls,
                } => {
                    Self::raw_text(content)
                        + tool_calls
                            .iter()
                            .map(|c| {
                                PER_MESSAGE
                                    + Self::raw_text(&c.id)
                                    + Self::raw_text(&c.name)
                                    + Self::raw_text(&c.arguments)
                            })
                            .sum::<u64>()
                }
                Message::Tool {
                    call_id, content, ..
                } => Self::raw_text(call_id) + Self::raw_text(content),
            }
    }

    fn raw_request(system: &str, tools: &[ToolSpec], messages: &[Message]) -> u64 {
        let tools: u64 = tools
            .iter()
            .map(|t| {
                PER_MESSAGE
                    + Self::raw_text(&t.name)
                    + Self::raw_text(&t.description)
                    + Self::raw_text(&t.parameters.to_string())
            })
            .sum();
        PER_MESSAGE
            + Self::raw_text(system)
            + tools
            + messages.iter().map(Self::raw_message).sum::<u64>()
    }

    fn scaled(&self, raw: u64) -> u64 {
        (raw as f64 * self.scale).ceil() as u64
    }

    pub fn text(&self, text: &str) -> u64 {
        self.scaled(Self::raw_text(text))
    }

    pub fn message(&self, message: &Message) -> u64 {
        self.scaled(Self::raw_message(message))
    }

    pub fn request(&self, system: &str, tools: &[ToolSpec], messages: &[Message]) -> u64 {
        self.scaled(Self::raw_request(system, tools, messages))
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
        let raw = Self::raw_request(system, tools, messages);
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
}
