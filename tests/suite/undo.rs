//! Undo any run: each run's changes are recorded from outside the sandbox, and `ironclaw undo`
//! puts back exactly the workspace from before it, against the real engine.

use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use ironclaw_tests::*;
use pretty_assertions::assert_eq;
use serde_json::Value;

/// Everything the workspace holds, exactly: kind, permission bits, bytes or link target.
fn tree(root: &Path) -> BTreeMap<String, String> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<String, String>) {
        let mut names: Vec<_> = std::fs::read_dir(dir)
            .expect("read_dir")
            .map(|e| e.expect("entry").path())
            .collect();
        names.sort();
        for path in names {
            let rel = path
                .strip_prefix(root)
                .expect("inside")
                .display()
                .to_string();
            let meta = std::fs::symlink_metadata(&path).expect("lstat");
            let mode = meta.permissions().mode() & 0o7777;
            let what = if meta.file_type().is_symlink() {
                format!(
                    "link -> {}",
                    std::fs::read_link(&path).expect("readlink").display()
                )
            } else if meta.is_dir() {
                walk(root, &path, out);
                format!("dir {mode:o}")
            } else {
                format!("file {mode:o} {:?}", std::fs::read(&path).expect("read"))
            };
            out.insert(rel, what);
        }
    }
    let mut out = BTreeMap::new();
    walk(root, root, &mut out);
    out
}

fn json_exec(env: &TestEnv, session: &str, code: &str) -> Value {
    let out = env
        .cli()
        .args([
            "exec",
            "--session",
            session,
            "--lang",
            "shell",
            "--json",
            code,
        ])
        .output()
        .expect("run ironclaw exec");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("one JSON result")
}

fn changes(result: &Value) -> Vec<(String, String)> {
    result["changes"]
        .as_array()
        .expect("changes")
        .iter()
        .map(|c| {
            (
                c["path"].as_str().expect("path").to_owned(),
                c["change"].as_str().expect("change").to_owned(),
            )
        })
        .collect()
}

fn undo(env: &TestEnv, args: &[&str]) -> (i32, Value) {
    let out = env
        .cli()
        .args(["undo", "--json"])
        .args(args)
        .output()
        .expect("run ironclaw undo");
    let code = out.status.code().unwrap_or(-1);
    let value = serde_json::from_slice(&out.stdout).unwrap_or_else(|_| {
        panic!(
            "undo printed no JSON: {}",
            String::from_utf8_lossy(&out.stderr)
        )
    });
    (code, value)
}

#[tokio::test]
async fn a_runs_changes_are_listed_and_undo_puts_back_every_byte_mode_and_link() {
    let env = TestEnv::new().await;
    let setup = json_exec(
        &env,
        "u",
        "mkdir -p data/empty && printf 'a,b\\n1,2\\n' > data/sales.csv && echo keep > notes.txt \
         && echo hi > run.sh && ln -s data/sales.csv latest",
    );
    assert!(setup["run_id"].is_string(), "{setup}");
    let ws = env.workspace("u");
    let before = tree(&ws);
    assert_eq!(before.len(), 6, "{before:?}");

    // The mistake: an in-place rewrite, a delete, a chmod, a binary file, a removed empty
    // folder, a link swapped to a host file, and a link to a host folder.
    let run = json_exec(
        &env,
        "u",
        "printf 'a,b\\n1,999\\n' > data/sales.csv; rm notes.txt; chmod 755 run.sh; \
         printf '\\000\\377' > new.bin; rmdir data/empty; ln -sfn /etc/passwd latest; \
         mkdir out && ln -s /etc out/etc",
    );
    let run_id = run["run_id"].as_str().expect("run_id").to_owned();
    let strs = |v: &[(&str, &str)]| -> Vec<(String, String)> {
        v.iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect()
    };
    assert_eq!(
        changes(&run),
        strs(&[
            ("data/empty", "deleted"),
            ("data/sales.csv", "modified"),
            ("latest", "modified"),
            ("new.bin", "added"),
            ("notes.txt", "deleted"),
            ("out", "added"),
            ("out/etc", "added"),
            ("run.sh", "mode"),
        ])
    );
    assert_ne!(tree(&ws), before, "the run changed the workspace");

    let (code, undone) = undo(&env, &["--session", "u"]);
    assert_eq!(code, 0, "{undone}");
    assert_eq!(undone["run_id"], Value::String(run_id));
    assert_eq!(
        tree(&ws),
        before,
        "byte for byte, modes, links and the empty folder"
    );

    // The sandbox sees the restored files, and its interpreter state is its own business.
    assert_eq!(ok(&sh(&env, "u", "cat data/sales.csv").await), "a,b\n1,2");
}

#[tokio::test]
async fn undoing_an_earlier_run_names_the_later_run_and_changes_nothing_unless_forced() {
    let env = TestEnv::new().await;
    let first = json_exec(&env, "c", "echo first > result.txt");
    let first_id = first["run_id"].as_str().expect("run_id").to_owned();
    json_exec(&env, "c", "echo second > result.txt");
    let ws = env.workspace("c");
    let now = tree(&ws);

    let (code, conflict) = undo(&env, &["--session", "c", &first_id]);
    assert_eq!(code, 2, "{conflict}");
    assert_eq!(conflict["paths"], serde_json::json!(["result.txt"]));
    assert_eq!(conflict["later_runs"].as_array().map(Vec::len), Some(1));
    assert_eq!(tree(&ws), now, "a conflict changes nothing");

    let (code, forced) = undo(&env, &["--session", "c", &first_id, "--force"]);
    assert_eq!(code, 0, "{forced}");
    assert!(!ws.join("result.txt").exists(), "both runs taken back");
}

/// Names in the undo refusal are the sandbox's to choose: a name built to erase the refusal
/// and draw a success line in its place (and set the title, and the clipboard) reaches the
/// terminal inert, as every other line does.
#[tokio::test]
async fn the_undo_refusal_shows_a_crafted_name_inert() {
    let env = TestEnv::new().await;
    // ESC[2K ESC[1A erases the line above; OSC 0 sets the title; OSC 52 the clipboard.
    let crafted = r#"n=$(printf 'x\033[2K\033[1A\033[2Kironclaw: undid run: 1 path(s) put back\033]0;t\007\033]52;c;ZXZpbA==\007'); echo one > "$n""#;
    let first = json_exec(&env, "n", crafted);
    let first_id = first["run_id"].as_str().expect("run_id").to_owned();
    json_exec(&env, "n", r#"for f in x*; do echo two > "$f"; done"#);
    // The attack is in place: the file's name holds the escape sequences.
    let names: Vec<Vec<u8>> = std::fs::read_dir(env.workspace("n"))
        .expect("ws")
        .map(|e| {
            std::os::unix::ffi::OsStrExt::as_bytes(e.expect("entry").file_name().as_os_str())
                .to_vec()
        })
        .collect();
    assert!(names.iter().any(|n| n.contains(&0x1b)), "{names:?}");
    let out = env
        .cli()
        .args(["undo", "--session", "n", &first_id])
        .output()
        .expect("run ironclaw undo");
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("nothing changed"), "{stderr}");
    assert!(
        !stderr.contains('\u{1b}') && !stderr.contains('\u{7}'),
        "{stderr:?}"
    );
    assert!(stderr.contains("⟨U+001B⟩[2K"), "{stderr}");
}

#[tokio::test]
async fn the_record_is_out_of_the_sandboxes_reach() {
    let env = TestEnv::new().await;
    json_exec(&env, "r", "echo v1 > secret.txt");
    let record = env.paths.data_dir.join("checkpoints/r");
    assert!(
        record.join("objects").is_dir(),
        "the record exists on the host"
    );
    assert!(!record.starts_with(env.workspace("r")));
    // The copy of secret.txt is stored under the name of its hash. The hash is computed inside
    // the sandbox (so the search is proven able to name it), and no such file is anywhere the
    // code can look.
    let stored: Vec<String> = std::fs::read_dir(record.join("objects"))
        .expect("objects")
        .flatten()
        .filter(|e| e.file_name() != "tmp")
        .flat_map(|shard| {
            let prefix = shard.file_name().to_string_lossy().into_owned();
            std::fs::read_dir(shard.path())
                .expect("shard")
                .flatten()
                .map(move |e| format!("{prefix}{}", e.file_name().to_string_lossy()))
        })
        .collect();
    let r = sh(
        &env,
        "r",
        r#"h=$(printf 'v1\n' | sha256sum | cut -c1-64); echo "$h";
find / -path /proc -prune -o -path /sys -prune -o \( -name "$(echo "$h" | cut -c3-)" -o -name secret.txt \) -print 2>/dev/null; echo done"#,
    )
    .await;
    let out = ok(&r);
    let mut lines = out.lines();
    let hash = lines.next().expect("the hash").to_owned();
    assert!(stored.contains(&hash), "the host keeps {hash}: {stored:?}");
    // The same search finds the workspace's own file, so it really looked everywhere the code
    // can; the stored copy is nowhere among what it found.
    assert_eq!(
        lines.collect::<Vec<_>>(),
        ["/workspace/secret.txt", "done"],
        "found inside the sandbox: {out}"
    );
}

#[tokio::test]
async fn undo_keep_in_sandbox_yaml_caps_the_copies_and_a_bigger_run_is_put_back_without_a_record() {
    let env = TestEnv::new().await;
    std::fs::write(env.paths.user_policy_file(), "undo: { keep: 16k }\n").expect("sandbox.yaml");
    let small = json_exec(&env, "k", "head -c 1000 /dev/zero > small.bin");
    assert!(small["run_id"].is_string(), "{small}");
    let big = json_exec(
        &env,
        "k",
        "rm small.bin; head -c 65536 /dev/urandom > big.bin",
    );
    // Its changes pass the cap, so they are not recorded: never "no changes", and the run
    // stays linked to the state before it.
    assert_eq!(big["changes"], Value::Null, "{big}");
    let why = big["changes_unknown"]
        .as_str()
        .expect("why its changes are not recorded");
    assert!(why.contains("cap"), "{why}");
    let run = big["run_id"]
        .as_str()
        .expect("still linked to its before-state");
    assert!(
        env.workspace("k").join("big.bin").exists(),
        "the run itself still ran"
    );
    let (code, undone) = undo(&env, &["--session", "k", run]);
    assert_eq!(code, 0, "{undone}");
    assert!(!env.workspace("k").join("big.bin").exists());
    assert_eq!(
        std::fs::read(env.workspace("k").join("small.bin")).expect("put back"),
        vec![0u8; 1000]
    );
}

#[tokio::test]
async fn undo_keep_total_drops_the_oldest_runs_of_any_conversation_first() {
    let env = TestEnv::new().await;
    std::fs::write(env.paths.user_policy_file(), "undo: { keep_total: 100k }\n")
        .expect("sandbox.yaml");
    // Each run replaces 16 KiB with new random bytes: the old bytes stay for Undo.
    let rewrite = "head -c 16384 /dev/urandom > result.bin";
    let older: Vec<String> = (0..3)
        .map(|_| {
            json_exec(&env, "older", rewrite)["run_id"]
                .as_str()
                .expect("undoable")
                .to_owned()
        })
        .collect();
    std::thread::sleep(std::time::Duration::from_millis(50));
    let newer: Vec<String> = (0..4)
        .map(|_| {
            json_exec(&env, "newer", rewrite)["run_id"]
                .as_str()
                .expect("undoable")
                .to_owned()
        })
        .collect();
    let kept = du(&env.paths.checkpoints_dir());
    assert!(kept <= 100 << 10, "copies kept: {kept}");

    // The older conversation's first run gave way; its last one and every newer run did not.
    let out = env
        .cli()
        .args(["undo", "--session", "older", &older[0]])
        .output()
        .expect("run ironclaw undo");
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && said.contains("can no longer be undone"),
        "{said}"
    );
    let (code, undone) = undo(&env, &["--session", "newer", &newer[0], "--force"]);
    assert_eq!(code, 0, "{undone}");
    let (code, undone) = undo(&env, &["--session", "older", &older[2]]);
    assert_eq!(code, 0, "{undone}");
}

/// Bytes of the undo copies under the checkpoints folder (every conversation's `objects`).
fn du(dir: &Path) -> u64 {
    let mut total = 0;
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).expect("read_dir").flatten() {
            let meta = entry.metadata().expect("metadata");
            if meta.is_dir() {
                stack.push(entry.path());
            } else if entry
                .path()
                .components()
                .any(|c| c.as_os_str() == "objects")
                && !entry.path().components().any(|c| c.as_os_str() == "tmp")
            {
                total += meta.len();
            }
        }
    }
    total
}
