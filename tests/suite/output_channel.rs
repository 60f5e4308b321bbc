//! The output channel (`exec::channel`): a run's frames over a Unix socket this process listens
//! on, in a host folder mounted read-only into the container. Attacked from inside the
//! sandbox, the way code that has read SECURITY.md would: connect and inject, write or swap
//! the socket, reach another sandbox's, flood it; and the paths without it.

use ironclaw_tests::*;
use pretty_assertions::assert_eq;
use std::os::unix::fs::MetadataExt;
use std::path::PathBuf;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

const DIR: &str = "/run/ironclaw-channel";

async fn channel_dir(env: &TestEnv, session: &str) -> PathBuf {
    let c = env
        .sandbox
        .container_of(&name(session))
        .await
        .expect("lookup")
        .expect("a container");
    env.paths.channels_dir().join(c.name)
}

fn socket_names(dir: &std::path::Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .expect("the output folder")
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// Every way in without the run's token: nothing, a guessed token, frames straight away, a
/// token-shaped line then forged frames for every run number the code could guess, and many
/// silent connections held open, from a run in progress (whose token is live) and from a
/// thread it leaves behind into the next run.
const INJECT: &str = r#"
import os, socket, struct, threading, time
def frame(kind, seq, payload):
    head = struct.pack(">2sBII", b"\xc1\xa7", kind, seq, len(payload))
    return head + bytes([sum(head) & 0xFF]) + payload
forged = b"".join(frame(1, seq, b"FORGED-OUTPUT\n") for seq in range(0, 64))
forged += frame(3, 0, b'{"type":"ended","exit_code":0,"duration_ms":1}')
attempts = {
    "silent": b"",
    "guessed": b"0123456789abcdef0123456789abcdef\n" + forged,
    "frames": forged,
    "short": b"00\n" + forged,
}
sockets = sorted(n for n in os.listdir("/run/ironclaw-channel") if n.endswith(".sock"))
print("sockets", len(sockets))
for n in sockets:
    for what, data in attempts.items():
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.connect("/run/ironclaw-channel/" + n)
        print("connected", what)
        s.sendall(data)
        s.settimeout(5)
        try:
            closed = s.recv(1) == b""
        except (ConnectionResetError, BrokenPipeError):
            closed = True
        except socket.timeout:
            closed = False
        print("closed" if closed else "left-open", what)
held = []
def hold():
    for _ in range(300):
        try:
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.connect("/run/ironclaw-channel/" + sockets[0])
            s.sendall(forged)
            held.append(s)
        except OSError:
            pass
        time.sleep(0.01)
threading.Thread(target=hold, daemon=True).start()
time.sleep(0.3)
print("held", len(held))
"#;

#[tokio::test]
async fn code_cannot_inject_output_through_the_host_socket() {
    let env = TestEnv::new().await;
    let first = exec(&env, "s", ExecRequest::new(Language::Python, "print('up')")).await;
    assert!(first.result.direct_output, "the run used the socket");

    let attack = exec(&env, "s", ExecRequest::new(Language::Python, INJECT)).await;
    let out = String::from_utf8_lossy(&attack.stdout).into_owned();
    // The attack ran: it found this process's socket and connected every way.
    assert!(out.contains("sockets 1"), "{out}\n{}", attack.result.stderr);
    for what in ["silent", "guessed", "frames", "short"] {
        assert!(out.contains(&format!("connected {what}")), "{out}");
        assert!(out.contains(&format!("closed {what}")), "{what}: {out}");
    }
    assert!(out.contains("held "), "{out}");
    assert!(!out.contains("FORGED"), "{out}");
    assert_eq!(
        attack.result.exit_code, 0,
        "its own status, not a forged one"
    );
    assert!(attack.result.direct_output);

    // The thread it left behind keeps connecting and forging while the next run streams.
    let next = exec(
        &env,
        "s",
        ExecRequest::new(
            Language::Python,
            "import time\nfor i in range(5):\n    print('line', i, flush=True)\n    time.sleep(0.1)",
        ),
    )
    .await;
    let text = String::from_utf8_lossy(&next.stdout).into_owned();
    assert_eq!(
        text,
        (0..5).map(|i| format!("line {i}\n")).collect::<String>()
    );
    assert!(!String::from_utf8_lossy(&next.stderr).contains("FORGED"));
}

#[tokio::test]
async fn the_output_folder_is_read_only_and_holds_only_its_own_sandboxs_sockets() {
    let env = TestEnv::new().await;
    ok(&py(&env, "a", "1").await);
    ok(&py(&env, "b", "1").await);
    let (dir_a, dir_b) = (channel_dir(&env, "a").await, channel_dir(&env, "b").await);
    let (names_a, names_b) = (socket_names(&dir_a), socket_names(&dir_b));
    assert_eq!(names_a.len(), 1, "{names_a:?}");
    assert_eq!(names_b.len(), 1, "{names_b:?}");
    assert_ne!(names_a, names_b, "one socket per container");

    let probe = format!(
        r#"
import errno, os
d = "{DIR}"
print("sees", sorted(os.listdir(d)))
sock = os.path.join(d, sorted(os.listdir(d))[0])
for what, f in [
    ("create", lambda: open(os.path.join(d, "planted"), "w")),
    ("mkdir", lambda: os.mkdir(os.path.join(d, "x"))),
    ("unlink", lambda: os.unlink(sock)),
    ("rename", lambda: os.rename(sock, sock + ".old")),
    ("symlink", lambda: os.symlink("/workspace", os.path.join(d, "ffffffffffffffff.sock"))),
    ("bind", lambda: __import__("socket").socket(1, 1).bind(os.path.join(d, "eeeeeeeeeeeeeeee.sock"))),
    ("chmod", lambda: os.chmod(d, 0o777)),
]:
    try:
        f()
        print(what, "ok")
    except OSError as e:
        print(what, errno.errorcode.get(e.errno, e.errno))
"#
    );
    let out = ok(&py(&env, "a", &probe).await);
    assert!(
        out.contains(&format!("sees {names_a:?}").replace('"', "'")),
        "session a sees its own socket only: {out}"
    );
    for what in [
        "create", "mkdir", "unlink", "rename", "symlink", "bind", "chmod",
    ] {
        assert!(out.contains(&format!("{what} EROFS")), "{what}: {out}");
    }
    // Nothing changed on the host, and only the container's user may enter the folder.
    assert_eq!(socket_names(&dir_a), names_a);
    let meta = std::fs::metadata(&dir_a).expect("folder");
    assert_eq!(meta.mode() & 0o777, 0o700);
    let user = ok(&sh(&env, "a", "id -u").await);
    assert_eq!(meta.uid().to_string(), user);
    // And it still carries the output.
    let r = exec(&env, "a", ExecRequest::new(Language::Shell, "echo still")).await;
    assert!(r.result.direct_output);
    assert_eq!(r.stdout, b"still\n");
}

#[tokio::test]
async fn a_host_that_stops_waiting_mid_stream_costs_the_run_its_output_not_the_sandbox() {
    let env = TestEnv::new().await;
    ok(&py(&env, "s", "kept = 42").await);
    // 64 MiB, slowly enough that the host goes away in the middle.
    let request = ExecRequest::new(
        Language::Python,
        "import sys, time\nfor i in range(64):\n    sys.stdout.buffer.write(b'x' * 1048576)\n    sys.stdout.flush()\n    time.sleep(0.02)",
    );
    let mut received = 0u64;
    let mut on_event = |e: ExecEvent| {
        if let ExecEvent::Stdout(b) = e {
            received += b.len() as u64;
        }
    };
    let cancel = CancellationToken::new();
    let run = exec_with(&env, "s", &request, &cancel, &mut on_event);
    let gave_up = tokio::time::timeout(Duration::from_millis(400), run).await;
    assert!(
        gave_up.is_err(),
        "the run ended before the host stopped waiting"
    );
    assert!(
        received > 0 && received < 64 << 20,
        "stopped mid-stream: {received} bytes"
    );

    // The supervisor goes on (a closed socket is not a closed stdout): same container, same
    // interpreter, once the abandoned run has finished.
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    let after = loop {
        match try_exec(
            &env,
            "s",
            &ExecRequest::new(Language::Python, "print(kept)"),
            &CancellationToken::new(),
        )
        .await
        {
            Ok(out) => break out,
            Err(Error::SessionBusy { .. }) if std::time::Instant::now() < deadline => {
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            Err(e) => panic!("{e}"),
        }
    };
    assert_eq!(after.stdout, b"42\n");
    assert_eq!(
        after.started,
        Some((false, false)),
        "no restart of anything"
    );
    assert!(after.result.direct_output);
}

#[tokio::test]
async fn without_the_folder_or_the_socket_output_goes_over_attach_unchanged() {
    let env = TestEnv::new().await;
    // Every byte value, past the in-memory cap so the zero-copy path to the log runs too.
    let code = "import sys\nb = bytes(range(256)) * 4096\nfor _ in range(3):\n    sys.stdout.buffer.write(b)\nn = sys.stderr.buffer.write(b'\\xff\\x00err')";
    let expected: Vec<u8> = (0..=255u8).cycle().take(256 * 4096 * 3).collect();
    let direct = exec(&env, "s", ExecRequest::new(Language::Python, code)).await;
    assert!(direct.result.direct_output);
    assert_eq!(direct.stdout, expected);
    assert_eq!(direct.stderr, b"\xff\x00err");

    // This process offers no socket (the bench's and an older host's way).
    env.sandbox.set_direct_output(false);
    let attach = exec(&env, "s", ExecRequest::new(Language::Python, code)).await;
    env.sandbox.set_direct_output(true);
    assert!(!attach.result.direct_output);
    assert_eq!(attach.stdout, expected);
    assert_eq!(attach.stderr, b"\xff\x00err");
    assert_eq!(attach.result.stdout_bytes, direct.result.stdout_bytes);

    // A container whose folder is gone (made by an IronClaw without the channel): another
    // process finds no folder, listens nowhere, and its runs use attach.
    let dir = channel_dir(&env, "s").await;
    std::fs::remove_dir_all(&dir).expect("remove the folder");
    let other = env.second_client().await;
    let r = try_exec_on(
        &other,
        "s",
        &ExecRequest::new(Language::Python, code),
        &CancellationToken::new(),
    )
    .await
    .expect("runs over attach");
    assert!(!r.result.direct_output);
    assert_eq!(r.stdout, expected);
    assert!(!dir.exists(), "nothing was made in its place");
}

/// What the interpreter and its children hold while the run's output goes over the socket, and
/// every way the code could take the supervisor's descriptor: inherited by the interpreter
/// (Python and the shell), by a child it starts, or taken from the supervisor with
/// `pidfd_getfd`. Each scan shows it ran by listing the pipes it does hold.
const SCAN: &str = r#"
import json, os, socket, sys
def scan():
    held = []
    for name in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink("/proc/self/fd/" + name)
        except OSError:
            continue  # the listing's own descriptor
        peer = None
        if target.startswith("socket:"):
            try:
                s = socket.socket(fileno=os.dup(int(name)))
                peer = repr(s.getpeername())
                s.close()
            except OSError as e:
                peer = "unreadable: %s" % e
        held.append([int(name), target, peer])
    return held
print("SCAN " + json.dumps(scan()))
"#;

const TAKE: &str = r#"
import ctypes, errno, json, os
sup = int(open("/run/ironclaw/supervisor.pid").read())
libc = ctypes.CDLL(None, use_errno=True)
got, errors = [], set()
try:
    pidfd = os.pidfd_open(sup)
except OSError as e:
    errors.add("pidfd_open " + errno.errorcode.get(e.errno, str(e.errno)))
else:
    for target in range(64):
        fd = libc.syscall(438, pidfd, target, 0)  # pidfd_getfd
        if fd >= 0:
            got.append([target, os.readlink("/proc/self/fd/%d" % fd)])
        else:
            errors.add(errno.errorcode.get(ctypes.get_errno(), "?"))
print("TAKE " + json.dumps({"got": got, "errors": sorted(errors)}))
"#;

fn scanned(out: &str, tag: &str) -> serde_json::Value {
    out.lines()
        .find_map(|l| l.strip_prefix(tag))
        .and_then(|rest| serde_json::from_str(rest).ok())
        .unwrap_or_else(|| panic!("the scan did not run to its report ({tag}): {out}"))
}

fn assert_no_socket(held: &serde_json::Value, who: &str) {
    let held = held.as_array().expect("a list of descriptors");
    // It ran: the interpreter's own output pipes are there.
    assert!(
        held.iter()
            .filter(|d| d[1].as_str().is_some_and(|t| t.starts_with("pipe:")))
            .count()
            >= 2,
        "{who} saw its pipes: {held:?}"
    );
    // The worker's own channels to the supervisor (requests, completions, the interrupt
    // target: fds 3-5) are unnamed socket pairs; a socket connected anywhere else, the host's
    // output channel above all, must not be held.
    let sockets: Vec<_> = held
        .iter()
        .filter(|d| d[1].as_str().is_some_and(|t| t.starts_with("socket:")))
        .filter(|d| !(PY_CONTROL_FDS.contains(&d[0].as_u64().unwrap_or(0)) && d[2] == "''"))
        .collect();
    assert!(sockets.is_empty(), "{who} holds a socket: {sockets:?}");
}

/// The Python worker's control channels (see `image/interpreters.py`).
const PY_CONTROL_FDS: [u64; 3] = [3, 4, 5];

#[tokio::test]
async fn code_holds_no_descriptor_of_the_supervisors_socket() {
    let env = TestEnv::new().await;
    // Python, and a child it starts with everything it may pass on.
    let code = format!(
        "{SCAN}\nimport subprocess\nsubprocess.run([sys.executable, '-c', {SCAN:?}], close_fds=False)\n"
    );
    let py_run = exec(&env, "s", ExecRequest::new(Language::Python, &code)).await;
    assert!(py_run.result.direct_output, "the socket was in use");
    let out = String::from_utf8_lossy(&py_run.stdout).into_owned();
    let mut reports = out.lines().filter(|l| l.starts_with("SCAN "));
    let (own, child) = (reports.next(), reports.next());
    assert!(own.is_some() && child.is_some(), "both scans ran: {out}");
    assert_no_socket(
        &scanned(own.unwrap_or_default(), "SCAN "),
        "the Python interpreter",
    );
    assert_no_socket(&scanned(child.unwrap_or_default(), "SCAN "), "its child");

    // The shell: its own descriptors (tested by `[`, a builtin, since the shell is not dumpable
    // and another process may not read its /proc entries), and a child's.
    let shell = "for n in {0..1023}; do\n  [ -e /dev/fd/$n ] || continue\n  kind=other; [ -p /dev/fd/$n ] && kind=pipe; [ -S /dev/fd/$n ] && kind=socket\n  echo \"fd $n $kind\"\ndone\nls -l /proc/self/fd/ | sed 's/^/child /'";
    let sh_run = exec(&env, "s", ExecRequest::new(Language::Shell, shell)).await;
    assert!(sh_run.result.direct_output);
    let out = String::from_utf8_lossy(&sh_run.stdout).into_owned();
    assert!(
        out.contains("fd 1 pipe") && out.contains("fd 2 pipe"),
        "the shell's listing ran: {out}"
    );
    assert!(
        out.contains("child ") && out.contains("pipe:"),
        "the child's listing ran: {out}"
    );
    // Bash's own input and completion channel (fds 0 and 9) are socket pairs to the
    // supervisor; the code's fd 0 is /dev/null, while bash keeps its input at fd 10 for the
    // redirection's end (close-on-exec), and a child inherits fd 9. Nothing else may be a
    // socket.
    let stray: Vec<&str> = out
        .lines()
        .filter(|l| l.contains(" socket") || l.contains("socket:"))
        .filter(|l| !matches!(*l, "fd 0 socket" | "fd 9 socket" | "fd 10 socket"))
        .filter(|l| !(l.starts_with("child ") && l.contains(" 9 -> socket:")))
        .collect();
    assert!(
        out.contains("fd 9 socket"),
        "the shell's channel was listed: {out}"
    );
    assert!(
        stray.is_empty(),
        "the shell or its child holds a socket: {stray:?}"
    );

    // Taking it from the supervisor, which exists (pidfd_open succeeded): every call was made
    // and refused with EPERM, the seccomp profile's answer (pidfd_getfd only with
    // CAP_SYS_PTRACE), never EBADF (a missing descriptor) or ENOSYS (no such call).
    let take = exec(&env, "s", ExecRequest::new(Language::Python, TAKE)).await;
    let out = String::from_utf8_lossy(&take.stdout).into_owned();
    let report = scanned(&out, "TAKE ");
    assert_eq!(
        report["got"],
        serde_json::json!([]),
        "took the supervisor's descriptors: {report}"
    );
    assert_eq!(
        report["errors"],
        serde_json::json!(["EPERM"]),
        "the supervisor was found and each call refused for want of permission: {report}"
    );
}
