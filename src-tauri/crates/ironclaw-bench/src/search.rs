//! History search over a big history: [`History::search`] (SQLite FTS5), called exactly as
//! `ironclaw history search` calls it, over a synthetic history of chat text, code and tool
//! output (see [`super::corpus`]).
//!
//! Queries are 1–3 words from the same vocabulary, a third each: drawn by frequency (mostly
//! common words, which match much of the history), drawn uniformly (mostly rare words, which
//! match little or nothing) and one of each. The set-up is timed and shown, but it is not part
//! of the target.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use ironclaw_protocol::{ApprovalPolicy, ConversationId, MessageId};
use ironclaw_store::{History, Timestamp};

use super::corpus::{Corpus, Rng};
use super::report::{Outcome, Row, Section};

pub const TARGET_P95_MS: f64 = 50.0;
/// Distinct words in the synthetic history.
const VOCABULARY: usize = 20_000;
const MESSAGES_PER_CONVERSATION: usize = 500;
/// A few transactions rather than one, so the WAL stays a moderate size.
const MESSAGES_PER_TRANSACTION: usize = 25_000;
/// `ironclaw history search`'s default.
const LIMIT: usize = 20;
/// Untimed searches after opening, so the timed ones are not the first to touch the index.
const WARMUPS: usize = 3;

#[derive(Debug, Clone, Copy)]
pub struct Plan {
    pub messages: usize,
    pub queries: usize,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Frequent,
    Rare,
    Mixed,
}

struct Query {
    text: String,
    kind: Kind,
}

struct Timed {
    kind: Kind,
    took: Duration,
    hits: usize,
}

struct Measured {
    first: Duration,
    searches: Vec<Timed>,
    setup: Duration,
    load: Duration,
    reopen: Duration,
    transactions: usize,
    db_bytes: u64,
}

/// Runs on a blocking thread (SQLite calls block); checks `stop` between batches.
pub async fn section(dir: PathBuf, plan: Plan, stop: Arc<AtomicBool>) -> Outcome {
    let measured = tokio::task::spawn_blocking(move || measure(&dir, plan, &stop))
        .await
        .map_err(anyhow::Error::from)
        .and_then(|r| r);
    match measured {
        Ok(m) => render(&m, plan),
        Err(e) => Outcome::failed(
            "history_search",
            title(plan),
            "**`History::search`** p95",
            format!("p95 < {TARGET_P95_MS} ms"),
            &e,
        ),
    }
}

fn title(plan: Plan) -> String {
    format!("History search over {} messages", thousands(plan.messages))
}

fn measure(dir: &Path, plan: Plan, stop: &AtomicBool) -> anyhow::Result<Measured> {
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let path = dir.join("history.sqlite3");
    let corpus = Corpus::new(VOCABULARY);
    let setup = Instant::now();

    // The schema and the conversations through the store's own API…
    let (history, _) = History::open(&path)?;
    let mut conversations: Vec<ConversationId> = Vec::new();
    for i in 0..plan.messages.div_ceil(MESSAGES_PER_CONVERSATION) {
        if stop.load(Ordering::Relaxed) {
            bail!("interrupted");
        }
        let title = format!("bench {i}");
        conversations.push(
            history
                .create_conversation(&title, ApprovalPolicy::AskAlways)?
                .id,
        );
    }
    drop(history);

    // …the messages straight through SQLite: the store has no batch API, and `add_message`
    // commits and fsyncs every message, which is right for a chat and far too slow for 100k.
    // The FTS index is filled by the schema's own triggers, as for any message.
    let load = Instant::now();
    let mut rng = Rng::new(0x1E0C_1A3B);
    let mut conn = rusqlite::Connection::open(&path)?;
    let mut transactions = 0;
    let mut written = 0;
    while written < plan.messages {
        let tx = conn.transaction()?;
        {
            let mut insert = tx.prepare(
                "INSERT INTO messages (id, conversation_id, role, content, status, created_at, updated_at)
                 VALUES (?1, ?2, ?3, ?4, 'complete', ?5, ?5)",
            )?;
            let end = plan.messages.min(written + MESSAGES_PER_TRANSACTION);
            for n in written..end {
                if n % 1_000 == 0 && stop.load(Ordering::Relaxed) {
                    bail!("interrupted");
                }
                let conversation = conversations
                    .get(n / MESSAGES_PER_CONVERSATION)
                    .context("no conversation for a message")?;
                let (role, text) = corpus.message(&mut rng);
                insert.execute(rusqlite::params![
                    MessageId::new(),
                    conversation,
                    role,
                    text,
                    Timestamp::now()
                ])?;
            }
            written = end;
        }
        tx.commit()?;
        transactions += 1;
    }
    drop(conn);
    let load = load.elapsed();

    // Opened again as IronClaw opens it (integrity check, migrations, recovery).
    let reopen = Instant::now();
    let (history, _) = History::open(&path).context("reopening the loaded history")?;
    let reopen = reopen.elapsed();
    let setup = setup.elapsed();
    let db_bytes = ["", "-wal"]
        .iter()
        .filter_map(|suffix| {
            std::fs::metadata(format!("{}{suffix}", path.display()))
                .ok()
                .map(|m| m.len())
        })
        .sum();

    let queries = queries(&corpus, plan.queries + WARMUPS + 1);
    let mut searches = Vec::with_capacity(plan.queries);
    let mut first = Duration::ZERO;
    for (i, q) in queries.iter().enumerate() {
        if stop.load(Ordering::Relaxed) {
            bail!("interrupted");
        }
        let t = Instant::now();
        let hits = history.search(&q.text, LIMIT)?.len();
        let took = t.elapsed();
        if i == 0 {
            first = took;
        } else if i > WARMUPS {
            searches.push(Timed {
                kind: q.kind,
                took,
                hits,
            });
        }
    }
    // Words that occur in most messages must find something; if not, the index is broken.
    if history.search(corpus.at(0), LIMIT)?.is_empty() {
        bail!("searching for {:?} found nothing", corpus.at(0));
    }
    Ok(Measured {
        first,
        searches,
        setup,
        load,
        reopen,
        transactions,
        db_bytes,
    })
}

fn queries(corpus: &Corpus, n: usize) -> Vec<Query> {
    let mut rng = Rng::new(0x5EA2_C4ED);
    (0..n)
        .map(|i| {
            let kind = match i % 3 {
                0 => Kind::Frequent,
                1 => Kind::Rare,
                _ => Kind::Mixed,
            };
            let words = 1 + (i / 3) % 3;
            let text = (0..words)
                .map(|w| {
                    let frequent = match kind {
                        Kind::Frequent => true,
                        Kind::Rare => false,
                        Kind::Mixed => w % 2 == 0,
                    };
                    if frequent {
                        corpus.word(&mut rng).to_string()
                    } else {
                        corpus.at(rng.below(corpus.len())).to_string()
                    }
                })
                .collect::<Vec<_>>()
                .join(" ");
            Query { text, kind }
        })
        .collect()
}

fn render(m: &Measured, plan: Plan) -> Outcome {
    let of = |kind: Option<Kind>| -> Vec<&Timed> {
        m.searches
            .iter()
            .filter(|t| kind.is_none_or(|k| t.kind == k))
            .collect()
    };
    let row = |key: &'static str, label: String, kind: Option<Kind>| {
        let timed = of(kind);
        let mut row = Row::time(key, label, Ok(timed.iter().map(|t| t.took).collect()));
        let empty = timed.iter().filter(|t| t.hits == 0).count();
        let mean_hits = if timed.is_empty() {
            0.0
        } else {
            timed.iter().map(|t| t.hits).sum::<usize>() as f64 / timed.len() as f64
        };
        if let Some(s) = row.durations_ms {
            row.note = Some(format!(
                "p95 {:.2} ms, max {:.2} ms; {empty} of {} found nothing, {mean_hits:.1} hits on average",
                s.p95,
                s.max,
                timed.len()
            ));
        }
        row
    };
    let mut all = row(
        "search",
        format!(
            "**`History::search`** (FTS5, limit {LIMIT}): queries of 1–3 words, a third each frequent, rare and mixed"
        ),
        None,
    );
    let met = all.durations_ms.map(|s| s.p95 < TARGET_P95_MS);
    all.judge(format!("p95 < {TARGET_P95_MS} ms"), met);
    let rows = vec![
        all,
        row(
            "search_frequent",
            "of which words drawn by frequency (Zipf): mostly common words that match much of the history".into(),
            Some(Kind::Frequent),
        ),
        row(
            "search_rare",
            "of which words drawn uniformly from the vocabulary: mostly rare words".into(),
            Some(Kind::Rare),
        ),
        row(
            "search_mixed",
            "of which frequent and rare words alternating, the first frequent".into(),
            Some(Kind::Mixed),
        ),
        Row::time(
            "first_search",
            "the first search after opening the history (SQLite's page cache empty, the OS's warm)",
            Ok(vec![m.first]),
        ),
        {
            let mut setup = Row::time(
                "setup",
                format!(
                    "set-up, not part of the target: {} messages ({} distinct words) in {} transactions straight through SQLite, indexed by the schema's triggers; history reopened",
                    thousands(plan.messages),
                    thousands(VOCABULARY),
                    m.transactions
                ),
                Ok(vec![m.setup]),
            );
            setup.note = Some(format!(
                "load {:.1} s, reopen (integrity check) {:.0} ms; {:.0} MiB on disk",
                m.load.as_secs_f64(),
                m.reopen.as_secs_f64() * 1e3,
                m.db_bytes as f64 / f64::from(1u32 << 20)
            ));
            setup
        },
    ];
    let mut notes = Vec::new();
    if plan.messages < 100_000 {
        notes.push(format!(
            "History search ran over {} messages; the target is stated for 100,000.",
            thousands(plan.messages)
        ));
    }
    Outcome {
        section: Section {
            key: "history_search",
            title: title(plan),
            ratio_meaning: "",
            rows,
        },
        notes,
        failure: None,
    }
}

/// `100000` → `100,000`.
pub fn thousands(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn big_numbers_get_separators() {
        assert_eq!(thousands(100_000), "100,000");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1_234_567), "1,234,567");
    }

    #[test]
    fn queries_mix_kinds_and_lengths() {
        let corpus = Corpus::new(1_000);
        let qs = queries(&corpus, 9);
        assert_eq!(qs.iter().filter(|q| q.kind == Kind::Rare).count(), 3);
        let lengths: Vec<usize> = qs.iter().map(|q| q.text.split(' ').count()).collect();
        assert_eq!(lengths, vec![1, 1, 1, 2, 2, 2, 3, 3, 3]);
    }
}
