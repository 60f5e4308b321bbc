//! A whole workspace copied into a new folder (a conversation's branch gets its own copy).
//!
//! The source is the sandbox's and may change under the copy, so it is read on descriptors
//! (see [`crate::reader`]): links are copied as links and never followed, FIFOs, sockets and
//! devices are left out without being opened. The destination is a new folder no sandbox can
//! reach yet, so it is written with ordinary calls. Modes, modification times and the owner
//! (the source root's: the sandbox's mapped user) are kept, so the copy is the code's as much
//! as the original was.

use std::ffi::OsStr;
use std::fs;
use std::io;
use std::os::fd::OwnedFd;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::Path;

use nix::sys::stat::FileStat;
use nix::sys::time::TimeSpec;
use nix::unistd::{Gid, Uid};

use crate::reader::{self, Kind, Refusal, Root};

/// What a copy did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Copied {
    pub files: u64,
    /// Bytes of data written (holes in sparse files stay holes and cost nothing).
    pub bytes: u64,
    /// Paths (relative, `/`-separated) not copied: FIFOs, sockets, devices, and anything that
    /// changed kind or vanished while it was copied.
    pub left_out: Vec<String>,
}

#[derive(Debug, thiserror::Error)]
pub enum CopyError {
    #[error("reading {path}: {refusal}")]
    Read { path: String, refusal: Refusal },
    #[error("writing {path}: {source}")]
    Write { path: String, source: io::Error },
    #[error("{0} already exists; a copy goes into a new folder only")]
    Exists(String),
    #[error(
        "the copy would take more than the {allowed} bytes it may (the workspace grew while it \
         was copied)"
    )]
    TooLarge { allowed: u64 },
}

/// Copies everything under `source` into `target`, which must not exist yet, writing at most
/// `allowed` bytes of file data (a half-made copy is the caller's to remove).
pub fn copy_tree(source: &Path, target: &Path, allowed: u64) -> Result<Copied, CopyError> {
    let root = Root::open(source).map_err(|refusal| CopyError::Read {
        path: source.display().to_string(),
        refusal,
    })?;
    let top = root.stat().map_err(|refusal| CopyError::Read {
        path: source.display().to_string(),
        refusal,
    })?;
    if target.exists() {
        return Err(CopyError::Exists(target.display().to_string()));
    }
    let owner = (Uid::from_raw(top.st_uid), Gid::from_raw(top.st_gid));
    make_dir(target, &top, owner, "")?;
    let mut copied = Copied::default();
    // Folders still to copy, by path: a stack, not recursion, so a tree the code nested a
    // million deep cannot overflow the host's stack, and each folder is opened only when its
    // turn comes (from the root, beneath it, never through a link), so no descriptors pile up.
    let mut pending: Vec<(Vec<u8>, std::path::PathBuf)> = vec![(Vec::new(), target.to_owned())];
    // Folders get their own mode once their contents are in, deepest first.
    let mut to_seal: Vec<(std::path::PathBuf, FileStat)> = vec![(target.to_owned(), top)];
    while let Some((prefix, dest)) = pending.pop() {
        let Ok(fd) = root.open_dir_at(Path::new(OsStr::from_bytes(&prefix))) else {
            // Gone, replaced by a link, or too deep to name: the code is still at work.
            copied.left_out.push(display(&prefix));
            continue;
        };
        copy_dir(
            fd,
            (&dest, &prefix),
            owner,
            allowed,
            &mut copied,
            &mut pending,
            &mut to_seal,
        )?;
    }
    for (path, stat) in to_seal.iter().rev() {
        seal_dir(path, stat);
    }
    Ok(copied)
}

/// One folder's entries: files and links copied, folders made and queued on `pending`.
fn copy_dir(
    fd: OwnedFd,
    (target, prefix): (&Path, &[u8]),
    owner: (Uid, Gid),
    allowed: u64,
    copied: &mut Copied,
    pending: &mut Vec<(Vec<u8>, std::path::PathBuf)>,
    to_seal: &mut Vec<(std::path::PathBuf, FileStat)>,
) -> Result<(), CopyError> {
    let (entries, dir) = reader::entries(fd).map_err(|refusal| CopyError::Read {
        path: display(prefix),
        refusal,
    })?;
    for entry in entries {
        let name: &OsStr = &entry.name;
        let mut path = prefix.to_vec();
        if !path.is_empty() {
            path.push(b'/');
        }
        path.extend_from_slice(name.as_bytes());
        let rel = display(&path);
        let to = target.join(name);
        match entry.kind {
            Kind::Dir => {
                make_dir(&to, &entry.stat, owner, &rel)?;
                to_seal.push((to.clone(), entry.stat));
                pending.push((path, to));
            }
            Kind::File => {
                // Opened without following a link; what is copied is what was opened.
                let Ok(opened) = dir.open_file(name) else {
                    copied.left_out.push(rel);
                    continue;
                };
                let out = fs::OpenOptions::new()
                    .write(true)
                    .create_new(true)
                    .mode(0o600)
                    .open(&to)
                    .map_err(|source| write_error(&rel, source))?;
                // As big as it was when opened, holes kept: its size is the code's to choose,
                // what it costs here is the data it holds.
                let size = opened.stat.st_size.max(0) as u64;
                let left = allowed.saturating_sub(copied.bytes);
                let bytes = match crate::sparse::copy(&opened.file, &out, size, left, false) {
                    Ok(c) => c.written,
                    Err(crate::sparse::CopyFailed::OverAllowance { .. }) => {
                        return Err(CopyError::TooLarge { allowed })
                    }
                    Err(crate::sparse::CopyFailed::Io(source)) => {
                        return Err(write_error(&rel, source))
                    }
                };
                drop(out);
                finish(&to, &opened.stat, owner, &rel)?;
                copied.files += 1;
                copied.bytes += bytes;
            }
            Kind::Symlink => {
                let Ok(link) = dir.read_link(name) else {
                    copied.left_out.push(rel);
                    continue;
                };
                std::os::unix::fs::symlink(&link, &to)
                    .map_err(|source| write_error(&rel, source))?;
                let _ =
                    std::os::unix::fs::lchown(&to, Some(owner.0.as_raw()), Some(owner.1.as_raw()));
            }
            Kind::Fifo | Kind::Socket | Kind::Device => copied.left_out.push(rel),
        }
    }
    Ok(())
}

fn make_dir(path: &Path, stat: &FileStat, owner: (Uid, Gid), rel: &str) -> Result<(), CopyError> {
    fs::DirBuilder::new()
        .mode(0o700)
        .create(path)
        .map_err(|source| write_error(rel, source))?;
    finish(path, stat, owner, rel)
}

/// The source's mode, owner and times on the copy (mode last: a read-only folder is still
/// being filled when it is made).
fn finish(path: &Path, stat: &FileStat, owner: (Uid, Gid), rel: &str) -> Result<(), CopyError> {
    // Only root can give files away; anyone else copies their own files as themselves.
    if Uid::effective().is_root() {
        nix::unistd::chown(path, Some(owner.0), Some(owner.1))
            .map_err(|e| write_error(rel, io::Error::from(e)))?;
    }
    let mode = stat.st_mode & 0o7777 & !0o6000;
    if stat.st_mode & libc::S_IFMT != libc::S_IFDIR {
        fs::set_permissions(path, fs::Permissions::from_mode(mode))
            .map_err(|source| write_error(rel, source))?;
        set_times(path, stat);
    } else {
        // The folder keeps a writable mode until its contents are in; see `copy_dir`.
        fs::set_permissions(path, fs::Permissions::from_mode(mode | 0o700))
            .map_err(|source| write_error(rel, source))?;
    }
    Ok(())
}

/// A filled folder gets the source's own mode and times.
fn seal_dir(path: &Path, stat: &FileStat) {
    let _ = fs::set_permissions(
        path,
        fs::Permissions::from_mode(stat.st_mode & 0o7777 & !0o6000),
    );
    set_times(path, stat);
}

fn set_times(path: &Path, stat: &FileStat) {
    let atime = TimeSpec::new(stat.st_atime, stat.st_atime_nsec);
    let mtime = TimeSpec::new(stat.st_mtime, stat.st_mtime_nsec);
    let _ = nix::sys::stat::utimensat(
        nix::fcntl::AT_FDCWD,
        path,
        &atime,
        &mtime,
        nix::sys::stat::UtimensatFlags::NoFollowSymlink,
    );
}

fn write_error(rel: &str, source: io::Error) -> CopyError {
    CopyError::Write {
        path: if rel.is_empty() {
            "the workspace".into()
        } else {
            rel.to_owned()
        },
        source,
    }
}

fn display(rel: &[u8]) -> String {
    if rel.is_empty() {
        "the workspace".into()
    } else {
        String::from_utf8_lossy(rel).into_owned()
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use std::os::unix::fs::{FileTypeExt, MetadataExt};

    use super::*;

    #[test]
    fn files_folders_and_links_are_copied_and_nothing_is_followed_or_opened() {
        let dir = tempfile::tempdir().unwrap();
        let src = dir.path().join("src");
        fs::create_dir_all(src.join("sub/deeper")).unwrap();
        fs::write(src.join("a.txt"), "alpha").unwrap();
        fs::write(src.join("sub/deeper/b.bin"), [0u8, 1, 2]).unwrap();
        fs::set_permissions(src.join("a.txt"), fs::Permissions::from_mode(0o640)).unwrap();
        let outside = dir.path().join("outside.txt");
        fs::write(&outside, "HOST").unwrap();
        std::os::unix::fs::symlink(&outside, src.join("out")).unwrap();
        std::os::unix::fs::symlink("a.txt", src.join("rel")).unwrap();
        nix::unistd::mkfifo(
            &src.join("pipe"),
            nix::sys::stat::Mode::from_bits_truncate(0o600),
        )
        .unwrap();
        let before = fs::metadata(src.join("a.txt")).unwrap().mtime();

        let dst = dir.path().join("dst");
        let copied = copy_tree(&src, &dst, u64::MAX).unwrap();
        assert_eq!((copied.files, copied.bytes), (2, 8));
        assert_eq!(copied.left_out, ["pipe"]);
        assert_eq!(fs::read_to_string(dst.join("a.txt")).unwrap(), "alpha");
        assert_eq!(fs::read(dst.join("sub/deeper/b.bin")).unwrap(), [0, 1, 2]);
        let meta = fs::metadata(dst.join("a.txt")).unwrap();
        assert_eq!(meta.mode() & 0o777, 0o640);
        assert_eq!(meta.mtime(), before);
        // Links stay links, with the same target; the host file was never copied.
        assert_eq!(fs::read_link(dst.join("out")).unwrap(), outside);
        assert!(fs::symlink_metadata(dst.join("out"))
            .unwrap()
            .file_type()
            .is_symlink());
        assert_eq!(fs::read_link(dst.join("rel")).unwrap(), Path::new("a.txt"));
        assert!(!dst.join("pipe").exists());
        assert!(!fs::symlink_metadata(src.join("pipe"))
            .unwrap()
            .file_type()
            .is_file());
        assert!(fs::symlink_metadata(src.join("pipe"))
            .unwrap()
            .file_type()
            .is_fifo());
        // A tree nested deeper than any stack: copied as far as a path can name it, no crash.
        let mut deep = src.join("deep");
        for _ in 0..2_000 {
            deep.push("d");
        }
        std::fs::create_dir_all(&deep).unwrap_or(());
        let dst2 = dir.path().join("dst2");
        let copied = copy_tree(&src, &dst2, u64::MAX).unwrap();
        assert!(dst2.join("deep/d/d/d").is_dir());
        assert_eq!(copied.files, 2);
        // Never into an existing folder.
        assert!(matches!(
            copy_tree(&src, &dst, u64::MAX),
            Err(CopyError::Exists(_))
        ));
    }

    #[test]
    fn sparse_files_are_copied_as_sparse_and_the_copy_stops_at_its_allowance() {
        let dir = tempfile::tempdir().unwrap();
        let src = dir.path().join("src");
        fs::create_dir(&src).unwrap();
        // Every size class: empty, under a block, a block, a hole with data at its end, and
        // a terabyte of hole (apparent size the code chose with one truncate).
        for (name, size, data_at) in [
            ("empty", 0u64, None),
            ("tiny", 10, Some(0u64)),
            ("block", 4096, Some(0)),
            ("tail", 64 << 20, Some((64 << 20) - 4)),
            ("tera", 1 << 40, Some(1 << 39)),
        ] {
            let f = fs::File::create(src.join(name)).unwrap();
            f.set_len(size).unwrap();
            if let Some(at) = data_at {
                std::os::unix::fs::FileExt::write_all_at(&f, b"data", at).unwrap();
            }
        }
        let dst = dir.path().join("dst");
        let copied = copy_tree(&src, &dst, u64::MAX).unwrap();
        assert_eq!(copied.files, 5);
        // The data, not the sizes: at most a block per file that holds any.
        assert!(copied.bytes <= 4 * 8192, "{}", copied.bytes);
        let used: u64 = ["empty", "tiny", "block", "tail", "tera"]
            .iter()
            .map(|n| fs::metadata(dst.join(n)).unwrap())
            .map(|m| {
                assert!(m.len() <= 1 << 40);
                m.blocks() * 512
            })
            .sum();
        assert!(used <= 4 * 8192, "the copy takes {used} bytes");
        assert_eq!(fs::metadata(dst.join("tera")).unwrap().len(), 1 << 40);
        let mut tail = vec![0u8; 4];
        std::os::unix::fs::FileExt::read_exact_at(
            &fs::File::open(dst.join("tail")).unwrap(),
            &mut tail,
            (64 << 20) - 4,
        )
        .unwrap();
        assert_eq!(&tail, b"data");
        // A copy that would write more than allowed stops.
        fs::write(src.join("dense"), vec![1u8; 1 << 20]).unwrap();
        assert!(matches!(
            copy_tree(&src, &dir.path().join("dst3"), 64 * 1024),
            Err(CopyError::TooLarge { .. })
        ));
    }
}
