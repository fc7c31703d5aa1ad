/**
 * A small stand-in for the `vscode` module, enough to activate the extension
 * (and vscode-languageclient) in plain Node. Every API the extension uses is
 * implemented for real; anything else falls back to inert no-ops, recorded
 * in `state.unknown` so a test can see what it missed.
 */

/* eslint-disable @typescript-eslint/no-explicit-any */

import { readFileSync } from "node:fs";
import { join } from "node:path";

/** The settings' defaults from package.json, as VS Code applies them. */
const DEFAULTS: Map<string, unknown> = (() => {
  // out/test/unit/support -> vscode-extension/
  const pkg = JSON.parse(readFileSync(join(__dirname, "..", "..", "..", "..", "package.json"), "utf8")) as {
    contributes: { configuration: { properties: Record<string, { default: unknown }> } };
  };
  return new Map(Object.entries(pkg.contributes.configuration.properties).map(([k, v]) => [k, v.default]));
})();

type Listener<T> = (e: T) => unknown;

export class Disposable {
  static from(...items: { dispose(): unknown }[]): Disposable {
    return new Disposable(() => items.forEach((i) => i.dispose()));
  }
  constructor(private readonly fn: () => unknown = () => undefined) {}
  dispose(): void {
    this.fn();
  }
}

export class EventEmitter<T> {
  private listeners: Listener<T>[] = [];
  readonly event = (listener: Listener<T>, thisArgs?: unknown): Disposable => {
    const bound: Listener<T> = thisArgs !== undefined ? listener.bind(thisArgs) : listener;
    this.listeners.push(bound);
    return new Disposable(() => {
      this.listeners = this.listeners.filter((l) => l !== bound);
    });
  };
  fire(e: T): void {
    for (const l of [...this.listeners]) l(e);
  }
  dispose(): void {
    this.listeners = [];
  }
}

export class Uri {
  private constructor(
    readonly scheme: string,
    readonly authority: string,
    readonly path: string,
    readonly query: string,
    readonly fragment: string,
  ) {}
  static parse(value: string): Uri {
    const m = /^([a-zA-Z][\w+.-]*):(?:\/\/([^/?#]*))?([^?#]*)(?:\?([^#]*))?(?:#(.*))?$/.exec(value);
    if (m === null) return new Uri("file", "", value, "", "");
    return new Uri(m[1] ?? "file", m[2] ?? "", decodeURIComponent(m[3] ?? ""), m[4] ?? "", m[5] ?? "");
  }
  static file(path: string): Uri {
    return new Uri("file", "", path, "", "");
  }
  static joinPath(base: Uri, ...parts: string[]): Uri {
    return new Uri(base.scheme, base.authority, [base.path, ...parts].join("/").replace(/\/+/g, "/"), "", "");
  }
  get fsPath(): string {
    return this.path;
  }
  with(change: { path?: string; scheme?: string }): Uri {
    return new Uri(change.scheme ?? this.scheme, this.authority, change.path ?? this.path, this.query, this.fragment);
  }
  toString(): string {
    const enc = this.path.split("/").map(encodeURIComponent).join("/");
    return `${this.scheme}://${this.authority}${enc}${this.query ? `?${this.query}` : ""}${this.fragment ? `#${this.fragment}` : ""}`;
  }
  toJSON(): unknown {
    return { scheme: this.scheme, path: this.path };
  }
}

export class Position {
  constructor(
    readonly line: number,
    readonly character: number,
  ) {}
}

export class Range {
  readonly start: Position;
  readonly end: Position;
  constructor(a: number | Position, b: number | Position, c?: number, d?: number) {
    if (typeof a === "number") {
      this.start = new Position(a, b as number);
      this.end = new Position(c ?? 0, d ?? 0);
    } else {
      this.start = a;
      this.end = b as Position;
    }
  }
}

export class Selection extends Range {
  get active(): Position {
    return this.end;
  }
}

export class ThemeIcon {
  constructor(
    readonly id: string,
    readonly color?: ThemeColor,
  ) {}
}
export class ThemeColor {
  constructor(readonly id: string) {}
}
export class MarkdownString {
  constructor(public value = "") {}
  appendMarkdown(v: string): this {
    this.value += v;
    return this;
  }
}
export class TreeItem {
  id?: string;
  description?: string;
  tooltip?: unknown;
  contextValue?: string;
  iconPath?: unknown;
  command?: unknown;
  constructor(
    public label: string,
    public collapsibleState = 0,
  ) {}
}
export class CancellationError extends Error {}

/** A document the stub serves. */
export class StubDocument {
  version = 1;
  isClosed = false;
  isDirty = false;
  isUntitled = false;
  readonly eol = 1;
  constructor(
    readonly uri: Uri,
    readonly languageId: string,
    private text: string,
  ) {}
  get fileName(): string {
    return this.uri.fsPath;
  }
  get lineCount(): number {
    return this.text.split("\n").length;
  }
  setText(text: string): void {
    this.text = text;
    this.version++;
  }
  offsetAt(p: Position): number {
    const lines = this.text.split("\n");
    let off = 0;
    for (let i = 0; i < p.line && i < lines.length; i++) off += (lines[i] ?? "").length + 1;
    return Math.min(off + p.character, this.text.length);
  }
  getText(range?: Range): string {
    if (range === undefined) return this.text;
    return this.text.slice(this.offsetAt(range.start), this.offsetAt(range.end));
  }
  lineAt(line: number): { text: string } {
    return { text: this.text.split("\n")[line] ?? "" };
  }
  save(): Promise<boolean> {
    return Promise.resolve(true);
  }
}

export interface StubState {
  commands: Map<string, (...args: any[]) => unknown>;
  executed: { id: string; args: unknown[] }[];
  context: Map<string, unknown>;
  settings: Map<string, unknown>;
  trusted: boolean;
  documents: StubDocument[];
  activeEditor: { document: StubDocument; selection: Selection } | undefined;
  statusItems: { text: string; tooltip: unknown; visible: boolean; command?: unknown }[];
  treeViews: Map<string, { provider: any; view: { message: string | undefined } }>;
  messages: { level: "info" | "warning" | "error"; text: string; items: string[] }[];
  output: string[];
  terminals: { name?: string; shellPath?: string; shellArgs?: string[] }[];
  /** Answers for showInputBox, in order; undefined = cancelled. */
  inputAnswers: (string | undefined)[];
  /** The options of every input box shown. */
  inputBoxes: { value?: string | undefined; prompt?: string | undefined; title?: string | undefined; password?: boolean }[];
  /** Documents shown with showTextDocument, with their options. */
  shownDocuments: { uri: string; options: unknown }[];
  /** config.update calls: full key, value, target. */
  updates: { key: string; value: unknown; target: unknown }[];
  /** What the extension stored in its SecretStorage. */
  secrets: Map<string, string>;
  /** The extension's globalState. */
  globalState: Map<string, unknown>;
  /** The output channels, closed or not. */
  channels: { name: string; closed: boolean }[];
  /** Chooses a quick pick item (by label); undefined = cancelled. */
  quickPickAnswers: (string | undefined)[];
  /** Chooses a message button; undefined = dismissed. */
  messageAnswer: (text: string, items: string[]) => string | undefined;
  unknown: Set<string>;
  /** fsPath of the (single) workspace folder. */
  workspaceFolder: string;
  emitters: {
    configuration: EventEmitter<{ affectsConfiguration(section: string): boolean }>;
    activeEditor: EventEmitter<unknown>;
    trust: EventEmitter<void>;
    changeText: EventEmitter<{ document: StubDocument; contentChanges: unknown[] }>;
  };
}

function inert(path: string, state: StubState): any {
  const fn = function () {
    return new Disposable();
  };
  return new Proxy(fn, {
    get(_t, prop) {
      if (prop === "then") return undefined;
      if (typeof prop === "symbol") return undefined;
      state.unknown.add(`${path}.${prop}`);
      return inert(`${path}.${prop}`, state);
    },
    apply() {
      state.unknown.add(`${path}()`);
      return new Disposable();
    },
    construct() {
      state.unknown.add(`new ${path}`);
      return {};
    },
  });
}

function withFallback<T extends object>(path: string, obj: T, state: StubState): T {
  return new Proxy(obj, {
    get(target, prop, receiver) {
      if (typeof prop === "symbol" || prop in target) return Reflect.get(target, prop, receiver);
      if (prop === "then" || prop === "__esModule") return undefined;
      state.unknown.add(`${path}.${String(prop)}`);
      if (/^[A-Z]/.test(prop)) {
        // An unknown class or enum: a constructible, extendable function.
        return class {
          constructor(...args: unknown[]) {
            Object.assign(this, { args });
          }
        };
      }
      return inert(`${path}.${String(prop)}`, state);
    },
  });
}

function configuration(state: StubState, section: string | undefined): any {
  const full = (key: string): string => (section !== undefined && section !== "" ? `${section}.${key}` : key);
  // Defaults, overlaid by the settings (keys "user:..." hold the user-level values for inspect).
  const effective = new Map(DEFAULTS);
  for (const [name, value] of state.settings) if (!name.startsWith("user:")) effective.set(name, value);
  const nested = (prefix: string): Record<string, unknown> | undefined => {
    let found = false;
    const obj: Record<string, unknown> = {};
    for (const [name, value] of effective) {
      if (!name.startsWith(prefix)) continue;
      found = true;
      const parts = name.slice(prefix.length).split(".");
      let cur = obj;
      for (const p of parts.slice(0, -1)) cur = (cur[p] ??= {}) as Record<string, unknown>;
      cur[parts[parts.length - 1] as string] = value;
    }
    return found ? obj : undefined;
  };
  const lookup = (key: string): unknown => {
    const k = full(key);
    return effective.has(k) ? effective.get(k) : nested(`${k}.`);
  };
  // Like VS Code, the object also carries the section's content (what JSON.stringify shows).
  const content = section !== undefined && section !== "" ? (nested(`${section}.`) ?? {}) : {};
  return Object.assign(Object.create({
    get: (key: string, dflt?: unknown) => lookup(key) ?? dflt,
    has: (key: string) => lookup(key) !== undefined,
    inspect: (key: string) => ({ key: full(key), globalValue: state.settings.get(`user:${full(key)}`) }),
    update: async (key: string, value: unknown, target?: unknown) => {
      state.updates.push({ key: full(key), value, target });
      if (target === 1) {
        if (value === undefined) state.settings.delete(`user:${full(key)}`);
        else state.settings.set(`user:${full(key)}`, value);
      }
      if (value === undefined) state.settings.delete(full(key));
      else state.settings.set(full(key), value);
    },
  }), content);
}

export function createVscodeStub(): { module: any; state: StubState } {
  const state: StubState = {
    commands: new Map(),
    executed: [],
    context: new Map(),
    settings: new Map(),
    trusted: true,
    documents: [],
    activeEditor: undefined,
    statusItems: [],
    treeViews: new Map(),
    messages: [],
    output: [],
    terminals: [],
    inputAnswers: [],
    inputBoxes: [],
    shownDocuments: [],
    channels: [],
    updates: [],
    secrets: new Map(),
    globalState: new Map(),
    quickPickAnswers: [],
    messageAnswer: () => undefined,
    unknown: new Set(),
    workspaceFolder: "/workspace",
    emitters: {
      configuration: new EventEmitter(),
      activeEditor: new EventEmitter(),
      trust: new EventEmitter(),
      changeText: new EventEmitter(),
    },
  };

  const message =
    (level: "info" | "warning" | "error") =>
    (text: string, ...rest: unknown[]): Promise<string | undefined> => {
      const items = rest.filter((r): r is string => typeof r === "string");
      state.messages.push({ level, text, items });
      return Promise.resolve(state.messageAnswer(text, items));
    };

  const noEvent = (): Disposable => new Disposable();

  const window = withFallback(
    "window",
    {
      get activeTextEditor() {
        return state.activeEditor;
      },
      get visibleTextEditors() {
        return state.activeEditor !== undefined ? [state.activeEditor] : [];
      },
      tabGroups: { all: [], onDidChangeTabs: noEvent, onDidChangeTabGroups: noEvent },
      onDidChangeActiveTextEditor: state.emitters.activeEditor.event,
      onDidChangeVisibleTextEditors: noEvent,
      onDidCloseTerminal: noEvent,
      createOutputChannel: (name: string) => {
        // Like VS Code: a write after dispose throws.
        const channel = { name, closed: false };
        state.channels.push(channel);
        const write = (v: string): void => {
          if (channel.closed) throw new Error("Channel has been closed");
          state.output.push(v);
        };
        return {
          name,
          append: write,
          appendLine: write,
          replace: write,
          clear: () => write(""),
          show: () => write(""),
          hide: () => undefined,
          dispose: () => {
            channel.closed = true;
          },
        };
      },
      createStatusBarItem: () => {
        const item = {
          text: "",
          tooltip: undefined as unknown,
          visible: false,
          name: "",
          command: undefined as unknown,
          backgroundColor: undefined as unknown,
          show() {
            item.visible = true;
          },
          hide() {
            item.visible = false;
          },
          dispose() {
            item.visible = false;
          },
        };
        state.statusItems.push(item);
        return item;
      },
      createTreeView: (id: string, options: { treeDataProvider: unknown }) => {
        const view = { message: undefined as string | undefined, onDidChangeVisibility: noEvent, dispose: () => undefined, visible: true };
        state.treeViews.set(id, { provider: options.treeDataProvider, view });
        return view;
      },
      createTerminal: (options: { name?: string; shellPath?: string; shellArgs?: string[] }) => {
        state.terminals.push(options);
        return { show: () => undefined, dispose: () => undefined, sendText: () => undefined };
      },
      showInformationMessage: message("info"),
      showWarningMessage: message("warning"),
      showErrorMessage: message("error"),
      showInputBox: async (options: { validateInput?: (v: string) => unknown; value?: string; prompt?: string; title?: string; password?: boolean }) => {
        state.inputBoxes.push({ value: options.value, prompt: options.prompt, title: options.title, password: options.password === true });
        const answer = state.inputAnswers.shift();
        if (answer !== undefined && options.validateInput !== undefined && options.validateInput(answer) !== undefined) {
          throw new Error(`input box rejected ${JSON.stringify(answer)}`);
        }
        return answer;
      },
      showQuickPick: async (items: { label: string }[] | Promise<{ label: string }[]>) => {
        const list = await items;
        const label = state.quickPickAnswers.shift();
        return label === undefined ? undefined : list.find((i) => i.label === label);
      },
      showTextDocument: async (uri: unknown, options?: unknown) => {
        state.shownDocuments.push({ uri: String(uri), options });
        return undefined;
      },
    },
    state,
  );

  const workspace = withFallback(
    "workspace",
    {
      get isTrusted() {
        return state.trusted;
      },
      get workspaceFolders() {
        return [{ uri: Uri.file(state.workspaceFolder), name: "workspace", index: 0 }];
      },
      get textDocuments() {
        return state.documents;
      },
      getWorkspaceFolder: () => ({ uri: Uri.file(state.workspaceFolder), name: "workspace", index: 0 }),
      getConfiguration: (section?: string) => configuration(state, section),
      onDidChangeConfiguration: state.emitters.configuration.event,
      onDidGrantWorkspaceTrust: state.emitters.trust.event,
      onDidChangeTextDocument: state.emitters.changeText.event,
      onDidOpenTextDocument: noEvent,
      onDidCloseTextDocument: noEvent,
      onDidSaveTextDocument: noEvent,
      onWillSaveTextDocument: noEvent,
      onDidChangeWorkspaceFolders: noEvent,
      createFileSystemWatcher: () => ({
        onDidCreate: noEvent,
        onDidChange: noEvent,
        onDidDelete: noEvent,
        dispose: () => undefined,
      }),
      openTextDocument: async (uri: Uri) => {
        const doc = state.documents.find((d) => d.uri.toString() === uri.toString());
        if (doc === undefined) throw new Error(`no document ${uri.toString()}`);
        return doc;
      },
      applyEdit: async () => true,
    },
    state,
  );

  const commands = withFallback(
    "commands",
    {
      registerCommand: (id: string, fn: (...args: any[]) => unknown) => {
        if (state.commands.has(id)) throw new Error(`command '${id}' already exists`);
        state.commands.set(id, fn);
        return new Disposable(() => state.commands.delete(id));
      },
      executeCommand: async (id: string, ...args: unknown[]) => {
        state.executed.push({ id, args });
        if (id === "setContext") {
          state.context.set(String(args[0]), args[1]);
          return undefined;
        }
        const fn = state.commands.get(id);
        return fn !== undefined ? fn(...args) : undefined;
      },
      getCommands: async () => [...state.commands.keys()],
    },
    state,
  );

  const languages = withFallback(
    "languages",
    {
      match: (selector: unknown, doc: StubDocument): number => {
        const list = Array.isArray(selector) ? selector : [selector];
        return list.some((s: { language?: string; scheme?: string } | string) =>
          typeof s === "string" ? s === doc.languageId : (s.language === undefined || s.language === doc.languageId) && (s.scheme === undefined || s.scheme === doc.uri.scheme),
        )
          ? 10
          : 0;
      },
      createDiagnosticCollection: () => ({
        set: () => undefined,
        delete: () => undefined,
        clear: () => undefined,
        dispose: () => undefined,
        get: () => undefined,
        forEach: () => undefined,
      }),
    },
    state,
  );

  const module = withFallback(
    "vscode",
    {
      version: "1.90.0",
      Disposable,
      EventEmitter,
      Uri,
      Position,
      Range,
      Selection,
      ThemeIcon,
      ThemeColor,
      MarkdownString,
      TreeItem,
      CancellationError,
      TreeItemCollapsibleState: { None: 0, Collapsed: 1, Expanded: 2 },
      StatusBarAlignment: { Left: 1, Right: 2 },
      ConfigurationTarget: { Global: 1, Workspace: 2, WorkspaceFolder: 3 },
      ProgressLocation: { SourceControl: 1, Window: 10, Notification: 15 },
      DiagnosticSeverity: { Error: 0, Warning: 1, Information: 2, Hint: 3 },
      window,
      workspace,
      commands,
      languages,
      extensions: { getExtension: () => undefined, all: [], onDidChange: noEvent },
      env: { appName: "Stub Code", language: "en", machineId: "stub", openExternal: async () => true },
    },
    state,
  );
  return { module, state };
}

/** Makes `require("vscode")` return the stub (for the extension and vscode-languageclient). */
export function installVscodeStub(stub: unknown): () => void {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const Module = require("node:module") as { _load: (request: string, ...rest: unknown[]) => unknown };
  const original = Module._load;
  Module._load = function (request: string, ...rest: unknown[]) {
    if (request === "vscode") return stub;
    return original.call(this, request, ...rest);
  };
  return () => {
    Module._load = original;
  };
}

/** An ExtensionContext for the stub: subscriptions, extensionPath, SecretStorage and globalState in `state`. */
export function createContext(state: StubState, extensionPath: string): {
  subscriptions: { dispose(): unknown }[];
  extensionPath: string;
  secrets: unknown;
  globalState: unknown;
} {
  const changed = new EventEmitter<{ key: string }>();
  return {
    subscriptions: [],
    extensionPath,
    secrets: {
      get: async (key: string) => state.secrets.get(key),
      store: async (key: string, value: string) => {
        state.secrets.set(key, value);
        changed.fire({ key });
      },
      delete: async (key: string) => {
        state.secrets.delete(key);
        changed.fire({ key });
      },
      onDidChange: changed.event,
    },
    globalState: {
      get: (key: string, dflt?: unknown) => (state.globalState.has(key) ? state.globalState.get(key) : dflt),
      update: async (key: string, value: unknown) => {
        state.globalState.set(key, value);
      },
      keys: () => [...state.globalState.keys()],
      setKeysForSync: () => undefined,
    },
  };
}
