//! A real non-root host user runs the CLI: code runs as that user's UID/GID, so what it writes
//! in the workspace is theirs on the host.

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::Command;

use ironclaw_tests::*;
use nix::unistd::User;
use pretty_assertions::assert_eq;

/// A throwaway host account in the docker group, deleted again on drop.
struct HostUser {
    name: String,
    uid: u32,
    gid: u32,
    created: bool,
}

impl HostUser {
    fn create() -> Self {
        let name = format!("icl-test-{}", std::process::id());
        let docker_group = nix::unistd::Group::from_name("docker")
            .expect("group lookup")
            .expect("a `docker` group must own the Docker socket for this test");
        let mut created = false;
        if User::from_name(&name).expect("user lookup").is_none() {
            let status = Command::new("useradd")
                .args(["-m", "-G", &docker_group.name, &name])
                .status()
                .expect("run useradd");
            assert!(status.success(), "useradd {name} failed");
            created = true;
        } else {
            let status = Command::new("usermod")
                .args(["-aG", &docker_group.name, &name])
                .status()
                .expect("run usermod");
            assert!(status.success(), "usermod {name} failed");
        }
        let user = User::from_name(&name)
            .expect("lookup")
            .expect("the user now exists");
        Self {
            name,
            uid: user.uid.as_raw(),
            gid: user.gid.as_raw(),
            created,
        }
    }

    fn run(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new("runuser");
        cmd.args(["-u", &self.name, "--"]).args(args);
        cmd
    }
}

impl Drop for HostUser {
    fn drop(&mut self) {
        if self.created {
            let _ = Command::new("userdel").args(["-r", &self.name]).output();
        }
    }
}

/// Removes the containers of an instance on drop (the CLI made them, not a `TestEnv`).
struct Reaper(String);

impl Drop for Reaper {
    fn drop(&mut self) {
        remove_instance_containers(&self.0);
    }
}

fn chown(path: &Path, user: &HostUser) {
    std::os::unix::fs::chown(path, Some(user.uid), Some(user.gid)).expect("chown");
}

#[test]
fn non_root_host_user_owns_the_files_code_writes() {
    if !nix::unistd::geteuid().is_root() {
        // Never silently where it matters: CI runs as root (scripts/test.sh).
        assert!(
            std::env::var_os("CI").is_none(),
            "CI must run this test as root: creating a host user needs it"
        );
        eprintln!("skipped: creating a host user needs root");
        return;
    }
    let user = HostUser::create();
    let root = tempfile::Builder::new()
        .prefix("ironclaw-e2e-")
        .tempdir()
        .expect("temp dir");
    std::fs::set_permissions(root.path(), std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let data = root.path().join("data");
    let config = root.path().join("config");
    for dir in [&data, &config] {
        std::fs::create_dir(dir).expect("mkdir");
        chown(dir, &user);
    }
    let _reaper = Reaper(Paths::at(&data, &config).instance_id());

    // The user must be able to execute the binary; /work may not be open to everyone.
    let mut bin = cli_bin();
    let reachable = user
        .run(&["test", "-x", &bin.display().to_string()])
        .status()
        .is_ok_and(|s| s.success());
    if !reachable {
        let copy = root.path().join("ironclaw");
        std::fs::copy(&bin, &copy).expect("copy the binary");
        std::fs::set_permissions(&copy, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        bin = copy;
    }
    let ironclaw = |args: &[&str]| {
        let data_var = format!("IRONCLAW_DATA_DIR={}", data.display());
        let config_var = format!("IRONCLAW_CONFIG_DIR={}", config.display());
        let bin = bin.display().to_string();
        let mut argv: Vec<&str> = vec!["env", &data_var, &config_var, &bin];
        argv.extend_from_slice(args);
        let out = user.run(&argv).output().expect("runuser");
        assert!(
            out.status.success(),
            "{args:?} as {}: {:?}\nstdout: {}\nstderr: {}",
            user.name,
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    };

    ironclaw(&[
        "exec",
        "--session",
        "s",
        r#"open("/workspace/f.txt","w").write("x")"#,
    ]);
    let file: PathBuf = data.join("workspaces/s/f.txt");
    let meta = std::fs::metadata(&file).expect("the file is on the host");
    assert_eq!((meta.uid(), meta.gid()), (user.uid, user.gid));
    let ws = std::fs::metadata(data.join("workspaces/s")).expect("workspace");
    assert_eq!(
        ws.uid(),
        user.uid,
        "the workspace is the user's, not root's"
    );

    let ids = ironclaw(&["exec", "--session", "s", "--lang", "shell", "id -u; id -g"]);
    assert_eq!(ids, format!("{}\n{}\n", user.uid, user.gid));
}
