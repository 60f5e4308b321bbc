//! Hostile names: session names that try to leave the data folder, and file names in the
//! workspace that are legal on Linux but awkward for any tool that handles them.

use std::os::unix::ffi::OsStrExt;

use ironclaw_tests::*;

use super::failed;

/// Input: session names with `..`, `/`, a newline, 300 characters, a leading `-`, nothing, and
/// invalid UTF-8, given to `ironclaw workspace` and `ironclaw exec --session`. Expected: each is
/// refused with the naming rule; no folder appears anywhere, and nothing runs.
#[tokio::test]
async fn hostile_session_names_are_refused_and_nothing_is_made_anywhere() {
    let env = TestEnv::new().await;
    let before = tree(env.root());
    let long = "a".repeat(300);
    let names: Vec<std::ffi::OsString> = [
        "../escape",
        "..",
        ".",
        "a/b",
        "/etc",
        "a\nb",
        long.as_str(),
        "-rf",
        "",
        "na\u{202e}me",
    ]
    .iter()
    .map(|s| s.into())
    .chain([std::ffi::OsStr::from_bytes(b"bad\xffname").to_os_string()])
    .collect();
    for n in &names {
        let out = env
            .cli()
            .args(["workspace", "--"])
            .arg(n)
            .output()
            .expect("ironclaw workspace");
        let stderr = failed(&out);
        assert!(
            stderr.contains("invalid session name") || stderr.contains("invalid UTF-8"),
            "{n:?}: {stderr}"
        );
        let out = env
            .cli()
            .arg("exec")
            .arg({
                let mut flag = std::ffi::OsString::from("--session=");
                flag.push(n);
                flag
            })
            .arg("print('ran')")
            .output()
            .expect("ironclaw exec");
        let stderr = failed(&out);
        assert!(
            stderr.contains("invalid session name") || stderr.contains("invalid UTF-8"),
            "{n:?}: {stderr}"
        );
        assert!(!super::text(&out.stdout).contains("ran"), "{n:?}");
    }
    assert_eq!(tree(env.root()), before, "a refused name made files");
    assert!(!env.root().parent().expect("parent").join("escape").exists());
    let containers = ironclaw_sandbox::container::list(env.docker(), &env.instance)
        .await
        .expect("list");
    assert!(containers.is_empty(), "{containers:?}");
}

/// Input: code makes files named with a newline, an escape sequence, invalid UTF-8, `...`, a
/// leading `-`, a leading space and 255 bytes. Expected: the host sees exactly those names,
/// the next run works, and removing the session with its workspace deletes them all and
/// nothing else.
#[tokio::test]
async fn odd_file_names_in_the_workspace_are_kept_exactly_and_purged_cleanly() {
    let env = TestEnv::new().await;
    let code = r#"
import os
names = [b"new\nline.txt", b"\x1b[31mred", b"\xff\xfe.bin", b"...", b"-rf", b" lead", b"n" * 255]
for n in names:
    with open(os.path.join(b"/workspace", n), "wb") as f:
        f.write(b"x")
print(len(os.listdir(b"/workspace")))
"#;
    let out = ok(&py(&env, "s", code).await);
    let made: usize = out.parse().expect("a count");
    assert!(made >= 7, "{out}");

    let ws = env.workspace("s");
    let mut seen: Vec<Vec<u8>> = std::fs::read_dir(&ws)
        .expect("workspace")
        .flatten()
        .map(|e| e.file_name().as_bytes().to_vec())
        .collect();
    seen.sort();
    for want in [
        b"new\nline.txt".to_vec(),
        b"\x1b[31mred".to_vec(),
        b"\xff\xfe.bin".to_vec(),
        b"...".to_vec(),
        b"-rf".to_vec(),
        b" lead".to_vec(),
        vec![b'n'; 255],
    ] {
        assert!(
            seen.contains(&want),
            "{:?} missing",
            String::from_utf8_lossy(&want)
        );
    }
    assert_eq!(
        ok(&py(&env, "s", "print('still fine')").await),
        "still fine"
    );

    let sibling = ws.parent().expect("workspaces folder").join("keep-me");
    std::fs::write(&sibling, "kept").expect("sibling");
    let out = env
        .cli()
        .args(["sandbox", "rm", "s", "--purge"])
        .output()
        .expect("ironclaw sandbox rm --purge");
    assert!(out.status.success(), "{}", super::text(&out.stderr));
    assert!(!ws.exists(), "workspace purged");
    assert_eq!(std::fs::read_to_string(&sibling).expect("sibling"), "kept");
}

/// Every path under `dir`, sorted (to compare before and after).
fn tree(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            if e.file_type().is_ok_and(|t| t.is_dir()) {
                stack.push(p.clone());
            }
            out.push(p);
        }
    }
    out.sort();
    out
}
