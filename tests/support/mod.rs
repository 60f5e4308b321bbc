//! Shared fixtures for the end-to-end suite: every test gets its own [`TestEnv`] (own data and
//! config folders, hence its own IronClaw instance id), talks to the real Docker engine, and
//! leaves no container behind — cleanup goes by the `ironclaw.instance` label in `Drop`, so it
//! also happens when the test panics.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::time::Duration;

use bollard::query_parameters::{ListContainersOptionsBuilder, RemoveContainerOptionsBuilder};
use bollard::Docker;
use tempfile::TempDir;
use tokio_util::sync::CancellationToken;

pub mod agent;
pub mod escape;

pub use ironclaw_protocol::Language;
pub use ironclaw_sandbox::container::{LABEL_INSTANCE, LABEL_SESSION};
pub use ironclaw_sandbox::exec::{ExecEvent, ExecRequest, ExecResult};
pub use ironclaw_sandbox::policy::Policy;
pub use ironclaw_sandbox::session::SessionName;
pub use ironclaw_sandbox::{Error, Paths, Sandbox, SessionOptions};

/// Small limits for the tests that push against them (OOM, fork bomb, timeouts).
pub const SMALL_LIMITS: &str = "\
profiles:
  standard: { memory: 128m, pids: 64, timeout: 5s }
";

/// No single execution in this suite should take longer; past this the test fails (and
/// `Drop` still cleans up) instead of hanging until nextest kills the process.
pub const EXEC_GUARD: Duration = Duration::from_secs(120);

/// A private IronClaw installation: temp data and config folders, a connected [`Sandbox`].
pub struct TestEnv {
    pub sandbox: Sandbox,
    pub paths: Paths,
    /// `paths.instance_id()`, the value of every container's `ironclaw.instance` label.
    pub instance: String,
    // Dropped after `Drop::drop` has removed the containers that mount folders in it.
    root: TempDir,
}

impl TestEnv {
    /// The shipped policy, no user overrides.
    pub async fn new() -> Self {
        Self::build(None).await
    }

    /// With `yaml` as the user's `<config>/sandbox.yaml`, merged over the shipped defaults.
    pub async fn with_policy(yaml: &str) -> Self {
        Self::build(Some(yaml)).await
    }

    async fn build(yaml: Option<&str>) -> Self {
        let root = tempfile::Builder::new()
            .prefix("ironclaw-e2e-")
            .tempdir()
            .expect("temp dir");
        let data = root.path().join("data");
        let config = root.path().join("config");
        std::fs::create_dir_all(&data).expect("data dir");
        std::fs::create_dir_all(&config).expect("config dir");
        let paths = Paths::at(&data, &config);
        // The CLI keeps a warm spare by default, made by a detached process after a run; a
        // test that is not about spares keeps them off, so no process outlives its cleanup.
        let yaml = match yaml {
            Some(yaml) if yaml.contains("warm_spare:") => yaml.to_string(),
            other => format!("warm_spare: false\n{}", other.unwrap_or_default()),
        };
        std::fs::write(paths.user_policy_file(), yaml).expect("write sandbox.yaml");
        let instance = paths.instance_id();
        let docker = docker().await;
        ensure_image(&docker).await;
        let policy = Policy::load(&paths).expect("policy");
        let sandbox = Sandbox::new(docker, paths.clone(), policy);
        Self {
            sandbox,
            paths,
            instance,
            root,
        }
    }

    /// Simulates the app (or CLI) restarting: the old client and its connections go, a new one
    /// is made on the same folders. Containers are left running.
    pub async fn restart_client(&mut self) {
        let policy = Policy::load(&self.paths).expect("policy");
        self.sandbox = Sandbox::new(docker().await, self.paths.clone(), policy);
    }

    /// Another client on the same folders, as a second app or CLI process would be.
    pub async fn second_client(&self) -> Sandbox {
        let policy = Policy::load(&self.paths).expect("policy");
        Sandbox::new(docker().await, self.paths.clone(), policy)
    }

    pub fn docker(&self) -> &Docker {
        self.sandbox.docker()
    }

    /// The temp folder everything of this environment lives in.
    pub fn root(&self) -> &Path {
        self.root.path()
    }

    /// The host folder of a session's workspace (the session must exist).
    pub fn workspace(&self, session: &str) -> PathBuf {
        self.sandbox
            .workspace(&name(session))
            .expect("session workspace")
    }

    /// The session's container id, if it has one.
    pub async fn container_id(&self, session: &str) -> Option<String> {
        self.sandbox
            .container_of(&name(session))
            .await
            .expect("find container")
            .map(|c| c.id)
    }

    /// Waits up to a minute for a usable warm spare other than `not` (one a detached
    /// `ironclaw sandbox spare` or the app's keeper is making) and returns it.
    pub async fn usable_spare(
        &self,
        not: Option<&str>,
    ) -> ironclaw_sandbox::container::ContainerInfo {
        let deadline = std::time::Instant::now() + Duration::from_secs(60);
        loop {
            let spares = self.sandbox.spares().await.expect("spares");
            let found = spares
                .iter()
                .find(|(c, usable)| *usable && Some(c.id.as_str()) != not);
            if let Some((c, _)) = found {
                return c.clone();
            }
            assert!(
                std::time::Instant::now() < deadline,
                "no warm spare came: {spares:?}"
            );
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }

    /// Environment for running the CLI against this installation.
    pub fn cli(&self) -> Command {
        self.cli_at(&cli_bin())
    }

    /// [`Self::cli`] for a copy of the front kept somewhere else (`dir/ironclaw`), without
    /// `ironclaw-full` beside it: what the front does by itself. Returns the command to run it.
    pub fn front_alone(&self, dir: &Path) -> Command {
        let front = dir.join("ironclaw");
        if !front.exists() {
            std::fs::copy(cli_bin(), &front).expect("copy ironclaw");
        }
        self.cli_at(&front)
    }

    fn cli_at(&self, program: &Path) -> Command {
        let mut cmd = Command::new(program);
        cmd.env("IRONCLAW_DATA_DIR", &self.paths.data_dir)
            .env("IRONCLAW_CONFIG_DIR", &self.paths.config_dir)
            .env_remove("IRONCLAW_LOG");
        cmd
    }
}

impl Drop for TestEnv {
    fn drop(&mut self) {
        remove_instance_containers(&self.instance);
        // Each installation anchors its audit log in the keyring; a non-root user's kernel
        // keyring holds only 200 keys, so test runs must not leave theirs behind.
        let log = ironclaw_agent::state::audit_path(&self.paths);
        let _ = ironclaw_agent::audit_anchor::KeyringAnchor::for_log(&log).forget();
    }
}

/// Removes every container labelled `ironclaw.instance=<instance>`. Blocking and panic-free, so
/// it is safe in `Drop` during unwinding; it runs on its own thread and runtime because the
/// caller may be inside a tokio runtime.
pub fn remove_instance_containers(instance: &str) {
    let label = format!("{LABEL_INSTANCE}={instance}");
    let worker = std::thread::spawn(move || -> Result<(), String> {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| e.to_string())?;
        rt.block_on(async move {
            let engine = ironclaw_sandbox::docker::connect()
                .await
                .map_err(|e| e.to_string())?;
            let filters = HashMap::from([("label".to_string(), vec![label])]);
            let options = ListContainersOptionsBuilder::default()
                .all(true)
                .filters(&filters)
                .build();
            let found = engine
                .docker
                .list_containers(Some(options))
                .await
                .map_err(|e| e.to_string())?;
            for c in found {
                if let Some(id) = c.id {
                    force_remove(&engine.docker, &id).await;
                }
            }
            Ok(())
        })
    });
    match worker.join() {
        Ok(Ok(())) => {}
        Ok(Err(e)) => eprintln!("test cleanup: cannot remove containers of {instance}: {e}"),
        Err(_) => eprintln!("test cleanup: the cleanup thread panicked ({instance})"),
    }
}

async fn force_remove(docker: &Docker, id: &str) {
    let options = RemoveContainerOptionsBuilder::default()
        .force(true)
        .v(true)
        .build();
    if let Err(e) = docker.remove_container(id, Some(options)).await {
        if !e.to_string().contains("No such container") {
            eprintln!("test cleanup: cannot remove container {id}: {e}");
        }
    }
}

pub async fn docker() -> Docker {
    ironclaw_sandbox::docker::connect()
        .await
        .expect("a Docker engine must be running for the end-to-end tests")
        .docker
}

/// Makes sure the sandbox image exists, once per process; a file lock keeps parallel test
/// processes from building it several times over when it is missing. Also sweeps containers a
/// killed earlier run left behind (their temp workspace no longer exists).
async fn ensure_image(docker: &Docker) {
    static DONE: tokio::sync::OnceCell<()> = tokio::sync::OnceCell::const_new();
    DONE.get_or_init(|| async {
        sweep_stale_containers(docker).await;
        let lock_path = std::env::temp_dir().join("ironclaw-e2e-image.lock");
        let lock = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&lock_path)
            .expect("image lock file");
        // flock(2) rather than `File::lock`, which needs a newer Rust than the workspace's.
        let lock = tokio::task::spawn_blocking(move || {
            nix::fcntl::Flock::lock(lock, nix::fcntl::FlockArg::LockExclusive)
                .map_err(|(_, e)| e)
                .expect("lock the image lock file")
        })
        .await
        .expect("lock task");
        ironclaw_sandbox::image::ensure(docker, &Default::default(), &mut |_| {})
            .await
            .expect("the sandbox image must exist or be buildable");
        drop(lock);
    })
    .await;
}

/// Containers from an earlier test run that was killed before its `Drop` ran: their workspace
/// was a temp folder of this suite that is gone now.
async fn sweep_stale_containers(docker: &Docker) {
    let Ok(all) = ironclaw_sandbox::container::list_all_ironclaw(docker).await else {
        return;
    };
    let tmp = std::env::temp_dir();
    for c in all {
        let Ok(info) = docker.inspect_container(&c.id, None).await else {
            continue;
        };
        // The test's temp root, not the mount's source: an adopted warm spare's source folder
        // was renamed to its session's while the container lives on.
        let stale = info.mounts.unwrap_or_default().iter().any(|m| {
            m.destination.as_deref() == Some("/workspace")
                && m.source.as_deref().is_some_and(|s| {
                    let s = Path::new(s);
                    s.starts_with(&tmp)
                        && s.components()
                            .nth(tmp.components().count())
                            .is_some_and(|c| {
                                let root = c.as_os_str();
                                root.to_string_lossy().starts_with("ironclaw-e2e-")
                                    && !tmp.join(root).exists()
                            })
                })
        });
        if stale {
            force_remove(docker, &c.id).await;
        }
    }
}

/// Prints the sandbox's memory limit in bytes, under either runtime: the cgroup's file under
/// runc; gVisor shows its cgroup files unlimited and the limit as the machine's size.
pub const MEMORY_LIMIT_SH: &str = "l=$(cat /sys/fs/cgroup/memory.max 2>/dev/null || cat /sys/fs/cgroup/memory/memory.limit_in_bytes); \
     case \"$l\" in max|9223372036854775807) awk '/^MemTotal:/ { print $2 * 1024 }' /proc/meminfo ;; *) echo \"$l\" ;; esac";

/// Prints the sandbox's process limit, under either runtime: the cgroup's under runc, gVisor's
/// `RLIMIT_NPROC` under gVisor (see the container's definition).
pub const PIDS_LIMIT_SH: &str =
    "p=$(cat /sys/fs/cgroup/pids.max 2>/dev/null || cat /sys/fs/cgroup/pids/pids.max); \
     if [ \"$p\" = max ]; then ulimit -u; else echo \"$p\"; fi";

/// Whether this is the suite's gVisor pass (`IRONCLAW_RUNTIME=runsc`), for the few tests that
/// choose their limits before a container exists.
pub fn gvisor_pass() -> bool {
    std::env::var("IRONCLAW_RUNTIME").is_ok_and(|v| v == "runsc")
}

/// Whether the session's container runs under gVisor: the suite's second pass
/// (`IRONCLAW_RUNTIME=runsc`), or `auto` on an engine that has it. Some attacks meet another
/// wall there; the tests that differ say how.
pub async fn under_gvisor(env: &TestEnv, session: &str) -> bool {
    env.sandbox
        .container_of(&name(session))
        .await
        .expect("find container")
        .is_some_and(|c| c.runtime == ironclaw_sandbox::policy::Runtime::Runsc)
}

pub fn name(session: &str) -> SessionName {
    SessionName::new(session).expect("valid session name")
}

/// Everything one execution produced.
#[derive(Debug)]
pub struct Output {
    pub result: ExecResult,
    /// Stdout exactly as streamed in events (not the capped `result.stdout`).
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
    /// `(container_started, interpreter_restarted)` from the `Started` event.
    pub started: Option<(bool, bool)>,
    /// The hosts the network policy refused, from `NetworkBlocked` events, in order.
    pub refusals: Vec<ironclaw_sandbox::network::Refusal>,
}

/// Runs code, streaming events into `on_event`; the library's own error is returned as is.
pub async fn exec_with(
    env: &TestEnv,
    session: &str,
    request: &ExecRequest,
    cancel: &CancellationToken,
    on_event: &mut (dyn FnMut(ExecEvent) + Send),
) -> Result<ExecResult, Error> {
    let options = SessionOptions::default();
    let session_name = name(session);
    let fut = env
        .sandbox
        .exec(&session_name, &options, request, on_event, cancel);
    tokio::time::timeout(EXEC_GUARD, fut)
        .await
        .unwrap_or_else(|_| panic!("execution in {session:?} hung for {EXEC_GUARD:?}"))
}

/// Runs code and collects its output; the library's error is returned as is.
pub async fn try_exec(
    env: &TestEnv,
    session: &str,
    request: &ExecRequest,
    cancel: &CancellationToken,
) -> Result<Output, Error> {
    try_exec_on(&env.sandbox, session, request, cancel).await
}

/// [`try_exec`] through any client, e.g. a second [`Sandbox`] on the same folders.
pub async fn try_exec_on(
    sandbox: &Sandbox,
    session: &str,
    request: &ExecRequest,
    cancel: &CancellationToken,
) -> Result<Output, Error> {
    let mut stdout = Vec::new();
    let mut stderr = Vec::new();
    let mut started = None;
    let mut refusals = Vec::new();
    let mut on_event = |e: ExecEvent| match e {
        ExecEvent::Stdout(b) => stdout.extend_from_slice(&b),
        ExecEvent::Stderr(b) => stderr.extend_from_slice(&b),
        ExecEvent::Started {
            container_started,
            interpreter_restarted,
        } => started = Some((container_started, interpreter_restarted)),
        ExecEvent::Resources(_) => {}
        ExecEvent::NetworkBlocked(r) => refusals.push(r),
    };
    let options = SessionOptions::default();
    let session_name = name(session);
    let fut = sandbox.exec(&session_name, &options, request, &mut on_event, cancel);
    let result = tokio::time::timeout(EXEC_GUARD, fut)
        .await
        .unwrap_or_else(|_| panic!("execution in {session:?} hung for {EXEC_GUARD:?}"))?;
    Ok(Output {
        result,
        stdout,
        stderr,
        started,
        refusals,
    })
}

/// Runs code that must run (an `Err` from the library fails the test).
pub async fn exec(env: &TestEnv, session: &str, request: ExecRequest) -> Output {
    try_exec(env, session, &request, &CancellationToken::new())
        .await
        .unwrap_or_else(|e| panic!("exec in {session:?} failed: {e}\nrequest: {request:?}"))
}

/// The plain helper: run `code` in `lang` and return the result.
pub async fn run(env: &TestEnv, session: &str, lang: Language, code: &str) -> ExecResult {
    exec(env, session, ExecRequest::new(lang, code))
        .await
        .result
}

pub async fn py(env: &TestEnv, session: &str, code: &str) -> ExecResult {
    run(env, session, Language::Python, code).await
}

pub async fn sh(env: &TestEnv, session: &str, code: &str) -> ExecResult {
    run(env, session, Language::Shell, code).await
}

/// Asserts a clean exit and returns stdout, trimmed.
#[track_caller]
pub fn ok(r: &ExecResult) -> String {
    assert_eq!(
        r.exit_code, 0,
        "expected exit 0\nstdout: {}\nstderr: {}",
        r.stdout, r.stderr
    );
    r.stdout.trim().to_string()
}

/// A file that is removed again when the guard drops (also on panic).
pub struct RemoveOnDrop(pub PathBuf);

impl Drop for RemoveOnDrop {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// The `ironclaw` binary: `IRONCLAW_BIN`, or the workspace's own build, brought up to date once
/// per process (a no-op when it already is).
pub fn cli_bin() -> PathBuf {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| {
        if let Some(bin) = std::env::var_os("IRONCLAW_BIN").filter(|v| !v.is_empty()) {
            return PathBuf::from(bin);
        }
        let workspace = Path::new(env!("CARGO_MANIFEST_DIR"))
            .parent()
            .expect("workspace root")
            .to_path_buf();
        // This test binary lives in <target>/<profile>/deps/; the CLI goes to <target>/<profile>/.
        let profile_dir = std::env::current_exe()
            .ok()
            .and_then(|exe| Some(exe.parent()?.parent()?.to_path_buf()))
            .unwrap_or_else(|| workspace.join("target/debug"));
        let release = profile_dir.file_name().is_some_and(|n| n == "release");
        let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
        // `cargo SUBCOMMAND [--release] ARGS...` in the workspace, into this test's target dir.
        let cargo_ok = |subcommand: &str, args: &[&str]| {
            let mut build = Command::new(&cargo);
            build.current_dir(&workspace).arg(subcommand);
            if release {
                build.arg("--release");
            }
            build.args(["--quiet", "-p", "ironclaw-cli"]).args(args);
            if let Some(target) = profile_dir.parent() {
                build.env("CARGO_TARGET_DIR", target);
            }
            build.status().map(|s| s.success()).unwrap_or(false)
        };
        // As scripts/setup.sh builds them (`build_static_front`, scripts/lib.sh): the front
        // linked statically where glibc is the C library. Each command alone keeps its own
        // build fresh, so test processes after the first find nothing to do.
        let built = if cfg!(all(target_os = "linux", target_env = "gnu")) {
            cargo_ok("build", &["--bin", "ironclaw-full"])
                && cargo_ok(
                    "rustc",
                    &[
                        "--bin",
                        "ironclaw",
                        "--",
                        "-C",
                        "target-feature=+crt-static",
                    ],
                )
        } else {
            cargo_ok("build", &[])
        };
        let bin = profile_dir.join("ironclaw");
        if !built {
            assert!(
                bin.exists(),
                "cannot build the CLI (`cargo build -p ironclaw-cli`) and {} does not exist; \
                 set IRONCLAW_BIN",
                bin.display()
            );
            eprintln!(
                "warning: `cargo build -p ironclaw-cli` failed; testing the existing {}",
                bin.display()
            );
        }
        bin
    })
    .clone()
}

/// `/proc/self/status`'s VmHWM (peak resident memory) of this process, in bytes.
pub fn peak_rss_bytes() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").expect("/proc/self/status");
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .map(|kb| kb * 1024)
        .expect("VmHWM in /proc/self/status")
}
