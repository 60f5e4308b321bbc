//! Settings: the model provider lives in `<config>/provider.yaml` (the file the CLI reads, so
//! both front ends agree), its API key in the OS keyring, and the app's own defaults in the
//! history database's settings table.

use std::path::PathBuf;
use std::sync::Arc;

use ironclaw_llm::{ApiKey, ProviderConfig, ProviderKind};
use ironclaw_sandbox::Paths;
use ironclaw_store::History;
use serde::{Deserialize, Serialize};

use crate::error::{DesktopError, Result};
use crate::types::{ProviderCheck, ProviderKindName, ProviderSettings, Settings, ToolModeName};

const DEFAULTS_KEY: &str = "desktop.settings";

/// The part of [`Settings`] kept in the history database.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Defaults {
    default_profile: Option<String>,
    #[serde(default)]
    default_policy: ironclaw_protocol::ApprovalPolicy,
    notifications: bool,
    long_run_notify_ms: u64,
    #[serde(default)]
    undo_keep_bytes: Option<u64>,
    #[serde(default)]
    undo_keep_total_bytes: Option<u64>,
}

/// Below this an undo history could not hold one small run's copies.
const MIN_UNDO_KEEP: u64 = 1 << 20;

pub struct SettingsStore {
    paths: Paths,
    history: Arc<History>,
}

impl SettingsStore {
    pub fn new(paths: Paths, history: Arc<History>) -> Self {
        Self { paths, history }
    }

    pub fn provider_file(&self) -> PathBuf {
        self.paths.config_dir.join("provider.yaml")
    }

    /// The saved provider, as the CLI reads it; `None` when there is no file.
    pub fn provider_config(&self) -> Result<Option<ProviderConfig>> {
        let file = self.provider_file();
        match std::fs::read_to_string(&file) {
            Ok(text) => serde_yaml_ng::from_str(&text)
                .map(Some)
                .map_err(|e| DesktopError::Io {
                    path: file,
                    reason: format!("{e}. Fix the file, or save the provider again in Settings"),
                }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(DesktopError::io(file, &e)),
        }
    }

    /// The app's own settings only (no provider file, no keyring): cheap enough for every event.
    pub fn defaults(&self) -> Result<Settings> {
        let mut settings = Settings::default();
        if let Some(d) = self.history.get_setting::<Defaults>(DEFAULTS_KEY)? {
            settings.default_profile = d.default_profile;
            settings.default_policy = d.default_policy;
            settings.notifications = d.notifications;
            settings.long_run_notify_ms = d.long_run_notify_ms;
            settings.undo_keep_bytes = d.undo_keep_bytes;
            settings.undo_keep_total_bytes = d.undo_keep_total_bytes;
        }
        Ok(settings)
    }

    pub fn get(&self) -> Result<Settings> {
        let mut settings = self.defaults()?;
        settings.provider = self.provider_config()?.map(|c| ProviderSettings {
            kind: kind_name(c.kind),
            has_api_key: has_api_key(c.kind),
            more_models: c.more_models.iter().map(|m| m.as_line()).collect(),
            base_url: c.base_url,
            model: c.model,
            context_window: c.context_window,
            images: c.images,
            tool_mode: match c.tool_mode.unwrap_or_default() {
                ironclaw_llm::ToolMode::Auto => ToolModeName::Auto,
                ironclaw_llm::ToolMode::Native => ToolModeName::Native,
                ironclaw_llm::ToolMode::CodeBlocks => ToolModeName::CodeBlocks,
            },
        });
        Ok(settings)
    }

    pub fn save(&self, settings: &Settings) -> Result<Settings> {
        for (what, value) in [
            ("undo history per conversation", settings.undo_keep_bytes),
            (
                "undo history of all conversations",
                settings.undo_keep_total_bytes,
            ),
        ] {
            if let Some(v) = value.filter(|v| *v < MIN_UNDO_KEEP) {
                return Err(DesktopError::invalid(
                    what,
                    &format!("{v} bytes"),
                    "it must be at least 1 MiB (leave it empty to use sandbox.yaml's)",
                ));
            }
        }
        if let Some(profile) = &settings.default_profile {
            let policy = ironclaw_sandbox::policy::Policy::load(&self.paths)?;
            policy.profile(Some(profile))?;
        }
        if let Some(p) = &settings.provider {
            // Keep what only the file can say (the key's variable, extra headers).
            let mut config = self
                .provider_config()
                .ok()
                .flatten()
                .unwrap_or_else(|| ProviderConfig::new(kind(p.kind)));
            // More models are the person's list, whichever the main provider is.
            let kept = std::mem::take(&mut config.more_models);
            if config.kind != kind(p.kind) {
                config = ProviderConfig::new(kind(p.kind));
            }
            config.more_models = p
                .more_models
                .iter()
                .filter_map(|line| ironclaw_llm::MoreModel::from_line(line, &kept))
                .collect();
            config.base_url = p.base_url.clone().filter(|u| !u.trim().is_empty());
            config.model = p.model.clone().filter(|m| !m.trim().is_empty());
            if let Some(tokens) = p.context_window.filter(|t| *t < 1024) {
                return Err(DesktopError::invalid(
                    "context window",
                    &format!("{tokens} tokens"),
                    "no model reads fewer than 1,024 tokens; leave it empty to use what is known \
                     of the model",
                ));
            }
            config.context_window = p.context_window;
            config.images = p.images;
            config.tool_mode = match p.tool_mode {
                ToolModeName::Auto => None,
                ToolModeName::Native => Some(ironclaw_llm::ToolMode::Native),
                ToolModeName::CodeBlocks => Some(ironclaw_llm::ToolMode::CodeBlocks),
            };
            // Fails early on a malformed URL rather than on the first message.
            if let Some(url) = &config.base_url {
                if !(url.starts_with("http://") || url.starts_with("https://")) {
                    return Err(DesktopError::invalid(
                        "base URL",
                        url,
                        "it must start with http:// or https://",
                    ));
                }
            }
            let yaml = serde_yaml_ng::to_string(&config).map_err(|e| DesktopError::Io {
                path: self.provider_file(),
                reason: e.to_string(),
            })?;
            std::fs::create_dir_all(&self.paths.config_dir)
                .map_err(|e| DesktopError::io(&self.paths.config_dir, &e))?;
            let file = self.provider_file();
            let tmp = file.with_extension("yaml.tmp");
            std::fs::write(&tmp, yaml).map_err(|e| DesktopError::io(&tmp, &e))?;
            std::fs::rename(&tmp, &file).map_err(|e| DesktopError::io(&file, &e))?;
        }
        self.history.set_setting(
            DEFAULTS_KEY,
            &Defaults {
                default_profile: settings.default_profile.clone(),
                default_policy: settings.default_policy,
                notifications: settings.notifications,
                long_run_notify_ms: settings.long_run_notify_ms,
                undo_keep_bytes: settings.undo_keep_bytes,
                undo_keep_total_bytes: settings.undo_keep_total_bytes,
            },
        )?;
        self.get()
    }

    /// The model to talk to: the saved provider, else the environment, else a local Ollama.
    pub async fn resolve(&self) -> Result<ironclaw_llm::Resolved> {
        let config = self.provider_config()?;
        Ok(ironclaw_llm::resolve(config.as_ref()).await?)
    }

    pub async fn check(&self) -> ProviderCheck {
        let resolved = match self.resolve().await {
            Ok(r) => r,
            Err(e) => {
                return ProviderCheck {
                    ok: false,
                    model: None,
                    message: e.to_string(),
                }
            }
        };
        match resolved.provider.list_models().await {
            Ok(models) => ProviderCheck {
                ok: true,
                message: connected_message(
                    resolved.provider.base_url(),
                    models.len(),
                    &resolved.model,
                ),
                model: Some(resolved.model),
            },
            Err(e) => ProviderCheck {
                ok: false,
                model: Some(resolved.model),
                message: e.to_string(),
            },
        }
    }
}

/// What a passing check says, as a person would: where the service is, what it offers, and
/// which model IronClaw will ask.
fn connected_message(base_url: &str, models: usize, model: &str) -> String {
    let offers = match models {
        0 => "lists no models".to_owned(),
        1 => "offers 1 model".to_owned(),
        n => format!("offers {n} models"),
    };
    format!(
        "Connected: the server at {base_url} answers and {offers}. IronClaw will use “{model}”."
    )
}

fn kind(name: ProviderKindName) -> ProviderKind {
    match name {
        ProviderKindName::Openai => ProviderKind::OpenAi,
        ProviderKindName::Anthropic => ProviderKind::Anthropic,
        ProviderKindName::Ollama => ProviderKind::Ollama,
    }
}

fn kind_name(kind: ProviderKind) -> ProviderKindName {
    match kind {
        ProviderKind::OpenAi => ProviderKindName::Openai,
        ProviderKind::Anthropic => ProviderKindName::Anthropic,
        ProviderKind::Ollama => ProviderKindName::Ollama,
    }
}

fn has_api_key(kind: ProviderKind) -> bool {
    matches!(ApiKey::from_keyring(kind.id()), Ok(Some(_)))
}

/// Stores `key` for `provider` in the OS keyring. The key is never returned to the UI.
pub fn set_api_key(provider: ProviderKindName, key: &str) -> Result<()> {
    let kind = kind(provider);
    let key = ApiKey::new(key)?;
    key.save_to_keyring(kind.id()).map_err(|e| match e {
        ironclaw_llm::Error::Keyring { reason } => DesktopError::KeyringUnavailable {
            reason,
            env_var: match kind {
                ProviderKind::Anthropic => "ANTHROPIC_API_KEY",
                ProviderKind::OpenAi | ProviderKind::Ollama => "OPENAI_API_KEY",
            }
            .into(),
        },
        other => other.into(),
    })
}

/// Whether keys can be kept in the OS keyring on this machine, and a sentence saying so.
pub fn keyring_status() -> (bool, String) {
    match ApiKey::from_keyring("ironclaw-keyring-probe") {
        Ok(_) => (true, "API keys are kept in the OS keyring".into()),
        Err(e) => (
            false,
            format!("the OS keyring is unavailable ({e}); set the key's environment variable (OPENAI_API_KEY / ANTHROPIC_API_KEY) instead"),
        ),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn store() -> (tempfile::TempDir, SettingsStore) {
        let dir = tempfile::tempdir().unwrap();
        let paths = Paths::at(dir.path().join("data"), dir.path().join("config"));
        std::fs::create_dir_all(&paths.data_dir).unwrap();
        let (history, _) = History::open(paths.data_dir.join("h.sqlite3")).unwrap();
        (dir, SettingsStore::new(paths, Arc::new(history)))
    }

    #[test]
    fn the_provider_is_saved_where_the_cli_reads_it() {
        let (_dir, store) = store();
        assert_eq!(store.get().unwrap().provider, None);
        let settings = Settings {
            provider: Some(ProviderSettings {
                kind: ProviderKindName::Ollama,
                base_url: Some("http://127.0.0.1:11434".into()),
                model: Some("llama3".into()),
                has_api_key: true,
                context_window: Some(16_384),
                tool_mode: ToolModeName::CodeBlocks,
                images: Some(true),
                more_models: vec![],
            }),
            long_run_notify_ms: 5000,
            ..Settings::default()
        };
        let saved = store.save(&settings).unwrap();
        let text = std::fs::read_to_string(store.provider_file()).unwrap();
        let config: ProviderConfig = serde_yaml_ng::from_str(&text).unwrap();
        assert_eq!(config.kind, ProviderKind::Ollama);
        assert_eq!(config.model.as_deref(), Some("llama3"));
        assert_eq!(config.context_window, Some(16_384));
        assert_eq!(config.tool_mode, Some(ironclaw_llm::ToolMode::CodeBlocks));
        assert_eq!(config.images, Some(true));
        assert_eq!(saved.long_run_notify_ms, 5000);
        // `hasApiKey` is read back from the keyring, never taken from the UI.
        assert!(!saved.provider.unwrap().has_api_key);
    }

    #[test]
    fn more_models_are_lines_and_an_unchanged_line_keeps_what_only_the_file_says() {
        let (_dir, store) = store();
        std::fs::create_dir_all(store.provider_file().parent().unwrap()).unwrap();
        std::fs::write(
            store.provider_file(),
            "kind: openai\nmodel: big\nmore_models:\n  - model: small\n  - kind: anthropic\n    model: claude-x\n    api_key_env: WORK_ANTHROPIC_KEY\n",
        )
        .unwrap();
        let mut settings = store.get().unwrap();
        let provider = settings.provider.as_mut().unwrap();
        assert_eq!(provider.more_models, ["small", "anthropic:claude-x"]);
        provider.more_models = vec![
            "anthropic:claude-x".into(),
            "ollama:qwen2.5-coder:7b".into(),
            "llama3.1:8b".into(),
            " ".into(),
        ];
        // The main provider changes kind: the list stays the person's.
        provider.kind = ProviderKindName::Ollama;
        store.save(&settings).unwrap();
        let text = std::fs::read_to_string(store.provider_file()).unwrap();
        let config = ProviderConfig::from_yaml(&text, &store.provider_file()).unwrap();
        let more: Vec<(Option<ProviderKind>, &str, Option<&str>)> = config
            .more_models
            .iter()
            .map(|m| (m.kind, m.model.as_str(), m.api_key_env.as_deref()))
            .collect();
        assert_eq!(
            more,
            [
                (
                    Some(ProviderKind::Anthropic),
                    "claude-x",
                    Some("WORK_ANTHROPIC_KEY")
                ),
                (Some(ProviderKind::Ollama), "qwen2.5-coder:7b", None),
                (None, "llama3.1:8b", None),
            ]
        );
    }

    #[test]
    fn a_bad_base_url_or_unknown_profile_is_refused() {
        let (_dir, store) = store();
        let settings = Settings {
            provider: Some(ProviderSettings {
                kind: ProviderKindName::Openai,
                base_url: Some("file:///etc/passwd".into()),
                model: None,
                has_api_key: false,
                context_window: None,
                tool_mode: ToolModeName::Auto,
                images: None,
                more_models: vec![],
            }),
            ..Settings::default()
        };
        assert!(store.save(&settings).is_err());
        let settings = Settings {
            default_profile: Some("no-such-profile".into()),
            ..Settings::default()
        };
        assert!(store.save(&settings).is_err());
    }

    #[test]
    fn undo_caps_round_trip_and_a_cap_below_one_mebibyte_is_refused() {
        let (_dir, store) = store();
        assert_eq!(store.get().unwrap().undo_keep_bytes, None);
        let settings = Settings {
            undo_keep_bytes: Some(512 << 20),
            undo_keep_total_bytes: Some(3 << 30),
            ..Settings::default()
        };
        let saved = store.save(&settings).unwrap();
        assert_eq!(
            (saved.undo_keep_bytes, saved.undo_keep_total_bytes),
            (Some(512 << 20), Some(3 << 30))
        );
        let err = store
            .save(&Settings {
                undo_keep_total_bytes: Some(1000),
                ..Settings::default()
            })
            .unwrap_err()
            .to_string();
        assert!(err.contains("at least 1 MiB"), "{err}");
        // Nothing of the refused save was kept.
        assert_eq!(store.get().unwrap().undo_keep_total_bytes, Some(3 << 30));
    }

    #[test]
    fn an_empty_key_is_refused() {
        assert!(set_api_key(ProviderKindName::Openai, "   ").is_err());
    }

    #[test]
    fn a_passing_check_says_where_the_server_is_what_it_offers_and_which_model_is_used() {
        assert_eq!(
            connected_message("http://127.0.0.1:8000/v1", 1, "scripted"),
            "Connected: the server at http://127.0.0.1:8000/v1 answers and offers 1 model. IronClaw will use “scripted”."
        );
        assert_eq!(
            connected_message("https://api.example.org/v1", 12, "m"),
            "Connected: the server at https://api.example.org/v1 answers and offers 12 models. IronClaw will use “m”."
        );
        assert!(connected_message("http://h", 0, "m").contains("lists no models"));
    }
}
