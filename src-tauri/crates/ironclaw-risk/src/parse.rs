//! Tree-sitter parsing with the limits that keep [`crate::assess`] total and prompt.

use std::ops::ControlFlow;
use std::time::Instant;

use tree_sitter::{Node, ParseOptions, Parser, Tree};

/// Agent snippets are a few kilobytes; anything this large is not reviewable by a person either.
pub(crate) const MAX_CODE_BYTES: usize = 1024 * 1024;
/// Analysers stop descending below this tree depth (each level is a Rust stack frame).
pub(crate) const MAX_TREE_DEPTH: usize = 200;

#[derive(Debug, Clone, Copy)]
pub(crate) enum Grammar {
    Bash,
    Python,
}

impl Grammar {
    fn name(self) -> &'static str {
        match self {
            Grammar::Bash => "bash",
            Grammar::Python => "Python",
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub(crate) enum ParseError {
    #[error("the code is larger than {MAX_CODE_BYTES} bytes; split it into smaller steps")]
    TooLarge,
    #[error("the {0} grammar could not be loaded ({1}); rebuild IronClaw")]
    Grammar(&'static str, tree_sitter::LanguageError),
    #[error("parsing did not finish in time; simplify the code")]
    TimedOut,
}

pub(crate) fn parse(grammar: Grammar, code: &str, deadline: Instant) -> Result<Tree, ParseError> {
    if code.len() > MAX_CODE_BYTES {
        return Err(ParseError::TooLarge);
    }
    let language: tree_sitter::Language = match grammar {
        Grammar::Bash => tree_sitter_bash::LANGUAGE.into(),
        Grammar::Python => tree_sitter_python::LANGUAGE.into(),
    };
    let mut parser = Parser::new();
    parser
        .set_language(&language)
        .map_err(|e| ParseError::Grammar(grammar.name(), e))?;
    let bytes = code.as_bytes();
    let mut read = |offset: usize, _| bytes.get(offset..).unwrap_or_default();
    let mut progress = |_: &tree_sitter::ParseState| {
        if Instant::now() > deadline {
            ControlFlow::Break(())
        } else {
            ControlFlow::Continue(())
        }
    };
    let options = ParseOptions::new().progress_callback(&mut progress);
    parser
        .parse_with_options(&mut read, None, Some(options))
        .ok_or(ParseError::TimedOut)
}

/// The source text of `node`; empty if tree-sitter's byte range does not fall on character
/// boundaries (it always should for UTF-8 input, but this must not panic).
pub(crate) fn text<'s>(node: Node<'_>, src: &'s str) -> &'s str {
    src.get(node.byte_range()).unwrap_or_default()
}

/// 1-based line of `node`.
pub(crate) fn line(node: Node<'_>) -> usize {
    node.start_position().row + 1
}

/// Named children, skipping comments.
pub(crate) fn named_children<'t>(node: Node<'t>) -> Vec<Node<'t>> {
    let mut cursor = node.walk();
    node.named_children(&mut cursor)
        .filter(|n| n.kind() != "comment")
        .collect()
}

/// All children, named or not.
pub(crate) fn children<'t>(node: Node<'t>) -> Vec<Node<'t>> {
    let mut cursor = node.walk();
    node.children(&mut cursor).collect()
}
