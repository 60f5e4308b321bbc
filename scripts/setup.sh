#!/usr/bin/env bash
# Sets up everything IronClaw needs on Debian/Ubuntu, idempotently and quietly:
# Debian packages, a running Docker engine, the Rust build, the front end's npm packages,
# tauri-driver, cargo-nextest, and the sandbox image.
# Usage: scripts/setup.sh [--no-image]
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

WITH_IMAGE=1
[ "${1:-}" = "--no-image" ] && WITH_IMAGE=0

# --- Debian packages ---------------------------------------------------------------------------
# docker.io: the engine; debootstrap: the offline base image; gcc/libc6-dev/pkg-config: the
# parser grammars of the risk classifier are C; passwd/procps/util-linux: tests run code as a
# real non-root user (useradd, runuser).
PACKAGES=(docker.io debootstrap ca-certificates gcc libc6-dev pkg-config passwd procps util-linux git)
# The desktop app: Tauri's WebKitGTK build deps; Xvfb, D-Bus, WebKitWebDriver, xdotool and
# ImageMagick for the end-to-end suite and screenshots; xdg-utils for "Open folder"; rpm so
# `tauri build` can make the .rpm next to the .deb.
PACKAGES+=(libwebkit2gtk-4.1-dev libgtk-3-dev librsvg2-dev libayatana-appindicator3-dev libssl-dev
  libxdo-dev build-essential file xvfb xauth imagemagick xdotool x11-utils fonts-dejavu-core
  webkit2gtk-driver dbus xdg-utils rpm)
# Drag and drop in the end-to-end suite: a real GTK drag source (tests/e2e/lib/drag-source.py).
PACKAGES+=(python3-gi gir1.2-gtk-3.0)
# pip: the test suite's MCP servers are real ones from PyPI (scripts/mcp-test-servers.sh).
PACKAGES+=(python3-pip)
# The tray in the end-to-end suite: a real StatusNotifier watcher and a host that draws on Xvfb
# (status-notifier-watcher, gtk-sni-tray-standalone), gdbus to read and click the item over D-Bus, and a small window
# manager with wmctrl so closing the window goes the way a desktop sends it.
PACKAGES+=(haskell-status-notifier-item-utils haskell-gtk-sni-tray-utils libglib2.0-bin jwm wmctrl)
# The app benchmark sees pixels change through the X server's DAMAGE extension
# (scripts/tools/damage-watch.c).
PACKAGES+=(libxdamage-dev)
# Node 18+ builds the front end. Debian's nodejs/npm only when there is none (or an older one):
# a Node from elsewhere ships its own npm, which Debian's npm package would conflict with.
node_major() { node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0; }
if ! command -v npm >/dev/null 2>&1 || [ "$(node_major)" -lt 18 ]; then
  PACKAGES+=(nodejs npm)
fi
missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ "${#missing[@]}" -gt 0 ]; then
  is_root || die "missing Debian packages: ${missing[*]}. Install them: sudo apt-get install ${missing[*]}"
  quietly apt-update apt-get update
  quietly apt-install env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}"
fi

[ "$(node_major)" -ge 18 ] || die "Node $(node -v 2>/dev/null || echo '(none)') is too old for the front end: install Node 18 or newer, then run this again"

# --- Rust toolchain ----------------------------------------------------------------------------
command -v cargo >/dev/null 2>&1 || die "no Rust toolchain: install rustup (https://rustup.rs) and a stable Rust, then run this again"
export PATH="$HOME/.cargo/bin:$PATH"
# The end-to-end suite drives the real app through tauri-driver (a WebDriver proxy to
# WebKitWebDriver).
if ! command -v tauri-driver >/dev/null 2>&1; then
  quietly tauri-driver cargo install tauri-driver --locked
fi
# The test command (scripts/test.sh, README) runs the suite with cargo-nextest: its config
# (.config/nextest.toml) keeps the Docker tests to two at a time, which `cargo test` ignores.
if ! cargo nextest --version >/dev/null 2>&1; then
  quietly cargo-nextest cargo install cargo-nextest --locked
fi

# --- Front-end dependencies --------------------------------------------------------------------
# `npm ci` again only when package-lock.json changed since the last install.
if [ -f "$ROOT/package-lock.json" ]; then
  lock_hash="$(sha256sum "$ROOT/package-lock.json" | cut -d' ' -f1)"
  stamp="$ROOT/node_modules/.ironclaw-lock-sha256"
  if [ ! -d "$ROOT/node_modules" ] || [ "$(cat "$stamp" 2>/dev/null)" != "$lock_hash" ]; then
    # `npm ci` refuses a lock that lacks the other platforms' optional packages (Tauri's CLI
    # binaries for macOS/Windows…), which is what a registry mirror serving only this platform
    # produces; `npm install --no-save` then installs the same locked versions without
    # rewriting the lock.
    if ! (cd "$ROOT" && npm ci --no-audit --no-fund >"$LOG_DIR/npm-ci.log" 2>&1); then
      grep -q "Missing: .* from lock file" "$LOG_DIR/npm-ci.log" || { tail -n 40 "$LOG_DIR/npm-ci.log" >&2; die "npm ci failed (log above: $LOG_DIR/npm-ci.log)"; }
      (cd "$ROOT" && quietly npm-install npm install --no-save --no-audit --no-fund)
    fi
    echo "$lock_hash" >"$stamp"
  fi
fi

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

# --- gVisor --------------------------------------------------------------------------------------
# A second kernel between the code and this machine's (`runtime: auto`, the default, uses it when
# the engine has it). Registered only with an engine this script manages: the local dockerd, as
# root. A remote engine, Docker Desktop or Podman is left alone; `ironclaw doctor` says how there.
# IRONCLAW_GVISOR=0 skips it.
engine_is_ours() {
  is_root && { [ -z "${DOCKER_HOST:-}" ] || [ "$DOCKER_HOST" = unix:///var/run/docker.sock ]; } \
    && [ "$(cat "/proc/$(cat /var/run/docker.pid 2>/dev/null || echo 0)/comm" 2>/dev/null)" = dockerd ]
}
if [ "${IRONCLAW_GVISOR:-1}" != 0 ] && engine_is_ours; then
  # A runsc already on the PATH is used when it is new enough (see scripts/tools/fetch-gvisor.sh
  # for what older ones break); otherwise IronClaw keeps its own copy.
  runsc_date() { "$1" --version 2>/dev/null | head -n 1 | grep -o '20[0-9]\{6\}' | head -n 1; }
  RUNSC=""
  if command -v runsc >/dev/null 2>&1 && [ "$(runsc_date "$(command -v runsc)" || echo 0)" -ge 20230601 ] 2>/dev/null; then
    RUNSC="$(command -v runsc)"
  else
    RUNSC=/usr/local/lib/ironclaw/gvisor/runsc
    if [ ! -x "$RUNSC" ] && ! bash "$ROOT/scripts/tools/fetch-gvisor.sh" "$RUNSC" >"$LOG_DIR/gvisor-fetch.log" 2>&1; then
      echo "ironclaw setup: could not get gVisor ($LOG_DIR/gvisor-fetch.log); sandboxes use runc until set-up runs again" >&2
      RUNSC=""
    fi
  fi
  if [ -n "$RUNSC" ]; then
    rc=0
    python3 "$ROOT/scripts/tools/register-gvisor.py" /etc/docker/daemon.json "$RUNSC" || rc=$?
    case "$rc" in
      0) ;;
      10)
        # SIGHUP: dockerd reloads its runtimes without stopping a container.
        kill -HUP "$(cat /var/run/docker.pid)"
        for _ in $(seq 1 40); do
          docker info --format '{{range $k, $v := .Runtimes}}{{$k}} {{end}}' 2>/dev/null | grep -qw runsc && break
          sleep 0.25
        done
        docker info --format '{{range $k, $v := .Runtimes}}{{$k}} {{end}}' 2>/dev/null | grep -qw runsc \
          || echo "ironclaw setup: gVisor was added to /etc/docker/daemon.json but the engine did not load it; restart the engine, and see \`ironclaw doctor\`" >&2
        ;;
      *) echo "ironclaw setup: gVisor not registered (above); sandboxes use runc" >&2 ;;
    esac
  fi
fi

# --- Build -------------------------------------------------------------------------------------
cd "$ROOT"
# scripts/test.sh asks for a debug build (it needs one anyway); running the app wants release;
# packaging needs neither the CLI nor the image (IRONCLAW_BUILD=none).
if [ "${IRONCLAW_BUILD:-release}" = none ]; then
  BIN=""
  WITH_IMAGE=0
elif [ "${IRONCLAW_BUILD:-release}" = debug ]; then
  # The bench too: the tests build it anyway, and `ironclaw bench` runs it from beside `ironclaw`.
  quietly cargo-build cargo build --locked -p ironclaw-cli -p ironclaw-bench --bin ironclaw-full --bin ironclaw-bench
  quietly cli-front build_static_front
  BIN="$ROOT/target/debug/ironclaw"
else
  quietly cargo-build cargo build --locked --release -p ironclaw-cli --bin ironclaw-full
  quietly cli-front build_static_front --release
  BIN="$ROOT/target/release/ironclaw"
fi

# --- Sandbox image -----------------------------------------------------------------------------
# Cheap when the image for this source tree exists; otherwise builds it (pulling an official
# Debian base where a registry answers, debootstrapping one where none does).
if [ "$WITH_IMAGE" = 1 ]; then
  quietly image-build "$BIN" image build
fi
