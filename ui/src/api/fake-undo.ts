// Undo and redo in the fake backend, as the core does them: a run's own changes come back; a
// later run that changed the same file blocks it unless forced.

import type { AgentEvent } from "../bindings/AgentEvent";
import type { Conv } from "./fake-turn";

export function undoRun(c: Conv, executionId: string, force: boolean): AgentEvent {
  const runs = c.items.flatMap((i) => (i.type === "execution" ? [i] : []));
  const at = runs.findIndex((r) => r.executionId === executionId);
  const run = runs[at];
  if (!run || !run.undoable) return { type: "error", message: "could not undo that run: it has no checkpoint" };
  const paths = new Set(run.changes.map((ch) => ch.path));
  const later = runs.slice(at + 1).filter((r) => r.undoable && r.changes.some((ch) => paths.has(ch.path)));
  if (later.length && !force) {
    const shared = [...paths].filter((p) => later.some((r) => r.changes.some((ch) => ch.path === p)));
    return { type: "undoBlocked", executionId, laterRuns: later.map((r) => r.executionId), paths: shared };
  }
  for (const r of [...later, run]) {
    r.undoable = false;
    r.undone = true;
  }
  return { type: "runUndone", executionId, restored: run.changes, alsoUndone: later.map((r) => r.executionId) };
}

export function redoRun(c: Conv, executionId: string): AgentEvent {
  const run = c.items.find((i) => i.type === "execution" && i.executionId === executionId);
  if (!run || run.type !== "execution" || !run.undone) return { type: "error", message: "could not redo that run: it is not undone" };
  run.undone = false;
  run.undoable = true;
  return { type: "runRedone", executionId, changes: run.changes };
}
