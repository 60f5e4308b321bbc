// The fake backend's fixed answers about the machine around it: Docker, the image, the model,
// profiles, the history file, the file manager. Plain data built from the scenario's state.

import type { DoctorReport } from "../bindings/DoctorReport";
import type { FolderOpening } from "../bindings/FolderOpening";
import type { ProfileInfo } from "../bindings/ProfileInfo";
import type { ProviderCheck } from "../bindings/ProviderCheck";
import type { RecoveryOutcome } from "../bindings/RecoveryOutcome";
import type { Settings } from "../bindings/Settings";
import type { StartupNotice } from "../bindings/StartupNotice";
import type { StartupState } from "../bindings/StartupState";

const IMAGE_TAG = "ironclaw-sandbox:3f9c2e1a";

export function doctorReport(s: { dockerUp: boolean; imageReady: boolean; configured: boolean; noOllamaModels: boolean }): DoctorReport {
  return {
    docker: s.dockerUp
      ? { state: "ok", message: "Docker 20.10.24 (API 1.41) at unix:///var/run/docker.sock", fix: null }
      : {
          state: "notRunning",
          message: "The Docker engine does not answer at unix:///var/run/docker.sock.",
          fix: "Start it: `sudo systemctl start docker` (or open Docker Desktop), then press Check again.",
        },
    image: s.imageReady
      ? { state: "ready", tag: IMAGE_TAG, message: "The sandbox image is ready." }
      : s.dockerUp
        ? { state: "missing", tag: IMAGE_TAG, message: "The sandbox image is not built yet." }
        : { state: "unknown", tag: IMAGE_TAG, message: "Docker must run before the image can be checked." },
    wall: s.dockerUp
      ? { gvisor: true, blocked: false, summary: "new sandboxes run under gVisor: a second kernel between the code and this machine's", fix: null }
      : null,
    model: {
      configured: s.configured,
      ollamaModels: s.noOllamaModels ? [] : ["qwen2.5-coder:7b", "llama3.1:8b"],
      keyringAvailable: true,
      keyringMessage: "Keys are stored in the Secret Service keyring.",
    },
    dataDir: "/home/you/.local/share/ironclaw",
    ready: s.dockerUp && s.imageReady,
  };
}

/** What building the image reports, step by step (`fraction` of null: not measurable). */
export const IMAGE_START = { phase: "debootstrap", message: "Building a minimal Debian root file system", fraction: null, done: false } as const;
export const imageImportStep = (i: number, of: number) =>
  ({ phase: "import", message: `Importing into Docker — ${i * 5} MB of 99 MB`, fraction: i / of, done: false }) as const;
export const IMAGE_DONE = { phase: "done", message: `Ready: ${IMAGE_TAG}`, fraction: 1, done: true } as const;

export function providerCheck(provider: Settings["provider"]): ProviderCheck {
  if (!provider) return { ok: false, model: null, message: "No provider is configured." };
  const model = provider.model ?? "qwen2.5-coder:7b";
  const url = provider.baseUrl ?? (provider.kind === "ollama" ? "http://127.0.0.1:11434/v1" : "http://localhost:8000/v1");
  return { ok: true, model, message: `Connected: the server at ${url} answers and offers 1 model. IronClaw will use “${model}”.` };
}

export const PROFILES: readonly ProfileInfo[] = [
  { name: "default", description: "Everyday analysis", memoryBytes: 512 * 1024 ** 2, cpus: 1, pids: 128, timeoutMs: 120_000, network: "none", runtime: "auto", isDefault: true },
  { name: "heavy", description: "Bigger data sets", memoryBytes: 2 * 1024 ** 3, cpus: 2, pids: 256, timeoutMs: 600_000, network: "none", runtime: "auto", isDefault: false },
  { name: "locked", description: "Tight limits for untrusted tasks", memoryBytes: 128 * 1024 ** 2, cpus: 0.5, pids: 32, timeoutMs: 30_000, network: "none", runtime: "auto", isDefault: false },
];

/** A log for runs the fake did not stream itself (the seeded history's). */
export function logText(stream: "stdout" | "stderr", kept: string | undefined): string {
  if (stream === "stderr") return "warning: 3 rows skipped\n".repeat(40);
  return kept ?? Array.from({ length: 4000 }, (_, i) => `row ${i + 1}: region=${["north", "south", "east", "west"][i % 4]} amount=${(i * 13.75).toFixed(2)}\n`).join("");
}

export function folderOpening(id: string, fileManager: boolean): FolderOpening {
  const path = `/home/you/.local/share/ironclaw/workspaces/${id}`;
  if (fileManager) return { path, opened: true };
  return {
    path,
    opened: false,
    problem: "No file manager opened this folder: the system has no application set up to open folders, or it failed to start. Copy the path below and open it in your file manager or a terminal.",
    detail: 'Launcher "xdg-open" "' + path + '" failed with ExitStatus(unix_wait_status(768))',
  };
}

// --- a damaged or missing history (scenarios "damaged", "notices") ------------------------

const BACKUP = "/home/me/.local/share/ironclaw/history.sqlite3.corrupt-1795555000000";

export const DAMAGED: StartupState = {
  historyDamage: {
    path: "/home/me/.local/share/ironclaw/history.sqlite3",
    problem: "database disk image is malformed",
    backup: BACKUP,
    notADatabase: false,
  },
};

export const FRESH_HISTORY: RecoveryOutcome = {
  backup: BACKUP, conversations: 0, messages: 0, executions: 0, incomplete: false, summary: "Started a fresh, empty history.",
};

export function recovered(n: number): RecoveryOutcome {
  return { backup: BACKUP, conversations: n, messages: n * 2, executions: 0, incomplete: true, summary: `Recovered ${n} conversations and ${n * 2} messages; some parts of the damaged file could not be read.` };
}

export const HISTORY_MISSING: StartupNotice = {
  kind: "historyMissing",
  message: "history is empty but the audit log lists 72 entries for 9 conversations; the history may have been deleted or replaced",
};
