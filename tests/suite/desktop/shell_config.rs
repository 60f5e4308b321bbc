//! The Tauri shell's security configuration, checked as files: the webview may call exactly
//! the app's own commands (each declared in build.rs, registered in main.rs and granted in the
//! capability), plus listening to events; and the CSP forbids remote code and eval.

use std::collections::BTreeSet;
use std::path::PathBuf;

use pretty_assertions::assert_eq;
use serde_json::Value;

fn shell_file(name: &str) -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../src-tauri")
        .join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The quoted names in `text` between `start` and the next `end`.
fn quoted_between(text: &str, start: &str, end: &str) -> BTreeSet<String> {
    let from = text.find(start).unwrap_or_else(|| panic!("no {start:?}")) + start.len();
    let body = &text[from..from + text[from..].find(end).expect("end")];
    body.split('"')
        .skip(1)
        .step_by(2)
        .map(str::to_owned)
        .collect()
}

#[test]
fn the_webview_may_call_exactly_the_apps_own_commands() {
    let declared = quoted_between(
        &shell_file("build.rs"),
        "const COMMANDS: &[&str] = &[",
        "];",
    );
    let main = shell_file("src/main.rs");
    let from = main.find("generate_handler![").expect("generate_handler!");
    let registered: BTreeSet<String> = main[from..from + main[from..].find("])").expect("end")]
        .split("commands::")
        .skip(1)
        .map(|s| s.split(',').next().unwrap_or("").trim().to_owned())
        .collect();
    assert_eq!(declared, registered, "build.rs and main.rs disagree");

    let capability: Value =
        serde_json::from_str(&shell_file("capabilities/default.json")).expect("capability JSON");
    let granted: BTreeSet<String> = capability["permissions"]
        .as_array()
        .expect("permissions")
        .iter()
        .map(|p| p.as_str().expect("plain permission names").to_owned())
        .collect();
    let mut expected: BTreeSet<String> = declared
        .iter()
        .map(|c| format!("allow-{}", c.replace('_', "-")))
        .collect();
    expected.insert("core:event:allow-listen".into());
    expected.insert("core:event:allow-unlisten".into());
    assert_eq!(granted, expected);
}

#[test]
fn the_csp_allows_no_remote_code_and_no_eval() {
    let conf: Value =
        serde_json::from_str(&shell_file("tauri.conf.json")).expect("tauri.conf.json");
    assert_eq!(conf["app"]["withGlobalTauri"], Value::Bool(false));
    let csp = conf["app"]["security"]["csp"]
        .as_str()
        .expect("a CSP string");
    let directive = |name: &str| {
        csp.split(';')
            .map(str::trim)
            .find(|d| d.starts_with(&format!("{name} ")))
            .unwrap_or_else(|| panic!("no {name} in {csp}"))
            .to_owned()
    };
    assert_eq!(directive("script-src"), "script-src 'self'");
    assert_eq!(directive("default-src"), "default-src 'self'");
    assert_eq!(directive("object-src"), "object-src 'none'");
    assert!(
        !csp.contains("unsafe-eval") && !csp.contains("http://*") && !csp.contains("https:"),
        "{csp}"
    );
}
