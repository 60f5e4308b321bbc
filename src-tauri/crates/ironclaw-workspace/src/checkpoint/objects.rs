//! The contents of files as they were, each kept once by its SHA-256.
//!
//! An object is a copy written by IronClaw into its own data folder, never a link to a
//! workspace file: no write the sandboxed code makes, in place or not, can reach it. The copy is
//! hashed as it is made, from the same descriptor, so what is stored is what was read.

use std::fmt;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use sha2::{Digest, Sha256};

use super::CheckpointError;
use crate::sparse;

/// The SHA-256 of a file's contents.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Hash([u8; 32]);

impl Hash {
    /// Stands for contents that were never read (a put-back's record of what it replaced):
    /// no object has it, as no input of SHA-256 is known to hash to it.
    pub(super) const UNREAD: Hash = Hash([0; 32]);

    pub fn of(bytes: &[u8]) -> Hash {
        Hash(Sha256::digest(bytes).into())
    }
}

impl fmt::Display for Hash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&hex::encode(self.0))
    }
}

impl fmt::Debug for Hash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Hash({})", &hex::encode(self.0)[..12])
    }
}

impl FromStr for Hash {
    type Err = hex::FromHexError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let mut out = [0u8; 32];
        hex::decode_to_slice(s, &mut out)?;
        Ok(Hash(out))
    }
}

/// `<dir>/<first two hex digits>/<the rest>`, written through a temporary file and a rename.
pub struct Objects {
    dir: PathBuf,
    /// Bytes stored (on the disk: holes are not counted), kept up to date by `commit` and
    /// `remove_unreferenced`.
    total: std::sync::atomic::AtomicU64,
    /// Copies written but not yet in place: (temporary file, final path, size).
    pending: std::sync::Mutex<Vec<(PathBuf, PathBuf, u64)>>,
}

/// A copy made by [`Objects::put`]: its temporary file is removed unless it is kept.
pub struct Copy {
    tmp: Option<PathBuf>,
    dest: PathBuf,
    pub hash: Hash,
    pub size: u64,
    /// Bytes written for it (none when the store had it already).
    pub written: u64,
}

impl Copy {
    fn discard(&mut self) {
        if let Some(tmp) = self.tmp.take() {
            let _ = std::fs::remove_file(tmp);
        }
        self.written = 0;
    }
}

impl Drop for Copy {
    fn drop(&mut self) {
        self.discard();
    }
}

impl Objects {
    pub fn open(dir: PathBuf) -> Result<Objects, CheckpointError> {
        std::fs::create_dir_all(dir.join("tmp")).map_err(|e| CheckpointError::io(&dir, e))?;
        let total: u64 = stored(&dir).iter().map(|(_, size)| size).sum();
        Ok(Objects {
            dir,
            total: total.into(),
            pending: std::sync::Mutex::default(),
        })
    }

    /// Bytes stored.
    pub fn total(&self) -> u64 {
        self.total.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Deletes every object `keep` does not name; returns the bytes freed.
    pub fn remove_unreferenced(&self, keep: &std::collections::HashSet<Hash>) -> u64 {
        let mut freed = 0;
        for (path, size) in stored(&self.dir) {
            let name = path
                .parent()
                .and_then(|p| p.file_name())
                .zip(path.file_name())
                .map(|(a, b)| format!("{}{}", a.to_string_lossy(), b.to_string_lossy()));
            let Some(hash) = name.and_then(|n| n.parse::<Hash>().ok()) else {
                continue;
            };
            if !keep.contains(&hash) && std::fs::remove_file(&path).is_ok() {
                freed += size;
            }
        }
        self.total.fetch_sub(
            freed.min(self.total()),
            std::sync::atomic::Ordering::Relaxed,
        );
        freed
    }

    pub fn path(&self, hash: &Hash) -> PathBuf {
        let hex = hash.to_string();
        self.dir.join(&hex[..2]).join(&hex[2..])
    }

    /// Copies the first `size` bytes of `file` into the store (holes stay holes, see
    /// [`crate::sparse`]), writing at most `allowed` bytes, and returns the copy, which the
    /// caller keeps with [`Objects::keep`] once it trusts it; a copy dropped unkept leaves
    /// nothing behind. A file already stored costs the read alone.
    pub fn put(&self, file: &File, size: u64, allowed: u64) -> Result<Copy, CheckpointError> {
        let tmp_path = self.dir.join("tmp").join(uuid::Uuid::now_v7().to_string());
        let tmp = File::create(&tmp_path).map_err(|e| CheckpointError::io(&tmp_path, e))?;
        let mut copy = Copy {
            tmp: Some(tmp_path),
            dest: PathBuf::new(),
            hash: Hash([0; 32]),
            size: 0,
            written: 0,
        };
        let copied = sparse::copy(file, &tmp, size, allowed, true).map_err(|e| match e {
            sparse::CopyFailed::OverAllowance { .. } => CheckpointError::OverCap {
                needed: allowed.saturating_add(1),
            },
            sparse::CopyFailed::Io(e) => {
                CheckpointError::io(copy.tmp.as_deref().unwrap_or(&self.dir), e)
            }
        })?;
        copy.hash = Hash(copied.hash.unwrap_or_default());
        copy.size = copied.size;
        copy.written = copied.written;
        copy.dest = self.path(&copy.hash);
        if copy.dest.is_file() {
            copy.discard();
        }
        Ok(copy)
    }

    /// Keeps a copy `put` made: put in place by `commit`, all at once (one sync for a whole
    /// scan, not one per file).
    pub fn keep(&self, mut copy: Copy) {
        if let Some(tmp) = copy.tmp.take() {
            self.pending
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .push((tmp, copy.dest.clone(), copy.written));
        }
    }

    /// Makes the copies `put` wrote durable and puts them in place. Called before any record
    /// names them: a crash must not leave a record whose bytes never reached the disk, nor an
    /// object in place whose bytes did not (a later `put` would trust it). So: the data is
    /// synced, then renamed into place, then the names are synced.
    pub fn commit(&self) -> Result<(), CheckpointError> {
        const SYNC_EACH_UP_TO: usize = 16;
        let pending = std::mem::take(&mut *self.pending.lock().unwrap_or_else(|e| e.into_inner()));
        if pending.is_empty() {
            return Ok(());
        }
        // `syncfs` flushes the whole filesystem (the workspace's own fresh writes too): one
        // call for many copies, but for a few it costs more than syncing each.
        let each = pending.len() <= SYNC_EACH_UP_TO;
        let sync_all = || -> Result<(), CheckpointError> {
            let dir =
                std::fs::File::open(&self.dir).map_err(|e| CheckpointError::io(&self.dir, e))?;
            nix::unistd::syncfs(&dir).map_err(|e| CheckpointError::io(&self.dir, e.into()))
        };
        let sync_one = |path: &Path| -> Result<(), CheckpointError> {
            std::fs::File::open(path)
                .and_then(|f| f.sync_all())
                .map_err(|e| CheckpointError::io(path, e))
        };
        if each {
            for (tmp, _, _) in &pending {
                sync_one(tmp)?;
            }
        } else {
            sync_all()?;
        }
        let mut folders = std::collections::BTreeSet::new();
        for (tmp, dest, size) in pending {
            if dest.is_file() {
                let _ = std::fs::remove_file(&tmp);
                continue;
            }
            if let Some(parent) = dest.parent() {
                std::fs::create_dir_all(parent).map_err(|e| CheckpointError::io(parent, e))?;
                folders.insert(parent.to_owned());
            }
            std::fs::rename(&tmp, &dest).map_err(|e| CheckpointError::io(&dest, e))?;
            self.total
                .fetch_add(size, std::sync::atomic::Ordering::Relaxed);
        }
        if !each {
            return sync_all();
        }
        // The new names, and any new shard folder's name in the store's own folder.
        folders.insert(self.dir.clone());
        for folder in &folders {
            sync_one(folder)?;
        }
        Ok(())
    }

    /// Drops copies written for a scan that failed.
    pub fn abandon(&self) {
        for (tmp, _, _) in
            std::mem::take(&mut *self.pending.lock().unwrap_or_else(|e| e.into_inner()))
        {
            let _ = std::fs::remove_file(tmp);
        }
    }

    /// Opens a stored object for reading.
    pub fn open_object(&self, hash: &Hash) -> Result<File, CheckpointError> {
        let path = self.path(hash);
        File::open(&path).map_err(|e| CheckpointError::io(&path, e))
    }

    /// Removes objects left half-written by a crash.
    pub fn clean_tmp(&self) {
        if let Ok(entries) = std::fs::read_dir(self.dir.join("tmp")) {
            for e in entries.flatten() {
                let _ = std::fs::remove_file(e.path());
            }
        }
    }
}

/// Bytes of every object stored in `dir`.
pub fn stored_bytes(dir: &std::path::Path) -> u64 {
    stored(dir).iter().map(|(_, size)| size).sum()
}

/// Every stored object's path and size.
fn stored(dir: &std::path::Path) -> Vec<(PathBuf, u64)> {
    let mut out = Vec::new();
    let Ok(shards) = std::fs::read_dir(dir) else {
        return out;
    };
    for shard in shards.flatten() {
        if shard.file_name() == "tmp" {
            continue;
        }
        if let Ok(files) = std::fs::read_dir(shard.path()) {
            for f in files.flatten() {
                // What an object takes on the disk: a sparse one only its data.
                if let Ok(meta) = f.metadata() {
                    use std::os::unix::fs::MetadataExt;
                    out.push((f.path(), meta.len().min(meta.blocks().saturating_mul(512))));
                }
            }
        }
    }
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn a_stored_copy_is_independent_of_the_file_it_came_from() {
        let dir = tempfile::tempdir().unwrap();
        let objects = Objects::open(dir.path().join("objects")).unwrap();
        let source = dir.path().join("data.txt");
        std::fs::write(&source, b"before").unwrap();
        let copy = objects
            .put(&File::open(&source).unwrap(), 6, u64::MAX)
            .unwrap();
        let (hash, size) = (copy.hash, copy.size);
        objects.keep(copy);
        assert_eq!((hash, size), (Hash::of(b"before"), 6));
        assert!(
            !objects.path(&hash).exists(),
            "not in place before the commit"
        );
        objects.commit().unwrap();
        // Rewritten in place, as code in the sandbox could: the object keeps the old bytes.
        std::fs::OpenOptions::new()
            .write(true)
            .open(&source)
            .unwrap()
            .write_all(b"AFTER!")
            .unwrap();
        assert_eq!(std::fs::read(objects.path(&hash)).unwrap(), b"before");
        // Stored once.
        let again = objects.put(
            &File::open(dir.path().join("data.txt")).unwrap(),
            6,
            u64::MAX,
        );
        let again = again.unwrap();
        assert_eq!(again.hash, Hash::of(b"AFTER!"));
        objects.keep(again);
        objects.commit().unwrap();
        assert_eq!(
            std::fs::read_dir(dir.path().join("objects/tmp"))
                .unwrap()
                .count(),
            0
        );
        assert_eq!(hash.to_string().parse::<Hash>().unwrap(), hash);
    }

    #[test]
    fn a_copy_not_kept_leaves_nothing_and_a_sparse_one_costs_its_data() {
        let dir = tempfile::tempdir().unwrap();
        let objects = Objects::open(dir.path().join("objects")).unwrap();
        let source = dir.path().join("sparse");
        let f = File::create(&source).unwrap();
        f.set_len(256 << 20).unwrap();
        std::os::unix::fs::FileExt::write_all_at(&f, b"data", 100 << 20).unwrap();
        drop(f);
        let tmp_count = || {
            std::fs::read_dir(dir.path().join("objects/tmp"))
                .unwrap()
                .count()
        };
        // A try that is not trusted (the file changed while it was copied) is dropped.
        let copy = objects
            .put(&File::open(&source).unwrap(), 256 << 20, u64::MAX)
            .unwrap();
        assert_eq!(tmp_count(), 1);
        drop(copy);
        assert_eq!(tmp_count(), 0);
        // Over the allowance: nothing stays either.
        assert!(matches!(
            objects.put(&File::open(&source).unwrap(), 256 << 20, 2),
            Err(CheckpointError::OverCap { .. })
        ));
        assert_eq!(tmp_count(), 0);
        let copy = objects
            .put(&File::open(&source).unwrap(), 256 << 20, u64::MAX)
            .unwrap();
        assert!(copy.written <= 8192, "{}", copy.written);
        objects.keep(copy);
        objects.commit().unwrap();
        // Counted as what it takes on the disk, also when the store is opened again.
        assert!(objects.total() <= 8192, "{}", objects.total());
        assert!(stored_bytes(&dir.path().join("objects")) <= 8192);
    }
}
