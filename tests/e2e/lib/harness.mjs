// Starts the real built app for one test: its own data/config/XDG folders, a scripted LLM
// (`ironclaw-mock-llm`) named in provider.yaml, and a tauri-driver of its own (the app inherits
// the driver's environment, so that is how each test points the app at its folders). Everything
// is torn down in `t.after`, which runs even when the test fails: the WebDriver session, the
// driver's process group (driver, WebKitWebDriver, the app), the mock server, every container
// labelled with this data folder's instance id, and the temp folder.

import { spawn, execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { once } from "node:events";
import { createServer } from "node:net";
import { promisify } from "node:util";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { fileURLToPath } from "node:url";

import { Session, waitForDriver, sleep, testid } from "./webdriver.mjs";

const run = promisify(execFile);

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");
export const APP_BIN = process.env.IRONCLAW_APP_BIN ?? path.join(ROOT, "target/debug/ironclaw-app");
export const MOCK_LLM_BIN = process.env.IRONCLAW_MOCK_LLM_BIN ?? path.join(ROOT, "target/debug/ironclaw-mock-llm");
export const TAURI_DRIVER = process.env.TAURI_DRIVER ?? findOnPath("tauri-driver") ?? path.join(os.homedir(), ".cargo/bin/tauri-driver");
export const LOG_DIR = path.join(ROOT, "target/e2e-logs");

function findOnPath(name) {
  for (const dir of (process.env.PATH ?? "").split(":")) {
    const candidate = path.join(dir, name);
    if (dir && fs.existsSync(candidate)) return candidate;
  }
  return undefined;
}

/** The `ironclaw.instance` label of containers the app creates for this data folder
 *  (mirrors `Paths::instance_id`: the first 6 bytes of SHA-256 of the canonical path, in hex). */
export function instanceId(dataDir) {
  return createHash("sha256").update(fs.realpathSync(dataDir)).digest("hex").slice(0, 12);
}

/** `n` distinct free loopback ports. All are held open until each is picked: two ports asked
 *  for one after the other can be the same one, and then tauri-driver proxies to itself. */
async function freePorts(n) {
  const servers = [];
  try {
    for (let i = 0; i < n; i++) {
      const server = createServer();
      servers.push(server);
      server.listen(0, "127.0.0.1");
      await once(server, "listening");
    }
    return servers.map((server) => server.address().port);
  } finally {
    await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
  }
}

/** `ironclaw-mock-llm` with `replies` as its script; `chatRequests()` reads what the app sent. */
async function startMockLlm(dir, replies) {
  const scriptFile = path.join(dir, "llm-script.json");
  const logFile = path.join(dir, "llm-requests.jsonl");
  fs.writeFileSync(scriptFile, JSON.stringify({ replies, models: ["mock"] }, null, 2));
  if (!fs.existsSync(MOCK_LLM_BIN)) {
    throw new Error(`${MOCK_LLM_BIN} is missing: cargo build -p ironclaw-llm --features testing --bin ironclaw-mock-llm`);
  }
  const child = spawn(MOCK_LLM_BIN, [scriptFile, "--log", logFile], { stdio: ["ignore", "pipe", "pipe"] });
  let stderr = "";
  child.stderr.on("data", (d) => (stderr += d));
  const baseUrl = await new Promise((resolve, reject) => {
    let out = "";
    child.stdout.on("data", (d) => {
      out += d;
      const line = out.split("\n");
      if (line.length > 1) resolve(line[0].trim());
    });
    child.on("exit", (code) => reject(new Error(`ironclaw-mock-llm exited (${code}) before listening: ${stderr}`)));
  });
  return {
    baseUrl,
    child,
    /** The chat requests (POSTs) the app made so far, as `{ method, path, headers, body }`. */
    chatRequests() {
      if (!fs.existsSync(logFile)) return [];
      return fs
        .readFileSync(logFile, "utf8")
        .split("\n")
        .filter(Boolean)
        .map((line) => JSON.parse(line))
        .filter((r) => r.method === "POST");
    },
    stop() {
      if (child.exitCode === null) child.kill("SIGTERM");
    },
  };
}

/** A `.desktop` handler for folders whose Exec appends its argument to `openedFile` (and its
 *  `LD_LIBRARY_PATH` to `openedFile.library-path`), made the
 *  default for `inode/directory` with `xdg-mime`, so "Open folder" goes through the real
 *  xdg-open path and we can read which folder it was asked to open. */
async function installFolderHandler(xdgData, xdgConfig, openedFile) {
  const apps = path.join(xdgData, "applications");
  fs.mkdirSync(apps, { recursive: true });
  const recorder = path.join(xdgData, "record-open.sh");
  // The library path it was started with goes beside it: what the app hands the person's
  // applications must be the person's environment, not the one its WebKit processes get.
  fs.writeFileSync(
    recorder,
    `#!/bin/sh\nprintf '%s\\n' "\${LD_LIBRARY_PATH-(unset)}" >> '${openedFile}.library-path'\nprintf '%s\\n' "$1" >> '${openedFile}'\n`,
    { mode: 0o755 },
  );
  fs.writeFileSync(
    path.join(apps, "ironclaw-e2e-open.desktop"),
    `[Desktop Entry]\nType=Application\nName=Record open\nExec=${recorder} %f\nMimeType=inode/directory;\nNoDisplay=true\n`,
  );
  await run("xdg-mime", ["default", "ironclaw-e2e-open.desktop", "inode/directory"], {
    env: { ...process.env, XDG_DATA_HOME: xdgData, XDG_CONFIG_HOME: xdgConfig },
  });
}

/** A folder of launchers (xdg-open and every fallback the opener tries) that each record the
 *  call and then fail at once, as xdg-open does with no application registered for folders.
 *  Returns the folder, to put first on the app's PATH. */
function installFailingLaunchers(root, openedFile) {
  const bin = path.join(root, "failing-launchers");
  fs.mkdirSync(bin, { recursive: true });
  for (const name of ["xdg-open", "gio", "gnome-open", "kde-open6", "kde-open5", "kde-open", "wslview"]) {
    const last = name === "gio" ? '"$2"' : '"$1"';
    fs.writeFileSync(path.join(bin, name), `#!/bin/sh\nprintf '%s\\n' ${last} >> '${openedFile}'\nexit 3\n`, { mode: 0o755 });
  }
  return bin;
}

/** Folder names without the hidden ones (the warm spare's `.spare-…` sits among workspaces). */
export function visible(names) {
  return names.filter((name) => !name.startsWith("."));
}

/** Force-removes every container labelled `ironclaw.instance=<instance>`. Never throws. */
export async function removeContainers(instance) {
  try {
    const { stdout } = await run("docker", ["ps", "-aq", "--filter", `label=ironclaw.instance=${instance}`]);
    const ids = stdout.split("\n").filter(Boolean);
    if (ids.length) await run("docker", ["rm", "-f", "-v", ...ids]);
    return ids.length;
  } catch (e) {
    console.error(`e2e cleanup: cannot remove the containers of instance ${instance}: ${e.message}`);
    return 0;
  }
}

/** The ids of this instance's containers (running or not). */
export async function listContainers(instance) {
  const { stdout } = await run("docker", ["ps", "-aq", "--filter", `label=ironclaw.instance=${instance}`]);
  return stdout.split("\n").filter(Boolean);
}

function safeName(name) {
  return name.replace(/[^A-Za-z0-9._-]+/g, "-").slice(0, 80);
}

/**
 * Prepares everything for one test and registers its teardown on `t`. Returns an `App`; call
 * `await app.start()` to launch the window.
 * - `replies`: the scripted LLM's answers, in order (see ironclaw-llm's `testing::Reply`).
 * - `env`: extra environment for the app.
 * - `provider`: write provider.yaml naming the scripted LLM (false: a first run, no model set up).
 */
export async function prepare(t, { replies = [], env = {}, provider = true, failingLaunchers = false, screenshots = true, sandboxYaml = null, appBin = APP_BIN } = {}) {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "ironclaw-app-e2e-"));
  const app = new App(t, root, appBin);
  app.sandboxYaml = sandboxYaml;
  // Without compositing, WebKitWebDriver's screenshot command can hang (see scripts/e2e.sh).
  app.screenshots = screenshots;
  t.after(() => app.teardown());
  if (failingLaunchers) env = { ...env, PATH: `${installFailingLaunchers(root, app.openedFile)}:${process.env.PATH}` };
  await app.init(replies, env, provider);
  return app;
}

export class App {
  constructor(t, root, appBin = APP_BIN) {
    this.t = t;
    this.root = root;
    // Per app, not per module: a bench comparing two builds launches both from one process.
    this.appBin = appBin;
    this.dataDir = path.join(root, "data");
    this.configDir = path.join(root, "config");
    this.xdgData = path.join(root, "xdg-data");
    this.xdgConfig = path.join(root, "xdg-config");
    this.xdgCache = path.join(root, "xdg-cache");
    this.openedFile = path.join(root, "opened-folders.txt");
    this.session = null;
    this.driver = null;
  }

  async init(replies, env, provider) {
    for (const dir of [this.dataDir, this.configDir, this.xdgData, this.xdgConfig, this.xdgCache]) {
      fs.mkdirSync(dir, { recursive: true });
    }
    this.instance = instanceId(this.dataDir);
    this.llm = await startMockLlm(this.root, replies);
    if (this.sandboxYaml !== null) fs.writeFileSync(path.join(this.configDir, "sandbox.yaml"), this.sandboxYaml);
    if (provider) {
      fs.writeFileSync(
        path.join(this.configDir, "provider.yaml"),
        `kind: openai\nbase_url: ${this.llm.baseUrl}/v1\nmodel: mock\n`,
      );
    }
    await installFolderHandler(this.xdgData, this.xdgConfig, this.openedFile);
    await this.startDriver(env);
  }

  async startDriver(extraEnv) {
    if (!fs.existsSync(this.appBin)) {
      throw new Error(`${this.appBin} is missing: bash scripts/build-app.sh`);
    }
    fs.mkdirSync(LOG_DIR, { recursive: true });
    this.logFile ??= path.join(LOG_DIR, `${safeName(this.t.name)}.log`);
    if (!this.logStarted) fs.rmSync(this.logFile, { force: true });
    this.logStarted = true;
    // A free port can still be taken by another process (an outgoing connection's source port)
    // between our check and the driver's bind; WebKitWebDriver then cannot listen and every
    // session request would hang. Such a start is detected and retried on new ports.
    for (let attempt = 1; ; attempt++) {
      const [port, nativePort] = await freePorts(2);
      const logStart = fs.statSync(this.logFile, { throwIfNoEntry: false })?.size ?? 0;
      this.spawnDriver(port, nativePort, extraEnv);
      // Either driver says so in the log when its port was taken (then /status may never answer).
      const failed = () => {
        const text = fs.readFileSync(this.logFile, "utf8").slice(logStart);
        return /Unable to listen|can not listen/.exec(text)?.[0];
      };
      try {
        await waitForDriver(this.driverUrl, 30_000, failed);
        await waitForDriver(`http://127.0.0.1:${nativePort}`, 10_000, failed);
        return;
      } catch (e) {
        await this.stopDriver();
        fs.appendFileSync(this.logFile, `\n[harness] driver start ${attempt} failed on ports ${port}/${nativePort}: ${e.message}\n`);
        if (attempt === 3) throw e;
      }
    }
  }

  spawnDriver(port, nativePort, extraEnv) {
    const log = fs.openSync(this.logFile, "a");
    const env = {
      ...process.env,
      IRONCLAW_DATA_DIR: this.dataDir,
      IRONCLAW_CONFIG_DIR: this.configDir,
      XDG_DATA_HOME: this.xdgData,
      XDG_CONFIG_HOME: this.xdgConfig,
      XDG_CACHE_HOME: this.xdgCache,
      RUST_LOG: process.env.RUST_LOG ?? "info",
      ...extraEnv,
    };
    // Its own process group, so teardown can end the driver, WebKitWebDriver and the app at once.
    this.driver = spawn(TAURI_DRIVER, ["--port", String(port), "--native-port", String(nativePort)], {
      env,
      detached: true,
      stdio: ["ignore", log, log],
    });
    fs.closeSync(log);
    this.driverUrl = `http://127.0.0.1:${port}`;
  }

  /** Replaces the driver (and so the app's environment) with one that adds `extraEnv`. */
  async restartDriver(extraEnv) {
    await this.quit();
    await this.stopDriver();
    await this.startDriver(extraEnv);
  }

  async stopDriver() {
    if (!this.driver || this.driver.exitCode !== null || this.driver.signalCode !== null) return;
    try {
      process.kill(-this.driver.pid, "SIGTERM");
    } catch {
      // Already gone.
    }
    await Promise.race([once(this.driver, "exit"), sleep(3000)]);
    try {
      process.kill(-this.driver.pid, "SIGKILL");
    } catch {
      // Already gone.
    }
  }

  /** Launches the app (a new WebDriver session) and waits until the UI says it is interactive. */
  async start() {
    this.session = await Session.create(this.driverUrl, {
      browserName: "wry",
      "tauri:options": { application: this.appBin },
    });
    await this.session.waitUntil("the app to be interactive (body[data-ready=true])", () =>
      this.session.execute("return document.body && document.body.dataset.ready === 'true'"),
    );
    return this.session;
  }

  /** Quits the app and launches it again on the same folders. */
  async restart() {
    await this.quit();
    return this.start();
  }

  async quit() {
    if (!this.session) return;
    const s = this.session;
    this.session = null;
    await s.delete();
    // WebKitWebDriver closes the window; wait for the process itself to be gone so the next
    // launch does not share the old one's database handles.
    await waitForNoApp(this.driver.pid, this.appBin);
  }

  /** The workspace folders of conversations as the app lays them out (for host-side checks);
   *  not the warm spare's hidden `.spare-…` folder. */
  workspaces() {
    const dir = path.join(this.dataDir, "workspaces");
    return fs.existsSync(dir) ? visible(fs.readdirSync(dir)).map((name) => path.join(dir, name)) : [];
  }

  /** The folders "Open folder" asked the system file manager to open, in order. */
  openedFolders() {
    return fs.existsSync(this.openedFile) ? fs.readFileSync(this.openedFile, "utf8").split("\n").filter(Boolean) : [];
  }
  /** The `LD_LIBRARY_PATH` each folder handler was started with, "(unset)" when it had none. */
  openedWithLibraryPath() {
    const file = `${this.openedFile}.library-path`;
    return fs.existsSync(file) ? fs.readFileSync(file, "utf8").split("\n").filter(Boolean) : [];
  }


  containers() {
    return listContainers(this.instance);
  }

  /** The executables of the app's processes running under this driver (their `/proc/PID/exe`),
   *  so a caller can check which build it launched. */
  launchedBinaries() {
    const name = path.basename(this.appBin).slice(0, 15);
    return processes()
      .filter((p) => p.comm === name && p.pgid === this.driver?.pid)
      .flatMap((p) => {
        try {
          return [fs.realpathSync(`/proc/${p.pid}/exe`)];
        } catch {
          return [];
        }
      });
  }

  async teardown() {
    if (this.session) {
      try {
        // The last thing the window showed, for whoever reads a failure.
        if (this.screenshots !== false) fs.writeFileSync(this.logFile.replace(/\.log$/, ".png"), await this.session.screenshot());
      } catch {
        // No window to show.
      }
      try {
        await this.session.delete();
      } catch {
        // The app may already be gone; the process group kill below covers it.
      }
      this.session = null;
    }
    await this.stopDriver();
    this.llm?.stop();
    if (this.instance) await removeContainers(this.instance);
    fs.rmSync(this.root, { recursive: true, force: true, maxRetries: 3 });
  }
}

/** This machine's processes as `{ pid, comm, state, ppid, pgid }` (from `/proc/PID/stat`). */
export function processes() {
  return fs.readdirSync("/proc").filter((p) => /^\d+$/.test(p)).flatMap((pid) => {
    try {
      const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      return [{ pid: Number(pid), comm: stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")")), state: fields[0], ppid: Number(fields[1]), pgid: Number(fields[2]) }];
    } catch {
      return [];
    }
  });
}

/** Waits (up to 15 s) until no process of `appBin` is left in the driver's process group. */
async function waitForNoApp(pgid, appBin) {
  const name = path.basename(appBin).slice(0, 15);
  for (let i = 0; i < 150; i++) {
    if (!processes().some((p) => p.comm === name && p.pgid === pgid)) return;
    await sleep(100);
  }
}

/** Scripted replies: the model asks to run `code`, then (after the tool result) says `after`. */
export function runCodeReplies(language, code, { before = [], after = "Done." , id = "call_1"} = {}) {
  return [
    {
      type: "toolCalls",
      text: before,
      calls: [{ id, name: "run_code", argumentChunks: splitInTwo(JSON.stringify({ language, code })) }],
    },
    { type: "text", chunks: [after] },
  ];
}

function splitInTwo(s) {
  const mid = Math.floor(s.length / 2);
  return [s.slice(0, mid), s.slice(mid)];
}

export { testid };
