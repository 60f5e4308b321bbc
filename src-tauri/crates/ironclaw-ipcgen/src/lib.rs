//! One list of commands for the desktop app's IPC edge: the `#[tauri::command]` functions in
//! `src-tauri/src/commands.rs` and `src-tauri/src/commands/*.rs`. A command is written once,
//! there; from those functions this crate derives
//!
//! - the names `tauri-build` turns into `allow-<name>` permissions ([`Generated::names`]),
//! - the handler list `main.rs` registers ([`Generated::handler`]),
//! - the capability that grants the main window exactly those ([`Generated::capability`]),
//! - the typed TypeScript wrappers the web UI calls ([`Generated::typescript`]).
//!
//! The app's `build.rs` runs it on every build and rewrites the two committed files
//! (`capabilities/default.json`, `ui/src/api/commands.ts`) when they changed;
//! `scripts/check-bindings.sh` fails when a commit carries stale ones.

mod model;
mod parse;
mod render;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

pub use model::{Arg, Command, Ty};
pub use render::{capability, handler, typescript};

#[derive(Debug, thiserror::Error)]
pub enum GenError {
    #[error("{path}: {reason}")]
    Read { path: PathBuf, reason: String },
    #[error("{file}: not valid Rust ({reason})")]
    Syntax { file: String, reason: String },
    #[error(
        "command `{command}`: argument `{arg}` has type `{ty}`, which the TypeScript side cannot \
         name. Use a string, number, bool, Option, Vec or a type exported to ui/src/bindings"
    )]
    UnsupportedType {
        command: String,
        arg: String,
        ty: String,
    },
    #[error("command `{command}`: {reason}")]
    Shape { command: String, reason: String },
    #[error("two commands are named `{0}`; the web UI calls commands by name alone")]
    Duplicate(String),
}

/// One source file of commands and the module path it is at, from the crate root.
pub struct Source {
    pub module: String,
    pub text: String,
}

/// Everything derived from the commands.
pub struct Generated {
    pub commands: Vec<Command>,
}

impl Generated {
    pub fn from_sources(sources: &[Source]) -> Result<Self, GenError> {
        let mut commands = Vec::new();
        for source in sources {
            commands.extend(parse::commands(&source.module, &source.text)?);
        }
        let mut seen = BTreeSet::new();
        for c in &commands {
            if !seen.insert(c.name.clone()) {
                return Err(GenError::Duplicate(c.name.clone()));
            }
        }
        Ok(Self { commands })
    }

    /// Reads `<app>/src/commands.rs` and every `<app>/src/commands/*.rs`.
    pub fn from_app(app_dir: &Path) -> Result<Self, GenError> {
        Self::from_sources(&app_sources(app_dir)?)
    }

    pub fn names(&self) -> Vec<String> {
        self.commands.iter().map(|c| c.name.clone()).collect()
    }

    /// The named types the TypeScript imports from `ui/src/bindings/`.
    pub fn binding_types(&self) -> BTreeSet<String> {
        let mut names = BTreeSet::new();
        for c in &self.commands {
            c.returns.named(&mut names);
            for a in &c.args {
                a.ty.named(&mut names);
            }
        }
        names
    }

    pub fn handler(&self) -> String {
        render::handler(&self.commands)
    }

    pub fn capability(&self) -> String {
        render::capability(&self.commands)
    }

    pub fn typescript(&self) -> String {
        render::typescript(&self.commands)
    }

    /// The files committed to the repository, as (path from the app dir, contents).
    pub fn committed_files(&self) -> [(&'static str, String); 2] {
        [
            (CAPABILITY_FILE, self.capability()),
            (TYPESCRIPT_FILE, self.typescript()),
        ]
    }
}

/// Where the generated capability lives, from `src-tauri/`.
pub const CAPABILITY_FILE: &str = "capabilities/default.json";
/// Where the generated TypeScript lives, from `src-tauri/`.
pub const TYPESCRIPT_FILE: &str = "../ui/src/api/commands.ts";

/// The command sources, in a stable order: `commands.rs` first, then its submodules by name.
pub fn app_sources(app_dir: &Path) -> Result<Vec<Source>, GenError> {
    let read = |path: &Path| {
        std::fs::read_to_string(path).map_err(|e| GenError::Read {
            path: path.to_owned(),
            reason: e.to_string(),
        })
    };
    let root = app_dir.join("src/commands.rs");
    let mut sources = vec![Source {
        module: "commands".into(),
        text: read(&root)?,
    }];
    let dir = app_dir.join("src/commands");
    let mut files: Vec<PathBuf> = match std::fs::read_dir(&dir) {
        Ok(entries) => entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "rs"))
            .collect(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
        Err(e) => {
            return Err(GenError::Read {
                path: dir,
                reason: e.to_string(),
            })
        }
    };
    files.sort();
    for path in files {
        let Some(stem) = path.file_stem().and_then(|s| s.to_str()) else {
            continue;
        };
        sources.push(Source {
            module: format!("commands::{stem}"),
            text: read(&path)?,
        });
    }
    Ok(sources)
}

/// Writes `contents` to `path` unless it already holds exactly that, so an unchanged build
/// touches nothing (and triggers no rebuild of what watches the file).
pub fn write_if_changed(path: &Path, contents: &str) -> Result<bool, GenError> {
    if std::fs::read_to_string(path).is_ok_and(|old| old == contents) {
        return Ok(false);
    }
    std::fs::write(path, contents).map_err(|e| GenError::Read {
        path: path.to_owned(),
        reason: e.to_string(),
    })?;
    Ok(true)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests;
