//! Assignments: remember what names hold, and report changes to modules and the environment that
//! outlive this step in the persistent interpreter.

use tree_sitter::Node;

use super::resolve::Target;
use super::{Value, Walker};
use crate::parse::{named_children, text};
use crate::shell::commands::is_sensitive_variable;
use crate::{Category as C, RiskLevel};

impl Walker<'_> {
    pub(super) fn assignment(&mut self, node: Node<'_>, depth: usize) {
        let left = node.child_by_field_name("left");
        let right = node.child_by_field_name("right");
        let plain = node.kind() == "assignment";
        if let Some(left) = left {
            match left.kind() {
                "identifier" => {
                    let value = right.filter(|_| plain).and_then(|r| self.value_of(r));
                    self.scope.bind(text(left, self.src), value);
                }
                "attribute" => self.patch(left, node),
                "subscript" => self.environ(left, node),
                _ => self.unbind(left, depth),
            }
        }
        if let Some(right) = right {
            // `f = os.remove` at module level is an alias, judged where `f` is called. In a class
            // or function body the name becomes an attribute or local this analysis does not
            // follow, so there it counts as passing the function on.
            let module_level = node
                .parent()
                .and_then(|statement| statement.parent())
                .is_some_and(|block| block.kind() == "module");
            let alias = matches!(right.kind(), "identifier" | "attribute");
            if plain && alias && module_level {
                if right.kind() == "attribute" {
                    self.reference_object(right, depth);
                }
            } else {
                self.visit(right, depth);
            }
        }
    }

    fn reference_object(&mut self, attribute: Node<'_>, depth: usize) {
        if let Some(object) = attribute.child_by_field_name("object") {
            if !matches!(object.kind(), "identifier" | "attribute") {
                self.visit(object, depth);
            }
        }
    }

    /// What an assigned expression is, for later resolution.
    fn value_of(&self, right: Node<'_>) -> Option<Value> {
        if matches!(
            right.kind(),
            "identifier" | "attribute" | "call" | "subscript" | "binary_operator"
        ) {
            match self.resolve(right) {
                Target::Qualified(q) if !q.starts_with('<') => return Some(Value::Qualified(q)),
                Target::Path(p) => return Some(Value::Path(p)),
                _ => {}
            }
        }
        if let Some(s) = self.string_value(right).filter(|s| !s.dynamic) {
            return Some(Value::Strings(
                s.text.split('\n').map(str::to_owned).collect(),
            ));
        }
        if matches!(right.kind(), "list" | "tuple") {
            return self.argv_value(right).map(|argv| Value::List(argv.words));
        }
        None
    }

    fn unbind(&mut self, target: Node<'_>, depth: usize) {
        if depth > crate::parse::MAX_TREE_DEPTH {
            return;
        }
        match target.kind() {
            "identifier" => self.scope.bind(text(target, self.src), None),
            "pattern_list"
            | "tuple_pattern"
            | "list_pattern"
            | "tuple"
            | "list"
            | "parenthesized_expression"
            | "list_splat_pattern"
            | "expression_list" => {
                for child in named_children(target) {
                    self.unbind(child, depth + 1);
                }
            }
            _ => {}
        }
    }

    /// `os.system = ...`, `builtins.print = ...`: monkey-patching a module persists.
    fn patch(&mut self, left: Node<'_>, node: Node<'_>) {
        let Some(object) = left.child_by_field_name("object") else {
            return;
        };
        if let Target::Qualified(module) = self.resolve(object) {
            let attr = left
                .child_by_field_name("attribute")
                .map(|a| text(a, self.src))
                .unwrap_or_default();
            self.add(
                RiskLevel::Normal,
                C::Environment,
                &format!("replaces `{module}.{attr}` for the rest of the session"),
                node,
            );
        }
    }

    /// `os.environ["PATH"] = ...` steers what later programs load.
    fn environ(&mut self, left: Node<'_>, node: Node<'_>) {
        let Some(value) = left.child_by_field_name("value") else {
            return;
        };
        if self.resolve(value) != Target::Qualified("os.environ".into()) {
            return;
        }
        let key = left
            .child_by_field_name("subscript")
            .and_then(|k| self.string_value(k));
        match key {
            Some(k) if k.is_literal() && !is_sensitive_variable(&k.text) => {}
            Some(k) if k.is_literal() => self.add(
                RiskLevel::Normal,
                C::Environment,
                &format!(
                    "changes {}, which decides what later programs load or run",
                    k.text
                ),
                node,
            ),
            _ => self.add(
                RiskLevel::Normal,
                C::Environment,
                "changes an environment variable chosen at run time",
                node,
            ),
        }
    }
}
