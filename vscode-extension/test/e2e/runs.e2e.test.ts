/**
 * Agent runs in a real VS Code (code-server + Chromium), the extension installed
 * from the .vsix alone. The workspace holds a copy of the shipped examples/runs
 * folder, as shipped (offline: its demo.nxs selects the scripted provider's
 * replies), and a `slow/` folder made here: an agent whose provider is an
 * OpenAI-compatible server on loopback that streams one word every 300 ms.
 *
 * Steps, as a user does them: Execute the Analyst from its lens, approve its
 * tool call from the notification, see it complete, Continue, see it complete,
 * open the transcript from the status lens and the Run panel; execute again and
 * approve from the Run panel; then execute the slow agent, watch its text stream
 * in the Run panel and cancel it from the progress notification's Cancel button.
 *
 *   NEXA_CODE_SERVER=... NEXA_E2E_VSIX=... npm run test:e2e
 */

import { strict as assert } from "node:assert";
import { cpSync, mkdirSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import type { Page } from "playwright-core";
import { ChromiumBrowser, CodeServer, PROJECT_ROOT, Screenshots } from "./codeServer";
import { describePids, survivors } from "./processes";
import { openWorkbench } from "./userSteps";
import { poll, Workbench } from "./workbench";

const CLEAN_PATH = process.env["NEXA_E2E_CLEAN_PATH"] ?? "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

const SLOW_AGENT = `nexa 3.0;

agent Slow {
    role: "Storyteller",
    prompt: "Tell the story slowly."
}

flow main {
    r = Slow.execute("Tell a long story");
}
`;

/** An OpenAI-compatible Chat Completions endpoint that streams a word every 300 ms (for 2 min). */
function slowProvider(): Promise<{ server: Server; port: number; requests: () => number; aborted: () => number }> {
  let requests = 0;
  let aborted = 0;
  const server = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      requests += 1;
      res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
      let n = 0;
      const timer = setInterval(() => {
        n += 1;
        if (n > 400) {
          res.write(`data: ${JSON.stringify({ choices: [{ delta: {}, finish_reason: "stop" }], usage: { prompt_tokens: 5, completion_tokens: n } })}\n\n`);
          res.end("data: [DONE]\n\n");
          clearInterval(timer);
          return;
        }
        res.write(`data: ${JSON.stringify({ choices: [{ delta: { content: `word${n} ` } }] })}\n\n`);
      }, 300);
      // The client went away (the run was cancelled): stop streaming.
      res.on("close", () => {
        if (!res.writableEnded) aborted += 1;
        clearInterval(timer);
      });
    });
  });
  return new Promise((resolve) => {
    server.listen(0, "127.0.0.1", () => resolve({ server, port: (server.address() as AddressInfo).port, requests: () => requests, aborted: () => aborted }));
  });
}

/** The short id of a completed run in the lenses (not `except`). */
function completedRun(lenses: string[], except = ""): string | undefined {
  for (const lens of lenses) {
    const id = /(run_[0-9a-f]{8}) completed/.exec(lens)?.[1];
    if (id !== undefined && id !== except) return id;
  }
  return undefined;
}

/** Closes every editor (Ctrl+K Ctrl+W), then opens `name` with Quick Open. */
async function reopen(bench: Workbench, name: string, shots: Screenshots): Promise<void> {
  await bench.focusEditor().catch(() => undefined);
  await bench.page.keyboard.press("Control+K");
  await bench.page.keyboard.press("Control+W");
  try {
    await poll("no editor open", async () => (await bench.page.locator(".tab").count()) === 0, 10_000);
    await bench.openFileFocused(name);
  } catch (err) {
    await shots.take(bench.page, `opening-${name}-failed`);
    throw new Error(`${String(err)}; tabs: ${JSON.stringify(await bench.page.locator(".tab").allInnerTexts())}`);
  }
}

describe("Nexa in a real VS Code: runs from the lenses, approval, Continue, transcript, Run panel, cancel", () => {
  const shots = new Screenshots("runs");
  const server = new CodeServer("runs");
  const chromium = new ChromiumBrowser();
  let provider: Awaited<ReturnType<typeof slowProvider>>;
  let page: Page;
  let bench: Workbench;
  let firstRun = "";
  let secondRun = "";

  before(async () => {
    cpSync(join(PROJECT_ROOT, "examples", "runs"), join(server.workspace, "runs"), { recursive: true });
    provider = await slowProvider();
    const slow = join(server.workspace, "slow");
    mkdirSync(slow);
    writeFileSync(join(slow, "slow.nx"), SLOW_AGENT);
    writeFileSync(
      join(slow, "loopback.nxs"),
      `PROVIDER = "loopback"\nLOOPBACK_BASE_URL = "http://127.0.0.1:${provider.port}/v1"\nLOOPBACK_API_KEY = "test-key"\nMODEL = "slow-model"\n`,
    );
    const profile = { settings: {}, env: { PATH: CLEAN_PATH } };
    ({ page, bench } = await openWorkbench(server, chromium, profile));
  });

  after(async () => {
    if (page !== undefined) await shots.take(page, "last").catch(() => undefined);
    const left = [...(await chromium.stop()), ...(await server.stop())];
    await new Promise((r) => provider?.server.close(r));
    console.log(`screenshots (${shots.paths.length}) in ${shots.dir}`);
    const stray = survivors();
    if (process.env["NEXA_E2E_DEBUG"]) console.log(`extension logs:\n${server.extensionHostLog()}`);
    server.dispose();
    assert.deepEqual(describePids(left), [], "processes still running after the stop");
    assert.deepEqual(describePids(stray), [], "stray processes after the suite");
  });

  it("executes the shipped demo from its lens; its tool call waits for approval", async () => {
    await bench.openFile("analyst.nx");
    await bench.clickLens(/Execute/);
    // The lens runs the task the file's flow passes (a client that prompts is asked, pre-filled with it).
    await bench.answerIfAsked("Analyze the evidence");
    const toast = await bench.notification(/asks to run publish_report/, 60_000);
    await shots.take(page, "approval-notification");
    assert.match(toast, /Approve it\?/);
  });

  it("approves from the notification; the run completes", async () => {
    await bench.clickNotificationButton(/asks to run publish_report/, "Approve");
    firstRun = await poll("a completed run in the lenses", async () => completedRun(await bench.lenses()), 60_000);
    await shots.take(page, "completed");
    assert.ok((await bench.lenses()).some((l) => /Continue/.test(l)), `lenses: ${JSON.stringify(await bench.lenses())}`);
  });

  it("continues the finished run from its lens; the next turn completes", async () => {
    await bench.clickLens(/Continue/);
    await bench.answerIfAsked("Summarize the conclusion");
    secondRun = await poll("the continuation completed in the lenses", async () => completedRun(await bench.lenses(), firstRun), 60_000);
    await shots.take(page, "continued-completed");
    assert.notEqual(secondRun, firstRun);
  });

  it("opens the transcript from the status lens", async () => {
    await bench.clickLens(new RegExp(`${secondRun} completed`));
    await poll("the transcript tab", async () => (await page.locator(".tab.active").innerText()).includes(".md"), 30_000);
    const text = await poll("the transcript text", async () => {
      const t = (await page.locator(".editor-group-container.active .view-lines").innerText()).replace(/\u00a0/g, " ");
      return t.includes(`# Run ${secondRun}`) ? t : undefined;
    });
    await shots.take(page, "transcript");
    assert.match(text, /- agent: Analyst/);
    assert.match(text, /- status: completed/);
    assert.match(text, new RegExp(`- parent run: ${firstRun}`));
  });

  it("shows the runs in the Run panel: the session chain, the approved tool call, usage", async () => {
    await bench.commandThenPick("Nexa: Show Run Panel", secondRun);
    const panel = bench.webview();
    await panel.locator("#run-status").waitFor({ timeout: 30_000 });
    assert.equal(await panel.locator("#run-status").innerText(), "completed");
    const chain = await panel.locator(".chain li").allInnerTexts();
    assert.equal(chain.length, 2, `chain: ${JSON.stringify(chain)}`);
    assert.match(chain[0] ?? "", /Analyze the evidence/);
    assert.match(chain[1] ?? "", /Summarize the conclusion/);
    assert.match(await panel.locator("#usage-tool-calls").innerText(), /^0 \/ 5/);
    assert.match(await panel.locator("#run-output").innerText(), /Conclusion: the holder of badge 4411/);
    await shots.take(page, "run-panel-continuation");
    // The first run, from the chain: its tool calls with arguments, results and approval.
    await panel.locator(`.chain button[data-action="open"]`).first().click();
    await poll("the first run in the panel", async () => (await panel.locator("h1 .run-id").innerText()).startsWith(firstRun), 20_000);
    const calls = await panel.locator(".tool-call").allInnerTexts();
    assert.equal(calls.length, 2, `tool calls: ${JSON.stringify(calls)}`);
    assert.match(calls[0] ?? "", /lookup_evidence[\s\S]*completed[\s\S]*"case": "case-7"[\s\S]*Badge 4411/);
    assert.match(calls[1] ?? "", /publish_report[\s\S]*completed[\s\S]*"title": "Case 7"[\s\S]*approved/);
    assert.match(await panel.locator("#usage-tool-calls").innerText(), /^2 \/ 5 \(3 left\)/);
    await shots.take(page, "run-panel-first-run");
  });

  it("approves a waiting tool call from the Run panel's Approve button; the panel follows the run to completed", async () => {
    await reopen(bench, "analyst.nx", shots);
    await bench.clickLens(/Execute/);
    await bench.answerIfAsked("Analyze the evidence");
    const waiting = await poll("a run waiting for approval in the lenses", async () => /(run_[0-9a-f]{8}) waiting/.exec((await bench.lenses()).join("\n"))?.[1], 60_000);
    await bench.commandThenPick("Nexa: Show Run Panel", waiting);
    const panel = bench.webview();
    await poll("the waiting run in the panel", async () => (await panel.locator("#run-status").innerText()) === "waiting for approval", 30_000);
    const approve = panel.locator('.tool-call button[data-action="approve"][data-call-id="call_publish"]');
    assert.equal(await approve.count(), 1);
    assert.equal(await panel.locator('.tool-call button[data-action="deny"][data-call-id="call_publish"]').count(), 1);
    await shots.take(page, "run-panel-waiting");
    await approve.click();
    await poll("the panel says completed", async () => (await panel.locator("#run-status").innerText()) === "completed", 60_000);
    assert.match(await panel.locator(".tool-call").last().innerText(), /publish_report[\s\S]*approved/);
    assert.equal(await panel.locator("button[data-action=\"approve\"]").count(), 0);
    await shots.take(page, "run-panel-approved-completed");
  });

  it("cancels a slow run from the progress notification's Cancel button", async () => {
    await reopen(bench, "slow.nx", shots);
    await bench.clickLens(/Execute/);
    await bench.answerIfAsked("Tell a long story");
    // The progress notification streams the text as it arrives.
    const progress = await bench.notification(/Nexa: Slow[\s\S]*word\d+/, 60_000);
    await shots.take(page, "slow-run-progress");
    assert.match(progress, /running/);
    assert.equal(provider.requests(), 1);
    // The Run panel streams the text as it arrives.
    const slowRun = /(run_[0-9a-f]{8}) running/.exec((await bench.lenses()).join("\n"))?.[1];
    assert.ok(slowRun !== undefined, `lenses: ${JSON.stringify(await bench.lenses())}`);
    await bench.commandThenPick("Nexa: Show Run Panel", slowRun);
    const panel = bench.webview();
    const words = async (): Promise<number> => Math.max(0, ...[...((await panel.locator("#streaming").innerText()).matchAll(/word(\d+)/g))].map((m) => Number(m[1])));
    const before = await poll("streamed words in the Run panel", async () => ((await words()) > 0 ? words() : undefined), 20_000);
    await poll("more words in the Run panel", async () => (await words()) >= before + 2, 20_000);
    assert.equal(await panel.locator("#run-status").innerText(), "running");
    await shots.take(page, "slow-run-panel-streaming");
    await bench.clickNotificationButton(/Nexa: Slow/, "Cancel");
    await poll("the panel says cancelled", async () => (await panel.locator("#run-status").innerText()) === "cancelled", 30_000);
    await shots.take(page, "slow-run-panel-cancelled");
    // The model's answer was cut off: the provider saw its stream closed before the end.
    await poll("the provider's stream closed", async () => provider.aborted() === 1, 15_000);
    await reopen(bench, "slow.nx", shots);
    const lens = await poll("the cancelled run in the lenses", async () => (await bench.lenses()).find((l) => /run_[0-9a-f]{8} cancelled/.test(l)), 30_000);
    await shots.take(page, "slow-run-cancelled");
    assert.match(lens, new RegExp(`${slowRun} cancelled`));
    // The progress notification is gone with the run.
    await poll("no progress notification", async () => !(await bench.notificationTexts()).some((t) => /Nexa: Slow[\s\S]*word\d+/.test(t)), 15_000);
  });
});
