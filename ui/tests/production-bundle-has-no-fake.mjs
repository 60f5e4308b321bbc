// The production bundle (ui/dist, what the app embeds) carries none of the in-browser fake
// backend (`ui/src/api/fake*.ts`). Run after `npm run build`: `npm run check:dist [DIST]`.
// Fails when
// - a production build (made here in memory, same config) includes any fake module, however
//   little of it survived tree-shaking;
// - a text that only a fake module holds appears in any file of DIST (default ui/dist), or a
//   file there is named after the fake; or DIST lacks a text only a production build has (so
//   the scan looked at a real bundle);
// - a fake module has no marker below, or its marker is not (or no longer only) in that module;
// - a build that does carry the fake (`--mode fake`, in memory) lacks any fake module or any
//   marker: the checks above would not see the fake if it came back.
// Prints one line on success.

import { readFileSync, readdirSync, statSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = resolve(fileURLToPath(import.meta.url), "../../..");
const API = join(ROOT, "ui/src/api");

/** One text per fake module that only that module holds, ASCII so minifying cannot re-spell it. */
const MARKERS = {
  "fake.ts": "This approval was already decided",
  "fake-answers.ts": "Secret Service keyring",
  "fake-demo.ts": "worstStallMs",
  "fake-runs.ts": "progress line per batch",
  "fake-script.ts": "region leads", // a scripted reply of the fake model
  "fake-turn.ts": "won't run that",
  "fake-undo.ts": "could not undo that run: it has no checkpoint",
};
/** Only the production build has it: what `connect()` says outside the app when no fake is built in. */
const PRODUCTION_ONLY = "only works inside the desktop app";

const problems = [];

function files(dir) {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? files(path) : [path];
  });
}

function read(dir) {
  return files(dir).map((path) => ({ path, name: relative(dir, path), text: readFileSync(path, "utf8") }));
}

// The markers describe the fake as it is now.
const fakeModules = readdirSync(API).filter((n) => /^fake.*\.ts$/.test(n)).sort();
for (const module of fakeModules) {
  if (!(module in MARKERS)) problems.push(`ui/src/api/${module} has no marker in ${relative(ROOT, fileURLToPath(import.meta.url))}: add a text only it holds`);
}
const sources = files(join(ROOT, "ui/src")).filter((p) => /\.(ts|html|css)$/.test(p));
for (const [module, marker] of Object.entries(MARKERS)) {
  if (!fakeModules.includes(module)) {
    problems.push(`marker for ui/src/api/${module}, which does not exist any more: remove it`);
    continue;
  }
  const holders = sources.filter((p) => readFileSync(p, "utf8").includes(marker)).map((p) => relative(ROOT, p));
  if (holders.length !== 1 || holders[0] !== `ui/src/api/${module}`) {
    problems.push(`marker "${marker}" must be in ui/src/api/${module} and nowhere else in ui/src; found in: ${holders.join(", ") || "nothing"}`);
  }
}

// The production bundle: none of them.
const dist = resolve(process.argv[2] ?? join(ROOT, "ui/dist"));
let production = [];
try {
  production = read(dist);
} catch (e) {
  problems.push(`cannot read ${dist} (${e.code ?? e}): run \`npm run build\` first`);
}
if (production.length > 0) {
  for (const f of production) {
    if (/fake/i.test(f.name)) problems.push(`${f.name} in ${dist} is named after the fake backend`);
    for (const [module, marker] of Object.entries(MARKERS)) {
      if (f.text.includes(marker)) problems.push(`${f.name} in ${dist} carries ui/src/api/${module} ("${marker}")`);
    }
  }
  if (!production.some((f) => f.text.includes(PRODUCTION_ONLY))) {
    problems.push(`no file in ${dist} says "${PRODUCTION_ONLY}": not a production build of ui/src/api/index.ts?`);
  }
}

// Builds in memory with the app's Vite config; answers the output's files and the source
// modules that went into them.
async function buildInMemory(mode) {
  const { build } = await import("vite");
  const modules = new Set();
  const out = await build({
    configFile: join(ROOT, "vite.config.ts"),
    mode,
    logLevel: "silent",
    build: { write: false },
    plugins: [{
      name: "record-modules",
      generateBundle(_options, bundle) {
        for (const chunk of Object.values(bundle)) {
          if (chunk.type === "chunk") for (const id of Object.keys(chunk.modules)) modules.add(relative(ROOT, id));
        }
      },
    }],
  });
  const outputs = (Array.isArray(out) ? out : [out]).flatMap((o) => o.output);
  return {
    modules: [...modules],
    files: outputs.map((o) => ({ name: o.fileName, text: o.type === "chunk" ? o.code : String(o.source) })),
  };
}

const isFake = (id) => /^ui\/src\/api\/fake[^/]*\.ts$/.test(id);

const prod = await buildInMemory("production");
for (const id of prod.modules.filter(isFake)) problems.push(`the production build includes ${id}`);

const fake = await buildInMemory("fake");
for (const module of fakeModules) {
  if (!fake.modules.includes(`ui/src/api/${module}`)) problems.push(`the --mode fake build lacks ui/src/api/${module}`);
  const marker = MARKERS[module];
  if (marker && !fake.files.some((f) => f.text.includes(marker))) problems.push(`the --mode fake build lacks ui/src/api/${module}'s marker "${marker}"`);
}

if (problems.length > 0) {
  console.error(`The production bundle check failed:\n- ${problems.join("\n- ")}`);
  process.exit(1);
}
console.log(`${relative(ROOT, dist) || dist}: ${production.length} files, none of the fake backend's ${fakeModules.length} modules (${prod.modules.length} modules built)`);
