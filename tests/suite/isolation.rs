//! What code inside the sandbox can and cannot see or touch: identity, filesystem, secrets,
//! the Docker socket, capabilities, network.

use std::collections::HashMap;
use std::os::unix::fs::MetadataExt;

use ironclaw_sandbox::session::{ROOT_SUBSTITUTE_GID, ROOT_SUBSTITUTE_UID};
use ironclaw_tests::*;
use pretty_assertions::assert_eq;

#[tokio::test]
async fn code_runs_as_an_unprivileged_named_user() {
    let env = TestEnv::new().await;
    let out = ok(&sh(&env, "s", "id -u; id -g; id -un; whoami").await);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 4, "{out}");
    let uid: u32 = lines[0].parse().expect("numeric uid");
    let gid: u32 = lines[1].parse().expect("numeric gid");
    assert_ne!(uid, 0, "code must never run as root");
    assert_ne!(gid, 0, "code must never run with group root");
    let user = env.sandbox.user();
    assert_eq!((uid, gid), (user.uid, user.gid));
    assert!(!lines[2].is_empty() && lines[2] == lines[3], "{out}");
    assert_ne!(lines[2], "root");

    // The Python interpreter is the same identity.
    let py_ids = ok(&py(
        &env,
        "s",
        "import os; print(os.getuid(), os.geteuid(), os.getgid())",
    )
    .await);
    assert_eq!(py_ids, format!("{uid} {uid} {gid}"));
}

#[tokio::test]
async fn root_filesystem_is_the_containers_not_the_hosts() {
    let env = TestEnv::new().await;
    // Markers on the host's / and /root (where we may write them) must not show up inside.
    let mut markers = Vec::new();
    for dir in ["/", "/root"] {
        let path = std::path::Path::new(dir).join(format!(
            "ironclaw-e2e-marker-{}-{}",
            std::process::id(),
            env.instance
        ));
        if std::fs::write(&path, "host").is_ok() {
            markers.push(RemoveOnDrop(path));
        }
    }
    // This very source tree exists on the host; it must not exist inside.
    let mut probes: Vec<String> = markers.iter().map(|m| m.0.display().to_string()).collect();
    probes.push(concat!(env!("CARGO_MANIFEST_DIR"), "/Cargo.toml").to_string());
    let code =
        format!("import os, json\nprint(json.dumps({{p: os.path.exists(p) for p in {probes:?}}}))");
    let seen: HashMap<String, bool> =
        serde_json::from_str(&ok(&py(&env, "s", &code).await)).expect("json");
    assert_eq!(seen.len(), probes.len());
    for (path, exists) in &seen {
        assert!(!exists, "host path {path} is visible inside the sandbox");
    }
    assert!(
        std::path::Path::new(&probes[probes.len() - 1]).exists(),
        "the probe must exist on the host for this test to mean anything"
    );

    let out = ok(&sh(&env, "s", "hostname; cat /etc/hostname").await);
    assert_eq!(out, "sandbox\nsandbox");
}

#[tokio::test]
async fn host_files_outside_the_workspace_are_invisible() {
    let env = TestEnv::new().await;
    ok(&py(&env, "s", "print('warm')").await);
    // A file next to the data dir, and the data dir's own session records: both host-only.
    let secret = env.root().join("host-secret.txt");
    std::fs::write(&secret, "top secret").expect("write secret");
    let sessions_dir = env.paths.sessions_dir();
    assert!(sessions_dir.is_dir());
    let code = format!(
        "import os\nprint(os.path.exists({:?}), os.path.exists({:?}))",
        secret.display().to_string(),
        sessions_dir.display().to_string()
    );
    assert_eq!(ok(&py(&env, "s", &code).await), "False False");
    // The workspace itself is the one host folder that is shared.
    std::fs::write(env.workspace("s").join("shared.txt"), "visible").expect("write");
    assert_eq!(
        ok(&py(&env, "s", "print(open('/workspace/shared.txt').read())").await),
        "visible"
    );
}

#[tokio::test]
async fn etc_shadow_is_not_readable() {
    let env = TestEnv::new().await;
    // The image has one (Debian's, root-only): a missing file would prove nothing.
    let code = r#"
import os
print(os.stat("/etc/shadow").st_uid)
try:
    data = open("/etc/shadow").read()
    print("READABLE", len(data))
except PermissionError:
    print("EACCES")
"#;
    let out = ok(&py(&env, "s", code).await);
    assert_eq!(out, "0\nEACCES", "/etc/shadow");
}

#[tokio::test]
async fn docker_socket_is_not_reachable() {
    let env = TestEnv::new().await;
    // The engine's own socket, which this test process uses: absent inside means something
    // only because it exists on the host.
    let engine = std::env::var("DOCKER_HOST")
        .ok()
        .and_then(|h| h.strip_prefix("unix://").map(str::to_string))
        .unwrap_or_else(|| "/var/run/docker.sock".to_string());
    let mut probes = vec![
        "/var/run/docker.sock".to_string(),
        "/run/docker.sock".to_string(),
        "/var/run/docker".to_string(),
        "/run/containerd/containerd.sock".to_string(),
    ];
    if !probes.contains(&engine) {
        probes.push(engine.clone());
    }
    if std::env::var("DOCKER_HOST").map_or(true, |h| h.starts_with("unix://")) {
        assert!(
            std::path::Path::new(&engine).exists(),
            "the engine's socket {engine} is not on the host: the check below would prove nothing"
        );
    }
    let code = format!("import os\nfor p in {probes:?}:\n    print(p, os.path.lexists(p))");
    let out = ok(&py(&env, "s", &code).await);
    for line in out.lines() {
        assert!(
            line.ends_with(" False"),
            "present inside the sandbox: {line}"
        );
    }
    assert_eq!(out.lines().count(), probes.len());
    // And no socket whose name says docker anywhere under /run or /var/run.
    let found = ok(&sh(
        &env,
        "s",
        "find /run /var/run -xdev -type s 2>/dev/null | grep -i docker || true",
    )
    .await);
    assert_eq!(found, "");
}

fn status_fields(text: &str) -> HashMap<String, String> {
    text.lines()
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
        .collect()
}

#[tokio::test]
async fn no_capabilities_and_no_new_privileges() {
    let env = TestEnv::new().await;
    // The persistent Python interpreter itself, and a process the shell starts.
    let from_python = py(&env, "s", "print(open('/proc/self/status').read())").await;
    let from_shell = sh(&env, "s", "cat /proc/self/status").await;
    for (who, r) in [("python", from_python), ("shell", from_shell)] {
        let f = status_fields(&ok(&r));
        for cap in ["CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"] {
            assert_eq!(
                f.get(cap).map(String::as_str),
                Some("0000000000000000"),
                "{who}: {cap}"
            );
        }
        assert_eq!(
            f.get("NoNewPrivs").map(String::as_str),
            Some("1"),
            "{who}: NoNewPrivs"
        );
        // 2 = seccomp filter mode: Docker's default profile is in force.
        assert_eq!(
            f.get("Seccomp").map(String::as_str),
            Some("2"),
            "{who}: Seccomp"
        );
    }
}

#[tokio::test]
async fn only_workspace_and_tmpfs_are_writable() {
    let env = TestEnv::new().await;
    let code = r#"
import errno, json, os
def attempt(p):
    try:
        with open(p, "w") as f:
            f.write("x")
        os.remove(p)
        return "ok"
    except OSError as e:
        return errno.errorcode.get(e.errno, str(e.errno))
paths = ["/etc/x", "/usr/x", "/opt/x", "/var/tmp/x", "/x", "/tmp/x", os.path.expanduser("~/x"), "/workspace/x"]
root_ro = any(l.split()[1] == "/" and "ro" in l.split()[3].split(",") for l in open("/proc/mounts"))
print(json.dumps({"home": os.path.expanduser("~"), "root_ro": root_ro, "results": {p: attempt(p) for p in paths}}))
"#;
    let v: serde_json::Value = serde_json::from_str(&ok(&py(&env, "s", code).await)).expect("json");
    assert_eq!(v["home"], "/home/sandbox");
    assert_eq!(v["root_ro"], true, "/ must be mounted read-only");
    let results = v["results"].as_object().expect("results");
    // EROFS, not EACCES: refused by the read-only mount even where permissions would allow it
    // (/var/tmp is world-writable in the image).
    for p in ["/etc/x", "/usr/x", "/opt/x", "/var/tmp/x", "/x"] {
        assert_eq!(results[p], "EROFS", "{p}");
    }
    for p in ["/tmp/x", "/home/sandbox/x", "/workspace/x"] {
        assert_eq!(results[p], "ok", "{p}");
    }
    // The same from the shell.
    let out = sh(
        &env,
        "s",
        "touch /usr/bin/evil 2>&1; echo rc=$?; touch /tmp/fine && echo tmp-ok",
    )
    .await;
    assert!(
        out.stdout.contains("Read-only file system"),
        "{}",
        out.stdout
    );
    assert!(out.stdout.contains("tmp-ok"), "{}", out.stdout);
}

#[tokio::test]
async fn workspace_files_belong_to_the_mapped_user_on_the_host() {
    let env = TestEnv::new().await;
    ok(&py(
        &env,
        "s",
        "import os\nos.makedirs('/workspace/sub', exist_ok=True)\nopen('/workspace/sub/made.txt','w').write('hi')",
    )
    .await);
    let user = env.sandbox.user();
    if nix::unistd::geteuid().is_root() {
        assert!(user.substituted_for_root);
        assert_eq!(
            (user.uid, user.gid),
            (ROOT_SUBSTITUTE_UID, ROOT_SUBSTITUTE_GID)
        );
    }
    let ws = env.workspace("s");
    for path in [ws.join("sub/made.txt"), ws.join("sub")] {
        let meta = std::fs::metadata(&path).expect("created in the sandbox, present on the host");
        assert_eq!(
            (meta.uid(), meta.gid()),
            (user.uid, user.gid),
            "{}",
            path.display()
        );
    }
    assert_eq!(
        std::fs::read_to_string(ws.join("sub/made.txt")).expect("read"),
        "hi"
    );
}

#[tokio::test]
async fn default_profile_has_no_network() {
    let env = TestEnv::new().await;
    let code = r#"
import os, socket
try:
    socket.create_connection(("1.1.1.1", 53), timeout=2).close()
    print("CONNECTED")
except OSError as e:
    print("refused", type(e).__name__)
print(sorted(os.listdir("/sys/class/net")))
"#;
    let out = ok(&py(&env, "s", code).await);
    let lines: Vec<&str> = out.lines().collect();
    assert!(lines[0].starts_with("refused"), "{out}");
    assert_eq!(lines[1], "['lo']");
}
