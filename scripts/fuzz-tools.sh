#!/usr/bin/env bash
# The fuzz targets need a nightly toolchain (libFuzzer's sanitizer coverage) and cargo-fuzz.
# Installs what is missing; quiet and quick when both are there.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
export PATH="$HOME/.cargo/bin:$PATH"
command -v rustup >/dev/null || die "rustup is needed for the fuzz targets' nightly toolchain: see https://rustup.rs"
if ! rustup run nightly rustc --version >/dev/null 2>&1; then
  quietly nightly rustup toolchain install nightly --profile minimal
fi
if ! cargo fuzz --version >/dev/null 2>&1; then
  quietly cargo-fuzz cargo install cargo-fuzz --locked
fi
