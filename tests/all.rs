//! The end-to-end suite: one test binary (linked once) against the real Docker engine.
//! Fixtures live in the `ironclaw_tests` library (`support/mod.rs`), tests in `suite/`.

mod suite;
