//! The content hash that names the sandbox image. `build.rs` includes this file to hash the
//! image folder when IronClaw is compiled.

use sha2::{Digest, Sha256};

/// SHA-256 over every file's path and contents, in path order, each length-prefixed so that
/// no two different trees can produce the same byte stream (moving bytes from one file's end to
/// the next file's start, or renaming, changes the hash).
pub fn content_hash(files: &[(&str, &[u8])]) -> String {
    let mut sorted: Vec<&(&str, &[u8])> = files.iter().collect();
    sorted.sort_by_key(|(path, _)| *path);
    let mut hasher = Sha256::new();
    for (path, bytes) in sorted {
        hasher.update((path.len() as u64).to_le_bytes());
        hasher.update(path.as_bytes());
        hasher.update((bytes.len() as u64).to_le_bytes());
        hasher.update(bytes);
    }
    hex::encode(hasher.finalize())
}
