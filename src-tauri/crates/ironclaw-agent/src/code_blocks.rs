//! The code-block protocol, for models that cannot call tools (many local models): the model
//! writes the code it wants to run in a fenced block (```python, ```bash), and each such block
//! becomes a `run_code` call of that answer — through exactly the same approval gate, bound to
//! the same hash of the exact code, its result fed back. Inside IronClaw the transcript stays
//! one shape; only what is sent to such a model is rewritten ([`to_plain`]): the calls are the
//! blocks already in the answer's text, and the results go back as IronClaw's user message.

use ironclaw_llm::{Message, ToolCall};
use ironclaw_protocol::Language;

use crate::tools::RUN_CODE;

/// What the system prompt says in this mode instead of describing the tool.
pub const RULES: &str = "\n\nYou cannot call tools. To run code, write it in a fenced code \
block marked with its language — ```python or ```bash — and IronClaw shows it to the user, runs \
it in the sandbox if they approve, and replies with the result. Every such block is a request \
to run it, so never put code you do not want run in a python or bash block (use ```text for \
examples). When later code depends on a result, send one block and wait for the result.";

/// The runnable blocks of `text`, in order: fenced with ``` or ~~~ and marked python, py,
/// python3, bash, sh or shell. Unmarked blocks and other languages are not run.
pub fn extract(text: &str) -> Vec<(Language, String)> {
    let mut blocks = Vec::new();
    let mut open: Option<(String, Option<Language>, Vec<&str>)> = None;
    for line in text.lines() {
        let trimmed = line.trim_start();
        let indent = line.len() - trimmed.len();
        let fence: String = trimmed
            .chars()
            .take_while(|c| *c == '`' || *c == '~')
            .collect();
        let is_fence = indent <= 3
            && fence.len() >= 3
            && fence
                .chars()
                .all(|c| c == fence.chars().next().unwrap_or('`'));
        match &mut open {
            None if is_fence => {
                let info = trimmed[fence.len()..].trim();
                let word = info.split_whitespace().next().unwrap_or("");
                open = Some((
                    fence,
                    Language::from_name(word).filter(|l| l.is_interpreted()),
                    Vec::new(),
                ));
            }
            None => {}
            Some((opening, language, lines)) => {
                // A closing fence: the same character, at least as long, nothing after it.
                if is_fence
                    && fence.starts_with(&opening[..1])
                    && fence.len() >= opening.len()
                    && trimmed[fence.len()..].trim().is_empty()
                {
                    if let Some(language) = language {
                        let code = lines.join("\n");
                        if !code.trim().is_empty() {
                            blocks.push((*language, code));
                        }
                    }
                    open = None;
                } else {
                    lines.push(line);
                }
            }
        }
    }
    // A block the answer never closed (cut off) is not run: it may end anywhere.
    blocks
}

/// The blocks of an answer as calls of that answer; ids are unique to the message.
pub fn calls(text: &str, message_key: &str) -> Vec<ToolCall> {
    extract(text)
        .into_iter()
        .enumerate()
        .map(|(i, (language, code))| ToolCall {
            id: format!("block-{message_key}-{}", i + 1),
            name: RUN_CODE.to_string(),
            arguments: serde_json::json!({"language": language.as_str(), "code": code}).to_string(),
            echo: None,
        })
        .collect()
}

/// The transcript as a model without tools reads it: no tool calls (their code is in the
/// answer's text already), and each answer's results as one user message from IronClaw,
/// joined with the person's next message when one follows.
pub fn to_plain(messages: &[Message]) -> Vec<Message> {
    let mut out: Vec<Message> = Vec::with_capacity(messages.len());
    let mut results: Vec<String> = Vec::new();
    let flush = |results: &mut Vec<String>, out: &mut Vec<Message>| {
        if !results.is_empty() {
            let text = format!(
                "[IronClaw: the results of your code blocks, in order]\n\n{}",
                results.join("\n\n")
            );
            results.clear();
            out.push(Message::user(text));
        }
    };
    for message in messages {
        match message {
            Message::Assistant { content, .. } => {
                flush(&mut results, &mut out);
                out.push(Message::assistant(content.clone(), Vec::new()));
            }
            Message::Tool { content, .. } => {
                results.push(format!("Block {}:\n{content}", results.len() + 1));
            }
            Message::User { content, images } => {
                if results.is_empty() {
                    out.push(message.clone());
                } else {
                    flush(&mut results, &mut out);
                    if let Some(Message::User {
                        content: last,
                        images: last_images,
                    }) = out.last_mut()
                    {
                        last.push_str("\n\n");
                        last.push_str(content);
                        last_images.extend(images.iter().cloned());
                    }
                }
            }
        }
    }
    flush(&mut results, &mut out);
    out
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    #[test]
    fn marked_python_and_shell_blocks_are_requests_and_nothing_else_is() {
        let text = "Let me look.\n```python\nimport os\nprint(os.listdir())\n```\nAn example:\n```text\nrm -rf /\n```\n```\nunmarked\n```\n  ~~~bash\nls -la\n  ~~~\n````sh\necho ```\n````\n```python\nprint('cut off";
        assert_eq!(
            extract(text),
            vec![
                (
                    Language::Python,
                    "import os\nprint(os.listdir())".to_string()
                ),
                (Language::Shell, "ls -la".to_string()),
                (Language::Shell, "echo ```".to_string()),
            ]
        );
        let calls = calls(text, "m1");
        assert_eq!(calls.len(), 3);
        assert_eq!(calls[0].id, "block-m1-1");
        assert_eq!(calls[0].name, "run_code");
    }

    #[test]
    fn results_go_back_as_one_user_message_joined_with_the_next() {
        let calls = calls("```python\n1\n```\n```bash\n2\n```", "m");
        let transcript = vec![
            Message::user("go"),
            Message::assistant("```python\n1\n```\n```bash\n2\n```", calls),
            Message::tool_result("block-m-1", "one", false),
            Message::tool_result("block-m-2", "two", false),
            Message::user("and now?"),
        ];
        let plain = to_plain(&transcript);
        assert_eq!(plain.len(), 3);
        assert_eq!(
            plain[1],
            Message::assistant("```python\n1\n```\n```bash\n2\n```", Vec::new())
        );
        let Message::User { content, .. } = &plain[2] else {
            panic!()
        };
        assert!(content.starts_with("[IronClaw: the results"));
        assert!(content.contains("Block 1:\none") && content.contains("Block 2:\ntwo"));
        assert!(content.ends_with("and now?"));
    }
}
