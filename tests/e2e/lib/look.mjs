// What the window looks like, read from the real webview: theme, root font size, zoom.

/** `{ dark, luminance, rootPx, mediumPx, theme }`: whether the page is drawn dark (its ground's
 *  relative luminance), the root font size and the webview's default ("medium") size in px. */
export function look(session) {
  return session.execute(`
    for (const a of document.getAnimations()) { try { a.finish(); } catch {} }
    const rgb = getComputedStyle(document.documentElement).backgroundColor.match(/[\\d.]+/g).map(Number);
    const lin = (c) => { c /= 255; return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4; };
    const luminance = 0.2126 * lin(rgb[0]) + 0.7152 * lin(rgb[1]) + 0.0722 * lin(rgb[2]);
    const probe = document.createElement("div");
    probe.style.fontSize = "medium";
    document.body.append(probe);
    const mediumPx = parseFloat(getComputedStyle(probe).fontSize);
    probe.remove();
    return {
      dark: luminance < 0.2,
      luminance,
      systemDark: matchMedia("(prefers-color-scheme: dark)").matches,
      rootPx: parseFloat(getComputedStyle(document.documentElement).fontSize),
      mediumPx,
      theme: document.documentElement.dataset.theme ?? "system",
    };`);
}

/** Picks `value` in the <select> with data-testid `id` the way a person does (click the option). */
export async function choose(session, id, value) {
  await (await session.byTestId(id)).click();
  await (await session.find(`[data-testid="${id}"] option[value="${value}"]`)).click();
}
