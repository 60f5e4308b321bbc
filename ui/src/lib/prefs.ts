// Appearance the person chose: theme (follow the system, or force light/dark) and text zoom.
// Both live in the webview's localStorage, which Tauri keeps in the app's data folder, so they
// survive restarts without a backend round trip before the first paint.
//
// The theme is a `data-theme` attribute on <html>: styles.css defines every colour once with
// `light-dark()`, and `color-scheme` (system: "light dark", else one of them) picks the side.
// The zoom scales the root font size as a percentage of the webview's default, which follows the
// system's font size; every size in styles.css is in rem, so the whole layout scales with it.

export type Theme = "system" | "light" | "dark";

export const THEMES: readonly { value: Theme; label: string }[] = [
  { value: "system", label: "Same as the system" },
  { value: "light", label: "Light" },
  { value: "dark", label: "Dark" },
];

/** Zoom steps (1 = the system's text size), as in browsers: each Ctrl+= goes one up. */
export const ZOOM_STEPS: readonly number[] = [0.75, 0.85, 1, 1.1, 1.25, 1.5, 1.75, 2];

const THEME_KEY = "ironclaw.theme";
const ZOOM_KEY = "ironclaw.zoom";

export interface Prefs {
  theme: Theme;
  zoom: number;
}

/** Anything stored that is not one of ours (an old version, a hand edit) means "system". */
export function parseTheme(v: string | null | undefined): Theme {
  return v === "light" || v === "dark" ? v : "system";
}

/** A stored zoom that is not one of the steps snaps to the nearest; garbage is 1. */
export function parseZoom(v: string | null | undefined): number {
  const n = Number(v);
  if (v === null || v === undefined || v === "" || !Number.isFinite(n) || n <= 0) return 1;
  return ZOOM_STEPS.reduce((best, s) => (Math.abs(s - n) < Math.abs(best - n) ? s : best), 1);
}

/** The next zoom step up (`+1`) or down (`-1`) from `current`, staying within the steps. */
export function stepZoom(current: number, direction: 1 | -1): number {
  const i = ZOOM_STEPS.indexOf(parseZoom(String(current)));
  const next = Math.min(ZOOM_STEPS.length - 1, Math.max(0, i + direction));
  return ZOOM_STEPS[next] ?? 1;
}

function storage(): Storage | null {
  try {
    return window.localStorage;
  } catch {
    return null; // storage disabled: the choice lasts until the window closes
  }
}

export function loadPrefs(): Prefs {
  const s = storage();
  return { theme: parseTheme(s?.getItem(THEME_KEY)), zoom: parseZoom(s?.getItem(ZOOM_KEY)) };
}

/** Applies `prefs` to the document at once. */
export function applyPrefs(prefs: Prefs, root: HTMLElement = document.documentElement): void {
  if (prefs.theme === "system") delete root.dataset["theme"];
  else root.dataset["theme"] = prefs.theme;
  // A percentage of the webview's default, never a pixel size: the system setting stays the base.
  root.style.fontSize = prefs.zoom === 1 ? "" : `${Math.round(prefs.zoom * 100)}%`;
  root.dataset["zoom"] = String(prefs.zoom);
}

type Listener = (prefs: Prefs) => void;
const listeners = new Set<Listener>();
let current: Prefs | null = null;

/** What is applied now (what was stored, until something changes it). */
export function currentPrefs(): Prefs {
  current ??= loadPrefs();
  return current;
}

/** Saves and applies a change; views showing the current choice hear about it. */
export function updatePrefs(change: Partial<Prefs>): Prefs {
  const next = { ...currentPrefs(), ...change };
  next.theme = parseTheme(next.theme);
  next.zoom = parseZoom(String(next.zoom));
  const s = storage();
  try {
    s?.setItem(THEME_KEY, next.theme);
    s?.setItem(ZOOM_KEY, String(next.zoom));
  } catch {
    // Quota or privacy mode: applied for this window only.
  }
  current = next;
  applyPrefs(next);
  for (const fn of listeners) fn(next);
  return next;
}

export function onPrefsChanged(fn: Listener): () => void {
  listeners.add(fn);
  return () => listeners.delete(fn);
}
