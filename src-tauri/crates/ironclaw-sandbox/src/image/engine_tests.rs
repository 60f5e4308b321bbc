//! Tests against a real Docker engine. They skip (with a note) where no engine socket exists,
//! so `cargo test` stays green on machines without Docker, and run for real everywhere else —
//! the first run on a fresh machine builds the offline base via debootstrap (1-2 min).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Instant;

use bollard::query_parameters::{RemoveImageOptions, TagImageOptions};
use bollard::Docker;

use super::*;
use crate::Error;

/// Serialises the engine tests: two concurrent first-time `ensure`s would both debootstrap.
static ENGINE: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// The engine the product would use (`DOCKER_HOST` or the local socket). Without one these
/// tests fail, saying how to start it: a test that needs the engine and quietly passes without
/// it reports green for nothing. `IRONCLAW_SKIP_ENGINE_TESTS=1` skips them knowingly (never in
/// CI: `scripts/test.sh` starts an engine).
async fn engine() -> Option<Docker> {
    if std::env::var_os(SKIP_ENGINE_TESTS).is_some() {
        eprintln!("skipping: {SKIP_ENGINE_TESTS} is set");
        return None;
    }
    match crate::docker::connect().await {
        Ok(engine) => Some(engine.docker),
        Err(e) => panic!(
            "this test needs a Docker engine and none answers ({e}); start one (scripts/setup.sh \
             does), or set {SKIP_ENGINE_TESTS}=1 to skip the engine tests knowingly"
        ),
    }
}

/// Set to skip the tests that need a Docker engine, on a machine that has none.
const SKIP_ENGINE_TESTS: &str = "IRONCLAW_SKIP_ENGINE_TESTS";

/// Collects progress and prints each phase change with the time since the start, which is how
/// the timings of the first build (debootstrap, import, build) show up in the test output.
fn recorder(events: &mut Vec<Progress>) -> impl FnMut(Progress) + Send + '_ {
    let started = Instant::now();
    move |p| {
        if let Progress::Phase { name, message } = &p {
            let last = events.iter().rev().find_map(|e| match e {
                Progress::Phase { name, .. } => Some(name.as_str()),
                _ => None,
            });
            if last != Some(name.as_str()) {
                eprintln!("{:>8.1?} [{name}] {message}", started.elapsed());
            }
        }
        events.push(p);
    }
}

#[tokio::test]
async fn ensure_builds_once_then_only_checks() {
    let Some(docker) = engine().await else { return };
    let _serial = ENGINE.lock().await;
    let spec = spec();

    let started = Instant::now();
    let mut first = Vec::new();
    let built = ensure(&docker, &BuildOptions::default(), &mut recorder(&mut first))
        .await
        .expect("first ensure");
    let did_build = first.iter().any(|p| p.is_phase("build"));
    eprintln!(
        "first ensure: {:?} (built: {did_build}, debootstrap: {})",
        started.elapsed(),
        first.iter().any(|p| p.is_phase("debootstrap"))
    );
    assert_eq!(built, spec);
    assert_eq!(
        first.last(),
        Some(&Progress::Done {
            tag: spec.tag.clone()
        })
    );
    assert!(exists(&docker, &spec.tag).await.unwrap());

    let inspect = docker.inspect_image(&spec.tag).await.unwrap();
    let labels = inspect.config.and_then(|c| c.labels).unwrap_or_default();
    assert_eq!(labels.get(HASH_LABEL), Some(&spec.hash));

    // An explicit build of an unchanged tree goes through the builder's cache.
    if !did_build {
        let started = Instant::now();
        let mut rebuilt = Vec::new();
        build(
            &docker,
            &BuildOptions::default(),
            &mut recorder(&mut rebuilt),
        )
        .await
        .expect("rebuild");
        eprintln!("cached rebuild: {:?}", started.elapsed());
        assert!(rebuilt.iter().any(|p| p.is_phase("build")));
    }

    let started = Instant::now();
    let mut second = Vec::new();
    let again = ensure(
        &docker,
        &BuildOptions::default(),
        &mut recorder(&mut second),
    )
    .await
    .expect("second ensure");
    eprintln!("ensure when present: {:?}", started.elapsed());
    assert_eq!(again, spec);
    assert!(
        !second.iter().any(|p| matches!(p, Progress::Phase { .. })),
        "no base/build work when the image exists: {second:?}"
    );
    assert_eq!(second, vec![Progress::Done { tag: spec.tag }]);
}

#[tokio::test]
async fn export_remove_import_round_trip() {
    let Some(docker) = engine().await else { return };
    let _serial = ENGINE.lock().await;
    let mut events = Vec::new();
    let spec = ensure(
        &docker,
        &BuildOptions::default(),
        &mut recorder(&mut events),
    )
    .await
    .expect("ensure");

    // A throwaway tag on the same image, so removing it never touches the real one.
    let repo = "ironclaw-sandbox-test";
    let tag = format!("roundtrip-{}", std::process::id());
    let scratch = format!("{repo}:{tag}");
    docker
        .tag_image(
            &spec.tag,
            Some(TagImageOptions {
                repo: Some(repo.to_owned()),
                tag: Some(tag.clone()),
            }),
        )
        .await
        .unwrap();

    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("sandbox.tar");
    let started = Instant::now();
    let mut events = Vec::new();
    export(&docker, &scratch, &file, &mut recorder(&mut events))
        .await
        .expect("export");
    let size = std::fs::metadata(&file).unwrap().len();
    eprintln!("export: {:?}, {} MB", started.elapsed(), size / 1_000_000);
    assert!(!dir.path().join("sandbox.tar.partial").exists());
    assert!(matches!(events.last(), Some(Progress::Bytes { done, .. }) if *done == size));

    docker
        .remove_image(&scratch, None::<RemoveImageOptions>, None)
        .await
        .unwrap();
    assert!(!exists(&docker, &scratch).await.unwrap());
    assert!(
        exists(&docker, &spec.tag).await.unwrap(),
        "the real tag stays"
    );

    let started = Instant::now();
    let mut events = Vec::new();
    let loaded = import(&docker, &file, &mut recorder(&mut events))
        .await
        .expect("import");
    eprintln!("import: {:?}, loaded {loaded:?}", started.elapsed());
    assert_eq!(loaded, vec![scratch.clone()]);
    assert!(exists(&docker, &scratch).await.unwrap());

    docker
        .remove_image(&scratch, None::<RemoveImageOptions>, None)
        .await
        .unwrap();
}

#[tokio::test]
async fn engine_errors_are_clear() {
    let Some(docker) = engine().await else { return };
    let dir = tempfile::tempdir().unwrap();

    let err = export(
        &docker,
        "ironclaw-sandbox-test:does-not-exist",
        &dir.path().join("x.tar"),
        &mut |_| {},
    )
    .await
    .unwrap_err();
    assert!(matches!(err, Error::ImageMissing { .. }), "{err}");
    assert!(!dir.path().join("x.tar.partial").exists());

    // A well-formed tar that is not an image archive gets past the local sniffing and is
    // rejected by the engine.
    let file = dir.path().join("context.tar");
    std::fs::write(&file, context::context_tar(context::files()).unwrap()).unwrap();
    let err = import(&docker, &file, &mut |_| {}).await.unwrap_err();
    eprintln!("importing a non-image tar: {err}");
    assert!(matches!(err, Error::ImageArchive { .. }), "{err}");

    assert!(!exists(&docker, "ironclaw-sandbox-test:does-not-exist")
        .await
        .unwrap());
}
