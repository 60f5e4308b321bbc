use std::collections::BTreeMap;
use std::os::unix::fs::{symlink, PermissionsExt};
use std::path::Path;
use std::sync::Arc;

use pretty_assertions::assert_eq;

use super::*;

/// Everything a workspace holds, exactly: kind, permission bits, bytes or link target.
fn tree(root: &Path) -> BTreeMap<String, String> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<String, String>) {
        let mut names: Vec<_> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        names.sort();
        for path in names {
            let rel = path.strip_prefix(root).unwrap().display().to_string();
            let meta = std::fs::symlink_metadata(&path).unwrap();
            let mode = meta.permissions().mode() & 0o7777;
            let what = if meta.file_type().is_symlink() {
                format!("link -> {}", std::fs::read_link(&path).unwrap().display())
            } else if meta.is_dir() {
                walk(root, &path, out);
                format!("dir {mode:o}")
            } else {
                format!(
                    "file {mode:o} {:?}",
                    String::from_utf8_lossy(&std::fs::read(&path).unwrap())
                )
            };
            out.insert(rel, what);
        }
    }
    let mut out = BTreeMap::new();
    walk(root, root, &mut out);
    out
}

struct Env {
    _tmp: tempfile::TempDir,
    ws: PathBuf,
    record: PathBuf,
    outside: PathBuf,
}

fn env() -> Env {
    let tmp = tempfile::tempdir().unwrap();
    let ws = tmp.path().join("workspace");
    let outside = tmp.path().join("host-secrets");
    std::fs::create_dir_all(ws.join("data/empty")).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(outside.join("secret"), "host file").unwrap();
    std::fs::write(ws.join("data/sales.csv"), "a,b\n1,2\n").unwrap();
    std::fs::write(ws.join("notes.txt"), "keep me").unwrap();
    std::fs::write(ws.join("run.sh"), "echo hi").unwrap();
    symlink("data/sales.csv", ws.join("latest")).unwrap();
    Env {
        record: tmp.path().join("checkpoints"),
        ws,
        outside,
        _tmp: tmp,
    }
}

fn kinds(changes: &[Change]) -> Vec<(String, ChangeKind)> {
    changes
        .iter()
        .map(|c| (c.display_path(), c.change))
        .collect()
}

#[test]
fn a_run_is_listed_exactly_and_undo_puts_back_every_byte_mode_link_and_empty_folder() {
    let e = env();
    let store = Store::open(&e.record, DEFAULT_CAP_BYTES).unwrap();
    let before = tree(&e.ws);
    store.before_run(&e.ws, "r1").unwrap();

    // What code in the sandbox might do: edit, delete, chmod, add, replace a folder with a
    // link to a host folder, swap a link's target, and remove an empty folder.
    std::fs::write(e.ws.join("data/sales.csv"), "a,b\n1,999\n").unwrap();
    std::fs::remove_file(e.ws.join("notes.txt")).unwrap();
    std::fs::set_permissions(e.ws.join("run.sh"), std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::write(e.ws.join("new.bin"), [0u8, 255, 1]).unwrap();
    std::fs::remove_dir(e.ws.join("data/empty")).unwrap();
    std::fs::remove_file(e.ws.join("latest")).unwrap();
    symlink("/etc/passwd", e.ws.join("latest")).unwrap();
    let after_run = tree(&e.ws);
    let changes = store.after_run(&e.ws, "r1").unwrap();
    assert_eq!(
        kinds(&changes),
        [
            ("data/empty".into(), ChangeKind::Deleted),
            ("data/sales.csv".into(), ChangeKind::Modified),
            ("latest".into(), ChangeKind::Modified),
            ("new.bin".into(), ChangeKind::Added),
            ("notes.txt".into(), ChangeKind::Deleted),
            ("run.sh".into(), ChangeKind::Mode),
        ]
    );

    let outcome = store.undo(&e.ws, "r1", false).unwrap();
    assert!(
        matches!(outcome, UndoOutcome::Restored { ref also_undone, .. } if also_undone.is_empty())
    );
    assert_eq!(tree(&e.ws), before);
    assert!(store.is_undone("r1").unwrap());
    assert!(matches!(
        store.undo(&e.ws, "r1", false),
        Err(CheckpointError::AlreadyUndone(_))
    ));

    // And back again: exactly as the run left it, every byte, mode and link.
    store.redo(&e.ws, "r1").unwrap();
    let redone = tree(&e.ws);
    assert_eq!(redone, after_run);
    assert_eq!(
        redone.get("new.bin").map(String::as_str),
        Some("file 644 \"\\0\u{fffd}\\u{1}\"")
    );
    assert!(!redone.contains_key("data/empty") && !redone.contains_key("notes.txt"));
    assert_eq!(
        redone.get("latest").map(String::as_str),
        Some("link -> /etc/passwd")
    );
}

#[test]
fn undo_never_writes_through_a_link_the_code_planted() {
    let e = env();
    let store = Store::open(&e.record, DEFAULT_CAP_BYTES).unwrap();
    store.before_run(&e.ws, "r1").unwrap();
    // The run replaces the folder `data` with a link to a host folder.
    std::fs::remove_dir_all(e.ws.join("data")).unwrap();
    symlink(&e.outside, e.ws.join("data")).unwrap();
    let changes = store.after_run(&e.ws, "r1").unwrap();
    assert!(
        changes
            .iter()
            .any(|c| c.display_path() == "data" && matches!(c.after, Some(Node::Symlink { .. }))),
        "the run planted the link: {changes:?}"
    );
    assert!(std::fs::symlink_metadata(e.ws.join("data"))
        .unwrap()
        .file_type()
        .is_symlink());
    let host_before = tree(&e.outside);

    store.undo(&e.ws, "r1", false).unwrap();
    assert_eq!(
        tree(&e.outside),
        host_before,
        "nothing outside the workspace changed"
    );
    let restored = tree(&e.ws);
    assert_eq!(restored.get("data").map(String::as_str), Some("dir 755"));
    assert_eq!(
        restored.get("data/sales.csv").map(String::as_str),
        Some("file 644 \"a,b\\n1,2\\n\"")
    );
}

#[test]
fn undoing_an_earlier_run_names_the_later_runs_and_force_takes_them_back_too() {
    let e = env();
    let store = Store::open(&e.record, DEFAULT_CAP_BYTES).unwrap();
    let before = tree(&e.ws);
    store.before_run(&e.ws, "r1").unwrap();
    std::fs::write(e.ws.join("result.txt"), "first").unwrap();
    store.after_run(&e.ws, "r1").unwrap();
    store.before_run(&e.ws, "r2").unwrap();
    std::fs::write(e.ws.join("result.txt"), "second").unwrap();
    store.after_run(&e.ws, "r2").unwrap();
    store.before_run(&e.ws, "r3").unwrap();
    std::fs::write(e.ws.join("unrelated.txt"), "x").unwrap();
    store.after_run(&e.ws, "r3").unwrap();
    let now = tree(&e.ws);

    let outcome = store.undo(&e.ws, "r1", false).unwrap();
    assert_eq!(
        outcome,
        UndoOutcome::Conflicts {
            later_runs: vec!["r2".into()],
            paths: vec!["result.txt".into()],
        }
    );
    assert_eq!(tree(&e.ws), now, "a conflict changes nothing");

    let outcome = store.undo(&e.ws, "r1", true).unwrap();
    assert!(
        matches!(outcome, UndoOutcome::Restored { ref also_undone, .. } if also_undone == &["r2"])
    );
    let mut expected = before;
    expected.insert("unrelated.txt".into(), "file 644 \"x\"".into());
    assert_eq!(tree(&e.ws), expected, "r3 stays; r1 and r2 are taken back");
}

#[test]
fn a_file_changed_outside_any_run_is_never_overwritten_by_an_undo() {
    let e = env();
    let store = Store::open(&e.record, DEFAULT_CAP_BYTES).unwrap();
    store.before_run(&e.ws, "r1").unwrap();
    std::fs::write(e.ws.join("notes.txt"), "by the run").unwrap();
    store.after_run(&e.ws, "r1").unwrap();
    // The person edits the file afterwards.
    std::fs::write(e.ws.join("notes.txt"), "the person's own words").unwrap();
    let err = store.undo(&e.ws, "r1", true).unwrap_err();
    assert!(
        matches!(err, CheckpointError::ChangedOutside(ref p) if p.contains("notes.txt")),
        "{err}"
    );
    assert_eq!(
        std::fs::read_to_string(e.ws.join("notes.txt")).unwrap(),
        "the person's own words"
    );
}

#[test]
fn a_run_cut_off_by_a_crash_is_recorded_at_the_next_start_and_can_be_undone() {
    let e = env();
    let before = tree(&e.ws);
    {
        let store = Store::open(&e.record, DEFAULT_CAP_BYTES).unwrap();
        store.before_run(&e.ws, "r1").unwrap();
        std::fs::write(e.ws.join("data/sales.csv"), "half-written").unwrap();
        // The app is killed here: no after_run.
    }
    let store = Store::open(&e.record, DEFAULT_CAP_BYTES).unwrap();
    store.before_run(&e.ws, "r2").unwrap();
    assert_eq!(
        kinds(&store.changes_of("r1").unwrap()),
        [("data/sales.csv".into(), ChangeKind::Modified)]
    );
    store.after_run(&e.ws, "r2").unwrap();
    store.undo(&e.ws, "r1", false).unwrap();
    assert_eq!(tree(&e.ws), before);
}

#[test]
fn a_run_that_never_started_is_forgotten_so_later_changes_are_not_its() {
    let e = env();
    let store = Store::open(&e.record, DEFAULT_CAP_BYTES).unwrap();
    store.before_run(&e.ws, "r1").unwrap();
    // Its sandbox could not be reached: nothing ran.
    store.forget_run("r1").unwrap();
    std::fs::write(e.ws.join("notes.txt"), "the person's own words").unwrap();
    store.before_run(&e.ws, "r2").unwrap();
    store.after_run(&e.ws, "r2").unwrap();
    assert!(
        store.changes_of("r1").is_err(),
        "no record of a run that never ran"
    );
    assert_eq!(kinds(&store.changes_of("r2").unwrap()), []);

    // Forgetting another run leaves the pending one: a crash still gives it its changes.
    store.before_run(&e.ws, "r3").unwrap();
    store.forget_run("r1").unwrap();
    std::fs::write(e.ws.join("data/sales.csv"), "half-written").unwrap();
    let reopened = Store::open(&e.record, DEFAULT_CAP_BYTES).unwrap();
    reopened.before_run(&e.ws, "r4").unwrap();
    assert_eq!(
        kinds(&reopened.changes_of("r3").unwrap()),
        [("data/sales.csv".into(), ChangeKind::Modified)]
    );
}

#[test]
fn a_run_that_changes_nothing_writes_no_record_and_the_record_survives_a_reopen() {
    let e = env();
    let store = Store::open(&e.record, DEFAULT_CAP_BYTES).unwrap();
    store.before_run(&e.ws, "r1").unwrap();
    assert!(store.after_run(&e.ws, "r1").unwrap().is_empty());
    store.before_run(&e.ws, "r2").unwrap();
    std::fs::write(e.ws.join("out.txt"), "made").unwrap();
    store.after_run(&e.ws, "r2").unwrap();
    drop(store);
    let reopened = Store::open(&e.record, DEFAULT_CAP_BYTES).unwrap();
    assert!(reopened.changes_of("r1").unwrap().is_empty());
    assert_eq!(
        kinds(&reopened.changes_of("r2").unwrap()),
        [("out.txt".into(), ChangeKind::Added)]
    );
    assert!(matches!(
        reopened.changes_of("r9"),
        Err(CheckpointError::UnknownRun(_))
    ));
    reopened.undo(&e.ws, "r2", false).unwrap();
    assert!(!e.ws.join("out.txt").exists());
}

#[test]
fn two_processes_on_one_record_see_each_others_runs_and_undos() {
    let e = env();
    // The app's store and, opened earlier, the CLI's (`ironclaw undo` while the app runs).
    let app = Store::open(&e.record, DEFAULT_CAP_BYTES).unwrap();
    let cli = Store::open(&e.record, DEFAULT_CAP_BYTES).unwrap();
    app.before_run(&e.ws, "r1").unwrap();
    std::fs::write(e.ws.join("r1.txt"), "one").unwrap();
    app.after_run(&e.ws, "r1").unwrap();

    assert_eq!(cli.last_run().unwrap().as_deref(), Some("r1"));
    cli.undo(&e.ws, "r1", false).unwrap();
    assert!(!e.ws.join("r1.txt").exists());

    assert!(app.is_undone("r1").unwrap(), "the app sees the CLI's undo");
    app.before_run(&e.ws, "r2").unwrap();
    std::fs::write(e.ws.join("r2.txt"), "two").unwrap();
    let r2 = app.after_run(&e.ws, "r2").unwrap();
    assert_eq!(kinds(&r2), [("r2.txt".into(), ChangeKind::Added)]);
    // Neither overwrote the other's records.
    assert_eq!(
        kinds(&cli.changes_of("r1").unwrap()),
        [("r1.txt".into(), ChangeKind::Added)]
    );
    cli.redo(&e.ws, "r1").unwrap();
    assert_eq!(std::fs::read_to_string(e.ws.join("r1.txt")).unwrap(), "one");
}

#[test]
fn the_oldest_runs_give_way_to_the_cap_and_a_run_too_big_for_it_is_refused_without_a_read() {
    let e = env();
    // The baseline (22 bytes) and three 40-byte versions of one file fit in 150 bytes; a
    // fourth does not until the oldest records go.
    let store = Store::open(&e.record, 150).unwrap();
    for (n, byte) in [b'1', b'2', b'3', b'4'].into_iter().enumerate() {
        let run = format!("r{}", n + 1);
        store.before_run(&e.ws, &run).unwrap();
        std::fs::write(e.ws.join("data.bin"), [byte; 40]).unwrap();
        let changes = store.after_run(&e.ws, &run).unwrap();
        assert_eq!(changes.len(), 1, "{run} was recorded");
    }
    for old in ["r1", "r2", "r3"] {
        assert!(
            matches!(
                store.undo(&e.ws, old, true),
                Err(CheckpointError::Expired(_))
            ),
            "{old} gave way"
        );
    }
    assert_eq!(store.last_run().unwrap().as_deref(), Some("r4"));
    store.undo(&e.ws, "r4", false).unwrap();
    assert_eq!(std::fs::read(e.ws.join("data.bin")).unwrap(), [b'3'; 40]);

    // One file bigger than the whole cap: refused, and nothing of it was copied.
    store.before_run(&e.ws, "r5").unwrap();
    std::fs::write(e.ws.join("huge.bin"), vec![7u8; 500]).unwrap();
    let err = store.after_run(&e.ws, "r5").unwrap_err();
    assert!(
        matches!(err, CheckpointError::OverCap { needed: 500 }),
        "{err}"
    );
    assert!(!std::fs::read_dir(e.record.join("objects"))
        .unwrap()
        .flatten()
        .any(|d| d
            .path()
            .join(&Hash::of(&[7u8; 500]).to_string()[2..])
            .exists()));
}

/// IronClaw running as root (a server, CI) restores into a workspace that belongs to the
/// person: what it puts back must be theirs, or the sandbox (running as them) can no longer
/// write the files Undo brought back.
#[test]
fn what_undo_and_redo_put_back_belongs_to_the_workspace_owner() {
    use std::os::unix::fs::{chown, MetadataExt};
    // Only root can give files away; as anyone else what IronClaw creates is already its
    // user's. Skipped as anyone else, but never silently where it matters: CI runs as root.
    if !nix::unistd::Uid::effective().is_root() {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI must run this test as root (it checks what root gives back to the owner)"
        );
        eprintln!("skipping: not root");
        return;
    }
    let e = env();
    let (uid, gid) = (4242, 4343);
    let own = |p: &Path| chown(p, Some(uid), Some(gid)).unwrap();
    own(&e.ws);
    let store = Store::open(&e.record, DEFAULT_CAP_BYTES).unwrap();
    store.before_run(&e.ws, "r1").unwrap();
    std::fs::create_dir_all(e.ws.join("out/deep")).unwrap();
    std::fs::write(e.ws.join("out/deep/result.csv"), "x").unwrap();
    symlink("deep/result.csv", e.ws.join("out/latest")).unwrap();
    std::fs::remove_file(e.ws.join("notes.txt")).unwrap();
    store.after_run(&e.ws, "r1").unwrap();

    let owner = |p: &str| {
        let m = std::fs::symlink_metadata(e.ws.join(p)).unwrap();
        (m.uid(), m.gid())
    };
    store.undo(&e.ws, "r1", false).unwrap();
    assert_eq!(owner("notes.txt"), (uid, gid), "a file put back by undo");
    store.redo(&e.ws, "r1").unwrap();
    for p in ["out", "out/deep", "out/deep/result.csv", "out/latest"] {
        assert_eq!(owner(p), (uid, gid), "{p}, put back by redo");
    }
}

#[test]
fn both_sides_of_a_change_come_from_the_record_not_the_workspace() {
    let e = env();
    let store = Store::open(&e.record, DEFAULT_CAP_BYTES).unwrap();
    store.before_run(&e.ws, "r1").unwrap();
    std::fs::write(e.ws.join("data/sales.csv"), "a,b\n1,999\n").unwrap();
    std::fs::write(e.ws.join("big.bin"), vec![7u8; 4096]).unwrap();
    std::fs::remove_file(e.ws.join("latest")).unwrap();
    store.after_run(&e.ws, "r1").unwrap();
    // Changed again since: the sides are still the run's own.
    std::fs::write(e.ws.join("data/sales.csv"), "later").unwrap();

    let [before, after] = store.sides("r1", "data/sales.csv", 1024).unwrap();
    let bytes = |s: &Stored| match s {
        Stored::File { bytes, .. } => bytes.clone(),
        other => panic!("not a file: {other:?}"),
    };
    assert_eq!(bytes(&before).unwrap(), b"a,b\n1,2\n");
    assert_eq!(bytes(&after).unwrap(), b"a,b\n1,999\n");
    let [absent, big] = store.sides("r1", "big.bin", 1024).unwrap();
    assert_eq!(absent, Stored::Absent);
    assert!(
        matches!(
            big,
            Stored::File {
                size: 4096,
                bytes: None,
                ..
            }
        ),
        "larger than asked: not read ({big:?})"
    );
    let [link, gone] = store.sides("r1", "latest", 1024).unwrap();
    assert_eq!(
        (link, gone),
        (
            Stored::Link {
                target: b"data/sales.csv".to_vec()
            },
            Stored::Absent
        )
    );
    assert!(store.sides("r1", "notes.txt", 1024).is_err(), "unchanged");
}

#[test]
fn over_the_total_cap_the_oldest_records_of_any_conversation_go_first() {
    let tmp = tempfile::tempdir().unwrap();
    let conversation = |name: &str, seed: u8| {
        let ws = tmp.path().join(name).join("ws");
        std::fs::create_dir_all(&ws).unwrap();
        let store = Arc::new(
            Store::open(&tmp.path().join(name).join("record"), DEFAULT_CAP_BYTES).unwrap(),
        );
        for i in 0..4u8 {
            let run = format!("{name}{i}");
            store.before_run(&ws, &run).unwrap();
            // 10 KiB each time, all different: every rewrite leaves the old bytes to the record.
            std::fs::write(ws.join("result.bin"), vec![seed.wrapping_add(i); 10 << 10]).unwrap();
            store.after_run(&ws, &run).unwrap();
        }
        store
    };
    let older = conversation("a", 1);
    std::thread::sleep(std::time::Duration::from_millis(20));
    let newer = conversation("b", 101);
    let both = [older.clone(), newer.clone()];
    let kept: u64 = both.iter().map(|s| s.kept_bytes()).sum();
    assert_eq!(kept, 8 * (10 << 10));

    let done = enforce_total(&both, kept - (15 << 10)).unwrap();
    assert!(!done.over && done.kept <= kept - (15 << 10), "{done:?}");
    // The older conversation's oldest runs expired; every run of the newer one is undoable.
    assert!(matches!(
        older.changes_of("a1"),
        Err(CheckpointError::Expired(_))
    ));
    // What a conversation's view reads to mark them, without opening the record.
    let expired = expired_runs(&tmp.path().join("a/record")).unwrap();
    assert!(
        expired.contains("a1") && !expired.contains("a3"),
        "{expired:?}"
    );
    assert!(expired_runs(&tmp.path().join("b/record"))
        .unwrap()
        .is_empty());
    for run in ["b0", "b1", "b2", "b3"] {
        newer.changes_of(run).unwrap();
    }
    newer.undo(&tmp.path().join("b/ws"), "b3", false).unwrap();

    // Below what the workspaces hold now, nothing more can go: said, not looped on.
    let floor = enforce_total(&both, 1).unwrap();
    assert!(floor.over, "{floor:?}");
    assert_eq!(floor.kept, 2 * (10 << 10), "what each workspace holds now");
}

#[test]
fn rewinding_to_a_run_undoes_every_later_run_newest_first_and_redo_brings_them_back() {
    let e = env();
    let store = Store::open(&e.record, DEFAULT_CAP_BYTES).unwrap();
    let mut states = Vec::new();
    for (i, code) in ["one", "two", "three", "four"].iter().enumerate() {
        let run = format!("r{i}");
        store.before_run(&e.ws, &run).unwrap();
        // Each run writes its own file; only r0 and r2 the shared one: r3 changes nothing r1
        // or r2 did, so no undo would take it along, and rewind undoes it anyway.
        std::fs::write(e.ws.join(format!("own-{i}.txt")), code).unwrap();
        if i % 2 == 0 {
            std::fs::write(e.ws.join("shared.txt"), code).unwrap();
        }
        if i == 2 {
            std::fs::remove_file(e.ws.join("notes.txt")).unwrap();
        }
        store.after_run(&e.ws, &run).unwrap();
        states.push(tree(&e.ws));
    }
    let rewound = store.rewind(&e.ws, "r1").unwrap();
    assert_eq!(rewound.stopped, None);
    let undone: Vec<&str> = rewound.undone.iter().map(|(r, _)| r.as_str()).collect();
    assert_eq!(undone, vec!["r3", "r2"]);
    assert_eq!(tree(&e.ws), states[1], "exactly as right after r1");
    // Rewinding to the newest run changes nothing.
    assert!(store.rewind(&e.ws, "r1").unwrap().undone.is_empty());
    for r in ["r2", "r3"] {
        store.redo(&e.ws, r).unwrap();
    }
    assert_eq!(tree(&e.ws), states[3]);
}

#[test]
fn ironclaws_own_log_folder_is_neither_copied_nor_listed_nor_undone() {
    let e = env();
    // A log already there before the run.
    std::fs::create_dir_all(e.ws.join(".ironclaw/logs")).unwrap();
    std::fs::write(e.ws.join(".ironclaw/logs/old.stdout"), "old").unwrap();
    let store = Store::open(&e.record, 64 << 10).unwrap();
    store.before_run(&e.ws, "r1").unwrap();
    // The run's own 1 MiB log (over this record's 64 KiB cap: copying it would refuse the
    // checkpoint) and one real change; the old log goes too.
    std::fs::write(e.ws.join(".ironclaw/logs/r1.stdout"), vec![b'x'; 1 << 20]).unwrap();
    std::fs::remove_file(e.ws.join(".ironclaw/logs/old.stdout")).unwrap();
    std::fs::write(e.ws.join("notes.txt"), "changed").unwrap();
    let changes = store.after_run(&e.ws, "r1").unwrap();
    assert_eq!(
        kinds(&changes),
        [("notes.txt".into(), ChangeKind::Modified)]
    );
    store.undo(&e.ws, "r1", false).unwrap();
    assert_eq!(
        std::fs::read_to_string(e.ws.join("notes.txt")).unwrap(),
        "keep me"
    );
    assert_eq!(
        std::fs::metadata(e.ws.join(".ironclaw/logs/r1.stdout"))
            .unwrap()
            .len(),
        1 << 20,
        "undo leaves the log alone"
    );
    assert!(!e.ws.join(".ironclaw/logs/old.stdout").exists());
    // The same with a watch following the workspace: the folder is not looked at either.
    store.watch_workspace(true);
    store.before_run(&e.ws, "r2").unwrap();
    std::fs::write(e.ws.join(".ironclaw/logs/r2.stdout"), vec![b'y'; 1 << 20]).unwrap();
    std::fs::write(e.ws.join("run.sh"), "echo changed").unwrap();
    let changes = store.after_run(&e.ws, "r2").unwrap();
    assert_eq!(kinds(&changes), [("run.sh".into(), ChangeKind::Modified)]);
}
