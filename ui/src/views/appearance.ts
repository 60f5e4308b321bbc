// Settings → Appearance: theme and text size. Applied and remembered at once (no Save needed),
// like the system's own appearance settings; lib/prefs.ts does the work.

import { h } from "../lib/dom";
import { THEMES, ZOOM_STEPS, currentPrefs, onPrefsChanged, updatePrefs, type Theme } from "../lib/prefs";
import { showHelp } from "./help";
import { field } from "./provider";

export function appearanceSection(): HTMLElement {
  const prefs = currentPrefs();
  const theme = h("select", { testid: "settings-theme", className: "input" });
  for (const t of THEMES) theme.append(h("option", { value: t.value }, t.label));
  theme.value = prefs.theme;
  theme.addEventListener("change", () => updatePrefs({ theme: theme.value as Theme }));

  const zoom = h("select", { testid: "settings-zoom", className: "input" });
  for (const z of ZOOM_STEPS) zoom.append(h("option", { value: String(z) }, z === 1 ? "100% (system size)" : `${Math.round(z * 100)}%`));
  zoom.value = String(prefs.zoom);
  zoom.addEventListener("change", () => updatePrefs({ zoom: Number(zoom.value) }));

  // For people who do not guess F1: the same overlay, from a button.
  const shortcuts = h("button", { testid: "show-shortcuts", className: "btn btn-small", type: "button" }, "Keyboard shortcuts…");
  shortcuts.addEventListener("click", () => showHelp());

  const section = h(
    "section",
    { testid: "settings-appearance" },
    h("h2", {}, "Appearance"),
    h("div", { className: "fields" }, field("Theme", theme), field("Text size", zoom)),
    h("p", { className: "field-hint" }, "Applied at once and remembered. Ctrl+= and Ctrl+- change the text size anywhere; F1 lists every shortcut."),
    shortcuts,
  );
  // Ctrl+= while Settings is open: keep the menu showing what is applied.
  const stop = onPrefsChanged((p) => {
    if (!section.isConnected) {
      stop();
      return;
    }
    theme.value = p.theme;
    zoom.value = String(p.zoom);
  });
  return section;
}
