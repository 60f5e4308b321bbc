// A few line icons drawn as inline SVG (no icon font, nothing fetched).

const PATHS: Record<string, string> = {
  pencil: "M4 20h4L19 9l-4-4L4 16v4zM14 6l4 4",
  download: "M12 4v11m0 0l-4-4m4 4l4-4M5 19h14",
  trash: "M5 7h14M10 7V5h4v2M7 7l1 12h8l1-12",
  folder: "M3 7h6l2 2h10v9a1 1 0 0 1-1 1H4a1 1 0 0 1-1-1z",
  refresh: "M20 11a8 8 0 1 0-2.3 5.7M20 5v6h-6",
  gear: "M12 15a3 3 0 1 0 0-6 3 3 0 0 0 0 6zM19 12l2-1-1-3-2 .2-1.3-1.5.3-2-3-1-1 2h-2l-1-2-3 1 .3 2L6 8.2 4 8l-1 3 2 1v0l-2 1 1 3 2-.2 1.3 1.5-.3 2 3 1 1-2h2l1 2 3-1-.3-2 1.3-1.5 2 .2 1-3z",
  files: "M6 3h8l4 4v14H6zM14 3v4h4",
  plus: "M12 5v14M5 12h14",
  picture: "M4 5h16v14H4zM4 16l5-5 4 4 2-2 5 5M15 9.5a1.5 1.5 0 1 0 0-.01",
  clip: "M20 11.5l-8 8a5 5 0 0 1-7-7l8.5-8.5a3.4 3.4 0 0 1 4.8 4.8l-8.4 8.4a1.7 1.7 0 0 1-2.4-2.4L15 7.3",
};

const NS = "http://www.w3.org/2000/svg";

export function icon(name: keyof typeof PATHS | string, size = 16): SVGSVGElement {
  const svg = document.createElementNS(NS, "svg");
  svg.setAttribute("viewBox", "0 0 24 24");
  svg.setAttribute("width", String(size));
  svg.setAttribute("height", String(size));
  svg.setAttribute("fill", "none");
  svg.setAttribute("stroke", "currentColor");
  svg.setAttribute("stroke-width", "1.8");
  svg.setAttribute("stroke-linecap", "round");
  svg.setAttribute("stroke-linejoin", "round");
  svg.setAttribute("aria-hidden", "true");
  const path = document.createElementNS(NS, "path");
  path.setAttribute("d", PATHS[name] ?? "");
  svg.append(path);
  return svg;
}

/** Text with `backticked` parts shown as code (for fixes written like shell hints). */
export function withCode(text: string): DocumentFragment {
  const frag = document.createDocumentFragment();
  text.split(/(`[^`]+`)/).forEach((part) => {
    if (part.startsWith("`") && part.endsWith("`") && part.length > 2) {
      const c = document.createElement("code");
      c.textContent = part.slice(1, -1);
      frag.append(c);
    } else if (part) frag.append(document.createTextNode(part));
  });
  return frag;
}
