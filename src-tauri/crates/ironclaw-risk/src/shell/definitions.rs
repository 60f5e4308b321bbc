//! What the snippet defines: variables (remembered for later words), functions and aliases
//! (judged where defined, since the shell session outlives this step).

use tree_sitter::Node;

use super::{commands, redirects, words, Input, Walker};
use crate::parse::{children, line, named_children, text};
use crate::{Category, RiskLevel};

impl Walker<'_> {
    /// `FOO=1 cmd`: the assignment only affects `cmd`, so it is not remembered, but variables
    /// that steer what programs load or run are still worth a reason.
    pub(super) fn prefix_assignment(&mut self, node: Node<'_>, depth: usize) {
        self.check_sensitive_variable(node);
        if let Some(value) = node.child_by_field_name("value") {
            self.visit(value, &Input::Nothing, depth);
        }
    }

    pub(super) fn assignment(&mut self, node: Node<'_>, depth: usize) {
        self.check_sensitive_variable(node);
        let Some(name) = node.child_by_field_name("name") else {
            return;
        };
        let name = text(name, self.src).to_owned();
        let appends = children(node).iter().any(|c| c.kind() == "+=");
        let value = match node.child_by_field_name("value") {
            Some(value) => {
                if redirects::contains_download(value, self.src, 0)
                    || self.mentions_downloaded_variable(value)
                {
                    self.state.downloaded.insert(name.clone());
                }
                self.visit(value, &Input::Nothing, depth);
                let word = words::resolve(value, self.src, self.state);
                (!word.dynamic && !appends && value.kind() != "array").then_some(word.text)
            }
            None => Some(String::new()),
        };
        self.state.assign(&name, value);
    }

    pub(super) fn mentions_downloaded_variable(&self, node: Node<'_>) -> bool {
        let raw = text(node, self.src);
        self.state
            .downloaded
            .iter()
            .any(|v| raw.contains(&format!("${v}")) || raw.contains(&format!("${{{v}}}")))
    }

    pub(super) fn check_sensitive_variable(&mut self, node: Node<'_>) {
        let Some(name) = node.child_by_field_name("name") else {
            return;
        };
        let name = text(name, self.src);
        if commands::is_sensitive_variable(name) {
            let snippet = text(node, self.src).to_owned();
            self.add(
                RiskLevel::Normal,
                Category::Environment,
                &format!("changes {name}, which decides what later commands load or run"),
                &snippet,
                line(node),
            );
        }
    }

    pub(super) fn declaration(&mut self, node: Node<'_>, depth: usize) {
        for child in named_children(node) {
            if child.kind() == "variable_assignment" {
                self.assignment(child, depth);
            } else {
                self.visit(child, &Input::Nothing, depth);
            }
        }
    }

    pub(super) fn for_loop(&mut self, node: Node<'_>, depth: usize) {
        let mut cursor = node.walk();
        let values: Vec<Node<'_>> = node.children_by_field_name("value", &mut cursor).collect();
        if let Some(variable) = node.child_by_field_name("variable") {
            let name = text(variable, self.src).to_owned();
            if values.is_empty() {
                self.state.assign(&name, None);
            }
            for value in &values {
                for word in words::words(*value, self.src, self.state) {
                    self.state
                        .assign(&name, (!word.dynamic && !word.glob).then_some(word.text));
                }
            }
        }
        for child in children(node) {
            self.visit(child, &Input::Nothing, depth);
        }
    }

    pub(super) fn function(&mut self, node: Node<'_>, depth: usize) {
        if let Some(name) = node.child_by_field_name("name") {
            let name = text(name, self.src).to_owned();
            if commands::is_known_command(&name) {
                let snippet = text(node, self.src).to_owned();
                self.add(
                    RiskLevel::Normal,
                    Category::Environment,
                    &format!("redefines `{name}` as a function for the rest of the session"),
                    &snippet,
                    line(node),
                );
            }
            self.state.functions.insert(name);
        }
        // The body is judged where it is defined, whether or not this snippet calls it: the
        // shell session persists, so a later step may.
        for child in children(node) {
            self.visit(child, &Input::Nothing, depth);
        }
    }
}
