import { strict as assert } from "node:assert";
import { describe, it } from "node:test";
import {
  againstBudget,
  escapeHtml,
  makeNonce,
  panelPage,
  panelTitle,
  parsePanelMessage,
  parseRunDetails,
  prettyArguments,
  renderRunDetails,
  timeLeft,
} from "../../src/logic/runPanelModel";

/** The example of docs/commands.md (a run waiting for approval of publish). */
function waiting(): Record<string, unknown> {
  return {
    run_id: "run_5f0c1234",
    agent: "Analyst",
    status: "waiting_approval",
    live: false,
    driven_elsewhere: null,
    source: "/work/agents.nx",
    session_id: "ses_91a2",
    parent_run_id: null,
    started_at: "2026-12-02T09:00:00Z",
    updated_at: "2026-12-02T09:00:02Z",
    input: "Analyze",
    output: "",
    streaming: "",
    activity: "",
    error: null,
    messages: [
      { role: "user", content: "Analyze", tool_call_id: null, tool_name: null, is_error: false },
      { role: "assistant", content: "Looking up the evidence.", tool_call_id: null, tool_name: null, is_error: false },
      { role: "tool", content: "evidence: badge 4411", tool_call_id: "call_lookup", tool_name: "lookup", is_error: false },
    ],
    tool_calls: [
      { call_id: "call_lookup", tool: "lookup", arguments: "{}", status: "completed", result: "evidence: badge 4411", approval: null, recovered_by: null },
      {
        call_id: "call_publish",
        tool: "publish",
        arguments: '{"title": "t"}',
        status: "waiting_approval",
        result: null,
        recovered_by: null,
        approval: { status: "pending", requested_at: "2026-12-02T09:00:02Z", decided_by: null, decided_at: null, reason: null },
      },
    ],
    usage: { input_tokens: 42, output_tokens: 17, total_tokens: 59, tool_calls: 1 },
    budget: { token_budget: 100000, tokens_left: 99941, tool_call_budget: 5, tool_calls_left: 4, timeout: 120, deadline: "2026-12-02T09:02:00Z", seconds_left: 118.0 },
    chain: [{ run_id: "run_5f0c1234", status: "waiting_approval", input: "Analyze", parent_run_id: null, started_at: "2026-12-02T09:00:00Z", current: true }],
    actions: ["approve", "deny", "cancel", "show"],
    refused: [],
  };
}

function details(patch: Record<string, unknown> = {}) {
  const d = parseRunDetails({ ...waiting(), ...patch });
  assert.ok(d !== undefined);
  return d;
}

/** The buttons of a rendered body: `action[:call]`. */
function buttons(html: string): string[] {
  return [...html.matchAll(/<button [^>]*>/g)].map((m) => {
    const action = /data-action="([^"]+)"/.exec(m[0])?.[1] ?? "?";
    const call = /data-call-id="([^"]+)"/.exec(m[0])?.[1];
    return call !== undefined ? `${action}:${call}` : action;
  });
}

describe("Run panel model", () => {
  it("parses RunDetails and refuses what is not one", () => {
    const d = details();
    assert.equal(d.agent, "Analyst");
    assert.equal(d.tool_calls.length, 2);
    assert.deepEqual(d.actions, ["approve", "deny", "cancel", "show"]);
    assert.equal(d.budget.tokens_left, 99941);
    assert.equal(parseRunDetails(null), undefined);
    assert.equal(parseRunDetails({ run_id: "" }), undefined);
    assert.equal(parseRunDetails([waiting()]), undefined);
    // Unknown actions and malformed items are dropped, not shown.
    const odd = details({ actions: ["approve", "explode", 3], tool_calls: [{ tool: "no id" }, "x"], chain: [{}] });
    assert.deepEqual(odd.actions, ["approve"]);
    assert.deepEqual(odd.tool_calls, []);
    assert.deepEqual(odd.chain, []);
  });

  it("offers Approve / Deny on the call that waits, and the run's own actions", () => {
    const html = renderRunDetails(details());
    assert.deepEqual(buttons(html), ["cancel", "show", "approve:call_publish", "deny:call_publish"]);
    assert.match(html, /evidence: badge 4411/);
    assert.match(html, /&quot;title&quot;: &quot;t&quot;/);
    assert.match(html, /id="run-status">[^<]+</);
  });

  it("leaves out the buttons the server does not accept now", () => {
    const html = renderRunDetails(details({ actions: ["show"], refused: [{ action: "approve", reason: "NX203: the agent changed" }] }));
    assert.deepEqual(buttons(html), ["show"]);
    assert.match(html, /NX203: the agent changed/);
  });

  it("shows the streaming text and activity of a live run, escaped", () => {
    const html = renderRunDetails(
      details({ status: "running", live: true, streaming: "正在分析 <script>alert(1)</script>", activity: "tool lookup (call_lookup) running", actions: ["cancel", "show"] }),
    );
    assert.match(html, /正在分析 &lt;script&gt;alert\(1\)&lt;\/script&gt;/);
    assert.doesNotMatch(html, /<script>/);
    assert.match(html, /tool lookup \(call_lookup\) running/);
    assert.deepEqual(buttons(html), ["cancel", "show"]);
    // A run that is not live has no streaming section.
    assert.doesNotMatch(renderRunDetails(details()), /id="streaming"/);
  });

  it("shows usage against the budget and the time to the deadline", () => {
    const html = renderRunDetails(details());
    assert.match(html, /<td id="usage-tokens">59 \/ 100000 \(99941 left\)<\/td>/);
    assert.match(html, /<td id="usage-tool-calls">1 \/ 5 \(4 left\)<\/td>/);
    assert.match(html, /<td id="usage-time">1 min 58 s left<\/td>/);
    assert.equal(againstBudget(7, null, null), "7");
    assert.equal(timeLeft({ token_budget: null, tokens_left: null, tool_call_budget: null, tool_calls_left: null, deadline: null, seconds_left: null }), "no deadline");
    assert.equal(timeLeft({ token_budget: null, tokens_left: null, tool_call_budget: null, tool_calls_left: null, deadline: "2026-12-02T09:02:00Z", seconds_left: 0 }), "deadline passed");
    assert.equal(timeLeft({ token_budget: null, tokens_left: null, tool_call_budget: null, tool_calls_left: null, deadline: "2026-12-02T09:02:00Z", seconds_left: null }), "run ended");
    assert.equal(timeLeft({ token_budget: null, tokens_left: null, tool_call_budget: null, tool_calls_left: null, deadline: "d", seconds_left: 42.4 }), "42 s left");
  });

  it("shows the session chain with the other runs as buttons, an error with its code, Continue and Resume", () => {
    const html = renderRunDetails(
      details({
        status: "failed",
        error: { code: "NXR032", message: "401 <unauthorized>" },
        actions: ["continue", "resume", "show"],
        chain: [
          { run_id: "run_parent", status: "completed", input: "先分析", current: false },
          { run_id: "run_5f0c1234", status: "failed", input: "Summarize", current: true },
        ],
      }),
    );
    assert.match(html, /<b>NXR032<\/b> 401 &lt;unauthorized&gt;/);
    assert.deepEqual(buttons(html), ["continue", "resume", "show", "open"]);
    assert.match(html, /data-action="open" data-run-id="run_parent"/);
    assert.match(html, /先分析/);
  });

  it("reads button messages strictly", () => {
    assert.deepEqual(parsePanelMessage({ action: "approve", run_id: "run_1", call_id: "call_2" }), { action: "approve", run_id: "run_1", call_id: "call_2" });
    assert.deepEqual(parsePanelMessage({ action: "continue", run_id: "run_1", call_id: "ignored" }), { action: "continue", run_id: "run_1" });
    assert.deepEqual(parsePanelMessage({ action: "ready" }), { action: "ready" });
    assert.equal(parsePanelMessage({ action: "approve", run_id: "run_1" }), undefined);
    assert.equal(parsePanelMessage({ action: "recover", run_id: "run_1" }), undefined);
    assert.equal(parsePanelMessage({ action: "cancel", run_id: "" }), undefined);
    assert.equal(parsePanelMessage("cancel"), undefined);
  });

  it("builds a page with a nonce CSP and nothing remote", () => {
    const nonce = makeNonce((n) => Uint8Array.from({ length: n }, (_, i) => i * 7));
    assert.match(nonce, /^[A-Za-z0-9]{32}$/);
    const page = panelPage(nonce, "vscode-webview://abc");
    assert.match(page, new RegExp(`content="default-src 'none'; img-src vscode-webview://abc; style-src 'nonce-${nonce}'; script-src 'nonce-${nonce}'"`));
    assert.equal([...page.matchAll(/<script\b[^>]*>/g)].length, 1);
    assert.match(page, new RegExp(`<script nonce="${nonce}">`));
    assert.match(page, new RegExp(`<style nonce="${nonce}">`));
    assert.doesNotMatch(page, /https?:\/\//);
    assert.doesNotMatch(page, /\bsrc=/);
  });

  it("titles, escapes and pretty-prints", () => {
    assert.equal(panelTitle(details(), "run_5f0c1234abcdef"), "Run: Analyst run_5f0c1234");
    assert.equal(panelTitle(undefined, "run_1"), "Run: run_1");
    assert.equal(escapeHtml(`<a href="x">'&'</a>`), "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;");
    assert.equal(prettyArguments('{"case":"案件-7"}'), '{\n  "case": "案件-7"\n}');
    assert.equal(prettyArguments("not json"), "not json");
  });
});
