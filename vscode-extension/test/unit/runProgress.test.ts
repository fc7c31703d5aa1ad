/**
 * src/runProgress.ts against a stand-in `vscode` (its window.withProgress
 * recorded) and a stand-in language client: a run's progress becomes a
 * cancellable notification whose Cancel sends window/workDoneProgress/cancel,
 * any other progress stays in the status bar, and `end` closes it.
 */

import { strict as assert } from "node:assert";
import { after, before, describe, it } from "node:test";
import { createVscodeStub, installVscodeStub } from "./support/vscodeStub";

interface Shown {
  options: { location: number; title?: string; cancellable?: boolean };
  reports: { message?: string; increment?: number }[];
  cancel: () => void;
  closed: boolean;
}

class FakeClient {
  createHandler: ((params: { token: string | number }) => unknown) | undefined;
  readonly progress = new Map<string | number, (value: unknown) => void>();
  readonly sent: { method: string; params: unknown }[] = [];

  onRequest(type: { method: string }, handler: (params: { token: string | number }) => unknown): { dispose(): void } {
    assert.equal(type.method, "window/workDoneProgress/create");
    this.createHandler = handler;
    return { dispose: () => (this.createHandler = undefined) };
  }

  onProgress(_type: unknown, token: string | number, handler: (value: unknown) => void): { dispose(): void } {
    this.progress.set(token, handler);
    return { dispose: () => this.progress.delete(token) };
  }

  sendNotification(type: { method: string }, params: unknown): Promise<void> {
    this.sent.push({ method: type.method, params });
    return Promise.resolve();
  }
}

const tick = (): Promise<void> => new Promise((r) => setImmediate(r));

describe("run progress in VS Code", () => {
  const shown: Shown[] = [];
  let restore: () => void;
  // eslint-disable-next-line @typescript-eslint/consistent-type-imports
  let RunProgress: typeof import("../../src/runProgress").RunProgress;
  let Location: { Window: number; Notification: number };

  before(() => {
    const { module } = createVscodeStub();
    Location = module.ProgressLocation;
    module.window.withProgress = (options: Shown["options"], task: (p: unknown, t: unknown) => Promise<void>) => {
      const listeners: (() => void)[] = [];
      const entry: Shown = { options, reports: [], cancel: () => listeners.forEach((l) => l()), closed: false };
      shown.push(entry);
      const progress = { report: (value: { message?: string; increment?: number }) => entry.reports.push(value) };
      const token = {
        isCancellationRequested: false,
        onCancellationRequested: (l: () => void) => {
          listeners.push(l);
          return { dispose: () => listeners.splice(listeners.indexOf(l), 1) };
        },
      };
      return task(progress, token).then(() => {
        entry.closed = true;
      });
    };
    restore = installVscodeStub(module);
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    RunProgress = (require("../../src/runProgress") as typeof import("../../src/runProgress")).RunProgress;
  });

  after(() => restore());

  it("shows a run's progress as a notification with Cancel, which cancels the progress token", async () => {
    const client = new FakeClient();
    const progress = new RunProgress();
    progress.attach(client as never);
    const token = "nexa-run-0123abcd";
    client.createHandler?.({ token });
    assert.equal(progress.open, 1);
    client.progress.get(token)?.({ kind: "begin", title: "Nexa: Analyst", message: "run_0123abcd running", cancellable: true });
    await tick();
    const entry = shown.at(-1);
    assert.ok(entry !== undefined);
    assert.deepEqual(entry.options, { location: Location.Notification, title: "Nexa: Analyst", cancellable: true });
    client.progress.get(token)?.({ kind: "report", message: "run_0123abcd running · 正在分析" });
    assert.deepEqual(entry.reports, [{ message: "run_0123abcd running" }, { message: "run_0123abcd running · 正在分析" }]);

    entry.cancel();
    assert.deepEqual(client.sent, [{ method: "window/workDoneProgress/cancel", params: { token } }]);
    // The notification stays until the server ends the progress (the run saved as cancelled).
    await tick();
    assert.equal(entry.closed, false);
    client.progress.get(token)?.({ kind: "end", message: "run_0123abcd cancelled" });
    await tick();
    assert.equal(entry.closed, true);
    assert.equal(progress.open, 0);
    assert.equal(client.progress.has(token), false);
    progress.dispose();
    assert.equal(client.createHandler, undefined);
  });

  it("keeps any other progress in the status bar, and closes what is open when the client stops", async () => {
    const client = new FakeClient();
    const progress = new RunProgress();
    progress.attach(client as never);
    client.createHandler?.({ token: 7 });
    client.progress.get(7)?.({ kind: "begin", title: "Indexing", percentage: 10, cancellable: false });
    await tick();
    const entry = shown.at(-1);
    assert.ok(entry !== undefined);
    assert.deepEqual(entry.options, { location: Location.Window, title: "Indexing", cancellable: false });
    client.progress.get(7)?.({ kind: "report", percentage: 40 });
    assert.deepEqual(entry.reports, [{ increment: 10 }, { increment: 30 }]);
    progress.clear();
    await tick();
    assert.equal(entry.closed, true);
    assert.equal(progress.open, 0);
  });

  it("ends a progress that ended before VS Code showed it", async () => {
    const client = new FakeClient();
    const progress = new RunProgress();
    progress.attach(client as never);
    client.createHandler?.({ token: "nexa-run-ff" });
    const before = shown.length;
    client.progress.get("nexa-run-ff")?.({ kind: "end", message: "run_ff completed" });
    client.progress.get("nexa-run-ff")?.({ kind: "begin", title: "late", cancellable: true });
    await tick();
    assert.equal(shown.length, before);
    assert.equal(progress.open, 0);
    progress.dispose();
  });
});
