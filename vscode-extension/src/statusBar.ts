/**
 * Status bar item for the active Nexa file: the path the server parses it on
 * (2.4 compatibility or 3.0) and how it stands towards Nexa 3.0, from
 * `nexa/documentInfo`. A file whose migration is blocked says so and why.
 */

import * as vscode from "vscode";
import { CLIENT_COMMANDS, CONTEXT_KEYS, LANGUAGE_ID } from "./logic/constants";
import { versionStatus, type DocumentInfo } from "./logic/documentInfo";
import type { ServerManager } from "./server";

/** Delay after an edit before asking the server again (it re-parses first). */
const EDIT_DELAY_MS = 300;

export class VersionStatusBar implements vscode.Disposable {
  private readonly item: vscode.StatusBarItem;
  private readonly disposables: vscode.Disposable[] = [];
  private current: DocumentInfo | undefined;
  private timer: NodeJS.Timeout | undefined;
  private generation = 0;
  private disposed = false;

  constructor(private readonly server: ServerManager) {
    this.item = vscode.window.createStatusBarItem("nexa.version", vscode.StatusBarAlignment.Right, 100);
    this.item.name = "Nexa Version";
    this.item.command = CLIENT_COMMANDS.versionStatusClicked;
    this.disposables.push(
      this.item,
      vscode.window.onDidChangeActiveTextEditor(() => this.schedule(0)),
      vscode.workspace.onDidChangeTextDocument((e) => {
        if (e.document === vscode.window.activeTextEditor?.document) this.schedule(EDIT_DELAY_MS);
      }),
      vscode.workspace.onDidOpenTextDocument((doc) => {
        if (doc === vscode.window.activeTextEditor?.document) this.schedule(0);
      }),
      server.onDidStart(() => this.schedule(0)),
      server.onDidStop(() => this.schedule(0)),
    );
    this.schedule(0);
  }

  /** What the server said about the active Nexa document, if anything. */
  get active(): DocumentInfo | undefined {
    return this.current;
  }

  schedule(delayMs: number): void {
    if (this.disposed) return;
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.update();
    }, delayMs);
  }

  /** Asks the server about the active document and shows the answer. */
  async update(): Promise<void> {
    const generation = ++this.generation;
    const doc = vscode.window.activeTextEditor?.document;
    if (doc === undefined || doc.languageId !== LANGUAGE_ID) {
      this.show(undefined);
      return;
    }
    const info = await this.server.documentInfo(doc.uri.toString());
    // A newer update started meanwhile, or the window is closing.
    if (generation !== this.generation || this.disposed) return;
    this.show(info?.uri === doc.uri.toString() ? info : undefined);
  }

  private show(info: DocumentInfo | undefined): void {
    this.current = info;
    void vscode.commands.executeCommand("setContext", CONTEXT_KEYS.activeFileCanMigrate, info?.migration.state === "ready");
    if (info === undefined) {
      this.item.hide();
      return;
    }
    const status = versionStatus(info);
    this.item.text = status.text;
    this.item.tooltip = new vscode.MarkdownString(status.tooltip);
    this.item.backgroundColor = status.warning ? new vscode.ThemeColor("statusBarItem.warningBackground") : undefined;
    this.item.show();
  }

  dispose(): void {
    this.disposed = true;
    if (this.timer !== undefined) clearTimeout(this.timer);
    for (const d of this.disposables) d.dispose();
  }
}
