//! A tool's answer, for the model: its text (and structured content), size-capped. What a
//! server says is the server's words, not the person's: the agent fences it as untrusted.

use rmcp::model::{CallToolResult, ContentBlock};

/// The most of one answer the model is given (about 12k tokens).
pub const MAX_TEXT: usize = 48 * 1024;

/// What a call answered, in words.
#[derive(Debug, Clone, PartialEq)]
pub struct Answer {
    pub text: String,
    pub is_error: bool,
    /// It was longer than [`MAX_TEXT`] and was cut.
    pub cut: bool,
    /// Parts the model is not given (pictures, audio), by kind.
    pub left_out: Vec<String>,
}

pub fn read(result: &CallToolResult) -> Answer {
    let mut parts: Vec<String> = Vec::new();
    let mut left_out = Vec::new();
    for block in &result.content {
        match block {
            ContentBlock::Text(t) => parts.push(t.text.clone()),
            ContentBlock::Image(i) => left_out.push(format!("a picture ({})", i.mime_type)),
            ContentBlock::Audio(_) => left_out.push("audio".to_string()),
            ContentBlock::Resource(r) => parts
                .push(serde_json::to_string(&r.resource).unwrap_or_else(|_| "(a resource)".into())),
            ContentBlock::ResourceLink(r) => parts.push(format!("(a link to {})", r.uri)),
            _ => left_out.push("a part of a kind IronClaw does not read".to_string()),
        }
    }
    if parts.is_empty() {
        if let Some(s) = &result.structured_content {
            parts.push(s.to_string());
        }
    }
    let mut text = parts.join("\n");
    let mut cut = false;
    if text.len() > MAX_TEXT {
        let mut at = MAX_TEXT;
        while !text.is_char_boundary(at) {
            at -= 1;
        }
        text.truncate(at);
        cut = true;
    }
    Answer {
        text,
        is_error: result.is_error.unwrap_or(false),
        cut,
        left_out,
    }
}
