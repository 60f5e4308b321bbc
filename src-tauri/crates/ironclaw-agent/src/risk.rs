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
    Assessment {
        alters_session,
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
}
