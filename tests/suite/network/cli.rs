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
/// scripts/lib.sh), and glibc in a static program must not load the name services
/// /etc/nsswitch.conf may name. So the front runs by itself only runs that look no name up, and
/// hands every other one, before doing anything, to `ironclaw-full`: the same command line,
/// standard input unread.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[tokio::test]
async fn the_static_front_hands_runs_that_may_resolve_names_to_ironclaw_full() {
    let env = TestEnv::new().await;
    let _cleanup = RemoveNetworks(env.instance.clone());
    assert!(
        statically_linked(&cli_bin()),
        "{} has a dynamic loader: build it as scripts/setup.sh does",
        cli_bin().display()
    );
    let dir = tempfile::tempdir().expect("temp dir");
    // Each change to the environment: a value, or `None` to unset it.
    let alone = |args: &[&str], changes: &[EnvChange]| {
        let mut cmd = env.front_alone(dir.path());
        for (key, value) in changes {
            match value {
                Some(value) => cmd.env(key, value),
                None => cmd.env_remove(key),
            };
        }
        cmd.args(args).output().expect("run ironclaw alone")
    };
    // The front alone runs a plain run itself, so each refusal below is the front declining.
    let out = alone(&["exec", "--session", "plain", "print('itself')"], &[]);
    assert_eq!(
        (out.status.code(), text(&out.stdout).as_str()),
        (Some(0), "itself\n"),
        "{}",
        text(&out.stderr)
    );

    let plain = &["exec", "--session", "plain", "print(2)"];
    let declined: [(&str, &[&str], &[EnvChange]); 3] = [
        (
            "--network",
            &[
                "exec",
                "--session",
                "n",
                "--network",
                "allowlist",
                "print(1)",
            ],
            &[],
        ),
        ("no HOME", plain, &[("HOME", None)]),
        (
            "an engine on TCP",
            plain,
            &[("DOCKER_HOST", Some("tcp://127.0.0.1:9"))],
        ),
    ];
    for (case, args, changes) in declined {
        let out = alone(args, changes);
        assert_eq!(out.status.code(), Some(70), "{case}: {}", text(&out.stderr));
        assert!(
            text(&out.stderr).contains("ironclaw-full is missing"),
            "{case}: {}",
            text(&out.stderr)
        );
    }
    // Declined before anything was done: session `n` was not even created.
    let record = env.paths.sessions_dir().join("n.json");
    assert!(!record.exists(), "{}", record.display());

    // With `ironclaw-full` beside it, the same runs are done, the code read from standard input
    // by the program that runs it.
    let mut full = env.cli();
    full.args(["exec", "--session", "n", "--network", "allowlist", "-"])
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
    assert_eq!(
        (out.status.code(), text(&out.stdout).as_str()),
        (Some(0), "via full\n"),
        "{}",
        text(&out.stderr)
    );
    let out = env
        .cli()
        .env_remove("HOME")
        .args(["exec", "--session", "plain", "print('no home')"])
        .output()
        .expect("run ironclaw");
    assert_eq!(text(&out.stdout), "no home\n", "{}", text(&out.stderr));

    // `n` keeps its allowlist: a plain run in it is declined by the front alone too.
    let out = alone(&["exec", "--session", "n", "print(4)"], &[]);
    assert_eq!(out.status.code(), Some(70), "{}", text(&out.stderr));
    let out = env
        .cli()
        .args(["exec", "--session", "n", "print(4)"])
        .output()
        .expect("run ironclaw");
    assert_eq!(text(&out.stdout), "4\n", "{}", text(&out.stderr));
}
