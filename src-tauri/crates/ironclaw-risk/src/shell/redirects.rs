//! Redirections (`>`, `>>`, `<`, heredocs, here-strings) and what flows through pipes.

use tree_sitter::Node;

use super::words::{self, Word};
use super::{commands, Input, Walker};
use crate::parse::{children, line, named_children, text};
use crate::paths::{place, Place};
use crate::{Category, RiskLevel};

impl Walker<'_> {
    pub(super) fn redirected(&mut self, node: Node<'_>, input: &Input, depth: usize) {
        let snippet = text(node, self.src).to_owned();
        let mut stdin = input.clone();
        let mut continuations = Vec::new();
        let body = node.child_by_field_name("body");
        for child in named_children(node) {
            if Some(child) == body {
                continue;
            }
            if let Some(redirected) = self.redirect(child, &snippet, depth) {
                stdin = redirected;
            }
            if child.kind() == "heredoc_redirect" {
                // tree-sitter-bash hangs `cat <<EOF | sh` off the heredoc: the pipe's rest lives
                // inside the redirect node.
                continuations.extend(
                    named_children(child)
                        .into_iter()
                        .filter(|c| !c.kind().starts_with("heredoc_")),
                );
            }
        }
        let Some(body) = body else {
            return;
        };
        self.visit(body, &stdin, depth);
        let mut flowing = self.output_of(body, &stdin);
        for continuation in continuations {
            if continuation.kind() == "pipeline" {
                for element in named_children(continuation) {
                    self.visit(element, &flowing, depth);
                    flowing = self.output_of(element, &flowing);
                }
            } else {
                self.visit(continuation, &flowing, depth);
                flowing = Input::Opaque;
            }
        }
    }

    /// Judges one redirect; returns the new stdin when it supplies one.
    pub(super) fn redirect(
        &mut self,
        node: Node<'_>,
        snippet: &str,
        depth: usize,
    ) -> Option<Input> {
        match node.kind() {
            "file_redirect" => self.file_redirect(node, snippet, depth),
            "heredoc_redirect" => {
                let body = children(node)
                    .into_iter()
                    .find(|c| c.kind() == "heredoc_body");
                let Some(body) = body else {
                    return Some(Input::Text {
                        line: 0,
                        code: String::new(),
                        dynamic: false,
                    });
                };
                // An unquoted delimiter lets the outer shell expand `$(...)` in the body first.
                self.visit(body, &Input::Nothing, depth);
                Some(Input::Text {
                    line: line(body),
                    code: text(body, self.src).to_owned(),
                    dynamic: body.named_child_count() > 0,
                })
            }
            "herestring_redirect" => {
                let mut code = String::new();
                let mut dynamic = false;
                for child in named_children(node) {
                    self.visit(child, &Input::Nothing, depth);
                    let word = words::resolve(child, self.src, self.state);
                    dynamic |= !word.is_literal();
                    code.push_str(&word.text);
                }
                Some(Input::Text {
                    code,
                    dynamic,
                    line: 0,
                })
            }
            _ => {
                self.visit(node, &Input::Nothing, depth);
                None
            }
        }
    }

    fn file_redirect(&mut self, node: Node<'_>, snippet: &str, depth: usize) -> Option<Input> {
        let operator = children(node)
            .into_iter()
            .find(|c| !c.is_named())
            .map(|c| text(c, self.src).to_owned())
            .unwrap_or_default();
        let destination = node.child_by_field_name("destination");
        if let Some(destination) = destination {
            self.visit(destination, &Input::Nothing, depth);
        }
        let target = destination
            .map(|d| words::resolve(d, self.src, self.state))
            .unwrap_or_default();
        let at = line(node);
        match operator.as_str() {
            "<" => return Some(Input::File(target.text)),
            "<&" | "<&-" | ">&-" => return None,
            ">&" if target.text.chars().all(|c| c.is_ascii_digit() || c == '-') => return None,
            _ => {}
        }
        let appends = matches!(operator.as_str(), ">>" | "&>>" | "<>");
        let where_to = place(&target.text, self.state.cwd.as_deref());
        if where_to.is_discard() {
            return None;
        }
        if appends {
            self.add(
                RiskLevel::Normal,
                Category::Write,
                "appends to a file",
                snippet,
                at,
            );
        } else {
            self.add(
                RiskLevel::Destructive,
                Category::Overwrite,
                "replaces the contents of a file",
                snippet,
                at,
            );
            let exact = (!target.dynamic && !target.glob)
                .then(|| crate::paths::workspace_relative(&target.text, self.state.cwd.as_deref()))
                .flatten();
            self.out.replaces(exact);
        }
        self.outside(&where_to, "writes", snippet, at);
        None
    }

    /// Adds an outside-the-workspace reason when `where_to` is a literal path elsewhere.
    pub(super) fn outside(&mut self, where_to: &Place, verb: &str, snippet: &str, at: usize) {
        if let Place::Outside(path) = where_to {
            self.add(
                RiskLevel::Destructive,
                Category::OutsideWorkspace,
                &format!("{verb} outside the workspace ({path})"),
                snippet,
                at,
            );
        }
    }

    /// The literal text a substitution argument prints (`<(echo ..)`, `"$(printf ..)"`).
    pub(super) fn substitution_output(&self, node: Node<'_>) -> Option<String> {
        let inner = match node.kind() {
            "command_substitution" | "process_substitution" => node,
            "string" | "command_name" => {
                let named = named_children(node);
                match named.as_slice() {
                    [only] if matches!(only.kind(), "command_substitution") => *only,
                    _ => return None,
                }
            }
            _ => return None,
        };
        let statements = named_children(inner);
        let [statement] = statements.as_slice() else {
            return None;
        };
        match self.output_of(*statement, &Input::Nothing) {
            Input::Text { code, .. } => Some(code),
            _ => None,
        }
    }

    /// What a pipeline element writes to its stdout, given what it reads.
    pub(super) fn output_of(&self, node: Node<'_>, input: &Input) -> Input {
        if contains_download(node, self.src, 0) {
            return Input::Download(text(node, self.src).to_owned());
        }
        let (command, stdin) = match node.kind() {
            "command" => (node, command_stdin(node, self.src, self.state, input)),
            "redirected_statement" => match node.child_by_field_name("body") {
                Some(body) if body.kind() == "command" => {
                    let mut stdin = input.clone();
                    for child in named_children(node) {
                        if let Some(s) = literal_stdin(child, self.src, self.state) {
                            stdin = s;
                        }
                    }
                    (body, stdin)
                }
                _ => return pass_download(input),
            },
            _ => return pass_download(input),
        };
        let argv: Vec<Word> = command_words(command, self.src, self.state);
        commands::output(&argv, &stdin)
    }
}

fn pass_download(input: &Input) -> Input {
    match input {
        Input::Download(source) => Input::Download(source.clone()),
        _ => Input::Opaque,
    }
}

fn command_stdin(node: Node<'_>, src: &str, state: &super::State, input: &Input) -> Input {
    let mut stdin = input.clone();
    for child in named_children(node) {
        if let Some(s) = literal_stdin(child, src, state) {
            stdin = s;
        }
    }
    stdin
}

/// The stdin a heredoc or here-string supplies, without reporting anything (reporting happens
/// when the statement itself is visited).
fn literal_stdin(node: Node<'_>, src: &str, state: &super::State) -> Option<Input> {
    match node.kind() {
        "heredoc_redirect" => {
            let body = children(node)
                .into_iter()
                .find(|c| c.kind() == "heredoc_body");
            Some(Input::Text {
                line: body.map_or(0, line),
                code: body.map(|b| text(b, src).to_owned()).unwrap_or_default(),
                dynamic: body.is_some_and(|b| b.named_child_count() > 0),
            })
        }
        "herestring_redirect" => {
            let words: Vec<Word> = named_children(node)
                .into_iter()
                .map(|c| words::resolve(c, src, state))
                .collect();
            Some(Input::Text {
                line: 0,
                code: words.iter().map(|w| w.text.as_str()).collect(),
                dynamic: words.iter().any(|w| !w.is_literal()),
            })
        }
        _ => None,
    }
}

fn command_words(node: Node<'_>, src: &str, state: &super::State) -> Vec<Word> {
    let mut argv = Vec::new();
    for (i, child) in children(node).into_iter().enumerate() {
        let field = u32::try_from(i)
            .ok()
            .and_then(|i| node.field_name_for_child(i));
        if matches!(field, Some("name") | Some("argument")) {
            argv.extend(words::words(child, src, state));
        }
    }
    argv
}

/// True when any command under `node` (including inside substitutions) fetches from the network.
pub(super) fn contains_download(node: Node<'_>, src: &str, depth: usize) -> bool {
    if depth > crate::parse::MAX_TREE_DEPTH {
        return false;
    }
    if node.kind() == "command_name" {
        let name = text(node, src);
        let base = name.rsplit('/').next().unwrap_or(name);
        if commands::is_downloader(base.trim_matches(['\'', '"', '\\'])) {
            return true;
        }
    }
    children(node)
        .into_iter()
        .any(|c| contains_download(c, src, depth + 1))
}
