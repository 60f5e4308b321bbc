import { tauriApi } from "./tauri";
import type { Api } from "./types";

export type { Api, ExportFormat, Unlisten } from "./types";
export { errorKind, errorText } from "./types";

/** Inside the Tauri webview; anywhere else (a browser, preview) only a fake backend can answer. */
export function inTauri(): boolean {
  return typeof window !== "undefined" && "__TAURI_INTERNALS__" in window;
}

/**
 * The real backend in the app; the in-browser fake otherwise, in builds that carry it.
 *
 * The fake (`fake*.ts`, ~23 kB) is a development tool: the dev server, Vitest and
 * `npm run build:fake` include it; the production bundle the app embeds does not. Vite replaces
 * `import.meta.env.*` at build time, so in production the branch below is dead code and Rollup
 * never emits the fake's chunks (`npm run check:dist` proves it on every CI run). The test stays
 * written out here rather than in a shared constant so that no bundler has to see through a
 * module boundary to drop it.
 */
export async function connect(): Promise<Api> {
  // Static: inside the app, no extra module fetch before the first screen.
  if (inTauri()) return tauriApi;
  if (import.meta.env.DEV || import.meta.env.MODE === "fake") {
    const { FakeBackend } = await import("./fake");
    return new FakeBackend({ latencyMs: 0, scenario: new URLSearchParams(location.search).get("scenario") ?? "" });
  }
  throw new Error(
    "this page is IronClaw's window and only works inside the desktop app. To look at it in a browser, " +
      "run `npm run dev`, or `npm run build:fake` and `npm run preview:fake`: those builds carry a fake backend.",
  );
}

/**
 * Outside the app, `?scenario=settings|workspace|log|…` drives the fake's screens, in builds with
 * the fake only. Answers whether a scenario is being driven.
 */
export async function driveScenario(): Promise<boolean> {
  if (inTauri()) return false;
  if (import.meta.env.DEV || import.meta.env.MODE === "fake") {
    const scenario = new URLSearchParams(location.search).get("scenario");
    if (!scenario) return false;
    const { drive } = await import("./fake-demo");
    drive(scenario);
    return true;
  }
  return false;
}
