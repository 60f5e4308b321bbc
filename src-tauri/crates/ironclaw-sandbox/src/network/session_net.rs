//! One internal network per allowlist session (see `engine.rs` for what is on it and why):
//! subnet allocation, lookup by label, removal with the session.

use std::collections::HashMap;
use std::net::{IpAddr, Ipv4Addr};

use bollard::models::{Ipam, IpamConfig};
use bollard::query_parameters::ListNetworksOptionsBuilder;
use bollard::Docker;
use tracing::Instrument;

use super::engine::{
    create_network, disconnect, find_network, labels, parse_network, role_filter, Net, ROLE_SESSION,
};
use crate::container::LABEL_SESSION;
use crate::error::{is_not_found, Error, Result};

/// Where every session network's subnet comes from: RFC 6598 shared address space, which
/// Docker's default address pools never hand out. The bridges get no host address
/// (`inhibit_ipv4`), so the host has no route into these subnets and a clash with a route the
/// host already has (carrier-grade NAT, a mesh VPN) changes nothing on the host.
const POOL: (u32, u8) = (0x6440_0000, 10); // 100.64.0.0/10
/// One session network: network, gateway (never assigned), relay (`.2`), the sandbox (from
/// the upper half), broadcast.
const SESSION_PREFIX: u8 = 28;
/// Subnets tried before giving up when Docker says each overlaps a network it already has.
const SUBNET_ATTEMPTS: u32 = 64;

/// The subnet candidate number `attempt` for `session`: spread over the pool by a hash, so
/// instances and sessions rarely try the same one.
fn candidate_subnet(instance: &str, session: &str, attempt: u32) -> Ipv4Addr {
    use sha2::{Digest, Sha256};
    let digest = Sha256::new()
        .chain_update(instance.as_bytes())
        .chain_update([0])
        .chain_update(session.as_bytes())
        .chain_update(attempt.to_le_bytes())
        .finalize();
    let slots = 1u32 << (SESSION_PREFIX - POOL.1);
    let slot = u32::from_le_bytes([digest[0], digest[1], digest[2], digest[3]]) % slots;
    Ipv4Addr::from(POOL.0 + (slot << (32 - SESSION_PREFIX)))
}

/// Whether `ip` can be a sandbox on a session network: inside the pool, and not a subnet's
/// network, gateway, relay or broadcast address.
pub fn is_sandbox_address(ip: IpAddr) -> bool {
    let IpAddr::V4(v4) = ip.to_canonical() else {
        return false;
    };
    let v = u32::from(v4);
    let pool_mask = u32::MAX << (32 - POOL.1);
    let host = v & !(u32::MAX << (32 - SESSION_PREFIX));
    v & pool_mask == POOL.0 && (3..(1 << (32 - SESSION_PREFIX)) - 1).contains(&host)
}

/// The session's own network, created on first use: the sandbox and the relay are the only
/// things ever on it, so nothing another session runs can be reached from it (issue 10).
pub async fn session_network(docker: &Docker, instance: &str, session: &str) -> Result<Net> {
    let span = tracing::info_span!("docker.egress_network", instance, session);
    async {
        if let Some(net) = find_network(docker, instance, ROLE_SESSION, Some(session)).await? {
            return Ok(net);
        }
        let name = format!("ironclaw-egress-{instance}-{session}");
        let options = HashMap::from([
            (
                "com.docker.network.bridge.inhibit_ipv4".to_string(),
                "true".to_string(),
            ),
            (
                "com.docker.network.bridge.enable_ip_masquerade".to_string(),
                "false".to_string(),
            ),
            // Nothing but the relay and one sandbox is on the bridge; this is belt and braces
            // should a second container ever join it.
            (
                "com.docker.network.bridge.enable_icc".to_string(),
                "true".to_string(),
            ),
        ]);
        let size = 1u32 << (32 - SESSION_PREFIX);
        let mut last = None;
        for attempt in 0..SUBNET_ATTEMPTS {
            let subnet = candidate_subnet(instance, session, attempt);
            let ipam = Ipam {
                config: Some(vec![IpamConfig {
                    subnet: Some(format!("{subnet}/{SESSION_PREFIX}")),
                    // Docker hands out the upper half; `.2` stays the relay's.
                    ip_range: Some(format!(
                        "{}/{}",
                        Ipv4Addr::from(u32::from(subnet) + size / 2),
                        SESSION_PREFIX + 1
                    )),
                    gateway: Some(Ipv4Addr::from(u32::from(subnet) + 1).to_string()),
                    ..Default::default()
                }]),
                ..Default::default()
            };
            let labels = session_labels(instance, session);
            match create_network(docker, &name, labels, options.clone(), Some(ipam)).await {
                Ok(()) => {}
                Err(e) if overlaps(&e) => {
                    last = Some(e);
                    continue;
                }
                Err(e) => return Err(Error::docker(format!("creating the Docker network {name}"), e)),
            }
            return find_network(docker, instance, ROLE_SESSION, Some(session))
                .await?
                .ok_or_else(|| {
                    Error::Protocol(format!(
                        "the Docker network {name} disappeared right after it was created; try again"
                    ))
                });
        }
        Err(Error::Network(format!(
            "no free subnet for the session's network in 100.64.0.0/10 after {SUBNET_ATTEMPTS} \
             tries ({}); remove unused Docker networks (`docker network prune`) and try again",
            last.map(|e| e.to_string()).unwrap_or_default()
        )))
    }
    .instrument(span)
    .await
}

fn session_labels(instance: &str, session: &str) -> HashMap<String, String> {
    let mut l = labels(instance, ROLE_SESSION);
    l.insert(LABEL_SESSION.to_string(), session.to_string());
    l
}

/// Docker refuses a subnet that overlaps one of its networks ("Pool overlaps with other one
/// on this address space", "networks have overlapping IPv4").
fn overlaps(e: &bollard::errors::Error) -> bool {
    matches!(e, bollard::errors::Error::DockerResponseServerError { message, .. }
        if message.contains("overlap"))
}

/// The session's network, if it exists.
pub async fn find_session_network(
    docker: &Docker,
    instance: &str,
    session: &str,
) -> Result<Option<Net>> {
    find_network(docker, instance, ROLE_SESSION, Some(session)).await
}

/// Every session network of `instance`, with the session each belongs to.
pub async fn session_networks(docker: &Docker, instance: &str) -> Result<Vec<(String, Net)>> {
    let options = ListNetworksOptionsBuilder::new()
        .filters(&role_filter(instance, ROLE_SESSION))
        .build();
    let found = docker
        .list_networks(Some(options))
        .await
        .map_err(|e| Error::docker("listing Docker networks", e))?;
    Ok(found
        .into_iter()
        .filter_map(|n| {
            let session = n.labels.as_ref()?.get(LABEL_SESSION)?.clone();
            Some((session, parse_network(n, ROLE_SESSION).ok()?))
        })
        .collect())
}

/// Removes `session`'s network, first taking the relay (`relay`, a container id) off it. The
/// sandbox must be gone.
pub async fn remove_session_network(
    docker: &Docker,
    instance: &str,
    session: &str,
    relay: Option<&str>,
) -> Result<()> {
    // All of them: a race may have made two (see `find_network`). Bounded, in case Docker
    // keeps listing one it says is gone.
    for _ in 0..8 {
        let Some(net) = find_session_network(docker, instance, session).await? else {
            break;
        };
        if let Some(relay) = relay {
            disconnect(docker, &net.id, relay).await?;
        }
        match docker
            .remove_network(&net.id)
            .instrument(tracing::info_span!("docker.remove_network", name = %net.name))
            .await
        {
            Ok(()) => {}
            Err(e) if is_not_found(&e) => {}
            Err(e) => {
                return Err(Error::docker(
                    format!("removing the Docker network {}", net.name),
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
    fn session_subnets_stay_in_the_pool_and_only_sandbox_hosts_count() {
        let mut seen = std::collections::HashSet::new();
        for attempt in 0..SUBNET_ATTEMPTS {
            let subnet = candidate_subnet("inst", "a-session", attempt);
            assert_eq!(u32::from(subnet) & 0xffc0_0000, 0x6440_0000, "{subnet}");
            assert_eq!(u32::from(subnet) & 0xf, 0, "{subnet} is not /28-aligned");
            seen.insert(subnet);
        }
        assert!(seen.len() > 60, "attempts should try different subnets");
        assert_ne!(
            candidate_subnet("inst", "a", 0),
            candidate_subnet("inst", "b", 0)
        );
        let ip = |s: &str| s.parse::<IpAddr>().unwrap();
        assert!(is_sandbox_address(ip("100.64.0.8")));
        assert!(is_sandbox_address(ip("100.127.255.238")));
        for not in [
            "100.64.0.0",  // network
            "100.64.0.1",  // gateway
            "100.64.0.2",  // the relay
            "100.64.0.15", // broadcast
            "100.128.0.8", // outside the pool
            "172.17.0.2",
            "127.0.0.1",
        ] {
            assert!(!is_sandbox_address(ip(not)), "{not}");
        }
    }
}
