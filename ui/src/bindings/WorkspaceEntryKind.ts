// Hand-written to the shared contract until ts-rs generates this file (CORE overwrites it).
export type WorkspaceEntryKind = "dir" | "image" | "text" | "binary";
