/**
 * The extension reads Nexa sources only through the server (`nexa/documentInfo`,
 * document symbols, diagnostics): no regular expression in src/ may look at Nexa
 * syntax. Every regular expression in src/ (literal or `new RegExp`) must be
 * listed below with what it reads; a new one fails this test until it is
 * listed, and none may mention Nexa words. (The TextMate grammar in
 * scripts/grammar is the colouring, which VS Code does from regexes by design.)
 */

import { strict as assert } from "node:assert";
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, it } from "node:test";
import * as ts from "typescript";

const ROOT = join(__dirname, "..", "..", "..");

/** file -> regex source text -> what it reads (none of it Nexa). */
const ALLOWED: Record<string, Record<string, string>> = {
  "src/logic/interpreter.ts": {
    "/\\$\\{(workspaceFolder|userHome|env:([A-Za-z_][A-Za-z0-9_]*))\\}/g": "VS Code variables in nexa.server.pythonPath",
    "/^(\\d+)\\.(\\d+)\\.(\\d+)\\s*$/m": "the Python version printed by the version check",
    "/^[A-Za-z0-9_@%+=:,./\\\\-]+$/": "shell-safe characters when showing a command line",
    '/"/g': "quoting for a Windows command line",
    "/'/g": "quoting for a POSIX command line",
    "new RegExp(`No module named ['\"]?${moduleName.replace(/\\./g, \"\\\\.\")}(?:['\".]|$)`, \"m\")": "Python's ImportError text",
    "/\\./g": "escaping a Python module name",
    "/ModuleNotFoundError/": "Python's ImportError text",
    "/\\r?\\n/": "line breaks of a process's stderr",
  },
  "src/logic/runsModel.ts": {
    "/_/g": "run status ids (waiting_approval) to words",
    "/^(\\d{4}-\\d{2}-\\d{2})T(\\d{2}:\\d{2}:\\d{2})/": "ISO timestamps of runs",
  },
};

/** Words of Nexa syntax that no regex in src/ may contain. */
const NEXA_WORDS = /agent|flow|tool|protocol|nexa|\.run|execute|continue|resume|uses|prompt/i;

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sources(join(dir, e.name)) : e.name.endsWith(".ts") ? [join(dir, e.name)] : [],
  );
}

function regexesOf(file: string): string[] {
  const source = ts.createSourceFile(file, readFileSync(file, "utf8"), ts.ScriptTarget.ES2022, true);
  const out: string[] = [];
  const visit = (node: ts.Node): void => {
    if (node.kind === ts.SyntaxKind.RegularExpressionLiteral) out.push(node.getText(source));
    else if (ts.isNewExpression(node) && node.expression.getText(source) === "RegExp") out.push(node.getText(source));
    else if (ts.isCallExpression(node) && node.expression.getText(source) === "RegExp") out.push(node.getText(source));
    ts.forEachChild(node, visit);
  };
  visit(source);
  return out;
}

describe("no Nexa-syntax regex in the extension", () => {
  const found = sources(join(ROOT, "src")).flatMap((file) => regexesOf(file).map((rx) => ({ file: relative(ROOT, file).split("\\").join("/"), rx })));

  it("finds the regexes it checks (the scan works)", () => {
    assert.ok(found.length >= 5, `found ${found.length}`);
  });

  it("every regex in src/ is listed with what it reads", () => {
    const unlisted = found.filter(({ file, rx }) => ALLOWED[file]?.[rx] === undefined);
    assert.deepEqual(
      unlisted,
      [],
      "a new regex in src/: if it reads Nexa source, ask the server (nexa/documentInfo) instead; otherwise list it in ALLOWED with what it reads",
    );
  });

  it("no regex mentions a Nexa word", () => {
    assert.deepEqual(found.filter(({ rx }) => NEXA_WORDS.test(rx)), []);
  });

  it("the list has no stale entries", () => {
    for (const [file, list] of Object.entries(ALLOWED)) {
      for (const rx of Object.keys(list)) assert.ok(found.some((f) => f.file === file && f.rx === rx), `${file}: ${rx} is gone; drop it from ALLOWED`);
    }
  });
});
