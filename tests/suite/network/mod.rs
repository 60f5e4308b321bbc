//! Allowlist network mode against the real engine. Every target is on a lab network this test
//! creates (or the host's own listener); names resolve only through the proxy's fixed test
//! resolver, so nothing touches real DNS or any outside address.

mod agent;
mod bypass;
mod cli;
mod fetch;
mod mcp;
mod peers;
mod reach;
mod switching;

use std::net::{IpAddr, Ipv4Addr};

use ironclaw_sandbox::network::lab::{self, Lab, Server};
use ironclaw_sandbox::network::{engine, Resolver};
use ironclaw_tests::*;

pub(super) const BLOCKED: &str = "blocked by IronClaw network policy";

/// A test installation with a lab network: `web` (HTTP, port 8000) and `tls` (HTTPS, 8443).
pub(super) struct NetEnv {
    pub env: TestEnv,
    pub web: Server,
    pub tls: Server,
    _lab: Lab,
}

impl NetEnv {
    /// `allowlist_by_default`: the default profile uses allowlist mode (else `none`).
    pub async fn new(allowlist_by_default: bool) -> Self {
        let mut env = TestEnv::new().await;
        let mut lab = Lab::create(env.docker(), &env.instance, &env.sandbox.image().tag)
            .await
            .expect("lab network");
        let web = lab.http_server("web", 8000, 1).await.expect("web server");
        let tls = lab
            .tls_server("tls", "secure.example.internal", 8443)
            .await
            .expect("tls server");
        let mode = if allowlist_by_default {
            "allowlist"
        } else {
            "none"
        };
        // Lab addresses are private, so each name's address is listed too (the rebinding rule).
        let yaml = format!(
            "network:\n  allowlist:\n    - web.example.internal:8000\n    - {web_ip}:8000\n    \
             - secure.example.internal:8443\n    - {tls_ip}:8443\n    - rebind.example.internal:8000\n    \
             - private.example.internal:8000\nprofiles:\n  standard: {{ network: {mode} }}\n",
            web_ip = web.ip,
            tls_ip = tls.ip,
        );
        std::fs::write(env.paths.user_policy_file(), yaml).expect("write sandbox.yaml");
        env.restart_client().await;
        set_test_resolver(&env, &web, &tls);
        NetEnv {
            env,
            web,
            tls,
            _lab: lab,
        }
    }

    pub async fn restart_client(&mut self) {
        self.env.restart_client().await;
        set_test_resolver(&self.env, &self.web, &self.tls);
    }
}

fn set_test_resolver(env: &TestEnv, web: &Server, tls: &Server) {
    set_resolver_of(&env.sandbox, web, tls);
}

/// The lab's names, for `sandbox`'s proxy.
pub(super) fn set_resolver_of(sandbox: &ironclaw_sandbox::Sandbox, web: &Server, tls: &Server) {
    let v4 = |ip: Ipv4Addr| vec![IpAddr::V4(ip)];
    sandbox.network().set_resolver(Resolver::fixed([
        ("web.example.internal".to_string(), v4(web.ip)),
        ("secure.example.internal".to_string(), v4(tls.ip)),
        ("denied.example.internal".to_string(), v4(web.ip)),
        // Listed names whose address is private and not listed: rebinding attempts.
        (
            "rebind.example.internal".to_string(),
            v4(Ipv4Addr::LOCALHOST),
        ),
        ("private.example.internal".to_string(), v4(tls.ip)),
    ]));
}

impl Drop for NetEnv {
    fn drop(&mut self) {
        remove_networks(&self.env.instance);
    }
}

/// Removes the instance's containers first (networks in use cannot go), then its egress and lab
/// networks; TestEnv's own cleanup runs after this and finds nothing left.
fn remove_networks(instance: &str) {
    remove_instance_containers(instance);
    let instance = instance.to_string();
    {
        let worker = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .map_err(|e| e.to_string())?;
            rt.block_on(async move {
                let docker = ironclaw_sandbox::docker::connect()
                    .await
                    .map_err(|e| e.to_string())?
                    .docker;
                engine::remove_all(&docker, &instance)
                    .await
                    .map_err(|e| e.to_string())?;
                lab::remove_all(&docker, &instance)
                    .await
                    .map_err(|e| e.to_string())
            })
        });
        if let Ok(Err(e)) = worker.join() {
            eprintln!("test cleanup: cannot remove the networks: {e}");
        }
    }
}

pub(crate) struct RemoveNetworks(pub(crate) String);

impl Drop for RemoveNetworks {
    fn drop(&mut self) {
        remove_networks(&self.0);
    }
}

impl std::ops::Deref for NetEnv {
    type Target = TestEnv;
    fn deref(&self) -> &TestEnv {
        &self.env
    }
}

pub(super) fn activity(r: &ExecResult) -> (Vec<String>, Vec<String>) {
    let a = r
        .network
        .clone()
        .expect("allowlist mode reports network activity");
    (a.allowed, a.denied)
}
