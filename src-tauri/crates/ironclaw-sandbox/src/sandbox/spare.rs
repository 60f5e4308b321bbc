//! The warm spare: one started, idle sandbox of the default profile kept ready, so a new
//! session's first run costs what a warm one does (no create, no start, no supervisor boot).
//!
//! **How a spare becomes a session's container.** Docker labels cannot change after create, so
//! a spare keeps its own session label (`spare-<id>`) for life and the adopting session's
//! record names it ([`SessionRecord::container`]); every lookup goes through the record
//! ([`SessionRecord::label`]), which is what keeps it right across restarts. Its workspace is
//! bound at create to an empty folder beside the workspaces, `workspaces/.spare-<id>`, and
//! adoption renames that folder to the session's (`renameat2` with `RENAME_NOREPLACE`): the
//! bind mount follows the directory, and the rename is the claim — atomic, so two processes
//! never adopt one spare, and never onto a folder that exists already (a person may have it
//! open). The other choice, a spare created already bound to the next session's folder, needs
//! that name in advance: the CLI's sessions are named by people, the app's by conversations
//! that do not exist yet. Docker would bind the spare's old path again on a restart, so an
//! adopted container that stopped is replaced by one under the session's own name; the
//! workspace carries over as always.
//!
//! **Safe to adopt.** A spare is made by the same `create_body` as a session's container (the
//! hardening, UID, profile limits and idle timeout), never ran anything (it was only pinged),
//! and is adopted only while its [`container::LABEL_SPARE`] digest — IronClaw version, image,
//! confinement, profile, identity, idle timeout — matches the present ones: a changed policy
//! or image retires it. Only a default profile with network `none` gets a spare: an allowlist
//! container is made for its own session's egress network.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::Serialize;
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

use super::{Sandbox, SessionOptions, STARTUP_TIMEOUT};
use crate::container::{self, ContainerInfo, ContainerSpec, State};
use crate::error::{Error, Result};
use crate::exec::channel;
use crate::exec::connection::Connection;
use crate::policy::{NetworkMode, Profile};
use crate::session::{prepare_workspace, SessionName, SessionRecord};

pub mod machine;

const LABEL_PREFIX: &str = "spare-";
/// A spare's folder is `.<label>` in the workspaces folder: hidden, and no session name can
/// start with a dot.
const DIR_PREFIX: &str = ".spare-";
/// A spare's folder being thrown away is renamed first, so no adoption can race the removal.
const RETIRED_SUFFIX: &str = ".retired";
/// A spare's folder without a container is left alone this long: its container may be in the
/// making in another process.
const STRAY_DIR_GRACE: Duration = Duration::from_secs(120);
/// How often a keeper looks at its spare, at most.
const KEEPER_TICK: Duration = Duration::from_secs(300);
/// A keeper makes its first spare this long after it starts, and the next one this long after
/// an adoption: a container's creation costs the engine some CPU, which the app's first paint
/// and the adopting session's first run should not have to share.
const KEEPER_PAUSE: Duration = Duration::from_millis(1500);

/// What [`Sandbox::ensure_spare`] found or did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "state", rename_all = "lowercase")]
pub enum SpareStatus {
    /// A spare is ready; `made` says whether this call made it.
    Ready { container: String, made: bool },
    /// No spare is kept, for this reason.
    Off { reason: String },
}

/// What a spare is made with, and its digest.
struct Plan<'a> {
    profile_name: &'a str,
    profile: &'a Profile,
    digest: String,
}

impl Sandbox {
    /// Makes sure one usable spare runs (unless spares are off, then none does): keeps the
    /// first usable one, retires the others (another digest, stopped, near its idle timeout),
    /// makes one if none is left. Spares a session adopted are that session's, never touched.
    pub async fn ensure_spare(&self) -> Result<SpareStatus> {
        let span = tracing::info_span!("sandbox.ensure_spare");
        async {
            let plan = self.spare_plan().and_then(|p| {
                match machine::why_not(&machine::Sources::system()) {
                    Some(reason) => Err(reason),
                    None => Ok(p),
                }
            });
            let adopted = self.adopted_labels()?;
            let keep_left = self.keeper_tick() + self.adoption_margin();
            let mut ready = None;
            for c in container::list_spares(&self.docker, &self.instance).await? {
                if adopted.contains(&c.session) {
                    continue;
                }
                let usable = plan
                    .as_ref()
                    .is_ok_and(|p| self.usable(&c, &p.digest, keep_left));
                if usable && ready.is_none() {
                    ready = Some(c);
                } else {
                    self.retire(&c, false).await?;
                }
            }
            self.sweep_spare_dirs().await;
            let plan = match plan {
                Ok(plan) => plan,
                Err(reason) => return Ok(SpareStatus::Off { reason }),
            };
            if let Some(c) = ready {
                return Ok(SpareStatus::Ready {
                    container: c.name,
                    made: false,
                });
            }
            let container = self.make_spare(&plan).await?;
            tracing::info!(%container, "warm spare ready");
            Ok(SpareStatus::Ready {
                container,
                made: true,
            })
        }
        .instrument(span)
        .await
    }

    /// Removes every spare no session adopted (quit, `sandbox prune`). Returns their names.
    pub async fn remove_spares(&self) -> Result<Vec<String>> {
        let adopted = self.adopted_labels()?;
        let mut removed = Vec::new();
        for c in container::list_spares(&self.docker, &self.instance).await? {
            if !adopted.contains(&c.session) {
                self.retire(&c, true).await?;
                removed.push(c.name);
            }
        }
        self.sweep_spare_dirs().await;
        Ok(removed)
    }

    /// The spares no session adopted, each with whether a new session would adopt it now.
    pub async fn spares(&self) -> Result<Vec<(ContainerInfo, bool)>> {
        let adopted = self.adopted_labels()?;
        let digest = self.spare_plan().map(|p| p.digest).ok();
        Ok(container::list_spares(&self.docker, &self.instance)
            .await?
            .into_iter()
            .filter(|c| !adopted.contains(&c.session))
            .map(|c| {
                let usable = digest
                    .as_deref()
                    .is_some_and(|d| self.usable(&c, d, self.adoption_margin()));
                (c, usable)
            })
            .collect())
    }

    /// Why no spare is kept now (the policy or the machine), or `None` when one is.
    pub fn spare_off_reason(&self) -> Option<String> {
        match self.spare_plan() {
            Err(reason) => Some(reason),
            Ok(_) => machine::why_not(&machine::Sources::system()),
        }
    }

    /// Whether this process adopted a spare (the CLI then has a new one made after it exits).
    pub fn took_spare(&self) -> bool {
        self.took_spare.load(Ordering::Relaxed)
    }

    /// Keeps a spare ready until `cancel`: shortly after it starts, shortly after each adoption
    /// ([`KEEPER_PAUSE`]), and every few minutes
    /// (a spare near its idle timeout is replaced before it stops itself). A failure is logged
    /// and tried again at the next tick: without a spare, a first run only starts its sandbox
    /// the usual way.
    pub async fn keep_spare(self: Arc<Self>, cancel: CancellationToken) {
        loop {
            tokio::select! {
                () = cancel.cancelled() => break,
                () = tokio::time::sleep(KEEPER_PAUSE) => {}
            }
            match self.ensure_spare().await {
                Ok(status) => tracing::debug!(?status, "warm spare"),
                Err(e) => tracing::warn!(
                    error = %e,
                    "could not make a warm spare; new conversations start their sandbox the usual way"
                ),
            }
            tokio::select! {
                () = cancel.cancelled() => break,
                () = self.spare_taken.notified() => {}
                () = tokio::time::sleep(self.keeper_tick()) => {}
            }
        }
    }

    /// For a session that has no record yet: claims a ready spare as its container and writes
    /// the record naming it. Any failure leaves the session to be made the usual way.
    pub(super) async fn adopt_spare(
        &self,
        name: &SessionName,
        options: &SessionOptions,
    ) -> Option<ContainerInfo> {
        if options.workspace.is_some()
            || self.egress.chosen(name.as_str()) == Some(NetworkMode::Allowlist)
        {
            return None;
        }
        let plan = self.spare_plan().ok()?;
        if options
            .profile
            .as_deref()
            .is_some_and(|p| p != plan.profile_name)
        {
            return None;
        }
        let spares = match container::list_spares(&self.docker, &self.instance).await {
            Ok(spares) => spares,
            Err(e) => {
                tracing::debug!(error = %e, "no warm spare: cannot list them");
                return None;
            }
        };
        let target = self.paths.workspaces_dir().join(name.as_str());
        let margin = self.adoption_margin();
        for c in spares
            .into_iter()
            .filter(|c| self.usable(c, &plan.digest, margin))
        {
            match claim(&self.spare_dir(&c.session), &target) {
                Ok(()) => {}
                // Another process adopted it a moment ago: the next one, if any.
                Err(nix::errno::Errno::ENOENT) => continue,
                // The session's folder exists (a person may have opened it): not replaced.
                Err(nix::errno::Errno::EEXIST) => return None,
                Err(e) => {
                    tracing::warn!(error = %e, "could not claim the warm spare's folder");
                    return None;
                }
            }
            let record = SessionRecord {
                name: name.clone(),
                workspace: target,
                profile: options.profile.clone(),
                network: None,
                created_unix: unix_now(),
                run_as: None,
                container: Some(c.session.clone()),
                runtime: Some(c.runtime),
            };
            if let Err(e) = self.registry.save(&record) {
                // The folder is the session's now; the unnamed container goes with the next prune.
                tracing::warn!(error = %e, "could not record the adopted warm spare");
                return None;
            }
            self.took_spare.store(true, Ordering::Relaxed);
            self.spare_taken.notify_one();
            tracing::info!(session = %name, spare = %c.name, "adopted the warm spare");
            return Some(c);
        }
        None
    }

    /// The default profile's spare, or why there is none (the machine aside).
    fn spare_plan(&self) -> std::result::Result<Plan<'_>, String> {
        if !self.policy.warm_spare {
            return Err("turned off in sandbox.yaml (warm_spare: false)".to_string());
        }
        let (profile_name, profile) = self.policy.profile(None).map_err(|e| e.to_string())?;
        if profile.network != NetworkMode::None {
            return Err(format!(
                "the default profile `{profile_name}` has a network, and such a sandbox is made for its own session's network"
            ));
        }
        Ok(Plan {
            profile_name,
            profile,
            digest: self.spare_digest(profile_name, profile),
        })
    }

    fn spare_digest(&self, profile_name: &str, profile: &Profile) -> String {
        use sha2::{Digest, Sha256};
        let parts = [
            crate::VERSION.to_string(),
            self.image.hash.clone(),
            container::confinement_of(profile.runtime).to_string(),
            profile_name.to_string(),
            serde_json::to_string(profile).unwrap_or_default(),
            self.policy.idle_timeout.as_secs().to_string(),
            format!(
                "{}:{}:{}",
                self.user.uid, self.user.gid, self.user.substituted_for_root
            ),
        ];
        let mut h = Sha256::new();
        for part in parts {
            h.update(part.as_bytes());
            h.update([0]);
        }
        hex::encode(&h.finalize()[..8])
    }

    /// Running, made under `digest`, its folder unclaimed, and more than `left` before its
    /// idle timeout stops it.
    fn usable(&self, c: &ContainerInfo, digest: &str, left: Duration) -> bool {
        let age = unix_now().saturating_sub(u64::try_from(c.created_unix).unwrap_or(0));
        let life_left = self
            .policy
            .idle_timeout
            .saturating_sub(Duration::from_secs(age));
        c.spare == digest
            && c.state == State::Running
            && life_left > left
            && self.spare_dir(&c.session).is_dir()
    }

    /// A spare this close to its idle timeout is not adopted: the first run could find it gone.
    fn adoption_margin(&self) -> Duration {
        (self.policy.idle_timeout / 4).min(Duration::from_secs(60))
    }

    fn keeper_tick(&self) -> Duration {
        (self.policy.idle_timeout / 3).clamp(Duration::from_secs(1), KEEPER_TICK)
    }

    fn spare_dir(&self, label: &str) -> PathBuf {
        self.paths.workspaces_dir().join(format!(".{label}"))
    }

    /// The container labels sessions adopted (their records name them).
    pub(super) fn adopted_labels(&self) -> Result<HashSet<String>> {
        Ok(self
            .registry
            .list()?
            .into_iter()
            .filter_map(|r| r.container)
            .collect())
    }

    async fn make_spare(&self, plan: &Plan<'_>) -> Result<String> {
        let label = format!("{LABEL_PREFIX}{:012x}", rand::random::<u64>() >> 16);
        let dir = self.spare_dir(&label);
        prepare_workspace(&dir, self.user)?;
        let channel = self.channel_dir(&container::name_of(&self.instance, &label));
        let spec = ContainerSpec {
            session: &label,
            instance: &self.instance,
            image_tag: &self.image.tag,
            image_hash: &self.image.hash,
            profile_name: plan.profile_name,
            profile: plan.profile,
            workspace: &dir,
            user: self.user,
            idle_timeout: self.policy.idle_timeout,
            egress: None,
            spare: Some(&plan.digest),
            channel: Some(&channel),
            runtime: plan.profile.runtime,
        };
        let made = async {
            let (id, _) = container::create(&self.docker, &spec).await?;
            let conn = Connection::attach(&self.docker, &id).await?;
            container::start(&self.docker, &id).await?;
            conn.deliver_key().await?;
            // Ready means ready: the supervisor answers and Python is started.
            conn.ping(STARTUP_TIMEOUT).await?;
            Ok::<_, Error>(())
        }
        .await;
        let name = spec.name();
        if let Err(e) = made {
            let _ = container::remove(&self.docker, &name).await;
            let _ = std::fs::remove_dir(&dir);
            channel::remove_dir(&channel);
            return Err(e);
        }
        Ok(name)
    }

    /// Removes a spare no session adopted. Its folder is renamed first, so an adoption racing
    /// this one either has it already (then the container is left, unless `force`) or cannot.
    pub(super) async fn retire(&self, c: &ContainerInfo, force: bool) -> Result<()> {
        let dir = self.spare_dir(&c.session);
        let retired = self
            .paths
            .workspaces_dir()
            .join(format!(".{}{RETIRED_SUFFIX}", c.session));
        match std::fs::rename(&dir, &retired) {
            Ok(()) => {}
            // Claimed a moment ago, or broken: a running one may be a session's any moment.
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                if c.state == State::Running && !force {
                    return Ok(());
                }
            }
            Err(e) => return Err(Error::io("cannot retire the warm spare's folder", dir, e)),
        }
        container::remove(&self.docker, &c.id).await?;
        channel::remove_dir(&self.channel_dir(&c.name));
        remove_empty_dir(&retired);
        Ok(())
    }

    /// Spare folders left behind (a crash between folder and container, a retirement cut
    /// short). Only empty ones are removed: a spare never runs code, so nothing of anyone's
    /// can be in one.
    async fn sweep_spare_dirs(&self) {
        let Ok(entries) = std::fs::read_dir(self.paths.workspaces_dir()) else {
            return;
        };
        let live: HashSet<String> = match container::list_spares(&self.docker, &self.instance).await
        {
            Ok(spares) => spares
                .into_iter()
                .map(|c| format!(".{}", c.session))
                .collect(),
            Err(_) => return,
        };
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            if !name.starts_with(DIR_PREFIX) {
                continue;
            }
            let stale = name.ends_with(RETIRED_SUFFIX)
                || (!live.contains(&name)
                    && entry
                        .metadata()
                        .and_then(|m| m.modified())
                        .ok()
                        .and_then(|t| t.elapsed().ok())
                        .is_some_and(|age| age > STRAY_DIR_GRACE));
            if stale {
                remove_empty_dir(&entry.path());
            }
        }
    }
}

/// Moves the spare's folder to the session's, only if the session's does not exist.
fn claim(spare_dir: &Path, target: &Path) -> std::result::Result<(), nix::errno::Errno> {
    nix::fcntl::renameat2(
        nix::fcntl::AT_FDCWD,
        spare_dir,
        nix::fcntl::AT_FDCWD,
        target,
        nix::fcntl::RenameFlags::RENAME_NOREPLACE,
    )
}

fn remove_empty_dir(dir: &Path) {
    match std::fs::remove_dir(dir) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => tracing::warn!(error = %e, dir = %dir.display(), "left a warm spare's folder"),
    }
}

fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn a_claim_moves_the_folder_once_and_never_onto_an_existing_one() {
        let root = tempfile::tempdir().unwrap();
        let spare = root.path().join(".spare-abc");
        let taken = root.path().join("taken");
        std::fs::create_dir(&spare).unwrap();
        std::fs::create_dir(&taken).unwrap();
        assert_eq!(claim(&spare, &taken), Err(nix::errno::Errno::EEXIST));
        assert!(spare.is_dir(), "a refused claim leaves the spare's folder");
        let session = root.path().join("s1");
        claim(&spare, &session).unwrap();
        assert!(session.is_dir() && !spare.exists());
        // A second process trying the same spare finds it gone.
        assert_eq!(
            claim(&spare, &root.path().join("s2")),
            Err(nix::errno::Errno::ENOENT)
        );
    }
}
