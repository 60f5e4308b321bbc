// Pictures for the model: pasted into the composer or chosen with the Attach menu's
// "Picture for the model…", shown as thumbnails until the message goes. They travel with the
// message (not into the workspace); IronClaw scales each to at most 1568 pixels a side, and a
// model that reads no images gets a note instead (see ironclaw-agent's vision module).

import type { ImageInput } from "../bindings/ImageInput";
import type { SentImage } from "../bindings/SentImage";
import { h } from "../lib/dom";
import { renderVisible } from "../lib/invisible";

/** IronClaw's own limit (ironclaw-agent's MAX_INPUT_BYTES): larger files are not even read. */
export const MAX_PICTURE_BYTES = 20 * 1024 * 1024;
/** ironclaw-agent's MAX_IMAGES_PER_MESSAGE. */
export const MAX_PICTURES = 8;
const TYPES = ["image/png", "image/jpeg", "image/gif", "image/webp"];

export interface Picture {
  name: string;
  /** For the thumbnail. */
  dataUrl: string;
  input: ImageInput;
}

function read(file: File): Promise<string> {
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => resolve(String(reader.result));
    reader.onerror = () => reject(reader.error ?? new Error("the file could not be read"));
    reader.readAsDataURL(file);
  });
}

/** A thumbnail of a picture, its bytes now or once loaded; `sent` ones say their size as the
 *  model got them. One that cannot be loaded says so in its place. */
export function thumbnail(name: string, src: string | Promise<string>, sent?: SentImage): HTMLElement {
  const title = sent ? `${name} · ${sent.width}×${sent.height} as the model got it` : name;
  const img = h("img", { testid: "picture-thumb", className: "picture-thumb", alt: renderVisible(name), title: renderVisible(title) });
  if (typeof src === "string") img.src = src;
  else {
    img.dataset.loading = "true";
    src.then(
      (url) => {
        img.src = url;
        delete img.dataset.loading;
      },
      () => {
        img.dataset.loading = "failed";
        img.classList.add("missing");
      },
    );
  }
  return img;
}

export class PictureTray {
  readonly el: HTMLElement;
  /** The hidden file input the Attach menu's "Picture for the model…" clicks. */
  readonly input: HTMLInputElement;
  private pictures: Picture[] = [];

  constructor(private readonly refuse: (why: string) => void) {
    this.el = h("ul", { testid: "picture-tray", className: "picture-tray", "aria-label": "Pictures for the model", hidden: true });
    this.input = h("input", { testid: "picture-input", type: "file", accept: TYPES.join(","), multiple: true, hidden: true });
    this.input.addEventListener("change", () => {
      void this.add([...(this.input.files ?? [])]);
      this.input.value = "";
    });
  }

  get count(): number {
    return this.pictures.length;
  }

  /** The pictures among `files` (a paste, the file dialog); anything else is said and left. */
  async add(files: File[]): Promise<void> {
    for (const file of files) {
      const name = file.name || "pasted image";
      if (!TYPES.includes(file.type)) {
        this.refuse(`${name} is not a PNG, JPEG, GIF or WebP picture, so it was not added.`);
        continue;
      }
      if (file.size > MAX_PICTURE_BYTES) {
        this.refuse(`${name} is over 20 MiB, so it was not added.`);
        continue;
      }
      if (this.pictures.length >= MAX_PICTURES) {
        this.refuse(`A message takes up to ${MAX_PICTURES} pictures; ${name} was not added.`);
        continue;
      }
      try {
        const dataUrl = await read(file);
        const data = dataUrl.slice(dataUrl.indexOf(",") + 1);
        this.pictures.push({ name, dataUrl, input: { name, data } });
      } catch (e) {
        this.refuse(`${name} could not be read: ${String(e)}`);
      }
    }
    this.render();
  }

  /** Sent: the tray empties. */
  take(): Picture[] {
    const sent = this.pictures;
    this.pictures = [];
    this.render();
    return sent;
  }

  private render(): void {
    this.el.replaceChildren(
      ...this.pictures.map((p, i) => {
        const remove = h("button", { testid: "picture-remove", className: "picture-remove", type: "button", title: "Remove", "aria-label": `Remove ${renderVisible(p.name)}` }, "×");
        remove.addEventListener("click", () => {
          this.pictures.splice(i, 1);
          this.render();
        });
        return h("li", { testid: "picture-chip", className: "picture-chip" }, thumbnail(p.name, p.dataUrl), remove);
      }),
    );
    this.el.hidden = this.pictures.length === 0;
  }
}
