//! The chat header's model menu: the model a conversation uses now, the configured ones it can
//! switch to (`more_models` in provider.yaml and what the provider's server lists), and the
//! switch itself (`Op::UseModel`; the history remembers it and each answer's model).

use ironclaw_protocol::{ConversationId, Op};
use serde::Serialize;

use crate::error::Result;
use crate::Desktop;

/// One model, as the menu shows it and `use_model` takes it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct ModelOption {
    /// The provider's name: `openai`, `anthropic`, `ollama`, or a `more_models` entry's name.
    pub provider: String,
    pub model: String,
}

/// What the menu lists.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct ModelMenu {
    pub current: Option<ModelOption>,
    pub options: Vec<ModelOption>,
}

impl Desktop {
    /// The model the conversation's next turn uses: the one it switched to, else Settings'.
    /// Cheap (no network): for the chat header.
    pub fn current_model(&self, id: ConversationId) -> Option<ModelOption> {
        let switched = self
            .core
            .history
            .get_setting::<(String, String)>(&ironclaw_agent::session::model_key(id))
            .ok()
            .flatten();
        if let Some((provider, model)) = switched {
            return Some(ModelOption { provider, model });
        }
        if let Some((p, m)) = &self.core.fixed_model {
            return Some(ModelOption {
                provider: p.id().to_owned(),
                model: m.clone(),
            });
        }
        let config = self.core.settings.provider_config().ok().flatten()?;
        Some(ModelOption {
            provider: config.provider_name().to_owned(),
            model: config.model.clone()?,
        })
    }

    /// Every model the conversation can switch to (asks the provider's server for its list).
    pub async fn model_menu(&self, id: ConversationId) -> Result<ModelMenu> {
        self.core.history.get_conversation(id)?;
        let config = self.core.settings.provider_config()?;
        let main = self.core.chosen_model().await?.provider;
        let options = ironclaw_agent::models::choices(config.as_ref(), main.as_ref())
            .await
            .into_iter()
            .map(|c| ModelOption {
                provider: c.provider,
                model: c.model,
            })
            .collect();
        Ok(ModelMenu {
            current: self.current_model(id),
            options,
        })
    }

    /// Switches the conversation's next turns to `model` of `provider`. The answer comes as a
    /// `modelChanged` event, or an `error` one saying why not.
    pub async fn use_model(
        &self,
        id: ConversationId,
        provider: String,
        model: String,
    ) -> Result<()> {
        let session = self.core.session(id).await?;
        session.send(Op::UseModel { provider, model })?;
        Ok(())
    }
}
