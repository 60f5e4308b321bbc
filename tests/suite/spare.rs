//! The warm spare: a new session adopts a started, idle container instead of making one, and
//! gets exactly what a fresh container would have — never another session's, never one made
//! under another policy, and its own container once the adopted one stops.

use std::collections::HashMap;

use bollard::models::ContainerInspectResponse;
use ironclaw_sandbox::container;
use ironclaw_sandbox::sandbox::spare::SpareStatus;
use ironclaw_tests::*;
use pretty_assertions::assert_eq;
use tokio_util::sync::CancellationToken;

const SPARE_ON: &str = "warm_spare: true\n";

/// Makes the spare and returns its container id.
async fn ready_spare(sandbox: &Sandbox) -> String {
    match sandbox.ensure_spare().await.expect("ensure_spare") {
        SpareStatus::Ready { .. } => {}
        SpareStatus::Off { reason } => panic!("no spare on this machine: {reason}"),
    }
    let spares = sandbox.spares().await.expect("spares");
    assert_eq!(spares.len(), 1, "exactly one spare: {spares:?}");
    assert!(spares[0].1, "the spare is usable: {spares:?}");
    spares[0].0.id.clone()
}

async fn inspect(env: &TestEnv, id: &str) -> ContainerInspectResponse {
    env.docker()
        .inspect_container(id, None)
        .await
        .expect("inspect")
}

#[tokio::test]
async fn a_new_session_adopts_the_spare_and_gets_what_a_fresh_container_has() {
    let env = TestEnv::with_policy(SPARE_ON).await;
    let spare = ready_spare(&env.sandbox).await;

    let code = "import os\nopen('/workspace/made-here', 'w').write('x')\n\
                print(os.getuid(), os.getgid(), os.getcwd(), sorted(os.listdir('/workspace')))";
    let adopted = py(&env, "adopter", code).await;
    // The attack surface this test is about ran: the session is in the spare's container.
    assert_eq!(
        env.container_id("adopter").await.as_deref(),
        Some(spare.as_str())
    );
    assert!(
        adopted.container_started,
        "an adopted spare's interpreters are fresh"
    );
    let ws = env.workspace("adopter");
    assert_eq!(ws, env.paths.workspaces_dir().join("adopter"));
    assert!(
        ws.join("made-here").is_file(),
        "the spare's mount is the session's folder"
    );
    let leftovers: Vec<_> = std::fs::read_dir(env.paths.workspaces_dir())
        .expect("workspaces")
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(".spare-"))
        .collect();
    assert_eq!(
        leftovers,
        Vec::<String>::new(),
        "the spare's folder became the session's"
    );

    // The same code in a session that made its own container, with no spare left.
    assert!(env.sandbox.spares().await.expect("spares").is_empty());
    let fresh = py(&env, "fresh", code).await;
    let fresh_id = env.container_id("fresh").await.expect("fresh container");
    assert_ne!(fresh_id, spare, "one spare, one session");
    let user = env.sandbox.user();
    assert_eq!(
        ok(&adopted),
        format!("{} {} /workspace ['made-here']", user.uid, user.gid)
    );
    assert_eq!(
        ok(&adopted),
        ok(&fresh),
        "same identity, folder and contents"
    );

    // Hardening, network, limits and mount: the host configs differ in nothing but the
    // mount's source path and the container's own names.
    let a = inspect(&env, &spare).await;
    let f = inspect(&env, &fresh_id).await;
    let mut ah = a.host_config.clone().expect("host config");
    let mut fh = f.host_config.clone().expect("host config");
    let a_mounts = ah.mounts.take().expect("mounts");
    let f_mounts = fh.mounts.take().expect("mounts");
    assert_eq!(ah, fh, "the spare's host config is a fresh container's");
    assert_eq!(a_mounts.len(), f_mounts.len());
    for (am, fm) in a_mounts.iter().zip(&f_mounts) {
        assert_eq!(
            (&am.target, &am.typ, &am.read_only),
            (&fm.target, &fm.typ, &fm.read_only)
        );
    }
    let (ac, fc) = (a.config.expect("config"), f.config.expect("config"));
    assert_eq!(
        (&ac.user, &ac.image, &ac.network_disabled, &ac.healthcheck),
        (&fc.user, &fc.image, &fc.network_disabled, &fc.healthcheck)
    );
    let labels = |c: &Option<HashMap<String, String>>, drop: &[&str]| {
        let mut l = c.clone().unwrap_or_default();
        for k in drop {
            l.remove(*k);
        }
        l
    };
    // A key of its own each (exec::seal): never the same for two containers.
    let key = |c: &Option<HashMap<String, String>>| {
        c.as_ref()
            .and_then(|l| l.get(ironclaw_sandbox::exec::seal::KEY_LABEL).cloned())
    };
    assert!(key(&ac.labels).is_some() && key(&fc.labels).is_some());
    assert_ne!(key(&ac.labels), key(&fc.labels));
    let own = [
        container::LABEL_SESSION,
        container::LABEL_SPARE,
        ironclaw_sandbox::exec::seal::KEY_LABEL,
    ];
    assert_eq!(labels(&ac.labels, &own), labels(&fc.labels, &own));
}

#[tokio::test]
async fn two_clients_racing_for_one_spare_never_share_it() {
    let env = TestEnv::with_policy(SPARE_ON).await;
    let spare = ready_spare(&env.sandbox).await;
    let other = env.second_client().await;
    let request = ExecRequest::new(
        Language::Python,
        "import os; print(os.listdir('/workspace'))",
    );
    let cancel = CancellationToken::new();
    let (a, b) = tokio::join!(
        try_exec_on(&env.sandbox, "left", &request, &cancel),
        try_exec_on(&other, "right", &request, &cancel),
    );
    let (a, b) = (a.expect("left runs"), b.expect("right runs"));
    assert_eq!(ok(&a.result), "[]");
    assert_eq!(ok(&b.result), "[]");
    let left = env.container_id("left").await.expect("left container");
    let right = env.container_id("right").await.expect("right container");
    assert_ne!(left, right, "two sessions, two containers");
    assert!(
        left == spare || right == spare,
        "one of them adopted the spare (left {left}, right {right}, spare {spare})"
    );
}

#[tokio::test]
async fn an_adopted_spare_is_found_after_a_restart_and_replaced_once_stopped() {
    let mut env = TestEnv::with_policy(SPARE_ON).await;
    let spare = ready_spare(&env.sandbox).await;
    ok(&py(
        &env,
        "s",
        "x = 41\nopen('/workspace/kept', 'w').write('on disk')",
    )
    .await);
    assert_eq!(env.container_id("s").await.as_deref(), Some(spare.as_str()));

    // A new client finds the session's container by the label its record names.
    env.restart_client().await;
    let r = py(&env, "s", "print(x + 1)").await;
    assert!(!r.container_started);
    assert_eq!(
        ok(&r),
        "42",
        "the interpreter's state survived the client's restart"
    );
    let listed = env.sandbox.sessions().await.expect("sessions");
    assert_eq!(
        listed.len(),
        1,
        "the spare is no session of its own: {listed:?}"
    );
    assert_eq!(
        listed[0].container.as_ref().map(|c| c.id.clone()),
        Some(spare.clone())
    );

    // Stopped, the adopted container would bind the spare's old folder again: the session
    // gets a container under its own name, with its files.
    env.sandbox.stop(&name("s")).await.expect("stop");
    let r = py(&env, "s", "print(open('/workspace/kept').read())").await;
    assert!(r.container_started);
    assert_eq!(ok(&r), "on disk");
    let own = env.container_id("s").await.expect("a container");
    assert_ne!(own, spare);
    let found = container::find(env.docker(), &env.instance, "s")
        .await
        .expect("find")
        .expect("labelled with the session's own name");
    assert_eq!(found.id, own);
    let gone = env.docker().inspect_container(&spare, None).await;
    assert!(gone.is_err(), "the stopped spare was removed");
}

#[tokio::test]
async fn a_changed_profile_retires_the_spare_and_it_is_not_adopted() {
    let mut env = TestEnv::with_policy(SPARE_ON).await;
    let old = ready_spare(&env.sandbox).await;
    std::fs::write(
        env.paths.user_policy_file(),
        "warm_spare: true\nprofiles:\n  standard: { memory: 256m }\n",
    )
    .expect("sandbox.yaml");
    env.restart_client().await;

    let spares = env.sandbox.spares().await.expect("spares");
    assert_eq!(spares.len(), 1);
    assert!(!spares[0].1, "made under the old policy: not usable");
    ok(&py(&env, "new", "print(1)").await);
    let id = env.container_id("new").await.expect("container");
    assert_ne!(id, old, "a spare of the old policy is never adopted");
    let memory = inspect(&env, &id).await.host_config.and_then(|h| h.memory);
    assert_eq!(memory, Some(256 << 20));

    // The keeper's pass retires it and makes one under the new policy.
    let new = ready_spare(&env.sandbox).await;
    assert_ne!(new, old);
    assert!(env.docker().inspect_container(&old, None).await.is_err());
    let memory = inspect(&env, &new).await.host_config.and_then(|h| h.memory);
    assert_eq!(memory, Some(256 << 20));
}

#[tokio::test]
async fn turned_off_no_spare_is_kept_or_adopted_and_prune_removes_it() {
    let mut env = TestEnv::with_policy(SPARE_ON).await;
    let spare = ready_spare(&env.sandbox).await;
    // Listing tidies orphans, not a usable spare.
    assert_eq!(
        env.sandbox.cleanup_orphans().await.expect("cleanup"),
        Vec::<String>::new()
    );
    assert!(env.docker().inspect_container(&spare, None).await.is_ok());
    let removed = env.sandbox.remove_spares().await.expect("remove spares");
    assert_eq!(removed.len(), 1);
    assert!(env.docker().inspect_container(&spare, None).await.is_err());
    ready_spare(&env.sandbox).await;

    std::fs::write(env.paths.user_policy_file(), "warm_spare: false\n").expect("sandbox.yaml");
    env.restart_client().await;
    ok(&py(&env, "s", "print(1)").await);
    let c = env
        .sandbox
        .container_of(&name("s"))
        .await
        .expect("find")
        .expect("container");
    assert!(
        c.spare.is_empty(),
        "off: the session made its own container"
    );
    match env.sandbox.ensure_spare().await.expect("ensure") {
        SpareStatus::Off { reason } => assert!(reason.contains("warm_spare: false"), "{reason}"),
        other => panic!("expected off, got {other:?}"),
    }
    assert!(
        env.sandbox.spares().await.expect("spares").is_empty(),
        "off retires the spare"
    );
}

#[tokio::test]
async fn the_cli_leaves_a_spare_that_its_next_new_session_adopts() {
    let env = TestEnv::with_policy(SPARE_ON).await;
    let run = |session: &str| {
        let out = cli_ok(&env, &["exec", "--session", session, "print(6 * 7)"]);
        assert_eq!(out, "42\n");
    };
    run("first");
    // A detached `ironclaw sandbox spare` makes the spare after the command exited.
    let spare = env.usable_spare(None).await;
    let text = cli_ok(&env, &["sandbox", "ls"]);
    assert!(
        text.contains(&spare.session) && text.contains("warm spare"),
        "{text}"
    );

    run("second");
    assert_eq!(env.container_id("second").await, Some(spare.id.clone()));

    // Prune removes the next spare (when it has come) and leaves the sessions.
    env.usable_spare(Some(&spare.id)).await;
    let text = cli_ok(&env, &["sandbox", "prune"]);
    assert!(text.contains("(warm spare)"), "{text}");
    assert!(env.sandbox.spares().await.expect("spares").is_empty());
    assert_eq!(env.container_id("second").await, Some(spare.id));
    assert!(env.container_id("first").await.is_some());
}

/// Runs `ironclaw ARGS` in the environment; it must succeed. Its stdout.
fn cli_ok(env: &TestEnv, args: &[&str]) -> String {
    let out = env.cli().args(args).output().expect("run ironclaw");
    assert!(
        out.status.success(),
        "ironclaw {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}
