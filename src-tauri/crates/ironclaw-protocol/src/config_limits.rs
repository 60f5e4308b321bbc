//! The limits every configuration file IronClaw reads is held to before it is parsed (the
//! sandbox policy, `network.yaml`, `provider.yaml`): pure text checks, one copy for every crate.

/// The largest YAML file read, checked before parsing. The shipped files are a few KiB; the
/// parser's time grows faster than linearly with nesting, so a huge or deep file could
/// freeze whatever reads it (the app's profile list did, for seconds).
pub const MAX_YAML_BYTES: usize = 256 << 10;
/// The deepest nesting accepted (block indentation, `- ` entries and `[`/`{` together),
/// checked before parsing for the same reason. Real files stay under ten.
pub const MAX_YAML_DEPTH: usize = 64;

/// Refuses text over [`MAX_YAML_BYTES`] or nested deeper than [`MAX_YAML_DEPTH`], without
/// parsing it. The depth is over-estimated rather than under (brackets inside quotes on a line
/// with a `#` may count), which only matters for files no person writes.
pub fn check_yaml_limits(text: &str) -> std::result::Result<(), String> {
    if text.len() > MAX_YAML_BYTES {
        return Err(format!(
            "the file is {} KiB; configuration files over {} KiB are not read (is this the \
             right file?)",
            text.len() >> 10,
            MAX_YAML_BYTES >> 10
        ));
    }
    let mut indents: Vec<usize> = Vec::new();
    let mut flow = 0usize;
    for (n, line) in text.lines().enumerate() {
        let body = line.trim_start_matches(' ');
        if body.is_empty() || body.starts_with('#') {
            continue;
        }
        let indent = line.len() - body.len();
        if flow == 0 {
            while indents.last().is_some_and(|&top| top > indent) {
                indents.pop();
            }
            if indents.last().is_none_or(|&top| top < indent) {
                indents.push(indent);
            }
        }
        // `- - - x` nests one sequence per dash on the same line.
        let mut rest = body;
        let mut dashes = 0;
        while let Some(after) = rest.strip_prefix("- ").or_else(|| rest.strip_prefix("-\t")) {
            dashes += 1;
            rest = after.trim_start();
        }
        let mut quote: Option<char> = None;
        let mut line_max = flow;
        for c in rest.chars() {
            match (quote, c) {
                (Some(q), c) if c == q => quote = None,
                (Some(_), _) => {}
                (None, '\'' | '"') => quote = Some(c),
                (None, '[' | '{') => {
                    flow += 1;
                    line_max = line_max.max(flow);
                }
                (None, ']' | '}') => flow = flow.saturating_sub(1),
                (None, _) => {}
            }
        }
        let depth = indents.len() + dashes + line_max;
        if depth > MAX_YAML_DEPTH {
            return Err(format!(
                "line {}: nested {depth} levels deep; configuration files may nest at most \
                 {MAX_YAML_DEPTH} levels",
                n + 1
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn huge_or_deep_text_is_refused_before_any_parser_sees_it() {
        assert!(check_yaml_limits("a: 1\nb:\n  c: [1, 2]\n").is_ok());
        let big = "x".repeat(MAX_YAML_BYTES + 1);
        assert!(check_yaml_limits(&big).unwrap_err().contains("KiB"));
        let deep = format!(
            "a: {}{}",
            "[".repeat(MAX_YAML_DEPTH + 1),
            "]".repeat(MAX_YAML_DEPTH + 1)
        );
        assert!(check_yaml_limits(&deep).unwrap_err().contains("nested"));
        let dashes = format!("{}x", "- ".repeat(MAX_YAML_DEPTH + 1));
        assert!(check_yaml_limits(&dashes).is_err());
        // Brackets in quotes are text, not nesting.
        let quoted = format!("a: \"{}\"", "[".repeat(MAX_YAML_DEPTH + 1));
        assert!(check_yaml_limits(&quoted).is_ok());
    }
}
