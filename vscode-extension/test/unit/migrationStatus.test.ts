import { strict as assert } from "node:assert";
import { describe, it } from "node:test";
import { displayPath, firstSentence, MigrationModel, parseMigrateWorkspaceResult, parseMigrationStatus, type MigrationNode } from "../../src/logic/migrationStatus";

const range = (line: number, start: number, end: number) => ({ start: { line, character: start }, end: { line, character: end } });

/** An answer in the shape the server sends (docs/migration.md, "nexa/migrationStatus"). */
const ANSWER = {
  files: [
    { path: "/ws/ready.nx", uri: "file:///ws/ready.nx", state: "ready", blockers: [], rewrites: 2, notes: ["tool `publish` declares approval"] },
    {
      path: "/ws/loops/循环.nx",
      uri: "file:///ws/loops/%E5%BE%AA%E7%8E%AF.nx",
      state: "blocked",
      blockers: [
        { code: "NXM002", message: "`Looper.run(...)` is the first run of Looper in flow `main`: Nexa 3.0 removes `.run`", range: range(2, 16, 33) },
        { code: "NXM003", message: "later run. Not rewritten", range: range(4, 4, 10) },
      ],
      rewrites: 0,
      notes: [],
    },
    { path: "/ws/a/done.nx", uri: "file:///ws/a/done.nx", state: "done", blockers: [], rewrites: 0, notes: [] },
    { path: "/ws/b/done.nx", uri: "file:///ws/b/done.nx", state: "done", blockers: [], rewrites: 0, notes: [] },
  ],
  counts: { ready: 1, blocked: 1, done: 2 },
};

describe("parseMigrationStatus", () => {
  it("reads the server's answer, counting the files by state", () => {
    const status = parseMigrationStatus(ANSWER);
    assert.deepEqual(status.counts, ANSWER.counts);
    assert.equal(status.files.length, 4);
    assert.deepEqual(status.files[1]?.blockers[0]?.range, range(2, 16, 33));
  });

  it("says what is wrong with an answer that is not one", () => {
    assert.throws(() => parseMigrationStatus(null), /no files/);
    assert.throws(() => parseMigrationStatus({ files: [{ uri: "file:///x.nx", path: "/x.nx", state: "later" }] }), /files\[0\]\.state is later/);
    assert.throws(
      () => parseMigrationStatus({ files: [{ uri: "file:///x.nx", path: "/x.nx", state: "blocked", blockers: [{ code: "NXM002", message: "m", range: { start: { line: 1 } } }] }] }),
      /files\[0\]\.blockers\[0\]\.range\.start is not a position/,
    );
  });

  it("reads the answer of nexa.migrateWorkspace", () => {
    const result = parseMigrateWorkspaceResult({ applied: true, migrated: ["file:///ws/ready.nx"], blocked: ["file:///ws/loops/x.nx"], after: ANSWER });
    assert.equal(result.applied, true);
    assert.deepEqual(result.migrated, ["file:///ws/ready.nx"]);
    assert.equal(result.after.counts.blocked, 1);
    assert.throws(() => parseMigrateWorkspaceResult({ migrated: [] }), /unexpected nexa.migrateWorkspace answer/);
  });
});

describe("MigrationModel", () => {
  const model = new MigrationModel();
  model.setStatus(parseMigrationStatus(ANSWER), ["/ws"]);
  const [ready, blocked, done] = model.children();

  it("groups the files Ready / Blocked / Done with their counts", () => {
    assert.deepEqual(model.children().map((n) => model.view(n).label), ["Ready", "Blocked", "Done"]);
    assert.deepEqual(model.children().map((n) => model.view(n).description), ["1 file", "1 file", "2 files"]);
    assert.equal(model.view(done as MigrationNode).collapsible, "collapsed");
    assert.equal(model.view(blocked as MigrationNode).collapsible, "expanded");
  });

  it("shows each file by name with its folder and what migrating does", () => {
    const [file] = model.children(ready);
    const v = model.view(file as MigrationNode);
    assert.equal(v.label, "ready.nx");
    assert.equal(v.description, "2 rewrites and the version declaration");
    assert.match(v.tooltip, /tool `publish` declares approval/);
    assert.deepEqual(v.open, { uri: "file:///ws/ready.nx" });
    assert.deepEqual(model.children(done).map((n) => model.view(n).description), ["a · on Nexa 3.0", "b · on Nexa 3.0"]);
  });

  it("lists the blockers of a blocked file, each opening at its range", () => {
    const [file] = model.children(blocked);
    const fv = model.view(file as MigrationNode);
    assert.equal(fv.label, "循环.nx");
    assert.equal(fv.description, "loops · 2 blockers");
    assert.equal(fv.collapsible, "collapsed");
    const blockers = model.children(file);
    assert.deepEqual(blockers.map((b) => model.view(b).label), ["NXM002 · line 3", "NXM003 · line 5"]);
    const first = model.view(blockers[0] as MigrationNode);
    assert.equal(first.description, "`Looper.run(...)` is the first run of Looper in flow `main`");
    assert.deepEqual(first.open, { uri: "file:///ws/loops/%E5%BE%AA%E7%8E%AF.nx", range: range(2, 16, 33) });
    assert.match(first.tooltip, /column 17/);
    assert.equal(model.view(blockers[1] as MigrationNode).description, "later run");
    assert.notEqual(first.id, model.view(blockers[1] as MigrationNode).id);
  });

  it("shows nothing for a workspace without Nexa files", () => {
    const empty = new MigrationModel();
    empty.setStatus(parseMigrationStatus({ files: [], counts: { ready: 0, blocked: 0, done: 0 } }));
    assert.deepEqual(empty.children(), []);
  });
});

describe("helpers", () => {
  it("displayPath is relative to the first folder holding the file", () => {
    assert.deepEqual(displayPath("/ws/a/b/c.nx", ["/other", "/ws/"]), { name: "c.nx", folder: "a/b" });
    assert.deepEqual(displayPath("C:\\ws\\x.nx", ["C:\\ws"]), { name: "x.nx", folder: "" });
    assert.deepEqual(displayPath("/elsewhere/y.nx", ["/ws"]), { name: "y.nx", folder: "/elsewhere" });
  });

  it("firstSentence keeps a tree row short", () => {
    assert.equal(firstSentence("no stop here"), "no stop here");
    assert.equal(firstSentence("x".repeat(150)).length, 100);
  });
});
