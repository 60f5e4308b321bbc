//! Sessions on the host side: validated names, the small registry that says which sessions
//! exist (so labelled containers without one are orphans), workspaces and the UID/GID mapping.

use std::fmt;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use crate::container::UserMapping;
use crate::error::{Error, Result};
use crate::paths::{ensure_dir, Paths};
use crate::policy::{NetworkMode, Policy};

/// The identity code runs as when the host user is root. Fixed, unprivileged, and far from
/// the ranges distributions hand out to people, so it never collides with a real account.
pub const ROOT_SUBSTITUTE_UID: u32 = 10001;
pub const ROOT_SUBSTITUTE_GID: u32 = 10001;

/// A session name: also part of a container name and a folder name, so it is restricted to
/// characters that are safe in both.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct SessionName(String);

impl SessionName {
    pub fn new(name: impl Into<String>) -> Result<Self> {
        let name = name.into();
        let valid = (1..=64).contains(&name.len())
            && name
                .chars()
                .next()
                .is_some_and(|c| c.is_ascii_alphanumeric())
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
        if valid {
            Ok(Self(name))
        } else {
            Err(Error::InvalidSessionName { name })
        }
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for SessionName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl TryFrom<String> for SessionName {
    type Error = Error;
    fn try_from(value: String) -> Result<Self> {
        Self::new(value)
    }
}

impl From<SessionName> for String {
    fn from(value: SessionName) -> Self {
        value.0
    }
}

/// What we remember about a session between runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SessionRecord {
    pub name: SessionName,
    pub workspace: PathBuf,
    /// Profile name; `None` follows the policy's default.
    #[serde(default)]
    pub profile: Option<String>,
    /// The network mode chosen for this session with `set_network`; `None` follows the
    /// profile. Kept here so a restart of IronClaw keeps what the person chose.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub network: Option<NetworkMode>,
    pub created_unix: u64,
    /// Who the code runs as when that is not the sandbox's usual identity: a folder a person
    /// named with `--workspace` while IronClaw runs as root is used as its owner, so the
    /// folder and what the code writes in it stay that person's (nothing is chowned).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_as: Option<FolderOwner>,
    /// The session label of the warm spare this session adopted as its container (labels
    /// cannot change after create); `None`: its container carries the session's own name.
    /// Cleared when the session gets a container of its own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub container: Option<String>,
    /// The runtime the session's first container got (`runc` or `runsc`): the session keeps
    /// it, so the wall around its code never changes under it. `None`: not yet made, or made
    /// before the runtime was a choice (the runtime its container carries is taken then).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runtime: Option<crate::policy::Runtime>,
}

/// The owner of a person's workspace folder, taken when the session is created.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct FolderOwner {
    pub uid: u32,
    pub gid: u32,
}

impl SessionRecord {
    /// The identity this session's code runs as, given the sandbox's usual one.
    pub fn user(&self, usual: UserMapping) -> UserMapping {
        match self.run_as {
            Some(owner) => UserMapping {
                uid: owner.uid,
                gid: owner.gid,
                substituted_for_root: false,
            },
            None => usual,
        }
    }

    /// The [`crate::container::LABEL_SESSION`] value its container carries.
    pub fn label(&self) -> &str {
        self.container.as_deref().unwrap_or(self.name.as_str())
    }
}

/// One JSON file per session under `<data>/sessions/`. Files, not a database, because the
/// sandbox crate must stand alone; the history database (agent crate) references sessions by name.
#[derive(Debug, Clone)]
pub struct Registry {
    paths: Paths,
}

impl Registry {
    pub fn new(paths: Paths) -> Self {
        Self { paths }
    }

    fn file(&self, name: &SessionName) -> PathBuf {
        self.paths.sessions_dir().join(format!("{name}.json"))
    }

    pub fn get(&self, name: &SessionName) -> Result<Option<SessionRecord>> {
        let path = self.file(name);
        match std::fs::read(&path) {
            Ok(bytes) => serde_json::from_slice(&bytes)
                .map(Some)
                .map_err(|e| Error::Config {
                    file: path.clone(),
                    field: "(session record)".into(),
                    message: format!("{e}; delete the file to forget the session"),
                }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(Error::io("cannot read", path, e)),
        }
    }

    /// The network mode the session's next container is made with, from files alone: what
    /// `set_network` saved, else its profile's. `profile` is one about to be given to the
    /// session ([`Self::complete`] remembers it), else the one it has.
    pub fn network_mode(
        &self,
        name: &SessionName,
        policy: &Policy,
        profile: Option<&str>,
    ) -> Result<NetworkMode> {
        let record = self.get(name)?;
        let profile = profile.or(record.as_ref().and_then(|r| r.profile.as_deref()));
        let (_, p) = policy.profile(profile)?;
        Ok(record.and_then(|r| r.network).unwrap_or(p.network))
    }

    /// The session's record, created (with its workspace) on first use.
    pub fn get_or_create(
        &self,
        name: &SessionName,
        workspace: Option<&Path>,
        profile: Option<&str>,
        user: UserMapping,
    ) -> Result<SessionRecord> {
        let found = self.get(name)?;
        self.complete(found, name, workspace, profile, user)
    }

    /// [`Self::get_or_create`] for a caller that has just read the record (`found`, `None`
    /// when there was none): the warm path reads the file once.
    pub fn complete(
        &self,
        found: Option<SessionRecord>,
        name: &SessionName,
        workspace: Option<&Path>,
        profile: Option<&str>,
        user: UserMapping,
    ) -> Result<SessionRecord> {
        let (mut record, mut dirty) = match found {
            Some(r) => (r, false),
            None => (
                SessionRecord {
                    name: name.clone(),
                    workspace: workspace
                        .map(Path::to_path_buf)
                        .unwrap_or_else(|| self.paths.workspaces_dir().join(name.as_str())),
                    profile: profile.map(str::to_string),
                    network: None,
                    created_unix: SystemTime::now()
                        .duration_since(UNIX_EPOCH)
                        .map(|d| d.as_secs())
                        .unwrap_or(0),
                    run_as: match workspace {
                        Some(dir) => person_folder_owner(dir, user)?,
                        None => None,
                    },
                    container: None,
                    runtime: None,
                },
                true,
            ),
        };
        if let Some(p) = profile {
            if record.profile.as_deref() != Some(p) {
                record.profile = Some(p.to_string());
                dirty = true;
            }
        }
        // The warm path (every execution) touches nothing on disk unless something changed
        // or the workspace folder went missing.
        if dirty || !record.workspace.is_dir() {
            prepare_workspace(&record.workspace, record.user(user))?;
        }
        if dirty {
            self.save(&record)?;
        }
        Ok(record)
    }

    pub fn save(&self, record: &SessionRecord) -> Result<()> {
        let dir = self.paths.sessions_dir();
        ensure_dir(&dir)?;
        let path = self.file(&record.name);
        let tmp = path.with_extension("json.tmp");
        let bytes =
            serde_json::to_vec_pretty(record).map_err(|e| Error::Protocol(e.to_string()))?;
        std::fs::write(&tmp, bytes).map_err(|e| Error::io("cannot write", &tmp, e))?;
        std::fs::rename(&tmp, &path).map_err(|e| Error::io("cannot write", &path, e))
    }

    pub fn remove(&self, name: &SessionName) -> Result<()> {
        let path = self.file(name);
        match std::fs::remove_file(&path) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(Error::io("cannot remove", path, e)),
        }
    }

    pub fn list(&self) -> Result<Vec<SessionRecord>> {
        let dir = self.paths.sessions_dir();
        let entries = match std::fs::read_dir(&dir) {
            Ok(e) => e,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(Error::io("cannot list", dir, e)),
        };
        let mut out = Vec::new();
        for entry in entries.flatten() {
            let file = entry.file_name();
            let Some(stem) = file.to_str().and_then(|f| f.strip_suffix(".json")) else {
                continue;
            };
            if let Ok(name) = SessionName::new(stem) {
                if let Some(record) = self.get(&name)? {
                    out.push(record);
                }
            }
        }
        out.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(out)
    }
}

/// Code runs as the host user's UID/GID, so what it writes in the workspace is the user's own
/// with no chown afterwards. Never as UID 0: a root host user gets a fixed unprivileged identity.
pub fn user_mapping() -> UserMapping {
    let uid = nix::unistd::geteuid().as_raw();
    let gid = nix::unistd::getegid().as_raw();
    if uid == 0 {
        UserMapping {
            uid: ROOT_SUBSTITUTE_UID,
            gid: ROOT_SUBSTITUTE_GID,
            substituted_for_root: true,
        }
    } else {
        UserMapping {
            uid,
            gid,
            substituted_for_root: false,
        }
    }
}

/// For a folder a person named: `None` when the usual identity can use it as it is (IronClaw
/// is not root), else its owner to run as. A root-owned folder is refused: running the code
/// as root is never an option, and handing the folder to another user (chown) would change a
/// person's folder for good, and restoring it later could not be guaranteed (a crash, a
/// `kill -9`, a full disk). Copying in and out was the other choice; it was not taken because
/// a big folder would be copied twice per session and two copies can diverge.
fn person_folder_owner(dir: &Path, user: UserMapping) -> Result<Option<FolderOwner>> {
    use std::os::unix::fs::MetadataExt;
    if !user.substituted_for_root {
        return Ok(None);
    }
    let meta = std::fs::metadata(dir).map_err(|e| Error::io("cannot use the workspace", dir, e))?;
    if meta.uid() == 0 {
        return Err(Error::WorkspaceOwnedByRoot {
            path: dir.to_path_buf(),
        });
    }
    Ok(Some(FolderOwner {
        uid: meta.uid(),
        gid: meta.gid(),
    }))
}

/// Creates the workspace and, when we run as root with a substitute identity, hands the folder
/// itself to that identity so the sandbox can write in it (root on the host can still read all).
pub fn prepare_workspace(path: &Path, user: UserMapping) -> Result<()> {
    ensure_dir(path)?;
    if user.substituted_for_root {
        std::os::unix::fs::chown(path, Some(user.uid), Some(user.gid))
            .map_err(|e| Error::io("cannot hand the workspace to the sandbox user", path, e))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn session_names_that_are_unsafe_in_paths_or_container_names_are_rejected() {
        for bad in [
            "",
            "../x",
            "a/b",
            ".hidden",
            "-flag",
            "sp ace",
            "nl\n",
            &"x".repeat(65),
        ] {
            assert!(SessionName::new(bad).is_err(), "{bad:?}");
        }
        for good in ["a", "demo-1", "My_Session.2", &"x".repeat(64)] {
            assert!(SessionName::new(good).is_ok(), "{good:?}");
        }
    }

    #[test]
    fn registry_round_trips_and_lists_sessions() {
        let dir = tempfile::tempdir().unwrap();
        let reg = Registry::new(Paths::at(dir.path(), dir.path().join("cfg")));
        let me = UserMapping {
            uid: 1,
            gid: 1,
            substituted_for_root: false,
        };
        let a = reg
            .get_or_create(&SessionName::new("a").unwrap(), None, Some("strict"), me)
            .unwrap();
        assert!(a.workspace.is_dir());
        assert_eq!(a.workspace, dir.path().join("workspaces/a"));
        let again = reg
            .get_or_create(&SessionName::new("a").unwrap(), None, None, me)
            .unwrap();
        assert_eq!(
            again.profile.as_deref(),
            Some("strict"),
            "profile is remembered"
        );
        reg.get_or_create(&SessionName::new("b").unwrap(), None, None, me)
            .unwrap();
        let names: Vec<_> = reg
            .list()
            .unwrap()
            .into_iter()
            .map(|r| r.name.to_string())
            .collect();
        assert_eq!(names, ["a", "b"]);
        let mut with_mode = again.clone();
        with_mode.network = Some(NetworkMode::Allowlist);
        reg.save(&with_mode).unwrap();
        let reread = reg.get(&SessionName::new("a").unwrap()).unwrap().unwrap();
        assert_eq!(reread.network, Some(NetworkMode::Allowlist));
        reg.remove(&SessionName::new("a").unwrap()).unwrap();
        assert!(reg.get(&SessionName::new("a").unwrap()).unwrap().is_none());
    }

    /// What the static CLI front decides on before it does anything: the saved mode, else the
    /// profile's, where a profile given now counts over the one the session has.
    #[test]
    fn network_mode_is_the_saved_choice_else_the_profile_about_to_be_used() {
        let dir = tempfile::tempdir().unwrap();
        let reg = Registry::new(Paths::at(dir.path(), dir.path().join("cfg")));
        let policy = Policy::parse(
            (
                crate::policy::DEFAULT_POLICY_YAML,
                Path::new("/opt/ironclaw/config/sandbox.yaml"),
            ),
            Some((
                "profiles:\n  trusted: { network: allowlist }\n",
                Path::new("/home/me/.config/ironclaw/sandbox.yaml"),
            )),
        )
        .unwrap();
        let me = UserMapping {
            uid: 1,
            gid: 1,
            substituted_for_root: false,
        };
        let name = SessionName::new("s").unwrap();
        let mode = |profile| reg.network_mode(&name, &policy, profile).unwrap();
        // No session yet: the profile it would be made with.
        assert_eq!(mode(None), NetworkMode::None);
        assert_eq!(mode(Some("trusted")), NetworkMode::Allowlist);
        let mut record = reg.get_or_create(&name, None, Some("trusted"), me).unwrap();
        assert_eq!(mode(None), NetworkMode::Allowlist, "the session's profile");
        assert_eq!(
            mode(Some("standard")),
            NetworkMode::None,
            "a profile given now"
        );
        record.network = Some(NetworkMode::None);
        reg.save(&record).unwrap();
        assert_eq!(mode(None), NetworkMode::None, "the saved choice");
        assert_eq!(mode(Some("trusted")), NetworkMode::None, "the saved choice");
        assert!(reg.network_mode(&name, &policy, Some("nope")).is_err());
    }

    #[test]
    fn root_is_never_the_sandbox_identity() {
        let m = user_mapping();
        assert_ne!(m.uid, 0);
        assert_ne!(m.gid, 0);
    }
}
