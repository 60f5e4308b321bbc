//! Risk classification for the code an IronClaw agent asks to run.
//!
//! Before the approval dialog opens, [`assess`] parses the agent's shell or Python code with real
//! grammars (tree-sitter's bash and Python grammars) and reports what the code could damage: a
//! [`RiskLevel`] for the policy (`ask-unless-safe` auto-approves only [`RiskLevel::ReadOnly`];
//! [`RiskLevel::Destructive`] needs a second confirmation) and human-readable [`Reason`]s for the
//! dialog.
//!
//! The classifier is deliberately one-sided: anything it cannot *prove* only reads (unknown
//! programs, code built at run time, text the grammar rejects) is at least `Normal`, so a gap in
//! the analysis costs the person a click, never an unreviewed write. It is advisory all the same:
//! the Docker sandbox, not this crate, is the security boundary.

mod findings;
mod parse;
mod paths;
mod python;
mod shell;
pub mod visible;

use ironclaw_protocol::{Language, RiskLevel};
use serde::{Deserialize, Serialize};

/// What kind of effect a [`Reason`] describes; the dialog can group or colour by it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Category {
    /// Deletes files or directories.
    Delete,
    /// Replaces the contents of files that may already exist.
    Overwrite,
    /// Creates or appends to files, or edits them in place.
    Write,
    /// Changes permissions or ownership.
    Permissions,
    /// Writes to raw disks or file systems.
    Disk,
    /// Discards commits or uncommitted work in git.
    GitHistory,
    /// Runs code downloaded from the network.
    RemoteCode,
    /// Runs something as another (usually more powerful) user.
    PrivilegeEscalation,
    /// Stops processes.
    ProcessKill,
    /// Touches paths outside the session workspace.
    OutsideWorkspace,
    /// Talks to the network.
    Network,
    /// Installs packages.
    Install,
    /// Changes the session (environment, aliases, monkey-patching) for later steps.
    Environment,
    /// Runs a program, module or function IronClaw does not recognise.
    Unrecognized,
    /// Runs a script file whose contents IronClaw cannot see.
    ScriptFile,
    /// Runs code that is only known at run time (`eval`, `exec`, variables as commands).
    DynamicCode,
    /// Code the grammar could not parse, or too large/deep to analyse.
    Unparseable,
    /// Calls a tool of an MCP server: what it does is the server's, out of IronClaw's sight.
    ToolCall,
    /// Contains characters a person cannot see or that reorder the displayed text (zero-width,
    /// bidi controls, tag characters, control characters): see [`visible`].
    HiddenText,
}

/// One thing the person should know before approving.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Reason {
    pub level: RiskLevel,
    pub category: Category,
    /// A sentence for the approval dialog, naming the offending code, e.g.
    /// `deletes files: rm -rf build/`.
    pub message: String,
    /// The offending code, shortened to one line.
    pub snippet: String,
    /// 1-based line in the submitted code (for nested code: the line of the outer construct plus
    /// the line inside it).
    pub line: usize,
}

/// The verdict on one snippet: `level` is the maximum over `reasons` (`ReadOnly` when empty).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Assessment {
    pub level: RiskLevel,
    pub reasons: Vec<Reason>,
}

/// Classifies `code`. Total: never panics and always answers, whatever the input (binary, huge,
/// NUL bytes, pathological nesting); what it cannot analyse is reported as a reason.
pub fn assess(language: Language, code: &str) -> Assessment {
    assess_in(language, code, &|_| None)
}

/// [`assess`], rated by what the code does to the workspace as it is now: `exists` says
/// whether a path (relative to the workspace) is there (`None`: cannot tell). A redirect, copy
/// or move onto a name that is not there makes a new file rather than replacing one.
pub fn assess_in(
    language: Language,
    code: &str,
    exists: &dyn Fn(&str) -> Option<bool>,
) -> Assessment {
    let mut out = findings::Findings::new();
    // What the person reads is not what runs: never read-only, whatever the code does.
    if let Some(message) = visible::describe_hidden(code) {
        let (at, _) = visible::hidden_chars(code)[0];
        let line = code[..at].matches('\n').count() + 1;
        let snippet = code.lines().nth(line - 1).unwrap_or_default();
        out.add(
            RiskLevel::Normal,
            Category::HiddenText,
            &message,
            snippet,
            line,
        );
    }
    match language {
        Language::Shell => shell::analyze(code, &mut out),
        Language::Python => python::analyze(code, &mut out),
        // Never read-only: a tool's effects are the server's, and IronClaw cannot read them.
        Language::Mcp => out.add(
            RiskLevel::Normal,
            Category::ToolCall,
            "calls a tool of an MCP server: what it does is up to the server (it runs in its own sandbox container)",
            code.lines().next().unwrap_or_default(),
            1,
        ),
    }
    out.rate_by_effect(exists);
    out.finish()
}

#[cfg(test)]
mod effect_tests {
    use super::*;

    fn rated(code: &str, existing: &[&str]) -> Assessment {
        let existing: Vec<String> = existing.iter().map(|s| s.to_string()).collect();
        assess_in(Language::Shell, code, &move |p: &str| {
            Some(existing.iter().any(|e| e == p))
        })
    }

    #[test]
    fn a_write_to_a_name_that_is_not_there_makes_a_new_file_and_replaces_nothing() {
        let a = rated("echo one > first.txt", &[]);
        assert_eq!(a.level, RiskLevel::Normal, "{a:?}");
        assert!(a.reasons[0]
            .message
            .starts_with("makes a new file (first.txt)"));
        for code in [
            "cp data.csv backup.csv",
            "mv draft.txt final.txt",
            "cd sub && echo x > out.txt",
            "printf 'a' > ./new/../made.txt",
        ] {
            assert_eq!(
                rated(code, &["data.csv", "draft.txt"]).level,
                RiskLevel::Normal,
                "{code}"
            );
        }
    }

    #[test]
    fn what_is_there_or_cannot_be_known_keeps_its_rating() {
        for (code, existing) in [
            // The file is there: it is replaced.
            ("echo one > first.txt", &["first.txt"][..]),
            // Built at run time, a glob, outside the workspace, after `cd "$x"`.
            ("echo one > \"$name\"", &[][..]),
            ("echo one > *.txt", &[][..]),
            ("echo one > /tmp/x", &[][..]),
            ("cd \"$x\"; echo one > f", &[][..]),
            // Moved there first by the code itself: named twice.
            ("mv notes.txt f; echo x > f", &["notes.txt"][..]),
            // Several sources into a folder, or a target-directory option.
            ("cp a b dir", &[][..]),
            ("cp -t dir a", &[][..]),
        ] {
            let a = rated(code, existing);
            assert!(
                a.reasons
                    .iter()
                    .all(|r| !r.message.starts_with("makes a new file")),
                "{code}: {a:?}"
            );
        }
        // Unknown to the host (no workspace to ask): as before.
        let unknown = assess_in(Language::Shell, "echo one > first.txt", &|_| None);
        assert_eq!(unknown.level, RiskLevel::Destructive);
        assert_eq!(
            assess(Language::Shell, "echo one > first.txt").level,
            RiskLevel::Destructive
        );
    }
}
