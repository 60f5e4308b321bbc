//! The CLI's fast path to the engine (`docker::known`): a short command in a warm session asks
//! the engine for no more than it needs, and the engine as last seen is trusted only while it
//! is the same engine.
//!
//! The engine is reached through a recording proxy on a unix socket of its own, so the test
//! sees every request the CLI makes, and can replace the socket the way a restarted engine does.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use ironclaw_sandbox::docker::DEFAULT_SOCKET;
use ironclaw_tests::TestEnv;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{UnixListener, UnixStream};

/// A unix socket in front of the real engine that records each request line (`GET /v1.41/...`).
struct RecordingProxy {
    path: PathBuf,
    requests: Arc<Mutex<Vec<String>>>,
    task: tokio::task::JoinHandle<()>,
}

impl RecordingProxy {
    fn start(path: &Path) -> Self {
        let _ = std::fs::remove_file(path);
        let listener = UnixListener::bind(path).expect("bind the proxy socket");
        let requests = Arc::new(Mutex::new(Vec::new()));
        let seen = Arc::clone(&requests);
        let task = tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                tokio::spawn(relay(client, Arc::clone(&seen)));
            }
        });
        Self {
            path: path.to_path_buf(),
            requests,
            task,
        }
    }

    fn host(&self) -> String {
        format!("unix://{}", self.path.display())
    }

    /// The request paths since the last call, without the API version prefix.
    fn take(&self) -> Vec<String> {
        std::mem::take(&mut *self.requests.lock().expect("requests"))
    }

    fn stop(self) {
        self.task.abort();
    }
}

async fn relay(client: UnixStream, seen: Arc<Mutex<Vec<String>>>) {
    let Ok(engine) = UnixStream::connect(DEFAULT_SOCKET).await else {
        return;
    };
    let (mut from_client, mut to_client) = client.into_split();
    let (mut from_engine, mut to_engine) = engine.into_split();
    let down = tokio::spawn(async move {
        let _ = tokio::io::copy(&mut from_engine, &mut to_client).await;
    });
    let mut line = Vec::new();
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = match from_client.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        for &b in &buf[..n] {
            if b == b'\n' {
                record(&line, &seen);
                line.clear();
            } else if line.len() < 4096 {
                line.push(b);
            }
        }
        if to_engine.write_all(&buf[..n]).await.is_err() {
            break;
        }
    }
    let _ = to_engine.shutdown().await;
    let _ = down.await;
}

fn record(line: &[u8], seen: &Mutex<Vec<String>>) {
    let line = String::from_utf8_lossy(line);
    let mut words = line.trim_end().split(' ');
    let (Some(method), Some(target), Some(version)) = (words.next(), words.next(), words.next())
    else {
        return;
    };
    if !matches!(method, "GET" | "POST" | "PUT" | "DELETE" | "HEAD")
        || !version.starts_with("HTTP/1.")
    {
        return;
    }
    // `/v1.41/containers/json?...` -> `/containers/json`
    let path = target.split('?').next().unwrap_or(target);
    let path = match path.strip_prefix("/v") {
        Some(rest) if rest.starts_with(|c: char| c.is_ascii_digit()) => {
            rest.find('/').map_or(path, |i| &rest[i..])
        }
        _ => path,
    };
    if let Ok(mut seen) = seen.lock() {
        seen.push(format!("{method} {path}"));
    }
}

async fn exec(env: &TestEnv, host: &str, code: &str) -> std::process::Output {
    let mut cmd = env.cli();
    cmd.env("DOCKER_HOST", host)
        .args(["exec", "--session", "fast", code]);
    tokio::task::spawn_blocking(move || cmd.output())
        .await
        .expect("join")
        .expect("run ironclaw exec")
}

fn asked(requests: &[String], what: &str) -> bool {
    requests.iter().any(|r| r.ends_with(what))
}

fn stdout(out: &std::process::Output) -> String {
    assert!(
        out.status.success(),
        "ironclaw exec failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_warm_exec_skips_the_handshake_only_while_the_engine_is_the_same() {
    let env = TestEnv::new().await;
    let dir = tempfile::tempdir().expect("temp dir");
    let socket = dir.path().join("engine.sock");
    let cache = env.paths.engine_cache_file();

    // First command: a full handshake, and the engine is remembered.
    let proxy = RecordingProxy::start(&socket);
    assert_eq!(stdout(&exec(&env, &proxy.host(), "print(1+1)").await), "2");
    let first = proxy.take();
    assert!(
        asked(&first, "/version") && asked(&first, "/info"),
        "the first command must make the full handshake (the proxy saw: {first:?})"
    );
    assert!(cache.is_file(), "no engine cache at {}", cache.display());

    // Warm: one ping stands in for the handshake, and the image is not looked up.
    assert_eq!(stdout(&exec(&env, &proxy.host(), "print(2+2)").await), "4");
    let warm = proxy.take();
    assert!(asked(&warm, "/_ping"), "{warm:?}");
    for skipped in ["/version", "/info", "/json"] {
        let hits: Vec<_> = warm
            .iter()
            .filter(|r| r.ends_with(skipped) && !r.contains("/containers/"))
            .collect();
        assert!(
            hits.is_empty(),
            "a warm exec asked {hits:?} (all: {warm:?})"
        );
    }
    assert!(warm.len() < first.len(), "warm {warm:?} vs first {first:?}");
    // The session's container is asked for by its name, not found in a list of all of them,
    // which takes the engine longer with every container it holds.
    assert!(
        !warm.iter().any(|r| r == "GET /containers/json"),
        "a warm exec listed the containers: {warm:?}"
    );
    let container = env
        .sandbox
        .container_of(&ironclaw_sandbox::session::SessionName::new("fast").expect("name"))
        .await
        .expect("look up the session's container")
        .expect("the session has a container");
    assert!(
        warm.contains(&format!("GET /containers/{}/json", container.name)),
        "a warm exec must inspect {} by name: {warm:?}",
        container.name
    );

    // The engine restarts: a new socket at the same path. The cache no longer describes it.
    proxy.stop();
    let proxy = RecordingProxy::start(&socket);
    assert_eq!(stdout(&exec(&env, &proxy.host(), "print(3+3)").await), "6");
    let after_restart = proxy.take();
    assert!(
        asked(&after_restart, "/version") && asked(&after_restart, "/info"),
        "a new socket must mean a new handshake: {after_restart:?}"
    );

    // A damaged cache is a miss, not an error.
    std::fs::write(&cache, b"{\"format\": 1, garbage").expect("damage the cache");
    assert_eq!(stdout(&exec(&env, &proxy.host(), "print(4+4)").await), "8");
    let damaged = proxy.take();
    assert!(asked(&damaged, "/version"), "{damaged:?}");
    proxy.stop();
}
