// Hand-written to the shared contract until ts-rs generates this file (CORE overwrites it).
import type { WorkspaceEntryKind } from "./WorkspaceEntryKind";

export type WorkspaceEntry = {
  path: string;
  size: number;
  modifiedMs: number;
  kind: WorkspaceEntryKind;
  changedByLastRun: boolean;
};
