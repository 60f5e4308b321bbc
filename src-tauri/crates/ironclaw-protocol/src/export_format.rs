//! The forms a conversation can be exported in.

crate::text_enum!(
    /// How a conversation is written out: for people or for programs.
    ExportFormat {
        /// Messages, proposed code, decisions and output as a Markdown document.
        Markdown => "markdown" | "md",
        /// The whole stored conversation as pretty-printed JSON.
        Json => "json",
    }
);

impl ExportFormat {
    /// The file name extension an export in this format gets.
    pub fn extension(self) -> &'static str {
        match self {
            ExportFormat::Markdown => "md",
            ExportFormat::Json => "json",
        }
    }
}

#[cfg(feature = "clap")]
crate::words::value_enum!(ExportFormat);

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn the_short_name_still_reads_and_the_long_one_is_written() {
        assert_eq!(
            "md".parse::<ExportFormat>().unwrap(),
            ExportFormat::Markdown
        );
        assert_eq!(
            serde_json::from_str::<ExportFormat>("\"md\"").unwrap(),
            ExportFormat::Markdown
        );
        assert_eq!(
            serde_json::to_string(&ExportFormat::Markdown).unwrap(),
            "\"markdown\""
        );
        assert!("pdf".parse::<ExportFormat>().is_err());
    }
}
