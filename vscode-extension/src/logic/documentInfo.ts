/**
 * What the server says about one document (`nexa/documentInfo`, the request
 * agreed with the server; its shape is in vscode-extension/README.md): the grammar path it parses the file with,
 * the version declaration, the agents with their task literals, and how the
 * file stands towards Nexa 3.0. The extension reads Nexa sources only through
 * this answer: it never scans Nexa text itself.
 */

export const DOCUMENT_INFO_REQUEST = "nexa/documentInfo";

export interface Position {
  line: number;
  character: number;
}
export interface Range {
  start: Position;
  end: Position;
}

export interface AgentInfo {
  name: string;
  range: Range;
  selectionRange: Range;
  taskLiterals: { execute: string[]; continue: string[] };
}

export type MigrationState = "done" | "ready" | "blocked" | "notApplicable";

export interface Blocker {
  code: string;
  range: Range;
  message: string;
}

export interface DocumentInfo {
  uri: string;
  path: string | null;
  languagePath: "2.4" | "3.0";
  versionDeclaration: { text: string; range: Range; supported: boolean } | null;
  agents: AgentInfo[];
  migration: { state: MigrationState; blockers: Blocker[] };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function position(value: unknown): Position | undefined {
  if (!isRecord(value) || typeof value["line"] !== "number" || typeof value["character"] !== "number") return undefined;
  return { line: value["line"], character: value["character"] };
}

function range(value: unknown): Range | undefined {
  if (!isRecord(value)) return undefined;
  const start = position(value["start"]);
  const end = position(value["end"]);
  return start !== undefined && end !== undefined ? { start, end } : undefined;
}

function strings(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === "string") : [];
}

const STATES: readonly MigrationState[] = ["done", "ready", "blocked", "notApplicable"];

/** Checks a `nexa/documentInfo` result; undefined when it is not one. */
export function parseDocumentInfo(value: unknown): DocumentInfo | undefined {
  if (!isRecord(value) || typeof value["uri"] !== "string") return undefined;
  const languagePath = value["languagePath"];
  if (languagePath !== "2.4" && languagePath !== "3.0") return undefined;
  let versionDeclaration: DocumentInfo["versionDeclaration"] = null;
  const decl = value["versionDeclaration"];
  if (isRecord(decl) && typeof decl["text"] === "string") {
    versionDeclaration = { text: decl["text"], range: range(decl["range"]) ?? zeroRange(), supported: decl["supported"] === true };
  }
  const agents: AgentInfo[] = [];
  for (const a of Array.isArray(value["agents"]) ? value["agents"] : []) {
    if (!isRecord(a) || typeof a["name"] !== "string") continue;
    const r = range(a["range"]) ?? zeroRange();
    const literals = isRecord(a["taskLiterals"]) ? a["taskLiterals"] : {};
    agents.push({
      name: a["name"],
      range: r,
      selectionRange: range(a["selectionRange"]) ?? r,
      taskLiterals: { execute: strings(literals["execute"]), continue: strings(literals["continue"]) },
    });
  }
  const migration = isRecord(value["migration"]) ? value["migration"] : {};
  const state = STATES.includes(migration["state"] as MigrationState) ? (migration["state"] as MigrationState) : "notApplicable";
  const blockers: Blocker[] = [];
  for (const b of Array.isArray(migration["blockers"]) ? migration["blockers"] : []) {
    if (isRecord(b) && typeof b["code"] === "string" && typeof b["message"] === "string") {
      blockers.push({ code: b["code"], message: b["message"], range: range(b["range"]) ?? zeroRange() });
    }
  }
  return {
    uri: value["uri"],
    path: typeof value["path"] === "string" ? value["path"] : null,
    languagePath,
    versionDeclaration,
    agents,
    migration: { state, blockers },
  };
}

function zeroRange(): Range {
  return { start: { line: 0, character: 0 }, end: { line: 0, character: 0 } };
}

/** The agent whose declaration contains the line, else the closest one above it. */
export function agentAtLine(agents: readonly AgentInfo[], line: number): AgentInfo | undefined {
  const inside = agents.find((a) => a.range.start.line <= line && line <= a.range.end.line);
  if (inside !== undefined) return inside;
  let best: AgentInfo | undefined;
  for (const a of agents) if (a.range.start.line <= line && (best === undefined || a.range.start.line >= best.range.start.line)) best = a;
  return best;
}

/** Task literals written for an agent in the file (deduplicated, in order). */
export function taskLiterals(info: DocumentInfo | undefined, agent: string, kind: "execute" | "continue"): string[] {
  const out: string[] = [];
  for (const a of info?.agents ?? []) if (a.name === agent) for (const t of a.taskLiterals[kind]) if (!out.includes(t)) out.push(t);
  return out;
}

export interface VersionStatus {
  text: string;
  /** One or two sentences: the path and why. */
  summary: string;
  tooltip: string;
  /** Warning colour: an unsupported declaration, or a migration that is blocked. */
  warning: boolean;
  /** What clicking the item does. */
  click: "info" | "migrate" | "showBlockers";
}

function at(r: Range): string {
  return `${r.start.line + 1}:${r.start.character + 1}`;
}

/** Status bar text, tooltip and click action for the active file. */
export function versionStatus(info: DocumentInfo): VersionStatus {
  if (info.languagePath === "3.0") {
    const summary = "This file declares `nexa 3.0;`: runs are values (execute / continue / resume).";
    return {
      text: "Nexa 3.0",
      summary,
      tooltip: summary,
      warning: false,
      click: "info",
    };
  }
  const decl = info.versionDeclaration;
  const why =
    decl === null
      ? "No version declaration: this file is on the Nexa 2.4 compatibility path."
      : decl.supported
        ? `This file declares \`nexa ${decl.text};\` (compatibility path).`
        : `Unsupported version declaration \`nexa ${decl.text}\`: the file is read on the 2.4 compatibility path.`;
  const { state, blockers } = info.migration;
  if (state === "blocked") {
    const list = blockers.map((b) => `- ${b.code} at ${at(b.range)}: ${b.message}`).join("\n");
    const n = blockers.length;
    const summary = `${why} The migration to Nexa 3.0 is blocked by ${n} finding${n === 1 ? "" : "s"} that need${n === 1 ? "s" : ""} a manual change (${blockers.map((b) => `${b.code} at ${at(b.range)}`).join(", ")}).`;
    return {
      text: "Nexa 2.4 (migration blocked)",
      summary,
      tooltip: `${why}\n\nThe migration to Nexa 3.0 is blocked by ${n} finding${n === 1 ? "" : "s"} that need${n === 1 ? "s" : ""} a manual change:\n\n${list}\n\nClick to go to one.`,
      warning: true,
      click: "showBlockers",
    };
  }
  if (state === "ready") {
    return { text: "Nexa 2.4 (compatibility)", summary: why, tooltip: `${why} Click to migrate it to Nexa 3.0.`, warning: decl !== null && !decl.supported, click: "migrate" };
  }
  return { text: "Nexa 2.4 (compatibility)", summary: why, tooltip: why, warning: decl !== null && !decl.supported, click: "info" };
}

/** One line per blocker, for a quick pick. */
export function blockerItems(info: DocumentInfo): { label: string; description: string; detail: string; blocker: Blocker }[] {
  return info.migration.blockers.map((b) => ({ label: b.code, description: `line ${b.range.start.line + 1}`, detail: b.message, blocker: b }));
}
