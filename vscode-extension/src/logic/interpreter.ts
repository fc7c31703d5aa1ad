/**
 * Which Python runs the language server, and how it is launched.
 *
 * Order: the `nexa.server.pythonPath` setting, else the interpreter selected
 * in the Python extension (ms-python.python) when it is installed, else
 * `python3`. The server is `<python> -m nexa_lsp`.
 */

import { PIP_PACKAGE, PYTHON_MODULE } from "./constants";

export type InterpreterSource = "setting" | "python-extension" | "default";

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

/** Environment path as the Python extension's environments API reports it. */
export interface PythonEnvironmentPath {
  id: string;
  path: string;
}

export interface ResolvedPythonEnvironment {
  executable: { uri?: { fsPath: string } | undefined };
}

/** The part of the ms-python.python API this extension uses. Both the
 * environments API and the older `settings.getExecutionDetails` are accepted. */
export interface PythonExtensionApi {
  environments?: {
    getActiveEnvironmentPath(resource?: unknown): PythonEnvironmentPath | undefined;
    resolveEnvironment?(
      environment: PythonEnvironmentPath | string,
    ): Promise<ResolvedPythonEnvironment | undefined> | ResolvedPythonEnvironment | undefined;
  };
  settings?: {
    getExecutionDetails(resource?: unknown): { execCommand: string[] | undefined };
  };
}

export const DEFAULT_PYTHON = "python3";

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

/** Asks the Python extension for the selected interpreter. Never throws. */
export async function interpreterFromPythonExtension(
  api: PythonExtensionApi | undefined,
  resource?: unknown,
): Promise<string[] | undefined> {
  if (api === undefined) return undefined;
  try {
    const envs = api.environments;
    if (envs !== undefined) {
      const active = envs.getActiveEnvironmentPath(resource);
      if (active !== undefined) {
        if (envs.resolveEnvironment !== undefined) {
          const resolved = await envs.resolveEnvironment(active);
          const fsPath = resolved?.executable.uri?.fsPath;
          if (fsPath !== undefined && fsPath !== "") return [fsPath];
        }
        if (active.path !== "") return [active.path];
      }
    }
  } catch {
    // fall through to the older API
  }
  try {
    const exec = api.settings?.getExecutionDetails(resource).execCommand;
    if (exec !== undefined) {
      const parts = exec.filter((p) => p !== "");
      if (parts.length > 0) return parts;
    }
  } catch {
    // ignore: the default applies
  }
  return undefined;
}

export interface ResolveOptions {
  /** Value of `nexa.server.pythonPath` ("" or undefined when unset). */
  configured: string | undefined;
  /** Loads the Python extension API; undefined when the extension is absent. */
  pythonExtension?: () => Promise<PythonExtensionApi | undefined>;
  resource?: unknown;
  pathContext?: PathContext;
  fallback?: string;
}

export async function resolveInterpreter(options: ResolveOptions): Promise<Interpreter> {
  const configured = options.configured?.trim() ?? "";
  if (configured !== "") {
    return { command: expandPath(configured, options.pathContext ?? {}), prefixArgs: [], source: "setting" };
  }
  if (options.pythonExtension !== undefined) {
    let api: PythonExtensionApi | undefined;
    try {
      api = await options.pythonExtension();
    } catch {
      api = undefined;
    }
    const parts = await interpreterFromPythonExtension(api, options.resource);
    if (parts !== undefined) {
      const [command, ...prefixArgs] = parts as [string, ...string[]];
      return { command, prefixArgs, source: "python-extension" };
    }
  }
  return { command: options.fallback ?? DEFAULT_PYTHON, prefixArgs: [], source: "default" };
}

/** `<python> -m nexa_lsp`: exactly how the server is started. */
export function serverCommandLine(interpreter: Interpreter): CommandLine {
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
        : "default";
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
