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

#[path = "build/stand_ins.rs"]
mod stand_ins;

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
    startup_order(&os, &env);
    stand_ins::build(&os, &env);
}

/// The functions the app runs from launch to an idle window, then in a turn, listed in
/// `startup-order.txt` (`scripts/startup-order.sh` records them), are laid out together at the
/// start of the code. Otherwise LTO scatters them over its 28 MiB, and the kernel maps 64 KiB
/// around each first touch: 17.6 MiB of the binary stayed mapped in an idle app for 4.2 MiB of
/// code run. Release builds only (a debug build's symbols differ), and only with the LLVM
/// linker, which rustc 1.90+ uses on x86_64 Linux (GNU ld has no symbol ordering): not when
/// RUSTFLAGS choose another, or with `IRONCLAW_STARTUP_ORDER=off`. Names a rebuild no longer has
/// (a changed dependency) are skipped silently; the file only ever moves code.
fn startup_order(os: &str, env: &str) {
    println!("cargo:rerun-if-changed=startup-order.txt");
    println!("cargo:rerun-if-env-changed=IRONCLAW_STARTUP_ORDER");
    let var = |name: &str| std::env::var(name).unwrap_or_default();
    let flags = var("CARGO_ENCODED_RUSTFLAGS");
    let other_linker = [
        "linker-features",
        "linker-flavor",
        "link-self-contained",
        "fuse-ld",
    ]
    .iter()
    .any(|f| flags.contains(f));
    let wanted = os == "linux"
        && env == "gnu"
        && var("CARGO_CFG_TARGET_ARCH") == "x86_64"
        && var("PROFILE") == "release"
        && var("IRONCLAW_STARTUP_ORDER") != "off"
        && !other_linker;
    let order = PathBuf::from(var("CARGO_MANIFEST_DIR")).join("startup-order.txt");
    if wanted && order.is_file() {
        println!(
            "cargo:rustc-link-arg-bins=-Wl,--symbol-ordering-file={}",
            order.display()
        );
        println!("cargo:rustc-link-arg-bins=-Wl,--no-warn-symbol-ordering");
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
