// Longer scripted runs of the fake backend, for looking at live cells and floods.

import type { AgentEvent } from "../bindings/AgentEvent";
import { requestFor } from "./fake-script";

export interface Runner {
  conversationId: string;
  emit(e: AgentEvent): void;
  tick(ms: number): Promise<void>;
  streamText(text: string): Promise<void>;
}

let counter = 0;
const newId = (p: string) => `${p}-run-${Date.now().toString(36)}-${(++counter).toString(36)}`;

/** A run that was allowed by a rule and keeps streaming (for looking at live cells). */
export async function runLive(r: Runner, c: { cancelled: boolean }): Promise<void> {
  const turnId = newId("turn");
  r.emit({ type: "turnStarted", conversationId: r.conversationId, turnId });
  await r.streamText("Running the full export again with a **progress line per batch**:");
  const req = requestFor("plot");
  r.emit({ type: "approvalRequested", ...req });
  r.emit({ type: "approvalResolved", approvalId: req.approvalId, approved: true, decidedBy: "policy", userEdited: false, auto: true, reason: null });
  const executionId = newId("exec");
  r.emit({ type: "executionStarted", executionId, number: 2, approvalId: req.approvalId, language: "python", code: "for batch in range(10**6):\n    export(batch)\n    print(f'batch {batch}: 4096 rows ok')\n" });
  let batch = 0;
  for (let frame = 0; frame < 400 && !c.cancelled; frame++) {
    let text = "";
    for (let i = 0; i < 2000; i++) text += `batch ${batch++}: 4096 rows ok\n`;
    r.emit({ type: "executionOutput", executionId, stream: "stdout", text });
    r.emit({ type: "executionResources", executionId, cpuPercent: 60 + (frame % 7) * 5, memoryBytes: (180 + (frame % 13) * 6) * 1024 * 1024, pids: 4 });
    await r.tick(30);
  }
}

/** 100 MB of output as fast as the page takes it, in 64 KiB events (for the flood check). */
export async function runFlood(r: Runner): Promise<void> {
  const executionId = newId("exec");
  const req = requestFor("plot");
  r.emit({ type: "executionStarted", executionId, number: 1, approvalId: req.approvalId, language: "python", code: "print('x' * 63 + '\\n' for _ in range(1_638_400))" });
  const chunk = `${"x".repeat(63)}\n`.repeat(1024);
  const started = performance.now();
  for (let i = 0; i < 1600; i++) {
    r.emit({ type: "executionOutput", executionId, stream: "stdout", text: chunk });
    if (i % 16 === 15) await r.tick(0); // ~1 MB per task, as IPC batches arrive
  }
  const durationMs = performance.now() - started;
  r.emit({ type: "executionEnded", executionId, exitCode: 0, durationMs, timedOut: false, cancelled: false, oomKilled: false, peakMemoryBytes: 0, truncated: true, logFile: "logs/flood.log", quotaExceeded: null, changes: [], notUndoable: null, changesUnknown: null });
}
