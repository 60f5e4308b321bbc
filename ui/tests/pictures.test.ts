import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { all, q, settle, startFakeApp } from "./helpers";

let root: HTMLElement;

beforeEach(() => {
  root = document.createElement("div");
  document.body.append(root);
});
afterEach(() => document.body.replaceChildren());

const PNG = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 1, 2, 3]);

function paste(target: HTMLElement, files: File[], asItems = false): Event {
  const ev = new Event("paste", { bubbles: true, cancelable: true });
  const items = files.map((f) => ({ kind: "file", type: f.type, getAsFile: () => f }));
  Object.defineProperty(ev, "clipboardData", { value: asItems ? { files: [], items } : { files, items } });
  target.dispatchEvent(ev);
  return ev;
}

async function until(check: () => boolean): Promise<void> {
  for (let i = 0; i < 50 && !check(); i++) await new Promise((r) => setTimeout(r, 10));
}

describe("pictures for the model", () => {
  it("a pasted picture waits as a thumbnail, goes with the message, and shows in it", async () => {
    const { api } = await startFakeApp(root);
    const input = q<HTMLTextAreaElement>("message-input");
    const ev = paste(input, [new File([PNG], "shot.png", { type: "image/png" })]);
    expect(ev.defaultPrevented).toBe(true);
    await until(() => all("picture-chip").length === 1);
    expect(q("picture-tray").hidden).toBe(false);

    input.value = "What is on this screen?";
    q<HTMLButtonElement>("send-button").click();
    await settle();
    const sent = api.calls.find((c) => c.name === "sendMessage");
    const images = sent?.args[2] as { name: string; data: string }[];
    expect(images).toHaveLength(1);
    expect(images[0]?.name).toBe("shot.png");
    expect(atob(images[0]?.data ?? "").charCodeAt(1)).toBe(0x50);
    expect(q("picture-tray").hidden).toBe(true);
    const message = all("message").filter((m) => m.dataset.role === "user").at(-1)!;
    expect(q<HTMLImageElement>("picture-thumb", message).src).toMatch(/^data:image\/png;base64,/);
  });

  it("a picture alone is enough to send; text and other files are not taken as pictures", async () => {
    const { api } = await startFakeApp(root);
    const input = q<HTMLTextAreaElement>("message-input");
    const notPicture = paste(input, [new File(["hello"], "notes.txt", { type: "text/plain" })]);
    expect(notPicture.defaultPrevented).toBe(false);
    paste(input, [new File([PNG], "a.png", { type: "image/png" }), new File(["x"], "b.heic", { type: "image/heic" })]);
    await until(() => all("picture-chip").length === 1);
    expect(root.textContent).toContain("b.heic is not a PNG, JPEG, GIF or WebP picture");
    q<HTMLButtonElement>("picture-remove").click();
    expect(all("picture-chip")).toHaveLength(0);
    paste(input, [new File([PNG], "c.png", { type: "image/png" })]);
    await until(() => all("picture-chip").length === 1);
    q<HTMLButtonElement>("send-button").click();
    await settle();
    const sent = api.calls.find((c) => c.name === "sendMessage");
    expect(sent?.args[1]).toBe("");
    expect((sent?.args[2] as unknown[]).length).toBe(1);
  });

  it("a picture the clipboard lists only among its items is taken too", async () => {
    await startFakeApp(root);
    const ev = paste(q("message-input"), [new File([PNG], "copied.png", { type: "image/png" })], true);
    expect(ev.defaultPrevented).toBe(true);
    await until(() => all("picture-chip").length === 1);
  });

  it("a reopened conversation loads each sent picture when it shows it", async () => {
    const { api, app } = await startFakeApp(root);
    const input = q<HTMLTextAreaElement>("message-input");
    paste(input, [new File([PNG], "shot.png", { type: "image/png" })]);
    await until(() => all("picture-chip").length === 1);
    q<HTMLButtonElement>("send-button").click();
    await settle();
    await app.open("conv-logs");
    await app.open("conv-sales");
    await settle();
    const thumb = all("picture-thumb").at(-1) as HTMLImageElement;
    await until(() => thumb.src.startsWith("data:image/png;base64,"));
    expect(thumb.src).toMatch(/^data:image\/png;base64,iVBORw0KGgo/);
    expect(api.calls.some((c) => c.name === "readMessageImage")).toBe(true);
  });

  it("what the model looked at is said, with why when it could not be", async () => {
    const { api } = await startFakeApp(root);
    const id = "conv-sales";
    api.emit(id, { type: "imageViewed", callId: "c1", path: "link.png", width: 0, height: 0, error: "it is a symbolic link" });
    api.emit(id, { type: "imageViewed", callId: "c2", path: "chart.png", width: 400, height: 300, error: null });
    await settle();
    const [failed, shown] = all("viewed");
    expect(failed?.textContent).toBe("Could not show link.png to the model: it is a symbolic link");
    expect(failed?.classList.contains("failed")).toBe(true);
    expect(shown?.textContent).toBe("The model looked at chart.png (400×300)");
  });
});
