//! The process's descriptor budget. A desktop session starts programs with a soft limit of
//! 1,024 open descriptors (kept low for old `select(2)` code) under a hard limit that is
//! usually far higher; IronClaw's bookkeeping is bounded whatever a workspace holds (see
//! `checkpoint::scan`), but everything else (engine connections, watches, logs) gets the room
//! the system allows.

/// Raises the soft limit on open descriptors to the hard limit. Returns the soft limit before
/// and after, or `None` when the limits could not be read or changed (then they stay as they
/// were, which is only less room, never less safety).
pub fn raise_descriptor_limit() -> Option<(u64, u64)> {
    use nix::sys::resource::{getrlimit, setrlimit, Resource};
    let (soft, hard) = getrlimit(Resource::RLIMIT_NOFILE).ok()?;
    if soft >= hard {
        return Some((soft, soft));
    }
    setrlimit(Resource::RLIMIT_NOFILE, hard, hard).ok()?;
    Some((soft, hard))
}
