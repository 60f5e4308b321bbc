//! The schema, as an ordered list of migrations tracked by SQLite's `user_version`.
//!
//! Migration N (1-based) takes the database from version N-1 to N inside one transaction that
//! also bumps `user_version`, so a kill mid-upgrade leaves the previous version intact. Never
//! edit a released migration: append a new one.
//!
//! Enum columns hold the variant's snake_case name without a CHECK constraint: SQLite cannot
//! alter a CHECK without rebuilding the table, and the Rust side rejects unknown names on read.
//! IDs are UUID strings (readable in `sqlite3`, time-ordered because they are v7).

use std::path::Path;

use rusqlite::{Connection, TransactionBehavior};

use crate::error::{Result, StoreError};

const V1_SCHEMA: &str = r#"
CREATE TABLE conversations (
    id              TEXT PRIMARY KEY NOT NULL,
    title           TEXT NOT NULL,
    session_name    TEXT,
    approval_policy TEXT NOT NULL,
    created_at      INTEGER NOT NULL,
    updated_at      INTEGER NOT NULL
);
CREATE INDEX conversations_by_updated ON conversations (updated_at DESC, id DESC);

CREATE TABLE turns (
    id              TEXT PRIMARY KEY NOT NULL,
    conversation_id TEXT NOT NULL REFERENCES conversations (id) ON DELETE CASCADE,
    status          TEXT NOT NULL,
    started_at      INTEGER NOT NULL,
    ended_at        INTEGER
);
CREATE INDEX turns_by_conversation ON turns (conversation_id, started_at);
CREATE INDEX turns_running ON turns (status) WHERE status = 'running';

-- seq is AUTOINCREMENT so it never reuses a deleted row's number: message order is insertion
-- order even across deletes, and seq doubles as the FTS rowid.
CREATE TABLE messages (
    seq             INTEGER PRIMARY KEY AUTOINCREMENT,
    id              TEXT NOT NULL UNIQUE,
    conversation_id TEXT NOT NULL REFERENCES conversations (id) ON DELETE CASCADE,
    turn_id         TEXT REFERENCES turns (id) ON DELETE CASCADE,
    role            TEXT NOT NULL,
    content         TEXT NOT NULL,
    status          TEXT NOT NULL,
    created_at      INTEGER NOT NULL,
    updated_at      INTEGER NOT NULL
);
CREATE INDEX messages_by_conversation ON messages (conversation_id, seq);
CREATE INDEX messages_by_turn ON messages (turn_id);
CREATE INDEX messages_streaming ON messages (status) WHERE status = 'streaming';

CREATE TABLE tool_calls (
    id               TEXT PRIMARY KEY NOT NULL,
    message_id       TEXT NOT NULL REFERENCES messages (id) ON DELETE CASCADE,
    model_call_id    TEXT NOT NULL,
    name             TEXT NOT NULL,
    arguments        TEXT NOT NULL,
    arguments_parsed INTEGER NOT NULL CHECK (arguments_parsed IN (0, 1)),
    created_at       INTEGER NOT NULL
);
CREATE INDEX tool_calls_by_message ON tool_calls (message_id);

CREATE TABLE approvals (
    id              TEXT PRIMARY KEY NOT NULL,
    conversation_id TEXT NOT NULL REFERENCES conversations (id) ON DELETE CASCADE,
    tool_call_id    TEXT REFERENCES tool_calls (id) ON DELETE CASCADE,
    code_hash       TEXT NOT NULL,
    language        TEXT NOT NULL,
    code            TEXT NOT NULL,
    risk            TEXT NOT NULL,
    reasons         TEXT NOT NULL,  -- JSON array of strings
    status          TEXT NOT NULL,
    scope           TEXT,
    decided_by      TEXT,
    reason          TEXT,
    user_edited     INTEGER NOT NULL CHECK (user_edited IN (0, 1)),
    original_hash   TEXT,
    requested_at    INTEGER NOT NULL,
    decided_at      INTEGER
);
CREATE INDEX approvals_by_conversation ON approvals (conversation_id, requested_at);
CREATE INDEX approvals_by_tool_call ON approvals (tool_call_id);
CREATE INDEX approvals_pending ON approvals (status) WHERE status = 'pending';

CREATE TABLE session_rules (
    id              TEXT PRIMARY KEY NOT NULL,
    conversation_id TEXT NOT NULL REFERENCES conversations (id) ON DELETE CASCADE,
    kind            TEXT NOT NULL,
    pattern         TEXT NOT NULL,
    approval_id     TEXT REFERENCES approvals (id) ON DELETE SET NULL,
    created_at      INTEGER NOT NULL,
    revoked_at      INTEGER
);
CREATE INDEX session_rules_by_conversation ON session_rules (conversation_id, created_at);
CREATE UNIQUE INDEX session_rules_live
    ON session_rules (conversation_id, kind, pattern) WHERE revoked_at IS NULL;

CREATE TABLE executions (
    seq               INTEGER PRIMARY KEY AUTOINCREMENT,
    id                TEXT NOT NULL UNIQUE,
    conversation_id   TEXT NOT NULL REFERENCES conversations (id) ON DELETE CASCADE,
    approval_id       TEXT NOT NULL REFERENCES approvals (id) ON DELETE CASCADE,
    code              TEXT NOT NULL,
    language          TEXT NOT NULL,
    started_at        INTEGER NOT NULL,
    ended_at          INTEGER,
    exit_code         INTEGER,
    duration_ms       INTEGER,
    peak_memory_bytes INTEGER,
    timed_out         INTEGER NOT NULL DEFAULT 0 CHECK (timed_out IN (0, 1)),
    cancelled         INTEGER NOT NULL DEFAULT 0 CHECK (cancelled IN (0, 1)),
    oom_killed        INTEGER NOT NULL DEFAULT 0 CHECK (oom_killed IN (0, 1)),
    interrupted       INTEGER NOT NULL DEFAULT 0 CHECK (interrupted IN (0, 1)),
    stdout_head       TEXT NOT NULL DEFAULT '',
    stdout_tail       TEXT NOT NULL DEFAULT '',
    stderr_head       TEXT NOT NULL DEFAULT '',
    stderr_tail       TEXT NOT NULL DEFAULT '',
    log_path          TEXT
);
-- One run per approval: approving code once must not let it run twice. Repeats go through a
-- new approval (decided by a session rule when the person made one).
CREATE UNIQUE INDEX executions_by_approval ON executions (approval_id);
CREATE INDEX executions_by_conversation ON executions (conversation_id);
CREATE INDEX executions_unfinished ON executions (ended_at) WHERE ended_at IS NULL;

CREATE TABLE settings (
    key        TEXT PRIMARY KEY NOT NULL,
    value      TEXT NOT NULL,  -- JSON
    updated_at INTEGER NOT NULL
);

-- External-content FTS5 indexes: the text lives once, in messages/executions, and triggers keep
-- the index in step inside the writing transaction (so a committed row is always searchable).
CREATE VIRTUAL TABLE messages_fts USING fts5 (
    content, content = 'messages', content_rowid = 'seq',
    tokenize = 'unicode61 remove_diacritics 2'
);
CREATE TRIGGER messages_fts_insert AFTER INSERT ON messages BEGIN
    INSERT INTO messages_fts (rowid, content) VALUES (new.seq, new.content);
END;
CREATE TRIGGER messages_fts_delete AFTER DELETE ON messages BEGIN
    INSERT INTO messages_fts (messages_fts, rowid, content) VALUES ('delete', old.seq, old.content);
END;
CREATE TRIGGER messages_fts_update AFTER UPDATE OF content ON messages BEGIN
    INSERT INTO messages_fts (messages_fts, rowid, content) VALUES ('delete', old.seq, old.content);
    INSERT INTO messages_fts (rowid, content) VALUES (new.seq, new.content);
END;

CREATE VIRTUAL TABLE executions_fts USING fts5 (
    code, content = 'executions', content_rowid = 'seq',
    tokenize = 'unicode61 remove_diacritics 2'
);
CREATE TRIGGER executions_fts_insert AFTER INSERT ON executions BEGIN
    INSERT INTO executions_fts (rowid, code) VALUES (new.seq, new.code);
END;
CREATE TRIGGER executions_fts_delete AFTER DELETE ON executions BEGIN
    INSERT INTO executions_fts (executions_fts, rowid, code) VALUES ('delete', old.seq, old.code);
END;
CREATE TRIGGER executions_fts_update AFTER UPDATE OF code ON executions BEGIN
    INSERT INTO executions_fts (executions_fts, rowid, code) VALUES ('delete', old.seq, old.code);
    INSERT INTO executions_fts (rowid, code) VALUES (new.seq, new.code);
END;
"#;

/// The files a run wrote that the chat shows with it (inline images), so they come back when
/// the conversation is reopened. Paths are relative to the conversation's workspace.
const V2_EXECUTION_FILES: &str = r#"
CREATE TABLE execution_files (
    execution_id TEXT NOT NULL REFERENCES executions (id) ON DELETE CASCADE,
    path TEXT NOT NULL,
    PRIMARY KEY (execution_id, path)
) WITHOUT ROWID;
"#;

/// Whether a run has been compared with the audit log at a start (see `crate::reconcile`):
/// NULL not yet; 'matches'; 'from_audit' (the history had lost its result, taken from the
/// audit log); 'to_audit' (the audit log had lost it, appended from the history); 'unknown'
/// (neither has it: the process stopped mid-run).
const V3_RECONCILED: &str = r#"
ALTER TABLE executions ADD COLUMN reconciled TEXT;
CREATE INDEX executions_unreconciled ON executions (ended_at) WHERE reconciled IS NULL;
"#;

/// One spelling for every closed set (see `ironclaw_protocol::words`). The history's own columns
/// were already snake_case; the one stored value that was not is the app's default approval
/// policy, kept in its settings as the wire's camelCase of earlier versions. Readers still
/// accept the old spelling; this rewrites it so nothing stored needs that.
const V4_ONE_SPELLING: &str = r#"
UPDATE settings
SET value = json_set(value, '$.defaultPolicy',
        CASE json_extract(value, '$.defaultPolicy')
            WHEN 'askAlways' THEN 'ask_always'
            WHEN 'askUnlessSafe' THEN 'ask_unless_safe'
            WHEN 'neverAsk' THEN 'never_ask'
        END)
WHERE json_valid(value)
  AND json_extract(value, '$.defaultPolicy') IN ('askAlways', 'askUnlessSafe', 'neverAsk');
"#;

/// Each run's checkpoint in the workspace's record (see `ironclaw_workspace::checkpoint`): the
/// record's id for it, what it changed (JSON list of `{path, change}`) and whether it is undone
/// now, so a reopened conversation still offers "Undo" and knows what it would take back.
const V5_RUN_CHECKPOINTS: &str = r#"
CREATE TABLE run_checkpoints (
    execution_id TEXT PRIMARY KEY REFERENCES executions (id) ON DELETE CASCADE,
    run_id TEXT NOT NULL,
    changes TEXT NOT NULL,
    undone INTEGER NOT NULL DEFAULT 0
) WITHOUT ROWID;
CREATE INDEX run_checkpoints_run ON run_checkpoints (run_id);
"#;

/// What a provider attached to a tool call and wants back verbatim (Gemini's thought signature);
/// without it a conversation reopened mid tool turn is rejected by that provider.
const V6_TOOL_CALL_ECHO: &str = r#"
ALTER TABLE tool_calls ADD COLUMN echo TEXT;
"#;

/// Which model wrote each assistant message (`openai:gpt-4o`), so a conversation that switched
/// models mid-way says who answered what. NULL for messages from before, and for the person's.
const V7_MESSAGE_MODEL: &str = r#"
ALTER TABLE messages ADD COLUMN model TEXT;
"#;

/// What a tool other than `run_code` brought back (a fetch's report, as JSON), so a reopened
/// conversation shows it as it was shown live; `run_code`'s outcome is its execution row.
const V8_TOOL_CALL_OUTCOME: &str = r#"
ALTER TABLE tool_calls ADD COLUMN outcome TEXT;
"#;

/// Images a message carried to the model (a picture the person attached, a chart a tool showed),
/// as the model saw them: already downscaled and re-encoded, so a resumed conversation sends
/// the same bytes. A rowid table: SQLite keeps large rows poorly in a WITHOUT ROWID one.
const V9_MESSAGE_IMAGES: &str = r#"
CREATE TABLE message_images (
    message_id TEXT NOT NULL REFERENCES messages (id) ON DELETE CASCADE,
    ordinal    INTEGER NOT NULL,
    name       TEXT NOT NULL,
    media_type TEXT NOT NULL,
    width      INTEGER NOT NULL,
    height     INTEGER NOT NULL,
    data       BLOB NOT NULL,
    UNIQUE (message_id, ordinal)
);
"#;

/// Every migration, oldest first. The schema version is this list's length.
const MIGRATIONS: &[&str] = &[
    V1_SCHEMA,
    V2_EXECUTION_FILES,
    V3_RECONCILED,
    V4_ONE_SPELLING,
    V5_RUN_CHECKPOINTS,
    V6_TOOL_CALL_ECHO,
    V7_MESSAGE_MODEL,
    V8_TOOL_CALL_OUTCOME,
    V9_MESSAGE_IMAGES,
];

/// The schema version this build writes.
pub(crate) fn latest_version() -> i64 {
    // A list of a few entries always fits.
    i64::try_from(MIGRATIONS.len()).unwrap_or(i64::MAX)
}

/// Brings the database up to [`latest_version`], one transaction per step. Safe to run from
/// several processes at once: each step re-reads the version under SQLite's write lock.
pub(crate) fn migrate(conn: &mut Connection, path: &Path) -> Result<()> {
    for (index, sql) in MIGRATIONS.iter().enumerate() {
        let target = i64::try_from(index + 1).unwrap_or(i64::MAX);
        let tx = conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(|source| StoreError::Migration {
                version: target,
                source,
            })?;
        let current: i64 = tx.pragma_query_value(None, "user_version", |row| row.get(0))?;
        if current > latest_version() {
            return Err(StoreError::TooNew {
                path: path.to_path_buf(),
                found: current,
                supported: latest_version(),
            });
        }
        if current >= target {
            continue;
        }
        tx.execute_batch(sql)
            .and_then(|()| tx.pragma_update(None, "user_version", target))
            .and_then(|()| tx.commit())
            .map_err(|source| StoreError::Migration {
                version: target,
                source,
            })?;
        tracing::info!(version = target, "history schema upgraded");
    }
    Ok(())
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn user_version(conn: &Connection) -> i64 {
        conn.pragma_query_value(None, "user_version", |row| row.get(0))
            .unwrap()
    }

    #[test]
    fn a_version_5_database_gains_the_tool_call_echo_column_and_keeps_its_calls() {
        let mut conn = Connection::open_in_memory().unwrap();
        for step in &MIGRATIONS[..5] {
            conn.execute_batch(step).unwrap();
        }
        conn.pragma_update(None, "user_version", 5).unwrap();
        conn.execute_batch(
            "PRAGMA foreign_keys = OFF;
             INSERT INTO tool_calls (id, message_id, model_call_id, name, arguments, arguments_parsed, created_at)
             VALUES ('t1', 'm1', 'call_1', 'run_code', '{}', 1, 0);",
        )
        .unwrap();
        migrate(&mut conn, Path::new(":memory:")).unwrap();
        let (name, echo): (String, Option<String>) = conn
            .query_row(
                "SELECT name, echo FROM tool_calls WHERE id = 't1'",
                [],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .unwrap();
        assert_eq!((name.as_str(), echo), ("run_code", None));
    }

    #[test]
    fn migrating_twice_is_a_no_op() {
        let mut conn = Connection::open_in_memory().unwrap();
        migrate(&mut conn, Path::new(":memory:")).unwrap();
        migrate(&mut conn, Path::new(":memory:")).unwrap();
        assert_eq!(user_version(&conn), latest_version());
    }

    #[test]
    fn stored_policies_in_the_old_wire_spelling_are_rewritten_in_the_one_spelling() {
        let mut conn = Connection::open_in_memory().unwrap();
        conn.execute_batch(V1_SCHEMA).unwrap();
        conn.pragma_update(None, "user_version", 3).unwrap();
        let old = r#"{"defaultProfile":null,"defaultPolicy":"askUnlessSafe","notifications":true,"longRunNotifyMs":30000}"#;
        conn.execute(
            "INSERT INTO settings (key, value, updated_at) VALUES ('desktop.settings', ?1, 0),
                 ('other', 'not json', 0), ('already', '{\"defaultPolicy\":\"never_ask\"}', 0)",
            [old],
        )
        .unwrap();
        // v3's column, so the later steps find what they expect.
        conn.execute_batch("ALTER TABLE executions ADD COLUMN reconciled TEXT;")
            .unwrap();
        migrate(&mut conn, Path::new(":memory:")).unwrap();
        let value = |key: &str| -> String {
            conn.query_row("SELECT value FROM settings WHERE key = ?1", [key], |r| {
                r.get(0)
            })
            .unwrap()
        };
        let migrated: serde_json::Value = serde_json::from_str(&value("desktop.settings")).unwrap();
        assert_eq!(migrated["defaultPolicy"], "ask_unless_safe");
        assert_eq!(migrated["longRunNotifyMs"], 30000, "the rest is kept");
        assert_eq!(value("other"), "not json");
        assert_eq!(value("already"), r#"{"defaultPolicy":"never_ask"}"#);
        let policy: ironclaw_protocol::ApprovalPolicy =
            serde_json::from_value(migrated["defaultPolicy"].clone()).unwrap();
        assert_eq!(policy, ironclaw_protocol::ApprovalPolicy::AskUnlessSafe);
    }

    #[test]
    fn a_database_from_a_newer_build_is_refused() {
        let mut conn = Connection::open_in_memory().unwrap();
        conn.pragma_update(None, "user_version", latest_version() + 1)
            .unwrap();
        let err = migrate(&mut conn, Path::new("h.db")).unwrap_err();
        assert!(matches!(err, StoreError::TooNew { found, .. } if found == latest_version() + 1));
    }
}
