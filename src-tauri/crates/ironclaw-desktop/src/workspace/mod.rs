//! A conversation's workspace folder as the panel shows it: a bounded walk that never follows
//! symlinks or opens anything but a regular file, each entry with its kind and whether the last run changed it; plus the safe
//! readers for inline images and full logs, all on `ironclaw_workspace::reader`'s descriptors.

pub mod image;
pub mod log;

use ironclaw_workspace::reader;
use std::ffi::OsStr;
use std::io::Read;
use std::path::{Path, PathBuf};

use ironclaw_protocol::ConversationId;
use ironclaw_sandbox::session::{Registry, SessionName};
use ironclaw_sandbox::Paths;

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

/// What the last run changed, as far as is known.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LastRun {
    /// Exactly these paths (from the run's checkpoint): what the code cannot hide, since the
    /// checkpoint goes by change time, which no code can set back.
    Exact(std::collections::HashSet<String>),
    /// No checkpoint: files whose modification time falls in the run (the code can set that
    /// back, so this is a best guess).
    Window(RunWindow),
}

impl LastRun {
    fn changed(&self, path: &str, modified_ms: i64) -> bool {
        match self {
            LastRun::Exact(paths) => paths.contains(path),
            LastRun::Window(w) => w.contains(modified_ms),
        }
    }

    /// The run's own changes when its checkpoint recorded them, else its time window.
    pub fn of(changes: Option<&[ironclaw_protocol::FileChange]>, window: RunWindow) -> LastRun {
        match changes {
            Some(changes) => LastRun::Exact(
                changes
                    .iter()
                    .filter(|c| c.change != ironclaw_protocol::ChangeKind::Deleted)
                    .map(|c| c.path.clone())
                    .collect(),
            ),
            None => LastRun::Window(window),
        }
    }
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

/// The workspace as the panel shows it. Folders are walked on descriptors (see [`reader`]):
/// links, FIFOs, sockets and devices are listed with their kind but never opened or followed,
/// and only regular files are opened (non-blocking) to tell text from binary.
pub fn list(root: &Path, last_run: Option<&LastRun>) -> Vec<WorkspaceEntry> {
    let Ok(root) = reader::Root::open(root) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    // Relative paths, not descriptors: a wide tree must not hold a descriptor per folder.
    let mut stack = vec![(String::new(), 0usize)];
    while let Some((rel, depth)) = stack.pop() {
        let Ok(fd) = root.open_dir(&rel) else {
            continue; // swapped for a link or removed since it was listed
        };
        let Ok((entries, dir)) = reader::entries(fd) else {
            continue;
        };
        for entry in entries {
            if out.len() >= MAX_ENTRIES {
                return out;
            }
            if depth == 0 && entry.name == PRIVATE_DIR {
                continue;
            }
            let name = entry.name.to_string_lossy();
            let path = if rel.is_empty() {
                name.into_owned()
            } else {
                format!("{rel}/{name}")
            };
            let modified_ms = entry
                .stat
                .st_mtime
                .saturating_mul(1000)
                .saturating_add(entry.stat.st_mtime_nsec / 1_000_000);
            let kind = match entry.kind {
                reader::Kind::Dir => EntryKind::Dir,
                reader::Kind::File => kind_of(&dir, &entry.name),
                reader::Kind::Symlink => EntryKind::Symlink,
                reader::Kind::Fifo => EntryKind::Fifo,
                reader::Kind::Socket => EntryKind::Socket,
                reader::Kind::Device => EntryKind::Device,
            };
            let is_file = matches!(kind, EntryKind::Image | EntryKind::Text | EntryKind::Binary);
            out.push(WorkspaceEntry {
                path: path.clone(),
                size: if is_file {
                    entry.stat.st_size.max(0) as u64
                } else {
                    0
                },
                modified_ms,
                kind,
                changed_by_last_run: kind != EntryKind::Dir
                    && last_run.is_some_and(|l| l.changed(&path, modified_ms)),
            });
            // A name that is not UTF-8 cannot be named back through the lossy path.
            if kind == EntryKind::Dir && depth + 1 < MAX_DEPTH && entry.name.to_str().is_some() {
                stack.push((path, depth + 1));
            }
        }
    }
    out
}

/// Files (not folders) the last run created or changed.
pub fn changed_by(root: &Path, last_run: &LastRun) -> Vec<WorkspaceEntry> {
    list(root, Some(last_run))
        .into_iter()
        .filter(|e| e.changed_by_last_run)
        .collect()
}

/// Image by name, else text or binary by the first KiB, read from a descriptor that was
/// checked to be a regular file (a file swapped for something else meanwhile is "binary").
fn kind_of(dir: &reader::DirHandle, name: &OsStr) -> EntryKind {
    if image::mime_for(Path::new(name)).is_some() {
        return EntryKind::Image;
    }
    let mut head = [0u8; 1024];
    let n = dir
        .open_file(name)
        .ok()
        .and_then(|mut f| f.file.read(&mut head).ok())
        .unwrap_or(0);
    let head = &head[..n];
    // Sniff the start: text is valid UTF-8 without NUL bytes.
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
    fn listing_marks_kinds_and_links_without_following_them_and_skips_private_logs() {
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
        assert!(kinds.contains(&("etc".into(), EntryKind::Symlink)));
        assert!(!kinds
            .iter()
            .any(|(p, _)| p.starts_with(".ironclaw") || p.starts_with("etc/")));
        assert!(entries.iter().all(|e| !e.changed_by_last_run));
    }

    #[test]
    fn fifos_sockets_and_links_in_subfolders_are_marked_and_never_opened() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("sub/deep")).unwrap();
        // No writer ever opens these: a blocking open of either would hang this test.
        nix::unistd::mkfifo(&root.join("sub/pipe"), nix::sys::stat::Mode::S_IRWXU).unwrap();
        nix::unistd::mkfifo(
            &root.join("sub/deep/pipe.png"),
            nix::sys::stat::Mode::S_IRWXU,
        )
        .unwrap();
        let _socket = std::os::unix::net::UnixListener::bind(root.join("sub/sock")).unwrap();
        std::os::unix::fs::symlink(root.join("sub"), root.join("sub/deep/loop")).unwrap();
        std::fs::write(root.join("sub/deep/ok.txt"), "fine").unwrap();
        let entries = list(root, None);
        let kind = |p: &str| {
            entries
                .iter()
                .find(|e| e.path == p)
                .unwrap_or_else(|| panic!("{p} not listed: {entries:?}"))
                .kind
        };
        assert_eq!(kind("sub/pipe"), EntryKind::Fifo);
        assert_eq!(kind("sub/deep/pipe.png"), EntryKind::Fifo);
        assert_eq!(kind("sub/sock"), EntryKind::Socket);
        assert_eq!(kind("sub/deep/loop"), EntryKind::Symlink);
        assert_eq!(kind("sub/deep/ok.txt"), EntryKind::Text);
        assert!(!entries.iter().any(|e| e.path.starts_with("sub/deep/loop/")));
        let err = image::read_data_url(root, "sub/deep/pipe.png").unwrap_err();
        assert!(err.to_string().contains("named pipe"), "{err}");
    }
}
