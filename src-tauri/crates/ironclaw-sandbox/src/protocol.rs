//! The wire protocol between the host and the in-container supervisor (`image/supervisor.py`).
//!
//! Host → container: one JSON object per line on the container's stdin ([`Request`]).
//! Container → host: binary frames on its stdout, or a run's frames on this process's socket
//! (`exec::channel`):
//! `MAGIC(2) KIND(1) SEQ(u32 BE) LEN(u32 BE) CHECK(1) PAYLOAD(LEN)`, where CHECK is the sum of
//! the first 11 bytes mod 256. Output is binary-safe (no base64 on the 100 MB path), and since a
//! client may attach while a frame is half written, the decoder resynchronises on the magic and
//! the check byte instead of trusting its position in the stream.

use bytes::{Buf, Bytes, BytesMut};
use serde::{Deserialize, Serialize};

use crate::exec::seal::{Key, SIGNED, SIGNED_OVERHEAD};

pub const MAGIC: [u8; 2] = [0xC1, 0xA7];
pub const HEADER_LEN: usize = 12;
/// The supervisor writes at most 64 KiB of output or one small JSON event per frame; anything
/// claiming far more is garbage we landed on while resynchronising.
pub const MAX_PAYLOAD: u32 = 4 << 20;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stream {
    Stdout,
    Stderr,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Frame {
    Output {
        seq: u32,
        stream: Stream,
        data: Bytes,
    },
    Event {
        seq: u32,
        event: Event,
    },
}

/// What the supervisor reports. Unknown `type`s decode as [`Event::Unknown`] so an older host
/// keeps working with a newer image.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Event {
    Hello {
        version: u32,
        uid: u32,
        gid: u32,
        /// What the supervisor found missing from the container's confinement at start.
        #[serde(default)]
        confinement: Option<Vec<String>>,
    },
    Started {
        lang: String,
        #[serde(default)]
        interpreter_restarted: bool,
        /// This run's frames come over the host's socket, not attach.
        #[serde(default)]
        channel: bool,
    },
    // Boxed: the largest event by far, and one per run.
    Ended(Box<Ended>),
    Rejected {
        reason: String,
        #[serde(default)]
        message: Option<String>,
    },
    Pong {
        #[serde(default)]
        running: Option<u32>,
        /// `None` from a supervisor too old to check; otherwise what is missing (empty: none).
        #[serde(default)]
        confinement: Option<Vec<String>>,
        /// What each interpreter (by language) carries from earlier runs, as a run's
        /// `altered_after` would say it.
        #[serde(default)]
        altered: Leftovers,
    },
    Status {
        #[serde(default)]
        running: Option<u32>,
        #[serde(default)]
        memory_bytes: u64,
    },
    /// Workspace files a process in the sandbox holds open for writing (`image/write_holds.py`),
    /// relative to the workspace; `unknowable` says why the answer cannot be relied on.
    Held {
        #[serde(default)]
        paths: Vec<String>,
        #[serde(default)]
        unknowable: Option<String>,
    },
    Error {
        message: String,
    },
    #[serde(other)]
    Unknown,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct Ended {
    pub exit_code: i32,
    pub duration_ms: f64,
    #[serde(default)]
    pub timed_out: bool,
    #[serde(default)]
    pub cancelled: bool,
    #[serde(default)]
    pub oom_killed: bool,
    #[serde(default)]
    pub peak_memory_bytes: u64,
    #[serde(default)]
    pub stdout_bytes: u64,
    #[serde(default)]
    pub stderr_bytes: u64,
    /// Complete stdout, once the output passed the in-memory cap.
    #[serde(default)]
    pub log_path: Option<String>,
    /// Complete stderr, likewise.
    #[serde(default)]
    pub stderr_log_path: Option<String>,
    #[serde(default)]
    pub log_error: Option<String>,
    #[serde(default)]
    pub interpreter_restarted: bool,
    #[serde(default)]
    pub interpreter_lost: bool,
    #[serde(default)]
    pub killed_signal: Option<i32>,
    #[serde(default)]
    pub stray_processes_killed: Vec<String>,
    /// Message queues and System V objects the run left in the sandbox, removed at its end.
    #[serde(default)]
    pub ipc_removed: Vec<String>,
    /// Completion lines without the run's nonce: written by the code, not the interpreter.
    #[serde(default)]
    pub forged_completions: u32,
    /// What earlier runs had left altered in this interpreter when this run began.
    #[serde(default)]
    pub altered_before: Vec<Alteration>,
    /// What is altered in it now, after this run.
    #[serde(default)]
    pub altered_after: Vec<Alteration>,
    #[serde(default)]
    pub note: Option<String>,
}

/// What each interpreter, by language name, carries from earlier runs.
pub type Leftovers = std::collections::HashMap<String, Vec<Alteration>>;

/// Something a run left in a persistent interpreter that can change what later code does (a
/// live thread, a shadowing function, a changed PATH...), found by the supervisor after a run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Alteration {
    /// A short machine-readable class: `thread`, `signals`, `alias`, `function`, `path`, ...
    pub kind: String,
    /// What exactly, in words a person can read.
    pub detail: String,
    /// The sequence number of the run that made it.
    pub seq: u32,
}

#[derive(Debug, Clone, Serialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum Request<'a> {
    Exec {
        seq: u32,
        lang: &'a str,
        code: &'a str,
        timeout_ms: u64,
        capture_bytes: u64,
        log_name: &'a str,
        /// Start the interpreter afresh before running (the person asked for it).
        #[serde(skip_serializing_if = "std::ops::Not::not")]
        fresh: bool,
        /// The host's socket for this run's frames (see `exec::channel`); absent: stdout.
        #[serde(skip_serializing_if = "Option::is_none")]
        channel: Option<&'a crate::exec::channel::Offer>,
    },
    Cancel {
        seq: u32,
    },
    Ping {
        seq: u32,
    },
    Status {
        seq: u32,
    },
    Held {
        seq: u32,
    },
}

impl Request<'_> {
    /// The request as one line, ready for the container's stdin.
    pub fn to_line(&self) -> Vec<u8> {
        // Serializing these plain structs cannot fail; fall back to an inert line regardless.
        let mut line = serde_json::to_vec(self).unwrap_or_else(|_| b"{}".to_vec());
        line.push(b'\n');
        line
    }

    /// The request signed with the container's key (`exec::seal`): `client` names the
    /// connection and `n` counts its requests, so a request read off stdin cannot be sent
    /// again.
    pub fn to_signed_line(&self, key: &Key, client: &str, n: u64) -> Vec<u8> {
        let mut body = serde_json::to_value(self).unwrap_or_default();
        if let Some(fields) = body.as_object_mut() {
            fields.insert("client".into(), client.into());
            fields.insert("n".into(), n.into());
        }
        let body = serde_json::to_vec(&body).unwrap_or_else(|_| b"{}".to_vec());
        key.sign_line(&body)
    }
}

/// The line that gives a freshly started supervisor its container's key. Sent once, by the
/// process that started the container, before any request; unsigned (there is nothing yet
/// to sign it with).
pub fn key_line(key: &Key) -> Vec<u8> {
    let mut line = serde_json::to_vec(&serde_json::json!({"op": "key", "key": key.to_hex()}))
        .unwrap_or_default();
    line.push(b'\n');
    line
}

fn header_check(header: &[u8]) -> u8 {
    header[..11].iter().fold(0u8, |acc, b| acc.wrapping_add(*b))
}

/// Encodes a frame exactly as the supervisor does (used by tests and fuzzing).
pub fn encode(kind: u8, seq: u32, payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(HEADER_LEN + payload.len());
    out.extend_from_slice(&MAGIC);
    out.push(kind);
    out.extend_from_slice(&seq.to_be_bytes());
    out.extend_from_slice(&(payload.len() as u32).to_be_bytes());
    let check = header_check(&out);
    out.push(check);
    out.extend_from_slice(payload);
    out
}

/// Incremental decoder: feed it bytes as they arrive, take frames out.
#[derive(Debug, Default)]
pub struct Decoder {
    buf: BytesMut,
    /// Bytes skipped while resynchronising (a sign of a mid-frame attach, or corruption).
    pub skipped: u64,
    /// Events whose JSON did not parse; counted, not fatal.
    pub bad_events: u64,
    /// The container's key, for a stream anyone in the container may write into (the
    /// supervisor's stdout): then only frames signed with it count (see `exec::seal`).
    key: Option<Key>,
    /// The newest signed frame's counter: an older one is a replay.
    counter: u64,
    /// Frames dropped for want of a valid signature, or replayed.
    pub unsigned: u64,
}

impl Decoder {
    pub fn new() -> Self {
        Self::default()
    }

    /// A decoder that takes only frames signed with `key`, each newer than the last.
    pub fn sealed(key: Key) -> Self {
        Self {
            key: Some(key),
            ..Self::default()
        }
    }

    pub fn feed(&mut self, data: &[u8]) {
        self.buf.extend_from_slice(data);
    }

    /// Where bytes go next, for a reader that can fill it in place (no copy through `feed`).
    pub fn unfilled(&mut self, at_least: usize) -> &mut BytesMut {
        self.buf.reserve(at_least);
        &mut self.buf
    }

    /// Next complete frame, or `None` until more bytes arrive.
    pub fn next_frame(&mut self) -> Option<Frame> {
        loop {
            if !self.sync() {
                return None;
            }
            if self.buf.len() < HEADER_LEN {
                return None;
            }
            let kind = self.buf[2];
            let seq = u32::from_be_bytes([self.buf[3], self.buf[4], self.buf[5], self.buf[6]]);
            let len = u32::from_be_bytes([self.buf[7], self.buf[8], self.buf[9], self.buf[10]]);
            let valid = header_check(&self.buf[..HEADER_LEN]) == self.buf[11]
                && (1..=SIGNED).contains(&kind)
                && len <= MAX_PAYLOAD;
            if !valid {
                // A false magic inside payload bytes: skip one byte and look again.
                self.buf.advance(1);
                self.skipped += 1;
                continue;
            }
            let total = HEADER_LEN + len as usize;
            if self.buf.len() < total {
                self.buf.reserve(total - self.buf.len());
                return None;
            }
            self.buf.advance(HEADER_LEN);
            let mut payload = self.buf.split_to(len as usize).freeze();
            let mut kind = kind;
            if let Some(key) = &self.key {
                let opened = (kind == SIGNED)
                    .then(|| key.open(seq, &payload))
                    .flatten()
                    .filter(|(_, counter, _)| *counter > self.counter)
                    .map(|(inner, counter, _)| (inner, counter));
                let Some((inner, counter)) = opened else {
                    self.unsigned += 1;
                    continue;
                };
                self.counter = counter;
                kind = inner;
                payload.advance(SIGNED_OVERHEAD);
            } else if kind == SIGNED {
                // A signed frame on a stream that needs none (a run's socket): not ours.
                self.unsigned += 1;
                continue;
            }
            let frame = match kind {
                1 => Frame::Output {
                    seq,
                    stream: Stream::Stdout,
                    data: payload,
                },
                2 => Frame::Output {
                    seq,
                    stream: Stream::Stderr,
                    data: payload,
                },
                3 => match serde_json::from_slice::<Event>(&payload) {
                    Ok(event) => Frame::Event { seq, event },
                    Err(_) => {
                        self.bad_events += 1;
                        continue;
                    }
                },
                _ => {
                    self.unsigned += 1;
                    continue;
                }
            };
            return Some(frame);
        }
    }

    /// Drops bytes until the buffer starts with the magic (or could, given more bytes).
    fn sync(&mut self) -> bool {
        let found = self.buf.windows(2).position(|w| w == MAGIC);
        match found {
            Some(0) => true,
            Some(at) => {
                self.buf.advance(at);
                self.skipped += at as u64;
                true
            }
            None => {
                // Keep a trailing first magic byte: its partner may be in the next chunk.
                let keep = usize::from(self.buf.last() == Some(&MAGIC[0]));
                let drop = self.buf.len() - keep;
                self.buf.advance(drop);
                self.skipped += drop as u64;
                false
            }
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use pretty_assertions::assert_eq;

    fn decode_all(dec: &mut Decoder) -> Vec<Frame> {
        std::iter::from_fn(|| dec.next_frame()).collect()
    }

    #[test]
    fn frames_survive_being_split_at_every_byte() {
        let mut wire = encode(1, 7, b"hello\xff\x00");
        wire.extend(encode(3, 7, br#"{"type":"pong","running":null}"#));
        for split in 0..wire.len() {
            let mut dec = Decoder::new();
            dec.feed(&wire[..split]);
            let mut frames = decode_all(&mut dec);
            dec.feed(&wire[split..]);
            frames.extend(decode_all(&mut dec));
            assert_eq!(
                frames,
                vec![
                    Frame::Output {
                        seq: 7,
                        stream: Stream::Stdout,
                        data: Bytes::from_static(b"hello\xff\x00")
                    },
                    Frame::Event {
                        seq: 7,
                        event: Event::Pong {
                            running: None,
                            confinement: None,
                            altered: Leftovers::new(),
                        }
                    },
                ],
                "split at {split}"
            );
            assert_eq!(dec.skipped, 0);
        }
    }

    #[test]
    fn decoder_resynchronises_after_attaching_mid_frame() {
        let first = encode(1, 1, &[0xC1, 0xA7, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9]);
        let second = encode(2, 2, b"err");
        let mut wire = first[5..].to_vec(); // we joined in the middle of `first`
        wire.extend(&second);
        let mut dec = Decoder::new();
        dec.feed(&wire);
        assert_eq!(
            decode_all(&mut dec),
            vec![Frame::Output {
                seq: 2,
                stream: Stream::Stderr,
                data: Bytes::from_static(b"err")
            }]
        );
        assert!(dec.skipped > 0);
    }

    #[test]
    fn malformed_event_json_is_skipped_not_fatal() {
        let mut wire = encode(3, 1, b"{not json");
        wire.extend(encode(1, 1, b"ok"));
        let mut dec = Decoder::new();
        dec.feed(&wire);
        assert_eq!(decode_all(&mut dec).len(), 1);
        assert_eq!(dec.bad_events, 1);
    }

    #[test]
    fn unknown_event_type_decodes_as_unknown() {
        let mut dec = Decoder::new();
        dec.feed(&encode(3, 4, br#"{"type":"from_the_future","x":1}"#));
        assert_eq!(
            dec.next_frame(),
            Some(Frame::Event {
                seq: 4,
                event: Event::Unknown
            })
        );
    }

    #[test]
    fn oversized_length_is_treated_as_garbage() {
        let mut bogus = encode(1, 1, b"");
        bogus[7..11].copy_from_slice(&(MAX_PAYLOAD + 1).to_be_bytes());
        bogus[11] = header_check(&bogus);
        let mut dec = Decoder::new();
        dec.feed(&bogus);
        dec.feed(&encode(1, 2, b"x"));
        let frames = decode_all(&mut dec);
        assert_eq!(frames.len(), 1);
    }

    #[test]
    fn exec_request_is_one_json_line() {
        let line = Request::Exec {
            seq: 3,
            lang: "python",
            code: "print('a\nb')",
            timeout_ms: 1000,
            capture_bytes: 10,
            log_name: "x",
            fresh: false,
            channel: None,
        }
        .to_line();
        assert_eq!(line.iter().filter(|b| **b == b'\n').count(), 1);
        let v: serde_json::Value = serde_json::from_slice(&line).unwrap();
        assert_eq!(v["op"], "exec");
        assert_eq!(v["code"], "print('a\nb')");
        assert!(v.get("fresh").is_none(), "sent only when asked for");
    }

    #[test]
    fn a_sealed_decoder_takes_only_signed_frames_and_never_one_twice() {
        let key = Key::generate();
        let ended = br#"{"type":"ended","exit_code":0,"duration_ms":1.0}"#;
        let signed = |seq, kind, counter, payload: &[u8]| {
            encode(SIGNED, seq, &key.seal(seq, kind, counter, payload))
        };
        let mut dec = Decoder::sealed(key.clone());
        // Forged: plain frames, a frame signed with another key, a signed frame moved to
        // another run.
        dec.feed(&encode(3, 5, ended));
        dec.feed(&encode(1, 5, b"forged output"));
        dec.feed(&encode(SIGNED, 5, &Key::generate().seal(5, 3, 1, ended)));
        let moved = key.seal(6, 3, 1, ended);
        dec.feed(&encode(SIGNED, 5, &moved));
        // Genuine, then the same frame replayed.
        dec.feed(&signed(5, 1, 2, b"real output"));
        dec.feed(&signed(5, 1, 2, b"real output"));
        dec.feed(&signed(5, 3, 3, ended));
        let frames = decode_all(&mut dec);
        assert_eq!(frames.len(), 2, "{frames:?}");
        assert!(
            matches!(&frames[0], Frame::Output { seq: 5, data, .. } if &data[..] == b"real output")
        );
        assert!(matches!(
            &frames[1],
            Frame::Event {
                seq: 5,
                event: Event::Ended(_)
            }
        ));
        assert_eq!(dec.unsigned, 5);
        // The plain decoder (a run's socket) takes no signed frame.
        let mut plain = Decoder::new();
        plain.feed(&signed(5, 3, 9, ended));
        plain.feed(&encode(3, 5, ended));
        assert_eq!(decode_all(&mut plain).len(), 1);
    }
}
