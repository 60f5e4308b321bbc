//! Taking runs back: undo (with the later runs that changed the same files, when forced),
//! redo, and rewinding to a run (every later run undone, newest first). Nothing is ever
//! overwritten that a person or a later run changed unless that run is taken back too.

use std::path::Path;

use super::log::{is_undone, last_run_entry, RecordKind};
use super::restore::{self, Side};
use super::{Change, CheckpointError, Manifest, Node, Result, State, Store};

/// What undoing a run found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UndoOutcome {
    /// The workspace holds the state from before the run again (and before each later run
    /// that was taken back with it, newest first).
    Restored {
        changes: Vec<Change>,
        also_undone: Vec<String>,
    },
    /// Later runs changed the same files; nothing was changed. Undo those too with `force`.
    Conflicts {
        later_runs: Vec<String>,
        paths: Vec<String>,
    },
}

/// What rewinding to a run did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Rewound {
    /// The later runs undone, newest first, with what each put back.
    pub undone: Vec<(String, Vec<Change>)>,
    /// Why it stopped before the run rewound to, if it did.
    pub stopped: Option<String>,
}

impl Store {
    /// Puts back the state from before `run`. When later runs changed the same files, nothing
    /// is changed and they are named, unless `force`: then they are undone first, newest first.
    ///
    /// A run whose changes could not be recorded when it ended is undone from its record when
    /// a scan can now make one, and otherwise put back as it was before it (see
    /// [`Store::put_back`]): undo never depends on the bookkeeping that failed.
    pub fn undo(&self, workspace: &Path, run: &str, force: bool) -> Result<UndoOutcome> {
        let mut state = self.state()?;
        if let Err(e) = self.sync_between_runs(&mut state, workspace) {
            return match self.pending() {
                Some((pending, true)) if pending == run => {
                    tracing::info!(error = %e, "undo: the run is put back without a record");
                    self.put_back(&mut state, workspace, run)
                }
                _ => Err(e),
            };
        }
        let target = last_run_entry(&state.log, run)?.clone();
        if target.seq <= state.pruned_through && target.changed > 0 {
            return Err(CheckpointError::Expired(run.to_owned()));
        }
        if is_undone(&state.log, run) {
            return Err(CheckpointError::AlreadyUndone(run.to_owned()));
        }
        let changes = self.read_record(target.seq)?;
        let mut later_runs = Vec::new();
        let mut outside = Vec::new();
        let mut paths = Vec::new();
        for entry in state.log.iter().filter(|e| e.seq > target.seq) {
            let touched = self.read_record(entry.seq)?;
            let overlap: Vec<String> = touched
                .iter()
                .filter(|t| changes.iter().any(|c| related(&c.path, &t.path)))
                .map(Change::display_path)
                .collect();
            if overlap.is_empty() {
                continue;
            }
            match (&entry.kind, &entry.run) {
                (RecordKind::Run | RecordKind::Interrupted, Some(r))
                    if !is_undone(&state.log, r) && r != run =>
                {
                    if !later_runs.contains(r) {
                        later_runs.push(r.clone());
                    }
                    paths.extend(overlap);
                }
                (RecordKind::Outside, _) => outside.extend(overlap),
                // Undone runs, and the undo/redo records of runs, left those files as they
                // found them or are accounted for by their run's status.
                _ => {}
            }
        }
        // What is there now must be what the run left, path by path, or the undo would
        // overwrite something else.
        let unexplained: Vec<String> = changes
            .iter()
            .filter(|c| !matches_now(&state.current, c))
            .map(Change::display_path)
            .filter(|p| !paths.contains(p))
            .collect();
        if !outside.is_empty() || (!unexplained.is_empty() && later_runs.is_empty()) {
            let mut named = outside;
            named.extend(unexplained);
            named.sort();
            named.dedup();
            return Err(CheckpointError::ChangedOutside(named.join(", ")));
        }
        if !later_runs.is_empty() && !force {
            paths.sort();
            paths.dedup();
            return Ok(UndoOutcome::Conflicts { later_runs, paths });
        }
        let mut also_undone = Vec::new();
        for later in later_runs.iter().rev() {
            self.take_back(&mut state, workspace, later)?;
            also_undone.push(later.clone());
        }
        self.take_back(&mut state, workspace, run)?;
        Ok(UndoOutcome::Restored {
            changes,
            also_undone,
        })
    }

    /// Puts the workspace back as it was right after `run`: every later run that is not undone
    /// is undone, newest first. Stops at the first that cannot be (a file changed outside any
    /// run, an expired record) and says why; what was undone until then stays undone (the
    /// workspace is then as it was right after that run).
    pub fn rewind(&self, workspace: &Path, run: &str) -> Result<Rewound> {
        let later: Vec<String> = {
            let state = self.state()?;
            let target = last_run_entry(&state.log, run)?.seq;
            let mut later: Vec<String> = Vec::new();
            for e in state.log.iter().rev().filter(|e| e.seq > target) {
                if let (RecordKind::Run | RecordKind::Interrupted, Some(r)) = (&e.kind, &e.run) {
                    if r != run && !is_undone(&state.log, r) && !later.contains(r) {
                        later.push(r.clone());
                    }
                }
            }
            later
        };
        let mut rewound = Rewound::default();
        for r in later {
            match self.undo(workspace, &r, true) {
                Ok(UndoOutcome::Restored {
                    changes,
                    also_undone,
                }) => {
                    // Newest first, so nothing later is left to take with it.
                    debug_assert!(also_undone.is_empty());
                    rewound.undone.push((r, changes));
                }
                Ok(UndoOutcome::Conflicts { .. }) => {
                    rewound.stopped = Some(format!("run {r} could not be undone"));
                    break;
                }
                Err(CheckpointError::AlreadyUndone(_)) => {}
                Err(e) => {
                    rewound.stopped = Some(e.to_string());
                    break;
                }
            }
        }
        Ok(rewound)
    }

    /// Puts back what an undone `run` had made.
    pub fn redo(&self, workspace: &Path, run: &str) -> Result<Vec<Change>> {
        let mut state = self.state()?;
        self.sync_between_runs(&mut state, workspace)?;
        let target = last_run_entry(&state.log, run)?.clone();
        if target.kind == RecordKind::PutBack {
            return Err(CheckpointError::NoRedo(run.to_owned()));
        }
        if target.seq <= state.pruned_through && target.changed > 0 {
            return Err(CheckpointError::Expired(run.to_owned()));
        }
        if !is_undone(&state.log, run) {
            return Err(CheckpointError::NotUndone(run.to_owned()));
        }
        let changes = self.read_record(target.seq)?;
        let moved: Vec<String> = changes
            .iter()
            .filter(|c| !same_node(state.current.get(&c.path), c.before.as_ref()))
            .map(Change::display_path)
            .collect();
        if !moved.is_empty() {
            return Err(CheckpointError::ChangedOutside(moved.join(", ")));
        }
        restore::apply(workspace, &changes, Side::After, &self.objects)?;
        self.sync(
            &mut state,
            workspace,
            RecordKind::Redo,
            Some(run.to_owned()),
        )
    }

    /// Puts the workspace back as the record's `current` says it was before `run`, which
    /// ended without its changes recorded, from a walk of the metadata alone: whatever differs
    /// from the record (a file whose stamp moved, a name that is new, gone or of another kind)
    /// is made as the record says, from the stored copies. Nothing is read or copied from the
    /// workspace, so neither the shape of the tree nor the size of its files can stop it.
    fn put_back(&self, state: &mut State, workspace: &Path, run: &str) -> Result<UndoOutcome> {
        let now = super::scan::look_only(workspace, &state.current)?;
        // Each change goes from what is there now to what the record has.
        let changes = super::diff(&now, &state.current);
        restore::apply(workspace, &changes, Side::After, &self.objects)?;
        self.append_record(state, RecordKind::PutBack, Some(run.to_owned()), &changes)?;
        let _ = std::fs::remove_file(self.dir.join("pending"));
        // Restored files have new stamps: the next scan reads them again.
        state.watch = None;
        Ok(UndoOutcome::Restored {
            changes,
            also_undone: Vec::new(),
        })
    }

    fn take_back(&self, state: &mut State, workspace: &Path, run: &str) -> Result<Vec<Change>> {
        let entry = last_run_entry(&state.log, run)?.clone();
        let changes = self.read_record(entry.seq)?;
        restore::apply(workspace, &changes, Side::Before, &self.objects)?;
        self.sync(state, workspace, RecordKind::Undo, Some(run.to_owned()))
    }
}

/// One path is the other, or inside it.
fn related(a: &[u8], b: &[u8]) -> bool {
    let inside = |x: &[u8], y: &[u8]| x.len() > y.len() && x.starts_with(y) && x[y.len()] == b'/';
    a == b || inside(a, b) || inside(b, a)
}

fn same_node(a: Option<&Node>, b: Option<&Node>) -> bool {
    match (a, b) {
        (None, None) => true,
        (Some(a), Some(b)) => a.same_as(b),
        _ => false,
    }
}

fn matches_now(current: &Manifest, c: &Change) -> bool {
    same_node(current.get(&c.path), c.after.as_ref())
}
