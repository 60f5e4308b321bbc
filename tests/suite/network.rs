//! Allowlist network mode against the real engine. Every target is on a lab network this test
//! creates (or the host's own listener); names resolve only through the proxy's fixed test
//! resolver, so nothing touches real DNS or any outside address.

use std::collections::HashMap;
use std::net::{IpAddr, Ipv4Addr};
use std::time::Duration;

use ironclaw_sandbox::network::lab::{self, Lab, Server};
use ironclaw_sandbox::network::{engine, AllowScope, NetworkSwitch, Resolver};
use ironclaw_sandbox::policy::NetworkMode;
use ironclaw_tests::*;
use pretty_assertions::assert_eq;

const BLOCKED: &str = "blocked by IronClaw network policy";

/// A test installation with a lab network: `web` (HTTP, port 8000) and `tls` (HTTPS, 8443).
struct NetEnv {
    env: TestEnv,
    web: Server,
    tls: Server,
    _lab: Lab,
}

impl NetEnv {
    /// `allowlist_by_default`: the default profile uses allowlist mode (else `none`).
    async fn new(allowlist_by_default: bool) -> Self {
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

    async fn restart_client(&mut self) {
        self.env.restart_client().await;
        set_test_resolver(&self.env, &self.web, &self.tls);
    }
}

fn set_test_resolver(env: &TestEnv, web: &Server, tls: &Server) {
    let v4 = |ip: Ipv4Addr| vec![IpAddr::V4(ip)];
    env.sandbox.network().set_resolver(Resolver::fixed([
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

struct RemoveNetworks(String);

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

fn activity(r: &ExecResult) -> (Vec<String>, Vec<String>) {
    let a = r
        .network
        .clone()
        .expect("allowlist mode reports network activity");
    (a.allowed, a.denied)
}

#[tokio::test]
async fn allowlisted_hosts_are_reachable_over_http_and_connect_and_others_get_the_policy_message() {
    let net = NetEnv::new(true).await;

    let r = sh(
        &net,
        "s",
        "curl -sS http://web.example.internal:8000/index.html",
    )
    .await;
    assert_eq!(ok(&r), "hello from web");
    assert_eq!(
        activity(&r),
        (vec!["web.example.internal:8000".to_string()], vec![])
    );

    let r = sh(
        &net,
        "s",
        "curl -sS -k https://secure.example.internal:8443/index.html",
    )
    .await;
    assert_eq!(ok(&r), "hello from tls");
    assert_eq!(
        activity(&r).0,
        vec!["secure.example.internal:8443".to_string()]
    );

    // Python's own HTTP client picks the proxy up from the environment.
    let r = py(
        &net,
        "s",
        "import urllib.request\nprint(urllib.request.urlopen('http://web.example.internal:8000/index.html').read().decode().strip())",
    )
    .await;
    assert_eq!(ok(&r), "hello from web");

    // Plain HTTP: the 403 body is the message.
    let r = sh(
        &net,
        "s",
        "curl -sS http://denied.example.internal:8000/index.html",
    )
    .await;
    let expected = format!("{BLOCKED}: denied.example.internal:8000 \u{2014} allow it in Settings");
    assert_eq!(r.stdout.trim(), expected);
    assert_eq!(
        activity(&r).1,
        vec!["denied.example.internal:8000".to_string()]
    );

    // CONNECT: curl shows only the status, so IronClaw adds the message to stderr itself.
    let r = sh(
        &net,
        "s",
        "curl -sS -k https://denied.example.internal:8443/index.html",
    )
    .await;
    assert_ne!(r.exit_code, 0);
    assert!(
        r.stderr.contains("CONNECT tunnel failed, response 403"),
        "{}",
        r.stderr
    );
    assert!(
        r.stderr.contains(&format!(
            "[IronClaw] {BLOCKED}: denied.example.internal:8443 \u{2014} allow it in Settings"
        )),
        "{}",
        r.stderr
    );
    // ... and clients that print the status line (pip, urllib) carry it there.
    let r = sh(
        &net,
        "s",
        "curl -sS -k -v https://denied.example.internal:8443/ 2>&1 | grep '< HTTP/1.1 403'",
    )
    .await;
    assert!(ok(&r).contains(&format!(
        "{BLOCKED}: denied.example.internal:8443 - allow it in Settings"
    )));

    // Installers find their settings; PIP_INDEX_URL only when configured (it is not here).
    let r = sh(
        &net,
        "s",
        "git config --get http.proxy; echo \"$npm_config_https_proxy\"; echo \"$HTTPS_PROXY\"; echo \"${PIP_INDEX_URL:-unset}\"",
    )
    .await;
    let lines: Vec<String> = ok(&r).lines().map(str::to_string).collect();
    assert!(
        lines[0].starts_with("http://") && lines[0].ends_with(":3128"),
        "{lines:?}"
    );
    assert_eq!(lines[1], lines[0]);
    assert_eq!(lines[2], lines[0]);
    assert_eq!(lines[3], "unset");
}

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

    // A forged PROXY line is just bytes in the request head: the relay's own line comes first.
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
        format!("ironclaw-egress-{}", net.instance),
        format!("ironclaw-egress-{}-uplink", net.instance),
        net._lab.network.clone(),
    ] {
        let info = docker
            .inspect_network(&name, None)
            .await
            .expect("inspect network");
        for config in info.ipam.and_then(|i| i.config).unwrap_or_default() {
            if let Some(gw) = config.gateway.and_then(|g| g.parse::<IpAddr>().ok()) {
                gateways.push(gw);
                if name.ends_with(&net.instance) {
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

#[tokio::test]
async fn switching_a_running_session_between_none_and_allowlist_keeps_state_where_docker_allows() {
    let net = NetEnv::new(false).await;
    let s = name("s");
    let fetch = "import urllib.request\ntry:\n    print(urllib.request.urlopen('http://web.example.internal:8000/index.html', timeout=5).read().decode().strip())\nexcept OSError as e:\n    print('failed:', e)";

    ok(&py(
        &net,
        "s",
        "x = 41\nopen('/workspace/kept.txt', 'w').write('still here')",
    )
    .await);
    let r = py(&net, "s", fetch).await;
    assert!(ok(&r).starts_with("failed"), "{}", r.stdout);
    assert_eq!(
        r.network, None,
        "`none` mode has no network activity to report"
    );
    assert!(!net.sandbox.network().is_running().await);

    // none → allowlist: Docker cannot attach a network to a `none` container.
    let switch = net
        .sandbox
        .set_network(&s, NetworkMode::Allowlist)
        .await
        .expect("switch");
    assert_eq!(switch, NetworkSwitch::Restarted);
    let r = py(
        &net,
        "s",
        &format!("print('x' in globals(), open('/workspace/kept.txt').read())\n{fetch}"),
    )
    .await;
    assert!(r.container_started);
    assert_eq!(ok(&r), "False still here\nhello from web");
    assert!(net.sandbox.network().is_running().await);
    ok(&py(&net, "s", "y = 7").await);

    // allowlist → none: detached live, the interpreter keeps its state; the proxy stops with
    // its last session.
    let switch = net
        .sandbox
        .set_network(&s, NetworkMode::None)
        .await
        .expect("switch");
    assert_eq!(switch, NetworkSwitch::Live);
    let r = py(
        &net,
        "s",
        &format!("import os\nprint(y, sorted(os.listdir('/sys/class/net')))\n{fetch}"),
    )
    .await;
    assert!(!r.container_started);
    let out = ok(&r);
    assert!(out.starts_with("7 ['lo']\nfailed"), "{out}");
    assert!(!net.sandbox.network().is_running().await);

    // none → allowlist again, now live: this container was made for allowlist mode.
    let switch = net
        .sandbox
        .set_network(&s, NetworkMode::Allowlist)
        .await
        .expect("switch");
    assert_eq!(switch, NetworkSwitch::Live);
    let r = py(&net, "s", &format!("print(y)\n{fetch}")).await;
    assert!(!r.container_started);
    assert_eq!(ok(&r), "7\nhello from web");
}

#[tokio::test]
async fn a_denied_host_can_be_allowed_live_once_for_the_session_or_always() {
    let mut net = NetEnv::new(true).await;
    let s = name("s");
    let mut events = net.sandbox.network().subscribe();
    let get = "curl -sS http://denied.example.internal:8000/index.html";

    let r = sh(&net, "s", get).await;
    assert!(r.stdout.contains(BLOCKED));
    let event = events.recv().await.expect("event");
    assert_eq!(
        (event.session.as_str(), event.target.as_str(), event.allowed),
        ("s", "denied.example.internal:8000", false)
    );

    // Once: the next execution only.
    let host = &activity(&r).1[0];
    net.sandbox
        .allow_host(&s, host, AllowScope::Once)
        .await
        .expect("allow once");
    assert_eq!(ok(&sh(&net, "s", get).await), "hello from web");
    assert!(sh(&net, "s", get).await.stdout.contains(BLOCKED));

    // Session: this session, every execution, no restart; other sessions still refused.
    net.sandbox
        .allow_host(&s, host, AllowScope::Session)
        .await
        .expect("allow");
    let r = sh(&net, "s", &format!("{get}; {get}")).await;
    assert_eq!(ok(&r), "hello from web\nhello from web");
    assert!(!r.container_started);
    assert!(sh(&net, "other", get).await.stdout.contains(BLOCKED));

    // The proxy survives a container restart.
    net.sandbox.stop(&s).await.expect("stop");
    let r = sh(&net, "s", get).await;
    assert!(r.container_started);
    assert_eq!(ok(&r), "hello from web");

    // Always: written to network.yaml, so it holds for other sessions and after a restart.
    net.sandbox
        .allow_host(
            &name("other"),
            "denied.example.internal:8000",
            AllowScope::Always,
        )
        .await
        .expect("allow always");
    let file = net.paths.config_dir.join("network.yaml");
    let text = std::fs::read_to_string(&file).expect("network.yaml");
    assert!(text.contains("- denied.example.internal:8000"), "{text}");
    net.restart_client().await;
    let listed: Vec<String> = net
        .sandbox
        .network()
        .allowlist()
        .await
        .expect("allowlist")
        .iter()
        .map(ToString::to_string)
        .collect();
    assert!(
        listed.contains(&"denied.example.internal:8000".to_string()),
        "{listed:?}"
    );
    assert_eq!(ok(&sh(&net, "third", get).await), "hello from web");
    // The restarted client finds the running container, relay and network again.
    let r = sh(&net, "s", get).await;
    assert!(!r.container_started);
    assert_eq!(ok(&r), "hello from web");
}

/// Not a speed test (the suite asserts no timings): prints what `network::bench` measures, for
/// the numbers in the README. Run it with
/// `cargo nextest run --release -p ironclaw-tests network_bench --run-ignored only --no-capture`.
#[tokio::test]
#[ignore = "benchmark, run on demand"]
async fn network_bench_measures_the_proxy_against_a_direct_connection() {
    let env = TestEnv::new().await;
    let _cleanup = RemoveNetworks(env.instance.clone());
    let options = ironclaw_sandbox::network::bench::BenchOptions::default();
    let report = ironclaw_sandbox::network::bench::run(&env.sandbox, &name("bench"), &options)
        .await
        .expect("bench");
    eprintln!("{}", serde_json::to_string_pretty(&report).expect("json"));
    assert!(report.proxied_mib_s > 0.0 && report.direct_mib_s > 0.0);
}
