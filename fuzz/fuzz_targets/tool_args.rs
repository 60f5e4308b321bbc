//! Tool-call decoding: any name and any argument text a model can send. Input: name, a NUL
//! byte, then the arguments. Property: never panics; only `run_code` with a known language and
//! a string `code` is accepted, and the code comes back exactly as sent.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let (name, args) = text.split_once('\0').unwrap_or(("run_code", &text));
    if let Ok(run) = ironclaw_agent::tools::decode(name, args) {
        assert_eq!(name, ironclaw_agent::tools::RUN_CODE);
        let value: serde_json::Value =
            serde_json::from_str(args).expect("accepted arguments are JSON");
        assert_eq!(value["code"].as_str(), Some(run.code.as_str()));
    }
});
