#!/usr/bin/env bash
# Regenerates the TypeScript bindings (ui/src/bindings/) from the Rust types, and the command
# wrappers (ui/src/api/commands.ts) and capability from the app's #[tauri::command] functions,
# and fails when they differ from what is committed, so the web UI can never drift from the
# core's JSON or its command list.
# Also checks that the app core stays display-free (no Tauri, GTK or WebKit in its tree).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

cargo test -q -p ironclaw-desktop --features ts --lib export_bindings
cargo test -q -p ironclaw-ipcgen --lib write_generated_files

if ! git diff --exit-code --stat -- ui/src/bindings; then
    echo "error: ui/src/bindings is out of date: run" \
        "\`cargo test -p ironclaw-desktop --features ts export_bindings\` and commit the result" >&2
    exit 1
fi
if ! git diff --exit-code --stat -- ui/src/api/commands.ts src-tauri/capabilities/default.json; then
    echo "error: the generated command wrappers are out of date: run" \
        "\`cargo test -p ironclaw-ipcgen\` (or build the app) and commit the result" >&2
    exit 1
fi
untracked=$(git ls-files --others --exclude-standard -- ui/src/bindings)
if [[ -n "$untracked" ]]; then
    echo "error: new binding files are not committed:" >&2
    echo "$untracked" >&2
    exit 1
fi

if cargo tree -p ironclaw-desktop -e normal --prefix none | grep -Ei '^(tauri|wry|tao|gtk|webkit|javascriptcore|soup)'; then
    echo "error: ironclaw-desktop must not depend on Tauri, GTK or WebKit (see above)" >&2
    exit 1
fi
echo "bindings and command wrappers up to date; ironclaw-desktop is display-free"
