//! Which wall a new sandbox gets on this engine, in words people read: `doctor`, the first-run
//! screen and Settings all say the same thing.

use serde::Serialize;

use super::Runtime;

/// How to get gVisor where it is missing.
pub const HOW_TO_GET_GVISOR: &str = "on a local Debian engine, IronClaw's set-up installs and registers it (`bash scripts/setup.sh`, as root); on another engine, install runsc and add it to the engine's `runtimes` with the arguments in docs/configuration.md (gVisor), then reload the engine";

/// The wall in force for one profile on one engine.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct Wall {
    /// The runtime a new sandbox of the profile gets; `None` when it cannot start (the profile
    /// requires gVisor and the engine lacks it).
    pub runtime: Option<Runtime>,
    /// Whether the engine has gVisor registered.
    pub gvisor_registered: bool,
    /// One sentence: which wall, and why.
    pub summary: String,
    /// What to do, when something should be done.
    pub fix: Option<String>,
}

/// The wall a new sandbox of a profile asking for `wanted` gets from an engine that has
/// gVisor registered or not.
pub fn wall_for(wanted: Runtime, gvisor_registered: bool) -> Wall {
    let runtime = wanted.resolve(gvisor_registered);
    let (summary, fix) = match (wanted, runtime) {
        (_, Some(Runtime::Runsc)) => (
            "new sandboxes run under gVisor: a second kernel between the code and this machine's".to_string(),
            None,
        ),
        // The shipped choice while gVisor has the gap SECURITY.md names: said, not warned about.
        (Runtime::Runc, _) if gvisor_registered => (
            "new sandboxes run under runc, as the profile asks; gVisor is registered too, and `runtime: auto` would use it (SECURITY.md, Runtimes, says what differs)".to_string(),
            None,
        ),
        (Runtime::Runc, _) => (
            "new sandboxes run under runc, as the profile asks: this machine's kernel is the only wall".to_string(),
            None,
        ),
        (_, Some(_)) => (
            "new sandboxes run under runc: gVisor is not registered with this engine, so this machine's kernel is the only wall".to_string(),
            Some(HOW_TO_GET_GVISOR.to_string()),
        ),
        (_, None) => (
            "the profile requires gVisor (`runtime: runsc`), which this engine does not have: its sandboxes cannot start".to_string(),
            Some(format!("{HOW_TO_GET_GVISOR}; or set `runtime: auto`")),
        ),
    };
    Wall {
        runtime,
        gvisor_registered,
        summary,
        fix,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_choice_on_either_engine_names_its_wall() {
        let auto_with = wall_for(Runtime::Auto, true);
        assert_eq!(auto_with.runtime, Some(Runtime::Runsc));
        assert!(auto_with.summary.contains("gVisor") && auto_with.fix.is_none());
        let auto_without = wall_for(Runtime::Auto, false);
        assert_eq!(auto_without.runtime, Some(Runtime::Runc));
        assert!(auto_without.summary.contains("only wall"));
        assert!(auto_without
            .fix
            .as_deref()
            .is_some_and(|f| f.contains("setup.sh")));
        let strict_without = wall_for(Runtime::Runsc, false);
        assert_eq!(strict_without.runtime, None);
        assert!(strict_without.summary.contains("cannot start"));
        let runc_with = wall_for(Runtime::Runc, true);
        assert_eq!(runc_with.runtime, Some(Runtime::Runc));
        assert!(runc_with.summary.contains("`runtime: auto`") && runc_with.fix.is_none());
    }
}
