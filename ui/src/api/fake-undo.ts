// Undo and redo in the fake backend, as the core does them: a run's own changes come back; a
// later run that changed the same file blocks it unless forced.

import type { AgentEvent } from "../bindings/AgentEvent";
import type { ChangeDetail } from "../bindings/ChangeDetail";
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

/** Every later run whose changes stand, undone newest first; then the answer. */
export function rewindTo(c: Conv, executionId: string): AgentEvent[] {
  const runs = c.items.flatMap((i) => (i.type === "execution" ? [i] : []));
  const at = runs.findIndex((r) => r.executionId === executionId);
  if (at < 0 || !runs[at]?.undoable) return [{ type: "error", message: "could not rewind to that run: it has no checkpoint" }];
  const later = runs.slice(at + 1).filter((r) => r.undoable && !r.undone).reverse();
  const out: AgentEvent[] = later.map((r) => {
    r.undoable = false;
    r.undone = true;
    return { type: "runUndone", executionId: r.executionId, restored: r.changes, alsoUndone: [] };
  });
  out.push({ type: "rewound", executionId, undone: later.map((r) => r.executionId) });
  return out;
}

export function redoRun(c: Conv, executionId: string): AgentEvent {
  const run = c.items.find((i) => i.type === "execution" && i.executionId === executionId);
  if (!run || run.type !== "execution" || !run.undone) return { type: "error", message: "could not redo that run: it is not undone" };
  run.undone = false;
  run.undoable = true;
  return { type: "runRedone", executionId, changes: run.changes };
}

/** A file a run changed, as the core's `run_change` describes it: made-up contents that show a
 *  diff (an SVG shows as an image on both sides). */
export function changeDetail(convs: Iterable<Conv>, executionId: string, path: string): ChangeDetail {
  for (const c of convs) {
    for (const i of c.items) {
      if (i.type !== "execution" || i.executionId !== executionId) continue;
      const ch = i.changes.find((x) => x.path === path);
      if (!ch) break;
      const svg = (fill: string) => ({ kind: "image" as const, dataUrl: `data:image/svg+xml;base64,${btoa(`<svg xmlns="http://www.w3.org/2000/svg" width="80" height="40"><rect width="80" height="40" fill="${fill}"/></svg>`)}` });
      if (path.endsWith(".svg")) {
        return { path, change: ch.change, before: ch.change === "added" ? { kind: "absent" } : svg("#999"), after: ch.change === "deleted" ? { kind: "absent" } : svg("steelblue"), diff: [], unavailable: null };
      }
      const before = "region,units\nnorth,12\nsouth,7\n";
      const after = "region,units\nnorth,12\nsouth,9\neast,4\n";
      return {
        path,
        change: ch.change,
        before: ch.change === "added" ? { kind: "absent" } : { kind: "text", text: before },
        after: ch.change === "deleted" ? { kind: "absent" } : { kind: "text", text: after },
        diff: [
          { kind: "same", text: "region,units" },
          { kind: "same", text: "north,12" },
          { kind: "removed", text: "south,7" },
          { kind: "added", text: "south,9" },
          { kind: "added", text: "east,4" },
        ],
        unavailable: null,
      };
    }
  }
  throw { kind: "invalid_input", message: `${path}: this run did not change it` };
}
