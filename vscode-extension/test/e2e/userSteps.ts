/**
 * Steps and checks shared by the trust and keys suites: code lenses and notification
 * toasts as the workbench shows them, the answer of the quick input, the expected
 * Problems rows (`nexa-lsp check`), and a search for a string in every file of a tree.
 */

import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { requiredEnv, type ChromiumBrowser, type CodeServer, type ProfileOptions } from "./codeServer";
import { poll, Workbench, type ProblemRow } from "./workbench";

/** Titles of the code lenses in the active editor. */
export async function lensTitles(page: Page): Promise<string[]> {
  return page.locator(".editor-group-container.active .codelens-decoration a").allInnerTexts();
}

/**
 * Installs the .vsix under test (NEXA_E2E_VSIX) into the profile, starts code-server with it
 * and opens the workbench in a new Chromium page.
 */
export async function openWorkbench(
  server: CodeServer,
  chromium: ChromiumBrowser,
  profile: ProfileOptions,
): Promise<{ page: Page; bench: Workbench }> {
  await server.installExtension(requiredEnv("NEXA_E2E_VSIX"), profile);
  await server.start(profile);
  const browser = await chromium.launch();
  const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  const bench = new Workbench(page);
  await bench.open(server.url);
  return { page, bench };
}

/** Clicks the code lens whose title contains `title`. */
export async function clickLens(page: Page, title: string): Promise<void> {
  const lens = page.locator(".editor-group-container.active .codelens-decoration a", { hasText: title }).first();
  await lens.waitFor({ state: "visible", timeout: 30_000 });
  await lens.click();
}

/** Texts of the notification toasts shown now. */
export async function toasts(page: Page): Promise<string[]> {
  return page.locator(".notifications-toasts .notification-toast .notification-list-item-message").allInnerTexts();
}

/** Waits for a notification toast containing `text` and returns its text. */
export async function toast(page: Page, text: string, timeoutMs = 30_000): Promise<string> {
  let seen: string[] = [];
  try {
    return await poll(`a notification "${text}"`, async () => {
      seen = await toasts(page);
      return seen.find((t) => t.includes(text));
    }, timeoutMs);
  } catch (err) {
    throw new Error(`${String(err)}; the notifications say ${JSON.stringify(seen)}`);
  }
}

/** Answers the open quick input: picks the row `row` (a quick pick) or types `text` (an input box), then Enter. */
export async function answerQuickInput(page: Page, answer: { row?: string; text?: string; expectTitle?: string }): Promise<void> {
  const widget = page.locator(".quick-input-widget");
  await widget.waitFor({ state: "visible", timeout: 15_000 });
  if (answer.expectTitle !== undefined) {
    const title = answer.expectTitle;
    await poll(`the quick input "${title}"`, async () => ((await widget.innerText()).includes(title) ? true : undefined), 15_000);
  }
  const input = page.locator(".quick-input-widget input");
  if (answer.row !== undefined) {
    const row = answer.row;
    await input.fill(row);
    await poll(`"${row}" in the quick pick`, async () =>
      (await page.locator(".quick-input-list .monaco-list-row").allInnerTexts()).some((t) => t.includes(row)),
    );
  } else if (answer.text !== undefined) {
    await input.fill(answer.text);
  }
  await page.keyboard.press("Enter");
}

interface CheckDiagnostic {
  severity: string;
  message: string;
  range: { start: { line: number; character: number } };
}

/** What `nexa-lsp check --format json` says about one file, as the Problems panel lists it (no hints). */
export function checkProblems(python: string, path: string): ProblemRow[] {
  const out = execFileSync(python, ["-m", "nexa_lsp", "check", "--format", "json", path], { encoding: "utf8" });
  const files = (JSON.parse(out) as { files: { diagnostics: CheckDiagnostic[] }[] }).files;
  const severity: Record<string, string> = { error: "error", warning: "warning", information: "info", info: "info" };
  return (files[0]?.diagnostics ?? [])
    .filter((d) => d.severity !== "hint")
    .map((d) => ({ severity: severity[d.severity] ?? d.severity, message: d.message, line: d.range.start.line + 1, character: d.range.start.character + 1 }));
}

export const byPosition = (a: ProblemRow, b: ProblemRow): number =>
  a.line - b.line || a.character - b.character || a.message.localeCompare(b.message);

/** Every file under `dir` (recursively, symlinks not followed) and the ones containing `needle`. */
export function filesContaining(dir: string, needle: string): { scanned: number; hits: string[] } {
  const bytes = Buffer.from(needle, "utf8");
  const utf16 = Buffer.from(needle, "utf16le");
  let scanned = 0;
  const hits: string[] = [];
  const walk = (d: string): void => {
    let entries: string[];
    try {
      entries = readdirSync(d);
    } catch {
      return;
    }
    for (const entry of entries) {
      const path = join(d, entry);
      let isDir: boolean;
      try {
        const st = statSync(path, { throwIfNoEntry: false });
        if (st === undefined || (!st.isDirectory() && !st.isFile())) continue;
        isDir = st.isDirectory();
      } catch {
        continue;
      }
      if (isDir) {
        walk(path);
        continue;
      }
      let content: Buffer;
      try {
        content = readFileSync(path);
      } catch {
        continue;
      }
      scanned += 1;
      if (content.includes(bytes) || content.includes(utf16)) hits.push(path);
    }
  };
  walk(dir);
  return { scanned, hits };
}

/** Runs a palette command that opens its own quick input (so the palette is not waited out). */
export async function commandWithInput(page: Page, title: string): Promise<void> {
  await page.keyboard.press("F1");
  const input = page.locator(".quick-input-widget input");
  await input.waitFor({ state: "visible" });
  await input.fill(`>${title}`);
  await poll(`"${title}" in the Command Palette`, async () =>
    (await page.locator(".quick-input-list .monaco-list-row").allInnerTexts()).some((t) => t.includes(title)),
  );
  await page.keyboard.press("Enter");
}
