//! Streaming a debootstrapped root filesystem as a tar, for Docker's image import.
//!
//! The tar is produced on a blocking thread and handed over in chunks through a bounded channel,
//! so the rootfs is never held in memory or written to disk a second time.

use std::collections::hash_map::{Entry, HashMap};
use std::io::{self, Write};
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use bytes::Bytes;
use futures_util::Stream;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

/// Directories kept (empty) in the image but whose contents are left out: kernel filesystems
/// Docker mounts at run time, and caches and documentation that only make the image bigger
/// (~230 MB → ~100 MB for a plain minbase).
const EMPTIED_DIRS: &[&str] = &[
    "proc",
    "sys",
    "dev",
    "var/lib/apt/lists",
    "usr/share/doc",
    "usr/share/man",
    "usr/share/locale",
];
/// Downloaded packages debootstrap leaves behind.
const PACKAGE_CACHE: &str = "var/cache/apt/archives";

const CHUNK: usize = 256 * 1024;

/// A tar of a directory tree being produced in the background.
pub(crate) struct TarUpload {
    /// The archive bytes; ends with an error item if archiving fails, so the receiver can
    /// never mistake a truncated archive for a complete one.
    pub(crate) body: std::pin::Pin<Box<dyn Stream<Item = io::Result<Bytes>> + Send>>,
    /// Bytes handed to `body` so far, for progress.
    pub(crate) sent: Arc<AtomicU64>,
    /// Finishes with the archiving result once everything was sent (or sending stopped).
    pub(crate) task: JoinHandle<io::Result<()>>,
}

pub(crate) fn stream_tar(root: PathBuf) -> TarUpload {
    let (tx, rx) = mpsc::channel::<io::Result<Bytes>>(8);
    let sent = Arc::new(AtomicU64::new(0));
    let writer = ChannelWriter {
        tx: tx.clone(),
        buf: Vec::with_capacity(CHUNK),
        sent: Arc::clone(&sent),
    };
    let task = tokio::task::spawn_blocking(move || {
        let result = write_tar(&root, writer);
        if let Err(err) = &result {
            // Ignored when the receiver is gone: then the upload already failed on its own.
            let _ = tx.blocking_send(Err(io::Error::new(err.kind(), err.to_string())));
        }
        result
    });
    let body = futures_util::stream::unfold(rx, |mut rx| async move {
        rx.recv().await.map(|item| (item, rx))
    });
    TarUpload {
        body: Box::pin(body),
        sent,
        task,
    }
}

fn write_tar(root: &Path, writer: ChannelWriter) -> io::Result<()> {
    let mut builder = tar::Builder::new(writer);
    builder.follow_symlinks(false);
    let root_dev = std::fs::symlink_metadata(root)?.dev();
    // Hard-linked files (perl, gunzip) go in once, later names as links to the first: keeps
    // the image smaller and the files identical, as dpkg installed them.
    let mut first_names: HashMap<(u64, u64), PathBuf> = HashMap::new();
    // Depth-first with sorted entries: deterministic order, parents before children.
    let mut stack = vec![PathBuf::new()];
    while let Some(rel) = stack.pop() {
        let full = root.join(&rel);
        let meta = std::fs::symlink_metadata(&full)?;
        let kind = meta.file_type();
        if kind.is_dir() {
            if !rel.as_os_str().is_empty() {
                builder.append_dir(&rel, &full)?;
            }
            // Never descend into another filesystem (a mount debootstrap left behind).
            if meta.dev() != root_dev || keeps_dir_empty(&rel) {
                continue;
            }
            let mut children: Vec<PathBuf> = std::fs::read_dir(&full)?
                .map(|e| e.map(|e| rel.join(e.file_name())))
                .collect::<io::Result<_>>()?;
            children.sort();
            children.retain(|child| !is_excluded_file(child));
            stack.extend(children.into_iter().rev());
        } else if kind.is_socket() {
            // Sockets cannot be archived and mean nothing in an image.
            continue;
        } else if let Some(first) = hard_link_target(&mut first_names, &meta, &rel) {
            let mut header = tar::Header::new_gnu();
            header.set_metadata(&meta);
            header.set_entry_type(tar::EntryType::Link);
            header.set_size(0);
            builder.append_link(&mut header, &rel, first)?;
        } else {
            builder.append_path_with_name(&full, &rel)?;
        }
    }
    builder.into_inner()?.flush()
}

/// For the second and later names of a hard-linked regular file, the name it was archived under.
fn hard_link_target(
    first_names: &mut HashMap<(u64, u64), PathBuf>,
    meta: &std::fs::Metadata,
    rel: &Path,
) -> Option<PathBuf> {
    if !meta.file_type().is_file() || meta.nlink() < 2 {
        return None;
    }
    match first_names.entry((meta.dev(), meta.ino())) {
        Entry::Occupied(first) => Some(first.get().clone()),
        Entry::Vacant(slot) => {
            slot.insert(rel.to_path_buf());
            None
        }
    }
}

fn keeps_dir_empty(rel: &Path) -> bool {
    EMPTIED_DIRS.iter().any(|d| rel == Path::new(d))
}

fn is_excluded_file(rel: &Path) -> bool {
    rel.parent() == Some(Path::new(PACKAGE_CACHE))
        && rel.extension().is_some_and(|ext| ext == "deb")
}

/// `Write` into the channel in `CHUNK`-sized pieces; blocks when the uploader is behind.
struct ChannelWriter {
    tx: mpsc::Sender<io::Result<Bytes>>,
    buf: Vec<u8>,
    sent: Arc<AtomicU64>,
}

impl ChannelWriter {
    fn send_buffered(&mut self) -> io::Result<()> {
        if self.buf.is_empty() {
            return Ok(());
        }
        let chunk = std::mem::replace(&mut self.buf, Vec::with_capacity(CHUNK));
        let len = chunk.len() as u64;
        self.tx
            .blocking_send(Ok(Bytes::from(chunk)))
            .map_err(|_| io::Error::new(io::ErrorKind::BrokenPipe, "the upload stopped"))?;
        self.sent.fetch_add(len, Ordering::Relaxed);
        Ok(())
    }
}

impl Write for ChannelWriter {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        self.buf.extend_from_slice(data);
        if self.buf.len() >= CHUNK {
            self.send_buffered()?;
        }
        Ok(data.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.send_buffered()
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use futures_util::StreamExt;

    use super::*;

    #[tokio::test]
    async fn streams_the_tree_without_caches_docs_or_kernel_dirs() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        for d in [
            "etc",
            "proc/1",
            "dev",
            "usr/share/doc/python3",
            "usr/share/man/man1",
            "usr/share/locale/de",
            "usr/share/zoneinfo",
            "var/lib/apt/lists/partial",
            "var/cache/apt/archives/partial",
        ] {
            std::fs::create_dir_all(root.join(d)).unwrap();
        }
        for f in [
            "etc/os-release",
            "proc/1/status",
            "dev/null-ish",
            "usr/share/doc/python3/copyright",
            "usr/share/man/man1/ls.1.gz",
            "usr/share/zoneinfo/UTC",
            "var/lib/apt/lists/deb.debian.org_Packages",
            "var/cache/apt/archives/python3_3.11.deb",
            "var/cache/apt/archives/lock",
        ] {
            std::fs::write(root.join(f), b"x").unwrap();
        }
        std::os::unix::fs::symlink("os-release", root.join("etc/link")).unwrap();
        std::fs::hard_link(root.join("etc/os-release"), root.join("etc/z-hardlink")).unwrap();

        let upload = stream_tar(root.to_path_buf());
        let chunks: Vec<io::Result<Bytes>> = upload.body.collect().await;
        upload.task.await.unwrap().unwrap();
        let bytes: Vec<u8> = chunks
            .into_iter()
            .flat_map(|c| c.unwrap().to_vec())
            .collect();
        assert_eq!(upload.sent.load(Ordering::Relaxed), bytes.len() as u64);

        let mut archive = tar::Archive::new(bytes.as_slice());
        let mut names = Vec::new();
        for entry in archive.entries().unwrap() {
            let entry = entry.unwrap();
            let name = entry.path().unwrap().to_string_lossy().into_owned();
            if name == "etc/z-hardlink" {
                assert_eq!(entry.header().entry_type(), tar::EntryType::Link);
                let target = entry.link_name().unwrap().unwrap();
                assert_eq!(target.to_str(), Some("etc/os-release"));
            }
            names.push(name.trim_end_matches('/').to_owned());
        }
        names.sort();
        let expected = [
            "dev",
            "etc",
            "etc/link",
            "etc/os-release",
            "etc/z-hardlink",
            "proc",
            "usr",
            "usr/share",
            "usr/share/doc",
            "usr/share/locale",
            "usr/share/man",
            "usr/share/zoneinfo",
            "usr/share/zoneinfo/UTC",
            "var",
            "var/cache",
            "var/cache/apt",
            "var/cache/apt/archives",
            "var/cache/apt/archives/lock",
            "var/cache/apt/archives/partial",
            "var/lib",
            "var/lib/apt",
            "var/lib/apt/lists",
        ];
        assert_eq!(names, expected);
    }

    #[tokio::test]
    async fn a_missing_tree_ends_the_stream_with_an_error() {
        let upload = stream_tar(PathBuf::from("/nonexistent/ironclaw-rootfs"));
        let chunks: Vec<io::Result<Bytes>> = upload.body.collect().await;
        assert!(chunks.last().is_some_and(|c| c.is_err()));
        assert!(upload.task.await.unwrap().is_err());
    }
}
