// Hand-written to the shared contract until ts-rs generates this file (CORE overwrites it).
import type { WorkspaceEntry } from "./WorkspaceEntry";

/** Payload of the app event `execution-files`: files an execution created or changed. */
export type ExecutionFilesEvent = { conversationId: string; executionId: string; files: Array<WorkspaceEntry> };
