//! Fitting the transcript to the window for one request. Pure: the same transcript, summary
//! and window always give the same messages, so a resumed conversation sends what the live one
//! would have.

use ironclaw_llm::{Message, ToolSpec};

use super::compact::Compaction;
use super::estimate::Estimator;
use crate::text::{ceil_char_boundary, floor_char_boundary};

/// How much of an old tool output is kept at each end once outputs must be cut.
const KEEP_HEAD: usize = 1000;
const KEEP_TAIL: usize = 1000;

/// What to send, and whether it fits.
#[derive(Debug, Clone, PartialEq)]
pub struct Fitted {
    pub messages: Vec<Message>,
    /// The estimated prompt tokens, system prompt and tools included.
    pub tokens: u64,
    /// The most the prompt may take: the window less the room kept for the answer.
    pub budget: u64,
    /// Tool outputs cut to head and tail in this request.
    pub cut_outputs: usize,
}

impl Fitted {
    pub fn fits(&self) -> bool {
        self.tokens <= self.budget
    }
}

/// Tokens kept free for the answer: a quarter of the window, at most `max_output`.
pub fn answer_room(window: u32, max_output: u32) -> u64 {
    u64::from((window / 4).min(max_output))
}

/// The messages for a request: the summary (if any) in place of the turns it covers, and —
/// when that is still too much, or `harder` asks for it — old tool outputs cut to head and
/// tail. With `harder`, the current turn's outputs are cut too, all but the last — and the
/// last as well if that is still not enough.
#[allow(clippy::too_many_arguments)]
pub fn fit(
    estimator: &Estimator,
    system: &str,
    tools: &[ToolSpec],
    transcript: &[Message],
    compaction: Option<&Compaction>,
    window: u32,
    max_output: u32,
    harder: bool,
) -> Fitted {
    let budget = u64::from(window).saturating_sub(answer_room(window, max_output));
    let mut messages = apply_summary(transcript, compaction);
    let count = |messages: &[Message]| estimator.request(system, tools, messages);
    let mut tokens = count(&messages);
    let mut cut_outputs = 0;
    if tokens > budget || harder {
        let current_turn = last_user_index(&messages).unwrap_or(0);
        let last_tool = messages
            .iter()
            .rposition(|m| matches!(m, Message::Tool { .. }));
        for (i, message) in messages.iter_mut().enumerate() {
            let old = i < current_turn || (harder && Some(i) != last_tool);
            // An earlier turn's pictures go first: each costs as much as a page of text.
            if old && crate::vision::leave_out_images(message) {
                cut_outputs += 1;
            }
            if let (true, Message::Tool { content, .. }) = (old, message) {
                if let Some(cut) = head_and_tail(content) {
                    *content = cut;
                    cut_outputs += 1;
                }
            }
        }
        tokens = count(&messages);
        // Still too much, and trying hard: the last output goes to head and tail too, rather
        // than the turn failing over one long output.
        if tokens > budget && harder {
            if let Some(Message::Tool { content, .. }) = last_tool.map(|i| &mut messages[i]) {
                if let Some(cut) = head_and_tail(content) {
                    *content = cut;
                    cut_outputs += 1;
                    tokens = count(&messages);
                }
            }
        }
    }
    Fitted {
        messages,
        tokens,
        budget,
        cut_outputs,
    }
}

/// The transcript with the summarised turns replaced by the summary, which goes in front of
/// the first turn it does not cover (a message of its own would break the user/assistant
/// alternation providers expect).
pub fn apply_summary(transcript: &[Message], compaction: Option<&Compaction>) -> Vec<Message> {
    let Some(compaction) = compaction else {
        return transcript.to_vec();
    };
    let Some(start) = user_message_index(transcript, compaction.covers_user_messages) else {
        return transcript.to_vec();
    };
    let mut messages = transcript[start..].to_vec();
    if let Some(Message::User { content, .. }) = messages.first_mut() {
        *content = format!(
            "[IronClaw note: the earlier part of this conversation was summarised to fit the \
             model's context window. The summary:\n{}]\n\n{content}",
            compaction.text.trim()
        );
    }
    messages
}

/// Where the `n`th user message (from 0) is.
pub fn user_message_index(messages: &[Message], n: usize) -> Option<usize> {
    messages
        .iter()
        .enumerate()
        .filter(|(_, m)| matches!(m, Message::User { .. }))
        .nth(n)
        .map(|(i, _)| i)
}

pub fn last_user_index(messages: &[Message]) -> Option<usize> {
    messages
        .iter()
        .rposition(|m| matches!(m, Message::User { .. }))
}

/// `text` cut to its head and tail with a pointer to the whole, if it is longer than both.
pub fn head_and_tail(text: &str) -> Option<String> {
    head_and_tail_at(text, KEEP_HEAD, KEEP_TAIL)
}

pub fn head_and_tail_at(text: &str, head: usize, tail: usize) -> Option<String> {
    if text.len() <= head + tail + 200 {
        return None;
    }
    let head_end = floor_char_boundary(text, head);
    let tail_start = ceil_char_boundary(text, text.len() - tail);
    let cut = tail_start - head_end;
    Some(format!(
        "{}\n[… {cut} bytes cut here to fit the context window; the whole output is kept in \
         IronClaw's history and the run's log …]\n{}",
        &text[..head_end],
        &text[tail_start..]
    ))
}

#[cfg(test)]
mod tests {
    use ironclaw_llm::ToolCall;
    use pretty_assertions::assert_eq;

    use super::*;

    fn round(user: &str, output: &str) -> Vec<Message> {
        vec![
            Message::user(user),
            Message::assistant(
                "",
                vec![ToolCall {
                    id: format!("c-{user}"),
                    name: "run_code".into(),
                    arguments: "{}".into(),
                    echo: None,
                }],
            ),
            Message::tool_result(format!("c-{user}"), output, false),
            Message::assistant("done", vec![]),
        ]
    }

    #[test]
    fn what_fits_is_sent_as_it_is() {
        let transcript = round("one", "short");
        let fitted = fit(
            &Estimator::default(),
            "sys",
            &[],
            &transcript,
            None,
            8192,
            4096,
            false,
        );
        assert!(fitted.fits());
        assert_eq!(fitted.messages, transcript);
        assert_eq!(fitted.cut_outputs, 0);
    }

    #[test]
    fn old_outputs_are_cut_first_and_the_current_turn_is_left_whole() {
        let big = "é".repeat(20_000); // 40 kB, two bytes a character
        let mut transcript = round("one", &big);
        transcript.extend(round("two", &big));
        let fitted = fit(
            &Estimator::default(),
            "sys",
            &[],
            &transcript,
            None,
            20_000,
            4096,
            false,
        );
        assert_eq!(fitted.cut_outputs, 1);
        let Message::Tool { content, .. } = &fitted.messages[2] else {
            panic!()
        };
        assert!(content.contains("bytes cut here"), "{content}");
        assert!(content.len() < 2_500);
        assert_eq!(
            fitted.messages[6], transcript[6],
            "the current turn's output is whole"
        );
        assert!(fitted.fits(), "{} > {}", fitted.tokens, fitted.budget);
        // Harder: the current turn's outputs too, all but the last, which goes only when
        // nothing else is left to cut.
        let harder = fit(
            &Estimator::default(),
            "sys",
            &[],
            &transcript,
            None,
            20_000,
            4096,
            true,
        );
        assert_eq!(harder.cut_outputs, 1);
        assert_eq!(harder.messages[6], transcript[6]);
    }

    #[test]
    fn a_summary_replaces_the_turns_it_covers_and_the_latest_message_is_kept() {
        let mut transcript = round("one", "a");
        transcript.extend(round("two", "b"));
        transcript.extend(round("three", "c"));
        let compaction = Compaction {
            covers_user_messages: 2,
            text: "We made a.csv and b.csv.".into(),
        };
        let messages = apply_summary(&transcript, Some(&compaction));
        assert_eq!(messages.len(), 4);
        let Message::User { content, .. } = &messages[0] else {
            panic!()
        };
        assert!(content.contains("We made a.csv and b.csv."));
        assert!(content.ends_with("three"));
        assert_eq!(messages[1..], transcript[9..]);
    }
}
