//! `exec --workspace DIR` while IronClaw runs as root (as it does here): a person's folder is
//! used as its owner, never handed to the sandbox's own user, and a root-owned folder is
//! refused. Nothing about the folder changes, during the session or after it.

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::Path;

use ironclaw_sandbox::session::{Registry, SessionName};
use ironclaw_tests::TestEnv;

use super::{failed, text};

fn owner(path: &Path) -> (u32, u32, u32) {
    let m = std::fs::metadata(path).expect("metadata");
    (m.uid(), m.gid(), m.mode() & 0o7777)
}

fn require_root() {
    assert!(
        nix::unistd::geteuid().is_root(),
        "these cases are about IronClaw running as root: run the suite as root"
    );
}

#[tokio::test]
async fn a_persons_workspace_folder_is_used_as_its_owner_and_is_never_chowned() {
    require_root();
    let env = TestEnv::new().await;
    let host = tempfile::tempdir().expect("tempdir");
    let folder = host.path().join("mine");
    std::fs::create_dir(&folder).expect("mkdir");
    std::os::unix::fs::chown(&folder, Some(4321), Some(4322)).expect("chown");
    std::fs::set_permissions(&folder, std::fs::Permissions::from_mode(0o750)).expect("chmod");
    let before = owner(&folder);

    let out = env
        .cli()
        .args(["exec", "--session", "own", "--workspace"])
        .arg(&folder)
        .arg("import os\nopen('/workspace/made.txt', 'w').write('x')\nprint(os.getuid(), os.getgid())")
        .output()
        .expect("run ironclaw exec");
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stdout).trim(),
        "4321 4322",
        "runs as the folder's owner"
    );
    assert_eq!(owner(&folder), before, "the folder itself is unchanged");
    let made = owner(&folder.join("made.txt"));
    assert_eq!(
        (made.0, made.1),
        (4321, 4322),
        "what the code writes is the owner's"
    );

    let out = env
        .cli()
        .args(["sandbox", "rm", "own"])
        .output()
        .expect("sandbox rm");
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(
        owner(&folder),
        before,
        "still the person's after the session is gone"
    );
    assert!(
        folder.join("made.txt").exists(),
        "rm without --purge keeps the files"
    );
}

#[tokio::test]
async fn a_root_owned_workspace_folder_is_refused_and_left_exactly_as_it_was() {
    require_root();
    let env = TestEnv::new().await;
    let host = tempfile::tempdir().expect("tempdir");
    // Root's folder, and root's folder with a regular group: neither may be given away.
    let plain = host.path().join("roots");
    let grouped = host.path().join("roots-group");
    for (dir, gid) in [(&plain, 0), (&grouped, 4322)] {
        std::fs::create_dir(dir).expect("mkdir");
        std::fs::write(dir.join("keep.txt"), "root's").expect("file");
        std::os::unix::fs::chown(dir, Some(0), Some(gid)).expect("chown");
    }
    for (n, dir) in [&plain, &grouped].into_iter().enumerate() {
        let before = owner(dir);
        let session = format!("root{n}");
        let out = env
            .cli()
            .args(["exec", "--session", &session, "--workspace"])
            .arg(dir)
            .arg("import os; os.remove('/workspace/keep.txt'); print('ran')")
            .output()
            .expect("run ironclaw exec");
        let stderr = failed(&out);
        assert!(stderr.contains("belongs to root"), "{stderr}");
        assert!(stderr.contains("never changes who owns"), "{stderr}");
        assert!(!text(&out.stdout).contains("ran"));
        assert_eq!(owner(dir), before, "{}", dir.display());
        assert!(dir.join("keep.txt").exists());
        assert!(env.container_id(&session).await.is_none(), "nothing ran");
        let name = SessionName::new(session).expect("name");
        assert!(Registry::new(env.paths.clone())
            .get(&name)
            .expect("registry")
            .is_none());
    }
}
