//! Reads what a workspace holds now, on descriptors (see [`crate::reader`]): no link is
//! followed, no FIFO or device is opened. A file whose stamp is unchanged since the last scan
//! is not read again; any other is copied into the object store as it is hashed.
//!
//! Two steps: a walk of the metadata, which also sums what must be copied, then the copies.
//! When the copies would pass the budget nothing is read at all, so a workspace too big to
//! checkpoint costs a metadata walk per run, not a read of everything.

use std::ffi::OsStr;
use std::os::fd::OwnedFd;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use nix::sys::stat::FileStat;

use super::node::{Manifest, Node, Stamp};
use super::objects::Objects;
use super::CheckpointError;
use crate::reader::{self, Kind, Refusal, Root};

/// How often a file that keeps changing while it is copied is tried again before the scan
/// gives up on it (the code is still writing it: a process a run left behind, say).
const UNSTABLE_TRIES: usize = 3;

fn mode_of(stat: &FileStat) -> u32 {
    stat.st_mode & 0o7777
}

fn stamp_of(stat: &FileStat) -> Stamp {
    Stamp {
        ino: stat.st_ino,
        mtime_ns: i128::from(stat.st_mtime) * 1_000_000_000 + i128::from(stat.st_mtime_nsec),
        ctime_ns: i128::from(stat.st_ctime) * 1_000_000_000 + i128::from(stat.st_ctime_nsec),
    }
}

/// Everything under `workspace`, with `previous` used to skip files whose stamp is unchanged.
/// When the files to copy hold more than `budget` bytes, nothing is copied and the scan ends
/// with [`CheckpointError::OverCap`].
pub fn scan(
    workspace: &Path,
    previous: &Manifest,
    objects: &Objects,
    budget: u64,
) -> Result<Manifest, CheckpointError> {
    let root = Root::open(workspace).map_err(|e| refused(b"", e))?;
    let (mut out, to_copy) = walk(&root, previous)?;
    let needed: u64 = to_copy.iter().map(|(_, size)| size).sum();
    if needed > budget {
        return Err(CheckpointError::OverCap { needed });
    }
    for (path, _) in to_copy {
        match copy_file(&root, &path, objects)? {
            Some(node) => {
                out.insert(path, node);
            }
            // Gone, or no longer a file: the next scan sees what is there.
            None => {
                out.remove(&path);
            }
        }
    }
    Ok(out)
}

/// The metadata of everything, and the files whose contents must be read (with their size).
#[allow(clippy::type_complexity)]
fn walk(
    root: &Root,
    previous: &Manifest,
) -> Result<(Manifest, Vec<(Vec<u8>, u64)>), CheckpointError> {
    let top = root.open_dir("").map_err(|e| refused(b"", e))?;
    let mut out = Manifest::new();
    let mut to_copy = Vec::new();
    // Folders still to read, with their path; a stack, so depth costs no recursion.
    let mut stack: Vec<(Vec<u8>, OwnedFd)> = vec![(Vec::new(), top)];
    while let Some((prefix, fd)) = stack.pop() {
        let (entries, dir) = match reader::entries(fd) {
            Ok(listed) => listed,
            // Gone or replaced since its parent was listed: the code is still at work. What is
            // there now is seen by the next scan.
            Err(Refusal::Missing | Refusal::Link | Refusal::NotADir(_)) => continue,
            Err(e) => return Err(refused(&prefix, e)),
        };
        for entry in entries {
            let mut path = prefix.clone();
            if !path.is_empty() {
                path.push(b'/');
            }
            path.extend_from_slice(entry.name.as_bytes());
            let node = match entry.kind {
                Kind::Dir => {
                    match dir.open_dir(&entry.name) {
                        Ok(child) => stack.push((path.clone(), child)),
                        Err(Refusal::Missing | Refusal::Link | Refusal::NotADir(_)) => continue,
                        Err(e) => return Err(refused(&path, e)),
                    }
                    Node::Dir {
                        mode: mode_of(&entry.stat),
                    }
                }
                Kind::Symlink => match dir.read_link(&entry.name) {
                    Ok(target) => Node::Symlink {
                        target: target.as_bytes().to_vec(),
                    },
                    Err(Refusal::Missing) => continue,
                    Err(e) => return Err(refused(&path, e)),
                },
                Kind::File => {
                    let stamp = stamp_of(&entry.stat);
                    let size = entry.stat.st_size.max(0) as u64;
                    match previous.get(&path) {
                        Some(Node::File {
                            stamp: s,
                            size: z,
                            content,
                            ..
                        }) if *s == stamp && *z == size => Node::File {
                            mode: mode_of(&entry.stat),
                            size,
                            content: *content,
                            stamp,
                        },
                        _ => {
                            to_copy.push((path, size));
                            continue;
                        }
                    }
                }
                Kind::Fifo | Kind::Socket | Kind::Device => Node::Special {
                    mode: mode_of(&entry.stat),
                },
            };
            out.insert(path, node);
        }
    }
    Ok((out, to_copy))
}

/// Copies one file into the store; `None` when it vanished or stopped being a file meanwhile.
fn copy_file(root: &Root, path: &[u8], objects: &Objects) -> Result<Option<Node>, CheckpointError> {
    let relative = Path::new(OsStr::from_bytes(path));
    for _ in 0..UNSTABLE_TRIES {
        let mut opened = match root.open_file_at(relative) {
            Ok(f) => f,
            Err(
                Refusal::Missing
                | Refusal::Changed
                | Refusal::Link
                | Refusal::NotAFile(_)
                | Refusal::NotADir(_),
            ) => return Ok(None),
            Err(e) => return Err(refused(path, e)),
        };
        let (content, size) = objects.put(&mut opened.file)?;
        // What was copied is the file's contents only if nothing wrote to it meanwhile; the
        // change time tells, and the code cannot set it back.
        let after = nix::sys::stat::fstat(&opened.file).map_err(|e| CheckpointError::Io {
            path: String::from_utf8_lossy(path).into_owned(),
            reason: e.to_string(),
        })?;
        if stamp_of(&after) == stamp_of(&opened.stat) && size == after.st_size.max(0) as u64 {
            return Ok(Some(Node::File {
                mode: mode_of(&after),
                size,
                content,
                stamp: stamp_of(&after),
            }));
        }
    }
    Err(CheckpointError::Unstable(
        String::from_utf8_lossy(path).into_owned(),
    ))
}

fn refused(path: &[u8], e: Refusal) -> CheckpointError {
    CheckpointError::Refused {
        path: String::from_utf8_lossy(path).into_owned(),
        reason: e.to_string(),
    }
}
