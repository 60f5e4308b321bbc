//! The sandbox image: what every IronClaw container runs.
//!
//! - [`context`]: the build context (`image/` of this crate) is compiled in; its content hash
//!   names the image (`ironclaw-sandbox:<hash16>`), so an unchanged tree never rebuilds and any
//!   change gets a fresh tag.
//! - [`base`]: the Debian base. An official `debian:bookworm-slim` when one is present or can
//!   be pulled; otherwise a local `ironclaw-base:bookworm` built from Debian packages with
//!   debootstrap, because many machines reach a Debian mirror but no container registry.
//! - [`build`]: [`ensure`] (cheap when the image exists), [`build`], [`exists`].
//! - [`transfer`]: [`export`] / [`import`] image archives for air-gapped machines.
//!
//! Every long operation reports [`Progress`] through a callback so the CLI can print it and the
//! desktop app can forward it to a progress bar.

pub mod base;
pub mod build;
pub mod context;
mod debootstrap;
// Used by `build.rs`, which hashes the image folder; the tests check it against `FILES`.
#[cfg(test)]
mod digest;
#[cfg(test)]
mod engine_tests;
mod mirror;
pub mod progress;
mod rootfs;
pub mod transfer;

pub use build::{build, ensure, exists};
pub use context::{spec, IMAGE_REPO};
pub use progress::Progress;
pub use transfer::{export, import};

/// Label carrying the full content hash, so an image can be traced back to its sources even
/// when only the short tag is visible.
pub const HASH_LABEL: &str = "ironclaw.image-hash";

/// Identity of the sandbox image this binary needs.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct ImageSpec {
    /// `ironclaw-sandbox:<first 16 hex digits of hash>`.
    pub tag: String,
    /// Full SHA-256 (hex) of the embedded build context.
    pub hash: String,
}

/// How to obtain the base image when the sandbox image has to be built.
#[derive(Debug, Clone, Default)]
pub struct BuildOptions {
    /// Never contact a container registry: use a local base, or build the offline one.
    pub offline: bool,
    /// Build on exactly this base image instead of choosing one.
    pub base: Option<String>,
}
