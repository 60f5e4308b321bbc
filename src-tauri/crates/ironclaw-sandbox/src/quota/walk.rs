//! The exact measurement: a walk of the workspace on the host, never following symlinks and
//! never leaving its filesystem, that stops as soon as it has seen more than the limit.

use std::collections::HashSet;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use super::Usage;

/// Past this many names per inode the quota allows, a walk gives up and calls the workspace
/// over quota: hard links cost no inode, so without this bound a walk over millions of links
/// to one file would have no end.
const NAMES_PER_FILE: u64 = 4;

/// What one walk found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Walked {
    /// Allocated bytes and distinct inodes seen (all of the workspace unless `stopped_early`).
    pub usage: Usage,
    /// Directory entries seen; hard links make it larger than `usage.files`.
    pub names: u64,
    /// The walk stopped once it had seen more than the limit: `usage` is a lower bound.
    pub stopped_early: bool,
    /// Folders it could not read (the code can `chmod 000` its own folders): what is in them
    /// is not counted, so a walk with any of them cannot prove the workspace is under quota.
    pub unreadable: u64,
}

impl Walked {
    /// Whether the workspace is, or may be, past `limit`.
    pub fn over(&self, limit: Usage) -> bool {
        self.stopped_early
            || self.unreadable > 0
            || self.usage.bytes > limit.bytes
            || self.usage.files > limit.files
    }
}

/// Measures `root`: allocated bytes (`st_blocks`, so a sparse file counts what it occupies)
/// and inodes, each hard-linked inode once. Blocking; run it off the async threads.
pub fn measure(root: &Path, limit: Usage) -> std::io::Result<Walked> {
    let top = std::fs::symlink_metadata(root)?;
    let device = top.dev();
    let mut usage = Usage {
        bytes: allocated(&top),
        files: 1,
    };
    let mut names = 0u64;
    let mut unreadable = 0u64;
    let max_names = limit.files.saturating_mul(NAMES_PER_FILE);
    let mut linked: HashSet<(u64, u64)> = HashSet::new();
    let mut pending: Vec<PathBuf> = vec![root.to_path_buf()];
    while let Some(dir) = pending.pop() {
        let entries = match std::fs::read_dir(&dir) {
            Ok(entries) => entries,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue, // deleted meanwhile
            Err(_) => {
                unreadable += 1;
                continue;
            }
        };
        for entry in entries {
            let Ok(entry) = entry else {
                unreadable += 1;
                break;
            };
            // DirEntry::metadata is lstat-like (fstatat with AT_SYMLINK_NOFOLLOW).
            let Ok(meta) = entry.metadata() else {
                continue; // deleted between readdir and stat
            };
            names += 1;
            let first_sight = meta.nlink() <= 1 || linked.insert((meta.dev(), meta.ino()));
            if first_sight {
                usage.bytes = usage.bytes.saturating_add(allocated(&meta));
                usage.files += 1;
            }
            if meta.file_type().is_dir() && meta.dev() == device {
                pending.push(entry.path());
            }
            if usage.bytes > limit.bytes || usage.files > limit.files || names > max_names {
                return Ok(Walked {
                    usage,
                    names,
                    stopped_early: true,
                    unreadable,
                });
            }
        }
    }
    Ok(Walked {
        usage,
        names,
        stopped_early: false,
        unreadable,
    })
}

fn allocated(meta: &std::fs::Metadata) -> u64 {
    meta.blocks().saturating_mul(512)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use pretty_assertions::assert_eq;

    const ROOMY: Usage = Usage {
        bytes: u64::MAX,
        files: u64::MAX / NAMES_PER_FILE,
    };

    #[test]
    fn counts_files_folders_and_symlinks_but_each_hard_linked_inode_once() {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path();
        std::fs::create_dir_all(ws.join("a/b")).unwrap();
        std::fs::write(ws.join("a/b/data"), vec![1u8; 64 * 1024]).unwrap();
        std::fs::hard_link(ws.join("a/b/data"), ws.join("a/link")).unwrap();
        std::os::unix::fs::symlink("/etc", ws.join("etc")).unwrap();
        let walked = measure(ws, ROOMY).unwrap();
        // root, a, a/b, data (once for two names), the symlink
        assert_eq!((walked.usage.files, walked.names), (5, 5));
        assert!(walked.usage.bytes >= 64 * 1024 && walked.usage.bytes < 64 * 1024 * 2);
        assert!(!walked.over(ROOMY));
    }

    #[test]
    fn never_follows_a_symlink_out_of_the_workspace() {
        let dir = tempfile::tempdir().unwrap();
        let outside = dir.path().join("outside");
        std::fs::create_dir_all(&outside).unwrap();
        std::fs::write(outside.join("big"), vec![1u8; 256 * 1024]).unwrap();
        let ws = dir.path().join("ws");
        std::fs::create_dir_all(&ws).unwrap();
        std::os::unix::fs::symlink(&outside, ws.join("link")).unwrap();
        let walked = measure(&ws, ROOMY).unwrap();
        assert_eq!(walked.usage.files, 2);
        assert!(walked.usage.bytes < 64 * 1024, "{walked:?}");
    }

    #[test]
    fn a_sparse_file_counts_what_it_occupies_not_its_length() {
        let dir = tempfile::tempdir().unwrap();
        let f = std::fs::File::create(dir.path().join("sparse")).unwrap();
        f.set_len(1 << 30).unwrap();
        let walked = measure(dir.path(), ROOMY).unwrap();
        assert!(walked.usage.bytes < 1 << 20, "{walked:?}");
    }

    #[test]
    fn stops_as_soon_as_it_has_seen_more_than_the_limit() {
        let dir = tempfile::tempdir().unwrap();
        for i in 0..100 {
            std::fs::write(dir.path().join(i.to_string()), b"x").unwrap();
        }
        let limit = Usage {
            bytes: u64::MAX,
            files: 10,
        };
        let walked = measure(dir.path(), limit).unwrap();
        assert!(walked.stopped_early && walked.over(limit), "{walked:?}");
        assert_eq!(walked.usage.files, 11);
    }

    #[test]
    fn hard_links_past_the_name_bound_stop_the_walk() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("one"), b"x").unwrap();
        for i in 0..50 {
            std::fs::hard_link(dir.path().join("one"), dir.path().join(format!("l{i}"))).unwrap();
        }
        let limit = Usage {
            bytes: u64::MAX,
            files: 10,
        };
        let walked = measure(dir.path(), limit).unwrap();
        assert_eq!(walked.usage.files, 2, "links are one inode");
        assert!(walked.stopped_early && walked.names == 41, "{walked:?}");
    }
}
