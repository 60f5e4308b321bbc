//! The sidebar's operations on stored conversations: list and full-text search, export.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use ironclaw_protocol::{ConversationId, ExportFormat};
use ironclaw_store::History;

use crate::error::{DesktopError, Result};
use crate::pending::Pending;
use crate::types::ConversationSummary;

/// Title of a conversation until its first message names it.
pub const UNTITLED: &str = "New chat";

pub fn summary(
    history: &History,
    pending: &Pending,
    id: ConversationId,
) -> Result<ConversationSummary> {
    let c = history.get_conversation(id)?;
    Ok(ConversationSummary {
        id: c.id,
        title: c.title,
        updated_at: c.updated_at,
        pending_approvals: pending.count_of(id),
        snippet: None,
    })
}

/// Most recently active first; with a query, best match first (one row per conversation).
pub fn list(
    history: &History,
    pending: &Pending,
    query: Option<&str>,
) -> Result<Vec<ConversationSummary>> {
    let query = query.map(str::trim).filter(|q| !q.is_empty());
    let Some(query) = query else {
        return Ok(history
            .list_conversations()?
            .into_iter()
            .map(|s| ConversationSummary {
                id: s.conversation.id,
                pending_approvals: pending.count_of(s.conversation.id),
                title: s.conversation.title,
                updated_at: s.conversation.updated_at,
                snippet: None,
            })
            .collect());
    };
    let mut seen = HashSet::new();
    let mut out = Vec::new();
    for hit in history.search(query, 200)? {
        if !seen.insert(hit.conversation_id) {
            continue;
        }
        match summary(history, pending, hit.conversation_id) {
            Ok(mut s) => {
                s.snippet = Some(hit.snippet);
                out.push(s);
            }
            // Deleted between the search and now.
            Err(DesktopError::Store(ironclaw_store::StoreError::NotFound { .. })) => {}
            Err(e) => return Err(e),
        }
    }
    // A title match counts too, even when no message mentions the words.
    let lower = query.to_lowercase();
    for s in history.list_conversations()? {
        let c = s.conversation;
        if !seen.contains(&c.id) && c.title.to_lowercase().contains(&lower) {
            seen.insert(c.id);
            out.push(ConversationSummary {
                id: c.id,
                pending_approvals: pending.count_of(c.id),
                title: c.title,
                updated_at: c.updated_at,
                snippet: None,
            });
        }
    }
    Ok(out)
}

/// A title from the first message: its first line, shortened.
pub fn title_from(text: &str) -> String {
    let line = text
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or(UNTITLED);
    let mut title: String = line.chars().take(60).collect();
    if line.chars().count() > 60 {
        title.push('…');
    }
    title
}

/// Writes the export into `dir` and returns its path.
pub fn export(
    history: &History,
    dir: &Path,
    id: ConversationId,
    format: ExportFormat,
) -> Result<PathBuf> {
    let text = history.export(id, format)?;
    let ext = format.extension();
    let title = history.get_conversation(id)?.title;
    let slug: String = title
        .chars()
        .map(|c| {
            if c.is_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .collect::<String>()
        .split('-')
        .filter(|p| !p.is_empty())
        .take(8)
        .collect::<Vec<_>>()
        .join("-");
    let short: String = id
        .to_string()
        .chars()
        .rev()
        .take(8)
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect();
    std::fs::create_dir_all(dir).map_err(|e| DesktopError::io(dir, &e))?;
    let file = dir.join(format!(
        "{}-{short}.{ext}",
        if slug.is_empty() {
            "conversation"
        } else {
            &slug
        }
    ));
    std::fs::write(&file, text).map_err(|e| DesktopError::io(&file, &e))?;
    Ok(file)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn titles_come_from_the_first_non_empty_line() {
        assert_eq!(
            title_from("\n  plot a sine wave \nplease"),
            "plot a sine wave"
        );
        assert_eq!(title_from(""), UNTITLED);
        assert_eq!(title_from(&"x".repeat(70)).chars().count(), 61);
    }
}
