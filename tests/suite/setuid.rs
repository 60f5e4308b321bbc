//! SECURITY.md's setuid promise, call by call: code cannot leave a setuid or setgid file in the
//! host workspace, whichever system call it uses (`chmod` family, `open`/`creat`/`openat`,
//! `mknod`, and the calls whose mode a filter cannot see: `openat2`, `io_uring`, x32 and 32-bit
//! calls).
//!
//! An ENOSYS or EPERM alone proves nothing: the kernel may lack the call, or refuse it for
//! another reason. So every attempt here is shown three ways: the host kernel (which the
//! sandbox shares) runs the same call from this test process and, unfiltered, it makes a setuid
//! file; inside, the same call with a harmless mode works (the call is made and supported); and
//! a seccomp probe of our own, installed innermost in a child process, shows that the refusal
//! came from a filter of the sandbox before the kernel ran the call (see [`SECCOMP_PROBE`]).
//! Finally the host sees no setuid or setgid file in the workspace.

use std::collections::BTreeMap;
use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

use ironclaw_tests::escape::*;
use ironclaw_tests::*;
use nix::libc;
use pretty_assertions::assert_eq;

/// Runs `body` with [`PY_PRELUDE`] and [`SECCOMP_PROBE`] and returns what it recorded, after
/// checking that the probe works at all (the control call reached the kernel).
async fn probed_attempts(env: &TestEnv, body: &str) -> BTreeMap<String, String> {
    let results = py_attempts(env, "s", &format!("{SECCOMP_PROBE}\n{body}")).await;
    assert_eq!(
        (
            results.get("getppid").map(String::as_str),
            results.get("who getppid").map(String::as_str)
        ),
        (Some("ok"), Some("reached-the-kernel")),
        "the seccomp probe does not work in the sandbox, so a refusal cannot be told from the \
         kernel's: {results:?}"
    );
    results
}

/// Asserts that the attempt `name` ended with one of `errnos` and that a seccomp filter of the
/// sandbox, not the kernel, gave that answer. `context` goes into the message.
#[track_caller]
fn assert_filtered(results: &BTreeMap<String, String>, name: &str, errnos: &[&str], context: &str) {
    let how = results
        .get(name)
        .unwrap_or_else(|| panic!("{name} was not attempted: {results:?}"));
    let who = results
        .get(&format!("who {name}"))
        .unwrap_or_else(|| panic!("{name} was not probed: {results:?}"));
    assert!(
        errnos.contains(&how.as_str()),
        "{name}: {how}, expected one of {errnos:?}. {context}\n{results:?}"
    );
    // SIGSYS is seccomp's own answer (the kernel never sends it for a system call): a filter
    // that kills the caller also kills the probe before it can say how, which leaves "filtered:".
    let killed_by_filter = how == "SIGSYS" && who == "filtered:";
    assert!(
        killed_by_filter || who == &format!("filtered:{how}"),
        "{name}: the refusal did not come from the sandbox's seccomp filter ({who} / {how}). {context}"
    );
}

/// Asserts that the control attempt `name` (the same call with a harmless mode) worked and was
/// not filtered: the call is made and the kernel supports it.
#[track_caller]
fn assert_reaches_the_kernel(results: &BTreeMap<String, String>, name: &str) {
    assert_eq!(
        (
            results.get(name).map(String::as_str),
            results.get(&format!("who {name}")).map(String::as_str)
        ),
        (Some("ok"), Some("reached-the-kernel")),
        "{name} (the harmless control) does not work in the sandbox: {results:?}"
    );
}

#[track_caller]
fn assert_no_setuid_file_on_the_host(env: &TestEnv) {
    let found = setuid_files_under(&env.workspace("s"));
    assert!(
        found.is_empty(),
        "setuid/setgid files in the host workspace: {found:?}"
    );
}

fn cpath(path: &Path) -> CString {
    CString::new(path.as_os_str().as_bytes()).expect("no NUL in a temp path")
}

fn errno_name() -> String {
    nix::errno::Errno::last().to_string()
}

/// `openat2(O_CREAT, 04755)` from this test process, unfiltered: whether the host kernel (the
/// sandbox's kernel) has the call, and whether it then makes a setuid file.
fn host_openat2_makes_a_setuid_file() -> Result<bool, String> {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("openat2");
    // struct open_how { u64 flags; u64 mode; u64 resolve; }
    let how: [u64; 3] = [
        (libc::O_CREAT | libc::O_WRONLY | libc::O_CLOEXEC) as u64,
        0o4755,
        0,
    ];
    let path_c = cpath(&path);
    // SAFETY: a valid C path and a 24-byte open_how, both alive across the call.
    let fd = unsafe {
        libc::syscall(
            libc::SYS_openat2,
            libc::AT_FDCWD,
            path_c.as_ptr(),
            how.as_ptr(),
            std::mem::size_of_val(&how),
        )
    };
    if fd < 0 {
        return Err(errno_name());
    }
    // SAFETY: the descriptor was just returned to us and is closed once.
    unsafe { libc::close(fd as i32) };
    Ok(std::fs::metadata(&path).expect("made").mode() & 0o4000 != 0)
}

/// `mknod(S_IFREG | 04755)` (no privilege needed for a regular file) from this test process.
fn host_mknod_makes_a_setuid_file() -> Result<bool, String> {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("mknod");
    let path_c = cpath(&path);
    // SAFETY: a valid C path.
    let r = unsafe { libc::mknod(path_c.as_ptr(), libc::S_IFREG | 0o4755, 0) };
    if r < 0 {
        return Err(errno_name());
    }
    Ok(std::fs::metadata(&path).expect("made").mode() & 0o4000 != 0)
}

#[tokio::test]
async fn openat2_is_refused_by_the_sandboxs_filter_and_makes_no_setuid_file() {
    let env = TestEnv::new().await;
    let host = host_openat2_makes_a_setuid_file();
    let body = r#"
def how(mode):
    return (ctypes.c_uint64 * 3)(os.O_CREAT | os.O_WRONLY, mode, 0)
for mode in (0o4755, 0o2755, 0o644):
    syscall("openat2 %04o" % mode, NR["openat2"], AT_FDCWD, fresh("openat2-%04o" % mode), how(mode), L(24))
# A C library falls back to openat, which the filter can read: the harmless mode works.
syscall("openat 0644", NR["openat"], AT_FDCWD, fresh("openat-0644"), L(os.O_CREAT | os.O_WRONLY), L(0o644))
"#;
    let results = probed_attempts(&env, body).await;
    let context = match &host {
        Ok(true) => "On the host the same call makes a setuid file.".to_string(),
        Ok(false) => "On the host the same call works (the umask drops the bit).".to_string(),
        Err(e) => format!("This kernel has no openat2 on the host either ({e})."),
    };
    // The whole call is refused, whatever the mode: the filter cannot read it behind the pointer.
    for name in ["openat2 4755", "openat2 2755", "openat2 0644"] {
        assert_filtered(&results, name, &["ENOSYS"], &context);
    }
    assert_reaches_the_kernel(&results, "openat 0644");
    assert_eq!(host, Ok(true), "openat2 must be supported where this runs");
    let ws = env.workspace("s");
    for name in ["openat2-4755", "openat2-2755", "openat2-0644"] {
        assert!(!ws.join(name).exists(), "{name} was made");
    }
    assert!(ws.join("openat-0644").is_file());
    assert_no_setuid_file_on_the_host(&env);
}

#[tokio::test]
async fn io_uring_setup_is_refused_by_the_sandboxs_filter() {
    let env = TestEnv::new().await;
    // io_uring opens files without a system call per open, so no filter could see their modes.
    let mut params = [0u8; 120];
    // SAFETY: io_uring_params is 120 bytes; the buffer outlives the call.
    let fd = unsafe { libc::syscall(libc::SYS_io_uring_setup, 1u32, params.as_mut_ptr()) };
    let host = if fd >= 0 {
        // SAFETY: the ring's descriptor, closed once.
        unsafe { libc::close(fd as i32) };
        Ok(())
    } else {
        Err(errno_name())
    };
    let body = r#"
for flags in (0, 2):  # 2: IORING_SETUP_SQPOLL, a kernel thread that submits for the ring
    params = (ctypes.c_uint32 * 30)()
    params[2] = flags
    syscall("io_uring_setup %d" % flags, NR["io_uring_setup"], L(4), params)
"#;
    let results = probed_attempts(&env, body).await;
    let context = match &host {
        Ok(()) => "On the host this test process sets up a ring.".to_string(),
        Err(e) => format!("The host kernel refuses io_uring_setup too ({e})."),
    };
    for name in ["io_uring_setup 0", "io_uring_setup 2"] {
        assert_filtered(&results, name, &["ENOSYS"], &context);
    }
    assert_eq!(
        host,
        Ok(()),
        "io_uring must be available on the host for this test to mean anything"
    );
    assert_no_setuid_file_on_the_host(&env);
}

/// x32 calls reach the kernel with the same architecture tag as x86-64 calls but their own
/// numbers, so a filter written for x86-64 numbers would miss them: the sandbox refuses them
/// all. Whether this kernel runs x32 at all is reported in every message: Debian's kernels
/// build the ABI but leave it off, many others lack it.
#[cfg(target_arch = "x86_64")]
#[tokio::test]
async fn x32_system_calls_are_refused_by_the_sandboxs_filter_whatever_they_do() {
    let env = TestEnv::new().await;
    const X32: i64 = 0x4000_0000;
    // SAFETY: x32 getpid takes no arguments.
    let r = unsafe { libc::syscall(X32 | libc::SYS_getpid) };
    let context = if r >= 0 {
        "This kernel runs x32 calls (the host's x32 getpid worked).".to_string()
    } else {
        format!(
            "This kernel refuses x32 calls anyway (the host's x32 getpid: {}), so only the \
             filter's part is shown here.",
            errno_name()
        )
    };
    let body = r#"
X32 = 0x40000000
p = existing("x32-chmod")
syscall("x32 chmod 4755", X32 | 90, p, L(0o4755))
syscall("x32 chmod 0600", X32 | 90, p, L(0o600))
syscall("x32 fchmodat 2755", X32 | 268, AT_FDCWD, p, L(0o2755))
syscall("x32 open 4755", X32 | 2, fresh("x32-open"), L(os.O_CREAT | os.O_WRONLY), L(0o4755))
syscall("x32 getpid", X32 | 39)
"#;
    let results = probed_attempts(&env, body).await;
    for name in [
        "x32 chmod 4755",
        "x32 chmod 0600",
        "x32 fchmodat 2755",
        "x32 open 4755",
        "x32 getpid",
    ] {
        assert_filtered(&results, name, &["ENOSYS", "EPERM", "SIGSYS"], &context);
    }
    let ws = env.workspace("s");
    let mode = std::fs::metadata(ws.join("x32-chmod"))
        .expect("made")
        .mode();
    assert_eq!(mode & 0o7777, 0o644, "{context}");
    assert!(!ws.join("x32-open").exists(), "{context}");
    assert_no_setuid_file_on_the_host(&env);
}

#[tokio::test]
async fn mknod_cannot_make_a_setuid_or_setgid_file() {
    let env = TestEnv::new().await;
    let host = host_mknod_makes_a_setuid_file();
    assert_eq!(
        host,
        Ok(true),
        "unfiltered, mknod(S_IFREG | 04755) makes a setuid file on this kernel"
    );
    let body = r#"
for mode in (0o4755, 0o2755, 0o6000, 0o644):
    for kind, name in ((stat.S_IFREG, "reg"), (stat.S_IFIFO, "fifo")):
        tag = "%s %04o" % (name, mode)
        if "mknod" in NR:
            syscall("mknod " + tag, NR["mknod"], fresh("mknod-%s-%04o" % (name, mode)), L(kind | mode), L(0))
        syscall("mknodat " + tag, NR["mknodat"], AT_FDCWD, fresh("mknodat-%s-%04o" % (name, mode)), L(kind | mode), L(0))
"#;
    let results = probed_attempts(&env, body).await;
    let ws = env.workspace("s");
    let mut checked = 0;
    for call in ["mknod", "mknodat"] {
        for kind in ["reg", "fifo"] {
            if !results.contains_key(&format!("{call} {kind} 0644")) {
                continue; // aarch64 has no mknod
            }
            assert_reaches_the_kernel(&results, &format!("{call} {kind} 0644"));
            assert!(ws.join(format!("{call}-{kind}-0644")).exists());
            for mode in ["4755", "2755", "6000"] {
                let name = format!("{call} {kind} {mode}");
                assert_filtered(&results, &name, &["EPERM"], "mknod is refused by mode");
                let made = ws.join(format!("{call}-{kind}-{mode}"));
                assert!(!made.exists(), "{name} made {}", made.display());
                checked += 1;
            }
        }
    }
    assert!(checked >= 6, "{results:?}");
    assert_no_setuid_file_on_the_host(&env);
}

/// The rest of the class, each call with three setuid/setgid modes and a harmless control; and
/// a 32-bit `int 0x80` chmod from the 64-bit interpreter (another architecture tag, another
/// syscall table), which the filter must cover too.
#[tokio::test]
async fn every_mode_setting_call_refuses_setuid_and_setgid_bits_and_allows_the_rest() {
    let env = TestEnv::new().await;
    let body = r#"
CREATE = L(os.O_CREAT | os.O_WRONLY)
for mode in (0o4755, 0o2755, 0o6000, 0o755):
    t = "%04o" % mode
    m = L(mode)
    if "chmod" in NR:
        syscall("chmod " + t, NR["chmod"], existing("chmod-" + t), m)
    syscall("fchmodat " + t, NR["fchmodat"], AT_FDCWD, existing("fchmodat-" + t), m)
    syscall("fchmodat2 " + t, NR["fchmodat2"], AT_FDCWD, existing("fchmodat2-" + t), m, L(0))
    fd = os.open(existing("fchmod-" + t), os.O_RDONLY)
    syscall("fchmod " + t, NR["fchmod"], L(fd), m)
    os.close(fd)
    if "open" in NR:
        syscall("open " + t, NR["open"], fresh("open-" + t), CREATE, m)
    if "creat" in NR:
        syscall("creat " + t, NR["creat"], fresh("creat-" + t), m)
    syscall("openat " + t, NR["openat"], AT_FDCWD, fresh("openat-" + t), CREATE, m)
if _MACHINE == "x86_64":
    for mode in (0o4755, 0o2755, 0o755):
        p = existing("i386-chmod-%04o" % mode)
        # 15: chmod in the i386 table.
        _results["i386 chmod %04o" % mode] = _in_child(lambda p=p, mode=mode: int80(15, low(p + b"\0"), mode))
"#;
    let results = probed_attempts(&env, body).await;
    let ws = env.workspace("s");
    let mut checked = 0;
    for call in [
        "chmod",
        "fchmodat",
        "fchmodat2",
        "fchmod",
        "open",
        "creat",
        "openat",
    ] {
        if !results.contains_key(&format!("{call} 0755")) {
            continue; // not on this architecture
        }
        let creates = ["open", "creat", "openat"].contains(&call);
        let control = format!("{call} 0755");
        // A call newer than the engine's seccomp profile (fchmodat2, Linux 6.6, on Docker
        // 20.10) is refused whole with ENOSYS by that profile: shown by the probe, it can set
        // nothing, so its setuid modes may get either answer.
        let refused_whole = results.get(&control).map(String::as_str) == Some("ENOSYS")
            && results.get(&format!("who {control}")).map(String::as_str)
                == Some("filtered:ENOSYS");
        let errnos: &[&str] = if refused_whole {
            assert!(!creates, "{control}: {results:?}");
            &["EPERM", "ENOSYS"]
        } else {
            assert_reaches_the_kernel(&results, &control);
            let made = std::fs::metadata(ws.join(format!("{call}-0755"))).expect("control");
            assert_eq!(made.mode() & 0o7777, 0o755, "{call}: the control");
            &["EPERM"]
        };
        for mode in ["4755", "2755", "6000"] {
            let name = format!("{call} {mode}");
            assert_filtered(&results, &name, errnos, "refused by mode");
            let path = ws.join(format!("{call}-{mode}"));
            if creates {
                assert!(!path.exists(), "{name} made {}", path.display());
            } else {
                let mode = std::fs::metadata(&path).expect("made").mode();
                assert_eq!(mode & 0o7777, 0o644, "{name}");
            }
            checked += 1;
        }
    }
    assert!(checked >= 12, "{results:?}");
    if cfg!(target_arch = "x86_64") {
        let control = results.get("i386 chmod 0755").map(String::as_str);
        for mode in ["4755", "2755"] {
            let how = results
                .get(&format!("i386 chmod {mode}"))
                .map(String::as_str);
            if control == Some("ok") {
                assert_eq!(how, Some("EPERM"), "32-bit chmod {mode}: {results:?}");
            } else {
                // No 32-bit calls on this kernel: refused anyway, and said so.
                assert_ne!(
                    how,
                    Some("ok"),
                    "32-bit calls do not work here ({control:?}), yet chmod {mode} did"
                );
            }
            let m = std::fs::metadata(ws.join(format!("i386-chmod-{mode}")))
                .expect("made")
                .mode();
            assert_eq!(m & 0o7777, 0o644, "32-bit chmod {mode}");
        }
        assert_eq!(
            control,
            Some("ok"),
            "the 32-bit control chmod must work for this variant to mean anything"
        );
    }
    assert_no_setuid_file_on_the_host(&env);
}
