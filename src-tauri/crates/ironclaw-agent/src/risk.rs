//! The risk classifier, seen from the agent: levels and reasons for the approval request, and
//! the gate's read-only/destructive questions.

use ironclaw_sandbox::exec::Language;
use ironclaw_store::RiskLevel;

use crate::approval::Classifier;
use crate::protocol::RiskReason;

#[derive(Clone)]
pub struct Assessment {
    pub level: RiskLevel,
    pub reasons: Vec<RiskReason>,
    /// Why running this code would change what later code does, if it would.
    pub alters_session: Option<String>,
}

fn language(l: Language) -> ironclaw_risk::Language {
    match l {
        Language::Python => ironclaw_risk::Language::Python,
        Language::Shell => ironclaw_risk::Language::Shell,
    }
}

fn level(l: ironclaw_risk::RiskLevel) -> RiskLevel {
    match l {
        ironclaw_risk::RiskLevel::ReadOnly => RiskLevel::ReadOnly,
        ironclaw_risk::RiskLevel::Normal => RiskLevel::Normal,
        ironclaw_risk::RiskLevel::Destructive => RiskLevel::Destructive,
    }
}

pub fn assess(lang: Language, code: &str) -> Assessment {
    let a = ironclaw_risk::assess(language(lang), code);
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
        level: level(a.level),
        reasons: a
            .reasons
            .into_iter()
            .map(|r| RiskReason {
                level: level(r.level),
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

/// The gate asks in language names ("python"/"shell"); anything else is unknown, so neither
/// provably read-only nor exempt from confirmation.
impl Classifier for RiskClassifier {
    fn is_read_only(&self, lang: &str, code: &str) -> bool {
        lang.parse::<Language>()
            .is_ok_and(|l| self.assess(l, code).level == RiskLevel::ReadOnly)
    }

    fn is_destructive(&self, lang: &str, code: &str) -> bool {
        lang.parse::<Language>().map_or(true, |l| {
            self.assess(l, code).level == RiskLevel::Destructive
        })
    }
}
