/**
 * Activates the bundled-from-source extension against a stand-in `vscode`
 * module and a fake language server (test/fixtures/fake-server.js), and drives
 * its commands the way a user would: this checks the wiring that the logic
 * tests cannot (command registration, the language client, middleware,
 * runs view, status bar, workspace trust).
 */

import { strict as assert } from "node:assert";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { after, before, describe, it } from "node:test";
import { CLIENT_COMMANDS, SERVER_COMMANDS } from "../../src/logic/constants";
import { createContext, createVscodeStub, installVscodeStub, Selection, StubDocument, Uri, type StubState } from "./support/vscodeStub";

const ROOT = resolve(__dirname, "..", "..", "..");
const FAKE_SERVER = join(ROOT, "test", "fixtures", "fake-server.js");

interface LogEntry {
  event: string;
  command?: string;
  arguments?: Record<string, unknown>[];
  initializationOptions?: { runs?: { enabled?: boolean } };
  answer?: { runs?: { enabled?: boolean } }[];
  settings?: { nexa?: { runs?: { enabled?: boolean } } } | null;
}

async function waitFor<T>(what: string, probe: () => T | undefined | false, timeoutMs = 15_000): Promise<T> {
  const start = Date.now();
  for (;;) {
    const value = probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() - start > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Tells the listeners (the language client among them) that the document changed. */
function edited(stub: StubState, document: StubDocument): void {
  stub.emitters.changeText.fire({ document, contentChanges: [{ text: document.getText() }] });
}

const SOURCE = [
  "// two agents, no version declaration",
  "agent Analyst uses delete_file {",
  '    prompt: "Analyse"',
  "}",
  "",
  "agent Writer {",
  '    prompt: "Write"',
  "}",
  "",
].join("\n");

type TestContext = ReturnType<typeof createContext>;

interface ExtensionModule {
  activate(context: TestContext): void;
  deactivate(): Promise<void>;
}

/** Loads the extension afresh, so it binds to the `vscode` stub installed now. */
function loadExtension(): ExtensionModule {
  const fresh = [join(ROOT, "out", "src"), join(ROOT, "node_modules", "vscode-languageclient")];
  for (const key of Object.keys(require.cache)) {
    if (fresh.some((prefix) => key.startsWith(prefix))) delete require.cache[key];
  }
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return require(join(ROOT, "out", "src", "extension")) as ExtensionModule;
}

describe("extension activation against a fake server", { skip: process.platform === "win32" && "needs a POSIX shell wrapper" }, () => {
  const dir = mkdtempSync(join(tmpdir(), "nexa-ext-"));
  const logFile = join(dir, "server.log");
  const wrapper = join(dir, "python");
  const { module: vscode, state } = createVscodeStub();
  let restore: () => void = () => undefined;
  let ext: ExtensionModule;
  let context: TestContext = createContext(state, ROOT);
  const doc = new StubDocument(Uri.file("/workspace/app.nx"), "nexa", SOURCE);
  const docUri = doc.uri.toString();

  const log = (): LogEntry[] =>
    existsSync(logFile)
      ? readFileSync(logFile, "utf8")
          .split("\n")
          .filter((l) => l !== "")
          .map((l) => JSON.parse(l) as LogEntry)
      : [];
  const commandsSent = (command: string): LogEntry[] => log().filter((e) => e.event === "executeCommand" && e.command === command);
  const runsTree = (s: StubState): { getChildren(n?: unknown): unknown[] } => {
    const tv = s.treeViews.get("nexaRuns");
    assert.ok(tv, "the Nexa Runs view is created");
    return tv.provider as { getChildren(n?: unknown): unknown[] };
  };

  before(async () => {
    writeFileSync(wrapper, `#!/bin/sh\nexec "${process.execPath}" "${FAKE_SERVER}" "$@"\n`);
    chmodSync(wrapper, 0o755);
    process.env["FAKE_NEXA_LOG"] = logFile;
    state.workspaceFolder = dir;
    state.settings.set("nexa.server.pythonPath", wrapper);
    state.settings.set("user:nexa.server.pythonPath", wrapper);
    // This suite checks the `-m nexa_lsp` start; the bundled one is checked below.
    state.settings.set("nexa.server.importStrategy", "fromEnvironment");
    state.settings.set("user:nexa.server.importStrategy", "fromEnvironment");
    state.documents.push(doc);
    state.activeEditor = { document: doc, selection: new Selection(6, 0, 6, 0) };
    restore = installVscodeStub(vscode);
    ext = loadExtension();
    ext.activate(context);
    await waitFor("the runs view to fill from nexa.listRuns", () => runsTree(state).getChildren().length === 2);
  });

  after(async () => {
    await ext.deactivate();
    for (const d of context.subscriptions) d.dispose();
    restore();
    delete process.env["FAKE_NEXA_LOG"];
    rmSync(dir, { recursive: true, force: true });
  });

  it("starts the server as <python> -m nexa_lsp with section nexa as initializationOptions", () => {
    const argv = log().find((e) => e.event === "argv") as unknown as { args: string[] };
    assert.deepEqual(argv.args, ["-m", "nexa_lsp"]);
    const init = log().find((e) => e.event === "initialize")?.initializationOptions as Record<string, unknown> | undefined;
    assert.deepEqual(init?.["runs"], { enabled: true, store: ".nexa/runs.sqlite3", provider: "", providerSettings: {}, toolModules: [] });
    assert.deepEqual(init?.["diagnostics"], { migrationHints: true, debounceMs: 150 });
    assert.ok(log().some((e) => e.event === "didOpen"), "the open Nexa document is sent");
  });

  it("answers workspace/configuration for section nexa with VS Code's own answer", async () => {
    const conf = await waitFor("the configuration answer", () => log().find((e) => e.event === "configuration"));
    const answer = conf.answer?.[0] as Record<string, unknown>;
    assert.deepEqual(answer["runs"], { enabled: true, store: ".nexa/runs.sqlite3", provider: "", providerSettings: {}, toolModules: [] });
    assert.deepEqual(answer["diagnostics"], { migrationHints: true, debounceMs: 150 });
  });

  it("registers every client command and, through the client, the server's commands", () => {
    for (const id of Object.values(CLIENT_COMMANDS)) assert.ok(state.commands.has(id), id);
    for (const id of Object.values(SERVER_COMMANDS)) assert.ok(state.commands.has(id), id);
    assert.equal(state.context.get("nexa.extensionActive"), true);
  });

  it("shows what nexa/documentInfo says in the status bar and updates it on edits", async () => {
    const item = await waitFor("the version item", () => state.statusItems.find((i) => i.command === CLIENT_COMMANDS.versionStatusClicked && i.visible));
    await waitFor("the 2.4 path", () => item.text === "Nexa 2.4 (compatibility)");
    assert.ok(log().some((e) => e.event === "documentInfo" && (e as { uri?: string }).uri === docUri), "the server was asked");
    await waitFor("the migrate context key", () => state.context.get("nexa.activeFileCanMigrate") === true);
    doc.setText(`nexa 3.0;\n${SOURCE}`);
    edited(state, doc);
    await waitFor("the 3.0 path", () => item.text === "Nexa 3.0");
    assert.equal(state.context.get("nexa.activeFileCanMigrate"), false);
    doc.setText(SOURCE);
    edited(state, doc);
    await waitFor("the 2.4 path again", () => item.text === "Nexa 2.4 (compatibility)");
  });

  it("a blocked file says it is blocked and why; clicking goes to a blocker, never offers to migrate", async () => {
    const item = state.statusItems.find((i) => i.command === CLIENT_COMMANDS.versionStatusClicked);
    assert.ok(item);
    doc.setText(`${SOURCE}// BLOCKED\n`);
    edited(state, doc);
    await waitFor("the blocked status", () => item.text === "Nexa 2.4 (migration blocked)");
    const tooltip = (item.tooltip as { value?: string }).value ?? "";
    assert.match(tooltip, /NXM002 at 5:3: history shared between runs/);
    assert.equal(state.context.get("nexa.activeFileCanMigrate"), false);
    const migrations = commandsSent("nexa.migrateFile").length;
    const offered: string[][] = [];
    state.messageAnswer = (_text, items) => {
      offered.push(items);
      return undefined;
    };
    state.quickPickAnswers.push("NXM002");
    await vscode.commands.executeCommand(CLIENT_COMMANDS.versionStatusClicked);
    state.messageAnswer = () => undefined;
    const shown = state.shownDocuments.at(-1) as { uri: string; options: { selection?: { start: { line: number } } } } | undefined;
    assert.equal(shown?.uri, docUri);
    assert.equal(shown?.options.selection?.start.line, 4);
    assert.deepEqual(offered, [], "no migration offered");
    assert.equal(commandsSent("nexa.migrateFile").length, migrations);
    doc.setText(SOURCE);
    edited(state, doc);
    await waitFor("the 2.4 path again", () => item.text === "Nexa 2.4 (compatibility)");
  });

  it("Execute Agent picks an agent, asks for the task and sends nexa.execute", async () => {
    state.quickPickAnswers.push("Writer");
    state.inputAnswers.push("write a poem");
    await vscode.commands.executeCommand(CLIENT_COMMANDS.executeAgent);
    const sent = await waitFor("nexa.execute", () => commandsSent("nexa.execute")[0]);
    assert.deepEqual(sent.arguments, [{ uri: docUri, agent: "Writer", task: "write a poem" }]);
    assert.ok(state.messages.some((m) => m.level === "info" && /Writer: started run run_new \(running\)/.test(m.text)));
  });

  it("Execute pre-fills the task with the file's own task literal (from documentInfo)", async () => {
    state.quickPickAnswers.push("Analyst");
    state.inputAnswers.push("Summarise the report");
    await vscode.commands.executeCommand(CLIENT_COMMANDS.executeAgent);
    const box = state.inputBoxes.at(-1);
    assert.equal(box?.value, "Summarise the report");
    assert.match(box?.prompt ?? "", /Check the figures/);
    const sent = await waitFor("nexa.execute", () => commandsSent("nexa.execute").find((e) => e.arguments?.[0]?.["agent"] === "Analyst"));
    assert.deepEqual(sent.arguments, [{ uri: docUri, agent: "Analyst", task: "Summarise the report" }]);
  });

  it("the runs view refreshes once per run change (nexa/runsChanged), not once more per command", async () => {
    await new Promise((r) => setTimeout(r, 600));
    const before = commandsSent("nexa.listRuns").length;
    state.quickPickAnswers.push("Writer");
    state.inputAnswers.push("once");
    await vscode.commands.executeCommand(CLIENT_COMMANDS.executeAgent);
    await waitFor("the refresh", () => commandsSent("nexa.listRuns").length > before);
    await new Promise((r) => setTimeout(r, 800));
    assert.equal(commandsSent("nexa.listRuns").length, before + 1);
  });

  it("a cancelled input box sends nothing", async () => {
    const before = commandsSent("nexa.execute").length;
    state.quickPickAnswers.push("Analyst");
    state.inputAnswers.push(undefined);
    await vscode.commands.executeCommand(CLIENT_COMMANDS.executeAgent);
    assert.equal(commandsSent("nexa.execute").length, before);
  });

  it("a server lens command without a task asks for it (middleware)", async () => {
    state.inputAnswers.push("from the lens");
    await vscode.commands.executeCommand("nexa.execute", { uri: docUri, agent: "Analyst" });
    const sent = await waitFor("nexa.execute from the lens", () => commandsSent("nexa.execute").find((e) => e.arguments?.[0]?.["task"] === "from the lens"));
    assert.deepEqual(sent.arguments, [{ uri: docUri, agent: "Analyst", task: "from the lens" }]);
  });

  it("runs view: sessions, runs, tool calls and their context values", () => {
    const tree = runsTree(state) as unknown as {
      getChildren(n?: unknown): { kind: string }[];
      getTreeItem(n: unknown): { label: string; contextValue: string; iconPath: { id: string } };
    };
    const [sessionA, sessionB] = tree.getChildren();
    assert.ok(sessionA && sessionB);
    assert.equal(tree.getTreeItem(sessionA).label, "Analyst");
    const [waiting] = tree.getChildren(sessionA);
    assert.ok(waiting);
    const item = tree.getTreeItem(waiting);
    assert.equal(item.contextValue, "nexaRun|approve|deny|cancel|show|");
    assert.equal(item.iconPath.id, "question");
    const [call] = tree.getChildren(waiting);
    assert.ok(call);
    assert.equal(tree.getTreeItem(call).contextValue, "nexaCall|approve|deny|");
  });

  it("context-menu actions on tree nodes send the documented arguments", async () => {
    const tree = runsTree(state) as unknown as { getChildren(n?: unknown): unknown[] };
    const [sessionA, sessionB] = tree.getChildren();
    const [waiting] = tree.getChildren(sessionA);
    const [call] = tree.getChildren(waiting);
    const [done] = tree.getChildren(sessionB);

    await vscode.commands.executeCommand(CLIENT_COMMANDS.approve, call);
    assert.deepEqual(commandsSent("nexa.approve").at(-1)?.arguments, [{ run_id: "run_wait", call_id: "call_1" }]);

    await vscode.commands.executeCommand(CLIENT_COMMANDS.deny, waiting);
    assert.deepEqual(commandsSent("nexa.deny").at(-1)?.arguments, [{ run_id: "run_wait", call_id: "call_1" }]);

    await vscode.commands.executeCommand(CLIENT_COMMANDS.cancelRun, waiting);
    assert.deepEqual(commandsSent("nexa.cancel").at(-1)?.arguments, [{ run_id: "run_wait" }]);

    state.inputAnswers.push("and now in French");
    await vscode.commands.executeCommand(CLIENT_COMMANDS.continueRun, done);
    assert.deepEqual(commandsSent("nexa.continue").at(-1)?.arguments, [{ run_id: "run_done", input: "and now in French" }]);

    await vscode.commands.executeCommand(CLIENT_COMMANDS.showRun, done);
    assert.deepEqual(commandsSent("nexa.showRun").at(-1)?.arguments, [{ run_id: "run_done" }]);
  });

  it("palette commands without a target pick among the runs that accept the action", async () => {
    state.quickPickAnswers.push("Writer · completed");
    state.inputAnswers.push("one more thing");
    await vscode.commands.executeCommand(CLIENT_COMMANDS.continueRun);
    assert.deepEqual(commandsSent("nexa.continue").at(-1)?.arguments, [{ run_id: "run_done", input: "one more thing" }]);

    const resumes = commandsSent("nexa.resume").length;
    await vscode.commands.executeCommand(CLIENT_COMMANDS.resumeRun);
    assert.equal(commandsSent("nexa.resume").length, resumes, "no run accepts resume: nothing sent");
    assert.ok(state.messages.some((m) => /no run accepts "resume"/.test(m.text)));
  });

  it("Migrate File sends nexa.migrateFile {uri} and reports the result", async () => {
    await vscode.commands.executeCommand(CLIENT_COMMANDS.migrateFile);
    assert.deepEqual(commandsSent("nexa.migrateFile").at(-1)?.arguments, [{ uri: docUri }]);
    assert.ok(state.messages.some((m) => m.level === "info" && /Migrated the file to Nexa 3.0/.test(m.text)));
  });

  it("clicking the 2.4 status item offers the migration", async () => {
    const n = commandsSent("nexa.migrateFile").length;
    state.messageAnswer = (text, items) => (/compatibility path/.test(text) ? items[0] : undefined);
    await vscode.commands.executeCommand(CLIENT_COMMANDS.versionStatusClicked);
    state.messageAnswer = () => undefined;
    await waitFor("a second migrateFile", () => commandsSent("nexa.migrateFile").length === n + 1);
  });

  it("a settings change is a didChangeConfiguration without a body; the server pulls the new value", async () => {
    const pulls = log().filter((e) => e.event === "configuration").length;
    state.settings.set("nexa.diagnostics.debounceMs", 300);
    state.emitters.configuration.fire({ affectsConfiguration: (s: string) => s === "nexa" || s === "nexa.diagnostics" || s === "nexa.diagnostics.debounceMs" });
    const change = await waitFor("didChangeConfiguration", () => log().find((e) => e.event === "didChangeConfiguration"));
    assert.equal(change.settings, null, "no settings body of the extension's own");
    const pulled = await waitFor("the pull", () => log().filter((e) => e.event === "configuration")[pulls]);
    assert.equal((pulled.answer?.[0] as { diagnostics?: { debounceMs?: number } }).diagnostics?.debounceMs, 300);
    state.settings.delete("nexa.diagnostics.debounceMs");
  });

  it("in an untrusted workspace runs are off everywhere and run commands refuse", async () => {
    await ext.deactivate();
    for (const d of context.subscriptions) d.dispose();
    context = createContext(state, ROOT);
    await waitFor("the first server to exit", () => log().some((e) => e.event === "exit"));
    rmSync(logFile, { force: true });

    state.trusted = false;
    ext.activate(context);
    await waitFor("the configuration answer", () => log().find((e) => e.event === "configuration"));
    assert.equal(log().find((e) => e.event === "initialize")?.initializationOptions?.runs?.enabled, false);
    assert.equal(log().find((e) => e.event === "configuration")?.answer?.[0]?.runs?.enabled, false);

    state.quickPickAnswers.push("Writer");
    state.inputAnswers.push("should not run");
    await vscode.commands.executeCommand(CLIENT_COMMANDS.executeAgent);
    assert.equal(commandsSent("nexa.execute").length, 0);
    assert.ok(state.messages.some((m) => m.level === "warning" && /untrusted workspace/.test(m.text)));
    state.quickPickAnswers.length = 0;
    state.inputAnswers.length = 0;

    // The lens path is guarded too.
    await vscode.commands.executeCommand("nexa.execute", { uri: docUri, agent: "Writer", task: "x" });
    assert.equal(commandsSent("nexa.execute").length, 0);
  });
});

describe("extension activation without the server package", { skip: process.platform === "win32" && "needs a POSIX shell wrapper" }, () => {
  it("offers to install nexa-lsp with <python> -m pip install nexa-lsp", async () => {
    const dir = mkdtempSync(join(tmpdir(), "nexa-ext-missing-"));
    const wrapper = join(dir, "python");
    // A Python 3.12 whose `import nexa_lsp` fails like a real missing module.
    writeFileSync(
      wrapper,
      "#!/bin/sh\ncase \"$2\" in *version_info*) echo 3.12.0; exit 0;; esac\necho \"ModuleNotFoundError: No module named 'nexa_lsp'\" >&2\nexit 1\n",
    );
    chmodSync(wrapper, 0o755);
    const { module: vscode, state } = createVscodeStub();
    state.settings.set("nexa.server.pythonPath", wrapper);
    state.settings.set("nexa.server.importStrategy", "fromEnvironment");
    state.messageAnswer = (_text, items) => items.find((i) => i === "Install nexa-lsp");
    const restore = installVscodeStub(vscode);
    const context: TestContext = createContext(state, ROOT);
    const ext = loadExtension();
    try {
      ext.activate(context);
      const msg = await waitFor("the missing-module error", () => state.messages.find((m) => m.level === "error"));
      assert.match(msg.text, /not installed/);
      assert.match(msg.text, /No module named 'nexa_lsp'/);
      assert.deepEqual(msg.items, ["Install nexa-lsp", "Open Settings", "Show Output"]);
      const terminal = await waitFor("the install terminal", () => state.terminals[0]);
      assert.equal(terminal.shellPath, wrapper);
      assert.deepEqual(terminal.shellArgs, ["-m", "pip", "install", "nexa-lsp"]);
    } finally {
      await ext.deactivate();
      for (const d of context.subscriptions) d.dispose();
      restore();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

/** Activates the extension with one settings map and returns what it showed; deactivates after `check`. */
async function activateWith(
  settings: Record<string, unknown>,
  extensionPath: string,
  check: (state: StubState) => Promise<void>,
): Promise<void> {
  const { module: vscode, state } = createVscodeStub();
  for (const [k, v] of Object.entries(settings)) state.settings.set(k, v);
  const restore = installVscodeStub(vscode);
  const context: TestContext = createContext(state, extensionPath);
  const ext = loadExtension();
  try {
    ext.activate(context);
    await check(state);
  } finally {
    await ext.deactivate();
    for (const d of context.subscriptions) d.dispose();
    restore();
  }
}

describe("the bundled server (nexa.server.importStrategy = useBundled, the default)", { skip: process.platform === "win32" && "needs a POSIX shell wrapper" }, () => {
  const dir = mkdtempSync(join(tmpdir(), "nexa-ext-bundled-"));
  const wrapper = join(dir, "python");
  const extensionPath = join(dir, "extension");
  const logFile = join(dir, "server.log");
  before(() => {
    writeFileSync(wrapper, `#!/bin/sh\nexec "${process.execPath}" "${FAKE_SERVER}" "$@"\n`);
    chmodSync(wrapper, 0o755);
    mkdirSync(join(extensionPath, "bundled", "tool"), { recursive: true });
    mkdirSync(join(extensionPath, "bundled", "libs", "nexa_lsp"), { recursive: true });
    writeFileSync(join(extensionPath, "bundled", "tool", "launch_server.py"), "# stand-in\n");
    process.env["FAKE_NEXA_LOG"] = logFile;
  });
  after(() => {
    delete process.env["FAKE_NEXA_LOG"];
    delete process.env["FAKE_PYTHON_VERSION"];
    rmSync(dir, { recursive: true, force: true });
  });

  it("starts <python> <extension>/bundled/tool/launch_server.py, with no module check", async () => {
    await activateWith({ "nexa.server.pythonPath": wrapper }, extensionPath, async (state) => {
      const lines = (): LogEntry[] =>
        existsSync(logFile) ? readFileSync(logFile, "utf8").split("\n").filter((l) => l !== "").map((l) => JSON.parse(l) as LogEntry) : [];
      const argv = await waitFor("the server start", () => lines().find((e) => e.event === "argv") as unknown as { args: string[] } | undefined);
      assert.deepEqual(argv.args, [join(extensionPath, "bundled", "tool", "launch_server.py")]);
      await waitFor("initialize", () => lines().find((e) => e.event === "initialize"));
      assert.equal(state.messages.filter((m) => m.level === "error").length, 0);
    });
  });

  it("without a Python 3.11+, one error says what to install", async () => {
    process.env["FAKE_PYTHON_VERSION"] = "3.9.7";
    await activateWith({ "nexa.server.pythonPath": wrapper }, extensionPath, async (state) => {
      const msg = await waitFor("the error", () => state.messages.find((m) => m.level === "error"));
      assert.match(msg.text, /needs Python 3\.11 or newer/);
      assert.match(msg.text, /Python 3\.9\.7 is older than 3\.11/);
      assert.match(msg.text, /Install Python 3\.11\+/);
      await new Promise((r) => setTimeout(r, 200));
      assert.equal(state.messages.filter((m) => m.level === "error").length, 1, "one message");
    });
    delete process.env["FAKE_PYTHON_VERSION"];
  });

  it("a build without bundled/libs says so instead of failing later", async () => {
    await activateWith({ "nexa.server.pythonPath": wrapper }, join(dir, "no-such-extension"), async (state) => {
      const msg = await waitFor("the error", () => state.messages.find((m) => m.level === "error"));
      assert.match(msg.text, /no bundled language server/);
    });
  });
});

describe("closing the window", { skip: process.platform === "win32" && "needs a POSIX shell wrapper" }, () => {
  it("nothing is written to the output channel once VS Code has closed it", async () => {
    const dir = mkdtempSync(join(tmpdir(), "nexa-ext-close-"));
    const wrapper = join(dir, "python");
    writeFileSync(wrapper, `#!/bin/sh\nexec "${process.execPath}" "${FAKE_SERVER}" "$@"\n`);
    chmodSync(wrapper, 0o755);
    const { module: vscode, state } = createVscodeStub();
    state.settings.set("nexa.server.pythonPath", wrapper);
    state.settings.set("nexa.server.importStrategy", "fromEnvironment");
    const doc = new StubDocument(Uri.file(join(dir, "app.nx")), "nexa", SOURCE);
    state.documents.push(doc);
    state.activeEditor = { document: doc, selection: new Selection(0, 0, 0, 0) };
    const restore = installVscodeStub(vscode);
    const context: TestContext = createContext(state, ROOT);
    const ext = loadExtension();
    const failures: unknown[] = [];
    const onFailure = (err: unknown): void => {
      failures.push(err);
    };
    process.on("unhandledRejection", onFailure);
    try {
      ext.activate(context);
      await waitFor("the status item", () => state.statusItems.find((i) => i.visible));
      const resume = state.commands.get(CLIENT_COMMANDS.resumeRun);
      const clicked = state.commands.get(CLIENT_COMMANDS.versionStatusClicked);
      assert.ok(resume && clicked);
      // The window closes: VS Code disposes every subscription, the output channel among them,
      // while commands, timers and the language client may still run.
      for (const d of [...context.subscriptions].reverse()) d.dispose();
      const channel = state.channels.find((c) => c.name === "Nexa Language Server");
      assert.equal(channel?.closed, true);
      const written = state.output.length;
      await resume("run_after_close");
      await clicked();
      edited(state, doc);
      await ext.deactivate();
      await new Promise((r) => setTimeout(r, 500));
      assert.equal(state.output.length, written, "no write after the channel closed");
      assert.deepEqual(failures, []);
    } finally {
      process.off("unhandledRejection", onFailure);
      await ext.deactivate();
      restore();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("provider API keys in the secret storage", { skip: process.platform === "win32" && "needs a POSIX shell wrapper" }, () => {
  const dir = mkdtempSync(join(tmpdir(), "nexa-ext-secrets-"));
  const wrapper = join(dir, "python");
  const logFile = join(dir, "server.log");
  const lines = (): LogEntry[] =>
    existsSync(logFile) ? readFileSync(logFile, "utf8").split("\n").filter((l) => l !== "").map((l) => JSON.parse(l) as LogEntry) : [];
  before(() => {
    writeFileSync(wrapper, `#!/bin/sh\nexec "${process.execPath}" "${FAKE_SERVER}" "$@"\n`);
    chmodSync(wrapper, 0o755);
    process.env["FAKE_NEXA_LOG"] = logFile;
  });
  after(() => {
    delete process.env["FAKE_NEXA_LOG"];
    delete process.env["FAKE_ASK_SECRET"];
    rmSync(dir, { recursive: true, force: true });
  });

  /** Activates with the fake server; `prepare` sets up the stub first. */
  async function withExtension(prepare: (state: StubState) => void, check: (state: StubState, vscode: { commands: { executeCommand(id: string, ...a: unknown[]): Promise<unknown> } }) => Promise<void>): Promise<void> {
    rmSync(logFile, { force: true });
    const { module: vscode, state } = createVscodeStub();
    for (const scope of ["", "user:"]) {
      state.settings.set(`${scope}nexa.server.pythonPath`, wrapper);
      state.settings.set(`${scope}nexa.server.importStrategy`, "fromEnvironment");
    }
    prepare(state);
    const restore = installVscodeStub(vscode);
    const context = createContext(state, ROOT);
    const ext = loadExtension();
    try {
      ext.activate(context);
      await check(state, vscode);
    } finally {
      await ext.deactivate();
      for (const d of context.subscriptions) d.dispose();
      restore();
    }
  }

  it("Set Provider API Key stores the key in SecretStorage, asked in a password box, never in settings or logs", async () => {
    await withExtension(
      () => undefined,
      async (state, vscode) => {
        state.quickPickAnswers.push("openai");
        state.inputAnswers.push("OPENAI_API_KEY", "sk-typed-secret");
        await vscode.commands.executeCommand(CLIENT_COMMANDS.setProviderApiKey);
        assert.equal(state.secrets.get("nexa.providerSecret/openai/OPENAI_API_KEY"), "sk-typed-secret");
        assert.equal(state.inputBoxes.at(-2)?.value, "OPENAI_API_KEY", "the name is pre-filled");
        assert.equal(state.inputBoxes.at(-1)?.password, true, "the key is typed in a password box");
        assert.deepEqual(state.updates, [], "no setting written");
        assert.ok(!state.output.join("\n").includes("sk-typed-secret"), "the key is not logged");
        assert.deepEqual(state.globalState.get("nexa.providerSecrets"), [{ provider: "openai", name: "OPENAI_API_KEY" }]);

        state.quickPickAnswers.push("OPENAI_API_KEY");
        await vscode.commands.executeCommand(CLIENT_COMMANDS.removeProviderApiKey);
        assert.equal(state.secrets.has("nexa.providerSecret/openai/OPENAI_API_KEY"), false);
      },
    );
  });

  it("a key in nexa.runs.providerSettings is offered to move, then removed from settings", async () => {
    const plain = { OPENAI_API_KEY: "sk-in-settings", OPENAI_BASE_URL: "http://127.0.0.1:9/v1" };
    await withExtension(
      (state) => {
        state.settings.set("user:nexa.runs.providerSettings", plain);
        state.settings.set("nexa.runs.providerSettings", plain);
        state.messageAnswer = (text, items) => (/plain text/.test(text) ? items.find((i) => i === "Move to Secret Storage") : undefined);
      },
      async (state) => {
        await waitFor("the move", () => state.updates.find((u) => u.key === "nexa.runs.providerSettings"));
        const update = state.updates.find((u) => u.key === "nexa.runs.providerSettings");
        assert.deepEqual(update?.value, { OPENAI_BASE_URL: "http://127.0.0.1:9/v1" }, "only the non-secret value stays");
        assert.equal(update?.target, 1, "user settings");
        assert.equal(state.secrets.get("nexa.providerSecret/openai/OPENAI_API_KEY"), "sk-in-settings");
        const offer = state.messages.find((m) => /plain text/.test(m.text));
        assert.ok(offer && !offer.text.includes("sk-in-settings"), "the offer names the key, not its value");
        assert.ok(!state.output.join("\n").includes("sk-in-settings"));
      },
    );
  });

  it("declining the move changes nothing", async () => {
    await withExtension(
      (state) => {
        state.settings.set("user:nexa.runs.providerSettings", { API_KEY: "sk-kept" });
        state.messageAnswer = () => "Not Now";
      },
      async (state) => {
        await waitFor("the offer", () => state.messages.find((m) => /plain text/.test(m.text)));
        await new Promise((r) => setTimeout(r, 200));
        assert.deepEqual(state.updates, []);
        assert.equal(state.secrets.size, 0);
      },
    );
  });

  it("answers the server's nexa/providerSecret with {value} when trusted, null when not", async () => {
    process.env["FAKE_ASK_SECRET"] = "openai/OPENAI_API_KEY";
    try {
      await withExtension(
        (state) => state.secrets.set("nexa.providerSecret/openai/OPENAI_API_KEY", "sk-for-the-run"),
        async () => {
          const entry = await waitFor("the answer", () => lines().find((e) => e.event === "providerSecret"));
          assert.deepEqual((entry as unknown as { answer: unknown }).answer, { value: "sk-for-the-run" });
        },
      );
      await withExtension(
        (state) => {
          state.secrets.set("nexa.providerSecret/openai/OPENAI_API_KEY", "sk-for-the-run");
          state.trusted = false;
        },
        async (state) => {
          const entry = await waitFor("the answer", () => lines().find((e) => e.event === "providerSecret"));
          assert.equal((entry as unknown as { answer: unknown }).answer, null);
          assert.ok(!state.output.join("\n").includes("sk-for-the-run"));
        },
      );
      await withExtension(
        () => undefined,
        async () => {
          const entry = await waitFor("the answer", () => lines().find((e) => e.event === "providerSecret"));
          assert.equal((entry as unknown as { answer: unknown }).answer, null, "no key stored: null");
        },
      );
    } finally {
      delete process.env["FAKE_ASK_SECRET"];
    }
  });
});
