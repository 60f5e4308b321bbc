// Hand-written to the shared contract until ts-rs generates this file (CORE overwrites it).
export type ImageStatus = { ready: boolean; tag: string; message: string };
