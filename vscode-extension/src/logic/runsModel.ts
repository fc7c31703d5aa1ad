/**
 * Model behind the "Nexa Runs" view: `nexa.listRuns` results grouped by
 * session, with an icon per status and a context value listing the actions
 * the runtime accepts for each run. Pure data: src/runsView.ts turns it into
 * VS Code tree items.
 */

export const RUN_STATUSES = [
  "running",
  "waiting_approval",
  "completed",
  "failed",
  "cancelled",
  "timed_out",
  "budget_exhausted",
] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];

export const RUN_ACTIONS = ["resume", "approve", "deny", "cancel", "continue", "recover", "show"] as const;
export type RunAction = (typeof RUN_ACTIONS)[number];

export interface ToolCallRef {
  call_id: string;
  tool: string;
}

export interface RunUsage {
  input_tokens?: number;
  output_tokens?: number;
  tool_calls?: number;
}

export interface RunSummary {
  run_id: string;
  agent: string;
  /** One of RUN_STATUSES; an unknown status from a newer server is kept as is. */
  status: string;
  session_id: string;
  parent_run_id: string | null;
  started_at: string;
  updated_at: string;
  pending_approvals: ToolCallRef[];
  unknown_outcomes: ToolCallRef[];
  usage: RunUsage;
  actions: RunAction[];
  /** Source file of the agent, when the server reports it. */
  uri?: string;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function text(value: unknown, fallback = ""): string {
  return typeof value === "string" ? value : fallback;
}

function callRefs(value: unknown): ToolCallRef[] {
  if (!Array.isArray(value)) return [];
  const out: ToolCallRef[] = [];
  for (const item of value) {
    if (isRecord(item) && typeof item["call_id"] === "string" && item["call_id"] !== "") {
      out.push({ call_id: item["call_id"], tool: text(item["tool"], "tool") });
    }
  }
  return out;
}

function usage(value: unknown): RunUsage {
  const out: RunUsage = {};
  if (!isRecord(value)) return out;
  for (const key of ["input_tokens", "output_tokens", "tool_calls"] as const) {
    const v = value[key];
    if (typeof v === "number" && Number.isFinite(v)) out[key] = v;
  }
  return out;
}

export function isRunAction(value: unknown): value is RunAction {
  return typeof value === "string" && (RUN_ACTIONS as readonly string[]).includes(value);
}

export function isKnownStatus(value: string): value is RunStatus {
  return (RUN_STATUSES as readonly string[]).includes(value);
}

/** Validates one RunSummary; undefined when it lacks a run id. */
export function parseRunSummary(value: unknown): RunSummary | undefined {
  if (!isRecord(value)) return undefined;
  const runId = value["run_id"];
  if (typeof runId !== "string" || runId === "") return undefined;
  const actions = Array.isArray(value["actions"]) ? value["actions"].filter(isRunAction) : [];
  const parent = value["parent_run_id"];
  const summary: RunSummary = {
    run_id: runId,
    agent: text(value["agent"], "?"),
    status: text(value["status"], "unknown"),
    session_id: text(value["session_id"]),
    parent_run_id: typeof parent === "string" && parent !== "" ? parent : null,
    started_at: text(value["started_at"]),
    updated_at: text(value["updated_at"], text(value["started_at"])),
    pending_approvals: callRefs(value["pending_approvals"]),
    unknown_outcomes: callRefs(value["unknown_outcomes"]),
    usage: usage(value["usage"]),
    actions: [...new Set(actions)],
  };
  if (typeof value["uri"] === "string") summary.uri = value["uri"];
  return summary;
}

/** Reads a `nexa.listRuns` result `{runs: [RunSummary]}`; throws when the shape is wrong. */
export function parseListRunsResult(value: unknown): RunSummary[] {
  if (!isRecord(value) || !Array.isArray(value["runs"])) {
    throw new Error("nexa.listRuns did not answer {runs: [...]}");
  }
  const out: RunSummary[] = [];
  for (const item of value["runs"]) {
    const run = parseRunSummary(item);
    if (run !== undefined) out.push(run);
  }
  return out;
}

export interface SessionGroup {
  sessionId: string;
  agent: string;
  /** Runs in conversation order (oldest first). */
  runs: RunSummary[];
  /** The most recently updated run. */
  latest: RunSummary;
}

function byTime(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Groups runs by session; sessions with the most recent activity come first. */
export function groupBySession(runs: readonly RunSummary[]): SessionGroup[] {
  const groups = new Map<string, RunSummary[]>();
  for (const run of runs) {
    const key = run.session_id !== "" ? run.session_id : `(no session) ${run.run_id}`;
    const list = groups.get(key);
    if (list === undefined) groups.set(key, [run]);
    else list.push(run);
  }
  const out: SessionGroup[] = [];
  for (const [sessionId, list] of groups) {
    const ordered = [...list].sort((a, b) => byTime(a.started_at, b.started_at) || byTime(a.run_id, b.run_id));
    const latest = [...list].sort((a, b) => byTime(b.updated_at, a.updated_at) || byTime(b.run_id, a.run_id))[0];
    if (latest === undefined) continue;
    out.push({ sessionId, agent: latest.agent, runs: ordered, latest });
  }
  out.sort((a, b) => byTime(b.latest.updated_at, a.latest.updated_at) || byTime(a.sessionId, b.sessionId));
  return out;
}

export interface StatusIcon {
  /** Codicon id. */
  id: string;
  /** Theme color id, when the icon is coloured. */
  color?: string;
}

const STATUS_ICONS: Record<RunStatus, StatusIcon> = {
  running: { id: "sync~spin", color: "charts.blue" },
  waiting_approval: { id: "question", color: "charts.yellow" },
  completed: { id: "pass", color: "testing.iconPassed" },
  failed: { id: "error", color: "testing.iconFailed" },
  cancelled: { id: "circle-slash", color: "disabledForeground" },
  timed_out: { id: "watch", color: "charts.orange" },
  budget_exhausted: { id: "dashboard", color: "charts.orange" },
};

export function statusIcon(status: string): StatusIcon {
  return isKnownStatus(status) ? STATUS_ICONS[status] : { id: "circle-outline" };
}

const STATUS_LABELS: Record<RunStatus, string> = {
  running: "running",
  waiting_approval: "waiting for approval",
  completed: "completed",
  failed: "failed",
  cancelled: "cancelled",
  timed_out: "timed out",
  budget_exhausted: "budget exhausted",
};

export function statusLabel(status: string): string {
  return isKnownStatus(status) ? STATUS_LABELS[status] : status.replace(/_/g, " ");
}

/** Context value of a run node: `nexaRun|action|action|`, matched by `viewItem =~ /\|continue\|/`. */
export function runContextValue(run: RunSummary): string {
  return ["nexaRun", ...RUN_ACTIONS.filter((a) => run.actions.includes(a)), ""].join("|");
}

export type RunsNode =
  | { kind: "session"; group: SessionGroup }
  | { kind: "run"; run: RunSummary; turn: number }
  | { kind: "call"; run: RunSummary; call: ToolCallRef; reason: "approval" | "unknown-outcome" };

export type Collapsible = "none" | "collapsed" | "expanded";

export interface NodeView {
  id: string;
  label: string;
  description: string;
  /** Markdown. */
  tooltip: string;
  icon: StatusIcon;
  contextValue: string;
  collapsible: Collapsible;
}

function shortTime(iso: string): string {
  // "2026-12-02T09:00:03Z" -> "2026-12-02 09:00:03"
  const m = /^(\d{4}-\d{2}-\d{2})T(\d{2}:\d{2}:\d{2})/.exec(iso);
  return m !== null ? `${m[1]} ${m[2]}` : iso;
}

function isActive(status: string): boolean {
  return status === "running" || status === "waiting_approval";
}

function usageText(u: RunUsage): string {
  const parts: string[] = [];
  if (u.input_tokens !== undefined) parts.push(`${u.input_tokens} input tokens`);
  if (u.output_tokens !== undefined) parts.push(`${u.output_tokens} output tokens`);
  if (u.tool_calls !== undefined) parts.push(`${u.tool_calls} tool calls`);
  return parts.join(", ");
}

export function runTooltip(run: RunSummary): string {
  const lines = [
    `**${run.agent}** - ${statusLabel(run.status)}`,
    "",
    `- run: \`${run.run_id}\``,
    `- session: \`${run.session_id || "-"}\``,
  ];
  if (run.parent_run_id !== null) lines.push(`- continues: \`${run.parent_run_id}\``);
  if (run.started_at !== "") lines.push(`- started: ${shortTime(run.started_at)}`);
  if (run.updated_at !== "") lines.push(`- updated: ${shortTime(run.updated_at)}`);
  const u = usageText(run.usage);
  if (u !== "") lines.push(`- usage: ${u}`);
  for (const c of run.pending_approvals) lines.push(`- waiting for approval: \`${c.tool}\` (${c.call_id})`);
  for (const c of run.unknown_outcomes) lines.push(`- unknown outcome: \`${c.tool}\` (${c.call_id})`);
  if (run.actions.length > 0) lines.push(`- actions: ${run.actions.join(", ")}`);
  return lines.join("\n");
}

export class RunsModel {
  private groups: SessionGroup[] = [];
  private runsById = new Map<string, RunSummary>();

  setRuns(runs: readonly RunSummary[]): void {
    this.groups = groupBySession(runs);
    this.runsById = new Map(runs.map((r) => [r.run_id, r]));
  }

  get isEmpty(): boolean {
    return this.groups.length === 0;
  }

  get sessions(): readonly SessionGroup[] {
    return this.groups;
  }

  run(runId: string): RunSummary | undefined {
    return this.runsById.get(runId);
  }

  allRuns(): RunSummary[] {
    return [...this.runsById.values()];
  }

  children(node?: RunsNode): RunsNode[] {
    if (node === undefined) return this.groups.map((group) => ({ kind: "session", group }));
    if (node.kind === "session") {
      return node.group.runs.map((run, i) => ({ kind: "run", run, turn: i + 1 }));
    }
    if (node.kind === "run") {
      const run = node.run;
      return [
        ...run.pending_approvals.map((call): RunsNode => ({ kind: "call", run, call, reason: "approval" })),
        ...run.unknown_outcomes.map((call): RunsNode => ({ kind: "call", run, call, reason: "unknown-outcome" })),
      ];
    }
    return [];
  }

  view(node: RunsNode): NodeView {
    switch (node.kind) {
      case "session": {
        const g = node.group;
        const n = g.runs.length;
        return {
          id: `session:${g.sessionId}`,
          label: g.agent,
          description: `${statusLabel(g.latest.status)} · ${n} run${n === 1 ? "" : "s"} · ${shortTime(g.latest.updated_at)}`,
          tooltip: `**${g.agent}** - session \`${g.sessionId}\`\n\n${n} run${n === 1 ? "" : "s"}; latest: ${statusLabel(g.latest.status)}`,
          icon: statusIcon(g.latest.status),
          contextValue: "nexaSession",
          collapsible: g.runs.some((r) => isActive(r.status)) ? "expanded" : "collapsed",
        };
      }
      case "run": {
        const r = node.run;
        const hasChildren = r.pending_approvals.length + r.unknown_outcomes.length > 0;
        return {
          id: `run:${r.run_id}`,
          label: `${node.turn}. ${statusLabel(r.status)}`,
          description: `${r.run_id} · ${shortTime(r.updated_at)}`,
          tooltip: runTooltip(r),
          icon: statusIcon(r.status),
          contextValue: runContextValue(r),
          collapsible: hasChildren ? "expanded" : "none",
        };
      }
      case "call": {
        const { run, call, reason } = node;
        const allowed: RunAction[] =
          reason === "approval"
            ? run.actions.filter((a) => a === "approve" || a === "deny")
            : run.actions.filter((a) => a === "recover");
        return {
          id: `call:${run.run_id}:${call.call_id}`,
          label: call.tool,
          description: reason === "approval" ? `waiting for approval · ${call.call_id}` : `unknown outcome · ${call.call_id}`,
          tooltip:
            reason === "approval"
              ? `Tool call \`${call.tool}\` (${call.call_id}) of run \`${run.run_id}\` waits for approval.`
              : `Tool call \`${call.tool}\` (${call.call_id}) of run \`${run.run_id}\` has an unknown outcome: recover it.`,
          icon: reason === "approval" ? { id: "shield", color: "charts.yellow" } : { id: "warning", color: "charts.orange" },
          contextValue: ["nexaCall", ...allowed, ""].join("|"),
          collapsible: "none",
        };
      }
    }
  }
}

/** Runs that accept an action, newest first (for quick picks). */
export function runsAccepting(runs: readonly RunSummary[], action: RunAction): RunSummary[] {
  return runs
    .filter((r) => r.actions.includes(action))
    .sort((a, b) => byTime(b.updated_at, a.updated_at) || byTime(a.run_id, b.run_id));
}

export interface PickItem {
  label: string;
  description: string;
  detail: string;
}

export function runPickItem(run: RunSummary): PickItem {
  const calls = [...run.pending_approvals, ...run.unknown_outcomes].map((c) => c.tool);
  return {
    label: `${run.agent} · ${statusLabel(run.status)}`,
    description: run.run_id,
    detail: [shortTime(run.updated_at), calls.length > 0 ? `tool calls: ${calls.join(", ")}` : ""]
      .filter((s) => s !== "")
      .join(" · "),
  };
}
