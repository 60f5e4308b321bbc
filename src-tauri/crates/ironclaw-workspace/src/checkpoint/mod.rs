//! Per-run checkpoints of a workspace: what each run changed, and putting back exactly the
//! state before it.
//!
//! A [`Store`] lives in IronClaw's data folder, outside the workspace mount and anything the
//! sandbox can reach. It keeps
//!
//! - `current`: the workspace as last seen (names, kinds, modes, link targets, content hashes);
//! - `objects/`: every file content seen, once, as an independent copy (see [`objects`]);
//! - `log` and `records/<seq>`: one record per run (and per change made between runs, and per
//!   undo or redo), each the list of paths it changed with both sides.
//!
//! Before a run, [`Store::before_run`] brings `current` up to date (changes made since the last
//! run are recorded as made *outside* a run) and notes the run as started; afterwards
//! [`Store::after_run`] records what it changed. A run the app never finished (a crash, `kill
//! -9`) is recorded by the next `before_run` with what was found. A file is read only when its
//! stamp moved; while the process keeps its `Store`, only the names the kernel reported changed
//! are looked at (see [`watch`]), so a run that changed nothing costs no walk of the workspace.

mod live;
mod log;
mod node;
mod objects;
mod restore;
mod retention;
mod scan;
mod sides;
mod undo;
mod watch;

use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};

pub use log::RecordKind;
use log::{append_log, is_undone, last_run_entry, parse_log, write_durably, LogEntry};
pub use node::{diff, Change, ChangeKind, Manifest, Node, Stamp};
pub use objects::Hash;
use objects::Objects;
pub use retention::{enforce_total, kept_under, Retention};
use scan::Budget;
use scan::State as ScannedState;
pub use sides::Stored;
pub use undo::{Rewound, UndoOutcome};

#[derive(Debug, thiserror::Error)]
pub enum CheckpointError {
    #[error("{path}: {reason}")]
    Io { path: String, reason: String },
    #[error("could not read {path:?} in the workspace: {reason}")]
    Refused { path: String, reason: String },
    #[error(
        "{0:?} kept changing while it was copied (is a process the code started still writing \
         it?); the run's changes could not be recorded"
    )]
    Unstable(String),
    #[error("could not put back {path:?}: {reason}")]
    Restore { path: String, reason: String },
    #[error(
        "the checkpoint record is damaged ({0}); runs before now cannot be undone. Delete the \
         conversation's checkpoints folder to start a new record"
    )]
    Corrupt(String),
    #[error("no run {0} in this workspace's record (runs from before checkpoints began cannot be undone)")]
    UnknownRun(String),
    #[error(
        "the workspace's changes need {needed} bytes of checkpoint copies, more than its cap \
         allows even after dropping the oldest undo history; this run cannot be undone"
    )]
    OverCap { needed: u64 },
    #[error(
        "the workspace's changed files hold {bytes} bytes (holes in sparse files included), \
         more than one checkpoint reads ({most}); this run cannot be undone"
    )]
    TooMuchToRead { bytes: u64, most: u64 },
    #[error(
        "the disk holding IronClaw's data has {free} bytes free, and a checkpoint never takes it \
         below {keep_free}; this run cannot be undone. Free some space"
    )]
    DiskLow { free: u64, keep_free: u64 },
    #[error(
        "run {0} can no longer be undone: its checkpoint was dropped to stay within the size cap"
    )]
    Expired(String),
    #[error("run {0} is already undone")]
    AlreadyUndone(String),
    #[error("run {0} is not undone, so there is nothing to redo")]
    NotUndone(String),
    #[error(
        "run {0} was put back as before it without a record of its changes, so it cannot be \
         redone"
    )]
    NoRedo(String),
    #[error(
        "files of this run were changed since outside any run ({0}); move them out of the way \
         or put them back first, then undo again"
    )]
    ChangedOutside(String),
}

impl CheckpointError {
    /// A file operation on `path` failed.
    pub fn io(path: impl AsRef<Path>, e: std::io::Error) -> Self {
        CheckpointError::Io {
            path: path.as_ref().display().to_string(),
            reason: e.to_string(),
        }
    }
}

type Result<T, E = CheckpointError> = std::result::Result<T, E>;

/// The checkpoint record of one workspace.
pub struct Store {
    dir: PathBuf,
    objects: Objects,
    /// The most bytes of copies kept; the oldest records go first to stay under it.
    cap: std::sync::atomic::AtomicU64,
    /// Whether scans start a watch (see [`Store::watch_workspace`]).
    watching: std::sync::atomic::AtomicBool,
    /// Free space copies never take the data folder's disk below.
    keep_free: std::sync::atomic::AtomicU64,
    state: Mutex<State>,
}

/// Entries in the record from which a store told not to watch (see [`Store::watch_workspace`])
/// watches anyway: by `ironclaw bench`, a walk costs about 2 µs an entry, closing a watch about
/// 5 ms.
pub const WATCH_ANYWAY_FROM: usize = 2_500;

/// The cap when none is configured.
pub const DEFAULT_CAP_BYTES: u64 = 2 << 30;

/// Free space kept on the data folder's disk when none is configured.
pub const DEFAULT_KEEP_FREE_BYTES: u64 = 1 << 30;

struct State {
    current: Manifest,
    log: Vec<LogEntry>,
    /// The log's length as this process last wrote or read it: when the file is longer,
    /// another process (`ironclaw undo` while the app runs) added to the record.
    log_len: u64,
    /// Records up to this one were dropped for the cap: their runs cannot be undone.
    pruned_through: u64,
    /// The newest record the `current` file on disk includes; later ones are replayed onto it
    /// when the record is loaded.
    snapshot_seq: u64,
    /// What changed in the workspace since `current` was scanned, as the kernel reports it;
    /// `None` until the first scan in this process, and after anything that makes its reports
    /// incomplete (a record reloaded from another process's writes, a failed scan).
    watch: Option<watch::Watch>,
    /// Scans in this process that walked the whole workspace (the first, and each the watch
    /// could not vouch for).
    full_walks: u64,
    /// Files some process held open for writing at the last scan.
    held: std::collections::BTreeSet<Vec<u8>>,
}

/// The record, locked against this process's other threads and, with `flock`, against other
/// processes; up to date with what they wrote.
struct Locked<'a> {
    state: MutexGuard<'a, State>,
    _flock: Option<nix::fcntl::Flock<std::fs::File>>,
}

impl std::ops::Deref for Locked<'_> {
    type Target = State;
    fn deref(&self) -> &State {
        &self.state
    }
}

impl std::ops::DerefMut for Locked<'_> {
    fn deref_mut(&mut self) -> &mut State {
        &mut self.state
    }
}

/// The runs of the record in `dir` whose copies were dropped for a cap: they can no longer be
/// undone. Reads only the log, so a conversation's view can mark them cheaply.
pub fn expired_runs(dir: &Path) -> Result<std::collections::HashSet<String>> {
    let log = match std::fs::read_to_string(dir.join("log")) {
        Ok(text) => parse_log(&text)?,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Default::default()),
        Err(e) => return Err(CheckpointError::io(dir.join("log"), e)),
    };
    let pruned: u64 = std::fs::read_to_string(dir.join("pruned"))
        .ok()
        .and_then(|t| t.trim().parse().ok())
        .unwrap_or(0);
    let runs: std::collections::HashSet<&String> =
        log.iter().filter_map(|e| e.run.as_ref()).collect();
    Ok(runs
        .into_iter()
        .filter(|r| last_run_entry(&log, r).is_ok_and(|e| e.seq <= pruned && e.changed > 0))
        .cloned()
        .collect())
}

/// The run of the record in `dir` whose changes could not be recorded when it ended, if any:
/// it is linked to the state before it and can be put back (see [`Store::undo`]). Reads one
/// small file, so a conversation's view can mark it cheaply.
pub fn unrecorded_run(dir: &Path) -> Option<String> {
    read_pending(dir).and_then(|(run, ended)| ended.then_some(run))
}

/// The `pending` note in `dir`: the run started and not recorded yet, and whether it ended
/// (`<run> ended`) without its changes recorded.
fn read_pending(dir: &Path) -> Option<(String, bool)> {
    let text = std::fs::read_to_string(dir.join("pending")).ok()?;
    let mut words = text.split_whitespace();
    let run = words.next()?.to_owned();
    Some((run, words.next() == Some("ended")))
}

/// The whole manifest is written every this many records (and before records are dropped):
/// between, `current` on disk is the last snapshot plus the records after it.
const SNAPSHOT_EVERY: u64 = 64;

fn load(dir: &Path) -> Result<State> {
    let (log, log_len) = match std::fs::read_to_string(dir.join("log")) {
        Ok(text) => (parse_log(&text)?, text.len() as u64),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => (Vec::new(), 0),
        Err(e) => return Err(CheckpointError::io(dir.join("log"), e)),
    };
    let newest = log.last().map_or(0, |e| e.seq);
    let (mut current, snapshot_seq) = match std::fs::read_to_string(dir.join("current")) {
        Ok(text) => match text.strip_prefix("seq ").and_then(|t| t.split_once('\n')) {
            Some((seq, rest)) => (
                node::decode_manifest(rest)?,
                seq.parse()
                    .map_err(|_| CheckpointError::Corrupt("the snapshot's first line".into()))?,
            ),
            // Written whole after every change (before snapshots): up to date.
            None => (node::decode_manifest(&text)?, newest),
        },
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => (Manifest::new(), 0),
        Err(e) => return Err(CheckpointError::io(dir.join("current"), e)),
    };
    for entry in log.iter().filter(|e| e.seq > snapshot_seq && e.changed > 0) {
        let path = dir.join("records").join(entry.seq.to_string());
        let text = std::fs::read_to_string(&path).map_err(|e| CheckpointError::io(&path, e))?;
        for change in node::decode_changes(&text)? {
            match change.after {
                Some(n) => current.insert(change.path, n),
                None => current.remove(&change.path),
            };
        }
    }
    let pruned_through = std::fs::read_to_string(dir.join("pruned"))
        .ok()
        .and_then(|t| t.trim().parse().ok())
        .unwrap_or(0);
    Ok(State {
        current,
        log,
        log_len,
        pruned_through,
        snapshot_seq,
        watch: None,
        full_walks: 0,
        held: Default::default(),
    })
}

impl Store {
    /// Opens (or starts) the record in `dir`, which must not be inside the workspace, keeping
    /// at most `cap` bytes of copies.
    pub fn open(dir: &Path, cap: u64) -> Result<Store> {
        std::fs::create_dir_all(dir.join("records")).map_err(|e| CheckpointError::io(dir, e))?;
        let objects = Objects::open(dir.join("objects"))?;
        let state = load(dir)?;
        Ok(Store {
            dir: dir.to_owned(),
            objects,
            cap: cap.into(),
            watching: true.into(),
            keep_free: DEFAULT_KEEP_FREE_BYTES.into(),
            state: Mutex::new(state),
        })
    }

    /// Whether scans keep an inotify watch on the workspace so the next scan looks only at
    /// what changed (on by default). A process that runs once and exits (`ironclaw exec`) turns
    /// it off: closing an inotify instance that had watches waits for the kernel's SRCU grace
    /// period, which costs more than a second walk of a small workspace. A workspace of
    /// [`WATCH_ANYWAY_FROM`] entries or more is watched all the same.
    pub fn watch_workspace(&self, on: bool) {
        self.watching
            .store(on, std::sync::atomic::Ordering::Relaxed);
    }

    /// The free space copies never take the disk holding the record below (the profile's
    /// `workspace.keep_free`: the same floor a run's writes keep).
    pub fn keep_free(&self, bytes: u64) {
        self.keep_free
            .store(bytes, std::sync::atomic::Ordering::Relaxed);
    }

    /// What the next scan's copies may cost: the cap less what is stored, and no more than
    /// leaves `keep_free` on the disk; one cap's worth of contents read.
    fn budget(&self) -> Result<Budget> {
        let keep_free = self.keep_free.load(std::sync::atomic::Ordering::Relaxed);
        let room = self.free_bytes()?.saturating_sub(keep_free);
        Ok(Budget {
            disk: self.cap().saturating_sub(self.objects.total()).min(room),
            read: self.cap(),
        })
    }

    /// Bytes free to an unprivileged writer on the disk holding the record.
    fn free_bytes(&self) -> Result<u64> {
        let fs = nix::sys::statvfs::statvfs(&self.dir)
            .map_err(|e| CheckpointError::io(&self.dir, e.into()))?;
        Ok((fs.blocks_available() as u64).saturating_mul(fs.fragment_size() as u64))
    }

    /// Whether the disk is what stops the copies now (not the cap, which dropping old
    /// history can make room under).
    fn disk_low(&self) -> Option<CheckpointError> {
        let keep_free = self.keep_free.load(std::sync::atomic::Ordering::Relaxed);
        let free = self.free_bytes().ok()?;
        (free <= keep_free.saturating_add(self.cap().saturating_sub(self.objects.total())))
            .then_some(CheckpointError::DiskLow { free, keep_free })
    }

    /// Takes the record's locks and reloads it if another process added to it meanwhile.
    fn state(&self) -> Result<Locked<'_>> {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let lock_path = self.dir.join("lock");
        let file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&lock_path)
            .map_err(|e| CheckpointError::io(&lock_path, e))?;
        let flock = nix::fcntl::Flock::lock(file, nix::fcntl::FlockArg::LockExclusive)
            .map_err(|(_, e)| CheckpointError::io(&lock_path, e.into()))?;
        let len = std::fs::metadata(self.dir.join("log")).map_or(0, |m| m.len());
        if len != state.log_len {
            // Its `current` is another process's scan: the watch cannot vouch for it.
            let walks = state.full_walks;
            *state = load(&self.dir)?;
            state.full_walks = walks;
        }
        Ok(Locked {
            state,
            _flock: Some(flock),
        })
    }

    /// Brings the record up to date with `workspace` and notes `run` as started. Changes found
    /// are recorded as made outside a run, or, when the last run never finished (or finished
    /// without its changes recorded), as that run's.
    pub fn before_run(&self, workspace: &Path, run: &str) -> Result<Vec<Change>> {
        let found = {
            let mut state = self.state()?;
            // Nobody else writes while the lock is held: a half-written object is a crash's.
            self.objects.clean_tmp();
            let (kind, owner) = match self.pending() {
                Some((p, _)) => (RecordKind::Interrupted, Some(p)),
                None => (RecordKind::Outside, None),
            };
            self.sync(&mut state, workspace, kind, owner)?
        };
        log::write_atomically(&self.dir.join("pending"), run.as_bytes())?;
        Ok(found)
    }

    /// The run noted as started and not recorded yet, and whether it has ended: a run whose
    /// changes could not be recorded when it ended stays linked to its before-state, and
    /// whatever the next scan finds is its.
    fn pending(&self) -> Option<(String, bool)> {
        read_pending(&self.dir)
    }

    /// `run`, noted as started by [`Store::before_run`], never started (its sandbox could not
    /// be reached, its workspace was over quota): it is no longer pending, so what changes
    /// next is recorded as made outside a run, not as its. Another run's note is left alone.
    pub fn forget_run(&self, run: &str) -> Result<()> {
        let _state = self.state()?;
        let path = self.dir.join("pending");
        match self.pending() {
            Some((p, _)) if p == run => {
                std::fs::remove_file(&path).map_err(|e| CheckpointError::io(&path, e))
            }
            _ => Ok(()),
        }
    }

    /// Records what `run` changed. When that fails (the disk, the cap, a file that kept
    /// changing…), the run stays linked to its before-state: the next scan that succeeds
    /// records what it finds as the run's, and [`Store::undo`] can put the workspace back as
    /// it was before the run even when no scan can finish.
    pub fn after_run(&self, workspace: &Path, run: &str) -> Result<Vec<Change>> {
        let recorded = self.state().and_then(|mut state| {
            self.sync(&mut state, workspace, RecordKind::Run, Some(run.to_owned()))
        });
        match recorded {
            Ok(changes) => {
                let _ = std::fs::remove_file(self.dir.join("pending"));
                Ok(changes)
            }
            Err(e) => {
                if let Err(marked) =
                    log::write_durably(&self.dir.join("pending"), format!("{run} ended").as_bytes())
                {
                    tracing::warn!(error = %marked, "could not mark the run as ended unrecorded");
                }
                Err(e)
            }
        }
    }

    /// Brings the record up to date between runs (before an undo or redo): what changed is
    /// the unrecorded run's, if one ended so, else made outside any run.
    fn sync_between_runs(&self, state: &mut State, workspace: &Path) -> Result<Vec<Change>> {
        match self.pending() {
            Some((run, true)) => {
                let changes = self.sync(state, workspace, RecordKind::Interrupted, Some(run))?;
                let _ = std::fs::remove_file(self.dir.join("pending"));
                Ok(changes)
            }
            _ => self.sync(state, workspace, RecordKind::Outside, None),
        }
    }

    /// What `run` changed, as recorded.
    pub fn changes_of(&self, run: &str) -> Result<Vec<Change>> {
        let state = self.state()?;
        let entry = last_run_entry(&state.log, run)?;
        if entry.seq <= state.pruned_through && entry.changed > 0 {
            return Err(CheckpointError::Expired(run.to_owned()));
        }
        self.read_record(entry.seq)
    }

    /// The newest run that is not undone: what "undo" with no run named takes back.
    pub fn last_run(&self) -> Result<Option<String>> {
        let state = self.state()?;
        // A run that ended unrecorded is the newest, and can be put back.
        if let Some((run, true)) = self.pending() {
            return Ok(Some(run));
        }
        Ok(state
            .log
            .iter()
            .rev()
            .filter(|e| matches!(e.kind, RecordKind::Run | RecordKind::Interrupted))
            .filter(|e| e.seq > state.pruned_through || e.changed == 0)
            .filter_map(|e| e.run.clone())
            .find(|r| !is_undone(&state.log, r)))
    }

    /// How many scans in this process walked the whole workspace rather than only the names
    /// the kernel reported changed (see [`watch`]).
    pub fn full_walks(&self) -> Result<u64> {
        Ok(self.state()?.full_walks)
    }

    /// Files some process held open for writing (a descriptor, or a shared mapping) when the
    /// record was last brought up to date: they can change at any moment without a record, so
    /// no run can be proven undoable while one is held (see `live.rs`).
    ///
    /// The first call after a walk asks every file of `workspace` (who opened what before the
    /// watch began is not known); later ones only the files opened since, which the scans ask.
    pub fn held_for_writing(&self, workspace: &Path) -> Result<Vec<String>> {
        let mut state = self.state()?;
        let asked_all = state.watch.as_ref().is_some_and(|w| w.asked_all);
        if !asked_all {
            let files: Vec<Vec<u8>> = state
                .current
                .iter()
                .filter(|(_, n)| matches!(n, Node::File { .. }))
                .map(|(p, _)| p.clone())
                .collect();
            let mut held = scan::held_among(workspace, files.iter(), state.watch.as_mut())?;
            // Held by the scans since (new files, copies) and not in `current` yet.
            held.extend(state.held.iter().cloned());
            if let Some(w) = state.watch.as_mut() {
                w.live.extend(held.iter().cloned());
                w.asked_all = true;
            }
            state.held = held;
        }
        Ok(state
            .held
            .iter()
            .map(|p| String::from_utf8_lossy(p).into_owned())
            .collect())
    }

    /// Whether `run` is undone now (its last undo is newer than its last redo).
    pub fn is_undone(&self, run: &str) -> Result<bool> {
        Ok(is_undone(&self.state()?.log, run))
    }

    /// Scans, records the difference from `current` under `kind`, and makes the scan current.
    fn sync(
        &self,
        state: &mut State,
        workspace: &Path,
        kind: RecordKind,
        run: Option<String>,
    ) -> Result<Vec<Change>> {
        let synced = self.sync_with(state, workspace, kind, run);
        if synced.is_err() {
            // What the watch reported since `current` was not all recorded.
            state.watch = None;
        }
        synced
    }

    fn sync_with(
        &self,
        state: &mut State,
        workspace: &Path,
        kind: RecordKind,
        run: Option<String>,
    ) -> Result<Vec<Change>> {
        // A failed scan leaves `current` as it was; the watch is dropped (by `sync`).
        // Even a one-run process watches a large workspace: a second walk of 10,000 files
        // (~20 ms, `ironclaw bench`'s checkpoint section) costs more than closing a watch.
        let watching = self.watching.load(std::sync::atomic::Ordering::Relaxed)
            || state.current.len() >= WATCH_ANYWAY_FROM;
        let scanned = match scan::scan(
            workspace,
            &state.current,
            &self.objects,
            self.budget()?,
            &mut state.watch,
            watching,
        ) {
            Err(CheckpointError::OverCap { needed }) => {
                self.objects.abandon();
                // The names the watch reported were taken by the scan that failed: the retry
                // walks everything.
                state.watch = None;
                self.make_room(state)?;
                match scan::scan(
                    workspace,
                    &state.current,
                    &self.objects,
                    self.budget()?,
                    &mut state.watch,
                    watching,
                ) {
                    // Said as what stops it: the disk's floor, or the cap.
                    Err(CheckpointError::OverCap { .. }) => Err(self
                        .disk_low()
                        .unwrap_or(CheckpointError::OverCap { needed })),
                    other => other,
                }
            }
            other => other,
        };
        let now = match scanned.and_then(|m| self.objects.commit().map(|()| m)) {
            Ok(scanned) => {
                state.full_walks += u64::from(scanned.walked);
                if scanned.walked || !matches!(scanned.state, ScannedState::Same) {
                    state.held = scanned.held;
                }
                scanned.state
            }
            Err(e) => {
                self.objects.abandon();
                return Err(e);
            }
        };
        let changes = match &now {
            ScannedState::Same => Vec::new(),
            ScannedState::Whole(m) => diff(&state.current, m),
            // Only the names looked at can differ: the cost follows what changed, not the
            // workspace's size.
            ScannedState::Patch { set, removed } => {
                let touched: Manifest = removed
                    .iter()
                    .chain(set.keys())
                    .filter_map(|p| state.current.get(p).map(|n| (p.clone(), n.clone())))
                    .collect();
                let mut after = touched.clone();
                for p in removed {
                    after.remove(p);
                }
                after.extend(set.iter().map(|(p, n)| (p.clone(), n.clone())));
                diff(&touched, &after)
            }
        };
        match now {
            ScannedState::Same => {}
            ScannedState::Whole(m) => state.current = m,
            ScannedState::Patch { set, removed } => {
                for p in &removed {
                    state.current.remove(p);
                }
                state.current.extend(set);
            }
        }
        // An outside record with nothing in it says nothing.
        if changes.is_empty() && kind == RecordKind::Outside {
            return Ok(changes);
        }
        self.append_record(state, kind, run, &changes)?;
        Ok(changes)
    }

    /// Adds `changes` to the record as the next entry, of `kind` for `run`.
    fn append_record(
        &self,
        state: &mut State,
        kind: RecordKind,
        run: Option<String>,
        changes: &[Change],
    ) -> Result<()> {
        let seq = state.log.last().map_or(1, |e| e.seq + 1);
        if !changes.is_empty() {
            write_durably(
                &self.dir.join("records").join(seq.to_string()),
                node::encode_changes(changes).as_bytes(),
            )?;
        }
        let entry = LogEntry {
            seq,
            kind,
            run,
            changed: changes.len(),
        };
        state.log_len += append_log(&self.dir.join("log"), &entry)?;
        state.log.push(entry);
        // The record is the change; the whole manifest is written now and then, so that a
        // change costs what it changed (see `load`).
        if !changes.is_empty() && seq >= state.snapshot_seq + SNAPSHOT_EVERY {
            self.write_snapshot(state)?;
        }
        Ok(())
    }

    /// Writes `current` whole, as of the newest record.
    fn write_snapshot(&self, state: &mut State) -> Result<()> {
        let seq = state.log.last().map_or(0, |e| e.seq);
        let mut text = format!("seq {seq}\n");
        text.push_str(&node::encode_manifest(&state.current));
        write_durably(&self.dir.join("current"), text.as_bytes())?;
        state.snapshot_seq = seq;
        Ok(())
    }

    fn read_record(&self, seq: u64) -> Result<Vec<Change>> {
        let path = self.dir.join("records").join(seq.to_string());
        match std::fs::read_to_string(&path) {
            Ok(text) => node::decode_changes(&text),
            // A record of no changes has no file.
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Vec::new()),
            Err(e) => Err(CheckpointError::io(&path, e)),
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod pressure_tests;
#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests;
#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod watch_tests;
