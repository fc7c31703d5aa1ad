import { strict as assert } from "node:assert";
import { describe, it } from "node:test";
import { isRunProgressToken, parseProgressValue, PercentTracker, progressPlace, RUN_PROGRESS_PREFIX } from "../../src/logic/progress";

describe("progress of the server", () => {
  it("shows a run's progress as a notification, anything else in the status bar", () => {
    assert.equal(RUN_PROGRESS_PREFIX, "nexa-run-");
    assert.equal(progressPlace("nexa-run-0123abcd"), "notification");
    assert.ok(isRunProgressToken("nexa-run-0123abcd"));
    assert.equal(progressPlace("nexa-index-1"), "window");
    assert.equal(progressPlace(42), "window");
    assert.equal(progressPlace(undefined), "window");
    assert.ok(!isRunProgressToken("run-nexa-1"));
  });

  it("parses begin, report and end values, keeping only what is well typed", () => {
    assert.deepEqual(parseProgressValue({ kind: "begin", title: "Nexa: Analyst", message: "run_1a2b3c4d running", cancellable: true }), {
      kind: "begin",
      title: "Nexa: Analyst",
      message: "run_1a2b3c4d running",
      cancellable: true,
    });
    assert.deepEqual(parseProgressValue({ kind: "begin", title: "x" }), { kind: "begin", title: "x", cancellable: false });
    assert.deepEqual(parseProgressValue({ kind: "report", message: "分析 · lookup_evidence", percentage: 30 }), {
      kind: "report",
      message: "分析 · lookup_evidence",
      percentage: 30,
    });
    assert.deepEqual(parseProgressValue({ kind: "report", message: 7, percentage: "30" }), { kind: "report" });
    assert.deepEqual(parseProgressValue({ kind: "end", message: "run_1a2b3c4d cancelled" }), { kind: "end", message: "run_1a2b3c4d cancelled" });
    assert.equal(parseProgressValue({ kind: "middle" }), undefined);
    assert.equal(parseProgressValue(null), undefined);
    assert.equal(parseProgressValue("begin"), undefined);
  });

  it("turns percentages into increments that never go back or past 100", () => {
    const t = new PercentTracker();
    assert.equal(t.increment(undefined), undefined);
    assert.equal(t.increment(20), 20);
    assert.equal(t.increment(50), 30);
    assert.equal(t.increment(40), 0);
    assert.equal(t.increment(250), 50);
    assert.equal(t.increment(100), 0);
    assert.equal(t.increment(Number.NaN), undefined);
  });
});
