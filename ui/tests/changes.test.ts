import { describe, expect, it } from "vitest";
import { changeDetailView } from "../src/views/changes";

const PNG = "data:image/png;base64,iVBORw0KGgo=";

describe("a changed file's detail", () => {
  it("shows an image before and after, and a new image beside 'nothing'", () => {
    const both = changeDetailView({ path: "plot.png", change: "modified", before: { kind: "image", dataUrl: PNG }, after: { kind: "image", dataUrl: PNG }, diff: [], unavailable: null });
    const imgs = [...both.querySelectorAll("img")];
    expect(imgs.map((i) => i.alt)).toEqual(["Before image", "After image"]);
    expect(imgs[0]?.getAttribute("src")).toBe(PNG);
    const added = changeDetailView({ path: "plot.png", change: "added", before: { kind: "absent" }, after: { kind: "image", dataUrl: PNG }, diff: [], unavailable: null });
    expect(added.querySelector("figure")?.textContent).toBe("Beforenothing");
    expect(added.querySelectorAll("img")).toHaveLength(1);
  });

  it("says what a side was when it is not shown: a link (never followed), binary, too large", () => {
    const el = changeDetailView({ path: "latest", change: "modified", before: { kind: "link", target: "/etc/passwd" }, after: { kind: "tooLarge", bytes: 50 << 20 }, diff: [], unavailable: null });
    expect(el.textContent).toContain("a link to /etc/passwd");
    expect(el.textContent).toContain("too large to show here");
    expect(el.querySelector("img")).toBeNull();
  });

  it("code in a diff is text, never markup", () => {
    const el = changeDetailView({ path: "x.html", change: "modified", before: { kind: "text", text: "" }, after: { kind: "text", text: "" }, diff: [{ kind: "added", text: "<img src=x onerror=alert(1)>" }], unavailable: null });
    expect(el.querySelector("img")).toBeNull();
    expect(el.textContent).toContain("+ <img src=x onerror=alert(1)>");
  });

  it("a checkpoint that was dropped says why nothing is shown", () => {
    const el = changeDetailView({ path: "a", change: "modified", before: { kind: "absent" }, after: { kind: "absent" }, diff: [], unavailable: "run r can no longer be undone: its checkpoint was dropped" });
    expect(el.textContent).toBe("Not shown: run r can no longer be undone: its checkpoint was dropped");
  });
});
