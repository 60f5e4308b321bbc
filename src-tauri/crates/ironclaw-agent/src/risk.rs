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
    let a = ironclaw_risk::assess(lang, code);
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
        let a = assess(lang, code);
        if let Ok(mut last) = self.last.lock() {
            *last = Some((lang, code.to_string(), a.clone()));
        }
        a
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
