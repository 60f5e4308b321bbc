//! SECURITY.md's table of adversarial, fault and bad-input tests must name every such test that
//! exists (and only those), so the document cannot drift from what CI actually runs.

use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("workspace root")
        .to_path_buf()
}

/// Names of the test functions in `file`: the first `fn` after a `#[test]`/`#[tokio::test]`.
fn test_names(file: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    let mut names = Vec::new();
    let mut armed = false;
    for line in text.lines().map(str::trim) {
        if line.starts_with("#[test]") || line.starts_with("#[tokio::test") {
            armed = true;
        } else if armed {
            let rest = line
                .strip_prefix("async fn ")
                .or_else(|| line.strip_prefix("fn "));
            if let Some(rest) = rest {
                let name: String = rest
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                names.push(name);
                armed = false;
            }
        }
    }
    names
}

fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "rs"))
        .collect();
    files.sort();
    files
}

#[test]
fn security_md_lists_every_escape_fault_and_bad_input_test_and_fuzz_target() {
    let root = root();
    let doc = std::fs::read_to_string(root.join("SECURITY.md")).expect("SECURITY.md");
    let suite = root.join("tests/suite");
    let mut files = vec![
        suite.join("escape.rs"),
        suite.join("setuid.rs"),
        suite.join("sockets.rs"),
        suite.join("confinement.rs"),
        suite.join("run_integrity.rs"),
        suite.join("spare.rs"),
        suite.join("output_channel.rs"),
        suite.join("per_uid.rs"),
    ];
    files.extend(rust_files(&suite.join("faults")));
    files.extend(rust_files(&suite.join("bad_input")));
    let mut missing = Vec::new();
    let mut count = 0;
    for file in &files {
        for name in test_names(file) {
            count += 1;
            if !doc.contains(&format!("`{name}`")) {
                missing.push(name);
            }
        }
    }
    for target in rust_files(&root.join("fuzz/fuzz_targets")) {
        let name = target
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        if !doc.contains(&format!("`{name}`")) {
            missing.push(format!("fuzz target {name}"));
        }
    }
    assert!(
        count > 40,
        "found only {count} tests: is the parser broken?"
    );
    assert!(
        missing.is_empty(),
        "SECURITY.md does not list: {missing:#?}"
    );
}
