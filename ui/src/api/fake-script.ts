// What the fake backend says and asks to run. Plain data, so the fake's logic stays readable.

import type { ApprovalRequest } from "../bindings/ApprovalRequest";
import type { DecisionChoice } from "../bindings/DecisionChoice";
import type { ConversationSummary } from "../bindings/ConversationSummary";
import type { HistoryItem } from "../bindings/HistoryItem";
import type { WorkspaceEntry } from "../bindings/WorkspaceEntry";

/** A stable 64-hex stand-in for the core's SHA-256 code hash. */
export function fakeHash(text: string): string {
  let out = "";
  for (let seed = 1; out.length < 64; seed++) {
    let h = 2166136261 ^ seed;
    for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 16777619);
    out += (h >>> 0).toString(16).padStart(8, "0");
  }
  return out.slice(0, 64);
}

let approvalCounter = 0;

const PLOT_CODE = `import csv, statistics
from collections import defaultdict

totals = defaultdict(float)
with open("sales.csv") as f:
    for row in csv.DictReader(f):
        if row["region"]:
            totals[row["region"]] += float(row["amount"])

for region, total in sorted(totals.items()):
    print(f"{region:>6}: {total:10.2f}")
print("median:", statistics.median(totals.values()))
`;

const DESTRUCTIVE_CODE = `# Remove the old build output and every cached download
rm -rf /workspace/build
find /workspace -name '*.tmp' -delete
`;

/** The answers the core offers (mirrors `DecisionChoice::for_code` in ironclaw-protocol):
 *  destructive code gets no rule, and approving it needs the confirmation. */
export function choicesFor(destructive: boolean): DecisionChoice[] {
  return [
    { kind: "approve_once", needsConfirmation: destructive },
    ...(destructive ? [] : [{ kind: "always_allow_in_session" as const, needsConfirmation: false }]),
    { kind: "edit_and_approve", needsConfirmation: destructive },
    { kind: "deny", needsConfirmation: false },
  ];
}

export function requestFor(text: string): ApprovalRequest {
  const destructive = /delete|remove|clean|rm\b/i.test(text);
  const approvalId = `appr-${Date.now().toString(36)}-${++approvalCounter}`;
  if (destructive) {
    return {
      approvalId, codeHash: fakeHash(DESTRUCTIVE_CODE), language: "shell", code: DESTRUCTIVE_CODE,
      risk: "destructive", destructive: true, choices: choicesFor(true), alteredSession: [],
      reasons: [
        { level: "destructive", message: "Deletes a directory tree recursively", snippet: "rm -rf /workspace/build", line: 2 },
        { level: "destructive", message: "Deletes every file that matches a pattern", snippet: "find /workspace -name '*.tmp' -delete", line: 3 },
      ],
    };
  }
  return {
    approvalId, codeHash: fakeHash(PLOT_CODE), language: "python", code: PLOT_CODE,
    risk: "normal", destructive: false, choices: choicesFor(false), alteredSession: [],
    reasons: [{ level: "normal", message: "Reads files in the workspace", snippet: 'open("sales.csv")', line: 5 }],
  };
}

export interface Reply {
  before: string;
  request: boolean;
  outputLines: number;
  after: string;
}

export const HOSTILE_MARKDOWN = `Here is the summary you asked for.

<script>window.__pwned = true</script>

<img src="x" onerror="window.__pwned = true">

[click me](javascript:window.__pwned=true) and [docs](https://example.com/docs)

<button data-testid="approve-button" class="approve" onclick="window.__pwned = true">Approve</button>

<form action="https://evil.test"><input name="q"></form>

<iframe src="https://evil.test"></iframe>

<a href="data:text/html,<script>alert(1)</script>">data link</a>

<div style="position:fixed;inset:0" id="approval-dialog">overlay</div>

![tracker](https://evil.test/pixel.png)
`;

/** What the fake model "thinks" before answering when asked to think (shown folded). */
export function thinkingFor(text: string): string {
  return /think/i.test(text) ? "The user wants totals per region. sales.csv has a region column; rows without one should be skipped, not counted as a region of their own." : "";
}

export function replyFor(text: string): Reply {
  if (/hostile/i.test(text)) return { before: HOSTILE_MARKDOWN, request: false, outputLines: 0, after: "" };
  if (/delete|remove|clean|rm\b/i.test(text)) {
    return {
      before: "I'll clear the **build output** and temporary files. This *deletes files*, so please check the command:",
      request: true,
      outputLines: 3,
      after: "Done — the build folder and `*.tmp` files are gone.",
    };
  }
  const flood = /flood|big|lots/i.test(text);
  return {
    before:
      "Sure. I'll total the sales per region from `sales.csv` and print the median.\n\n" +
      "The plan:\n1. read the CSV with the standard library\n2. skip rows without a region\n3. print a small table",
    request: true,
    outputLines: flood ? 60_000 : 24,
    after:
      "Here's what the numbers say:\n\n| region | total |\n| --- | ---: |\n| east | 17,187.50 |\n| north | 18,562.50 |\n\n" +
      "The **north** region leads. I also saved a chart to `chart.svg` in the workspace.",
  };
}

export function chartSvg(): string {
  const bars = [62, 88, 45, 73]
    .map((v, i) => `<rect x="${30 + i * 60}" y="${140 - v}" width="40" height="${v}" rx="4" fill="#4f7cff"/>`)
    .join("");
  return `<svg xmlns="http://www.w3.org/2000/svg" width="280" height="160" viewBox="0 0 280 160"><rect width="280" height="160" fill="#f7f8fa"/>${bars}<line x1="20" y1="140" x2="270" y2="140" stroke="#99a" /></svg>`;
}

const ago = (minutesAgo: number) => Date.now() - minutesAgo * 60_000;

export function SEED_CONVERSATIONS(): { summary: ConversationSummary; items: HistoryItem[]; files: WorkspaceEntry[] }[] {
  const req = requestFor("plot");
  return [
    {
      summary: { id: "conv-sales", title: "Sales per region", updatedAt: ago(3), pendingApprovals: 0 },
      files: [
        { path: "sales.csv", size: 48_213, modifiedMs: Date.now() - 3_600_000, kind: "text", changedByLastRun: false },
        { path: "chart.svg", size: 2_048, modifiedMs: Date.now() - 180_000, kind: "image", changedByLastRun: true },
        { path: "out", size: 0, modifiedMs: Date.now() - 180_000, kind: "dir", changedByLastRun: false },
      ],
      items: [
        { type: "user", id: "m1", text: "Which region sold the most last quarter? The data is in sales.csv.", images: [], at: ago(5) },
        {
          type: "assistant", id: "m2", status: "complete", at: ago(5), model: "openai:gpt-4o",
          text: "Let me add up `amount` per `region` with Python's standard library:\n\n```python\n" + PLOT_CODE + "```",
        },
        { type: "approval", request: req, state: "approved", decidedBy: "user_dialog", reason: null, userEdited: false },
        {
          type: "execution", executionId: "exec-seed-1", number: 1, approvalId: req.approvalId, language: "python", code: PLOT_CODE,
          stdout: "  east:   17187.50\n north:   18562.50\n south:   12011.25\n  west:    9630.00\nmedian: 14599.375\n",
          stderr: "", exitCode: 0, durationMs: 184, timedOut: false, cancelled: false, oomKilled: false,
          interrupted: false, truncated: false, logFile: "logs/exec-seed-1.log",
          // old-plot.png was deleted from the workspace since: it comes back as a placeholder.
          images: ["chart.svg", "old-plot.png"],
          changes: [{ path: "chart.svg", change: "added" }], undoable: true, notUndoable: null, undone: false, changesUnknown: null,
        },
        {
          type: "assistant", id: "m3", status: "complete", at: ago(3), model: "openai:gpt-4o",
          text: "**North** sold the most (18,562.50), just ahead of east. The median region total is 14,599.38.",
        },
      ],
    },
    {
      summary: { id: "conv-logs", title: "Parse nginx access logs", updatedAt: ago(60 * 26), pendingApprovals: 0 },
      files: [{ path: "access.log", size: 8_400_000, modifiedMs: Date.now() - 86_400_000, kind: "text", changedByLastRun: false }],
      items: [
        { type: "user", id: "l1", text: "Count the 5xx responses per hour in access.log", images: [], at: ago(60 * 26) },
        { type: "assistant", id: "l2", status: "complete", at: ago(60 * 26), model: null, text: "There were **41** 5xx responses, most of them between 02:00 and 03:00." },
      ],
    },
    {
      summary: { id: "conv-disk", title: "Disk usage report", updatedAt: ago(60 * 24 * 3), pendingApprovals: 0 },
      files: [],
      items: [{ type: "user", id: "d1", text: "What takes the most space in the workspace?", images: [], at: ago(60 * 24 * 3) }],
    },
  ];
}
