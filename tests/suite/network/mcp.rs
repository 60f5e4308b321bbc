//! An MCP server's network: none unless its configuration lists hosts, and then those hosts
//! only — not the sandbox allowlist every session shares. Run against the real
//! `mcp-server-fetch` (PyPI) in its container, fetching from the lab's servers through the
//! proxy: the listed host answers; a host on the shared list but not the server's is refused
//! by the proxy (the request reached it: the refusal is its words); without a list the
//! server has no network at all.

use std::path::Path;
use std::sync::Arc;

use ironclaw_mcp::call::Call;
use ironclaw_mcp::{McpConfig, Servers};
use ironclaw_sandbox::session::SessionName;
use ironclaw_tests::agent::mcp_test_server;
use serde_json::json;

use super::{set_resolver_of, NetEnv};

async fn fetch_with(servers: &Servers, url: &str) -> (String, bool) {
    let tool = servers
        .tools()
        .iter()
        .find(|t| t.tool == "fetch")
        .expect("the fetch tool");
    let serde_json::Value::Object(arguments) = json!({"url": url, "max_length": 2000}) else {
        unreachable!()
    };
    let answer = servers
        .call(&Call {
            server: tool.server.clone(),
            tool: tool.tool.clone(),
            definition: tool.definition.clone(),
            arguments,
        })
        .await
        .expect("the server answered");
    (answer.text, answer.is_error)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_server_reaches_only_the_hosts_listed_for_it() {
    let net = NetEnv::new(false).await;
    let sandbox = Arc::new(net.env.second_client().await);
    set_resolver_of(&sandbox, &net.web, &net.tls);
    let packages = mcp_test_server("fetch", "mcp_server_fetch");
    let yaml = format!(
        "servers:\n  web:\n    command: [python3, -m, mcp_server_fetch, --ignore-robots-txt, --allow-private-ips]\n    packages: {p}\n    network: [web.example.internal:8000, {ip}:8000]\n  \
         offline:\n    command: [python3, -m, mcp_server_fetch, --ignore-robots-txt, --allow-private-ips]\n    packages: {p}\n",
        p = packages.display(),
        ip = net.web.ip,
    );
    let config = McpConfig::parse(&yaml, Path::new("/test/mcp.yaml")).expect("mcp.yaml");
    let owner = SessionName::new("mcp-net-test").expect("name");
    let mut only_web = config.clone();
    only_web.servers.retain(|s| s.name == "web");
    let servers = Servers::start(&sandbox, &owner, &Default::default(), &only_web).await;
    assert!(servers.failed.is_empty(), "{:?}", servers.failed);

    let (page, is_error) = fetch_with(&servers, "http://web.example.internal:8000/").await;
    assert!(!is_error && page.contains("hello from web"), "{page}");
    // On the shared allowlist (sandbox.yaml), not on this server's: the proxy refuses it.
    let (refused, is_error) = fetch_with(&servers, "https://secure.example.internal:8443/").await;
    assert!(is_error, "{refused}");
    assert!(
        !refused.contains("hello from tls"),
        "the shared list reached the server: {refused}"
    );
    assert!(
        refused.contains("403") || refused.to_lowercase().contains("forbidden"),
        "refused by the proxy, not unreachable: {refused}"
    );
    servers.stop().await;

    // No list: no network at all, not even the proxy.
    let mut offline = config.clone();
    offline.servers.retain(|s| s.name == "offline");
    let servers = Servers::start(&sandbox, &owner, &Default::default(), &offline).await;
    assert!(servers.failed.is_empty(), "{:?}", servers.failed);
    let (failed, is_error) = fetch_with(&servers, "http://web.example.internal:8000/").await;
    assert!(is_error && !failed.contains("hello from web"), "{failed}");
    // Not a refusal by a proxy (there is none to ask) nor a crash: the connection itself
    // could not be made, because the container has no network.
    let said = failed.to_lowercase();
    assert!(
        !said.contains("403") && !said.contains("forbidden"),
        "a proxy answered: {failed}"
    );
    assert!(
        [
            "name resolution",
            "resolve",
            "connect",
            "unreachable",
            "name or service",
            "getaddrinfo"
        ]
        .iter()
        .any(|w| said.contains(w)),
        "not a network failure: {failed}"
    );
    servers.stop().await;
}
