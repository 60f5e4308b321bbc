//! Changing a session's network: switching modes live or with a restart, allowing a denied
//! host, and what survives a restart of IronClaw.

use ironclaw_sandbox::network::{AllowScope, NetworkSwitch, Refusal};
use ironclaw_sandbox::policy::NetworkMode;
use ironclaw_tests::*;
use pretty_assertions::assert_eq;

use super::{activity, NetEnv, RemoveNetworks, BLOCKED};

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
    let get = "curl -sS http://denied.example.internal:8000/index.html";

    // Refused twice in one run: the run hears of the host once, as an event of its own.
    let out = exec(
        &net,
        "s",
        ExecRequest::new(Language::Shell, format!("{get}; {get}")),
    )
    .await;
    let r = out.result;
    assert!(r.stdout.contains(BLOCKED));
    assert_eq!(
        out.refusals,
        [Refusal {
            target: "denied.example.internal:8000".into(),
            reason: out.refusals[0].reason.clone(),
            user_denied: false,
        }]
    );
    assert!(!out.refusals[0].reason.is_empty());

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

#[tokio::test]
async fn a_sessions_network_mode_survives_a_restart_of_ironclaw() {
    let mut net = NetEnv::new(false).await;
    let s = name("s");
    let get = "curl -sS http://web.example.internal:8000/index.html";
    ok(&sh(&net, "s", "true").await);
    net.sandbox
        .set_network(&s, NetworkMode::Allowlist)
        .await
        .expect("switch");
    net.restart_client().await;
    assert_eq!(
        net.sandbox.network_mode(&s).expect("mode"),
        NetworkMode::Allowlist
    );
    let r = sh(&net, "s", get).await;
    assert_eq!(ok(&r), "hello from web");
    assert!(r.network.is_some());

    // Chosen while the container is stopped, applied by the next process: the allowlist
    // container is detached before any code runs in it.
    net.sandbox.stop(&s).await.expect("stop");
    let switch = net
        .sandbox
        .set_network(&s, NetworkMode::None)
        .await
        .expect("switch");
    assert_eq!(switch, NetworkSwitch::Deferred);
    net.restart_client().await;
    assert_eq!(
        net.sandbox.network_mode(&s).expect("mode"),
        NetworkMode::None
    );
    let r = sh(&net, "s", "ls /sys/class/net").await;
    assert_eq!(ok(&r), "lo");
    assert_eq!(r.network, None);
    assert!(!net.sandbox.network().is_running().await);
}

/// Not a speed test (the suite asserts no timings): prints what `network::bench` measures, for
/// the numbers in docs/benchmarks.md#allowlist-network. Run it with
/// `cargo nextest run --release -p ironclaw-tests network_bench --run-ignored only --no-capture`
/// (`IRONCLAW_BENCH_ROUNDS=15` for more alternating rounds than the default 5).
#[tokio::test]
#[ignore = "benchmark, run on demand"]
async fn network_bench_measures_the_proxy_against_a_direct_connection() {
    let env = TestEnv::new().await;
    let _cleanup = RemoveNetworks(env.instance.clone());
    let mut options = ironclaw_sandbox::network::bench::BenchOptions::default();
    // More rounds steady the median on a busy machine.
    if let Some(runs) = std::env::var("IRONCLAW_BENCH_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
    {
        options.runs = runs;
    }
    let report = ironclaw_sandbox::network::bench::run(&env.sandbox, &name("bench"), &options)
        .await
        .expect("bench");
    eprintln!("{}", serde_json::to_string_pretty(&report).expect("json"));
    assert!(report.proxied_mib_s > 0.0 && report.direct_mib_s > 0.0);
}
