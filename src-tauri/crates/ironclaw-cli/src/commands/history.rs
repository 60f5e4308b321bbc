//! `ironclaw history` and `ironclaw audit`: reading what happened. No engine, no model needed.

use std::process::ExitCode;

use ironclaw_protocol::{ConversationId, ExportFormat};
use ironclaw_sandbox::Paths;
use ironclaw_store::{History, NoticeAudience, StoreError};

use crate::terminal::inert;

/// The history, with anything found wrong at start that this CLI has not reported yet printed
/// once (a history that vanished beside its audit log, a tampered audit log restarted).
/// The history for the read commands: readable on a full disk too (see
/// `state::open_history_for_reading`), with the notices the CLI has not shown yet.
fn open_history() -> anyhow::Result<History> {
    let history = ironclaw_agent::state::open_history_for_reading(&Paths::from_env()?)?;
    print_notices(&history);
    Ok(history)
}

/// Prints (to stderr, so `--json` output stays clean) the notices the CLI has not shown yet.
pub fn print_notices(history: &History) {
    match history.take_notices(NoticeAudience::Cli) {
        Ok(notices) => {
            for notice in notices {
                eprintln!("ironclaw: WARNING: {}", inert(&notice.to_string()));
            }
        }
        Err(e) => tracing::warn!(error = %e, "could not read the start-up notices"),
    }
}

fn conversation_id(s: &str) -> anyhow::Result<ConversationId> {
    s.parse()
        .map_err(|e| anyhow::anyhow!("{e}: copy an id from `ironclaw history ls`"))
}

pub fn ls(json: bool) -> anyhow::Result<ExitCode> {
    let history = open_history()?;
    let list = history.list_conversations()?;
    if json {
        println!("{}", serde_json::to_string_pretty(&list)?);
    } else if list.is_empty() {
        println!("no conversations yet: `ironclaw chat` starts one");
    } else {
        for c in list {
            let preview = c
                .last_message_preview
                .unwrap_or_default()
                .replace('\n', " ");
            println!(
                "{}  {:<24} {:>4} msgs  {}",
                c.conversation.id,
                inert(&c.conversation.title),
                c.message_count,
                inert(&preview)
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}

pub fn show(id: &str) -> anyhow::Result<ExitCode> {
    let history = open_history()?;
    // A terminal view: what the model and the code wrote is shown, never obeyed. `export`
    // stays byte-exact, for files.
    print!("{}", inert(&history.export_markdown(conversation_id(id)?)?));
    Ok(ExitCode::SUCCESS)
}

pub fn search(text: &str, limit: usize) -> anyhow::Result<ExitCode> {
    let history = open_history()?;
    let hits = history.search(text, limit)?;
    if hits.is_empty() {
        println!("no matches");
    }
    for hit in hits {
        let what = if hit.execution_id.is_some() {
            "code"
        } else {
            "message"
        };
        println!(
            "{}  [{what}]  {}",
            hit.conversation_id,
            inert(&hit.snippet.replace('\n', " "))
        );
    }
    Ok(ExitCode::SUCCESS)
}

pub fn export(id: &str, format: ExportFormat) -> anyhow::Result<ExitCode> {
    let history = open_history()?;
    let id = conversation_id(id)?;
    let text = history.export(id, format)?;
    // The Markdown ends in its own newline; JSON does not.
    if text.ends_with('\n') {
        print!("{text}");
    } else {
        println!("{text}");
    }
    Ok(ExitCode::SUCCESS)
}

pub async fn delete(id: &str, purge: bool) -> anyhow::Result<ExitCode> {
    let history = open_history()?;
    let id = conversation_id(id)?;
    history.delete_conversation(id)?;
    if purge {
        // A conversation's sandbox session is named after it.
        let sandbox = super::open().await?;
        let name = ironclaw_sandbox::session::SessionName::new(id.to_string())?;
        match sandbox.remove(&name, true).await {
            Ok(()) | Err(ironclaw_sandbox::Error::SessionNotFound { .. }) => {}
            Err(e) => return Err(e.into()),
        }
    }
    Ok(ExitCode::SUCCESS)
}

pub async fn branch(id: &str, at: usize) -> anyhow::Result<ExitCode> {
    let history = open_history()?;
    let id = conversation_id(id)?;
    let full = history.get_full_conversation(id)?;
    let mine: Vec<_> = full
        .messages
        .iter()
        .filter(|m| m.message.role == ironclaw_store::MessageRole::User)
        .collect();
    let point = at.checked_sub(1).and_then(|i| mine.get(i)).ok_or_else(|| {
        anyhow::anyhow!(
            "--at {at}: the conversation has {} message{} of yours (1 is the first)",
            mine.len(),
            if mine.len() == 1 { "" } else { "s" }
        )
    })?;
    // Without the engine the branch is made all the same, with an empty workspace.
    let sandbox = super::open().await.ok();
    let branched =
        ironclaw_agent::branch::branch(&history, sandbox.as_ref(), id, point.message.id).await?;
    eprintln!("{}", inert(&branched.note));
    eprintln!(
        "go on with: ironclaw chat --conversation {}",
        branched.conversation
    );
    println!("{}", branched.conversation);
    Ok(ExitCode::SUCCESS)
}

/// Whether the history at `path` is damaged: `Ok(None)` when it opens fine.
fn damage(paths: &Paths) -> anyhow::Result<Option<StoreError>> {
    match ironclaw_agent::state::open_history(paths) {
        Ok(_) => Ok(None),
        Err(ironclaw_agent::Error::Store(e)) if e.is_damaged_history() => Ok(Some(e)),
        Err(e) => Err(e.into()),
    }
}

/// `history recover`: a new history from every row of the damaged one SQLite can still read.
pub fn recover() -> anyhow::Result<ExitCode> {
    let paths = Paths::from_env()?;
    let path = ironclaw_agent::state::history_path(&paths);
    if damage(&paths)?.is_none() {
        println!(
            "the history {} opens fine; nothing to recover",
            path.display()
        );
        return Ok(ExitCode::SUCCESS);
    }
    let recovered = History::recover_readable(&path)?;
    println!(
        "recovered {} conversations, {} messages and {} runs into a new history at {}",
        recovered.conversations,
        recovered.messages,
        recovered.executions,
        path.display()
    );
    if recovered.placeholder_conversations > 0 {
        println!(
            "{} of those conversations lost their title and are named {:?}",
            recovered.placeholder_conversations,
            ironclaw_store::PLACEHOLDER_TITLE
        );
    }
    for table in recovered.tables.iter().filter(|t| t.read_errors > 0) {
        println!(
            "  {}: {} rows read, {} unreadable parts skipped ({})",
            table.table,
            table.rows,
            table.read_errors,
            table.first_error.as_deref().unwrap_or("no detail")
        );
    }
    if let Some(backup) = &recovered.backup {
        println!("the damaged file is kept at {}", backup.display());
        if recovered.conversations == 0 && recovered.had_read_errors() {
            // Without its schema pages SQLite reads nothing; the shell's page-level recovery
            // may still find rows.
            println!(
                "nothing could be read through SQLite; `sqlite3 {} .recover` may still get rows \
                 out of the copy",
                backup.display()
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// `history reset`: an empty history in place of the damaged one, whose copy is kept.
pub fn reset() -> anyhow::Result<ExitCode> {
    let paths = Paths::from_env()?;
    let path = ironclaw_agent::state::history_path(&paths);
    if damage(&paths)?.is_none() {
        println!(
            "the history {} opens fine, so it was left as it is; `ironclaw history rm ID` \
             deletes single conversations",
            path.display()
        );
        return Ok(ExitCode::SUCCESS);
    }
    let fresh = History::start_fresh(&path)?;
    println!("started a fresh, empty history at {}", path.display());
    if let Some(backup) = &fresh.backup {
        println!("the damaged file is kept at {}", backup.display());
    }
    Ok(ExitCode::SUCCESS)
}

pub fn audit_verify() -> anyhow::Result<ExitCode> {
    let paths = Paths::from_env()?;
    let path = ironclaw_agent::state::audit_path(&paths);
    if !path.exists() {
        println!("no audit log yet at {}", path.display());
        return Ok(ExitCode::SUCCESS);
    }
    let anchor = ironclaw_agent::audit_anchor::for_log(&path, &paths.config_dir);
    match ironclaw_store::verify_anchored(&path, anchor.as_ref()) {
        Ok((_, check)) if check.is_tampered() => {
            println!("TAMPERED: {check} ({})", path.display());
            println!("anchor: {}", anchor.describe());
            Ok(ExitCode::from(2))
        }
        // Every append anchors the log: a log with entries and no anchor lost it (a keyring
        // emptied, the anchor deleted), and a cut or a rewrite would go unseen. Not "ok".
        Ok((report, check @ ironclaw_store::AnchorCheck::Missing)) if report.entries > 0 => {
            println!(
                "UNANCHORED: {} entries, chain intact, but {check} ({})",
                report.entries,
                path.display()
            );
            println!("anchor: looked for in {}", anchor.describe());
            Ok(ExitCode::from(3))
        }
        Ok((report, check)) => {
            println!(
                "ok: {} entries, chain intact ({})",
                report.entries,
                path.display()
            );
            println!("anchor: {check}; kept in {}", anchor.describe());
            for incident in &report.anchor_incidents {
                println!(
                    "WARNING: the log records that it was cut or rewritten before: {incident}"
                );
            }
            if let Some(restart) = &report.restarted_from {
                print_restart(&path, restart);
            }
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => {
            println!("TAMPERED: {e}");
            Ok(ExitCode::from(2))
        }
    }
}

/// What the chain's first entry says about the tampered log it replaced, and whether that
/// kept file is still the one it describes.
fn print_restart(log: &std::path::Path, restart: &ironclaw_store::ChainRestart) {
    println!(
        "NOTE: this chain was started because the previous log was tampered with: {}",
        restart.problem
    );
    let good = match &restart.last_good_hash {
        Some(hash) => format!(
            "{} entries verified up to hash {hash}",
            restart.good_entries
        ),
        None => "no entry of it can be vouched for".to_owned(),
    };
    let Some(old) = restart.previous_path(log) else {
        println!("the previous log was gone when the new chain started ({good})");
        return;
    };
    let state = match (
        ironclaw_store::audit_file_sha256(&old),
        &restart.previous_sha256,
    ) {
        (Ok(now), Some(then)) if &now == then => "unchanged since it was kept",
        (Ok(_), _) => "CHANGED since it was kept",
        (Err(_), _) => "MISSING",
    };
    println!("previous log: {} ({state}; {good})", old.display());
}
