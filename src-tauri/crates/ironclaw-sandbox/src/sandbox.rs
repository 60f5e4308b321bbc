//! The facade front ends use: sessions in, results and events out. It keeps one warm container
//! and one attach connection per session, finds them again after a restart (by label), and
//! recreates a container that was killed or removed — the workspace lives on the host, so
//! nothing in it is lost.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use bollard::Docker;
use serde::Serialize;
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

use crate::container::{self, ContainerInfo, ContainerSpec, State, UserMapping};
use crate::error::{Error, Result};
use crate::exec::{self, channel, connection::Connection, ExecEvent, ExecRequest, ExecResult};
use crate::image::{self, ImageSpec};
use crate::network::Egress;
use crate::paths::Paths;
use crate::policy::{NetworkMode, Policy, Runtime};
use crate::quota;
use crate::session::{user_mapping, Registry, SessionName, SessionRecord};
use network_switch::joins_live;

pub mod attachments;
pub mod checkpoints;
pub mod fork;
mod leftovers;
mod network_switch;
pub mod spare;
pub mod tool_server;

/// How long what was listed of an adopted spare is used instead of a new lookup.
const ADOPTED_INFO_FRESH: Duration = Duration::from_secs(2);

/// How long a freshly started supervisor may take to answer its first ping.
const STARTUP_TIMEOUT: Duration = Duration::from_secs(30);

#[derive(Debug, Clone, Default)]
pub struct SessionOptions {
    /// Trust profile; remembered for the session once given.
    pub profile: Option<String>,
    /// A folder the user picked instead of `<data>/workspaces/<name>`; only used on creation.
    pub workspace: Option<PathBuf>,
}

#[derive(Debug, Clone, Serialize)]
pub struct SessionStatus {
    pub name: String,
    pub workspace: PathBuf,
    pub profile: String,
    pub container: Option<ContainerInfo>,
}

/// What [`Sandbox::look`] found of a session's container.
struct Look {
    found: Result<Option<ContainerInfo>>,
    early: Option<(Arc<Connection>, Option<exec::connection::PendingPing>)>,
}

#[derive(Default)]
struct Warm {
    container_id: Option<String>,
    conn: Option<Arc<Connection>>,
    /// The profile the warm container was made with: a different one needs a new container.
    profile: Option<String>,
    /// The network mode applied to the warm container.
    network: Option<NetworkMode>,
}

pub struct Sandbox {
    docker: Docker,
    paths: Paths,
    policy: Policy,
    instance: String,
    image: ImageSpec,
    user: UserMapping,
    registry: Registry,
    warm: tokio::sync::Mutex<HashMap<SessionName, Arc<tokio::sync::Mutex<Warm>>>>,
    egress: Egress,
    /// Each session's last exact measurement of its workspace, the reference for the quota's
    /// estimates (see [`crate::quota`]).
    quota_bases: std::sync::Mutex<HashMap<SessionName, quota::Baseline>>,
    /// Off only for the bench's side-by-side of the watch's cost.
    quota_watch: std::sync::atomic::AtomicBool,
    /// Whether checkpoint records keep an inotify watch on workspaces between runs.
    workspace_watch: std::sync::atomic::AtomicBool,
    /// Whether runs offer the supervisor this process's output socket (`exec::channel`).
    direct_output: std::sync::atomic::AtomicBool,
    checkpoint_stores:
        std::sync::Mutex<HashMap<SessionName, Arc<ironclaw_workspace::checkpoint::Store>>>,
    /// Undo history caps (per conversation, all together): the policy's, unless Settings set
    /// others.
    undo_caps: std::sync::Mutex<(u64, u64)>,
    /// Woken when a session adopts the warm spare, so a keeper makes the next one.
    spare_taken: tokio::sync::Notify,
    took_spare: std::sync::atomic::AtomicBool,
    /// Sessions that adopted a spare in this process and have not run in it yet.
    adopted_fresh: std::sync::Mutex<HashMap<SessionName, (std::time::Instant, ContainerInfo)>>,
    /// The engine's ping, still on its way when the client came from the engine cache (see
    /// [`Sandbox::check_engine_before_use`]).
    engine_check: std::sync::Mutex<Option<crate::docker::known::EngineCheck>>,
}

impl Sandbox {
    pub fn new(docker: Docker, paths: Paths, policy: Policy) -> Self {
        let instance = paths.instance_id();
        let image = image::spec();
        let user = user_mapping();
        Self {
            egress: Egress::new(
                docker.clone(),
                &paths,
                &instance,
                image.clone(),
                policy.network.clone(),
                user,
            ),
            instance,
            registry: Registry::new(paths.clone()),
            image,
            user,
            docker,
            paths,
            undo_caps: std::sync::Mutex::new((
                policy.undo_keep_bytes,
                policy.undo_keep_total_bytes,
            )),
            policy,
            warm: tokio::sync::Mutex::default(),
            quota_bases: std::sync::Mutex::default(),
            quota_watch: std::sync::atomic::AtomicBool::new(true),
            workspace_watch: std::sync::atomic::AtomicBool::new(true),
            direct_output: std::sync::atomic::AtomicBool::new(true),
            checkpoint_stores: std::sync::Mutex::default(),
            spare_taken: tokio::sync::Notify::new(),
            took_spare: std::sync::atomic::AtomicBool::new(false),
            adopted_fresh: std::sync::Mutex::default(),
            engine_check: std::sync::Mutex::default(),
        }
    }

    /// For a client from [`crate::docker::connect_client_deferred`]: the first run awaits the
    /// engine's ping only once its local work is done (the session's record, the quota walk),
    /// and fails with the ping's error, the full handshake's, when the engine is gone.
    pub fn check_engine_before_use(&self, check: Option<crate::docker::known::EngineCheck>) {
        if let Ok(mut slot) = self.engine_check.lock() {
            *slot = check;
        }
    }

    /// Waits for the check [`Sandbox::check_engine_before_use`] was given, if it is still
    /// pending; a no-op otherwise. Call before the first request to the engine.
    pub async fn engine_checked(&self) -> Result<()> {
        let pending = self
            .engine_check
            .lock()
            .ok()
            .and_then(|mut slot| slot.take());
        match pending {
            Some(check) => check.done().await,
            None => Ok(()),
        }
    }

    /// Turns the workspace quota's watch off or on, for `ironclaw bench` to time runs without
    /// it next to runs with it. Nothing else may turn it off: a profile cannot.
    #[doc(hidden)]
    pub fn set_quota_watch_for_bench(&self, on: bool) {
        self.quota_watch
            .store(on, std::sync::atomic::Ordering::Relaxed);
    }

    /// Runs' output over the engine's attach instead of this process's socket: for the bench's
    /// side by side, and for the tests of the path a container without the socket's folder
    /// (made by an older IronClaw, or by an engine on another machine) takes.
    #[doc(hidden)]
    pub fn set_direct_output(&self, on: bool) {
        self.direct_output
            .store(on, std::sync::atomic::Ordering::Relaxed);
    }

    /// This process runs one execution and exits (`ironclaw exec`): its checkpoints walk a
    /// small workspace instead of watching it, because a watch only pays off from the next run
    /// on and closing it costs more than the walk (see `Store::watch_workspace`).
    pub fn run_once(&self) {
        self.workspace_watch
            .store(false, std::sync::atomic::Ordering::Relaxed);
    }

    pub fn docker(&self) -> &Docker {
        &self.docker
    }
    pub fn policy(&self) -> &Policy {
        &self.policy
    }
    pub fn paths(&self) -> &Paths {
        &self.paths
    }
    pub fn image(&self) -> &ImageSpec {
        &self.image
    }
    pub fn user(&self) -> UserMapping {
        self.user
    }
    pub fn instance(&self) -> &str {
        &self.instance
    }
    /// Allowlist network mode: events, live allowlist, proxy status.
    pub fn network(&self) -> &Egress {
        &self.egress
    }

    /// Runs code in the session's container, creating the session on first use.
    pub async fn exec(
        &self,
        name: &SessionName,
        options: &SessionOptions,
        request: &ExecRequest,
        on_event: &mut (dyn FnMut(ExecEvent) + Send),
        cancel: &CancellationToken,
    ) -> Result<ExecResult> {
        let span =
            tracing::info_span!("sandbox.exec", session = %name, lang = request.language.as_str());
        self.exec_inner(name, options, request, on_event, cancel)
            .instrument(span)
            .await
    }

    async fn exec_inner(
        &self,
        name: &SessionName,
        options: &SessionOptions,
        request: &ExecRequest,
        on_event: &mut (dyn FnMut(ExecEvent) + Send),
        cancel: &CancellationToken,
    ) -> Result<ExecResult> {
        if !request.language.is_interpreted() {
            return Err(Error::Protocol(format!(
                "{} is not a language the sandbox's interpreters run; nothing was run",
                request.language.as_str()
            )));
        }
        let slot = self.slot(name).await;
        // One execution at a time per session in this process; the supervisor enforces the
        // same across processes.
        let mut warm = slot.lock().await;
        let mut record = self.record_or_adopt(name, options).await?;
        if let Some(mode) = self.egress.chosen(name.as_str()) {
            // Chosen before the session existed: now it has a record to keep it in.
            if record.network != Some(mode) {
                record.network = Some(mode);
                self.registry.save(&record)?;
            }
        }
        let (_, profile) = self.policy.profile(record.profile.as_deref())?;
        let timeout = request.timeout.unwrap_or(profile.timeout);
        let quota_limits = profile.workspace;
        let watched = self.quota_watch.load(std::sync::atomic::Ordering::Relaxed);
        // This process's first run in the session, no spare just adopted, no egress network
        // to join: the container's lookup, attach and supervisor ping change nothing, so they
        // go out beside the engine's ping instead of after it. What they found is used only
        // once the ping has answered and the quota allows the run; otherwise it is dropped.
        let look_early = warm.conn.is_none()
            && !self.adoption_pending(name)
            && self
                .egress
                .mode(name.as_str(), record.network.unwrap_or(profile.network))
                == NetworkMode::None;
        let looking = async {
            if look_early {
                let container = container::name_of(&self.instance, record.label());
                Some(self.look(&record, &container, None, true).await)
            } else {
                None
            }
        };
        // Refuses the run if the workspace is already over quota, before anything starts:
        // not even a stopped container, whose fresh interpreters the next run must report.
        // The walk is local: the engine's ping, if still pending, overlaps it.
        let quota_walk = async {
            if watched {
                let base = self.quota_base(name);
                Some(quota::prepare(&record.workspace, quota_limits, base).await)
            } else {
                None
            }
        };
        let (prepared, checked, looked) = tokio::join!(quota_walk, self.engine_checked(), looking);
        checked?;
        let prepared = prepared.transpose()?;
        let workspace = record.workspace.clone();
        // The checkpoint is file work on this machine, the container's lookup, attach and ping
        // are round trips to the engine: they overlap (about 1 ms of each `ironclaw exec`).
        // Nothing is sent to run before both are done.
        let checkpoint = async {
            match &request.checkpointed {
                Some(run) => Ok(run.clone()),
                None => self.checkpoint_before(name, &workspace).await,
            }
        };
        // An adopted spare's interpreters are as fresh as a started container's.
        let (fresh, adopted) = self.take_adopted(name);
        let (warmed, checkpoint) = tokio::join!(
            self.warm_up(&mut record, &mut warm, adopted, looked),
            checkpoint
        );
        let (container_id, conn, started, mode) = match warmed {
            Ok(warmed) => warmed,
            Err(e) => {
                if request.checkpointed.is_none() {
                    self.forget_checkpoint(name, &workspace, checkpoint).await;
                }
                return Err(e);
            }
        };
        let started = started || fresh;
        let mut monitor = prepared.map(|(base, budget)| {
            quota::Monitor::start(
                quota::monitor::Target {
                    docker: self.docker.clone(),
                    container_id: container_id.clone(),
                    workspace: record.workspace.clone(),
                },
                base,
                budget,
            )
        });
        let (epoch, mut refusals) = self.egress.begin_exec(name.as_str());
        let ctx = exec::ExecContext {
            docker: &self.docker,
            container_id: &container_id,
            session: name.as_str(),
            conn: &conn,
            timeout,
            capture_bytes: self.policy.capture_bytes,
            container_started: started,
            workspace: &record.workspace,
            quota: monitor.as_mut(),
            refusals: &mut refusals,
            direct_output: self
                .direct_output
                .load(std::sync::atomic::Ordering::Relaxed),
        };
        let mut result = exec::run(ctx, request, on_event, cancel).await;
        if let Some(m) = monitor.as_mut() {
            m.finish().await;
            match m.outcome() {
                // Over quota: the next run counts afresh (and is refused unless space was freed).
                Some(outcome) if outcome.exceeded.is_none() => {
                    self.keep_quota_base(name, Some(outcome.base))
                }
                _ => self.keep_quota_base(name, None),
            }
        }
        if let Ok(r) = &result {
            if r.quota_exceeded.as_ref().is_some_and(|q| q.stopped) {
                // The container was killed: the next run starts it afresh.
                *warm = Warm::default();
            }
        }
        let activity = self.egress.end_exec(name.as_str(), epoch);
        // The proxy records before it answers: what the run was refused is all queued now.
        while let Ok(refusal) = refusals.try_recv() {
            on_event(ExecEvent::NetworkBlocked(refusal));
        }
        if let (Ok(r), NetworkMode::Allowlist) = (&mut result, mode) {
            // A client may show only "403" (curl's CONNECT error does): say it plainly too.
            for denied in &activity.denied {
                let note = format!("[IronClaw] {}\n", crate::network::blocked_message(denied));
                r.stderr.push_str(&note);
                on_event(ExecEvent::Stderr(note.into_bytes().into()));
            }
            r.network = Some(activity);
        }
        if let Ok(r) = &mut result {
            r.runtime = record.runtime;
            self.checkpoint_after(name, &record.workspace, checkpoint, r)
                .await;
        }
        if let Err(e) = &result {
            // Whatever broke, the next run starts by looking at the container afresh.
            *warm = Warm::default();
            if matches!(e, Error::Protocol(_)) {
                tracing::warn!(error = %e, "restarting an unresponsive sandbox");
                container::remove(&self.docker, &container_id).await?;
            } else if matches!(e, Error::ContainerGone { .. }) {
                return Err(self.explain_gone(name, &container_id).await);
            }
        }
        result
    }

    /// [`Sandbox::record`], except that a new session takes the warm spare when there is one
    /// (see `spare.rs`). The caller holds the session's slot.
    async fn record_or_adopt(
        &self,
        name: &SessionName,
        options: &SessionOptions,
    ) -> Result<SessionRecord> {
        let found = self.registry.get(name)?;
        if found.is_none() {
            // A new session's record and folder are made only on an engine that answers.
            self.engine_checked().await?;
        }
        if self.policy.warm_spare && found.is_none() {
            if let Some(spare) = self.adopt_spare(name, options).await {
                if let Ok(mut fresh) = self.adopted_fresh.lock() {
                    fresh.insert(name.clone(), (std::time::Instant::now(), spare));
                }
            }
            // Read again: the adoption wrote the record (it names the spare), or another
            // process that adopted one for this session did.
            return self.record(name, options);
        }
        self.registry.complete(
            found,
            name,
            options.workspace.as_deref(),
            options.profile.as_deref(),
            self.user,
        )
    }

    /// Whether this process adopted a spare for the session and has not run in it yet.
    fn adoption_pending(&self, name: &SessionName) -> bool {
        self.adopted_fresh
            .lock()
            .is_ok_and(|fresh| fresh.contains_key(name))
    }

    /// At the first run in a spare this process adopted for the session: whether there was
    /// one, and what was listed of it if that was a moment ago (later, it is looked up again:
    /// a run approved after a long wait may find it stopped).
    fn take_adopted(&self, name: &SessionName) -> (bool, Option<ContainerInfo>) {
        let taken = self
            .adopted_fresh
            .lock()
            .ok()
            .and_then(|mut fresh| fresh.remove(name));
        match taken {
            Some((when, spare)) => (true, (when.elapsed() < ADOPTED_INFO_FRESH).then_some(spare)),
            None => (false, None),
        }
    }

    /// The session's record, created (its folder too, never a container) when it is new.
    fn record(&self, name: &SessionName, options: &SessionOptions) -> Result<SessionRecord> {
        self.registry.get_or_create(
            name,
            options.workspace.as_deref(),
            options.profile.as_deref(),
            self.user,
        )
    }

    fn quota_base(&self, name: &SessionName) -> Option<quota::Baseline> {
        self.quota_bases
            .lock()
            .ok()
            .and_then(|bases| bases.get(name).copied())
    }

    fn keep_quota_base(&self, name: &SessionName, base: Option<quota::Baseline>) {
        if let Ok(mut bases) = self.quota_bases.lock() {
            match base {
                Some(base) => bases.insert(name.clone(), base),
                None => bases.remove(name),
            };
        }
    }

    async fn slot(&self, name: &SessionName) -> Arc<tokio::sync::Mutex<Warm>> {
        self.warm
            .lock()
            .await
            .entry(name.clone())
            .or_default()
            .clone()
    }

    /// The first run of this process in the session. Its container is looked up (by the name
    /// it would have, its labels checked) and, at the same time and when `attach`, attached by
    /// that name and its supervisor pinged: on the warm path the supervisor's answer is on its
    /// way when the lookup returns (two round trips saved on every `ironclaw exec`). The attach
    /// is used only if the container the lookup vouches for has that name and is kept, and the
    /// ping's answer only if that container was already running; otherwise they are dropped
    /// unused. None of it changes anything: a lookup reads, and a ping runs nothing, so one that
    /// reaches a container about to be replaced is harmless.
    async fn look(
        &self,
        record: &SessionRecord,
        name: &str,
        adopted: Option<ContainerInfo>,
        attach: bool,
    ) -> Look {
        let lookup = async {
            match adopted {
                // A spare adopted a moment ago was listed then: no second lookup.
                Some(spare) => Ok(Some(spare)),
                None => {
                    container::find_named(&self.docker, &self.instance, record.label(), name).await
                }
            }
        };
        let early = async {
            if !attach {
                // Joining the egress network comes first; no head start.
                return None;
            }
            let conn = Connection::attach(&self.docker, name).await.ok()?;
            let ping = conn.send_ping().await.ok();
            Some((conn, ping))
        };
        let (found, early) = tokio::join!(lookup, early);
        Look { found, early }
    }

    /// A running container with a live connection to its supervisor. Returns whether the
    /// container had to be started (its interpreters are fresh).
    async fn warm_up(
        &self,
        record: &mut SessionRecord,
        warm: &mut Warm,
        adopted: Option<ContainerInfo>,
        looked: Option<Look>,
    ) -> Result<(String, Arc<Connection>, bool, NetworkMode)> {
        let (profile_name, profile) = self.policy.profile(record.profile.as_deref())?;
        let session = record.name.as_str();
        let mode = self
            .egress
            .mode(session, record.network.unwrap_or(profile.network));
        if let (Some(id), Some(conn)) = (&warm.container_id, &warm.conn) {
            if !conn.is_closed()
                && warm.profile.as_deref() == Some(profile_name)
                && warm.network == Some(mode)
            {
                return Ok((id.clone(), conn.clone(), false, mode));
            }
        }
        let egress = match mode {
            NetworkMode::None => {
                self.egress.release(session).await?;
                None
            }
            NetworkMode::Allowlist => Some(self.egress.acquire(session).await?),
        };
        let name = container::name_of(&self.instance, record.label());
        let Look { found, early } = match (looked, adopted) {
            // Looked at while the engine's ping was on its way (`exec_inner`).
            (Some(looked), None) if egress.is_none() => looked,
            (_, adopted) => self.look(record, &name, adopted, egress.is_none()).await,
        };
        let found = found?;
        let wanted = wanted_runtime(record.runtime, profile.runtime);
        let found = match found {
            Some(c) if record.container.is_some() && c.state != State::Running => {
                // An adopted spare's mount names the spare's old folder, which Docker would
                // bind again on a start: the session gets a container of its own.
                tracing::info!(session = %record.name, "replacing a stopped adopted spare");
                container::remove(&self.docker, &c.id).await?;
                None
            }
            Some(c) if c.runtime == Runtime::Runsc && c.state != State::Running => {
                // gVisor may keep a stopped sandbox's id taken for good after a kill (the
                // engine then answers "id already in use" to a start): a stopped gVisor
                // container is made anew. Nothing is lost: its root is read-only, and what
                // it held in memory is gone either way.
                tracing::info!(session = %record.name, "replacing a stopped gVisor sandbox");
                container::remove(&self.docker, &c.id).await?;
                None
            }
            Some(c)
                if c.image_hash != self.image.hash
                    || c.profile != profile_name
                    || c.confinement != container::confinement_of(c.runtime)
                    || !(wanted == Runtime::Auto || wanted == c.runtime) =>
            {
                // A new image, profile, confinement or runtime needs a new container: the
                // workspace carries over.
                tracing::info!(session = %record.name, "recreating the sandbox for a new image or profile");
                container::remove(&self.docker, &c.id).await?;
                None
            }
            Some(c) if egress.as_ref().is_some_and(|a| !joins_live(&c, a)) => {
                // Docker cannot give a `none` container a network: a new one it is.
                tracing::info!(session = %record.name, "recreating the sandbox to join the egress network");
                container::remove(&self.docker, &c.id).await?;
                None
            }
            other => other,
        };
        if let Some(c) = found.as_ref().filter(|c| c.state == State::Paused) {
            // Starting or attaching would fail with the engine's 409; unpausing is for whoever
            // paused it (the mid-run freeze of a timed-out run is handled in `exec::frozen`).
            return Err(Error::ContainerPaused {
                session: record.name.to_string(),
                container: c.name.clone(),
            });
        }
        if let (Some(c), None) = (&found, &egress) {
            if c.network == NetworkMode::Allowlist.as_str() {
                // Before it starts, so a `none` session never has a network, even briefly.
                self.egress.detach(&c.id).await?;
            }
        }
        let early = match &found {
            Some(c) if c.name == name => early,
            _ => None,
        };
        let (id, container_name, needs_start) = match found {
            Some(c) => {
                if record.runtime.is_none() {
                    // Made before the runtime was recorded: the session keeps the one it has.
                    record.runtime = Some(c.runtime);
                    self.registry.save(record)?;
                }
                (c.id, c.name, c.state != State::Running)
            }
            None => {
                if record.container.take().is_some() {
                    // From now on the session's container carries its own name.
                    self.registry.save(record)?;
                }
                let channel =
                    self.channel_dir(&container::name_of(&self.instance, record.name.as_str()));
                let spec = ContainerSpec {
                    session: record.name.as_str(),
                    instance: &self.instance,
                    image_tag: &self.image.tag,
                    image_hash: &self.image.hash,
                    profile_name,
                    profile,
                    workspace: &record.workspace,
                    user: record.user(self.user),
                    idle_timeout: self.policy.idle_timeout,
                    egress: egress.as_ref(),
                    spare: None,
                    channel: Some(&channel),
                    runtime: wanted,
                };
                let (id, runtime) = container::create(&self.docker, &spec).await?;
                if record.runtime != Some(runtime) {
                    record.runtime = Some(runtime);
                    self.registry.save(record)?;
                }
                (id, spec.name(), true)
            }
        };
        // Attach before starting so nothing the supervisor says at start-up is missed.
        let (conn, early_ping) = match early {
            Some((conn, ping)) => (conn, ping.filter(|_| !needs_start)),
            None => (Connection::attach(&self.docker, &id).await?, None),
        };
        conn.open_channel(&self.channel_dir(&container_name));
        if needs_start {
            container::start(&self.docker, &id).await?;
            // Before any request: no code has run in this start yet (exec::seal).
            conn.deliver_key().await?;
        }
        // What the interpreters carry is reported with each run (`altered_before`).
        let answered = match early_ping {
            Some(ping) => ping.answer(STARTUP_TIMEOUT).await,
            None => conn.ping(STARTUP_TIMEOUT).await,
        };
        let (conn, needs_start) = match answered {
            Ok(_) => (conn, needs_start),
            // A supervisor that never got its key (the process that started it died first, or
            // the engine restarted it) obeys nothing and ends after a while
            // (image/run_control.py, KEY_WAIT); started again from here, it gets its key.
            // Under gVisor a stopped sandbox is made anew by the next run instead.
            Err(e) if !needs_start && self.has_stopped(&id).await => {
                if record.runtime == Some(Runtime::Runsc) {
                    return Err(Error::ContainerGone {
                        session: record.name.to_string(),
                        reason: format!(
                            "it ended while it was asked ({e}): was it restarted outside IronClaw?"
                        ),
                    });
                }
                tracing::info!(error = %e, "the sandbox ended while it was asked; starting it again");
                let conn = Connection::attach(&self.docker, &id).await?;
                conn.open_channel(&self.channel_dir(&container_name));
                container::start(&self.docker, &id).await?;
                conn.deliver_key().await?;
                conn.ping(STARTUP_TIMEOUT).await?;
                (conn, true)
            }
            Err(e) => return Err(e),
        };
        if let Some(attachment) = &egress {
            self.egress.attach(&id, session, attachment).await?;
        }
        warm.container_id = Some(id.clone());
        warm.conn = Some(conn.clone());
        warm.profile = Some(profile_name.to_string());
        warm.network = Some(mode);
        Ok((id, conn, needs_start, mode))
    }

    /// Whether the container exists and is not running, or stops within a moment: its attach
    /// stream closes as its main process ends, a little before the engine says so.
    async fn has_stopped(&self, id: &str) -> bool {
        for _ in 0..20 {
            let state = self
                .docker
                .inspect_container(id, None)
                .instrument(tracing::debug_span!("docker.inspect_container", id))
                .await
                .ok()
                .and_then(|info| info.state);
            match state.and_then(|s| s.running) {
                Some(false) => return true,
                Some(true) => tokio::time::sleep(Duration::from_millis(100)).await,
                None => return false,
            }
        }
        false
    }

    /// Turns "the connection closed" into what actually happened, for the message people read.
    async fn explain_gone(&self, name: &SessionName, id: &str) -> Error {
        let reason = match self.docker.inspect_container(id, None).await {
            Err(e) if crate::error::is_not_found(&e) => {
                "it was removed from outside IronClaw".to_string()
            }
            Err(_) => "the Docker engine stopped answering (it may be restarting)".to_string(),
            Ok(info) => {
                let state = info.state.unwrap_or_default();
                if state.oom_killed == Some(true) {
                    "it ran out of memory".to_string()
                } else if state.running == Some(true) {
                    "the connection to it broke (was the Docker engine restarted?)".to_string()
                } else {
                    format!("it stopped (exit code {})", state.exit_code.unwrap_or(-1))
                }
            }
        };
        Error::ContainerGone {
            session: name.to_string(),
            reason,
        }
    }

    pub async fn sessions(&self) -> Result<Vec<SessionStatus>> {
        let containers = container::list(&self.docker, &self.instance).await?;
        let mut by_session: HashMap<String, ContainerInfo> = containers
            .into_iter()
            .map(|c| (c.session.clone(), c))
            .collect();
        let mut out = Vec::new();
        for record in self.registry.list()? {
            let profile = match self.policy.profile(record.profile.as_deref()) {
                Ok((name, _)) => name.to_string(),
                Err(_) => record.profile.clone().unwrap_or_default(),
            };
            out.push(SessionStatus {
                container: by_session.remove(record.label()),
                name: record.name.to_string(),
                workspace: record.workspace,
                profile,
            });
        }
        Ok(out)
    }

    pub fn workspace(&self, name: &SessionName) -> Result<PathBuf> {
        self.registry
            .get(name)?
            .map(|r| r.workspace)
            .ok_or_else(|| Error::SessionNotFound {
                name: name.to_string(),
            })
    }

    /// The session's container, found by the label its record names (see `spare.rs`).
    pub async fn container_of(&self, name: &SessionName) -> Result<Option<ContainerInfo>> {
        let record = self.registry.get(name)?;
        let label = record.as_ref().map_or(name.as_str(), SessionRecord::label);
        container::find(&self.docker, &self.instance, label).await
    }

    /// The session containers of this instance, each under its session's name (an adopted
    /// spare's label is replaced by the session's); spares no session adopted are left out.
    pub async fn containers(&self) -> Result<Vec<ContainerInfo>> {
        let names: HashMap<String, String> = self
            .registry
            .list()?
            .into_iter()
            .filter_map(|r| r.container.clone().map(|label| (label, r.name.to_string())))
            .collect();
        Ok(container::list(&self.docker, &self.instance)
            .await?
            .into_iter()
            .filter_map(|mut c| match names.get(&c.session) {
                Some(name) => {
                    c.session = name.clone();
                    Some(c)
                }
                None if !c.spare.is_empty() => None,
                None => Some(c),
            })
            .collect())
    }

    /// Stops the session's container (state in its interpreters is lost; the workspace stays).
    pub async fn stop(&self, name: &SessionName) -> Result<()> {
        self.forget_warm(name).await;
        match self.container_of(name).await? {
            Some(c) => container::stop(&self.docker, &c.id).await,
            None if self.registry.get(name)?.is_some() => Ok(()),
            None => Err(Error::SessionNotFound {
                name: name.to_string(),
            }),
        }
    }

    /// Removes the session: its container and its record, and its workspace if asked.
    pub async fn remove(&self, name: &SessionName, purge_workspace: bool) -> Result<()> {
        self.forget_warm(name).await;
        let record = self.registry.get(name)?;
        let label = record.as_ref().map_or(name.as_str(), SessionRecord::label);
        let found = container::find(&self.docker, &self.instance, label).await?;
        if record.is_none() && found.is_none() {
            return Err(Error::SessionNotFound {
                name: name.to_string(),
            });
        }
        if let Some(c) = found {
            container::remove(&self.docker, &c.id).await?;
            channel::remove_dir(&self.channel_dir(&c.name));
        }
        if let Some(r) = record {
            if purge_workspace {
                match std::fs::remove_dir_all(&r.workspace) {
                    Ok(()) => {}
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                    Err(e) => return Err(Error::io("cannot delete the workspace", r.workspace, e)),
                }
            }
            self.registry.remove(name)?;
        }
        self.egress.forget(name.as_str()).await
    }

    /// Removes containers of this instance whose session no longer exists (and the egress relay
    /// and networks once no container is left). Returns the containers' names. A usable warm
    /// spare is no orphan; a stale one is ([`Sandbox::remove_spares`] removes all).
    pub async fn cleanup_orphans(&self) -> Result<Vec<String>> {
        let records = self.registry.list()?;
        let labels: std::collections::HashSet<String> =
            records.iter().map(|r| r.label().to_string()).collect();
        let known: std::collections::HashSet<String> =
            records.iter().map(|r| r.name.to_string()).collect();
        let mut removed = Vec::new();
        let mut kept = 0;
        let usable_spares: std::collections::HashSet<String> = self
            .spares()
            .await?
            .into_iter()
            .filter(|(_, usable)| *usable)
            .map(|(c, _)| c.id)
            .collect();
        for c in container::list(&self.docker, &self.instance).await? {
            if usable_spares.contains(&c.id) {
                continue;
            }
            if !labels.contains(&c.session) {
                if c.spare.is_empty() {
                    container::remove(&self.docker, &c.id).await?;
                } else {
                    self.retire(&c, true).await?;
                }
                removed.push(c.name);
            } else {
                kept += 1;
            }
        }
        self.sweep_channel_dirs().await;
        if kept == 0 {
            // No sandbox left to serve: the egress relay and networks go too.
            self.egress.teardown().await?;
        } else {
            self.egress.prune(&known).await?;
        }
        Ok(removed)
    }

    /// The host folder of the output sockets of the container named `container`.
    fn channel_dir(&self, container: &str) -> std::path::PathBuf {
        channel::host_dir(&self.paths.channels_dir(), container)
    }

    /// Output folders of containers that no longer exist (removed from outside IronClaw, or
    /// by a process that was killed before it could remove the folder).
    async fn sweep_channel_dirs(&self) {
        let Ok(entries) = std::fs::read_dir(self.paths.channels_dir()) else {
            return;
        };
        let Ok(live) = container::list(&self.docker, &self.instance).await else {
            return;
        };
        let live: std::collections::HashSet<String> = live.into_iter().map(|c| c.name).collect();
        let mine = container::name_of(&self.instance, "");
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.starts_with(&mine) && !live.contains(&name) {
                channel::remove_dir(&entry.path());
            }
        }
    }

    async fn forget_warm(&self, name: &SessionName) {
        if let Some(slot) = self.warm.lock().await.remove(name) {
            *slot.lock().await = Warm::default();
        }
    }
}

/// The runtime a session's next container is made under: the one the session was made under
/// (it keeps its wall), unless its profile now requires gVisor.
fn wanted_runtime(recorded: Option<Runtime>, profile: Runtime) -> Runtime {
    match (recorded, profile) {
        (_, Runtime::Runsc) => Runtime::Runsc,
        (Some(recorded), _) => recorded,
        (None, profile) => profile,
    }
}
