// Hand-written to the shared contract until ts-rs generates this file (CORE overwrites it).
import type { EntryKind } from "./EntryKind";

export type WorkspaceEntry = {
  path: string;
  size: number;
  modifiedMs: number;
  kind: EntryKind;
  changedByLastRun: boolean;
};
