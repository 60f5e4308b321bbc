// Hand-written to the shared contract until ts-rs generates this file (CORE overwrites it).
import type { ImageState } from "./ImageState";

export type ImageCheck = { state: ImageState; tag: string; message: string };
