/** The "Nexa Migration" view in the explorer and "Nexa: Migrate Workspace to Nexa 3.0" (a thin layer over logic/migrationStatus). */

import * as vscode from "vscode";
import { CLIENT_COMMANDS, LANGUAGE_ID, MIGRATION_VIEW_ID, SERVER_COMMANDS } from "./logic/constants";
import { MigrationModel, parseMigrateWorkspaceResult, parseMigrationStatus, type MigrateWorkspaceResult, type MigrationNode } from "./logic/migrationStatus";
import { ServerNotRunningError, type ServerManager } from "./server";
import { CoalescedRefresh } from "./logic/refresh";

const COLLAPSIBLE = {
  none: vscode.TreeItemCollapsibleState.None,
  collapsed: vscode.TreeItemCollapsibleState.Collapsed,
  expanded: vscode.TreeItemCollapsibleState.Expanded,
} as const;

class MigrationTreeProvider implements vscode.TreeDataProvider<MigrationNode> {
  readonly model = new MigrationModel();
  private readonly changed = new vscode.EventEmitter<MigrationNode | undefined | void>();
  readonly onDidChangeTreeData = this.changed.event;

  fire(): void {
    this.changed.fire();
  }

  getChildren(node?: MigrationNode): MigrationNode[] {
    return this.model.children(node);
  }

  getTreeItem(node: MigrationNode): vscode.TreeItem {
    const v = this.model.view(node);
    const item = new vscode.TreeItem(v.label, COLLAPSIBLE[v.collapsible]);
    item.id = v.id;
    item.description = v.description;
    item.tooltip = v.tooltip;
    item.contextValue = v.contextValue;
    item.iconPath = new vscode.ThemeIcon(v.icon.id, v.icon.color !== undefined ? new vscode.ThemeColor(v.icon.color) : undefined);
    if (v.open !== undefined) {
      const r = v.open.range;
      const options: vscode.TextDocumentShowOptions = { preview: true };
      if (r !== undefined) options.selection = new vscode.Range(r.start.line, r.start.character, r.end.line, r.end.character);
      item.command = { command: "vscode.open", title: "Open", arguments: [vscode.Uri.parse(v.open.uri), options] };
    }
    return item;
  }

  dispose(): void {
    this.changed.dispose();
  }
}

export class MigrationView implements vscode.Disposable {
  private readonly provider = new MigrationTreeProvider();
  private readonly view: vscode.TreeView<MigrationNode>;
  private readonly disposables: vscode.Disposable[] = [];
  private readonly refresher = new CoalescedRefresh(() => this.load());

  constructor(private readonly server: ServerManager) {
    this.view = vscode.window.createTreeView(MIGRATION_VIEW_ID, { treeDataProvider: this.provider, showCollapseAll: true });
    const watcher = vscode.workspace.createFileSystemWatcher("**/*.{nx,nxlib}");
    const changed = (): void => this.scheduleRefresh();
    this.disposables.push(
      this.view,
      watcher,
      watcher.onDidCreate(changed),
      watcher.onDidChange(changed),
      watcher.onDidDelete(changed),
      vscode.workspace.onDidSaveTextDocument((doc) => {
        if (doc.languageId === LANGUAGE_ID) this.scheduleRefresh();
      }),
      this.view.onDidChangeVisibility((e) => {
        if (e.visible) this.scheduleRefresh();
      }),
    );
  }

  get model(): MigrationModel {
    return this.provider.model;
  }

  register(context: vscode.ExtensionContext): void {
    context.subscriptions.push(
      vscode.commands.registerCommand(CLIENT_COMMANDS.migrateWorkspace, () => this.migrateWorkspace()),
      vscode.commands.registerCommand(CLIENT_COMMANDS.refreshMigration, () => this.refresh()),
    );
  }

  /** Coalesces bursts of saves and file events into one status request. */
  scheduleRefresh(delayMs = 500): void {
    this.refresher.schedule(delayMs);
  }

  refresh(): Promise<void> {
    return this.refresher.run();
  }

  private folders(): string[] {
    return (vscode.workspace.workspaceFolders ?? []).map((f) => f.uri.fsPath);
  }

  private async load(): Promise<void> {
    if (!this.server.isRunning) {
      this.view.message = "The Nexa language server is not running.";
      return;
    }
    try {
      const status = parseMigrationStatus(await this.server.executeCommand({ command: SERVER_COMMANDS.migrationStatus, arguments: [{}] }));
      this.provider.model.setStatus(status, this.folders());
      const c = status.counts;
      this.view.message = status.files.length === 0 ? "No Nexa files in the workspace." : undefined;
      this.view.description = `${String(c.ready)} ready · ${String(c.blocked)} blocked · ${String(c.done)} done`;
    } catch (err) {
      const message = err instanceof ServerNotRunningError ? err.message : `The migration status is unavailable: ${err instanceof Error ? err.message : String(err)}`;
      this.server.output.appendLine(`[client] ${SERVER_COMMANDS.migrationStatus}: ${message}`);
      this.view.message = message;
    }
    this.provider.fire();
  }

  /** Asks the server to migrate every ready file (one workspace edit, previewed by VS Code); the server reports the outcome. */
  async migrateWorkspace(): Promise<MigrateWorkspaceResult | undefined> {
    try {
      const answer = await this.server.executeCommand({ command: SERVER_COMMANDS.migrateWorkspace, arguments: [{}] });
      return parseMigrateWorkspaceResult(answer);
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      this.server.output.appendLine(`[client] ${SERVER_COMMANDS.migrateWorkspace}: ${message}`);
      void vscode.window.showErrorMessage(`Nexa: migrating the workspace failed: ${message}`);
      return undefined;
    } finally {
      this.scheduleRefresh(0);
    }
  }

  dispose(): void {
    this.refresher.cancel();
    for (const d of this.disposables) d.dispose();
    this.provider.dispose();
  }
}
