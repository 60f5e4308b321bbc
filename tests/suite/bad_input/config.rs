//! Config files with wrong types, unknown keys and bad values: the CLI refuses to start and the
//! message names the file, the field and what the field accepts.

use ironclaw_tests::TestEnv;

use super::failed;

/// Input: `sandbox.yaml` mistakes (wrong type, unknown key at each level, values out of range,
/// unknown enum values, an unknown default profile, broken YAML, a key that would weaken the
/// hardening). Expected: `ironclaw exec` refuses before touching Docker, naming the file, the
/// field path and the accepted values; no container is made.
#[tokio::test]
async fn sandbox_yaml_mistakes_name_the_file_the_field_and_what_it_accepts() {
    let env = TestEnv::new().await;
    let file = env.paths.user_policy_file();
    let cases: &[(&str, &[&str])] = &[
        (
            "profiles: {standard: {pids: many}}",
            &["profiles.standard.pids", "whole number"],
        ),
        (
            "profiles: {standard: {memroy: 1g}}",
            &["profiles.standard.memroy", "unknown field", "`memory`"],
        ),
        ("unknown_top: 1", &["unknown_top", "`profiles`"]),
        (
            "profiles: {standard: {network: sometimes}}",
            &["profiles.standard.network", "`none` or `allowlist`"],
        ),
        (
            "profiles: {standard: {runtime: kata}}",
            &["profiles.standard.runtime", "`auto`, `runc`"],
        ),
        (
            "default_profile: nonexistent",
            &["default_profile", "standard, strict, trusted"],
        ),
        ("idle_timeout: [1, 2]", &["idle_timeout", "like 30s, 5m"]),
        (
            "profiles: {standard: {timeout: 0s}}",
            &["profiles.standard.timeout", "at least 1s"],
        ),
        (
            "profiles: {standard: {memory: 99999999999999g}}",
            &["profiles.standard.memory", "like 512m"],
        ),
        (
            "profiles: {standard: {cpus: -1}}",
            &["profiles.standard.cpus", "at least 0.01"],
        ),
        (
            "profiles: {standard: {read_only_root: false}}",
            &["read_only_root", "unknown field"],
        ),
        (
            "profiles: {standard: {privileged: true}}",
            &["privileged", "unknown field"],
        ),
        ("profiles: {standard: [", &["YAML syntax"]),
        (
            "profiles:\n  standard: {memory: \"1g\u{0}\"}",
            &["sandbox.yaml"],
        ),
    ];
    for (yaml, wanted) in cases {
        std::fs::write(&file, yaml).expect("write sandbox.yaml");
        let out = env
            .cli()
            .args(["exec", "--session", "cfg", "print('ran')"])
            .output()
            .expect("run ironclaw exec");
        let stderr = failed(&out);
        assert!(
            stderr.contains(&file.display().to_string()),
            "{yaml:?}: the file is not named: {stderr}"
        );
        for w in *wanted {
            assert!(stderr.contains(w), "{yaml:?}: {stderr:?} lacks {w:?}");
        }
        assert!(!super::text(&out.stdout).contains("ran"));
    }
    assert!(env.container_id("cfg").await.is_none(), "nothing ran");
}

/// Input: `provider.yaml` mistakes. Expected: `ironclaw chat` refuses before contacting any
/// model, naming the file, the field and the accepted values.
#[tokio::test]
async fn provider_yaml_mistakes_name_the_file_the_field_and_what_it_accepts() {
    let env = TestEnv::new().await;
    let file = env.paths.config_dir.join("provider.yaml");
    let cases: &[(&str, &[&str])] = &[
        ("kind: gpt", &["kind in", "`openai`, `anthropic`, `ollama`"]),
        (
            "kind: openai\nmodle: x",
            &["unknown field `modle`", "`model`"],
        ),
        (
            "kind: openai\nheaders: [a]",
            &["headers in", "expected a map"],
        ),
        (
            "kind: openai\nbase_url: [1]",
            &["base_url in", "expected a string"],
        ),
        (
            "model: x",
            &["missing field `kind`", "openai, anthropic or ollama"],
        ),
        (
            "kind: openai\nbase_url: not a url",
            &["base_url in", "not a URL"],
        ),
        (
            "kind: openai\napi_key_env: ''",
            &["api_key_env in", "like OPENAI_API_KEY"],
        ),
        (
            "kind: openai\nheaders: {'bad name': x}",
            &["headers.bad name in", "header name"],
        ),
        ("{", &["provider.yaml"]),
    ];
    for (yaml, wanted) in cases {
        std::fs::write(&file, yaml).expect("write provider.yaml");
        let out = env
            .cli()
            .args(["chat", "-m", "hello"])
            .env("OPENAI_API_KEY", "sk-test")
            .stdin(std::process::Stdio::null())
            .output()
            .expect("run ironclaw chat");
        let stderr = failed(&out);
        assert!(
            stderr.contains(&file.display().to_string()),
            "{yaml:?}: the file is not named: {stderr}"
        );
        for w in *wanted {
            assert!(stderr.contains(w), "{yaml:?}: {stderr:?} lacks {w:?}");
        }
    }
}
