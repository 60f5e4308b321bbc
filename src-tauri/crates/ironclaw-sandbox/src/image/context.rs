//! The sandbox image's build context, compiled into the binary, and the content hash that names
//! the image.
//!
//! Embedding (rather than reading `image/` at run time) means an installed IronClaw can build its
//! image anywhere, and the tag always matches the code that will talk to the container. Because
//! the tag is derived from the bytes, a change to any file yields a new tag (so stale images are
//! never reused) and an unchanged tree never rebuilds.

use super::ImageSpec;

/// Repository part of the sandbox image tag; the tag part is the content hash.
pub const IMAGE_REPO: &str = "ironclaw-sandbox";

/// How many hex digits of the hash go into the tag: 64 bits is plenty to tell builds apart and
/// keeps `docker images` readable. The full hash is on the image as a label.
const TAG_HEX_LEN: usize = 16;

/// One file of `image/`: its name in the build context, and its bytes.
macro_rules! image_file {
    ($name:literal) => {
        ($name, include_bytes!(concat!("../../image/", $name)))
    };
}

/// Every file of the build context, as (path inside the context, contents). This is the one
/// list of the image's files: the Dockerfile copies every `*.py` of the context, and the hash
/// and the tar follow from here. `every_file_in_the_image_folder_is_embedded` fails when a file
/// in `image/` is missing from it.
const FILES: &[(&str, &[u8])] = &[
    image_file!("Dockerfile"),
    // The supervisor (the container's main process) and its modules.
    image_file!("supervisor.py"),
    image_file!("run_control.py"),
    image_file!("frames.py"),
    image_file!("interpreters.py"),
    image_file!("execution.py"),
    image_file!("completions.py"),
    image_file!("pipe_transfer.py"),
    image_file!("processes.py"),
    image_file!("cgroup_memory.py"),
    image_file!("cells.py"),
    image_file!("integrity.py"),
    image_file!("confinement.py"),
    image_file!("policy_filter.py"),
    image_file!("ipc_leftovers.py"),
    image_file!("write_holds.py"),
    // The persistent Python interpreter, and Docker's health check.
    image_file!("pyworker.py"),
    image_file!("health.py"),
];

/// The embedded build context.
pub(crate) fn files() -> &'static [(&'static str, &'static [u8])] {
    FILES
}

/// The tag and hash of the image this binary needs. The hash is `content_hash(FILES)`,
/// computed by `build.rs` over the same folder: hashing the whole build context at every start
/// of every `ironclaw` process would cost each one a pass over it.
pub fn spec() -> ImageSpec {
    spec_from_hash(include_str!(concat!(env!("OUT_DIR"), "/image-hash")).to_string())
}

fn spec_from_hash(hash: String) -> ImageSpec {
    ImageSpec {
        tag: format!("{IMAGE_REPO}:{}", &hash[..TAG_HEX_LEN]),
        hash,
    }
}

/// An uncompressed tar of `files`, as Docker's build endpoint wants it. Metadata is fixed
/// (mode 0644, mtime 0, root) so the archive depends only on the contents; the legacy builder
/// hashes COPY sources by content and metadata, so this also keeps its layer cache effective.
pub(crate) fn context_tar(files: &[(&str, &[u8])]) -> std::io::Result<Vec<u8>> {
    let mut builder = tar::Builder::new(Vec::new());
    for (path, bytes) in files {
        let mut header = tar::Header::new_gnu();
        header.set_entry_type(tar::EntryType::Regular);
        header.set_size(bytes.len() as u64);
        header.set_mode(0o644);
        header.set_mtime(0);
        header.set_uid(0);
        header.set_gid(0);
        header.set_cksum();
        builder.append_data(&mut header, path, *bytes)?;
    }
    builder.into_inner()
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use std::io::Read;

    use super::super::digest::content_hash;
    use super::*;

    #[test]
    fn hash_is_stable_and_order_independent() {
        let a: &[(&str, &[u8])] = &[("Dockerfile", b"FROM x"), ("a.py", b"print(1)")];
        let b: &[(&str, &[u8])] = &[("a.py", b"print(1)"), ("Dockerfile", b"FROM x")];
        assert_eq!(content_hash(a), content_hash(a));
        assert_eq!(content_hash(a), content_hash(b));
        assert_eq!(content_hash(a).len(), 64);
        // The embedded context hashes the same every time too.
        assert_eq!(spec(), spec());
    }

    #[test]
    fn the_hash_compiled_in_is_the_hash_of_the_embedded_files() {
        assert_eq!(spec().hash, content_hash(FILES));
        assert_eq!(
            spec().tag,
            format!("{IMAGE_REPO}:{}", &content_hash(FILES)[..16])
        );
    }

    #[test]
    fn hash_changes_when_any_file_changes() {
        let base = FILES.to_vec();
        let original = content_hash(&base);
        for i in 0..base.len() {
            let mut changed_bytes = base[i].1.to_vec();
            changed_bytes.push(b'\n');
            let mut changed = base.clone();
            changed[i].1 = &changed_bytes;
            assert_ne!(content_hash(&changed), original, "editing {}", base[i].0);

            let mut renamed = base.clone();
            let new_name = format!("{}.renamed", base[i].0);
            renamed[i].0 = &new_name;
            assert_ne!(content_hash(&renamed), original, "renaming {}", base[i].0);
        }
        // Shifting a byte across a file boundary must not collide.
        let x: &[(&str, &[u8])] = &[("a", b"12"), ("b", b"3")];
        let y: &[(&str, &[u8])] = &[("a", b"1"), ("b", b"23")];
        assert_ne!(content_hash(x), content_hash(y));
        // Adding a file changes it as well.
        let mut added = base.clone();
        added.push(("extra.py", b""));
        assert_ne!(content_hash(&added), original);
    }

    #[test]
    fn tag_is_repo_and_hash_prefix() {
        let s = spec();
        let (repo, tag) = s.tag.split_once(':').unwrap();
        assert_eq!(repo, IMAGE_REPO);
        assert_eq!(tag.len(), TAG_HEX_LEN);
        assert!(s.hash.starts_with(tag));
    }

    #[test]
    fn context_tar_contains_exactly_the_files() {
        let tar_bytes = context_tar(FILES).unwrap();
        let mut archive = tar::Archive::new(tar_bytes.as_slice());
        let mut seen = Vec::new();
        for entry in archive.entries().unwrap() {
            let mut entry = entry.unwrap();
            let path = entry.path().unwrap().to_string_lossy().into_owned();
            let mut contents = Vec::new();
            entry.read_to_end(&mut contents).unwrap();
            seen.push((path, contents));
        }
        let expected: Vec<(String, Vec<u8>)> = FILES
            .iter()
            .map(|(p, b)| (p.to_string(), b.to_vec()))
            .collect();
        assert_eq!(seen, expected);
        // Deterministic: the same files give the same bytes.
        assert_eq!(context_tar(FILES).unwrap(), tar_bytes);
        assert!(FILES.iter().any(|(p, _)| *p == "Dockerfile"));
    }

    #[test]
    fn every_file_in_the_image_folder_is_embedded() {
        // A module left out of FILES would be missing from the image (the Dockerfile copies
        // `*.py` of the context), and the supervisor would fail to import it at start.
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("image");
        let mut on_disk: Vec<String> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap())
            .filter(|e| e.file_type().unwrap().is_file())
            .map(|e| e.file_name().into_string().unwrap())
            .collect();
        on_disk.sort();
        let mut embedded: Vec<String> = FILES.iter().map(|(p, _)| p.to_string()).collect();
        embedded.sort();
        assert_eq!(embedded, on_disk);
        for (path, bytes) in FILES {
            assert_eq!(std::fs::read(dir.join(path)).unwrap(), *bytes, "{path}");
        }
    }
}
