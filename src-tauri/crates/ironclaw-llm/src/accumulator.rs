//! Folds a stream of [`StreamEvent`]s into the finished turn. The UI renders the events as they
//! come; the agent loop needs the whole turn (text, tool calls, why it stopped) afterwards.

use std::collections::BTreeMap;

use futures_util::{Stream, StreamExt};

use crate::error::Result;
use crate::types::{StopReason, StreamEvent, ToolCall, Usage};

/// A finished (or, after an error, partial) assistant turn.
#[derive(Debug, Clone, PartialEq)]
pub struct Turn {
    pub text: String,
    /// The model's thinking, if it showed any.
    pub reasoning: String,
    /// In the order the model started them.
    pub tool_calls: Vec<ToolCall>,
    pub stop_reason: StopReason,
    pub usage: Usage,
}

impl From<Turn> for (String, Vec<ToolCall>, StopReason, Usage) {
    fn from(turn: Turn) -> Self {
        (turn.text, turn.tool_calls, turn.stop_reason, turn.usage)
    }
}

#[derive(Debug, Default)]
pub struct TurnAccumulator {
    text: String,
    reasoning: String,
    // Keyed by the event index so calls stay in order even if a server interleaves them.
    calls: BTreeMap<usize, ToolCall>,
    done: Option<(StopReason, Usage)>,
}

impl TurnAccumulator {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn push(&mut self, event: &StreamEvent) {
        match event {
            StreamEvent::TextDelta(text) => self.text.push_str(text),
            StreamEvent::ReasoningDelta(text) => self.reasoning.push_str(text),
            StreamEvent::ToolCallStart { index, id, name } => {
                let call = self.calls.entry(*index).or_insert_with(|| ToolCall {
                    id: String::new(),
                    name: String::new(),
                    arguments: String::new(),
                    echo: None,
                });
                call.id.clone_from(id);
                call.name.clone_from(name);
            }
            StreamEvent::ToolCallDelta { index, arguments } => {
                // A delta without a start is kept rather than lost: the agent reports the
                // nameless call back to the model as an error.
                self.calls
                    .entry(*index)
                    .or_insert_with(|| ToolCall {
                        id: String::new(),
                        name: String::new(),
                        arguments: String::new(),
                        echo: None,
                    })
                    .arguments
                    .push_str(arguments);
            }
            StreamEvent::ToolCallEcho { index, json } => {
                if let Some(call) = self.calls.get_mut(index) {
                    call.echo = Some(json.clone());
                }
            }
            StreamEvent::Done { stop_reason, usage } => {
                self.done = Some((stop_reason.clone(), *usage));
            }
        }
    }

    /// Pushes every event of `stream` until it ends or fails. On failure the partial turn stays
    /// here (see [`TurnAccumulator::text`]) and the error is returned.
    pub async fn drain<S>(&mut self, stream: S) -> Result<()>
    where
        S: Stream<Item = Result<StreamEvent>>,
    {
        let mut stream = std::pin::pin!(stream);
        while let Some(event) = stream.next().await {
            self.push(&event?);
        }
        Ok(())
    }

    /// The text received so far.
    pub fn text(&self) -> &str {
        &self.text
    }

    pub fn is_done(&self) -> bool {
        self.done.is_some()
    }

    /// The turn. Without a `Done` event the stop reason is `Other("incomplete")`.
    pub fn finish(self) -> Turn {
        let (stop_reason, usage) = self
            .done
            .unwrap_or_else(|| (StopReason::Other("incomplete".into()), Usage::default()));
        Turn {
            text: self.text,
            reasoning: self.reasoning,
            tool_calls: self.calls.into_values().collect(),
            stop_reason,
            usage,
        }
    }
}

#[cfg(test)]
mod tests {
    use futures_util::stream;
    use pretty_assertions::assert_eq;

    use super::*;
    use crate::error::Error;

    fn start(index: usize, id: &str, name: &str) -> StreamEvent {
        StreamEvent::ToolCallStart {
            index,
            id: id.into(),
            name: name.into(),
        }
    }

    fn delta(index: usize, arguments: &str) -> StreamEvent {
        StreamEvent::ToolCallDelta {
            index,
            arguments: arguments.into(),
        }
    }

    #[test]
    fn text_and_split_tool_arguments_fold_into_one_turn() {
        let mut acc = TurnAccumulator::new();
        let usage = Usage {
            input_tokens: 5,
            output_tokens: 7,
        };
        for event in [
            StreamEvent::TextDelta("Let me ".into()),
            StreamEvent::TextDelta("check.".into()),
            start(0, "c1", "run_python"),
            delta(0, "{\"code\":"),
            delta(0, "\"print(1)\"}"),
            StreamEvent::Done {
                stop_reason: StopReason::ToolUse,
                usage,
            },
        ] {
            acc.push(&event);
        }
        assert!(acc.is_done());
        assert_eq!(
            acc.finish(),
            Turn {
                text: "Let me check.".into(),
                reasoning: String::new(),
                tool_calls: vec![ToolCall {
                    id: "c1".into(),
                    name: "run_python".into(),
                    arguments: "{\"code\":\"print(1)\"}".into(),
                    echo: None,
                }],
                stop_reason: StopReason::ToolUse,
                usage,
            }
        );
    }

    #[test]
    fn interleaved_tool_calls_come_out_in_index_order() {
        let mut acc = TurnAccumulator::new();
        for event in [
            start(1, "b", "second"),
            start(0, "a", "first"),
            delta(1, "{}"),
            delta(0, "[]"),
        ] {
            acc.push(&event);
        }
        let calls = acc.finish().tool_calls;
        let names: Vec<_> = calls
            .iter()
            .map(|c| (c.name.as_str(), c.arguments.as_str()))
            .collect();
        assert_eq!(names, vec![("first", "[]"), ("second", "{}")]);
    }

    #[tokio::test]
    async fn drain_keeps_the_partial_text_when_the_stream_fails() {
        let events = stream::iter(vec![
            Ok(StreamEvent::TextDelta("partial".into())),
            Err(Error::Protocol("closed".into())),
        ]);
        let mut acc = TurnAccumulator::new();
        let result = acc.drain(events).await;
        assert!(matches!(result, Err(Error::Protocol(_))));
        assert_eq!(acc.text(), "partial");
        assert!(!acc.is_done());
        assert_eq!(
            acc.finish().stop_reason,
            StopReason::Other("incomplete".into())
        );
    }
}
