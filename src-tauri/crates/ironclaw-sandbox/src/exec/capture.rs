//! Bounded capture of one stream: the first and last bytes are kept, the middle is counted.
//! The supervisor writes the complete output to a log file once the cap is passed, so cutting
//! here loses nothing; it only keeps the host's memory flat however much the code prints.

use std::collections::VecDeque;

#[derive(Debug)]
pub struct Capture {
    head_limit: usize,
    tail_limit: usize,
    head: Vec<u8>,
    tail: VecDeque<u8>,
    total: u64,
}

impl Capture {
    /// `limit` bytes at most are held: half for the head, half for the tail.
    pub fn new(limit: usize) -> Self {
        let head_limit = limit / 2;
        Self {
            head_limit,
            tail_limit: limit - head_limit,
            head: Vec::new(),
            tail: VecDeque::new(),
            total: 0,
        }
    }

    pub fn push(&mut self, mut data: &[u8]) {
        self.total += data.len() as u64;
        if self.head.len() < self.head_limit {
            let take = data.len().min(self.head_limit - self.head.len());
            self.head.extend_from_slice(&data[..take]);
            data = &data[take..];
        }
        if data.len() >= self.tail_limit {
            self.tail.clear();
            self.tail.extend(&data[data.len() - self.tail_limit..]);
        } else {
            let overflow = (self.tail.len() + data.len()).saturating_sub(self.tail_limit);
            self.tail.drain(..overflow);
            self.tail.extend(data);
        }
    }

    pub fn total(&self) -> u64 {
        self.total
    }

    pub fn truncated(&self) -> bool {
        self.total > (self.head.len() + self.tail.len()) as u64
    }

    /// The kept text (invalid UTF-8 replaced), with a marker where bytes were left out.
    pub fn render(&self, log_hint: Option<&str>) -> String {
        let mut out = String::from_utf8_lossy(&self.head).into_owned();
        if self.truncated() {
            let omitted = self.total - (self.head.len() + self.tail.len()) as u64;
            let where_ = log_hint
                .map(|p| format!("; full output in {p}"))
                .unwrap_or_default();
            out.push_str(&format!("\n[… {omitted} bytes omitted{where_} …]\n"));
        }
        let (a, b) = self.tail.as_slices();
        let mut tail = Vec::with_capacity(a.len() + b.len());
        tail.extend_from_slice(a);
        tail.extend_from_slice(b);
        out.push_str(&String::from_utf8_lossy(&tail));
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn small_output_is_kept_whole() {
        let mut c = Capture::new(10);
        c.push(b"abc");
        c.push(b"de");
        assert!(!c.truncated());
        assert_eq!(c.render(None), "abcde");
    }

    #[test]
    fn large_output_keeps_head_and_tail_and_counts_the_middle() {
        let mut c = Capture::new(8);
        for chunk in [&b"0123"[..], b"456789", b"abcdef"] {
            c.push(chunk);
        }
        assert!(c.truncated());
        assert_eq!(c.total(), 16);
        assert_eq!(
            c.render(Some("/w/x.log")),
            "0123\n[… 8 bytes omitted; full output in /w/x.log …]\ncdef"
        );
    }

    #[test]
    fn memory_stays_bounded_for_huge_streams() {
        let mut c = Capture::new(1024);
        let chunk = vec![b'x'; 65536];
        for _ in 0..200 {
            c.push(&chunk);
        }
        assert_eq!(c.head.len() + c.tail.len(), 1024);
        assert_eq!(c.total(), 200 * 65536);
    }

    #[test]
    fn invalid_utf8_is_replaced_not_fatal() {
        let mut c = Capture::new(100);
        c.push(b"ok\xff\xfe\x00");
        assert_eq!(c.render(None), "ok\u{fffd}\u{fffd}\u{0}");
    }
}
