//! The risk classifier, seen from the agent: levels and reasons for the approval request, and
//! the gate's read-only/destructive questions.

use ironclaw_sandbox::exec::Language;
use ironclaw_store::RiskLevel;

use crate::approval::Classifier;
use crate::protocol::RiskReason;

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

/// The gate asks in language names ("python"/"shell"); anything else is unknown, so neither
/// provably read-only nor exempt from confirmation.
pub struct RiskClassifier;

impl Classifier for RiskClassifier {
    fn is_read_only(&self, lang: &str, code: &str) -> bool {
        lang.parse::<Language>()
            .is_ok_and(|l| assess(l, code).level == RiskLevel::ReadOnly)
    }

    fn is_destructive(&self, lang: &str, code: &str) -> bool {
        lang.parse::<Language>()
            .map_or(true, |l| assess(l, code).level == RiskLevel::Destructive)
    }
}
