/** The "Nexa Runs" view in the explorer (a thin layer over logic/runsModel). */

import * as vscode from "vscode";
import { listRunsRequest } from "./logic/commandArgs";
import { CLIENT_COMMANDS, RUNS_VIEW_ID } from "./logic/constants";
import { parseListRunsResult, RunsModel, type RunsNode, type RunSummary } from "./logic/runsModel";
import { ServerNotRunningError, type ServerManager } from "./server";
import { CoalescedRefresh } from "./logic/refresh";

class RunsTreeProvider implements vscode.TreeDataProvider<RunsNode> {
  readonly model = new RunsModel();
  private readonly changed = new vscode.EventEmitter<RunsNode | undefined | void>();
  readonly onDidChangeTreeData = this.changed.event;

  setRuns(runs: readonly RunSummary[]): void {
    this.model.setRuns(runs);
    this.changed.fire();
  }

  getChildren(node?: RunsNode): RunsNode[] {
    return this.model.children(node);
  }

  getTreeItem(node: RunsNode): vscode.TreeItem {
    const v = this.model.view(node);
    const collapsible =
      v.collapsible === "expanded"
        ? vscode.TreeItemCollapsibleState.Expanded
        : v.collapsible === "collapsed"
          ? vscode.TreeItemCollapsibleState.Collapsed
          : vscode.TreeItemCollapsibleState.None;
    const item = new vscode.TreeItem(v.label, collapsible);
    item.id = v.id;
    item.description = v.description;
    item.tooltip = new vscode.MarkdownString(v.tooltip);
    item.contextValue = v.contextValue;
    item.iconPath = new vscode.ThemeIcon(v.icon.id, v.icon.color !== undefined ? new vscode.ThemeColor(v.icon.color) : undefined);
    if (node.kind === "run" && node.run.actions.includes("show")) {
      item.command = { command: CLIENT_COMMANDS.showRun, title: "Show Run Transcript", arguments: [node] };
    }
    return item;
  }

  dispose(): void {
    this.changed.dispose();
  }
}

export class RunsView implements vscode.Disposable {
  private readonly provider = new RunsTreeProvider();
  private readonly view: vscode.TreeView<RunsNode>;
  private readonly refresher = new CoalescedRefresh(() => this.load());
  /** Why the last load failed; undefined after a successful load. */
  private lastError: string | undefined;

  constructor(private readonly server: ServerManager) {
    this.view = vscode.window.createTreeView(RUNS_VIEW_ID, { treeDataProvider: this.provider, showCollapseAll: true });
    this.view.onDidChangeVisibility((e) => {
      if (e.visible) this.scheduleRefresh();
    });
  }

  get model(): RunsModel {
    return this.provider.model;
  }

  /** Coalesces bursts of `nexa/runsChanged` notifications into one listRuns. */
  scheduleRefresh(delayMs = 250): void {
    this.refresher.schedule(delayMs);
  }

  refresh(): Promise<void> {
    return this.refresher.run();
  }

  /** Fetches the runs (also for quick picks); throws with the reason when they are unavailable. */
  async fetchRuns(): Promise<RunSummary[]> {
    await this.refresh();
    if (this.lastError !== undefined) throw new Error(this.lastError);
    return this.provider.model.allRuns();
  }

  private async load(): Promise<void> {
    if (!this.server.isRunning) {
      this.provider.setRuns([]);
      this.lastError = "The Nexa language server is not running.";
      this.view.message = this.lastError;
      return;
    }
    try {
      const result = await this.server.executeCommand(listRunsRequest());
      const runs = parseListRunsResult(result);
      this.provider.setRuns(runs);
      this.lastError = undefined;
      this.view.message = vscode.workspace.isTrusted ? undefined : "Runs are disabled in this untrusted workspace.";
    } catch (err) {
      const message = err instanceof ServerNotRunningError ? err.message : `Runs are unavailable: ${err instanceof Error ? err.message : String(err)}`;
      this.server.output.appendLine(`[client] nexa.listRuns: ${message}`);
      this.provider.setRuns([]);
      this.lastError = message;
      this.view.message = message;
    }
  }

  dispose(): void {
    this.refresher.cancel();
    this.view.dispose();
    this.provider.dispose();
  }
}
