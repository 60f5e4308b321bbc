//! The host side of the supervisor's framing protocol. Input: the first byte sets the piece
//! size, the rest is fed as it would arrive from `docker attach`. Properties: never panics or
//! loops; a frame encoded from fuzz data decodes back to itself whatever the piece size; a
//! sealed decoder (the supervisor's stdout) takes nothing unsigned from the same bytes.
#![no_main]

use ironclaw_sandbox::exec::seal::{Key, SIGNED};
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

    // Sealed: arbitrary bytes under a key nobody in the input knows yield no frame.
    let key = Key::from_hex(&"5a".repeat(32)).unwrap_or_else(Key::generate);
    let mut sealed = Decoder::sealed(key.clone());
    for chunk in body.chunks(piece) {
        sealed.feed(chunk);
        assert!(sealed.next_frame().is_none());
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

    // The same, signed, through a sealed decoder.
    let frame = encode(SIGNED, seq, &key.seal(seq, 1, 1, body));
    let mut sealed = Decoder::sealed(key);
    let mut got = Vec::new();
    for chunk in frame.chunks(piece) {
        sealed.feed(chunk);
        while let Some(f) = sealed.next_frame() {
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
});
