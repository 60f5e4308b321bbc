//! The contents of files as they were, each kept once by its SHA-256.
//!
//! An object is a copy written by IronClaw into its own data folder, never a link to a
//! workspace file: no write the sandboxed code makes, in place or not, can reach it. The copy is
//! hashed as it is made, from the same descriptor, so what is stored is what was read.

use std::fmt;
use std::fs::File;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::str::FromStr;

use sha2::{Digest, Sha256};

use super::CheckpointError;

/// The SHA-256 of a file's contents.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Hash([u8; 32]);

impl Hash {
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
    /// Bytes stored, kept up to date by `commit` and `remove_unreferenced`.
    total: std::sync::atomic::AtomicU64,
    /// Copies written but not yet in place: (temporary file, final path, size).
    pending: std::sync::Mutex<Vec<(PathBuf, PathBuf, u64)>>,
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

    /// Copies everything `file` holds from its current position into the store; returns the
    /// hash and the number of bytes. A file already stored costs the read alone.
    pub fn put(&self, file: &mut File) -> Result<(Hash, u64), CheckpointError> {
        let tmp_path = self.dir.join("tmp").join(uuid::Uuid::now_v7().to_string());
        let mut tmp = File::create(&tmp_path).map_err(|e| CheckpointError::io(&tmp_path, e))?;
        let written = copy_hashing(file, &mut tmp).map_err(|e| CheckpointError::io(&tmp_path, e));
        let (hash, size) = match written {
            Ok(done) => done,
            Err(e) => {
                let _ = std::fs::remove_file(&tmp_path);
                return Err(e);
            }
        };
        let dest = self.path(&hash);
        if dest.is_file() {
            let _ = std::fs::remove_file(&tmp_path);
            return Ok((hash, size));
        }
        // Put in place by `commit`, all at once: one sync for a whole scan, not one per file.
        self.pending
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push((tmp_path, dest, size));
        Ok((hash, size))
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
                if let Ok(meta) = f.metadata() {
                    out.push((f.path(), meta.len()));
                }
            }
        }
    }
    out
}

fn copy_hashing(from: &mut File, to: &mut File) -> std::io::Result<(Hash, u64)> {
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 256 * 1024];
    let mut total = 0u64;
    loop {
        let n = match from.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        hasher.update(&buf[..n]);
        to.write_all(&buf[..n])?;
        total += n as u64;
    }
    Ok((Hash(hasher.finalize().into()), total))
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn a_stored_copy_is_independent_of_the_file_it_came_from() {
        let dir = tempfile::tempdir().unwrap();
        let objects = Objects::open(dir.path().join("objects")).unwrap();
        let source = dir.path().join("data.txt");
        std::fs::write(&source, b"before").unwrap();
        let (hash, size) = objects.put(&mut File::open(&source).unwrap()).unwrap();
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
        let again = objects.put(&mut File::open(dir.path().join("data.txt")).unwrap());
        assert_eq!(again.unwrap().0, Hash::of(b"AFTER!"));
        objects.commit().unwrap();
        assert_eq!(
            std::fs::read_dir(dir.path().join("objects/tmp"))
                .unwrap()
                .count(),
            0
        );
        assert_eq!(hash.to_string().parse::<Hash>().unwrap(), hash);
    }
}
