import { strict as assert } from "node:assert";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import {
  enforceTrustOnConfiguration,
  enforceTrustOnConfigurationItem,
  initializationOptions,
  nestSettings,
} from "../../src/logic/settings";

describe("workspace/configuration answers under workspace trust", () => {
  const full = { runs: { enabled: true, store: "s", provider: "" }, diagnostics: { migrationHints: true, debounceMs: 150 } };

  it("trusted answers pass through untouched", () => {
    const results = [full, true];
    assert.equal(enforceTrustOnConfiguration([{ section: "nexa" }, { section: "nexa.runs.enabled" }], results, true), results);
  });

  it("section nexa gets runs.enabled false when untrusted", () => {
    const out = enforceTrustOnConfigurationItem("nexa", full, false) as typeof full;
    assert.equal(out.runs.enabled, false);
    assert.equal(out.runs.store, "s");
    assert.equal(full.runs.enabled, true, "the input is not mutated");
  });

  it("nested sections are patched too", () => {
    assert.equal(enforceTrustOnConfigurationItem("nexa.runs.enabled", true, false), false);
    assert.deepEqual(enforceTrustOnConfigurationItem("nexa.runs", { enabled: true, store: "x" }, false), {
      enabled: false,
      store: "x",
    });
    assert.deepEqual(enforceTrustOnConfigurationItem("nexa", null, false), { runs: { enabled: false } });
    const whole = enforceTrustOnConfigurationItem(undefined, { nexa: full, editor: { tabSize: 4 } }, false) as {
      nexa: typeof full;
      editor: unknown;
    };
    assert.equal(whole.nexa.runs.enabled, false);
    assert.deepEqual(whole.editor, { tabSize: 4 });
  });

  it("other sections are not touched", () => {
    assert.deepEqual(enforceTrustOnConfigurationItem("nexa.diagnostics", { migrationHints: true }, false), {
      migrationHints: true,
    });
    assert.equal(enforceTrustOnConfigurationItem("python", 1, false), 1);
  });

  it("maps a whole answer item by item", () => {
    const out = enforceTrustOnConfiguration(
      [{ section: "nexa" }, { section: "files" }, { section: "nexa.runs.enabled" }],
      [full, { exclude: {} }, true],
      false,
    );
    assert.equal((out[0] as typeof full).runs.enabled, false);
    assert.deepEqual(out[1], { exclude: {} });
    assert.equal(out[2], false);
  });
});

describe("one shape, one way", () => {
  const pkg = JSON.parse(readFileSync(join(__dirname, "..", "..", "..", "package.json"), "utf8")) as {
    contributes: { configuration: { properties: Record<string, { default: unknown }> } };
  };
  const defaults = nestSettings(Object.fromEntries(Object.entries(pkg.contributes.configuration.properties).map(([k, v]) => [k, v.default])));

  it("nests the package.json defaults as VS Code answers section nexa", () => {
    assert.deepEqual(defaults["runs"], { enabled: true, store: ".nexa/runs.sqlite3", provider: "", providerSettings: {}, toolModules: [] });
    assert.deepEqual(defaults["diagnostics"], { migrationHints: true, debounceMs: 150 });
  });

  it("initializationOptions is the section itself when trusted (a copy)", () => {
    const init = initializationOptions(defaults, true);
    assert.deepEqual(init, defaults);
    (init["runs"] as Record<string, unknown>)["enabled"] = false;
    assert.equal((defaults["runs"] as Record<string, unknown>)["enabled"], true);
  });

  it("untrusted: runs off and no provider settings, everything else as typed", () => {
    const typed = { ...defaults, runs: { enabled: true, store: "x.db", providerSettings: { OPENAI_API_KEY: "k" } }, diagnostics: { debounceMs: "typo" } };
    const init = initializationOptions(typed, false);
    assert.deepEqual(init["runs"], { enabled: false, store: "x.db" });
    assert.deepEqual(init["diagnostics"], { debounceMs: "typo" }, "the server validates what the user typed");
    assert.equal(enforceTrustOnConfigurationItem("nexa.runs.providerSettings", { A: "b" }, false), null);
  });
});
