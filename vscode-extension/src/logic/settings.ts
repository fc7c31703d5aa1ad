/**
 * The `nexa` settings reach the server one way (protocol, section 2): the
 * server pulls section `nexa` with `workspace/configuration`, and VS Code's
 * answer goes to it unchanged except where workspace trust forces a value.
 * That forcing happens here, called from the languageclient's
 * `workspace.configuration` middleware only (and for the start-up copy in
 * `initializationOptions`). The server validates the values.
 *
 * Untrusted workspace: `runs.enabled` is false and `runs.providerSettings`
 * is left out, whatever the settings say.
 */

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The content of section `nexa` as nested plain data (e.g. `{runs: {enabled: true}}`). */
export type NexaSection = Record<string, unknown>;

function untrustedRuns(runs: unknown): Record<string, unknown> {
  const out: Record<string, unknown> = { ...(isRecord(runs) ? runs : {}), enabled: false };
  delete out["providerSettings"];
  return out;
}

/**
 * Adjusts one answer to a `workspace/configuration` item for workspace trust.
 * Sections other than `nexa`, `nexa.runs` and their keys pass through unchanged.
 */
export function enforceTrustOnConfigurationItem(section: string | undefined, value: unknown, trusted: boolean): unknown {
  if (trusted) return value;
  if (section === undefined || section === "") {
    // The whole configuration: patch the nexa subtree when present.
    if (!isRecord(value) || !isRecord(value["nexa"])) return value;
    return { ...value, nexa: enforceTrustOnConfigurationItem("nexa", value["nexa"], trusted) };
  }
  if (section === "nexa.runs.enabled") return false;
  if (section === "nexa.runs.providerSettings") return null;
  if (section === "nexa.runs") return untrustedRuns(value);
  if (section === "nexa") {
    const base = isRecord(value) ? value : {};
    return { ...base, runs: untrustedRuns(base["runs"]) };
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

/** `initializationOptions`: the same section `nexa`, for the server's start-up only. */
export function initializationOptions(section: NexaSection, trusted: boolean): NexaSection {
  return enforceTrustOnConfigurationItem("nexa", structuredClone(section), trusted) as NexaSection;
}

/**
 * Nests flat keys (`{"nexa.runs.enabled": true}`) below a section
 * (`{runs: {enabled: true}}`), as VS Code answers for that section.
 */
export function nestSettings(flat: Record<string, unknown>, section = "nexa"): NexaSection {
  const out: NexaSection = {};
  const prefix = `${section}.`;
  for (const [key, value] of Object.entries(flat)) {
    if (!key.startsWith(prefix)) continue;
    const parts = key.slice(prefix.length).split(".");
    let cur = out;
    for (const p of parts.slice(0, -1)) cur = (isRecord(cur[p]) ? cur[p] : (cur[p] = {})) as NexaSection;
    cur[parts[parts.length - 1] as string] = value;
  }
  return out;
}

/** Keys whose change needs a server restart rather than a configuration pull. */
export const RESTART_KEYS: readonly string[] = ["nexa.server.pythonPath", "nexa.server.importStrategy"];
