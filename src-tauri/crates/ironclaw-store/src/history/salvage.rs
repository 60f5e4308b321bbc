//! Copying whatever SQLite can still read out of a damaged history into a fresh one.
//!
//! SQLite's own `.recover` lives in its shell, not in the library we link, so this is the same
//! idea done table by table through the normal API: scan each table by rowid, and when a page
//! cannot be read, seek past it (a seek descends the b-tree on another path, so one bad leaf
//! costs only the rows on it) instead of giving up on the table.

use rusqlite::types::Value;
use rusqlite::{params_from_iter, Connection};
use serde::{Deserialize, Serialize};

use crate::error::Result;

/// Tables in the order their rows can be inserted (parents before children).
const TABLES: &[&str] = &[
    "conversations",
    "turns",
    "messages",
    "message_images",
    "tool_calls",
    "approvals",
    "session_rules",
    "executions",
    "execution_files",
    "settings",
];

/// A bound on the seeks past unreadable pages in one table. Consecutive failures double the
/// jump, so 64 in a row already cover the whole rowid range; progress resets it, and progress is
/// bounded by the rows, so this is only a guard.
const MAX_SKIPS: u32 = 10_000;

/// What was read out of one table.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TableSalvage {
    pub table: String,
    /// Rows copied into the new history.
    pub rows: u64,
    /// Times a read failed (an unreadable page or row), so rows may be missing.
    pub read_errors: u64,
    /// The first error SQLite reported for this table, as it said it.
    pub first_error: Option<String>,
}

/// Copies every readable row of every known table from `source` into `target` (a freshly
/// migrated history), then makes the copy consistent: rows whose conversation was lost get a
/// placeholder conversation, links to lost rows are cleared, and rows that cannot stand alone
/// are dropped.
pub(super) fn copy_readable(source: &Connection, target: &mut Connection) -> Result<Salvaged> {
    // The links are checked once, at the end, over the whole copy (see `repair_links`). Set
    // outside the transaction: inside one SQLite ignores it.
    target.pragma_update(None, "foreign_keys", "OFF")?;
    let tx = target.transaction()?;
    let mut tables = Vec::new();
    for table in TABLES {
        let columns = shared_columns(source, &tx, table);
        let salvage = match columns {
            Ok(columns) if !columns.is_empty() => copy_table(source, &tx, table, &columns),
            Ok(_) => TableSalvage {
                table: (*table).to_owned(),
                ..TableSalvage::default()
            },
            Err(e) => TableSalvage {
                table: (*table).to_owned(),
                rows: 0,
                read_errors: 1,
                first_error: Some(e.to_string()),
            },
        };
        tables.push(salvage);
    }
    let placeholders = repair_links(&tx)?;
    tx.commit()?;
    Ok(Salvaged {
        tables,
        placeholder_conversations: placeholders,
    })
}

/// The outcome of [`copy_readable`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct Salvaged {
    pub tables: Vec<TableSalvage>,
    /// Conversations whose own row was lost but some of whose messages or runs were read.
    pub placeholder_conversations: u64,
}

/// Columns both the damaged table and the new one have (an older schema may lack some).
fn shared_columns(
    source: &Connection,
    target: &Connection,
    table: &str,
) -> rusqlite::Result<Vec<String>> {
    let target_columns = columns_of(target, table)?;
    let source_columns = columns_of(source, table)?;
    Ok(target_columns
        .into_iter()
        .filter(|c| source_columns.contains(c))
        .collect())
}

fn columns_of(conn: &Connection, table: &str) -> rusqlite::Result<Vec<String>> {
    let mut stmt = conn.prepare("SELECT name FROM pragma_table_info(?1)")?;
    let names = stmt.query_map([table], |row| row.get::<_, String>(0))?;
    names.collect()
}

fn copy_table(
    source: &Connection,
    target: &Connection,
    table: &str,
    columns: &[String],
) -> TableSalvage {
    let mut salvage = TableSalvage {
        table: table.to_owned(),
        ..TableSalvage::default()
    };
    let list = columns
        .iter()
        .map(|c| format!("\"{c}\""))
        .collect::<Vec<_>>()
        .join(", ");
    let slots = vec!["?"; columns.len()].join(", ");
    let insert = format!("INSERT OR IGNORE INTO {table} ({list}) VALUES ({slots})");
    // `execution_files` is WITHOUT ROWID: one plain scan, as far as it reads.
    if table == "execution_files" {
        let select = format!("SELECT {list} FROM {table}");
        if let Err(e) = scan(
            source,
            target,
            &select,
            &[],
            &insert,
            columns.len(),
            &mut salvage,
            |_| {},
        ) {
            failed(&mut salvage, e);
        }
        return salvage;
    }
    // NOT INDEXED: a damaged index must not hide rows the table itself still holds.
    let select =
        format!("SELECT {list}, rowid FROM {table} NOT INDEXED WHERE rowid > ?1 ORDER BY rowid");
    // IronClaw's rowids start at 1 (AUTOINCREMENT, or SQLite's own), so jumps from 0 reach
    // every row; from i64::MIN, doubling would spend its first 63 steps below them.
    let mut after: i64 = 0;
    let mut jump: i64 = 1;
    let mut skips = 0u32;
    loop {
        let mut last = None;
        let result = scan(
            source,
            target,
            &select,
            &[Value::Integer(after)],
            &insert,
            columns.len(),
            &mut salvage,
            |rowid| last = Some(rowid),
        );
        match result {
            Ok(()) => return salvage,
            Err(e) => {
                failed(&mut salvage, e);
                skips += 1;
                if skips > MAX_SKIPS {
                    return salvage;
                }
                match last {
                    // Rows came before the bad page: seek just past where they stopped first.
                    Some(rowid) => {
                        after = rowid.saturating_add(1);
                        jump = 1;
                    }
                    None => {
                        after = after.saturating_add(jump);
                        jump = jump.saturating_mul(2);
                    }
                }
                if after == i64::MAX {
                    return salvage;
                }
            }
        }
    }
}

fn failed(salvage: &mut TableSalvage, e: rusqlite::Error) {
    salvage.read_errors += 1;
    if salvage.first_error.is_none() {
        salvage.first_error = Some(e.to_string());
    }
}

/// Runs `select` on `source` and inserts each row into `target`; the row's last column (the
/// rowid, when `select` adds one) is reported through `seen`. Stops at the first read error.
#[allow(clippy::too_many_arguments)]
fn scan(
    source: &Connection,
    target: &Connection,
    select: &str,
    params: &[Value],
    insert: &str,
    width: usize,
    salvage: &mut TableSalvage,
    mut seen: impl FnMut(i64),
) -> rusqlite::Result<()> {
    let mut stmt = source.prepare(select)?;
    let mut insert = target.prepare(insert)?;
    let mut rows = stmt.query(params_from_iter(params.iter()))?;
    while let Some(row) = rows.next()? {
        let mut values = Vec::with_capacity(width);
        for i in 0..width {
            values.push(row.get::<_, Value>(i)?);
        }
        if let Ok(Value::Integer(rowid)) = row.get::<_, Value>(width) {
            seen(rowid);
        }
        if insert.execute(params_from_iter(values.iter()))? > 0 {
            salvage.rows += 1;
        }
    }
    Ok(())
}

/// Title of a conversation recreated because only its messages or runs could be read.
pub const PLACEHOLDER_TITLE: &str = "Recovered conversation (its title was lost)";

/// Makes the copied rows satisfy the schema's links, losing as little as possible.
fn repair_links(tx: &rusqlite::Transaction<'_>) -> Result<u64> {
    // A conversation whose row was on a lost page still owns the turns, messages and runs that
    // were read: give them a conversation to live in rather than dropping them.
    let placeholders = tx.execute(
        "INSERT INTO conversations (id, title, session_name, approval_policy, created_at, updated_at)
         SELECT conversation_id, ?1, NULL, 'ask_always', MIN(at), MAX(at) FROM (
             SELECT conversation_id, started_at AS at FROM turns
             UNION ALL SELECT conversation_id, created_at FROM messages
             UNION ALL SELECT conversation_id, requested_at FROM approvals
             UNION ALL SELECT conversation_id, started_at FROM executions
             UNION ALL SELECT conversation_id, created_at FROM session_rules
         ) WHERE conversation_id NOT IN (SELECT id FROM conversations)
         GROUP BY conversation_id",
        [PLACEHOLDER_TITLE],
    )?;
    tx.execute_batch(
        "UPDATE messages SET turn_id = NULL
             WHERE turn_id IS NOT NULL AND turn_id NOT IN (SELECT id FROM turns);
         DELETE FROM tool_calls WHERE message_id NOT IN (SELECT id FROM messages);
         DELETE FROM message_images WHERE message_id NOT IN (SELECT id FROM messages);
         UPDATE approvals SET tool_call_id = NULL
             WHERE tool_call_id IS NOT NULL AND tool_call_id NOT IN (SELECT id FROM tool_calls);
         UPDATE session_rules SET approval_id = NULL
             WHERE approval_id IS NOT NULL AND approval_id NOT IN (SELECT id FROM approvals);
         DELETE FROM executions WHERE approval_id NOT IN (SELECT id FROM approvals);
         DELETE FROM execution_files WHERE execution_id NOT IN (SELECT id FROM executions);",
    )?;
    Ok(u64::try_from(placeholders).unwrap_or(u64::MAX))
}
