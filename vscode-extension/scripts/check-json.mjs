// Validates the static JSON contributions (snippets, language configuration,
// grammar) and checks that the grammar JSON matches its source.
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
let failed = false;
for (const file of [
  "package.json",
  "language-configuration.json",
  "language-configuration-secrets.json",
  "snippets/nexa.json",
  "syntaxes/nexa.tmLanguage.json",
  "syntaxes/nexa-secrets.tmLanguage.json",
]) {
  try {
    JSON.parse(readFileSync(join(root, file), "utf8"));
  } catch (err) {
    console.error(`${file}: ${err.message}`);
    failed = true;
  }
}
try {
  execFileSync(process.execPath, [join(root, "scripts", "build-grammar.mjs"), "--check"], { stdio: "inherit" });
} catch {
  failed = true;
}
if (failed) process.exit(1);
console.log("JSON contributions are valid");
