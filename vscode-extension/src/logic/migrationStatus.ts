/**
 * The "Nexa Migration" view's model: the server's workspace migration status
 * (`nexa.migrationStatus`, the same JSON as `nexa/migrationStatus` and
 * `nexa-lsp check --migrate --dry-run --format json`) as a tree grouped
 * Ready / Blocked / Done, each blocker pointing at its range. No `vscode`
 * import: the view (src/migrationView.ts) turns these plain items into tree items.
 */

import type { Range } from "./documentInfo";

export type MigrationFileState = "ready" | "blocked" | "done";
export const MIGRATION_STATES: readonly MigrationFileState[] = ["ready", "blocked", "done"];

export interface MigrationBlocker {
  code: string;
  message: string;
  range: Range;
}

export interface MigrationFile {
  uri: string;
  path: string;
  state: MigrationFileState;
  blockers: MigrationBlocker[];
  rewrites: number;
  notes: string[];
}

export interface MigrationStatus {
  files: MigrationFile[];
  counts: Record<MigrationFileState, number>;
}

/** What `nexa.migrateWorkspace` answers. */
export interface MigrateWorkspaceResult {
  applied: boolean;
  migrated: string[];
  blocked: string[];
  after: MigrationStatus;
}

export type MigrationNode =
  | { kind: "group"; state: MigrationFileState }
  | { kind: "file"; file: MigrationFile }
  | { kind: "blocker"; file: MigrationFile; blocker: MigrationBlocker; index: number };

/** A tree item in plain terms; `open` is where clicking it goes. */
export interface MigrationItemView {
  id: string;
  label: string;
  description?: string;
  tooltip: string;
  icon: { id: string; color?: string };
  collapsible: "none" | "collapsed" | "expanded";
  contextValue: string;
  open?: { uri: string; range?: Range };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function fail(what: string): never {
  throw new Error(`unexpected nexa.migrationStatus answer: ${what}`);
}

function position(value: unknown, where: string): { line: number; character: number } {
  if (!isRecord(value) || !Number.isInteger(value["line"]) || !Number.isInteger(value["character"])) fail(`${where} is not a position`);
  return { line: value["line"] as number, character: value["character"] as number };
}

function range(value: unknown, where: string): Range {
  if (!isRecord(value)) fail(`${where} is not a range`);
  return { start: position(value["start"], `${where}.start`), end: position(value["end"], `${where}.end`) };
}

function blocker(value: unknown, where: string): MigrationBlocker {
  if (!isRecord(value) || typeof value["code"] !== "string" || typeof value["message"] !== "string") fail(`${where} is not a blocker`);
  return { code: value["code"], message: value["message"], range: range(value["range"], `${where}.range`) };
}

function file(value: unknown, index: number): MigrationFile {
  const where = `files[${String(index)}]`;
  if (!isRecord(value)) fail(`${where} is not an object`);
  const state = value["state"];
  if (typeof value["uri"] !== "string" || typeof value["path"] !== "string") fail(`${where} has no uri or path`);
  if (typeof state !== "string" || !(MIGRATION_STATES as readonly string[]).includes(state)) fail(`${where}.state is ${String(state)}`);
  const blockers = Array.isArray(value["blockers"]) ? value["blockers"].map((b, i) => blocker(b, `${where}.blockers[${String(i)}]`)) : [];
  const notes = Array.isArray(value["notes"]) ? value["notes"].filter((n): n is string => typeof n === "string") : [];
  const rewrites = typeof value["rewrites"] === "number" ? value["rewrites"] : 0;
  return { uri: value["uri"], path: value["path"], state: state as MigrationFileState, blockers, rewrites, notes };
}

/** Checks an answer of `nexa.migrationStatus` / `nexa/migrationStatus`; throws saying what is wrong. */
export function parseMigrationStatus(value: unknown): MigrationStatus {
  if (!isRecord(value) || !Array.isArray(value["files"])) fail("no files");
  const files = value["files"].map(file);
  const counts = { ready: 0, blocked: 0, done: 0 };
  for (const f of files) counts[f.state] += 1;
  return { files, counts };
}

/** Checks an answer of `nexa.migrateWorkspace`. */
export function parseMigrateWorkspaceResult(value: unknown): MigrateWorkspaceResult {
  if (!isRecord(value) || typeof value["applied"] !== "boolean") throw new Error("unexpected nexa.migrateWorkspace answer");
  const uris = (v: unknown): string[] => (Array.isArray(v) ? v.filter((u): u is string => typeof u === "string") : []);
  return { applied: value["applied"], migrated: uris(value["migrated"]), blocked: uris(value["blocked"]), after: parseMigrationStatus(value["after"]) };
}

const GROUP_LABELS: Record<MigrationFileState, string> = { ready: "Ready", blocked: "Blocked", done: "Done" };
const GROUP_TOOLTIPS: Record<MigrationFileState, string> = {
  ready: "These files migrate to Nexa 3.0 automatically and safely (Nexa: Migrate Workspace to Nexa 3.0).",
  blocked: "These files need a manual change first; each blocker opens at its range.",
  done: "These files are on Nexa 3.0 already (or have nothing to migrate).",
};
const GROUP_ICONS: Record<MigrationFileState, { id: string; color?: string }> = {
  ready: { id: "arrow-up", color: "charts.blue" },
  blocked: { id: "warning", color: "problemsWarningIcon.foreground" },
  done: { id: "pass", color: "testing.iconPassed" },
};

/** `a/b/c.nx` shown as `c.nx` with `a/b` beside it, relative to the first folder holding it. */
export function displayPath(path: string, folders: readonly string[]): { name: string; folder: string } {
  const normal = path.split("\\").join("/");
  let relative = normal;
  for (const f of folders) {
    let base = f.split("\\").join("/");
    while (base.endsWith("/")) base = base.slice(0, -1);
    if (normal.startsWith(`${base}/`)) {
      relative = normal.slice(base.length + 1);
      break;
    }
  }
  const cut = relative.lastIndexOf("/");
  return cut < 0 ? { name: relative, folder: "" } : { name: relative.slice(cut + 1), folder: relative.slice(0, cut) };
}

export class MigrationModel {
  private status: MigrationStatus = { files: [], counts: { ready: 0, blocked: 0, done: 0 } };

  constructor(private folders: readonly string[] = []) {}

  setStatus(status: MigrationStatus, folders: readonly string[] = this.folders): void {
    this.status = status;
    this.folders = folders;
  }

  get counts(): Record<MigrationFileState, number> {
    return this.status.counts;
  }

  files(state: MigrationFileState): MigrationFile[] {
    return this.status.files
      .filter((f) => f.state === state)
      .sort((a, b) => a.path.localeCompare(b.path));
  }

  /** The three groups at the top (empty ones too, so the counts are always shown), then files, then blockers. */
  children(node?: MigrationNode): MigrationNode[] {
    if (node === undefined) return this.status.files.length === 0 ? [] : MIGRATION_STATES.map((state) => ({ kind: "group", state }));
    if (node.kind === "group") return this.files(node.state).map((f) => ({ kind: "file", file: f }));
    if (node.kind === "file") return node.file.blockers.map((b, index) => ({ kind: "blocker", file: node.file, blocker: b, index }));
    return [];
  }

  view(node: MigrationNode): MigrationItemView {
    if (node.kind === "group") {
      const count = this.status.counts[node.state];
      return {
        id: `group:${node.state}`,
        label: GROUP_LABELS[node.state],
        description: `${String(count)} file${count === 1 ? "" : "s"}`,
        tooltip: GROUP_TOOLTIPS[node.state],
        icon: GROUP_ICONS[node.state],
        collapsible: count === 0 ? "none" : node.state === "done" ? "collapsed" : "expanded",
        contextValue: `nexaMigrationGroup.${node.state}`,
      };
    }
    if (node.kind === "file") {
      const f = node.file;
      const shown = displayPath(f.path, this.folders);
      const detail =
        f.state === "ready"
          ? `${String(f.rewrites)} rewrite${f.rewrites === 1 ? "" : "s"} and the version declaration`
          : f.state === "blocked"
            ? `${String(f.blockers.length)} blocker${f.blockers.length === 1 ? "" : "s"}`
            : "on Nexa 3.0";
      const notes = f.notes.length > 0 ? `\n\n${f.notes.map((n) => `- ${n}`).join("\n")}` : "";
      return {
        id: `file:${f.uri}`,
        label: shown.name,
        description: shown.folder !== "" ? `${shown.folder} · ${detail}` : detail,
        tooltip: `${f.path}\n\n${detail}${notes}`,
        icon: { id: "file" },
        collapsible: f.blockers.length > 0 ? "collapsed" : "none",
        contextValue: `nexaMigrationFile.${f.state}`,
        open: { uri: f.uri },
      };
    }
    const b = node.blocker;
    const line = b.range.start.line + 1;
    return {
      id: `blocker:${node.file.uri}:${String(node.index)}`,
      label: `${b.code} · line ${String(line)}`,
      description: firstSentence(b.message),
      tooltip: `${b.code} (line ${String(line)}, column ${String(b.range.start.character + 1)})\n\n${b.message}`,
      icon: { id: "circle-slash", color: "problemsWarningIcon.foreground" },
      collapsible: "none",
      contextValue: "nexaMigrationBlocker",
      open: { uri: node.file.uri, range: b.range },
    };
  }
}

/** The message up to its first `: ` or `. ` (a tree row is one line), at most 100 characters. */
export function firstSentence(message: string, limit = 100): string {
  const stops = [message.indexOf(": "), message.indexOf(". ")].filter((i) => i > 0);
  const cut = stops.length > 0 ? Math.min(...stops) : message.length;
  const head = message.slice(0, cut);
  return head.length <= limit ? head : `${head.slice(0, limit - 1)}…`;
}
