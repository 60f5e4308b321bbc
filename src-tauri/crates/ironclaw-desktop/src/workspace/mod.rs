//! A conversation's workspace folder as the panel shows it: a bounded walk that never follows
//! symlinks, each entry with its kind and whether the last run changed it; plus the safe
//! readers for inline images and full logs.

pub mod image;
pub mod log;
pub mod safe_path;

use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

use ironclaw_sandbox::session::{Registry, SessionName};
use ironclaw_sandbox::Paths;
use ironclaw_store::ConversationId;

use crate::error::Result;
use crate::types::{EntryKind, WorkspaceEntry};

/// Entries listed at most; a workspace with more is cut (the folder is a click away).
pub const MAX_ENTRIES: usize = 2000;
const MAX_DEPTH: usize = 8;
/// IronClaw's own bookkeeping inside the workspace (full logs); not the person's files.
const PRIVATE_DIR: &str = ".ironclaw";

/// The host folder of a conversation's workspace (it may not exist before the first run).
pub fn dir(paths: &Paths, conversation: ConversationId) -> Result<PathBuf> {
    let name = SessionName::new(conversation.to_string())?;
    Ok(match Registry::new(paths.clone()).get(&name)? {
        Some(record) => record.workspace,
        None => paths.workspaces_dir().join(name.as_str()),
    })
}

/// A window of time in Unix milliseconds: files modified in it count as changed by a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RunWindow {
    pub start_ms: i64,
    pub end_ms: Option<i64>,
}

impl RunWindow {
    fn contains(&self, ms: i64) -> bool {
        ms >= self.start_ms && self.end_ms.is_none_or(|end| ms <= end)
    }
}

pub fn list(root: &Path, last_run: Option<RunWindow>) -> Vec<WorkspaceEntry> {
    let mut out = Vec::new();
    let mut stack = vec![(root.to_path_buf(), 0usize)];
    while let Some((dir, depth)) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        let mut entries: Vec<_> = entries.flatten().collect();
        entries.sort_by_key(|e| e.file_name());
        for entry in entries {
            if out.len() >= MAX_ENTRIES {
                return out;
            }
            let path = entry.path();
            if depth == 0 && entry.file_name() == PRIVATE_DIR {
                continue;
            }
            // `DirEntry::metadata` does not follow symlinks: a link is never walked into.
            let Ok(meta) = entry.metadata() else { continue };
            if meta.file_type().is_symlink() {
                continue;
            }
            let modified_ms = meta
                .modified()
                .ok()
                .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
                .map(|d| d.as_millis() as i64)
                .unwrap_or(0);
            let kind = if meta.is_dir() {
                EntryKind::Dir
            } else {
                kind_of(&path)
            };
            out.push(WorkspaceEntry {
                path: safe_path::display(root, &path),
                size: if meta.is_dir() { 0 } else { meta.len() },
                modified_ms,
                kind,
                changed_by_last_run: kind != EntryKind::Dir
                    && last_run.is_some_and(|w| w.contains(modified_ms)),
            });
            if meta.is_dir() && depth + 1 < MAX_DEPTH {
                stack.push((path, depth + 1));
            }
        }
    }
    out
}

/// Files (not folders) modified at or after `since_ms`: what a run created or changed.
pub fn changed_since(root: &Path, since_ms: i64) -> Vec<WorkspaceEntry> {
    let window = RunWindow {
        start_ms: since_ms,
        end_ms: None,
    };
    list(root, Some(window))
        .into_iter()
        .filter(|e| e.changed_by_last_run)
        .collect()
}

fn kind_of(path: &Path) -> EntryKind {
    if image::mime_for(path).is_some() {
        return EntryKind::Image;
    }
    // Sniff the start: text is valid UTF-8 without NUL bytes.
    let mut head = [0u8; 1024];
    let n = std::fs::File::open(path)
        .and_then(|mut f| f.read(&mut head))
        .unwrap_or(0);
    let head = &head[..n];
    let text = match std::str::from_utf8(head) {
        Ok(_) => true,
        // A multi-byte character cut by the 1 KiB window is still text.
        Err(e) => e.error_len().is_none(),
    };
    if text && !head.contains(&0) {
        EntryKind::Text
    } else {
        EntryKind::Binary
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn listing_sorts_kinds_skips_symlinks_and_private_logs() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("out")).unwrap();
        std::fs::create_dir_all(root.join(".ironclaw/logs")).unwrap();
        std::fs::write(root.join("out/plot.png"), b"\x89PNG").unwrap();
        std::fs::write(root.join("notes.md"), "# hi").unwrap();
        std::fs::write(root.join("blob.bin"), [0u8, 1, 2]).unwrap();
        std::fs::write(root.join(".ironclaw/logs/1.log"), "x").unwrap();
        std::os::unix::fs::symlink("/etc", root.join("etc")).unwrap();
        let entries = list(root, None);
        let kinds: Vec<(String, EntryKind)> =
            entries.iter().map(|e| (e.path.clone(), e.kind)).collect();
        assert!(kinds.contains(&("out".into(), EntryKind::Dir)));
        assert!(kinds.contains(&("out/plot.png".into(), EntryKind::Image)));
        assert!(kinds.contains(&("notes.md".into(), EntryKind::Text)));
        assert!(kinds.contains(&("blob.bin".into(), EntryKind::Binary)));
        assert!(!kinds
            .iter()
            .any(|(p, _)| p.starts_with(".ironclaw") || p == "etc"));
        assert!(entries.iter().all(|e| !e.changed_by_last_run));
    }
}
