/**
 * The "Nexa Language Server" output channel, safe to write to while the
 * window closes: VS Code disposes the extension's subscriptions (the channel
 * among them) while the language client and timers may still log, and a
 * write to a disposed channel throws "Channel has been closed". After
 * dispose, writes are dropped.
 */

import * as vscode from "vscode";

export class SafeOutputChannel implements vscode.OutputChannel {
  private closed = false;

  constructor(private readonly channel: vscode.OutputChannel) {}

  get name(): string {
    return this.channel.name;
  }

  get isClosed(): boolean {
    return this.closed;
  }

  private guard(write: () => void): void {
    if (this.closed) return;
    try {
      write();
    } catch {
      // VS Code closed the channel first (window closing): nothing to tell anyone.
      this.closed = true;
    }
  }

  append(value: string): void {
    this.guard(() => this.channel.append(value));
  }

  appendLine(value: string): void {
    this.guard(() => this.channel.appendLine(value));
  }

  replace(value: string): void {
    this.guard(() => this.channel.replace(value));
  }

  clear(): void {
    this.guard(() => this.channel.clear());
  }

  show(columnOrPreserveFocus?: vscode.ViewColumn | boolean, preserveFocus?: boolean): void {
    if (typeof columnOrPreserveFocus === "boolean" || columnOrPreserveFocus === undefined) {
      this.guard(() => this.channel.show(columnOrPreserveFocus));
    } else {
      this.guard(() => this.channel.show(columnOrPreserveFocus, preserveFocus));
    }
  }

  hide(): void {
    this.guard(() => this.channel.hide());
  }

  dispose(): void {
    if (this.closed) return;
    this.closed = true;
    this.channel.dispose();
  }
}
