//! `--network` on the `ironclaw` command, run as a real process: the choice is applied, kept
//! for the session, and bad values are refused with what is accepted.

use ironclaw_sandbox::network::lab::Lab;
use ironclaw_tests::*;
use pretty_assertions::assert_eq;

use super::{RemoveNetworks, BLOCKED};

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[tokio::test]
async fn exec_network_flag_applies_the_mode_and_allows_hosts_for_that_run() {
    let env = TestEnv::new().await;
    let _cleanup = RemoveNetworks(env.instance.clone());
    let mut lab = Lab::create(env.docker(), &env.instance, &env.sandbox.image().tag)
        .await
        .expect("lab network");
    let web = lab.http_server("web", 8000, 1).await.expect("web server");
    let target = format!("{}:8000", web.ip);
    let get = format!("curl -sS http://{target}/index.html");
    let exec = |extra: &[&str], code: &str| {
        let mut cmd = env.cli();
        cmd.args(["exec", "--session", "n", "--lang", "shell"])
            .args(extra)
            .arg(code);
        cmd.output().expect("run ironclaw")
    };

    let allow = format!("allowlist:{target}");
    let out = exec(&["--network", &allow], &get);
    assert_eq!(
        (out.status.code(), text(&out.stdout).trim()),
        (Some(0), "hello from web"),
        "{}",
        text(&out.stderr)
    );

    // The mode is the session's now; the host was allowed for that run's process only.
    let out = exec(&[], &get);
    assert!(text(&out.stdout).contains(BLOCKED), "{}", text(&out.stdout));

    let out = exec(&["--network", "off"], "ls /sys/class/net");
    assert_eq!(text(&out.stdout).trim(), "lo", "{}", text(&out.stderr));
    let out = exec(&[], "ls /sys/class/net");
    assert_eq!(text(&out.stdout).trim(), "lo", "{}", text(&out.stderr));

    for (bad, says) in [
        ("on", "unknown network mode \"on\""),
        ("off:x.example.internal", "takes no hosts"),
        ("allowlist:bad host", "host \"bad host\""),
    ] {
        let out = exec(&["--network", bad], "true");
        assert_eq!(out.status.code(), Some(2), "{bad}");
        let err = text(&out.stderr);
        assert!(err.contains(says), "{bad}: {err}");
    }
    lab.remove().await.expect("remove lab");
}

/// An environment variable to set, or with `None` to unset.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
type EnvChange<'a> = (&'a str, Option<&'a str>);

/// Whether `program` is linked statically: an ELF file with no `PT_INTERP` (no dynamic loader).
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn statically_linked(program: &std::path::Path) -> bool {
    let elf = std::fs::read(program).expect("read the program");
    assert_eq!(&elf[..4], b"\x7fELF", "{}", program.display());
    let at = |offset: usize, len: usize| {
        let mut bytes = [0u8; 8];
        bytes[..len].copy_from_slice(&elf[offset..offset + len]);
        u64::from_le_bytes(bytes) as usize
    };
    let (table, entry, count) = (at(0x20, 8), at(0x36, 2), at(0x38, 2));
    const PT_INTERP: usize = 3;
    !(0..count).any(|i| at(table + i * entry, 4) == PT_INTERP)
}

/// The front is linked statically where glibc is the C library (`build_static_front`,
/// scripts/lib.sh), and a static glibc must not load the name service modules
/// /etc/nsswitch.conf may name (ironclaw-cli's `name_services`). So the front hands a run that
/// would look a name up through one to `ironclaw-full`, before doing anything: the same command
/// line, standard input unread. Each case runs the front alone (no `ironclaw-full` beside it,
/// so a hand-over fails with exit 70) under an nsswitch.conf of the test's choosing, bound over
/// /etc/nsswitch.conf in a mount namespace of its own.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[tokio::test]
async fn the_static_front_hands_runs_that_may_load_a_name_service_to_ironclaw_full() {
    assert!(
        nix::unistd::geteuid().is_root(),
        "binding a file over /etc/nsswitch.conf in a mount namespace needs root: run the suite as root"
    );
    let env = TestEnv::new().await;
    let _cleanup = RemoveNetworks(env.instance.clone());
    assert!(
        statically_linked(&cli_bin()),
        "{} has a dynamic loader: build it as scripts/setup.sh does",
        cli_bin().display()
    );
    let dir = tempfile::tempdir().expect("temp dir");
    let built_in = dir.path().join("built-in.conf");
    std::fs::write(&built_in, "passwd: files\nhosts: files dns\n").expect("write nsswitch");
    let module = dir.path().join("module.conf");
    std::fs::write(
        &module,
        "passwd: files systemd\nhosts: files mdns4_minimal [NOTFOUND=return] dns\n",
    )
    .expect("write nsswitch");
    let front = dir.path().join("front");
    std::fs::create_dir(&front).expect("mkdir");
    let alone = |nsswitch: &std::path::Path, args: &[&str], changes: &[EnvChange]| {
        // The environment and program of the front alone, run through unshare(1).
        let template = env.front_alone(&front);
        let mut cmd = std::process::Command::new("unshare");
        cmd.args(["--mount", "--propagation", "private", "sh", "-c"])
            .arg(r#"mount --bind "$0" /etc/nsswitch.conf && exec "$@""#)
            .arg(nsswitch)
            .arg(template.get_program())
            .args(args);
        for (key, value) in template.get_envs() {
            match value {
                Some(value) => cmd.env(key, value),
                None => cmd.env_remove(key),
            };
        }
        for (key, value) in changes {
            match value {
                Some(value) => cmd.env(key, value),
                None => cmd.env_remove(key),
            };
        }
        cmd.output().expect("run ironclaw alone")
    };
    let ran = |out: &std::process::Output, expected: &str, case: &str| {
        assert_eq!(
            (out.status.code(), text(&out.stdout).as_str()),
            (Some(0), expected),
            "{case}: {}",
            text(&out.stderr)
        );
    };
    let declined = |out: &std::process::Output, case: &str| {
        assert_eq!(out.status.code(), Some(70), "{case}: {}", text(&out.stderr));
        assert!(
            text(&out.stderr).contains("ironclaw-full is missing"),
            "{case}: {}",
            text(&out.stderr)
        );
    };

    // The front alone runs a plain run itself, whatever nsswitch.conf says: so each refusal
    // below is the front declining.
    let plain = ["exec", "--session", "plain", "print('itself')"];
    ran(&alone(&module, &plain, &[]), "itself\n", "plain");
    declined(&alone(&built_in, &plain, &[("HOME", None)]), "no HOME");
    let tcp = [("DOCKER_HOST", Some("tcp://127.0.0.1:9"))];
    declined(&alone(&module, &plain, &tcp), "TCP, hosts by a module");
    // With built-in sources only, the front itself tries that engine (nothing listens there).
    let out = alone(&built_in, &plain, &tcp);
    assert!(
        text(&out.stderr).contains("tcp://127.0.0.1:9") && out.status.code() == Some(1),
        "TCP, built-in hosts: {:?} {}",
        out.status.code(),
        text(&out.stderr)
    );

    let allow = [
        "exec",
        "--session",
        "n",
        "--network",
        "allowlist",
        "print('n')",
    ];
    declined(&alone(&module, &allow, &[]), "--network, hosts by a module");
    // Declined before anything was done: session `n` was not even created.
    let record = env.paths.sessions_dir().join("n.json");
    assert!(!record.exists(), "{}", record.display());
    // With built-in sources only, the front runs it itself, egress proxy and all.
    ran(
        &alone(&built_in, &allow, &[]),
        "n\n",
        "--network, built-in hosts",
    );
    // `n` keeps its allowlist: a plain run in it is declined too, then run itself.
    let again = ["exec", "--session", "n", "print('again')"];
    declined(
        &alone(&module, &again, &[]),
        "an allowlist session, hosts by a module",
    );
    ran(
        &alone(&built_in, &again, &[]),
        "again\n",
        "an allowlist session",
    );

    // A profile whose network is an allowlist: named with --profile, then as the default.
    std::fs::create_dir_all(&env.paths.config_dir).expect("mkdir config");
    let policy = env.paths.config_dir.join("sandbox.yaml");
    let trusted = "profiles:\n  trusted: { network: allowlist }\n";
    std::fs::write(&policy, trusted).expect("write sandbox.yaml");
    let by_name = [
        "exec",
        "--session",
        "p",
        "--profile",
        "trusted",
        "print('p')",
    ];
    declined(
        &alone(&module, &by_name, &[]),
        "--profile, hosts by a module",
    );
    ran(&alone(&built_in, &by_name, &[]), "p\n", "--profile");
    std::fs::write(&policy, format!("default_profile: trusted\n{trusted}")).expect("write");
    let by_default = ["exec", "--session", "q", "print('q')"];
    declined(
        &alone(&module, &by_default, &[]),
        "the default profile, hosts by a module",
    );
    ran(
        &alone(&built_in, &by_default, &[]),
        "q\n",
        "the default profile",
    );

    // With `ironclaw-full` beside it, a run handed over is done, the code read from standard
    // input by the program that runs it.
    let mut full = env.cli();
    full.env_remove("HOME")
        .args(["exec", "--session", "n", "-"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let mut child = full.spawn().expect("run ironclaw");
    {
        use std::io::Write;
        let mut stdin = child.stdin.take().expect("stdin");
        stdin
            .write_all(b"print('via full')")
            .expect("write the code");
    }
    let out = child.wait_with_output().expect("wait for ironclaw");
    ran(&out, "via full\n", "handed over");
}
