//! Provider configs and the resolution order, with a fake environment and no keyring.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::HashMap;

use pretty_assertions::assert_eq;
use serde_json::json;

use super::*;
use crate::test_support::closed_port_url;
use crate::testing::ScriptedServer;

/// Resolves with exactly these variables set and the keyring left alone.
async fn resolve_in(vars: &[(&str, &str)], config: Option<&ProviderConfig>) -> Result<Resolved> {
    let vars: HashMap<String, String> = vars
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let lookup = move |name: &str| vars.get(name).cloned();
    resolve_with(
        config,
        &Env {
            var: &lookup,
            keyring: false,
        },
    )
    .await
}

fn build_in(vars: &[(&str, &str)], config: &ProviderConfig) -> Result<Box<dyn Provider>> {
    let vars: HashMap<String, String> = vars
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let lookup = move |name: &str| vars.get(name).cloned();
    build_with(
        config,
        &Env {
            var: &lookup,
            keyring: false,
        },
    )
}

#[test]
fn provider_config_reads_snake_case_fields_and_rejects_unknown_ones() {
    let config: ProviderConfig = serde_json::from_value(json!({
        "kind": "openai",
        "base_url": "http://127.0.0.1:8000/v1",
        "model": "qwen3",
        "api_key_env": "VLLM_KEY",
        "headers": {"X-Title": "IronClaw"},
    }))
    .unwrap();
    assert_eq!(config.kind, ProviderKind::OpenAi);
    assert_eq!(config.api_key_env.as_deref(), Some("VLLM_KEY"));
    assert_eq!(config.headers["X-Title"], "IronClaw");

    let typo = serde_json::from_value::<ProviderConfig>(json!({"kind": "ollama", "modle": "x"}));
    assert!(typo.is_err());
    let unknown_kind = serde_json::from_value::<ProviderConfig>(json!({"kind": "gemini"}));
    assert!(unknown_kind.is_err());
}

#[test]
fn hosted_services_without_a_key_say_which_variable_to_set() {
    let anthropic = build_in(&[], &ProviderConfig::new(ProviderKind::Anthropic))
        .err()
        .unwrap();
    assert!(
        matches!(&anthropic, Error::MissingApiKey { env_var, .. } if env_var == "ANTHROPIC_API_KEY"),
        "{anthropic:?}"
    );
    let openai = build_in(&[], &ProviderConfig::new(ProviderKind::OpenAi))
        .err()
        .unwrap();
    assert!(openai.to_string().contains("OPENAI_API_KEY"), "{openai}");
}

#[test]
fn self_hosted_servers_and_ollama_need_no_key() {
    let vllm = ProviderConfig {
        base_url: Some("http://127.0.0.1:8000/v1".into()),
        ..ProviderConfig::new(ProviderKind::OpenAi)
    };
    assert_eq!(build_in(&[], &vllm).unwrap().id(), "openai");
    assert_eq!(
        build_in(&[], &ProviderConfig::new(ProviderKind::Ollama))
            .unwrap()
            .id(),
        "ollama"
    );
}

#[test]
fn the_key_comes_from_the_variable_the_config_names() {
    let config = ProviderConfig {
        api_key_env: Some("MY_ANTHROPIC".into()),
        ..ProviderConfig::new(ProviderKind::Anthropic)
    };
    assert!(build_in(&[("MY_ANTHROPIC", "sk-ant-123")], &config).is_ok());
    assert!(build_in(&[("ANTHROPIC_API_KEY", "sk-ant-123")], &config).is_err());
}

#[tokio::test]
async fn the_openai_key_is_not_sent_to_other_openai_compatible_servers() {
    let (server, base) = ScriptedServer::start().await.unwrap();
    server.push(crate::testing::Reply::text(["hi"]));
    let third_party = ProviderConfig {
        base_url: Some(format!("{base}/v1")),
        model: Some("m".into()),
        ..ProviderConfig::new(ProviderKind::OpenAi)
    };

    let found = resolve_in(
        &[("OPENAI_API_KEY", "sk-openai-secret")],
        Some(&third_party),
    )
    .await
    .unwrap();
    let stream = found
        .provider
        .stream(&crate::test_support::request("m"), Default::default())
        .await
        .unwrap();
    crate::test_support::collect(stream).await;

    assert!(!server.chat_requests()[0]
        .headers
        .contains_key("authorization"));
}

#[tokio::test]
async fn with_nothing_configured_and_no_ollama_the_error_says_how_to_start() {
    let nowhere = closed_port_url().await;

    let err = resolve_in(&[("IRONCLAW_OLLAMA_BASE_URL", &nowhere)], None)
        .await
        .err()
        .unwrap();

    assert!(matches!(err, Error::NoModelConfigured), "{err:?}");
    assert!(err.to_string().contains("ollama serve"), "{err}");
}

#[tokio::test]
async fn a_running_ollama_is_used_with_its_newest_model() {
    let (server, base) = ScriptedServer::start().await.unwrap();
    server.set_models(["qwen3:4b", "llama3.2:3b"]);

    let found = resolve_in(&[("IRONCLAW_OLLAMA_BASE_URL", &base)], None)
        .await
        .unwrap();
    assert_eq!(
        (found.provider.id(), found.model.as_str()),
        ("ollama", "qwen3:4b")
    );

    let named = resolve_in(
        &[
            ("IRONCLAW_OLLAMA_BASE_URL", &base),
            ("IRONCLAW_MODEL", "llama3.2:3b"),
        ],
        None,
    )
    .await
    .unwrap();
    assert_eq!(named.model, "llama3.2:3b");
}

#[tokio::test]
async fn ollamas_window_and_tool_calling_come_from_the_model_and_a_setting_overrides_them() {
    let (server, base) = ScriptedServer::start().await.unwrap();
    server.set_models(["tiny:1b"]);
    server.set_model_context_length(2_048);
    server.set_model_without_tools();
    let found = resolve_in(&[("IRONCLAW_OLLAMA_BASE_URL", &base)], None)
        .await
        .unwrap();
    assert_eq!(
        found.context_window,
        crate::ContextWindow::new(2_048, crate::WindowSource::Provider)
    );
    assert_eq!(found.tool_mode, crate::ToolMode::CodeBlocks);

    let mut config = ProviderConfig::new(ProviderKind::Ollama);
    config.base_url = Some(base.clone());
    config.model = Some("tiny:1b".into());
    config.context_window = Some(4_096);
    config.tool_mode = Some(crate::ToolMode::Native);
    let set = resolve_in(&[], Some(&config)).await.unwrap();
    assert_eq!(set.context_window.tokens, 4_096);
    assert_eq!(set.context_window.source, crate::WindowSource::Setting);
    assert_eq!(set.tool_mode, crate::ToolMode::Native);
}

#[tokio::test]
async fn whether_a_model_reads_images_comes_from_the_setting_then_ollama_then_its_name() {
    // Ollama says: its capabilities win over the name ("tiny" says nothing, "llava" would).
    let (server, base) = ScriptedServer::start().await.unwrap();
    server.set_models(["tiny:1b"]);
    let plain = resolve_in(&[("IRONCLAW_OLLAMA_BASE_URL", &base)], None)
        .await
        .unwrap();
    assert!(!plain.images);
    server.set_model_with_vision();
    let vision = resolve_in(&[("IRONCLAW_OLLAMA_BASE_URL", &base)], None)
        .await
        .unwrap();
    assert!(vision.images);
    // The setting wins over what Ollama says, both ways.
    let mut config = ProviderConfig::new(ProviderKind::Ollama);
    config.base_url = Some(base.clone());
    config.model = Some("tiny:1b".into());
    config.images = Some(false);
    assert!(!resolve_in(&[], Some(&config)).await.unwrap().images);
    let env_says = resolve_in(
        &[
            ("IRONCLAW_OLLAMA_BASE_URL", &base),
            ("IRONCLAW_IMAGES", "no"),
        ],
        None,
    )
    .await
    .unwrap();
    assert!(!env_says.images);
    // A server that does not say: the name decides.
    let mut openai = ProviderConfig::new(ProviderKind::OpenAi);
    openai.base_url = Some(format!("{base}/v1"));
    openai.model = Some("gpt-4o-mini".into());
    assert!(resolve_in(&[], Some(&openai)).await.unwrap().images);
    openai.model = Some("gpt-3.5-turbo".into());
    assert!(!resolve_in(&[], Some(&openai)).await.unwrap().images);
}

#[tokio::test]
async fn an_ollama_without_models_is_not_enough() {
    let (server, base) = ScriptedServer::start().await.unwrap();
    server.set_models(Vec::<String>::new());

    let err = resolve_in(&[("IRONCLAW_OLLAMA_BASE_URL", &base)], None)
        .await
        .err()
        .unwrap();

    assert!(matches!(err, Error::NoModelConfigured), "{err:?}");
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn an_openai_base_url_in_the_environment_wins_over_ollama_and_lists_its_model() {
    let (server, base) = ScriptedServer::start().await.unwrap();
    server.set_models(["served-model"]);
    let vars = [
        ("IRONCLAW_OPENAI_BASE_URL", format!("{base}/v1")),
        ("IRONCLAW_OLLAMA_BASE_URL", base.clone()),
        ("ANTHROPIC_API_KEY", "sk-ant-1".to_string()),
    ];
    let vars: Vec<(&str, &str)> = vars.iter().map(|(k, v)| (*k, v.as_str())).collect();

    let found = resolve_in(&vars, None).await.unwrap();

    assert_eq!(
        (found.provider.id(), found.model.as_str()),
        ("openai", "served-model")
    );
    let paths: Vec<_> = server.requests().into_iter().map(|r| r.path).collect();
    assert_eq!(paths, vec!["/v1/models"]);
}

#[tokio::test]
async fn a_hosted_service_without_a_named_model_is_not_guessed() {
    let err = resolve_in(&[("ANTHROPIC_API_KEY", "sk-ant-1")], None)
        .await
        .err()
        .unwrap();
    assert!(matches!(err, Error::NoModelConfigured), "{err:?}");

    let found = resolve_in(
        &[
            ("ANTHROPIC_API_KEY", "sk-ant-1"),
            ("IRONCLAW_MODEL", "claude-x"),
        ],
        None,
    )
    .await
    .unwrap();
    assert_eq!(
        (found.provider.id(), found.model.as_str()),
        ("anthropic", "claude-x")
    );
}

#[tokio::test]
async fn a_config_wins_over_the_environment() {
    let config = ProviderConfig {
        model: Some("from-config".into()),
        ..ProviderConfig::new(ProviderKind::Ollama)
    };
    let found = resolve_in(
        &[
            ("ANTHROPIC_API_KEY", "sk-ant-1"),
            ("IRONCLAW_MODEL", "from-env"),
        ],
        Some(&config),
    )
    .await
    .unwrap();
    assert_eq!(
        (found.provider.id(), found.model.as_str()),
        ("ollama", "from-config")
    );
}
