//! Allowlist network mode: sandboxes that may reach listed hosts, and nothing else.
//!
//! ```text
//!  sandbox ──TCP──► relay container ══ socket handed over (Unix socket, SCM_RIGHTS) ══►
//!  (egress net: internal,  accepts, passes the       IronClaw proxy (this process, on the
//!   no host address on it) connection on, done       host): reads the request from the
//!                                                    sandbox's own socket, decides, resolves
//!                                                    on the host, connects ──► listed host
//! ```
//!
//! Why a relay: a container on an internal Docker network can still reach every host service
//! bound to 0.0.0.0 through the network's gateway address, and nothing short of root-owned
//! firewall rules stops that. So a sandbox's network has no host address at all
//! (`inhibit_ipv4`); each session has its own, with the relay the only other thing on it
//! (so sandboxes of different sessions cannot reach each other), and the relay is the only
//! thing that can reach the proxy: through a Unix socket in a folder mounted into it alone.
//! Handing over the socket (rather than pumping bytes through the relay) keeps the data path
//! at one hop, and the proxy learns the sandbox's address from the socket itself.
//!
//! [`Egress`] owns all of it for one [`crate::Sandbox`]: it starts the networks, relay and proxy
//! for the first session that needs them, stops proxy and relay after the last, keeps the live
//! allowlist, and hands out per-execution [`NetworkActivity`] and [`Refusal`]s.

mod attachment;
/// Measuring the allowlist path against a direct connection (`ironclaw-bench`, tests).
#[cfg(feature = "lab")]
pub mod bench;
mod choice;
pub mod engine;
pub mod fetch;
mod http;
/// A private network with plain servers on it, to measure and test against.
#[cfg(feature = "lab")]
pub mod lab;
mod persist;
mod proxy;
mod pump;
mod relay;
mod session_net;
mod state;

use std::collections::{BTreeSet, HashMap};
use std::net::IpAddr;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use bollard::Docker;
use serde::Serialize;
use tokio::net::UnixListener;
use tracing::Instrument;

pub use crate::allowlist::{Host, HostPattern, PortSpec, Rule};
use crate::container::UserMapping;
use crate::error::{Error, Result};
use crate::image::ImageSpec;
use crate::paths::Paths;
use crate::policy::{NetworkMode, NetworkPolicy};
pub use attachment::Attachment;
pub use choice::NetworkChoice;
pub use state::{AllowScope, NetworkActivity, Refusal, Resolver};

/// The policy message for a refused `host:port`, as the 403 body carries it.
pub fn blocked_message(target: &str) -> String {
    http::blocked_message(target, None)
}

/// What [`crate::Sandbox::set_network`] did to a session's container.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum NetworkSwitch {
    /// Applied to the running container; interpreter state is intact.
    Live,
    /// Docker cannot attach a network to a container created with `none`: the container was
    /// removed and the next execution starts a new one (the workspace is kept; interpreter
    /// state is not).
    Restarted,
    /// No container yet (or it is stopped): the next start uses the new mode.
    Deferred,
}

struct Running {
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Running {
    fn drop(&mut self) {
        self.task.abort();
    }
}

#[derive(Default)]
struct Run {
    proxy: Option<Running>,
    users: BTreeSet<String>,
    always_loaded: bool,
}

/// How long a freshly started relay may take to start listening.
const RELAY_READY: std::time::Duration = std::time::Duration::from_secs(10);

/// Where a remote tool server may be reached: the name to pin and its vetted addresses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RemoteTarget {
    pub name: Option<String>,
    pub addrs: Vec<std::net::SocketAddr>,
}

pub struct Egress {
    docker: Docker,
    instance: String,
    image: ImageSpec,
    config: NetworkPolicy,
    always_file: PathBuf,
    /// Where the proxy's Unix socket lives; the relay gets this folder mounted.
    socket_dir: PathBuf,
    /// The relay runs as the sandboxes' user, which owns `socket_dir`.
    relay_user: UserMapping,
    state: Arc<state::State>,
    /// Bumped by the proxy whenever a relay says it is listening.
    hello: tokio::sync::watch::Sender<u64>,
    run: tokio::sync::Mutex<Run>,
    modes: Mutex<HashMap<String, NetworkMode>>,
}

impl Egress {
    pub(crate) fn new(
        docker: Docker,
        paths: &Paths,
        instance: &str,
        image: ImageSpec,
        config: NetworkPolicy,
        relay_user: UserMapping,
    ) -> Self {
        Self {
            state: Arc::new(state::State::new(config.allowlist.clone())),
            always_file: persist::path(paths),
            socket_dir: paths.data_dir.join("egress"),
            relay_user,
            instance: instance.to_string(),
            docker,
            image,
            config,
            hello: tokio::sync::watch::Sender::new(0),
            run: tokio::sync::Mutex::default(),
            modes: Mutex::default(),
        }
    }

    /// Replaces how the proxy resolves names (tests use [`Resolver::fixed`]).
    pub fn set_resolver(&self, resolver: Resolver) {
        self.state.set_resolver(resolver);
    }

    pub async fn is_running(&self) -> bool {
        self.run.lock().await.proxy.is_some()
    }

    /// The list every session shares: `sandbox.yaml`'s plus the "always" answers in
    /// `network.yaml` (for a settings page).
    pub async fn allowlist(&self) -> Result<Vec<Rule>> {
        self.load_always(&mut *self.run.lock().await)?;
        Ok(self.state.base())
    }

    /// The session's mode: what `set_network` chose in this process, else the profile's.
    pub fn mode(&self, session: &str, profile: NetworkMode) -> NetworkMode {
        self.modes
            .lock()
            .ok()
            .and_then(|m| m.get(session).copied())
            .unwrap_or(profile)
    }

    /// What `set_network` chose for `session` in this process, if anything.
    pub(crate) fn chosen(&self, session: &str) -> Option<NetworkMode> {
        self.modes.lock().ok().and_then(|m| m.get(session).copied())
    }

    pub(crate) fn set_mode(&self, session: &str, mode: NetworkMode) {
        if let Ok(mut m) = self.modes.lock() {
            m.insert(session.to_string(), mode);
        }
    }

    /// Adds `host` (`name`, `*.domain`, optionally `:port`) to what `session` may reach, without
    /// restarting anything.
    pub async fn allow(&self, session: &str, host: &str, scope: AllowScope) -> Result<()> {
        let rule: Rule = host.parse().map_err(Error::Network)?;
        match scope {
            AllowScope::Once => self.state.grant(session, rule, true),
            AllowScope::Session => self.state.grant(session, rule, false),
            AllowScope::Always => {
                self.load_always(&mut *self.run.lock().await)?;
                persist::add(&self.always_file, &rule)?;
                self.state.add_base(rule);
            }
        }
        tracing::info!(session, host, ?scope, "network: host allowed by the user");
        Ok(())
    }

    /// Fetches a page for the model through this session's list (see [`fetch`]); `once` are
    /// targets the person allowed for this fetch alone.
    pub async fn fetch(
        &self,
        session: &str,
        url: &str,
        once: &[String],
    ) -> std::result::Result<fetch::Page, fetch::FetchError> {
        self.load_always(&mut *self.run.lock().await)
            .map_err(|e| fetch::FetchError::Failed(e.to_string()))?;
        fetch::fetch(&self.state, session, url, once).await
    }

    /// `session` (a tool server's) reaches exactly `rules`, never the shared list.
    pub(crate) fn own_list(&self, session: &str, rules: Vec<Rule>) {
        self.state.own_list(session, rules);
    }

    /// Vets a remote tool server's address as the proxy vets a request: `url`'s host and port
    /// become `key`'s own list (with `extra`, the entry's `network:`), the name is resolved by
    /// the policy's resolver, and a non-public address is refused unless listed itself. Returns
    /// the addresses to connect to (nothing else is), or why not.
    pub fn vet_remote(
        &self,
        key: &str,
        url: &str,
        extra: &[String],
    ) -> impl std::future::Future<Output = Result<RemoteTarget>> + Send + '_ {
        let key = key.to_string();
        let url = url.to_string();
        let extra = extra.to_vec();
        async move {
            let parsed = fetch::parse(&url).map_err(|e| Error::Network(e.to_string()))?;
            let (host, port) =
                fetch::target_of(&parsed).map_err(|e| Error::Network(e.to_string()))?;
            let mut rules: Vec<Rule> =
                vec![format!("{host}:{port}").parse().map_err(Error::Network)?];
            for e in &extra {
                rules.push(e.parse().map_err(Error::Network)?);
            }
            self.state.own_list(&key, rules);
            let addrs = match &host {
                Host::Ip(ip) => vec![*ip],
                Host::Name(name) => match self.state.resolver().resolve(name, port).await {
                    Ok(a) if !a.is_empty() => a,
                    Ok(_) | Err(_) => {
                        return Err(Error::Network(format!("cannot resolve {host}")));
                    }
                },
            };
            if let Some(bad) = self.state.forbidden_address(&key, &addrs, port) {
                let reason = format!(
                    "{host} resolves to the non-public address {bad}, which is not listed; list {bad}:{port} under the server's network: if it is really meant"
                );
                self.state.record(&key, &host, port, Some(reason.clone()));
                return Err(Error::Network(reason));
            }
            self.state.record(&key, &host, port, None);
            Ok(RemoteTarget {
                name: match &host {
                    Host::Name(n) => Some(n.clone()),
                    Host::Ip(_) => None,
                },
                addrs: addrs
                    .into_iter()
                    .map(|ip| std::net::SocketAddr::new(ip, port))
                    .collect(),
            })
        }
    }

    /// Forgets a remote tool server's list.
    pub fn forget_remote(&self, key: &str) {
        self.state.forget_session(key);
    }

    /// The user said no: later events for this host carry `user_denied` so nobody asks again.
    pub fn deny(&self, session: &str, host: &str) {
        self.state.deny(session, host);
    }

    fn load_always(&self, run: &mut Run) -> Result<()> {
        if !run.always_loaded {
            let mut rules = self.config.allowlist.clone();
            rules.extend(persist::load(&self.always_file)?);
            self.state.set_base(rules);
            run.always_loaded = true;
        }
        Ok(())
    }

    /// Makes sure the session's network, the relay and the proxy run, and counts `session` as
    /// a user of them.
    pub(crate) async fn acquire(&self, session: &str) -> Result<Attachment> {
        let mut run = self.run.lock().await;
        self.load_always(&mut run)?;
        if run.proxy.is_none() {
            run.proxy = Some(self.start().await?);
        }
        let net = engine::session_network(&self.docker, &self.instance, session).await?;
        // Also cheap insurance: a relay that was stopped or removed behind our back (or by a
        // Docker restart) comes back before a sandbox depends on it.
        self.ensure_relay(&net).await?;
        run.users.insert(session.to_string());
        Ok(Attachment {
            proxy_url: format!("http://{}:{}", net.relay_ip(), relay::RELAY_PORT),
            network: net.name.clone(),
            network_id: net.id.clone(),
            pip_index_url: self.config.pip_index_url.clone(),
            npm_registry: self.config.npm_registry.clone(),
        })
    }

    /// `session` no longer needs the proxy; the last one out stops proxy and relay.
    pub(crate) async fn release(&self, session: &str) -> Result<()> {
        let mut run = self.run.lock().await;
        if run.users.remove(session) && run.users.is_empty() && run.proxy.take().is_some() {
            tracing::info!(instance = %self.instance, "network: last allowlist session gone, stopping the egress proxy");
            relay::remove(&self.docker, &self.instance).await?;
        }
        Ok(())
    }

    async fn start(&self) -> Result<Running> {
        let span = tracing::info_span!("network.start", instance = %self.instance);
        self.start_inner().instrument(span).await
    }

    fn relay_spec<'a>(&'a self, net: &'a engine::Net) -> relay::RelaySpec<'a> {
        relay::RelaySpec {
            instance: &self.instance,
            image: &self.image,
            first_network: net,
            socket_dir: &self.socket_dir,
            user: self.relay_user,
        }
    }

    /// The relay, running, listening and on `net` at its static address. A relay that had to
    /// be created joins every other session network too; one that had to be started is waited
    /// for (its hello), so a sandbox started right after never finds the proxy address closed.
    async fn ensure_relay(&self, net: &engine::Net) -> Result<()> {
        let mut hello = self.hello.subscribe();
        hello.borrow_and_update();
        let relay = relay::ensure(&self.docker, &self.relay_spec(net)).await?;
        if relay.created {
            for (_, other) in engine::session_networks(&self.docker, &self.instance).await? {
                if other.id != net.id {
                    engine::connect(&self.docker, &other.id, &relay.id, Some(other.relay_ip()))
                        .await?;
                }
            }
        } else {
            engine::connect(&self.docker, &net.id, &relay.id, Some(net.relay_ip())).await?;
        }
        if relay.started
            && tokio::time::timeout(RELAY_READY, hello.changed())
                .await
                .is_err()
        {
            tracing::warn!("network: the egress relay did not report ready in time; going on");
        }
        Ok(())
    }

    async fn start_inner(&self) -> Result<Running> {
        let listener = listen(&self.socket_dir, self.relay_user)?;
        let proxy = Arc::new(proxy::Proxy {
            state: self.state.clone(),
            relay_uid: self.relay_user.uid,
            hello: self.hello.clone(),
            peers: Arc::new(DockerPeers {
                docker: self.docker.clone(),
                instance: self.instance.clone(),
            }),
        });
        let running = Running {
            task: tokio::spawn(proxy.serve(listener)),
        };
        tracing::info!(socket = %self.socket_dir.display(), "network: egress proxy started");
        Ok(running)
    }

    /// Attaches a container made for allowlist mode (if detached) and tells the proxy its
    /// address belongs to `session`.
    pub(crate) async fn attach(
        &self,
        container: &str,
        session: &str,
        attachment: &Attachment,
    ) -> Result<()> {
        let net = &attachment.network;
        let ip = match engine::container_ip(&self.docker, container, net).await? {
            Some(ip) => ip,
            None => {
                engine::connect(&self.docker, net, container, None).await?;
                engine::container_ip(&self.docker, container, net)
                    .await?
                    .ok_or_else(|| Error::Network(format!("the sandbox got no address on {net}")))?
            }
        };
        self.state.register_peer(ip, session);
        Ok(())
    }

    /// Detaches a container from every network it is on (its session's, or the shared one
    /// an older version made): it keeps only loopback, like `none`.
    pub(crate) async fn detach(&self, container: &str) -> Result<()> {
        for net in engine::container_networks(&self.docker, container).await? {
            // Only ours: `none` is not a network one can leave.
            if net.starts_with("ironclaw-egress-") {
                engine::disconnect(&self.docker, &net, container).await?;
            }
        }
        Ok(())
    }

    pub(crate) fn begin_exec(
        &self,
        session: &str,
    ) -> (u64, tokio::sync::mpsc::UnboundedReceiver<Refusal>) {
        self.state.begin_exec(session)
    }

    pub(crate) fn end_exec(&self, session: &str, epoch: u64) -> NetworkActivity {
        self.state.end_exec(session, epoch)
    }

    /// The session is gone (its container too): its grants, its mode and its network go.
    pub(crate) async fn forget(&self, session: &str) -> Result<()> {
        self.state.forget_session(session);
        if let Ok(mut m) = self.modes.lock() {
            m.remove(session);
        }
        self.release(session).await?;
        let _run = self.run.lock().await;
        let relay = relay::find(&self.docker, &self.instance).await?;
        engine::remove_session_network(
            &self.docker,
            &self.instance,
            session,
            relay.as_ref().map(|r| r.id.as_str()),
        )
        .await?;
        // A relay with no session network left serves nobody (another process may have
        // started it, so this process's user count cannot tell).
        if relay.is_some()
            && engine::session_networks(&self.docker, &self.instance)
                .await?
                .is_empty()
        {
            relay::remove(&self.docker, &self.instance).await?;
        }
        Ok(())
    }

    /// Removes the networks of sessions not in `known` (whose containers must be gone).
    pub async fn prune(&self, known: &std::collections::HashSet<String>) -> Result<()> {
        let _run = self.run.lock().await;
        let relay = relay::find(&self.docker, &self.instance).await?;
        for (session, _) in engine::session_networks(&self.docker, &self.instance).await? {
            if !known.contains(&session) {
                engine::remove_session_network(
                    &self.docker,
                    &self.instance,
                    &session,
                    relay.as_ref().map(|r| r.id.as_str()),
                )
                .await?;
            }
        }
        Ok(())
    }

    /// Removes the relay when no session container of this instance is running any more (an
    /// app quitting after stopping its own sandboxes); one still running — a CLI session's, say
    /// — keeps it. Networks stay, so a stopped sandbox starts again as it was; the next session
    /// that needs the relay makes it again. Returns whether it was removed.
    pub async fn stop_relay_if_unused(&self) -> Result<bool> {
        let mut run = self.run.lock().await;
        let running = crate::container::list(&self.docker, &self.instance)
            .await?
            .into_iter()
            // A warm spare, adopted or not, never has a network.
            .any(|c| c.state == crate::container::State::Running && c.spare.is_empty());
        if running || relay::find(&self.docker, &self.instance).await?.is_none() {
            return Ok(false);
        }
        run.proxy = None;
        run.users.clear();
        relay::remove(&self.docker, &self.instance).await?;
        tracing::info!(instance = %self.instance, "network: no sandbox left running, egress relay removed");
        Ok(true)
    }

    /// Stops the proxy and removes relay and networks (containers on them must be gone).
    pub async fn teardown(&self) -> Result<()> {
        let mut run = self.run.lock().await;
        run.proxy = None;
        run.users.clear();
        engine::remove_all(&self.docker, &self.instance).await
    }
}

/// The proxy's Unix socket in `dir` (replacing a stale one a killed process left), reachable
/// only by the relay's user: the folder is theirs and private, and the proxy checks the
/// caller's uid on every hand-over as well.
fn listen(dir: &Path, user: UserMapping) -> Result<UnixListener> {
    use std::os::unix::fs::PermissionsExt;
    let path = dir.join(relay::SOCKET_NAME);
    // sockaddr_un holds 108 bytes including the terminating NUL.
    if path.as_os_str().len() > 107 {
        return Err(Error::Network(format!(
            "the egress proxy's socket path {} is too long for a Unix socket; use a shorter \
             IRONCLAW data folder",
            path.display()
        )));
    }
    crate::paths::ensure_dir(dir)?;
    let io = |what: &'static str, e| Error::io(what, dir, e);
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))
        .map_err(|e| io("cannot protect", e))?;
    if user.substituted_for_root {
        std::os::unix::fs::chown(dir, Some(user.uid), Some(user.gid))
            .map_err(|e| io("cannot hand to the relay user", e))?;
    }
    match std::fs::remove_file(&path) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(Error::io("cannot replace", &path, e)),
    }
    let listener = UnixListener::bind(&path).map_err(|e| {
        Error::Network(format!(
            "cannot create the egress proxy's socket {} ({e})",
            path.display()
        ))
    })?;
    if user.substituted_for_root {
        std::os::unix::fs::chown(&path, Some(user.uid), Some(user.gid))
            .map_err(|e| Error::io("cannot hand to the relay user", &path, e))?;
    }
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600))
        .map_err(|e| Error::io("cannot protect", &path, e))?;
    Ok(listener)
}

struct DockerPeers {
    docker: Docker,
    instance: String,
}

impl proxy::PeerLookup for DockerPeers {
    fn lookup(
        &self,
        ip: IpAddr,
    ) -> std::pin::Pin<Box<dyn std::future::Future<Output = Option<String>> + Send + '_>> {
        Box::pin(async move {
            // The session network whose subnet holds `ip`, and on it the container at `ip`:
            // both must name the same session.
            let nets = engine::session_networks(&self.docker, &self.instance)
                .await
                .ok()?;
            let (session, net) = nets.into_iter().find(|(_, n)| n.holds(ip))?;
            let found = engine::session_at(&self.docker, &net.id, &self.instance, ip).await?;
            (found == session).then_some(found)
        })
    }
}
