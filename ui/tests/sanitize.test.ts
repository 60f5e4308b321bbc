import { afterEach, describe, expect, it, vi } from "vitest";
import { linkTarget, renderMarkdown, wireLinks } from "../src/lib/markdown";
import { HOSTILE_MARKDOWN } from "../src/api/fake-script";

function render(md: string): HTMLElement {
  const div = document.createElement("div");
  div.append(renderMarkdown(md));
  document.body.append(div);
  return div;
}

afterEach(() => {
  document.body.replaceChildren();
  delete (window as unknown as Record<string, unknown>)["__pwned"];
});

describe("markdown sanitizer", () => {
  it("drops script tags and never runs them", () => {
    const div = render("hi <script>window.__pwned = true</script> there");
    expect(div.querySelector("script")).toBeNull();
    expect((window as unknown as Record<string, unknown>)["__pwned"]).toBeUndefined();
    expect(div.textContent).toContain("hi");
  });

  it("strips event handlers from images and does not load remote sources", () => {
    const div = render('<img src="x" onerror="window.__pwned=true"> ![t](https://evil.test/p.png)');
    for (const el of div.querySelectorAll("*")) {
      for (const a of el.getAttributeNames()) expect(a.startsWith("on")).toBe(false);
    }
    expect(div.querySelector("img[src]")).toBeNull();
    expect(div.innerHTML).not.toContain("evil.test/p.png\"");
    expect(div.textContent).toContain("[image not loaded: t]");
  });

  it("keeps inline data: images of raster types only", () => {
    const png = "data:image/png;base64,iVBORw0KGgo=";
    const div = render(`![ok](${png}) ![svg](data:image/svg+xml;base64,PHN2Zz4=)`);
    const imgs = div.querySelectorAll("img");
    expect(imgs).toHaveLength(1);
    expect(imgs[0]?.getAttribute("src")).toBe(png);
  });

  it("neutralises javascript: and data: links and keeps http(s)/mailto behind data-href", () => {
    const div = render('[a](javascript:alert(1)) [b](https://example.com/x) <a href="data:text/html,hi">c</a> [d](mailto:me@example.com) <a href="JaVaScRiPt:alert(1)">e</a>');
    const links = [...div.querySelectorAll("a")];
    expect(links).toHaveLength(5);
    for (const a of links) expect(a.hasAttribute("href")).toBe(false);
    expect(links.map((a) => linkTarget(a))).toEqual([null, "https://example.com/x", null, "mailto:me@example.com", null]);
  });

  it("opens links only on click, through the open callback, and only safe ones", () => {
    const div = render("[good](https://example.com/docs) [bad](javascript:void(0))");
    const open = vi.fn();
    wireLinks(div, open);
    const [good, bad] = [...div.querySelectorAll("a")];
    expect(open).not.toHaveBeenCalled();
    bad?.dispatchEvent(new MouseEvent("click", { bubbles: true, cancelable: true }));
    expect(open).not.toHaveBeenCalled();
    const ev = new MouseEvent("click", { bubbles: true, cancelable: true });
    good?.dispatchEvent(ev);
    expect(ev.defaultPrevented).toBe(true);
    expect(open).toHaveBeenCalledExactlyOnceWith("https://example.com/docs");
  });

  it("removes controls, frames, forms, styles and every id/class/data-testid from model output", () => {
    const div = render(HOSTILE_MARKDOWN + '\n<style>body{display:none}</style><object data="x"></object><embed src="x"><svg onload="alert(1)"></svg><p class="btn btn-primary" data-testid="approve-button" id="app" style="color:red" aria-label="Approve">x</p>');
    for (const tag of ["script", "style", "iframe", "form", "input", "button", "object", "embed", "svg", "textarea", "select"]) {
      expect(div.querySelector(tag), tag).toBeNull();
    }
    expect(div.querySelector("[data-testid]")).toBeNull();
    expect(div.querySelector("[id]")).toBeNull();
    expect(div.querySelector("[style]")).toBeNull();
    expect(div.querySelector("[aria-label]")).toBeNull();
    // The only classes present are the ones our own renderer adds.
    for (const el of div.querySelectorAll("[class]")) {
      expect(["md-link", "md-blocked-image"].some((c) => el.classList.contains(c)) || el.closest("code")).toBeTruthy();
    }
  });

  it("keeps ordinary markdown: emphasis, tables, code blocks with highlighting hints", () => {
    const div = render("**bold** _it_\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n```python\nprint('x')\n```");
    expect(div.querySelector("strong")?.textContent).toBe("bold");
    expect(div.querySelector("table td")?.textContent).toBe("1");
    const code = div.querySelector("pre > code");
    expect(code?.getAttribute("data-lang")).toBe("python");
    expect(code?.textContent).toBe("print('x')");
  });

  const PAYLOADS = [
    '<a href="  javascript:window.__pwned=1">x</a>',
    '<a href="jav&#x61;script:window.__pwned=1">x</a>',
    '<a href="java\tscript:window.__pwned=1">x</a>',
    "[x](JAVASCRIPT:window.__pwned=1)",
    "[x](vbscript:msgbox(1))",
    "[x](data:text/html;base64,PHNjcmlwdD53aW5kb3cuX19wd25lZD0xPC9zY3JpcHQ+)",
    '<img srcset="https://evil.test/a.png 1x" src="https://evil.test/b.png">',
    '<svg><script>window.__pwned=1</script></svg>',
    '<math><mi xlink:href="javascript:window.__pwned=1">x</mi></math>',
    '<noscript><p title="</noscript><img src=x onerror=window.__pwned=1>"></noscript>',
    '<details open ontoggle="window.__pwned=1"><summary>s</summary>d</details>',
    '<base href="https://evil.test/">',
    '<meta http-equiv="refresh" content="0;url=https://evil.test">',
    '<link rel="stylesheet" href="https://evil.test/x.css">',
    '<video src="https://evil.test/v.mp4" autoplay></video><audio src="x" onerror="window.__pwned=1"></audio>',
    '<table background="https://evil.test/bg.png"><tr><td>t</td></tr></table>',
    '<div data-testid="approve-button" role="button" tabindex="0">Approve</div>',
    '<label for="destructive-confirm">tick</label><input type="checkbox" data-testid="destructive-confirm">',
    "```python\n</code></pre><img src=x onerror=window.__pwned=1>\n```",
    '<a title="javascript:window.__pwned=1" href="https://example.com">t</a><img alt="javascript:alert(1)" src="x"><p title=" javascript:alert(1)">p</p>',
  ];

  it.each(PAYLOADS)("stays inert: %s", async (payload) => {
    const div = render(payload);
    await new Promise((r) => setTimeout(r, 0));
    expect((window as unknown as Record<string, unknown>)["__pwned"]).toBeUndefined();
    for (const el of div.querySelectorAll("*")) {
      for (const name of el.getAttributeNames()) {
        expect(name.startsWith("on"), `${el.tagName} ${name}`).toBe(false);
        if (name === "class") {
          // Only classes our own renderer and highlighter add.
          for (const c of el.classList) expect(c, `${el.tagName}.${c}`).toMatch(/^(md-link|md-blocked-image|hljs(-[\w-]+)?|[\w]+_)$/);
          continue;
        }
        expect(["href", "srcset", "background", "style", "id", "data-testid", "role", "tabindex", "for", "xlink:href"], `${el.tagName} ${name}`).not.toContain(name);
      }
      if (el.hasAttribute("src")) expect(el.getAttribute("src")).toMatch(/^data:image\/(png|jpeg|gif|webp);base64,/);
    }
    expect(div.querySelector("script, svg, math, base, meta, link, video, audio, input, label[for], iframe, noscript")).toBeNull();
    for (const el of div.querySelectorAll("*")) {
      for (const name of el.getAttributeNames()) expect(el.getAttribute(name), `${el.tagName} ${name}`).not.toMatch(/^\s*(javascript|vbscript):/i);
    }
    for (const a of div.querySelectorAll("a")) {
      const url = linkTarget(a);
      if (url) expect(url).toMatch(/^(https?:|mailto:)/);
    }
  });
});
