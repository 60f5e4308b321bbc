//! The interpreters IronClaw runs code in.

crate::text_enum!(
    /// The language of a snippet. Part of its [`crate::CodeHash`]: the same text means different
    /// things to different interpreters.
    Language {
        /// Python 3, in the sandbox's persistent Python interpreter.
        Python => "python" | "python3" | "py",
        /// bash, in the sandbox's persistent shell.
        Shell => "shell" | "bash" | "sh",
        /// A call of an MCP server's tool, in that server's own sandbox container: the "code"
        /// is the call as `ironclaw_mcp::call` writes it. Never a `run_code` language.
        Mcp => "mcp",
    }
);

impl Language {
    /// Reads the names models and people use for these languages (`python3`, `py`, `bash`,
    /// `sh`, any case). What is stored and hashed is always [`Language::as_str`].
    pub fn from_name(name: &str) -> Option<Self> {
        name.trim().to_ascii_lowercase().parse().ok()
    }

    /// Whether code in this language runs in the session's interpreters (`run_code`).
    pub fn is_interpreted(self) -> bool {
        matches!(self, Language::Python | Language::Shell)
    }
}

#[cfg(feature = "sqlite")]
crate::sql_text!(Language);
#[cfg(feature = "clap")]
crate::words::value_enum!(Language);

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn common_names_read_as_the_two_languages() {
        assert_eq!(Language::from_name("Bash"), Some(Language::Shell));
        assert_eq!(Language::from_name("python3"), Some(Language::Python));
        assert_eq!(Language::from_name("ruby"), None);
        assert_eq!(
            serde_json::to_string(&Language::Shell).unwrap(),
            "\"shell\""
        );
    }
}
