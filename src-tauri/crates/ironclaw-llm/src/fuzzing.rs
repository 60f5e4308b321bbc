//! Entry points for the fuzz targets in `fuzz/` (feature `fuzzing`): the same code paths a
//! streamed answer takes, driven from bytes without a network or a runtime.

use std::collections::VecDeque;

use crate::accumulator::TurnAccumulator;
use crate::anthropic::decode::AnthropicDecoder;
use crate::classify::ErrorContext;
use crate::http::Decoder;
use crate::openai::decode::OpenAiDecoder;
use crate::sse::SseParser;
use crate::types::{StreamEvent, ToolCall};

#[derive(Debug, Clone, Copy)]
pub enum Wire {
    OpenAi,
    Anthropic,
}

/// What one streamed answer decoded to.
#[derive(Debug)]
pub struct Decoded {
    pub text: String,
    pub tool_calls: Vec<ToolCall>,
    /// The error that ended the stream, if any (as the person would read it).
    pub error: Option<String>,
}

/// Feeds `body` to the SSE parser in pieces of `piece` bytes (as a network delivers it), the
/// wire format's decoder and the turn accumulator; never blocks.
pub fn decode_stream(wire: Wire, body: &[u8], piece: usize) -> Decoded {
    let ctx = ErrorContext {
        provider: "fuzz".into(),
        model: "m".into(),
        url: "http://127.0.0.1:1/v1".into(),
    };
    match wire {
        Wire::OpenAi => run(OpenAiDecoder::new(ctx), body, piece),
        Wire::Anthropic => run(AnthropicDecoder::new(ctx), body, piece),
    }
}

fn run<D: Decoder>(mut decoder: D, body: &[u8], piece: usize) -> Decoded {
    let mut parser = SseParser::default();
    let mut sse = VecDeque::new();
    let mut out: VecDeque<StreamEvent> = VecDeque::new();
    let mut error = None;
    let mut pieces = body.chunks(piece.max(1));
    let mut body_ended = false;
    while !decoder.is_finished() {
        let step = match sse.pop_front() {
            Some(event) => decoder.on_event(&event, &mut out),
            None if body_ended => {
                if let Err(e) = decoder.on_eof(&mut out) {
                    error = Some(e.to_string());
                }
                break;
            }
            None => match pieces.next() {
                Some(chunk) => parser.feed(chunk, &mut sse),
                None => {
                    parser.finish(&mut sse);
                    body_ended = true;
                    Ok(())
                }
            },
        };
        if let Err(e) = step {
            error = Some(e.to_string());
            break;
        }
    }
    let mut turn = TurnAccumulator::new();
    for event in &out {
        turn.push(event);
    }
    let turn = turn.finish();
    Decoded {
        text: turn.text,
        tool_calls: turn.tool_calls,
        error,
    }
}
