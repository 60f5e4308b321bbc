// The approval policies as a person reads them: Settings' list and the notice when one is chosen.

import type { ApprovalPolicy } from "../bindings/ApprovalPolicy";

export const POLICIES: { value: ApprovalPolicy; label: string; notice: string }[] = [
  { value: "ask_always", label: "Ask before running any code", notice: "Approval policy: ask before running any code." },
  { value: "ask_unless_safe", label: "Ask unless the code only reads (recommended)", notice: "Approval policy: ask unless the code only reads." },
  {
    value: "ask_unless_undoable",
    label: "Ask only when a run could not be undone",
    notice: "Approval policy: runs whose effects can all be undone run without asking; destructive code, network beyond allowed hosts and runs that cannot be checkpointed still ask.",
  },
  { value: "never_ask", label: "Never ask (not recommended)", notice: "Approval policy is now “never ask”: code runs without asking you first." },
];
