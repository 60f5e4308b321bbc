//! The watched scan against the walk it replaces: after every kind of change code can make,
//! what the record holds must be exactly what a walk of everything reads, and it must have been
//! found without that walk (or the test proves nothing about the watch).

use std::io::{Seek, SeekFrom, Write};
use std::os::unix::fs::{symlink, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::Command;

use pretty_assertions::assert_eq;

use super::objects::Objects;
use super::*;

/// What a walk of everything finds now. A file is read again only where its stamp differs
/// from `known` (what the watched record holds): a change the record missed moved the stamp,
/// so it is read and shows as a difference, while the files the record has right are not
/// opened, and so send the watch no event that would cover for what it missed.
fn walked(ws: &Path, scratch: &Path, known: &Manifest) -> Manifest {
    let objects = Objects::open(scratch.join("objects")).unwrap();
    let budget = scan::Budget {
        disk: u64::MAX,
        read: u64::MAX,
    };
    let scanned = scan::scan(ws, known, &objects, budget, &mut None, true).unwrap();
    assert!(scanned.walked);
    let scan::State::Whole(m) = scanned.state else {
        panic!("a scan without a watch walks everything")
    };
    objects.abandon();
    m
}

fn current(store: &Store) -> Manifest {
    store.state.lock().unwrap().current.clone()
}

/// Brings the store up to date as a run's end does, and checks it against a fresh walk.
fn check(store: &Store, ws: &Path, scratch: &Path, step: &str) {
    store.after_run(ws, step).unwrap();
    let got = current(store);
    let want = walked(ws, scratch, &got);
    // Stamps only say when to read a file again: a link made and removed moves a file's
    // change time without an event, and that is no change to record. What the file holds is.
    let show = |m: &Manifest| -> Vec<String> {
        m.iter()
            .map(|(p, n)| {
                let mut n = n.clone();
                if let Node::File { stamp, .. } = &mut n {
                    *stamp = Stamp::default();
                }
                format!("{} {n:?}", String::from_utf8_lossy(p))
            })
            .collect()
    };
    let (got, want) = (show(&got), show(&want));
    if got != want {
        assert_eq!(got, want, "after {step}");
    }
}

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
    fn bytes(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| self.next() as u8).collect()
    }
}

/// Files and folders (not the root) under `ws`, without following links.
fn contents(ws: &Path) -> (Vec<PathBuf>, Vec<PathBuf>) {
    let (mut files, mut dirs) = (Vec::new(), Vec::new());
    let mut stack = vec![ws.to_path_buf()];
    while let Some(d) = stack.pop() {
        let mut names: Vec<_> = std::fs::read_dir(&d)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        names.sort();
        for p in names {
            let meta = std::fs::symlink_metadata(&p).unwrap();
            if meta.is_dir() {
                dirs.push(p.clone());
                stack.push(p);
            } else if meta.is_file() {
                files.push(p);
            }
        }
    }
    (files, dirs)
}

/// Changes a file through a shared memory mapping, after closing the descriptor it was mapped
/// from: no write(2), so no modify event, the way `mmap` in the sandbox's Python does it.
fn write_through_mapping(path: &Path, byte: u8) {
    let script = format!(
        "import mmap,sys\nf=open(sys.argv[1],'r+b')\nm=mmap.mmap(f.fileno(),0)\nf.close()\n\
         m[0]=(m[0]+{byte})%256 or 1\nm.flush()\nm.close()"
    );
    let status = Command::new("python3")
        .arg("-c")
        .arg(script)
        .arg(path)
        .status()
        .unwrap();
    assert!(status.success());
}

#[test]
fn every_kind_of_change_is_found_without_a_walk_exactly_as_a_walk_finds_it() {
    let tmp = tempfile::tempdir().unwrap();
    let ws = tmp.path().join("ws");
    std::fs::create_dir_all(ws.join("a/b")).unwrap();
    std::fs::write(ws.join("a/b/start.txt"), "start").unwrap();
    let store = Store::open(&tmp.path().join("record"), DEFAULT_CAP_BYTES).unwrap();
    store.before_run(&ws, "first").unwrap();
    check(&store, &ws, tmp.path(), "first");
    assert_eq!(store.full_walks().unwrap(), 1);

    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    // Descriptors kept open across scans, like a process a run left behind.
    let mut handles: Vec<std::fs::File> = Vec::new();
    let mut counts = std::collections::BTreeMap::<&str, usize>::new();
    for step in 0..400 {
        let (files, dirs) = contents(&ws);
        let dir = if dirs.is_empty() || rng.below(4) == 0 {
            ws.clone()
        } else {
            dirs[rng.below(dirs.len())].clone()
        };
        let file = (!files.is_empty()).then(|| files[rng.below(files.len())].clone());
        let fresh = dir.join(format!("n{step}"));
        let walks = store.full_walks().unwrap();
        let op = match (rng.below(19), &file) {
            (0, _) => {
                let n = rng.below(64);
                std::fs::write(&fresh, rng.bytes(n)).unwrap();
                "create"
            }
            (1, Some(f)) => {
                // In place, same size: only the contents (and the change time) move.
                let len = std::fs::metadata(f).unwrap().len() as usize;
                let mut h = std::fs::OpenOptions::new().write(true).open(f).unwrap();
                h.write_all(&rng.bytes(len.max(1))).unwrap();
                "overwrite in place"
            }
            (2, Some(f)) => {
                let mut h = std::fs::OpenOptions::new().append(true).open(f).unwrap();
                h.write_all(b"more").unwrap();
                "append"
            }
            (3, Some(f)) => {
                std::fs::remove_file(f).unwrap();
                "delete"
            }
            (4, _) => {
                std::fs::create_dir_all(fresh.join("x/y")).unwrap();
                std::fs::write(fresh.join("x/y/deep"), rng.bytes(9)).unwrap();
                std::fs::write(fresh.join("top"), "t").unwrap();
                "new folders"
            }
            (5, _) if dir != ws => {
                std::fs::remove_dir_all(&dir).unwrap();
                "remove a folder"
            }
            (6, Some(f)) => {
                std::fs::rename(f, &fresh).unwrap();
                "rename a file"
            }
            (7, Some(f)) => {
                let mode = [0o600, 0o644, 0o755, 0o640][rng.below(4)];
                std::fs::set_permissions(f, std::fs::Permissions::from_mode(mode)).unwrap();
                "chmod"
            }
            (8, _) => {
                symlink(format!("../t{}", rng.below(9)), &fresh).unwrap();
                "symlink"
            }
            (9, Some(f)) => {
                // A second name, then a write through it: the first name's bytes change too.
                std::fs::hard_link(f, &fresh).unwrap();
                let mut h = std::fs::OpenOptions::new()
                    .write(true)
                    .open(&fresh)
                    .unwrap();
                h.write_all(b"via the other name").unwrap();
                "hard link, written through"
            }
            (10, Some(f)) if std::fs::metadata(f).unwrap().len() > 0 => {
                write_through_mapping(f, 1 + rng.below(200) as u8);
                "write through a mapping"
            }
            (11, Some(f)) => {
                // Same size, and the modification time set back to what it was.
                let meta = std::fs::metadata(f).unwrap();
                let len = meta.len() as usize;
                std::fs::write(f, rng.bytes(len)).unwrap();
                let h = std::fs::OpenOptions::new().write(true).open(f).unwrap();
                h.set_modified(meta.modified().unwrap()).unwrap();
                "rewrite with the old time"
            }
            (12, Some(f)) => {
                std::fs::remove_file(f).unwrap();
                std::fs::create_dir(f).unwrap();
                std::fs::write(f.join("inside"), "i").unwrap();
                "a file becomes a folder"
            }
            (13, _) if dir != ws => {
                std::fs::remove_dir_all(&dir).unwrap();
                std::fs::write(&dir, "now a file").unwrap();
                "a folder becomes a file"
            }
            (14, Some(f)) => {
                handles.push(std::fs::OpenOptions::new().write(true).open(f).unwrap());
                "open and keep"
            }
            (15, _) if !handles.is_empty() => {
                let i = rng.below(handles.len());
                let h = &mut handles[i];
                h.seek(SeekFrom::Start(0)).unwrap();
                h.write_all(b"LATE").unwrap();
                "a kept descriptor writes"
            }
            (16, Some(f)) => {
                std::fs::OpenOptions::new()
                    .write(true)
                    .open(f)
                    .unwrap()
                    .set_len(rng.below(3) as u64)
                    .unwrap();
                "truncate"
            }
            (17, _) => {
                nix::unistd::mkfifo(&fresh, nix::sys::stat::Mode::S_IRWXU).unwrap();
                "fifo"
            }
            (18, Some(f)) => {
                // A second name, opened and removed: the descriptor kept writes to `f`, and its
                // events name only the removed name.
                std::fs::hard_link(f, &fresh).unwrap();
                handles.push(
                    std::fs::OpenOptions::new()
                        .write(true)
                        .open(&fresh)
                        .unwrap(),
                );
                if rng.below(2) == 0 {
                    check(
                        &store,
                        &ws,
                        tmp.path(),
                        &format!("step {step}: linked and opened"),
                    );
                }
                std::fs::remove_file(&fresh).unwrap();
                "kept open through a removed second name"
            }
            _ => {
                std::fs::write(&fresh, "fallback").unwrap();
                "create"
            }
        };
        *counts.entry(op).or_default() += 1;
        check(&store, &ws, tmp.path(), &format!("step {step}: {op}"));
        let walked_now = store.full_walks().unwrap() - walks;
        if walked_now > 0 {
            *counts.entry("walked everything").or_default() += 1;
        }
        // Only a write through a name the file no longer has may need a walk.
        assert!(
            walked_now == 0 || op == "a kept descriptor writes",
            "step {step} ({op}) walked everything: the watch was not what found it"
        );
    }
    // Every kind of change actually happened, several times.
    for op in [
        "overwrite in place",
        "delete",
        "new folders",
        "remove a folder",
        "rename a file",
        "hard link, written through",
        "write through a mapping",
        "rewrite with the old time",
        "a file becomes a folder",
        "a folder becomes a file",
        "a kept descriptor writes",
        "kept open through a removed second name",
    ] {
        assert!(
            counts.get(op).copied().unwrap_or(0) >= 3,
            "{op}: {counts:?}"
        );
    }
    // Nearly everything was found from events alone.
    assert!(
        counts.get("walked everything").copied().unwrap_or(0) <= 10,
        "{counts:?}"
    );
}

#[test]
fn a_moved_folder_an_overflow_or_a_replaced_workspace_makes_the_next_scan_walk_everything() {
    let tmp = tempfile::tempdir().unwrap();
    let ws = tmp.path().join("ws");
    std::fs::create_dir_all(ws.join("a/b")).unwrap();
    std::fs::write(ws.join("a/b/f"), "f").unwrap();
    let store = Store::open(&tmp.path().join("record"), DEFAULT_CAP_BYTES).unwrap();
    check(&store, &ws, tmp.path(), "first");
    assert_eq!(store.full_walks().unwrap(), 1);

    // Its watch would go on naming the old path.
    std::fs::rename(ws.join("a"), ws.join("moved")).unwrap();
    std::fs::write(ws.join("moved/b/f"), "changed after the move").unwrap();
    check(&store, &ws, tmp.path(), "folder moved");
    assert_eq!(store.full_walks().unwrap(), 2);

    // More events than the kernel queues (16,384 by default): some were dropped.
    let queue: usize = std::fs::read_to_string("/proc/sys/fs/inotify/max_queued_events")
        .map_or(16_384, |t| t.trim().parse().unwrap());
    std::fs::create_dir(ws.join("many")).unwrap();
    check(&store, &ws, tmp.path(), "a new folder");
    assert_eq!(store.full_walks().unwrap(), 2);
    // Eight events each (create, open, modify, close; attributes; open, modify, close): an
    // eighth of the queue and some. Few files, so that reading them afterwards (two events
    // each, and as many again for the check's own walk) does not fill the queue again.
    for i in 0..queue / 8 + 100 {
        let file = ws.join(format!("many/{i}"));
        std::fs::write(&file, "x").unwrap();
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
        let mut more = std::fs::OpenOptions::new()
            .append(true)
            .open(&file)
            .unwrap();
        more.write_all(b"y").unwrap();
    }
    check(&store, &ws, tmp.path(), "overflow");
    assert_eq!(store.full_walks().unwrap(), 3);
    std::fs::remove_dir_all(ws.join("many")).unwrap();
    check(&store, &ws, tmp.path(), "after the overflow");
    assert_eq!(store.full_walks().unwrap(), 3);

    // The workspace folder itself replaced by another with the same name.
    std::fs::rename(&ws, tmp.path().join("old-ws")).unwrap();
    std::fs::create_dir_all(ws.join("other")).unwrap();
    check(&store, &ws, tmp.path(), "workspace replaced");
    assert_eq!(store.full_walks().unwrap(), 4);
}

#[test]
fn a_file_linked_from_outside_the_workspace_is_looked_at_in_every_scan() {
    let tmp = tempfile::tempdir().unwrap();
    let ws = tmp.path().join("ws");
    std::fs::create_dir_all(&ws).unwrap();
    std::fs::create_dir_all(tmp.path().join("home")).unwrap();
    std::fs::write(ws.join("shared.csv"), "1,2,3").unwrap();
    // A name no watch covers: writes through it send no event to the workspace's watches.
    std::fs::hard_link(ws.join("shared.csv"), tmp.path().join("home/shared.csv")).unwrap();
    let store = Store::open(&tmp.path().join("record"), DEFAULT_CAP_BYTES).unwrap();
    store.before_run(&ws, "r1").unwrap();
    store.after_run(&ws, "r1").unwrap();

    store.before_run(&ws, "r2").unwrap();
    let mut h = std::fs::OpenOptions::new()
        .write(true)
        .open(tmp.path().join("home/shared.csv"))
        .unwrap();
    h.write_all(b"9,9,9").unwrap();
    let changes = store.after_run(&ws, "r2").unwrap();
    let got: Vec<_> = changes
        .iter()
        .map(|c| (c.display_path(), c.change))
        .collect();
    assert_eq!(got, vec![("shared.csv".to_owned(), ChangeKind::Modified)]);
    assert_eq!(store.full_walks().unwrap(), 1, "found without a walk");
    check(&store, &ws, tmp.path(), "end");
}

#[test]
fn runs_that_change_nothing_walk_nothing_and_a_reloaded_record_is_walked_once() {
    let tmp = tempfile::tempdir().unwrap();
    let ws = tmp.path().join("ws");
    std::fs::create_dir_all(ws.join("d")).unwrap();
    for i in 0..50 {
        std::fs::write(ws.join(format!("d/{i}")), format!("{i}")).unwrap();
    }
    let record = tmp.path().join("record");
    let store = Store::open(&record, DEFAULT_CAP_BYTES).unwrap();
    for i in 0..20 {
        let run = format!("noop{i}");
        store.before_run(&ws, &run).unwrap();
        // Reading is not changing: the files the code opens are looked at, not re-read.
        let _ = std::fs::read(ws.join(format!("d/{i}"))).unwrap();
        assert!(store.after_run(&ws, &run).unwrap().is_empty());
    }
    assert_eq!(store.full_walks().unwrap(), 1);

    // Another process (`ironclaw undo`) writes to the record: this one's watch cannot vouch
    // for what that process scanned, so it walks once, then follows events again.
    let other = Store::open(&record, DEFAULT_CAP_BYTES).unwrap();
    other.before_run(&ws, "elsewhere").unwrap();
    std::fs::write(ws.join("d/0"), "changed").unwrap();
    other.after_run(&ws, "elsewhere").unwrap();
    store.before_run(&ws, "back").unwrap();
    store.after_run(&ws, "back").unwrap();
    assert_eq!(store.full_walks().unwrap(), 2);
    store.before_run(&ws, "again").unwrap();
    store.after_run(&ws, "again").unwrap();
    assert_eq!(store.full_walks().unwrap(), 2);
}

#[test]
fn a_write_through_a_removed_second_name_is_found() {
    let tmp = tempfile::tempdir().unwrap();
    let ws = tmp.path().join("ws");
    std::fs::create_dir_all(&ws).unwrap();
    std::fs::write(ws.join("data.csv"), "1,2,3").unwrap();
    let store = Store::open(&tmp.path().join("record"), DEFAULT_CAP_BYTES).unwrap();
    store.before_run(&ws, "r1").unwrap();
    // Between two scans, so the record never sees the second name: a process a run leaves
    // behind keeps a descriptor to data.csv under a name that is gone.
    std::fs::hard_link(ws.join("data.csv"), ws.join("x")).unwrap();
    let mut kept = std::fs::OpenOptions::new()
        .write(true)
        .open(ws.join("x"))
        .unwrap();
    std::fs::remove_file(ws.join("x")).unwrap();
    assert!(store.after_run(&ws, "r1").unwrap().is_empty());

    store.before_run(&ws, "r2").unwrap();
    kept.write_all(b"9,9,9").unwrap();
    assert_eq!(std::fs::read(ws.join("data.csv")).unwrap(), b"9,9,9");
    let changes = store.after_run(&ws, "r2").unwrap();
    let got: Vec<_> = changes
        .iter()
        .map(|c| (c.display_path(), c.change))
        .collect();
    assert_eq!(got, vec![("data.csv".to_owned(), ChangeKind::Modified)]);
    check(&store, &ws, tmp.path(), "end");
}

#[test]
fn the_record_reopens_exactly_from_its_last_snapshot_and_the_records_after_it() {
    let tmp = tempfile::tempdir().unwrap();
    let ws = tmp.path().join("ws");
    std::fs::create_dir_all(ws.join("d")).unwrap();
    let record = tmp.path().join("record");
    // Small enough that the oldest records are dropped along the way.
    let store = Store::open(&record, 64 << 10).unwrap();
    let mut rng = Rng(7);
    for i in 0..150 {
        let run = format!("r{i}");
        store.before_run(&ws, &run).unwrap();
        let name = ws.join(format!("d/{}", rng.below(20)));
        if rng.below(5) == 0 {
            let _ = std::fs::remove_file(&name);
        } else {
            let n = 200 + rng.below(2000);
            std::fs::write(&name, rng.bytes(n)).unwrap();
        }
        store.after_run(&ws, &run).unwrap();
    }
    let snapshot = std::fs::read_to_string(record.join("current")).unwrap();
    let seq: u64 = snapshot.lines().next().unwrap()[4..].parse().unwrap();
    assert!(seq >= 128, "a snapshot was written along the way ({seq})");
    let pruned: u64 = std::fs::read_to_string(record.join("pruned"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert!(pruned > 0, "records were dropped for the cap");

    let reopened = Store::open(&record, 64 << 10).unwrap();
    assert_eq!(current(&reopened), current(&store));
    // And it goes on from there: the next run's change is exactly one file.
    reopened.before_run(&ws, "after").unwrap();
    std::fs::write(ws.join("d/new"), "n").unwrap();
    let changes = reopened.after_run(&ws, "after").unwrap();
    let got: Vec<_> = changes
        .iter()
        .map(|c| (c.display_path(), c.change))
        .collect();
    assert_eq!(got, vec![("d/new".to_owned(), ChangeKind::Added)]);
}

#[test]
fn a_file_a_process_keeps_mapped_for_writing_is_reported_held_until_it_lets_go() {
    use std::io::BufRead;
    let tmp = tempfile::tempdir().unwrap();
    let ws = tmp.path().join("ws");
    std::fs::create_dir_all(ws.join("d")).unwrap();
    std::fs::write(ws.join("d/data.bin"), [0u8; 4096]).unwrap();
    std::fs::write(ws.join("other.txt"), "o").unwrap();
    let store = Store::open(&tmp.path().join("record"), DEFAULT_CAP_BYTES).unwrap();
    store.before_run(&ws, "r1").unwrap();
    store.after_run(&ws, "r1").unwrap();
    assert!(store.held_for_writing(&ws).unwrap().is_empty());

    // Like an interpreter keeping `m = mmap.mmap(...)` in a variable after its run.
    let mut holder = Command::new("python3")
        .arg("-c")
        .arg(
            "import mmap,sys,time\nf=open(sys.argv[1],'r+b')\nm=mmap.mmap(f.fileno(),0)\n\
             f.close()\nm[0]=7\nprint('ready',flush=True)\ntime.sleep(60)",
        )
        .arg(ws.join("d/data.bin"))
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufReader::new(holder.stdout.as_mut().unwrap())
        .read_line(&mut line)
        .unwrap();
    assert_eq!(line.trim(), "ready");
    let walks = store.full_walks().unwrap();
    store.before_run(&ws, "r2").unwrap();
    assert_eq!(store.held_for_writing(&ws).unwrap(), ["d/data.bin"]);
    // Asked again at every look while held, without a walk.
    store.after_run(&ws, "r2").unwrap();
    store.before_run(&ws, "r3").unwrap();
    assert_eq!(store.held_for_writing(&ws).unwrap(), ["d/data.bin"]);
    assert_eq!(store.full_walks().unwrap(), walks);
    // A process started afresh (the app restarted) finds it by its walk.
    let fresh = Store::open(&tmp.path().join("record2"), DEFAULT_CAP_BYTES).unwrap();
    fresh.before_run(&ws, "x").unwrap();
    assert_eq!(fresh.held_for_writing(&ws).unwrap(), ["d/data.bin"]);

    holder.kill().unwrap();
    holder.wait().unwrap();
    store.after_run(&ws, "r3").unwrap();
    assert!(store.held_for_writing(&ws).unwrap().is_empty());
}

#[test]
fn without_a_watch_every_scan_walks_and_finds_the_same_changes() {
    let tmp = tempfile::tempdir().unwrap();
    let ws = tmp.path().join("ws");
    std::fs::create_dir_all(&ws).unwrap();
    std::fs::write(ws.join("kept.txt"), "old").unwrap();
    let store = Store::open(&tmp.path().join("record"), DEFAULT_CAP_BYTES).unwrap();
    store.watch_workspace(false);
    store.before_run(&ws, "first").unwrap();
    std::fs::write(ws.join("kept.txt"), "new").unwrap();
    std::fs::write(ws.join("made.txt"), "x").unwrap();
    let changes = store.after_run(&ws, "first").unwrap();
    let mut paths: Vec<_> = changes.iter().map(|c| c.path.clone()).collect();
    paths.sort();
    assert_eq!(paths, [b"kept.txt".to_vec(), b"made.txt".to_vec()]);
    // No watch was kept to vouch for anything: both scans walked.
    assert_eq!(store.full_walks().unwrap(), 2);
    // With it on again, the next scan starts one, and the one after needs no walk.
    store.watch_workspace(true);
    store.before_run(&ws, "second").unwrap();
    store.after_run(&ws, "second").unwrap();
    assert_eq!(store.full_walks().unwrap(), 3);
}

#[test]
fn a_large_workspace_is_watched_even_by_a_one_run_process() {
    let tmp = tempfile::tempdir().unwrap();
    let ws = tmp.path().join("ws");
    std::fs::create_dir_all(&ws).unwrap();
    for i in 0..super::WATCH_ANYWAY_FROM {
        std::fs::write(ws.join(format!("f{i}")), "").unwrap();
    }
    let record = tmp.path().join("record");
    Store::open(&record, DEFAULT_CAP_BYTES)
        .unwrap()
        .before_run(&ws, "setup")
        .unwrap();
    let store = Store::open(&record, DEFAULT_CAP_BYTES).unwrap();
    store.watch_workspace(false);
    store.before_run(&ws, "big").unwrap();
    std::fs::write(ws.join("f7"), "changed").unwrap();
    let changes = store.after_run(&ws, "big").unwrap();
    assert_eq!(changes.len(), 1);
    assert_eq!(
        store.full_walks().unwrap(),
        1,
        "the scan after the run used the watch"
    );
}
