/** What a user does in the VS Code workbench, through the keyboard as far as possible. */

import type { FrameLocator, Page } from "playwright-core";

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Polls `probe` until it returns a value (not undefined/false), or throws after `timeoutMs`. */
export async function poll<T>(what: string, probe: () => Promise<T | undefined | false>, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined && value !== false) return value;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${last !== undefined ? `: ${String(last)}` : ""}`);
    await sleep(250);
  }
}

export interface ProblemRow {
  severity: string;
  message: string;
  /** 1-based, as VS Code shows them. */
  line: number;
  character: number;
}

export class Workbench {
  constructor(readonly page: Page) {}

  async open(url: string): Promise<void> {
    await this.page.goto(url);
    await this.page.waitForSelector(".monaco-workbench", { timeout: 90_000 });
    // The explorer shows the folder once the workbench has restored.
    await this.page.waitForSelector(".explorer-folders-view", { timeout: 60_000 });
  }

  private async quickInput(prefix: string, text: string, expect: string): Promise<void> {
    await this.page.keyboard.press(prefix);
    const input = this.page.locator(".quick-input-widget input");
    await input.waitFor({ state: "visible" });
    await input.fill(text);
    await poll(`"${expect}" in the quick input list`, async () =>
      (await this.page.locator(".quick-input-list .monaco-list-row").allInnerTexts()).some((t) => t.includes(expect)),
    );
    await this.page.keyboard.press("Enter");
    await this.page.locator(".quick-input-widget").waitFor({ state: "hidden" });
  }

  /** Quick Open (Ctrl+P) on a file name. */
  async openFile(name: string): Promise<void> {
    await this.quickInput("Control+P", name, name);
    await poll(`the editor tab of ${name}`, async () => (await this.page.locator(".tab.active").innerText()).includes(name));
    await this.focusEditor();
  }

  /** Runs a command from the Command Palette by its title. */
  async command(title: string): Promise<void> {
    await this.quickInput("F1", `>${title}`, title);
  }

  async focusEditor(): Promise<void> {
    await this.page.keyboard.press("Control+1");
    await this.page.locator(".editor-group-container.active .monaco-editor.focused").waitFor({ timeout: 10_000 });
  }

  /** Go to Line (Ctrl+G) with a 1-based line and column. */
  async goTo(line: number, column: number): Promise<void> {
    await this.focusEditor();
    await this.page.keyboard.press("Control+G");
    const input = this.page.locator(".quick-input-widget input");
    await input.waitFor({ state: "visible" });
    await input.fill(`:${line}:${column}`);
    await this.page.keyboard.press("Enter");
    await poll(`the cursor at ${line}:${column}`, async () =>
      (await this.statusText("status.editor.selection")).includes(`Ln ${line}, Col ${column}`),
    );
  }

  async statusText(id: string): Promise<string> {
    return this.page.locator(`[id="${id}"]`).innerText();
  }

  /** Texts of the status bar items. */
  async statusItems(): Promise<string[]> {
    return this.page.locator(".statusbar-item").allInnerTexts();
  }

  /** The token classes of the visible editor lines: more than one colour means the grammar applied. */
  async tokenClasses(): Promise<Map<string, string>> {
    const spans = await this.page
      .locator(".editor-group-container.active .view-lines .view-line span span")
      .evaluateAll((els) => els.map((e) => [e.textContent ?? "", e.className] as [string, string]));
    const out = new Map<string, string>();
    for (const [text, cls] of spans) if (text.trim() !== "" && !out.has(text.trim())) out.set(text.trim(), cls.split(" ")[0] ?? "");
    return out;
  }

  /** Rows of the Problems panel (opened with Ctrl+Shift+M). */
  async problems(): Promise<ProblemRow[]> {
    // Ctrl+Shift+M toggles the panel; the list is virtualised, so the panel is maximized while
    // it is read (every row rendered), then restored and closed: each call leaves the layout
    // as it found it.
    const panel = this.page.locator(".markers-panel");
    if (!(await panel.isVisible())) {
      await this.page.keyboard.press("Control+Shift+M");
      await panel.waitFor({ state: "visible" });
    }
    await this.command("View: Toggle Maximized Panel");
    let labels: string[];
    try {
      labels = await this.page.locator(".markers-panel .monaco-list-row").evaluateAll((els) => els.map((e) => e.getAttribute("aria-label") ?? ""));
    } finally {
      await this.command("View: Toggle Maximized Panel");
      await this.page.keyboard.press("Control+Shift+M");
      await panel.waitFor({ state: "hidden" });
    }
    if (process.env.NEXA_E2E_DEBUG) console.log(`# problem rows: ${JSON.stringify(labels)}`);
    const rows: ProblemRow[] = [];
    for (const label of labels) {
      // "Warning: <message> at line 11 and character 5. generated by nexa" (with related
      // information: "... character 1. This problem has references to 1 locations. generated by nexa")
      const m = /^(Error|Warning|Info): ([\s\S]*) at line (\d+) and character (\d+)\.(?: This problem has references to \d+ locations\.)? generated by /.exec(label);
      if (m !== null) rows.push({ severity: (m[1] as string).toLowerCase(), message: m[2] as string, line: Number(m[3]), character: Number(m[4]) });
    }
    return rows;
  }

  /** Show Hover at the cursor (Ctrl+K Ctrl+I) and return its text once it contains `expect`. */
  async hover(expect: string): Promise<string> {
    await this.focusEditor();
    await this.page.keyboard.press("Control+K");
    await this.page.keyboard.press("Control+I");
    const hover = this.page.locator(".monaco-hover:not(.hidden) .monaco-hover-content");
    let text = "";
    try {
      return await poll(`a hover with "${expect}"`, async () => {
        text = (await hover.allInnerTexts()).join("\n");
        return text.includes(expect) ? text : undefined;
      });
    } catch (err) {
      throw new Error(`${String(err)}; the hover says: ${text}`);
    }
  }

  /** Labels in the suggest widget, triggering it with Ctrl+Space when it did not open by itself. */
  async suggestions(): Promise<string[]> {
    const rows = this.page.locator(".editor-widget.suggest-widget.visible .monaco-list-row");
    const read = async (): Promise<string[] | undefined> => {
      const labels = await rows.evaluateAll((els) => els.map((e) => e.getAttribute("aria-label") ?? ""));
      return labels.length > 0 ? labels : undefined;
    };
    try {
      return await poll("the suggest widget", read, 5_000);
    } catch {
      await this.page.keyboard.press("Control+Space");
      return poll("the suggest widget after Ctrl+Space", read, 15_000);
    }
  }

  // ------------------------------------------------------------ runs (runs.e2e.test.ts)

  /** Texts of the code lenses of the active editor. */
  async lenses(): Promise<string[]> {
    const texts = await this.page.locator(".editor-group-container.active .codelens-decoration a").allInnerTexts();
    return texts.map((t) => t.replace(/\u00a0/g, " ").trim()).filter((t) => t !== "");
  }

  /** Clicks the first code lens whose text matches. */
  async clickLens(text: RegExp): Promise<void> {
    const lens = this.page.locator(".editor-group-container.active .codelens-decoration a").filter({ hasText: text }).first();
    try {
      await lens.waitFor({ state: "visible", timeout: 60_000 });
    } catch (err) {
      throw new Error(`${String(err)}; the lenses are ${JSON.stringify(await this.lenses())}`);
    }
    await lens.click();
  }

  /**
   * When a command asks for text (an input box opens within 2 s): checks or types `text` and
   * accepts it. A lens that carries its text opens none.
   */
  async answerIfAsked(text: string): Promise<boolean> {
    const input = this.page.locator(".quick-input-widget input");
    try {
      await input.waitFor({ state: "visible", timeout: 2_000 });
    } catch {
      return false;
    }
    const value = await input.inputValue();
    if (value !== text) await input.fill(text);
    await this.page.keyboard.press("Enter");
    await this.page.locator(".quick-input-widget").waitFor({ state: "hidden" });
    return true;
  }

  /**
   * Quick Open (Ctrl+P) that accepts only once the focused row is `name`: with other files
   * recently opened, the unfiltered list may show `name` while another row is focused.
   */
  async openFileFocused(name: string): Promise<void> {
    await this.page.keyboard.press("Control+P");
    const input = this.page.locator(".quick-input-widget input");
    await input.waitFor({ state: "visible" });
    await input.fill(name);
    await poll(`"${name}" focused in Quick Open`, async () => {
      const focused = await this.page.locator(".quick-input-list .monaco-list-row.focused").allInnerTexts();
      return focused.length === 1 && (focused[0] ?? "").includes(name);
    });
    await this.page.keyboard.press("Enter");
    await this.page.locator(".quick-input-widget").waitFor({ state: "hidden" });
    await poll(`the editor tab of ${name}`, async () => (await this.page.locator(".editor-group-container.active .tab.active").innerText()).includes(name));
    await this.focusEditor();
  }

  /** Runs a palette command that opens a quick pick, and picks the row containing `item`. */
  async commandThenPick(title: string, item: string): Promise<void> {
    await this.page.keyboard.press("F1");
    const input = this.page.locator(".quick-input-widget input");
    await input.waitFor({ state: "visible" });
    await input.fill(`>${title}`);
    await poll(`"${title}" focused in the command palette`, async () => {
      const focused = await this.page.locator(".quick-input-list .monaco-list-row.focused").allInnerTexts();
      return focused.length === 1 && (focused[0] ?? "").includes(title);
    });
    await this.page.keyboard.press("Enter");
    await poll("the command's quick pick", async () => (await input.inputValue()) === "" && (await input.isVisible()), 30_000);
    await this.pickQuickItem(item);
  }

  /** In an open quick pick: types `text` and accepts the row that contains it. */
  async pickQuickItem(text: string): Promise<void> {
    const input = this.page.locator(".quick-input-widget input");
    await input.waitFor({ state: "visible", timeout: 30_000 });
    await input.fill(text);
    // Enter accepts the focused row: wait until it is the one (the list filters as it updates).
    await poll(`"${text}" focused in the quick pick`, async () => {
      const focused = await this.page.locator(".quick-input-list .monaco-list-row.focused").allInnerTexts();
      return focused.length === 1 && (focused[0] ?? "").includes(text);
    });
    await this.page.keyboard.press("Enter");
    await this.page.locator(".quick-input-widget").waitFor({ state: "hidden" });
  }

  /** Texts of the notification toasts shown now. */
  async notificationTexts(): Promise<string[]> {
    return this.page.locator(".notifications-toasts .notification-toast").allInnerTexts();
  }

  /** Waits for a notification toast whose text matches; returns its text. */
  async notification(text: RegExp, timeoutMs = 30_000): Promise<string> {
    let seen: string[] = [];
    try {
      return await poll(
        `a notification matching ${String(text)}`,
        async () => {
          seen = await this.notificationTexts();
          return seen.find((t) => text.test(t));
        },
        timeoutMs,
      );
    } catch (err) {
      throw new Error(`${String(err)}; the notifications say ${JSON.stringify(seen)}`);
    }
  }

  /** Clicks a button of the notification toast whose text matches. */
  async clickNotificationButton(text: RegExp, label: string): Promise<void> {
    const toast = this.page.locator(".notifications-toasts .notification-toast").filter({ hasText: text }).first();
    await toast.hover();
    await toast.locator(".monaco-button", { hasText: label }).first().click();
  }

  /** The document of the webview in the active editor group (nested iframes). */
  webview(): FrameLocator {
    return this.page.frameLocator(".webview.ready").last().frameLocator("#active-frame");
  }
}
