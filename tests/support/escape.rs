//! Helpers for the adversarial containment suite (`suite/escape.rs`): run a list of hostile
//! attempts in one execution and get back how each ended, and check afterwards that both the
//! sandbox and the host are still in the state they were in.

use std::collections::BTreeMap;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

use bollard::models::{ContainerInspectResponse, RestartPolicyNameEnum};

use crate::{exec, ok, py, sh, ExecRequest, Language, TestEnv};

/// Defines `attempt(name, fn)` (an `OSError` is recorded as its errno name, success as "ok"),
/// `call(name, ret)` for raw libc calls through ctypes, and `report()`, which prints everything
/// recorded as one JSON line.
pub const PY_PRELUDE: &str = r#"
import ctypes, errno, json, os, sys
libc = ctypes.CDLL(None, use_errno=True)
_results = {}
def _name(n):
    return errno.errorcode.get(n, str(n))
def attempt(name, fn):
    try:
        fn()
        _results[name] = "ok"
    except OSError as e:
        _results[name] = _name(e.errno)
def call(name, ret):
    _results[name] = "ok" if ret >= 0 else _name(ctypes.get_errno())
def report():
    print(json.dumps(_results))
"#;

/// Python, after [`PY_PRELUDE`]: `syscall(name, nr, *args)` makes a raw system call in a child
/// process (a seccomp KILL ends the child, not the interpreter) and records how it ended under
/// `name`, then records under `"who " + name` who answered it:
/// - `filtered:ERRNO` (or `filtered:SIGSYS`): a seccomp filter of the sandbox refused it. The
///   proof: a probe filter installed innermost in a fresh child hands that call to a listener
///   thread; a filter's ERRNO or KILL outranks the probe's USER_NOTIF, so a call the sandbox
///   refuses never reaches the listener, whereas one it lets through does (and the listener
///   answers EXDEV, so the probe never runs the call).
/// - `reached-the-kernel`: nothing in the sandbox stopped it.
/// - `probe-…`: the probe could not tell (the test then fails saying so).
///
/// `NR` maps call names to this machine's numbers (calls the architecture lacks are absent);
/// `int80(nr, b, c, d)` makes a 32-bit call from the 64-bit process, `low(data)` places a
/// pointer argument for it below 4 GiB.
pub const SECCOMP_PROBE: &str = include_str!("seccomp_probe.py");

/// How an attempt may be refused. EINVAL and friends are not in the list: an attempt that
/// reaches argument checking has got past the permission checks, which is worth a look. Nor
/// are ENOENT and ENOSYS: a missing file or call is no refusal unless the test shows the target
/// exists (say, on the host) or that a filter of the sandbox answered.
pub const REFUSALS: &[&str] = &["EPERM", "EACCES", "EROFS"];

/// Runs `body` after [`PY_PRELUDE`] and returns what `report()` printed (name → "ok" or errno).
pub async fn py_attempts(env: &TestEnv, session: &str, body: &str) -> BTreeMap<String, String> {
    let code = format!("{PY_PRELUDE}\n{body}\nreport()\n");
    let r = py(env, session, &code).await;
    let out = ok(&r);
    let last = out.lines().last().unwrap_or_default();
    serde_json::from_str(last)
        .unwrap_or_else(|e| panic!("attempt report is not JSON ({e}): {out}\n{}", r.stderr))
}

/// Asserts that every attempt in `results` was refused with one of `allowed`.
#[track_caller]
pub fn assert_refused(results: &BTreeMap<String, String>, allowed: &[&str]) {
    let through: Vec<_> = results
        .iter()
        .filter(|(_, how)| !allowed.contains(&how.as_str()))
        .collect();
    assert!(
        through.is_empty(),
        "not refused: {through:?} (all: {results:?})"
    );
}

/// One shell attempt: its exit status and the first line of what it printed.
#[derive(Debug, Clone)]
pub struct ShAttempt {
    pub status: i32,
    pub message: String,
}

/// Runs each `(name, command)` in the session's shell, in a subshell so one attempt cannot
/// change the next, and returns how each ended.
pub async fn sh_attempts(
    env: &TestEnv,
    session: &str,
    attempts: &[(&str, &str)],
) -> BTreeMap<String, ShAttempt> {
    let mut script = String::new();
    for (name, command) in attempts {
        script.push_str(&format!(
            "out=$( ( {command} ) 2>&1 </dev/null ); rc=$?; \
             printf '%s\\t%s\\t%s\\n' '{name}' \"$rc\" \"$(printf '%s' \"$out\" | head -n1 | tr '\\t' ' ')\"\n"
        ));
    }
    let out = ok(&sh(env, session, &script).await);
    let parsed: BTreeMap<String, ShAttempt> = out
        .lines()
        .filter_map(|l| {
            let mut parts = l.splitn(3, '\t');
            let name = parts.next()?.to_string();
            let status = parts.next()?.parse().ok()?;
            let message = parts.next().unwrap_or_default().to_string();
            Some((name, ShAttempt { status, message }))
        })
        .collect();
    assert_eq!(parsed.len(), attempts.len(), "{out}");
    parsed
}

/// Asserts that every shell attempt failed (non-zero exit status). A missing command fails
/// too, so this alone does not show the attempt ran: prefer [`assert_all_refused`].
#[track_caller]
pub fn assert_all_failed(results: &BTreeMap<String, ShAttempt>) {
    let through: Vec<_> = results.iter().filter(|(_, a)| a.status == 0).collect();
    assert!(through.is_empty(), "succeeded: {through:?}");
}

/// Asserts that every shell attempt ran and was refused: a non-zero status that is not the
/// shell's "not found"/"cannot execute" (127/126), with a message naming one of `reasons`.
#[track_caller]
pub fn assert_all_refused(results: &BTreeMap<String, ShAttempt>, reasons: &[&str]) {
    let through: Vec<_> = results
        .iter()
        .filter(|(_, a)| {
            a.status == 0
                || a.status == 126
                || a.status == 127
                || !reasons.iter().any(|r| a.message.contains(r))
        })
        .collect();
    assert!(
        through.is_empty(),
        "not refused (or not attempted), expected one of {reasons:?}: {through:?}"
    );
}

/// Regular files under `dir` (links not followed) whose mode has S_ISUID or S_ISGID, as the
/// host sees them.
pub fn setuid_files_under(dir: &Path) -> Vec<(std::path::PathBuf, u32)> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for entry in entries.flatten() {
            let Ok(meta) = std::fs::symlink_metadata(entry.path()) else {
                continue;
            };
            if meta.is_dir() {
                stack.push(entry.path());
            } else if meta.is_file() && meta.mode() & 0o6000 != 0 {
                found.push((entry.path(), meta.mode()));
            }
        }
    }
    found
}

/// What of the host a test must leave exactly as it found it. Only things no other process on
/// a busy machine changes: the hostname, a few critical files, and anything under /etc owned by
/// the sandbox's UID (code can only ever create files as that UID).
#[derive(Debug, PartialEq, Eq)]
pub struct HostSnapshot {
    hostname: String,
    sandbox_owned_in_etc: Vec<String>,
    /// (size, mtime, mode, uid) of files whose change would mean the host was touched.
    critical: BTreeMap<String, Option<(u64, i64, u32, u32)>>,
}

impl HostSnapshot {
    pub fn take(env: &TestEnv) -> Self {
        let hostname = std::fs::read_to_string("/proc/sys/kernel/hostname")
            .expect("host hostname")
            .trim()
            .to_string();
        let uid = env.sandbox.user().uid;
        let mut sandbox_owned_in_etc: Vec<String> = std::fs::read_dir("/etc")
            .expect("list /etc")
            .flatten()
            .filter(|e| e.metadata().is_ok_and(|m| m.uid() == uid))
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        sandbox_owned_in_etc.sort();
        // Not /etc/passwd or /etc/shadow: the host_user tests add and remove users meanwhile.
        let critical = [
            "/etc/hostname",
            "/etc/fstab",
            "/etc/crontab",
            "/etc/sudoers",
        ]
        .iter()
        .map(|p| {
            let meta = std::fs::symlink_metadata(p)
                .ok()
                .map(|m| (m.len(), m.mtime(), m.mode(), m.uid()));
            (p.to_string(), meta)
        })
        .collect();
        Self {
            hostname,
            sandbox_owned_in_etc,
            critical,
        }
    }

    pub fn hostname(&self) -> &str {
        &self.hostname
    }
}

/// The sandbox still answers in both languages, the engine still answers, and the host's
/// hostname and /etc are as they were.
pub async fn assert_healthy(env: &TestEnv, session: &str, before: &HostSnapshot) {
    assert_eq!(ok(&py(env, session, "print('ok')").await), "ok");
    assert_eq!(ok(&sh(env, session, "echo ok").await), "ok");
    env.docker()
        .ping()
        .await
        .expect("the Docker engine answers");
    assert_eq!(&HostSnapshot::take(env), before, "the host changed");
}

/// Non-zombie processes in the container, by command name (`ps` itself left out). No pipeline:
/// a subshell of one that has not exec'd yet would show up as a second `bash`.
pub async fn live_commands(env: &TestEnv, session: &str) -> Vec<String> {
    let ps = ok(&sh(env, session, "ps -eo stat=,comm=").await);
    ps.lines()
        .filter_map(|l| l.trim().split_once(char::is_whitespace))
        .filter(|(stat, comm)| !stat.starts_with('Z') && comm.trim() != "ps")
        .map(|(_, comm)| comm.trim().to_string())
        .collect()
}

/// After the container died under it (killed, OOM): runs `code` until it succeeds, allowing
/// only failures that say the container went away, and at most `lost` of them. Returns the
/// successful result.
pub async fn recovers_after(
    env: &TestEnv,
    session: &str,
    code: &str,
    lost: usize,
) -> crate::ExecResult {
    let mut failures = Vec::new();
    loop {
        let request = ExecRequest::new(Language::Python, code);
        match crate::try_exec(env, session, &request, &Default::default()).await {
            Ok(o) if o.result.exit_code == 0 => return o.result,
            Ok(o) => panic!("after {failures:?}: {:?}", o.result),
            Err(e) => {
                assert!(matches!(e, crate::Error::ContainerGone { .. }), "{e}");
                failures.push(e.to_string());
                assert!(
                    failures.len() <= lost,
                    "more than {lost} run(s) lost: {failures:?}"
                );
            }
        }
    }
}

/// Asserts that nothing but tini, the supervisor and the two interpreters is running.
pub async fn assert_nothing_left_running(env: &TestEnv, session: &str) {
    let live = live_commands(env, session).await;
    assert!(
        live.len() <= 4
            && live
                .iter()
                .all(|c| ["tini", "python3", "bash"].contains(&c.as_str())),
        "left running: {live:?}"
    );
}

/// Streams `bytes` of `b'x'` to stdout in 64 KiB writes (assigned, so nothing is echoed).
pub fn flood_code(bytes: u64) -> String {
    format!(
        "import sys\nb = b'x' * 65536\nfor _ in range({}):\n    n = sys.stdout.buffer.write(b)\n",
        bytes / 65536
    )
}

/// Runs a flood and returns the result and the number of stdout bytes that were streamed.
pub async fn flood(env: &TestEnv, session: &str, bytes: u64) -> (crate::ExecResult, u64) {
    let out = exec(
        env,
        session,
        ExecRequest::new(Language::Python, flood_code(bytes)),
    )
    .await;
    let streamed = out.stdout.len() as u64;
    (out.result, streamed)
}

/// Whether `path`, resolved on the host, is a regular file inside `dir`.
pub fn resolves_inside(path: &Path, dir: &Path) -> bool {
    let (Ok(real), Ok(dir)) = (std::fs::canonicalize(path), std::fs::canonicalize(dir)) else {
        return false;
    };
    real.starts_with(dir) && std::fs::symlink_metadata(path).is_ok_and(|m| m.is_file())
}

/// The CIS Docker Benchmark (v1.6) section 5 "container runtime" items that apply to a desktop
/// sandbox, checked on `docker inspect` output; the name of each starts with its CIS number.
///
/// Not checked because they do not apply: 5.1/5.2 AppArmor/SELinux profile (host-dependent;
/// Docker applies `docker-default` where AppArmor is present, and we never pass `unconfined`,
/// which 5.21 checks), 5.6 sshd (the image has none), 5.13 binding to a host interface and
/// 5.7/5.8 ports (no network, nothing published: checked as "no ports"), 5.22/5.23 `docker
/// exec` with privileges or as root (IronClaw never execs), 5.27 image freshness (the image is
/// built locally and content-hashed), 5.14 "on-failure restart <= 5" (we use no restart policy,
/// which is stricter), 5.31 Docker socket (checked under 5.5).
pub fn cis_runtime_checks(info: &ContainerInspectResponse) -> Vec<(&'static str, bool)> {
    let config = info.config.clone().unwrap_or_default();
    let hc = info.host_config.clone().unwrap_or_default();
    let mounts = info.mounts.clone().unwrap_or_default();
    let security = hc.security_opt.clone().unwrap_or_default();
    let user = config.user.clone().unwrap_or_default();
    let uid = user.split(':').next().unwrap_or_default().to_string();
    let empty = |v: &Option<Vec<String>>| v.as_ref().is_none_or(Vec::is_empty);
    let not_host = |m: &Option<String>| m.as_deref().unwrap_or_default() != "host";
    let sensitive = [
        "/",
        "/boot",
        "/dev",
        "/etc",
        "/lib",
        "/proc",
        "/sys",
        "/usr",
        "/var/run/docker.sock",
        "/run/docker.sock",
    ];
    let ulimits: Vec<String> = hc
        .ulimits
        .clone()
        .unwrap_or_default()
        .into_iter()
        .filter_map(|u| u.name)
        .collect();
    let health = config
        .healthcheck
        .clone()
        .and_then(|h| h.test)
        .unwrap_or_default();
    vec![
        (
            "4.1 runs as a non-root user",
            !uid.is_empty() && uid != "0" && uid != "root",
        ),
        (
            "5.3 all capabilities dropped",
            hc.cap_drop == Some(vec!["ALL".to_string()]),
        ),
        ("5.3 no capability added", empty(&hc.cap_add)),
        ("5.4 not privileged", hc.privileged != Some(true)),
        (
            "5.5 no sensitive host folder or Docker socket mounted",
            mounts
                .iter()
                .all(|m| !sensitive.contains(&m.source.as_deref().unwrap_or_default())),
        ),
        (
            "5.5 the workspace is the only writable mount; the only other is the output \
             sockets' folder, read-only, this container's own in IronClaw's data folder",
            mounts.len() == 2
                && mounts
                    .iter()
                    .any(|m| m.destination.as_deref() == Some("/workspace") && m.rw == Some(true))
                && mounts.iter().any(|m| {
                    let own = format!("/channels{}", info.name.as_deref().unwrap_or("?"));
                    m.destination.as_deref() == Some("/run/ironclaw-channel")
                        && m.rw == Some(false)
                        && m.source.as_deref().is_some_and(|s| s.ends_with(&own))
                }),
        ),
        (
            "5.5 no binds or volumes-from",
            empty(&hc.binds) && empty(&hc.volumes_from),
        ),
        (
            "5.7/5.8 no ports published",
            hc.port_bindings.as_ref().is_none_or(|p| p.is_empty())
                && hc.publish_all_ports != Some(true),
        ),
        (
            "5.9/5.29 no host network, not on docker0",
            hc.network_mode.as_deref() == Some("none"),
        ),
        ("5.10 memory limited", hc.memory.unwrap_or(0) > 0),
        ("5.10 no swap beyond memory", hc.memory_swap == hc.memory),
        (
            "5.11 CPU limited",
            hc.nano_cpus.unwrap_or(0) > 0 || hc.cpu_quota.unwrap_or(0) > 0,
        ),
        (
            "5.12 read-only root filesystem",
            hc.readonly_rootfs == Some(true),
        ),
        (
            "5.14 restart policy not always",
            matches!(
                hc.restart_policy.as_ref().and_then(|r| r.name.as_ref()),
                None | Some(RestartPolicyNameEnum::EMPTY | RestartPolicyNameEnum::NO)
            ),
        ),
        ("5.15 no host PID namespace", not_host(&hc.pid_mode)),
        (
            "5.16 private IPC namespace",
            hc.ipc_mode.as_deref() == Some("private"),
        ),
        (
            "5.17 no host devices",
            hc.devices.as_ref().is_none_or(Vec::is_empty)
                && empty(&hc.device_cgroup_rules)
                && hc.device_requests.as_ref().is_none_or(Vec::is_empty),
        ),
        (
            "5.18 ulimits set (nofile, fsize)",
            ["nofile", "fsize"]
                .iter()
                .all(|n| ulimits.iter().any(|u| u == n)),
        ),
        (
            "5.19 mount propagation not shared",
            mounts.iter().all(|m| {
                !m.propagation
                    .as_deref()
                    .unwrap_or_default()
                    .contains("shared")
            }),
        ),
        ("5.20 no host UTS namespace", not_host(&hc.uts_mode)),
        (
            "5.21 seccomp and AppArmor not unconfined",
            security.iter().all(|o| !o.contains("unconfined"))
                && info.app_armor_profile.as_deref() != Some("unconfined"),
        ),
        (
            "5.24 default cgroup parent",
            hc.cgroup_parent.as_deref().unwrap_or_default().is_empty(),
        ),
        (
            "5.25 no-new-privileges",
            security
                .iter()
                .any(|o| o == "no-new-privileges:true" || o == "no-new-privileges"),
        ),
        (
            "5.26 health check configured",
            !health.is_empty() && health[0] != "NONE",
        ),
        ("5.28 PIDs limited", hc.pids_limit.unwrap_or(0) > 0),
        ("5.30 no host user namespace", not_host(&hc.userns_mode)),
        ("OOM killer not disabled", hc.oom_kill_disable != Some(true)),
        // Not a CIS item, but the same promise. The benchmark's logging advice (2.x, daemon
        // level) is for servers that must keep audit trails. Here output travels over the attach
        // stream, bounded in memory on the host, with the full text in the workspace log, and
        // IronClaw's own audit log records every run; Docker's json-file driver would copy every
        // byte of an output flood to the host disk with no cap, so no log driver it is.
        (
            "log driver none",
            hc.log_config.as_ref().and_then(|l| l.typ.as_deref()) == Some("none"),
        ),
    ]
}
