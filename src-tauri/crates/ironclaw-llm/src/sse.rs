//! Server-sent events, parsed here rather than by a library because real servers bend the
//! format in ways a spec-exact parser hides:
//! - llama.cpp's server reports a failure mid-answer in an `error:` field (then `data: [DONE]`);
//!   the spec says to ignore unknown fields, which turns the failure into an empty answer.
//! - A proxy may send a plain JSON error under `text/event-stream`; its lines are no fields at
//!   all, and they are kept (`stray`) so the error can still be read.
//!
//! Lines end in LF, CRLF or CR; a field's value loses one leading space; `data` lines join with
//! LF; a blank line dispatches. An event still open at the end of the body is dispatched too,
//! because several servers end on `data: [DONE]\n` without the blank line.

use std::collections::VecDeque;

use crate::error::{Error, Result};

/// One dispatched event. An `error:` field arrives as `event: error` with the field's value as
/// `data`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct SseEvent {
    pub event: Option<String>,
    pub data: Option<String>,
}

impl SseEvent {
    #[cfg(test)]
    pub fn data(data: &str) -> Self {
        SseEvent {
            event: None,
            data: Some(data.to_string()),
        }
    }

    pub fn is_error(&self) -> bool {
        self.event.as_deref() == Some("error")
    }
}

/// A line longer than this is not an event stream (or is an attack on memory).
const MAX_LINE: usize = 64 << 20;
/// How much of the non-event text is kept for an error message.
const MAX_STRAY: usize = 16 << 10;

#[derive(Debug, Default)]
pub(crate) struct SseParser {
    line: Vec<u8>,
    /// The previous chunk ended in CR: an LF first in the next one belongs to it.
    after_cr: bool,
    started: bool,
    event: Option<String>,
    data: Option<String>,
    error: Option<String>,
    stray: String,
    dispatched: usize,
    /// Newline-delimited JSON (Ollama's native API) instead of SSE: every line is an event's
    /// data.
    ndjson: bool,
}

impl SseParser {
    pub fn ndjson() -> Self {
        SseParser {
            ndjson: true,
            ..SseParser::default()
        }
    }

    pub fn feed(&mut self, mut bytes: &[u8], out: &mut VecDeque<SseEvent>) -> Result<()> {
        if self.after_cr {
            self.after_cr = false;
            bytes = bytes.strip_prefix(b"\n").unwrap_or(bytes);
        }
        while let Some(end) = bytes.iter().position(|&b| b == b'\n' || b == b'\r') {
            self.line.extend_from_slice(&bytes[..end]);
            let line = std::mem::take(&mut self.line);
            self.on_line(&line, out);
            let mut rest = &bytes[end + 1..];
            if bytes[end] == b'\r' {
                match rest.first() {
                    Some(b'\n') => rest = &rest[1..],
                    None => self.after_cr = true,
                    Some(_) => {}
                }
            }
            bytes = rest;
        }
        self.line.extend_from_slice(bytes);
        if self.line.len() > MAX_LINE {
            return Err(Error::Protocol(format!(
                "the server sent a line of over {} MiB without a line break; this is not an \
                 event stream",
                MAX_LINE >> 20
            )));
        }
        Ok(())
    }

    /// The body ended: a last line without a line break and an event without its blank line
    /// still count.
    pub fn finish(&mut self, out: &mut VecDeque<SseEvent>) {
        if !self.line.is_empty() {
            let line = std::mem::take(&mut self.line);
            self.on_line(&line, out);
        }
        self.dispatch(out);
    }

    /// Whether any event was dispatched.
    pub fn saw_events(&self) -> bool {
        self.dispatched > 0
    }

    /// Text of the body that was not event-stream fields, such as a bare JSON error.
    pub fn stray(&self) -> &str {
        &self.stray
    }

    fn on_line(&mut self, mut line: &[u8], out: &mut VecDeque<SseEvent>) {
        if !self.started {
            // A byte-order mark may open the stream (it can arrive split over chunks, so it is
            // looked for in the first whole line).
            self.started = true;
            line = line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line);
        }
        if self.ndjson {
            if !line.iter().all(u8::is_ascii_whitespace) {
                self.dispatched += 1;
                out.push_back(SseEvent {
                    event: None,
                    data: Some(String::from_utf8_lossy(line).into_owned()),
                });
            }
            return;
        }
        if line.is_empty() {
            self.dispatch(out);
            return;
        }
        if line[0] == b':' {
            return; // a comment (keep-alive)
        }
        let text = String::from_utf8_lossy(line);
        let (field, value) = match text.split_once(':') {
            Some((field, value)) => (field, value.strip_prefix(' ').unwrap_or(value)),
            None => (text.as_ref(), ""),
        };
        match field {
            "data" => append(&mut self.data, value),
            "event" => self.event = Some(value.to_string()),
            "error" => append(&mut self.error, value),
            "id" | "retry" => {}
            _ => {
                if self.stray.len() < MAX_STRAY {
                    self.stray.push_str(&text);
                    self.stray.push('\n');
                }
            }
        }
    }

    fn dispatch(&mut self, out: &mut VecDeque<SseEvent>) {
        let event = self.event.take();
        let data = self.data.take();
        let event = match self.error.take() {
            Some(error) => SseEvent {
                event: Some("error".into()),
                data: Some(error),
            },
            // Without data there is nothing to dispatch (the spec's rule, too).
            None if data.is_none() => return,
            None => SseEvent { event, data },
        };
        self.dispatched += 1;
        out.push_back(event);
    }
}

fn append(field: &mut Option<String>, value: &str) {
    match field {
        Some(text) => {
            text.push('\n');
            text.push_str(value);
        }
        None => *field = Some(value.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    fn parse_in_pieces(body: &[u8], piece: usize) -> (Vec<SseEvent>, String) {
        let mut parser = SseParser::default();
        let mut out = VecDeque::new();
        for chunk in body.chunks(piece) {
            parser.feed(chunk, &mut out).ok();
        }
        parser.finish(&mut out);
        (out.into_iter().collect(), parser.stray().to_string())
    }

    fn ev(event: Option<&str>, data: &str) -> SseEvent {
        SseEvent {
            event: event.map(str::to_string),
            data: Some(data.to_string()),
        }
    }

    #[test]
    fn every_line_ending_and_every_split_give_the_same_events() {
        let body = "\u{feff}: keep-alive\nevent: message_start\ndata: {\"a\":1}\n\ndata:x\ndata: y\r\n\r\nid: 3\nretry: 10\ndata: [DONE]\r\rdata: tail";
        for piece in 1..body.len() {
            let (events, stray) = parse_in_pieces(body.as_bytes(), piece);
            assert_eq!(
                events,
                vec![
                    ev(Some("message_start"), "{\"a\":1}"),
                    ev(None, "x\ny"),
                    ev(None, "[DONE]"),
                    ev(None, "tail"),
                ],
                "split every {piece} bytes"
            );
            assert_eq!(stray, "");
        }
    }

    #[test]
    fn an_error_field_is_an_error_event_and_a_bare_json_body_is_kept_as_stray() {
        // llama.cpp (2025): the failure, then the usual end marker.
        let (events, _) = parse_in_pieces(
            b"data: {\"choices\":[]}\n\nerror: {\"code\":500,\"message\":\"boom\"}\n\ndata: [DONE]\n\n",
            7,
        );
        assert_eq!(
            events,
            vec![
                ev(None, "{\"choices\":[]}"),
                ev(Some("error"), "{\"code\":500,\"message\":\"boom\"}"),
                ev(None, "[DONE]"),
            ]
        );
        assert!(events[1].is_error());

        let (events, stray) = parse_in_pieces(b"{\"error\": {\"message\": \"no credit\"}}\n", 5);
        assert!(events.is_empty());
        assert_eq!(stray, "{\"error\": {\"message\": \"no credit\"}}\n");
    }

    #[test]
    fn a_line_without_end_is_refused_past_the_cap() {
        let mut parser = SseParser::default();
        let mut out = VecDeque::new();
        let chunk = vec![b'a'; 1 << 20];
        let mut failed = false;
        for _ in 0..(MAX_LINE >> 20) + 1 {
            if parser.feed(&chunk, &mut out).is_err() {
                failed = true;
                break;
            }
        }
        assert!(failed);
    }
}
