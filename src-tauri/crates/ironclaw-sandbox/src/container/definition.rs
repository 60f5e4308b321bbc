//! The container definition: every hardening flag a sandbox gets, whatever its profile.

use std::collections::HashMap;

use bollard::models::{
    ContainerCreateBody, HealthConfig, HostConfig, HostConfigCgroupnsModeEnum, HostConfigLogConfig,
    Mount, MountBindOptions, MountBindOptionsPropagationEnum, MountType, ResourcesUlimits,
};

use super::{
    seccomp, ContainerSpec, UserMapping, HOME, LABEL_CONFINEMENT, LABEL_EGRESS, LABEL_IMAGE_HASH,
    LABEL_INSTANCE, LABEL_NETWORK, LABEL_PROFILE, LABEL_RUNTIME, LABEL_SESSION, LABEL_SPARE,
    LABEL_VERSION, RUN_DIR, WORKSPACE,
};
use crate::exec::seal::{Key, KEY_LABEL};
use crate::policy::Runtime;

/// Docker's health check, in exec form: an absolute path to a root-owned program nobody in the
/// sandbox can read (so the kernel makes the process non-dumpable: code running as the same UID
/// cannot ptrace it or write its memory), Python in isolated mode (no environment variables, no
/// user site, no script folder on the path), and no shell, so nothing is looked up through a
/// PATH folder the code can write. It runs under the container's seccomp profile like
/// everything else.
pub const HEALTH_CHECK: &[&str] = &[
    "/usr/libexec/ironclaw/python3",
    "-I",
    "-S",
    "/opt/ironclaw/health.py",
];

/// The same under gVisor, whose loader reads a binary before it runs it and so refuses the
/// unreadable copies: the image's own python3, which makes itself non-dumpable first thing
/// (`health.py`). Under gVisor no process can ptrace another that is not its descendant, and
/// /proc/PID/mem of another process is refused whatever its dumpability.
pub const HEALTH_CHECK_GVISOR: &[&str] =
    &["/usr/bin/python3", "-I", "-S", "/opt/ironclaw/health.py"];

/// Under gVisor the supervisor is the container's first process (tini, unreadable, cannot be
/// loaded there): it reaps every orphan already (it is the subreaper), and as PID 1 it ignores
/// every signal the code sends it.
const SUPERVISOR_GVISOR: &[&str] = &["/usr/bin/python3", "-I", "/opt/ironclaw/supervisor.py"];

/// Host threads gVisor itself may need beyond four per process or thread of the code.
const GVISOR_OWN_PIDS: i64 = 512;

/// The health check a container under `runtime` runs.
pub fn health_check(runtime: Runtime) -> &'static [&'static str] {
    match runtime {
        Runtime::Runsc => HEALTH_CHECK_GVISOR,
        Runtime::Runc | Runtime::Auto => HEALTH_CHECK,
    }
}

fn security_opt() -> Vec<String> {
    vec![
        "no-new-privileges:true".to_string(),
        format!("seccomp={}", seccomp::profile()),
    ]
}

/// A digest of everything that confines a container beyond its image: a container made with
/// other rules (an older IronClaw) is recreated instead of reused. This is runc's; a session
/// container's label carries [`confinement_of`] its runtime.
pub fn confinement_hash() -> &'static str {
    confinement_of(Runtime::Runc)
}

/// [`confinement_hash`] for a container under `runtime`: the runtime and what it changes (the
/// health check, the first process) are part of the rules, so a container made under another
/// runtime is recreated, never reused.
pub fn confinement_of(runtime: Runtime) -> &'static str {
    static RUNC: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    static GVISOR: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    let (cell, runtime) = match runtime {
        Runtime::Runsc => (&GVISOR, Runtime::Runsc),
        Runtime::Runc | Runtime::Auto => (&RUNC, Runtime::Runc),
    };
    cell.get_or_init(|| {
        use sha2::{Digest, Sha256};
        let mut h = Sha256::new();
        let masks = super::masks::masked_paths()
            .into_iter()
            .chain(super::masks::readonly_paths());
        let gvisor: Vec<String> = match runtime {
            // Nothing added for runc: its containers made before the runtime was a choice keep
            // their label and are not recreated.
            Runtime::Runc | Runtime::Auto => Vec::new(),
            Runtime::Runsc => std::iter::once("runtime=runsc")
                .chain(SUPERVISOR_GVISOR.iter().copied())
                .map(str::to_string)
                .collect(),
        };
        for part in security_opt()
            .into_iter()
            .chain(health_check(runtime).iter().map(|s| s.to_string()))
            .chain(masks)
            .chain(gvisor)
        {
            h.update(part.as_bytes());
            h.update([0]);
        }
        hex::encode(&h.finalize()[..8])
    })
}

fn tmpfs_opts(bytes: u64, user: UserMapping, mode: &str) -> String {
    // exec is allowed so venvs and `pip install --user` scripts work; nosuid/nodev are not
    // negotiable.
    format!(
        "rw,nosuid,nodev,exec,size={bytes},uid={},gid={},mode={mode}",
        user.uid, user.gid
    )
}

/// A bind mount of `source` at `target`, private propagation.
fn bind_mount(source: &std::path::Path, target: &str, read_only: bool) -> Mount {
    Mount {
        target: Some(target.to_string()),
        source: Some(source.to_string_lossy().into_owned()),
        typ: Some(MountType::BIND),
        read_only: Some(read_only),
        bind_options: Some(MountBindOptions {
            propagation: Some(MountBindOptionsPropagationEnum::RPRIVATE),
            ..Default::default()
        }),
        ..Default::default()
    }
}

/// What every container of ours is confined by, a session's sandbox or a tool server: read-only
/// root, no capabilities, no-new-privileges and our seccomp profile, no privileged mode, private
/// IPC and cgroup namespaces, masked and read-only /proc paths, memory equal to memory+swap (no
/// swap, so the limit is real), no Docker log (output travels over attach). Its network: none,
/// or `egress`'s network with IPv6 off and a resolver that answers nothing, so names resolve
/// only through the proxy and a lookup fails in about a second instead of hanging.
struct Limits {
    memory_bytes: u64,
    cpus: f64,
    pids: i64,
    shm_bytes: i64,
    nofile: u64,
    fsize_bytes: u64,
}

fn confined(
    mounts: Vec<Mount>,
    tmpfs: HashMap<String, String>,
    egress: Option<&crate::network::Attachment>,
    limits: Limits,
) -> HostConfig {
    let (network_mode, dns, dns_options, sysctls) = match egress {
        None => ("none".to_string(), None, None, None),
        Some(egress) => (
            egress.network.clone(),
            Some(vec!["0.0.0.0".to_string()]),
            Some(vec!["timeout:1".to_string(), "attempts:1".to_string()]),
            Some(crate::network::engine::no_ipv6_sysctls()),
        ),
    };
    let ulimit = |name: &str, value: u64| ResourcesUlimits {
        name: Some(name.to_string()),
        soft: Some(i64::try_from(value).unwrap_or(i64::MAX)),
        hard: Some(i64::try_from(value).unwrap_or(i64::MAX)),
    };
    let memory = i64::try_from(limits.memory_bytes).unwrap_or(i64::MAX);
    HostConfig {
        mounts: Some(mounts),
        readonly_rootfs: Some(true),
        tmpfs: Some(tmpfs),
        cap_drop: Some(vec!["ALL".to_string()]),
        security_opt: Some(security_opt()),
        privileged: Some(false),
        network_mode: Some(network_mode),
        dns,
        dns_options,
        sysctls,
        ipc_mode: Some("private".to_string()),
        masked_paths: Some(super::masks::masked_paths()),
        readonly_paths: Some(super::masks::readonly_paths()),
        // Its own cgroup namespace: /proc/self/cgroup shows `/`, not `/docker/<container id>`
        // (cgroup v1 engines default to the host's), and limits still read from inside.
        cgroupns_mode: Some(HostConfigCgroupnsModeEnum::PRIVATE),
        shm_size: Some(limits.shm_bytes),
        memory: Some(memory),
        memory_swap: Some(memory),
        nano_cpus: Some((limits.cpus * 1e9) as i64),
        pids_limit: Some(limits.pids),
        ulimits: Some(vec![
            ulimit("nofile", limits.nofile),
            ulimit("fsize", limits.fsize_bytes),
        ]),
        log_config: Some(HostConfigLogConfig {
            typ: Some("none".to_string()),
            config: None,
        }),
        auto_remove: Some(false),
        ..Default::default()
    }
}

/// The container definition. The hardening here does not depend on the profile: read-only root,
/// no capabilities, no-new-privileges, Docker's default seccomp profile (we never pass
/// `seccomp=unconfined`), an init process (tini, the image's entrypoint), no privileged mode, no
/// host namespaces, no Docker socket, and no host path but the workspace and, read-only, the
/// folder of the host's output sockets.
///
/// `runtime` is the one the container gets, already resolved (`runc` or `runsc`, never `auto`).
pub fn create_body(spec: &ContainerSpec<'_>, runtime: Runtime) -> ContainerCreateBody {
    let p = spec.profile;
    let labels = HashMap::from([
        (LABEL_SESSION.to_string(), spec.session.to_string()),
        (LABEL_VERSION.to_string(), crate::VERSION.to_string()),
        (LABEL_INSTANCE.to_string(), spec.instance.to_string()),
        (LABEL_IMAGE_HASH.to_string(), spec.image_hash.to_string()),
        (LABEL_PROFILE.to_string(), spec.profile_name.to_string()),
        (
            LABEL_NETWORK.to_string(),
            spec.network_mode().as_str().to_string(),
        ),
    ]);
    let mut labels = labels;
    labels.insert(
        LABEL_CONFINEMENT.to_string(),
        confinement_of(runtime).to_string(),
    );
    labels.insert(
        LABEL_RUNTIME.to_string(),
        runtime.as_docker_name().to_string(),
    );
    // A key of its own for every container made (`exec::seal`): only the host can read labels.
    labels.insert(KEY_LABEL.to_string(), Key::generate().to_hex());
    if let Some(egress) = spec.egress {
        labels.insert(LABEL_EGRESS.to_string(), egress.network_id.clone());
    }
    if let Some(digest) = spec.spare {
        labels.insert(LABEL_SPARE.to_string(), digest.to_string());
    }
    let tmpfs = HashMap::from([
        (
            "/tmp".to_string(),
            tmpfs_opts(p.tmp_bytes, spec.user, "1777"),
        ),
        (
            HOME.to_string(),
            tmpfs_opts(p.home_bytes, spec.user, "0700"),
        ),
        // passwd/group for the runtime UID and the shell's cell file; small on purpose.
        (RUN_DIR.to_string(), tmpfs_opts(16 << 20, spec.user, "0755")),
    ]);
    let mut mounts = vec![bind_mount(spec.workspace, WORKSPACE, false)];
    if let Some(dir) = spec.channel {
        // Read-only: the code may connect to the sockets in it (each demands a token), never
        // put anything there.
        mounts.push(bind_mount(dir, crate::exec::channel::CONTAINER_DIR, true));
    }
    let mut host_config = HostConfig {
        runtime: Some(runtime.as_docker_name().to_string()),
        init: Some(false), // tini is already the image's entrypoint (the supervisor under gVisor)
        ..confined(
            mounts,
            tmpfs,
            spec.egress,
            Limits {
                memory_bytes: p.memory_bytes,
                cpus: p.cpus,
                pids: p.pids,
                shm_bytes: 64 << 20,
                nofile: p.nofile,
                fsize_bytes: p.fsize_bytes,
            },
        )
    };
    if runtime == Runtime::Runsc {
        // Under gVisor the engine's pids limit counts gVisor's own host threads (its kernel
        // and its file proxy), which take most of a small limit: a sandbox of 64 could start no
        // thread at all, and a fork bomb took gVisor down. The profile's number becomes the
        // limit gVisor's kernel enforces on the code's processes and threads (RLIMIT_NPROC:
        // one user, one sandbox), and the engine's limit a backstop above gVisor's own needs.
        host_config.pids_limit = Some(p.pids.saturating_mul(4).saturating_add(GVISOR_OWN_PIDS));
        host_config
            .ulimits
            .get_or_insert_with(Vec::new)
            .push(ResourcesUlimits {
                name: Some("nproc".to_string()),
                soft: Some(p.pids),
                hard: Some(p.pids),
            });
    }
    let mut env = vec![
        format!("HOME={HOME}"),
        format!("IRONCLAW_IDLE_TIMEOUT={}", spec.idle_timeout.as_secs()),
        format!("IRONCLAW_SESSION={}", spec.session),
        // Which binaries the supervisor starts its interpreters from (`interpreters.py`).
        format!("IRONCLAW_RUNTIME={}", runtime.as_docker_name()),
    ];
    if let Some(egress) = spec.egress {
        env.extend(egress.env());
    }
    let (entrypoint, cmd) = match runtime {
        Runtime::Runsc => (
            Some(SUPERVISOR_GVISOR.iter().map(|s| s.to_string()).collect()),
            Some(Vec::new()),
        ),
        Runtime::Runc | Runtime::Auto => (None, None),
    };
    ContainerCreateBody {
        image: Some(spec.image_tag.to_string()),
        entrypoint,
        cmd,
        user: Some(format!("{}:{}", spec.user.uid, spec.user.gid)),
        env: Some(env),
        working_dir: Some(WORKSPACE.to_string()),
        hostname: Some("sandbox".to_string()),
        labels: Some(labels),
        attach_stdin: Some(true),
        attach_stdout: Some(true),
        attach_stderr: Some(true),
        open_stdin: Some(true),
        // Several attach connections over the container's life share one stdin.
        stdin_once: Some(false),
        tty: Some(false),
        network_disabled: Some(spec.egress.is_none()),
        stop_timeout: Some(2),
        healthcheck: Some(HealthConfig {
            test: Some(
                std::iter::once("CMD")
                    .chain(health_check(runtime).iter().copied())
                    .map(str::to_string)
                    .collect(),
            ),
            interval: Some(60_000_000_000),
            timeout: Some(5_000_000_000),
            retries: Some(3),
            start_period: Some(5_000_000_000),
            ..Default::default()
        }),
        host_config: Some(host_config),
        ..Default::default()
    }
}

/// A tool server's container (an MCP server over stdio): the same confinement as a session's
/// (read-only root, no capabilities, our seccomp profile, no-new-privileges, limits, no swap),
/// no network, and no host path but the read-only packages folder and, only when the server
/// was configured to see it, the conversation's workspace. No health check runs in it: nothing
/// of ours executes inside a container whose programs are not ours.
pub fn tool_server_body(spec: &super::ToolServerSpec<'_>) -> ContainerCreateBody {
    let user = spec.user;
    let mut labels = HashMap::from([
        (LABEL_INSTANCE.to_string(), spec.instance.to_string()),
        (LABEL_VERSION.to_string(), crate::VERSION.to_string()),
        (LABEL_IMAGE_HASH.to_string(), spec.image_hash.to_string()),
        (
            super::LABEL_TOOL_SERVER.to_string(),
            spec.server.to_string(),
        ),
        (super::LABEL_TOOL_OWNER.to_string(), spec.owner.to_string()),
        (
            LABEL_NETWORK.to_string(),
            if spec.egress.is_some() {
                "allowlist"
            } else {
                "none"
            }
            .to_string(),
        ),
    ]);
    labels.insert(
        LABEL_CONFINEMENT.to_string(),
        confinement_hash().to_string(),
    );
    let mut mounts = Vec::new();
    if let Some(packages) = spec.packages {
        mounts.push(bind_mount(packages, super::TOOL_PACKAGES, true));
    }
    if let Some(workspace) = spec.workspace {
        mounts.push(bind_mount(workspace, WORKSPACE, false));
    }
    let tmpfs = HashMap::from([
        ("/tmp".to_string(), tmpfs_opts(64 << 20, user, "1777")),
        (HOME.to_string(), tmpfs_opts(64 << 20, user, "0700")),
    ]);
    let host_config = HostConfig {
        // The sandbox image's entrypoint is tini; an image of the server's own gets Docker's.
        init: Some(spec.image_hash == "own"),
        // Gone when it exits: a server is started afresh for each conversation that uses it.
        auto_remove: Some(true),
        ..confined(
            mounts,
            tmpfs,
            spec.egress,
            Limits {
                memory_bytes: spec.memory_bytes,
                cpus: spec.cpus,
                pids: spec.pids,
                shm_bytes: 16 << 20,
                nofile: 1024,
                fsize_bytes: 256 << 20,
            },
        )
    };
    let mut path = "/usr/local/bin:/usr/bin:/bin".to_string();
    let mut env = vec![format!("HOME={HOME}")];
    if spec.packages.is_some() {
        path = format!("{}/bin:{path}", super::TOOL_PACKAGES);
        env.push(format!("PYTHONPATH={}", super::TOOL_PACKAGES));
        env.push(format!("NODE_PATH={}/node_modules", super::TOOL_PACKAGES));
    }
    env.push(format!("PATH={path}"));
    env.push("PYTHONDONTWRITEBYTECODE=1".to_string());
    env.extend(spec.env.iter().map(|(k, v)| format!("{k}={v}")));
    // After the configured variables, so a configuration cannot point a server past the proxy.
    if let Some(egress) = spec.egress {
        env.extend(egress.env());
    }
    ContainerCreateBody {
        image: Some(spec.image_tag.to_string()),
        user: Some(format!("{}:{}", user.uid, user.gid)),
        cmd: Some(spec.command.to_vec()),
        env: Some(env),
        working_dir: Some(if spec.workspace.is_some() {
            WORKSPACE.to_string()
        } else {
            HOME.to_string()
        }),
        hostname: Some("tool-server".to_string()),
        labels: Some(labels),
        attach_stdin: Some(true),
        attach_stdout: Some(true),
        attach_stderr: Some(true),
        open_stdin: Some(true),
        // Our one attach closing ends its input, and the server with it.
        stdin_once: Some(true),
        tty: Some(false),
        network_disabled: Some(spec.egress.is_none()),
        stop_timeout: Some(2),
        healthcheck: Some(HealthConfig {
            test: Some(vec!["NONE".to_string()]),
            ..Default::default()
        }),
        host_config: Some(host_config),
        ..Default::default()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use std::path::Path;
    use std::time::Duration;

    use super::*;
    use crate::network::Attachment;
    use crate::policy::{Policy, DEFAULT_POLICY_YAML};

    fn spec_body(profile: &str) -> ContainerCreateBody {
        spec_body_with(profile, None)
    }

    fn spec_body_with(profile: &str, egress: Option<&Attachment>) -> ContainerCreateBody {
        let policy = Policy::parse((DEFAULT_POLICY_YAML, Path::new("sandbox.yaml")), None).unwrap();
        let (name, profile) = policy.profile(Some(profile)).unwrap();
        let spec = ContainerSpec {
            session: "s1",
            instance: "abc",
            image_tag: "ironclaw-sandbox:x",
            image_hash: "x",
            profile_name: name,
            profile,
            workspace: Path::new("/data/ws/s1"),
            user: UserMapping {
                uid: 1000,
                gid: 1000,
                substituted_for_root: false,
            },
            idle_timeout: Duration::from_secs(60),
            egress,
            spare: None,
            channel: Some(Path::new("/data/channels/ironclaw-abc-s1")),
            runtime: profile.runtime,
        };
        create_body(&spec, Runtime::Runc)
    }

    #[test]
    fn every_profile_keeps_the_non_negotiable_hardening() {
        for profile in ["strict", "standard", "trusted"] {
            let body = spec_body(profile);
            let hc = body.host_config.unwrap();
            assert_eq!(hc.readonly_rootfs, Some(true), "{profile}");
            assert_eq!(hc.cap_drop, Some(vec!["ALL".to_string()]), "{profile}");
            let opts = hc.security_opt.clone().unwrap();
            assert_eq!(opts[0], "no-new-privileges:true", "{profile}");
            assert_eq!(
                opts[1],
                format!("seccomp={}", seccomp::profile()),
                "{profile}: our seccomp profile"
            );
            assert_eq!(opts.len(), 2, "{profile}");
            assert_eq!(hc.privileged, Some(false), "{profile}");
            assert_eq!(hc.network_mode.as_deref(), Some("none"), "{profile}");
            assert_eq!(hc.memory, hc.memory_swap, "{profile}: swap must be off");
            assert!(hc.pids_limit.unwrap() > 0, "{profile}");
            assert!(hc.binds.is_none(), "{profile}: only our mounts");
            let mounts = hc.mounts.unwrap();
            assert_eq!(mounts.len(), 2, "{profile}");
            assert_eq!(mounts[0].target.as_deref(), Some(WORKSPACE));
            assert_eq!(mounts[0].read_only, Some(false));
            // The output sockets' folder: nothing can be put there from inside.
            assert_eq!(
                mounts[1].target.as_deref(),
                Some(crate::exec::channel::CONTAINER_DIR)
            );
            assert_eq!(mounts[1].read_only, Some(true), "{profile}");
            assert!(
                hc.pid_mode.is_none() && hc.userns_mode.is_none(),
                "{profile}"
            );
            assert_eq!(hc.ipc_mode.as_deref(), Some("private"), "{profile}");
            assert_eq!(
                hc.cgroupns_mode,
                Some(HostConfigCgroupnsModeEnum::PRIVATE),
                "{profile}"
            );
            let tmpfs = hc.tmpfs.unwrap();
            for path in ["/tmp", HOME] {
                let opts = &tmpfs[path];
                assert!(
                    opts.contains("size=") && opts.contains("nosuid"),
                    "{profile} {path}: {opts}"
                );
            }
            assert_eq!(body.user.as_deref(), Some("1000:1000"));
            assert_eq!(body.tty, Some(false));
            let health = body.healthcheck.unwrap().test.unwrap();
            assert_eq!(health[0], "CMD", "{profile}: exec form, no shell");
            assert!(health[1].starts_with('/'), "{profile}: absolute path");
            assert!(!health.iter().any(|a| a.contains("sh")), "{health:?}");
            assert_eq!(
                body.labels.as_ref().unwrap()[LABEL_CONFINEMENT],
                confinement_hash()
            );
        }
    }

    #[test]
    fn a_tool_server_is_confined_like_a_sandbox_and_mounts_only_what_it_was_given() {
        let session = spec_body("standard").host_config.unwrap();
        let command = vec![
            "python3".to_string(),
            "-m".to_string(),
            "server".to_string(),
        ];
        let spec = super::super::ToolServerSpec {
            server: "time",
            owner: "s1",
            instance: "abc",
            image_tag: "ironclaw-sandbox:x",
            image_hash: "x",
            command: &command,
            env: &[],
            packages: Some(Path::new("/home/u/mcp/time")),
            workspace: None,
            user: UserMapping {
                uid: 1000,
                gid: 1000,
                substituted_for_root: false,
            },
            memory_bytes: 256 << 20,
            cpus: 1.0,
            pids: 64,
            egress: None,
        };
        let body = tool_server_body(&spec);
        let hc = body.host_config.clone().unwrap();
        assert_eq!(hc.readonly_rootfs, session.readonly_rootfs);
        assert_eq!(hc.cap_drop, session.cap_drop);
        assert_eq!(hc.security_opt, session.security_opt);
        assert_eq!(hc.privileged, Some(false));
        assert_eq!(hc.masked_paths, session.masked_paths);
        assert_eq!(hc.readonly_paths, session.readonly_paths);
        assert_eq!(hc.cgroupns_mode, session.cgroupns_mode);
        assert_eq!(hc.ipc_mode, session.ipc_mode);
        assert_eq!(hc.network_mode.as_deref(), Some("none"));
        assert_eq!(hc.memory, hc.memory_swap);
        assert_eq!(hc.auto_remove, Some(true));
        let mounts = hc.mounts.unwrap();
        assert_eq!(mounts.len(), 1);
        assert_eq!(
            mounts[0].target.as_deref(),
            Some(super::super::TOOL_PACKAGES)
        );
        assert_eq!(mounts[0].read_only, Some(true));
        assert_eq!(body.user.as_deref(), Some("1000:1000"));
        assert_eq!(body.network_disabled, Some(true));
        assert_eq!(
            body.healthcheck.unwrap().test,
            Some(vec!["NONE".to_string()]),
            "nothing of ours runs in a server's container"
        );
        assert_eq!(body.labels.unwrap()[LABEL_CONFINEMENT], confinement_hash());
    }

    #[test]
    fn no_security_option_weakens_seccomp_or_apparmor() {
        let hc = spec_body("trusted").host_config.unwrap();
        for opt in hc.security_opt.unwrap() {
            assert!(!opt.contains("unconfined"), "{opt}");
        }
    }

    #[test]
    fn allowlist_mode_adds_only_the_egress_network_proxy_settings_and_no_dns() {
        let egress = Attachment {
            network: "ironclaw-egress-abc".into(),
            network_id: "net123".into(),
            proxy_url: "http://192.168.64.2:3128".into(),
            pip_index_url: None,
            npm_registry: None,
        };
        let none = spec_body("standard");
        let body = spec_body_with("standard", Some(&egress));
        let (hc, hc_none) = (body.host_config.clone().unwrap(), none.host_config.unwrap());
        assert_eq!(hc.network_mode.as_deref(), Some("ironclaw-egress-abc"));
        assert_eq!(hc.dns, Some(vec!["0.0.0.0".to_string()]));
        assert_eq!(
            hc.sysctls.as_ref().unwrap()["net.ipv6.conf.all.disable_ipv6"],
            "1"
        );
        assert_eq!(body.network_disabled, Some(false));
        // Everything else about the container is identical to `none` mode.
        let strip = |mut h: HostConfig| {
            h.network_mode = None;
            h.dns = None;
            h.dns_options = None;
            h.sysctls = None;
            h
        };
        assert_eq!(strip(hc), strip(hc_none));
        let env = body.env.unwrap();
        for var in [
            "HTTP_PROXY",
            "HTTPS_PROXY",
            "http_proxy",
            "https_proxy",
            "npm_config_proxy",
        ] {
            assert!(
                env.contains(&format!("{var}=http://192.168.64.2:3128")),
                "{var}: {env:?}"
            );
        }
        assert!(!env.iter().any(|e| e.starts_with("PIP_INDEX_URL=")));
        let labels = body.labels.unwrap();
        assert_eq!(labels[LABEL_NETWORK], "allowlist");
        assert_eq!(labels[LABEL_EGRESS], "net123");
        assert_eq!(none.labels.unwrap()[LABEL_NETWORK], "none");
    }
}
