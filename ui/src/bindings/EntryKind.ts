// Hand-written to the shared contract until ts-rs generates this file (CORE overwrites it).
export type EntryKind = "dir" | "image" | "text" | "binary";
