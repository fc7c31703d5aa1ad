/**
 * The language configurations as VS Code applies them: indentation after the
 * block keywords (as the current Nexa extension does), `// #region` folding
 * markers, and the `.nxs` secrets language's comments and brackets.
 */

import { strict as assert } from "node:assert";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";

const ROOT = join(__dirname, "..", "..", "..");

interface LanguageConfiguration {
  comments: { lineComment?: string; blockComment?: [string, string] };
  brackets: [string, string][];
  folding: { markers: { start: string; end: string } };
  indentationRules: { increaseIndentPattern: string; decreaseIndentPattern: string };
}

const load = (file: string): LanguageConfiguration => JSON.parse(readFileSync(join(ROOT, file), "utf8")) as LanguageConfiguration;

describe("nexa language configuration", () => {
  const config = load("language-configuration.json");
  const increase = new RegExp(config.indentationRules.increaseIndentPattern);
  const decrease = new RegExp(config.indentationRules.decreaseIndentPattern);

  it("indents after a line that opens a block of each block keyword", () => {
    for (const line of [
      "agent Writer {",
      'agent Writer uses std.fs { prompt: "write"',
      "tool Search {",
      "flow main {",
      "protocol Report {",
      'test "it works" {',
      "    if (x) {",
      '    if (x) { print("a");',
      "    } else {",
      "    loop {",
      "    try {",
      "    } catch (e) {",
      "    match intent {",
      '    semantic_if "is a date" against input {',
      "    x = [",
      "    call(",
      "agent 作者 { // 中文注释",
    ]) {
      assert.ok(increase.test(line), `increase after: ${line}`);
    }
  });

  it("does not indent after a closed block, a comment or a plain statement", () => {
    for (const line of ['agent A { prompt: "x" }', "// agent Commented {", '    print("done");', "    x = [1, 2]", "flow main"]) {
      assert.ok(!increase.test(line), `no increase after: ${line}`);
    }
  });

  it("outdents a closing line", () => {
    for (const line of ["}", "    } else {", "  ]", ")"]) assert.ok(decrease.test(line), line);
    assert.ok(!decrease.test("    x = 1"));
  });

  it("folds // #region ... // #endregion", () => {
    const start = new RegExp(config.folding.markers.start);
    const end = new RegExp(config.folding.markers.end);
    assert.ok(start.test("// #region tools"));
    assert.ok(start.test("    //region"));
    assert.ok(end.test("// #endregion"));
    assert.ok(!start.test("x = 1 // #region"));
    assert.ok(!end.test("// #region"));
  });
});

describe("nexa-secrets (.nxs) language", () => {
  const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as {
    contributes: { languages: { id: string; extensions: string[]; configuration: string }[]; grammars: { language: string; scopeName: string; path: string }[] };
  };
  const language = pkg.contributes.languages.find((l) => l.id === "nexa-secrets");

  it("is contributed for .nxs with its grammar and configuration", () => {
    assert.deepEqual(language?.extensions, [".nxs"]);
    const grammar = pkg.contributes.grammars.find((g) => g.language === "nexa-secrets");
    assert.equal(grammar?.scopeName, "source.nexa-secrets");
    const tm = JSON.parse(readFileSync(join(ROOT, grammar?.path ?? ""), "utf8")) as { scopeName: string };
    assert.equal(tm.scopeName, "source.nexa-secrets");
  });

  it("comments with // (the only comment nexa-lsp reads in .nxs), brackets and config blocks", () => {
    const config = load(language?.configuration ?? "");
    assert.deepEqual(config.comments, { lineComment: "//" });
    assert.deepEqual(config.brackets, [
      ["{", "}"],
      ["[", "]"],
      ["(", ")"],
    ]);
    assert.ok(new RegExp(config.indentationRules.increaseIndentPattern).test("config claude {"));
    assert.ok(!new RegExp(config.indentationRules.increaseIndentPattern).test('config claude { API_KEY = "k" }'));
  });
});
