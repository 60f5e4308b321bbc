//! Collects reasons while the analysers walk, and turns them into an [`Assessment`].

use std::collections::HashSet;
use std::time::{Duration, Instant};

use crate::{Assessment, Category, Reason, RiskLevel};

/// Nested code (`bash -c`, `eval`, `exec(...)`, aliases) is re-parsed; this bounds the nesting so
/// `alias a=b; alias b=a` or deliberately deep quoting cannot recurse forever.
const MAX_NESTING: usize = 8;
/// Bounds the total number of re-parses, so one snippet cannot multiply its own size by expanding
/// an alias thousands of times.
const MAX_NESTED_PARSES: usize = 500;
/// The whole assessment must answer while the person waits for the dialog.
const TIME_BUDGET: Duration = Duration::from_secs(3);
/// Longest snippet shown in a reason, in characters.
const SNIPPET_CHARS: usize = 100;

pub(crate) struct Findings {
    reasons: Vec<Reason>,
    /// Added to lines reported by nested analyses (outer line − 1).
    line_base: usize,
    /// Describes the nesting, e.g. `inside bash -c`, appended to messages.
    via: Vec<String>,
    nested_parses: usize,
    deadline: Instant,
    out_of_budget: bool,
    /// Paths in the workspace, by the reason that replaces them (a `>` redirect, a copy or a
    /// move onto a name): when the name does not exist yet, nothing is replaced.
    targets: Vec<(usize, String)>,
    /// Replacing reasons whose target could not be named exactly.
    untargeted: HashSet<usize>,
}

impl Findings {
    pub(crate) fn new() -> Self {
        Self {
            reasons: Vec::new(),
            line_base: 0,
            via: Vec::new(),
            nested_parses: 0,
            deadline: Instant::now() + TIME_BUDGET,
            out_of_budget: false,
            targets: Vec::new(),
            untargeted: HashSet::new(),
        }
    }

    /// The reason added last replaces `target` (a workspace path named exactly), or something
    /// that cannot be named (`None`).
    pub(crate) fn replaces(&mut self, target: Option<String>) {
        let Some(last) = self.reasons.len().checked_sub(1) else {
            return;
        };
        match target {
            Some(path) => self.targets.push((last, path)),
            None => {
                self.untargeted.insert(last);
            }
        }
    }

    /// Rates by what the code does to the workspace as it is: a redirect, copy or move onto a
    /// name that `exists` says is not there makes a new file and replaces nothing. Only where
    /// every such name is known to be absent and named once in the whole code (a file the code
    /// itself moves there first is named twice): anything else keeps its rating.
    pub(crate) fn rate_by_effect(&mut self, exists: &dyn Fn(&str) -> Option<bool>) {
        let mut named: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
        for (_, path) in &self.targets {
            *named.entry(path.as_str()).or_default() += 1;
        }
        let mut new_file: Vec<(usize, String)> = Vec::new();
        for (reason, path) in &self.targets {
            let alone = named.get(path.as_str()) == Some(&1)
                && self.targets.iter().filter(|(r, _)| r == reason).count() == 1;
            if alone && !self.untargeted.contains(reason) && exists(path) == Some(false) {
                new_file.push((*reason, path.clone()));
            }
        }
        for (i, path) in new_file {
            if let Some(r) = self.reasons.get_mut(i) {
                if r.category == Category::Overwrite {
                    r.level = RiskLevel::Normal;
                    r.category = Category::Write;
                    r.message = format!("makes a new file ({path}): {}", r.snippet);
                }
            }
        }
    }

    /// Records a reason. `action` says what happens ("deletes files"); the message becomes
    /// `action: snippet`, so every reason names the code it is about.
    pub(crate) fn add(
        &mut self,
        level: RiskLevel,
        category: Category,
        action: &str,
        snippet: &str,
        line: usize,
    ) {
        let snippet = shorten(snippet);
        let mut message = if snippet.is_empty() {
            action.to_owned()
        } else {
            format!("{action}: {snippet}")
        };
        if let Some(via) = self.via.last() {
            message.push_str(&format!(" ({via})"));
        }
        self.reasons.push(Reason {
            level,
            category,
            message,
            snippet,
            line: self.line_base + line.max(1),
        });
    }

    /// Runs `analyse` on code nested at `line` of the current code (for example the literal of a
    /// `bash -c`). Returns `false`, after recording why, when nesting or budget is exhausted; the
    /// caller has then learnt nothing about the nested code.
    pub(crate) fn nested(
        &mut self,
        line: usize,
        via: &str,
        snippet: &str,
        analyse: impl FnOnce(&mut Self),
    ) -> bool {
        if self.via.len() >= MAX_NESTING || !self.take_parse() {
            // Unanalysed is not harmless: deep nesting must not launder a deletion into "Normal".
            match alarming_word(snippet) {
                Some(word) => self.add(
                    RiskLevel::Destructive,
                    Category::Unparseable,
                    &format!("nests code too deeply to analyse, and it mentions `{word}`"),
                    snippet,
                    line,
                ),
                None => self.add(
                    RiskLevel::Normal,
                    Category::Unparseable,
                    "nests code too deeply to analyse",
                    snippet,
                    line,
                ),
            }
            return false;
        }
        let saved_base = self.line_base;
        self.line_base += line.max(1) - 1;
        self.via.push(via.to_owned());
        analyse(self);
        self.via.pop();
        self.line_base = saved_base;
        true
    }

    /// Counts one parse against the budget; `false` once the budget is spent.
    fn take_parse(&mut self) -> bool {
        self.nested_parses += 1;
        !(self.nested_parses > MAX_NESTED_PARSES || self.out_of_time())
    }

    /// True once the time budget is spent; analysers check it in their loops and stop early.
    pub(crate) fn out_of_time(&mut self) -> bool {
        if !self.out_of_budget && Instant::now() > self.deadline {
            self.out_of_budget = true;
            self.add(
                RiskLevel::Normal,
                Category::Unparseable,
                "is too large or complex to analyse completely",
                "",
                1,
            );
        }
        self.out_of_budget
    }

    pub(crate) fn deadline(&self) -> Instant {
        self.deadline
    }

    pub(crate) fn finish(self) -> Assessment {
        let mut seen = HashSet::new();
        let mut reasons: Vec<Reason> = self
            .reasons
            .into_iter()
            .filter(|r| seen.insert((r.level, r.category, r.message.clone(), r.line)))
            .collect();
        reasons.sort_by(|a, b| a.line.cmp(&b.line).then(b.level.cmp(&a.level)));
        let level = reasons
            .iter()
            .map(|r| r.level)
            .max()
            .unwrap_or(RiskLevel::ReadOnly);
        Assessment { level, reasons }
    }
}

/// A shell program or Python function name in `code` that makes unanalysed code destructive.
pub(crate) fn alarming_word(code: &str) -> Option<&str> {
    code.split(|c: char| !(c.is_alphanumeric() || matches!(c, '_' | '.' | '-' | '/')))
        .flat_map(|token| [token, token.rsplit(['/', '.']).next().unwrap_or(token)])
        .find(|word| {
            crate::shell::commands::is_alarming(word)
                || crate::python::rules::is_alarming_name(word)
        })
}

/// One line, hidden characters shown as `⟨U+…⟩` tokens, at most [`SNIPPET_CHARS`] characters.
/// Only ASCII blanks separate words: a no-break or zero-width space is part of a word to the
/// shell, so it must show up in the snippet rather than be collapsed away.
pub(crate) fn shorten(text: &str) -> String {
    let mut out = String::new();
    let mut count = 0;
    for word in text.split([' ', '\n', '\t']).filter(|w| !w.is_empty()) {
        if !out.is_empty() {
            out.push(' ');
            count += 1;
        }
        for ch in crate::visible::render_visible(word).chars() {
            if count >= SNIPPET_CHARS {
                out.push('…');
                return out;
            }
            out.push(ch);
            count += 1;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shorten_collapses_lines_and_makes_control_characters_visible() {
        assert_eq!(shorten("rm -rf\n  a\u{0}b"), "rm -rf a⟨U+0000⟩b");
        assert_eq!(shorten("rm\u{a0}-rf x"), "rm⟨U+00A0⟩-rf x");
    }

    #[test]
    fn shorten_cuts_long_snippets_with_an_ellipsis() {
        let long = "x".repeat(500);
        assert_eq!(shorten(&long).chars().count(), SNIPPET_CHARS + 1);
    }

    #[test]
    fn duplicates_collapse_and_reasons_are_ordered_by_line() {
        let mut f = Findings::new();
        f.add(RiskLevel::Normal, Category::Write, "writes", "b", 2);
        f.add(RiskLevel::Destructive, Category::Delete, "deletes", "a", 1);
        f.add(RiskLevel::Normal, Category::Write, "writes", "b", 2);
        let a = f.finish();
        assert_eq!(a.level, RiskLevel::Destructive);
        assert_eq!(a.reasons.len(), 2);
        assert_eq!(a.reasons[0].line, 1);
    }

    #[test]
    fn nested_reasons_are_shifted_to_the_outer_line_and_say_where_they_came_from() {
        let mut f = Findings::new();
        f.nested(3, "inside bash -c", "x", |f| {
            f.add(
                RiskLevel::Destructive,
                Category::Delete,
                "deletes files",
                "rm x",
                2,
            )
        });
        let a = f.finish();
        assert_eq!(a.reasons[0].line, 4);
        assert_eq!(a.reasons[0].message, "deletes files: rm x (inside bash -c)");
    }
}
