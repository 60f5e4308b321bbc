//! What allowlist mode lets through: listed hosts over plain HTTP and CONNECT, with installer
//! settings; everything else gets the policy message.

use ironclaw_tests::*;
use pretty_assertions::assert_eq;

use super::{activity, NetEnv, BLOCKED};

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
