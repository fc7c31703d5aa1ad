/**
 * Smoke test against the real Python server, started exactly as the
 * extension starts it: `<python> -m nexa_lsp` on stdio, with the same
 * initializationOptions and workspace/configuration answers.
 *
 * Python: $NEXA_LSP_PYTHON, else ../.venv/bin/python (relative to
 * vscode-extension/) when it exists, else python3.
 *
 *   npm run test:smoke
 */

import { strict as assert } from "node:assert";
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { after, before, describe, it } from "node:test";
import { pathToFileURL } from "node:url";
import {
  createMessageConnection,
  StreamMessageReader,
  StreamMessageWriter,
  type MessageConnection,
} from "vscode-jsonrpc/node";
import { listRunsRequest } from "../../src/logic/commandArgs";
import { LANGUAGE_ID } from "../../src/logic/constants";
import { serverCommandLine, type Interpreter } from "../../src/logic/interpreter";
import { parseListRunsResult } from "../../src/logic/runsModel";
import { DOCUMENT_INFO_REQUEST, parseDocumentInfo } from "../../src/logic/documentInfo";
import { enforceTrustOnConfigurationItem, initializationOptions, nestSettings } from "../../src/logic/settings";

// out/test/smoke -> vscode-extension/
const EXTENSION_ROOT = resolve(__dirname, "..", "..", "..");

export function smokePython(): string {
  const fromEnv = process.env["NEXA_LSP_PYTHON"];
  if (fromEnv !== undefined && fromEnv !== "") return fromEnv;
  const venv = resolve(EXTENSION_ROOT, "..", ".venv", "bin", "python");
  return existsSync(venv) ? venv : "python3";
}

const STEP_TIMEOUT_MS = Number(process.env["NEXA_SMOKE_TIMEOUT_MS"] ?? 30_000);

/** A 2.4-path source with syntax errors: a missing `}` and a dangling operator. */
const BROKEN_SOURCE = [
  "// smoke test: this file does not parse",
  "agent Broken {",
  '    prompt: "hello"',
  "",
  "flow main {",
  "    x = 1 +;",
  "}",
  "",
].join("\n");

/** Waits for `promise`; fails on timeout, or as soon as `gone` settles (the server died). */
function withTimeout<T>(promise: Promise<T>, what: string, stderr: () => string, gone?: Promise<void>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`timed out after ${STEP_TIMEOUT_MS} ms waiting for ${what}\n--- server stderr ---\n${stderr()}`)),
      STEP_TIMEOUT_MS,
    );
  });
  const racers: Promise<T>[] = [promise, timeout];
  if (gone !== undefined) {
    racers.push(
      gone.then(() => {
        throw new Error(`the server exited while waiting for ${what}\n--- server stderr ---\n${stderr()}`);
      }),
    );
  }
  return Promise.race(racers).finally(() => clearTimeout(timer));
}

interface Diagnostic {
  range: unknown;
  message: string;
  severity?: number;
  code?: string | number;
}

describe("nexa_lsp over stdio, started like the extension", () => {
  const python = smokePython();
  const interpreter: Interpreter = { command: python, prefixArgs: [], source: "default" };
  const workspace = mkdtempSync(join(tmpdir(), "nexa-smoke-"));
  const docUri = pathToFileURL(join(workspace, "broken.nx")).href;
  // Section nexa as VS Code answers it with every setting at its package.json default.
  const pkg = JSON.parse(readFileSync(join(EXTENSION_ROOT, "package.json"), "utf8")) as {
    contributes: { configuration: { properties: Record<string, { default: unknown }> } };
  };
  const settings = nestSettings(Object.fromEntries(Object.entries(pkg.contributes.configuration.properties).map(([k, v]) => [k, v.default])));
  let proc: ChildProcessWithoutNullStreams;
  let connection: MessageConnection;
  let stderr = "";
  let exited: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  const exitPromise = new Promise<void>((resolveExit) => {
    before(() => {
      const line = serverCommandLine(interpreter);
      assert.deepEqual(line.args, ["-m", "nexa_lsp"]);
      proc = spawn(line.command, line.args, {
        cwd: workspace,
        env: { ...process.env, PYTHONUNBUFFERED: "1" },
        stdio: "pipe",
      });
      proc.stderr.setEncoding("utf8");
      proc.stderr.on("data", (chunk: string) => {
        stderr += chunk;
      });
      proc.on("exit", (code, signal) => {
        exited = { code, signal };
        resolveExit();
      });
      proc.on("error", (err) => {
        stderr += `\nspawn error: ${err.message}`;
      });
      connection = createMessageConnection(new StreamMessageReader(proc.stdout), new StreamMessageWriter(proc.stdin));
      // Requests from the server, answered as vscode-languageclient would.
      connection.onRequest("workspace/configuration", (params: { items: { section?: string }[] }) =>
        params.items.map((item) =>
          item.section === "nexa" || item.section === undefined
            ? enforceTrustOnConfigurationItem("nexa", settings, true)
            : null,
        ),
      );
      connection.onRequest((_method: string) => null);
      connection.onNotification((_method: string) => undefined);
      connection.listen();
    });
  });

  const diagnostics = new Promise<Diagnostic[]>((resolveDiags) => {
    before(() => {
      connection.onNotification("textDocument/publishDiagnostics", (params: { uri: string; diagnostics: Diagnostic[] }) => {
        if (params.uri === docUri && params.diagnostics.length > 0) resolveDiags(params.diagnostics);
      });
    });
  });

  after(async () => {
    if (exited === undefined) proc.kill();
    connection.dispose();
    rmSync(workspace, { recursive: true, force: true });
  });

  const serverStderr = (): string => (exited !== undefined ? `(exited: ${JSON.stringify(exited)})\n${stderr}` : stderr);

  it("initialize -> initialized", async () => {
    const result = await withTimeout(
      connection.sendRequest<{ capabilities: Record<string, unknown>; serverInfo?: { name?: string } }>("initialize", {
        processId: process.pid,
        clientInfo: { name: "nexa-smoke", version: "0" },
        rootUri: pathToFileURL(workspace).href,
        workspaceFolders: [{ uri: pathToFileURL(workspace).href, name: "smoke" }],
        initializationOptions: initializationOptions(settings, true),
        capabilities: {
          workspace: { configuration: true, workspaceFolders: true, executeCommand: { dynamicRegistration: false } },
          textDocument: {
            synchronization: { dynamicRegistration: false, didSave: true },
            publishDiagnostics: { relatedInformation: true, versionSupport: true },
          },
          window: { showDocument: { support: true }, workDoneProgress: true },
          general: { positionEncodings: ["utf-16"] },
        },
      }),
      "the initialize response",
      serverStderr,
      exitPromise,
    );
    assert.ok(result.capabilities, "initialize returns capabilities");
    const commands = (result.capabilities["executeCommandProvider"] as { commands?: string[] } | undefined)?.commands ?? [];
    assert.ok(commands.includes("nexa.listRuns"), `executeCommandProvider lists nexa.listRuns (got ${JSON.stringify(commands)})`);
    await connection.sendNotification("initialized", {});
  });

  it("didOpen of a broken .nx file publishes diagnostics", async () => {
    await connection.sendNotification("textDocument/didOpen", {
      textDocument: { uri: docUri, languageId: LANGUAGE_ID, version: 1, text: BROKEN_SOURCE },
    });
    const diags = await withTimeout(
      diagnostics,
      "textDocument/publishDiagnostics with at least one diagnostic",
      serverStderr,
      exitPromise,
    );
    assert.ok(diags.length >= 1);
    for (const d of diags) assert.equal(typeof d.message, "string");
  });

  it("nexa/documentInfo answers per protocol (agents, migration)", async (t) => {
    let result: unknown;
    try {
      result = await withTimeout(
        connection.sendRequest(DOCUMENT_INFO_REQUEST, { textDocument: { uri: docUri } }),
        "the nexa/documentInfo result",
        serverStderr,
        exitPromise,
      );
    } catch (err) {
      if ((err as { code?: number }).code === -32601) {
        t.skip("this server has no nexa/documentInfo yet");
        return;
      }
      throw err;
    }
    const info = parseDocumentInfo(result);
    assert.ok(info !== undefined, `a documentInfo result: ${JSON.stringify(result)}`);
    assert.equal(info.uri, docUri);
    assert.equal(info.languagePath, "2.4");
    assert.deepEqual(info.agents.map((a) => a.name), ["Broken"]);
    const unknown = await connection
      .sendRequest(DOCUMENT_INFO_REQUEST, { textDocument: { uri: `${docUri}.not-open.nx` } })
      .then(() => undefined, (err: { code?: number }) => err.code);
    assert.equal(unknown, -32803, "a document that is not open is a RequestFailed error");
  });

  it("nexa.listRuns answers {runs: [...]}", async () => {
    const request = listRunsRequest();
    const result = await withTimeout(
      connection.sendRequest("workspace/executeCommand", { command: request.command, arguments: request.arguments }),
      "the nexa.listRuns result",
      serverStderr,
      exitPromise,
    );
    assert.ok(typeof result === "object" && result !== null && Array.isArray((result as { runs?: unknown }).runs), `got ${JSON.stringify(result)}`);
    parseListRunsResult(result);
  });

  it("shutdown -> exit ends the process", async () => {
    await withTimeout(connection.sendRequest("shutdown"), "the shutdown response", serverStderr);
    await connection.sendNotification("exit");
    await withTimeout(exitPromise, "the server process to exit", serverStderr);
    assert.equal(exited?.code, 0, `exit code (stderr: ${stderr})`);
  });
});
