//! `ironclaw history` and `ironclaw audit`: reading what happened. No engine, no model needed.

use std::process::ExitCode;

use ironclaw_sandbox::Paths;
use ironclaw_store::ConversationId;

use crate::terminal::inert;

fn conversation_id(s: &str) -> anyhow::Result<ConversationId> {
    s.parse()
        .map_err(|e| anyhow::anyhow!("{e}: copy an id from `ironclaw history ls`"))
}

pub fn ls(json: bool) -> anyhow::Result<ExitCode> {
    let history = ironclaw_agent::state::open_history_for_reading(&Paths::from_env()?)?;
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
    let history = ironclaw_agent::state::open_history_for_reading(&Paths::from_env()?)?;
    // A terminal view: what the model and the code wrote is shown, never obeyed. `export`
    // stays byte-exact, for files.
    print!("{}", inert(&history.export_markdown(conversation_id(id)?)?));
    Ok(ExitCode::SUCCESS)
}

pub fn search(text: &str, limit: usize) -> anyhow::Result<ExitCode> {
    let history = ironclaw_agent::state::open_history_for_reading(&Paths::from_env()?)?;
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

pub fn export(id: &str, format: &str) -> anyhow::Result<ExitCode> {
    let history = ironclaw_agent::state::open_history_for_reading(&Paths::from_env()?)?;
    let id = conversation_id(id)?;
    match format {
        "md" | "markdown" => print!("{}", history.export_markdown(id)?),
        "json" => println!("{}", history.export_json(id)?),
        other => anyhow::bail!("unknown format {other:?}: use md or json"),
    }
    Ok(ExitCode::SUCCESS)
}

pub async fn delete(id: &str, purge: bool) -> anyhow::Result<ExitCode> {
    let (history, _) = ironclaw_agent::state::open_history(&Paths::from_env()?)?;
    let id = conversation_id(id)?;
    history.delete_conversation(id)?;
    if purge {
        // A conversation's sandbox session is named after it.
        let (sandbox, _) = super::open().await?;
        let name = ironclaw_sandbox::session::SessionName::new(id.to_string())?;
        match sandbox.remove(&name, true).await {
            Ok(()) | Err(ironclaw_sandbox::Error::SessionNotFound { .. }) => {}
            Err(e) => return Err(e.into()),
        }
    }
    Ok(ExitCode::SUCCESS)
}

pub fn audit_verify() -> anyhow::Result<ExitCode> {
    let path = ironclaw_agent::state::audit_path(&Paths::from_env()?);
    if !path.exists() {
        println!("no audit log yet at {}", path.display());
        return Ok(ExitCode::SUCCESS);
    }
    let anchor = ironclaw_agent::audit_anchor::for_log(&path);
    match ironclaw_store::verify_anchored(&path, anchor.as_ref()) {
        Ok((_, check)) if check.is_tampered() => {
            println!("TAMPERED: {check} ({})", path.display());
            println!("anchor: {}", anchor.describe());
            Ok(ExitCode::from(2))
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
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => {
            println!("TAMPERED: {e}");
            Ok(ExitCode::from(2))
        }
    }
}
