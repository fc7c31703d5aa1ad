import { strict as assert } from "node:assert";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";

// Tests run from out/test/unit; sources live in <root>/src.
const root = join(__dirname, "..", "..", "..");

describe("layering", () => {
  it("src/logic never imports vscode or vscode-languageclient", () => {
    const dir = join(root, "src", "logic");
    const files = readdirSync(dir).filter((f) => f.endsWith(".ts"));
    assert.ok(files.length >= 5);
    for (const f of files) {
      const text = readFileSync(join(dir, f), "utf8");
      assert.doesNotMatch(text, /from\s+["']vscode(?:-languageclient[^"']*)?["']|require\(["']vscode/, f);
    }
  });

  it("package.json contributes every client command, and no server command id", () => {
    const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as {
      contributes: { commands: { command: string }[] };
    };
    const contributed = pkg.contributes.commands.map((c) => c.command);
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { CLIENT_COMMANDS, SERVER_COMMANDS } = require(join(root, "out", "src", "logic", "constants")) as typeof import("../../src/logic/constants");
    assert.deepEqual([...contributed].sort(), Object.values(CLIENT_COMMANDS).sort());
    for (const id of Object.values(SERVER_COMMANDS)) assert.ok(!contributed.includes(id), id);
  });

  it("package.json declares the settings with the documented defaults", () => {
    const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as {
      contributes: { configuration: { properties: Record<string, { default: unknown; type: string }> } };
      capabilities: { untrustedWorkspaces: { supported: string; restrictedConfigurations: string[] } };
    };
    const p = pkg.contributes.configuration.properties;
    assert.deepEqual(
      Object.fromEntries(Object.entries(p).map(([k, v]) => [k, v.default])),
      {
        "nexa.server.pythonPath": "",
        "nexa.server.importStrategy": "useBundled",
        "nexa.trace.server": "off",
        "nexa.runs.enabled": true,
        "nexa.runs.store": ".nexa/runs.sqlite3",
        "nexa.runs.providerSettings": {},
        "nexa.runs.toolModules": [],
        "nexa.runs.provider": "",
        "nexa.diagnostics.migrationHints": true,
        "nexa.diagnostics.debounceMs": 150,
      },
    );
    assert.equal(pkg.capabilities.untrustedWorkspaces.supported, "limited");
    assert.ok(pkg.capabilities.untrustedWorkspaces.restrictedConfigurations.includes("nexa.runs.enabled"));
  });
});
