/** Runs a short-lived process and collects its output (Node only, no vscode). */

import { execFile } from "node:child_process";
import type { CommandLine, ProcessResult } from "./interpreter";

export function runProcess(line: CommandLine, options: { timeoutMs?: number; cwd?: string } = {}): Promise<ProcessResult> {
  return new Promise((resolve) => {
    execFile(
      line.command,
      line.args,
      { timeout: options.timeoutMs ?? 20_000, cwd: options.cwd, windowsHide: true, encoding: "utf8" },
      (error, stdout, stderr) => {
        if (error === null) {
          resolve({ code: 0, stdout, stderr });
          return;
        }
        const err = error as NodeJS.ErrnoException & { code?: string | number; killed?: boolean };
        if (typeof err.code === "number") {
          resolve({ code: err.code, stdout, stderr });
        } else {
          resolve({ code: null, stdout, stderr, errorCode: err.code, errorMessage: err.message });
        }
      },
    );
  });
}
