//! The `ironclaw` command, run as a real process against the same engine.

use std::process::Output;

use ironclaw_tests::*;
use pretty_assertions::assert_eq;

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[track_caller]
fn succeeded(out: &Output) -> String {
    assert!(
        out.status.success(),
        "status {:?}\nstdout: {}\nstderr: {}",
        out.status,
        text(&out.stdout),
        text(&out.stderr)
    );
    text(&out.stdout)
}

#[tokio::test]
async fn exec_json_prints_one_result_object() {
    let env = TestEnv::new().await;
    let out = env
        .cli()
        .args(["exec", "--session", "c", "--json", "print('hello')"])
        .output()
        .expect("run ironclaw");
    let stdout = succeeded(&out);
    assert_eq!(stdout.lines().count(), 1, "one JSON line: {stdout}");
    let v: serde_json::Value = serde_json::from_str(&stdout).expect("valid JSON");
    let obj = v.as_object().expect("an object");
    for key in [
        "exit_code",
        "stdout",
        "stderr",
        "duration_ms",
        "timed_out",
        "oom_killed",
        "peak_memory_bytes",
        "truncated",
    ] {
        assert!(obj.contains_key(key), "missing {key}: {stdout}");
    }
    assert_eq!(v["exit_code"], 0);
    assert_eq!(v["stdout"], "hello\n");
    assert_eq!(v["stderr"], "");
    assert_eq!(v["timed_out"], false);
    assert_eq!(v["oom_killed"], false);
    assert_eq!(v["truncated"], false);
    assert!(v["duration_ms"].as_f64().is_some_and(|d| d >= 0.0));
    assert!(v["peak_memory_bytes"].as_u64().is_some_and(|m| m > 0));
}

#[tokio::test]
async fn exec_exit_status_is_the_codes() {
    let env = TestEnv::new().await;
    let shell = env
        .cli()
        .args(["exec", "--session", "c", "--lang", "shell", "exit 3"])
        .output()
        .expect("run ironclaw");
    assert_eq!(shell.status.code(), Some(3), "{}", text(&shell.stderr));
    let python = env
        .cli()
        .args(["exec", "--session", "c", "import sys; sys.exit(5)"])
        .output()
        .expect("run ironclaw");
    assert_eq!(python.status.code(), Some(5), "{}", text(&python.stderr));
    // Without --json the code's output streams through untouched.
    let plain = env
        .cli()
        .args([
            "exec",
            "--session",
            "c",
            "--lang",
            "shell",
            "echo out; echo err >&2",
        ])
        .output()
        .expect("run ironclaw");
    assert_eq!(succeeded(&plain), "out\n");
    assert!(text(&plain.stderr).contains("err\n"));
}

#[tokio::test]
async fn doctor_passes_on_this_machine() {
    let env = TestEnv::new().await;
    let out = env.cli().arg("doctor").output().expect("run ironclaw");
    let stdout = succeeded(&out);
    assert!(stdout.contains("ready"), "{stdout}");
    let json = env
        .cli()
        .args(["doctor", "--json"])
        .output()
        .expect("run ironclaw");
    let v: serde_json::Value = serde_json::from_str(&succeeded(&json)).expect("JSON");
    assert!(v.to_string().contains("docker"), "{v}");
}

#[tokio::test]
async fn workspace_prints_the_host_path() {
    let env = TestEnv::new().await;
    ok(&py(&env, "proj", "1").await);
    let out = env
        .cli()
        .args(["workspace", "proj"])
        .output()
        .expect("run ironclaw");
    assert_eq!(
        succeeded(&out).trim_end(),
        env.workspace("proj").display().to_string()
    );
    let missing = env
        .cli()
        .args(["workspace", "nope"])
        .output()
        .expect("run ironclaw");
    assert!(!missing.status.success());
    assert!(text(&missing.stderr).contains("nope"));
}

#[tokio::test]
async fn exec_runs_in_ironclaw_itself_and_every_other_command_in_ironclaw_full() {
    let env = TestEnv::new().await;
    // `ironclaw` alone, without `ironclaw-full` beside it.
    let dir = tempfile::tempdir().expect("temp dir");
    let alone = |args: &[&str]| {
        env.front_alone(dir.path())
            .args(args)
            .output()
            .expect("run ironclaw alone")
    };
    let out = alone(&["exec", "--session", "c", "print('alone')"]);
    assert_eq!(succeeded(&out), "alone\n");
    let out = alone(&["workspace", "c"]);
    assert_eq!(out.status.code(), Some(70), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("ironclaw-full is missing: every command but `exec` is in it"),
        "{}",
        text(&out.stderr)
    );

    // Installed together: the same commands, help and exit codes as one program.
    let out = env.cli().arg("--help").output().expect("run ironclaw");
    let help = succeeded(&out);
    for command in ["exec", "chat", "history", "sandbox", "workspace"] {
        assert!(
            help.contains(&format!("\n  {command} ")),
            "{command}: {help}"
        );
    }
    assert!(help.contains("Usage: ironclaw <COMMAND>"), "{help}");
    let out = env
        .cli()
        .args(["exec", "--help"])
        .output()
        .expect("run ironclaw");
    assert!(
        succeeded(&out).contains("Usage: ironclaw exec [OPTIONS] <CODE>"),
        "{}",
        text(&out.stdout)
    );
    let out = env
        .cli()
        .args(["workspace", "c"])
        .output()
        .expect("run ironclaw");
    assert_eq!(
        succeeded(&out).trim_end(),
        env.workspace("c").display().to_string()
    );
    let out = env
        .cli()
        .args(["workspace", "nope"])
        .output()
        .expect("run ironclaw");
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
}

/// On a terminal, the code's output is shown, never obeyed: escape sequences and direction
/// overrides arrive as marked tokens, and IronClaw's own lines carry a bold prefix that the
/// code can no longer draw, so a line it forges never looks like one of ours. Into a pipe the
/// bytes stay as the code wrote them.
#[tokio::test]
async fn exec_on_a_terminal_shows_the_codes_escapes_and_its_lines_cannot_pass_for_ours() {
    let env = TestEnv::new().await;
    let quote = |s: &str| format!("'{}'", s.replace('\'', r"'\''"));
    let code = r#"printf 'a\033[2Jb\342\200\256c\n'; echo x > f.txt; printf 'ironclaw: run finished: exit code 0\n' >&2; exit 3"#;
    let base = env.cli();
    let line = format!(
        "{} exec --session t --lang shell {}",
        quote(&base.get_program().to_string_lossy()),
        quote(code)
    );
    let mut pty = std::process::Command::new("script");
    for (k, v) in base.get_envs() {
        match v {
            Some(v) => pty.env(k, v),
            None => pty.env_remove(k),
        };
    }
    let out = pty
        .env_remove("NO_COLOR")
        .args(["-qec", &line, "/dev/null"])
        .output()
        .expect("run ironclaw under a terminal");
    let shown = text(&out.stdout);
    assert_eq!(out.status.code(), Some(3), "{shown}");
    // The attack reached the output: the code printed both, and a forged line of ours.
    assert!(shown.contains("a⟨U+001B⟩[2Jb⟨U+202E⟩c"), "{shown:?}");
    assert!(
        !shown.contains("\u{1b}[2J") && !shown.contains('\u{202e}'),
        "{shown:?}"
    );
    assert!(shown.contains("\nironclaw: run finished"), "{shown:?}");
    // Ours is bold; the forged one is plain text.
    assert!(
        shown.contains("\u{1b}[1mironclaw:\u{1b}[0m 1 path(s) changed"),
        "{shown:?}"
    );
    assert!(!shown.contains("\u{1b}[1mironclaw:\u{1b}[0m run finished"));
    // Into a pipe: the bytes as written.
    let piped = env
        .cli()
        .args([
            "exec",
            "--session",
            "t",
            "--lang",
            "shell",
            r"printf 'a\033[2Jb\n'",
        ])
        .output()
        .expect("run ironclaw");
    assert_eq!(piped.stdout, b"a\x1b[2Jb\n");
}
