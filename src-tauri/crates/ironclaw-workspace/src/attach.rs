//! Files in: copying a person's files or folders into a workspace the sandbox can write to.
//!
//! Both sides are handled as untrusted, for different reasons:
//!
//! - **The destination** is the sandbox's. Code that ran there may have planted a link named like
//!   the file being attached, to make the host write through it into `~/.bashrc`. So every
//!   entry is made with `mkdirat`/`openat(O_CREAT | O_EXCL | O_NOFOLLOW)` relative to a
//!   descriptor of the folder just made. These fail on any existing name, a dangling link
//!   included, and nothing ever resolves a path inside the workspace.
//! - **The source** is the person's, but a folder may hold links to anything (`~/.ssh` from a
//!   project folder). Only what is physically inside the named folder is copied. Links, FIFOs,
//!   sockets and devices are skipped and listed, never followed or opened.
//!
//! Names are made safe to show and to type: control characters become `_`, and an empty name
//! becomes `_`. A top-level name that exists already gets " (2)", " (3)" and so on. What is
//! inside a newly made folder cannot clash, except with what the sandbox adds while the copy
//! runs. Such an entry is skipped and listed, and the sandbox's entry is left alone.

use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use nix::errno::Errno;
use nix::fcntl::{openat, OFlag};
use nix::sys::stat::{fstat, fstatat, mkdirat, FileStat, Mode, SFlag};
use nix::unistd::{fchown, Gid, Uid};

/// Who the copied files must belong to: the UID/GID the sandbox runs as, so the code can use
/// them and the person owns them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Owner {
    pub uid: u32,
    pub gid: u32,
}

/// What one attach put into the workspace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Attached {
    /// The source as given.
    pub source: PathBuf,
    /// Where it is now, relative to the workspace root (the sanitised, de-duplicated name).
    pub name: String,
    pub is_dir: bool,
    pub files: u64,
    pub bytes: u64,
    /// What was left out, with why.
    pub skipped: Vec<Skipped>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skipped {
    /// Relative to the source.
    pub path: PathBuf,
    pub why: &'static str,
}

/// Limits on one attach: what the workspace's quota leaves.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    pub max_bytes: u64,
    pub max_files: u64,
}

#[derive(Debug, thiserror::Error)]
pub enum AttachError {
    #[error("cannot attach {path}: {reason}")]
    Source { path: PathBuf, reason: String },
    #[error(
        "cannot attach {path}: it holds {files} files and {bytes} bytes, more than the workspace \
         takes ({max_files} files, {max_bytes} bytes left under its quota). Attach less, or raise \
         the profile's workspace quota in sandbox.yaml"
    )]
    TooBig {
        path: PathBuf,
        files: u64,
        bytes: u64,
        max_files: u64,
        max_bytes: u64,
    },
    #[error("cannot write into the workspace {workspace}: {reason}")]
    Workspace { workspace: PathBuf, reason: String },
}

/// What the copy reports as it goes: bytes copied so far of the total.
pub type Progress<'a> = &'a mut dyn FnMut(u64, u64);

const BASE: OFlag = OFlag::O_CLOEXEC
    .union(OFlag::O_NOFOLLOW)
    .union(OFlag::O_NOCTTY);

/// Copies `source` (a file or a folder) into the root of `workspace`.
pub fn attach(
    workspace: &Path,
    source: &Path,
    owner: Option<Owner>,
    limits: Limits,
    progress: Progress<'_>,
) -> Result<Attached, AttachError> {
    let source_err = |reason: String| AttachError::Source {
        path: source.to_path_buf(),
        reason,
    };
    let ws_err = |e: Errno| AttachError::Workspace {
        workspace: workspace.to_path_buf(),
        reason: e.desc().to_string(),
    };
    // The person named this path: it is the one place a link is followed.
    let resolved = std::fs::canonicalize(source).map_err(|e| source_err(e.to_string()))?;
    let parent = resolved.parent().unwrap_or(Path::new("/"));
    let base = resolved
        .file_name()
        .ok_or_else(|| source_err("it has no name (the root folder?)".into()))?;
    let src_parent = open_dir(parent).map_err(|e| source_err(e.desc().into()))?;
    let top = fstatat(
        src_parent.as_fd(),
        base,
        nix::fcntl::AtFlags::AT_SYMLINK_NOFOLLOW,
    )
    .map_err(|e| source_err(e.desc().into()))?;
    let is_dir = kind(&top) == SFlag::S_IFDIR;
    if !is_dir && kind(&top) != SFlag::S_IFREG {
        return Err(source_err(
            "it is neither a file nor a folder (a FIFO, socket or device)".into(),
        ));
    }

    let mut totals = Totals::default();
    measure(src_parent.as_fd(), base, &top, &mut totals)
        .map_err(|e| source_err(e.desc().into()))?;
    if totals.bytes > limits.max_bytes || totals.files > limits.max_files {
        return Err(AttachError::TooBig {
            path: source.to_path_buf(),
            files: totals.files,
            bytes: totals.bytes,
            max_files: limits.max_files,
            max_bytes: limits.max_bytes,
        });
    }

    let ws = open_dir(workspace).map_err(ws_err)?;
    let mut copy = Copy {
        owner,
        done: 0,
        total: totals.bytes,
        progress,
        attached: Attached {
            source: source.to_path_buf(),
            name: String::new(),
            is_dir,
            files: 0,
            bytes: 0,
            skipped: Vec::new(),
        },
    };
    let wanted = safe_name(base);
    let name = if is_dir {
        let (name, dir) =
            fresh(&wanted, |n| make_dir(ws.as_fd(), n, &top, owner)).map_err(ws_err)?;
        let src = open_dir_at(src_parent.as_fd(), base).map_err(|e| source_err(e.desc().into()))?;
        copy.dir(&src, &dir, Path::new(""));
        name
    } else {
        let src =
            open_file_at(src_parent.as_fd(), base).map_err(|e| source_err(e.desc().into()))?;
        let (name, dst) =
            fresh(&wanted, |n| make_file(ws.as_fd(), n, &top, owner)).map_err(ws_err)?;
        copy.file(src, dst).map_err(|e| source_err(e.to_string()))?;
        name
    };
    copy.attached.name = name;
    Ok(copy.attached)
}

#[derive(Default)]
struct Totals {
    files: u64,
    bytes: u64,
}

fn kind(stat: &FileStat) -> SFlag {
    SFlag::from_bits_truncate(stat.st_mode) & SFlag::S_IFMT
}

fn open_dir(path: &Path) -> Result<OwnedFd, Errno> {
    nix::fcntl::open(
        path,
        OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC,
        Mode::empty(),
    )
}

fn open_dir_at(dir: impl AsFd, name: &OsStr) -> Result<OwnedFd, Errno> {
    openat(
        dir,
        name,
        OFlag::O_RDONLY | OFlag::O_DIRECTORY | BASE,
        Mode::empty(),
    )
}

/// A regular file only: `O_NONBLOCK` so a FIFO swapped in cannot hang the open, then `fstat`.
fn open_file_at(dir: impl AsFd, name: &OsStr) -> Result<File, Errno> {
    let fd = openat(
        dir,
        name,
        OFlag::O_RDONLY | OFlag::O_NONBLOCK | BASE,
        Mode::empty(),
    )?;
    if kind(&fstat(fd.as_fd())?) != SFlag::S_IFREG {
        return Err(Errno::EINVAL);
    }
    Ok(File::from(fd))
}

/// Sizes and counts what a copy would take, without following anything.
fn measure(
    dir: impl AsFd,
    name: &OsStr,
    stat: &FileStat,
    totals: &mut Totals,
) -> Result<(), Errno> {
    match kind(stat) {
        SFlag::S_IFREG => {
            totals.files += 1;
            totals.bytes += u64::try_from(stat.st_size).unwrap_or(0);
        }
        SFlag::S_IFDIR => {
            totals.files += 1;
            let fd = open_dir_at(dir, name)?;
            for (child, child_stat) in list(fd.as_fd())? {
                measure(fd.as_fd(), &child, &child_stat, totals)?;
            }
        }
        _ => {}
    }
    Ok(())
}

/// A folder's entries with their `lstat`, sorted by name (so copies are reproducible).
fn list(dir: std::os::fd::BorrowedFd<'_>) -> Result<Vec<(OsString, FileStat)>, Errno> {
    let dup = dir.try_clone_to_owned().map_err(|_| Errno::EBADF)?;
    let mut d = nix::dir::Dir::from_fd(dup)?;
    let mut out = Vec::new();
    for entry in d.iter() {
        let entry = entry?;
        let name = OsStr::from_bytes(entry.file_name().to_bytes()).to_os_string();
        if name == "." || name == ".." {
            continue;
        }
        match fstatat(
            dir,
            name.as_os_str(),
            nix::fcntl::AtFlags::AT_SYMLINK_NOFOLLOW,
        ) {
            Ok(stat) => out.push((name, stat)),
            Err(Errno::ENOENT) => {}
            Err(e) => return Err(e),
        }
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(out)
}

/// Readable anywhere, executable when the source was, never setuid/setgid/sticky.
fn mode_of(stat: &FileStat, is_dir: bool) -> Mode {
    let exec = stat.st_mode & 0o111 != 0;
    Mode::from_bits_truncate(if is_dir || exec { 0o755 } else { 0o644 })
}

fn make_dir(
    ws: std::os::fd::BorrowedFd<'_>,
    name: &str,
    stat: &FileStat,
    owner: Option<Owner>,
) -> Result<OwnedFd, Errno> {
    mkdirat(ws, name, mode_of(stat, true))?;
    // Opened without following: if the sandbox swapped it for a link since, this fails.
    let fd = open_dir_at(ws, OsStr::new(name))?;
    own(&fd, owner)?;
    Ok(fd)
}

fn make_file(
    ws: std::os::fd::BorrowedFd<'_>,
    name: &str,
    stat: &FileStat,
    owner: Option<Owner>,
) -> Result<File, Errno> {
    let fd = openat(
        ws,
        name,
        OFlag::O_WRONLY | OFlag::O_CREAT | OFlag::O_EXCL | BASE,
        mode_of(stat, false),
    )?;
    own(&fd, owner)?;
    Ok(File::from(fd))
}

fn own(fd: &impl AsFd, owner: Option<Owner>) -> Result<(), Errno> {
    match owner {
        Some(o) if Uid::effective().as_raw() != o.uid || Gid::effective().as_raw() != o.gid => {
            fchown(fd, Some(Uid::from_raw(o.uid)), Some(Gid::from_raw(o.gid)))
        }
        _ => Ok(()),
    }
}

/// `make(name)`, then `make("name (2)")`... while the name exists.
fn fresh<T>(
    wanted: &str,
    mut make: impl FnMut(&str) -> Result<T, Errno>,
) -> Result<(String, T), Errno> {
    for n in 1..=1000u32 {
        let name = if n == 1 {
            wanted.to_string()
        } else {
            match wanted.rsplit_once('.') {
                Some((stem, ext)) if !stem.is_empty() => format!("{stem} ({n}).{ext}"),
                _ => format!("{wanted} ({n})"),
            }
        };
        match make(&name) {
            Ok(made) => return Ok((name, made)),
            Err(Errno::EEXIST) => continue,
            Err(e) => return Err(e),
        }
    }
    Err(Errno::EEXIST)
}

/// A name safe to show and type: control characters (including newlines and escapes) become
/// `_`; bytes that are not UTF-8 become U+FFFD.
pub fn safe_name(name: &OsStr) -> String {
    let text: String = String::from_utf8_lossy(name.as_bytes())
        .chars()
        .map(|c| if c.is_control() { '_' } else { c })
        .collect();
    if text.is_empty() || text == "." || text == ".." {
        "_".into()
    } else {
        text
    }
}

struct Copy<'p> {
    owner: Option<Owner>,
    done: u64,
    total: u64,
    progress: Progress<'p>,
    attached: Attached,
}

impl Copy<'_> {
    fn skip(&mut self, path: PathBuf, why: &'static str) {
        self.attached.skipped.push(Skipped { path, why });
    }

    fn dir(&mut self, src: &OwnedFd, dst: &OwnedFd, at: &Path) {
        let entries = match list(src.as_fd()) {
            Ok(entries) => entries,
            Err(_) => return self.skip(at.to_path_buf(), "could not be read"),
        };
        for (name, stat) in entries {
            let path = at.join(&name);
            let safe = safe_name(&name);
            match kind(&stat) {
                SFlag::S_IFDIR => {
                    let made = make_dir(dst.as_fd(), &safe, &stat, self.owner);
                    let opened = open_dir_at(src.as_fd(), &name);
                    match (made, opened) {
                        (Ok(d), Ok(s)) => self.dir(&s, &d, &path),
                        (Err(Errno::EEXIST), _) => {
                            self.skip(path, "the workspace already had that name")
                        }
                        _ => self.skip(path, "could not be copied"),
                    }
                }
                SFlag::S_IFREG => {
                    let opened = open_file_at(src.as_fd(), &name);
                    let made = make_file(dst.as_fd(), &safe, &stat, self.owner);
                    match (opened, made) {
                        (Ok(s), Ok(d)) => {
                            if self.file(s, d).is_err() {
                                self.skip(path, "could not be copied completely");
                            }
                        }
                        (_, Err(Errno::EEXIST)) => {
                            self.skip(path, "the workspace already had that name")
                        }
                        _ => self.skip(path, "could not be copied"),
                    }
                }
                SFlag::S_IFLNK => self.skip(path, "a link (never followed)"),
                _ => self.skip(path, "not a file or folder (FIFO, socket or device)"),
            }
        }
    }

    fn file(&mut self, mut src: File, mut dst: File) -> std::io::Result<()> {
        let mut buf = vec![0u8; 1 << 20];
        loop {
            let n = match src.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            dst.write_all(&buf[..n])?;
            self.done += n as u64;
            self.attached.bytes += n as u64;
            (self.progress)(self.done, self.total);
        }
        self.attached.files += 1;
        Ok(())
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use super::*;

    const ROOMY: Limits = Limits {
        max_bytes: u64::MAX,
        max_files: u64::MAX,
    };

    fn attach_quiet(ws: &Path, src: &Path) -> Result<Attached, AttachError> {
        attach(ws, src, None, ROOMY, &mut |_, _| {})
    }

    #[test]
    fn a_folder_comes_in_whole_but_links_and_fifos_stay_out() {
        let tmp = tempfile::tempdir().unwrap();
        let (src, ws) = (tmp.path().join("project"), tmp.path().join("ws"));
        std::fs::create_dir_all(src.join("data/deep")).unwrap();
        std::fs::create_dir_all(&ws).unwrap();
        std::fs::write(src.join("data/deep/a.csv"), "x,y\n1,2\n").unwrap();
        std::fs::write(src.join("run.sh"), "echo hi\n").unwrap();
        std::fs::set_permissions(src.join("run.sh"), std::fs::Permissions::from_mode(0o4755))
            .unwrap();
        let secret = tmp.path().join("secret.txt");
        std::fs::write(&secret, "host secret").unwrap();
        std::os::unix::fs::symlink(&secret, src.join("link.txt")).unwrap();
        std::os::unix::fs::symlink(tmp.path(), src.join("up")).unwrap();
        nix::unistd::mkfifo(&src.join("pipe"), Mode::from_bits_truncate(0o600)).unwrap();

        let mut seen = Vec::new();
        let got = attach(&ws, &src, None, ROOMY, &mut |done, total| {
            seen.push((done, total))
        })
        .unwrap();
        assert_eq!(got.name, "project");
        assert!(got.is_dir);
        assert_eq!(got.files, 2);
        assert_eq!(
            std::fs::read_to_string(ws.join("project/data/deep/a.csv")).unwrap(),
            "x,y\n1,2\n"
        );
        let mode = std::fs::metadata(ws.join("project/run.sh"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o7777, 0o755, "exec kept, setuid dropped");
        let mut skipped: Vec<_> = got
            .skipped
            .iter()
            .map(|s| (s.path.to_str().unwrap(), s.why))
            .collect();
        skipped.sort();
        assert_eq!(
            skipped,
            vec![
                ("link.txt", "a link (never followed)"),
                ("pipe", "not a file or folder (FIFO, socket or device)"),
                ("up", "a link (never followed)"),
            ]
        );
        assert!(!ws.join("project/link.txt").exists() && !ws.join("project/up").exists());
        assert_eq!(seen.last(), Some(&(got.bytes, got.bytes)));
    }

    #[test]
    fn a_link_planted_where_the_file_goes_is_not_written_through() {
        let tmp = tempfile::tempdir().unwrap();
        let ws = tmp.path().join("ws");
        std::fs::create_dir_all(&ws).unwrap();
        let victim = tmp.path().join("bashrc");
        std::fs::write(&victim, "original").unwrap();
        // What sandboxed code would leave: a link named like the attachment, and a dangling one.
        std::os::unix::fs::symlink(&victim, ws.join("notes.txt")).unwrap();
        std::os::unix::fs::symlink(tmp.path().join("nowhere"), ws.join("notes (2).txt")).unwrap();
        let src = tmp.path().join("notes.txt");
        std::fs::write(&src, "attached").unwrap();

        let got = attach_quiet(&ws, &src).unwrap();
        assert_eq!(got.name, "notes (3).txt");
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "original");
        assert!(!tmp.path().join("nowhere").exists());
        assert_eq!(
            std::fs::read_to_string(ws.join("notes (3).txt")).unwrap(),
            "attached"
        );
    }

    #[test]
    fn names_are_made_safe_and_specials_are_refused_at_the_top() {
        assert_eq!(safe_name(OsStr::new("a\x1b[31mb\nc")), "a_[31mb_c");
        assert_eq!(safe_name(OsStr::from_bytes(b"caf\xe9")), "caf\u{fffd}");
        assert_eq!(safe_name(OsStr::new("..")), "_");
        let tmp = tempfile::tempdir().unwrap();
        let ws = tmp.path().join("ws");
        std::fs::create_dir_all(&ws).unwrap();
        let fifo = tmp.path().join("fifo");
        nix::unistd::mkfifo(&fifo, Mode::from_bits_truncate(0o600)).unwrap();
        let err = attach_quiet(&ws, &fifo).unwrap_err();
        assert!(
            err.to_string().contains("neither a file nor a folder"),
            "{err}"
        );
        let odd = tmp.path().join("line\nbreak.txt");
        std::fs::write(&odd, "x").unwrap();
        assert_eq!(attach_quiet(&ws, &odd).unwrap().name, "line_break.txt");
    }

    #[test]
    fn more_than_the_quota_leaves_is_refused_before_anything_is_copied() {
        let tmp = tempfile::tempdir().unwrap();
        let ws = tmp.path().join("ws");
        std::fs::create_dir_all(&ws).unwrap();
        let src = tmp.path().join("big.bin");
        std::fs::write(&src, vec![0u8; 4096]).unwrap();
        let limits = Limits {
            max_bytes: 1000,
            max_files: 10,
        };
        let err = attach(&ws, &src, None, limits, &mut |_, _| {}).unwrap_err();
        assert!(
            matches!(err, AttachError::TooBig { bytes: 4096, .. }),
            "{err}"
        );
        assert_eq!(std::fs::read_dir(&ws).unwrap().count(), 0);
    }
}
