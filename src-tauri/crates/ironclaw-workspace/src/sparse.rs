//! Copying a file's contents the way the disk holds them: only the ranges that hold data are
//! read and written, holes stay holes (`SEEK_DATA`/`SEEK_HOLE`), and never more than the size
//! the file had when it was opened, nor more bytes written than the caller allows. A file's
//! apparent size is the sandbox's to choose (one `truncate` makes a terabyte); what the host
//! spends on a copy follows what the file really holds.
//!
//! Every copy IronClaw makes of a workspace file goes through here: the undo store's objects
//! (hashed on the way), restores from them, and a branch's copy of a workspace.

use std::fs::File;
use std::io;
use std::os::fd::AsFd;
use std::os::unix::fs::FileExt;

use nix::errno::Errno;
use nix::unistd::{lseek, Whence};
use sha2::{Digest, Sha256};

/// Bytes read and written at a time.
const CHUNK: usize = 256 * 1024;

/// What one copy did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Copied {
    /// The copy's size: the source's size when it was opened, or less if it shrank meanwhile.
    pub size: u64,
    /// Bytes of data read and written (holes are neither).
    pub written: u64,
    /// The SHA-256 of the copy's contents, holes counted as the zeros they read as; only when
    /// asked for.
    pub hash: Option<[u8; 32]>,
}

/// Why a copy stopped.
#[derive(Debug, thiserror::Error)]
pub enum CopyFailed {
    #[error("{0}")]
    Io(#[from] io::Error),
    /// Writing the rest would pass what the caller allowed; what was written must be dropped.
    #[error("the copy needs more than the {allowed} bytes allowed")]
    OverAllowance { allowed: u64 },
}

/// The bytes the file described by `stat` takes on its disk (its allocated blocks), and never
/// more than its size: what copying it here costs.
pub fn real_bytes(stat: &nix::sys::stat::FileStat) -> u64 {
    let size = stat.st_size.max(0) as u64;
    let blocks = (stat.st_blocks.max(0) as u64).saturating_mul(512);
    size.min(blocks)
}

/// Copies the first `size` bytes of `from` into `to` (a new, empty file) at the same offsets,
/// data ranges only, and gives `to` that size. Writes at most `allowed` bytes of data; with
/// `hash`, hashes what it copies (the holes as zeros, from a buffer: no read, no write).
pub fn copy(
    from: &File,
    to: &File,
    size: u64,
    allowed: u64,
    hash: bool,
) -> Result<Copied, CopyFailed> {
    let mut hasher = hash.then(Sha256::new);
    let mut buf = vec![0u8; CHUNK];
    let zeros = [0u8; 64 * 1024];
    let mut written = 0u64;
    let mut pos = 0u64;
    let mut end = size;
    while pos < end {
        let (data, hole) = next_data(from, pos, end)?;
        if let Some(h) = hasher.as_mut() {
            let mut left = data - pos;
            while left > 0 {
                let n = left.min(zeros.len() as u64) as usize;
                h.update(&zeros[..n]);
                left -= n as u64;
            }
        }
        if data >= end {
            break;
        }
        let mut at = data;
        while at < hole {
            let want = (hole - at).min(CHUNK as u64) as usize;
            let n = match from.read_at(&mut buf[..want], at) {
                Ok(0) => {
                    // Shrunk since it was opened: the copy ends here (its caller sees the
                    // change time move and does not trust it).
                    end = at;
                    break;
                }
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e.into()),
            };
            if written + n as u64 > allowed {
                return Err(CopyFailed::OverAllowance { allowed });
            }
            to.write_all_at(&buf[..n], at)?;
            if let Some(h) = hasher.as_mut() {
                h.update(&buf[..n]);
            }
            written += n as u64;
            at += n as u64;
        }
        pos = at.max(hole.min(end));
    }
    to.set_len(end)?;
    Ok(Copied {
        size: end,
        written,
        hash: hasher.map(|h| h.finalize().into()),
    })
}

/// From `pos`, where the next data starts and where the hole after it starts, both at most
/// `end`. A filesystem that cannot say (no `SEEK_DATA`) holds data everywhere.
fn next_data(file: &File, pos: u64, end: u64) -> io::Result<(u64, u64)> {
    let seek = |at: u64, whence| match lseek(file.as_fd(), at as i64, whence) {
        Ok(off) => Ok(Some((off.max(0) as u64).min(end))),
        // ENXIO: no data (or no hole) past `at`.
        Err(Errno::ENXIO) => Ok(Some(end)),
        Err(Errno::EINVAL | Errno::EOPNOTSUPP) => Ok(None),
        Err(e) => Err(io::Error::from(e)),
    };
    let Some(data) = seek(pos, Whence::SeekData)? else {
        return Ok((pos, end));
    };
    if data >= end {
        return Ok((end, end));
    }
    let hole = seek(data, Whence::SeekHole)?.unwrap_or(end);
    Ok((data, hole.max(data + 1).min(end)))
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use std::os::unix::fs::MetadataExt;

    fn sparse(dir: &std::path::Path, name: &str, size: u64, data: &[(u64, &[u8])]) -> File {
        let path = dir.join(name);
        let f = File::create(&path).unwrap();
        f.set_len(size).unwrap();
        for (at, bytes) in data {
            f.write_all_at(bytes, *at).unwrap();
        }
        f.sync_all().unwrap();
        File::open(&path).unwrap()
    }

    #[test]
    fn holes_stay_holes_and_the_hash_is_of_the_bytes_as_read() {
        let dir = tempfile::tempdir().unwrap();
        // Sizes around the block and chunk sizes, data at the start, middle and end.
        for (size, data) in [
            (0u64, vec![]),
            (1, vec![(0u64, &b"x"[..])]),
            (4096, vec![]),
            (1 << 20, vec![(0, &b"head"[..])]),
            (
                64 << 20,
                vec![(32 << 20, &b"middle"[..]), ((64 << 20) - 3, &b"end"[..])],
            ),
            (
                1 << 30,
                vec![(12345, &b"a"[..]), ((1 << 30) - 1, &b"z"[..])],
            ),
        ] {
            let src = sparse(dir.path(), "src", size, &data);
            let dst_path = dir.path().join("dst");
            let _ = std::fs::remove_file(&dst_path);
            let dst = File::create(&dst_path).unwrap();
            let copied = copy(&src, &dst, size, u64::MAX, true).unwrap();
            drop(dst);
            assert_eq!(copied.size, size);
            let expected: u64 = data.iter().map(|(_, b)| b.len() as u64).sum();
            // The data ranges were written (a filesystem block each, at most), no hole.
            assert!(copied.written >= expected && copied.written <= (data.len() as u64) * 8192);
            let meta = std::fs::metadata(&dst_path).unwrap();
            assert_eq!(meta.len(), size);
            assert!(
                meta.blocks() * 512 <= 64 * 1024,
                "{size}: {} blocks",
                meta.blocks()
            );
            // The same hash as the bytes read whole, for files small enough to read.
            if size <= 64 << 20 {
                let whole = std::fs::read(&dst_path).unwrap();
                assert_eq!(
                    copied.hash.unwrap(),
                    <[u8; 32]>::from(Sha256::digest(&whole))
                );
                for (at, bytes) in &data {
                    assert_eq!(&whole[*at as usize..*at as usize + bytes.len()], *bytes);
                }
            }
        }
    }

    #[test]
    fn never_more_than_the_size_at_open_nor_more_written_than_allowed() {
        let dir = tempfile::tempdir().unwrap();
        let src = sparse(dir.path(), "src", 1 << 20, &[(0, &[7u8; 1 << 20][..])]);
        let dst = File::create(dir.path().join("dst")).unwrap();
        // The file "grew" past what was seen at open: only that much is copied.
        let copied = copy(&src, &dst, 4096, u64::MAX, false).unwrap();
        assert_eq!((copied.size, copied.written), (4096, 4096));
        assert_eq!(dst.metadata().unwrap().len(), 4096);
        let dst = File::create(dir.path().join("dst2")).unwrap();
        assert!(matches!(
            copy(&src, &dst, 1 << 20, 1000, false),
            Err(CopyFailed::OverAllowance { allowed: 1000 })
        ));
    }
}
