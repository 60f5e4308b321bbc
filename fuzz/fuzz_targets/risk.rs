//! The risk classifier on any text, as Python and as shell. Properties: never panics (it is
//! documented as total) and answers within libFuzzer's `-timeout` (run.sh sets it), i.e. no
//! input makes the approval dialog wait.
#![no_main]

use ironclaw_protocol::{Language, RiskLevel};
use ironclaw_risk::assess;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let code = String::from_utf8_lossy(data);
    for language in [Language::Python, Language::Shell] {
        let a = assess(language, &code);
        // Destructive always comes with a reason the dialog can show.
        if a.level == RiskLevel::Destructive {
            assert!(
                !a.reasons.is_empty(),
                "{language:?}: destructive without a reason"
            );
        }
    }
});
