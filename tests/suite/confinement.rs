//! Issue #10's classes, end to end: every protection holds for every process in the container,
//! whoever started it (Docker's health check, any `docker exec`), and a run's leftovers cannot
//! exhaust the session. Each test first shows the attack really ran (a marker, a success against
//! an unprotected target), then that it failed where it matters.

use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;

use bollard::exec::{StartExecOptions, StartExecResults};
use bollard::models::ExecConfig;
use futures_util::StreamExt;
use ironclaw_tests::escape::*;
use ironclaw_tests::*;

/// Runs `cmd` in the session's container the way Docker runs a health check or a person runs
/// `docker exec`: as the container's user, outside the supervisor's process tree. Returns
/// (exit code, stdout+stderr).
async fn docker_exec(env: &TestEnv, session: &str, cmd: &[&str], detach: bool) -> (i64, String) {
    let id = env.container_id(session).await.expect("container");
    let exec = env
        .docker()
        .create_exec(
            &id,
            ExecConfig {
                cmd: Some(cmd.iter().map(|s| s.to_string()).collect()),
                attach_stdout: Some(!detach),
                attach_stderr: Some(!detach),
                ..Default::default()
            },
        )
        .await
        .expect("create exec");
    let started = env
        .docker()
        .start_exec(
            &exec.id,
            Some(StartExecOptions {
                detach,
                ..Default::default()
            }),
        )
        .await
        .expect("start exec");
    let mut text = String::new();
    if let StartExecResults::Attached { mut output, .. } = started {
        while let Some(Ok(chunk)) = output.next().await {
            text.push_str(&String::from_utf8_lossy(&chunk.into_bytes()));
        }
    }
    if detach {
        return (0, text);
    }
    let code = env
        .docker()
        .inspect_exec(&exec.id)
        .await
        .expect("inspect exec")
        .exit_code
        .unwrap_or(-1);
    (code, text)
}

fn json_line(text: &str) -> BTreeMap<String, String> {
    let line = text.lines().last().unwrap_or_default();
    serde_json::from_str(line).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"))
}

/// A program planted under `name` in every folder of the sandbox's PATH the code can write: it
/// leaves a marker in the workspace, then runs the real one.
fn plant_code(names: &[&str]) -> String {
    format!(
        r##"
import os, stat
planted = []
for d in os.environ["PATH"].split(":"):
    try:
        os.makedirs(d, exist_ok=True)
    except OSError:
        continue
    if not os.access(d, os.W_OK):
        continue
    for name in {names:?}:
        p = os.path.join(d, name)
        with open(p, "w") as f:
            f.write("#!/bin/sh\necho ran > /workspace/planted-" + name + "\nexec /usr/bin/" + name + " \"$@\"\n")
        os.chmod(p, 0o755)
        planted.append(p)
print(len(planted))
"##
    )
}

#[tokio::test]
async fn the_health_check_resolves_nothing_through_a_folder_the_code_can_write() {
    let env = TestEnv::new().await;
    let names = ["cat", "sh", "kill", "python3", "test", "env"];
    let planted: usize = ok(&py(&env, "s", &plant_code(&names)).await)
        .parse()
        .expect("count");
    assert!(planted >= names.len(), "nothing planted");
    // The attack path works: a program looked up through PATH is the planted one.
    ok(&sh(
        &env,
        "s",
        "cat /dev/null; test -f /workspace/planted-cat && echo yes",
    )
    .await);
    let ws = env.workspace("s");
    assert!(ws.join("planted-cat").exists(), "the plant did not run");
    std::fs::remove_file(ws.join("planted-cat")).expect("rm marker");

    // Docker's probe, exactly as configured on the container.
    let id = env.container_id("s").await.expect("container");
    let info = env
        .docker()
        .inspect_container(&id, None)
        .await
        .expect("inspect");
    let test = info
        .config
        .and_then(|c| c.healthcheck)
        .and_then(|h| h.test)
        .expect("health check");
    assert_eq!(test[0], "CMD", "exec form, no shell: {test:?}");
    assert!(test[1].starts_with('/'), "absolute path: {test:?}");
    let argv: Vec<&str> = test[1..].iter().map(String::as_str).collect();
    let (code, out) = docker_exec(&env, "s", &argv, false).await;
    assert_eq!(code, 0, "the health check reports a live supervisor: {out}");
    for name in names {
        assert!(
            !ws.join(format!("planted-{name}")).exists(),
            "the health check ran the planted {name}"
        );
    }
    // And it reports a dead supervisor as unhealthy (it checks something real).
    let (code, _) = docker_exec(
        &env,
        "s",
        &[
            "/usr/libexec/ironclaw/python3",
            "-I",
            "-S",
            "-c",
            "import sys; sys.path.insert(0, '/opt/ironclaw'); import health; \
             health.os.listdir = lambda p: []; sys.exit(0 if health.supervisor_alive() else 1)",
        ],
        false,
    )
    .await;
    assert_eq!(code, 1, "a health check that sees no supervisor fails");
}

/// What a process started by `docker exec` may do: the same rules as the supervisor's children.
const EXEC_PROBE: &str = r#"
import ctypes, errno, json, os, socket
libc = ctypes.CDLL(None, use_errno=True)
r = {}
def name(e): return errno.errorcode.get(e, str(e))
p = "/workspace/exec-probe"
open(p, "w").close()
os.chmod(p, 0o755); r["chmod_plain"] = "ok"
for label, fn in [
    ("chmod_setuid", lambda: os.chmod(p, 0o4755)),
    ("chmod_setgid", lambda: os.chmod(p, 0o2755)),
    ("open_creat_setuid", lambda: os.close(os.open("/workspace/exec-probe2", os.O_CREAT | os.O_WRONLY, 0o4755))),
]:
    try:
        fn(); r[label] = "ok"
    except OSError as e:
        r[label] = name(e.errno)
for label, fam, typ in [("vsock", 40, socket.SOCK_STREAM), ("netlink", 16, socket.SOCK_DGRAM)]:
    try:
        socket.socket(fam, typ).close(); r[label] = "ok"
    except OSError as e:
        r[label] = name(e.errno)
r["seccomp"] = [l.split()[1] for l in open("/proc/self/status") if l.startswith("Seccomp:")][0]
print(json.dumps(r))
"#;

#[tokio::test]
async fn processes_started_by_docker_exec_are_under_the_containers_seccomp_rules() {
    let env = TestEnv::new().await;
    ok(&sh(&env, "s", "true").await);
    for python in ["/usr/bin/python3", "/usr/libexec/ironclaw/python3"] {
        let (code, out) = docker_exec(&env, "s", &[python, "-c", EXEC_PROBE], false).await;
        assert_eq!(code, 0, "{python}: {out}");
        let r = json_line(&out);
        // The calls were made: the file exists and an ordinary chmod worked.
        assert_eq!(r["chmod_plain"], "ok", "{python}: {r:?}");
        assert_eq!(r["seccomp"], "2", "{python}: a filter is in force: {r:?}");
        for key in ["chmod_setuid", "chmod_setgid", "open_creat_setuid"] {
            assert_eq!(r[key], "EPERM", "{python} {key}: {r:?}");
        }
        for key in ["vsock", "netlink"] {
            assert_eq!(r[key], "EPERM", "{python} {key}: {r:?}");
        }
    }
    // A shell through another `docker exec` (a different program, the same rules).
    let (_, out) = docker_exec(
        &env,
        "s",
        &[
            "/bin/sh",
            "-c",
            "chmod u+s /workspace/exec-probe; echo status=$?",
        ],
        false,
    )
    .await;
    assert!(out.contains("status=1"), "chmod u+s through sh: {out}");
    let mode = std::fs::metadata(env.workspace("s").join("exec-probe"))
        .expect("probe file")
        .permissions()
        .mode();
    assert_eq!(
        mode & 0o6000,
        0,
        "a setuid/setgid bit reached the host: {mode:o}"
    );
    assert!(
        !env.workspace("s").join("exec-probe2").exists()
            || std::fs::metadata(env.workspace("s").join("exec-probe2"))
                .expect("probe2")
                .permissions()
                .mode()
                & 0o6000
                == 0
    );
}

const PTRACE_PROBE: &str = r#"
import ctypes, errno, json, os, time
libc = ctypes.CDLL(None, use_errno=True)
libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p]
PTRACE_SEIZE, PTRACE_DETACH = 0x4206, 17
def cmdline(pid):
    try:
        return open("/proc/%d/cmdline" % pid, "rb").read().split(b"\0")
    except OSError:
        return []
def find(pred):
    for _ in range(200):
        for n in os.listdir("/proc"):
            if n.isdigit() and pred(cmdline(int(n))):
                return int(n)
        time.sleep(0.05)
    return None
targets = {
    "dumpable_exec": find(lambda c: c[:2] == [b"/usr/bin/sleep", b"31"]),
    "private_python_exec": find(lambda c: b"ironclaw-probe-target" in b" ".join(c)),
}
r = {}
for label, pid in targets.items():
    if pid is None:
        r[label] = "not found"
        continue
    rc = libc.ptrace(PTRACE_SEIZE, pid, None, None)
    r[label + ":seize"] = "ok" if rc == 0 else errno.errorcode.get(ctypes.get_errno(), "?")
    if rc == 0:
        libc.ptrace(PTRACE_DETACH, pid, None, None)
    try:
        os.close(os.open("/proc/%d/mem" % pid, os.O_RDWR)); r[label + ":mem"] = "ok"
    except OSError as e:
        r[label + ":mem"] = errno.errorcode.get(e.errno, "?")
print(json.dumps(r))
"#;

#[tokio::test]
async fn code_cannot_ptrace_or_write_the_memory_of_processes_ironclaw_starts_by_exec() {
    let env = TestEnv::new().await;
    ok(&sh(&env, "s", "true").await);
    // A dumpable control (what the attack needs) and IronClaw's private python, as the health
    // check runs it, both started by `docker exec` outside the supervisor's tree.
    docker_exec(&env, "s", &["/usr/bin/sleep", "31"], true).await;
    docker_exec(
        &env,
        "s",
        &[
            "/usr/libexec/ironclaw/python3",
            "-I",
            "-S",
            "-c",
            "import time; time.sleep(31)  # ironclaw-probe-target",
        ],
        true,
    )
    .await;
    let r = json_line(&ok(&py(&env, "s", PTRACE_PROBE).await));
    // The attack works where nothing protects the target...
    assert_eq!(r["dumpable_exec:seize"], "ok", "{r:?}");
    assert_eq!(r["dumpable_exec:mem"], "ok", "{r:?}");
    // ...and not against what IronClaw starts.
    assert_eq!(r["private_python_exec:seize"], "EPERM", "{r:?}");
    assert_eq!(r["private_python_exec:mem"], "EACCES", "{r:?}");
}

#[tokio::test]
async fn one_interpreter_cannot_reach_the_other_or_the_supervisor_through_proc() {
    let env = TestEnv::new().await;
    let bash_pid = ok(&sh(&env, "s", "echo $$").await);
    let code = format!(
        r#"{PY_PRELUDE}
import subprocess
sup = os.getppid()
child = subprocess.Popen(["sleep", "30"])
# Popen can return while the child is still inside exec, before the kernel has made it
# dumpable again (it is a fork of the non-dumpable interpreter until then).
import time
time.sleep(0.3)
for label, pid in [("own_child", child.pid), ("bash", {bash_pid}), ("supervisor", sup)]:
    attempt(label + ":mem", lambda pid=pid: os.close(os.open("/proc/%d/mem" % pid, os.O_RDWR)))
    attempt(label + ":fd", lambda pid=pid: os.listdir("/proc/%d/fd" % pid))
    attempt(label + ":environ", lambda pid=pid: open("/proc/%d/environ" % pid, "rb").read())
child.kill(); child.wait()
report()
"#
    );
    let r = json_line(&ok(&py(&env, "s", &code).await));
    for what in ["mem", "fd", "environ"] {
        assert_eq!(r[&format!("own_child:{what}")], "ok", "control: {r:?}");
        assert_eq!(r[&format!("bash:{what}")], "EACCES", "{r:?}");
        assert_eq!(r[&format!("supervisor:{what}")], "EACCES", "{r:?}");
    }
}

/// Children until the pids limit refuses one: the attack needs the limit really reached.
const FORK_UNTIL_REFUSED_POPEN: &str = r#"
import subprocess
keep = 42
procs = []
try:
    while len(procs) < 1000:
        procs.append(subprocess.Popen(["sleep", "600"]))
except OSError as e:
    print("refused after", len(procs), e.errno)
"#;

const FORK_UNTIL_REFUSED_FORK: &str = r#"
import os
keep = 42
n = 0
try:
    while n < 1000:
        if os.fork() == 0:
            os._exit(0)
        n += 1
except OSError as e:
    print("refused after", n, e.errno)
"#;

async fn zombies_do_not_exhaust_the_session(code: &str) {
    let env = TestEnv::with_policy(SMALL_LIMITS).await;
    ok(&sh(&env, "s", "echo bash is up").await);
    let out = ok(&py(&env, "s", code).await);
    assert!(
        out.starts_with("refused after") && out.ends_with(" 11"),
        "the run never reached the pids limit: {out}"
    );
    let forks = sh(
        &env,
        "s",
        "for i in 1 2 3 4 5 6 7 8; do /bin/true || exit 9; done; (echo sub) ; echo forked",
    )
    .await;
    assert_eq!(ok(&forks), "sub\nforked", "{}", forks.stderr);
    assert!(!forks.interpreter_restarted && !forks.container_started);
    let state = py(&env, "s", "print(keep)").await;
    assert_eq!(ok(&state), "42", "the Python session lost its state");
    assert!(!state.interpreter_restarted && !state.container_started);
}

#[tokio::test]
async fn popen_children_left_by_a_python_run_do_not_stop_the_next_run_from_forking() {
    zombies_do_not_exhaust_the_session(FORK_UNTIL_REFUSED_POPEN).await;
}

#[tokio::test]
async fn forked_children_left_unreaped_by_a_python_run_do_not_stop_the_next_run_from_forking() {
    zombies_do_not_exhaust_the_session(FORK_UNTIL_REFUSED_FORK).await;
}

#[tokio::test]
async fn socket_families_a_sandbox_never_needs_are_refused_by_the_filter() {
    // The host kernel has them: a refusal in the sandbox is the filter's, not a missing family.
    let host = |family: i32, typ: i32| {
        let fd = unsafe_free_socket(family, typ);
        fd.is_ok()
    };
    assert!(host(16, 2), "the host kernel has netlink");
    let host_vsock = host(40, 1);
    let env = TestEnv::new().await;
    let r = py_attempts(
        &env,
        "s",
        r#"
import socket
for label, fam, typ in [("unix", 1, 1), ("inet", 2, 1), ("inet6", 10, 1), ("netlink", 16, 2),
                        ("vsock", 40, 1), ("packet", 17, 3), ("alg", 38, 5), ("key", 15, 3)]:
    attempt(label, lambda fam=fam, typ=typ: socket.socket(fam, typ).close())
"#,
    )
    .await;
    for ok_family in ["unix", "inet", "inet6"] {
        assert_eq!(r[ok_family], "ok", "{r:?}");
    }
    for refused in ["netlink", "vsock", "packet", "alg", "key"] {
        assert_eq!(
            r[refused], "EPERM",
            "{refused} (host vsock: {host_vsock}): {r:?}"
        );
    }
}

/// socket(2) from the test process, without unsafe code: through Python on the host.
fn unsafe_free_socket(family: i32, typ: i32) -> Result<(), String> {
    let out = std::process::Command::new("python3")
        .args([
            "-c",
            &format!("import socket; socket.socket({family}, {typ}).close()"),
        ])
        .output()
        .map_err(|e| e.to_string())?;
    if out.status.success() {
        Ok(())
    } else {
        Err(String::from_utf8_lossy(&out.stderr).into_owned())
    }
}
