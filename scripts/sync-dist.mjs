// Moves a fresh front-end build into place without touching what did not change.
// The app embeds ui/dist at compile time and cargo rebuilds it when any file there is newer
// than the last build. Vite rewrites every file on each build, so every `scripts/run.sh` relinked
// the release app (5 minutes on a 2-core machine) for byte-identical assets. Here a file is
// written only when its bytes differ, files the new build lacks are removed, and the staging
// folder is deleted.
// Usage: node scripts/sync-dist.mjs STAGING DEST

import * as fs from "node:fs";
import * as path from "node:path";

const [staging, dest] = process.argv.slice(2);
if (!staging || !dest) {
  console.error("usage: node scripts/sync-dist.mjs STAGING DEST");
  process.exit(2);
}

/** Relative paths of the regular files under `dir` (none when it does not exist). */
function files(dir, prefix = "") {
  let entries;
  try {
    entries = fs.readdirSync(path.join(dir, prefix), { withFileTypes: true });
  } catch (e) {
    if (e.code === "ENOENT") return [];
    throw e;
  }
  return entries.flatMap((e) => {
    const rel = path.join(prefix, e.name);
    return e.isDirectory() ? files(dir, rel) : [rel];
  });
}

const fresh = new Set(files(staging));
let written = 0;
for (const rel of fresh) {
  const from = path.join(staging, rel);
  const to = path.join(dest, rel);
  const bytes = fs.readFileSync(from);
  let same = false;
  try {
    same = fs.readFileSync(to).equals(bytes);
  } catch (e) {
    if (e.code !== "ENOENT" && e.code !== "EISDIR") throw e;
  }
  if (same) continue;
  fs.mkdirSync(path.dirname(to), { recursive: true });
  fs.rmSync(to, { recursive: true, force: true });
  fs.renameSync(from, to);
  written++;
}
for (const rel of files(dest)) {
  if (!fresh.has(rel)) fs.rmSync(path.join(dest, rel), { force: true });
}
// Folders the new build no longer has (deepest first, so parents empty out).
function pruneEmpty(dir) {
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    if (!e.isDirectory()) continue;
    const sub = path.join(dir, e.name);
    pruneEmpty(sub);
    if (fs.readdirSync(sub).length === 0) fs.rmdirSync(sub);
  }
}
fs.mkdirSync(dest, { recursive: true });
pruneEmpty(dest);
fs.rmSync(staging, { recursive: true, force: true });
if (process.env.IRONCLAW_VERBOSE) console.error(`sync-dist: ${written} file(s) changed in ${dest}`);
