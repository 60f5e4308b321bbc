// Hand-written to the shared contract until ts-rs generates this file (CORE overwrites it).
export type LogChunk = { text: string; offset: number; nextOffset: number; totalBytes: number };
