//! Python analysis over tree-sitter-python: tracks what names mean (imports, aliases, literal
//! strings, `Path` objects), resolves every call to a qualified name where it can
//! (`s.rmtree` → `shutil.rmtree`, `getattr(os, "remove")` → `os.remove`) and hands it to
//! [`calls`]. Function bodies are judged where they are defined, called or not: the interpreter
//! persists, so a later step may call them.

mod assign;
mod calls;
mod modules;
mod processes;
mod resolve;
pub(crate) mod rules;
mod strings;
mod values;

use std::cell::{Cell, RefCell};
use std::collections::{HashMap, HashSet};

use tree_sitter::Node;

use crate::findings::Findings;
use crate::parse::{self, children, line, named_children, text, Grammar, MAX_TREE_DEPTH};
use crate::{Category, RiskLevel};

/// At most this many modules or functions are remembered for one name.
const MAX_CANDIDATES: usize = 8;

/// What a name holds, as far as this snippet shows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Value {
    /// A module or function: `shutil`, `os.remove`, `pathlib.Path`.
    Qualified(String),
    /// A `pathlib.Path`, with its literal path when known.
    Path(Option<String>),
    /// String literal candidates (several assignments keep several).
    Strings(Vec<String>),
    /// A list or tuple of literal strings (an argv).
    List(Vec<(String, bool)>),
}

#[derive(Debug, Default)]
pub(crate) struct Scope {
    /// `None`: assigned something this analysis cannot follow.
    names: HashMap<String, Option<Value>>,
    /// Names bound anywhere in the snippet (functions, classes, variables, parameters).
    defined: HashSet<String>,
    /// Modules imported with `from m import *`.
    star: Vec<String>,
    /// Every module or function a name was ever bound to. Bindings are flow-insensitive, so
    /// `import os` followed by `if c: os = other` leaves `os` possibly the module: calls through
    /// such names are judged once per candidate.
    ever: HashMap<String, Vec<String>>,
}

impl Scope {
    fn bind(&mut self, name: &str, value: Option<Value>) {
        if let Some(Value::Qualified(q)) = &value {
            let candidates = self.ever.entry(name.to_owned()).or_default();
            if !candidates.contains(q) && candidates.len() < MAX_CANDIDATES {
                candidates.push(q.clone());
            }
        }
        let merged = match (self.names.get(name), value) {
            (Some(Some(Value::Strings(old))), Some(Value::Strings(new))) => {
                let mut all = old.clone();
                all.extend(new.into_iter().filter(|n| !old.contains(n)));
                Some(Value::Strings(all))
            }
            (Some(Some(old)), Some(new)) if *old != new => None,
            (Some(None), _) => None,
            (_, value) => value,
        };
        self.names.insert(name.to_owned(), merged);
    }
}

pub(crate) fn analyze(code: &str, out: &mut Findings) {
    let mut scope = Scope::default();
    analyze_with(code, out, &mut scope);
}

/// Analyses `code` in `scope`; nested `exec` shares the scope, as `exec` shares globals.
fn analyze_with(code: &str, out: &mut Findings, scope: &mut Scope) {
    let tree = match parse::parse(Grammar::Python, code, out.deadline()) {
        Ok(tree) => tree,
        Err(error) => {
            out.add(
                RiskLevel::Normal,
                Category::Unparseable,
                &format!("could not be analysed ({error})"),
                code,
                1,
            );
            return;
        }
    };
    let root = tree.root_node();
    let mut walker = Walker {
        src: code,
        scope,
        out,
        candidate: RefCell::new(None),
        nesting: Cell::new(0),
    };
    if root.has_error() {
        walker.alarming_names(root);
    }
    walker.collect_definitions(root, 0);
    walker.visit(root, 0);
}

pub(crate) struct Walker<'a> {
    src: &'a str,
    scope: &'a mut Scope,
    out: &'a mut Findings,
    /// While judging one candidate of an ambiguous name: that name and the candidate.
    candidate: RefCell<Option<(String, String)>>,
    /// Recursion depth of expression resolution (`a.b.c...`, `"a" + "b" + ...` chains can be
    /// as deep as the input is long).
    nesting: Cell<usize>,
}

/// Undoes one level of [`Walker::descend`] when dropped.
struct DepthGuard<'a>(&'a Cell<usize>);

impl Drop for DepthGuard<'_> {
    fn drop(&mut self) {
        self.0.set(self.0.get().saturating_sub(1));
    }
}

impl Walker<'_> {
    /// One level deeper into an expression; `None` past [`MAX_TREE_DEPTH`].
    fn descend(&self) -> Option<DepthGuard<'_>> {
        let depth = self.nesting.get();
        if depth > MAX_TREE_DEPTH {
            return None;
        }
        self.nesting.set(depth + 1);
        Some(DepthGuard(&self.nesting))
    }

    fn add(&mut self, level: RiskLevel, category: Category, action: &str, node: Node<'_>) {
        let snippet = text(node, self.src).to_owned();
        self.out.add(level, category, action, &snippet, line(node));
    }

    fn visit(&mut self, node: Node<'_>, depth: usize) {
        if depth > MAX_TREE_DEPTH {
            self.add(
                RiskLevel::Normal,
                Category::Unparseable,
                "nests too deeply to analyse",
                node,
            );
            return;
        }
        if self.out.out_of_time() {
            return;
        }
        if node.is_missing() {
            self.add(
                RiskLevel::Normal,
                Category::Unparseable,
                "is incomplete (Python would reject it)",
                node,
            );
            return;
        }
        if node.is_error() {
            self.add(
                RiskLevel::Normal,
                Category::Unparseable,
                "could not be parsed (Python would probably reject it)",
                node,
            );
        }
        let next = depth + 1;
        match node.kind() {
            "import_statement" | "import_from_statement" | "future_import_statement" => {
                self.import(node)
            }
            "assignment" | "augmented_assignment" => self.assignment(node, next),
            "call" => self.call(node, next),
            "attribute" | "identifier" => self.reference(node, next),
            "subscript" => {
                self.reference(node, next);
                for child in children(node) {
                    self.visit(child, next);
                }
            }
            "comment" => {}
            "string" | "concatenated_string" => {
                // Only f-string holes hold code.
                for child in named_children(node) {
                    if matches!(child.kind(), "interpolation" | "string") {
                        self.visit(child, next);
                    }
                }
            }
            _ => {
                for child in children(node) {
                    self.visit(child, next);
                }
            }
        }
    }

    /// Code tree-sitter could not fully parse still gets a look for dangerous names, so a
    /// grammar gap (or newer syntax) cannot turn `shutil.rmtree(...)` into a mere "could not
    /// parse".
    fn alarming_names(&mut self, root: Node<'_>) {
        let alarming = self
            .src
            .split(|c: char| !(c.is_alphanumeric() || c == '_'))
            .find(|word| rules::is_alarming_name(word));
        if let Some(name) = alarming {
            self.add(
                RiskLevel::Destructive,
                Category::Unparseable,
                &format!("could not be fully parsed and mentions `{name}`"),
                root,
            );
        }
    }

    fn import(&mut self, node: Node<'_>) {
        let module = node
            .child_by_field_name("module_name")
            .map(|m| text(m, self.src).to_owned());
        let mut cursor = node.walk();
        let names: Vec<Node<'_>> = node.children_by_field_name("name", &mut cursor).collect();
        if let Some(module) = &module {
            self.check_module(module, node);
            if children(node).iter().any(|c| c.kind() == "wildcard_import") {
                self.scope.star.push(module.clone());
            }
        }
        for name in names {
            let (dotted, alias) = match name.kind() {
                "aliased_import" => (
                    name.child_by_field_name("name").map(|n| text(n, self.src)),
                    name.child_by_field_name("alias").map(|n| text(n, self.src)),
                ),
                _ => (Some(text(name, self.src)), None),
            };
            let Some(dotted) = dotted else {
                continue;
            };
            match &module {
                // from m import a as b → b means m.a
                Some(module) => {
                    let bound = alias.unwrap_or(dotted);
                    let qualified = format!("{module}.{dotted}");
                    self.scope.bind(bound, Some(Value::Qualified(qualified)));
                }
                None => {
                    self.check_module(dotted, node);
                    match alias {
                        Some(alias) => self
                            .scope
                            .bind(alias, Some(Value::Qualified(dotted.to_owned()))),
                        // import a.b binds `a`
                        None => {
                            let top = dotted.split('.').next().unwrap_or(dotted);
                            self.scope.bind(top, Some(Value::Qualified(top.to_owned())));
                        }
                    }
                }
            }
        }
    }

    fn check_module(&mut self, module: &str, node: Node<'_>) {
        if module.starts_with('.') {
            self.add(
                RiskLevel::Normal,
                Category::Unrecognized,
                "imports a local module, whose code runs on import and IronClaw cannot see",
                node,
            );
        } else if !modules::is_known_module(module) {
            self.add(
                RiskLevel::Normal,
                Category::Unrecognized,
                &format!("imports `{module}`, which IronClaw does not recognise (its code runs on import)"),
                node,
            );
        }
    }

    /// Pre-pass: every name the snippet binds, so calls to its own functions are not "unknown".
    fn collect_definitions(&mut self, node: Node<'_>, depth: usize) {
        if depth > MAX_TREE_DEPTH {
            return;
        }
        match node.kind() {
            "function_definition" | "class_definition" => {
                if let Some(name) = node.child_by_field_name("name") {
                    self.define(name, depth);
                }
            }
            "parameters" | "lambda_parameters" => {
                for p in named_children(node) {
                    let target = match p.kind() {
                        "default_parameter" | "typed_default_parameter" => {
                            p.child_by_field_name("name")
                        }
                        "identifier" => Some(p),
                        _ => named_children(p)
                            .into_iter()
                            .find(|c| c.kind() == "identifier"),
                    };
                    if let Some(target) = target {
                        self.define(target, depth);
                    }
                }
            }
            "assignment" | "augmented_assignment" | "for_statement" | "for_in_clause" => {
                if let Some(left) = node.child_by_field_name("left") {
                    self.define(left, depth);
                }
            }
            "named_expression" => {
                if let Some(name) = node.child_by_field_name("name") {
                    self.define(name, depth);
                }
            }
            "as_pattern_target" | "global_statement" | "nonlocal_statement" => {
                for child in named_children(node) {
                    self.define(child, depth);
                }
            }
            _ => {}
        }
        for child in named_children(node) {
            self.collect_definitions(child, depth + 1);
        }
    }

    /// Records the identifiers of an assignment target (through tuples and lists, not through
    /// attributes or subscripts, which bind nothing new).
    fn define(&mut self, target: Node<'_>, depth: usize) {
        if depth > MAX_TREE_DEPTH {
            return;
        }
        match target.kind() {
            "identifier" => {
                self.scope.defined.insert(text(target, self.src).to_owned());
            }
            "pattern_list"
            | "tuple_pattern"
            | "list_pattern"
            | "tuple"
            | "list"
            | "parenthesized_expression"
            | "list_splat_pattern"
            | "expression_list" => {
                for child in named_children(target) {
                    self.define(child, depth + 1);
                }
            }
            _ => {}
        }
    }

    /// Analyses Python nested at `at` (a literal passed to `exec`).
    fn nested_python(&mut self, code: &str, at: usize, via: &str) {
        let scope = &mut *self.scope;
        self.out
            .nested(at, via, code, |out| analyze_with(code, out, scope));
    }
}
