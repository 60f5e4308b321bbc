//! The adversarial containment suite (issue #6): hostile code, run through the normal execution
//! path (`Sandbox::exec`), tries to get out or to take the host down. Every attempt must fail,
//! and afterwards the sandbox must still answer and the host must be as it was.
//!
//! Attempts that succeed today are kept as `#[ignore = "bug: …"]` tests that assert the safe
//! behaviour, so `cargo nextest run --run-ignored all escape` shows what is still open.

use std::collections::BTreeMap;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::time::Duration;

use ironclaw_tests::escape::*;
use ironclaw_tests::*;
use pretty_assertions::assert_eq;
use tokio_util::sync::CancellationToken;

/// Cheap disk limits for the tests that fill things up.
const SMALL_DISK: &str = "\
profiles:
  standard: { timeout: 5s, tmpfs: { tmp: 16m, home: 16m }, ulimits: { nofile: 1024, fsize: 8m } }
";

/// A marker file on the host (removed on drop), named so no other run can collide with it.
fn host_marker(dir: &str, env: &TestEnv) -> Option<RemoveOnDrop> {
    let path = std::path::Path::new(dir).join(format!(
        "ironclaw-escape-{}-{}",
        std::process::id(),
        env.instance
    ));
    std::fs::write(&path, "host only").ok()?;
    Some(RemoveOnDrop(path))
}

// --- host files, /proc and /sys -------------------------------------------------------------

#[tokio::test]
async fn proc_1_root_and_dot_dot_lead_to_the_containers_files_not_the_hosts() {
    let env = TestEnv::new().await;
    let host = HostSnapshot::take(&env);
    let markers: Vec<RemoveOnDrop> = ["/root", "/tmp"]
        .iter()
        .filter_map(|d| host_marker(d, &env))
        .collect();
    assert!(!markers.is_empty(), "cannot write a host marker anywhere");
    let names: Vec<String> = markers.iter().map(|m| m.0.display().to_string()).collect();
    let code = format!(
        r#"
import glob, json, os
def visible(p):
    try:
        return os.path.exists(p) or os.path.lexists(p)
    except OSError:
        return False
def read(p):
    try:
        return open(p).read().strip()
    except OSError as e:
        return "refused:" + str(e.errno)
seen = {{}}
for host_path in {names:?}:
    for prefix in ["", "/proc/1/root", "/proc/self/root", "/proc/1/cwd/..", "/workspace/../.."]:
        seen[prefix + host_path] = visible(prefix + host_path)
    for root in glob.glob("/proc/[0-9]*/root"):
        seen[root + host_path] = visible(root + host_path)
hostnames = {{p: read(p) for p in ["/proc/1/root/etc/hostname", "/proc/self/root/etc/hostname",
    "/workspace/../../etc/hostname", "/proc/1/root/proc/sys/kernel/hostname"]}}
print(json.dumps({{"seen": seen, "hostnames": hostnames}}))
"#
    );
    let v: serde_json::Value =
        serde_json::from_str(&ok(&py(&env, "s", &code).await)).expect("json");
    let seen = v["seen"].as_object().expect("seen");
    assert!(seen.len() >= names.len() * 6, "{seen:?}");
    for (path, visible) in seen {
        assert_eq!(visible, false, "host file visible inside as {path}");
    }
    for (path, name) in v["hostnames"].as_object().expect("hostnames") {
        let name = name.as_str().unwrap_or_default();
        assert_ne!(name, host.hostname(), "{path} is the host's hostname");
        // The container's own hostname, or refused for permission (pid 1 is not dumpable, so
        // its root link is closed to the code). Not "refused:2": a missing file proves nothing.
        assert!(
            name == "sandbox" || name == "refused:13" || name == "refused:1",
            "{path}: {name}"
        );
    }
    assert_healthy(&env, "s", &host).await;
}

/// mountinfo fields: 4 = root of the mount within its filesystem, 5 = mount point, 6 = options.
fn mountinfo(text: &str) -> Vec<(String, String, String, String, String)> {
    text.lines()
        .filter_map(|l| {
            let (left, right) = l.split_once(" - ")?;
            let f: Vec<&str> = left.split(' ').collect();
            let fstype = right.split(' ').next()?.to_string();
            Some((
                f.get(2)?.to_string(),
                f.get(3)?.to_string(),
                f.get(4)?.to_string(),
                f.get(5)?.to_string(),
                fstype,
            ))
        })
        .collect()
}

#[tokio::test]
async fn the_only_host_folders_mounted_are_the_workspace_and_the_read_only_output_sockets() {
    let env = TestEnv::new().await;
    let host = HostSnapshot::take(&env);
    let text = ok(&sh(&env, "s", "cat /proc/self/mountinfo").await);
    let ws = std::fs::canonicalize(env.workspace("s")).expect("workspace");
    let id = env.container_id("s").await.expect("container");
    let mounts = mountinfo(&text);
    let root = mounts.iter().find(|m| m.2 == "/").expect("a / mount");
    assert!(
        root.3.split(',').any(|o| o == "ro"),
        "/ is writable: {root:?}"
    );
    let mut workspace_seen = false;
    let mut channel_seen = false;
    let container = env
        .sandbox
        .container_of(&name("s"))
        .await
        .expect("lookup")
        .expect("container")
        .name;
    if under_gvisor(&env, "s").await {
        // gVisor serves every host path through its own file proxy (9p, sources not shown):
        // the image's read-only root, the workspace, the read-only socket folder, and Docker's
        // per-container files. Everything else is gVisor's own memory.
        for (_, _, target, opts, fstype) in &mounts {
            if fstype != "9p" {
                continue;
            }
            let read_only = opts.split(',').any(|o| o == "ro");
            match target.as_str() {
                "/workspace" => workspace_seen = true,
                "/run/ironclaw-channel" => {
                    assert!(read_only, "{opts}");
                    channel_seen = true;
                }
                "/" | "/etc/hostname" | "/etc/hosts" | "/etc/resolv.conf" => {
                    assert!(read_only, "{target}: {opts}")
                }
                other => panic!("host path mounted at {other} ({opts})"),
            }
        }
        assert!(workspace_seen && channel_seen, "{text}");
        assert_healthy(&env, "s", &host).await;
        return;
    }
    for (dev, src, target, opts, fstype) in &mounts {
        if target == "/run/ironclaw-channel" {
            // This container's own folder of host sockets, and read-only.
            assert!(src.ends_with(&format!("/channels/{container}")), "{src}");
            assert!(opts.split(',').any(|o| o == "ro"), "{opts}");
            channel_seen = true;
            continue;
        }
        if target == "/workspace" {
            // `src` is relative to the root of the host filesystem holding the workspace.
            assert!(
                ws.ends_with(src.trim_start_matches('/')),
                "{src} vs {}",
                ws.display()
            );
            workspace_seen = true;
            continue;
        }
        // Filesystems backed by a block device are the host's own disks; anything else
        // (proc, sysfs, tmpfs, cgroup, overlay, devpts, mqueue) is private to the container.
        if dev.starts_with("0:") {
            continue;
        }
        // Docker's own per-container files (hostname, and hosts/resolv.conf with a network):
        // read-only, and from this container's folder in Docker's data root.
        assert!(
            ["/etc/hostname", "/etc/hosts", "/etc/resolv.conf"].contains(&target.as_str())
                && src.contains(&format!("/containers/{id}/"))
                && opts.split(',').any(|o| o == "ro"),
            "host path {src} ({fstype}) mounted at {target} ({opts})"
        );
    }
    assert!(workspace_seen && channel_seen, "{text}");
    // No shared propagation, so nothing mounted later on the host appears inside.
    let ws_line = text
        .lines()
        .find(|l| l.contains(" /workspace "))
        .expect("line");
    assert!(!ws_line.contains("shared:"), "{ws_line}");
    assert_healthy(&env, "s", &host).await;
}

/// With the host cgroup namespace (cgroup v1's default) /proc/self/cgroup would show
/// `/docker/<container id>`; sandboxes get a private one (`CgroupnsMode: private`), which
/// Docker 20.10 supports on cgroup v1 too.
#[tokio::test]
async fn the_cgroup_paths_reveal_no_container_id() {
    let env = TestEnv::new().await;
    let text = ok(&sh(&env, "s", "cat /proc/self/cgroup").await);
    let id = env.container_id("s").await.expect("container");
    assert!(!text.contains(&id[..12]), "{text}");
    for line in text.lines() {
        assert!(line.ends_with(":/"), "not the namespace's root: {line}");
    }
    // The limits still read from inside (the supervisor's accounting uses them).
    let limit = ok(&sh(
        &env,
        "s",
        "cat /sys/fs/cgroup/memory.max 2>/dev/null || cat /sys/fs/cgroup/memory/memory.limit_in_bytes",
    )
    .await);
    let shipped = env
        .sandbox
        .policy()
        .profile(None)
        .expect("profile")
        .1
        .memory_bytes;
    assert_eq!(limit.trim(), shipped.to_string());
}

/// Standard runc behaviour, listed so it is known: the overlay's super options name the layer
/// folders under Docker's data root, and the binds of /etc/hostname, /etc/hosts and
/// /etc/resolv.conf name `<data root>/containers/<id>/`. Nothing there is reachable, but it
/// tells code where it is. Not fixable from IronClaw: hiding a mount's source needs
/// CAP_SYS_ADMIN inside (which the sandbox must not have) or another storage driver; gVisor
/// (`runtime: runsc`) hides all of it.
#[tokio::test]
#[ignore = "bug (low, information only): /proc/self/mountinfo shows Docker's data root (overlay lowerdir/upperdir) and the container id (the /etc/hostname, /etc/hosts, /etc/resolv.conf binds); only gVisor hides it"]
async fn mountinfo_reveals_no_host_path_but_the_workspace() {
    let env = TestEnv::new().await;
    let text = ok(&sh(&env, "s", "cat /proc/self/mountinfo /proc/self/cgroup").await);
    let info = env.docker().info().await.expect("docker info");
    let data_root = info
        .docker_root_dir
        .unwrap_or_else(|| "/var/lib/docker".into());
    let id = env.container_id("s").await.expect("container");
    for needle in [data_root.as_str(), &id[..12]] {
        let leaks: Vec<&str> = text.lines().filter(|l| l.contains(needle)).collect();
        assert!(
            leaks.is_empty(),
            "{needle} is visible inside:\n{}",
            leaks.join("\n")
        );
    }
}

#[tokio::test]
async fn kernel_parameters_and_cgroup_limits_cannot_be_changed() {
    let env = TestEnv::with_policy(SMALL_LIMITS).await;
    let host = HostSnapshot::take(&env);
    let body = r#"
def write(p, v):
    with open(p, "w") as f:
        f.write(v)
def same(p):
    # Writes back what is there: tests the permission without changing anything if it held.
    write(p, open(p).read())
attempt("/proc/sys/kernel/hostname", lambda: write("/proc/sys/kernel/hostname", "pwned"))
attempt("/proc/sys/vm/drop_caches", lambda: write("/proc/sys/vm/drop_caches", "1"))
attempt("/proc/sysrq-trigger", lambda: write("/proc/sysrq-trigger", "h"))
attempt("/proc/sys/kernel/core_pattern", lambda: same("/proc/sys/kernel/core_pattern"))
attempt("/proc/self/oom_score_adj", lambda: write("/proc/self/oom_score_adj", "-1000"))
attempt("/sys/kernel/mm/transparent_hugepage/enabled", lambda: write("/sys/kernel/mm/transparent_hugepage/enabled", "never"))
attempt("mkdir /sys/fs/cgroup/escape", lambda: os.mkdir("/sys/fs/cgroup/escape"))
v2 = os.path.exists("/sys/fs/cgroup/cgroup.controllers")
cg = {
    "memory": ("/sys/fs/cgroup/memory.max", "max") if v2 else ("/sys/fs/cgroup/memory/memory.limit_in_bytes", "-1"),
    "memsw": ("/sys/fs/cgroup/memory.swap.max", "max") if v2 else ("/sys/fs/cgroup/memory/memory.memsw.limit_in_bytes", "-1"),
    "pids": ("/sys/fs/cgroup/pids.max", "max") if v2 else ("/sys/fs/cgroup/pids/pids.max", "max"),
    "cpu": ("/sys/fs/cgroup/cpu.max", "max") if v2 else ("/sys/fs/cgroup/cpu/cpu.cfs_quota_us", "-1"),
    "procs": ("/sys/fs/cgroup/cgroup.procs", str(os.getpid())) if v2 else ("/sys/fs/cgroup/memory/cgroup.procs", str(os.getpid())),
    "release": ("/sys/fs/cgroup/cgroup.subtree_control", "+memory") if v2 else ("/sys/fs/cgroup/memory/notify_on_release", "1"),
}
for name, (p, v) in cg.items():
    attempt(p, lambda p=p, v=v: write(p, v))
"#;
    let mut results = py_attempts(&env, "s", body).await;
    assert_eq!(results.len(), 13, "{results:?}");
    let gvisor = under_gvisor(&env, "s").await;
    if gvisor {
        // gVisor's own value for its own process: the host's OOM killer sees gVisor's
        // processes, whose scores the code cannot reach.
        results.remove("/proc/self/oom_score_adj");
    }
    // A file missing inside counts as refused only if the host has it (the container hides it,
    // as Docker does with /proc/sysrq-trigger); one missing on both (a kernel built without
    // magic SysRq) was never attacked, so it counts for nothing. Everything else must have been
    // attempted and refused.
    let (missing, attempted): (BTreeMap<_, _>, BTreeMap<_, _>) = results
        .clone()
        .into_iter()
        .partition(|(_, how)| how == "ENOENT");
    assert_refused(&attempted, REFUSALS);
    let never: Vec<&String> = missing
        .keys()
        .filter(|path| !std::path::Path::new(path).exists())
        .collect();
    assert!(
        never
            .iter()
            .all(|p| *p == "/proc/sysrq-trigger" || p.starts_with("/sys/kernel/mm/")),
        "missing inside and on the host, so never attacked: {never:?} ({results:?})"
    );
    assert!(
        results.len() - never.len() >= 10 + usize::from(!gvisor),
        "{results:?}"
    );
    // The limits are what the profile says, from inside and in Docker's view. Under gVisor the
    // number of processes is gVisor's kernel's limit on the code's user (see the container's
    // definition), and the cgroup's is a backstop above gVisor's own threads.
    // gVisor's kernel shows the memory limit as the machine's size.
    let (memory, pids) = if gvisor {
        (
            "awk '/^MemTotal:/ { print $2 * 1024 }' /proc/meminfo",
            "ulimit -u",
        )
    } else {
        (
            "cat /sys/fs/cgroup/memory.max 2>/dev/null || cat /sys/fs/cgroup/memory/memory.limit_in_bytes",
            "cat /sys/fs/cgroup/pids.max 2>/dev/null || cat /sys/fs/cgroup/pids/pids.max",
        )
    };
    let limits = ok(&sh(&env, "s", &format!("hostname; {memory}; {pids}")).await);
    assert_eq!(limits, format!("sandbox\n{}\n64", 128u64 << 20));
    assert_healthy(&env, "s", &host).await;
}

// --- mounts, namespaces, chroot ---------------------------------------------------------------

#[tokio::test]
async fn mount_unshare_setns_and_chroot_are_refused() {
    let env = TestEnv::new().await;
    let host = HostSnapshot::take(&env);
    let shell = sh_attempts(
        &env,
        "s",
        &[
            ("mount tmpfs", "mount -t tmpfs none /mnt"),
            ("mount cgroup", "mount -t cgroup -o memory cgroup /tmp"),
            ("mount proc", "mkdir -p /tmp/p && mount -t proc proc /tmp/p"),
            ("remount rw", "mount -o remount,rw /"),
            ("unshare -r", "unshare -r true"),
            ("unshare -m", "unshare -m true"),
            ("unshare -U", "unshare -U true"),
            ("unshare -pf", "unshare -p -f true"),
            ("nsenter", "nsenter -t 1 -m -u -i -n -p true"),
            ("chroot", "chroot / true"),
        ],
    )
    .await;
    // Each command ran (not "not found") and was refused. util-linux's `mount` refuses a
    // non-root caller itself ("must be superuser") before calling mount(2): the Python calls
    // below make the system calls.
    assert_all_refused(
        &shell,
        &[
            "Operation not permitted",
            "Permission denied",
            "must be superuser",
        ],
    );
    let body = r#"
CLONE_NEWNS, CLONE_NEWUSER, CLONE_NEWNET, CLONE_NEWPID = 0x20000, 0x10000000, 0x40000000, 0x20000000
os.makedirs("/tmp/m", exist_ok=True)
call("mount(2)", libc.mount(b"none", b"/tmp/m", b"tmpfs", 0, None))
call("bind mount", libc.mount(b"/", b"/tmp/m", None, 0x1000, None))
call("umount /workspace", libc.umount2(b"/workspace", 2))
for name, flag in [("NEWNS", CLONE_NEWNS), ("NEWUSER", CLONE_NEWUSER), ("NEWNET", CLONE_NEWNET), ("NEWPID", CLONE_NEWPID)]:
    call("unshare " + name, libc.unshare(flag))
for ns in ["mnt", "pid", "net", "user", "uts", "ipc"]:
    try:
        fd = os.open("/proc/1/ns/" + ns, os.O_RDONLY)
    except OSError as e:
        _results["setns " + ns] = _name(e.errno)
        continue
    call("setns " + ns, libc.setns(fd, 0))
    os.close(fd)
# init's namespaces may be closed at open(); the code's own always open, so setns(2) is made.
# gVisor has no namespace files: there setns(2) is made with another descriptor, which the
# filter refuses before looking at it.
for ns in ["mnt", "pid", "net", "user", "uts", "ipc", "cgroup"]:
    try:
        fd = os.open("/proc/self/ns/" + ns, os.O_RDONLY)
    except FileNotFoundError:
        fd = os.open("/", os.O_RDONLY)
    call("setns own " + ns, libc.setns(fd, 0))
    os.close(fd)
call("chroot", libc.chroot(b"/tmp"))
import platform
call("pivot_root", libc.syscall({"x86_64": 155, "aarch64": 41}[platform.machine()], b"/tmp", b"/tmp/m"))
# "shocker": open_by_handle_at needs CAP_DAC_READ_SEARCH.
call("open_by_handle_at", libc.open_by_handle_at(-100, ctypes.create_string_buffer(136), 0))
"#;
    let results = py_attempts(&env, "s", body).await;
    assert_eq!(results.len(), 23, "{results:?}");
    assert_refused(&results, &["EPERM", "EACCES"]);
    assert_healthy(&env, "s", &host).await;
}

// --- raw sockets and other processes ----------------------------------------------------------

#[tokio::test]
async fn raw_and_packet_sockets_are_refused() {
    let env = TestEnv::new().await;
    let host = HostSnapshot::take(&env);
    let body = r#"
import socket
for name, args in [
    ("packet raw", (socket.AF_PACKET, socket.SOCK_RAW, 0x0300)),
    ("packet dgram", (socket.AF_PACKET, socket.SOCK_DGRAM, 0x0300)),
    ("inet raw icmp", (socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)),
    ("inet raw", (socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_RAW)),
    ("inet6 raw", (socket.AF_INET6, socket.SOCK_RAW, socket.IPPROTO_ICMPV6)),
]:
    attempt(name, lambda args=args: socket.socket(*args).close())
# The controls: the families exist in this kernel (an unprivileged type of each works).
attempt("control inet6 dgram", lambda: socket.socket(socket.AF_INET6, socket.SOCK_DGRAM).close())
attempt("control inet dgram", lambda: socket.socket(socket.AF_INET, socket.SOCK_DGRAM).close())
"#;
    let mut results = py_attempts(&env, "s", body).await;
    assert_eq!(results.len(), 7, "{results:?}");
    let inet6 = results.remove("control inet6 dgram");
    assert_eq!(results.remove("control inet dgram").as_deref(), Some("ok"));
    // EAFNOSUPPORT is no refusal where the kernel has the family: only a kernel without IPv6
    // (the control fails too) may answer it for the IPv6 socket. Packet sockets: this test
    // process asks the host kernel whether it has them at all.
    // SAFETY: socket(2) with constant arguments; a returned descriptor is closed at once.
    let packet = unsafe { nix::libc::socket(nix::libc::AF_PACKET, nix::libc::SOCK_RAW, 0) };
    let packet_missing = packet < 0 && nix::errno::Errno::last() == nix::errno::Errno::EAFNOSUPPORT;
    if packet >= 0 {
        // SAFETY: the descriptor was just returned and is closed once.
        unsafe { nix::libc::close(packet) };
    }
    for (name, how) in &results {
        let missing_family = (name.starts_with("inet6")
            && inet6.as_deref() == Some("EAFNOSUPPORT"))
            || (name.starts_with("packet") && packet_missing);
        let allowed: &[&str] = if missing_family {
            &["EPERM", "EACCES", "EAFNOSUPPORT"]
        } else {
            &["EPERM", "EACCES"]
        };
        assert!(
            allowed.contains(&how.as_str()),
            "{name}: {how} ({results:?})"
        );
    }
    assert_healthy(&env, "s", &host).await;
}

#[tokio::test]
async fn host_processes_are_invisible_and_cannot_be_signalled() {
    let env = TestEnv::new().await;
    let host = HostSnapshot::take(&env);
    let me = std::process::id();
    let code = format!(
        r#"
import json, os
comms = sorted(open("/proc/%s/comm" % p).read().strip() for p in os.listdir("/proc") if p.isdigit())
try:
    os.kill({me}, 0)
    signalled = "ok"
except OSError as e:
    signalled = e.strerror
print(json.dumps({{"comms": comms, "signal_host_test_process": signalled}}))
"#
    );
    let v: serde_json::Value =
        serde_json::from_str(&ok(&py(&env, "s", &code).await)).expect("json");
    for comm in v["comms"].as_array().expect("comms") {
        let comm = comm.as_str().unwrap_or_default();
        assert!(
            ["tini", "python3", "bash", "sh"].contains(&comm),
            "{comm} is visible"
        );
    }
    if me > 1000 {
        // Our pid does not exist in the container's PID namespace (smaller ones might).
        assert_eq!(v["signal_host_test_process"], "No such process", "{v}");
    }
    assert_healthy(&env, "s", &host).await;
}

/// Code and supervisor share a UID, and neither tini nor the supervisor is made non-dumpable,
/// so the code may ptrace them and open their memory and their stdout, which is the channel to
/// the host (see `code_cannot_forge_frames_on_the_host_channel`). Fix, verified by hand:
/// `prctl(PR_SET_DUMPABLE, 0)` first thing in supervisor.py, and `chmod 0711 /usr/bin/tini` in
/// the Dockerfile (the kernel makes a process that execs an unreadable binary non-dumpable).
#[tokio::test]
async fn the_supervisor_and_init_cannot_be_ptraced_or_their_memory_opened() {
    let env = TestEnv::new().await;
    let host = HostSnapshot::take(&env);
    let body = r#"
sup = int(open("/run/ironclaw/supervisor.pid").read())
for name, pid in [("supervisor", sup), ("tini", 1)]:
    r = libc.ptrace(16, pid, None, None)  # PTRACE_ATTACH
    call("ptrace " + name, r)
    if r == 0:
        os.waitpid(pid, 0x40000000)  # __WALL
        libc.ptrace(17, pid, None, None)  # PTRACE_DETACH: leave it running
    for what in ["mem", "fd/1", "fd/0"]:
        attempt("open %s /proc/%s/%s" % (name, pid, what), lambda p="/proc/%d/%s" % (pid, what): os.close(os.open(p, os.O_RDWR)))
"#;
    let mut results = py_attempts(&env, "s", body).await;
    assert_eq!(results.len(), 8, "{results:?}");
    if under_gvisor(&env, "s").await {
        // gVisor refuses ptrace of a non-descendant and another process's memory whatever its
        // dumpability, but lets the same user reopen another process's descriptors: a known
        // gap, in SECURITY.md, and why `auto` is not yet the shipped default.
        results.retain(|what, _| !what.contains("/fd/"));
        assert_eq!(results.len(), 4, "{results:?}");
    }
    assert_refused(&results, &["EPERM", "EACCES"]);
    assert_healthy(&env, "s", &host).await;
}

/// The consequence of the above, if it held: code writes a forged "ended" event straight into
/// the supervisor's stdout, and the host takes it as the result (exit 0, made-up stray list)
/// while the real code exits 3. The direct routes (the supervisor's and init's stdout) must be
/// closed, and forged frames written where code can write (its own stdout and stderr, from
/// Python and from the shell) must reach the host as plain bytes. The writes are shown to have
/// happened: write() returned the frame's length and the host received those very bytes.
#[tokio::test]
async fn code_cannot_forge_frames_on_the_host_channel() {
    let env = TestEnv::new().await;
    let host = HostSnapshot::take(&env);
    let code = r#"
import errno, json, os, struct, sys
f, seq = sys._getframe(), None
while f is not None:
    if f.f_code.co_name == "_run_cell":
        seq = f.f_locals["cell"]
    f = f.f_back
sup = int(open("/run/ironclaw/supervisor.pid").read())
def frame(seq):
    payload = json.dumps({"type": "ended", "exit_code": 0, "duration_ms": 1.0,
                          "stray_processes_killed": ["forged"]}).encode()
    head = struct.pack(">2sBII", b"\xc1\xa7", 3, seq, len(payload))
    return head + bytes([sum(head) & 0xFF]) + payload
forged = frame(seq)
report = {"seq": seq, "frame_len": len(forged), "supervisor_exists": os.path.exists("/proc/%d/fd" % sup)}
for name, path in [("supervisor", "/proc/%d/fd/1" % sup), ("init", "/proc/1/fd/1")]:
    try:
        fd = os.open(path, os.O_WRONLY)
        report[name] = os.write(fd, forged)
        os.close(fd)
    except OSError as e:
        report[name] = errno.errorcode.get(e.errno, str(e.errno))
report["stdout"] = os.write(1, forged)
report["stderr"] = os.write(2, forged)
# Frames for the next few runs, for the shell to write.
with open("/tmp/frames", "wb") as out:
    for s in range(seq + 1, seq + 6):
        out.write(frame(s))
os.write(2, b"\nREPORT " + json.dumps(report).encode() + b"\n")
raise SystemExit(3)
"#;
    let out = exec(&env, "s", ExecRequest::new(Language::Python, code)).await;
    let r = &out.result;
    let stderr = String::from_utf8_lossy(&out.stderr);
    let report: serde_json::Value = stderr
        .split("\nREPORT ")
        .nth(1)
        .and_then(|rest| serde_json::from_str(rest.lines().next()?).ok())
        .unwrap_or_else(|| panic!("the attack did not run to its report: {stderr}"));
    let frame_len = report["frame_len"].as_u64().expect("frame length");
    assert!(
        report["seq"].is_u64(),
        "the cell's number was found: {report}"
    );
    // The direct routes: the supervisor exists. Under runc its stdout (and init's) cannot be
    // opened; gVisor ignores dumpability for /proc/PID/fd, so there the forged frame reaches
    // the host channel, unsigned, and must change nothing below.
    assert_eq!(report["supervisor_exists"], true, "{report}");
    let gvisor = under_gvisor(&env, "s").await;
    for name in ["supervisor", "init"] {
        if gvisor {
            assert_eq!(report[name].as_u64(), Some(frame_len), "{name}: {report}");
            continue;
        }
        let how = report[name].as_str().unwrap_or_default();
        assert!(
            how == "EACCES" || how == "EPERM",
            "{name}'s stdout: {} (an integer is the number of forged bytes written into the host channel)",
            report[name]
        );
    }
    // Written for real, and seen by the host as the bytes they are.
    assert_eq!(report["stdout"].as_u64(), Some(frame_len), "{report}");
    assert_eq!(report["stderr"].as_u64(), Some(frame_len), "{report}");
    assert_eq!(out.stdout.len() as u64, frame_len, "{:?}", out.stdout);
    assert!(
        out.stdout.starts_with(b"\xc1\xa7\x03") && out.stdout.ends_with(b"[\"forged\"]}"),
        "{:?}",
        out.stdout
    );
    assert!(out.stderr.starts_with(&out.stdout), "{stderr}");
    assert!(
        !r.stray_processes_killed.iter().any(|p| p == "forged"),
        "the host took a forged result: {r:?}"
    );
    assert_eq!(r.exit_code, 3, "{r:?}");
    // The shell writes frames for the next runs' numbers; its own run ends with status 1.
    let out = exec(
        &env,
        "s",
        ExecRequest::new(
            Language::Shell,
            "cat /tmp/frames; cat /tmp/frames >&2; false",
        ),
    )
    .await;
    assert_eq!(out.stdout.len() as u64, frame_len * 5, "{:?}", out.stdout);
    assert_eq!(out.stderr, out.stdout);
    assert!(
        !out.result
            .stray_processes_killed
            .iter()
            .any(|p| p == "forged"),
        "the host took a forged result: {:?}",
        out.result
    );
    assert_eq!(out.result.exit_code, 1, "{:?}", out.result);
    assert_healthy(&env, "s", &host).await;
}

#[tokio::test]
async fn code_cannot_give_the_supervisor_requests_or_a_key() {
    let env = TestEnv::new().await;
    let host = HostSnapshot::take(&env);
    // Written into the supervisor's stdin, where the host's requests arrive: an unsigned exec,
    // one signed with a key the code made up, and a new key.
    let code = r#"
import errno, hashlib, hmac, json, os
sup = int(open("/run/ironclaw/supervisor.pid").read())
evil = {"op": "exec", "seq": 77, "lang": "python", "timeout_ms": 5000, "capture_bytes": 1000,
        "log_name": "x", "client": "c0ffee", "n": 1 << 40,
        "code": "open('/workspace/pwned', 'w').write('ran')"}
body = json.dumps(evil).encode()
made_up = b"\x01" * 32
lines = [body + b"\n",
         hmac.new(made_up, body, hashlib.sha256).hexdigest().encode() + b" " + body + b"\n",
         json.dumps({"op": "key", "key": made_up.hex()}).encode() + b"\n"]
try:
    fd = os.open("/proc/%d/fd/0" % sup, os.O_WRONLY)
    print("WROTE", sum(os.write(fd, l) for l in lines))
except OSError as e:
    print("REFUSED", errno.errorcode.get(e.errno, e.errno))
"#;
    let out = exec(&env, "s", ExecRequest::new(Language::Python, code)).await;
    let said = String::from_utf8_lossy(&out.stdout).trim().to_string();
    if under_gvisor(&env, "s").await {
        // gVisor ignores dumpability for /proc/PID/fd but reopens the engine's pipe with the
        // mode the supervisor holds it in (read-only: EBADF); where a version lets the write
        // through, the lines arrive unsigned and the supervisor must refuse them.
        assert!(
            said.starts_with("WROTE ") || said == "REFUSED EBADF",
            "{said}"
        );
    } else {
        assert!(
            said == "REFUSED EACCES" || said == "REFUSED EPERM",
            "{said}"
        );
    }
    // The supervisor still answers the host (the made-up key was not taken) and obeyed
    // nothing it was given in the container.
    assert_eq!(
        ok(&sh(&env, "s", "echo still-the-hosts").await),
        "still-the-hosts"
    );
    std::thread::sleep(std::time::Duration::from_millis(300));
    assert!(
        !env.workspace("s").join("pwned").exists(),
        "the supervisor ran a request written by code"
    );
    assert_healthy(&env, "s", &host).await;
}

// --- devices ----------------------------------------------------------------------------------

#[tokio::test]
async fn no_device_nodes_can_be_made_and_no_dangerous_ones_exist() {
    let env = TestEnv::new().await;
    let host = HostSnapshot::take(&env);
    let body = r#"
import stat
call("mknod block", libc.mknod(b"/tmp/sda", stat.S_IFBLK | 0o600, os.makedev(8, 0)))
call("mknod mem", libc.mknod(b"/tmp/mem", stat.S_IFCHR | 0o600, os.makedev(1, 1)))
call("mknod workspace", libc.mknod(b"/workspace/vda", stat.S_IFBLK | 0o600, os.makedev(254, 0)))
attempt("kmsg write", lambda: os.close(os.open("/dev/kmsg", os.O_WRONLY)))
for d in ["/dev/mem", "/dev/kmem", "/dev/port", "/dev/sda", "/dev/vda", "/dev/nvme0n1", "/dev/fuse", "/dev/net/tun", "/dev/kvm"]:
    attempt("exists " + d, lambda d=d: os.stat(d))
"#;
    let results = py_attempts(&env, "s", body).await;
    assert_eq!(results.len(), 13, "{results:?}");
    let gvisor = under_gvisor(&env, "s").await;
    for (name, how) in &results {
        if name == "exists /dev/fuse" && gvisor {
            // gVisor's FUSE lives in its own kernel, and mount() is refused (see
            // `mount_unshare_setns_and_chroot_are_refused`).
            continue;
        } else if name.starts_with("exists ") {
            // Absent is the point here: no such device inside.
            assert_eq!(how, "ENOENT", "{name}");
        } else if name == "kmsg write" {
            // Missing inside counts only because the host has it (the container leaves it out).
            assert!(
                how == "EPERM"
                    || how == "EACCES"
                    || (how == "ENOENT" && std::path::Path::new("/dev/kmsg").exists()),
                "{name}: {how}"
            );
        } else {
            // mknod(2) was made on folders that exist: only a permission refusal counts.
            assert_eq!(how, "EPERM", "{name}");
        }
    }
    // Only the harmless character devices Docker gives every container.
    let devices = ok(&sh(&env, "s", "find /dev -type b -o -type c | sort").await);
    let allowed = [
        "/dev/full",
        "/dev/null",
        "/dev/random",
        "/dev/tty",
        "/dev/urandom",
        "/dev/zero",
        "/dev/pts/ptmx",
        "/dev/console",
    ];
    for dev in devices.lines() {
        // gVisor's FUSE device belongs to its own kernel; mounting anything is refused.
        let gvisor_own = gvisor && dev == "/dev/fuse";
        assert!(
            allowed.contains(&dev) || gvisor_own,
            "device {dev} inside the sandbox"
        );
    }
    assert_healthy(&env, "s", &host).await;
}

// --- setuid ------------------------------------------------------------------------------------

#[tokio::test]
async fn the_image_has_no_setuid_or_setgid_files() {
    let env = TestEnv::new().await;
    // Directories are left out: /var/mail and /var/local are setgid in Debian, which only
    // decides the group of files made in them.
    // The count of files searched shows the search ran (an empty answer alone would also come
    // from a missing `find`).
    let found = ok(&sh(
        &env,
        "s",
        "find / -xdev -type f -perm /6000 2>/dev/null; echo \"searched $(find / -xdev -type f 2>/dev/null | wc -l)\"",
    )
    .await);
    let (setuid, searched) = found.rsplit_once("searched ").unwrap_or(("?", "0"));
    let searched: u64 = searched.trim().parse().unwrap_or(0);
    assert!(searched > 1000, "searched {searched} files: {found}");
    assert_eq!(setuid, "", "setuid/setgid files in the image");
}

#[tokio::test]
async fn a_setuid_binary_in_the_workspace_grants_nothing() {
    let env = TestEnv::new().await;
    let host = HostSnapshot::take(&env);
    let user = env.sandbox.user();
    // A setuid copy owned by the code's own user (the code cannot make one itself: see
    // `code_cannot_leave_setuid_files_in_the_host_workspace`; the host user can): gives nothing.
    ok(&sh(&env, "s", "cp /usr/bin/id /workspace/suid-id").await);
    std::fs::set_permissions(
        env.workspace("s").join("suid-id"),
        std::fs::Permissions::from_mode(0o6755),
    )
    .expect("chmod on the host");
    let out = ok(&sh(&env, "s", "/workspace/suid-id -u && /workspace/suid-id -g").await);
    assert_eq!(out, format!("{}\n{}", user.uid, user.gid));
    // A setuid-root binary that reached the workspace (say, from an archive the user put
    // there): no-new-privileges means exec ignores the bit.
    if nix::unistd::geteuid().is_root() {
        let planted = env.workspace("s").join("root-id");
        std::fs::copy(env.workspace("s").join("suid-id"), &planted).expect("copy");
        std::os::unix::fs::chown(&planted, Some(0), Some(0)).expect("chown");
        std::fs::set_permissions(&planted, std::fs::Permissions::from_mode(0o6755)).expect("chmod");
        let out = ok(&sh(
            &env,
            "s",
            "ls -ln /workspace/root-id; /workspace/root-id -u; /workspace/root-id -g",
        )
        .await);
        let lines: Vec<&str> = out.lines().collect();
        assert!(lines[0].starts_with("-rwsr-sr-x 1 0 0"), "{out}");
        assert_eq!(
            lines[1..],
            [user.uid.to_string(), user.gid.to_string()],
            "{out}"
        );
    }
    let setuid = py_attempts(
        &env,
        "s",
        "call('setuid(0)', libc.setuid(0))\ncall('setgid(0)', libc.setgid(0))",
    )
    .await;
    assert_refused(&setuid, &["EPERM"]);
    assert_healthy(&env, "s", &host).await;
}

/// The workspace is a host folder, and the code runs as the host user: a file it marks setuid
/// would be a setuid-<host user> binary on the host, which any other local user who can reach
/// the folder may run as that user. The container's seccomp profile (`seccomp/` in the sandbox crate)
/// refuses every call that would set S_ISUID or S_ISGID, whichever way code tries.
#[tokio::test]
async fn code_cannot_leave_setuid_files_in_the_host_workspace() {
    let env = TestEnv::new().await;
    // The files to mark exist first, so each attempt below really is a mode change.
    ok(&sh(
        &env,
        "s",
        "cd /workspace && cp /usr/bin/id planted && cp /usr/bin/id via_py && mkdir shared_dir \
         && python3 -c \"import tarfile, io; t = tarfile.open('/tmp/suid.tar', 'w'); i = tarfile.TarInfo('from_tar'); i.mode = 0o4755; t.addfile(i, io.BytesIO(b'')); t.close()\"",
    )
    .await);
    let attempts = sh_attempts(
        &env,
        "s",
        &[
            ("chmod 6755", "chmod 6755 /workspace/planted"),
            ("chmod u+s", "chmod u+s /workspace/planted"),
            ("chmod g+s on a folder", "chmod g+s /workspace/shared_dir"),
            ("install -m 4755", "install -m 4755 /usr/bin/id /workspace/installed"),
            (
                "python chmod 2755",
                "set -o pipefail; python3 -c \"import os; os.chmod('/workspace/via_py', 0o2755)\" 2>&1 | tail -n 1",
            ),
            (
                "python open 4755",
                "set -o pipefail; python3 -c \"import os; os.close(os.open('/workspace/created', os.O_CREAT | os.O_WRONLY, 0o4755))\" 2>&1 | tail -n 1",
            ),
            (
                "perl chmod 4755",
                "perl -e 'chmod(04755, \"/workspace/planted\") or die \"$!\\n\"'",
            ),
            // A variant: an archive unpacked with its modes (tar -p) by the code.
            ("tar -xp", "tar -xpf /tmp/suid.tar -C /workspace"),
        ],
    )
    .await;
    assert_all_refused(&attempts, &["Operation not permitted"]);
    let ws = env.workspace("s");
    // The files the attempts worked on are there (tar and install made theirs before the mode
    // change failed), and none carries a setuid or setgid bit; nor does anything else.
    for name in ["planted", "via_py", "from_tar"] {
        assert!(ws.join(name).is_file(), "{name} is missing: {attempts:?}");
    }
    assert!(
        !ws.join("created").exists(),
        "open(O_CREAT, 04755) made a file"
    );
    let dir_mode = std::fs::metadata(ws.join("shared_dir"))
        .expect("dir")
        .mode();
    assert_eq!(dir_mode & 0o6000, 0, "shared_dir: {dir_mode:o}");
    let found = setuid_files_under(&ws);
    assert!(
        found.is_empty(),
        "setuid/setgid files on the host: {found:?}"
    );
    // Ordinary permissions still work.
    let r = sh(
        &env,
        "s",
        "cd /workspace && chmod 700 planted && stat -c %a planted",
    )
    .await;
    assert_eq!(ok(&r), "700");
}

// --- symlinks in the workspace ----------------------------------------------------------------

#[tokio::test]
async fn symlinks_to_host_paths_are_never_followed_by_the_host() {
    let env = TestEnv::new().await;
    let host = HostSnapshot::take(&env);
    let outside = env.root().join("host-only");
    std::fs::create_dir_all(&outside).expect("host dir");
    std::fs::write(outside.join("secret.txt"), "host secret").expect("host secret");
    let script = format!(
        "cd /workspace && ln -s /etc/shadow evil && ln -s /root rootdir && ln -s {0} hostdir \
         && ln -s {0}/secret.txt hostfile && ln -s / slash && mkdir -p a/b && ln -s ../../.. a/b/up \
         && ln -s loop loop; for l in evil rootdir/x hostfile hostdir/secret.txt; do cat $l >/dev/null 2>&1 && echo read $l; done; true",
        outside.display()
    );
    // Inside, the links resolve in the container: nothing of the host is there to read.
    assert_eq!(ok(&sh(&env, "s", &script).await), "");

    // The host-facing API hands back the real folder, not a link the code could swap.
    let ws = env.workspace("s");
    let meta = std::fs::symlink_metadata(&ws).expect("workspace");
    assert!(meta.is_dir() && !meta.file_type().is_symlink());
    // The links were made (the reads above were attempted through them), and the host sees
    // them as links, pointing where the code aimed them.
    for (link, target) in [
        ("evil", "/etc/shadow".to_string()),
        ("hostfile", format!("{}/secret.txt", outside.display())),
        ("slash", "/".to_string()),
        ("a/b/up", "../../..".to_string()),
    ] {
        let aimed = std::fs::read_link(ws.join(link)).unwrap_or_else(|e| panic!("{link}: {e}"));
        assert_eq!(aimed, std::path::PathBuf::from(target), "{link}");
    }
    // The workspace itself cannot be replaced from inside (it is the mount point).
    let swap = sh_attempts(
        &env,
        "s",
        &[
            ("rmdir", "rmdir /workspace"),
            ("mv", "mv /workspace /workspace2"),
        ],
    )
    .await;
    assert_all_refused(
        &swap,
        &[
            "Read-only file system",
            "Device or resource busy",
            "Permission denied",
        ],
    );

    // Removing the session with its workspace deletes the links, never what they point at
    // (/etc/shadow is in the host snapshot).
    env.sandbox
        .remove(&name("s"), true)
        .await
        .expect("remove with purge");
    assert!(!ws.exists(), "workspace purged");
    assert_eq!(
        std::fs::read_to_string(outside.join("secret.txt")).expect("host file survives"),
        "host secret"
    );
    assert!(std::path::Path::new("/root").is_dir());
    assert_healthy(&env, "s", &host).await;
}

#[tokio::test]
async fn a_log_folder_symlinked_out_of_the_workspace_never_writes_on_the_host() {
    let env = TestEnv::new().await;
    let host = HostSnapshot::take(&env);
    let capture = env.sandbox.policy().capture_bytes;
    let size = (capture * 3).max(3 << 20);
    let host_dir = env.root().join("host-logs");
    std::fs::create_dir_all(&host_dir).expect("host dir");
    // /etc: read-only inside, so no log at all; a host-only folder: does not exist inside.
    for target in ["/etc".to_string(), host_dir.display().to_string()] {
        ok(&sh(
            &env,
            "s",
            &format!("mkdir -p /workspace/.ironclaw && rm -rf /workspace/.ironclaw/logs && ln -s {target} /workspace/.ironclaw/logs"),
        )
        .await);
        let (r, streamed) = flood(&env, "s", size).await;
        assert_eq!(
            (r.exit_code, streamed, r.stdout_bytes),
            (0, size, size),
            "{target}"
        );
        assert!(r.truncated);
        assert_eq!(
            r.log_file, None,
            "{target}: the supervisor cannot have written a log"
        );
    }
    assert_eq!(std::fs::read_dir(&host_dir).expect("host dir").count(), 0);
    // /tmp: the container's own tmpfs. The log lands there, not in the host's /tmp.
    ok(&sh(
        &env,
        "s",
        "rm -f /workspace/.ironclaw/logs && ln -s /tmp /workspace/.ironclaw/logs",
    )
    .await);
    let (r, streamed) = flood(&env, "s", size).await;
    assert_eq!((r.exit_code, streamed), (0, size));
    let inside = ok(&sh(&env, "s", "ls /tmp | grep '^exec-.*\\.stdout\\.log$'").await);
    assert_eq!(inside.lines().count(), 1, "{inside}");
    assert!(
        !std::path::Path::new("/tmp").join(&inside).exists(),
        "written on the host"
    );
    // The host chose the name (a UUID), so code cannot aim a log at a name of its choosing.
    assert!(
        inside.starts_with("exec-") && inside.len() == "exec-".len() + 36 + ".stdout.log".len()
    );
    assert_healthy(&env, "s", &host).await;
}

/// `log_file` is the host path of the log the supervisor says it wrote; the host checks it
/// lexically (no `..`) but not for links, which the code controls. Two ways out: the log
/// folder is a link (to /tmp, which exists inside), or the code swaps the log file for a link
/// while it runs (it can see the name appear). Today the host only prints the path, but a UI
/// that opens "the full output", or the bench removing it, follows the link on the host. Fix:
/// resolve with openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS) from the workspace before
/// reporting or opening a log, and open logs with O_NOFOLLOW in the supervisor.
#[tokio::test]
async fn reported_log_files_never_resolve_outside_the_workspace() {
    let env = TestEnv::new().await;
    ok(&py(&env, "s", "print('up')").await);
    let ws = env.workspace("s");
    ok(&sh(
        &env,
        "s",
        "mkdir -p /workspace/.ironclaw && ln -s /tmp /workspace/.ironclaw/logs",
    )
    .await);
    let (r, _) = flood(&env, "s", 3 << 20).await;
    if let Some(log) = &r.log_file {
        assert!(
            resolves_inside(log, &ws),
            "{} leaves the workspace",
            log.display()
        );
    }
    ok(&sh(&env, "s", "rm /workspace/.ironclaw/logs").await);
    let race = r#"
import os, sys, time
d = "/workspace/.ironclaw/logs"
before = set(os.listdir(d)) if os.path.isdir(d) else set()
def fresh():
    return [n for n in os.listdir(d) if n not in before and n.endswith(".stdout.log")] if os.path.isdir(d) else []
chunk, new = b"z" * 65536, []
for _ in range(400):
    n = sys.stdout.buffer.write(chunk)
    sys.stdout.buffer.flush()
    new = fresh()
    if new:
        break
p = os.path.join(d, new[0])
os.unlink(p)
os.symlink("/etc/hostname", p)
"#;
    let r = py(&env, "s", race).await;
    assert_eq!(r.exit_code, 0, "{}", r.stderr);
    // A log swapped for a symlink is not reported at all; whatever is reported stays inside.
    for log in [&r.log_file, &r.stderr_log_file].into_iter().flatten() {
        assert!(
            resolves_inside(log, &ws),
            "{} leaves the workspace",
            log.display()
        );
    }
}

// --- filling the disk -------------------------------------------------------------------------

#[tokio::test]
async fn tmp_home_and_shm_fill_up_with_enospc_and_the_session_goes_on() {
    let env = TestEnv::with_policy(SMALL_DISK).await;
    let host = HostSnapshot::take(&env);
    let code = r#"
import errno, json, os
out = {}
for d in ["/tmp", os.path.expanduser("~"), "/dev/shm"]:
    written, err, i = 0, None, 0
    while err is None and i < 64:
        try:
            with open("%s/fill%d" % (d, i), "wb") as f:
                f.write(b"\0" * (4 << 20))
        except OSError as e:
            err = errno.errorcode.get(e.errno)
        i += 1
    written = sum(os.path.getsize("%s/fill%d" % (d, j)) for j in range(i) if os.path.exists("%s/fill%d" % (d, j)))
    for j in range(i):
        try:
            os.remove("%s/fill%d" % (d, j))
        except OSError:
            pass
    out[d] = [err, written]
print(json.dumps(out))
"#;
    let v: serde_json::Value = serde_json::from_str(&ok(&py(&env, "s", code).await)).expect("json");
    for (dir, cap) in [
        ("/tmp", 16u64 << 20),
        ("/home/sandbox", 16 << 20),
        ("/dev/shm", 64 << 20),
    ] {
        assert_eq!(v[dir][0], "ENOSPC", "{dir}: {v}");
        let written = v[dir][1].as_u64().expect("bytes");
        assert!(
            written <= cap && written >= cap / 2,
            "{dir}: {written} bytes in {cap}"
        );
    }
    assert_healthy(&env, "s", &host).await;
}

#[tokio::test]
async fn a_file_bigger_than_fsize_stops_at_the_limit_with_efbig() {
    let env = TestEnv::with_policy(SMALL_DISK).await;
    let host = HostSnapshot::take(&env);
    let r = sh(
        &env,
        "s",
        "dd if=/dev/zero of=/workspace/big bs=1M count=16 2>&1; echo rc=$?",
    )
    .await;
    assert!(
        r.stdout.contains("File too large") && r.stdout.contains("rc=1"),
        "{}",
        r.stdout
    );
    let py_r = py(
        &env,
        "s",
        "open('/workspace/big2', 'wb').write(b'x' * (16 << 20))",
    )
    .await;
    assert!(
        py_r.stderr.contains("[Errno 27] File too large"),
        "{}",
        py_r.stderr
    );
    assert!(
        !py_r.interpreter_lost,
        "SIGXFSZ must not kill the interpreter"
    );
    for f in ["big", "big2"] {
        let len = std::fs::metadata(env.workspace("s").join(f))
            .expect("file")
            .len();
        assert_eq!(len, 8 << 20, "{f}");
    }
    assert_healthy(&env, "s", &host).await;
}

/// Past the capture cap the supervisor tees output into a log in the workspace. When that
/// write fails (fsize reached, or the disk is full) `forward_spliced` drains `count` bytes from
/// its scratch pipe, but splice_all/copy_exact already took some of them: the blocking read
/// waits forever, the supervisor hangs, and the host gives up after timeout + 20 s and removes
/// the container (state lost). With the strict profile that is any output over 64 MiB. Fix:
/// drain only what FIONREAD says is in the scratch pipe, stop logging after the first error,
/// and surface `log_error` in ExecResult (today a short log is reported as complete).
#[tokio::test]
async fn an_output_flood_larger_than_fsize_does_not_hang_the_supervisor() {
    let env = TestEnv::with_policy(SMALL_DISK).await;
    let size = 12u64 << 20;
    let r = exec(
        &env,
        "s",
        ExecRequest::new(Language::Python, flood_code(size)),
    )
    .await
    .result;
    assert_eq!(
        (r.exit_code, r.stdout_bytes, r.timed_out),
        (0, size, false),
        "{r:?}"
    );
    if let Some(log) = &r.log_file {
        let len = std::fs::metadata(log).expect("log").len();
        assert_eq!(
            len, size,
            "the log is reported as the full output but is not"
        );
    } else {
        assert!(
            r.log_error.is_some(),
            "an incomplete log is explained: {r:?}"
        );
    }
    assert_eq!(ok(&py(&env, "s", "print('ok')").await), "ok");
}

#[tokio::test]
async fn filling_tmpfs_past_the_memory_limit_costs_at_most_one_run() {
    // tmpfs pages count against the memory limit and cannot be reclaimed without swap.
    let env = TestEnv::with_policy(
        "profiles:\n  standard: { memory: 96m, timeout: 20s, tmpfs: { tmp: 256m, home: 16m }, ulimits: { nofile: 1024, fsize: 8m } }\n",
    )
    .await;
    let host = HostSnapshot::take(&env);
    ok(&py(&env, "s", "print('warm')").await);
    let filled = try_exec(
        &env,
        "s",
        &ExecRequest::new(
            Language::Shell,
            "for i in $(seq 1 30); do head -c 8000000 /dev/zero > /tmp/f$i || break; done",
        ),
        &CancellationToken::new(),
    )
    .await;
    let lost = match &filled {
        Ok(o) => {
            assert!(o.result.oom_killed, "{:?}", o.result);
            1
        }
        Err(e) => {
            assert!(matches!(e, Error::ContainerGone { .. }), "{e}");
            0
        }
    };
    // The OOM killer may take the supervisor too, after it reported; then the next run says
    // the container went away and the one after gets a fresh container (with an empty /tmp).
    let next = recovers_after(&env, "s", "print('ok')", lost).await;
    assert_eq!(next.stdout, "ok\n");
    assert_healthy(&env, "s", &host).await;
}

// --- bombs and floods -------------------------------------------------------------------------

#[tokio::test]
async fn python_fork_bomb_is_contained() {
    // Under gVisor the memory limit holds gVisor's own memory too, which grows with every
    // process: the bomb gets room to reach the process limit instead of the memory limit.
    let env = TestEnv::with_policy(if gvisor_pass() {
        "profiles:\n  standard: { memory: 768m, pids: 64, timeout: 5s }\n"
    } else {
        SMALL_LIMITS
    })
    .await;
    let host = HostSnapshot::take(&env);
    let r = exec(
        &env,
        "s",
        ExecRequest::new(
            Language::Python,
            // The first fork the pids limit refuses leaves its errno in a marker, so the test
            // knows the bomb reached the limit rather than idling until the timeout.
            "import errno, os\nwhile True:\n    try:\n        os.fork()\n    except OSError as e:\n        try:\n            fd = os.open('/workspace/refused', os.O_CREAT | os.O_EXCL | os.O_WRONLY)\n            os.write(fd, errno.errorcode[e.errno].encode())\n            os.close(fd)\n        except OSError:\n            pass",
        )
        .timeout(Duration::from_secs(3)),
    )
    .await
    .result;
    assert!(r.timed_out && r.exit_code == 124, "{r:?}");
    let refused = std::fs::read_to_string(env.workspace("s").join("refused"))
        .expect("the bomb never hit the pids limit");
    assert_eq!(refused, "EAGAIN");
    // Which of them `stray_processes_killed` lists depends on when they died: see
    // `processes_killed_at_a_timeout_are_reported`.
    assert_nothing_left_running(&env, "s").await;
    assert_healthy(&env, "s", &host).await;
}

#[tokio::test]
async fn memory_bombs_in_child_processes_are_contained() {
    let env = TestEnv::with_policy(SMALL_LIMITS).await;
    let host = HostSnapshot::take(&env);
    ok(&py(&env, "s", "kept = 41").await);
    let gvisor = under_gvisor(&env, "s").await;
    // A child the interpreter starts: the OOM killer takes the child, not the interpreter.
    let child_bomb = ExecRequest::new(
        Language::Python,
        "import subprocess, sys\np = subprocess.run([sys.executable, '-c', 'x = []\\nwhile True: x.append(bytearray(1 << 20))'])\nprint(p.returncode)",
    );
    match try_exec(&env, "s", &child_bomb, &CancellationToken::new()).await {
        Ok(out) if gvisor => {
            // gVisor's kernel keeps the sandbox within its memory: the child's allocation
            // fails (MemoryError, exit 1), or the child is killed.
            let r = out.result;
            assert!(["1", "-9"].contains(&r.stdout.trim()), "{r:?}");
            assert_eq!(r.exit_code, 0, "{r:?}");
            assert!(!r.interpreter_lost);
            assert_eq!(
                ok(&py(&env, "s", "print(kept + 1)").await),
                "42",
                "state kept"
            );
        }
        Ok(out) => {
            let r = out.result;
            assert!(r.oom_killed, "{r:?}");
            assert_eq!((r.exit_code, r.stdout.trim()), (0, "-9"), "{r:?}");
            assert!(!r.interpreter_lost);
            assert_eq!(
                ok(&py(&env, "s", "print(kept + 1)").await),
                "42",
                "state kept"
            );
        }
        // gVisor's own memory is in the limit too: when the host's OOM killer comes first it
        // ends the whole sandbox (and says so), never anything outside it.
        Err(Error::ContainerGone { reason, .. }) if gvisor => {
            assert!(reason.contains("out of memory"), "{reason}");
            assert!(py(&env, "s", "print(1)").await.container_started);
        }
        Err(e) => panic!("{e}"),
    }
    // Many medium processes from the shell at once.
    let bomb = ExecRequest::new(
        Language::Shell,
        "for i in $(seq 1 12); do python3 -c 'import time; b = bytearray(16 << 20); b[::4096] = b\"x\" * len(b[::4096]); time.sleep(60)' & done; wait",
    )
    .timeout(Duration::from_secs(5));
    match try_exec(&env, "s", &bomb, &CancellationToken::new()).await {
        Ok(out) => assert!(
            out.result.oom_killed || out.result.timed_out,
            "{:?}",
            out.result
        ),
        // gVisor's memory is in the limit too: past it the host's OOM killer ends the whole
        // sandbox (and says so), never anything outside it.
        Err(Error::ContainerGone { reason, .. }) if gvisor => {
            assert!(reason.contains("out of memory"), "{reason}")
        }
        Err(e) => panic!("{e}"),
    }
    assert_nothing_left_running(&env, "s").await;
    assert_healthy(&env, "s", &host).await;
}

#[tokio::test]
async fn a_ten_megabyte_line_streams_and_is_cut_with_a_log() {
    let env = TestEnv::new().await;
    let host = HostSnapshot::take(&env);
    let capture = env.sandbox.policy().capture_bytes;
    let size = 10u64 << 20;
    let out = exec(
        &env,
        "s",
        ExecRequest::new(
            Language::Python,
            format!("import sys\nn = sys.stdout.buffer.write(b'a' * {size})"),
        ),
    )
    .await;
    assert!(!out.stdout.contains(&b'\n'));
    assert_eq!(out.stdout.len() as u64, size);
    let r = out.result;
    assert_eq!((r.exit_code, r.stdout_bytes), (0, size));
    assert!(
        r.truncated && (r.stdout.len() as u64) <= capture + 1024,
        "{}",
        r.stdout.len()
    );
    let log = r.log_file.expect("log");
    assert_eq!(std::fs::metadata(&log).expect("log").len(), size);
    assert_healthy(&env, "s", &host).await;
}

#[tokio::test]
async fn a_hundred_thousand_lines_arrive_complete_and_in_order() {
    let env = TestEnv::new().await;
    let expected: String = (1..=100_000).map(|i| format!("{i}\n")).collect();
    let out = exec(&env, "s", ExecRequest::new(Language::Shell, "seq 1 100000")).await;
    assert_eq!(out.stdout, expected.as_bytes());
    let out = exec(
        &env,
        "s",
        ExecRequest::new(Language::Python, "for i in range(1, 100001):\n    print(i)"),
    )
    .await;
    assert_eq!(out.stdout, expected.as_bytes());
    assert_eq!(out.result.stdout_bytes, expected.len() as u64);
}

/// Output is bytes; rendering it is the front end's job. `exec` is the human's own code, so it
/// passes them to the terminal. `chat` shows the model's code and the output of it, and today
/// writes both raw too: it should neutralise control sequences there (an approval prompt can
/// be repainted by an escape sequence in the code it shows).
#[tokio::test]
async fn terminal_escape_sequences_pass_through_as_bytes() {
    let env = TestEnv::new().await;
    let bytes: &[u8] =
        b"\x1b[2J\x1b[H\x1b]0;owned\x07\x1b]52;c;aGk=\x07\x1b[31mred\x1b[0m\r\x08\x00\x7f";
    let literal: String = bytes.iter().map(|b| format!("\\x{b:02x}")).collect();
    let out = exec(
        &env,
        "s",
        ExecRequest::new(
            Language::Python,
            format!("import sys\nn = sys.stdout.buffer.write(b'{literal}')"),
        ),
    )
    .await;
    assert_eq!(out.stdout, bytes);
    assert!(
        out.result.stdout.contains("\x1b]52;c;"),
        "{:?}",
        out.result.stdout
    );
    assert_eq!(ok(&py(&env, "s", "print('ok')").await), "ok");
}

// --- signals and leftovers --------------------------------------------------------------------

#[tokio::test]
async fn shell_code_ignoring_sigterm_and_sigint_still_ends_at_the_timeout() {
    let env = TestEnv::new().await;
    let host = HostSnapshot::take(&env);
    let r = exec(
        &env,
        "s",
        ExecRequest::new(Language::Shell, "trap '' TERM INT HUP; sleep 1000")
            .timeout(Duration::from_secs(2)),
    )
    .await
    .result;
    assert!(r.timed_out && r.exit_code == 124, "{r:?}");
    assert!(r.interpreter_lost, "bash ignored SIGINT, so it had to go");
    let next = sh(&env, "s", "echo ok").await;
    assert_eq!(ok(&next), "ok");
    assert!(next.interpreter_restarted, "the restart is reported");
    assert_nothing_left_running(&env, "s").await;
    assert_healthy(&env, "s", &host).await;
}

#[tokio::test]
async fn python_code_ignoring_or_blocking_sigint_still_ends_at_the_timeout() {
    let env = TestEnv::new().await;
    let host = HostSnapshot::take(&env);
    for code in [
        "import signal, time\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\ntime.sleep(1000)",
        "import signal\nsignal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})\nwhile True:\n    pass",
        "import time\nwhile True:\n    try:\n        time.sleep(1000)\n    except BaseException:\n        pass",
        "import subprocess, signal, time\nsubprocess.Popen(['sleep', '1000'], preexec_fn=lambda: [signal.signal(s, signal.SIG_IGN) for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)], start_new_session=True)\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\ntime.sleep(1000)",
    ] {
        let r = exec(
            &env,
            "s",
            ExecRequest::new(Language::Python, code).timeout(Duration::from_secs(2)),
        )
        .await
        .result;
        assert!(r.timed_out && r.exit_code == 124, "{code}\n{r:?}");
        assert_nothing_left_running(&env, "s").await;
        let next = py(&env, "s", "print('ok')").await;
        assert_eq!(ok(&next), "ok", "{code}");
        assert!(
            next.interpreter_restarted || !r.interpreter_lost,
            "a lost interpreter is restarted and reported: {code}"
        );
    }
    assert_healthy(&env, "s", &host).await;
}

#[tokio::test]
async fn python_double_fork_daemon_is_killed_and_reported() {
    let env = TestEnv::new().await;
    let host = HostSnapshot::take(&env);
    let r = py(
        &env,
        "s",
        "import os, subprocess, time\npid = os.fork()\nif pid == 0:\n    os.setsid()\n    if os.fork() == 0:\n        os.execvp('sleep', ['sleep', '1001'])\n    os._exit(0)\nos.waitpid(pid, 0)\n\
         for _ in range(500):\n    if subprocess.run(['pgrep', '-x', 'sleep'], capture_output=True).returncode == 0:\n        break\n    time.sleep(0.02)",
    )
    .await;
    assert_eq!(r.exit_code, 0, "{}", r.stderr);
    assert_eq!(r.stray_processes_killed, ["sleep"], "{r:?}");
    assert_nothing_left_running(&env, "s").await;
    assert_healthy(&env, "s", &host).await;
}

#[tokio::test]
async fn disowned_and_setsid_shell_jobs_are_killed_and_reported() {
    let env = TestEnv::new().await;
    let host = HostSnapshot::take(&env);
    let r = sh(
        &env,
        "s",
        "sleep 1002 & disown\nsetsid -f sleep 1003\n( trap '' HUP TERM INT; exec sleep 1004 ) &\nnohup setsid sleep 1005 >/dev/null 2>&1 &\n\
         for _ in $(seq 500); do [ \"$(pgrep -c -x sleep)\" -ge 4 ] && break; sleep 0.02; done",
    )
    .await;
    assert_eq!(r.exit_code, 0, "{}", r.stderr);
    let killed = r
        .stray_processes_killed
        .iter()
        .filter(|p| *p == "sleep")
        .count();
    assert_eq!(killed, 4, "{:?}", r.stray_processes_killed);
    assert_nothing_left_running(&env, "s").await;
    assert_healthy(&env, "s", &host).await;
}

/// At a timeout the supervisor interrupts the interpreter, then (a second later) kills the
/// code's processes, then the interpreter. What that second step kills is dropped from the
/// report: `escalate` ignores `kill_strays`' return value, and the sweep in `finish` finds
/// nothing left. Fix: keep the names on the Execution and add them to the "ended" event.
#[tokio::test]
async fn processes_killed_at_a_timeout_are_reported() {
    let env = TestEnv::new().await;
    for (lang, code) in [
        (Language::Shell, "trap '' INT TERM; sleep 1000"),
        (
            Language::Python,
            "import signal, subprocess, time\nsubprocess.Popen(['sleep', '1000'])\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\ntime.sleep(1000)",
        ),
    ] {
        let r = exec(
            &env,
            "s",
            ExecRequest::new(lang, code).timeout(Duration::from_secs(2)),
        )
        .await
        .result;
        assert!(r.timed_out, "{r:?}");
        assert_eq!(r.stray_processes_killed, ["sleep"], "{code}");
    }
}

/// Threads are not processes: one a cell leaves in the persistent interpreter keeps running
/// after the execution ended, and may start processes then. The supervisor sweeps while idle
/// (and before the next execution starts), so such a process is stopped and reported as seq 0,
/// not left running or blamed on the next run.
#[tokio::test]
async fn processes_started_after_an_execution_ended_do_not_keep_running() {
    let env = TestEnv::new().await;
    let r = py(
        &env,
        "s",
        "import threading, subprocess, time\ndef later():\n    time.sleep(1)\n    subprocess.Popen(['sleep', '1006'])\n    open('/workspace/spawned', 'w').close()\n\
         threading.Thread(target=later, daemon=True).start()",
    )
    .await;
    assert_eq!(
        (r.exit_code, r.stray_processes_killed.len()),
        (0, 0),
        "{r:?}"
    );
    // Wait, with no execution running, until the thread has started its process.
    let spawned = env.workspace("s").join("spawned");
    for _ in 0..1500 {
        if spawned.exists() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(spawned.exists(), "the thread never started its process");
    let next = sh(&env, "s", "pgrep -f 'sleep 1006' || echo none").await;
    assert_eq!(ok(&next), "none", "started after the run and still running");
    assert!(
        next.stray_processes_killed.is_empty(),
        "blamed on the next run: {next:?}"
    );
}

// --- the supervisor itself --------------------------------------------------------------------

#[tokio::test]
async fn killing_the_supervisor_or_init_only_costs_the_interpreters_state() {
    let env = TestEnv::new().await;
    let host = HostSnapshot::take(&env);
    ok(&sh(&env, "s", "echo kept > /workspace/kept.txt").await);
    // Under gVisor the supervisor is PID 1 (no tini), and gVisor's kernel does not shield PID 1
    // from its own namespace's signals: SIGKILL and SIGTERM end the sandbox there too, while
    // `kill -1` spares PID 1 as Linux does and takes only the interpreters.
    let gvisor = under_gvisor(&env, "s").await;
    if gvisor {
        ok(&py(&env, "s", "kept = 41").await);
        let r = sh(&env, "s", "kill -KILL -1; echo after").await;
        assert_eq!(ok(&r), "after");
        let next = py(
            &env,
            "s",
            "print(open('/workspace/kept.txt').read().strip())",
        )
        .await;
        assert_eq!(ok(&next), "kept");
        assert!(
            next.interpreter_restarted && !next.container_started,
            "{next:?}"
        );
    }
    let codes: &[&str] = &[
        "kill -KILL \"$(cat /run/ironclaw/supervisor.pid)\"; sleep 60",
        "kill -TERM 1; sleep 60",
        "kill -KILL -1; sleep 60",
    ];
    let codes = if gvisor { &codes[..2] } else { codes };
    // Each waits for its own end, so the supervisor dies while the run is in progress.
    for &code in codes {
        let r = try_exec(
            &env,
            "s",
            &ExecRequest::new(Language::Shell, code),
            &CancellationToken::new(),
        )
        .await;
        let err = r.expect_err("the supervisor died during the run");
        assert!(matches!(err, Error::ContainerGone { .. }), "{code}: {err}");
        let next = py(
            &env,
            "s",
            "print(open('/workspace/kept.txt').read().strip())",
        )
        .await;
        assert_eq!(ok(&next), "kept", "{code}");
        assert!(next.container_started, "{code}");
    }
    assert_healthy(&env, "s", &host).await;
}

#[tokio::test]
async fn a_frozen_supervisor_is_given_up_on_and_replaced() {
    let env = TestEnv::new().await;
    let host = HostSnapshot::take(&env);
    ok(&sh(&env, "s", "echo kept > /workspace/kept.txt").await);
    let r = try_exec(
        &env,
        "s",
        &ExecRequest::new(
            Language::Shell,
            "kill -STOP \"$(cat /run/ironclaw/supervisor.pid)\"",
        )
        .timeout(Duration::from_secs(1)),
        &CancellationToken::new(),
    )
    .await;
    let err = r.expect_err("a stopped supervisor cannot report");
    assert!(matches!(err, Error::Protocol(_)), "{err}");
    let next = py(
        &env,
        "s",
        "print(open('/workspace/kept.txt').read().strip())",
    )
    .await;
    assert_eq!(ok(&next), "kept");
    assert!(next.container_started, "a new container");
    assert_healthy(&env, "s", &host).await;
}

// --- CIS Docker Benchmark, section 5 (container runtime) -------------------------------------

#[tokio::test]
async fn the_container_meets_the_cis_docker_runtime_recommendations() {
    let env = TestEnv::new().await;
    ok(&py(&env, "s", "print('up')").await);
    let found = ironclaw_sandbox::container::find(env.docker(), &env.instance, "s")
        .await
        .expect("find")
        .expect("the session's container");
    let info = env
        .docker()
        .inspect_container(&found.id, None)
        .await
        .expect("inspect");
    let checks = cis_runtime_checks(&info);
    assert!(checks.len() >= 25, "{checks:?}");
    let failed: Vec<_> = checks
        .iter()
        .filter(|(_, ok)| !ok)
        .map(|(k, _)| *k)
        .collect();
    assert!(
        failed.is_empty(),
        "CIS checks failed: {failed:?}\n{info:#?}"
    );
    // A health check is configured (5.26); reaching "healthy" takes its 60 s interval, which
    // this test does not wait for.
    let health = info
        .config
        .and_then(|c| c.healthcheck)
        .expect("healthcheck");
    assert!(health.interval.unwrap_or(0) > 0 && health.retries.unwrap_or(0) > 0);
}
