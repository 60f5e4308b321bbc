//! Careless input on the command line and in config files: each gets a clear error, never a
//! panic, and changes nothing (no container, nothing remembered, no parse that runs for ages).

use ironclaw_sandbox::session::{Registry, SessionName};
use ironclaw_tests::TestEnv;

use super::{failed, text};

/// Input: `--timeout` values that are not a usable number of seconds, including ones that
/// overflow a `Duration` (which panicked with exit 101). Expected: a usage error (exit 2)
/// naming the option; nothing runs.
#[tokio::test]
async fn timeouts_that_are_not_a_usable_number_of_seconds_are_usage_errors_not_panics() {
    let env = TestEnv::new().await;
    for bad in [
        "1e99",
        "18446744073709551616",
        "1e-320",
        "inf",
        "NaN",
        "-3",
        "0",
        "90000",
        "soon",
    ] {
        let out = env
            .cli()
            .args(["exec", "--session", "t"])
            .arg(format!("--timeout={bad}"))
            .arg("print('ran')")
            .output()
            .expect("run ironclaw exec");
        let stderr = failed(&out);
        assert_eq!(out.status.code(), Some(2), "{bad}: {stderr}");
        assert!(!stderr.contains("panicked"), "{bad}: {stderr}");
        assert!(
            stderr.contains("--timeout") && stderr.contains("second"),
            "{bad}: {stderr}"
        );
        assert!(!text(&out.stdout).contains("ran"));
    }
    assert!(env.container_id("t").await.is_none(), "nothing ran");
}

/// Input: `--profile` naming no profile, for a new session and for one that already chose a
/// profile. Expected: refused with the list of profiles; the session does not remember it, so
/// the next run without `--profile` works (and keeps the earlier choice).
#[tokio::test]
async fn an_unknown_profile_is_refused_and_never_remembered_by_the_session() {
    let env = TestEnv::new().await;
    let registry = Registry::new(env.paths.clone());
    let exec = |session: &str, extra: &[&str]| {
        let mut cmd = env.cli();
        cmd.args(["exec", "--session", session]).args(extra);
        cmd.arg("print('ran')").output().expect("run ironclaw exec")
    };

    let out = exec("fresh", &["--profile", "nosuch"]);
    let stderr = failed(&out);
    assert!(stderr.contains("no profile named \"nosuch\""), "{stderr}");
    assert!(stderr.contains("standard"), "lists the profiles: {stderr}");
    let fresh = SessionName::new("fresh").expect("name");
    assert!(
        registry.get(&fresh).expect("registry").is_none(),
        "no session record is made for a refused run"
    );
    let out = exec("fresh", &[]);
    assert!(out.status.success(), "{}", text(&out.stderr));

    let out = exec("chosen", &["--profile", "strict"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let out = exec("chosen", &["--profile", "Strict "]);
    failed(&out);
    let chosen = SessionName::new("chosen").expect("name");
    let record = registry.get(&chosen).expect("registry").expect("record");
    assert_eq!(record.profile.as_deref(), Some("strict"));
    let out = exec("chosen", &[]);
    assert!(out.status.success(), "{}", text(&out.stderr));
}

/// 400 KB of nesting (the parser took 78 s on it) and a small file nested deeper than any
/// config needs.
fn hostile_yaml() -> [(String, &'static str); 3] {
    let huge = format!("{}{}", "[".repeat(200_000), "]".repeat(200_000));
    let deep_flow = format!("profiles: {}{}", "[".repeat(100), "]".repeat(100));
    let deep_block: String = (0..100)
        .map(|i| format!("{}k{i}:\n", " ".repeat(i)))
        .collect();
    [
        (huge, "over 256 KiB"),
        (deep_flow, "at most 64 levels"),
        (deep_block, "at most 64 levels"),
    ]
}

/// Input: a huge or deeply nested `sandbox.yaml`. Expected: refused before parsing, naming
/// the file and the limit; nothing runs.
#[tokio::test]
async fn huge_or_deeply_nested_sandbox_yaml_is_refused_before_parsing() {
    let env = TestEnv::new().await;
    let file = env.paths.user_policy_file();
    for (yaml, wanted) in hostile_yaml() {
        std::fs::write(&file, &yaml).expect("write sandbox.yaml");
        let out = env
            .cli()
            .args(["exec", "--session", "y", "print('ran')"])
            .output()
            .expect("run ironclaw exec");
        let stderr = failed(&out);
        assert!(stderr.contains(&file.display().to_string()), "{stderr}");
        assert!(stderr.contains(wanted), "{wanted}: {stderr}");
        assert!(!stderr.contains("recursion limit"), "{stderr}");
    }
    assert!(env.container_id("y").await.is_none(), "nothing ran");
}

/// Input: the same, as `provider.yaml`. Expected: `chat` refuses before contacting a model.
#[tokio::test]
async fn huge_or_deeply_nested_provider_yaml_is_refused_before_parsing() {
    let env = TestEnv::new().await;
    let file = env.paths.config_dir.join("provider.yaml");
    for (yaml, wanted) in hostile_yaml() {
        std::fs::write(&file, format!("kind: openai\nheaders: {yaml}")).expect("write");
        let out = env
            .cli()
            .args(["chat", "-m", "hello"])
            .env("OPENAI_API_KEY", "sk-test")
            .stdin(std::process::Stdio::null())
            .output()
            .expect("run ironclaw chat");
        let stderr = failed(&out);
        assert!(stderr.contains(&file.display().to_string()), "{stderr}");
        assert!(stderr.contains(wanted), "{wanted}: {stderr}");
    }
}
