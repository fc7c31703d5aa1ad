/**
 * A provider key set with "Nexa: Set Provider API Key" in a real VS Code (code-server +
 * Chromium) reaches the provider and nothing else. The test answers the command's quick
 * pick and input boxes with a unique key, points `nexa.runs.provider` at a loopback
 * OpenAI-compatible Chat Completions server it runs itself (`LOOP_BASE_URL` in
 * `nexa.runs.providerSettings`, no key there), and runs the agent from its code lens. The
 * loopback server must see the key as the bearer token of every request, and the key must
 * be in no file under the workspace (the run store and transcripts included), the
 * code-server user-data folder (settings, state, every log and the extension's output
 * channel), the extensions folder, nor in code-server's own output.
 *
 *   NEXA_CODE_SERVER=... NEXA_E2E_VSIX=... npm run test:e2e
 */

import { strict as assert } from "node:assert";
import { existsSync, writeFileSync } from "node:fs";
import { createServer, type IncomingMessage, type Server } from "node:http";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import type { Page } from "playwright-core";
import { ChromiumBrowser, CodeServer, Screenshots } from "./codeServer";
import { describePids, survivors } from "./processes";
import { answerQuickInput, clickLens, commandWithInput, filesContaining, lensTitles, openWorkbench, toast } from "./userSteps";
import { poll, Workbench } from "./workbench";

/** Unique per run, so a hit can only come from this run. */
const KEY = `sk-e2e-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 12)}`;
const FILE = "greeter.nx";
const SOURCE = `nexa 3.0;

agent Greeter {
    prompt: "Greet the user warmly.",
    model: "loop/m1"
}

flow main {
    r = Greeter.execute("Say hello")
}
`;

interface Seen {
  method: string;
  url: string;
  authorization: string | undefined;
  body: string;
}

/** An OpenAI-compatible Chat Completions endpoint on 127.0.0.1: one streamed answer per request. */
class LoopbackProvider {
  readonly requests: Seen[] = [];
  private server: Server | undefined;
  port = 0;

  async start(): Promise<void> {
    this.server = createServer((req: IncomingMessage, res) => {
      let body = "";
      req.setEncoding("utf8");
      req.on("data", (chunk: string) => (body += chunk));
      req.on("end", () => {
        this.requests.push({ method: req.method ?? "", url: req.url ?? "", authorization: req.headers.authorization, body });
        if (req.method !== "POST" || !(req.url ?? "").endsWith("/chat/completions")) {
          res.writeHead(404, { "content-type": "application/json" }).end('{"error": {"message": "not found"}}');
          return;
        }
        const events = [
          { choices: [{ index: 0, delta: { role: "assistant", content: "" } }] },
          { choices: [{ index: 0, delta: { content: "Hello from the loopback." } }] },
          { choices: [{ index: 0, delta: {}, finish_reason: "stop" }] },
          { choices: [], usage: { prompt_tokens: 11, completion_tokens: 4 } },
        ];
        res.writeHead(200, { "content-type": "text/event-stream" });
        for (const event of events) res.write(`data: ${JSON.stringify(event)}\n\n`);
        res.end("data: [DONE]\n\n");
      });
    });
    await new Promise<void>((resolveListen) => this.server?.listen(0, "127.0.0.1", resolveListen));
    const address = this.server.address();
    if (typeof address !== "object" || address === null) throw new Error("the loopback provider has no port");
    this.port = address.port;
  }

  stop(): Promise<void> {
    return new Promise((r) => (this.server !== undefined ? this.server.close(() => r()) : r()));
  }
}

describe("Nexa in a real VS Code: a key set with the command reaches the provider and nowhere else", () => {
  const shots = new Screenshots("keys");
  const server = new CodeServer("keys");
  const chromium = new ChromiumBrowser();
  const provider = new LoopbackProvider();
  let page: Page;
  let bench: Workbench;
  let stopped = false;

  before(async () => {
    await provider.start();
    writeFileSync(join(server.workspace, FILE), SOURCE);
    const profile = {
      settings: {
        "nexa.runs.provider": "loop",
        "nexa.runs.providerSettings": { LOOP_BASE_URL: `http://127.0.0.1:${provider.port}/v1`, LOOP_MAX_RETRIES: "0" },
      },
    };
    ({ page, bench } = await openWorkbench(server, chromium, profile));
  });

  after(async () => {
    if (page !== undefined && !stopped) await shots.take(page, "last").catch(() => undefined);
    const left = [...(await chromium.stop()), ...(await server.stop())];
    await provider.stop();
    console.log(`screenshots (${shots.paths.length}) in ${shots.dir}`);
    const stray = survivors();
    server.dispose();
    assert.deepEqual(describePids(left), [], "processes still running after the stop");
    assert.deepEqual(describePids(stray), [], "stray processes after the suite");
  });

  it("stores the key through Set Provider API Key (quick pick, then input boxes)", async () => {
    await bench.openFile(FILE);
    await poll("the Execute lens", async () => (await lensTitles(page)).some((t) => t.includes("Execute…")) || undefined, 60_000);
    await commandWithInput(page, "Nexa: Set Provider API Key");
    await answerQuickInput(page, { expectTitle: "which provider?", row: "Other provider..." });
    await answerQuickInput(page, { expectTitle: "Provider name", text: "loop" });
    await answerQuickInput(page, { expectTitle: "API key for loop" }); // the proposed name, LOOP_API_KEY
    await answerQuickInput(page, { expectTitle: "LOOP_API_KEY for loop", text: KEY });
    const stored = await toast(page, "is stored in the secret storage");
    assert.match(stored, /LOOP_API_KEY for loop is stored in the secret storage/);
    await shots.take(page, "key-stored");
  });

  it("runs the agent from its lens; the loopback provider sees the key as the bearer token", async () => {
    await bench.focusEditor();
    await clickLens(page, "Execute…");
    // The extension asks for the task, pre-filled with the one the file's flow passes.
    assert.ok(await bench.answerIfAsked("Say hello"), "Execute… asks for the task");
    await poll("a request at the loopback provider", async () => provider.requests.length > 0 || undefined, 60_000);
    const done = await toast(page, "completed", 60_000);
    assert.match(done, /Greeter run \S+ completed/);
    await shots.take(page, "run-completed");
    assert.deepEqual(
      provider.requests.map((r) => [r.method, r.url, r.authorization]),
      [["POST", "/v1/chat/completions", `Bearer ${KEY}`]],
    );
    assert.ok(!provider.requests[0]?.body.includes(KEY), "the key is not in the request body");
    assert.ok(existsSync(join(server.workspace, ".nexa", "runs.sqlite3")), "the run was stored");
  });

  it("shows the run's transcript (written to .nexa/transcripts)", async () => {
    await commandWithInput(page, "Nexa: Show Run Transcript");
    await answerQuickInput(page, { expectTitle: "Show which run?" });
    const tab = await poll("the transcript's editor tab", async () => {
      const text = await page.locator(".tab.active").innerText();
      return text.includes(".md") ? text : undefined;
    });
    assert.match(tab, /run_\w+\.md/);
    await shots.take(page, "transcript");
  });

  it("finds the key in no file of the workspace, store, transcripts, user data, logs, extensions", async () => {
    await shots.take(page, "before-stop");
    stopped = true;
    // Stopped first, so every log and state file is flushed.
    const left = [...(await chromium.stop()), ...(await server.stop())];
    assert.deepEqual(describePids(left), []);
    const transcripts = join(server.workspace, ".nexa", "transcripts");
    assert.ok(existsSync(transcripts), "the run wrote its transcript");
    // The extension's output channel is among the files scanned (it logged the secret request by name).
    const channel = filesContaining(join(server.userDataDir, "logs"), "nexa/providerSecret loop/LOOP_API_KEY: answered");
    assert.ok(channel.hits.some((p) => p.endsWith("Nexa Language Server.log")), `output channel: ${JSON.stringify(channel.hits)}`);
    // The search finds what is there: the provider's address is in settings.json.
    const address = filesContaining(server.root, `127.0.0.1:${provider.port}`);
    assert.ok(address.hits.some((p) => p.endsWith(join("User", "settings.json"))), `address found in ${JSON.stringify(address.hits)}`);
    const found = filesContaining(server.root, KEY);
    console.log(`scanned ${found.scanned} files under ${server.root}`);
    assert.ok(found.scanned > 50, `only ${found.scanned} files scanned`);
    assert.deepEqual(found.hits, [], "files holding the key");
    assert.ok(!server.serverLog.includes(KEY), "the key is in code-server's output");
  });
});
