#!/usr/bin/env bash
# Sets up everything IronClaw needs on Debian/Ubuntu, idempotently and quietly:
# Debian packages, a running Docker engine, the Rust build, and the sandbox image.
# Usage: scripts/setup.sh [--no-image]
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

WITH_IMAGE=1
[ "${1:-}" = "--no-image" ] && WITH_IMAGE=0

# --- Debian packages ---------------------------------------------------------------------------
# docker.io: the engine; debootstrap: the offline base image; gcc/libc6-dev/pkg-config: the
# parser grammars of the risk classifier are C; passwd/procps/util-linux: tests run code as a
# real non-root user (useradd, runuser).
PACKAGES=(docker.io debootstrap ca-certificates gcc libc6-dev pkg-config passwd procps util-linux git)
missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ "${#missing[@]}" -gt 0 ]; then
  is_root || die "missing Debian packages: ${missing[*]}. Install them: sudo apt-get install ${missing[*]}"
  quietly apt-update apt-get update
  quietly apt-install env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}"
fi

# --- Rust toolchain ----------------------------------------------------------------------------
command -v cargo >/dev/null 2>&1 || die "no Rust toolchain: install rustup (https://rustup.rs) and a stable Rust, then run this again"

# --- Docker engine -----------------------------------------------------------------------------
# Start one only when none answers and we are root; never touch an engine that is running.
if ! docker_answers; then
  if [ -n "${DOCKER_HOST:-}" ]; then
    die "DOCKER_HOST=$DOCKER_HOST does not answer; start that engine or unset DOCKER_HOST"
  fi
  is_root || die "the Docker engine is not running. Start it: sudo systemctl start docker (or: sudo dockerd &)"
  # An engine that is still starting or stopping gets a moment; a pid file left by one that was
  # killed (sessions end abruptly) would make the new dockerd refuse to start.
  if [ -f /var/run/docker.pid ]; then
    pid="$(cat /var/run/docker.pid 2>/dev/null || true)"
    for _ in $(seq 1 60); do
      { [ -n "$pid" ] && [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = dockerd ]; } || break
      docker_answers && break
      sleep 0.5
    done
    docker_answers || { [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = dockerd ] || rm -f /var/run/docker.pid; }
  fi
fi
if ! docker_answers; then
  if command -v systemctl >/dev/null 2>&1 && [ -d /run/systemd/system ]; then
    quietly docker-start systemctl start docker
  else
    # No systemd (containers, CI): run dockerd ourselves, detached from this shell.
    nohup setsid dockerd >"$LOG_DIR/dockerd.log" 2>&1 </dev/null &
  fi
  for _ in $(seq 1 60); do
    docker_answers && break
    sleep 0.5
  done
  docker_answers || { tail -n 30 "$LOG_DIR/dockerd.log" >&2 2>/dev/null || true; die "dockerd did not come up (log above)"; }
fi

# --- Build -------------------------------------------------------------------------------------
cd "$ROOT"
# scripts/test.sh asks for a debug build (it needs one anyway); running the app wants release.
if [ "${IRONCLAW_BUILD:-release}" = debug ]; then
  quietly cargo-build cargo build --locked -p ironclaw-cli
  BIN="$ROOT/target/debug/ironclaw"
else
  quietly cargo-build cargo build --locked --release -p ironclaw-cli
  BIN="$ROOT/target/release/ironclaw"
fi

# --- Sandbox image -----------------------------------------------------------------------------
# Cheap when the image for this source tree exists; otherwise builds it (pulling an official
# Debian base where a registry answers, debootstrapping one where none does).
if [ "$WITH_IMAGE" = 1 ]; then
  quietly image-build "$BIN" image build
fi
