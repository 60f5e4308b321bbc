#!/usr/bin/env bash
# Checks the newest .deb and .rpm under target/<profile>/bundle: both exist, and the .deb
# installs the app binary, its .desktop entry and the stand-in libraries it loads. Quiet on
# success.
# Usage: scripts/check-bundle.sh [debug|release]
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
bundle_dir="$ROOT/target/${1:-release}/bundle"
deb="$(ls -t "$bundle_dir"/deb/*.deb 2>/dev/null | head -n1)"
rpm="$(ls -t "$bundle_dir"/rpm/*.rpm 2>/dev/null | head -n1)"
[ -n "$deb" ] || die "no .deb under $bundle_dir/deb: run npx tauri build --bundles deb (log: $LOG_DIR/tauri-bundle.log)"
[ -n "$rpm" ] || die "no .rpm under $bundle_dir/rpm: install rpm (apt-get install rpm) and build again"
contents="$(dpkg-deb -c "$deb")"
grep -qE ' (\./)?usr/bin/ironclaw-app$' <<<"$contents" || die "$deb does not install usr/bin/ironclaw-app; its contents: $contents"
desktop="$(grep -oE '(\./)?usr/share/applications/[^/]+\.desktop$' <<<"$contents" | head -n1)"
[ -n "$desktop" ] || die "$deb has no .desktop entry under usr/share/applications; its contents: $contents"
# The menu entry must start the installed binary. Each listing is read whole before it is
# searched: `grep -q` stops at the first match, and the writer's SIGPIPE then failed the
# pipeline under pipefail whenever the match came early (the .rpm lists the binary first).
entry="$(dpkg-deb --fsys-tarfile "$deb" | tar -xO "$desktop")"
grep -qE '^Exec=ironclaw-app( |$)' <<<"$entry" || die "$deb's $desktop does not run ironclaw-app: $entry"
# The binaries are linked with packed relative relocations (DT_RELR, src-tauri/build.rs), which
# only glibc 2.36 and newer load: the packages must say so, so that an older system refuses to
# install them instead of failing to start them.
depends="$(dpkg-deb -f "$deb" Depends)"
grep -qF 'libc6 (>= 2.36)' <<<"$depends" || die "$deb does not depend on libc6 (>= 2.36): $depends"
requires="$(rpm -qp --requires "$rpm" 2>/dev/null)"
grep -qE '^glibc >= 2\.36$' <<<"$requires" || die "$rpm does not require glibc >= 2.36: $requires"
files="$(rpm -qlp "$rpm" 2>/dev/null)"
grep -q '/usr/bin/ironclaw-app$' <<<"$files" || die "$rpm does not install /usr/bin/ironclaw-app; its contents: $files"
# The stand-in libraries build.rs made (docs/benchmarks.md#app-idle-memory) travel with the binary,
# and the installed binary finds them: its DT_RPATH names /usr/lib/ironclaw-app/stand-ins, checked
# by unpacking the .deb and asking the dynamic linker where libflite.so.1 comes from.
if [ -d "$ROOT/target/${1:-release}/stand-ins/speech" ]; then
  speech=usr/lib/ironclaw-app/stand-ins/speech/libflite.so.1
  grep -qE " (\./)?$speech\$" <<<"$contents" || die "$deb does not install /$speech (scripts/stage-stand-ins.sh, tauri.conf.json)"
  grep -q "/$speech\$" <<<"$files" || die "$rpm does not install /$speech (scripts/stage-stand-ins.sh, tauri.conf.json)"
  unpacked="$(mktemp -d)"
  dpkg-deb -x "$deb" "$unpacked"
  found="$(ldd "$unpacked/usr/bin/ironclaw-app" | awk '$1 == "libflite.so.1" { print $3 }')"
  found="$(realpath -m "${found:-none}")"
  rm -rf "$unpacked"
  [ "$found" = "$(realpath -m "$unpacked/$speech")" ] || die "the installed ironclaw-app would load libflite.so.1 from $found, not from /$speech"
fi
