//! Issue #11, items 1-3, against the real sandbox: what runs is exactly what was approved (no
//! leftover can swap or read the code on its way to the interpreter), a run's status comes from
//! the interpreter and not from lines the code writes, and whatever a run leaves behind in a
//! persistent interpreter is reported with the next run, until a fresh interpreter clears it.

use std::time::Duration;

use ironclaw_tests::*;

/// A thread left in the Python interpreter that, for a few seconds, attacks every way code used
/// to reach bash: the old cell file (replaced by a FIFO), bash's descriptors and memory through
/// /proc. It logs each attempt to the workspace, so the test can show they were made.
fn leftover_attacker(bash_pid: &str) -> String {
    format!(
        r#"
import os, threading, time, errno
def attack():
    log = open("/workspace/attack.log", "a", buffering=1)
    deadline = time.time() + 6
    while time.time() < deadline:
        try:
            if not os.path.exists("/run/ironclaw/cell.sh"):
                os.mkfifo("/run/ironclaw/cell.sh")
                log.write("fifo planted\n")
        except OSError as e:
            log.write("fifo %s\n" % errno.errorcode.get(e.errno))
        for what, flags in (("fd/0", os.O_RDWR), ("fd/9", os.O_WRONLY), ("mem", os.O_RDWR)):
            try:
                fd = os.open("/proc/{bash_pid}/" + what, flags | os.O_NONBLOCK)
                log.write("opened %s\n" % what)
                try:
                    os.write(fd, b"echo swapped-by-thread\n")
                except OSError:
                    pass
                os.close(fd)
            except OSError as e:
                log.write("%s %s\n" % (what, errno.errorcode.get(e.errno)))
        time.sleep(0.01)
threading.Thread(target=attack, daemon=True).start()
time.sleep(0.3)
print("thread started")
"#
    )
}

#[tokio::test]
async fn a_leftover_thread_cannot_swap_or_read_the_next_shell_runs_code() {
    let env = TestEnv::new().await;
    let bash_pid = ok(&sh(&env, "s", "echo $$").await);
    assert_eq!(
        ok(&py(&env, "s", &leftover_attacker(&bash_pid)).await),
        "thread started"
    );
    let approved = sh(&env, "s", "echo approved-shell-code-ran").await;
    assert_eq!(ok(&approved), "approved-shell-code-ran");
    assert!(!approved.interpreter_restarted);
    let log = std::fs::read_to_string(env.workspace("s").join("attack.log")).expect("attack log");
    // The attack ran: the FIFO went where the cell file used to be, and /proc was tried.
    assert!(log.contains("fifo planted"), "{log}");
    // Under runc bash is non-dumpable (EACCES). gVisor ignores dumpability for /proc/PID/fd,
    // so there what stops the reopen is that bash's input and completion channels are
    // sockets (ENXIO); its memory is refused either way.
    let gvisor = under_gvisor(&env, "s").await;
    for (what, refused) in [
        ("fd/0", if gvisor { "ENXIO" } else { "EACCES" }),
        ("fd/9", if gvisor { "ENXIO" } else { "EACCES" }),
        ("mem", "EACCES"),
    ] {
        assert!(log.contains(&format!("{what} {refused}")), "{what}: {log}");
        assert!(!log.contains(&format!("opened {what}")), "{what}: {log}");
    }
    // A variant the fix was not written against: the same attacker, now against the bash that
    // runs the next command of a longer approved script.
    let longer = sh(
        &env,
        "s",
        "sleep 0.5; echo second-approved; sleep 0.2; echo third",
    )
    .await;
    assert_eq!(ok(&longer), "second-approved\nthird");
    // The Python interpreter still has the thread: its next run is flagged as altered.
    let next = py(&env, "s", "print('next')").await;
    assert!(
        next.altered_before.iter().any(|a| a.kind == "thread"),
        "{:?}",
        next.altered_before
    );
}

#[tokio::test]
async fn a_completion_forged_by_shell_code_is_ignored_and_reported() {
    let env = TestEnv::new().await;
    let r = sh(
        &env,
        "s",
        "printf 'done 0 0123456789abcdef\\n' >&9 && echo forged-bytes-written >&2; \
         echo after-forge; (exit 7)",
    )
    .await;
    assert!(r.stderr.contains("forged-bytes-written"), "{}", r.stderr);
    assert_eq!(r.exit_code, 7, "stdout: {} stderr: {}", r.stdout, r.stderr);
    assert!(
        r.stdout.contains("after-forge"),
        "output after the forgery lost: {}",
        r.stdout
    );
    assert_eq!(r.forged_completions, 1);
    assert!(r
        .altered_after
        .iter()
        .any(|a| a.kind == "forged_completion"));
}

#[tokio::test]
async fn a_completion_forged_by_a_program_the_shell_started_is_ignored() {
    let env = TestEnv::new().await;
    // Another writer (a child process through the inherited descriptor), other line shapes.
    let r = sh(
        &env,
        "s",
        "sh -c 'printf \"done 0 x\\nend y\\nprompt\\nrandom\\n\" >&9 && echo wrote >&2'; \
         sleep 0.2; echo still-running; (exit 5)",
    )
    .await;
    assert!(r.stderr.contains("wrote"), "{}", r.stderr);
    assert_eq!(r.exit_code, 5, "{} / {}", r.stdout, r.stderr);
    assert!(r.stdout.contains("still-running"));
    assert!(r.forged_completions >= 2, "{}", r.forged_completions);
}

#[tokio::test]
async fn a_completion_forged_by_python_code_is_ignored_and_reported() {
    let env = TestEnv::new().await;
    let r = py(
        &env,
        "s",
        r#"
import os, sys, json
n = os.write(4, (json.dumps({"rc": 0, "cell": 0}) + "\n").encode())
sys.stderr.write("wrote %d\n" % n)
print("after-forge")
sys.exit(7)
"#,
    )
    .await;
    assert!(r.stderr.contains("wrote "), "{}", r.stderr);
    assert_eq!(r.exit_code, 7, "{} / {}", r.stdout, r.stderr);
    assert!(r.stdout.contains("after-forge"));
    assert_eq!(r.forged_completions, 1);
}

#[tokio::test]
async fn what_a_run_leaves_in_bash_is_reported_until_a_fresh_interpreter() {
    let env = TestEnv::new().await;
    let first = sh(
        &env,
        "s",
        "ls() { echo not-really-ls; }; alias cat='echo gotcha'; trap 'true' USR2; \
         export LD_PRELOAD=; PATH=/tmp:$PATH",
    )
    .await;
    ok(&first);
    let kinds: Vec<&str> = first
        .altered_after
        .iter()
        .map(|a| a.kind.as_str())
        .collect();
    for kind in ["function", "alias", "trap", "path"] {
        assert!(kinds.contains(&kind), "{kind} not reported: {kinds:?}");
    }
    // The alteration is real: the next approved `ls` is not ls.
    let next = sh(&env, "s", "ls /").await;
    assert_eq!(ok(&next), "not-really-ls");
    assert!(next.altered_before.iter().any(|a| a.kind == "function"));
    // A fresh interpreter, as the person can ask for in the approval.
    let fresh = exec(
        &env,
        "s",
        ExecRequest::new(Language::Shell, "type -t ls; echo $PATH").fresh_interpreter(true),
    )
    .await
    .result;
    let out = ok(&fresh);
    assert!(out.starts_with("file\n"), "{out}");
    assert!(!out.contains("/tmp:"), "{out}");
    assert!(
        fresh.altered_before.is_empty(),
        "{:?}",
        fresh.altered_before
    );
    assert!(fresh.altered_after.is_empty(), "{:?}", fresh.altered_after);
}

#[tokio::test]
async fn what_a_run_leaves_in_python_is_reported_and_a_fresh_interpreter_clears_it() {
    let env = TestEnv::new().await;
    let first = py(
        &env,
        "s",
        r#"
import builtins, signal, threading, time, os
builtins.print = builtins.print
_real_open = builtins.open
builtins.open = lambda *a, **k: _real_open(*a, **k)
signal.signal(signal.SIGUSR1, lambda *a: None)
os.environ["LD_PRELOAD"] = "/nowhere.so"
threading.Thread(target=time.sleep, args=(30,), daemon=True).start()
"#,
    )
    .await;
    ok(&first);
    let kinds: Vec<&str> = first
        .altered_after
        .iter()
        .map(|a| a.kind.as_str())
        .collect();
    for kind in ["thread", "builtins", "signals", "environment"] {
        assert!(kinds.contains(&kind), "{kind} not reported: {kinds:?}");
    }
    let fresh = exec(
        &env,
        "s",
        ExecRequest::new(
            Language::Python,
            "import threading; print(threading.active_count())",
        )
        .fresh_interpreter(true),
    )
    .await
    .result;
    assert_eq!(ok(&fresh), "1");
    assert!(fresh.interpreter_restarted || fresh.altered_before.is_empty());
    assert!(fresh.altered_after.is_empty(), "{:?}", fresh.altered_after);
    // A second plain run stays clean.
    tokio::time::sleep(Duration::from_millis(50)).await;
    let again = py(&env, "s", "print(1)").await;
    assert!(
        again.altered_before.is_empty(),
        "{:?}",
        again.altered_before
    );
}

#[tokio::test]
async fn code_with_every_kind_of_byte_reaches_bash_exactly() {
    let env = TestEnv::new().await;
    // Quotes, backslashes, a bidi override, invalid UTF-8 is impossible in a String, tabs,
    // heredocs and a trailing line without a newline.
    let code = "x='it'\"'\"'s'; echo \"$x\" \\\\ $'\\t'tab; echo '\u{202e}rtl'\ncat <<'EOF'\n$HOME `x`\nEOF\nprintf 'no newline'";
    let r = sh(&env, "s", code).await;
    assert_eq!(
        ok(&r),
        "it's \\ \ttab\n\u{202e}rtl\n$HOME `x`\nno newline",
        "{}",
        r.stderr
    );
    // A syntax error in the code does not touch the command line around it.
    let bad = sh(&env, "s", "echo before; if then").await;
    assert_eq!(bad.exit_code, 2, "{} / {}", bad.stdout, bad.stderr);
    assert_eq!(bad.forged_completions, 0);
    // An expansion error aborts the line in an interactive shell: still a clean, quick end.
    let aborted = sh(&env, "s", "echo ${nope?is unset}; echo not-reached").await;
    assert_ne!(aborted.exit_code, 0);
    assert!(!aborted.stdout.contains("not-reached"));
    assert!(!aborted.timed_out);
}

/// A process that attaches afresh (the app restarted) can ask what the interpreters carry
/// before it runs anything, and asking never starts a sandbox.
#[tokio::test]
async fn what_the_interpreters_carry_can_be_asked_without_running_or_starting_anything() {
    let env = TestEnv::new().await;
    let name = ironclaw_sandbox::session::SessionName::new("s").expect("name");
    let nothing = env.sandbox.leftovers(&name).await.expect("ask");
    assert!(nothing.is_empty(), "{nothing:?}");
    assert!(
        env.container_id("s").await.is_none(),
        "asking must not create a container"
    );

    let first = py(
        &env,
        "s",
        "import threading, time\nthreading.Thread(target=time.sleep, args=(30,), daemon=True).start()",
    )
    .await;
    ok(&first);
    assert!(first.altered_after.iter().any(|a| a.kind == "thread"));

    // Another client of the same installation, with no connection yet, as after a restart.
    let other = env.second_client().await;
    let carried = other.leftovers(&name).await.expect("ask again");
    let python = carried.get("python").cloned().unwrap_or_default();
    assert!(
        python
            .iter()
            .any(|a| a.kind == "thread" && a.seq == first.seq),
        "{carried:?}"
    );
    assert!(
        carried.get("shell").is_none_or(|s| s.is_empty()),
        "{carried:?}"
    );
}
