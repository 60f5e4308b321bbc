//! The model's answer stream: SSE parsing, the OpenAI or Anthropic decoder, the turn
//! accumulator, then the agent's decoding of every tool call's arguments. Input: one byte
//! choosing the wire format and the network piece size, then the response body.
//! Properties: nothing panics, and how the bytes are split into pieces changes nothing.
#![no_main]

use ironclaw_llm::fuzzing::{decode_stream, Wire};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&head, body)) = data.split_first() else {
        return;
    };
    let wire = if head & 1 == 0 {
        Wire::OpenAi
    } else {
        Wire::Anthropic
    };
    let piece = usize::from(head >> 1) + 1;
    let split = decode_stream(wire, body, piece);
    let whole = decode_stream(wire, body, body.len());
    assert_eq!(
        split.text, whole.text,
        "piece size {piece} changed the text"
    );
    assert_eq!(
        split.tool_calls, whole.tool_calls,
        "piece size {piece} changed the tool calls"
    );
    assert_eq!(
        split.error.is_some(),
        whole.error.is_some(),
        "{split:?} vs {whole:?}"
    );
    for call in &split.tool_calls {
        let _ = ironclaw_agent::tools::decode(&call.name, &call.arguments);
    }
});
