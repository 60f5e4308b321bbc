//! "Always allow" answers, kept in `<config dir>/network.yaml`.
//!
//! A separate file rather than an edit of the user's `sandbox.yaml`: that one is written by
//! hand, with comments and layout a YAML round trip would destroy. This one is IronClaw's; it
//! is rewritten whole (write to a temporary file, then rename, so a crash never leaves half a
//! file) and people may still edit it.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::allowlist::Rule;
use crate::error::{Error, Result};
use crate::paths::Paths;

const HEADER: &str = "\
# Hosts you chose to always allow when IronClaw asked (allowlist network mode).
# IronClaw adds to this file; you may edit it. Your own list can also live in
# sandbox.yaml under network.allowlist. Same syntax: host, *.domain, host:port.
";

#[derive(Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct File {
    #[serde(default)]
    allowlist: Vec<String>,
}

pub fn path(paths: &Paths) -> PathBuf {
    paths.config_dir.join("network.yaml")
}

/// The rules in the file; a missing file is an empty list.
pub fn load(file: &Path) -> Result<Vec<Rule>> {
    let text = match std::fs::read_to_string(file) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(Error::io("cannot read", file, e)),
    };
    let parsed: Option<File> = serde_yaml_ng::from_str(&text).map_err(|e| Error::Config {
        file: file.to_path_buf(),
        field: "(YAML)".into(),
        message: format!("{e}; expected `allowlist:` followed by a list of hosts"),
    })?;
    parsed
        .unwrap_or_default()
        .allowlist
        .iter()
        .enumerate()
        .map(|(i, entry)| {
            entry.parse::<Rule>().map_err(|message| Error::Config {
                file: file.to_path_buf(),
                field: format!("allowlist.{i}"),
                message,
            })
        })
        .collect()
}

/// Adds `rule` to the file unless it is there already.
pub fn add(file: &Path, rule: &Rule) -> Result<()> {
    let mut rules = load(file)?;
    if rules.contains(rule) {
        return Ok(());
    }
    rules.push(rule.clone());
    let body = serde_yaml_ng::to_string(&File {
        allowlist: rules.iter().map(ToString::to_string).collect(),
    })
    .map_err(|e| Error::Protocol(format!("cannot write the allowlist: {e}")))?;
    if let Some(dir) = file.parent() {
        crate::paths::ensure_dir(dir)?;
    }
    let tmp = file.with_extension("yaml.tmp");
    std::fs::write(&tmp, format!("{HEADER}{body}"))
        .map_err(|e| Error::io("cannot write", &tmp, e))?;
    std::fs::rename(&tmp, file).map_err(|e| Error::io("cannot replace", file, e))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn always_grants_round_trip_and_are_not_duplicated() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("cfg/network.yaml");
        assert!(load(&file).unwrap().is_empty());
        let a: Rule = "*.example.internal:8443".parse().unwrap();
        add(&file, &a).unwrap();
        add(&file, &a).unwrap();
        add(&file, &"pkg.example.internal".parse().unwrap()).unwrap();
        let text = std::fs::read_to_string(&file).unwrap();
        assert!(text.starts_with("# Hosts you chose"), "{text}");
        let rules: Vec<String> = load(&file)
            .unwrap()
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(rules, ["*.example.internal:8443", "pkg.example.internal"]);
    }

    #[test]
    fn a_bad_entry_names_the_file_and_the_index() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("network.yaml");
        std::fs::write(&file, "allowlist:\n  - ok.example.internal\n  - '*'\n").unwrap();
        let e = load(&file).unwrap_err().to_string();
        assert!(e.contains("network.yaml: allowlist.1:"), "{e}");
    }
}
