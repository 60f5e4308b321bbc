//! The names the model calls MCP tools by: `mcp__<server>__<tool>`, within what every provider
//! accepts (letters, digits, `_` and `-`, at most 64), one name per tool.

/// Every tool name the model sees for an MCP tool starts with this.
pub const PREFIX: &str = "mcp__";
const MAX: usize = 64;

/// The model's name for `server`'s `tool` (`server` is already a valid name, see config).
pub fn for_model(server: &str, tool: &str) -> String {
    let mut name = format!("{PREFIX}{server}__");
    for c in tool.chars() {
        if name.len() >= MAX {
            break;
        }
        name.push(if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
            c
        } else {
            '_'
        });
    }
    name
}

pub fn is_mcp(name: &str) -> bool {
    name.starts_with(PREFIX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_provider_safe() {
        assert_eq!(
            for_model("time", "get_current_time"),
            "mcp__time__get_current_time"
        );
        assert_eq!(for_model("fs", "read file.v2"), "mcp__fs__read_file_v2");
        assert!(for_model("s", &"x".repeat(200)).len() <= 64);
    }
}
