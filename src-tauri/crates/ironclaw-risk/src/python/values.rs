//! The values of expressions built from literals: strings (through `+`, `join`, `format`,
//! base64, hex and rot13) and argv lists.

use tree_sitter::Node;

use super::resolve::Target;
use super::strings::{base64_decode, string_literal, PyStr};
use super::{Value, Walker};
use crate::parse::{named_children, text};

/// A literal argv: each word with whether it is only known at run time.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Argv {
    pub words: Vec<(String, bool)>,
    /// Came (partly) from a variable: not proof, see [`super::strings::PyStr::from_var`].
    pub from_var: bool,
}

impl Walker<'_> {
    /// The string an expression evaluates to, when it is built from literals.
    pub(super) fn string_value(&self, node: Node<'_>) -> Option<PyStr> {
        let _guard = self.descend()?;
        match node.kind() {
            "string" => Some(string_literal(node, self.src)),
            "concatenated_string" => named_children(node)
                .into_iter()
                .map(|s| string_literal(s, self.src))
                .reduce(PyStr::join),
            "parenthesized_expression" => named_children(node)
                .into_iter()
                .next()
                .and_then(|n| self.string_value(n)),
            "binary_operator" => {
                let left = self.string_value(node.child_by_field_name("left")?)?;
                let operator = node
                    .child_by_field_name("operator")
                    .map(|o| text(o, self.src));
                match operator {
                    Some("+") => {
                        Some(left.join(self.string_value(node.child_by_field_name("right")?)?))
                    }
                    _ => Some(PyStr {
                        dynamic: true,
                        ..left
                    }),
                }
            }
            "identifier" => match self.scope.names.get(text(node, self.src)) {
                Some(Some(Value::Strings(values))) => Some(PyStr {
                    // Several candidates: analysing them one per line covers each.
                    text: values.join("\n"),
                    dynamic: false,
                    from_var: true,
                }),
                _ => None,
            },
            "call" => self.string_from_call(node),
            _ => None,
        }
    }

    fn string_from_call(&self, node: Node<'_>) -> Option<PyStr> {
        let function = node.child_by_field_name("function")?;
        let args = self.positional_args(node);
        if function.kind() == "attribute" {
            let object = function.child_by_field_name("object")?;
            let method = text(function.child_by_field_name("attribute")?, self.src);
            match method {
                "join" => {
                    let sep = self.string_value(object)?;
                    let parts = self.argv_value(*args.first()?)?;
                    return Some(PyStr {
                        text: parts
                            .words
                            .iter()
                            .map(|(t, _)| t.as_str())
                            .collect::<Vec<_>>()
                            .join(&sep.text),
                        dynamic: sep.dynamic || parts.words.iter().any(|(_, d)| *d),
                        from_var: sep.from_var || parts.from_var,
                    });
                }
                "decode" | "encode" | "strip" | "lstrip" | "rstrip" => {
                    if let Some(inner) = self.string_value(object) {
                        return Some(inner);
                    }
                }
                "format" | "format_map" => {
                    return self
                        .string_value(object)
                        .map(|s| PyStr { dynamic: true, ..s })
                }
                _ => {}
            }
        }
        let Target::Qualified(q) = self.resolve(function) else {
            return None;
        };
        let arg = self.string_value(*args.first()?)?;
        let decoded = match q.as_str() {
            "base64.b64decode"
            | "base64.standard_b64decode"
            | "base64.urlsafe_b64decode"
            | "base64.decodebytes" => base64_decode(&arg.text)?,
            "bytes.fromhex" | "binascii.unhexlify" | "binascii.a2b_hex" => hex_decode(&arg.text)?,
            "codecs.decode" => {
                let codec = args.get(1).and_then(|c| self.string_value(*c))?;
                if !matches!(codec.text.as_str(), "rot13" | "rot_13" | "rot-13") {
                    return None;
                }
                rot13(&arg.text).into_bytes()
            }
            "builtins.str" | "builtins.bytes" => arg.text.clone().into_bytes(),
            _ => return None,
        };
        let text = String::from_utf8(decoded).ok()?;
        Some(PyStr { text, ..arg })
    }

    /// A list or tuple of strings (an argv); unknown elements are marked dynamic.
    pub(super) fn argv_value(&self, node: Node<'_>) -> Option<Argv> {
        let _guard = self.descend()?;
        match node.kind() {
            "list" | "tuple" => {
                let mut from_var = false;
                let words = named_children(node)
                    .into_iter()
                    .map(|element| match self.string_value(element) {
                        Some(s) => {
                            from_var |= s.from_var;
                            (s.text.clone(), s.dynamic)
                        }
                        None => (text(element, self.src).to_owned(), true),
                    })
                    .collect();
                Some(Argv { words, from_var })
            }
            "identifier" => match self.scope.names.get(text(node, self.src)) {
                Some(Some(Value::List(list))) => Some(Argv {
                    words: list.clone(),
                    from_var: true,
                }),
                _ => None,
            },
            "parenthesized_expression" => named_children(node)
                .into_iter()
                .next()
                .and_then(|n| self.argv_value(n)),
            _ => None,
        }
    }
}

fn hex_decode(text: &str) -> Option<Vec<u8>> {
    let digits: Vec<u8> = text.bytes().filter(|b| !b.is_ascii_whitespace()).collect();
    digits
        .chunks(2)
        .map(|pair| {
            let s = std::str::from_utf8(pair).ok()?;
            u8::from_str_radix(s, 16).ok()
        })
        .collect()
}

fn rot13(text: &str) -> String {
    text.chars()
        .map(|c| match c {
            'a'..='z' => char::from((c as u8 - b'a' + 13) % 26 + b'a'),
            'A'..='Z' => char::from((c as u8 - b'A' + 13) % 26 + b'A'),
            _ => c,
        })
        .collect()
}
