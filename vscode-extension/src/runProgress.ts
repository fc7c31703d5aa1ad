/**
 * Shows the server's work-done progress: an agent run's progress as a
 * notification with a Cancel button (Cancel sends
 * `window/workDoneProgress/cancel`, which cancels the run), any other
 * progress in the status bar. It replaces vscode-languageclient's own
 * `window/workDoneProgress/create` handler, which shows every progress in
 * the status bar, where VS Code offers no Cancel button.
 */

import * as vscode from "vscode";
import {
  WorkDoneProgress,
  WorkDoneProgressCancelNotification,
  WorkDoneProgressCreateRequest,
  type LanguageClient,
  type ProgressToken,
} from "vscode-languageclient/node";
import { parseProgressValue, PercentTracker, progressPlace, type ProgressValue } from "./logic/progress";

type Report = { message?: string; increment?: number };

/** One progress, from `window/workDoneProgress/create` to its `end`. */
class ProgressPart {
  private progress: vscode.Progress<Report> | undefined;
  private finish: (() => void) | undefined;
  private done = false;
  private last: Report | undefined;
  private readonly percent = new PercentTracker();
  private readonly subscription: vscode.Disposable;

  constructor(
    private readonly client: LanguageClient,
    readonly token: ProgressToken,
    private readonly onDone: (part: ProgressPart) => void,
  ) {
    this.subscription = client.onProgress(WorkDoneProgress.type, token, (value) => this.handle(parseProgressValue(value)));
  }

  private handle(value: ProgressValue | undefined): void {
    if (value === undefined || this.done) return;
    if (value.kind === "begin") this.begin(value.title, value.cancellable, this.toReport(value.message, value.percentage));
    else if (value.kind === "report") this.report(this.toReport(value.message, value.percentage));
    else this.end();
  }

  private toReport(message: string | undefined, percentage: number | undefined): Report {
    const increment = this.percent.increment(percentage);
    return { ...(message !== undefined ? { message } : {}), ...(increment !== undefined ? { increment } : {}) };
  }

  private begin(title: string, cancellable: boolean, first: Report): void {
    if (this.finish !== undefined || this.progress !== undefined) return;
    this.last = first;
    const location = progressPlace(this.token) === "notification" ? vscode.ProgressLocation.Notification : vscode.ProgressLocation.Window;
    void vscode.window.withProgress({ location, title, cancellable }, (progress, cancel) => {
      if (this.done) return Promise.resolve();
      this.progress = progress;
      const onCancel = cancel.onCancellationRequested(() => {
        void this.client.sendNotification(WorkDoneProgressCancelNotification.type, { token: this.token }).catch(() => undefined);
      });
      if (this.last !== undefined) progress.report(this.last);
      return new Promise<void>((resolve) => {
        this.finish = () => {
          onCancel.dispose();
          resolve();
        };
      });
    });
  }

  private report(value: Report): void {
    this.last = value;
    this.progress?.report(value);
  }

  /** The server ended the progress (or the client stopped): close its UI. */
  end(): void {
    if (this.done) return;
    this.done = true;
    this.subscription.dispose();
    this.finish?.();
    this.finish = undefined;
    this.onDone(this);
  }
}

/** Shows the progress of one language client; `dispose` closes what is still open. */
export class RunProgress implements vscode.Disposable {
  private readonly parts = new Set<ProgressPart>();
  private registration: vscode.Disposable | undefined;

  /** Takes over `window/workDoneProgress/create` of a started client (call after `start()`). */
  attach(client: LanguageClient): void {
    this.clear();
    this.registration = client.onRequest(WorkDoneProgressCreateRequest.type, ({ token }) => {
      this.parts.add(new ProgressPart(client, token, (part) => this.parts.delete(part)));
    });
  }

  /** Closes every open progress (the client stopped). */
  clear(): void {
    this.registration?.dispose();
    this.registration = undefined;
    for (const part of [...this.parts]) part.end();
    this.parts.clear();
  }

  get open(): number {
    return this.parts.size;
  }

  dispose(): void {
    this.clear();
  }
}
