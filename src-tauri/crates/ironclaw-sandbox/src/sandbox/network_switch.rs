//! Network mode switching and live allowlist answers for [`Sandbox`] (kept apart from the
//! execution path in `sandbox.rs`).

use tracing::Instrument;

use super::{Sandbox, Warm};
use crate::container::{self, ContainerInfo, State};
use crate::error::Result;
use crate::network::{AllowScope, Attachment, NetworkChoice, NetworkSwitch};
use crate::policy::NetworkMode;
use crate::session::SessionName;

impl Sandbox {
    /// Switches a session between `none` and `allowlist` for as long as this process serves
    /// it. A container made for allowlist mode is attached or detached live (interpreter state
    /// survives); a `none` container cannot be given a network by Docker, so it is removed and
    /// the next execution starts a new one on the same workspace ([`NetworkSwitch::Restarted`]).
    pub async fn set_network(
        &self,
        name: &SessionName,
        mode: NetworkMode,
    ) -> Result<NetworkSwitch> {
        let span =
            tracing::info_span!("sandbox.set_network", session = %name, mode = mode.as_str());
        async {
            let slot = self.slot(name).await;
            let mut warm = slot.lock().await;
            self.remember_network(name, mode)?;
            self.egress.set_mode(name.as_str(), mode);
            let found = self.container_of(name).await?;
            let Some(c) = found.filter(|c| c.state == State::Running) else {
                if mode == NetworkMode::None {
                    self.egress.release(name.as_str()).await?;
                }
                return Ok(NetworkSwitch::Deferred);
            };
            let same = warm.container_id.as_deref() == Some(c.id.as_str());
            let switch = match mode {
                NetworkMode::None => {
                    if c.network == NetworkMode::Allowlist.as_str() {
                        self.egress.detach(&c.id).await?;
                    }
                    self.egress.release(name.as_str()).await?;
                    NetworkSwitch::Live
                }
                NetworkMode::Allowlist => {
                    let attachment = self.egress.acquire(name.as_str()).await?;
                    if joins_live(&c, &attachment) {
                        self.egress
                            .attach(&c.id, name.as_str(), &attachment)
                            .await?;
                        NetworkSwitch::Live
                    } else {
                        container::remove(&self.docker, &c.id).await?;
                        *warm = Warm::default();
                        return Ok(NetworkSwitch::Restarted);
                    }
                }
            };
            if same {
                warm.network = Some(mode);
            }
            Ok(switch)
        }
        .instrument(span)
        .await
    }

    /// The session's network mode: what `set_network` chose (kept across restarts), else its
    /// profile's.
    pub fn network_mode(&self, name: &SessionName) -> Result<NetworkMode> {
        let saved = self.registry.network_mode(name, &self.policy, None)?;
        Ok(self.egress.mode(name.as_str(), saved))
    }

    /// Applies a choice as typed (`off`, `allowlist`, `allowlist:HOST,...`): the mode, and the
    /// hosts allowed for this session on top of the shared list.
    pub async fn apply_network(
        &self,
        name: &SessionName,
        choice: &NetworkChoice,
    ) -> Result<NetworkSwitch> {
        for host in &choice.hosts {
            self.allow_host(name, &host.to_string(), AllowScope::Session)
                .await?;
        }
        self.set_network(name, choice.mode).await
    }

    /// Writes the chosen mode into the session record, so the next IronClaw process starts the
    /// session the same way. A session without a record yet gets it written by its first
    /// execution (which knows the workspace and profile to create it with).
    fn remember_network(&self, name: &SessionName, mode: NetworkMode) -> Result<()> {
        if let Some(mut record) = self.registry.get(name)? {
            if record.network != Some(mode) {
                record.network = Some(mode);
                self.registry.save(&record)?;
            }
        }
        Ok(())
    }

    /// Lets `session` reach `host` (`name`, `*.domain`, optionally `:port`; e.g. an entry of
    /// [`crate::network::NetworkActivity::denied`]) without restarting anything.
    pub async fn allow_host(
        &self,
        name: &SessionName,
        host: &str,
        scope: AllowScope,
    ) -> Result<()> {
        self.egress.allow(name.as_str(), host, scope).await
    }

    /// Fetches a web page for the model, if the session's network is on (allowlist mode):
    /// see [`crate::network::fetch`].
    pub async fn fetch(
        &self,
        name: &SessionName,
        url: &str,
        once: &[String],
    ) -> std::result::Result<crate::network::fetch::Page, crate::network::fetch::FetchError> {
        use crate::network::fetch::FetchError;
        match self.network_mode(name) {
            Ok(NetworkMode::Allowlist) => self.egress.fetch(name.as_str(), url, once).await,
            Ok(NetworkMode::None) => Err(FetchError::NetworkOff),
            Err(e) => Err(FetchError::Failed(e.to_string())),
        }
    }

    /// Records the user's "deny" so later events for `host` say it was already answered.
    pub fn deny_host(&self, name: &SessionName, host: &str) {
        self.egress.deny(name.as_str(), host);
    }
}

/// Whether an existing container can be attached to the egress network live: only one made
/// for allowlist mode on this very network.
pub(super) fn joins_live(c: &ContainerInfo, attachment: &Attachment) -> bool {
    c.network == NetworkMode::Allowlist.as_str() && c.egress == attachment.network_id
}
