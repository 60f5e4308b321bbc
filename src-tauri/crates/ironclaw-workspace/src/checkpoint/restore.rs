//! Puts one side of a set of changes back into the workspace: for undo the "before" side, for
//! redo the "after" side.
//!
//! Every write happens on a descriptor of the parent folder, opened without following any link
//! (see [`crate::reader`]); a file is written under a fresh temporary name created with
//! `O_EXCL | O_NOFOLLOW` and then renamed over the name, so nothing the code planted (a link, a
//! FIFO) is ever opened or written through, and nothing outside the workspace is touched.

use std::ffi::OsStr;
use std::fs::File;
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use nix::errno::Errno;
use nix::fcntl::{openat, renameat, AtFlags, OFlag};
use nix::sys::stat::{fchmod, fstatat, mkdirat, Mode};
use nix::unistd::{fchownat, symlinkat, unlinkat, Gid, Uid, UnlinkatFlags};

use super::node::{Change, Node};
use super::objects::Objects;
use super::CheckpointError;
use crate::reader::{Kind, Root};

/// Which side of the changes to put back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    Before,
    After,
}

/// Puts `side` of `changes` into the workspace at `root`.
pub fn apply(
    workspace: &Path,
    changes: &[Change],
    side: Side,
    objects: &Objects,
) -> Result<(), CheckpointError> {
    let root = Root::open(workspace).map_err(|e| failed(b"", e.to_string()))?;
    let owner = Owner::of(&root)?;
    let target = |c: &Change| match side {
        Side::Before => c.before.clone(),
        Side::After => c.after.clone(),
    };
    // First take away what must go (deepest first, so a folder is empty when its turn comes),
    // then create and rewrite (shallowest first, so a file's folder exists), then set folder
    // modes (deepest first, so a read-only folder is filled before it becomes read-only).
    let mut ordered: Vec<&Change> = changes.iter().collect();
    ordered.sort_by(|a, b| a.path.cmp(&b.path));
    for c in ordered.iter().rev() {
        match target(c) {
            None => remove(&root, &c.path, |_| false)?,
            // A folder stays a folder; anything else in its place goes.
            Some(Node::Dir { .. }) => remove(&root, &c.path, |k| k == Kind::Dir)?,
            // A file or link is renamed over what is there, unless that is a folder.
            Some(_) => remove(&root, &c.path, |k| k != Kind::Dir)?,
        }
    }
    for c in &ordered {
        match target(c) {
            None => {}
            Some(Node::Dir { .. }) => make_dir(&root, &c.path, owner)?,
            Some(Node::File { mode, content, .. }) => {
                write_file(&root, &c.path, objects, &content, mode, owner)?
            }
            Some(Node::Symlink { target }) => make_link(&root, &c.path, &target, owner)?,
            // A FIFO, socket or device is not recreated: IronClaw only records that it was there.
            Some(Node::Special { .. }) => {}
        }
    }
    for c in ordered.iter().rev() {
        if let Some(Node::Dir { mode }) = target(c) {
            let fd = root
                .open_dir_at(Path::new(OsStr::from_bytes(&c.path)))
                .map_err(|e| failed(&c.path, e.to_string()))?;
            fchmod(fd.as_fd(), Mode::from_bits_truncate(mode))
                .map_err(|e| failed(&c.path, e.to_string()))?;
        }
    }
    Ok(())
}

/// Who what is put back belongs to: the workspace folder's owner (the person, whose UID the
/// sandbox runs as). Only set when IronClaw runs as root and the folder is someone else's:
/// otherwise what IronClaw creates is the person's already, and a root-owned file put back
/// into their workspace would be one the sandbox can no longer write.
#[derive(Clone, Copy)]
struct Owner(Option<(Uid, Gid)>);

impl Owner {
    fn of(root: &Root) -> Result<Owner, CheckpointError> {
        if !Uid::effective().is_root() {
            return Ok(Owner(None));
        }
        let fd = root
            .open_dir_at(Path::new(""))
            .map_err(|e| failed(b"", e.to_string()))?;
        let stat = nix::sys::stat::fstat(fd.as_fd()).map_err(|e| failed(b"", e.to_string()))?;
        let (uid, gid) = (Uid::from_raw(stat.st_uid), Gid::from_raw(stat.st_gid));
        Ok(Owner((!uid.is_root()).then_some((uid, gid))))
    }

    /// Gives `name` in `dir` (not followed, if a link) to the owner.
    fn give(self, dir: &OwnedFd, name: &OsStr, path: &[u8]) -> Result<(), CheckpointError> {
        let Some((uid, gid)) = self.0 else {
            return Ok(());
        };
        fchownat(
            dir.as_fd(),
            name,
            Some(uid),
            Some(gid),
            AtFlags::AT_SYMLINK_NOFOLLOW,
        )
        .map_err(|e| failed(path, format!("giving it to the workspace's owner: {e}")))
    }
}

/// The parent folder's descriptor and the last name of `path`.
fn parent<'a>(root: &Root, path: &'a [u8]) -> Result<(OwnedFd, &'a OsStr), CheckpointError> {
    let (dir, name) = match path.iter().rposition(|b| *b == b'/') {
        Some(i) => (&path[..i], &path[i + 1..]),
        None => (&b""[..], path),
    };
    if name.is_empty() || name == b"." || name == b".." {
        return Err(failed(path, "not a name inside the workspace".into()));
    }
    let fd = root
        .open_dir_at(Path::new(OsStr::from_bytes(dir)))
        .map_err(|e| failed(path, format!("its folder: {e}")))?;
    Ok((fd, OsStr::from_bytes(name)))
}

/// Removes what is at `path` now unless `keep` says to keep its kind (a folder only if empty);
/// nothing there is fine.
fn remove(root: &Root, path: &[u8], keep: impl Fn(Kind) -> bool) -> Result<(), CheckpointError> {
    let (dir, name) = match parent(root, path) {
        Ok(p) => p,
        // Its folder is gone already: so is it.
        Err(_) => return Ok(()),
    };
    let stat = match fstatat(dir.as_fd(), name, nix::fcntl::AtFlags::AT_SYMLINK_NOFOLLOW) {
        Ok(s) => s,
        Err(Errno::ENOENT) => return Ok(()),
        Err(e) => return Err(failed(path, e.to_string())),
    };
    if keep(Kind::of(&stat)) {
        return Ok(());
    }
    let flag = if Kind::of(&stat) == Kind::Dir {
        UnlinkatFlags::RemoveDir
    } else {
        UnlinkatFlags::NoRemoveDir
    };
    match unlinkat(dir.as_fd(), name, flag) {
        Ok(()) | Err(Errno::ENOENT) => Ok(()),
        Err(Errno::ENOTEMPTY) => Err(failed(
            path,
            "the folder holds files this run did not make; move them out first".into(),
        )),
        Err(e) => Err(failed(path, e.to_string())),
    }
}

fn make_dir(root: &Root, path: &[u8], owner: Owner) -> Result<(), CheckpointError> {
    let (dir, name) = parent(root, path)?;
    match mkdirat(dir.as_fd(), name, Mode::from_bits_truncate(0o700)) {
        Ok(()) => owner.give(&dir, name, path),
        Err(Errno::EEXIST) => {
            match fstatat(dir.as_fd(), name, nix::fcntl::AtFlags::AT_SYMLINK_NOFOLLOW) {
                Ok(s) if Kind::of(&s) == Kind::Dir => Ok(()),
                _ => Err(failed(
                    path,
                    "something else is in the folder's place".into(),
                )),
            }
        }
        Err(e) => Err(failed(path, e.to_string())),
    }
}

fn temp_name(name: &OsStr) -> Vec<u8> {
    let mut tmp = b".ironclaw-restore-".to_vec();
    tmp.extend_from_slice(uuid::Uuid::now_v7().simple().to_string().as_bytes());
    tmp.push(b'-');
    tmp.extend_from_slice(&name.as_bytes()[..name.len().min(64)]);
    tmp
}

fn write_file(
    root: &Root,
    path: &[u8],
    objects: &Objects,
    content: &super::objects::Hash,
    mode: u32,
    owner: Owner,
) -> Result<(), CheckpointError> {
    let (dir, name) = parent(root, path)?;
    let tmp = temp_name(name);
    let tmp = OsStr::from_bytes(&tmp);
    let fd = openat(
        dir.as_fd(),
        tmp,
        OFlag::O_WRONLY | OFlag::O_CREAT | OFlag::O_EXCL | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC,
        Mode::from_bits_truncate(0o600),
    )
    .map_err(|e| failed(path, e.to_string()))?;
    let out = File::from(fd);
    let written = (|| {
        let source = objects.open_object(content)?;
        let size = source
            .metadata()
            .map_err(|e| failed(path, e.to_string()))?
            .len();
        // Holes stay holes: a sparse file put back takes the disk it took.
        crate::sparse::copy(&source, &out, size, u64::MAX, false)
            .map_err(|e| failed(path, e.to_string()))?;
        owner.give(&dir, tmp, path)?;
        // After the chown, which clears set-id bits.
        fchmod(out.as_fd(), Mode::from_bits_truncate(mode))
            .map_err(|e| failed(path, e.to_string()))?;
        renameat(dir.as_fd(), tmp, dir.as_fd(), name).map_err(|e| failed(path, e.to_string()))
    })();
    if written.is_err() {
        let _ = unlinkat(dir.as_fd(), tmp, UnlinkatFlags::NoRemoveDir);
    }
    written
}

fn make_link(root: &Root, path: &[u8], target: &[u8], owner: Owner) -> Result<(), CheckpointError> {
    let (dir, name) = parent(root, path)?;
    let tmp = temp_name(name);
    let tmp = OsStr::from_bytes(&tmp);
    symlinkat(OsStr::from_bytes(target), dir.as_fd(), tmp)
        .map_err(|e| failed(path, e.to_string()))?;
    if let Err(e) = owner.give(&dir, tmp, path) {
        let _ = unlinkat(dir.as_fd(), tmp, UnlinkatFlags::NoRemoveDir);
        return Err(e);
    }
    renameat(dir.as_fd(), tmp, dir.as_fd(), name).map_err(|e| {
        let _ = unlinkat(dir.as_fd(), tmp, UnlinkatFlags::NoRemoveDir);
        failed(path, e.to_string())
    })
}

fn failed(path: &[u8], reason: String) -> CheckpointError {
    CheckpointError::Restore {
        path: String::from_utf8_lossy(path).into_owned(),
        reason,
    }
}
