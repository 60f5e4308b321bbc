//! Compaction: the model summarises the turns before the current one, and the summary stands
//! in for them from then on. The summary is kept in the history (a `summary` message whose
//! content is this module's JSON), so a conversation resumed after a restart sends the same.

use ironclaw_llm::{ChatRequest, Message, Provider, TurnAccumulator};
use serde::{Deserialize, Serialize};
use tokio_util::sync::CancellationToken;

use super::estimate::Estimator;
use super::fit::{head_and_tail_at, last_user_index, user_message_index};

/// A summary of the conversation before its `covers_user_messages`th user message (counted
/// from 0 in the transcript): it replaces every message before that one.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Compaction {
    pub covers_user_messages: usize,
    pub text: String,
}

impl Compaction {
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }

    pub fn from_json(content: &str) -> Option<Self> {
        serde_json::from_str(content).ok()
    }
}

/// How many user messages a new summary would cover: every turn before the current one.
/// `None` when there is nothing before it to summarise (or nothing new since the last
/// summary).
pub fn covers(transcript: &[Message], previous: Option<&Compaction>) -> Option<usize> {
    let last = last_user_index(transcript)?;
    let users_before = transcript[..last]
        .iter()
        .filter(|m| matches!(m, Message::User { .. }))
        .count();
    let already = previous.map_or(0, |p| p.covers_user_messages);
    (users_before > already).then_some(users_before)
}

const INSTRUCTIONS: &str = "You are summarising the earlier part of a conversation between a \
user and IronClaw, an assistant that runs code in a sandbox, so that the assistant can continue \
the work without it. Write a concise summary in the user's language that keeps: the user's \
goals, requests and preferences; what was done (files created or changed in /workspace with \
their names, commands and code that ran and what they showed, numbers that matter); what \
failed and why; decisions made; open questions and the next steps. Be specific. Do not invent \
anything. Answer with the summary only.";

/// The request that asks the model for a summary of the messages a new [`Compaction`] covers,
/// starting from the previous summary. What does not fit in `room` tokens is left out, oldest
/// first, and said so.
pub fn summary_request(
    model: &str,
    estimator: &Estimator,
    transcript: &[Message],
    previous: Option<&Compaction>,
    covers: usize,
    room: u64,
) -> ChatRequest {
    let from = previous
        .and_then(|p| user_message_index(transcript, p.covers_user_messages))
        .unwrap_or(0);
    let to = user_message_index(transcript, covers).unwrap_or(transcript.len());
    let mut parts: Vec<String> = transcript[from..to.max(from)].iter().map(render).collect();
    let head = previous
        .map(|p| format!("Summary of what came before:\n{}\n\n", p.text.trim()))
        .unwrap_or_default();
    let mut omitted = 0;
    loop {
        let body: String = parts.join("\n\n");
        let tokens = estimator.text(&head) + estimator.text(&body) + estimator.text(INSTRUCTIONS);
        if tokens <= room || parts.len() <= 1 {
            let gap = if omitted > 0 {
                format!("[{omitted} older messages left out: they did not fit]\n\n")
            } else {
                String::new()
            };
            return ChatRequest {
                model: model.to_string(),
                system: INSTRUCTIONS.to_string(),
                messages: vec![Message::user(format!(
                    "{head}{gap}The conversation to summarise:\n\n{body}"
                ))],
                tools: Vec::new(),
                max_tokens: Some(1024),
                temperature: None,
                context_window: None,
            };
        }
        parts.remove(0);
        omitted += 1;
    }
}

fn render(message: &Message) -> String {
    let short = |text: &str, keep: usize| {
        head_and_tail_at(text, keep, keep).unwrap_or_else(|| text.to_string())
    };
    match message {
        Message::User { content, images } => format!(
            "User: {}{}",
            short(content, 2000),
            crate::vision::images_note(images.len())
        ),
        Message::Assistant {
            content,
            tool_calls,
        } => {
            let mut out = format!("Assistant: {}", short(content, 2000));
            for call in tool_calls {
                out.push_str(&format!(
                    "\n[asked to run {}: {}]",
                    call.name,
                    short(&call.arguments, 1500)
                ));
            }
            out
        }
        Message::Tool {
            content, is_error, ..
        } => format!(
            "Result{}: {}",
            if *is_error { " (error)" } else { "" },
            short(content, 600)
        ),
    }
}

/// Asks the model for the summary.
pub async fn summarise(
    provider: &dyn Provider,
    request: &ChatRequest,
    cancel: &CancellationToken,
) -> ironclaw_llm::Result<String> {
    let stream = provider.stream(request, cancel.child_token()).await?;
    let mut acc = TurnAccumulator::new();
    acc.drain(stream).await?;
    let text = acc.finish().text;
    if text.trim().is_empty() {
        return Err(ironclaw_llm::Error::Protocol(
            "the model gave an empty summary".into(),
        ));
    }
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_summary_covers_the_turns_before_the_current_one_and_only_new_ones() {
        let t = vec![
            Message::user("one"),
            Message::assistant("a", vec![]),
            Message::user("two"),
            Message::assistant("b", vec![]),
            Message::user("three"),
        ];
        assert_eq!(covers(&t, None), Some(2));
        let previous = Compaction {
            covers_user_messages: 2,
            text: "s".into(),
        };
        assert_eq!(covers(&t, Some(&previous)), None);
        assert_eq!(covers(&t[..1], None), None);
        let request = summary_request("m", &Estimator::default(), &t, None, 2, 10_000);
        let Message::User { content, .. } = &request.messages[0] else {
            panic!()
        };
        assert!(content.contains("User: one") && content.contains("Assistant: b"));
        assert!(!content.contains("three"));
        assert!(request.tools.is_empty());
        // Too little room: the oldest go first, and it says so.
        let room = Estimator::default().text(INSTRUCTIONS) + 8;
        let small = summary_request("m", &Estimator::default(), &t, None, 2, room);
        let Message::User { content, .. } = &small.messages[0] else {
            panic!()
        };
        assert!(content.contains("left out"), "{content}");
        assert!(content.contains("Assistant: b"));
    }

    #[test]
    fn the_persisted_form_reads_back() {
        let c = Compaction {
            covers_user_messages: 3,
            text: "made a.csv".into(),
        };
        assert_eq!(Compaction::from_json(&c.to_json()), Some(c));
        assert_eq!(Compaction::from_json("not json"), None);
    }
}
