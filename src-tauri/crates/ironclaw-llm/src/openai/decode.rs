//! Chat Completions SSE chunks → [`StreamEvent`]s.

use std::collections::{HashMap, VecDeque};

use serde::Deserialize;
use sse_stream::Sse;

use crate::classify::{self, ErrorBody, ErrorContext};
use crate::error::{Error, Result};
use crate::http::Decoder;
use crate::types::{StopReason, StreamEvent, Usage};

#[derive(Deserialize)]
struct Chunk {
    #[serde(default)]
    choices: Vec<Choice>,
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
    content: Option<String>,
    tool_calls: Option<Vec<WireToolCall>>,
}

#[derive(Deserialize)]
struct WireToolCall {
    index: Option<usize>,
    id: Option<String>,
    function: Option<WireFunction>,
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
    calls: HashMap<usize, usize>,
    finish_reason: Option<String>,
    usage: Usage,
    finished: bool,
}

impl OpenAiDecoder {
    pub fn new(ctx: ErrorContext) -> Self {
        OpenAiDecoder {
            ctx,
            calls: HashMap::new(),
            finish_reason: None,
            usage: Usage::default(),
            finished: false,
        }
    }

    fn done(&mut self, out: &mut VecDeque<StreamEvent>) {
        let stop_reason = match self.finish_reason.as_deref() {
            // Some servers (older Ollama among them) say "stop" after tool calls; the agent
            // must still run the tools.
            Some("stop") | None if !self.calls.is_empty() => StopReason::ToolUse,
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

    fn tool_call(&mut self, position: usize, call: WireToolCall, out: &mut VecDeque<StreamEvent>) {
        let wire_index = call.index.unwrap_or(position);
        let (name, arguments) = match call.function {
            Some(function) => (function.name, function.arguments),
            None => (None, None),
        };
        let index = match self.calls.get(&wire_index) {
            Some(index) => *index,
            None => {
                let index = self.calls.len();
                self.calls.insert(wire_index, index);
                // A few local servers leave out the id; tool results still need one.
                let id = call
                    .id
                    .filter(|id| !id.is_empty())
                    .unwrap_or_else(|| format!("call_{index}"));
                out.push_back(StreamEvent::ToolCallStart {
                    index,
                    id,
                    name: name.unwrap_or_default(),
                });
                index
            }
        };
        if let Some(arguments) = arguments.filter(|a| !a.is_empty()) {
            out.push_back(StreamEvent::ToolCallDelta { index, arguments });
        }
    }
}

impl Decoder for OpenAiDecoder {
    fn on_event(&mut self, sse: &Sse, out: &mut VecDeque<StreamEvent>) -> Result<()> {
        let Some(data) = sse.data.as_deref() else {
            return Ok(());
        };
        let data = data.trim();
        if data.is_empty() {
            return Ok(());
        }
        if data == "[DONE]" {
            self.done(out);
            return Ok(());
        }
        let value: serde_json::Value = serde_json::from_str(data).map_err(|err| {
            Error::malformed(&self.ctx.provider, format!("bad JSON in a chunk: {err}"))
        })?;
        if let Some(error) = ErrorBody::from_value(&value) {
            return Err(classify::from_stream_error(&self.ctx, &error));
        }
        let chunk: Chunk = serde_json::from_value(value).map_err(|err| {
            Error::malformed(&self.ctx.provider, format!("unexpected chunk: {err}"))
        })?;
        if let Some(usage) = chunk.usage {
            self.usage = Usage {
                input_tokens: usage.prompt_tokens,
                output_tokens: usage.completion_tokens,
            };
        }
        // Only the first choice: IronClaw never asks for more than one (`n` is left at 1).
        for choice in chunk.choices.into_iter().filter(|c| c.index == 0) {
            if let Some(delta) = choice.delta {
                if let Some(text) = delta.content.filter(|t| !t.is_empty()) {
                    out.push_back(StreamEvent::TextDelta(text));
                }
                for (position, call) in delta.tool_calls.unwrap_or_default().into_iter().enumerate()
                {
                    self.tool_call(position, call, out);
                }
            }
            if let Some(reason) = choice.finish_reason {
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
            decoder.on_event(&Sse::default().data(*data), &mut out)?;
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
