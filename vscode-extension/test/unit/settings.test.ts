import { strict as assert } from "node:assert";
import { describe, it } from "node:test";
import {
  DEFAULT_SETTINGS,
  enforceTrustOnConfiguration,
  enforceTrustOnConfigurationItem,
  initializationOptions,
  overlayServerSettings,
  readServerSettings,
} from "../../src/logic/settings";

const reader =
  (values: Record<string, unknown>) =>
  (key: string): unknown =>
    values[key];

describe("readServerSettings", () => {
  it("has working defaults", () => {
    assert.deepEqual(readServerSettings(reader({}), true), {
      runs: { enabled: true, store: ".nexa/runs.sqlite3", provider: "" },
      diagnostics: { migrationHints: true, debounceMs: 150 },
    });
    assert.deepEqual(readServerSettings(reader({}), true), initializationOptions(DEFAULT_SETTINGS));
  });

  it("maps every nexa.* setting", () => {
    const s = readServerSettings(
      reader({
        "runs.enabled": false,
        "runs.store": "var/runs.db",
        "runs.provider": "scripted",
        "diagnostics.migrationHints": false,
        "diagnostics.debounceMs": 400,
      }),
      true,
    );
    assert.deepEqual(s, {
      runs: { enabled: false, store: "var/runs.db", provider: "scripted" },
      diagnostics: { migrationHints: false, debounceMs: 400 },
    });
  });

  it("an untrusted workspace never enables runs", () => {
    assert.equal(readServerSettings(reader({ "runs.enabled": true }), false).runs.enabled, false);
    assert.equal(readServerSettings(reader({}), false).runs.enabled, false);
  });

  it("ignores values of the wrong type and clamps the debounce", () => {
    const s = readServerSettings(
      reader({
        "runs.enabled": "yes",
        "runs.store": 3,
        "runs.provider": null,
        "diagnostics.migrationHints": 0,
        "diagnostics.debounceMs": -5,
      }),
      true,
    );
    assert.deepEqual(s, { ...initializationOptions(DEFAULT_SETTINGS), diagnostics: { migrationHints: true, debounceMs: 0 } });
    assert.equal(readServerSettings(reader({ "diagnostics.debounceMs": 1e9 }), true).diagnostics.debounceMs, 5000);
    assert.equal(readServerSettings(reader({ "diagnostics.debounceMs": NaN }), true).diagnostics.debounceMs, 150);
    assert.equal(readServerSettings(reader({ "runs.store": "  " }), true).runs.store, ".nexa/runs.sqlite3");
  });

  it("initializationOptions copies (no shared references)", () => {
    const s = readServerSettings(reader({}), true);
    const o = initializationOptions(s);
    o.runs.enabled = false;
    assert.equal(s.runs.enabled, true);
  });
});

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

describe("overlayServerSettings", () => {
  const settings = readServerSettings((k) => ({ "runs.provider": "scripted", "diagnostics.debounceMs": 300 })[k], true);

  it("section nexa gets the normalised runs and diagnostics, keeping other keys", () => {
    const out = overlayServerSettings("nexa", { server: { pythonPath: "/p" }, runs: { enabled: "yes" } }, settings);
    assert.deepEqual(out, {
      server: { pythonPath: "/p" },
      runs: { enabled: true, store: ".nexa/runs.sqlite3", provider: "scripted" },
      diagnostics: { migrationHints: true, debounceMs: 300 },
    });
    assert.deepEqual(overlayServerSettings("nexa", null, settings), initializationOptions(settings));
  });

  it("narrower sections and single keys", () => {
    assert.deepEqual(overlayServerSettings("nexa.runs", undefined, settings), settings.runs);
    assert.deepEqual(overlayServerSettings("nexa.diagnostics", {}, settings), settings.diagnostics);
    assert.equal(overlayServerSettings("nexa.diagnostics.debounceMs", "300", settings), 300);
    assert.equal(overlayServerSettings("nexa.runs.provider", null, settings), "scripted");
  });

  it("leaves other sections alone", () => {
    assert.equal(overlayServerSettings("nexa.server.pythonPath", "/p", settings), "/p");
    assert.equal(overlayServerSettings("nexa.runs.unknownKey", 1, settings), 1);
    assert.deepEqual(overlayServerSettings("files", { a: 1 }, settings), { a: 1 });
    assert.equal(overlayServerSettings(undefined, 5, settings), 5);
  });

  it("an untrusted workspace answers runs.enabled false", () => {
    const untrusted = readServerSettings(() => true, false);
    assert.equal((overlayServerSettings("nexa", {}, untrusted) as { runs: { enabled: boolean } }).runs.enabled, false);
    assert.equal(overlayServerSettings("nexa.runs.enabled", true, untrusted), false);
  });
});

it("provider settings pass through only when set and trusted", () => {
  const values: Record<string, unknown> = { "runs.providerSettings": { OPENAI_API_KEY: "sk-1", BAD: 3 } };
  const trusted = readServerSettings((k) => values[k], true);
  assert.deepEqual(trusted.runs.providerSettings, { OPENAI_API_KEY: "sk-1" });
  assert.deepEqual(initializationOptions(trusted).runs.providerSettings, { OPENAI_API_KEY: "sk-1" });
  const untrusted = readServerSettings((k) => values[k], false);
  assert.equal(untrusted.runs.providerSettings, undefined);
  assert.equal("providerSettings" in readServerSettings(() => undefined, true).runs, false);
});
