//! Kernel budgets counted per UID. The code runs as the person's UID, so under runc a run that
//! hoards inotify instances (`fs.inotify.max_user_instances`) or POSIX message-queue bytes
//! (`RLIMIT_MSGQUEUE`) takes them from every host process of that person. Under gVisor both
//! live in gVisor's own kernel: the same hoard leaves the host user's budget untouched.
//!
//! Under runc what can be closed is: the queues a run leaves are removed when it ends and named
//! in its report, and the inotify instances its interpreter holds are reported as an alteration
//! until a fresh interpreter lets go of them. The test shows the attack bites (the hoard held
//! makes a host process of the same UID fail), that each half is then closed as said, and that
//! under gVisor the same hoard never reaches the host user at all.

use std::process::Command;

use ironclaw_tests::*;

/// Takes every inotify instance it can and keeps them in the interpreter; a child makes
/// message queues until refused and exits, leaving them behind (they outlive every process).
const HOARD: &str = r#"
import ctypes, errno, json, os
libc = ctypes.CDLL(None, use_errno=True)
fds, inotify_end = [], "none"
while len(fds) < 600:  # well past the host's usual 128, short of the 1024 descriptors
    fd = libc.inotify_init1(0)
    if fd < 0:
        inotify_end = errno.errorcode.get(ctypes.get_errno(), "?")
        break
    fds.append(fd)
import builtins
builtins._hoard = fds
pid = os.fork()
if pid == 0:
    for fd in fds:  # the parent keeps them; the child needs room for its own
        os.close(fd)
    rt = ctypes.CDLL("librt.so.1", use_errno=True)
    class Attr(ctypes.Structure):
        _fields_ = [("flags", ctypes.c_long), ("maxmsg", ctypes.c_long), ("msgsize", ctypes.c_long), ("cur", ctypes.c_long), ("pad", ctypes.c_long * 4)]
    attr = Attr(0, 10, 8192, 0)
    made, end = 0, "none"
    while made < 1000:
        q = rt.mq_open(("/hoard%d" % made).encode(), os.O_CREAT | os.O_RDWR, 0o600, ctypes.byref(attr))
        if q < 0:
            end = errno.errorcode.get(ctypes.get_errno(), "?")
            break
        os.close(q)  # the queue stays: it has a name
        made += 1
    with open("/tmp/mq", "w") as f:
        f.write(json.dumps([made, end]))
    os._exit(0)
os.waitpid(pid, 0)
with open("/tmp/mq") as f:
    made, end = json.load(f)
print(json.dumps({"inotify": len(fds), "inotify_end": inotify_end, "mq": made, "mq_end": end, "uid": os.getuid(), "gid": os.getgid()}))
"#;

/// What a host process of `uid` gets from inotify_init1 and mq_open: `ok` or the errno name.
const PROBE: &str = r#"
import ctypes, errno, os
libc = ctypes.CDLL(None, use_errno=True)
fd = libc.inotify_init1(0)
inotify = "ok" if fd >= 0 else errno.errorcode.get(ctypes.get_errno(), "?")
rt = ctypes.CDLL("librt.so.1", use_errno=True)
class Attr(ctypes.Structure):
    _fields_ = [("flags", ctypes.c_long), ("maxmsg", ctypes.c_long), ("msgsize", ctypes.c_long), ("cur", ctypes.c_long), ("pad", ctypes.c_long * 4)]
name = ("/ironclaw-probe-%d" % os.getpid()).encode()
q = rt.mq_open(name, os.O_CREAT | os.O_RDWR, 0o600, ctypes.byref(Attr(0, 10, 8192, 0)))
mq = "ok" if q >= 0 else errno.errorcode.get(ctypes.get_errno(), "?")
if q >= 0:
    rt.mq_unlink(name)
print(inotify, mq)
"#;

fn probe_host(uid: u64, gid: u64) -> String {
    let me = nix::unistd::getuid().as_raw() as u64;
    let out = if me == uid {
        Command::new("/usr/bin/python3")
            .args(["-c", PROBE])
            .output()
    } else {
        assert_eq!(
            me, 0,
            "the sandbox runs as {uid}, neither this user nor root's substitute"
        );
        Command::new("setpriv")
            .args([
                &format!("--reuid={uid}"),
                &format!("--regid={gid}"),
                "--clear-groups",
                "/usr/bin/python3",
                "-c",
                PROBE,
            ])
            .output()
    }
    .expect("run the host probe");
    assert!(out.status.success(), "{out:?}");
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

async fn hoard(env: &TestEnv) -> (serde_json::Value, ExecResult) {
    let result = py(env, "s", HOARD).await;
    let text = ok(&result);
    let report = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}"));
    (report, result)
}

#[tokio::test]
async fn a_hoard_of_inotify_instances_and_message_queues_reaches_the_host_user_only_under_runc() {
    // runc first: the attack bites.
    let runc = TestEnv::with_policy("profiles:\n  standard: { runtime: runc }\n").await;
    ok(&py(&runc, "s", "import platform; print(platform.release())").await);
    assert!(!under_gvisor(&runc, "s").await);
    let (r, result) = hoard(&runc).await;
    assert!(r["inotify"].as_u64().unwrap_or(0) > 0, "{r}");
    assert_eq!(r["inotify_end"], "EMFILE", "{r}");
    let queues = r["mq"].as_u64().unwrap_or(0);
    assert!(queues > 0, "{r}");
    assert_eq!(
        r["mq_end"], "EMFILE",
        "the queues took the whole budget: {r}"
    );
    let (uid, gid) = (
        r["uid"].as_u64().unwrap_or(0),
        r["gid"].as_u64().unwrap_or(0),
    );
    // The queues outlived the child that made them; the run's end removed and named them.
    assert_eq!(
        result.ipc_removed.len() as u64,
        queues,
        "{:?}",
        result.ipc_removed
    );
    assert!(result
        .ipc_removed
        .iter()
        .all(|q| q.starts_with("message queue /hoard")));
    // The interpreter still holds the instances: the host user has none left, and the run's
    // report says so until a fresh interpreter.
    assert!(
        result.altered_after.iter().any(|a| a.kind == "inotify"),
        "{:?}",
        result.altered_after
    );
    assert_eq!(
        probe_host(uid, gid),
        "EMFILE ok",
        "held inotify instances take the host user's budget; the removed queues gave theirs back"
    );
    let fresh = exec(
        &runc,
        "s",
        ExecRequest::new(Language::Python, "print(1)").fresh_interpreter(true),
    )
    .await
    .result;
    assert!(fresh.interpreter_restarted, "{fresh:?}");
    assert!(!fresh.altered_after.iter().any(|a| a.kind == "inotify"));
    assert_eq!(
        probe_host(uid, gid),
        "ok ok",
        "a fresh interpreter let go of them"
    );

    // gVisor: the same hoard, held, and the host user keeps both budgets.
    let gvisor = TestEnv::with_policy("profiles:\n  standard: { runtime: runsc }\n").await;
    let (r, _) = hoard(&gvisor).await;
    assert!(under_gvisor(&gvisor, "s").await);
    // More instances than the host lets this user have at all: they are gVisor's, not the host's.
    let host_limit: u64 = std::fs::read_to_string("/proc/sys/fs/inotify/max_user_instances")
        .expect("max_user_instances")
        .trim()
        .parse()
        .expect("a number");
    assert!(
        r["inotify"].as_u64().unwrap_or(0) > host_limit.min(599),
        "{r}"
    );
    assert!(r["mq"].as_u64().unwrap_or(0) > 0, "{r}");
    assert_eq!(
        (r["uid"].as_u64(), r["gid"].as_u64()),
        (Some(uid), Some(gid))
    );
    assert_eq!(probe_host(uid, gid), "ok ok", "{r}");
    drop(runc);
}

/// System V objects and POSIX queues outlive every process: a run's are removed when it ends
/// and named in its report, so none outlives the run unreported. Shown made first: each call
/// returned an id, and the kernel's own listing has them before the run ends.
#[tokio::test]
async fn what_a_run_leaves_in_the_kernels_ipc_tables_is_removed_when_it_ends_and_named() {
    let env = TestEnv::new().await;
    let code = r#"
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
IPC_PRIVATE, IPC_CREAT = 0, 0o1000
shm = libc.shmget(IPC_PRIVATE, 1 << 20, IPC_CREAT | 0o600)
sem = libc.semget(IPC_PRIVATE, 4, IPC_CREAT | 0o600)
msg = libc.msgget(IPC_PRIVATE, IPC_CREAT | 0o600)
rt = ctypes.CDLL("librt.so.1", use_errno=True)
q = rt.mq_open(b"/left-behind", os.O_CREAT | os.O_RDWR, 0o600, None)
os.close(q)
listed = [len(open("/proc/sysvipc/" + k).read().splitlines()) - 1 for k in ("shm", "sem", "msg")]
print(shm, sem, msg, listed, os.listdir("/dev/mqueue"))
"#;
    let r = py(&env, "s", code).await;
    let out = ok(&r);
    let ids: Vec<&str> = out.split_whitespace().take(3).collect();
    assert!(
        ids.iter().all(|id| id.parse::<i64>().is_ok_and(|n| n >= 0)),
        "each object was made: {out}"
    );
    assert!(out.ends_with("[1, 1, 1] ['left-behind']"), "{out}");
    let mut removed = r.ipc_removed.clone();
    removed.sort();
    assert_eq!(
        removed,
        [
            format!("System V message queue {}", ids[2]),
            format!("System V semaphore set {}", ids[1]),
            format!("System V shared memory {}", ids[0]),
            "message queue /left-behind".to_string(),
        ]
    );
    let after = ok(&py(
        &env,
        "s",
        "print([len(open('/proc/sysvipc/' + k).read().splitlines()) - 1 for k in ('shm', 'sem', 'msg')], __import__('os').listdir('/dev/mqueue'))",
    )
    .await);
    assert_eq!(after, "[0, 0, 0] []");
}
