//! The relay container: the one thing besides the sandboxes on their network, and the only way
//! from there to the proxy. It runs `relay.py` from the sandbox image, with a sandbox's
//! hardening, at a fixed address (`.2` of the sandboxes' subnet) that sandboxes keep in their
//! proxy settings; it is recreated when the proxy's port, the image or the script change.

use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};

use bollard::models::{
    ContainerCreateBody, EndpointIpamConfig, EndpointSettings, HostConfig, HostConfigLogConfig,
    NetworkingConfig,
};
use bollard::query_parameters::{CreateContainerOptionsBuilder, ListContainersOptionsBuilder};
use bollard::Docker;
use tracing::Instrument;

use super::engine::{connect, container_ip, labels, no_ipv6_sysctls, role_filter, Net, ROLE_RELAY};
use crate::container::LABEL_IMAGE_HASH;
use crate::error::{is_not_found, Error, Result};
use crate::image::ImageSpec;

/// On the relay: the proxy address it forwards to.
const LABEL_UPSTREAM: &str = "ironclaw.proxy-upstream";
/// On the relay: what it runs (sandbox image hash + relay script hash); a change recreates it.
const LABEL_RELAY: &str = "ironclaw.relay";
/// The port the relay listens on, on the sandboxes' network.
pub const RELAY_PORT: u16 = 3128;
const RELAY_SCRIPT: &str = include_str!("relay.py");

fn relay_hash(image: &ImageSpec) -> String {
    use sha2::{Digest, Sha256};
    let digest = Sha256::new()
        .chain_update(image.hash.as_bytes())
        .chain_update(RELAY_SCRIPT.as_bytes())
        .finalize();
    hex::encode(&digest[..8])
}

/// The relay container, if one exists: its id and the proxy address it forwards to.
pub async fn find(
    docker: &Docker,
    instance: &str,
) -> Result<Option<(String, Option<SocketAddr>, String)>> {
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
        let upstream = labels.get(LABEL_UPSTREAM).and_then(|u| u.parse().ok());
        let hash = labels.get(LABEL_RELAY).cloned().unwrap_or_default();
        Some((c.id?, upstream, hash))
    }))
}

/// A relay forwarding to `upstream`, running; replaces one that forwards elsewhere. Returns its
/// address on the uplink network (the only client the proxy accepts).
pub async fn ensure(
    docker: &Docker,
    instance: &str,
    image: &ImageSpec,
    sandboxes: &Net,
    uplink: &Net,
    upstream: SocketAddr,
) -> Result<IpAddr> {
    let span = tracing::info_span!("docker.egress_relay", instance, %upstream);
    async {
        let existing = find(docker, instance).await?;
        let id = match existing {
            Some((id, Some(u), hash)) if u == upstream && hash == relay_hash(image) => id,
            other => {
                if let Some((id, _, _)) = other {
                    crate::container::remove(docker, &id).await?;
                }
                create(docker, instance, image, sandboxes, uplink, upstream).await?
            }
        };
        crate::container::start(docker, &id).await?;
        let ip = container_ip(docker, &id, &uplink.name).await?;
        ip.ok_or_else(|| {
            Error::Protocol("the egress relay has no address on its uplink network".into())
        })
    }
    .instrument(span)
    .await
}

async fn create(
    docker: &Docker,
    instance: &str,
    image: &ImageSpec,
    sandboxes: &Net,
    uplink: &Net,
    upstream: SocketAddr,
) -> Result<String> {
    let mut labels = labels(instance, ROLE_RELAY);
    labels.insert(LABEL_UPSTREAM.to_string(), upstream.to_string());
    labels.insert(LABEL_IMAGE_HASH.to_string(), image.hash.clone());
    labels.insert(LABEL_RELAY.to_string(), relay_hash(image));
    let relay_ip = sandboxes.relay_ip().to_string();
    let memory = 128 << 20;
    // The same hardening as a sandbox: this container handles bytes from untrusted code.
    let host_config = HostConfig {
        network_mode: Some(sandboxes.name.clone()),
        readonly_rootfs: Some(true),
        cap_drop: Some(vec!["ALL".to_string()]),
        security_opt: Some(vec!["no-new-privileges:true".to_string()]),
        privileged: Some(false),
        ipc_mode: Some("private".to_string()),
        memory: Some(memory),
        memory_swap: Some(memory),
        nano_cpus: Some(1_000_000_000),
        pids_limit: Some(512),
        dns: Some(vec!["0.0.0.0".to_string()]),
        sysctls: Some(no_ipv6_sysctls()),
        log_config: Some(HostConfigLogConfig {
            typ: Some("none".to_string()),
            config: None,
        }),
        init: Some(false),
        ..Default::default()
    };
    let body = ContainerCreateBody {
        image: Some(image.tag.clone()),
        user: Some("65534:65534".to_string()),
        cmd: Some(vec![
            "python3".into(),
            "-I".into(),
            "-c".into(),
            RELAY_SCRIPT.into(),
            relay_ip.clone(),
            RELAY_PORT.to_string(),
            upstream.ip().to_string(),
            upstream.port().to_string(),
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
    connect(docker, &uplink.name, &id).await?;
    Ok(id)
}

pub async fn remove(docker: &Docker, instance: &str) -> Result<()> {
    if let Some((id, _, _)) = find(docker, instance).await? {
        crate::container::remove(docker, &id).await?;
    }
    Ok(())
}
