//! Full-text search over message text and executed code (SQLite FTS5).

use super::History;
use crate::error::Result;
use crate::model::SearchHit;

/// Marks the start of a matched term in [`SearchHit::snippet`].
pub const HIGHLIGHT_START: &str = "\u{ab}";
/// Marks the end of a matched term in [`SearchHit::snippet`].
pub const HIGHLIGHT_END: &str = "\u{bb}";

/// Words of context FTS5 puts in a snippet.
const SNIPPET_TOKENS: i64 = 16;

/// How many of the newest matches (per source) are ranked by relevance.
///
/// bm25 must score every candidate before the best can be picked, so a word that appears in
/// most of a 100k-message history would cost tens of milliseconds. Ranking only the newest
/// matches bounds that: a query with fewer matches than this is ranked over all of them, and
/// one with more favours recent conversations, which is what a chat search wants anyway.
const RANKED_CANDIDATES: i64 = 2_000;

// For each source: find the rowid of the RANKED_CANDIDATES-th newest match (walking the index
// newest-first is cheap: no scoring), then rank only the matches from there on. FTS5 applies
// the `rowid >=` bound while reading the index, and SQLite evaluates the uncorrelated
// subquery once.
const SEARCH_SQL: &str = "
SELECT conversation_id, message_id, execution_id, snip, rank FROM (
    SELECT m.conversation_id, m.id AS message_id, NULL AS execution_id, f.snip, f.rank
    FROM (SELECT rowid, snippet(messages_fts, 0, ?2, ?3, '…', ?5) AS snip, rank
          FROM messages_fts
          WHERE messages_fts MATCH ?1
            AND rowid >= coalesce((SELECT rowid FROM messages_fts WHERE messages_fts MATCH ?1
                                   ORDER BY rowid DESC LIMIT 1 OFFSET ?6), 0)
          ORDER BY rank LIMIT ?4) AS f
    JOIN messages m ON m.seq = f.rowid
    UNION ALL
    SELECT e.conversation_id, NULL, e.id, f.snip, f.rank
    FROM (SELECT rowid, snippet(executions_fts, 0, ?2, ?3, '…', ?5) AS snip, rank
          FROM executions_fts
          WHERE executions_fts MATCH ?1
            AND rowid >= coalesce((SELECT rowid FROM executions_fts WHERE executions_fts MATCH ?1
                                   ORDER BY rowid DESC LIMIT 1 OFFSET ?6), 0)
          ORDER BY rank LIMIT ?4) AS f
    JOIN executions e ON e.seq = f.rowid
)
ORDER BY rank LIMIT ?4";

impl History {
    /// Finds messages and executed code containing every word of `query`, best match first
    /// (bm25, ranked over the newest 2,000 matches of each kind; see `RANKED_CANDIDATES`).
    ///
    /// `query` is what a person typed, not FTS5 syntax: each word is matched literally
    /// (quotes, `-`, `*`, `AND`, `NEAR(` and the like mean nothing special), so no input can
    /// cause a syntax error. Input with no letters or digits matches nothing.
    pub fn search(&self, query: &str, limit: usize) -> Result<Vec<SearchHit>> {
        let Some(fts) = fts_query(query) else {
            return Ok(Vec::new());
        };
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        self.read(|tx| {
            let mut stmt = tx.prepare_cached(SEARCH_SQL)?;
            let hits = stmt.query_map(
                rusqlite::params![
                    fts,
                    HIGHLIGHT_START,
                    HIGHLIGHT_END,
                    limit,
                    SNIPPET_TOKENS,
                    RANKED_CANDIDATES - 1
                ],
                |row| {
                    Ok(SearchHit {
                        conversation_id: row.get(0)?,
                        message_id: row.get(1)?,
                        execution_id: row.get(2)?,
                        snippet: row.get(3)?,
                        rank: row.get(4)?,
                    })
                },
            )?;
            Ok(hits.collect::<rusqlite::Result<_>>()?)
        })
    }
}

/// Turns typed words into an FTS5 query that ANDs them as quoted strings.
///
/// Inside an FTS5 string only `"` is special (doubled to escape), so quoting every word makes
/// operators and punctuation literal. Words without a letter or digit are dropped because the
/// tokenizer would reduce them to nothing, and an empty string is an FTS5 error.
fn fts_query(input: &str) -> Option<String> {
    let terms: Vec<String> = input
        .split_whitespace()
        .filter(|word| word.chars().any(char::is_alphanumeric))
        .map(|word| format!("\"{}\"", word.replace('"', "\"\"")))
        .collect();
    (!terms.is_empty()).then(|| terms.join(" "))
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn every_word_is_quoted_so_operators_are_literal() {
        assert_eq!(
            fts_query("foo OR bar-baz NEAR(").as_deref(),
            Some("\"foo\" \"OR\" \"bar-baz\" \"NEAR(\"")
        );
    }

    #[test]
    fn embedded_quotes_are_doubled() {
        assert_eq!(fts_query("say \"hi").as_deref(), Some("\"say\" \"\"\"hi\""));
    }

    #[test]
    fn punctuation_only_input_is_no_query() {
        assert_eq!(fts_query(" \" - * () "), None);
        assert_eq!(fts_query(""), None);
    }
}
