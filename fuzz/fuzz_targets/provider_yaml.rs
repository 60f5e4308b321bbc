//! The `provider.yaml` loader on any text. Properties: never panics; what it accepts has a
//! usable base URL, key variable name and headers (the checks it promises).
#![no_main]

use std::path::Path;

use ironclaw_llm::ProviderConfig;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(config) = ProviderConfig::from_yaml(text, Path::new("provider.yaml")) {
        if let Some(var) = &config.api_key_env {
            assert!(!var.is_empty() && !var.contains('='), "{var:?}");
        }
        for name in config.headers.keys() {
            assert!(
                !name.is_empty() && !name.contains(char::is_whitespace),
                "{name:?}"
            );
        }
    }
});
