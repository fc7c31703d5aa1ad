/** Status bar item showing which path (2.4 compatibility or 3.0) the active Nexa file is on. */

import * as vscode from "vscode";
import { CLIENT_COMMANDS, CONTEXT_KEYS, LANGUAGE_ID } from "./logic/constants";
import { scanNeedsMoreText, scanVersion, versionStatus, type VersionScan } from "./logic/versionScan";

/** Scans the leading trivia of a document, reading only as many lines as needed. */
export function scanDocument(doc: vscode.TextDocument): VersionScan {
  let lines = 64;
  for (;;) {
    const end = Math.min(lines, doc.lineCount);
    const text = doc.getText(new vscode.Range(0, 0, end, 0));
    if (end >= doc.lineCount) return scanVersion(doc.getText());
    if (!scanNeedsMoreText(text)) return scanVersion(text);
    lines *= 4;
  }
}

export class VersionStatusBar implements vscode.Disposable {
  private readonly item: vscode.StatusBarItem;
  private readonly disposables: vscode.Disposable[] = [];
  private current: { uri: string; scan: VersionScan } | undefined;

  constructor() {
    this.item = vscode.window.createStatusBarItem("nexa.version", vscode.StatusBarAlignment.Right, 100);
    this.item.name = "Nexa Version";
    this.item.command = CLIENT_COMMANDS.versionStatusClicked;
    this.disposables.push(
      this.item,
      vscode.window.onDidChangeActiveTextEditor(() => this.update()),
      vscode.workspace.onDidChangeTextDocument((e) => {
        if (e.document === vscode.window.activeTextEditor?.document) this.update();
      }),
      vscode.workspace.onDidOpenTextDocument((doc) => {
        if (doc === vscode.window.activeTextEditor?.document) this.update();
      }),
    );
    this.update();
  }

  /** Scan of the active Nexa document, if any. */
  get active(): { uri: string; scan: VersionScan } | undefined {
    return this.current;
  }

  update(): void {
    const doc = vscode.window.activeTextEditor?.document;
    if (doc === undefined || doc.languageId !== LANGUAGE_ID) {
      this.current = undefined;
      this.item.hide();
      void vscode.commands.executeCommand("setContext", CONTEXT_KEYS.activeFileIsV24, false);
      return;
    }
    const scan = scanDocument(doc);
    this.current = { uri: doc.uri.toString(), scan };
    const status = versionStatus(scan);
    this.item.text = status.text;
    this.item.tooltip = new vscode.MarkdownString(status.tooltip);
    this.item.backgroundColor =
      scan.declared && !scan.supported ? new vscode.ThemeColor("statusBarItem.warningBackground") : undefined;
    this.item.show();
    void vscode.commands.executeCommand("setContext", CONTEXT_KEYS.activeFileIsV24, scan.path === "2.4");
  }

  dispose(): void {
    for (const d of this.disposables) d.dispose();
  }
}
