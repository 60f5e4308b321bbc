//! Entry points for the fuzz targets in `fuzz/` (feature `fuzzing`): the same code paths a
//! streamed answer takes, driven from bytes without a network or a runtime.

use std::collections::VecDeque;

use bytes::Bytes;
use futures_util::{FutureExt, StreamExt};
use sse_stream::SseByteStream;

use crate::accumulator::TurnAccumulator;
use crate::anthropic::decode::AnthropicDecoder;
use crate::classify::ErrorContext;
use crate::http::Decoder;
use crate::openai::decode::OpenAiDecoder;
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
    let pieces: Vec<Result<Bytes, std::io::Error>> = body
        .chunks(piece.max(1))
        .map(|c| Ok(Bytes::copy_from_slice(c)))
        .collect();
    let mut sse = SseByteStream::new(futures_util::stream::iter(pieces));
    let mut out: VecDeque<StreamEvent> = VecDeque::new();
    let mut error = None;
    loop {
        if decoder.is_finished() {
            break;
        }
        // An iterator stream is always ready: `None` here would mean it is pending.
        let Some(next) = sse.next().now_or_never() else {
            error = Some("the SSE parser asked to wait on ready input".to_string());
            break;
        };
        let step = match next {
            Some(Ok(event)) => decoder.on_event(&event, &mut out),
            Some(Err(e)) => {
                error = Some(e.to_string());
                break;
            }
            None => {
                if let Err(e) = decoder.on_eof(&mut out) {
                    error = Some(e.to_string());
                }
                break;
            }
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
