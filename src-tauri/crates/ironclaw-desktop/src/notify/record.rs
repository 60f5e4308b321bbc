//! The approval notifications on screen, kept on disk (one small file per approval) so the next
//! run of the app can withdraw what a crash or kill left behind: the process that could answer
//! their buttons is gone, and the approvals they ask about expired with it.
//!
//! Each entry names the notification server that issued the id (the bus's id and the server's
//! unique connection name). Ids are only unique per server; after a logout or a server restart
//! the same number may be another application's notification, so an entry whose server is no
//! longer the one on the bus is forgotten, never closed.

use std::path::{Path, PathBuf};

use ironclaw_protocol::ApprovalId;
use serde::{Deserialize, Serialize};

/// Who issued a notification id.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Server {
    /// `org.freedesktop.DBus.GetId`: differs for every bus daemon run.
    pub bus_id: String,
    /// The unique connection name (`:1.42`) that owned `org.freedesktop.Notifications`.
    pub owner: String,
}

/// One notification on screen.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Entry {
    pub approval_id: ApprovalId,
    pub notification_id: u32,
    pub server: Server,
}

pub(crate) struct Record {
    dir: PathBuf,
}

impl Record {
    pub fn new(dir: PathBuf) -> Self {
        Self { dir }
    }

    fn file(&self, approval: ApprovalId) -> PathBuf {
        self.dir.join(format!("{approval}.json"))
    }

    /// Best effort: a failed write only means a crash could leave this one on screen.
    pub fn add(&self, entry: &Entry) {
        let write = || -> std::io::Result<()> {
            std::fs::create_dir_all(&self.dir)?;
            let text = serde_json::to_vec(entry).map_err(std::io::Error::other)?;
            // Whole or absent: a crash mid-write must not leave a file the next run misreads.
            let tmp = self.dir.join(format!(".{}.tmp", entry.approval_id));
            std::fs::write(&tmp, text)?;
            std::fs::rename(&tmp, self.file(entry.approval_id))
        };
        if let Err(e) = write() {
            tracing::warn!(error = %e, dir = %self.dir.display(),
                "could not record a notification; a crash would leave it on screen");
        }
    }

    pub fn remove(&self, approval: ApprovalId) {
        match std::fs::remove_file(self.file(approval)) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => tracing::warn!(error = %e, "could not update the notification record"),
        }
    }

    /// Every entry an earlier run left, removed from the record as it is read. Unreadable
    /// files are dropped: they name nothing that could be closed safely.
    pub fn take_all(&self) -> Vec<Entry> {
        let Ok(dir) = std::fs::read_dir(&self.dir) else {
            return Vec::new();
        };
        let mut entries = Vec::new();
        for file in dir.flatten() {
            let path = file.path();
            if let Some(entry) = read_entry(&path) {
                entries.push(entry);
            }
            let _ = std::fs::remove_file(&path);
        }
        entries
    }
}

fn read_entry(path: &Path) -> Option<Entry> {
    if path.extension()? != "json" {
        return None;
    }
    let text = std::fs::read(path).ok()?;
    let entry: Entry = serde_json::from_slice(&text).ok()?;
    // The name must match the content, so a file cannot speak for another approval.
    (path.file_stem()? == entry.approval_id.to_string().as_str()).then_some(entry)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn entry(id: u32) -> Entry {
        Entry {
            approval_id: ApprovalId::new(),
            notification_id: id,
            server: Server {
                bus_id: "b".into(),
                owner: ":1.4".into(),
            },
        }
    }

    #[test]
    fn entries_survive_until_taken_and_removed_ones_do_not() {
        let dir = tempfile::tempdir().unwrap();
        let record = Record::new(dir.path().join("notifications"));
        let (kept, gone) = (entry(7), entry(8));
        record.add(&kept);
        record.add(&gone);
        record.remove(gone.approval_id);
        let again = Record::new(dir.path().join("notifications"));
        assert_eq!(again.take_all(), vec![kept]);
        assert_eq!(again.take_all(), vec![], "taking empties the record");
    }

    #[test]
    fn a_file_that_names_another_approval_is_ignored() {
        let dir = tempfile::tempdir().unwrap();
        let record = Record::new(dir.path().to_path_buf());
        let e = entry(9);
        record.add(&e);
        std::fs::rename(record.file(e.approval_id), record.file(ApprovalId::new())).unwrap();
        std::fs::write(dir.path().join("junk.json"), b"{").unwrap();
        assert_eq!(record.take_all(), vec![]);
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }
}
