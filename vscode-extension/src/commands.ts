/**
 * The extension's palette, editor-context and view commands (`nexa.client.*`).
 * Each one gathers what is missing (agent, task, input, run, tool call) and
 * sends the matching server command with ONE object argument.
 */

import * as vscode from "vscode";
import { ResponseError } from "vscode-languageclient/node";
import {
  approveRequest,
  ArgumentError,
  cancelRequest,
  clientShouldShowError,
  continueRequest,
  denyRequest,
  executeRequest,
  executeTargetFromArg,
  migrateMessage,
  migrateRequest,
  missingInput,
  parseMigrateResult,
  parseRunStarted,
  recoverRequest,
  resumeRequest,
  runTargetFromArg,
  showRunRequest,
  withInput,
  type CommandRequest,
  type RecoverOutcome,
} from "./logic/commandArgs";
import { CLIENT_COMMANDS, LANGUAGE_ID, SERVER_COMMANDS } from "./logic/constants";
import { agentAtLine, blockerItems, taskLiterals, versionStatus, type DocumentInfo } from "./logic/documentInfo";
import { runPickItem, runsAccepting, statusLabel, type RunAction, type RunSummary, type ToolCallRef } from "./logic/runsModel";
import type { RunsView } from "./runsView";
import { openSetting, runsEnabled, ServerNotRunningError, type ServerManager } from "./server";
import type { VersionStatusBar } from "./statusBar";

function uriToString(value: unknown): string | undefined {
  return value instanceof vscode.Uri ? value.toString() : undefined;
}

function activeNexaEditor(): vscode.TextEditor | undefined {
  const editor = vscode.window.activeTextEditor;
  return editor?.document.languageId === LANGUAGE_ID ? editor : undefined;
}

export class Commands {
  constructor(
    private readonly server: ServerManager,
    private readonly runs: RunsView,
    private readonly status: VersionStatusBar,
  ) {}

  register(context: vscode.ExtensionContext): void {
    const c = CLIENT_COMMANDS;
    const reg = (id: string, fn: (arg?: unknown) => Promise<unknown> | unknown): void => {
      context.subscriptions.push(
        vscode.commands.registerCommand(id, async (arg?: unknown) => {
          try {
            return await fn(arg);
          } catch (err) {
            this.reportError(id, err);
            return undefined;
          }
        }),
      );
    };
    reg(c.executeAgent, (a) => this.executeAgent(a));
    reg(c.continueRun, (a) => this.continueRun(a));
    reg(c.resumeRun, (a) => this.simpleRunAction(a, "resume"));
    reg(c.cancelRun, (a) => this.simpleRunAction(a, "cancel"));
    reg(c.approve, (a) => this.decide(a, "approve"));
    reg(c.deny, (a) => this.decide(a, "deny"));
    reg(c.recoverToolCall, (a) => this.recover(a));
    reg(c.showRun, (a) => this.showRun(a));
    reg(c.migrateFile, (a) => this.migrateFile(a));
    reg(c.restartServer, () => this.server.restart());
    reg(c.refreshRuns, () => this.runs.refresh());
    reg(c.showOutput, () => this.server.output.show(true));
    reg(c.versionStatusClicked, () => this.versionStatusClicked());

    // Code lenses and code actions of the server call the server command ids
    // directly; complete their argument (task, agent, input) before sending.
    this.server.setServerCommandInterceptor((command, args) => this.completeServerCommand(command, args));
  }

  // ------------------------------------------------------------ helpers

  private reportError(id: string, err: unknown): void {
    if (err instanceof vscode.CancellationError) return;
    const message = err instanceof Error ? err.message : String(err);
    this.server.output.appendLine(`[client] ${id}: ${message}`);
    if (err instanceof ArgumentError) {
      void vscode.window.showWarningMessage(`Nexa: ${message}.`);
      return;
    }
    if (err instanceof ServerNotRunningError) {
      void vscode.window.showErrorMessage(`Nexa: ${message}`, "Restart Server", "Show Output").then((choice) => {
        if (choice === "Restart Server") void this.server.restart();
        if (choice === "Show Output") this.server.output.show(true);
      });
      return;
    }
    const code = err instanceof ResponseError ? err.code : undefined;
    // A refused command was already shown by the server (window/showMessage).
    if (clientShouldShowError(code)) {
      void vscode.window.showErrorMessage(`Nexa: ${message}`, "Show Output").then((choice) => {
        if (choice === "Show Output") this.server.output.show(true);
      });
    }
  }

  /** Runs are off in an untrusted workspace or with nexa.runs.enabled = false. */
  private runsAllowed(): boolean {
    if (!vscode.workspace.isTrusted) {
      void vscode.window
        .showWarningMessage("Nexa: runs are disabled in an untrusted workspace.", "Manage Workspace Trust")
        .then((choice) => {
          if (choice !== undefined) void vscode.commands.executeCommand("workbench.trust.manage");
        });
      return false;
    }
    if (!runsEnabled(activeNexaEditor()?.document.uri)) {
      void vscode.window.showWarningMessage("Nexa: runs are disabled (nexa.runs.enabled).", "Open Settings").then((choice) => {
        if (choice !== undefined) void openSetting("nexa.runs.enabled");
      });
      return false;
    }
    return true;
  }

  private send(request: CommandRequest): Promise<unknown> {
    this.server.output.appendLine(`[client] ${request.command} ${JSON.stringify(request.arguments[0])}`);
    return this.server.executeCommand(request);
  }

  /** What the server says about a document (opened first, so the server has it). */
  private async documentInfo(uri: string): Promise<DocumentInfo | undefined> {
    await vscode.workspace.openTextDocument(vscode.Uri.parse(uri));
    const info = await this.server.documentInfo(uri);
    if (info === undefined) void vscode.window.showWarningMessage("Nexa: the language server did not say which agents this file declares (nexa/documentInfo).");
    return info;
  }

  private async pickAgent(info: DocumentInfo, preferLine?: number): Promise<string | undefined> {
    const agents = info.agents;
    if (agents.length === 0) {
      void vscode.window.showWarningMessage("Nexa: no agent is declared in this file.");
      return undefined;
    }
    if (agents.length === 1) return agents[0]?.name;
    const near = preferLine !== undefined ? agentAtLine(agents, preferLine) : undefined;
    const items = agents.map((a) => ({ label: a.name, description: `line ${a.selectionRange.start.line + 1}`, picked: a === near }));
    if (near !== undefined) items.sort((a, b) => (a.picked === b.picked ? 0 : a.picked ? -1 : 1));
    const pick = await vscode.window.showQuickPick(items, { title: "Execute which agent?", placeHolder: "Agent" });
    return pick?.label;
  }

  /** Asks for the task, pre-filled with the first task literal the file writes for the agent. */
  private askTask(agent: string, literals: readonly string[] = []): Thenable<string | undefined> {
    const others = literals.length > 1 ? ` (the file also uses: ${literals.slice(1).map((t) => JSON.stringify(t)).join(", ")})` : "";
    return vscode.window.showInputBox({
      title: `Execute ${agent}`,
      prompt: `Task for ${agent}${others}`,
      placeHolder: "What should the agent do?",
      ...(literals[0] !== undefined ? { value: literals[0] } : {}),
      ignoreFocusOut: true,
      validateInput: (v) => (v.trim() === "" ? "The task cannot be empty." : undefined),
    });
  }

  private askInput(runId: string): Thenable<string | undefined> {
    return vscode.window.showInputBox({
      title: `Continue ${runId}`,
      prompt: "Next input for the conversation",
      placeHolder: "Your next message",
      ignoreFocusOut: true,
      validateInput: (v) => (v.trim() === "" ? "The input cannot be empty." : undefined),
    });
  }

  private async pickRun(action: RunAction, title: string): Promise<RunSummary | undefined> {
    const runs = runsAccepting(await this.runs.fetchRuns(), action);
    if (runs.length === 0) {
      void vscode.window.showInformationMessage(`Nexa: no run accepts "${action}" right now.`);
      return undefined;
    }
    const pick = await vscode.window.showQuickPick(
      runs.map((run) => ({ ...runPickItem(run), run })),
      { title, placeHolder: "Run", matchOnDescription: true, matchOnDetail: true },
    );
    return pick?.run;
  }

  /** The run an invocation names, or one picked among the runs accepting `action`. */
  private async resolveRun(arg: unknown, action: RunAction, title: string): Promise<{ runId: string; run?: RunSummary; call?: ToolCallRef } | undefined> {
    const target = runTargetFromArg(arg);
    if (target.runId !== undefined) {
      let run = target.run;
      if (run === undefined) {
        try {
          run = (await this.runs.fetchRuns()).find((r) => r.run_id === target.runId);
        } catch {
          run = undefined;
        }
      }
      return { runId: target.runId, ...(run !== undefined ? { run } : {}), ...(target.call !== undefined ? { call: target.call } : {}) };
    }
    const run = await this.pickRun(action, title);
    return run !== undefined ? { runId: run.run_id, run } : undefined;
  }

  private async pickCall(calls: readonly ToolCallRef[], title: string): Promise<ToolCallRef | undefined> {
    if (calls.length === 0) return undefined;
    if (calls.length === 1) return calls[0];
    const pick = await vscode.window.showQuickPick(
      calls.map((call) => ({ label: call.tool, description: call.call_id, call })),
      { title, placeHolder: "Tool call" },
    );
    return pick?.call;
  }

  private reportRun(verb: string, result: unknown, agent?: string): void {
    const run = parseRunStarted(result);
    if (run === undefined) return;
    const who = agent !== undefined ? `${agent}: ` : "";
    void vscode.window
      .showInformationMessage(`Nexa: ${who}${verb} run ${run.run_id} (${statusLabel(run.status)}).`, "Show Run")
      .then((choice) => {
        if (choice === "Show Run") void vscode.commands.executeCommand(CLIENT_COMMANDS.showRun, run.run_id);
      });
  }

  // ----------------------------------------------------------- commands

  async executeAgent(arg: unknown): Promise<void> {
    if (!this.runsAllowed()) return;
    const target = executeTargetFromArg(arg, uriToString);
    const editor = activeNexaEditor();
    const uri = target.uri ?? editor?.document.uri.toString();
    if (uri === undefined) {
      void vscode.window.showWarningMessage("Nexa: open a Nexa file to execute one of its agents.");
      return;
    }
    const sameEditor = editor !== undefined && editor.document.uri.toString() === uri;
    let info: DocumentInfo | undefined;
    if (target.agent === undefined || target.task === undefined) info = await this.documentInfo(uri);
    let agent = target.agent;
    if (agent === undefined) {
      if (info === undefined) return;
      agent = await this.pickAgent(info, sameEditor ? editor.selection.active.line : undefined);
    }
    if (agent === undefined) return;
    const task = target.task ?? (await this.askTask(agent, taskLiterals(info, agent, "execute")));
    if (task === undefined) return;
    const result = await this.send(executeRequest(uri, agent, task));
    this.reportRun("started", result, agent);
  }

  /** Continues a run; answers with the new run's id (the Run panel follows it). */
  async continueRun(arg: unknown): Promise<string | undefined> {
    if (!this.runsAllowed()) return undefined;
    const target = await this.resolveRun(arg, "continue", "Continue which run?");
    if (target === undefined) return undefined;
    const input = await this.askInput(target.runId);
    if (input === undefined) return undefined;
    const result = await this.send(continueRequest(target.runId, input));
    this.reportRun("continued as", result, target.run?.agent);
    return parseRunStarted(result)?.run_id;
  }

  async simpleRunAction(arg: unknown, action: "resume" | "cancel"): Promise<void> {
    if (action === "resume" && !this.runsAllowed()) return;
    const target = await this.resolveRun(arg, action, action === "resume" ? "Resume which run?" : "Cancel which run?");
    if (target === undefined) return;
    const result = await this.send(action === "resume" ? resumeRequest(target.runId) : cancelRequest(target.runId));
    this.reportRun(action === "resume" ? "resumed" : "cancelled", result, target.run?.agent);
  }

  async decide(arg: unknown, action: "approve" | "deny"): Promise<void> {
    if (action === "approve" && !this.runsAllowed()) return;
    const target = await this.resolveRun(arg, action, action === "approve" ? "Approve a tool call of which run?" : "Deny a tool call of which run?");
    if (target === undefined) return;
    const call = target.call ?? (await this.pickCall(target.run?.pending_approvals ?? [], `${action === "approve" ? "Approve" : "Deny"} which tool call?`));
    if (call === undefined) {
      if (target.run !== undefined && target.run.pending_approvals.length === 0) {
        void vscode.window.showInformationMessage(`Nexa: run ${target.runId} has no tool call waiting for approval.`);
      }
      return;
    }
    const request = action === "approve" ? approveRequest(target.runId, call.call_id) : denyRequest(target.runId, call.call_id);
    const result = await this.send(request);
    this.reportRun(action === "approve" ? `approved ${call.tool} of` : `denied ${call.tool} of`, result, target.run?.agent);
  }

  async recover(arg: unknown): Promise<void> {
    if (!this.runsAllowed()) return;
    const target = await this.resolveRun(arg, "recover", "Recover a tool call of which run?");
    if (target === undefined) return;
    const call = target.call ?? (await this.pickCall(target.run?.unknown_outcomes ?? [], "Recover which tool call?"));
    if (call === undefined) return;
    const outcomes: { label: string; detail: string; outcome: RecoverOutcome }[] = [
      { label: "It completed", detail: `${call.tool} ran; give its result so the run can go on.`, outcome: "completed" },
      { label: "It was not executed", detail: `${call.tool} did not run; the run may call it again.`, outcome: "not_executed" },
    ];
    const pick = await vscode.window.showQuickPick(outcomes, { title: `What happened to ${call.tool} (${call.call_id})?` });
    if (pick === undefined) return;
    let result: string | undefined;
    if (pick.outcome === "completed") {
      result = await vscode.window.showInputBox({
        title: `Result of ${call.tool}`,
        prompt: "The tool's result (may be empty)",
        ignoreFocusOut: true,
      });
      if (result === undefined) return;
    }
    const answer = await this.send(recoverRequest(target.runId, call.call_id, pick.outcome, result));
    this.reportRun(`recovered ${call.tool} of`, answer, target.run?.agent);
  }

  async showRun(arg: unknown): Promise<void> {
    const target = await this.resolveRun(arg, "show", "Show which run?");
    if (target === undefined) return;
    const result = await this.send(showRunRequest(target.runId));
    const uri = typeof result === "object" && result !== null ? (result as { uri?: unknown }).uri : undefined;
    if (typeof uri === "string" && uri !== "") {
      try {
        await vscode.window.showTextDocument(vscode.Uri.parse(uri), { preview: true, preserveFocus: false });
      } catch (err) {
        this.server.output.appendLine(`[client] cannot open ${uri}: ${String(err)}`);
      }
    }
  }

  async migrateFile(arg: unknown): Promise<void> {
    const uri = executeTargetFromArg(arg, uriToString).uri ?? activeNexaEditor()?.document.uri.toString();
    if (uri === undefined) {
      void vscode.window.showWarningMessage("Nexa: open a Nexa file to migrate it.");
      return;
    }
    const result = parseMigrateResult(await this.send(migrateRequest(uri)));
    const msg = migrateMessage(result);
    if (msg.level === "info") void vscode.window.showInformationMessage(`Nexa: ${msg.text}`);
    else void vscode.window.showWarningMessage(`Nexa: ${msg.text}`);
    this.status.schedule(0);
  }

  async versionStatusClicked(): Promise<void> {
    const info = this.status.active;
    if (info === undefined) return;
    const status = versionStatus(info);
    if (status.click === "showBlockers") {
      const pick = await vscode.window.showQuickPick(blockerItems(info), {
        title: "The migration to Nexa 3.0 is blocked by",
        placeHolder: "Go to a finding that needs a manual change",
        matchOnDetail: true,
      });
      if (pick === undefined) return;
      const r = pick.blocker.range;
      await vscode.window.showTextDocument(vscode.Uri.parse(info.uri), {
        selection: new vscode.Range(r.start.line, r.start.character, r.end.line, r.end.character),
      });
      return;
    }
    if (status.click === "migrate") {
      const migrate = "Migrate to Nexa 3.0";
      const choice = await vscode.window.showInformationMessage(`Nexa: ${status.summary} Migrating applies the safe fixes and adds \`nexa 3.0;\`.`, migrate);
      if (choice === migrate) await vscode.commands.executeCommand(CLIENT_COMMANDS.migrateFile, vscode.Uri.parse(info.uri));
      return;
    }
    void vscode.window.showInformationMessage(`Nexa: ${status.summary}`);
  }

  /** Completes a server command coming from a code lens/action; undefined cancels it. */
  async completeServerCommand(command: string, args: unknown[]): Promise<unknown[] | undefined> {
    const runCommands: string[] = [SERVER_COMMANDS.execute, SERVER_COMMANDS.continue, SERVER_COMMANDS.resume, SERVER_COMMANDS.approve, SERVER_COMMANDS.recover];
    if (runCommands.includes(command) && !this.runsAllowed()) return undefined;
    let out = args;
    let missing = missingInput(command, out);
    if (missing === "agent") {
      const first = (out[0] ?? {}) as { uri?: unknown };
      const uri = typeof first.uri === "string" ? first.uri : activeNexaEditor()?.document.uri.toString();
      if (uri === undefined) return undefined;
      const info = await this.documentInfo(uri);
      const agent = info !== undefined ? await this.pickAgent(info) : undefined;
      if (agent === undefined) return undefined;
      out = withInput(withInput(out, "uri", uri), "agent", agent);
      missing = missingInput(command, out);
    }
    if (missing === "task") {
      const first = out[0] as { agent?: unknown; uri?: unknown };
      const agent = String(first.agent);
      const info = typeof first.uri === "string" ? await this.server.documentInfo(first.uri) : undefined;
      const task = await this.askTask(agent, taskLiterals(info, agent, "execute"));
      if (task === undefined) return undefined;
      out = withInput(out, "task", task);
    } else if (missing === "input") {
      const runId = String((out[0] as { run_id?: unknown }).run_id ?? "run");
      const input = await this.askInput(runId);
      if (input === undefined) return undefined;
      out = withInput(out, "input", input);
    }
    return out;
  }
}
