//! Shell analysis over tree-sitter-bash: walks every statement (lists, pipelines, subshells,
//! substitutions, function bodies, heredocs), resolves each command's words and hands the argv
//! to [`commands`], which knows what programs do.

pub(crate) mod commands;
mod definitions;
mod git;
mod git_options;
mod glob;
mod interpreters;
mod options;
mod programs;
mod redirects;
mod scripts;
mod tools;
mod words;

use std::collections::{HashMap, HashSet};

use tree_sitter::Node;

use crate::findings::Findings;
use crate::parse::{self, children, line, named_children, text, Grammar, MAX_TREE_DEPTH};
use crate::{Category, RiskLevel};
use words::Word;

/// At most this many candidate values are remembered for one variable.
const MAX_VALUES: usize = 16;

/// What the snippet has defined so far; shared with nested code (`eval`, `bash -c`) so that
/// `c=rm; bash -c "$c -rf x"`-style indirection stays visible.
#[derive(Debug, Default)]
pub(crate) struct State {
    /// `None` once a variable got a value only known at run time.
    vars: HashMap<String, Option<Vec<String>>>,
    aliases: HashMap<String, String>,
    functions: HashSet<String>,
    /// Working directory after a literal `cd`; `None` means the workspace.
    cwd: Option<String>,
    /// Variables whose value came from a download (`s=$(curl ...)`).
    downloaded: HashSet<String>,
}

impl State {
    fn value_of(&self, name: &str) -> Option<&[String]> {
        self.vars.get(name).and_then(|v| v.as_deref())
    }

    fn assign(&mut self, name: &str, value: Option<String>) {
        let entry = self
            .vars
            .entry(name.to_owned())
            .or_insert_with(|| Some(Vec::new()));
        match (entry.as_mut(), value) {
            (Some(values), Some(value)) if values.len() < MAX_VALUES => {
                if !values.contains(&value) {
                    values.push(value);
                }
            }
            _ => *entry = None,
        }
    }
}

/// Where a command's standard input comes from, as far as the analysis can tell. Interpreters
/// that read their program from stdin are judged by it.
#[derive(Debug, Clone)]
pub(crate) enum Input {
    Nothing,
    /// Text the snippet itself supplies (heredoc, here-string, `echo '...' |`), with the line it
    /// starts on when that differs from the command's (heredoc bodies), else 0.
    Text {
        code: String,
        dynamic: bool,
        line: usize,
    },
    /// Bytes fetched from the network, possibly transformed on the way.
    /// Carries the fetching command's text, so the reason can show the whole chain.
    Download(String),
    /// A file named in the snippet.
    File(String),
    /// Anything else.
    Opaque,
}

pub(crate) fn analyze(code: &str, out: &mut Findings) {
    analyze_with_stdin(code, None, out);
}

/// Analyses a command line whose stdin is `stdin` (Python's `subprocess.run(..., input=...)`).
pub(crate) fn analyze_with_stdin(code: &str, stdin: Option<(String, bool)>, out: &mut Findings) {
    let mut state = State::default();
    let input = match stdin {
        Some((code, dynamic)) => Input::Text {
            code,
            dynamic,
            line: 0,
        },
        None => Input::Nothing,
    };
    analyze_with(code, out, &mut state, &input);
}

fn analyze_with(code: &str, out: &mut Findings, state: &mut State, input: &Input) {
    let tree = match parse::parse(Grammar::Bash, code, out.deadline()) {
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
        state,
        out,
    };
    if root.has_error() {
        walker.alarming_words(root);
    }
    walker.visit(root, input, 0);
}

pub(crate) struct Walker<'a> {
    src: &'a str,
    state: &'a mut State,
    out: &'a mut Findings,
}

impl Walker<'_> {
    fn visit(&mut self, node: Node<'_>, input: &Input, depth: usize) {
        if depth > MAX_TREE_DEPTH {
            self.unparseable(node, "nests too deeply to analyse");
            return;
        }
        if self.out.out_of_time() {
            return;
        }
        if node.is_missing() {
            self.unparseable(node, "is incomplete (bash would reject it)");
            return;
        }
        if node.is_error() {
            self.unparseable(node, "could not be parsed (bash would probably reject it)");
        }
        let next = depth + 1;
        match node.kind() {
            "command" => self.command(node, input, next),
            "pipeline" => self.pipeline(node, input, next),
            "redirected_statement" => self.redirected(node, input, next),
            "function_definition" => self.function(node, next),
            "variable_assignment" => self.assignment(node, next),
            "declaration_command" => self.declaration(node, next),
            "for_statement" => self.for_loop(node, next),
            "program" | "list" | "subshell" | "compound_statement" | "negated_command" => {
                for child in children(node) {
                    self.visit(child, input, next);
                }
            }
            "ERROR" => self.recovered(node, next),
            "comment" | "heredoc_start" | "heredoc_end" | "heredoc_content" => {}
            _ => {
                for child in children(node) {
                    self.visit(child, &Input::Nothing, next);
                }
            }
        }
    }

    fn unparseable(&mut self, node: Node<'_>, action: &str) {
        let snippet = text(node, self.src).to_owned();
        self.out.add(
            RiskLevel::Normal,
            Category::Unparseable,
            action,
            &snippet,
            line(node),
        );
    }

    /// Inside an ERROR node, tree-sitter may leave a `command_name` without its `command`;
    /// analyse it with the words that follow as a best guess, then visit everything.
    fn recovered(&mut self, node: Node<'_>, depth: usize) {
        let kids = children(node);
        for (i, child) in kids.iter().enumerate() {
            if child.kind() == "command_name" {
                let mut argv = words::words(*child, self.src, self.state);
                for sibling in kids.iter().skip(i + 1).take_while(|s| {
                    matches!(
                        s.kind(),
                        "word" | "string" | "raw_string" | "concatenation" | "number"
                    )
                }) {
                    argv.extend(words::words(*sibling, self.src, self.state));
                }
                let ctx = Ctx {
                    line: line(*child),
                    snippet: text(node, self.src).to_owned(),
                    input: Input::Nothing,
                    download_in_args: false,
                    substituted: Vec::new(),
                };
                self.run(&argv, &ctx, depth);
            }
            self.visit(*child, &Input::Nothing, depth);
        }
    }

    /// Error recovery can leave commands as bare words or swallow them; a destructive program
    /// name anywhere in code the grammar rejected still earns the destructive flag.
    fn alarming_words(&mut self, node: Node<'_>) {
        let raw = text(node, self.src);
        let alarming = raw
            .split(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-' | '/')))
            .map(commands::basename)
            .find(|word| commands::is_alarming(word));
        if let Some(word) = alarming {
            let snippet = raw.to_owned();
            self.add(
                RiskLevel::Destructive,
                Category::Unparseable,
                &format!("could not be fully parsed and mentions `{word}`"),
                &snippet,
                line(node),
            );
        }
    }

    fn add(
        &mut self,
        level: RiskLevel,
        category: Category,
        action: &str,
        snippet: &str,
        at: usize,
    ) {
        self.out.add(level, category, action, snippet, at);
    }

    fn command(&mut self, node: Node<'_>, input: &Input, depth: usize) {
        let mut argv: Vec<Word> = Vec::new();
        let mut stdin = input.clone();
        let mut download_in_args = false;
        let mut substituted = Vec::new();
        let mut previous_end = None;
        let snippet = text(node, self.src).to_owned();
        for (i, child) in children(node).into_iter().enumerate() {
            let field = u32::try_from(i)
                .ok()
                .and_then(|i| node.field_name_for_child(i));
            match (field, child.kind()) {
                (Some("name") | Some("argument"), _) => {
                    download_in_args |= redirects::contains_download(child, self.src, 0)
                        || self.mentions_downloaded_variable(child);
                    substituted.extend(self.substitution_output(child));
                    let mut more = words::words(child, self.src, self.state);
                    // tree-sitter-bash splits `r\<newline>m` in two; bash joins the lines first.
                    let gap = previous_end.and_then(|end| self.src.get(end..child.start_byte()));
                    if gap == Some("\\\n") {
                        if let (Some(last), false) = (argv.last_mut(), more.is_empty()) {
                            let first = more.remove(0);
                            last.text.push_str(&first.text);
                            last.dynamic |= first.dynamic;
                            last.from_var |= first.from_var;
                            last.glob |= first.glob;
                        }
                    }
                    previous_end = Some(child.end_byte());
                    argv.extend(more);
                    // Substitutions inside the words run before the command does.
                    self.visit(child, &Input::Nothing, depth);
                }
                (Some("redirect"), _) => {
                    if let Some(redirected) = self.redirect(child, &snippet, depth) {
                        stdin = redirected;
                    }
                }
                (_, "variable_assignment") => self.prefix_assignment(child, depth),
                _ => self.visit(child, &Input::Nothing, depth),
            }
        }
        let ctx = Ctx {
            line: line(node),
            snippet,
            input: stdin,
            download_in_args,
            substituted,
        };
        self.run(&argv, &ctx, depth);
    }

    fn pipeline(&mut self, node: Node<'_>, input: &Input, depth: usize) {
        let mut flowing = input.clone();
        for element in named_children(node) {
            self.visit(element, &flowing, depth);
            flowing = self.output_of(element, &flowing);
        }
    }

    /// Analyses `code` as shell nested at `at` (e.g. the literal of `bash -c`).
    fn nested_shell(&mut self, code: &str, at: usize, via: &str) {
        let state = &mut *self.state;
        self.out.nested(at, via, code, |out| {
            analyze_with(code, out, state, &Input::Nothing)
        });
    }

    fn nested_python(&mut self, code: &str, at: usize, via: &str) {
        self.out
            .nested(at, via, code, |out| crate::python::analyze(code, out));
    }
}

/// A command about to run, for the classifiers.
#[derive(Debug, Clone)]
pub(crate) struct Ctx {
    pub line: usize,
    pub snippet: String,
    pub input: Input,
    /// Some argument fetches from the network (`bash <(curl ..)`, `eval "$(wget ..)"`, or a
    /// variable assigned from a download).
    pub download_in_args: bool,
    /// Text printed by substitutions among the arguments (`bash <(echo 'rm x')`,
    /// `eval "$(printf 'rm x')"`), for code positions to analyse.
    pub substituted: Vec<String>,
}

/// Analyses a command given as an argument vector (Python's `subprocess.run([...])`).
pub(crate) fn analyze_argv(
    argv: &[(String, bool)],
    from_var: bool,
    stdin: Option<(String, bool)>,
    snippet: &str,
    out: &mut Findings,
) {
    let mut state = State::default();
    let mut walker = Walker {
        src: "",
        state: &mut state,
        out,
    };
    let argv: Vec<Word> = argv
        .iter()
        .map(|(text, dynamic)| Word {
            dynamic: *dynamic,
            from_var,
            ..Word::literal(text)
        })
        .collect();
    let ctx = Ctx {
        line: 1,
        snippet: snippet.to_owned(),
        input: match stdin {
            Some((code, dynamic)) => Input::Text {
                code,
                dynamic,
                line: 0,
            },
            None => Input::Nothing,
        },
        download_in_args: false,
        substituted: Vec::new(),
    };
    walker.run(&argv, &ctx, 0);
}
