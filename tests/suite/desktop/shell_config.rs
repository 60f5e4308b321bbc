//! The Tauri shell's security configuration, checked as files: the webview may call exactly
//! the app's own commands (read from `src/commands/` by build.rs, which generates the handler
//! list, the capability and the TypeScript), plus listening to events; and the CSP forbids
//! remote code and eval.

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

#[test]
fn the_webview_may_call_exactly_the_apps_own_commands() {
    let app = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../src-tauri");
    let generated = ironclaw_ipcgen::Generated::from_app(&app).expect("the commands parse");
    let names = generated.names();
    assert!(
        names.len() > 20 && names.iter().any(|n| n == "decide"),
        "the app's commands were read: {names:?}"
    );

    // Registered from the generated list, never by hand.
    let main = shell_file("src/main.rs");
    assert!(main.contains(r#".invoke_handler(include!(concat!(env!("OUT_DIR"), "/handler.rs")))"#));
    assert!(
        !main.contains("generate_handler!["),
        "main.rs lists commands by hand"
    );

    // Granted: exactly the commands, plus listening to events.
    let capability: Value =
        serde_json::from_str(&shell_file("capabilities/default.json")).expect("capability JSON");
    let granted: BTreeSet<String> = capability["permissions"]
        .as_array()
        .expect("permissions")
        .iter()
        .map(|p| p.as_str().expect("plain permission names").to_owned())
        .collect();
    let mut expected: BTreeSet<String> = names
        .iter()
        .map(|c| format!("allow-{}", c.replace('_', "-")))
        .collect();
    expected.insert("core:event:allow-listen".into());
    expected.insert("core:event:allow-unlisten".into());
    assert_eq!(granted, expected);
    assert_eq!(capability["windows"], serde_json::json!(["main"]));

    // The committed capability and TypeScript are what the commands imply today.
    for (path, contents) in generated.committed_files() {
        assert_eq!(
            shell_file(path),
            contents,
            "{path} is stale: build the app (or run `cargo test -p ironclaw-ipcgen`) and commit it"
        );
    }
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
