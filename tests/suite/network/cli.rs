//! `--network` on the `ironclaw` command, run as a real process: the choice is applied, kept
//! for the session, and bad values are refused with what is accepted.

use ironclaw_sandbox::network::lab::Lab;
use ironclaw_tests::*;
use pretty_assertions::assert_eq;

use super::{RemoveNetworks, BLOCKED};

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[tokio::test]
async fn exec_network_flag_applies_the_mode_and_allows_hosts_for_that_run() {
    let env = TestEnv::new().await;
    let _cleanup = RemoveNetworks(env.instance.clone());
    let mut lab = Lab::create(env.docker(), &env.instance, &env.sandbox.image().tag)
        .await
        .expect("lab network");
    let web = lab.http_server("web", 8000, 1).await.expect("web server");
    let target = format!("{}:8000", web.ip);
    let get = format!("curl -sS http://{target}/index.html");
    let exec = |extra: &[&str], code: &str| {
        let mut cmd = env.cli();
        cmd.args(["exec", "--session", "n", "--lang", "shell"])
            .args(extra)
            .arg(code);
        cmd.output().expect("run ironclaw")
    };

    let allow = format!("allowlist:{target}");
    let out = exec(&["--network", &allow], &get);
    assert_eq!(
        (out.status.code(), text(&out.stdout).trim()),
        (Some(0), "hello from web"),
        "{}",
        text(&out.stderr)
    );

    // The mode is the session's now; the host was allowed for that run's process only.
    let out = exec(&[], &get);
    assert!(text(&out.stdout).contains(BLOCKED), "{}", text(&out.stdout));

    let out = exec(&["--network", "off"], "ls /sys/class/net");
    assert_eq!(text(&out.stdout).trim(), "lo", "{}", text(&out.stderr));
    let out = exec(&[], "ls /sys/class/net");
    assert_eq!(text(&out.stdout).trim(), "lo", "{}", text(&out.stderr));

    for (bad, says) in [
        ("on", "unknown network mode \"on\""),
        ("off:x.example.internal", "takes no hosts"),
        ("allowlist:bad host", "host \"bad host\""),
    ] {
        let out = exec(&["--network", bad], "true");
        assert_eq!(out.status.code(), Some(2), "{bad}");
        let err = text(&out.stderr);
        assert!(err.contains(says), "{bad}: {err}");
    }
    lab.remove().await.expect("remove lab");
}
