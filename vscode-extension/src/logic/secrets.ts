/**
 * Provider API keys live in VS Code's SecretStorage (the OS keychain), never
 * in settings.json. What is stored under which name, which entries of
 * `nexa.runs.providerSettings` are secrets to move there, and the answer to
 * the server's `nexa/providerSecret {provider, name}` request
 * (`{value}` or null). Pure data: src/secrets.ts does the VS Code side.
 */

/** Server -> client request for one key, made only while a run needs it. */
export const PROVIDER_SECRET_REQUEST = "nexa/providerSecret";

/**
 * The client capabilities' `experimental` with `nexa.providerSecrets: true`: the server
 * asks `nexa/providerSecret` only of a client that declares it. Other entries are kept.
 */
export function withProviderSecretsCapability(experimental: unknown): Record<string, unknown> {
  return withNexaFlag(experimental, "providerSecrets");
}

/**
 * `experimental` with `nexa.runPrompts: true` added: the extension asks for a run's task or
 * input itself (an input box pre-filled with the file's literal), so the server sends the
 * prompting `Execute…` / `Continue…` lenses.
 */
export function withRunPromptsCapability(experimental: unknown): Record<string, unknown> {
  return withNexaFlag(experimental, "runPrompts");
}

function withNexaFlag(experimental: unknown, flag: "providerSecrets" | "runPrompts"): Record<string, unknown> {
  const base = typeof experimental === "object" && experimental !== null && !Array.isArray(experimental) ? (experimental as Record<string, unknown>) : {};
  const nexa = base["nexa"];
  const nexaBase = typeof nexa === "object" && nexa !== null && !Array.isArray(nexa) ? (nexa as Record<string, unknown>) : {};
  return { ...base, nexa: { ...nexaBase, [flag]: true } };
}

export interface SecretRef {
  /** Provider id in lower case ("openai", "deepseek"); "" for the key every provider falls back to. */
  provider: string;
  /** The setting's name as the runtime looks it up, e.g. "OPENAI_API_KEY" or "API_KEY". */
  name: string;
}

/** Key under which SecretStorage holds one provider secret. */
export function storageKey(ref: SecretRef): string {
  return `nexa.providerSecret/${ref.provider}/${ref.name}`;
}

/** Whether a provider setting's name holds a credential (moved to the keychain). */
export function isSecretName(name: string): boolean {
  const upper = name.toUpperCase();
  return ["API_KEY", "_TOKEN", "_SECRET", "PASSWORD"].some((end) => upper.endsWith(end)) || upper === "TOKEN" || upper === "SECRET";
}

/** The provider a setting belongs to: `OPENAI_API_KEY` -> "openai"; `API_KEY` -> "". */
export function secretRef(name: string): SecretRef {
  const upper = name.trim().toUpperCase();
  for (const suffix of ["_API_KEY", "_TOKEN", "_SECRET", "_PASSWORD"]) {
    if (upper.endsWith(suffix) && upper.length > suffix.length) return { provider: upper.slice(0, -suffix.length).toLowerCase(), name: upper };
  }
  return { provider: "", name: upper };
}

/** The setting name a key for a provider gets by default: "openai" -> "OPENAI_API_KEY". */
export function defaultSecretName(provider: string): string {
  const p = provider.trim().toUpperCase().split("-").join("_");
  return p === "" ? "API_KEY" : `${p}_API_KEY`;
}

export interface SettingsMove {
  /** Entries to store in SecretStorage. */
  secrets: (SecretRef & { value: string })[];
  /** What `nexa.runs.providerSettings` keeps (non-secret values), or undefined when nothing is left. */
  keep: Record<string, unknown> | undefined;
}

/** Splits `nexa.runs.providerSettings` into the secrets to move and what stays in settings. */
export function planMove(providerSettings: unknown): SettingsMove {
  const secrets: SettingsMove["secrets"] = [];
  const keep: Record<string, unknown> = {};
  if (typeof providerSettings === "object" && providerSettings !== null && !Array.isArray(providerSettings)) {
    for (const [key, value] of Object.entries(providerSettings as Record<string, unknown>)) {
      if (isSecretName(key) && typeof value === "string" && value !== "") secrets.push({ ...secretRef(key), value });
      else keep[key] = value;
    }
  }
  return { secrets, keep: Object.keys(keep).length > 0 ? keep : undefined };
}

/** Parses the params of `nexa/providerSecret`; undefined when malformed. */
export function parseSecretRequest(params: unknown): SecretRef | undefined {
  if (typeof params !== "object" || params === null) return undefined;
  const { provider, name } = params as { provider?: unknown; name?: unknown };
  if (typeof provider !== "string" || typeof name !== "string" || name.trim() === "") return undefined;
  return { provider: provider.trim().toLowerCase(), name: name.trim().toUpperCase() };
}

/** Keys stored, by reference (names only, never values), kept in globalState. */
export function addRef(index: readonly SecretRef[], ref: SecretRef): SecretRef[] {
  return index.some((r) => r.provider === ref.provider && r.name === ref.name) ? [...index] : [...index, ref];
}

export function removeRef(index: readonly SecretRef[], ref: SecretRef): SecretRef[] {
  return index.filter((r) => !(r.provider === ref.provider && r.name === ref.name));
}

/** Providers offered in the Set Provider API Key picker (any other can be typed). */
export const KNOWN_PROVIDERS: readonly string[] = ["openai", "anthropic", "deepseek", "gemini", "openrouter", "mistral", "groq"];
