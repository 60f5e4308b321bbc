//! The host-side reader: the one way IronClaw opens a path the sandbox can write to.
//!
//! The sandboxed code owns the workspace's contents and may change them at any moment, so a
//! name checked a moment ago proves nothing about what the same name opens now. Everything
//! here therefore works on descriptors:
//!
//! - the workspace root is opened once; every other open is relative to a descriptor that is
//!   already known to be a directory inside it;
//! - folders are walked with `openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
//!   RESOLVE_NO_MAGICLINKS)` where the kernel has it (5.6+), else one `openat(O_NOFOLLOW)` per
//!   component; the last component is always a single name opened with `O_NOFOLLOW`, so no
//!   symlink is ever followed anywhere on the way;
//! - every open is `O_NONBLOCK | O_CLOEXEC | O_NOCTTY`: a FIFO opens at once instead of waiting
//!   for a writer, and nothing leaks into child processes;
//! - the type is checked with `fstat` on the descriptor that was opened (never by name), and
//!   anything that is not a regular file or directory is refused; the bytes are then read from
//!   that same descriptor.

use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path};
use std::sync::atomic::{AtomicBool, Ordering};

use nix::dir::Dir;
use nix::errno::Errno;
use nix::fcntl::{openat, openat2, AtFlags, OFlag, OpenHow, ResolveFlag};
use nix::sys::stat::{fstat, fstatat, FileStat, Mode, SFlag};

/// What a name in the workspace is, from `lstat`-like information (links are not followed).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    File,
    Dir,
    Symlink,
    Fifo,
    Socket,
    Device,
}

impl Kind {
    pub fn of(stat: &FileStat) -> Kind {
        match SFlag::from_bits_truncate(stat.st_mode & SFlag::S_IFMT.bits()) {
            SFlag::S_IFREG => Kind::File,
            SFlag::S_IFDIR => Kind::Dir,
            SFlag::S_IFLNK => Kind::Symlink,
            SFlag::S_IFIFO => Kind::Fifo,
            SFlag::S_IFSOCK => Kind::Socket,
            // Character and block devices (and any type a future kernel adds).
            _ => Kind::Device,
        }
    }

    fn describe(self) -> &'static str {
        match self {
            Kind::File => "a file",
            Kind::Dir => "a folder",
            Kind::Symlink => "a symbolic link",
            Kind::Fifo => "a named pipe (FIFO)",
            Kind::Socket => "a socket",
            Kind::Device => "a device node",
        }
    }
}

/// Why a workspace path was not opened. Each message completes "refused to open PATH: ...".
#[derive(Debug, thiserror::Error)]
pub enum Refusal {
    #[error("it does not exist")]
    Missing,
    #[error("{0}")]
    Malformed(&'static str),
    #[error(
        "it is {}, not a regular file; IronClaw only reads regular files the code wrote",
        .0.describe()
    )]
    NotAFile(Kind),
    #[error("a folder was expected but it is {}", .0.describe())]
    NotADir(Kind),
    #[error(
        "it is or passes through a symbolic link, and IronClaw never follows links inside a \
         workspace (the code could point them at any host file)"
    )]
    Link,
    #[error("it changed while it was being opened (the code is still changing it); try again")]
    Changed,
    #[error("the system refused: {0}")]
    Os(Errno),
}

fn refusal(errno: Errno) -> Refusal {
    match errno {
        Errno::ENOENT => Refusal::Missing,
        // ELOOP: O_NOFOLLOW or RESOLVE_NO_SYMLINKS met a link. EXDEV: RESOLVE_BENEATH saw the
        // walk leave the root. ENOTDIR with O_DIRECTORY|O_NOFOLLOW: a link where a folder was.
        Errno::ELOOP | Errno::EXDEV | Errno::ENOTDIR => Refusal::Link,
        // openat2 says a concurrent rename could have let the walk escape.
        Errno::EAGAIN => Refusal::Changed,
        other => Refusal::Os(other),
    }
}

/// Flags on every open of a workspace path: never wait, never follow, never inherit.
fn base_flags() -> OFlag {
    OFlag::O_NOFOLLOW | OFlag::O_NONBLOCK | OFlag::O_CLOEXEC | OFlag::O_NOCTTY
}

/// Cleared the first time the kernel turns `openat2` down (older than 5.6, or a seccomp
/// filter that answers ENOSYS/EPERM); from then on the per-component walk is used.
static OPENAT2: AtomicBool = AtomicBool::new(true);

/// The relative path's components as plain names: no `..`, no absolute paths, no NUL.
fn names(relative: &Path) -> Result<Vec<&OsStr>, Refusal> {
    if relative.as_os_str().as_bytes().contains(&0) {
        return Err(Refusal::Malformed("the path contains a NUL character"));
    }
    let mut out = Vec::new();
    for part in relative.components() {
        match part {
            Component::Normal(name) => out.push(name),
            Component::CurDir => {}
            Component::ParentDir => return Err(Refusal::Malformed("`..` is not allowed")),
            Component::RootDir | Component::Prefix(_) => {
                return Err(Refusal::Malformed(
                    "only paths inside the workspace are allowed",
                ))
            }
        }
    }
    Ok(out)
}

/// A regular file opened for reading, with the `fstat` of that very descriptor.
#[derive(Debug)]
pub struct OpenFile {
    pub file: File,
    pub stat: FileStat,
}

impl OpenFile {
    pub fn len(&self) -> u64 {
        self.stat.st_size.max(0) as u64
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The whole file, from this descriptor, if it holds at most `max` bytes: checked on the
    /// `fstat` first, and again on what was read, since the code may grow it meanwhile.
    pub fn read_at_most(self, max: u64) -> Result<Vec<u8>, TooLarge> {
        use std::io::Read as _;
        if self.len() > max {
            return Err(TooLarge::Size(self.len()));
        }
        let mut bytes = Vec::with_capacity(self.len() as usize);
        self.file
            .take(max + 1)
            .read_to_end(&mut bytes)
            .map_err(TooLarge::Io)?;
        if bytes.len() as u64 > max {
            return Err(TooLarge::Grew);
        }
        Ok(bytes)
    }
}

/// Why [`OpenFile::read_at_most`] read nothing.
#[derive(Debug, thiserror::Error)]
pub enum TooLarge {
    #[error("it is {} MiB", .0 >> 20)]
    Size(u64),
    #[error("it grew while it was read")]
    Grew,
    #[error("reading it failed: {0}")]
    Io(std::io::Error),
}

/// One entry of a folder, described without opening it.
#[derive(Debug, Clone)]
pub struct Entry {
    pub name: OsString,
    pub kind: Kind,
    pub stat: FileStat,
}

/// A workspace (or any folder the sandbox writes into), opened once.
#[derive(Debug)]
pub struct Root {
    dir: OwnedFd,
}

impl Root {
    /// Opens the root itself. Its path comes from IronClaw (the data folder, or the folder a
    /// person named), not from the sandbox, so it is the one place a link may be followed.
    pub fn open(path: &Path) -> Result<Root, Refusal> {
        let flags = OFlag::O_RDONLY
            | OFlag::O_DIRECTORY
            | OFlag::O_NONBLOCK
            | OFlag::O_CLOEXEC
            | OFlag::O_NOCTTY;
        let dir = nix::fcntl::open(path, flags, Mode::empty()).map_err(|e| match e {
            Errno::ENOTDIR => Refusal::NotADir(Kind::File),
            other => refusal(other),
        })?;
        Ok(Root { dir })
    }

    /// The root folder's own `fstat` (what it is now, not what its path names now).
    pub fn stat(&self) -> Result<FileStat, Refusal> {
        fstat(self.dir.as_fd()).map_err(Refusal::Os)
    }

    /// Opens `relative` (`/`-separated, inside the root) for reading, only if it is a regular
    /// file. Never blocks, never follows a link.
    pub fn open_file(&self, relative: &str) -> Result<OpenFile, Refusal> {
        self.open_file_at(Path::new(relative))
    }

    /// [`Root::open_file`] for a path of any bytes (a name need not be UTF-8).
    pub fn open_file_at(&self, relative: &Path) -> Result<OpenFile, Refusal> {
        let mut parts = names(relative)?;
        let Some(last) = parts.pop() else {
            return Err(Refusal::NotAFile(Kind::Dir));
        };
        let parent = self.walk(&parts)?;
        open_file_in(parent.as_fd(), last)
    }

    /// Opens the folder `relative` ("" for the root) for listing.
    pub fn open_dir(&self, relative: &str) -> Result<OwnedFd, Refusal> {
        self.open_dir_at(Path::new(relative))
    }

    /// [`Root::open_dir`] for a path of any bytes (a name need not be UTF-8).
    pub fn open_dir_at(&self, relative: &Path) -> Result<OwnedFd, Refusal> {
        let parts = names(relative)?;
        let Some((last, parents)) = parts.split_last() else {
            return self.dir.try_clone().map_err(|e| Refusal::Os(io_errno(&e)));
        };
        let parent = self.walk(parents)?;
        open_dir_in(parent.as_fd(), last)
    }

    /// A descriptor of the folder `parts` name, every step refused if it is a link.
    fn walk(&self, parts: &[&OsStr]) -> Result<OwnedFd, Refusal> {
        if parts.is_empty() {
            return self.dir.try_clone().map_err(|e| Refusal::Os(io_errno(&e)));
        }
        if OPENAT2.load(Ordering::Relaxed) {
            let joined: Vec<u8> = parts
                .iter()
                .map(|p| p.as_bytes())
                .collect::<Vec<_>>()
                .join(&b'/');
            let how = OpenHow::new()
                .flags(OFlag::O_RDONLY | OFlag::O_DIRECTORY | base_flags())
                .resolve(
                    ResolveFlag::RESOLVE_BENEATH
                        | ResolveFlag::RESOLVE_NO_SYMLINKS
                        | ResolveFlag::RESOLVE_NO_MAGICLINKS,
                );
            match openat2(self.dir.as_fd(), OsStr::from_bytes(&joined), how) {
                Ok(fd) => return expect_dir(fd),
                Err(Errno::ENOSYS | Errno::EPERM) => {
                    tracing::debug!("openat2 is not available; walking one component at a time");
                    OPENAT2.store(false, Ordering::Relaxed);
                }
                Err(e) => return Err(refusal(e)),
            }
        }
        let mut current = open_dir_in(self.dir.as_fd(), parts[0])?;
        for part in &parts[1..] {
            current = open_dir_in(current.as_fd(), part)?;
        }
        Ok(current)
    }
}

fn io_errno(e: &std::io::Error) -> Errno {
    e.raw_os_error().map(Errno::from_raw).unwrap_or(Errno::EIO)
}

fn expect_dir(fd: OwnedFd) -> Result<OwnedFd, Refusal> {
    let stat = fstat(fd.as_fd()).map_err(Refusal::Os)?;
    match Kind::of(&stat) {
        Kind::Dir => Ok(fd),
        other => Err(Refusal::NotADir(other)),
    }
}

/// Opens the single name `name` in `dir` as a folder.
fn open_dir_in(dir: BorrowedFd<'_>, name: &OsStr) -> Result<OwnedFd, Refusal> {
    let fd = openat(
        dir,
        name,
        OFlag::O_RDONLY | OFlag::O_DIRECTORY | base_flags(),
        Mode::empty(),
    )
    .map_err(|e| match e {
        // Say what it is rather than "a link" when it is plainly something else.
        Errno::ENOTDIR => match fstatat(dir, name, AtFlags::AT_SYMLINK_NOFOLLOW) {
            Ok(stat) if Kind::of(&stat) != Kind::Symlink => Refusal::NotADir(Kind::of(&stat)),
            _ => Refusal::Link,
        },
        other => refusal(other),
    })?;
    expect_dir(fd)
}

/// Opens the single name `name` in `dir` for reading if, and only if, it is a regular file.
fn open_file_in(dir: BorrowedFd<'_>, name: &OsStr) -> Result<OpenFile, Refusal> {
    // Look first, so a device node is never opened at all (opening one can have effects);
    // the descriptor is checked again below, which is what the decision rests on.
    let before = fstatat(dir, name, AtFlags::AT_SYMLINK_NOFOLLOW).map_err(refusal)?;
    match Kind::of(&before) {
        Kind::File => {}
        Kind::Symlink => return Err(Refusal::Link),
        other => return Err(Refusal::NotAFile(other)),
    }
    let fd = openat(dir, name, OFlag::O_RDONLY | base_flags(), Mode::empty()).map_err(refusal)?;
    let stat = fstat(fd.as_fd()).map_err(Refusal::Os)?;
    match Kind::of(&stat) {
        Kind::File => {}
        other => return Err(Refusal::NotAFile(other)),
    }
    if (stat.st_dev, stat.st_ino) != (before.st_dev, before.st_ino) {
        return Err(Refusal::Changed);
    }
    Ok(OpenFile {
        file: File::from(fd),
        stat,
    })
}

/// The entries of an opened folder, each described with `fstatat(AT_SYMLINK_NOFOLLOW)` on
/// the folder's descriptor: nothing is opened, so a FIFO or device costs nothing.
pub fn entries(dir: OwnedFd) -> Result<(Vec<Entry>, DirHandle), Refusal> {
    let mut handle = Dir::from_fd(dir).map_err(Refusal::Os)?;
    let mut names = Vec::new();
    for entry in handle.iter() {
        let entry = entry.map_err(Refusal::Os)?;
        let name = OsStr::from_bytes(entry.file_name().to_bytes());
        if name == "." || name == ".." {
            continue;
        }
        names.push(name.to_os_string());
    }
    names.sort();
    let mut out = Vec::with_capacity(names.len());
    for name in names {
        // Gone since the listing: the code is still at work; skip it.
        let Ok(stat) = fstatat(
            handle.as_fd(),
            name.as_os_str(),
            AtFlags::AT_SYMLINK_NOFOLLOW,
        ) else {
            continue;
        };
        out.push(Entry {
            kind: Kind::of(&stat),
            name,
            stat,
        });
    }
    Ok((out, DirHandle(handle)))
}

/// An opened folder whose entries were listed; opens its children without following links.
pub struct DirHandle(Dir);

impl DirHandle {
    /// A folder opened with [`Root::open_dir_at`] or [`DirHandle::open_dir`], to look at some of
    /// its names without listing it.
    pub fn new(dir: OwnedFd) -> Result<DirHandle, Refusal> {
        Dir::from_fd(dir).map(DirHandle).map_err(Refusal::Os)
    }

    /// The one name `name`, described like a listed entry; `None` when it is not there.
    pub fn entry(&self, name: &OsStr) -> Result<Option<Entry>, Refusal> {
        match fstatat(self.0.as_fd(), name, AtFlags::AT_SYMLINK_NOFOLLOW) {
            Ok(stat) => Ok(Some(Entry {
                kind: Kind::of(&stat),
                name: name.to_os_string(),
                stat,
            })),
            Err(Errno::ENOENT | Errno::ENOTDIR) => Ok(None),
            Err(e) => Err(refusal(e)),
        }
    }

    pub fn open_file(&self, name: &OsStr) -> Result<OpenFile, Refusal> {
        open_file_in(self.0.as_fd(), name)
    }

    pub fn open_dir(&self, name: &OsStr) -> Result<OwnedFd, Refusal> {
        open_dir_in(self.0.as_fd(), name)
    }

    /// The target of the link `name`, as bytes; the link itself is never followed.
    pub fn read_link(&self, name: &OsStr) -> Result<OsString, Refusal> {
        nix::fcntl::readlinkat(self.0.as_fd(), name).map_err(refusal)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use std::io::Read;

    use super::*;

    fn read(root: &Root, rel: &str) -> Result<String, Refusal> {
        let mut f = root.open_file(rel)?;
        let mut s = String::new();
        f.file.read_to_string(&mut s).unwrap();
        Ok(s)
    }

    #[test]
    fn regular_files_open_and_links_fifos_and_escapes_are_refused_at_every_step() {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path().join("ws");
        std::fs::create_dir_all(ws.join("sub/deeper")).unwrap();
        std::fs::write(ws.join("sub/deeper/a.txt"), "a").unwrap();
        std::fs::write(dir.path().join("secret"), "host").unwrap();
        std::os::unix::fs::symlink(dir.path().join("secret"), ws.join("abs")).unwrap();
        std::os::unix::fs::symlink("sub/deeper/a.txt", ws.join("inner")).unwrap();
        std::os::unix::fs::symlink("sub", ws.join("subdir-link")).unwrap();
        std::os::unix::fs::symlink(dir.path(), ws.join("sub/out")).unwrap();
        nix::unistd::mkfifo(&ws.join("sub/pipe"), Mode::S_IRWXU).unwrap();
        let root = Root::open(&ws).unwrap();

        assert_eq!(read(&root, "sub/deeper/a.txt").unwrap(), "a");
        assert_eq!(read(&root, "./sub/deeper/a.txt").unwrap(), "a");
        for (bad, want) in [
            ("abs", "Link"),
            ("inner", "Link"),
            ("subdir-link/deeper/a.txt", "Link"),
            ("sub/out/secret", "Link"),
            ("sub/pipe", "NotAFile(Fifo)"),
            ("sub", "NotAFile(Dir)"),
            ("../secret", "Malformed"),
            ("sub/../../secret", "Malformed"),
            ("/etc/passwd", "Malformed"),
            ("missing.txt", "Missing"),
            ("sub/deeper/a.txt/x", "Link"),
        ] {
            let got = format!("{:?}", read(&root, bad).unwrap_err());
            assert!(got.starts_with(want), "{bad}: {got}, want {want}");
        }
        assert!(root.open_dir("subdir-link").is_err());
        assert!(root.open_dir("sub/deeper").is_ok());
    }

    #[test]
    fn the_per_component_walk_refuses_the_same_links_as_openat2() {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path().join("ws");
        std::fs::create_dir_all(ws.join("a/b")).unwrap();
        std::fs::write(ws.join("a/b/f"), "f").unwrap();
        std::os::unix::fs::symlink(dir.path(), ws.join("a/up")).unwrap();
        let root = Root::open(&ws).unwrap();
        let names_of = |p: &'static str| names(Path::new(p)).unwrap();
        // Exercise the fallback directly, whatever this kernel supports.
        let walk = |parts: &[&OsStr]| -> Result<OwnedFd, Refusal> {
            let mut current = open_dir_in(root.dir.as_fd(), parts[0])?;
            for part in &parts[1..] {
                current = open_dir_in(current.as_fd(), part)?;
            }
            Ok(current)
        };
        assert!(walk(&names_of("a/b")).is_ok());
        assert!(matches!(walk(&names_of("a/up")), Err(Refusal::Link)));
        let b = walk(&names_of("a/b")).unwrap();
        assert!(open_file_in(b.as_fd(), OsStr::new("f")).is_ok());
    }
}
