//! What a sandbox may not see of the host in `/proc` and `/sys` (issue 10, item 5): every
//! masked path that holds something on the host reads as empty inside, by every route to it.

use std::collections::BTreeMap;

use ironclaw_sandbox::container::masks;
use ironclaw_tests::*;
use serde_json::Value;

/// Paths this test insists on whatever the list in `masks.rs` says: the host's boot line,
/// kernel build and layout, and the per-boot host id.
const MUST_HIDE: &[&str] = &[
    "/proc/cmdline",
    "/proc/config.gz",
    "/proc/kallsyms",
    "/proc/sys/kernel/random/boot_id",
    "/sys/kernel/notes",
    "/sys/kernel/vmcoreinfo",
    "/sys/kernel/btf",
];

/// For each path: `{"kind": "file"|"dir", "size": bytes read or entries listed}` or
/// `{"error": "EACCES"}`.
const READ_ALL: &str = r#"
import errno, json, os, sys
def look(p):
    try:
        if os.path.isdir(p):
            return {'kind': 'dir', 'size': len(os.listdir(p))}
        with open(p, 'rb') as f:
            return {'kind': 'file', 'size': len(f.read(65536))}
    except OSError as e:
        return {'error': errno.errorcode.get(e.errno, str(e.errno))}
print(json.dumps({p: look(p) for p in json.loads(sys.stdin.read())}))
"#;

/// What the host (this test process) sees at `path`: `Some(true)` when there is something.
fn host_has_content(path: &str) -> Option<bool> {
    let p = std::path::Path::new(path);
    if p.is_dir() {
        return Some(std::fs::read_dir(p).ok()?.next().is_some());
    }
    use std::io::Read;
    let mut buf = [0u8; 4096];
    let n = std::fs::File::open(p).ok()?.read(&mut buf).ok()?;
    Some(n > 0)
}

#[tokio::test]
async fn host_information_in_proc_and_sys_reads_as_empty_in_the_sandbox_by_any_route() {
    let env = TestEnv::new().await;
    let mut paths: Vec<String> = masks::masked_paths();
    for p in MUST_HIDE {
        if !paths.iter().any(|q| q == p) {
            paths.push(p.to_string());
        }
    }
    // Only paths that hold something on the host prove anything.
    let hiding: Vec<String> = paths
        .into_iter()
        .filter(|p| host_has_content(p) == Some(true))
        .collect();
    assert!(
        hiding.iter().any(|p| p == "/proc/cmdline"),
        "the host's /proc/cmdline should have content: {hiding:?}"
    );
    // The same files by other routes: through the root link of our own process and of the
    // container's first process (the fix names only the plain paths).
    let mut asked: Vec<String> = hiding.clone();
    for p in &hiding {
        asked.push(format!("/proc/self/root{p}"));
        asked.push(format!("/proc/1/root{p}"));
    }
    // A control the reader must see, so "empty" is not an artefact of a broken reader.
    asked.push("/proc/version".to_string());
    let input = serde_json::to_string(&asked).expect("json");
    let code = format!(
        "cat > /tmp/read.py <<'EOF'\n{READ_ALL}\nEOF\necho '{input}' | python3 /tmp/read.py"
    );
    let seen: BTreeMap<String, Value> =
        serde_json::from_str(&ok(&sh(&env, "s", &code).await)).expect("json");
    assert!(
        seen["/proc/version"]["size"].as_u64().unwrap_or(0) > 0,
        "the reader saw nothing even in /proc/version: {seen:?}"
    );
    let mut leaks = Vec::new();
    for (path, got) in &seen {
        if path == "/proc/version" {
            continue;
        }
        let hidden = got["size"].as_u64() == Some(0)
            || matches!(got["error"].as_str(), Some("EACCES" | "EPERM"));
        if !hidden {
            leaks.push(format!("{path}: {got}"));
        }
    }
    assert!(leaks.is_empty(), "visible in the sandbox: {leaks:#?}");
    eprintln!("masked with content on this host: {hiding:?}");
}
