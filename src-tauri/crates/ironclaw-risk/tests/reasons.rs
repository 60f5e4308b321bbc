//! What the approval dialog receives: reasons that name the offending code, on the right line,
//! without duplicates, serialised in snake_case.

use ironclaw_protocol::{Language, RiskLevel};
use ironclaw_risk::{assess, Category};
use pretty_assertions::assert_eq;

#[test]
fn reasons_name_the_offending_snippet() {
    let cases = [
        (Language::Shell, "ls\nrm -rf build/", "rm -rf build/"),
        (
            Language::Shell,
            "git push --force origin main",
            "git push --force origin main",
        ),
        (
            Language::Python,
            "import shutil\nshutil.rmtree('build')",
            "shutil.rmtree('build')",
        ),
        (
            Language::Python,
            "import os\nos.system('rm -rf out')",
            "rm -rf out",
        ),
    ];
    for (language, code, snippet) in cases {
        let a = assess(language, code);
        let reason = a
            .reasons
            .iter()
            .find(|r| r.level == RiskLevel::Destructive)
            .unwrap_or_else(|| panic!("no destructive reason for {code:?}: {a:#?}"));
        assert_eq!(reason.snippet, snippet);
        assert!(reason.message.contains(snippet), "{}", reason.message);
    }
}

#[test]
fn a_deletion_message_reads_like_a_sentence() {
    let a = assess(Language::Shell, "rm -rf build/");
    assert_eq!(a.reasons[0].message, "deletes files: rm -rf build/");
}

#[test]
fn reasons_carry_the_line_of_the_offending_code() {
    let a = assess(Language::Shell, "echo one\necho two\nrm x\n");
    assert_eq!(a.reasons.len(), 1);
    assert_eq!(a.reasons[0].line, 3);
    let a = assess(Language::Python, "import os\n\n\nos.remove('x')\n");
    assert_eq!(a.reasons[0].line, 4);
}

#[test]
fn nested_code_reports_the_outer_line_and_how_it_was_reached() {
    let a = assess(Language::Shell, "ls\nbash -c 'rm -rf x'");
    let reason = &a.reasons[0];
    assert_eq!(reason.line, 2);
    assert_eq!(reason.message, "deletes files: rm -rf x (inside bash -c)");
}

#[test]
fn repeated_findings_on_one_line_are_reported_once() {
    let a = assess(Language::Shell, "rm a; rm a");
    assert_eq!(a.reasons.len(), 1, "{:#?}", a.reasons);
}

#[test]
fn reasons_are_ordered_by_line() {
    let a = assess(Language::Shell, "touch a\nrm b\nmkdir c");
    let lines: Vec<usize> = a.reasons.iter().map(|r| r.line).collect();
    assert_eq!(lines, vec![1, 2, 3]);
}

#[test]
fn the_level_is_the_highest_reason() {
    let a = assess(Language::Shell, "mkdir out && git reset --hard");
    assert_eq!(a.level, RiskLevel::Destructive);
    assert!(a.reasons.iter().any(|r| r.level == RiskLevel::Normal));
}

#[test]
fn serialisation_uses_snake_case_for_the_dialog() {
    let a = assess(Language::Shell, "echo x > /etc/hosts");
    let json = serde_json::to_value(&a).unwrap_or_default();
    assert_eq!(json["level"], "destructive");
    let categories: Vec<&str> = json["reasons"]
        .as_array()
        .map(|r| r.iter().filter_map(|r| r["category"].as_str()).collect())
        .unwrap_or_default();
    assert!(categories.contains(&"outside_workspace"), "{categories:?}");
    assert!(categories.contains(&"overwrite"), "{categories:?}");
}

#[test]
fn levels_are_ordered_from_read_only_to_destructive() {
    assert!(RiskLevel::ReadOnly < RiskLevel::Normal);
    assert!(RiskLevel::Normal < RiskLevel::Destructive);
    assert_eq!(
        serde_json::to_string(&Category::GitHistory).unwrap_or_default(),
        "\"git_history\""
    );
}

#[test]
fn heredoc_findings_point_at_the_line_inside_the_heredoc() {
    let a = assess(Language::Shell, "ls\nbash <<EOF\necho hi\nrm -rf x\nEOF\n");
    assert_eq!(a.reasons[0].line, 4, "{:#?}", a.reasons);
}

#[test]
fn exec_findings_point_at_the_line_inside_the_string() {
    let a = assess(
        Language::Python,
        "exec('''\nimport os\nos.remove('x')\n''')",
    );
    assert_eq!(a.reasons[0].line, 3, "{:#?}", a.reasons);
}

#[test]
fn hidden_characters_are_counted_named_and_shown_in_the_snippet() {
    let a = assess(Language::Shell, "ls\necho \u{202E}txt.exe\u{202C}");
    assert_eq!(a.level, RiskLevel::Normal);
    let Some(reason) = a
        .reasons
        .iter()
        .find(|r| r.category == Category::HiddenText)
    else {
        panic!("no hidden-text reason in {:#?}", a.reasons);
    };
    assert_eq!(reason.line, 2);
    assert_eq!(
        reason.message,
        "contains 2 invisible or bidirectional-control characters (U+202E U+202C): \
         echo ⟨U+202E⟩txt.exe⟨U+202C⟩"
    );
    assert_eq!(reason.snippet, "echo ⟨U+202E⟩txt.exe⟨U+202C⟩");
    assert!(!reason.message.contains('\u{202E}'));
}
