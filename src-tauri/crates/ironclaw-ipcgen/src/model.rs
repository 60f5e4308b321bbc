//! A command as the two sides of the IPC edge see it.

use std::collections::BTreeSet;

/// One `#[tauri::command]` function.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Command {
    /// The function's name: what `invoke` sends.
    pub name: String,
    /// Its path from the crate root, for the handler list.
    pub path: String,
    /// Its doc comment, one entry per line.
    pub docs: Vec<String>,
    /// The arguments the web UI passes (Tauri's injected ones, like `State`, left out).
    pub args: Vec<Arg>,
    /// What the call resolves to (the `Ok` side of a `Result`).
    pub returns: Ty,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Arg {
    /// The Rust name (snake_case); the wire and TypeScript use its camelCase form.
    pub name: String,
    pub ty: Ty,
}

/// The types that cross the edge.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ty {
    String,
    Number,
    Bool,
    Void,
    Option(Box<Ty>),
    Vec(Box<Ty>),
    /// A type with a ts-rs binding in `ui/src/bindings/`.
    Named(String),
    /// A `tauri::ipc::Channel<T>`: the UI passes a callback that gets each `T`.
    Channel(Box<Ty>),
}

impl Ty {
    /// Collects the binding types this type mentions.
    pub fn named(&self, into: &mut BTreeSet<String>) {
        match self {
            Ty::Named(n) => {
                into.insert(n.clone());
            }
            Ty::Option(t) | Ty::Vec(t) | Ty::Channel(t) => t.named(into),
            Ty::String | Ty::Number | Ty::Bool | Ty::Void => {}
        }
    }
}

/// `read_run_image` → `readRunImage`.
pub(crate) fn camel(snake: &str) -> String {
    let mut out = String::with_capacity(snake.len());
    let mut upper = false;
    for c in snake.chars() {
        if c == '_' {
            upper = !out.is_empty();
        } else if upper {
            out.extend(c.to_uppercase());
            upper = false;
        } else {
            out.push(c);
        }
    }
    out
}

/// `read_run_image` → `read-run-image`, as `tauri-build` names the permission.
pub(crate) fn kebab(snake: &str) -> String {
    snake.replace('_', "-")
}
