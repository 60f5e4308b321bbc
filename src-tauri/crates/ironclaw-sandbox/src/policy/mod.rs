//! The sandbox policy: trust-level profiles (CPU, memory, pids, timeouts, tmpfs, ulimits,
//! network, runtime) plus a few global knobs, read from the shipped `config/sandbox.yaml` and
//! the user's `<config dir>/sandbox.yaml` deep-merged over it.
//!
//! Only resource limits are configurable. The hardening every container keeps (read-only root,
//! `cap_drop: ALL`, no-new-privileges, default seccomp, init, no Docker socket, no host mounts
//! but the workspace, never privileged) has no field here, and `deny_unknown_fields` rejects
//! attempts to add one.
//!
//! Every problem is an [`Error::Config`] naming the file that supplied the bad value, the field
//! path (`profiles.strict.memory`) and what is accepted there; nothing falls back silently.

mod network;
mod source;
mod units;
pub mod wall;

#[cfg(test)]
mod tests;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_yaml_ng::Value;

use crate::allowlist::Rule;
use crate::error::{Error, Result};
use crate::paths::Paths;
use network::RawNetwork;

use source::{merge, read_document, segment_name, Origins};
pub use units::{parse_duration, parse_size};
use units::{Count, Cpus, Dur, Size};

/// The shipped defaults (`config/sandbox.yaml` at the repository root).
pub const DEFAULT_POLICY_YAML: &str = include_str!("../../../../../config/sandbox.yaml");

/// The same defaults as `build.rs` read them (YAML merge keys applied), as JSON: every process
/// loads the policy at start, and `libyaml` on the shipped file was about 5 % of a whole
/// `ironclaw exec`'s CPU time. The user's `sandbox.yaml` is still read as YAML, with its errors.
const DEFAULT_POLICY_JSON: &str = include_str!(concat!(env!("OUT_DIR"), "/default-policy.json"));

/// How the shipped defaults are named in error messages and [`Policy::sources`].
const BUILT_IN_DEFAULTS: &str = "(built-in) config/sandbox.yaml";

const MIN_MEMORY: u64 = 16 << 20;

#[derive(Debug, Clone, PartialEq)]
pub struct Policy {
    /// Profile used when a session does not name one; always a key of `profiles`.
    pub default_profile: String,
    /// A sandbox container idle this long stops itself.
    pub idle_timeout: Duration,
    /// Whether a started, idle sandbox of the default profile is kept ready for the next new
    /// session (see `sandbox/spare.rs`).
    pub warm_spare: bool,
    /// Bytes of stdout+stderr one execution keeps in memory (head and tail).
    pub capture_bytes: u64,
    /// Most bytes of file copies one conversation's undo history keeps; the oldest runs stop
    /// being undoable first.
    pub undo_keep_bytes: u64,
    /// Most bytes of file copies all conversations' undo history keeps together; the oldest
    /// runs of any conversation stop being undoable first.
    pub undo_keep_total_bytes: u64,
    pub profiles: BTreeMap<String, Profile>,
    /// What allowlist-mode sandboxes may reach (shared by every profile).
    pub network: NetworkPolicy,
    /// The files merged into this policy, defaults first.
    pub sources: Vec<PathBuf>,
}

/// One trust level's resource limits. Swap is always off (memory-swap = memory).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Profile {
    pub cpus: f64,
    pub memory_bytes: u64,
    pub pids: i64,
    /// Wall-clock limit of one execution.
    pub timeout: Duration,
    /// Size of the tmpfs on /tmp.
    pub tmp_bytes: u64,
    /// Size of the tmpfs on the sandbox user's home.
    pub home_bytes: u64,
    pub nofile: u64,
    pub fsize_bytes: u64,
    pub network: NetworkMode,
    pub runtime: Runtime,
    /// How much the session's workspace (a folder on the host's disk) may hold.
    pub workspace: WorkspaceQuota,
}

/// The workspace quota of a profile: a run that takes the workspace past `bytes` or `files`, or
/// the host disk below `keep_free`, is stopped (see [`crate::quota`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct WorkspaceQuota {
    /// Disk space the workspace may occupy (allocated blocks, not apparent sizes).
    pub bytes: u64,
    /// Files, folders and symlinks (inodes) the workspace may hold.
    pub files: u64,
    /// Free space a run never takes the disk holding the workspace below.
    pub keep_free: u64,
}

/// What network a sandbox gets. `none` is every shipped profile's default.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum NetworkMode {
    /// No network interface but loopback.
    None,
    /// An internal Docker network whose only way out is IronClaw's egress proxy, which admits
    /// the hosts on [`NetworkPolicy::allowlist`] (see [`crate::network`]).
    Allowlist,
}

impl NetworkMode {
    pub fn as_str(&self) -> &'static str {
        match self {
            NetworkMode::None => "none",
            NetworkMode::Allowlist => "allowlist",
        }
    }
}

/// The `network:` section: the allowlist and the package-index settings sandboxes get in
/// allowlist mode.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NetworkPolicy {
    /// Hosts every allowlist-mode session may reach. Empty as shipped.
    pub allowlist: Vec<Rule>,
    /// Passed on as `PIP_INDEX_URL` when set.
    pub pip_index_url: Option<String>,
    /// Passed on as `npm_config_registry` when set.
    pub npm_registry: Option<String>,
}

/// Overrides every profile's `runtime` for the process that has it set.
pub const RUNTIME_ENV: &str = "IRONCLAW_RUNTIME";

/// The OCI runtime Docker starts the container with: which wall stands between the code and the
/// host kernel.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Runtime {
    /// gVisor where the engine has it registered, else runc. A session keeps the runtime its
    /// first container got (see `SessionRecord::runtime`).
    Auto,
    /// Docker's default runtime: namespaces, seccomp and cgroups on the host kernel.
    Runc,
    /// gVisor: a user-space kernel between the code and the host kernel. Required: a sandbox
    /// that cannot have it does not start. `strict` and `gvisor` are other names for it.
    #[serde(alias = "strict", alias = "gvisor")]
    Runsc,
}

impl Runtime {
    /// The name Docker knows the runtime by (`HostConfig.Runtime`, `docker info` runtimes).
    /// `auto` asks for gVisor first (see `container::create`).
    pub fn as_docker_name(&self) -> &'static str {
        match self {
            Runtime::Runc => "runc",
            Runtime::Runsc | Runtime::Auto => "runsc",
        }
    }

    /// The runtime a container made under `self` by an engine that has `runsc` or not gets;
    /// `None` when it cannot get the one it requires.
    pub fn resolve(self, engine_has_gvisor: bool) -> Option<Runtime> {
        match (self, engine_has_gvisor) {
            (Runtime::Runc, _) => Some(Runtime::Runc),
            (Runtime::Runsc | Runtime::Auto, true) => Some(Runtime::Runsc),
            (Runtime::Auto, false) => Some(Runtime::Runc),
            (Runtime::Runsc, false) => None,
        }
    }

    /// What people read: which wall is in force.
    pub fn wall(&self) -> &'static str {
        match self {
            Runtime::Runc => "runc (the host kernel, shared)",
            Runtime::Runsc => "gVisor (a second kernel)",
            Runtime::Auto => "gVisor where registered, else runc",
        }
    }

    /// A label's or a record's text back (`runc`, `runsc`); `None` for anything else.
    pub fn from_docker_name(name: &str) -> Option<Runtime> {
        match name {
            "runc" => Some(Runtime::Runc),
            "runsc" => Some(Runtime::Runsc),
            _ => None,
        }
    }
}

impl Policy {
    /// The shipped defaults merged with the user's `<config dir>/sandbox.yaml` if it exists.
    pub fn load(paths: &Paths) -> Result<Policy> {
        let user_path = paths.user_policy_file();
        let user_text = match std::fs::read_to_string(&user_path) {
            Ok(text) => Some(text),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound && std::fs::symlink_metadata(&user_path).is_err() => None,
            Err(e) => {
                return Err(Error::Config {
                    file: user_path,
                    field: "(file)".into(),
                    message: format!(
                        "cannot read it: {e}. Fix it (a readable UTF-8 YAML file), or move it away to use the shipped defaults"
                    ),
                })
            }
        };
        let defaults_path = Path::new(BUILT_IN_DEFAULTS);
        let defaults = serde_json::from_str(DEFAULT_POLICY_JSON).map_err(|e| Error::Config {
            file: defaults_path.to_path_buf(),
            field: "(file)".into(),
            message: format!("this build of IronClaw is broken ({e}); reinstall it"),
        })?;
        let mut policy = Self::merge_over(
            (defaults, defaults_path),
            user_text.as_deref().map(|text| (text, user_path.as_path())),
        )?;
        // Set but empty counts as unset, as a shell's `IRONCLAW_RUNTIME= cmd` means.
        if let Some(value) = std::env::var_os(RUNTIME_ENV).filter(|v| !v.is_empty()) {
            policy.override_runtime(&value.to_string_lossy())?;
        }
        Ok(policy)
    }

    /// Every profile's runtime set to `value` (`auto`, `runc`, `runsc`/`strict`/`gvisor`), as
    /// [`RUNTIME_ENV`] asks: one run of a command, or a test pass, under the other wall.
    pub fn override_runtime(&mut self, value: &str) -> Result<()> {
        let runtime: Runtime = serde_yaml_ng::from_value(Value::String(
            value.trim().to_ascii_lowercase(),
        ))
        .map_err(|_| Error::Config {
            file: PathBuf::from(format!("${RUNTIME_ENV}")),
            field: RUNTIME_ENV.into(),
            message: format!(
                "{value:?} is not a runtime: use auto, runc or runsc (also strict), or unset it"
            ),
        })?;
        for profile in self.profiles.values_mut() {
            profile.runtime = runtime;
        }
        Ok(())
    }

    /// Merges `user` (text, path) over `defaults` and validates the result. Pure.
    pub fn parse(defaults: (&str, &Path), user: Option<(&str, &Path)>) -> Result<Policy> {
        let (defaults_text, defaults_path) = defaults;
        Self::merge_over(
            (read_document(defaults_text, defaults_path)?, defaults_path),
            user,
        )
    }

    fn merge_over(defaults: (Value, &Path), user: Option<(&str, &Path)>) -> Result<Policy> {
        let (mut merged, defaults_path) = defaults;
        let mut sources = vec![defaults_path.to_path_buf()];
        let user = match user {
            Some((text, path)) => {
                let value = read_document(text, path)?;
                merge(&mut merged, value.clone());
                sources.push(path.to_path_buf());
                Some((value, path))
            }
            None => None,
        };
        let origins = Origins {
            defaults: defaults_path,
            user: user.as_ref().map(|(value, path)| (value, *path)),
        };
        check_profile_names(&merged, &origins)?;
        let raw: RawPolicy = serde_path_to_error::deserialize(merged).map_err(|e| {
            let field: Vec<String> = e.path().iter().map(segment_name).collect();
            origins.error(&field, explain(&field, e.inner().to_string()))
        })?;
        raw.into_policy(&origins, sources)
    }

    /// The named profile, or the default one for `None`.
    pub fn profile(&self, name: Option<&str>) -> Result<(&str, &Profile)> {
        let wanted = name.unwrap_or(&self.default_profile);
        self.profiles
            .get_key_value(wanted)
            .map(|(name, profile)| (name.as_str(), profile))
            .ok_or_else(|| Error::Config {
                file: self.sources.last().cloned().unwrap_or_default(),
                field: "profiles".into(),
                message: format!(
                    "no profile named {wanted:?}; the profiles are: {}. Pick one of these, or add it under \
                     `profiles:` in your sandbox.yaml",
                    self.profile_names()
                ),
            })
    }

    fn profile_names(&self) -> String {
        list(self.profiles.keys())
    }
}

// ---- the YAML shape -------------------------------------------------------------------------

const TOP_FIELDS: &[&str] = &[
    "default_profile",
    "idle_timeout",
    "warm_spare",
    "output",
    "undo",
    "network",
    "profiles",
];
const OUTPUT_FIELDS: &[&str] = &["capture"];
const UNDO_FIELDS: &[&str] = &["keep", "keep_total"];
/// What one conversation's undo history keeps when `undo.keep` is not set.
const DEFAULT_UNDO_KEEP: u64 = ironclaw_workspace::checkpoint::DEFAULT_CAP_BYTES;
/// What all conversations' undo history keeps together when `undo.keep_total` is not set.
const DEFAULT_UNDO_KEEP_TOTAL: u64 = 5 * DEFAULT_UNDO_KEEP;
const PROFILE_FIELDS: &[&str] = &[
    "cpus",
    "memory",
    "pids",
    "timeout",
    "tmpfs",
    "ulimits",
    "network",
    "runtime",
    "workspace",
];
const TMPFS_FIELDS: &[&str] = &["tmp", "home"];
const ULIMITS_FIELDS: &[&str] = &["nofile", "fsize"];
const WORKSPACE_FIELDS: &[&str] = &["bytes", "files", "keep_free"];
/// Below this a workspace could not even hold the supervisor's logs of one large output.
const MIN_WORKSPACE_BYTES: u64 = 1 << 20;

#[derive(Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a mapping of default_profile, idle_timeout, warm_spare, output, undo, network and profiles"
)]
struct RawPolicy {
    default_profile: String,
    idle_timeout: Dur<1>,
    #[serde(default = "default_warm_spare")]
    warm_spare: bool,
    output: RawOutput,
    #[serde(default)]
    undo: RawUndo,
    #[serde(default)]
    network: RawNetwork,
    profiles: BTreeMap<String, RawProfile>,
}

#[derive(Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a mapping with the key capture, e.g. { capture: 1m }"
)]
struct RawOutput {
    capture: Size<1>,
}

#[derive(Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a mapping of keep and keep_total, e.g. { keep: 2g, keep_total: 10g }"
)]
struct RawUndo {
    #[serde(default = "default_keep")]
    keep: Size<1>,
    #[serde(default = "default_keep_total")]
    keep_total: Size<1>,
}

fn default_warm_spare() -> bool {
    true
}

fn default_keep() -> Size<1> {
    Size(DEFAULT_UNDO_KEEP)
}

fn default_keep_total() -> Size<1> {
    Size(DEFAULT_UNDO_KEEP_TOTAL)
}

impl Default for RawUndo {
    fn default() -> Self {
        Self {
            keep: default_keep(),
            keep_total: default_keep_total(),
        }
    }
}

#[derive(Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a profile: a mapping of cpus, memory, pids, timeout, tmpfs, ulimits, network, runtime and workspace"
)]
struct RawProfile {
    cpus: Cpus,
    memory: Size<MIN_MEMORY>,
    pids: Count<16>,
    timeout: Dur<1>,
    tmpfs: RawTmpfs,
    ulimits: RawUlimits,
    network: NetworkMode,
    runtime: Runtime,
    workspace: RawWorkspace,
}

#[derive(Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a mapping with the keys bytes, files and keep_free, e.g. { bytes: 4g, files: 100000, keep_free: 2g }"
)]
struct RawWorkspace {
    bytes: Size<MIN_WORKSPACE_BYTES>,
    files: Count<16>,
    keep_free: Size<1>,
}

#[derive(Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a mapping with the keys tmp and home, e.g. { tmp: 64m, home: 128m }"
)]
struct RawTmpfs {
    tmp: Size<1>,
    home: Size<1>,
}

#[derive(Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a mapping with the keys nofile and fsize, e.g. { nofile: 1024, fsize: 1g }"
)]
struct RawUlimits {
    nofile: Count<16>,
    fsize: Size<1>,
}

impl RawPolicy {
    fn into_policy(self, origins: &Origins<'_>, sources: Vec<PathBuf>) -> Result<Policy> {
        if !self.profiles.contains_key(&self.default_profile) {
            return Err(origins.error(
                &["default_profile".into()],
                format!(
                    "no profile named {:?}; the profiles are: {}",
                    self.default_profile,
                    list(self.profiles.keys())
                ),
            ));
        }
        let profiles = self
            .profiles
            .into_iter()
            .map(|(name, p)| {
                let profile = Profile {
                    cpus: p.cpus.0,
                    memory_bytes: p.memory.0,
                    pids: p.pids.as_i64(),
                    timeout: p.timeout.0,
                    tmp_bytes: p.tmpfs.tmp.0,
                    home_bytes: p.tmpfs.home.0,
                    nofile: p.ulimits.nofile.0,
                    fsize_bytes: p.ulimits.fsize.0,
                    network: p.network,
                    runtime: p.runtime,
                    workspace: WorkspaceQuota {
                        bytes: p.workspace.bytes.0,
                        files: p.workspace.files.0,
                        keep_free: p.workspace.keep_free.0,
                    },
                };
                (name, profile)
            })
            .collect();
        Ok(Policy {
            default_profile: self.default_profile,
            idle_timeout: self.idle_timeout.0,
            warm_spare: self.warm_spare,
            capture_bytes: self.output.capture.0,
            undo_keep_bytes: self.undo.keep.0,
            undo_keep_total_bytes: self.undo.keep_total.0,
            network: self.network.into_policy(origins)?,
            profiles,
            sources,
        })
    }
}

/// Profile names show up in CLI flags, labels and messages: keep them plain. Checked on the
/// merged document, before a bad name's body can produce a less relevant error.
fn check_profile_names(merged: &Value, origins: &Origins<'_>) -> Result<()> {
    let Some(Value::Mapping(profiles)) = merged.get("profiles") else {
        return Ok(()); // absent or not a mapping: serde reports it
    };
    for name in profiles.keys().filter_map(Value::as_str) {
        if !valid_profile_name(name) {
            return Err(origins.error(
                &["profiles".into(), name.into()],
                format!(
                    "invalid profile name {name:?}: use 1-64 letters, digits, '-', '_' or '.', \
                     starting with a letter or digit"
                ),
            ));
        }
    }
    Ok(())
}

fn valid_profile_name(name: &str) -> bool {
    let mut chars = name.chars();
    name.len() <= 64
        && chars.next().is_some_and(|c| c.is_ascii_alphanumeric())
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

/// Adds what serde leaves out: which keys a mapping with a missing field needs.
fn explain(field: &[String], message: String) -> String {
    if !message.starts_with("missing field") {
        return message;
    }
    let keys: Vec<&str> = field.iter().map(String::as_str).collect();
    match keys.as_slice() {
        [] => format!("{message}; the top level needs {}", list(TOP_FIELDS)),
        ["output"] => format!("{message}; output needs {}", list(OUTPUT_FIELDS)),
        ["undo"] => format!("{message}; undo takes {}", list(UNDO_FIELDS)),
        ["profiles", _] => format!(
            "{message}; every profile sets all of {} (copy a shipped profile and change it)",
            list(PROFILE_FIELDS)
        ),
        ["profiles", _, "tmpfs"] => format!("{message}; tmpfs needs {}", list(TMPFS_FIELDS)),
        ["profiles", _, "ulimits"] => format!("{message}; ulimits needs {}", list(ULIMITS_FIELDS)),
        ["profiles", _, "workspace"] => {
            format!("{message}; workspace needs {}", list(WORKSPACE_FIELDS))
        }
        _ => message,
    }
}

fn list<S: AsRef<str>>(items: impl IntoIterator<Item = S>) -> String {
    items
        .into_iter()
        .map(|s| s.as_ref().to_string())
        .collect::<Vec<_>>()
        .join(", ")
}
