/**
 * Arguments of the server commands (docs/commands.md): every command takes
 * ONE object as its single argument. The builders validate what a user typed
 * and drop empty optional fields.
 */

import { SERVER_COMMANDS, type ServerCommand } from "./constants";
import { parseRunSummary, type RunAction, type RunSummary, type ToolCallRef } from "./runsModel";

/** Run settings as the user typed them (docs/commands.md); the server validates them. */
export type RunConfig = Record<string, unknown>;

export interface ExecuteArgs {
  uri: string;
  agent: string;
  task: string;
  config?: RunConfig;
}
export interface ContinueArgs {
  run_id: string;
  input: string;
  config?: RunConfig;
}
export interface RunIdArgs {
  run_id: string;
}
export interface CallArgs {
  run_id: string;
  call_id: string;
}
export type RecoverOutcome = "completed" | "not_executed";
export interface RecoverArgs {
  run_id: string;
  call_id: string;
  outcome: RecoverOutcome;
  result?: string;
}
export interface ListRunsArgs {
  agent?: string;
  session_id?: string;
  uri?: string;
}
export interface MigrateArgs {
  uri: string;
}

/** One request: `workspace/executeCommand` params. */
export interface CommandRequest<A = unknown> {
  command: ServerCommand;
  arguments: [A];
}

export class ArgumentError extends Error {}

function required(value: string | undefined, what: string): string {
  if (value === undefined || value.trim() === "") throw new ArgumentError(`${what} is required`);
  return value;
}

export function executeRequest(uri: string, agent: string, task: string, config?: RunConfig): CommandRequest<ExecuteArgs> {
  const args: ExecuteArgs = { uri: required(uri, "uri"), agent: required(agent, "agent").trim(), task: required(task, "task") };
  // Sent as typed: the server validates it (RunConfig.from_dict) and says what is wrong.
  if (config !== undefined) args.config = config;
  return { command: SERVER_COMMANDS.execute, arguments: [args] };
}

export function continueRequest(runId: string, input: string, config?: RunConfig): CommandRequest<ContinueArgs> {
  const args: ContinueArgs = { run_id: required(runId, "run_id"), input: required(input, "input") };
  if (config !== undefined) args.config = config;
  return { command: SERVER_COMMANDS.continue, arguments: [args] };
}

export function resumeRequest(runId: string): CommandRequest<RunIdArgs> {
  return { command: SERVER_COMMANDS.resume, arguments: [{ run_id: required(runId, "run_id") }] };
}

export function cancelRequest(runId: string): CommandRequest<RunIdArgs> {
  return { command: SERVER_COMMANDS.cancel, arguments: [{ run_id: required(runId, "run_id") }] };
}

export function showRunRequest(runId: string): CommandRequest<RunIdArgs> {
  return { command: SERVER_COMMANDS.showRun, arguments: [{ run_id: required(runId, "run_id") }] };
}

export function approveRequest(runId: string, callId: string): CommandRequest<CallArgs> {
  return {
    command: SERVER_COMMANDS.approve,
    arguments: [{ run_id: required(runId, "run_id"), call_id: required(callId, "call_id") }],
  };
}

export function denyRequest(runId: string, callId: string): CommandRequest<CallArgs> {
  return {
    command: SERVER_COMMANDS.deny,
    arguments: [{ run_id: required(runId, "run_id"), call_id: required(callId, "call_id") }],
  };
}

export function recoverRequest(
  runId: string,
  callId: string,
  outcome: RecoverOutcome,
  result?: string,
): CommandRequest<RecoverArgs> {
  if (outcome !== "completed" && outcome !== "not_executed") {
    throw new ArgumentError(`outcome must be "completed" or "not_executed"`);
  }
  const args: RecoverArgs = { run_id: required(runId, "run_id"), call_id: required(callId, "call_id"), outcome };
  if (outcome === "completed" && result !== undefined && result !== "") args.result = result;
  return { command: SERVER_COMMANDS.recover, arguments: [args] };
}

export function listRunsRequest(filter: ListRunsArgs = {}): CommandRequest<ListRunsArgs> {
  const args: ListRunsArgs = {};
  if (filter.agent !== undefined && filter.agent !== "") args.agent = filter.agent;
  if (filter.session_id !== undefined && filter.session_id !== "") args.session_id = filter.session_id;
  if (filter.uri !== undefined && filter.uri !== "") args.uri = filter.uri;
  return { command: SERVER_COMMANDS.listRuns, arguments: [args] };
}

export function migrateRequest(uri: string): CommandRequest<MigrateArgs> {
  return { command: SERVER_COMMANDS.migrateFile, arguments: [{ uri: required(uri, "uri") }] };
}

/** Server command for a run action from the runs view. */
export function serverCommandForAction(action: RunAction): ServerCommand {
  switch (action) {
    case "resume":
      return SERVER_COMMANDS.resume;
    case "approve":
      return SERVER_COMMANDS.approve;
    case "deny":
      return SERVER_COMMANDS.deny;
    case "cancel":
      return SERVER_COMMANDS.cancel;
    case "continue":
      return SERVER_COMMANDS.continue;
    case "recover":
      return SERVER_COMMANDS.recover;
    case "show":
      return SERVER_COMMANDS.showRun;
  }
}

// ------------------------------------------------------ invocation arguments

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

export interface ExecuteTarget {
  uri?: string;
  agent?: string;
  task?: string;
}

/**
 * What an Execute invocation already names: `{uri, agent, task?}` from a code
 * lens, a bare agent name, or nothing (palette). VS Code `Uri` objects are
 * converted by the caller (`uriToString`) before this runs.
 */
export function executeTargetFromArg(arg: unknown, uriToString?: (value: unknown) => string | undefined): ExecuteTarget {
  const target: ExecuteTarget = {};
  if (typeof arg === "string") {
    // A uri has a scheme ("file:..."); anything else names an agent (the server checks it).
    if (arg.includes(":")) target.uri = arg;
    else if (arg.trim() !== "") target.agent = arg.trim();
    return target;
  }
  if (!isRecord(arg)) return target;
  if (typeof arg["agent"] === "string" && arg["agent"] !== "") target.agent = arg["agent"];
  if (typeof arg["task"] === "string" && arg["task"] !== "") target.task = arg["task"];
  const uri = arg["uri"];
  if (typeof uri === "string" && uri !== "") target.uri = uri;
  else if (uri !== undefined && uriToString !== undefined) {
    const s = uriToString(uri);
    if (s !== undefined) target.uri = s;
  } else if (uriToString !== undefined) {
    const s = uriToString(arg);
    if (s !== undefined) target.uri = s;
  }
  return target;
}

export interface RunTarget {
  runId?: string;
  run?: RunSummary;
  call?: ToolCallRef;
}

/**
 * The run (and tool call) an invocation refers to: a runs-view node
 * (`{kind: "run", run}` / `{kind: "call", run, call}` / `{kind: "session", group}`),
 * `{run_id, call_id?}` from a code lens, or a run id string.
 */
export function runTargetFromArg(arg: unknown): RunTarget {
  if (typeof arg === "string") return arg !== "" ? { runId: arg } : {};
  if (!isRecord(arg)) return {};
  const target: RunTarget = {};
  if (arg["kind"] === "session" && isRecord(arg["group"])) {
    const latest = parseRunSummary(arg["group"]["latest"]);
    if (latest !== undefined) {
      target.run = latest;
      target.runId = latest.run_id;
    }
    return target;
  }
  const run = parseRunSummary(arg["run"]);
  if (run !== undefined) {
    target.run = run;
    target.runId = run.run_id;
  } else if (typeof arg["run_id"] === "string" && arg["run_id"] !== "") {
    target.runId = arg["run_id"];
  }
  const call = arg["call"];
  if (isRecord(call) && typeof call["call_id"] === "string" && call["call_id"] !== "") {
    target.call = { call_id: call["call_id"], tool: typeof call["tool"] === "string" ? call["tool"] : "tool" };
  } else if (typeof arg["call_id"] === "string" && arg["call_id"] !== "") {
    target.call = { call_id: arg["call_id"], tool: typeof arg["tool"] === "string" ? arg["tool"] : "tool" };
  }
  return target;
}

// ----------------------------------------------- lens commands from the server

/** What is missing from the argument of a server command invoked by a code
 * lens or code action, and must be asked for before it is sent. */
export type MissingInput = "task" | "agent" | "input" | undefined;

export function missingInput(command: string, args: readonly unknown[]): MissingInput {
  const first = args[0];
  const obj = isRecord(first) ? first : {};
  const blank = (v: unknown): boolean => typeof v !== "string" || v.trim() === "";
  if (command === SERVER_COMMANDS.execute) {
    if (blank(obj["agent"])) return "agent";
    if (blank(obj["task"])) return "task";
  }
  if (command === SERVER_COMMANDS.continue && blank(obj["input"])) return "input";
  return undefined;
}

/** Returns the args with the user's answer filled in (the first argument is copied). */
export function withInput(args: readonly unknown[], field: "task" | "agent" | "input" | "uri", value: string): unknown[] {
  const first = isRecord(args[0]) ? { ...args[0] } : {};
  first[field] = value;
  return [first, ...args.slice(1)];
}

// ------------------------------------------------------------------ results

export interface RunStarted {
  run_id: string;
  session_id?: string;
  parent_run_id?: string | null;
  status: string;
}

export function parseRunStarted(value: unknown): RunStarted | undefined {
  if (!isRecord(value) || typeof value["run_id"] !== "string") return undefined;
  const out: RunStarted = { run_id: value["run_id"], status: typeof value["status"] === "string" ? value["status"] : "unknown" };
  if (typeof value["session_id"] === "string") out.session_id = value["session_id"];
  if (typeof value["parent_run_id"] === "string" || value["parent_run_id"] === null) {
    out.parent_run_id = value["parent_run_id"] as string | null;
  }
  return out;
}

export interface MigrateResult {
  applied: boolean;
  remaining: string[];
}

export function parseMigrateResult(value: unknown): MigrateResult {
  if (!isRecord(value)) return { applied: false, remaining: [] };
  const remaining = Array.isArray(value["remaining"])
    ? value["remaining"].filter((c): c is string => typeof c === "string")
    : [];
  return { applied: value["applied"] === true, remaining };
}

export function migrateMessage(result: MigrateResult): { level: "info" | "warning"; text: string } {
  const rest =
    result.remaining.length > 0
      ? ` ${result.remaining.length} finding${result.remaining.length === 1 ? "" : "s"} still need${result.remaining.length === 1 ? "s" : ""} a manual change: ${result.remaining.join(", ")}.`
      : "";
  if (result.applied) return { level: "info", text: `Migrated the file to Nexa 3.0.${rest}` };
  return { level: "warning", text: `The file was not migrated.${rest}` };
}

/** LSP error codes after which the extension itself shows the error. A
 * refused command is already shown by the server (window/showMessage). */
export function clientShouldShowError(code: number | undefined): boolean {
  // No code: the request never reached the server (not running, connection lost).
  // -32601 MethodNotFound: a server without that command.
  // -32002 ServerNotInitialized; -32099..-32096 connection-level errors of vscode-jsonrpc.
  return code === undefined || code === -32601 || code === -32002 || (code <= -32096 && code >= -32099);
}
