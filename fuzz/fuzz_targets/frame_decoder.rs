//! The host side of the supervisor's framing protocol. Input: the first byte sets the piece
//! size, the rest is fed as it would arrive from `docker attach`. Properties: never panics or
//! loops; a frame encoded from fuzz data decodes back to itself whatever the piece size.
#![no_main]

use ironclaw_sandbox::protocol::{encode, Decoder, Frame, Stream};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&head, body)) = data.split_first() else {
        return;
    };
    let piece = usize::from(head) + 1;
    let mut decoder = Decoder::new();
    for chunk in body.chunks(piece) {
        decoder.feed(chunk);
        while decoder.next_frame().is_some() {}
    }

    // Round trip: stdout frame carrying the input itself, delivered in pieces.
    let seq = u32::from(head) * 7919;
    let frame = encode(1, seq, body);
    let mut decoder = Decoder::new();
    let mut got = Vec::new();
    for chunk in frame.chunks(piece) {
        decoder.feed(chunk);
        while let Some(f) = decoder.next_frame() {
            got.push(f);
        }
    }
    assert_eq!(
        got,
        vec![Frame::Output {
            seq,
            stream: Stream::Stdout,
            data: bytes::Bytes::copy_from_slice(body),
        }]
    );
    assert_eq!(decoder.skipped, 0);
});
