//! What an expression denotes: a qualified function, a `Path`, a literal string or argv. This is
//! where indirection is seen through: import aliases, `getattr(os, "remove")`,
//! `__import__("os")`, `sys.modules["os"]`, `vars(os)["remove"]`, `"".join([...])`, base64.

use tree_sitter::Node;

use super::strings::PyStr;
use super::{Value, Walker};
use crate::parse::{named_children, text};

/// What a callee or receiver resolved to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Target {
    /// A module, function or class by its qualified name (`os.remove`, `builtins.open`).
    Qualified(String),
    /// A `pathlib.Path` object and its literal path when known.
    Path(Option<String>),
    /// Something the snippet defines itself (function, class, variable).
    Local,
    /// A value of unknown type (result of a call, a parameter...).
    Object,
    /// A bare name that nothing in the snippet defines.
    Unknown(String),
    /// Chosen at run time; the reason says how.
    Dynamic(&'static str),
}

const PATH_TYPES: &[&str] = &[
    "pathlib.Path",
    "pathlib.PurePath",
    "pathlib.PosixPath",
    "pathlib.PurePosixPath",
];

pub(super) fn is_builtin(name: &str) -> bool {
    matches!(
        name,
        "print"
            | "len"
            | "range"
            | "open"
            | "int"
            | "str"
            | "float"
            | "list"
            | "dict"
            | "set"
            | "tuple"
            | "sorted"
            | "sum"
            | "min"
            | "max"
            | "abs"
            | "enumerate"
            | "zip"
            | "map"
            | "filter"
            | "any"
            | "all"
            | "isinstance"
            | "issubclass"
            | "type"
            | "repr"
            | "round"
            | "format"
            | "input"
            | "iter"
            | "next"
            | "reversed"
            | "hash"
            | "id"
            | "chr"
            | "ord"
            | "bin"
            | "hex"
            | "oct"
            | "bool"
            | "bytes"
            | "bytearray"
            | "complex"
            | "divmod"
            | "pow"
            | "callable"
            | "getattr"
            | "setattr"
            | "hasattr"
            | "delattr"
            | "vars"
            | "dir"
            | "globals"
            | "locals"
            | "exec"
            | "eval"
            | "compile"
            | "__import__"
            | "super"
            | "object"
            | "property"
            | "staticmethod"
            | "classmethod"
            | "frozenset"
            | "memoryview"
            | "slice"
            | "help"
            | "exit"
            | "quit"
            | "breakpoint"
            | "ascii"
            | "aiter"
            | "anext"
            | "NotImplemented"
            | "Ellipsis"
            | "__name__"
            | "__file__"
            | "__doc__"
            | "__builtins__"
            | "True"
            | "False"
            | "None"
    ) || name.ends_with("Error")
        || name.ends_with("Exception")
        || name.ends_with("Warning")
}

impl Walker<'_> {
    pub(super) fn resolve(&self, node: Node<'_>) -> Target {
        let Some(_guard) = self.descend() else {
            return Target::Dynamic("nests expressions too deeply to analyse");
        };
        match node.kind() {
            "identifier" => self.resolve_name(text(node, self.src)),
            "attribute" => {
                let (Some(object), Some(attr)) = (
                    node.child_by_field_name("object"),
                    node.child_by_field_name("attribute"),
                ) else {
                    return Target::Object;
                };
                let attr = text(attr, self.src);
                match self.resolve(object) {
                    Target::Qualified(q) => Target::Qualified(format!("{q}.{attr}")),
                    Target::Path(_) => Target::Qualified(format!("pathlib.Path.{attr}")),
                    Target::Dynamic(why) => Target::Dynamic(why),
                    Target::Local | Target::Object | Target::Unknown(_) => Target::Object,
                }
            }
            "call" => self.resolve_call(node),
            "subscript" => self.resolve_subscript(node),
            "parenthesized_expression" => named_children(node)
                .into_iter()
                .next()
                .map_or(Target::Object, |inner| self.resolve(inner)),
            "binary_operator" => match node.child_by_field_name("left").map(|l| self.resolve(l)) {
                Some(Target::Path(base)) => {
                    let right = node
                        .child_by_field_name("right")
                        .and_then(|r| self.string_value(r));
                    Target::Path(match (base, right) {
                        (Some(base), Some(right)) if right.is_literal() => {
                            Some(format!("{base}/{}", right.text))
                        }
                        _ => None,
                    })
                }
                _ => Target::Object,
            },
            _ => Target::Object,
        }
    }

    pub(super) fn resolve_name(&self, name: &str) -> Target {
        if name == "__builtins__" {
            return Target::Qualified("builtins".into());
        }
        if let Some((bound, candidate)) = self.candidate.borrow().as_ref() {
            if bound == name {
                return Target::Qualified(candidate.clone());
            }
        }
        match self.scope.names.get(name) {
            Some(Some(Value::Qualified(q))) => return Target::Qualified(q.clone()),
            Some(Some(Value::Path(p))) => return Target::Path(p.clone()),
            Some(_) => return Target::Object,
            None => {}
        }
        if self.scope.defined.contains(name) {
            return Target::Local;
        }
        if is_builtin(name) {
            return Target::Qualified(format!("builtins.{name}"));
        }
        if let Some(module) = self.scope.star.first() {
            return Target::Qualified(format!("{module}.{name}"));
        }
        Target::Unknown(name.to_owned())
    }

    /// Resolves `node` once per candidate meaning of its leftmost name when that name is
    /// ambiguous (rebound, or several `import *`), else once.
    pub(super) fn resolve_each(&self, node: Node<'_>) -> Vec<Target> {
        let mut targets = vec![self.resolve(node)];
        let Some(root) = root_identifier(node, self.src) else {
            return targets;
        };
        let candidates: Vec<String> = match self.scope.names.get(root) {
            Some(Some(Value::Qualified(q))) => self
                .scope
                .ever
                .get(root)
                .map(|all| all.iter().filter(|c| *c != q).cloned().collect())
                .unwrap_or_default(),
            Some(_) => self.scope.ever.get(root).cloned().unwrap_or_default(),
            None if !self.scope.defined.contains(root) && !is_builtin(root) => self
                .scope
                .star
                .iter()
                .skip(1)
                .map(|m| format!("{m}.{root}"))
                .collect(),
            None => Vec::new(),
        };
        for candidate in candidates {
            *self.candidate.borrow_mut() = Some((root.to_owned(), candidate));
            targets.push(self.resolve(node));
            *self.candidate.borrow_mut() = None;
        }
        targets
    }

    fn resolve_call(&self, node: Node<'_>) -> Target {
        let Some(function) = node.child_by_field_name("function") else {
            return Target::Object;
        };
        let args = self.positional_args(node);
        let arg_string = |i: usize| args.get(i).and_then(|a| self.string_value(*a));
        match self.resolve(function) {
            Target::Qualified(q) => match q.as_str() {
                "builtins.getattr" => {
                    let base = args.first().map(|a| self.resolve(*a));
                    match (base, arg_string(1)) {
                        (Some(Target::Dynamic(why)), _) => Target::Dynamic(why),
                        (_, Some(attr)) if attr.dynamic => {
                            Target::Dynamic("looks up an attribute whose name is built at run time")
                        }
                        (Some(Target::Qualified(base)), Some(attr)) => {
                            Target::Qualified(format!("{base}.{}", attr.text))
                        }
                        (Some(Target::Path(_)), Some(attr)) => {
                            Target::Qualified(format!("pathlib.Path.{}", attr.text))
                        }
                        (_, None) => {
                            Target::Dynamic("looks up an attribute whose name is built at run time")
                        }
                        _ => Target::Object,
                    }
                }
                "builtins.__import__" | "importlib.import_module" | "importlib.__import__" => {
                    match arg_string(0) {
                        Some(module) if !module.dynamic => {
                            let module = if q == "importlib.import_module" {
                                module.text
                            } else {
                                module.text.split('.').next().unwrap_or_default().to_owned()
                            };
                            Target::Qualified(module)
                        }
                        _ => Target::Dynamic("imports a module chosen at run time"),
                    }
                }
                "builtins.globals" | "builtins.locals" => Target::Qualified("<globals>".into()),
                "builtins.vars" => match args.first().map(|a| self.resolve(*a)) {
                    Some(Target::Qualified(module)) => {
                        Target::Qualified(format!("<dict:{module}>"))
                    }
                    None => Target::Qualified("<globals>".into()),
                    _ => Target::Object,
                },
                q if PATH_TYPES.contains(&q) => {
                    Target::Path(arg_string(0).filter(PyStr::is_literal).map(|s| s.text))
                }
                q if q.starts_with("pathlib.Path.")
                    && matches!(
                        q.rsplit('.').next(),
                        Some(
                            "resolve"
                                | "absolute"
                                | "expanduser"
                                | "with_name"
                                | "with_suffix"
                                | "with_stem"
                                | "joinpath"
                                | "cwd"
                                | "home"
                        )
                    ) =>
                {
                    Target::Path(None)
                }
                _ => Target::Object,
            },
            Target::Dynamic(why) => Target::Dynamic(why),
            _ => Target::Object,
        }
    }

    fn resolve_subscript(&self, node: Node<'_>) -> Target {
        let (Some(value), Some(key)) = (
            node.child_by_field_name("value"),
            node.child_by_field_name("subscript"),
        ) else {
            return Target::Object;
        };
        let base = match value.kind() {
            "attribute"
                if value
                    .child_by_field_name("attribute")
                    .is_some_and(|a| text(a, self.src) == "__dict__") =>
            {
                match value.child_by_field_name("object").map(|o| self.resolve(o)) {
                    Some(Target::Qualified(module)) => {
                        Target::Qualified(format!("<dict:{module}>"))
                    }
                    _ => return Target::Object,
                }
            }
            _ => self.resolve(value),
        };
        let Target::Qualified(base) = base else {
            return Target::Object;
        };
        let special = base == "sys.modules"
            || base == "<globals>"
            || base == "builtins"
            || base.starts_with("<dict:");
        let key = match self.string_value(key) {
            Some(k) if !k.dynamic => k.text,
            _ if special => return Target::Dynamic("looks up a name that is built at run time"),
            _ => return Target::Object,
        };
        match base.as_str() {
            "sys.modules" => Target::Qualified(key),
            "<globals>" => self.resolve_name(&key),
            "builtins" => Target::Qualified(format!("builtins.{key}")),
            b if b.starts_with("<dict:") => Target::Qualified(format!(
                "{}.{key}",
                b.trim_start_matches("<dict:").trim_end_matches('>')
            )),
            _ => Target::Object,
        }
    }

    /// Positional arguments of a call (keyword and splat arguments excluded).
    pub(super) fn positional_args<'t>(&self, call: Node<'t>) -> Vec<Node<'t>> {
        call.child_by_field_name("arguments")
            .map(named_children)
            .unwrap_or_default()
            .into_iter()
            .filter(|a| {
                !matches!(
                    a.kind(),
                    "keyword_argument" | "list_splat" | "dictionary_splat" | "comment"
                )
            })
            .collect()
    }

    /// The value of keyword argument `name`, if given.
    pub(super) fn keyword_arg<'t>(&self, call: Node<'t>, name: &str) -> Option<Node<'t>> {
        call.child_by_field_name("arguments")
            .map(named_children)
            .unwrap_or_default()
            .into_iter()
            .filter(|a| a.kind() == "keyword_argument")
            .find(|a| {
                a.child_by_field_name("name")
                    .is_some_and(|n| text(n, self.src) == name)
            })
            .and_then(|a| a.child_by_field_name("value"))
    }
}

/// The name an expression hangs off: `os` in `os.path.join(...)`, `getattr(os, ...)` excluded.
fn root_identifier<'s>(node: Node<'_>, src: &'s str) -> Option<&'s str> {
    let mut current = node;
    for _ in 0..crate::parse::MAX_TREE_DEPTH {
        current = match current.kind() {
            "identifier" => return Some(text(current, src)),
            "attribute" => current.child_by_field_name("object")?,
            "call" => current.child_by_field_name("function")?,
            "subscript" => current.child_by_field_name("value")?,
            _ => return None,
        };
    }
    None
}
