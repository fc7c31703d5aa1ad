/**
 * Starts, stops and restarts the Python language server (`<python> -m nexa_lsp`)
 * through vscode-languageclient, and sends it the `nexa` settings.
 */

import { existsSync } from "node:fs";
import { join } from "node:path";
import * as vscode from "vscode";
import {
  DidChangeConfigurationNotification,
  ExecuteCommandRequest,
  LanguageClient,
  ResponseError,
  State,
  type LanguageClientOptions,
  type Middleware,
  type ServerOptions,
} from "vscode-languageclient/node";
import type { CommandRequest } from "./logic/commandArgs";
import { DOCUMENT_INFO_REQUEST, parseDocumentInfo, type DocumentInfo } from "./logic/documentInfo";
import { parseSecretRequest, PROVIDER_SECRET_REQUEST, withProviderSecretsCapability, withRunPromptsCapability, type SecretRef } from "./logic/secrets";
import { CLIENT_ID, DOCUMENT_SELECTOR, LANGUAGE_ID, OUTPUT_CHANNEL_NAME, PIP_PACKAGE, PYTHON_MODULE, RUNS_CHANGED_NOTIFICATION } from "./logic/constants";
import { RUN_UPDATED_NOTIFICATION } from "./logic/runPanelModel";
import {
  candidateInterpreters,
  classifyModuleCheck,
  describeInterpreter,
  findInterpreter,
  formatCommandLine,
  importStrategy,
  installCommandLine,
  moduleCheckCommandLine,
  noPythonMessage,
  serverCommandLine,
  type BundledServer,
  type Interpreter,
} from "./logic/interpreter";
import { runProcess } from "./logic/process";
import { enforceTrustOnConfiguration, initializationOptions, type NexaSection } from "./logic/settings";
import { activePythonCommand } from "./pythonExtension";

export interface RunsChangedParams {
  run_id?: string;
  agent?: string;
  status?: string;
}

/** Answers the server's `nexa/providerSecret` request: `{value}` or null. */
export type ProviderSecretSource = (ref: SecretRef | undefined) => Promise<{ value: string } | null>;

/** Hook that may complete or veto a server command invoked by a code lens. */
export type ServerCommandInterceptor = (command: string, args: unknown[]) => Promise<unknown[] | undefined>;

export class ServerNotRunningError extends Error {
  constructor() {
    super("The Nexa language server is not running.");
  }
}

/** Section `nexa` as plain nested data, as VS Code answers `workspace/configuration`. */
export function nexaSection(resource?: vscode.Uri): NexaSection {
  return JSON.parse(JSON.stringify(vscode.workspace.getConfiguration("nexa", resource))) as NexaSection;
}

/** Whether runs are allowed for a resource (trust and nexa.runs.enabled). */
export function runsEnabled(resource?: vscode.Uri): boolean {
  return vscode.workspace.isTrusted && vscode.workspace.getConfiguration("nexa", resource).get("runs.enabled") !== false;
}

function workspaceFolderFor(resource: vscode.Uri | undefined): vscode.WorkspaceFolder | undefined {
  if (resource !== undefined) {
    const folder = vscode.workspace.getWorkspaceFolder(resource);
    if (folder !== undefined) return folder;
  }
  return vscode.workspace.workspaceFolders?.[0];
}

function activeNexaUri(): vscode.Uri | undefined {
  const doc = vscode.window.activeTextEditor?.document;
  return doc?.languageId === LANGUAGE_ID ? doc.uri : undefined;
}

/** A `nexa.server.*` setting; in an untrusted workspace only the user value counts. */
function serverSetting(key: "pythonPath" | "importStrategy", resource: vscode.Uri | undefined): string | undefined {
  const config = vscode.workspace.getConfiguration("nexa", resource);
  if (vscode.workspace.isTrusted) return config.get<string>(`server.${key}`);
  return config.inspect<string>(`server.${key}`)?.globalValue;
}

export class ServerManager implements vscode.Disposable {
  private client: LanguageClient | undefined;
  private busy: Promise<void> = Promise.resolve();
  private interpreter: Interpreter | undefined;
  private readonly disposables: vscode.Disposable[] = [];
  private readonly runsChanged = new vscode.EventEmitter<RunsChangedParams | undefined>();
  private readonly started = new vscode.EventEmitter<void>();
  private readonly stopped = new vscode.EventEmitter<void>();
  private readonly runUpdated = new vscode.EventEmitter<unknown>();
  private interceptor: ServerCommandInterceptor | undefined;
  private secretSource: ProviderSecretSource | undefined;
  /** Error codes of nexa/documentInfo already logged (once each). */
  private readonly documentInfoFailures = new Set<number | undefined>();
  private readonly watcher: vscode.FileSystemWatcher;

  /** The server reported a run change (`nexa/runsChanged`). */
  readonly onRunsChanged = this.runsChanged.event;
  readonly onDidStart = this.started.event;
  readonly onDidStop = this.stopped.event;
  /** The server sent a watched run's details (`nexa/runUpdated`, for the Run panel). */
  readonly onRunUpdated = this.runUpdated.event;

  /** @param extensionPath where the extension is installed (its bundled/ folder). */
  constructor(
    readonly output: vscode.OutputChannel,
    private readonly extensionPath: string,
  ) {
    this.watcher = vscode.workspace.createFileSystemWatcher("**/*.{nx,nxlib}");
    this.disposables.push(this.runsChanged, this.started, this.stopped, this.runUpdated, this.watcher);
  }

  setServerCommandInterceptor(interceptor: ServerCommandInterceptor): void {
    this.interceptor = interceptor;
  }

  setProviderSecretSource(source: ProviderSecretSource): void {
    this.secretSource = source;
  }

  get isRunning(): boolean {
    return this.client?.state === State.Running;
  }

  /** The running language client (for features that hook into it after its start). */
  get languageClient(): LanguageClient | undefined {
    return this.client;
  }

  get currentInterpreter(): Interpreter | undefined {
    return this.interpreter;
  }

  start(): Promise<void> {
    return this.serialize(() => this.doStart());
  }

  stop(): Promise<void> {
    return this.serialize(() => this.doStop());
  }

  restart(): Promise<void> {
    return this.serialize(async () => {
      await this.doStop();
      await this.doStart();
    });
  }

  private serialize(task: () => Promise<void>): Promise<void> {
    const next = this.busy.then(task, task);
    this.busy = next.catch(() => undefined);
    return next;
  }

  private log(message: string): void {
    this.output.appendLine(`[client] ${message}`);
  }

  private async doStart(): Promise<void> {
    if (this.client !== undefined) return;
    const resource = activeNexaUri();
    const folder = workspaceFolderFor(resource);
    // The server runs in the workspace folder when it is a local directory.
    const cwd = folder !== undefined && folder.uri.scheme === "file" && existsSync(folder.uri.fsPath) ? folder.uri.fsPath : undefined;
    const target = resource ?? folder?.uri;
    const strategy = importStrategy(serverSetting("importStrategy", target));
    const candidates = await candidateInterpreters({
      configured: serverSetting("pythonPath", target),
      pythonExtension: () => activePythonCommand(target),
      pathContext: { workspaceFolder: folder?.uri.fsPath, home: process.env["HOME"] ?? process.env["USERPROFILE"], env: process.env },
    });
    const choice = await findInterpreter(candidates, (line) => runProcess(line, cwd !== undefined ? { cwd } : {}));
    for (const t of choice.tried) this.log(`Python: ${describeInterpreter(t.interpreter)}: ${t.version ?? ""}${t.problem !== undefined ? ` ${t.problem}` : ""}`.trimEnd());
    const interpreter = choice.chosen;
    if (interpreter === undefined) {
      this.interpreter = candidates[0];
      void this.reportNoPython(noPythonMessage(choice.tried));
      return;
    }
    this.interpreter = interpreter;

    let bundled: BundledServer | undefined;
    if (strategy === "useBundled") {
      bundled = this.bundledServer();
      if (bundled === undefined) {
        this.log(`no bundled server in ${this.extensionPath}/bundled/libs`);
        void this.reportNoBundle();
        return;
      }
    } else {
      const check = classifyModuleCheck(await runProcess(moduleCheckCommandLine(interpreter), cwd !== undefined ? { cwd } : {}));
      if (check.status !== "ok") {
        this.log(`cannot start the server: ${check.status}: ${check.detail}`);
        void this.reportStartProblem(interpreter, check.status, check.detail);
        return;
      }
    }

    const line = serverCommandLine(interpreter, bundled);
    this.log(`starting: ${formatCommandLine(line)}`);
    const serverOptions: ServerOptions = {
      command: line.command,
      args: line.args,
      options: { cwd, env: { ...process.env, PYTHONUNBUFFERED: "1" } },
    };
    const client = new LanguageClient(CLIENT_ID, OUTPUT_CHANNEL_NAME, serverOptions, this.clientOptions());
    client.onNotification(RUNS_CHANGED_NOTIFICATION, (params: RunsChangedParams | undefined) => {
      this.runsChanged.fire(params);
    });
    // Declares experimental.nexa.providerSecrets (the server may then ask for a key) and
    // experimental.nexa.runPrompts (the commands ask for a missing task or input).
    client.registerFeature({
      fillClientCapabilities: (capabilities) => {
        capabilities.experimental = withRunPromptsCapability(withProviderSecretsCapability(capabilities.experimental));
      },
      initialize: () => undefined,
      getState: () => ({ kind: "static" }),
      clear: () => undefined,
    });
    client.onNotification(RUN_UPDATED_NOTIFICATION, (params: unknown) => this.runUpdated.fire(params));
    // The server asks for a provider key only while a run needs it; the value is never logged.
    client.onRequest(PROVIDER_SECRET_REQUEST, async (params: unknown) => {
      const ref = parseSecretRequest(params);
      const answer = this.secretSource !== undefined ? await this.secretSource(ref) : null;
      this.log(`${PROVIDER_SECRET_REQUEST} ${ref !== undefined ? `${ref.provider}/${ref.name}` : "(malformed)"}: ${answer !== null ? "answered" : "none"}`);
      return answer;
    });
    this.client = client;
    try {
      await client.start();
    } catch (err) {
      this.client = undefined;
      const message = err instanceof Error ? err.message : String(err);
      this.log(`the server failed to start: ${message}`);
      void vscode.window
        .showErrorMessage(`Nexa: the language server failed to start: ${message}`, "Show Output", "Restart")
        .then((choice) => {
          if (choice === "Show Output") this.output.show(true);
          if (choice === "Restart") void this.restart();
        });
      try {
        await client.dispose(2000);
      } catch {
        // already gone
      }
      return;
    }
    this.started.fire();
  }

  private async doStop(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    if (client === undefined) return;
    try {
      if (client.needsStop()) await client.stop(5000);
    } catch (err) {
      this.log(`stop: ${err instanceof Error ? err.message : String(err)}`);
    }
    try {
      await client.dispose(1000);
    } catch {
      // ignore
    }
    this.stopped.fire();
  }

  private clientOptions(): LanguageClientOptions {
    const middleware: Middleware = {
      workspace: {
        // The one place settings are changed on their way to the server: workspace trust.
        configuration: async (params, token, next) => {
          const result = await next(params, token);
          if (result instanceof ResponseError) return result;
          return enforceTrustOnConfiguration(params.items, result, vscode.workspace.isTrusted) as typeof result;
        },
      },
      executeCommand: async (command, args, next) => {
        let finalArgs: unknown[] | undefined = args;
        if (this.interceptor !== undefined) {
          finalArgs = await this.interceptor(command, args);
          if (finalArgs === undefined) return undefined;
        }
        return next(command, finalArgs);
      },
    };
    return {
      documentSelector: DOCUMENT_SELECTOR.map((filter) => ({ ...filter })),
      outputChannel: this.output,
      traceOutputChannel: this.output,
      initializationOptions: () => initializationOptions(nexaSection(activeNexaUri()), vscode.workspace.isTrusted),
      synchronize: { fileEvents: this.watcher },
      middleware,
    };
  }

  /** The server shipped in the .vsix, when this build has one. */
  private bundledServer(): BundledServer | undefined {
    const launcher = join(this.extensionPath, "bundled", "tool", "launch_server.py");
    const libs = join(this.extensionPath, "bundled", "libs", PYTHON_MODULE);
    return existsSync(launcher) && existsSync(libs) ? { launcher } : undefined;
  }

  private async reportNoPython(message: string): Promise<void> {
    const choice = await vscode.window.showErrorMessage(message, "Open Settings", "Show Output");
    if (choice === "Open Settings") void openSetting("nexa.server.pythonPath");
    else if (choice === "Show Output") this.output.show(true);
  }

  private async reportNoBundle(): Promise<void> {
    const choice = await vscode.window.showErrorMessage(
      "Nexa: this build of the extension carries no bundled language server (bundled/libs). " +
        "Build it with `npm run bundle:server`, or set nexa.server.importStrategy to fromEnvironment and install nexa-lsp.",
      "Open Settings",
      "Show Output",
    );
    if (choice === "Open Settings") void openSetting("nexa.server.importStrategy");
    else if (choice === "Show Output") this.output.show(true);
  }

  private async reportStartProblem(interpreter: Interpreter, status: string, detail: string): Promise<void> {
    const python = [interpreter.command, ...interpreter.prefixArgs].join(" ");
    if (status === "missing-module") {
      const install = `Install ${PIP_PACKAGE}`;
      const choice = await vscode.window.showErrorMessage(
        `Nexa: the language server is not installed for ${python} (${detail || `No module named ${PYTHON_MODULE}`}). ` +
          `Install it with \`${formatCommandLine(installCommandLine(interpreter))}\`, or choose another interpreter in the nexa.server.pythonPath setting.`,
        install,
        "Open Settings",
        "Show Output",
      );
      if (choice === install) this.installServer(interpreter);
      else if (choice === "Open Settings") void openSetting("nexa.server.pythonPath");
      else if (choice === "Show Output") this.output.show(true);
      return;
    }
    const message =
      status === "interpreter-not-found"
        ? `Nexa: the Python interpreter ${python} was not found (${describeInterpreter(interpreter)}). Set nexa.server.pythonPath to a Python 3.11+ interpreter.`
        : `Nexa: could not check the language server with ${python}: ${detail}`;
    const choice = await vscode.window.showErrorMessage(message, "Open Settings", "Show Output");
    if (choice === "Open Settings") void openSetting("nexa.server.pythonPath");
    else if (choice === "Show Output") this.output.show(true);
  }

  /** Runs `<python> -m pip install nexa-lsp` in a terminal; restarts the server when it succeeds. */
  installServer(interpreter: Interpreter): void {
    const line = installCommandLine(interpreter);
    this.log(`installing: ${formatCommandLine(line)}`);
    const terminal = vscode.window.createTerminal({
      name: `Install ${PIP_PACKAGE}`,
      shellPath: line.command,
      shellArgs: line.args,
      cwd: vscode.workspace.workspaceFolders?.[0]?.uri,
    });
    terminal.show();
    const sub = vscode.window.onDidCloseTerminal((closed) => {
      if (closed !== terminal) return;
      sub.dispose();
      if (closed.exitStatus?.code === 0) {
        this.log(`${PIP_PACKAGE} installed; starting the server`);
        void this.restart();
      } else {
        this.log(`installation ended with exit code ${String(closed.exitStatus?.code)}`);
      }
    });
    this.disposables.push(sub);
  }

  /** Sends one `workspace/executeCommand` request with its single object argument. */
  async executeCommand(request: CommandRequest): Promise<unknown> {
    const client = this.client;
    if (client === undefined || client.state !== State.Running) throw new ServerNotRunningError();
    return client.sendRequest(ExecuteCommandRequest.type, {
      command: request.command,
      arguments: request.arguments,
    });
  }

  /** A custom request (e.g. `nexa/runDetails`); throws ServerNotRunningError when there is no server. */
  async request(method: string, params: unknown): Promise<unknown> {
    const client = this.client;
    if (client === undefined || client.state !== State.Running) throw new ServerNotRunningError();
    return client.sendRequest(method, params);
  }

  /** `nexa/documentInfo` for an open document; undefined when the server is not running or cannot answer. */
  async documentInfo(uri: string): Promise<DocumentInfo | undefined> {
    const client = this.client;
    if (client === undefined || client.state !== State.Running) return undefined;
    try {
      return parseDocumentInfo(await client.sendRequest(DOCUMENT_INFO_REQUEST, { textDocument: { uri } }));
    } catch (err) {
      const code = err instanceof ResponseError ? err.code : undefined;
      if (!this.documentInfoFailures.has(code)) {
        this.documentInfoFailures.add(code);
        this.log(`${DOCUMENT_INFO_REQUEST}: ${err instanceof Error ? err.message : String(err)}`);
      }
      return undefined;
    }
  }

  /** Tells the server the settings changed; it pulls them with workspace/configuration (no body). */
  notifyConfigurationChanged(): void {
    const client = this.client;
    if (client === undefined || client.state !== State.Running) return;
    void client
      .sendNotification(DidChangeConfigurationNotification.type, { settings: null })
      .catch((err: unknown) => this.log(`didChangeConfiguration: ${String(err)}`));
  }

  dispose(): void {
    void this.doStop();
    for (const d of this.disposables) d.dispose();
  }
}

export function openSetting(id: string): Thenable<unknown> {
  return vscode.commands.executeCommand("workbench.action.openSettings", id);
}
