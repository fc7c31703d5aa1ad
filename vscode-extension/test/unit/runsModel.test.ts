import { strict as assert } from "node:assert";
import { describe, it } from "node:test";
import {
  groupBySession,
  parseListRunsResult,
  parseRunSummary,
  runContextValue,
  runPickItem,
  RunsModel,
  runsAccepting,
  RUN_STATUSES,
  statusIcon,
  statusLabel,
  type RunSummary,
} from "../../src/logic/runsModel";

function run(partial: Partial<RunSummary> & { run_id: string }): RunSummary {
  return {
    agent: "Analyst",
    status: "completed",
    session_id: "ses_1",
    parent_run_id: null,
    started_at: "2026-12-02T09:00:00Z",
    updated_at: "2026-12-02T09:00:03Z",
    pending_approvals: [],
    unknown_outcomes: [],
    usage: {},
    actions: ["continue", "show"],
    ...partial,
  };
}

/** The example from docs/commands.md. */
const DOC_EXAMPLE = {
  run_id: "run_1",
  agent: "Analyst",
  status: "completed",
  session_id: "ses_1",
  parent_run_id: null,
  started_at: "2026-12-02T09:00:00Z",
  updated_at: "2026-12-02T09:00:03Z",
  pending_approvals: [{ call_id: "call_1", tool: "delete_file" }],
  unknown_outcomes: [{ call_id: "call_2", tool: "send_mail" }],
  usage: { input_tokens: 10, output_tokens: 20, tool_calls: 1 },
  actions: ["continue", "show"],
};

describe("parseListRunsResult", () => {
  it("reads the documented RunSummary", () => {
    const runs = parseListRunsResult({ runs: [DOC_EXAMPLE] });
    assert.equal(runs.length, 1);
    assert.deepEqual(runs[0], DOC_EXAMPLE);
  });

  it("rejects a result that is not {runs: [...]}", () => {
    assert.throws(() => parseListRunsResult(null), /runs/);
    assert.throws(() => parseListRunsResult({ items: [] }), /runs/);
    assert.throws(() => parseListRunsResult([]), /runs/);
  });

  it("drops entries without a run id, unknown actions and malformed calls", () => {
    const runs = parseListRunsResult({
      runs: [
        { agent: "X" },
        "junk",
        { run_id: "run_2", actions: ["continue", "explode", "continue"], pending_approvals: [{ tool: "t" }, 5] },
      ],
    });
    assert.equal(runs.length, 1);
    assert.deepEqual(runs[0]?.actions, ["continue"]);
    assert.deepEqual(runs[0]?.pending_approvals, []);
    assert.equal(runs[0]?.agent, "?");
  });

  it("keeps an unknown status from a newer server", () => {
    const r = parseRunSummary({ run_id: "r", status: "paused_by_admin" });
    assert.equal(r?.status, "paused_by_admin");
    assert.equal(statusLabel("paused_by_admin"), "paused by admin");
    assert.deepEqual(statusIcon("paused_by_admin"), { id: "circle-outline" });
  });
});

describe("grouping by session", () => {
  it("groups runs of a session in conversation order, newest session first", () => {
    const groups = groupBySession([
      run({ run_id: "r2", session_id: "A", started_at: "2026-01-01T00:00:02Z", updated_at: "2026-01-01T00:00:05Z" }),
      run({ run_id: "r1", session_id: "A", started_at: "2026-01-01T00:00:01Z", updated_at: "2026-01-01T00:00:02Z" }),
      run({ run_id: "r3", session_id: "B", agent: "Writer", started_at: "2026-01-02T00:00:00Z", updated_at: "2026-01-02T00:00:01Z" }),
    ]);
    assert.deepEqual(
      groups.map((g) => [g.sessionId, g.agent, g.runs.map((r) => r.run_id), g.latest.run_id]),
      [
        ["B", "Writer", ["r3"], "r3"],
        ["A", "Analyst", ["r1", "r2"], "r2"],
      ],
    );
  });

  it("a run without a session gets a group of its own", () => {
    const groups = groupBySession([run({ run_id: "x", session_id: "" }), run({ run_id: "y", session_id: "" })]);
    assert.equal(groups.length, 2);
  });
});

describe("status icons", () => {
  it("every status has its own icon", () => {
    const ids = RUN_STATUSES.map((s) => statusIcon(s).id);
    assert.equal(new Set(ids).size, RUN_STATUSES.length);
    assert.equal(statusIcon("running").id, "sync~spin");
    assert.equal(statusIcon("waiting_approval").id, "question");
    assert.equal(statusIcon("completed").id, "pass");
    assert.equal(statusIcon("failed").id, "error");
  });

  it("labels are readable", () => {
    assert.equal(statusLabel("waiting_approval"), "waiting for approval");
    assert.equal(statusLabel("budget_exhausted"), "budget exhausted");
    assert.equal(statusLabel("timed_out"), "timed out");
  });
});

describe("context values drive the menus", () => {
  it("lists the run's actions between bars", () => {
    assert.equal(runContextValue(run({ run_id: "r", actions: ["show", "continue"] })), "nexaRun|continue|show|");
    assert.equal(runContextValue(run({ run_id: "r", actions: [] })), "nexaRun|");
  });

  it("matches the when-clause regexes of package.json", () => {
    const cv = runContextValue(run({ run_id: "r", actions: ["approve", "deny", "cancel"] }));
    assert.match(cv, /\|approve\|/);
    assert.match(cv, /\|deny\|/);
    assert.match(cv, /\|cancel\|/);
    assert.doesNotMatch(cv, /\|continue\|/);
    assert.doesNotMatch(cv, /\|show\|/);
  });
});

describe("RunsModel tree", () => {
  const waiting = run({
    run_id: "r_wait",
    session_id: "S",
    status: "waiting_approval",
    pending_approvals: [{ call_id: "c1", tool: "delete_file" }],
    actions: ["approve", "deny", "cancel", "show"],
    updated_at: "2026-12-02T10:00:00Z",
  });
  const unknown = run({
    run_id: "r_unknown",
    session_id: "T",
    status: "failed",
    unknown_outcomes: [{ call_id: "c2", tool: "send_mail" }],
    actions: ["recover", "show"],
    updated_at: "2026-12-02T08:00:00Z",
  });
  const done = run({ run_id: "r_done", session_id: "U", updated_at: "2026-12-01T00:00:00Z" });

  it("roots are sessions, children are runs, then tool calls", () => {
    const m = new RunsModel();
    assert.equal(m.isEmpty, true);
    m.setRuns([done, unknown, waiting]);
    const roots = m.children();
    assert.deepEqual(
      roots.map((n) => (n.kind === "session" ? n.group.sessionId : "?")),
      ["S", "T", "U"],
    );
    const [s] = roots;
    assert.ok(s);
    const runs = m.children(s);
    assert.equal(runs.length, 1);
    const [r] = runs;
    assert.ok(r && r.kind === "run");
    const calls = m.children(r);
    assert.equal(calls.length, 1);
    assert.equal(calls[0]?.kind, "call");
    assert.deepEqual(m.children(calls[0]), []);
    assert.equal(m.run("r_done")?.run_id, "r_done");
    assert.equal(m.allRuns().length, 3);
  });

  it("views carry icons, labels and context values", () => {
    const m = new RunsModel();
    m.setRuns([waiting, unknown]);
    const [sNode, tNode] = m.children();
    assert.ok(sNode && tNode);
    const sv = m.view(sNode);
    assert.equal(sv.label, "Analyst");
    assert.equal(sv.contextValue, "nexaSession");
    assert.equal(sv.collapsible, "expanded", "a session with a waiting run is expanded");
    assert.equal(sv.icon.id, "question");
    assert.match(sv.description, /waiting for approval · 1 run · 2026-12-02 10:00:00/);
    assert.equal(m.view(tNode).collapsible, "collapsed");

    const [runNode] = m.children(sNode);
    assert.ok(runNode);
    const rv = m.view(runNode);
    assert.equal(rv.label, "1. waiting for approval");
    assert.equal(rv.contextValue, "nexaRun|approve|deny|cancel|show|");
    assert.equal(rv.id, "run:r_wait");
    assert.match(rv.tooltip, /waiting for approval: `delete_file` \(c1\)/);

    const [callNode] = m.children(runNode);
    assert.ok(callNode);
    const cv = m.view(callNode);
    assert.equal(cv.label, "delete_file");
    assert.equal(cv.contextValue, "nexaCall|approve|deny|");

    const [unknownRun] = m.children(tNode);
    assert.ok(unknownRun);
    const [unknownCall] = m.children(unknownRun);
    assert.ok(unknownCall);
    assert.equal(m.view(unknownCall).contextValue, "nexaCall|recover|");
  });

  it("ids are unique across the tree", () => {
    const m = new RunsModel();
    m.setRuns([waiting, unknown, done]);
    const ids: string[] = [];
    const walk = (nodes: ReturnType<RunsModel["children"]>): void => {
      for (const n of nodes) {
        ids.push(m.view(n).id);
        walk(m.children(n));
      }
    };
    walk(m.children());
    assert.equal(new Set(ids).size, ids.length);
  });

  it("runsAccepting filters by action, newest first", () => {
    const list = runsAccepting([done, waiting, unknown], "show");
    assert.deepEqual(
      list.map((r) => r.run_id),
      ["r_wait", "r_unknown", "r_done"],
    );
    assert.deepEqual(
      runsAccepting([done, waiting], "approve").map((r) => r.run_id),
      ["r_wait"],
    );
  });

  it("quick pick items describe a run", () => {
    const item = runPickItem(waiting);
    assert.equal(item.label, "Analyst · waiting for approval");
    assert.equal(item.description, "r_wait");
    assert.match(item.detail, /tool calls: delete_file/);
  });
});
