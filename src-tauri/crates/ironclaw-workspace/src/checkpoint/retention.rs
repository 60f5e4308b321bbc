//! How much undo history is kept: a cap per conversation (each [`Store`]'s own, kept as it
//! records), and one over all conversations together ([`enforce_total`]). Either way the
//! oldest records go first; their runs then say they expired, and nothing a later run needs
//! is dropped (the copies `current` names are never dropped).

use std::sync::Arc;
use std::time::SystemTime;

use super::log::{write_durably, LogEntry};
use super::{Hash, Node, Result, State, Store};

/// What [`enforce_total`] found and did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Retention {
    /// Bytes of copies all the records hold now.
    pub kept: u64,
    /// Records dropped to get there, as halvings of one conversation's oldest records.
    pub halvings: usize,
    /// The cap could not be met: what the workspaces hold now is copied once and never
    /// dropped, and alone takes more than the cap.
    pub over: bool,
}

/// Drops the oldest records of all `stores` (whichever conversation they belong to) until
/// their copies take at most `total` bytes together.
pub fn enforce_total(stores: &[Arc<Store>], total: u64) -> Result<Retention> {
    let mut halvings = 0;
    loop {
        let kept: u64 = stores.iter().map(|s| s.kept_bytes()).sum();
        if kept <= total {
            return Ok(Retention {
                kept,
                halvings,
                over: false,
            });
        }
        let mut oldest: Option<(SystemTime, &Arc<Store>)> = None;
        for store in stores {
            if let Some(t) = store.oldest_droppable()? {
                if oldest.is_none_or(|(o, _)| t < o) {
                    oldest = Some((t, store));
                }
            }
        }
        let Some((_, store)) = oldest else {
            return Ok(Retention {
                kept,
                halvings,
                over: true,
            });
        };
        let mut state = store.state()?;
        store.drop_older_half(&mut state)?;
        let keep = store.referenced(&state)?;
        store.objects.remove_unreferenced(&keep);
        halvings += 1;
    }
}

/// Bytes of copies kept by every record under `dir` (one folder per conversation), read from
/// the copies themselves: what Settings shows, without loading any record.
pub fn kept_under(dir: &std::path::Path) -> u64 {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    entries
        .flatten()
        .map(|e| super::objects::stored_bytes(&e.path().join("objects")))
        .sum()
}

/// Records whose copies can still be dropped, oldest first.
fn droppable(state: &State) -> impl Iterator<Item = &LogEntry> {
    state
        .log
        .iter()
        .filter(move |e| e.seq > state.pruned_through && e.changed > 0)
}

impl Store {
    /// The most bytes of copies this record keeps.
    pub fn cap(&self) -> u64 {
        self.cap.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// A new cap (Settings changed it); the next record keeps to it.
    pub fn set_cap(&self, cap: u64) {
        self.cap.store(cap, std::sync::atomic::Ordering::Relaxed);
    }

    /// Bytes of copies kept.
    pub fn kept_bytes(&self) -> u64 {
        self.objects.total()
    }

    /// When the oldest record that still holds copies was written.
    pub fn oldest_droppable(&self) -> Result<Option<SystemTime>> {
        let state = self.state()?;
        let Some(entry) = droppable(&state).next() else {
            return Ok(None);
        };
        let path = self.dir.join("records").join(entry.seq.to_string());
        // A record that cannot be dated goes first: it is the oldest this store has.
        Ok(Some(
            std::fs::metadata(&path)
                .and_then(|m| m.modified())
                .unwrap_or(SystemTime::UNIX_EPOCH),
        ))
    }

    /// Drops the oldest records (their runs can no longer be undone) and the copies nothing
    /// else needs, until the copies take at most half the cap or no record is left to drop.
    pub(super) fn make_room(&self, state: &mut State) -> Result<()> {
        loop {
            let keep = self.referenced(state)?;
            self.objects.remove_unreferenced(&keep);
            if self.objects.total() <= self.cap() / 2 || !self.drop_older_half(state)? {
                return Ok(());
            }
        }
    }

    /// Drops the older half of the records that hold copies (not yet the copies themselves):
    /// one sweep of the store per halving, not per record. `false` when none is left.
    fn drop_older_half(&self, state: &mut State) -> Result<bool> {
        let droppable: Vec<u64> = droppable(state).map(|e| e.seq).collect();
        let Some(&through) = droppable.get(droppable.len().saturating_sub(1) / 2) else {
            return Ok(false);
        };
        // The records about to go must not be needed to rebuild `current` (see `load`).
        if state.snapshot_seq < state.log.last().map_or(0, |e| e.seq) {
            self.write_snapshot(state)?;
        }
        for seq in droppable.iter().take_while(|s| **s <= through) {
            let _ = std::fs::remove_file(self.dir.join("records").join(seq.to_string()));
        }
        state.pruned_through = through;
        write_durably(&self.dir.join("pruned"), through.to_string().as_bytes())?;
        tracing::info!(
            through,
            "checkpoint: dropped the oldest records to stay within the cap"
        );
        Ok(true)
    }

    /// Every content hash still needed: the workspace as last seen, and both sides of every
    /// record kept.
    pub(super) fn referenced(&self, state: &State) -> Result<std::collections::HashSet<Hash>> {
        let mut keep = std::collections::HashSet::new();
        let mut add = |n: Option<&Node>| {
            if let Some(Node::File { content, .. }) = n {
                keep.insert(*content);
            }
        };
        for node in state.current.values() {
            add(Some(node));
        }
        for e in state
            .log
            .iter()
            .filter(|e| e.seq > state.pruned_through && e.changed > 0)
        {
            for c in self.read_record(e.seq)? {
                add(c.before.as_ref());
                add(c.after.as_ref());
            }
        }
        Ok(keep)
    }
}
