/**
 * The Run panel's logic (plain data, no `vscode`): the server's `RunDetails`
 * (`nexa/runDetails` / `nexa/runUpdated`, docs/commands.md) checked, rendered
 * to escaped HTML, the panel's page with its Content Security Policy, and the
 * messages its buttons send back. src/runPanel.ts hosts it in a webview.
 *
 * The panel holds no state of its own: everything it shows comes from the
 * last `RunDetails` the server sent, and every button sends a server command.
 */

import { isRunAction, statusLabel, type RunAction } from "./runsModel";

export const RUN_DETAILS_REQUEST = "nexa/runDetails";
export const RUN_UPDATED_NOTIFICATION = "nexa/runUpdated";

export interface PanelToolCall {
  call_id: string;
  tool: string;
  arguments: string;
  status: string;
  result: string | null;
  approval: { status: string; decided_by: string | null; reason: string | null } | null;
}

export interface PanelChainRun {
  run_id: string;
  status: string;
  input: string;
  current: boolean;
}

export interface PanelBudget {
  token_budget: number | null;
  tokens_left: number | null;
  tool_call_budget: number | null;
  tool_calls_left: number | null;
  deadline: string | null;
  seconds_left: number | null;
}

export interface RunDetails {
  run_id: string;
  agent: string;
  status: string;
  live: boolean;
  driven_elsewhere: string | null;
  session_id: string;
  parent_run_id: string | null;
  input: string;
  output: string;
  streaming: string;
  activity: string;
  error: { code: string; message: string } | null;
  messages: { role: string; content: string; tool_name: string | null; is_error: boolean }[];
  tool_calls: PanelToolCall[];
  usage: { input_tokens: number; output_tokens: number; total_tokens: number; tool_calls: number };
  budget: PanelBudget;
  chain: PanelChainRun[];
  actions: RunAction[];
  refused: { action: string; reason: string }[];
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

const str = (v: unknown, fallback = ""): string => (typeof v === "string" ? v : fallback);
const strOrNull = (v: unknown): string | null => (typeof v === "string" ? v : null);
const num = (v: unknown): number => (typeof v === "number" && Number.isFinite(v) ? v : 0);
const numOrNull = (v: unknown): number | null => (typeof v === "number" && Number.isFinite(v) ? v : null);
const records = (v: unknown): Record<string, unknown>[] => (Array.isArray(v) ? v.filter(isRecord) : []);

/** The `RunDetails` in a server answer, or undefined when it is not one (no run_id). */
export function parseRunDetails(value: unknown): RunDetails | undefined {
  if (!isRecord(value) || typeof value["run_id"] !== "string" || value["run_id"] === "") return undefined;
  const error = isRecord(value["error"]) ? { code: str(value["error"]["code"]), message: str(value["error"]["message"]) } : null;
  const usage = isRecord(value["usage"]) ? value["usage"] : {};
  const budget = isRecord(value["budget"]) ? value["budget"] : {};
  return {
    run_id: value["run_id"],
    agent: str(value["agent"], "agent"),
    status: str(value["status"], "unknown"),
    live: value["live"] === true,
    driven_elsewhere: strOrNull(value["driven_elsewhere"]),
    session_id: str(value["session_id"]),
    parent_run_id: strOrNull(value["parent_run_id"]),
    input: str(value["input"]),
    output: str(value["output"]),
    streaming: str(value["streaming"]),
    activity: str(value["activity"]),
    error,
    messages: records(value["messages"]).map((m) => ({
      role: str(m["role"]),
      content: str(m["content"]),
      tool_name: strOrNull(m["tool_name"]),
      is_error: m["is_error"] === true,
    })),
    tool_calls: records(value["tool_calls"])
      .filter((c) => typeof c["call_id"] === "string")
      .map((c) => ({
        call_id: str(c["call_id"]),
        tool: str(c["tool"], "tool"),
        arguments: typeof c["arguments"] === "string" ? c["arguments"] : JSON.stringify(c["arguments"] ?? {}),
        status: str(c["status"], "requested"),
        result: strOrNull(c["result"]),
        approval: isRecord(c["approval"])
          ? { status: str(c["approval"]["status"]), decided_by: strOrNull(c["approval"]["decided_by"]), reason: strOrNull(c["approval"]["reason"]) }
          : null,
      })),
    usage: {
      input_tokens: num(usage["input_tokens"]),
      output_tokens: num(usage["output_tokens"]),
      total_tokens: num(usage["total_tokens"]),
      tool_calls: num(usage["tool_calls"]),
    },
    budget: {
      token_budget: numOrNull(budget["token_budget"]),
      tokens_left: numOrNull(budget["tokens_left"]),
      tool_call_budget: numOrNull(budget["tool_call_budget"]),
      tool_calls_left: numOrNull(budget["tool_calls_left"]),
      deadline: strOrNull(budget["deadline"]),
      seconds_left: numOrNull(budget["seconds_left"]),
    },
    chain: records(value["chain"])
      .filter((r) => typeof r["run_id"] === "string")
      .map((r) => ({ run_id: str(r["run_id"]), status: str(r["status"]), input: str(r["input"]), current: r["current"] === true })),
    actions: Array.isArray(value["actions"]) ? value["actions"].filter(isRunAction) : [],
    refused: records(value["refused"]).map((r) => ({ action: str(r["action"]), reason: str(r["reason"]) })),
  };
}

/** HTML-escapes text (element content and attribute values). */
export function escapeHtml(text: string): string {
  return text.replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll(">", "&gt;").replaceAll('"', "&quot;").replaceAll("'", "&#39;");
}

/** Tool arguments as indented JSON when they parse, else as sent. */
export function prettyArguments(text: string): string {
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
}

/** `used / budget (left)` or just `used` when there is no budget. */
export function againstBudget(used: number, budget: number | null, left: number | null): string {
  if (budget === null) return `${used}`;
  return `${used} / ${budget}${left !== null ? ` (${left} left)` : ""}`;
}

/** Time to the deadline in words: `1 min 58 s left`, `deadline passed`, `run ended` (settled) or `no deadline`. */
export function timeLeft(budget: PanelBudget): string {
  if (budget.deadline === null) return "no deadline";
  if (budget.seconds_left === null) return "run ended";
  const s = Math.round(budget.seconds_left);
  if (s <= 0) return "deadline passed";
  const min = Math.floor(s / 60);
  return `${min > 0 ? `${min} min ` : ""}${s % 60} s left`;
}

/** A button of the panel; `data-*` attributes say what it sends back. */
function button(label: string, action: PanelAction["action"], runId: string, callId?: string, title?: string): string {
  const call = callId !== undefined ? ` data-call-id="${escapeHtml(callId)}"` : "";
  const tip = title !== undefined ? ` title="${escapeHtml(title)}"` : "";
  return `<button type="button" class="action action-${action}" data-action="${action}" data-run-id="${escapeHtml(runId)}"${call}${tip}>${escapeHtml(label)}</button>`;
}

const RUN_BUTTONS: readonly ["continue" | "resume" | "cancel" | "show", string][] = [
  ["continue", "Continue…"],
  ["resume", "Resume"],
  ["cancel", "Cancel"],
  ["show", "Transcript"],
];

function toolCallHtml(d: RunDetails, call: PanelToolCall): string {
  const waiting = call.status === "waiting_approval";
  const buttons = waiting
    ? [
        d.actions.includes("approve") ? button("Approve", "approve", d.run_id, call.call_id, `Approve ${call.tool}`) : "",
        d.actions.includes("deny") ? button("Deny", "deny", d.run_id, call.call_id, `Deny ${call.tool}`) : "",
      ].join("")
    : "";
  const approval =
    call.approval !== null && call.approval.status !== "pending"
      ? `<div class="approval">${escapeHtml(call.approval.status)}${call.approval.decided_by !== null ? ` by ${escapeHtml(call.approval.decided_by)}` : ""}${call.approval.reason !== null ? `: ${escapeHtml(call.approval.reason)}` : ""}</div>`
      : "";
  const result = call.result !== null ? `<div class="label">result</div><pre class="result">${escapeHtml(call.result)}</pre>` : "";
  return (
    `<li class="tool-call status-${escapeHtml(call.status)}" data-call-id="${escapeHtml(call.call_id)}">` +
    `<div class="call-head"><span class="tool">${escapeHtml(call.tool)}</span> <span class="call-id">${escapeHtml(call.call_id)}</span> ` +
    `<span class="badge">${escapeHtml(call.status.replaceAll("_", " "))}</span>${buttons !== "" ? ` <span class="buttons">${buttons}</span>` : ""}</div>` +
    `<div class="label">arguments</div><pre class="arguments">${escapeHtml(prettyArguments(call.arguments))}</pre>${result}${approval}</li>`
  );
}

/** The panel's body for one `RunDetails`: status, streaming text, tool calls, usage, chain. */
export function renderRunDetails(d: RunDetails): string {
  const out: string[] = [];
  out.push(
    `<header><h1><span class="agent">${escapeHtml(d.agent)}</span> <span class="run-id">${escapeHtml(d.run_id)}</span></h1>` +
      `<span class="badge status status-${escapeHtml(d.status)}" id="run-status">${escapeHtml(statusLabel(d.status))}</span></header>`,
  );
  const buttons = RUN_BUTTONS.filter(([action]) => d.actions.includes(action)).map(([action, label]) => button(label, action, d.run_id));
  if (buttons.length > 0) out.push(`<div class="run-actions">${buttons.join("")}</div>`);
  if (d.driven_elsewhere !== null) out.push(`<p class="note">Driven by another process (${escapeHtml(d.driven_elsewhere)}): only its transcript can be shown here.</p>`);
  if (d.error !== null) out.push(`<div class="error" id="run-error"><b>${escapeHtml(d.error.code)}</b> ${escapeHtml(d.error.message)}</div>`);
  out.push(`<section><h2>Input</h2><pre class="input">${escapeHtml(d.input)}</pre></section>`);
  if (d.live) {
    out.push(
      `<section class="live"><h2>Now</h2>${d.activity !== "" ? `<div class="activity">${escapeHtml(d.activity)}</div>` : ""}` +
        `<pre class="streaming" id="streaming">${escapeHtml(d.streaming)}</pre></section>`,
    );
  }
  const assistant = d.messages.filter((m) => m.role === "assistant" && m.content !== "");
  if (assistant.length > 0) {
    out.push(`<section><h2>Conversation</h2>${assistant.map((m) => `<pre class="message${m.is_error ? " is-error" : ""}">${escapeHtml(m.content)}</pre>`).join("")}</section>`);
  }
  if (d.tool_calls.length > 0) out.push(`<section><h2>Tool calls</h2><ul class="tool-calls">${d.tool_calls.map((c) => toolCallHtml(d, c)).join("")}</ul></section>`);
  if (d.output !== "") out.push(`<section><h2>Output</h2><pre class="output" id="run-output">${escapeHtml(d.output)}</pre></section>`);
  const u = d.usage;
  const b = d.budget;
  out.push(
    `<section><h2>Usage</h2><table class="usage">` +
      `<tr><th>tokens</th><td id="usage-tokens">${escapeHtml(againstBudget(u.total_tokens, b.token_budget, b.tokens_left))}</td><td class="detail">${u.input_tokens} in, ${u.output_tokens} out</td></tr>` +
      `<tr><th>tool calls</th><td id="usage-tool-calls">${escapeHtml(againstBudget(u.tool_calls, b.tool_call_budget, b.tool_calls_left))}</td><td></td></tr>` +
      `<tr><th>time</th><td id="usage-time">${escapeHtml(timeLeft(b))}</td><td class="detail">${b.deadline !== null ? escapeHtml(b.deadline) : ""}</td></tr>` +
      `</table></section>`,
  );
  if (d.chain.length > 0) {
    const rows = d.chain.map(
      (r) =>
        `<li class="${r.current ? "current" : ""}">${r.current ? `<b>${escapeHtml(r.run_id)}</b>` : button(r.run_id, "open", r.run_id, undefined, "Show this run in the panel")}` +
        ` <span class="badge">${escapeHtml(statusLabel(r.status))}</span> <span class="chain-input">${escapeHtml(r.input)}</span></li>`,
    );
    out.push(`<section><h2>Session ${escapeHtml(d.session_id)}</h2><ol class="chain">${rows.join("")}</ol></section>`);
  }
  if (d.refused.length > 0) {
    out.push(`<section class="refused"><h2>Not possible now</h2><ul>${d.refused.map((r) => `<li><b>${escapeHtml(r.action)}</b>: ${escapeHtml(r.reason)}</li>`).join("")}</ul></section>`);
  }
  return out.join("\n");
}

/** What a panel button asks for. */
export type PanelAction =
  | { action: "approve" | "deny"; run_id: string; call_id: string }
  | { action: "continue" | "resume" | "cancel" | "show" | "open"; run_id: string };

const RUN_ONLY = ["continue", "resume", "cancel", "show", "open"] as const;

/** A message from the webview, checked: a button press, `ready`, or undefined for anything else. */
export function parsePanelMessage(value: unknown): PanelAction | { action: "ready" } | undefined {
  if (!isRecord(value)) return undefined;
  const action = value["action"];
  if (action === "ready") return { action: "ready" };
  const runId = value["run_id"];
  if (typeof runId !== "string" || runId === "") return undefined;
  if (action === "approve" || action === "deny") {
    const callId = value["call_id"];
    return typeof callId === "string" && callId !== "" ? { action, run_id: runId, call_id: callId } : undefined;
  }
  return (RUN_ONLY as readonly unknown[]).includes(action) ? { action: action as (typeof RUN_ONLY)[number], run_id: runId } : undefined;
}

/** The panel's title: `Run: Analyst run_1a2b3c4d`. */
export function panelTitle(d: RunDetails | undefined, runId: string): string {
  return `Run: ${d !== undefined ? `${d.agent} ` : ""}${runId.length > 12 ? runId.slice(0, 12) : runId}`;
}

const STYLE = `
body { font-family: var(--vscode-font-family); font-size: var(--vscode-font-size); color: var(--vscode-foreground); padding: 0 12px 24px; }
header { display: flex; align-items: center; gap: 12px; }
h1 { font-size: 1.3em; margin: 12px 0; } h2 { font-size: 1.05em; margin: 16px 0 6px; }
.run-id, .call-id { color: var(--vscode-descriptionForeground); font-family: var(--vscode-editor-font-family); font-size: 0.9em; }
.badge { border-radius: 8px; padding: 1px 8px; background: var(--vscode-badge-background); color: var(--vscode-badge-foreground); font-size: 0.85em; }
pre { white-space: pre-wrap; word-break: break-word; font-family: var(--vscode-editor-font-family); background: var(--vscode-textCodeBlock-background); padding: 6px 8px; margin: 4px 0; }
button { background: var(--vscode-button-background); color: var(--vscode-button-foreground); border: none; padding: 3px 10px; margin-right: 6px; cursor: pointer; }
button:hover { background: var(--vscode-button-hoverBackground); }
.action-deny, .action-cancel, .action-open, .action-show { background: var(--vscode-button-secondaryBackground); color: var(--vscode-button-secondaryForeground); }
.error { border-left: 3px solid var(--vscode-errorForeground); padding: 4px 8px; color: var(--vscode-errorForeground); }
.tool-calls { list-style: none; padding: 0; } .tool-call { border: 1px solid var(--vscode-panel-border); padding: 6px 8px; margin: 6px 0; }
.status-waiting_approval { border-color: var(--vscode-editorWarning-foreground); }
.label { color: var(--vscode-descriptionForeground); font-size: 0.85em; margin-top: 4px; }
.usage th { text-align: left; padding-right: 12px; font-weight: normal; color: var(--vscode-descriptionForeground); } .usage td { padding-right: 12px; }
.detail, .note { color: var(--vscode-descriptionForeground); }
.chain li { margin: 3px 0; } .activity { font-style: italic; }
`;

/**
 * The panel's page. Nothing remote: `default-src 'none'`, the style and the
 * script are inline with a nonce. The script only renders what the extension
 * posts (`{type: "render", html}`, already escaped) and posts button presses.
 */
export function panelPage(nonce: string, cspSource: string): string {
  const csp = [`default-src 'none'`, `img-src ${cspSource}`, `style-src 'nonce-${nonce}'`, `script-src 'nonce-${nonce}'`].join("; ");
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<style nonce="${nonce}">${STYLE}</style>
</head>
<body>
<main id="root"><p>Loading the run…</p></main>
<script nonce="${nonce}">
(function () {
  const vscode = acquireVsCodeApi();
  const root = document.getElementById("root");
  let rendered = false;
  window.addEventListener("message", (event) => {
    const msg = event.data;
    if (!msg || msg.type !== "render" || typeof msg.html !== "string") return;
    const el = document.scrollingElement || document.body;
    // Stay where the reader is; one who scrolled to the end follows the new text.
    const atBottom = rendered && el.scrollHeight > el.clientHeight && el.scrollTop + el.clientHeight >= el.scrollHeight - 8;
    const top = el.scrollTop;
    root.innerHTML = msg.html;
    rendered = true;
    el.scrollTop = atBottom ? el.scrollHeight : top;
  });
  document.addEventListener("click", (event) => {
    const target = event.target instanceof Element ? event.target.closest("button[data-action]") : null;
    if (!target) return;
    const msg = { action: target.getAttribute("data-action"), run_id: target.getAttribute("data-run-id") };
    const call = target.getAttribute("data-call-id");
    if (call) msg.call_id = call;
    vscode.postMessage(msg);
  });
  vscode.postMessage({ action: "ready" });
})();
</script>
</body>
</html>`;
}

/** A fresh nonce (32 characters from [A-Za-z0-9]) from a source of random bytes. */
export function makeNonce(randomBytes: (n: number) => Uint8Array): string {
  const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  return Array.from(randomBytes(32), (b) => alphabet[b % alphabet.length]).join("");
}
