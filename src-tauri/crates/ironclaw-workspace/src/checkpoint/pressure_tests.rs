//! Undo under pressure: whatever shape the sandbox gives the workspace (more folders than the
//! process has descriptors, sparse files of any apparent size, files that grow while they are
//! copied, changes bigger than the cap), the host spends a bounded amount, and a run let
//! through as undoable is always put back. Each test first shows the pressure is real.

use std::os::unix::fs::{FileExt, MetadataExt};
use std::path::Path;
use std::sync::Arc;

use nix::sys::resource::{getrlimit, setrlimit, Resource};

use super::*;

const THESIS: &[u8] = b"Chapter 1\nThe person's own words, which no run may lose.\n";

fn store_for(dir: &Path, cap: u64) -> (PathBuf, PathBuf, Store) {
    let ws = dir.join("workspace");
    std::fs::create_dir_all(&ws).unwrap();
    std::fs::write(ws.join("thesis.txt"), THESIS).unwrap();
    let record = dir.join("checkpoints");
    let store = Store::open(&record, cap).unwrap();
    // The data folder here is a test's temporary disk: no floor but the test's own.
    store.keep_free(0);
    (ws, record, store)
}

/// Bytes the record's folder takes on the disk, everything in it.
fn disk_use(dir: &Path) -> u64 {
    let mut total = 0;
    let mut stack = vec![dir.to_owned()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let meta = e.metadata().unwrap();
            if meta.is_dir() {
                stack.push(e.path());
            } else {
                total += meta.blocks() * 512;
            }
        }
    }
    total
}

#[test]
fn more_folders_than_a_desktops_descriptor_limit_are_walked_and_the_run_undone() {
    let tmp = tempfile::tempdir().unwrap();
    let (ws, _, store) = store_for(tmp.path(), DEFAULT_CAP_BYTES);
    store.watch_workspace(false);
    store.before_run(&ws, "r1").unwrap();
    // The run: the thesis rewritten, then 1,600 sibling folders and a chain 1,600 deep, at a
    // desktop's soft limit of 1,024 descriptors for the whole process.
    std::fs::write(ws.join("thesis.txt"), b"gone").unwrap();
    for i in 0..1_600 {
        std::fs::create_dir(ws.join(format!("node_modules_{i:04}"))).unwrap();
    }
    let mut deep = ws.join("deep");
    for _ in 0..1_600 {
        deep.push("d");
    }
    std::fs::create_dir_all(&deep).unwrap_or(());
    let (soft, hard) = getrlimit(Resource::RLIMIT_NOFILE).unwrap();
    setrlimit(Resource::RLIMIT_NOFILE, 1024, hard).unwrap();
    // The pressure is real: holding one descriptor per folder, as the walk once did, fails.
    let mut held = Vec::new();
    let exhausted =
        (0..1_600).any(
            |i| match std::fs::File::open(ws.join(format!("node_modules_{i:04}"))) {
                Ok(f) => {
                    held.push(f);
                    false
                }
                Err(e) => e.raw_os_error() == Some(libc::EMFILE),
            },
        );
    drop(held);
    assert!(exhausted, "1,600 folders should exhaust 1,024 descriptors");
    let recorded = store.after_run(&ws, "r1");
    let undone = store.undo(&ws, "r1", false);
    setrlimit(Resource::RLIMIT_NOFILE, soft, hard).unwrap();
    let changes = recorded.unwrap();
    assert!(changes.len() > 3_200, "{} changes", changes.len());
    assert!(matches!(undone.unwrap(), UndoOutcome::Restored { .. }));
    assert_eq!(std::fs::read(ws.join("thesis.txt")).unwrap(), THESIS);
    assert_eq!(
        std::fs::read_dir(&ws).unwrap().count(),
        1,
        "only the thesis is left"
    );
}

#[test]
fn sparse_files_of_every_size_class_cost_the_store_their_data_and_come_back_sparse() {
    let tmp = tempfile::tempdir().unwrap();
    let (ws, record, store) = store_for(tmp.path(), 2 << 30);
    store.before_run(&ws, "r1").unwrap();
    // The strict profile's probe: 24 files of 64 MiB apparent, a few bytes each; and one of
    // each size class around the block size.
    let mut apparent = 0;
    for i in 0..24u64 {
        let f = std::fs::File::create(ws.join(format!("sparse{i}"))).unwrap();
        f.set_len(64 << 20).unwrap();
        f.write_all_at(format!("data {i}").as_bytes(), i * (2 << 20))
            .unwrap();
        apparent += 64u64 << 20;
    }
    for (name, size) in [
        ("zero", 0u64),
        ("one", 1),
        ("block", 4096),
        ("block+1", 4097),
    ] {
        let f = std::fs::File::create(ws.join(name)).unwrap();
        f.set_len(size).unwrap();
        if size > 0 {
            f.write_all_at(b"x", size - 1).unwrap();
        }
    }
    let real: u64 = std::fs::read_dir(&ws)
        .unwrap()
        .map(|e| e.unwrap().metadata().unwrap().blocks() * 512)
        .sum();
    assert!(
        apparent > 1 << 30 && real < 1 << 20,
        "{apparent} apparent, {real} real"
    );
    let before = disk_use(&record);
    store.after_run(&ws, "r1").unwrap();
    let grown = disk_use(&record) - before;
    assert!(
        grown < 2 << 20,
        "the record grew by {grown} bytes for {real} of data"
    );
    assert!(store.objects.total() < 1 << 20, "{}", store.objects.total());
    // The thesis goes, the files are rewritten; undo and redo put each side back exactly.
    store.before_run(&ws, "r2").unwrap();
    std::fs::remove_file(ws.join("thesis.txt")).unwrap();
    std::fs::write(ws.join("sparse3"), b"dense now").unwrap();
    store.after_run(&ws, "r2").unwrap();
    store.undo(&ws, "r2", false).unwrap();
    assert_eq!(std::fs::read(ws.join("thesis.txt")).unwrap(), THESIS);
    let back = std::fs::metadata(ws.join("sparse3")).unwrap();
    assert_eq!(back.len(), 64 << 20);
    assert!(
        back.blocks() * 512 <= 64 << 10,
        "restored dense: {} blocks",
        back.blocks()
    );
    let mut word = [0u8; 6];
    std::fs::File::open(ws.join("sparse3"))
        .unwrap()
        .read_exact_at(&mut word, 3 * (2 << 20))
        .unwrap();
    assert_eq!(&word, b"data 3");
}

#[test]
fn a_file_that_grows_while_it_is_copied_costs_at_most_the_cap_and_leaves_no_copies() {
    let tmp = tempfile::tempdir().unwrap();
    let cap = 64 << 20;
    let (ws, record, store) = store_for(tmp.path(), cap);
    store.watch_workspace(false);
    store.before_run(&ws, "r1").unwrap();
    std::fs::write(ws.join("thesis.txt"), b"overwritten").unwrap();
    // A thread the run left behind keeps writing, for as long as the record is made.
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let grower = {
        let (path, stop) = (ws.join("growing.log"), stop.clone());
        std::thread::spawn(move || {
            let f = std::fs::File::create(path).unwrap();
            let chunk = vec![b'g'; 1 << 20];
            let mut writes = 0u64;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                // Bounded: the test's own disk is not the attack's target.
                if f.metadata().unwrap().len() > 512 << 20 {
                    f.set_len(0).unwrap();
                }
                f.write_all_at(&chunk, f.metadata().unwrap().len()).unwrap();
                writes += 1;
            }
            writes
        })
    };
    std::thread::sleep(std::time::Duration::from_millis(50));
    let before = disk_use(&record);
    let recorded = store.after_run(&ws, "r1");
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    assert!(grower.join().unwrap() > 10, "the file was growing");
    // Whatever became of the record, the store never held more than the cap, and no try
    // left its copy behind.
    assert!(disk_use(&record) - before <= cap + (1 << 20));
    assert_eq!(
        std::fs::read_dir(record.join("objects/tmp"))
            .unwrap()
            .count(),
        0
    );
    if let Err(e) = &recorded {
        assert!(
            matches!(
                e,
                CheckpointError::Unstable(_) | CheckpointError::OverCap { .. }
            ),
            "{e}"
        );
    }
    // Either way the run is undone: from its record, or put back as before it.
    assert_eq!(store.last_run().unwrap().as_deref(), Some("r1"));
    store.undo(&ws, "r1", false).unwrap();
    assert_eq!(std::fs::read(ws.join("thesis.txt")).unwrap(), THESIS);
    assert!(!ws.join("growing.log").exists());
}

#[test]
fn a_run_whose_changes_cannot_be_recorded_is_still_put_back_as_before_it() {
    let tmp = tempfile::tempdir().unwrap();
    let cap = 1 << 20;
    let (ws, _, store) = store_for(tmp.path(), cap);
    std::fs::create_dir(ws.join("data")).unwrap();
    std::fs::write(ws.join("data/keep.csv"), b"a,b\n").unwrap();
    store.before_run(&ws, "r1").unwrap();
    // The run rewrites the thesis, removes a folder, and writes more than the cap holds.
    std::fs::write(ws.join("thesis.txt"), b"x").unwrap();
    std::fs::remove_dir_all(ws.join("data")).unwrap();
    std::fs::write(ws.join("big.bin"), vec![1u8; 2 << 20]).unwrap();
    let failed = store.after_run(&ws, "r1").unwrap_err();
    assert!(
        matches!(failed, CheckpointError::OverCap { .. }),
        "{failed}"
    );
    // Linked to its before-state: the newest run, and the next before-run scan fails too,
    // so no run after it can be proven undoable.
    assert_eq!(store.last_run().unwrap().as_deref(), Some("r1"));
    assert!(store.before_run(&ws, "r2").is_err());
    store.forget_run("r2").unwrap();
    // Put back from the metadata alone, though no scan can record the run.
    match store.undo(&ws, "r1", false).unwrap() {
        UndoOutcome::Restored { changes, .. } => assert!(changes.len() >= 3),
        other => panic!("{other:?}"),
    }
    assert_eq!(std::fs::read(ws.join("thesis.txt")).unwrap(), THESIS);
    assert_eq!(std::fs::read(ws.join("data/keep.csv")).unwrap(), b"a,b\n");
    assert!(!ws.join("big.bin").exists());
    assert!(store.is_undone("r1").unwrap());
    assert!(matches!(
        store.undo(&ws, "r1", false),
        Err(CheckpointError::AlreadyUndone(_))
    ));
    assert!(matches!(
        store.redo(&ws, "r1"),
        Err(CheckpointError::NoRedo(_))
    ));
    // And the record goes on: the next run is recorded and undone as usual.
    store.before_run(&ws, "r3").unwrap();
    std::fs::write(ws.join("thesis.txt"), b"edited").unwrap();
    store.after_run(&ws, "r3").unwrap();
    store.undo(&ws, "r3", false).unwrap();
    assert_eq!(std::fs::read(ws.join("thesis.txt")).unwrap(), THESIS);
}

#[test]
fn a_run_left_unrecorded_is_recorded_by_the_next_scan_that_can_and_undone_from_it() {
    let tmp = tempfile::tempdir().unwrap();
    let (ws, _, store) = store_for(tmp.path(), 1 << 20);
    store.before_run(&ws, "r1").unwrap();
    std::fs::write(ws.join("thesis.txt"), b"x").unwrap();
    std::fs::write(ws.join("big.bin"), vec![1u8; 2 << 20]).unwrap();
    assert!(store.after_run(&ws, "r1").is_err());
    // The person deletes the big file by hand: the scan can now record the rest, as the
    // run's (not as a change made outside any run, which undo could not take back).
    std::fs::remove_file(ws.join("big.bin")).unwrap();
    store.undo(&ws, "r1", false).unwrap();
    assert_eq!(std::fs::read(ws.join("thesis.txt")).unwrap(), THESIS);
    // This undo came from a record: it can be redone.
    store.redo(&ws, "r1").unwrap();
    assert_eq!(std::fs::read(ws.join("thesis.txt")).unwrap(), b"x");
}

#[test]
fn copies_stop_before_the_disk_floor_and_say_so() {
    let tmp = tempfile::tempdir().unwrap();
    let (ws, _, store) = store_for(tmp.path(), u64::MAX / 4);
    // A floor above what the disk has free: no copy may be made.
    store.keep_free(u64::MAX / 2);
    store.before_run(&ws, "r1").unwrap_err();
    store.keep_free(0);
    store.before_run(&ws, "r1").unwrap();
    std::fs::write(ws.join("thesis.txt"), b"x").unwrap();
    store.keep_free(u64::MAX / 2);
    match store.after_run(&ws, "r1") {
        Err(CheckpointError::DiskLow { .. }) => {}
        other => panic!("{other:?}"),
    }
    store.undo(&ws, "r1", false).unwrap();
    assert_eq!(std::fs::read(ws.join("thesis.txt")).unwrap(), THESIS);
}

/// Inotify watches this process holds now, from the kernel's own account.
fn watches_held() -> usize {
    std::fs::read_dir("/proc/self/fdinfo")
        .unwrap()
        .flatten()
        .filter_map(|e| std::fs::read_to_string(e.path()).ok())
        .map(|t| t.lines().filter(|l| l.starts_with("inotify wd:")).count())
        .sum()
}

#[test]
fn the_watch_takes_at_most_its_share_of_the_users_inotify_watches_and_walks_beyond() {
    let tmp = tempfile::tempdir().unwrap();
    let (ws, _, store) = store_for(tmp.path(), DEFAULT_CAP_BYTES);
    let share = super::watch::watch_share();
    store.before_run(&ws, "r1").unwrap();
    let folders = share + 500;
    for i in 0..folders {
        std::fs::create_dir(ws.join(format!("f{i:06}"))).unwrap();
    }
    std::fs::write(ws.join("thesis.txt"), b"changed").unwrap();
    let changes = store.after_run(&ws, "r1").unwrap();
    // The pressure was real: more folders than the share, each of which a watch would take.
    assert!(
        changes.len() > share,
        "{} changes, share {share}",
        changes.len()
    );
    let held = watches_held();
    assert!(held <= share, "{held} watches held, share {share}");
    // Another program of the same user still gets watches.
    let other = nix::sys::inotify::Inotify::init(nix::sys::inotify::InitFlags::IN_CLOEXEC).unwrap();
    other
        .add_watch(tmp.path(), nix::sys::inotify::AddWatchFlags::IN_CREATE)
        .unwrap();
    // And the walk finds what changed next, and undo puts it back.
    store.before_run(&ws, "r2").unwrap();
    std::fs::remove_dir(ws.join("f000007")).unwrap();
    let changes = store.after_run(&ws, "r2").unwrap();
    assert_eq!(changes.len(), 1);
    store.undo(&ws, "r2", false).unwrap();
    store.undo(&ws, "r1", false).unwrap();
    assert_eq!(std::fs::read(ws.join("thesis.txt")).unwrap(), THESIS);
    assert_eq!(std::fs::read_dir(&ws).unwrap().count(), 1);
}
