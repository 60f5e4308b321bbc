import { afterEach, describe, expect, it } from "vitest";
import { applyPrefs, currentPrefs, loadPrefs, parseTheme, parseZoom, stepZoom, updatePrefs, ZOOM_STEPS } from "../src/lib/prefs";

afterEach(() => {
  localStorage.clear();
  updatePrefs({ theme: "system", zoom: 1 });
  localStorage.clear();
});

describe("appearance preferences", () => {
  it("reads only known themes; anything else follows the system", () => {
    expect(parseTheme("dark")).toBe("dark");
    expect(parseTheme("light")).toBe("light");
    for (const v of [null, undefined, "", "Dark", "solarized", "system"]) expect(parseTheme(v)).toBe("system");
  });

  it("snaps a stored zoom to the nearest step and ignores garbage", () => {
    expect(parseZoom("1.25")).toBe(1.25);
    expect(parseZoom("1.3")).toBe(1.25);
    expect(parseZoom("9")).toBe(2);
    expect(parseZoom("0.1")).toBe(0.75);
    for (const v of [null, undefined, "", "abc", "-1", "0", "Infinity"]) expect(parseZoom(v)).toBe(1);
  });

  it("steps through the zoom levels and stops at both ends", () => {
    expect(stepZoom(1, 1)).toBe(1.1);
    expect(stepZoom(1, -1)).toBe(0.85);
    expect(stepZoom(ZOOM_STEPS[ZOOM_STEPS.length - 1]!, 1)).toBe(ZOOM_STEPS[ZOOM_STEPS.length - 1]);
    expect(stepZoom(ZOOM_STEPS[0]!, -1)).toBe(ZOOM_STEPS[0]);
    let z = 1;
    for (let i = 0; i < 20; i++) z = stepZoom(z, 1);
    expect(z).toBe(2);
  });

  it("applies the theme as data-theme and the zoom as a percentage of the default size, never px", () => {
    const root = document.createElement("html");
    applyPrefs({ theme: "dark", zoom: 1.25 }, root);
    expect(root.dataset["theme"]).toBe("dark");
    expect(root.style.fontSize).toBe("125%");
    applyPrefs({ theme: "system", zoom: 1 }, root);
    expect(root.dataset["theme"]).toBeUndefined();
    // At 100% the root keeps no size of its own: the webview's default (the system's) applies.
    expect(root.style.fontSize).toBe("");
  });

  it("remembers a change in storage and applies it to the document", () => {
    updatePrefs({ theme: "light" });
    updatePrefs({ zoom: 1.5 });
    expect(loadPrefs()).toEqual({ theme: "light", zoom: 1.5 });
    expect(currentPrefs()).toEqual({ theme: "light", zoom: 1.5 });
    expect(document.documentElement.dataset["theme"]).toBe("light");
    expect(document.documentElement.style.fontSize).toBe("150%");
  });
});
