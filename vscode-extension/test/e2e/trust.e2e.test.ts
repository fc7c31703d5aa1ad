/**
 * Workspace Trust in a real VS Code (code-server + Chromium): the workspace opens in
 * Restricted Mode (trust on, no startup prompt, folder not trusted). Editing works there
 * (the Problems panel lists what `nexa-lsp check` says, hover answers), but there are no
 * run lenses, "Nexa: Execute Agent..." is refused with a message, no tool module is
 * imported and `nexa.runs.providerSettings` never reaches the server (the language
 * server's trace shows `runs.enabled: false` and no provider settings). Then the folder is
 * trusted in the Workspace Trust editor: the server restarts with runs on, the run lenses
 * appear, and one of them runs an agent whose tool module is imported then.
 *
 *   NEXA_CODE_SERVER=... NEXA_E2E_VSIX=... NEXA_LSP_PYTHON=... npm run test:e2e
 */

import { strict as assert } from "node:assert";
import { copyFileSync, existsSync, writeFileSync } from "node:fs";
import { basename, join, resolve } from "node:path";
import { after, before, describe, it } from "node:test";
import type { Page } from "playwright-core";
import { ChromiumBrowser, CodeServer, PROJECT_ROOT, requiredEnv, Screenshots } from "./codeServer";
import { describePids, survivors } from "./processes";
import { byPosition, checkProblems, clickLens, lensTitles, openWorkbench, toast } from "./userSteps";
import { poll, Workbench } from "./workbench";

const CORPUS = resolve(process.env["NEXA_CORPUS"] ?? join(PROJECT_ROOT, "..", "shared", "corpus", "nexa-2.x"));
/** A 2.4-path corpus file with warnings and an agent run (`ResilientAgent.run("...")`). */
const CORPUS_FILE = join(CORPUS, "examples", "v2.0", "03_try_agent.nx");
const FILE = basename(CORPUS_FILE);
const TOOLS_FILE = "lookup_agent.nx";
/** Seen in the trace only if provider settings reach the server. */
const SETTINGS_MARKER = "untrusted-marker-5b1f";

const TOOLS_SOURCE = `nexa 3.0;

tool lookup {
    python: "ws_tools.lookup"
}

agent Finder uses lookup {
    prompt: "Work from evidence.",
    model: "scripted/demo"
}

flow main {
    r = Finder.execute("Who opened the door?")
}
`;

const TOOLS_MODULE = `from pathlib import Path

HERE = Path(__file__).resolve().parent
with open(HERE / "tools_imported.log", "a", encoding="utf-8") as log:
    log.write("imported\\n")


def lookup(**arguments):
    return "evidence: badge 4411 at 02:13"
`;

const SCRIPT = {
  replies: [
    { text: "Looking it up.", tool_calls: [{ id: "call_lookup", name: "lookup", arguments: {} }] },
    { text: "Badge 4411 opened the door." },
  ],
};

/** The `Nexa Language Server` output channel (client lines and the protocol trace). */
function nexaChannel(server: CodeServer): string {
  return server
    .extensionHostLog()
    .split(/^--- /m)
    .filter((part) => /Nexa Language Server\.log\n/.test(part.split("\n", 1)[0] + "\n"))
    .join("\n");
}

/** The JSON value starting at `start` in `text` (an object or array, strings respected). */
function jsonAt(text: string, start: number): unknown {
  let depth = 0;
  let inString = false;
  for (let i = start; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === "\\") i++;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === "{" || c === "[") depth++;
    else if (c === "}" || c === "]") {
      depth--;
      if (depth === 0) return JSON.parse(text.slice(start, i + 1));
    }
  }
  throw new Error(`no complete JSON value at ${start}`);
}

/** The `runs` section of each `initialize` request's initializationOptions in the protocol trace. */
function initializeRuns(channel: string): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  const re = /Sending request 'initialize - \(\d+\)'\.\s*Params: /g;
  for (let m = re.exec(channel); m !== null; m = re.exec(channel)) {
    const params = jsonAt(channel, m.index + m[0].length) as { initializationOptions?: { runs?: Record<string, unknown> } };
    out.push(params.initializationOptions?.runs ?? {});
  }
  return out;
}

describe("Nexa in a real VS Code: Restricted Mode, then trusted", () => {
  const python = requiredEnv("NEXA_LSP_PYTHON");
  const shots = new Screenshots("trust");
  const server = new CodeServer("trust");
  const chromium = new ChromiumBrowser();
  let page: Page;
  let bench: Workbench;

  before(async () => {
    copyFileSync(CORPUS_FILE, join(server.workspace, FILE));
    writeFileSync(join(server.workspace, TOOLS_FILE), TOOLS_SOURCE);
    writeFileSync(join(server.workspace, "ws_tools.py"), TOOLS_MODULE);
    writeFileSync(join(server.workspace, "script.json"), JSON.stringify(SCRIPT));
    writeFileSync(join(server.workspace, "project.nxs"), 'SCRIPT = "script.json"\n');
    const profile = {
      workspaceTrust: true,
      settings: {
        "security.workspace.trust.startupPrompt": "never",
        "security.workspace.trust.banner": "always",
        "nexa.trace.server": "verbose",
        "nexa.runs.providerSettings": { LOOP_BASE_URL: `http://127.0.0.1:9/${SETTINGS_MARKER}` },
      },
    };
    ({ page, bench } = await openWorkbench(server, chromium, profile));
  });

  after(async () => {
    if (page !== undefined) await shots.take(page, "last").catch(() => undefined);
    const left = [...(await chromium.stop()), ...(await server.stop())];
    console.log(`screenshots (${shots.paths.length}) in ${shots.dir}`);
    const stray = survivors();
    server.dispose();
    assert.deepEqual(describePids(left), [], "processes still running after the stop");
    assert.deepEqual(describePids(stray), [], "stray processes after the suite");
  });

  it("opens in Restricted Mode", async () => {
    const items = await poll("the Restricted Mode status item", async () => {
      const texts = await bench.statusItems();
      return texts.some((t) => t.includes("Restricted Mode")) ? texts : undefined;
    });
    assert.ok(items.some((t) => t.includes("Restricted Mode")));
  });

  it("lists the server's diagnostics in the Problems panel and answers hover", async () => {
    await bench.openFile(FILE);
    const expected = checkProblems(python, join(server.workspace, FILE)).sort(byPosition);
    assert.ok(expected.length > 0);
    let seen: unknown[] = [];
    const rows = await poll(`${expected.length} problems`, async () => {
      const r = await bench.problems();
      seen = r;
      return r.length === expected.length ? r : undefined;
    }, 60_000).catch((err: unknown) => {
      throw new Error(`${String(err)}; the Problems panel lists ${JSON.stringify(seen)}; nexa-lsp check says ${JSON.stringify(expected)}`);
    });
    assert.deepEqual(rows.sort(byPosition), expected);
    await shots.take(page, "restricted-problems");
    // Line 15: `        result = ResilientAgent.run("Execute critical task");`
    await bench.goTo(15, 20);
    const text = await bench.hover("agent ResilientAgent");
    await shots.take(page, "restricted-hover");
    assert.match(text, /You are a resilient agent that handles errors gracefully\./);
    await page.keyboard.press("Escape");
  });

  it("shows no run lens, refuses Execute Agent with a message, imports no tool module", async () => {
    await bench.openFile(TOOLS_FILE);
    // The server has the file (its outline answers) before the lenses are judged.
    await poll("the version status from nexa/documentInfo", async () => (await bench.statusItems()).some((t) => /Nexa 3\.0/.test(t)) || undefined, 30_000);
    await new Promise((r) => setTimeout(r, 2000));
    assert.deepEqual((await lensTitles(page)).filter((t) => /Execute/.test(t)), []);
    await bench.command("Nexa: Execute Agent...");
    const message = await toast(page, "runs are disabled");
    assert.match(message, /runs are disabled in an untrusted workspace/);
    await shots.take(page, "restricted-execute-refused");
    assert.ok(!existsSync(join(server.workspace, "tools_imported.log")), "no tool module imported");
    assert.ok(!existsSync(join(server.workspace, ".nexa")), "no run store created");
  });

  it("keeps provider settings away from the server and starts it with runs off", () => {
    const channel = nexaChannel(server);
    const starts = initializeRuns(channel);
    assert.equal(starts.length, 1, "one server start, traced in the channel");
    assert.equal(starts[0]?.["enabled"], false);
    assert.ok(!("providerSettings" in (starts[0] ?? {})), JSON.stringify(starts[0]));
    // Neither in the initialization options nor in any workspace/configuration answer.
    assert.ok(!channel.includes(SETTINGS_MARKER), "providerSettings sent in Restricted Mode");
  });

  it("after trusting the folder, the run lenses appear and a run imports its tool", async () => {
    await page.keyboard.press("Escape");
    await bench.command("Workspaces: Manage Workspace Trust");
    const trust = page.locator(".workspace-trust-editor .monaco-button", { hasText: /^Trust$/ }).first();
    try {
      await trust.waitFor({ state: "visible", timeout: 20_000 });
    } catch (err) {
      const buttons = await page.locator(".workspace-trust-editor .monaco-button").allInnerTexts();
      throw new Error(`${String(err)}; the trust editor's buttons: ${JSON.stringify(buttons)}`);
    }
    await shots.take(page, "trust-editor");
    await trust.click();
    await poll("Restricted Mode gone", async () => !(await bench.statusItems()).some((t) => t.includes("Restricted Mode")) || undefined);
    await shots.take(page, "trusted");
    await bench.command("View: Close Editor");
    await bench.openFile(TOOLS_FILE);
    const titles = await poll("the run lenses", async () => {
      const t = await lensTitles(page);
      return t.some((x) => x.includes("Execute")) ? t : undefined;
    }, 60_000);
    await shots.take(page, "trusted-lenses");
    assert.ok(titles.some((t) => t.includes("Execute…")), JSON.stringify(titles));
    const restarted = initializeRuns(nexaChannel(server)).at(-1) ?? {};
    assert.equal(restarted["enabled"], true, JSON.stringify(restarted));
    assert.deepEqual(restarted["providerSettings"], { LOOP_BASE_URL: `http://127.0.0.1:9/${SETTINGS_MARKER}` }, "providerSettings reach the server once trusted");
    await clickLens(page, "Execute…");
    assert.ok(await bench.answerIfAsked("Who opened the door?"), "Execute… asks for the task");
    await poll("the tool module imported by the run", async () => existsSync(join(server.workspace, "tools_imported.log")) || undefined, 60_000);
    await poll("the run store", async () => existsSync(join(server.workspace, ".nexa", "runs.sqlite3")) || undefined, 30_000);
    await shots.take(page, "trusted-run");
  });
});
