//! Picture preparation: any bytes a person or the sandbox can hand IronClaw as a picture, through
//! format sniffing, the decoder (under its size and allocation limits), scaling and re-encoding.
//! Property: never panics; what it accepts is at most 1568 pixels a side and is a PNG or a JPEG.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(image) = ironclaw_agent::vision::prepare("fuzz", data) {
        let edge = ironclaw_agent::vision::MAX_EDGE;
        assert!(image.width <= edge && image.height <= edge);
        assert!(image.width > 0 && image.height > 0);
        match image.media_type.as_str() {
            "image/png" => assert!(image.data.starts_with(b"\x89PNG\r\n\x1a\n")),
            "image/jpeg" => assert!(image.data.starts_with(&[0xFF, 0xD8, 0xFF])),
            other => panic!("unexpected type {other}"),
        }
    }
});
