/**
 * Which UI shows a work-done progress of the server, and what a `$/progress`
 * value means for it (plain data; src/runProgress.ts shows it with
 * `vscode.window.withProgress`).
 *
 * The server names the progress of an agent run `nexa-run-<hex>`
 * (nexa_lsp/server/runs/progress.py). A run's progress is a notification with
 * a Cancel button; any other progress stays in the status bar, as
 * vscode-languageclient shows it.
 */

/** Prefix of the tokens of runs' progress. */
export const RUN_PROGRESS_PREFIX = "nexa-run-";

export type ProgressPlace = "notification" | "window";

export function isRunProgressToken(token: unknown): token is string {
  return typeof token === "string" && token.startsWith(RUN_PROGRESS_PREFIX);
}

/** Where a progress with this token is shown. */
export function progressPlace(token: unknown): ProgressPlace {
  return isRunProgressToken(token) ? "notification" : "window";
}

/** One `$/progress` value, checked: `begin`, `report` or `end`; undefined for anything else. */
export type ProgressValue =
  | { kind: "begin"; title: string; message?: string; percentage?: number; cancellable: boolean }
  | { kind: "report"; message?: string; percentage?: number }
  | { kind: "end"; message?: string };

function optional<T extends string | number>(value: unknown, type: "string" | "number"): T | undefined {
  return typeof value === type ? (value as T) : undefined;
}

export function parseProgressValue(value: unknown): ProgressValue | undefined {
  if (typeof value !== "object" || value === null) return undefined;
  const v = value as Record<string, unknown>;
  const message = optional<string>(v["message"], "string");
  const percentage = optional<number>(v["percentage"], "number");
  const extra = { ...(message !== undefined ? { message } : {}), ...(percentage !== undefined ? { percentage } : {}) };
  switch (v["kind"]) {
    case "begin":
      return { kind: "begin", title: optional<string>(v["title"], "string") ?? "", cancellable: v["cancellable"] === true, ...extra };
    case "report":
      return { kind: "report", ...extra };
    case "end":
      return { kind: "end", ...(message !== undefined ? { message } : {}) };
    default:
      return undefined;
  }
}

/**
 * Turns absolute percentages into the increments `Progress.report` takes
 * (never negative, never past 100).
 */
export class PercentTracker {
  private reported = 0;

  increment(percentage: number | undefined): number | undefined {
    if (percentage === undefined || !Number.isFinite(percentage)) return undefined;
    const target = Math.max(0, Math.min(100, percentage));
    const delta = Math.max(0, target - this.reported);
    this.reported += delta;
    return delta;
  }
}
