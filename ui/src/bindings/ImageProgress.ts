// Hand-written to the shared contract until ts-rs generates this file (CORE overwrites it).
/** One step of preparing the sandbox image; `fraction` is 0–1 when the step knows how far it is. */
export type ImageProgress = { phase: string; message: string; fraction: number | null; done: boolean };
