//! A sandbox's only peer is the relay: a sandbox of another session is out of reach on every
//! port and protocol, directly and through the proxy (issue 10, item 2).

use std::collections::HashMap;

use ironclaw_tests::*;
use pretty_assertions::assert_eq;
use serde_json::Value;

use super::{NetEnv, BLOCKED};

/// Session A's listeners: TCP 9099 and 9100, UDP 9099; each counts who reached it. Bound in
/// the run itself (so they exist when it prints), served by threads that outlive the run in
/// A's persistent interpreter.
const LISTEN: &str = r#"
import json, os, socket, threading, urllib.parse
hits = {'tcp9099': [], 'tcp9100': [], 'udp9099': []}
def serve_tcp(srv, key):
    while True:
        c, peer = srv.accept()
        hits[key].append(peer[0])
        c.sendall(b'A-HERE')
        c.close()
def serve_udp(u, key):
    while True:
        _, peer = u.recvfrom(100)
        hits[key].append(peer[0])
        u.sendto(b'A-HERE', peer)
for port in (9099, 9100):
    srv = socket.socket()
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind(('0.0.0.0', port))
    srv.listen(16)
    threading.Thread(target=serve_tcp, args=(srv, f'tcp{port}'), daemon=True).start()
u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
u.bind(('0.0.0.0', 9099))
threading.Thread(target=serve_udp, args=(u, 'udp9099'), daemon=True).start()
proxy = urllib.parse.urlsplit(os.environ['http_proxy'])
probe = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
probe.connect((proxy.hostname, proxy.port))
print(json.dumps({'ip': probe.getsockname()[0], 'relay': proxy.hostname,
                  'ipv6': open('/proc/net/if_inet6').read()}))
"#;

/// Tries every way to reach `HOST`; prints one outcome per probe: `REACHED` only when A
/// answered.
const PROBE: &str = r#"
import errno, json, socket, sys
from concurrent.futures import ThreadPoolExecutor
HOST, RELAY = sys.argv[1], sys.argv[2]
def name(e):
    return errno.errorcode.get(e.errno, type(e).__name__)
def tcp(host, port):
    try:
        s = socket.create_connection((host, port), timeout=5)
    except OSError as e:
        return name(e)
    s.settimeout(5)
    try:
        return 'REACHED' if s.recv(10) == b'A-HERE' else 'CONNECTED'
    except OSError:
        return 'CONNECTED'  # something accepted: a peer all the same
def udp(host, port):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.settimeout(5)
    try:
        s.sendto(b'hello', (host, port))
        return 'REACHED' if s.recv(10) == b'A-HERE' else 'ANSWERED'
    except OSError as e:
        return 'sent, ' + name(e)
def ping(host):
    try:
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM, socket.IPPROTO_ICMP)
    except OSError as e:
        return 'no icmp socket, ' + name(e)
    s.settimeout(5)
    try:
        s.sendto(b'\x08\x00\x00\x00\x00\x01\x00\x01', (host, 0))
        return 'REACHED' if s.recv(64)[:1] == b'\x00' else 'ANSWERED'
    except OSError as e:
        return 'sent, ' + name(e)
jobs = {
    'tcp:9099': lambda: tcp(HOST, 9099),
    'tcp:9100': lambda: tcp(HOST, 9100),
    'udp:9099': lambda: udp(HOST, 9099),
    'icmp': lambda: ping(HOST),
    'relay-of-A:3128': lambda: tcp(RELAY, 3128),
}
with ThreadPoolExecutor(len(jobs)) as pool:
    futures = {k: pool.submit(f) for k, f in jobs.items()}
print(json.dumps({k: f.result() for k, f in futures.items()}))
"#;

fn json(r: &ExecResult) -> Value {
    serde_json::from_str(&ok(r)).unwrap_or_else(|e| panic!("{e}: {}", r.stdout))
}

fn probe_code(host: &str, relay: &str) -> String {
    format!("cat > /tmp/probe.py <<'EOF'\n{PROBE}\nEOF\npython3 /tmp/probe.py {host} {relay}")
}

async fn hits(net: &NetEnv) -> HashMap<String, Vec<String>> {
    let r = py(net, "a", "print(json.dumps(hits))").await;
    serde_json::from_str(&ok(&r)).expect("hits json")
}

#[tokio::test]
async fn a_sandbox_cannot_reach_another_sessions_sandbox_on_any_port_or_protocol() {
    let net = NetEnv::new(true).await;
    let a = json(&py(&net, "a", LISTEN).await);
    let (a_ip, a_relay) = (
        a["ip"].as_str().expect("ip").to_string(),
        a["relay"].as_str().expect("relay").to_string(),
    );
    assert_eq!(a["ipv6"], "", "A has an IPv6 address someone could reach");

    // A's listeners really answer on A's network address: a separate process in A (a
    // same-session client) reaches every one of them.
    let own = json(&sh(&net, "a", &probe_code(&a_ip, &a_relay)).await);
    for key in ["tcp:9099", "tcp:9100", "udp:9099"] {
        assert_eq!(own[key], "REACHED", "A's own client: {own}");
    }
    let before = hits(&net).await;
    assert_eq!(before["tcp9099"], vec![a_ip.clone()], "{before:?}");
    assert_eq!(before["udp9099"], vec![a_ip.clone()], "{before:?}");
    let icmp_in_a = own["icmp"].as_str().unwrap_or_default().to_string();

    // B, a sandbox of another session, tries the same.
    let b = json(
        &py(
            &net,
            "b",
            LISTEN
                .replace("9099", "9199")
                .replace("9100", "9200")
                .as_str(),
        )
        .await,
    );
    let b_ip = b["ip"].as_str().expect("b ip").to_string();
    assert_ne!(a_ip, b_ip);
    let seen = json(&sh(&net, "b", &probe_code(&a_ip, &a_relay)).await);
    for (probe, outcome) in seen.as_object().expect("object") {
        let outcome = outcome.as_str().unwrap_or_default();
        assert!(
            !outcome.contains("REACHED")
                && !outcome.contains("CONNECTED")
                && !outcome.contains("ANSWERED"),
            "{probe}: session B reached session A ({outcome}); all: {seen}"
        );
    }
    eprintln!("session B's attempts on session A: {seen}");
    // ICMP: when the socket exists in A it exists in B too, so B's failure is the network's.
    if icmp_in_a.starts_with("no icmp socket") {
        assert_eq!(seen["icmp"], icmp_in_a.as_str(), "{seen}");
    }

    // Through the proxy: by address (CONNECT and plain), and by names that might lead to A.
    let via_proxy = [
        format!("curl -sS -p http://{a_ip}:9099/"),
        format!("curl -sS http://{a_ip}:9100/"),
        "curl -sS -p http://host.docker.internal:9099/".to_string(),
        format!(
            "curl -sS -p http://ironclaw-egress-{}-relay:3128/",
            net.instance
        ),
        format!("curl -sS -p http://{a_relay}:3128/"),
    ];
    for cmd in &via_proxy {
        let r = sh(&net, "b", cmd).await;
        let all = format!("{}{}", r.stdout, r.stderr);
        assert!(all.contains(BLOCKED), "{cmd}: {all}");
        assert!(!all.contains("A-HERE"), "{cmd}: {all}");
    }

    // And A saw nothing of any of it.
    assert_eq!(hits(&net).await, before);
}

/// The relay sits on every session's network and handles bytes from untrusted code: it must
/// never route between those networks, and it sees no more of the host than a sandbox does.
#[tokio::test]
async fn the_relay_routes_nothing_and_sees_no_more_of_the_host_than_a_sandbox() {
    let net = NetEnv::new(true).await;
    ok(&sh(&net, "a", "true").await);
    ok(&sh(&net, "b", "true").await);
    let relay = format!("ironclaw-egress-{}-relay", net.instance);
    let host_cmdline = std::fs::read_to_string("/proc/cmdline").expect("host cmdline");
    assert!(
        !host_cmdline.trim().is_empty(),
        "nothing to hide on this host"
    );
    let read = "import json\nout = {}\nfor p in ['/proc/sys/net/ipv4/ip_forward', '/proc/cmdline', '/proc/version', \
                '/proc/sys/kernel/random/boot_id']:\n    out[p] = open(p).read().strip()\n\
                out['interfaces'] = sorted(l.split(':')[0].strip() for l in open('/proc/net/dev').readlines()[2:])\n\
                print(json.dumps(out))";
    let out = std::process::Command::new("docker")
        .args(["exec", &relay, "python3", "-I", "-c", read])
        .output()
        .expect("docker exec");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let seen: Value = serde_json::from_slice(&out.stdout).expect("json");
    // Really the relay of both sessions: an interface per session network, besides loopback.
    assert_eq!(
        seen["interfaces"].as_array().map(Vec::len),
        Some(3),
        "{seen}"
    );
    assert!(
        !seen["/proc/version"]
            .as_str()
            .unwrap_or_default()
            .is_empty(),
        "{seen}"
    );
    assert_eq!(seen["/proc/sys/net/ipv4/ip_forward"], "0", "{seen}");
    assert_eq!(seen["/proc/cmdline"], "", "{seen}");
    assert_eq!(seen["/proc/sys/kernel/random/boot_id"], "", "{seen}");
}

/// A session's network lives as long as the session: `remove` takes it, `prune` takes those of
/// sessions that no longer exist, and the other sessions keep theirs and their network access.
#[tokio::test]
async fn a_sessions_network_goes_with_the_session_and_prune_removes_orphans() {
    use ironclaw_sandbox::network::engine;
    let net = NetEnv::new(true).await;
    let get = "curl -sS http://web.example.internal:8000/index.html";
    assert_eq!(ok(&sh(&net, "a", get).await), "hello from web");
    assert_eq!(ok(&sh(&net, "b", get).await), "hello from web");
    let docker = net.docker();
    assert!(exists(&net, "a").await && exists(&net, "b").await);

    net.sandbox
        .remove(&name("b"), true)
        .await
        .expect("remove b");
    assert!(!exists(&net, "b").await, "b's network outlived b");
    assert!(exists(&net, "a").await);

    // A network left by a session this install no longer knows (a crash between removing the
    // container and the network, say).
    engine::session_network(docker, &net.instance, "ghost")
        .await
        .expect("ghost network");
    assert!(exists(&net, "ghost").await);
    net.sandbox.cleanup_orphans().await.expect("prune");
    assert!(
        !exists(&net, "ghost").await,
        "prune left the orphan network"
    );
    assert!(exists(&net, "a").await);
    assert_eq!(ok(&sh(&net, "a", get).await), "hello from web");
}

async fn exists(net: &NetEnv, session: &str) -> bool {
    ironclaw_sandbox::network::engine::find_session_network(net.docker(), &net.instance, session)
        .await
        .expect("list networks")
        .is_some()
}
