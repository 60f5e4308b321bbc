//! Which names in a workspace may have changed since the last scan, from the kernel's inotify
//! events, so that a run that changed nothing costs a look at a few names instead of a walk of
//! the whole tree.
//!
//! The events are trusted only where the kernel is known to send them, and every gap in what
//! it sends is closed by looking anyway or by walking everything:
//!
//! - A write through a shared memory mapping sends no event. A file can only be mapped for
//!   writing through a descriptor opened for writing, and every open sends one: each file
//!   opened since the last scan is looked at again (the first write to a mapped page moves its
//!   change time). A mapping still alive at the scan is the sandbox's to refuse (SECURITY.md,
//!   "Undo").
//! - A file with more than one name can be written through a name outside any watched folder:
//!   such files are looked at in every scan, and so is every other name of the same inode.
//! - The next scan walks everything when the kernel's queue overflowed, a folder was moved
//!   (its watch would still name the old path), a watch could not be added (the per-user
//!   limit), the workspace is on a filesystem that another machine can change without an
//!   event here (NFS, SMB, FUSE…), a folder inside it is another filesystem, the workspace
//!   folder itself was replaced, or another process changed the record.
//! - And every [`FULL_WALK_EVERY`] regardless, for anything not thought of here.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::os::fd::{AsRawFd, BorrowedFd};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use nix::errno::Errno;
use nix::sys::inotify::{AddWatchFlags, InitFlags, Inotify, WatchDescriptor};
use nix::sys::stat::FileStat;
use nix::sys::statfs;

/// A full walk at least this often, whatever the events say.
pub const FULL_WALK_EVERY: Duration = Duration::from_secs(600);

/// Past this many changed names a walk is as cheap as looking at each, and the set's memory is
/// bounded.
const MAX_NAMES: usize = 50_000;

/// The part of the user's inotify watches (`fs.inotify.max_user_watches`, counted per UID by
/// the kernel) all of this process's watches together may take: the rest stays for the
/// person's other programs (editors, file managers, sync clients). A workspace with more
/// folders than that is walked instead.
const SHARE_OF_USER_WATCHES: usize = 8;

/// Watches this process's `Watch`es hold, all workspaces together.
static WATCHES_HELD: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// How many watches this process may hold at most: an eighth of the user's budget (the
/// kernel's default budget when it cannot be read).
pub fn watch_share() -> usize {
    static SHARE: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *SHARE.get_or_init(|| {
        std::fs::read_to_string("/proc/sys/fs/inotify/max_user_watches")
            .ok()
            .and_then(|t| t.trim().parse::<usize>().ok())
            .unwrap_or(8_192)
            / SHARE_OF_USER_WATCHES
    })
}

/// Filesystems whose every change on this machine's view of them is a local system call, so
/// the kernel sees (and reports) each one.
const LOCAL: [statfs::FsType; 5] = [
    statfs::EXT4_SUPER_MAGIC,
    statfs::XFS_SUPER_MAGIC,
    statfs::BTRFS_SUPER_MAGIC,
    statfs::TMPFS_MAGIC,
    statfs::F2FS_SUPER_MAGIC,
];

fn mask() -> AddWatchFlags {
    AddWatchFlags::IN_MODIFY
        | AddWatchFlags::IN_ATTRIB
        | AddWatchFlags::IN_CLOSE_WRITE
        | AddWatchFlags::IN_CLOSE_NOWRITE
        | AddWatchFlags::IN_OPEN
        | AddWatchFlags::IN_MOVED_FROM
        | AddWatchFlags::IN_MOVED_TO
        | AddWatchFlags::IN_CREATE
        | AddWatchFlags::IN_DELETE
        | AddWatchFlags::IN_DELETE_SELF
        | AddWatchFlags::IN_MOVE_SELF
        | AddWatchFlags::IN_ONLYDIR
}

/// What the next scan must do.
#[derive(Debug)]
pub enum Plan {
    /// Walk everything, for this reason (logged).
    Full(&'static str),
    /// Look at exactly these names (and, for a new folder, everything in it).
    Names(Names),
}

/// The names a scan must look at.
#[derive(Debug, Default)]
pub struct Names {
    pub all: BTreeSet<Vec<u8>>,
    /// Names whose last event was a write, an open or an attribute change. If one is gone when
    /// looked at, a file was written through a name it no longer has (a descriptor kept after
    /// `rm`): its other names, if it has any, cannot be known without a walk.
    pub written_last: HashSet<Vec<u8>>,
    /// Files someone may hold open now (opened and not closed since the watch began, or held
    /// for writing at the last look): asked whether it is for writing (see [`super::live`]).
    pub probe: BTreeSet<Vec<u8>>,
}

/// Names the events reported since the last scan took them.
#[derive(Debug, Default)]
struct Pending {
    names: BTreeSet<Vec<u8>>,
    last: HashMap<Vec<u8>, Last>,
    /// Why only a walk will do, once that is known.
    full: Option<&'static str>,
}

/// What the last event about a name was.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Last {
    Removed,
    Created,
    Written,
}

/// The watches over one workspace, and what they reported since the last scan.
#[derive(Debug)]
pub struct Watch {
    workspace: PathBuf,
    /// The root folder's device and inode, when the watch began.
    root: (u64, u64),
    inotify: Inotify,
    /// Each watched folder's path, by watch.
    paths: HashMap<WatchDescriptor, Vec<u8>>,
    /// Each watched folder's watch and inode, by path.
    dirs: HashMap<Vec<u8>, (WatchDescriptor, u64)>,
    /// Files that had more than one name while watched: looked at in every scan, even once
    /// the other names are gone (a descriptor or mapping opened through a removed name still
    /// writes to this one).
    pub linked: BTreeSet<Vec<u8>>,
    /// Files held open for writing at the last look: asked again at every scan.
    pub live: BTreeSet<Vec<u8>>,
    /// Every file was asked since the watch began; until then `live` knows only the files
    /// opened (or copied, or new) since.
    pub asked_all: bool,
    /// What the events read so far say the next scan must look at.
    pending: Pending,
    /// Opens not yet closed, by name (a rename carries them to the new name).
    open: HashMap<Vec<u8>, i64>,
    /// Open counts of names moved away, by the move's cookie, until the new name is reported.
    moving: HashMap<u32, i64>,
    began: Instant,
    /// Watches this one added (an upper bound on what it holds: the kernel also drops the
    /// watch of a deleted folder), counted in [`WATCHES_HELD`] until it is dropped.
    added: usize,
}

impl Drop for Watch {
    fn drop(&mut self) {
        WATCHES_HELD.fetch_sub(self.added, std::sync::atomic::Ordering::Relaxed);
    }
}

impl Watch {
    /// Starts watching the workspace `root` (opened at `workspace`), or says why it cannot be.
    pub fn start(workspace: &Path, root: BorrowedFd<'_>, stat: &FileStat) -> Result<Watch, String> {
        let fs = statfs::fstatfs(root).map_err(|e| format!("statfs: {e}"))?;
        if !LOCAL.contains(&fs.filesystem_type()) {
            return Err(format!(
                "the workspace is on a filesystem (type {:#x}) that can change without this machine's \
                 kernel reporting it",
                fs.filesystem_type().0
            ));
        }
        let inotify = Inotify::init(InitFlags::IN_NONBLOCK | InitFlags::IN_CLOEXEC)
            .map_err(|e| format!("inotify: {e}"))?;
        // The root is watched like every folder, as the walk that follows opens it.
        Ok(Watch {
            workspace: workspace.to_owned(),
            root: (stat.st_dev, stat.st_ino),
            inotify,
            paths: HashMap::new(),
            dirs: HashMap::new(),
            linked: BTreeSet::new(),
            live: BTreeSet::new(),
            asked_all: false,
            pending: Pending::default(),
            open: HashMap::new(),
            moving: HashMap::new(),
            began: Instant::now(),
            added: 0,
        })
    }

    /// Watches the folder `path`, open as `dir` (whose `fstat` is `stat`), before it is listed:
    /// whatever changes in it after the listing is reported.
    pub fn add(&mut self, path: &[u8], dir: BorrowedFd<'_>, stat: &FileStat) -> Result<(), String> {
        if stat.st_dev != self.root.0 {
            return Err(format!(
                "{:?} is another filesystem mounted inside the workspace",
                String::from_utf8_lossy(path)
            ));
        }
        let share = watch_share();
        let taken = WATCHES_HELD.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        if taken >= share {
            WATCHES_HELD.fetch_sub(1, std::sync::atomic::Ordering::Relaxed);
            return Err(format!(
                "the workspaces hold more folders than IronClaw's share of the user's inotify \
                 watches ({share}, an eighth of fs.inotify.max_user_watches)"
            ));
        }
        self.added += 1;
        // Through the descriptor, so the watch is on exactly the folder that is listed, not
        // on whatever its path names by now.
        let proc = format!("/proc/self/fd/{}", dir.as_raw_fd());
        let wd = self
            .inotify
            .add_watch(proc.as_str(), mask())
            .map_err(|e| match e {
                Errno::ENOSPC => "the per-user inotify watch limit (fs.inotify.max_user_watches) \
                              is reached"
                    .to_owned(),
                other => format!("inotify_add_watch: {other}"),
            })?;
        if let Some(other) = self.paths.get(&wd) {
            if other != path {
                // The same folder under two names (a bind mount): its events would name only
                // one of them.
                return Err(format!(
                    "{:?} and {:?} are the same folder",
                    String::from_utf8_lossy(other),
                    String::from_utf8_lossy(path)
                ));
            }
        }
        self.paths.insert(wd, path.to_vec());
        self.dirs.insert(path.to_vec(), (wd, stat.st_ino));
        Ok(())
    }

    /// The inode of the watched folder `path`, if it is watched.
    pub fn dir_inode(&self, path: &[u8]) -> Option<u64> {
        self.dirs.get(path).map(|(_, ino)| *ino)
    }

    /// Stops watching `path` and everything under it (it is gone, or no longer a folder).
    pub fn forget(&mut self, path: &[u8]) {
        let gone: Vec<Vec<u8>> = self
            .dirs
            .keys()
            .filter(|p| under(p, path))
            .cloned()
            .collect();
        for p in gone {
            if let Some((wd, _)) = self.dirs.remove(&p) {
                self.paths.remove(&wd);
                // Already gone with a deleted folder; nothing to do about an error.
                let _ = self.inotify.rm_watch(wd);
            }
        }
        self.linked.retain(|p| !under(p, path));
        self.live.retain(|p| !under(p, path));
        self.open.retain(|p, _| !under(p, path));
    }

    /// What the next scan of `workspace` (its root now `root`) must look at.
    pub fn plan(&mut self, workspace: &Path, root: &FileStat) -> Plan {
        if workspace != self.workspace || (root.st_dev, root.st_ino) != self.root {
            return Plan::Full("the workspace folder was replaced");
        }
        if self.began.elapsed() >= FULL_WALK_EVERY {
            return Plan::Full("the periodic full walk is due");
        }
        self.absorb();
        let Pending {
            mut names,
            last,
            full,
        } = std::mem::take(&mut self.pending);
        if let Some(reason) = full {
            return Plan::Full(reason);
        }
        names.extend(self.linked.iter().cloned());
        let probe: BTreeSet<Vec<u8>> = self
            .open
            .iter()
            .filter(|(_, n)| **n > 0)
            .map(|(p, _)| p.clone())
            .chain(self.live.iter().cloned())
            .collect();
        names.extend(probe.iter().cloned());
        Plan::Names(Names {
            probe,
            all: names,
            written_last: last
                .into_iter()
                .filter(|(_, l)| *l == Last::Written)
                .map(|(p, _)| p)
                .collect(),
        })
    }

    /// Reads the events the kernel has queued into what the next scan must look at. Called
    /// by the scan too, while it reads many files: its own opens are events, and a queue that
    /// overflows costs a walk.
    pub fn absorb(&mut self) {
        loop {
            let events = match self.inotify.read_events() {
                Ok(events) if events.is_empty() => break,
                Ok(events) => events,
                Err(Errno::EAGAIN) => break,
                Err(Errno::EINTR) => continue,
                Err(_) => {
                    self.pending.full = Some("the watch's events could not be read");
                    break;
                }
            };
            // Once a walk is due, the events only need reading (the queue stays drained).
            if self.pending.full.is_some() {
                continue;
            }
            for e in events {
                if let Some(reason) = self.take(&e) {
                    self.pending.full = Some(reason);
                    break;
                }
            }
            if self.pending.names.len() > MAX_NAMES {
                self.pending.full = Some("more names changed than a walk costs");
            }
        }
    }

    /// Adds the name one event is about to the pending names, or says why only a full walk
    /// will do.
    fn take(&mut self, e: &nix::sys::inotify::InotifyEvent) -> Option<&'static str> {
        use std::os::unix::ffi::OsStrExt;
        let m = e.mask;
        if m.contains(AddWatchFlags::IN_Q_OVERFLOW) {
            return Some("the kernel's event queue overflowed");
        }
        if m.contains(AddWatchFlags::IN_UNMOUNT) {
            return Some("the workspace's filesystem was unmounted");
        }
        let dir = self.paths.get(&e.wd)?.clone();
        let is_root = dir.is_empty();
        if m.contains(AddWatchFlags::IN_IGNORED) {
            if is_root {
                return Some("the workspace folder was removed");
            }
            self.paths.remove(&e.wd);
            if self.dirs.get(&dir).is_some_and(|(wd, _)| *wd == e.wd) {
                self.dirs.remove(&dir);
            }
            return None;
        }
        if m.intersects(AddWatchFlags::IN_MOVE_SELF | AddWatchFlags::IN_DELETE_SELF) {
            // A folder's own removal is also reported by its parent, with its name.
            return match (is_root, m.contains(AddWatchFlags::IN_MOVE_SELF)) {
                (true, _) => Some("the workspace folder was moved or removed"),
                (false, true) => Some("a folder was moved"),
                (false, false) => None,
            };
        }
        let is_dir = m.contains(AddWatchFlags::IN_ISDIR);
        if is_dir && m.intersects(AddWatchFlags::IN_MOVED_FROM | AddWatchFlags::IN_MOVED_TO) {
            return Some("a folder was moved");
        }
        if is_dir && m.intersects(AddWatchFlags::IN_OPEN | AddWatchFlags::IN_CLOSE_NOWRITE) {
            // Listing a folder changes nothing (and every scan lists some).
            return None;
        }
        match &e.name {
            Some(name) => {
                let mut path = dir;
                if !path.is_empty() {
                    path.push(b'/');
                }
                path.extend_from_slice(name.as_bytes());
                if !is_dir {
                    self.count_opens(&path, m, e.cookie);
                }
                if m.intersects(AddWatchFlags::IN_OPEN | AddWatchFlags::IN_CLOSE_NOWRITE) {
                    // Counted only: an open changes nothing by itself, and one still open at
                    // the next scan is looked at and asked about then (see `plan`). A reader
                    // closing changed nothing. (Every scan's own reads are such pairs.)
                    return None;
                }
                let now = if m.intersects(AddWatchFlags::IN_DELETE | AddWatchFlags::IN_MOVED_FROM) {
                    Last::Removed
                } else if m.intersects(AddWatchFlags::IN_CREATE | AddWatchFlags::IN_MOVED_TO) {
                    Last::Created
                } else {
                    Last::Written
                };
                let (last, names) = (&mut self.pending.last, &mut self.pending.names);
                if now == Last::Written && last.get(&path) == Some(&Last::Removed) {
                    // Written through a name it has just lost: which inode, and so which of
                    // its other names, cannot be known.
                    return Some("a file was written through a name it no longer has");
                }
                last.insert(path.clone(), now);
                names.insert(path);
            }
            // The watched folder itself (its mode); the root's is not recorded.
            None if !is_root => {
                self.pending.names.insert(dir);
            }
            None => {}
        }
        None
    }
}

impl Watch {
    /// Keeps `open` as the opens and closes of the file `path` go.
    fn count_opens(&mut self, path: &[u8], m: AddWatchFlags, cookie: u32) {
        if m.contains(AddWatchFlags::IN_OPEN) {
            *self.open.entry(path.to_vec()).or_default() += 1;
        }
        if m.intersects(AddWatchFlags::IN_CLOSE_WRITE | AddWatchFlags::IN_CLOSE_NOWRITE) {
            if let Some(n) = self.open.get_mut(path) {
                *n -= 1;
                if *n <= 0 {
                    self.open.remove(path);
                }
            }
        }
        if m.contains(AddWatchFlags::IN_MOVED_FROM) {
            if let Some(n) = self.open.remove(path) {
                self.moving.insert(cookie, n);
            }
        }
        if m.contains(AddWatchFlags::IN_MOVED_TO) {
            if let Some(n) = self.moving.remove(&cookie) {
                *self.open.entry(path.to_vec()).or_default() += n;
            }
        }
        if m.contains(AddWatchFlags::IN_DELETE) {
            self.open.remove(path);
        }
    }
}

/// `path` is `top` or inside it.
pub fn under(path: &[u8], top: &[u8]) -> bool {
    top.is_empty()
        || path == top
        || (path.len() > top.len() && path.starts_with(top) && path[top.len()] == b'/')
}
