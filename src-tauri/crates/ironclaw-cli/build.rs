//! Links `ironclaw` with packed relative relocations (DT_RELR): the loader then reads 16 KiB
//! of relocations at every start instead of 1.2 MiB, about 9 % of a whole `ironclaw exec`
//! (docs/benchmarks.md#the-whole-ironclaw-exec-process). Such a binary needs glibc 2.36 or newer
//! (Debian 12, Ubuntu 22.10, Fedora 37); an older loader refuses it by name ("version
//! GLIBC_ABI_DT_RELR not found") rather than running it wrongly.

fn main() {
    let os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    let env = std::env::var("CARGO_CFG_TARGET_ENV").unwrap_or_default();
    if os == "linux" && env == "gnu" {
        println!("cargo:rustc-link-arg-bins=-Wl,-z,pack-relative-relocs");
    }
}
