// Debug helper: prints the TextMate tokens of a Nexa file.
// Usage: node scripts/tokens.mjs FILE
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const require = createRequire(import.meta.url);
const tm = require("vscode-textmate");
const onig = require("vscode-oniguruma");
const root = join(dirname(fileURLToPath(import.meta.url)), "..");

const wasm = readFileSync(require.resolve("vscode-oniguruma/release/onig.wasm")).buffer;
const onigLib = onig.loadWASM(wasm).then(() => ({
  createOnigScanner: (p) => new onig.OnigScanner(p),
  createOnigString: (s) => new onig.OnigString(s),
}));
const registry = new tm.Registry({
  onigLib,
  loadGrammar: async (scope) => {
    const file = { "source.nexa": "syntaxes/nexa.tmLanguage.json", "source.python": "test/grammar/python-stub.tmLanguage.json" }[scope];
    return file ? tm.parseRawGrammar(readFileSync(join(root, file), "utf8"), file) : null;
  },
});
const grammar = await registry.loadGrammar("source.nexa");
let state = tm.INITIAL;
const lines = readFileSync(process.argv[2], "utf8").split(/\r?\n/);
for (const line of lines) {
  const r = grammar.tokenizeLine(line, state);
  console.log(line);
  for (const t of r.tokens) {
    const text = line.slice(t.startIndex, t.endIndex);
    if (!text.trim()) continue;
    console.log(`  ${JSON.stringify(text).padEnd(24)} ${t.scopes.slice(1).join(" ")}`);
  }
  state = r.ruleStack;
}
