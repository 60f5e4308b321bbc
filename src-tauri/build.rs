//! Reads the app's commands (every `#[tauri::command]` in `src/commands.rs` and
//! `src/commands/`) and derives the rest from them, so a command is written once:
//!
//! - each gets an `allow-<command>` permission (`tauri-build`'s app manifest);
//! - `capabilities/default.json` grants exactly those to the main window;
//! - `$OUT_DIR/handler.rs` is the `generate_handler!` list `main.rs` registers;
//! - `ui/src/api/commands.ts` holds their typed TypeScript wrappers.
//!
//! The two committed files are rewritten only when they change.

use std::path::PathBuf;

use ironclaw_ipcgen::{write_if_changed, Generated};

fn main() {
    if let Err(e) = generate() {
        panic!("build.rs: {e}");
    }
    // Packed relative relocations, as for the CLI (see its build.rs): a faster start and a
    // few MiB less of the binary resident. Needs glibc 2.36 or newer to run.
    let os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    let env = std::env::var("CARGO_CFG_TARGET_ENV").unwrap_or_default();
    if os == "linux" && env == "gnu" {
        println!("cargo:rustc-link-arg-bins=-Wl,-z,pack-relative-relocs");
    }
}

fn generate() -> Result<(), Box<dyn std::error::Error>> {
    let app = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR")?);
    println!("cargo:rerun-if-changed=src/commands.rs");
    println!("cargo:rerun-if-changed=src/commands");
    let generated = Generated::from_app(&app)?;

    let bindings = app.join("../ui/src/bindings");
    let missing: Vec<String> = generated
        .binding_types()
        .into_iter()
        .filter(|t| !bindings.join(format!("{t}.ts")).exists())
        .collect();
    if !missing.is_empty() {
        return Err(format!(
            "commands use {} with no TypeScript binding in ui/src/bindings: derive ts_rs::TS, \
             add it to ironclaw-desktop's bindings.rs and run \
             `cargo test -p ironclaw-desktop --features ts export_bindings`",
            missing.join(", ")
        )
        .into());
    }

    for (path, contents) in generated.committed_files() {
        write_if_changed(&app.join(path), &contents)?;
    }
    let out = PathBuf::from(std::env::var("OUT_DIR")?);
    write_if_changed(&out.join("handler.rs"), &generated.handler())?;

    // tauri-build keeps the names for the whole build.
    let names: &'static [&'static str] = Box::leak(
        generated
            .names()
            .into_iter()
            .map(|n| &*Box::leak(n.into_boxed_str()))
            .collect::<Vec<&'static str>>()
            .into_boxed_slice(),
    );
    tauri_build::try_build(
        tauri_build::Attributes::new()
            .app_manifest(tauri_build::AppManifest::new().commands(names)),
    )?;
    Ok(())
}
