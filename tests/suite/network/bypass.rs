//! Every way around the proxy fails: addresses, ports, DNS, IPv6, gateways, tunnels.

use std::collections::HashMap;
use std::net::{IpAddr, Ipv4Addr};
use std::time::Duration;

use ironclaw_tests::*;
use pretty_assertions::assert_eq;

use super::{activity, NetEnv, BLOCKED};

#[tokio::test]
async fn every_way_around_the_proxy_fails() {
    let net = NetEnv::new(true).await;
    ok(&sh(&net, "s", "true").await);
    // A host service on all interfaces, which the sandbox must not reach through any gateway.
    let host_listener = tokio::net::TcpListener::bind("0.0.0.0:0")
        .await
        .expect("bind");
    let host_port = host_listener.local_addr().expect("addr").port();
    let egress = inspect_gateways(&net).await;
    let (web, tls) = (net.web.ip, net.tls.ip);

    let mut targets: Vec<(String, u16)> = vec![
        (web.to_string(), 8000), // the server, directly by address
        (tls.to_string(), 8443),
    ];
    for gw in &egress.gateways {
        targets.push((gw.to_string(), host_port)); // the host, through any network's gateway
        targets.push((gw.to_string(), 22));
    }
    targets.push((egress.relay.to_string(), 22)); // the relay, on a port it does not serve
                                                  // All at once: an address with no host behind it takes an ARP timeout (~3 s) to fail.
    let code = format!(
        "import socket, json, errno\nfrom concurrent.futures import ThreadPoolExecutor\n\
         def probe(t):\n    try:\n        socket.create_connection(t, timeout=5).close()\n        return 'CONNECTED'\n    \
         except OSError as e:\n        return errno.errorcode.get(e.errno, type(e).__name__)\n\
         targets = {targets:?}\nwith ThreadPoolExecutor(len(targets)) as pool:\n    \
         out = pool.map(probe, targets)\nprint(json.dumps({{f'{{h}}:{{p}}': o for (h, p), o in zip(targets, out)}}))"
    );
    let seen: HashMap<String, String> =
        serde_json::from_str(&ok(&py(&net, "s", &code).await)).expect("json");
    for (target, outcome) in &seen {
        assert_ne!(
            outcome, "CONNECTED",
            "{target} was reachable from the sandbox"
        );
    }
    let accepted = tokio::time::timeout(Duration::from_millis(200), host_listener.accept()).await;
    assert!(
        accepted.is_err(),
        "the host listener got a connection from the sandbox"
    );

    // No DNS inside: lookups fail, and fast.
    let r = py(
        &net,
        "s",
        "import socket, time\nt = time.time()\ntry:\n    socket.getaddrinfo('web.example.internal', 80)\n    print('RESOLVED')\nexcept OSError:\n    print('failed', round(time.time() - t))",
    )
    .await;
    let out = ok(&r);
    assert!(out.starts_with("failed"), "{out}");
    let secs: u64 = out
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .expect("seconds");
    assert!(
        secs <= 3,
        "a DNS lookup should fail within a few seconds, took {secs}s"
    );

    // No IPv6 at all.
    let r = py(
        &net,
        "s",
        "import socket\nprint(open('/proc/net/if_inet6').read().strip() or 'none')\ntry:\n    socket.create_connection(('fd00::1', 80), timeout=3)\n    print('CONNECTED')\nexcept OSError as e:\n    print(type(e).__name__)",
    )
    .await;
    let out = ok(&r);
    assert!(
        out.starts_with("none\n") && !out.contains("CONNECTED"),
        "{out}"
    );

    // Through the proxy: a listed host on another port, an unlisted IP literal (plain and
    // CONNECT), and listed names that resolve to private addresses nobody listed.
    let cases = [
        (
            "curl -sS http://web.example.internal:8001/",
            "web.example.internal:8001",
        ),
        (
            &*format!("curl -sS http://{tls}:8000/"),
            &*format!("{tls}:8000"),
        ),
        (
            &*format!("curl -sS -k https://{web}:8443/ 2>&1; true"),
            &*format!("{web}:8443"),
        ),
        (
            "curl -sS http://rebind.example.internal:8000/",
            "non-public address 127.0.0.1",
        ),
        (
            "curl -sS http://private.example.internal:8000/",
            &*format!("non-public address {tls}"),
        ),
    ];
    for (cmd, expect) in cases {
        let r = sh(&net, "s", cmd).await;
        let all = format!("{}{}", r.stdout, r.stderr);
        assert!(
            all.contains(BLOCKED) && all.contains(expect),
            "{cmd}: {all}"
        );
        assert_eq!(activity(&r).0, Vec::<String>::new(), "{cmd}");
    }

    // The proxy reads the sandbox's address from its socket: a PROXY line (as an older relay
    // sent) is just a malformed request.
    let r = py(
        &net,
        "s",
        &format!(
            "import os, socket, urllib.parse\nu = urllib.parse.urlsplit(os.environ['http_proxy'])\n\
             s = socket.create_connection((u.hostname, u.port))\n\
             s.sendall(b'PROXY TCP4 {web} {web} 1 1\\r\\nGET http://web.example.internal:8000/index.html HTTP/1.1\\r\\n\\r\\n')\n\
             print(s.recv(100).split(b'\\r\\n')[0].decode())"
        ),
    )
    .await;
    assert!(ok(&r).starts_with("HTTP/1.1 400"), "{}", r.stdout);
}

struct Gateways {
    gateways: Vec<IpAddr>,
    relay: IpAddr,
}

/// Gateway addresses of every network involved, and the relay's address.
async fn inspect_gateways(net: &NetEnv) -> Gateways {
    let docker = net.docker();
    let mut gateways = Vec::new();
    let mut relay = None;
    for name in [
        format!("ironclaw-egress-{}-s", net.instance),
        net._lab.network.clone(),
    ] {
        let info = docker
            .inspect_network(&name, None)
            .await
            .expect("inspect network");
        for config in info.ipam.and_then(|i| i.config).unwrap_or_default() {
            if let Some(gw) = config.gateway.and_then(|g| g.parse::<IpAddr>().ok()) {
                gateways.push(gw);
                if name.ends_with(&format!("{}-s", net.instance)) {
                    let IpAddr::V4(v4) = gw else { continue };
                    relay = Some(IpAddr::V4(Ipv4Addr::from(u32::from(v4) + 1)));
                }
            }
        }
    }
    Gateways {
        gateways,
        relay: relay.expect("the egress network has a gateway"),
    }
}
