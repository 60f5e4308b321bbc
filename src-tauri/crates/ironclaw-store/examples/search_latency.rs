//! Measures full-text search latency over a large synthetic history.
//!
//! `cargo run --release -p ironclaw-store --example search_latency -- [messages] [queries]`
//!
//! Loads the messages in one transaction straight through SQLite (the public API commits and
//! fsyncs each message, which is right for a chat but would make loading 100k take minutes),
//! then times `History::search` through the public API and prints p50/p95/max.

use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use ironclaw_protocol::{ApprovalPolicy, MessageId};
use ironclaw_store::{History, Timestamp};

/// Words with a Zipf-like spread: a few very common, most rare, like real chat text.
const VOCABULARY: usize = 20_000;
const WORDS_PER_MESSAGE: usize = 24;

struct XorShift(u64);

impl XorShift {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// Approximately Zipf-distributed rank in `0..n` (inverse-CDF of a 1/x density).
    fn zipf(&mut self, n: usize) -> usize {
        let u = (self.next() % 1_000_000) as f64 / 1_000_000.0;
        let rank = ((n as f64).powf(u) - 1.0) as usize;
        rank.min(n - 1)
    }
}

fn word(rank: usize) -> String {
    // Pronounceable-ish distinct tokens: w0, w1, ... with a letter suffix so they are words.
    format!("w{rank}x")
}

fn main() -> Result<()> {
    let mut args = std::env::args().skip(1);
    let messages: usize = args.next().map_or(Ok(100_000), |a| a.parse())?;
    let queries: usize = args.next().map_or(Ok(500), |a| a.parse())?;

    let dir = tempfile::tempdir()?;
    let path = dir.path().join("history.sqlite3");
    let (history, _) = History::open(&path)?;
    let conversation = history.create_conversation("bench", ApprovalPolicy::default())?;
    drop(history);

    let started = Instant::now();
    let mut rng = XorShift(0x9E37_79B9_7F4A_7C15);
    {
        let mut conn = rusqlite::Connection::open(&path)?;
        let tx = conn.transaction()?;
        {
            let mut insert = tx.prepare(
                "INSERT INTO messages (id, conversation_id, role, content, status, created_at, updated_at)
                 VALUES (?1, ?2, 'assistant', ?3, 'complete', ?4, ?4)",
            )?;
            let now = Timestamp::now();
            for _ in 0..messages {
                let text = (0..WORDS_PER_MESSAGE)
                    .map(|_| word(rng.zipf(VOCABULARY)))
                    .collect::<Vec<_>>()
                    .join(" ");
                insert.execute(rusqlite::params![
                    MessageId::new(),
                    conversation.id,
                    text,
                    now
                ])?;
            }
        }
        tx.commit()?;
    }
    println!("loaded {messages} messages in {:.1?}", started.elapsed());

    let (history, _) = History::open(&path).context("reopening the loaded history")?;
    let mut timings: Vec<Duration> = Vec::with_capacity(queries);
    let mut total_hits = 0usize;
    for i in 0..queries {
        // Half one-word, half two-word queries, words drawn with the same skew as the text.
        let mut query = word(rng.zipf(VOCABULARY));
        if i % 2 == 1 {
            query.push(' ');
            query.push_str(&word(rng.zipf(VOCABULARY)));
        }
        let started = Instant::now();
        total_hits += history.search(&query, 20)?.len();
        timings.push(started.elapsed());
    }
    timings.sort();
    let at = |p: f64| timings[((timings.len() as f64 * p) as usize).min(timings.len() - 1)];
    println!(
        "{queries} searches (limit 20, {total_hits} hits): p50 {:.2?}  p95 {:.2?}  max {:.2?}",
        at(0.50),
        at(0.95),
        timings[timings.len() - 1]
    );
    Ok(())
}
