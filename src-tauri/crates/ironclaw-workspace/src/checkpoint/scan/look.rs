//! The scan while a watch follows the workspace: only the names it reported are looked at, on
//! top of the last scan's manifest; a folder that is new is walked whole.

use std::collections::{HashSet, VecDeque};
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use super::super::node::{Manifest, Node};
use super::super::watch::{Names, Watch};
use super::super::CheckpointError;
use super::{add_entry, probe, refused, split, walk, Found};
use crate::reader::{DirHandle, Kind, Refusal, Root};

/// Looks at exactly `names` (what the watch reported) on top of `previous`, walking any folder
/// that is new. `false` when only a full walk will do.
pub(super) fn look_at(
    root: &Root,
    previous: &Manifest,
    names: Names,
    watch: &mut Option<Watch>,
    found: &mut Found<'_>,
) -> Result<bool, CheckpointError> {
    let mut queue: VecDeque<Vec<u8>> = names.all.into_iter().collect();
    let mut seen = HashSet::new();
    while let Some(path) = queue.pop_front() {
        if !seen.insert(path.clone()) || super::not_kept(&path) {
            continue;
        }
        let Some(w) = watch.as_mut() else {
            return Ok(false);
        };
        let (parent, name) = split(&path);
        let name = OsStr::from_bytes(name);
        let entry = match root.open_dir_at(Path::new(OsStr::from_bytes(parent))) {
            Ok(fd) => {
                let dir = DirHandle::new(fd).map_err(|e| refused(parent, e))?;
                match dir.entry(name) {
                    Ok(Some(entry)) => Some((dir, entry)),
                    Ok(None) => None,
                    Err(e) => return Err(refused(&path, e)),
                }
            }
            // The folder it was in is gone or replaced: so is the name (the folder's own
            // change is reported by its parent).
            Err(Refusal::Missing | Refusal::Link | Refusal::NotADir(_)) => None,
            Err(e) => return Err(refused(parent, e)),
        };
        let Some((dir, entry)) = entry else {
            if names.written_last.contains(&path) {
                return Ok(false);
            }
            found.remove_tree(&path);
            w.forget(&path);
            continue;
        };
        let was_dir = matches!(found.get(&path), Some(Node::Dir { .. }));
        if entry.kind == Kind::Dir && was_dir && w.dir_inode(&path) == Some(entry.stat.st_ino) {
            // The same folder (its contents are reported by its own watch): only its mode.
            add_entry(&dir, path, &entry, previous, found)?;
            continue;
        }
        if was_dir {
            found.remove_tree(&path);
            w.forget(&path);
        }
        // A second name: its other names in the workspace may have been written through
        // this one.
        if entry.kind == Kind::File && entry.stat.st_nlink > 1 && w.linked.insert(path.clone()) {
            let ino = entry.stat.st_ino;
            queue.extend(
                previous
                    .iter()
                    .chain(found.out.iter())
                    .filter(|(_, n)| matches!(n, Node::File { stamp, .. } if stamp.ino == ino))
                    .map(|(p, _)| p.clone()),
            );
        }
        if entry.kind == Kind::Dir {
            // New here: everything in it is new to the record, and it is watched from now on.
            match dir.open_dir(name) {
                // What is in a new folder may have been opened before its watch began.
                Ok(fd) => walk(root, &path, fd, previous, watch, found, true)?,
                Err(Refusal::Missing | Refusal::Link | Refusal::NotADir(_)) => {
                    found.remove(&path);
                    continue;
                }
                Err(e) => return Err(refused(&path, e)),
            }
        }
        let copies = found.to_copy.len();
        add_entry(&dir, path.clone(), &entry, previous, found)?;
        if entry.kind == Kind::File && found.to_copy.len() == copies && names.probe.contains(&path)
        {
            probe(&dir, name, &path, found);
        }
    }
    Ok(true)
}
