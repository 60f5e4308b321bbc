//! A private Docker engine for the faults that must not touch the shared one: killing the
//! daemon and deleting the sandbox image. Its own `dockerd` (with its own managed containerd)
//! keeps everything under one temp folder: data root, exec root, pid file and unix socket, no
//! bridge and no iptables rules, so killing it or emptying it cannot disturb other engines or
//! other tests on this machine.
//!
//! The sandbox image gets there the way an offline user would move it: `image::export` from the
//! shared engine to an archive (made once per image and reused), `image::import` into this one.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use bollard::Docker;
use ironclaw_sandbox::docker::{connect_to, resolve_endpoint, EnvSnapshot};
use ironclaw_sandbox::policy::Policy;
use ironclaw_sandbox::{Paths, Sandbox};
use ironclaw_tests::TestEnv;
use tempfile::TempDir;

/// How long the private engine may take to answer after it was started. A hang detector, not
/// an assertion about speed: a healthy daemon answers in a few seconds even on a loaded host.
const START_GUARD: Duration = Duration::from_secs(90);

pub struct PrivateEngine {
    // Short path: the managed containerd's socket must fit in a unix socket address.
    dir: TempDir,
    daemon: Option<Child>,
    pub docker: Docker,
}

impl PrivateEngine {
    /// Starts a private engine holding the sandbox image this build needs. `shared` is any
    /// environment on the shared engine (it makes sure the image exists there).
    pub async fn with_sandbox_image(shared: &TestEnv) -> Self {
        let dir = tempfile::Builder::new()
            .prefix("icf-")
            .tempdir_in("/tmp")
            .expect("temp dir for the private engine");
        let daemon = spawn_daemon(dir.path());
        let docker = wait_until_ready(dir.path()).await;
        let engine = Self {
            docker,
            dir,
            daemon: Some(daemon),
        };
        let archive = image_archive(shared).await;
        let tags = ironclaw_sandbox::image::import(&engine.docker, &archive, &mut |_| {})
            .await
            .expect("import the sandbox image into the private engine");
        let tag = ironclaw_sandbox::image::spec().tag;
        assert!(tags.contains(&tag), "imported {tags:?}, wanted {tag}");
        engine
    }

    /// `unix://…` address of this engine, as `DOCKER_HOST` takes it.
    pub fn host(&self) -> String {
        host_of(self.dir.path())
    }

    /// A sandbox client of `paths` on this engine (what the app makes at start-up).
    pub fn sandbox(&self, paths: &Paths) -> Sandbox {
        let policy = Policy::load(paths).expect("policy");
        Sandbox::new(self.docker.clone(), paths.clone(), policy)
    }

    /// Starts `dockerd` again and waits until it answers through IronClaw's own connect path.
    pub async fn start(&mut self) {
        assert!(self.daemon.is_none(), "the private engine already runs");
        self.daemon = Some(spawn_daemon(self.dir.path()));
        self.docker = wait_until_ready(self.dir.path()).await;
    }

    /// `kill -9` of the daemon and of the containerd it manages (a crashed engine, as systemd
    /// would restart it); the container shims, and so the containers' processes, live on.
    pub fn kill_9(&mut self) {
        let mut child = self.daemon.take().expect("the private engine runs");
        child.kill().expect("kill -9 dockerd");
        child.wait().expect("reap dockerd");
        self.kill_containerd();
    }

    /// The managed containerd outlives a killed dockerd (sometimes hung); its pid file says
    /// which process it is.
    fn kill_containerd(&self) {
        let pid_file = self.dir.path().join("x/containerd/containerd.pid");
        let Some(pid) = std::fs::read_to_string(pid_file)
            .ok()
            .and_then(|p| p.trim().parse::<i32>().ok())
        else {
            return;
        };
        let pid = nix::unistd::Pid::from_raw(pid);
        if nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGKILL).is_ok() {
            // Not our child, so no wait(): poll until it is gone.
            for _ in 0..100 {
                if nix::sys::signal::kill(pid, None).is_err() {
                    return;
                }
                std::thread::sleep(Duration::from_millis(50));
            }
        }
    }

    pub fn log_tail(&self) -> String {
        let log = std::fs::read_to_string(self.dir.path().join("dockerd.log")).unwrap_or_default();
        let lines: Vec<&str> = log.lines().collect();
        lines[lines.len().saturating_sub(20)..].join("\n")
    }

    /// A clean stop: containers removed, then SIGTERM and a wait; SIGKILL if it will not go.
    fn stop(&mut self) {
        let mut child = match self.daemon.take() {
            Some(child) => child,
            // Killed and never restarted (the test failed in between): containers may still run
            // under their shims, and only a daemon can remove them, so start one to do it.
            None => {
                let child = spawn_daemon(self.dir.path());
                for _ in 0..300 {
                    let up = Command::new("docker")
                        .env("DOCKER_HOST", self.host())
                        .arg("info")
                        .output()
                        .is_ok_and(|o| o.status.success());
                    if up {
                        break;
                    }
                    std::thread::sleep(Duration::from_millis(100));
                }
                child
            }
        };
        let out = Command::new("docker")
            .env("DOCKER_HOST", self.host())
            .args(["ps", "-aq"])
            .output();
        if let Ok(out) = out {
            let ids: Vec<String> = String::from_utf8_lossy(&out.stdout)
                .split_whitespace()
                .map(str::to_owned)
                .collect();
            if !ids.is_empty() {
                let _ = Command::new("docker")
                    .env("DOCKER_HOST", self.host())
                    .args(["rm", "-fv"])
                    .args(&ids)
                    .output();
            }
        }
        let pid = nix::unistd::Pid::from_raw(child.id() as i32);
        let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM);
        let mut stopped = false;
        for _ in 0..300 {
            if let Ok(Some(_)) = child.try_wait() {
                stopped = true;
                break;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        if !stopped {
            let _ = child.kill();
            let _ = child.wait();
        }
        self.kill_containerd();
    }
}

impl Drop for PrivateEngine {
    fn drop(&mut self) {
        self.stop();
        // A killed daemon's overlay mounts would keep the temp folder from being removed.
        let data = self.dir.path().join("data");
        if let Ok(mounts) = std::fs::read_to_string("/proc/self/mounts") {
            for line in mounts.lines() {
                if let Some(target) = line.split_whitespace().nth(1) {
                    if Path::new(target).starts_with(self.dir.path()) {
                        let _ = Command::new("umount").args(["-l", target]).output();
                    }
                }
            }
        }
        let _ = std::fs::remove_dir_all(data);
    }
}

fn host_of(dir: &Path) -> String {
    format!("unix://{}", dir.join("d.sock").display())
}

fn spawn_daemon(root: &Path) -> Child {
    let log = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(root.join("dockerd.log"))
        .expect("dockerd log");
    Command::new("dockerd")
        .arg("--data-root")
        .arg(root.join("data"))
        .arg("--exec-root")
        .arg(root.join("x"))
        .arg("--pidfile")
        .arg(root.join("d.pid"))
        .arg("--host")
        .arg(host_of(root))
        .args(["--bridge=none", "--iptables=false", "--ip-masq=false"])
        .stdin(Stdio::null())
        .stdout(log.try_clone().expect("log handle"))
        .stderr(log)
        .spawn()
        .expect("start a private dockerd (is dockerd installed? run scripts/setup.sh)")
}

async fn wait_until_ready(root: &Path) -> Docker {
    let host = host_of(root);
    let deadline = tokio::time::Instant::now() + START_GUARD;
    loop {
        let snapshot = EnvSnapshot {
            docker_host: Some(host.clone()),
            ..EnvSnapshot::default()
        };
        let endpoint = resolve_endpoint(&snapshot).expect("endpoint");
        match connect_to(endpoint).await {
            Ok(engine) => return engine.docker,
            Err(e) if tokio::time::Instant::now() > deadline => {
                let log = std::fs::read_to_string(root.join("dockerd.log")).unwrap_or_default();
                panic!("the private dockerd did not answer within {START_GUARD:?}: {e}\n{log}")
            }
            Err(_) => tokio::time::sleep(Duration::from_millis(200)).await,
        }
    }
}

/// The sandbox image of this build as an archive, exported from the shared engine once and
/// reused by every test process (a file lock keeps parallel tests from exporting it twice).
async fn image_archive(shared: &TestEnv) -> PathBuf {
    let tag = ironclaw_sandbox::image::spec().tag;
    let short = tag.rsplit(':').next().unwrap_or("image").to_string();
    let archive = std::env::temp_dir().join(format!("ironclaw-faults-{short}.tar"));
    let lock_path = std::env::temp_dir().join("ironclaw-faults-image.lock");
    let lock = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&lock_path)
        .expect("lock file");
    let lock = tokio::task::spawn_blocking(move || {
        nix::fcntl::Flock::lock(lock, nix::fcntl::FlockArg::LockExclusive)
            .map_err(|(_, e)| e)
            .expect("lock")
    })
    .await
    .expect("lock task");
    if !archive.exists() {
        ironclaw_sandbox::image::export(shared.docker(), &tag, &archive, &mut |_| {})
            .await
            .expect("export the sandbox image from the shared engine");
    }
    drop(lock);
    archive
}
