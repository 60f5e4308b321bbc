//! The `sandbox.yaml` loader on any text, merged over the shipped defaults. Properties: never
//! panics; whatever it accepts still has the hardening the container definition requires.
#![no_main]

use std::path::Path;

use ironclaw_sandbox::policy::{Policy, DEFAULT_POLICY_YAML};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let parsed = Policy::parse(
        (DEFAULT_POLICY_YAML, Path::new("defaults")),
        Some((text, Path::new("sandbox.yaml"))),
    );
    if let Ok(policy) = parsed {
        let (_, profile) = policy.profile(None).expect("the default profile exists");
        assert!(profile.pids >= 16, "{profile:?}");
        assert!(profile.memory_bytes >= 16 << 20, "{profile:?}");
    }
});
