//! Chat Completions SSE chunks → [`StreamEvent`]s.
//!
//! "OpenAI-compatible" servers differ in the details, and each difference below was met in a
//! real server's stream:
//! - reasoning arrives as `reasoning_content` (DeepSeek, vLLM, llama.cpp), `reasoning` (Ollama,
//!   OpenRouter) or as `thinking` parts of an array `content` (Mistral's Magistral);
//! - `content` may be an array of typed parts instead of a string (Mistral);
//! - a refusal arrives in `refusal`, not `content` (OpenAI);
//! - tool calls may come without `index` (Gemini's compatibility layer sends each call whole);
//! - the tool-call id may be missing (several local servers);
//! - a failure mid-answer arrives as an SSE `error` event (llama.cpp) or an `error` object in a
//!   chunk (vLLM, OpenRouter).

use std::collections::{HashMap, VecDeque};

use serde::Deserialize;
use serde_json::Value;

use crate::classify::{self, ErrorBody, ErrorContext};
use crate::error::{Error, Result};
use crate::http::Decoder;
use crate::sse::SseEvent;
use crate::types::{StopReason, StreamEvent, Usage};

#[derive(Deserialize)]
struct Chunk {
    #[serde(default)]
    choices: Vec<Choice>,
    usage: Option<WireUsage>,
    /// Groq's own envelope; its older API put the usage only here.
    x_groq: Option<GroqExtra>,
}

#[derive(Deserialize)]
struct GroqExtra {
    usage: Option<WireUsage>,
}

#[derive(Deserialize)]
struct Choice {
    #[serde(default)]
    index: u32,
    delta: Option<Delta>,
    finish_reason: Option<String>,
}

#[derive(Deserialize)]
struct Delta {
    /// A string, or an array of typed parts.
    content: Option<Value>,
    reasoning_content: Option<String>,
    reasoning: Option<String>,
    refusal: Option<String>,
    tool_calls: Option<Vec<WireToolCall>>,
}

#[derive(Deserialize)]
struct WireToolCall {
    index: Option<usize>,
    id: Option<String>,
    function: Option<WireFunction>,
    /// Gemini's thought signature (`{"google": {"thought_signature": …}}`), owed back verbatim.
    extra_content: Option<Value>,
}

#[derive(Deserialize)]
struct WireFunction {
    name: Option<String>,
    arguments: Option<String>,
}

#[derive(Deserialize)]
struct WireUsage {
    #[serde(default)]
    prompt_tokens: u64,
    #[serde(default)]
    completion_tokens: u64,
}

pub(crate) struct OpenAiDecoder {
    ctx: ErrorContext,
    /// Wire tool-call index → our ordinal.
    by_index: HashMap<usize, usize>,
    /// Tool-call id → our ordinal, for calls sent without an index.
    by_id: HashMap<String, usize>,
    calls: usize,
    /// The call the last tool-call piece belonged to.
    last_call: Option<usize>,
    refused: bool,
    finish_reason: Option<String>,
    usage: Usage,
    finished: bool,
}

impl OpenAiDecoder {
    pub fn new(ctx: ErrorContext) -> Self {
        OpenAiDecoder {
            ctx,
            by_index: HashMap::new(),
            by_id: HashMap::new(),
            calls: 0,
            last_call: None,
            refused: false,
            finish_reason: None,
            usage: Usage::default(),
            finished: false,
        }
    }

    fn done(&mut self, out: &mut VecDeque<StreamEvent>) {
        let has_calls = self.calls > 0;
        let stop_reason = match self.finish_reason.as_deref() {
            // Some servers (older Ollama among them) say "stop" after tool calls; the agent
            // must still run the tools.
            Some("stop") | None if has_calls => StopReason::ToolUse,
            Some("stop") | None if self.refused => StopReason::Refusal,
            Some("stop") | None => StopReason::EndTurn,
            Some("tool_calls" | "function_call") => StopReason::ToolUse,
            Some("length") => StopReason::MaxTokens,
            Some(other) => StopReason::Other(other.to_string()),
        };
        out.push_back(StreamEvent::Done {
            stop_reason,
            usage: self.usage,
        });
        self.finished = true;
    }

    fn content(&mut self, content: Value, out: &mut VecDeque<StreamEvent>) {
        match content {
            Value::String(text) => push_text(out, text),
            Value::Array(parts) => {
                for part in parts {
                    let kind = part.get("type").and_then(Value::as_str).unwrap_or("text");
                    match kind {
                        "text" => push_text(out, text_of(&part, "text")),
                        "thinking" | "reasoning" => {
                            let text = match part.get("thinking") {
                                // Mistral: `thinking` is itself a list of text parts.
                                Some(Value::Array(inner)) => {
                                    inner.iter().map(|p| text_of(p, "text")).collect()
                                }
                                Some(Value::String(text)) => text.clone(),
                                _ => text_of(&part, "text"),
                            };
                            push_reasoning(out, text);
                        }
                        // Images, references and parts of kinds not known yet are not text
                        // the person should read as the answer.
                        _ => {}
                    }
                }
            }
            _ => {}
        }
    }

    fn tool_call(&mut self, call: WireToolCall, out: &mut VecDeque<StreamEvent>) {
        let id = call.id.filter(|id| !id.is_empty());
        let (name, arguments) = match call.function {
            Some(function) => (function.name, function.arguments),
            None => (None, None),
        };
        let known = match (call.index, &id) {
            (Some(index), _) => self.by_index.get(&index).copied(),
            // Without an index, a new id is a new call and no id continues the last one.
            (None, Some(id)) => self.by_id.get(id).copied(),
            (None, None) => self.last_call,
        };
        let ordinal = match known {
            Some(ordinal) => ordinal,
            None => {
                let ordinal = self.calls;
                self.calls += 1;
                if let Some(index) = call.index {
                    self.by_index.insert(index, ordinal);
                }
                // A few local servers leave out the id; tool results still need one.
                let id = id.unwrap_or_else(|| format!("call_{ordinal}"));
                self.by_id.insert(id.clone(), ordinal);
                out.push_back(StreamEvent::ToolCallStart {
                    index: ordinal,
                    id,
                    name: name.unwrap_or_default(),
                });
                ordinal
            }
        };
        self.last_call = Some(ordinal);
        if let Some(extra) = call.extra_content.filter(|v| !v.is_null()) {
            out.push_back(StreamEvent::ToolCallEcho {
                index: ordinal,
                json: extra.to_string(),
            });
        }
        if let Some(arguments) = arguments.filter(|a| !a.is_empty()) {
            out.push_back(StreamEvent::ToolCallDelta {
                index: ordinal,
                arguments,
            });
        }
    }
}

fn text_of(part: &Value, key: &str) -> String {
    part.get(key)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string()
}

fn push_text(out: &mut VecDeque<StreamEvent>, text: String) {
    if !text.is_empty() {
        out.push_back(StreamEvent::TextDelta(text));
    }
}

fn push_reasoning(out: &mut VecDeque<StreamEvent>, text: String) {
    if !text.is_empty() {
        out.push_back(StreamEvent::ReasoningDelta(text));
    }
}

impl Decoder for OpenAiDecoder {
    fn on_event(&mut self, sse: &SseEvent, out: &mut VecDeque<StreamEvent>) -> Result<()> {
        let Some(data) = sse.data.as_deref() else {
            return Ok(());
        };
        let data = data.trim();
        if sse.is_error() {
            return Err(classify::from_stream_error(
                &self.ctx,
                &ErrorBody::from_event_data(data),
            ));
        }
        if data.is_empty() {
            return Ok(());
        }
        if data == "[DONE]" {
            self.done(out);
            return Ok(());
        }
        let value: Value = serde_json::from_str(data).map_err(|err| {
            Error::malformed(&self.ctx.provider, format!("bad JSON in a chunk: {err}"))
        })?;
        if let Some(error) = ErrorBody::from_value(&value) {
            return Err(classify::from_stream_error(&self.ctx, &error));
        }
        let chunk: Chunk = serde_json::from_value(value).map_err(|err| {
            Error::malformed(&self.ctx.provider, format!("unexpected chunk: {err}"))
        })?;
        let groq_usage = chunk.x_groq.and_then(|extra| extra.usage);
        if let Some(usage) = chunk.usage.or(groq_usage) {
            self.usage = Usage {
                input_tokens: usage.prompt_tokens,
                output_tokens: usage.completion_tokens,
            };
        }
        // Only the first choice: IronClaw never asks for more than one (`n` is left at 1).
        for choice in chunk.choices.into_iter().filter(|c| c.index == 0) {
            if let Some(delta) = choice.delta {
                for reasoning in [delta.reasoning_content, delta.reasoning]
                    .into_iter()
                    .flatten()
                {
                    push_reasoning(out, reasoning);
                }
                if let Some(content) = delta.content {
                    self.content(content, out);
                }
                if let Some(refusal) = delta.refusal.filter(|r| !r.is_empty()) {
                    self.refused = true;
                    push_text(out, refusal);
                }
                for call in delta.tool_calls.unwrap_or_default() {
                    self.tool_call(call, out);
                }
            }
            if let Some(reason) = choice.finish_reason.filter(|r| !r.is_empty()) {
                self.finish_reason = Some(reason);
            }
        }
        Ok(())
    }

    fn on_eof(&mut self, out: &mut VecDeque<StreamEvent>) -> Result<()> {
        if self.finished {
            return Ok(());
        }
        // A server that said why it stopped but then skipped `[DONE]` gave a whole answer.
        if self.finish_reason.is_some() {
            self.done(out);
            return Ok(());
        }
        Err(Error::disconnected(
            &self.ctx.provider,
            "the stream ended before the answer was complete",
        ))
    }

    fn is_finished(&self) -> bool {
        self.finished
    }

    fn said_why_it_stopped(&self) -> bool {
        self.finish_reason.is_some()
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    fn decode(chunks: &[&str]) -> Result<Vec<StreamEvent>> {
        let mut decoder = OpenAiDecoder::new(ErrorContext {
            provider: "openai".into(),
            model: "m".into(),
            url: "http://127.0.0.1:1/v1".into(),
        });
        let mut out = VecDeque::new();
        for data in chunks {
            decoder.on_event(&SseEvent::data(data), &mut out)?;
        }
        decoder.on_eof(&mut out)?;
        Ok(out.into_iter().collect())
    }

    #[test]
    fn a_whole_tool_call_in_one_chunk_without_id_gets_a_synthetic_id() -> Result<()> {
        let events = decode(&[
            r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"function":{"name":"ls","arguments":"{}"}}]},"finish_reason":"stop"}]}"#,
            "[DONE]",
        ])?;
        assert_eq!(
            events,
            vec![
                StreamEvent::ToolCallStart {
                    index: 0,
                    id: "call_0".into(),
                    name: "ls".into()
                },
                StreamEvent::ToolCallDelta {
                    index: 0,
                    arguments: "{}".into()
                },
                StreamEvent::Done {
                    stop_reason: StopReason::ToolUse,
                    usage: Usage::default()
                },
            ]
        );
        Ok(())
    }

    #[test]
    fn finish_reason_without_done_marker_still_completes_the_turn() -> Result<()> {
        let events = decode(&[
            r#"{"choices":[{"index":0,"delta":{"content":"hi"},"finish_reason":"length"}]}"#,
        ])?;
        assert_eq!(
            events.last(),
            Some(&StreamEvent::Done {
                stop_reason: StopReason::MaxTokens,
                usage: Usage::default()
            })
        );
        Ok(())
    }

    #[test]
    fn an_error_object_inside_the_stream_is_classified() {
        let result = decode(&[
            r#"{"error":{"message":"This model's maximum context length is 4096 tokens","code":"context_length_exceeded"}}"#,
        ]);
        assert!(matches!(result, Err(Error::ContextTooLong { .. })));
    }
}
