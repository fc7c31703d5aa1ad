import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { CoalescedRefresh } from "../../src/logic/refresh";

function gate(): { promise: Promise<void>; open: () => void } {
  let open = (): void => undefined;
  const promise = new Promise<void>((resolve) => (open = resolve));
  return { promise, open };
}

describe("CoalescedRefresh", () => {
  it("runs one load at a time and once more for calls made meanwhile", async () => {
    const gates = [gate(), gate()];
    let loads = 0;
    const refresh = new CoalescedRefresh(() => gates[loads++]!.promise);
    const first = refresh.run();
    void refresh.run();
    void refresh.run();
    assert.equal(loads, 1);
    gates[0]!.open();
    await first;
    await new Promise((r) => setImmediate(r));
    assert.equal(loads, 2, "the calls made during the first load gave one more load");
    gates[1]!.open();
  });

  it("collapses scheduled calls into one load after the delay, and cancel drops it", async () => {
    let loads = 0;
    const refresh = new CoalescedRefresh(async () => void loads++);
    refresh.schedule(20);
    refresh.schedule(20);
    refresh.schedule(20);
    await new Promise((r) => setTimeout(r, 60));
    assert.equal(loads, 1);
    refresh.schedule(20);
    refresh.cancel();
    await new Promise((r) => setTimeout(r, 60));
    assert.equal(loads, 1);
  });
});
