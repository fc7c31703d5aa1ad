/**
 * Which Python runs the language server, and how it is launched.
 *
 * Candidates, in order: the `nexa.server.pythonPath` setting (alone when it
 * is set), else the interpreter selected in the Python extension
 * (ms-python.python), then `python3` and `python` on PATH. The first one that
 * is Python 3.11 or newer runs the server:
 * - `useBundled` (default): `<python> <extension>/bundled/tool/launch_server.py`,
 *   the server and its pure-Python dependencies shipped in the .vsix;
 * - `fromEnvironment`: `<python> -m nexa_lsp`, installed by the user.
 */

import { PIP_PACKAGE, PYTHON_MODULE } from "./constants";

export type InterpreterSource = "setting" | "python-extension" | "default";

export type ImportStrategy = "useBundled" | "fromEnvironment";
export const IMPORT_STRATEGIES: readonly ImportStrategy[] = ["useBundled", "fromEnvironment"];

export function importStrategy(value: unknown): ImportStrategy {
  return value === "fromEnvironment" ? "fromEnvironment" : "useBundled";
}

/** The oldest Python the server runs on (pyproject.toml: requires-python >= 3.11). */
export const MIN_PYTHON: readonly [number, number] = [3, 11];

export interface Interpreter {
  /** Executable to spawn. */
  command: string;
  /** Arguments that must precede `-m ...` (e.g. `conda run -n env python`). */
  prefixArgs: string[];
  source: InterpreterSource;
}

export interface CommandLine {
  command: string;
  args: string[];
}

export const DEFAULT_PYTHON = "python3";
/** Commands tried on PATH when neither the setting nor the Python extension names an interpreter. */
export const PATH_PYTHONS: readonly string[] = ["python3", "python"];

export interface PathContext {
  /** fsPath of the workspace folder, for `${workspaceFolder}`. */
  workspaceFolder?: string | undefined;
  /** Home directory, for a leading `~`. */
  home?: string | undefined;
  /** Environment, for `${env:NAME}`. */
  env?: Record<string, string | undefined>;
}

/** Expands `~`, `${workspaceFolder}`, `${userHome}` and `${env:NAME}` in a configured path. */
export function expandPath(value: string, ctx: PathContext): string {
  let out = value.trim();
  if (ctx.home !== undefined && (out === "~" || out.startsWith("~/") || out.startsWith("~\\"))) {
    out = ctx.home + out.slice(1);
  }
  out = out.replace(/\$\{(workspaceFolder|userHome|env:([A-Za-z_][A-Za-z0-9_]*))\}/g, (whole, name: string, envName?: string) => {
    if (name === "workspaceFolder") return ctx.workspaceFolder ?? whole;
    if (name === "userHome") return ctx.home ?? whole;
    return (envName !== undefined ? ctx.env?.[envName] : undefined) ?? "";
  });
  return out;
}

export interface ResolveOptions {
  /** Value of `nexa.server.pythonPath` ("" or undefined when unset). */
  configured: string | undefined;
  /** The Python extension's active interpreter as a command (e.g. `["/env/bin/python"]`);
   * undefined when the extension is absent or has none. May throw. */
  pythonExtension?: () => Promise<readonly string[] | undefined>;
  pathContext?: PathContext;
  pathCommands?: readonly string[];
}

/** The interpreters to try, in order (see the module comment). Never throws. */
export async function candidateInterpreters(options: ResolveOptions): Promise<Interpreter[]> {
  const configured = options.configured?.trim() ?? "";
  if (configured !== "") {
    return [{ command: expandPath(configured, options.pathContext ?? {}), prefixArgs: [], source: "setting" }];
  }
  const out: Interpreter[] = [];
  if (options.pythonExtension !== undefined) {
    let parts: readonly string[] | undefined;
    try {
      parts = (await options.pythonExtension())?.filter((p) => p !== "");
    } catch {
      parts = undefined;
    }
    if (parts !== undefined && parts.length > 0) {
      const [command, ...prefixArgs] = parts as [string, ...string[]];
      out.push({ command, prefixArgs, source: "python-extension" });
    }
  }
  for (const command of options.pathCommands ?? PATH_PYTHONS) out.push({ command, prefixArgs: [], source: "default" });
  return out;
}

/** `<python> -c "..."` printing `major.minor.micro`. */
export function versionCheckCommandLine(interpreter: Interpreter): CommandLine {
  return {
    command: interpreter.command,
    args: [...interpreter.prefixArgs, "-c", "import sys; print('%d.%d.%d' % sys.version_info[:3])"],
  };
}

/** `[major, minor, micro]` from the version check's output. */
export function parsePythonVersion(stdout: string): [number, number, number] | undefined {
  const m = /^(\d+)\.(\d+)\.(\d+)\s*$/m.exec(stdout);
  return m === null ? undefined : [Number(m[1]), Number(m[2]), Number(m[3])];
}

export function isSupportedPython(version: readonly number[]): boolean {
  const [major = 0, minor = 0] = version;
  return major > MIN_PYTHON[0] || (major === MIN_PYTHON[0] && minor >= MIN_PYTHON[1]);
}

export interface ProbedInterpreter {
  interpreter: Interpreter;
  /** "3.12.1" when the interpreter ran. */
  version?: string;
  /** Why it cannot run the server (not found, too old, failed). */
  problem?: string;
}

export interface InterpreterChoice {
  chosen?: Interpreter & { version: string };
  /** Every candidate looked at, in order, with what was found. */
  tried: ProbedInterpreter[];
}

/** Tries the candidates in order; the first Python 3.11+ wins. */
export async function findInterpreter(
  candidates: readonly Interpreter[],
  run: (line: CommandLine) => Promise<ProcessResult>,
): Promise<InterpreterChoice> {
  const tried: ProbedInterpreter[] = [];
  for (const interpreter of candidates) {
    const result = await run(versionCheckCommandLine(interpreter));
    const version = result.code === 0 ? parsePythonVersion(result.stdout) : undefined;
    if (version === undefined) {
      const problem =
        result.errorCode === "ENOENT" || result.errorCode === "EACCES"
          ? "not found"
          : `failed: ${lastLine(result.stderr) || result.errorMessage || `exit code ${String(result.code)}`}`;
      tried.push({ interpreter, problem });
      continue;
    }
    const text = version.join(".");
    if (!isSupportedPython(version)) {
      tried.push({ interpreter, version: text, problem: `Python ${text} is older than ${MIN_PYTHON.join(".")}` });
      continue;
    }
    tried.push({ interpreter, version: text });
    return { chosen: { ...interpreter, version: text }, tried };
  }
  return { tried };
}

/** The one message shown when no candidate is Python 3.11+: what was tried and what to install. */
export function noPythonMessage(tried: readonly ProbedInterpreter[]): string {
  const list = tried.map((t) => `${[t.interpreter.command, ...t.interpreter.prefixArgs].join(" ")} (${t.problem ?? "unusable"})`).join(", ");
  return (
    `Nexa: the language server needs Python ${MIN_PYTHON.join(".")} or newer, and none was found` +
    (list !== "" ? ` (tried: ${list})` : "") +
    `. Install Python ${MIN_PYTHON.join(".")}+ (python.org, or your system's package manager, e.g. \`apt install python3\`), ` +
    "then restart the server, or set nexa.server.pythonPath to a Python 3.11+ interpreter."
  );
}

/** Where the bundled server lives inside the installed extension. */
export interface BundledServer {
  /** `<extension>/bundled/tool/launch_server.py`. */
  launcher: string;
}

/**
 * Exactly how the server is started: `<python> -m nexa_lsp` from the
 * environment, or `<python> <launcher>` for the bundled copy.
 */
export function serverCommandLine(interpreter: Interpreter, bundled?: BundledServer): CommandLine {
  if (bundled !== undefined) return { command: interpreter.command, args: [...interpreter.prefixArgs, bundled.launcher] };
  return { command: interpreter.command, args: [...interpreter.prefixArgs, "-m", PYTHON_MODULE] };
}

/** `<python> -c "import nexa_lsp"`: whether the server package is importable. */
export function moduleCheckCommandLine(interpreter: Interpreter, moduleName: string = PYTHON_MODULE): CommandLine {
  return { command: interpreter.command, args: [...interpreter.prefixArgs, "-c", `import ${moduleName}`] };
}

/** `<python> -m pip install nexa-lsp`: installs the server into that interpreter. */
export function installCommandLine(interpreter: Interpreter, pipPackage: string = PIP_PACKAGE): CommandLine {
  return { command: interpreter.command, args: [...interpreter.prefixArgs, "-m", "pip", "install", pipPackage] };
}

/** Quotes one argument for display in a POSIX or Windows shell. */
export function quoteArg(arg: string, platform: NodeJS.Platform = process.platform): string {
  if (arg !== "" && /^[A-Za-z0-9_@%+=:,./\\-]+$/.test(arg)) return arg;
  if (platform === "win32") return `"${arg.replace(/"/g, '\\"')}"`;
  return `'${arg.replace(/'/g, `'\\''`)}'`;
}

export function formatCommandLine(line: CommandLine, platform: NodeJS.Platform = process.platform): string {
  return [line.command, ...line.args].map((a) => quoteArg(a, platform)).join(" ");
}

export function describeInterpreter(interpreter: Interpreter): string {
  const where =
    interpreter.source === "setting"
      ? "from the nexa.server.pythonPath setting"
      : interpreter.source === "python-extension"
        ? "selected in the Python extension"
        : "on PATH";
  return `${[interpreter.command, ...interpreter.prefixArgs].join(" ")} (${where})`;
}

/** Outcome of running the module check. */
export type ModuleCheck =
  | { status: "ok" }
  | { status: "missing-module"; detail: string }
  | { status: "interpreter-not-found"; detail: string }
  | { status: "failed"; detail: string };

export interface ProcessResult {
  /** Exit code; null when the process could not start or was killed. */
  code: number | null;
  stdout: string;
  stderr: string;
  /** Set when spawning failed (e.g. ENOENT). */
  errorCode?: string | undefined;
  errorMessage?: string | undefined;
}

/** Classifies the result of `<python> -c "import nexa_lsp"`. */
export function classifyModuleCheck(result: ProcessResult, moduleName: string = PYTHON_MODULE): ModuleCheck {
  if (result.errorCode === "ENOENT" || result.errorCode === "EACCES") {
    return { status: "interpreter-not-found", detail: result.errorMessage ?? result.errorCode };
  }
  if (result.code === 0) return { status: "ok" };
  const stderr = result.stderr.trim();
  const missing = new RegExp(`No module named ['"]?${moduleName.replace(/\./g, "\\.")}(?:['".]|$)`, "m");
  if (missing.test(stderr) || /ModuleNotFoundError/.test(stderr)) {
    return { status: "missing-module", detail: lastLine(stderr) };
  }
  if (result.code === null && result.errorMessage !== undefined) {
    return { status: "failed", detail: result.errorMessage };
  }
  return { status: "failed", detail: lastLine(stderr) || `exit code ${String(result.code)}` };
}

function lastLine(text: string): string {
  const lines = text.split(/\r?\n/).filter((l) => l.trim() !== "");
  return lines[lines.length - 1] ?? "";
}
