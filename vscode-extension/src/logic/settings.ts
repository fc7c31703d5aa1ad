/**
 * Settings the server reads, under section `nexa`, both in
 * `initializationOptions` and in answers to `workspace/configuration`.
 *
 * Workspace trust: in an untrusted workspace `runs.enabled` is always false,
 * whatever the settings say.
 */

export interface NexaServerSettings {
  runs: {
    enabled: boolean;
    store: string;
    /** "" = the server's default provider. */
    provider: string;
    /** Extra provider settings (e.g. API keys), machine-scoped; sent only when set and trusted. */
    providerSettings?: Record<string, string>;
  };
  diagnostics: {
    migrationHints: boolean;
    debounceMs: number;
  };
}

export const DEFAULT_SETTINGS: Readonly<NexaServerSettings> = Object.freeze({
  runs: Object.freeze({ enabled: true, store: ".nexa/runs.sqlite3", provider: "" }),
  diagnostics: Object.freeze({ migrationHints: true, debounceMs: 150 }),
});

/** Reads one setting below `nexa.` (e.g. "runs.enabled"); returns undefined when unset. */
export type SettingReader = (key: string) => unknown;

function bool(value: unknown, fallback: boolean): boolean {
  return typeof value === "boolean" ? value : fallback;
}

function str(value: unknown, fallback: string): string {
  return typeof value === "string" ? value : fallback;
}

function stringMap(value: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  if (typeof value !== "object" || value === null || Array.isArray(value)) return out;
  for (const [key, item] of Object.entries(value as Record<string, unknown>)) {
    if (typeof item === "string" && key.trim() !== "") out[key.trim()] = item;
  }
  return out;
}

function debounce(value: unknown, fallback: number): number {
  if (typeof value !== "number" || !Number.isFinite(value)) return fallback;
  return Math.min(5000, Math.max(0, Math.round(value)));
}

/** Builds the settings object sent to the server from the VS Code settings. */
export function readServerSettings(read: SettingReader, trusted: boolean): NexaServerSettings {
  const d = DEFAULT_SETTINGS;
  const store = str(read("runs.store"), d.runs.store).trim();
  const providerSettings = trusted ? stringMap(read("runs.providerSettings")) : {};
  return {
    runs: {
      enabled: trusted && bool(read("runs.enabled"), d.runs.enabled),
      store: store === "" ? d.runs.store : store,
      provider: str(read("runs.provider"), d.runs.provider).trim(),
      ...(Object.keys(providerSettings).length > 0 ? { providerSettings } : {}),
    },
    diagnostics: {
      migrationHints: bool(read("diagnostics.migrationHints"), d.diagnostics.migrationHints),
      debounceMs: debounce(read("diagnostics.debounceMs"), d.diagnostics.debounceMs),
    },
  };
}

/** `initializationOptions` for the server: the value of section `nexa`. */
export function initializationOptions(settings: NexaServerSettings): NexaServerSettings {
  return {
    runs: { ...settings.runs },
    diagnostics: { ...settings.diagnostics },
  };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * Adjusts one answer to a `workspace/configuration` item so that an untrusted
 * workspace always reports `nexa.runs.enabled: false`. Sections other than
 * `nexa`, `nexa.runs` and `nexa.runs.enabled` pass through unchanged.
 */
export function enforceTrustOnConfigurationItem(section: string | undefined, value: unknown, trusted: boolean): unknown {
  if (trusted) return value;
  if (section === undefined || section === "") {
    // The whole configuration: patch the nexa subtree when present.
    if (!isRecord(value) || !isRecord(value["nexa"])) return value;
    return { ...value, nexa: enforceTrustOnConfigurationItem("nexa", value["nexa"], trusted) };
  }
  if (section === "nexa.runs.enabled") return false;
  if (section === "nexa.runs") {
    return { ...(isRecord(value) ? value : {}), enabled: false };
  }
  if (section === "nexa") {
    const base = isRecord(value) ? value : {};
    const runs = isRecord(base["runs"]) ? base["runs"] : {};
    return { ...base, runs: { ...runs, enabled: false } };
  }
  return value;
}

/** Applies {@link enforceTrustOnConfigurationItem} to a whole `workspace/configuration` answer. */
export function enforceTrustOnConfiguration(
  items: ReadonlyArray<{ section?: string | undefined }>,
  results: unknown[],
  trusted: boolean,
): unknown[] {
  if (trusted) return results;
  return results.map((value, i) => enforceTrustOnConfigurationItem(items[i]?.section, value, trusted));
}

/**
 * Replaces the server-facing parts of a `workspace/configuration` answer with
 * the normalised settings (types checked, defaults filled, trust applied), so
 * the server always gets the documented shape. Other keys of section `nexa`
 * (server.pythonPath, trace) are kept; other sections pass through.
 */
export function overlayServerSettings(section: string | undefined, value: unknown, settings: NexaServerSettings): unknown {
  const copy = initializationOptions(settings);
  switch (section) {
    case "nexa":
      return { ...(isRecord(value) ? value : {}), runs: copy.runs, diagnostics: copy.diagnostics };
    case "nexa.runs":
      return copy.runs;
    case "nexa.diagnostics":
      return copy.diagnostics;
    default:
      break;
  }
  if (section !== undefined) {
    const m = /^nexa\.(runs|diagnostics)\.([A-Za-z]+)$/.exec(section);
    if (m !== null) {
      const group = copy[m[1] as "runs" | "diagnostics"] as unknown as Record<string, unknown>;
      const key = m[2] as string;
      if (key in group) return group[key];
    }
  }
  return value;
}

/** Keys whose change needs a server restart rather than a configuration push. */
export const RESTART_KEYS: readonly string[] = ["nexa.server.pythonPath", "nexa.server.importStrategy"];
