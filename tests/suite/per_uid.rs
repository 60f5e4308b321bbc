//! Kernel budgets counted per UID. The code runs as the person's UID, so under runc a run that
//! hoards inotify instances (`fs.inotify.max_user_instances`) or POSIX message-queue bytes
//! (`RLIMIT_MSGQUEUE`) takes them from every host process of that person. Under gVisor both
//! live in gVisor's own kernel: the same hoard leaves the host user's budget untouched.
//!
//! The test shows the attack bites first (a runc sandbox holding the hoard makes a host process
//! of the same UID fail), then runs it under gVisor and shows the host process unaffected.

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

async fn hoard(env: &TestEnv) -> serde_json::Value {
    let text = ok(&py(env, "s", HOARD).await);
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}"))
}

#[tokio::test]
async fn a_hoard_of_inotify_instances_and_message_queues_reaches_the_host_user_only_under_runc() {
    // runc first: the attack bites.
    let runc = TestEnv::with_policy("profiles:\n  standard: { runtime: runc }\n").await;
    ok(&py(&runc, "s", "import platform; print(platform.release())").await);
    assert!(!under_gvisor(&runc, "s").await);
    let r = hoard(&runc).await;
    assert!(r["inotify"].as_u64().unwrap_or(0) > 0, "{r}");
    assert_eq!(r["inotify_end"], "EMFILE", "{r}");
    assert!(r["mq"].as_u64().unwrap_or(0) > 0, "{r}");
    let (uid, gid) = (
        r["uid"].as_u64().unwrap_or(0),
        r["gid"].as_u64().unwrap_or(0),
    );
    assert_eq!(
        probe_host(uid, gid),
        "EMFILE EMFILE",
        "a runc hoard takes the host user's budgets (the probe sees it): {r}"
    );
    drop(runc); // removes the container, and with it the hoard
    assert_eq!(
        probe_host(uid, gid),
        "ok ok",
        "the budgets come back with the container gone"
    );

    // gVisor: the same hoard, held, and the host user keeps both budgets.
    let gvisor = TestEnv::with_policy("profiles:\n  standard: { runtime: runsc }\n").await;
    let r = hoard(&gvisor).await;
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
}
