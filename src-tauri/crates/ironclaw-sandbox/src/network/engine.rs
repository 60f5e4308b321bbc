//! The Docker side of allowlist mode: one internal network per session and the relay
//! container, all labelled with the instance (and the session) and found again by label.
//!
//! * `ironclaw-egress-<instance>-<session>`: where that session's sandbox lives, with the relay
//!   and nothing else. `internal` (no route out) and `inhibit_ipv4` (the host takes no address
//!   on it), so the sandbox can reach the relay and nothing else: not the internet, not the
//!   LAN, not a host service bound to 0.0.0.0, and not another session's sandbox, which is on
//!   another bridge the sandbox has no route to. Its /28 subnet is pinned at creation (from
//!   100.64.0.0/10, see [`POOL`]) so the relay can have a static address (`.2`) that the
//!   sandbox keeps in its proxy settings for life.
//! * the relay container: see `relay.rs` and `relay.py`; connected to every session network.
//!
//! Why not one shared network with inter-container traffic off (`enable_icc=false`): Docker
//! then drops every bridged packet between containers, the relay's included, and only root
//! could add the one exception it needs. Earlier versions shared one network
//! (`ironclaw-egress-<instance>`, role `egress-sandboxes`) with inter-container traffic on,
//! and before that had an `-uplink` network between relay and host; `remove_all` still removes
//! both when they are left behind.

use std::collections::HashMap;
use std::net::{IpAddr, Ipv4Addr};

use bollard::models::{
    EndpointIpamConfig, EndpointSettings, Ipam, NetworkConnectRequest, NetworkCreateRequest,
    NetworkDisconnectRequest,
};
use bollard::query_parameters::ListNetworksOptionsBuilder;
use bollard::Docker;
use tracing::Instrument;

use crate::container::{LABEL_INSTANCE, LABEL_SESSION, LABEL_VERSION};
use crate::error::{is_conflict, is_not_found, Error, Result};

pub const LABEL_ROLE: &str = "ironclaw.role";
/// One network per session (sandbox + relay).
pub(super) const ROLE_SESSION: &str = "egress-session";
/// Only removed now (see the module comment): the network all sandboxes used to share.
const ROLE_SANDBOXES: &str = "egress-sandboxes";
/// Only removed now (see the module comment).
const ROLE_UPLINK: &str = "egress-uplink";
pub(super) const ROLE_RELAY: &str = "egress-relay";

pub use super::session_net::{
    find_session_network, is_sandbox_address, remove_session_network, session_network,
    session_networks,
};

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

/// Creates an internal bridge network; one that exists already (another IronClaw process of
/// this instance made it a moment ago) counts as created.
pub(super) async fn create_network(
    docker: &Docker,
    name: &str,
    labels: HashMap<String, String>,
    options: HashMap<String, String>,
    ipam: Option<Ipam>,
) -> std::result::Result<(), bollard::errors::Error> {
    let request = NetworkCreateRequest {
        name: name.to_string(),
        driver: Some("bridge".to_string()),
        internal: Some(true),
        enable_ipv6: Some(false),
        options: Some(options),
        labels: Some(labels),
        ipam,
        ..Default::default()
    };
    match docker.create_network(request).await {
        Ok(_) => Ok(()),
        Err(e) if is_conflict(&e) => Ok(()),
        Err(e) => Err(e),
    }
}

pub(super) async fn find_network(
    docker: &Docker,
    instance: &str,
    role: &str,
    session: Option<&str>,
) -> Result<Option<Net>> {
    let mut filters = role_filter(instance, role);
    if let (Some(session), Some(label)) = (session, filters.get_mut("label")) {
        label.push(format!("{LABEL_SESSION}={session}"));
    }
    let options = ListNetworksOptionsBuilder::new().filters(&filters).build();
    let mut found = docker
        .list_networks(Some(options))
        .await
        .map_err(|e| Error::docker("listing Docker networks", e))?;
    // Docker 20.10 allows two networks of one name: two IronClaw processes racing to create
    // the same session's network may both succeed. Every process picks the same one.
    found.sort_by(|a, b| a.id.cmp(&b.id));
    match found.into_iter().next() {
        Some(net) => parse_network(net, role).map(Some),
        None => Ok(None),
    }
}

pub(super) fn parse_network(net: bollard::models::Network, role: &str) -> Result<Net> {
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
    Ok(Net {
        id,
        name: net.name.unwrap_or_default(),
        subnet,
        prefix,
        gateway,
    })
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

/// The networks `container` is attached to (their names).
pub async fn container_networks(docker: &Docker, container: &str) -> Result<Vec<String>> {
    let info = match docker.inspect_container(container, None).await {
        Ok(info) => info,
        Err(e) if is_not_found(&e) => return Ok(Vec::new()),
        Err(e) => return Err(Error::docker("inspecting a container's networks", e)),
    };
    Ok(info
        .network_settings
        .and_then(|n| n.networks)
        .map(|n| n.into_keys().collect())
        .unwrap_or_default())
}

/// Connects `container` to `network`, at `ip` if given; one already connected counts as
/// connected.
pub async fn connect(
    docker: &Docker,
    network: &str,
    container: &str,
    ip: Option<Ipv4Addr>,
) -> Result<()> {
    let request = NetworkConnectRequest {
        container: container.to_string(),
        endpoint_config: ip.map(|ip| EndpointSettings {
            ipam_config: Some(EndpointIpamConfig {
                ipv4_address: Some(ip.to_string()),
                ..Default::default()
            }),
            ..Default::default()
        }),
    };
    match docker
        .connect_network(network, request)
        .instrument(tracing::info_span!(
            "docker.connect_network",
            network,
            container
        ))
        .await
    {
        Ok(()) => Ok(()),
        Err(bollard::errors::Error::DockerResponseServerError { message, .. })
            if message.contains("already exists") =>
        {
            Ok(())
        }
        Err(e) => Err(Error::docker(
            format!("connecting a container to {network}"),
            e,
        )),
    }
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

/// Removes the relay and every network of `instance` (sandbox containers must be gone).
pub async fn remove_all(docker: &Docker, instance: &str) -> Result<()> {
    super::relay::remove(docker, instance).await?;
    for role in [ROLE_SESSION, ROLE_SANDBOXES, ROLE_UPLINK] {
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
