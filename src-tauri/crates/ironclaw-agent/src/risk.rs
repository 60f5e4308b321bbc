//! The risk classifier, seen from the agent: levels and reasons for the approval request, and
//! the gate's read-only/destructive questions.

use ironclaw_protocol::{Language, RiskLevel, RiskReason};

use crate::approval::Classifier;

#[derive(Clone)]
pub struct Assessment {
    pub level: RiskLevel,
    pub reasons: Vec<RiskReason>,
    /// Why running this code would change what later code does, if it would.
    pub alters_session: Option<String>,
    /// The destructive effect a person should see before it happens even though Undo could
    /// take it back (a deletion, discarded git work, anything outside the workspace...), if
    /// any. Replacing files' contents and changing their modes are not on it: those are what
    /// the checkpoint restores, and `>` alone would make every shell write ask.
    pub beyond_undo: Option<String>,
}

pub fn assess(lang: Language, code: &str) -> Assessment {
    assess_in(lang, code, &|_| None)
}

/// [`assess`], rated by what the code does to the workspace as it is now (see
/// [`ironclaw_risk::assess_in`]).
pub fn assess_in(lang: Language, code: &str, exists: &dyn Fn(&str) -> Option<bool>) -> Assessment {
    let a = ironclaw_risk::assess_in(lang, code, exists);
    use ironclaw_risk::Category;
    let alters_session = a
        .reasons
        .iter()
        .find(|r| {
            matches!(
                r.category,
                Category::Environment
                    | Category::DynamicCode
                    | Category::ScriptFile
                    | Category::Unparseable
            )
        })
        .map(|r| r.message.clone());
    let beyond_undo = a
        .reasons
        .iter()
        .find(|r| {
            r.level == RiskLevel::Destructive
                && !matches!(r.category, Category::Overwrite | Category::Permissions)
        })
        .map(|r| r.message.clone());
    Assessment {
        alters_session,
        beyond_undo,
        level: a.level,
        reasons: a
            .reasons
            .into_iter()
            .map(|r| RiskReason {
                level: r.level,
                message: r.message,
                snippet: r.snippet,
                line: r.line,
            })
            .collect(),
    }
}

/// One per session, shared by the turn and the approval gate. A `run_code` request asks about the
/// same code several times (its risk for the dialog, read-only for the policy, destructive for the
/// confirmation); parsing is the expensive part — up to the classifier's time budget on hostile
/// input — so the last assessment is remembered and each request is parsed once.
#[derive(Default)]
pub struct RiskClassifier {
    last: std::sync::Mutex<Option<(Language, String, Assessment)>>,
    /// The host folder of the session's workspace, when known: code is rated by what it does
    /// to the files there now (a write to a name that is not there replaces nothing).
    workspace: std::sync::Mutex<Option<std::path::PathBuf>>,
    /// What each MCP tool's server says of it, by the identity line of its calls.
    mcp: std::sync::Mutex<std::collections::HashMap<String, ToolHints>>,
}

/// An MCP server's hints about one of its tools. They are the server's claims: they make the
/// dialog say more (and a tool that says it destroys data needs the second confirmation), but
/// never let a call run unasked.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ToolHints {
    pub read_only: Option<bool>,
    pub destructive: Option<bool>,
    pub open_world: Option<bool>,
}

/// Why no MCP call is ever "undoable": Undo restores the workspace, and a tool acts wherever
/// its server reaches.
pub const MCP_BEYOND_UNDO: &str =
    "an MCP tool acts outside the workspace's checkpoints, so Undo could not take it back";

fn with_hints(mut a: Assessment, hints: Option<&ToolHints>, code: &str) -> Assessment {
    let line = code.lines().next().unwrap_or_default().to_string();
    let mut add = |level: RiskLevel, message: &str| {
        a.reasons.push(RiskReason {
            level,
            message: message.to_string(),
            snippet: line.clone(),
            line: 1,
        });
        if level == RiskLevel::Destructive {
            a.level = RiskLevel::Destructive;
        }
    };
    match hints {
        None => add(
            RiskLevel::Normal,
            "the server gave no hints about what this tool does",
        ),
        Some(h) => {
            if h.read_only == Some(true) {
                add(
                    RiskLevel::Normal,
                    "the server says this tool only reads: its own claim, which IronClaw cannot check, so it is asked about like any call",
                );
            } else if h.destructive == Some(true) {
                add(
                    RiskLevel::Destructive,
                    "the server says this tool may delete or overwrite data",
                );
            }
            if h.open_world == Some(true) {
                add(
                    RiskLevel::Normal,
                    "the server says this tool deals with systems beyond it (other services, the internet)",
                );
            }
        }
    }
    a.beyond_undo = Some(MCP_BEYOND_UNDO.to_string());
    a.alters_session = None;
    a
}

impl RiskClassifier {
    pub fn assess(&self, lang: Language, code: &str) -> Assessment {
        if let Ok(last) = self.last.lock() {
            if let Some((l, c, a)) = last.as_ref() {
                if *l == lang && c == code {
                    return a.clone();
                }
            }
        }
        let workspace = self.workspace.lock().ok().and_then(|w| w.clone());
        let mut a = match &workspace {
            Some(dir) => assess_in(lang, code, &|rel| exists_in(dir, rel)),
            None => assess(lang, code),
        };
        if lang == Language::Mcp {
            let identity = code.lines().next().unwrap_or_default();
            let hints = self.mcp.lock().ok().and_then(|m| m.get(identity).cloned());
            a = with_hints(a, hints.as_ref(), code);
        }
        if let Ok(mut last) = self.last.lock() {
            *last = Some((lang, code.to_string(), a.clone()));
        }
        a
    }
}

/// Whether `rel` names something in the workspace at `dir` now (a link counts, and is not
/// followed); `None` when that cannot be told.
fn exists_in(dir: &std::path::Path, rel: &str) -> Option<bool> {
    use ironclaw_workspace::reader::{DirHandle, Refusal, Root};
    let rel = std::path::Path::new(rel);
    let (parent, name) = (rel.parent()?, rel.file_name()?);
    let root = match Root::open(dir) {
        Ok(root) => root,
        // A workspace folder not made yet is made empty: nothing is in it.
        Err(Refusal::Missing) => return Some(false),
        Err(_) => return None,
    };
    match root.open_dir_at(parent) {
        Ok(fd) => DirHandle::new(fd)
            .ok()?
            .entry(name)
            .ok()
            .map(|e| e.is_some()),
        // No such folder: nothing can be in it yet.
        Err(Refusal::Missing) => Some(false),
        Err(_) => None,
    }
}

impl RiskClassifier {
    /// Rates the next requests by the workspace at `dir` as it is now; what was remembered of
    /// the last request is forgotten, since the files may have changed since.
    pub fn in_workspace(&self, dir: Option<std::path::PathBuf>) {
        if let Ok(mut w) = self.workspace.lock() {
            *w = dir;
        }
        if let Ok(mut last) = self.last.lock() {
            *last = None;
        }
    }

    /// Learns what a session's MCP servers say of their tools (by identity line).
    pub fn know_tools(&self, tools: impl IntoIterator<Item = (String, ToolHints)>) {
        if let Ok(mut m) = self.mcp.lock() {
            m.extend(tools);
        }
        if let Ok(mut last) = self.last.lock() {
            *last = None;
        }
    }
}

impl Classifier for RiskClassifier {
    fn is_read_only(&self, lang: Language, code: &str) -> bool {
        self.assess(lang, code).level == RiskLevel::ReadOnly
    }

    fn is_destructive(&self, lang: Language, code: &str) -> bool {
        self.assess(lang, code).level == RiskLevel::Destructive
    }

    fn destructive_beyond_undo(&self, lang: Language, code: &str) -> Option<String> {
        self.assess(lang, code).beyond_undo
    }
}
