//! Session management: list, stop, remove (with purge), and orphan cleanup.

use ironclaw_sandbox::container::State;
use ironclaw_tests::*;
use pretty_assertions::assert_eq;

#[tokio::test]
async fn sessions_are_listed_with_their_containers() {
    let env = TestEnv::new().await;
    assert!(env.sandbox.sessions().await.expect("sessions").is_empty());
    ok(&py(&env, "a", "1").await);
    ok(&sh(&env, "b", "true").await);
    let list = env.sandbox.sessions().await.expect("sessions");
    let names: Vec<&str> = list.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["a", "b"]);
    for s in &list {
        let c = s.container.as_ref().expect("a container");
        assert_eq!(c.state, State::Running, "{}", s.name);
        assert_eq!(c.session, s.name);
        assert_eq!(s.profile, "standard");
        assert_eq!(s.workspace, env.paths.workspaces_dir().join(&s.name));
        assert!(s.workspace.is_dir());
    }
}

#[tokio::test]
async fn stop_then_exec_restarts_with_fresh_state() {
    let env = TestEnv::new().await;
    ok(&py(
        &env,
        "s",
        "x = 1\nopen('/workspace/f', 'w').write('on disk')",
    )
    .await);
    env.sandbox.stop(&name("s")).await.expect("stop");
    let listed = env.sandbox.sessions().await.expect("sessions");
    assert_eq!(
        listed[0].container.as_ref().map(|c| c.state.clone()),
        Some(State::Stopped)
    );
    let r = py(
        &env,
        "s",
        "print('x' in globals(), open('/workspace/f').read())",
    )
    .await;
    assert!(r.container_started);
    assert_eq!(ok(&r), "False on disk");
}

#[tokio::test]
async fn remove_with_purge_deletes_container_and_workspace() {
    let env = TestEnv::new().await;
    ok(&py(&env, "keep", "open('/workspace/f', 'w').write('x')").await);
    ok(&py(&env, "gone", "open('/workspace/f', 'w').write('x')").await);
    let keep_ws = env.workspace("keep");
    let gone_ws = env.workspace("gone");

    env.sandbox
        .remove(&name("keep"), false)
        .await
        .expect("remove");
    assert!(env.container_id("keep").await.is_none());
    assert!(
        keep_ws.join("f").exists(),
        "without purge the workspace stays"
    );

    env.sandbox
        .remove(&name("gone"), true)
        .await
        .expect("remove --purge");
    assert!(env.container_id("gone").await.is_none());
    assert!(!gone_ws.exists(), "purge deletes the workspace");

    assert!(env.sandbox.sessions().await.expect("sessions").is_empty());
    assert!(matches!(
        env.sandbox.remove(&name("gone"), true).await,
        Err(Error::SessionNotFound { .. })
    ));
}

#[tokio::test]
async fn cleanup_orphans_removes_containers_without_a_session() {
    let env = TestEnv::new().await;
    ok(&py(&env, "kept", "1").await);
    ok(&py(&env, "orphan", "1").await);
    let record = env.paths.sessions_dir().join("orphan.json");
    std::fs::remove_file(&record).expect("delete the session record");

    let removed = env.sandbox.cleanup_orphans().await.expect("cleanup");
    assert_eq!(removed, [format!("ironclaw-{}-orphan", env.instance)]);
    assert!(env.container_id("orphan").await.is_none());
    assert!(
        env.container_id("kept").await.is_some(),
        "a known session is not an orphan"
    );
    assert!(env
        .sandbox
        .cleanup_orphans()
        .await
        .expect("cleanup")
        .is_empty());
}

async fn memory_limit(env: &TestEnv, session: &str, options: &SessionOptions) -> ExecResult {
    let mut sink = |_e: ExecEvent| {};
    env.sandbox
        .exec(
            &name(session),
            options,
            &ExecRequest::new(Language::Shell, MEMORY_LIMIT_SH),
            &mut sink,
            &tokio_util::sync::CancellationToken::new(),
        )
        .await
        .expect("exec")
}

fn strict() -> SessionOptions {
    SessionOptions {
        profile: Some("strict".into()),
        workspace: None,
    }
}

#[tokio::test]
async fn profile_change_recreates_the_container_keeping_the_workspace() {
    let mut env = TestEnv::new().await;
    let strict_bytes = env
        .sandbox
        .policy()
        .profile(Some("strict"))
        .expect("strict")
        .1
        .memory_bytes;
    ok(&py(&env, "s", "open('/workspace/f', 'w').write('kept')").await);
    let before = env.container_id("s").await.expect("container");
    // A new client (the next CLI call, an app restart) with another profile.
    env.restart_client().await;
    let r = memory_limit(&env, "s", &strict()).await;
    assert_eq!(ok(&r), strict_bytes.to_string());
    assert!(r.container_started);
    assert_ne!(env.container_id("s").await, Some(before));
    assert_eq!(
        ok(&py(&env, "s", "print(open('/workspace/f').read())").await),
        "kept"
    );
    // Remembered for the session.
    let listed = env.sandbox.sessions().await.expect("sessions");
    assert_eq!(listed[0].profile, "strict");
    assert_eq!(
        ok(&memory_limit(&env, "s", &SessionOptions::default()).await),
        strict_bytes.to_string()
    );
}

#[tokio::test]
async fn profile_change_takes_effect_on_the_next_run_of_the_same_client() {
    let env = TestEnv::new().await;
    let strict_bytes = env
        .sandbox
        .policy()
        .profile(Some("strict"))
        .expect("strict")
        .1
        .memory_bytes;
    ok(&py(&env, "s", "1").await);
    let r = memory_limit(&env, "s", &strict()).await;
    assert_eq!(
        ok(&r),
        strict_bytes.to_string(),
        "still the standard profile's limit"
    );
    assert!(r.container_started);
}

#[tokio::test]
async fn idle_container_stops_itself_and_restarts_on_demand() {
    let env = TestEnv::with_policy("idle_timeout: 1s\n").await;
    ok(&py(&env, "s", "x = 1\nopen('/workspace/f', 'w').write('kept')").await);
    let mut stopped = false;
    for _ in 0..60 {
        tokio::time::sleep(std::time::Duration::from_millis(250)).await;
        let c = ironclaw_sandbox::container::find(env.docker(), &env.instance, "s")
            .await
            .expect("find")
            .expect("the container is stopped, not removed");
        if c.state == State::Stopped {
            stopped = true;
            break;
        }
    }
    assert!(stopped, "still running 15 s after a 1 s idle timeout");
    let r = py(
        &env,
        "s",
        "print('x' in globals(), open('/workspace/f').read())",
    )
    .await;
    assert_eq!(ok(&r), "False kept");
    assert!(r.container_started);
}

/// A new process finds a session's container by the name it was made with, and that name is only
/// a hint: a container holding it (here another session's, renamed) is used only when its labels
/// say it belongs to the session. Otherwise the run would see the other session's workspace.
#[tokio::test]
async fn a_container_under_a_sessions_name_is_used_only_if_its_labels_say_so() {
    use bollard::query_parameters::{RemoveContainerOptionsBuilder, RenameContainerOptionsBuilder};

    let env = TestEnv::new().await;
    ok(&py(&env, "a", "print('a')").await);
    ok(&py(&env, "b", "open('/workspace/only-b.txt', 'w').write('b')").await);
    let a = env
        .sandbox
        .container_of(&name("a"))
        .await
        .expect("look up a")
        .expect("a has a container");
    let b = env.container_id("b").await.expect("b has a container");
    env.docker()
        .remove_container(
            &a.id,
            Some(RemoveContainerOptionsBuilder::default().force(true).build()),
        )
        .await
        .expect("remove a's container");
    env.docker()
        .rename_container(
            &b,
            RenameContainerOptionsBuilder::default()
                .name(&a.name)
                .build(),
        )
        .await
        .expect("give b's container a's name");
    // The set-up: a's name now holds a container that is running, current and b's.
    let holder = env
        .docker()
        .inspect_container(&a.name, None)
        .await
        .expect("inspect a's name");
    assert_eq!(holder.id.as_deref(), Some(b.as_str()));
    assert_eq!(
        holder
            .config
            .and_then(|c| c.labels)
            .and_then(|l| l.get("ironclaw.session").cloned())
            .as_deref(),
        Some("b")
    );

    // A new process (the CLI), so the container is looked up rather than remembered.
    let out = env
        .cli()
        .args([
            "exec",
            "--session",
            "a",
            "import os; print(sorted(os.listdir('/workspace')))",
        ])
        .output()
        .expect("run ironclaw exec");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "[]");
    let now = env
        .sandbox
        .container_of(&name("a"))
        .await
        .expect("look up a")
        .expect("a has a container again");
    assert_ne!(now.id, b, "session a ran in session b's container");
    assert_eq!(now.session, a.session);
}
