//! An MCP tool call as a person approves it: one line naming the server, the tool and the
//! digest of the tool's definition, then the arguments as JSON. That text is what the dialog
//! shows, what the code hash binds and what the history keeps; the call made is read back from
//! the approved text, so an edit the person made is what runs and nothing else.
//!
//! ```text
//! mcp time/get_current_time (definition 3f09c1a2b4d5e6f7)
//! {
//!   "timezone": "Europe/Paris"
//! }
//! ```
//!
//! The digest covers the tool's name, description, input schema and annotations: a server
//! that changes what a tool says it does after the person allowed it always ("rug pull")
//! no longer matches that rule and is asked about again.

use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use crate::error::{Error, Result};

/// A call read back from approved text.
#[derive(Debug, Clone, PartialEq)]
pub struct Call {
    pub server: String,
    pub tool: String,
    pub definition: String,
    pub arguments: Map<String, Value>,
}

/// The digest of a tool's definition (16 hex digits).
pub fn definition_digest(tool: &rmcp::model::Tool) -> String {
    let described = serde_json::json!({
        "name": tool.name,
        "description": tool.description,
        "inputSchema": &*tool.input_schema,
        "annotations": tool.annotations,
    });
    let mut h = Sha256::new();
    h.update(described.to_string().as_bytes());
    hex::encode(&h.finalize()[..8])
}

/// The first line: what "always allow this tool" is bound to.
pub fn identity(server: &str, tool: &str, definition: &str) -> String {
    format!("mcp {server}/{tool} (definition {definition})")
}

/// The first line of approved text.
pub fn identity_of(code: &str) -> &str {
    code.lines().next().unwrap_or_default()
}

pub fn render(
    server: &str,
    tool: &str,
    definition: &str,
    arguments: &Map<String, Value>,
) -> String {
    let args = serde_json::to_string_pretty(arguments).unwrap_or_else(|_| "{}".to_string());
    format!("{}\n{args}", identity(server, tool, definition))
}

pub fn parse(code: &str) -> Result<Call> {
    let (first, rest) = code.split_once('\n').unwrap_or((code, ""));
    let bad = |why: &str| Error::BadCall(why.to_string());
    let named = first
        .strip_prefix("mcp ")
        .ok_or_else(|| bad("its first line must stay `mcp SERVER/TOOL (definition …)`"))?;
    let (path, definition) = named
        .split_once(" (definition ")
        .ok_or_else(|| bad("its first line lost the tool's definition digest"))?;
    let definition = definition
        .strip_suffix(')')
        .ok_or_else(|| bad("its first line lost the tool's definition digest"))?;
    let (server, tool) = path
        .split_once('/')
        .ok_or_else(|| bad("its first line must name SERVER/TOOL"))?;
    let arguments = if rest.trim().is_empty() {
        Map::new()
    } else {
        match serde_json::from_str::<Value>(rest) {
            Ok(Value::Object(m)) => m,
            Ok(_) => return Err(bad("the arguments must be a JSON object ({ … })")),
            Err(e) => return Err(Error::BadCall(format!("the arguments are not JSON: {e}"))),
        }
    };
    Ok(Call {
        server: server.to_string(),
        tool: tool.to_string(),
        definition: definition.to_string(),
        arguments,
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn rendered_calls_read_back_exactly() {
        let args = serde_json::json!({"timezone": "Europe/Paris", "n": [1, 2]});
        let Value::Object(args) = args else { panic!() };
        let text = render("time", "get_current_time", "0123456789abcdef", &args);
        assert!(text.starts_with("mcp time/get_current_time (definition 0123456789abcdef)\n{"));
        let call = parse(&text).unwrap();
        assert_eq!(call.server, "time");
        assert_eq!(call.tool, "get_current_time");
        assert_eq!(call.definition, "0123456789abcdef");
        assert_eq!(call.arguments, args);
    }

    #[test]
    fn an_edit_that_breaks_the_call_is_refused_not_guessed() {
        for text in [
            "time/get (definition 00)\n{}",
            "mcp time/get\n{}",
            "mcp timeget (definition 00)\n{}",
            "mcp time/get (definition 00)\n[1]",
            "mcp time/get (definition 00)\n{oops",
        ] {
            assert!(parse(text).is_err(), "{text}");
        }
        assert!(parse("mcp time/get (definition 00)")
            .unwrap()
            .arguments
            .is_empty());
    }
}
