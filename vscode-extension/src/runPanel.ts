/**
 * The Run panel: a webview that shows one run as the server has it
 * (`nexa/runDetails`, then every `nexa/runUpdated` the server sends while the
 * panel watches the run). Its buttons run the extension's commands, which send
 * the server commands; the panel keeps nothing but the page it last rendered.
 * The rendering is logic/runPanelModel.ts.
 */

import { randomBytes } from "node:crypto";
import * as vscode from "vscode";
import { runTargetFromArg } from "./logic/commandArgs";
import { CLIENT_COMMANDS } from "./logic/constants";
import {
  escapeHtml,
  makeNonce,
  panelPage,
  panelTitle,
  parsePanelMessage,
  parseRunDetails,
  renderRunDetails,
  RUN_DETAILS_REQUEST,
  type PanelAction,
  type RunDetails,
} from "./logic/runPanelModel";
import { runPickItem } from "./logic/runsModel";
import type { RunsView } from "./runsView";
import type { ServerManager } from "./server";

export const RUN_PANEL_VIEW_TYPE = "nexa.runPanel";

/** Commands the panel's buttons run (they gather any missing input themselves). */
const BUTTON_COMMANDS: Record<Exclude<PanelAction["action"], "open">, string> = {
  approve: CLIENT_COMMANDS.approve,
  deny: CLIENT_COMMANDS.deny,
  continue: CLIENT_COMMANDS.continueRun,
  resume: CLIENT_COMMANDS.resumeRun,
  cancel: CLIENT_COMMANDS.cancelRun,
  show: CLIENT_COMMANDS.showRun,
};

export class RunPanel implements vscode.Disposable {
  private panel: vscode.WebviewPanel | undefined;
  private runId: string | undefined;
  /** The body last rendered, posted again when the webview (re)loads. */
  private body = "";
  private reloadTimer: NodeJS.Timeout | undefined;
  private readonly disposables: vscode.Disposable[] = [];

  constructor(
    private readonly server: ServerManager,
    private readonly runs: RunsView,
  ) {
    this.disposables.push(
      server.onRunUpdated((params) => {
        const details = parseRunDetails(params);
        if (details !== undefined && details.run_id === this.runId) this.render(details);
      }),
      // Another run of the workspace changed (e.g. a continuation): the session chain may have.
      server.onRunsChanged((params) => {
        if (this.runId !== undefined && params?.run_id !== this.runId) this.scheduleReload();
      }),
      // A restarted server watches nothing: ask again.
      server.onDidStart(() => this.scheduleReload(0)),
    );
  }

  register(context: vscode.ExtensionContext): void {
    context.subscriptions.push(
      vscode.commands.registerCommand(CLIENT_COMMANDS.showRunPanel, async (arg?: unknown) => {
        try {
          const runId = runTargetFromArg(arg).runId ?? (await this.pickRun());
          if (runId !== undefined) await this.open(runId);
        } catch (err) {
          const message = err instanceof Error ? err.message : String(err);
          this.server.output.appendLine(`[client] ${CLIENT_COMMANDS.showRunPanel}: ${message}`);
          void vscode.window.showErrorMessage(`Nexa: ${message}`);
        }
      }),
    );
  }

  /** The run shown now, if the panel is open. */
  get currentRun(): string | undefined {
    return this.panel !== undefined ? this.runId : undefined;
  }

  private async pickRun(): Promise<string | undefined> {
    const runs = await this.runs.fetchRuns();
    if (runs.length === 0) {
      void vscode.window.showInformationMessage("Nexa: there are no runs yet.");
      return undefined;
    }
    const pick = await vscode.window.showQuickPick(
      runs.map((run) => ({ ...runPickItem(run), run })),
      { title: "Show which run in the Run panel?", placeHolder: "Run", matchOnDescription: true, matchOnDetail: true },
    );
    return pick?.run.run_id;
  }

  /** Shows `runId` in the panel (opening it), watching its updates. */
  async open(runId: string): Promise<void> {
    const previous = this.runId;
    if (previous !== undefined && previous !== runId && this.panel !== undefined) this.unwatch(previous);
    this.runId = runId;
    if (this.panel === undefined) this.panel = this.createPanel();
    else this.panel.reveal(undefined, false);
    if (previous !== runId) {
      this.panel.title = panelTitle(undefined, runId);
    }
    await this.load(runId);
  }

  private createPanel(): vscode.WebviewPanel {
    const panel = vscode.window.createWebviewPanel(RUN_PANEL_VIEW_TYPE, "Run", { viewColumn: vscode.ViewColumn.Beside, preserveFocus: false }, {
      enableScripts: true,
      localResourceRoots: [],
    });
    panel.webview.html = panelPage(makeNonce((n) => randomBytes(n)), panel.webview.cspSource);
    panel.webview.onDidReceiveMessage((message: unknown) => void this.onMessage(message));
    panel.onDidDispose(() => {
      if (this.runId !== undefined) this.unwatch(this.runId);
      this.panel = undefined;
      this.runId = undefined;
      this.body = "";
    });
    return panel;
  }

  private async load(runId: string): Promise<void> {
    try {
      const details = parseRunDetails(await this.server.request(RUN_DETAILS_REQUEST, { run_id: runId }));
      if (runId !== this.runId) return;
      if (details === undefined) throw new Error(`${RUN_DETAILS_REQUEST} answered without a run`);
      this.render(details);
    } catch (err) {
      if (runId !== this.runId) return;
      const message = err instanceof Error ? err.message : String(err);
      this.server.output.appendLine(`[client] ${RUN_DETAILS_REQUEST} ${runId}: ${message}`);
      this.post(`<div class="error" id="run-error">Run ${escapeHtml(runId)}: ${escapeHtml(message)}</div>`);
    }
  }

  private scheduleReload(delayMs = 300): void {
    if (this.panel === undefined) return;
    if (this.reloadTimer !== undefined) clearTimeout(this.reloadTimer);
    this.reloadTimer = setTimeout(() => {
      this.reloadTimer = undefined;
      if (this.runId !== undefined) void this.load(this.runId);
    }, delayMs);
  }

  private render(details: RunDetails): void {
    if (this.panel !== undefined) this.panel.title = panelTitle(details, details.run_id);
    this.post(renderRunDetails(details));
  }

  private post(body: string): void {
    this.body = body;
    void this.panel?.webview.postMessage({ type: "render", html: body });
  }

  private unwatch(runId: string): void {
    if (!this.server.isRunning) return;
    this.server.request(RUN_DETAILS_REQUEST, { run_id: runId, watch: false }).catch(() => undefined);
  }

  private async onMessage(raw: unknown): Promise<void> {
    const message = parsePanelMessage(raw);
    if (message === undefined) return;
    if (message.action === "ready") {
      if (this.body !== "") this.post(this.body);
      return;
    }
    if (message.action === "open") {
      await this.open(message.run_id);
      return;
    }
    const arg = message.action === "approve" || message.action === "deny" ? { run_id: message.run_id, call_id: message.call_id } : { run_id: message.run_id };
    const result = await vscode.commands.executeCommand<unknown>(BUTTON_COMMANDS[message.action], arg);
    // Continue answers with the new run (the next turn): the panel follows it.
    if (message.action === "continue" && typeof result === "string" && result !== "" && this.panel !== undefined) await this.open(result);
  }

  dispose(): void {
    if (this.reloadTimer !== undefined) clearTimeout(this.reloadTimer);
    for (const d of this.disposables) d.dispose();
    this.panel?.dispose();
  }
}
