//! What depends only on files compiled into IronClaw is worked out here, once, rather than at
//! the start of every process: the seccomp profile (Docker's default with IronClaw's rules),
//! the sandbox image's content hash, and the shipped policy defaults as JSON. A whole
//! `ironclaw exec` is a few milliseconds, and these were an eighth of its CPU time (`perf stat`:
//! 7.7 ms before, 6.7 after).
//!
//! The code that does it is the library's own (`#[path]` below), and unit tests compare each
//! result with what the library computes at run time.

use std::path::{Path, PathBuf};

#[allow(dead_code)]
#[path = "src/container/seccomp/rules.rs"]
mod seccomp_rules;

#[path = "src/image/digest.rs"]
mod digest;

type Failure = Box<dyn std::error::Error>;

fn main() -> Result<(), Failure> {
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR")?);
    let out = PathBuf::from(std::env::var("OUT_DIR")?);
    for watched in [
        "src/container/seccomp/rules.rs",
        "src/image/digest.rs",
        "seccomp/docker-default.json",
        "image",
        "../../../config/sandbox.yaml",
    ] {
        println!("cargo:rerun-if-changed={watched}");
    }

    let profile: serde_json::Value =
        serde_json::from_str(&seccomp_rules::build(seccomp_rules::DOCKER_DEFAULT))?;
    std::fs::write(out.join("seccomp-profile.json"), canonical(&profile)?)?;
    std::fs::write(out.join("image-hash"), image_hash(&manifest.join("image"))?)?;
    let defaults = std::fs::read_to_string(manifest.join("../../../config/sandbox.yaml"))?;
    std::fs::write(out.join("default-policy.json"), policy_json(&defaults)?)?;
    Ok(())
}

/// Every regular file of the image folder: the library embeds exactly these (a unit test
/// fails when its list and the folder differ).
fn image_hash(dir: &Path) -> Result<String, Failure> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        if entry.file_type()?.is_file() {
            let name = entry
                .file_name()
                .into_string()
                .map_err(|n| format!("{n:?}"))?;
            files.push((name, std::fs::read(entry.path())?));
        }
    }
    let borrowed: Vec<(&str, &[u8])> = files
        .iter()
        .map(|(name, bytes)| (name.as_str(), bytes.as_slice()))
        .collect();
    Ok(digest::content_hash(&borrowed))
}

/// Compact JSON with every object's keys in byte order, whatever order serde_json keeps (its
/// `preserve_order` feature is unified per build, so the app and the CLI could otherwise send
/// different texts). The text names the confinement (`ironclaw.confinement`), so it is also the
/// text the binaries before this one sent: a container they made is kept, not recreated.
fn canonical(value: &serde_json::Value) -> Result<String, Failure> {
    use serde_json::Value;
    Ok(match value {
        Value::Object(map) => {
            let mut entries: Vec<_> = map.iter().collect();
            entries.sort_by(|a, b| a.0.cmp(b.0));
            let mut parts = Vec::with_capacity(entries.len());
            for (key, value) in entries {
                parts.push(format!(
                    "{}:{}",
                    serde_json::to_string(key)?,
                    canonical(value)?
                ));
            }
            format!("{{{}}}", parts.join(","))
        }
        Value::Array(items) => {
            let parts: Result<Vec<_>, _> = items.iter().map(canonical).collect();
            format!("[{}]", parts?.join(","))
        }
        scalar => serde_json::to_string(scalar)?,
    })
}

/// As the policy reader reads a document (merge keys applied), written as JSON.
fn policy_json(yaml: &str) -> Result<String, Failure> {
    let mut value: serde_yaml_ng::Value = serde_yaml_ng::from_str(yaml)?;
    value.apply_merge()?;
    Ok(serde_json::to_string(&value)?)
}
