// Hand-written to the shared contract until ts-rs generates this file (CORE overwrites it).
/** Progress of `prepare_image` (the sandbox crate's `image::Progress`). */
export type ImageProgress =
  | { type: "phase"; name: string; message: string }
  | { type: "layer"; id: string; status: string; current: number | null; total: number | null }
  | { type: "bytes"; done: number; total: number | null }
  | { type: "log"; line: string }
  | { type: "done"; tag: string };
