/**
 * The extension in a real VS Code (code-server + Chromium), installed from
 * the .vsix alone into a clean profile: no setting, and a PATH whose python3
 * has no nexa_lsp (checked first), so the server that answers is the one
 * bundled in the .vsix. A corpus file opened in a workspace copy is coloured,
 * in language mode "Nexa", its diagnostics are listed in the Problems panel
 * exactly as `nexa-lsp check` reports them, hover and completion after
 * `Agent.` answer.
 *
 *   NEXA_CODE_SERVER=... NEXA_E2E_VSIX=... NEXA_LSP_PYTHON=... npm run test:e2e
 */

import { strict as assert } from "node:assert";
import { spawnSync } from "node:child_process";
import { copyFileSync } from "node:fs";
import { basename, join, resolve } from "node:path";
import { after, before, describe, it } from "node:test";
import type { Page } from "playwright-core";
import { ChromiumBrowser, CodeServer, PROJECT_ROOT, requiredEnv, Screenshots } from "./codeServer";
import { describePids, survivors } from "./processes";
import { byPosition, checkProblems, openWorkbench } from "./userSteps";
import { poll, Workbench } from "./workbench";

const CORPUS = resolve(process.env["NEXA_CORPUS"] ?? join(PROJECT_ROOT, "..", "shared", "corpus", "nexa-2.x"));
/** A 2.4-path corpus file with warnings, an agent, a flow and Chinese text in a comment. */
const CORPUS_FILE = join(CORPUS, "examples", "v2.0", "03_try_agent.nx");
const FILE = basename(CORPUS_FILE);

/** PATH for the clean profile: the system's directories only (no venv, no pyenv shims). */
const CLEAN_PATH = process.env["NEXA_E2E_CLEAN_PATH"] ?? "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

/** The python3 on the clean PATH must be 3.11+ and must not have nexa_lsp installed. */
function assertCleanPython(): string {
  const env = { PATH: CLEAN_PATH, HOME: process.env["HOME"] ?? "/tmp" };
  const version = spawnSync("python3", ["-c", "import sys; print('%d.%d' % sys.version_info[:2])"], { env, encoding: "utf8" });
  assert.equal(version.status, 0, `python3 on ${CLEAN_PATH}: ${version.stderr}`);
  const [major, minor] = version.stdout.trim().split(".").map(Number);
  assert.ok((major ?? 0) === 3 && (minor ?? 0) >= 11, `python3 on the clean PATH is ${version.stdout.trim()}`);
  const imported = spawnSync("python3", ["-c", "import nexa_lsp"], { env, encoding: "utf8" });
  assert.notEqual(imported.status, 0, "nexa_lsp must not be importable by the clean profile's python3");
  return version.stdout.trim();
}

describe("Nexa in a real VS Code: only the .vsix installed, editing a corpus file", () => {
  const python = requiredEnv("NEXA_LSP_PYTHON");
  const shots = new Screenshots("editing");
  const server = new CodeServer("editing");
  const chromium = new ChromiumBrowser();
  let page: Page;
  let bench: Workbench;

  before(async () => {
    console.log(`clean profile: PATH=${CLEAN_PATH}, python3 ${assertCleanPython()} without nexa_lsp`);
    copyFileSync(CORPUS_FILE, join(server.workspace, FILE));
    const profile = { settings: {}, env: { PATH: CLEAN_PATH } };
    ({ page, bench } = await openWorkbench(server, chromium, profile));
  });

  after(async () => {
    if (page !== undefined) await shots.take(page, "last").catch(() => undefined);
    const left = [...(await chromium.stop()), ...(await server.stop())];
    console.log(`screenshots (${shots.paths.length}) in ${shots.dir}`);
    const stray = survivors();
    const log = server.extensionHostLog();
    if (!/bundled\/tool\/launch_server\.py/.test(log)) console.log(`extension logs:\n${log}`);
    server.dispose();
    assert.deepEqual(describePids(left), [], "processes still running after the stop");
    assert.deepEqual(describePids(stray), [], "stray processes after the suite");
  });

  it("starts the bundled server with the python3 on PATH", async () => {
    await bench.openFile(FILE);
    const log = await poll("the server start in the Nexa output", async () => {
      const text = server.extensionHostLog();
      return /starting: .*bundled\/tool\/launch_server\.py/.test(text) ? text : undefined;
    }, 60_000);
    assert.match(log, /starting: python3 \S*bundled\/tool\/launch_server\.py/);
  });

  it("opens the file coloured, in language mode Nexa", async () => {
    await bench.openFile(FILE);
    const mode = await poll("language mode Nexa", async () => {
      const text = await bench.statusText("status.editor.mode");
      return text.includes("Nexa") ? text : undefined;
    });
    assert.match(mode, /Nexa/);
    const tokens = await poll("coloured tokens", async () => {
      const t = await bench.tokenClasses();
      return t.get("agent") !== undefined && t.get("agent") !== t.get("ResilientAgent") ? t : undefined;
    });
    // Keyword, declared name, string and comment each have their own colour.
    const classes = new Set(["agent", "ResilientAgent", '"You are a resilient agent that handles errors gracefully."', "prompt"].map((t) => tokens.get(t)));
    assert.ok(classes.size >= 3, `distinct token colours: ${JSON.stringify([...tokens.entries()].slice(0, 20))}`);
    await shots.take(page, "opened-coloured");
  });

  it("lists the server's diagnostics in the Problems panel, as nexa-lsp check does", async () => {
    const expected = checkProblems(python, join(server.workspace, FILE)).sort(byPosition);
    assert.ok(expected.length > 0, "the corpus file has diagnostics above hint level");
    let seen: unknown[] = [];
    const rows = await poll(`${expected.length} problems`, async () => {
      const r = await bench.problems();
      seen = r;
      return r.length === expected.length ? r : undefined;
    }, 60_000).catch((err: unknown) => {
      throw new Error(`${String(err)}; the Problems panel lists ${JSON.stringify(seen)}; nexa-lsp check says ${JSON.stringify(expected)}`);
    });
    await shots.take(page, "problems");
    assert.deepEqual(rows.sort(byPosition), expected);
  });

  it("hovers an agent use", async () => {
    // Line 15: `        result = ResilientAgent.run("Execute critical task");`
    await bench.goTo(15, 20);
    const text = await bench.hover("agent ResilientAgent");
    await shots.take(page, "hover");
    assert.match(text, /agent ResilientAgent/);
    assert.match(text, /You are a resilient agent that handles errors gracefully\./);
    await page.keyboard.press("Escape");
  });

  it("completes the members after `Agent.`", async () => {
    await bench.goTo(16, 22);
    await page.keyboard.press("End");
    await page.keyboard.press("Enter");
    await page.keyboard.type("ResilientAgent.", { delay: 30 });
    const labels = await bench.suggestions();
    await shots.take(page, "completion");
    assert.ok(labels.some((l) => /^run\b/.test(l)), `suggestions: ${JSON.stringify(labels)}`);
    await page.keyboard.press("Escape");
  });
});
