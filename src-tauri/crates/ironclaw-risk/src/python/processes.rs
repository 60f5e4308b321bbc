//! Python code that starts programs or runs code: command lines and argvs go to the shell
//! analysis, code strings back to the Python analysis.

use tree_sitter::Node;

use super::resolve::Target;
use super::rules::{rule, Rule};
use super::Walker;
use crate::parse::{children, text};
use crate::{Category as C, RiskLevel};
use RiskLevel::{Destructive as D, Normal as N};

impl Walker<'_> {
    pub(super) fn subprocess(&mut self, node: Node<'_>, name: &str) {
        let command = self
            .positional_args(node)
            .first()
            .copied()
            .or_else(|| self.keyword_arg(node, "args"));
        let shell = self
            .keyword_arg(node, "shell")
            .is_some_and(|s| text(s, self.src) != "False");
        let executable = self
            .keyword_arg(node, "executable")
            .map(|e| self.string_value(e));
        let Some(command) = command else {
            return;
        };
        let stdin = self
            .keyword_arg(node, "input")
            .map(|i| match self.string_value(i) {
                Some(s) => (s.text.clone(), !s.is_literal()),
                None => (String::new(), true),
            });
        if let Some(line) = self.string_value(command) {
            return self.shell_string(line, stdin, node, name);
        }
        let Some(mut argv) = self.argv_value(command) else {
            return self.dynamic_command(node, Some(command));
        };
        if shell {
            if let Some((first, dynamic)) = argv.words.first().cloned() {
                let line = super::strings::PyStr {
                    text: first,
                    dynamic,
                    from_var: argv.from_var,
                };
                return self.shell_string(line, stdin, node, name);
            }
        }
        match (executable, argv.words.first_mut()) {
            (Some(Some(exe)), Some(first)) => *first = (exe.text.clone(), !exe.is_literal()),
            (Some(None), Some(first)) => first.1 = true,
            _ => {}
        }
        self.argv(argv.words, argv.from_var, stdin, node, name);
    }

    pub(super) fn shell_string(
        &mut self,
        command: super::strings::PyStr,
        stdin: Option<(String, bool)>,
        node: Node<'_>,
        name: &str,
    ) {
        if !command.is_literal() {
            self.add(
                N,
                C::DynamicCode,
                "runs a shell command built at run time",
                node,
            );
        }
        let at = crate::parse::line(node);
        let via = format!("run by {name}");
        self.out.nested(at, &via, &command.text, |out| {
            crate::shell::analyze_with_stdin(&command.text, stdin, out)
        });
    }

    pub(super) fn argv(
        &mut self,
        words: Vec<(String, bool)>,
        from_var: bool,
        stdin: Option<(String, bool)>,
        node: Node<'_>,
        name: &str,
    ) {
        if words.is_empty() {
            return;
        }
        let snippet = words
            .iter()
            .map(|(w, _)| w.as_str())
            .collect::<Vec<_>>()
            .join(" ");
        let at = crate::parse::line(node);
        let via = format!("run by {name}");
        self.out.nested(at, &via, &snippet, |out| {
            crate::shell::analyze_argv(&words, from_var, stdin, &snippet, out)
        });
    }

    pub(super) fn dynamic_command(&mut self, node: Node<'_>, argument: Option<Node<'_>>) {
        self.add(N, C::DynamicCode, "runs a command built at run time", node);
        if argument.is_some_and(|a| self.contains_network(a, 0)) {
            self.add(
                D,
                C::RemoteCode,
                "runs a command downloaded from the network",
                node,
            );
        }
    }

    pub(super) fn code(&mut self, node: Node<'_>, argument: Option<Node<'_>>, name: &str) {
        let Some(argument) = argument else {
            return;
        };
        match self.string_value(argument) {
            Some(code) => {
                if !code.is_literal() {
                    self.add(
                        N,
                        C::DynamicCode,
                        "runs Python code built at run time",
                        node,
                    );
                }
                if !code.dynamic {
                    let at = crate::parse::line(argument);
                    self.nested_python(&code.text, at, &format!("inside {name}"));
                }
            }
            None => {
                self.add(
                    N,
                    C::DynamicCode,
                    "runs Python code built at run time",
                    node,
                );
                if self.contains_network(argument, 0) {
                    self.add(
                        D,
                        C::RemoteCode,
                        "runs code downloaded from the network",
                        node,
                    );
                }
            }
        }
    }

    /// True when a call under `node` uses the network (`exec(requests.get(u).text)`).
    fn contains_network(&self, node: Node<'_>, depth: usize) -> bool {
        if depth > crate::parse::MAX_TREE_DEPTH {
            return false;
        }
        if node.kind() == "call" {
            let network = node
                .child_by_field_name("function")
                .map(|f| self.resolve(f))
                .is_some_and(|t| matches!(t, Target::Qualified(q) if matches!(rule(&q), Some(Rule::Effect(_, C::Network, _, _)))));
            if network {
                return true;
            }
        }
        children(node)
            .into_iter()
            .any(|c| self.contains_network(c, depth + 1))
    }
}
