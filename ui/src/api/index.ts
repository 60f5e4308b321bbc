import { tauriApi } from "./tauri";
import type { Api } from "./types";

export type { Api, ExportFormat, Unlisten } from "./types";
export { errorText } from "./types";

/** Inside the Tauri webview; anywhere else (a browser, preview) the fake backend runs. */
export function inTauri(): boolean {
  return typeof window !== "undefined" && "__TAURI_INTERNALS__" in window;
}

/** The real backend in the app; the in-browser fake otherwise (loaded only then). */
export async function connect(): Promise<Api> {
  // Static: inside the app, no extra module fetch before the first screen.
  if (inTauri()) return tauriApi;
  const { FakeBackend } = await import("./fake");
  return new FakeBackend({ latencyMs: 0, scenario: new URLSearchParams(location.search).get("scenario") ?? "" });
}
