//! Images the code wrote, as `data:` URLs the webview can show under its CSP (`img-src data:`).

use std::path::Path;

use base64::Engine as _;

use crate::error::{DesktopError, Result};
use ironclaw_workspace::reader;

/// Larger images are refused: a data: URL this size already costs the webview plenty.
pub const MAX_IMAGE_BYTES: u64 = 10 << 20;

/// The MIME type for an image extension we show; `None` for anything else.
pub fn mime_for(path: &Path) -> Option<&'static str> {
    let ext = path.extension()?.to_str()?.to_ascii_lowercase();
    Some(match ext.as_str() {
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "gif" => "image/gif",
        "webp" => "image/webp",
        "svg" => "image/svg+xml",
        _ => return None,
    })
}

/// Whether the bytes look like the claimed type, so a renamed binary is not passed off as one.
pub(crate) fn content_matches(mime: &str, bytes: &[u8]) -> bool {
    match mime {
        "image/png" => bytes.starts_with(b"\x89PNG\r\n\x1a\n"),
        "image/jpeg" => bytes.starts_with(&[0xFF, 0xD8, 0xFF]),
        "image/gif" => bytes.starts_with(b"GIF87a") || bytes.starts_with(b"GIF89a"),
        "image/webp" => bytes.len() >= 12 && &bytes[..4] == b"RIFF" && &bytes[8..12] == b"WEBP",
        // An <img> never runs an SVG's scripts; it only has to be text that names an svg.
        "image/svg+xml" => {
            std::str::from_utf8(&bytes[..bytes.len().min(4096)]).is_ok_and(|t| t.contains("<svg"))
        }
        _ => false,
    }
}

/// The image `relative` as a `data:` URL. The file is opened on descriptors under `root`
/// (see [`reader`]) and its bytes come from that same descriptor: no link is followed and
/// nothing but a regular file is read, whatever the code does to the name meanwhile.
pub fn read_data_url(root: &Path, relative: &str) -> Result<String> {
    let mime = mime_for(Path::new(relative)).ok_or_else(|| {
        DesktopError::rejected(
            relative,
            "only PNG, JPEG, GIF, WebP and SVG images are shown",
        )
    })?;
    let root =
        reader::Root::open(root).map_err(|e| DesktopError::rejected(relative, e.to_string()))?;
    let opened = root
        .open_file(relative)
        .map_err(|e| DesktopError::rejected(relative, e.to_string()))?;
    let bytes = opened.read_at_most(MAX_IMAGE_BYTES).map_err(|e| {
        DesktopError::rejected(
            relative,
            match e {
                reader::TooLarge::Size(len) => format!(
                    "the image is {} MiB; images over 10 MiB are not shown inline (open the folder instead)",
                    len >> 20
                ),
                reader::TooLarge::Grew => "the image grew past 10 MiB".to_string(),
                other => other.to_string(),
            },
        )
    })?;
    if !content_matches(mime, &bytes) {
        return Err(DesktopError::rejected(
            relative,
            format!("the file's content is not {mime}"),
        ));
    }
    Ok(data_url(mime, &bytes))
}

pub(crate) fn data_url(mime: &str, bytes: &[u8]) -> String {
    format!(
        "data:{mime};base64,{}",
        base64::engine::general_purpose::STANDARD.encode(bytes)
    )
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn a_png_becomes_a_data_url_and_a_renamed_text_file_does_not() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("ok.png"), b"\x89PNG\r\n\x1a\nrest").unwrap();
        std::fs::write(dir.path().join("fake.png"), b"<script>").unwrap();
        std::fs::write(dir.path().join("notes.txt"), b"hi").unwrap();
        let url = read_data_url(dir.path(), "ok.png").unwrap();
        assert!(url.starts_with("data:image/png;base64,iVBORw0KGg"), "{url}");
        assert!(read_data_url(dir.path(), "fake.png").is_err());
        assert!(read_data_url(dir.path(), "notes.txt").is_err());
    }
}
