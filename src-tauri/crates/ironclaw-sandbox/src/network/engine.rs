//! The Docker side of allowlist mode: two internal networks and the relay container, all
//! labelled with the instance and found again by label.
//!
//! * `ironclaw-egress-<instance>`: where sandboxes live. `internal` (no route out) and
//!   `inhibit_ipv4` (the host takes no address on it), so a sandbox can reach the relay and
//!   nothing else: not the internet, not the LAN, not a host service bound to 0.0.0.0. Its
//!   subnet is fixed at creation so the relay can have a static address (`.2`) that sandbox
//!   containers keep in their proxy settings for life.
//! * the relay container: see `relay.rs` and `relay.py`.
//!
//! Earlier versions also had an `-uplink` network between relay and host; `remove_all` still
//! removes one left behind.

use std::collections::HashMap;
use std::net::{IpAddr, Ipv4Addr};

use bollard::models::{
    Ipam, IpamConfig, NetworkConnectRequest, NetworkCreateRequest, NetworkDisconnectRequest,
};
use bollard::query_parameters::ListNetworksOptionsBuilder;
use bollard::Docker;
use tracing::Instrument;

use crate::container::{LABEL_INSTANCE, LABEL_SESSION, LABEL_VERSION};
use crate::error::{is_conflict, is_not_found, Error, Result};

pub const LABEL_ROLE: &str = "ironclaw.role";
const ROLE_SANDBOXES: &str = "egress-sandboxes";
/// Only removed now (see the module comment).
const ROLE_UPLINK: &str = "egress-uplink";
pub(super) const ROLE_RELAY: &str = "egress-relay";

/// Applied to sandboxes in allowlist mode and to the relay: IPv6 off.
pub(crate) fn no_ipv6_sysctls() -> HashMap<String, String> {
    HashMap::from([
        (
            "net.ipv6.conf.all.disable_ipv6".to_string(),
            "1".to_string(),
        ),
        (
            "net.ipv6.conf.default.disable_ipv6".to_string(),
            "1".to_string(),
        ),
    ])
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Net {
    pub id: String,
    pub name: String,
    pub subnet: Ipv4Addr,
    pub prefix: u8,
    pub gateway: Option<Ipv4Addr>,
}

impl Net {
    /// Whether `ip` is a container on this network (in the subnet, not the gateway).
    pub fn holds(&self, ip: IpAddr) -> bool {
        let IpAddr::V4(v4) = ip.to_canonical() else {
            return false;
        };
        let mask = u32::MAX
            .checked_shl(32 - u32::from(self.prefix))
            .unwrap_or(0);
        (u32::from(v4) & mask) == u32::from(self.subnet) && Some(v4) != self.gateway
    }

    /// The relay's fixed address: the first one after the gateway, outside Docker's range.
    pub fn relay_ip(&self) -> Ipv4Addr {
        Ipv4Addr::from(u32::from(self.subnet).wrapping_add(2))
    }
}

pub(super) fn labels(instance: &str, role: &str) -> HashMap<String, String> {
    HashMap::from([
        (LABEL_INSTANCE.to_string(), instance.to_string()),
        (LABEL_ROLE.to_string(), role.to_string()),
        (LABEL_VERSION.to_string(), crate::VERSION.to_string()),
    ])
}

pub(super) fn role_filter(instance: &str, role: &str) -> HashMap<String, Vec<String>> {
    HashMap::from([(
        "label".to_string(),
        vec![
            format!("{LABEL_INSTANCE}={instance}"),
            format!("{LABEL_ROLE}={role}"),
        ],
    )])
}

/// The sandboxes' network, created on first use.
pub async fn sandboxes_network(docker: &Docker, instance: &str) -> Result<Net> {
    let span = tracing::info_span!("docker.egress_network", instance);
    async {
        if let Some(net) = find_network(docker, instance, ROLE_SANDBOXES).await? {
            return Ok(net);
        }
        let name = format!("ironclaw-egress-{instance}");
        let options = HashMap::from([
            (
                "com.docker.network.bridge.inhibit_ipv4".to_string(),
                "true".to_string(),
            ),
            (
                "com.docker.network.bridge.enable_ip_masquerade".to_string(),
                "false".to_string(),
            ),
        ]);
        // Docker only gives static addresses on a subnet the user configured, so let Docker
        // pick a free subnet first (it knows the host's routes), then pin that subnet.
        let probe = create_network(
            docker,
            &name,
            instance,
            ROLE_SANDBOXES,
            options.clone(),
            None,
        )
        .await?;
        docker
            .remove_network(&probe.id)
            .await
            .map_err(|e| Error::docker("preparing the sandbox network", e))?;
        let size = 1u32 << (32 - u32::from(probe.prefix));
        let range = Ipv4Addr::from(u32::from(probe.subnet) + size / 2);
        let ipam = Ipam {
            config: Some(vec![IpamConfig {
                subnet: Some(format!("{}/{}", probe.subnet, probe.prefix)),
                ip_range: Some(format!("{range}/{}", probe.prefix + 1)),
                gateway: Some(Ipv4Addr::from(u32::from(probe.subnet) + 1).to_string()),
                ..Default::default()
            }]),
            ..Default::default()
        };
        create_network(docker, &name, instance, ROLE_SANDBOXES, options, Some(ipam)).await
    }
    .instrument(span)
    .await
}

async fn create_network(
    docker: &Docker,
    name: &str,
    instance: &str,
    role: &str,
    options: HashMap<String, String>,
    ipam: Option<Ipam>,
) -> Result<Net> {
    let request = NetworkCreateRequest {
        name: name.to_string(),
        driver: Some("bridge".to_string()),
        internal: Some(true),
        enable_ipv6: Some(false),
        options: Some(options),
        labels: Some(labels(instance, role)),
        ipam,
        ..Default::default()
    };
    match docker.create_network(request).await {
        Ok(_) => {}
        // Another IronClaw process of this instance made it a moment ago.
        Err(e) if is_conflict(&e) => {}
        Err(e) => {
            return Err(Error::docker(
                format!("creating the Docker network {name}"),
                e,
            ))
        }
    }
    find_network(docker, instance, role).await?.ok_or_else(|| {
        Error::Protocol(format!(
            "the Docker network {name} disappeared right after it was created; try again"
        ))
    })
}

async fn find_network(docker: &Docker, instance: &str, role: &str) -> Result<Option<Net>> {
    let options = ListNetworksOptionsBuilder::new()
        .filters(&role_filter(instance, role))
        .build();
    let found = docker
        .list_networks(Some(options))
        .await
        .map_err(|e| Error::docker("listing Docker networks", e))?;
    let Some(net) = found.into_iter().next() else {
        return Ok(None);
    };
    let config = net.ipam.and_then(|i| i.config).and_then(|c| {
        c.into_iter()
            .find(|c| c.subnet.as_deref().is_some_and(|s| s.contains('.')))
    });
    let parsed = config.as_ref().and_then(|c| {
        let (ip, prefix) = c.subnet.as_deref()?.split_once('/')?;
        Some((ip.parse::<Ipv4Addr>().ok()?, prefix.parse::<u8>().ok()?))
    });
    let (Some((subnet, prefix)), Some(id)) = (parsed, net.id) else {
        return Err(Error::Protocol(format!(
            "the Docker network for role {role} has no IPv4 subnet; remove it with `docker network rm` \
             and try again"
        )));
    };
    if !(8..=28).contains(&prefix) {
        return Err(Error::Protocol(format!(
            "unexpected subnet size /{prefix} on the egress network"
        )));
    }
    let gateway = config.and_then(|c| c.gateway).and_then(|g| g.parse().ok());
    Ok(Some(Net {
        id,
        name: net.name.unwrap_or_default(),
        subnet,
        prefix,
        gateway,
    }))
}

/// The container's address on `network`, if it is attached.
pub async fn container_ip(
    docker: &Docker,
    container: &str,
    network: &str,
) -> Result<Option<IpAddr>> {
    let info = docker
        .inspect_container(container, None)
        .await
        .map_err(|e| Error::docker("inspecting a container's network", e))?;
    Ok(info
        .network_settings
        .and_then(|n| n.networks)
        .and_then(|mut n| n.remove(network))
        .and_then(|e| e.ip_address)
        .and_then(|ip| ip.parse().ok()))
}

pub async fn connect(docker: &Docker, network: &str, container: &str) -> Result<()> {
    let request = NetworkConnectRequest {
        container: container.to_string(),
        endpoint_config: None,
    };
    docker
        .connect_network(network, request)
        .instrument(tracing::info_span!(
            "docker.connect_network",
            network,
            container
        ))
        .await
        .map_err(|e| Error::docker(format!("connecting a container to {network}"), e))
}

/// Detaches `container`; one that is not attached (or gone) counts as detached.
pub async fn disconnect(docker: &Docker, network: &str, container: &str) -> Result<()> {
    let request = NetworkDisconnectRequest {
        container: container.to_string(),
        force: Some(true),
    };
    match docker
        .disconnect_network(network, request)
        .instrument(tracing::info_span!(
            "docker.disconnect_network",
            network,
            container
        ))
        .await
    {
        Ok(()) => Ok(()),
        Err(e) if is_not_found(&e) => Ok(()),
        Err(bollard::errors::Error::DockerResponseServerError {
            status_code: 403 | 500,
            message,
        }) if message.contains("is not connected") => Ok(()),
        Err(e) => Err(Error::docker(
            format!("disconnecting a container from {network}"),
            e,
        )),
    }
}

/// Which session of this instance has `ip` on the sandboxes' network (for connections from
/// sandboxes another IronClaw process started).
pub async fn session_at(
    docker: &Docker,
    network: &str,
    instance: &str,
    ip: IpAddr,
) -> Option<String> {
    let net = docker.inspect_network(network, None).await.ok()?;
    let (id, _) = net.containers?.into_iter().find(|(_, c)| {
        c.ipv4_address
            .as_deref()
            .and_then(|a| a.split('/').next())
            .and_then(|a| a.parse::<IpAddr>().ok())
            == Some(ip)
    })?;
    let labels = docker
        .inspect_container(&id, None)
        .await
        .ok()?
        .config?
        .labels?;
    (labels.get(LABEL_INSTANCE).map(String::as_str) == Some(instance))
        .then(|| labels.get(LABEL_SESSION).cloned())
        .flatten()
}

/// Removes the relay and both networks of `instance` (sandbox containers must be gone).
pub async fn remove_all(docker: &Docker, instance: &str) -> Result<()> {
    super::relay::remove(docker, instance).await?;
    for role in [ROLE_SANDBOXES, ROLE_UPLINK] {
        remove_networks_with_role(docker, instance, role).await?;
    }
    Ok(())
}

pub(crate) async fn remove_networks_with_role(
    docker: &Docker,
    instance: &str,
    role: &str,
) -> Result<()> {
    let options = ListNetworksOptionsBuilder::new()
        .filters(&role_filter(instance, role))
        .build();
    let found = docker
        .list_networks(Some(options))
        .await
        .map_err(|e| Error::docker("listing Docker networks", e))?;
    for net in found {
        let (Some(id), name) = (net.id, net.name.unwrap_or_default()) else {
            continue;
        };
        match docker
            .remove_network(&id)
            .instrument(tracing::info_span!("docker.remove_network", %name))
            .await
        {
            Ok(()) => {}
            Err(e) if is_not_found(&e) => {}
            Err(e) => {
                return Err(Error::docker(
                    format!("removing the Docker network {name}"),
                    e,
                ))
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn only_addresses_inside_the_subnet_count_as_sandboxes() {
        let net = Net {
            id: "n".into(),
            name: "up".into(),
            subnet: "192.168.80.0".parse().unwrap(),
            prefix: 20,
            gateway: Some("192.168.80.1".parse().unwrap()),
        };
        assert!(net.holds("192.168.80.2".parse().unwrap()));
        assert!(net.holds("192.168.95.254".parse().unwrap()));
        assert!(net.holds("::ffff:192.168.80.3".parse().unwrap()));
        // The host itself (any local process) connects from the gateway address.
        assert!(!net.holds("192.168.80.1".parse().unwrap()));
        assert!(!net.holds("192.168.96.2".parse().unwrap()));
        assert!(!net.holds("127.0.0.1".parse().unwrap()));
        assert_eq!(net.relay_ip(), "192.168.80.2".parse::<Ipv4Addr>().unwrap());
    }
}
