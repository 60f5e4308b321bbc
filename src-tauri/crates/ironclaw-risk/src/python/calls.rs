//! What a resolved Python call does. Commands handed to the shell (`os.system`,
//! `subprocess.run`, `os.exec*`) are analysed with the shell analysis; code handed to `exec` is
//! re-parsed as Python.

use tree_sitter::Node;

use super::resolve::Target;
use super::rules::{method_rule, rule, Rule};
use super::{modules, Walker};
use crate::parse::text;
use crate::paths::{place, Place};
use crate::{Category as C, RiskLevel};
use RiskLevel::{Destructive as D, Normal as N};

impl Walker<'_> {
    pub(super) fn call(&mut self, node: Node<'_>, depth: usize) {
        let function = node.child_by_field_name("function");
        if let Some(function) = function {
            for target in self.resolve_each(function) {
                self.call_target(target, function, node);
            }
            self.visit_callee(function, depth);
        }
        if let Some(arguments) = node.child_by_field_name("arguments") {
            self.visit(arguments, depth);
        }
        // `getattr(os, "remove")` used as a value rather than called on the spot.
        let called_here = node
            .parent()
            .is_some_and(|p| p.kind() == "call" && p.child_by_field_name("function") == Some(node));
        if !called_here {
            self.reference(node, depth);
        }
    }

    fn call_target(&mut self, target: Target, function: Node<'_>, node: Node<'_>) {
        {
            match target {
                Target::Qualified(q) => self.qualified_call(&q, node),
                Target::Unknown(name) => self.add(
                    N,
                    C::Unrecognized,
                    &format!("calls `{name}`, which this code does not define (it may come from an earlier step)"),
                    node,
                ),
                Target::Dynamic(why) => self.add(N, C::DynamicCode, why, node),
                Target::Object => {
                    let method = (function.kind() == "attribute")
                        .then(|| function.child_by_field_name("attribute"))
                        .flatten()
                        .map(|a| text(a, self.src).to_owned());
                    let has_args = !self.positional_args(node).is_empty();
                    if let Some(rule) = method.and_then(|m| method_rule(&m, has_args)) {
                        self.apply(rule, node, None);
                    }
                }
                Target::Path(_) | Target::Local => {}
            }
        }
    }

    /// Visits calls hidden in a callee (`getattr(os, x)(...)`, `foo().bar()`) without
    /// reporting the callee's own name again.
    fn visit_callee(&mut self, node: Node<'_>, depth: usize) {
        if depth > crate::parse::MAX_TREE_DEPTH {
            return self.visit(node, depth);
        }
        match node.kind() {
            "identifier" => {}
            "attribute" => {
                if let Some(object) = node.child_by_field_name("object") {
                    self.visit_callee(object, depth + 1);
                }
            }
            _ => self.visit(node, depth + 1),
        }
    }

    /// A risky function mentioned without being called (`map(os.remove, files)`) may be called
    /// anywhere; judge it as called with unknown arguments.
    pub(super) fn reference(&mut self, node: Node<'_>, depth: usize) {
        for target in self.resolve_each(node) {
            let Target::Qualified(q) = target else {
                continue;
            };
            let action = match rule(&q) {
                Some(Rule::Effect(level, category, _, _)) if level == D => Some((level, category)),
                Some(
                    Rule::Shell
                    | Rule::Subprocess
                    | Rule::ExecArgs(_)
                    | Rule::ExecV(_)
                    | Rule::ExecL(_)
                    | Rule::Code,
                ) => Some((N, C::DynamicCode)),
                _ => None,
            };
            if let Some((level, category)) = action {
                self.add(
                    level,
                    category,
                    &format!("passes `{q}` on to be called later"),
                    node,
                );
            }
        }
        if node.kind() == "attribute" {
            self.visit_callee(node, depth);
        }
    }

    fn qualified_call(&mut self, q: &str, node: Node<'_>) {
        if let Some(rule) = rule(q) {
            return self.apply(rule, node, Some(q));
        }
        let top = q.split('.').next().unwrap_or(q);
        if q.starts_with("builtins.") || modules::is_read_only(q) || q.starts_with('<') {
            return;
        }
        if modules::is_powerful_module(top) {
            self.add(
                N,
                C::Unrecognized,
                &format!("calls `{q}`, which IronClaw does not know to be read-only"),
                node,
            );
            return;
        }
        let last = q.rsplit('.').next().unwrap_or(q);
        let has_args = !self.positional_args(node).is_empty();
        if let Some(rule) = method_rule(last, has_args) {
            self.apply(rule, node, Some(q));
        }
    }

    fn apply(&mut self, rule: Rule, node: Node<'_>, qualified: Option<&str>) {
        let args = self.positional_args(node);
        let name = qualified.unwrap_or("this call").to_owned();
        match rule {
            Rule::Effect(level, category, action, path_arg) => {
                self.add(level, category, action, node);
                if matches!(
                    category,
                    C::Write | C::Delete | C::Overwrite | C::Permissions
                ) {
                    let path = self.receiver_path(node).or_else(|| {
                        path_arg
                            .and_then(|i| args.get(i))
                            .and_then(|a| self.string_value(*a))
                            .filter(|s| s.is_literal())
                            .map(|s| s.text)
                    });
                    self.place_path(path, node);
                }
            }
            Rule::Shell => match args.first().and_then(|a| self.string_value(*a)) {
                Some(command) => self.shell_string(command, None, node, &name),
                None => self.dynamic_command(node, args.first().copied()),
            },
            Rule::Subprocess => self.subprocess(node, &name),
            Rule::ExecArgs(from) => {
                let words = args
                    .get(from..)
                    .unwrap_or_default()
                    .iter()
                    .map(|a| match self.string_value(*a) {
                        Some(s) => (s.text.clone(), !s.is_literal()),
                        None => (text(*a, self.src).to_owned(), true),
                    })
                    .collect();
                self.argv(words, false, None, node, &name);
            }
            Rule::ExecV(at) | Rule::ExecL(at) => {
                let program = args.get(at).and_then(|a| self.string_value(*a));
                let rest: Vec<(String, bool)> = if let Rule::ExecV(_) = rule {
                    args.get(at + 1)
                        .and_then(|a| self.argv_value(*a))
                        .map(|argv| argv.words.into_iter().skip(1).collect())
                        .unwrap_or_else(|| vec![("$PYTHON_VALUE".into(), true)])
                } else {
                    args.get(at + 2..)
                        .unwrap_or_default()
                        .iter()
                        .map(|a| match self.string_value(*a) {
                            Some(s) => (s.text.clone(), !s.is_literal()),
                            None => (text(*a, self.src).to_owned(), true),
                        })
                        .collect()
                };
                let mut words = vec![match program {
                    Some(p) => (p.text.clone(), !p.is_literal()),
                    None => ("$PYTHON_VALUE".into(), true),
                }];
                words.extend(rest);
                self.argv(words, false, None, node, &name);
            }
            Rule::Code => self.code(node, args.first().copied(), &name),
            Rule::Open(index, default) => self.open(node, index, default),
            Rule::Patch => {
                if let Some(Target::Qualified(module)) = args.first().map(|a| self.resolve(*a)) {
                    self.add(
                        N,
                        C::Environment,
                        &format!("changes module `{module}` for the rest of the session"),
                        node,
                    );
                }
            }
            Rule::Import => match args.first().and_then(|a| self.string_value(*a)) {
                Some(module) if module.is_literal() => self.check_module(&module.text, node),
                _ => self.add(
                    N,
                    C::DynamicCode,
                    "imports a module chosen at run time",
                    node,
                ),
            },
        }
    }

    /// The literal path of a `Path(...)` receiver, for `Path("/etc/x").write_text(...)`.
    fn receiver_path(&self, call: Node<'_>) -> Option<String> {
        let function = call.child_by_field_name("function")?;
        let object = function.child_by_field_name("object")?;
        match self.resolve(object) {
            Target::Path(path) => path,
            _ => None,
        }
    }

    fn place_path(&mut self, path: Option<String>, node: Node<'_>) {
        if let Some(Place::Outside(path)) = path.map(|p| place(&p, None)) {
            self.add(
                D,
                C::OutsideWorkspace,
                &format!("writes outside the workspace ({path})"),
                node,
            );
        }
    }

    fn open(&mut self, node: Node<'_>, index: usize, default: &str) {
        let args = self.positional_args(node);
        let mode_node = args
            .get(index)
            .copied()
            .or_else(|| self.keyword_arg(node, "mode"));
        let mode = match mode_node {
            None => Some(default.to_owned()),
            Some(m) => self
                .string_value(m)
                .filter(|s| s.is_literal())
                .map(|s| s.text),
        };
        let action = match mode.as_deref() {
            None => "opens a file with a mode chosen at run time",
            Some(m) if m.contains('+') => "opens a file for reading and writing",
            Some(m) if m.contains('w') || m.contains('c') || m.contains('n') => {
                "writes a file (replacing its contents)"
            }
            Some(m) if m.contains('a') => "appends to a file",
            Some(m) if m.contains('x') => "creates a file",
            Some(_) => return,
        };
        self.add(N, C::Write, action, node);
        let path = self.receiver_path(node).or_else(|| {
            let file = if index == 0 {
                None
            } else {
                args.first().copied()
            };
            file.or_else(|| self.keyword_arg(node, "file"))
                .and_then(|f| self.string_value(f))
                .filter(|s| s.is_literal())
                .map(|s| s.text)
        });
        self.place_path(path, node);
    }
}
