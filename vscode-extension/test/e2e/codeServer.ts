/**
 * A real VS Code for the suite: code-server (VS Code 1.100.3 in a browser)
 * bound to 127.0.0.1 with a fresh user-data and extensions folder, and
 * Debian's Chromium driven by playwright-core.
 *
 * Environment:
 *   NEXA_CODE_SERVER     the code-server executable (scripts/install-code-server.sh prints it)
 *   NEXA_E2E_VSIX        the packaged extension to install
 *   NEXA_E2E_CHROMIUM    the browser (default /usr/bin/chromium)
 *   NEXA_E2E_SCREENSHOTS folder for the step screenshots (default out/e2e-screenshots)
 */

import { execFile } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { chromium, type Browser, type BrowserServer, type Page } from "playwright-core";
import { remember, spawnGroup, stopTree } from "./processes";

// out/test/e2e -> vscode-extension/
export const EXTENSION_ROOT = resolve(__dirname, "..", "..", "..");
export const PROJECT_ROOT = resolve(EXTENSION_ROOT, "..");

export function requiredEnv(name: string): string {
  const value = process.env[name];
  if (value === undefined || value === "") throw new Error(`${name} is not set (see test/e2e/README.md)`);
  return value;
}

/** A free loopback port. */
function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.unref();
    server.on("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => (typeof address === "object" && address !== null ? resolvePort(address.port) : reject(new Error("no port"))));
    });
  });
}

function run(command: string, args: string[], env: NodeJS.ProcessEnv): Promise<string> {
  return new Promise((resolveRun, reject) => {
    execFile(command, args, { env, timeout: 120_000, encoding: "utf8" }, (error, stdout, stderr) => {
      if (error !== null) reject(new Error(`${command} ${args.join(" ")} failed: ${error.message}\n${stdout}\n${stderr}`));
      else resolveRun(stdout);
    });
  });
}

export interface ProfileOptions {
  /** User settings written to settings.json before the start. */
  settings: Record<string, unknown>;
  /** Run without `--disable-workspace-trust` (trust scenarios). */
  workspaceTrust?: boolean;
  /** Extra environment for code-server and everything it starts (e.g. a PATH without nexa_lsp). */
  env?: NodeJS.ProcessEnv;
}

export class CodeServer {
  readonly root: string;
  readonly userDataDir: string;
  readonly extensionsDir: string;
  readonly workspace: string;
  url = "";
  private pid: number | undefined;
  private log = "";

  constructor(readonly name: string) {
    this.root = mkdtempSync(join(tmpdir(), `nexa-e2e-${name}-`));
    this.userDataDir = join(this.root, "user-data");
    this.extensionsDir = join(this.root, "extensions");
    this.workspace = join(this.root, "workspace");
    for (const dir of [this.userDataDir, join(this.userDataDir, "User"), this.extensionsDir, this.workspace]) mkdirSync(dir, { recursive: true });
  }

  private env(extra: NodeJS.ProcessEnv | undefined): NodeJS.ProcessEnv {
    return {
      ...process.env,
      ...extra,
      // Keep code-server's own config and state out of the user's home.
      XDG_CONFIG_HOME: join(this.root, "xdg-config"),
      XDG_DATA_HOME: join(this.root, "xdg-data"),
      XDG_CACHE_HOME: join(this.root, "xdg-cache"),
    };
  }

  private baseArgs(): string[] {
    return ["--config", join(this.root, "config.yaml"), "--user-data-dir", this.userDataDir, "--extensions-dir", this.extensionsDir];
  }

  async installExtension(vsix: string, options: ProfileOptions): Promise<void> {
    await run(requiredEnv("NEXA_CODE_SERVER"), [...this.baseArgs(), "--install-extension", vsix], this.env(options.env));
  }

  async start(options: ProfileOptions): Promise<void> {
    writeFileSync(
      join(this.userDataDir, "User", "settings.json"),
      JSON.stringify(
        {
          "files.autoSave": "off",
          "workbench.startupEditor": "none",
          "workbench.tips.enabled": false,
          "telemetry.telemetryLevel": "off",
          "extensions.autoUpdate": false,
          "extensions.autoCheckUpdates": false,
          "update.mode": "none",
          "editor.minimap.enabled": false,
          ...options.settings,
        },
        null,
        2,
      ),
    );
    const port = await freePort();
    const args = [
      ...this.baseArgs(),
      "--bind-addr",
      `127.0.0.1:${port}`,
      "--auth",
      "none",
      "--disable-telemetry",
      "--disable-update-check",
      ...(options.workspaceTrust === true ? [] : ["--disable-workspace-trust"]),
    ];
    const child = spawnGroup(requiredEnv("NEXA_CODE_SERVER"), args, { env: this.env(options.env), stdio: ["ignore", "pipe", "pipe"] });
    this.pid = child.pid;
    child.stdout?.setEncoding("utf8").on("data", (chunk: string) => (this.log += chunk));
    child.stderr?.setEncoding("utf8").on("data", (chunk: string) => (this.log += chunk));
    const deadline = Date.now() + 60_000;
    while (!this.log.includes("HTTP server listening")) {
      if (child.exitCode !== null) throw new Error(`code-server exited (${child.exitCode}):\n${this.log}`);
      if (Date.now() > deadline) throw new Error(`code-server did not start:\n${this.log}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    this.url = `http://127.0.0.1:${port}/?folder=${encodeURIComponent(this.workspace)}`;
  }

  /** Text of the extension host logs (activation errors, the extension's own channel). */
  extensionHostLog(): string {
    const out: string[] = [];
    const walk = (dir: string): void => {
      let entries: string[];
      try {
        entries = readdirSync(dir);
      } catch {
        return;
      }
      for (const entry of entries) {
        const path = join(dir, entry);
        if (statSync(path).isDirectory()) walk(path);
        else if (path.endsWith(".log") && /exthost|Nexa/.test(path)) out.push(`--- ${path}\n${readFileSync(path, "utf8")}`);
      }
    };
    walk(join(this.userDataDir, "logs"));
    return out.join("\n");
  }

  get serverLog(): string {
    return this.log;
  }

  /** Stops code-server and everything it started (extension host, language server ...). */
  async stop(): Promise<number[]> {
    const left = this.pid !== undefined ? await stopTree(this.pid) : [];
    this.pid = undefined;
    return left;
  }

  dispose(): void {
    rmSync(this.root, { recursive: true, force: true });
  }
}

/** Headless Chromium (Debian's) as a browser server whose pid the suite owns. */
export class ChromiumBrowser {
  private server: BrowserServer | undefined;
  browser: Browser | undefined;

  async launch(): Promise<Browser> {
    this.server = await chromium.launchServer({
      executablePath: process.env["NEXA_E2E_CHROMIUM"] ?? "/usr/bin/chromium",
      headless: true,
      args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--lang=en-US"],
    });
    const pid = this.server.process().pid;
    if (pid !== undefined) remember(pid);
    this.browser = await chromium.connect(this.server.wsEndpoint());
    return this.browser;
  }

  async stop(): Promise<number[]> {
    const pid = this.server?.process().pid;
    try {
      await this.browser?.close();
      await this.server?.close();
    } catch {
      // stopped below by pid
    }
    return pid !== undefined ? stopTree(pid) : [];
  }
}

/** Writes numbered screenshots of the steps and prints where they are. */
export class Screenshots {
  readonly dir: string;
  private n = 0;
  readonly paths: string[] = [];

  constructor(suite: string) {
    this.dir = resolve(process.env["NEXA_E2E_SCREENSHOTS"] ?? join(EXTENSION_ROOT, "out", "e2e-screenshots"), suite);
    rmSync(this.dir, { recursive: true, force: true });
    mkdirSync(this.dir, { recursive: true });
  }

  async take(page: Page, step: string): Promise<string> {
    this.n += 1;
    const path = join(this.dir, `${String(this.n).padStart(2, "0")}-${step}.png`);
    await page.screenshot({ path });
    this.paths.push(path);
    console.log(`screenshot: ${path}`);
    return path;
  }
}
