import { strict as assert } from "node:assert";
import { describe, it } from "node:test";
import {
  approveRequest,
  ArgumentError,
  cancelRequest,
  clientShouldShowError,
  continueRequest,
  denyRequest,
  executeRequest,
  executeTargetFromArg,
  listRunsRequest,
  migrateMessage,
  migrateRequest,
  missingInput,
  parseMigrateResult,
  parseRunStarted,
  recoverRequest,
  resumeRequest,
  runTargetFromArg,
  serverCommandForAction,
  showRunRequest,
  withInput,
} from "../../src/logic/commandArgs";
import { CLIENT_COMMANDS, SERVER_COMMANDS } from "../../src/logic/constants";
import { RUN_ACTIONS, RunsModel, type RunSummary } from "../../src/logic/runsModel";

describe("requests follow docs/commands.md: one object argument", () => {
  it("nexa.execute {uri, agent, task, config?}", () => {
    assert.deepEqual(executeRequest("file:///a.nx", "Analyst", "summarise"), {
      command: "nexa.execute",
      arguments: [{ uri: "file:///a.nx", agent: "Analyst", task: "summarise" }],
    });
    // The config goes as the user typed it: the server validates it (RunConfig.from_dict).
    assert.deepEqual(executeRequest("file:///a.nx", "Analyst", "t", { timeout: 30, model: " m ", provider: "" }).arguments[0], {
      uri: "file:///a.nx",
      agent: "Analyst",
      task: "t",
      config: { timeout: 30, model: " m ", provider: "" },
    });
  });

  it("nexa.execute needs an agent and a non-blank task", () => {
    assert.throws(() => executeRequest("file:///a.nx", "Analyst", "   "), ArgumentError);
    assert.throws(() => executeRequest("file:///a.nx", "", "t"), ArgumentError);
    assert.throws(() => executeRequest("", "A", "t"), ArgumentError);
  });

  it("the task is sent verbatim (no trimming of the user's text)", () => {
    assert.equal(executeRequest("u", "A", "  two\nlines ").arguments[0].task, "  two\nlines ");
  });

  it("nexa.continue {run_id, input, config?} refuses empty input", () => {
    assert.deepEqual(continueRequest("run_1", "next"), { command: "nexa.continue", arguments: [{ run_id: "run_1", input: "next" }] });
    assert.throws(() => continueRequest("run_1", ""), /input is required/);
    assert.throws(() => continueRequest("", "x"), /run_id is required/);
  });

  it("run id commands", () => {
    assert.deepEqual(resumeRequest("r"), { command: "nexa.resume", arguments: [{ run_id: "r" }] });
    assert.deepEqual(cancelRequest("r"), { command: "nexa.cancel", arguments: [{ run_id: "r" }] });
    assert.deepEqual(showRunRequest("r"), { command: "nexa.showRun", arguments: [{ run_id: "r" }] });
  });

  it("approve and deny {run_id, call_id}", () => {
    assert.deepEqual(approveRequest("r", "c"), { command: "nexa.approve", arguments: [{ run_id: "r", call_id: "c" }] });
    assert.deepEqual(denyRequest("r", "c"), { command: "nexa.deny", arguments: [{ run_id: "r", call_id: "c" }] });
    assert.throws(() => approveRequest("r", ""), ArgumentError);
  });

  it("recover {run_id, call_id, outcome, result?}", () => {
    assert.deepEqual(recoverRequest("r", "c", "not_executed", "ignored").arguments[0], {
      run_id: "r",
      call_id: "c",
      outcome: "not_executed",
    });
    assert.deepEqual(recoverRequest("r", "c", "completed", "42").arguments[0], {
      run_id: "r",
      call_id: "c",
      outcome: "completed",
      result: "42",
    });
    assert.throws(() => recoverRequest("r", "c", "maybe" as "completed"), ArgumentError);
  });

  it("listRuns drops empty filters; migrateFile takes the uri", () => {
    assert.deepEqual(listRunsRequest(), { command: "nexa.listRuns", arguments: [{}] });
    assert.deepEqual(listRunsRequest({ agent: "A", session_id: "", uri: undefined }).arguments[0], { agent: "A" });
    assert.deepEqual(migrateRequest("file:///x.nx"), { command: "nexa.migrateFile", arguments: [{ uri: "file:///x.nx" }] });
  });

  it("every run action maps to a server command", () => {
    for (const a of RUN_ACTIONS) assert.ok(Object.values(SERVER_COMMANDS).includes(serverCommandForAction(a)), a);
    assert.equal(serverCommandForAction("show"), "nexa.showRun");
  });
});

describe("command ids", () => {
  it("client commands never clash with the ids the server registers", () => {
    const server = new Set<string>(Object.values(SERVER_COMMANDS));
    for (const id of Object.values(CLIENT_COMMANDS)) {
      assert.ok(!server.has(id), id);
      assert.match(id, /^nexa\.client\./);
    }
  });
});

describe("invocation arguments", () => {
  const summary: RunSummary = {
    run_id: "r1",
    agent: "A",
    status: "waiting_approval",
    session_id: "s",
    parent_run_id: null,
    started_at: "",
    updated_at: "",
    pending_approvals: [{ call_id: "c1", tool: "rm" }],
    unknown_outcomes: [],
    usage: {},
    actions: ["approve", "deny"],
  };

  it("execute target from a lens object, an agent name, a uri or nothing", () => {
    assert.deepEqual(executeTargetFromArg({ uri: "file:///a.nx", agent: "A" }), { uri: "file:///a.nx", agent: "A" });
    assert.deepEqual(executeTargetFromArg("Writer"), { agent: "Writer" });
    assert.deepEqual(executeTargetFromArg("file:///a.nx"), { uri: "file:///a.nx" });
    assert.deepEqual(executeTargetFromArg(undefined), {});
    const fakeUri = { scheme: "file", path: "/a.nx" };
    assert.deepEqual(
      executeTargetFromArg(fakeUri, (v) => ((v as { scheme?: string }).scheme === "file" ? "file:///a.nx" : undefined)),
      { uri: "file:///a.nx" },
    );
  });

  it("run target from tree nodes, lens objects and ids", () => {
    const model = new RunsModel();
    model.setRuns([summary]);
    const [session] = model.children();
    assert.ok(session);
    const [runNode] = model.children(session);
    assert.ok(runNode);
    const [callNode] = model.children(runNode);
    assert.ok(callNode);
    assert.equal(runTargetFromArg(session).runId, "r1");
    assert.equal(runTargetFromArg(runNode).run?.run_id, "r1");
    assert.deepEqual(runTargetFromArg(callNode).call, { call_id: "c1", tool: "rm" });
    assert.deepEqual(runTargetFromArg({ run_id: "r9", call_id: "c9" }), { runId: "r9", call: { call_id: "c9", tool: "tool" } });
    assert.deepEqual(runTargetFromArg("r5"), { runId: "r5" });
    assert.deepEqual(runTargetFromArg(undefined), {});
    assert.deepEqual(runTargetFromArg(""), {});
  });
});

describe("server commands invoked from code lenses", () => {
  it("asks for what the server's lens argument lacks", () => {
    assert.equal(missingInput("nexa.execute", [{ uri: "u", agent: "A" }]), "task");
    assert.equal(missingInput("nexa.execute", [{ uri: "u" }]), "agent");
    assert.equal(missingInput("nexa.execute", [{ uri: "u", agent: "A", task: "t" }]), undefined);
    assert.equal(missingInput("nexa.continue", [{ run_id: "r" }]), "input");
    assert.equal(missingInput("nexa.continue", [{ run_id: "r", input: " " }]), "input");
    assert.equal(missingInput("nexa.resume", [{ run_id: "r" }]), undefined);
    assert.equal(missingInput("nexa.execute", []), "agent");
  });

  it("fills in the answer without mutating the original", () => {
    const original = [{ uri: "u", agent: "A" }];
    assert.deepEqual(withInput(original, "task", "go"), [{ uri: "u", agent: "A", task: "go" }]);
    assert.deepEqual(original, [{ uri: "u", agent: "A" }]);
  });

});

describe("results", () => {
  it("parses run results", () => {
    assert.deepEqual(parseRunStarted({ run_id: "r", session_id: "s", status: "running" }), {
      run_id: "r",
      session_id: "s",
      status: "running",
    });
    assert.deepEqual(parseRunStarted({ run_id: "r2", parent_run_id: "r", status: "running" })?.parent_run_id, "r");
    assert.equal(parseRunStarted(null), undefined);
    assert.equal(parseRunStarted({ status: "x" }), undefined);
  });

  it("explains a migration", () => {
    assert.deepEqual(migrateMessage(parseMigrateResult({ applied: true, remaining: [] })), {
      level: "info",
      text: "Migrated the file to Nexa 3.0.",
    });
    const partial = migrateMessage(parseMigrateResult({ applied: true, remaining: ["NX301", "NX302"] }));
    assert.match(partial.text, /2 findings still need a manual change: NX301, NX302/);
    assert.equal(migrateMessage(parseMigrateResult({ applied: false, remaining: ["NX301"] })).level, "warning");
    assert.deepEqual(parseMigrateResult("junk"), { applied: false, remaining: [] });
  });

  it("shows client-side errors only, not refusals the server already showed", () => {
    assert.equal(clientShouldShowError(undefined), true);
    assert.equal(clientShouldShowError(-32601), true);
    assert.equal(clientShouldShowError(-32097), true);
    assert.equal(clientShouldShowError(-32803), false);
    assert.equal(clientShouldShowError(-32603), false);
  });
});
