//! The relay container: the one thing besides the sandbox on each session's network, and the
//! only way from there to the proxy. It runs `relay.py` from the sandbox image, with a
//! sandbox's hardening, at a fixed address on every session network (`.2` of its subnet) that
//! the sandbox keeps in its proxy settings, with the proxy's socket folder mounted; it is
//! recreated when that folder, its user, the image or the script change.
//!
//! It sits on many networks, so it must never route between them: IP forwarding is off in its
//! network namespace (a sandbox cannot add a route through it anyway, lacking
//! `CAP_NET_ADMIN`, but this does not rest on that alone).

use std::collections::HashMap;
use std::path::Path;

use bollard::models::{
    ContainerCreateBody, ContainerSummaryStateEnum, EndpointIpamConfig, EndpointSettings,
    HostConfig, HostConfigLogConfig, Mount, MountBindOptions, MountBindOptionsPropagationEnum,
    MountType, NetworkingConfig,
};
use bollard::query_parameters::{CreateContainerOptionsBuilder, ListContainersOptionsBuilder};
use bollard::Docker;
use tracing::Instrument;

use super::engine::{labels, no_ipv6_sysctls, role_filter, Net, ROLE_RELAY};
use crate::container::{UserMapping, LABEL_IMAGE_HASH};
use crate::error::{is_not_found, Error, Result};
use crate::image::ImageSpec;

/// On the relay: what it runs (sandbox image, relay script, socket folder, user); a change
/// recreates it.
const LABEL_RELAY: &str = "ironclaw.relay";
/// The port the relay listens on, on the sandboxes' network.
pub const RELAY_PORT: u16 = 3128;
/// The proxy's socket, in the folder the relay gets mounted.
pub const SOCKET_NAME: &str = "proxy.sock";
/// Where that folder appears inside the relay.
const SOCKET_MOUNT: &str = "/run/ironclaw-egress";
const RELAY_SCRIPT: &str = include_str!("relay.py");

/// What the relay container is made from.
pub struct RelaySpec<'a> {
    pub instance: &'a str,
    pub image: &'a ImageSpec,
    /// The network it is created on; [`ensure`]'s caller connects it to the others.
    pub first_network: &'a Net,
    pub socket_dir: &'a Path,
    pub user: UserMapping,
}

impl RelaySpec<'_> {
    fn hash(&self) -> String {
        use sha2::{Digest, Sha256};
        let digest = Sha256::new()
            .chain_update(self.image.hash.as_bytes())
            .chain_update(crate::container::confinement_hash().as_bytes())
            .chain_update(RELAY_SCRIPT.as_bytes())
            .chain_update(self.socket_dir.as_os_str().as_encoded_bytes())
            .chain_update(format!("\0{}:{}", self.user.uid, self.user.gid).as_bytes())
            .finalize();
        hex::encode(&digest[..8])
    }
}

/// The relay container as found by label.
pub struct Found {
    pub id: String,
    /// What it was made from ([`RelaySpec::hash`]).
    hash: String,
    running: bool,
}

/// What [`ensure`] did.
pub struct Relay {
    pub id: String,
    /// Made just now: it is on [`RelaySpec::first_network`] only.
    pub created: bool,
    /// Started just now: it is not listening yet (it says hello to the proxy when it is).
    pub started: bool,
}

/// The relay container, if one exists.
pub async fn find(docker: &Docker, instance: &str) -> Result<Option<Found>> {
    let options = ListContainersOptionsBuilder::default()
        .all(true)
        .filters(&role_filter(instance, ROLE_RELAY))
        .build();
    let found = docker
        .list_containers(Some(options))
        .await
        .map_err(|e| Error::docker("listing the egress relay", e))?;
    Ok(found.into_iter().next().and_then(|c| {
        let labels = c.labels.unwrap_or_default();
        let hash = labels.get(LABEL_RELAY).cloned().unwrap_or_default();
        let running = c.state == Some(ContainerSummaryStateEnum::RUNNING);
        Some(Found {
            id: c.id?,
            hash,
            running,
        })
    }))
}

/// A relay made from `spec`, running; replaces one made from anything else, and one that no
/// longer starts (the network it was created on may be gone).
pub async fn ensure(docker: &Docker, spec: &RelaySpec<'_>) -> Result<Relay> {
    let span = tracing::info_span!("docker.egress_relay", instance = spec.instance);
    async {
        let found = match find(docker, spec.instance).await? {
            Some(f) if f.hash == spec.hash() => Some(f),
            other => {
                if let Some(f) = other {
                    crate::container::remove(docker, &f.id).await?;
                }
                None
            }
        };
        if let Some(f) = found {
            if f.running {
                return Ok(Relay {
                    id: f.id,
                    created: false,
                    started: false,
                });
            }
            match crate::container::start(docker, &f.id).await {
                Ok(()) => {
                    return Ok(Relay {
                        id: f.id,
                        created: false,
                        started: true,
                    })
                }
                Err(e) => {
                    tracing::warn!(error = %e, "network: the egress relay does not start; making a new one");
                    crate::container::remove(docker, &f.id).await?;
                }
            }
        }
        let id = create(docker, spec).await?;
        crate::container::start(docker, &id).await?;
        Ok(Relay {
            id,
            created: true,
            started: true,
        })
    }
    .instrument(span)
    .await
}

async fn create(docker: &Docker, spec: &RelaySpec<'_>) -> Result<String> {
    let (instance, image, sandboxes) = (spec.instance, spec.image, spec.first_network);
    let mut labels = labels(instance, ROLE_RELAY);
    labels.insert(LABEL_IMAGE_HASH.to_string(), image.hash.clone());
    labels.insert(LABEL_RELAY.to_string(), spec.hash());
    let relay_ip = sandboxes.relay_ip().to_string();
    let memory = 128 << 20;
    // The same hardening as a sandbox: this container handles bytes from untrusted code.
    let host_config = HostConfig {
        network_mode: Some(sandboxes.name.clone()),
        // Read-only: connecting to a Unix socket needs no write access to its file system.
        mounts: Some(vec![Mount {
            target: Some(SOCKET_MOUNT.to_string()),
            source: Some(spec.socket_dir.display().to_string()),
            typ: Some(MountType::BIND),
            read_only: Some(true),
            bind_options: Some(MountBindOptions {
                propagation: Some(MountBindOptionsPropagationEnum::RPRIVATE),
                ..Default::default()
            }),
            ..Default::default()
        }]),
        readonly_rootfs: Some(true),
        cap_drop: Some(vec!["ALL".to_string()]),
        // The sandboxes' seccomp profile too: it needs only UNIX and IPv4 sockets.
        security_opt: Some(vec![
            "no-new-privileges:true".to_string(),
            format!("seccomp={}", crate::container::seccomp_profile()),
        ]),
        privileged: Some(false),
        ipc_mode: Some("private".to_string()),
        memory: Some(memory),
        memory_swap: Some(memory),
        nano_cpus: Some(1_000_000_000),
        pids_limit: Some(512),
        dns: Some(vec!["0.0.0.0".to_string()]),
        sysctls: Some(relay_sysctls()),
        masked_paths: Some(crate::container::masks::masked_paths()),
        readonly_paths: Some(crate::container::masks::readonly_paths()),
        log_config: Some(HostConfigLogConfig {
            typ: Some("none".to_string()),
            config: None,
        }),
        init: Some(false),
        ..Default::default()
    };
    let body = ContainerCreateBody {
        image: Some(image.tag.clone()),
        user: Some(format!("{}:{}", spec.user.uid, spec.user.gid)),
        cmd: Some(vec![
            "python3".into(),
            "-I".into(),
            "-c".into(),
            RELAY_SCRIPT.into(),
            // Every address it has: one per session network, more as sessions join.
            "0.0.0.0".into(),
            RELAY_PORT.to_string(),
            format!("{SOCKET_MOUNT}/{SOCKET_NAME}"),
        ]),
        labels: Some(labels),
        hostname: Some("ironclaw-relay".to_string()),
        networking_config: Some(NetworkingConfig {
            endpoints_config: Some(HashMap::from([(
                sandboxes.name.clone(),
                EndpointSettings {
                    ipam_config: Some(EndpointIpamConfig {
                        ipv4_address: Some(relay_ip),
                        ..Default::default()
                    }),
                    ..Default::default()
                },
            )])),
        }),
        host_config: Some(host_config),
        ..Default::default()
    };
    let name = format!("ironclaw-egress-{instance}-relay");
    let options = CreateContainerOptionsBuilder::default().name(&name).build();
    let id = match docker.create_container(Some(options), body).await {
        Ok(r) => r.id,
        Err(e) if is_not_found(&e) => {
            return Err(Error::ImageMissing {
                tag: image.tag.clone(),
            })
        }
        Err(e) => return Err(Error::docker("creating the egress relay container", e)),
    };
    Ok(id)
}

pub async fn remove(docker: &Docker, instance: &str) -> Result<()> {
    if let Some(f) = find(docker, instance).await? {
        crate::container::remove(docker, &f.id).await?;
    }
    Ok(())
}

/// IPv6 off, and no forwarding between the session networks it sits on.
fn relay_sysctls() -> HashMap<String, String> {
    let mut s = no_ipv6_sysctls();
    s.insert("net.ipv4.ip_forward".to_string(), "0".to_string());
    s.insert("net.ipv4.conf.all.forwarding".to_string(), "0".to_string());
    s
}
