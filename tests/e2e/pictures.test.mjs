// Pictures to the model in the app: the person adds a picture with the Attach menu's "Picture
// for the model…" and it reaches the model scaled to 1568 pixels; the model draws a chart in
// the sandbox and asks to look at it (view_image), and the chat shows what it looked at. A
// reopened conversation shows both from the history.

import { test } from "node:test";
import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import * as zlib from "node:zlib";

import { prepare } from "./lib/harness.mjs";
import { testid, RetryableError } from "./lib/webdriver.mjs";
import { approvalDialog, screenshot, sendMessage, waitForAssistant } from "./lib/ui.mjs";

/** A `w`×`h` RGB gradient PNG, with nothing but Node's zlib. */
function png(w, h) {
  const crcTable = Array.from({ length: 256 }, (_, n) => {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    return c >>> 0;
  });
  const crc = (buf) => {
    let c = 0xffffffff;
    for (const b of buf) c = crcTable[(c ^ b) & 0xff] ^ (c >>> 8);
    return (c ^ 0xffffffff) >>> 0;
  };
  const chunk = (kind, data) => {
    const len = Buffer.alloc(4);
    len.writeUInt32BE(data.length);
    const body = Buffer.concat([Buffer.from(kind), data]);
    const sum = Buffer.alloc(4);
    sum.writeUInt32BE(crc(body));
    return Buffer.concat([len, body, sum]);
  };
  const rows = Buffer.alloc((w * 3 + 1) * h);
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      const o = y * (w * 3 + 1) + 1 + x * 3;
      rows[o] = (x * 255) / w;
      rows[o + 1] = (y * 255) / h;
      rows[o + 2] = 170;
    }
  }
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(w, 0);
  ihdr.writeUInt32BE(h, 4);
  ihdr.set([8, 2, 0, 0, 0], 8);
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk("IHDR", ihdr),
    chunk("IDAT", zlib.deflateSync(rows)),
    chunk("IEND", Buffer.alloc(0)),
  ]);
}

/** Width and height of a base64 PNG (its IHDR). */
function pngSize(b64) {
  const bytes = Buffer.from(b64, "base64");
  assert.equal(bytes.subarray(1, 4).toString(), "PNG");
  return [bytes.readUInt32BE(16), bytes.readUInt32BE(20)];
}

const DRAW = `import struct, zlib
w, h = 400, 300
rows = b"".join(b"\\x00" + bytes(v for x in range(w) for v in (x % 256, y % 256, 90)) for y in range(h))
chunk = lambda k, d: struct.pack(">I", len(d)) + k + d + struct.pack(">I", zlib.crc32(k + d))
open("chart.png", "wb").write(b"\\x89PNG\\r\\n\\x1a\\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0)) + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b""))
print("saved chart.png")
`;

test("a picture reaches the model scaled down, and the model looks at the chart its code drew", { timeout: 300_000 }, async (t) => {
  const replies = [
    { type: "text", chunks: ["It is a colour gradient."] },
    { type: "toolCalls", text: ["Drawing it."], calls: [{ id: "call_d", name: "run_code", argumentChunks: [JSON.stringify({ language: "python", code: DRAW })] }] },
    { type: "toolCalls", text: [], calls: [{ id: "call_v", name: "view_image", argumentChunks: [JSON.stringify({ path: "chart.png" })] }] },
    { type: "text", chunks: ["The chart looks right."] },
  ];
  const app = await prepare(t, { replies });
  // The scripted model's name says nothing about images; the setting does.
  fs.appendFileSync(path.join(app.configDir, "provider.yaml"), "images: true\n");
  const photo = path.join(app.root, "photo.png");
  fs.writeFileSync(photo, png(2400, 1600));
  const s = await app.start();

  // The Attach menu's "Picture for the model…" is a file input the app's dialog fills; WebDriver
  // fills it the same way.
  await s.waitForTestId("message-input");
  const input = await s.find(testid("picture-input"));
  await input.sendKeys(photo);
  await s.waitUntil("the picture's thumbnail in the composer", async () => (await s.allByTestId("picture-chip")).length === 1);
  await sendMessage(s, "What is this?");
  await waitForAssistant(s, "It is a colour gradient.");
  const sent = await s.find(`${testid("message", '[data-role="user"]')} ${testid("picture-thumb")}`);
  assert.ok(await s.execute("return arguments[0].src.startsWith('data:image/png;base64,')", [sent]));

  const first = app.llm.chatRequests()[0].body.messages.find((m) => m.role === "user");
  const part = first.content.find((p) => p.type === "image_url");
  assert.ok(part, JSON.stringify(first).slice(0, 400));
  const [, b64] = part.image_url.url.split(";base64,");
  assert.deepEqual(pngSize(b64), [1568, 1045], "scaled to the long edge");

  // The model draws a chart (approved by the person) and looks at it.
  await sendMessage(s, "Draw a chart and check it");
  const dialog = await approvalDialog(s);
  await (await dialog.find(testid("approve-button"))).click();
  await s.waitGone(testid("approval-dialog"));
  const viewed = await s.waitUntil("what the model looked at, with its picture", async () => {
    const el = await s.byTestId("viewed");
    const img = await el.findAll(testid("picture-thumb"));
    if (img.length === 0) throw new RetryableError("no thumbnail yet");
    return el;
  });
  assert.match(await viewed.text(), /The model looked at chart\.png \(400×300\)/);
  await waitForAssistant(s, "The chart looks right.");
  await screenshot(s, "pictures");
  const last = app.llm.chatRequests().at(-1).body.messages;
  const shown = last.filter((m) => m.role === "user" && Array.isArray(m.content) && m.content.some((p) => p.type === "image_url"));
  assert.equal(shown.length, 2, "the person's picture and the chart");
  assert.deepEqual(pngSize(shown[1].content.find((p) => p.type === "image_url").image_url.url.split(";base64,")[1]), [400, 300]);

  // Reopened from the history: both pictures are there.
  const conversationId = await (await s.find(`${testid("conversation-item")}.active`)).attribute("data-id");
  await (await s.byTestId("new-conversation")).click();
  await s.waitUntil("the new conversation", async () =>
    (await (await s.find(`${testid("conversation-item")}.active`)).attribute("data-id")) !== conversationId);
  await (await s.find(`${testid("conversation-item", `[data-id="${conversationId}"]`)} button`)).click();
  await s.waitUntil("both pictures from the history", async () => {
    const user = await s.findAll(`${testid("message", '[data-role="user"]')} ${testid("picture-thumb")}`);
    const looked = await s.findAll(`${testid("viewed")} ${testid("picture-thumb")}`);
    if (user.length !== 1 || looked.length !== 1) throw new RetryableError(`${user.length} and ${looked.length}`);
    // Each is loaded from the history when shown.
    const loaded = await s.execute("return arguments[0].naturalWidth > 0 && arguments[1].naturalWidth === 400", [user[0], looked[0]]);
    if (!loaded) throw new RetryableError("not loaded yet");
    return true;
  });
});
