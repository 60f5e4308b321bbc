//! A container killed or removed behind IronClaw's back is recreated on the next run, and the
//! workspace (a host folder) is intact.

use std::time::Duration;

use bollard::query_parameters::{KillContainerOptions, RemoveContainerOptionsBuilder};
use ironclaw_tests::*;
use pretty_assertions::assert_eq;
use tokio_util::sync::CancellationToken;

async fn wait_not_running(env: &TestEnv, id: &str) {
    for _ in 0..100 {
        match env.docker().inspect_container(id, None).await {
            Ok(info) if info.state.as_ref().and_then(|s| s.running) == Some(true) => {}
            _ => return,
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("container {id} still running 5 s after being killed");
}

/// The implemented contract after the container went away: the next run either succeeds on
/// a restarted container, or fails once with `ContainerGone` (retryable) and the one after
/// succeeds. Returns the successful output.
async fn run_after_loss(env: &TestEnv, code: &str) -> Output {
    let request = ExecRequest::new(Language::Python, code);
    let cancel = CancellationToken::new();
    let out = match try_exec(env, "s", &request, &cancel).await {
        Ok(out) => out,
        Err(e @ Error::ContainerGone { .. }) => {
            assert!(e.is_retryable());
            try_exec(env, "s", &request, &cancel)
                .await
                .unwrap_or_else(|e| panic!("second run after ContainerGone failed: {e}"))
        }
        Err(e) => panic!("unexpected error after the container went away: {e:?}"),
    };
    assert!(out.result.container_started, "{:?}", out.result);
    assert_eq!(
        out.started.map(|s| s.0),
        Some(true),
        "Started event says so too"
    );
    out
}

#[tokio::test]
async fn killed_container_is_recreated_with_the_workspace_intact() {
    let env = TestEnv::new().await;
    ok(&py(
        &env,
        "s",
        "open('/workspace/keep.txt', 'w').write('kept')\nlost = 1",
    )
    .await);
    let id = env.container_id("s").await.expect("container");
    env.docker()
        .kill_container(&id, None::<KillContainerOptions>)
        .await
        .expect("kill");
    wait_not_running(&env, &id).await;

    let out = run_after_loss(
        &env,
        "print(open('/workspace/keep.txt').read())\nprint('lost' in globals())",
    )
    .await;
    assert_eq!(ok(&out.result), "kept\nFalse");
    // And the run after that is an ordinary warm one.
    let again = py(&env, "s", "print('warm')").await;
    assert_eq!(ok(&again), "warm");
    assert!(!again.container_started);
}

#[tokio::test]
async fn container_removed_from_outside_is_recreated() {
    let env = TestEnv::new().await;
    ok(&py(&env, "s", "open('/workspace/keep.txt', 'w').write('kept')").await);
    let id = env.container_id("s").await.expect("container");
    env.docker()
        .remove_container(
            &id,
            Some(RemoveContainerOptionsBuilder::default().force(true).build()),
        )
        .await
        .expect("remove");

    let out = run_after_loss(&env, "print(open('/workspace/keep.txt').read())").await;
    assert_eq!(ok(&out.result), "kept");
    let new_id = env.container_id("s").await.expect("a new container");
    assert_ne!(new_id, id);
}

/// Restarted by the engine, not by IronClaw: the supervisor starts afresh and no process gives
/// it its container's key (only the one that starts it does, exec::seal), so it obeys no
/// request. It ends on its own after a while, and the next run starts it again and gives it
/// the key (under gVisor: makes it anew), instead of a sandbox that never answers again.
#[tokio::test]
async fn a_sandbox_restarted_behind_ironclaws_back_runs_again() {
    let env = TestEnv::new().await;
    ok(&py(
        &env,
        "s",
        "open('/workspace/keep.txt', 'w').write('kept')\nlost = 1",
    )
    .await);
    let id = env.container_id("s").await.expect("container");
    let started = |info: bollard::models::ContainerInspectResponse| {
        info.state.and_then(|s| s.started_at).unwrap_or_default()
    };
    let before = started(
        env.docker()
            .inspect_container(&id, None)
            .await
            .expect("inspect"),
    );
    env.docker()
        .restart_container(
            &id,
            None::<bollard::query_parameters::RestartContainerOptions>,
        )
        .await
        .expect("restart");
    let after = started(
        env.docker()
            .inspect_container(&id, None)
            .await
            .expect("inspect"),
    );
    assert_ne!(before, after, "the engine restarted it");

    let out = run_after_loss(
        &env,
        "print(open('/workspace/keep.txt').read())\nprint('lost' in globals())",
    )
    .await;
    assert_eq!(ok(&out.result), "kept\nFalse");
    let again = py(&env, "s", "print('warm')").await;
    assert_eq!(ok(&again), "warm");
    assert!(!again.container_started);
}
