//! Reads what a workspace holds now, on descriptors (see [`crate::reader`]): no link is
//! followed, no FIFO or device is opened. A file whose stamp is unchanged since the last scan
//! is not read again; any other is copied into the object store as it is hashed.
//!
//! Two steps: a look at the metadata, which also sums what must be copied, then the copies.
//! The look is a walk of everything, or, while a [`Watch`] follows the workspace, only of the
//! names it reported.
//! When the copies would pass the budget nothing is read at all, so a workspace too big to
//! checkpoint costs a metadata walk per run, not a read of everything.

use std::collections::BTreeSet;
use std::ffi::OsStr;
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use nix::sys::stat::FileStat;

use super::live;
use super::node::{Manifest, Node, Stamp};
use super::objects::Objects;
use super::watch::{Plan, Watch};
use super::CheckpointError;
use crate::reader::{self, DirHandle, Entry, Kind, Refusal, Root};

mod look;
use look::look_at;

/// How often a file that keeps changing while it is copied is tried again before the scan
/// gives up on it (the code is still writing it: a process a run left behind, say).
const UNSTABLE_TRIES: usize = 3;

/// IronClaw's own folder at the top of a workspace (the supervisor's full output logs,
/// `.ironclaw/logs/`) is not checkpointed: undo neither restores nor deletes it, and what is in
/// it is not listed as a run's change. A run with 100 MiB of output would otherwise copy its
/// own log into the undo history, which took as long as the output itself and pushed real
/// files' copies out of the size cap.
pub const NOT_KEPT: &[u8] = b".ironclaw";

/// Whether `path` (relative, `/`-separated) is in [`NOT_KEPT`].
pub fn not_kept(path: &[u8]) -> bool {
    path == NOT_KEPT || (path.starts_with(NOT_KEPT) && path.get(NOT_KEPT.len()) == Some(&b'/'))
}

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
///
/// With a `watch` that has followed the workspace since the scan that made `previous`, only
/// the names it reports are looked at (see [`watch`](super::watch)); otherwise everything is
/// walked and, when `start_watch`, a new watch started. After an error what the watch reported was not
/// recorded, and the caller must drop it (`Store::sync` does), so that the next scan walks
/// everything.
pub fn scan(
    workspace: &Path,
    previous: &Manifest,
    objects: &Objects,
    budget: Budget,
    watch: &mut Option<Watch>,
    start_watch: bool,
) -> Result<Scanned, CheckpointError> {
    // A record from before NOT_KEPT was: what it held of that folder is forgotten, not seen as
    // deleted by the next run.
    let filtered: Manifest;
    let previous = if previous.keys().any(|k| not_kept(k)) {
        filtered = previous
            .iter()
            .filter(|(k, _)| !not_kept(k))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        &filtered
    } else {
        previous
    };
    let root = Root::open(workspace).map_err(|e| refused(b"", e))?;
    let root_stat = root.stat().map_err(|e| refused(b"", e))?;
    let plan = match watch.as_mut() {
        Some(w) => w.plan(workspace, &root_stat),
        None => Plan::Full("no watch yet"),
    };
    let mut found = Found::new(Some(previous));
    let looked = match plan {
        Plan::Names(names) if names.all.is_empty() => {
            return Ok(Scanned {
                state: State::Same,
                walked: false,
                held: BTreeSet::new(),
            })
        }
        Plan::Names(names) => look_at(&root, previous, names, watch, &mut found)?,
        Plan::Full(reason) => {
            tracing::debug!(reason, "checkpoint: walking the whole workspace");
            false
        }
    };
    if !looked {
        found = Found::new(None);
        let top = root.open_dir("").map_err(|e| refused(b"", e))?;
        // Names that ever had a second name stay looked at (see `Watch::linked`).
        let linked = watch
            .take()
            .map(|mut w| std::mem::take(&mut w.linked))
            .unwrap_or_default();
        let started = if start_watch {
            Watch::start(workspace, top.as_fd(), &root_stat)
        } else {
            Err("not watched in this process".into())
        };
        *watch = match started {
            Ok(mut w) => {
                w.linked = linked;
                Some(w)
            }
            Err(why) => {
                tracing::debug!(why, "checkpoint: every run walks the whole workspace");
                None
            }
        };
        // Whether files are held is asked of all of them only when someone wants to know
        // (`Store::held_for_writing`): a walk for `ironclaw exec` need not pay for it.
        walk(&root, &[], top, previous, watch, &mut found, false)?;
    }
    let mut to_copy = std::mem::take(&mut found.to_copy);
    // A name reported inside a folder that was new is found twice: by the folder's walk and
    // on its own.
    to_copy.sort_by(|a, b| a.path.cmp(&b.path));
    to_copy.dedup_by(|a, b| a.path == b.path);
    // What the copies may cost is known before any is made: the disk they take (data, not
    // holes) against what the store may still use, and the bytes hashed (holes read as
    // zeros) against what one scan may read.
    let needed: u64 = to_copy.iter().map(|c| c.real).sum();
    if needed > budget.disk {
        return Err(CheckpointError::OverCap { needed });
    }
    let apparent: u64 = to_copy.iter().map(|c| c.size).sum();
    if apparent > budget.read {
        return Err(CheckpointError::TooMuchToRead {
            bytes: apparent,
            most: budget.read,
        });
    }
    let mut spent = 0u64;
    // Files come folder by folder: each folder is opened once for all of its files (which
    // also keeps the events this reading sends to the watch at one per file).
    let mut folder: Option<(Vec<u8>, Option<DirHandle>)> = None;
    for (n, ToCopy { path, .. }) in to_copy.into_iter().enumerate() {
        if n % 256 == 255 {
            if let Some(w) = watch.as_mut() {
                w.absorb();
            }
        }
        let (parent, name) = split(&path);
        if folder.as_ref().is_none_or(|(p, _)| p != parent) {
            let opened = match root.open_dir_at(Path::new(OsStr::from_bytes(parent))) {
                Ok(fd) => Some(DirHandle::new(fd).map_err(|e| refused(parent, e))?),
                Err(Refusal::Missing | Refusal::Link | Refusal::NotADir(_)) => None,
                Err(e) => return Err(refused(parent, e)),
            };
            folder = Some((parent.to_vec(), opened));
        }
        let copied = match folder.as_ref().and_then(|(_, d)| d.as_ref()) {
            Some(dir) => copy_file(
                dir,
                &path,
                OsStr::from_bytes(name),
                objects,
                budget.disk,
                &mut spent,
            )?,
            None => None,
        };
        match copied {
            Some((node, held)) => {
                if held {
                    found.held.insert(path.clone());
                }
                found.insert(path, node)
            }
            // Gone, or no longer a file: the next scan sees what is there.
            None => found.remove(&path),
        }
    }
    if let Some(w) = watch.as_mut() {
        w.live = found.held.clone();
    }
    let state = match found.base {
        None => State::Whole(found.out),
        Some(_) => State::Patch {
            set: found.out,
            removed: found.removed,
        },
    };
    Ok(Scanned {
        state,
        walked: !looked,
        held: found.held,
    })
}

/// What one scan's copies may cost.
#[derive(Debug, Clone, Copy)]
pub struct Budget {
    /// Bytes the copies may write to the disk.
    pub disk: u64,
    /// Bytes of the files' contents (holes included) the copies may read and hash.
    pub read: u64,
}

/// A file whose contents the scan must copy: its size, and what it takes on the disk.
struct ToCopy {
    path: Vec<u8>,
    size: u64,
    real: u64,
    mode: u32,
    stamp: Stamp,
}

/// What the workspace holds now, from its metadata alone: nothing is read or copied, so
/// nothing about the files' shape or size can make it fail. Files whose stamp moved since
/// `previous` carry [`Hash::UNREAD`](super::objects::Hash) as their contents.
pub fn look_only(workspace: &Path, previous: &Manifest) -> Result<Manifest, CheckpointError> {
    let root = Root::open(workspace).map_err(|e| refused(b"", e))?;
    let top = root.open_dir("").map_err(|e| refused(b"", e))?;
    let mut found = Found::new(None);
    walk(&root, &[], top, previous, &mut None, &mut found, false)?;
    for c in std::mem::take(&mut found.to_copy) {
        let node = Node::File {
            mode: c.mode,
            size: c.size,
            content: super::objects::Hash::UNREAD,
            stamp: c.stamp,
        };
        found.out.insert(c.path, node);
    }
    Ok(found.out)
}

/// What a scan found.
#[derive(Debug)]
pub struct Scanned {
    pub state: State,
    /// Everything was walked (the watch could not say what changed).
    pub walked: bool,
    /// Files some process holds open for writing now (see [`super::live`]): what they hold
    /// can change at any moment without a record.
    pub held: BTreeSet<Vec<u8>>,
}

/// What the workspace holds now.
#[derive(Debug)]
pub enum State {
    /// Exactly what the last scan found: the watch reported nothing.
    Same,
    /// Everything, from a walk.
    Whole(Manifest),
    /// The last scan's manifest with these names set and these removed: the names the watch
    /// reported (and what is in folders new since), and nothing else.
    Patch {
        set: Manifest,
        removed: BTreeSet<Vec<u8>>,
    },
}

/// What a scan found, and the files whose contents must still be read (with their size). A
/// file to read keeps its previous node until it is read.
struct Found<'a> {
    /// Everything (a walk), or only the names looked at, on top of `base`.
    out: Manifest,
    base: Option<&'a Manifest>,
    /// Names of `base` that are gone.
    removed: BTreeSet<Vec<u8>>,
    to_copy: Vec<ToCopy>,
    /// Files found held open for writing.
    held: BTreeSet<Vec<u8>>,
}

impl<'a> Found<'a> {
    fn new(base: Option<&'a Manifest>) -> Self {
        Found {
            out: Manifest::new(),
            base,
            removed: BTreeSet::new(),
            to_copy: Vec::new(),
            held: BTreeSet::new(),
        }
    }

    fn get(&self, path: &[u8]) -> Option<&Node> {
        if let Some(n) = self.out.get(path) {
            return Some(n);
        }
        match self.base {
            Some(base) if !self.removed.contains(path) => base.get(path),
            _ => None,
        }
    }

    fn insert(&mut self, path: Vec<u8>, node: Node) {
        self.removed.remove(&path);
        self.out.insert(path, node);
    }

    fn remove(&mut self, path: &[u8]) {
        self.out.remove(path);
        if self.base.is_some_and(|b| b.contains_key(path)) {
            self.removed.insert(path.to_vec());
        }
    }

    /// Removes `path` and everything under it.
    fn remove_tree(&mut self, path: &[u8]) {
        let mut prefix = path.to_vec();
        prefix.push(b'/');
        let inside = |m: &Manifest| -> Vec<Vec<u8>> {
            m.range(prefix.clone()..)
                .take_while(|(p, _)| p.starts_with(&prefix))
                .map(|(p, _)| p.clone())
                .collect()
        };
        let mut gone = inside(&self.out);
        if let Some(base) = self.base {
            gone.extend(inside(base));
        }
        self.remove(path);
        for p in gone {
            self.remove(&p);
        }
    }
}

fn child(prefix: &[u8], name: &OsStr) -> Vec<u8> {
    let mut path = prefix.to_vec();
    if !path.is_empty() {
        path.push(b'/');
    }
    path.extend_from_slice(name.as_bytes());
    path
}

/// Folder descriptors a walk holds at most, whatever the tree's shape: a desktop's usual soft
/// limit is 1,024 descriptors for the whole process, and a tree is the sandbox's to shape.
pub(super) const HELD_FOLDERS: usize = 16;

/// One folder of a walk: its path, identity, descriptor (while held) and the folders in it
/// still to walk.
struct Frame {
    prefix: Vec<u8>,
    id: (u64, u64),
    dir: Option<DirHandle>,
    subdirs: Vec<std::ffi::OsString>,
}

/// Walks the folder `prefix`, open as `top`, and everything under it, into `found`; every
/// folder is watched before it is listed. With `ask`, every file is asked whether it is held
/// for writing (who opened what before the walk is not known).
///
/// Depth first, holding at most [`HELD_FOLDERS`] descriptors: a folder deeper down the path
/// than that gives its descriptor up, and gets one back through the `..` of the folder below
/// it when the walk returns, checked to be the same folder (else opened again from `root`,
/// checked the same way; a folder moved meanwhile fails the scan, which then fails closed).
fn walk(
    root: &Root,
    prefix: &[u8],
    top: OwnedFd,
    previous: &Manifest,
    watch: &mut Option<Watch>,
    found: &mut Found<'_>,
    ask: bool,
) -> Result<(), CheckpointError> {
    let mut stack: Vec<Frame> = Vec::new();
    // Frames from this one up hold their descriptor; the ones below gave it up.
    let mut lowest_held = 0usize;
    let Some(first) = list(prefix.to_vec(), top, previous, watch, found, ask)? else {
        return Ok(());
    };
    stack.push(first);
    loop {
        let Some(frame) = stack.last_mut() else {
            return Ok(());
        };
        let Some(name) = frame.subdirs.pop() else {
            let done = stack.pop();
            let Some(parent) = stack.last_mut() else {
                return Ok(());
            };
            if parent.dir.is_none() {
                parent.dir = Some(reopen(root, done.and_then(|d| d.dir), parent)?);
                lowest_held = stack.len() - 1;
            }
            continue;
        };
        let path = child(&frame.prefix, &name);
        let Some(dir) = frame.dir.as_ref() else {
            return Err(refused(&frame.prefix, Refusal::Changed));
        };
        let fd = match dir.open_dir(&name) {
            Ok(fd) => fd,
            Err(Refusal::Missing | Refusal::Link | Refusal::NotADir(_)) => continue,
            Err(e) => return Err(refused(&path, e)),
        };
        if let Some(next) = list(path, fd, previous, watch, found, ask)? {
            stack.push(next);
            if stack.len() - lowest_held > HELD_FOLDERS {
                if let Some(f) = stack.get_mut(lowest_held) {
                    f.dir = None;
                }
                lowest_held += 1;
            }
        }
    }
}

/// The folder `prefix`, open as `fd`: watched, listed into `found`, and returned as a frame
/// holding its descriptor. `None` when it went away meanwhile.
fn list(
    prefix: Vec<u8>,
    fd: OwnedFd,
    previous: &Manifest,
    watch: &mut Option<Watch>,
    found: &mut Found<'_>,
    ask: bool,
) -> Result<Option<Frame>, CheckpointError> {
    let stat = nix::sys::stat::fstat(fd.as_fd()).map_err(|e| refused(&prefix, Refusal::Os(e)))?;
    if let Some(w) = watch.as_mut() {
        // This walk's own reads are events too: keep the queue from overflowing.
        w.absorb();
        if let Err(why) = w.add(&prefix, fd.as_fd(), &stat) {
            tracing::info!(why, "checkpoint: runs walk the whole workspace");
            *watch = None;
        }
    }
    let (entries, dir) = match reader::entries(fd) {
        Ok(listed) => listed,
        // Gone or replaced since its parent was listed: the code is still at work. What is
        // there now is seen by the next scan.
        Err(Refusal::Missing | Refusal::Link | Refusal::NotADir(_)) => return Ok(None),
        Err(e) => return Err(refused(&prefix, e)),
    };
    let mut subdirs = Vec::new();
    for entry in entries {
        let path = child(&prefix, &entry.name);
        if not_kept(&path) {
            continue;
        }
        if entry.kind == Kind::Dir {
            subdirs.push(entry.name.clone());
        }
        if let Some(w) = watch.as_mut() {
            if entry.kind == Kind::File && entry.stat.st_nlink > 1 {
                w.linked.insert(path.clone());
            }
        }
        // A file to be copied is asked on the descriptor it is copied from.
        let copies = found.to_copy.len();
        add_entry(&dir, path.clone(), &entry, previous, found)?;
        if ask && entry.kind == Kind::File && found.to_copy.len() == copies {
            probe(&dir, &entry.name, &path, found);
        }
    }
    // Popped from the end: walked in name order.
    subdirs.reverse();
    Ok(Some(Frame {
        prefix,
        id: (stat.st_dev, stat.st_ino),
        dir: Some(dir),
        subdirs,
    }))
}

/// The descriptor `parent` gave up, back: through `..` of the folder walked last when that is
/// still `parent`, else from `root` by path; either way only if it is the same folder.
fn reopen(
    root: &Root,
    below: Option<DirHandle>,
    parent: &Frame,
) -> Result<DirHandle, CheckpointError> {
    let same = |fd: &OwnedFd| {
        nix::sys::stat::fstat(fd.as_fd()).is_ok_and(|s| (s.st_dev, s.st_ino) == parent.id)
    };
    if let Some(fd) = below.and_then(|b| b.open_dir(OsStr::new("..")).ok()) {
        if same(&fd) {
            return DirHandle::new(fd).map_err(|e| refused(&parent.prefix, e));
        }
    }
    match root.open_dir_at(Path::new(OsStr::from_bytes(&parent.prefix))) {
        Ok(fd) if same(&fd) => DirHandle::new(fd).map_err(|e| refused(&parent.prefix, e)),
        // Moved or replaced while its folders were walked: what the walk found so far cannot
        // be trusted to be one moment's tree.
        Ok(_) => Err(refused(&parent.prefix, Refusal::Changed)),
        Err(e) => Err(refused(&parent.prefix, e)),
    }
}

/// Records one entry of a listed folder (a folder's contents are the caller's to walk).
fn add_entry(
    dir: &DirHandle,
    path: Vec<u8>,
    entry: &Entry,
    previous: &Manifest,
    found: &mut Found<'_>,
) -> Result<(), CheckpointError> {
    let node = match entry.kind {
        Kind::Dir => Node::Dir {
            mode: mode_of(&entry.stat),
        },
        Kind::Symlink => match dir.read_link(&entry.name) {
            Ok(target) => Node::Symlink {
                target: target.as_bytes().to_vec(),
            },
            Err(Refusal::Missing) => {
                found.remove(&path);
                return Ok(());
            }
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
                    found.to_copy.push(ToCopy {
                        path,
                        size,
                        real: crate::sparse::real_bytes(&entry.stat),
                        mode: mode_of(&entry.stat),
                        stamp,
                    });
                    return Ok(());
                }
            }
        }
        Kind::Fifo | Kind::Socket | Kind::Device => Node::Special {
            mode: mode_of(&entry.stat),
        },
    };
    found.insert(path, node);
    Ok(())
}

/// Of `files` (paths in the workspace at `workspace`), those some process holds open for
/// writing now.
pub fn held_among<'a>(
    workspace: &Path,
    files: impl Iterator<Item = &'a Vec<u8>>,
    mut watch: Option<&mut Watch>,
) -> Result<BTreeSet<Vec<u8>>, CheckpointError> {
    let root = Root::open(workspace).map_err(|e| refused(b"", e))?;
    let mut found = Found::new(None);
    let mut folder: Option<(&[u8], Option<DirHandle>)> = None;
    for (n, path) in files.enumerate() {
        // Each question is an open and a close: keep the watch's queue from overflowing.
        if n % 256 == 255 {
            if let Some(w) = watch.as_deref_mut() {
                w.absorb();
            }
        }
        let (parent, name) = split(path);
        if folder.as_ref().is_none_or(|(p, _)| *p != parent) {
            let opened = root
                .open_dir_at(Path::new(OsStr::from_bytes(parent)))
                .ok()
                .and_then(|fd| DirHandle::new(fd).ok());
            folder = Some((parent, opened));
        }
        if let Some((_, Some(dir))) = &folder {
            probe(dir, OsStr::from_bytes(name), path, &mut found);
        }
    }
    Ok(found.held)
}

/// Asks whether some process holds the file `name` of `dir` open for writing.
fn probe(dir: &DirHandle, name: &OsStr, path: &[u8], found: &mut Found<'_>) {
    if let Ok(opened) = dir.open_file(name) {
        if live::held_for_writing(&opened.file) == Some(true) {
            found.held.insert(path.to_vec());
        }
    }
}

/// A path's folder and last name.
fn split(path: &[u8]) -> (&[u8], &[u8]) {
    match path.iter().rposition(|b| *b == b'/') {
        Some(i) => (&path[..i], &path[i + 1..]),
        None => (&[][..], path),
    }
}

/// Copies the file `name` of `dir` (at `path`) into the store, writing at most `allowed`
/// bytes (added to `spent`), and says whether some process holds it open for writing; `None`
/// when it vanished or stopped being a file meanwhile. Each try copies no more than the size
/// the file had when it was opened; a try the file changed under is dropped whole.
fn copy_file(
    dir: &DirHandle,
    path: &[u8],
    name: &OsStr,
    objects: &Objects,
    allowed: u64,
    spent: &mut u64,
) -> Result<Option<(Node, bool)>, CheckpointError> {
    for _ in 0..UNSTABLE_TRIES {
        let opened = match dir.open_file(name) {
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
        let size = opened.stat.st_size.max(0) as u64;
        let copy = objects.put(&opened.file, size, allowed.saturating_sub(*spent))?;
        // What was copied is the file's contents only if nothing wrote to it meanwhile; the
        // change time tells, and the code cannot set it back.
        let after = nix::sys::stat::fstat(&opened.file).map_err(|e| CheckpointError::Io {
            path: String::from_utf8_lossy(path).into_owned(),
            reason: e.to_string(),
        })?;
        // Spent whether kept or not: the disk was written either way.
        *spent += copy.written;
        if stamp_of(&after) == stamp_of(&opened.stat) && copy.size == after.st_size.max(0) as u64 {
            let node = Node::File {
                mode: mode_of(&after),
                size: copy.size,
                content: copy.hash,
                stamp: stamp_of(&after),
            };
            objects.keep(copy);
            let held = live::held_for_writing(&opened.file) == Some(true);
            return Ok(Some((node, held)));
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
