/**
 * Provider API keys in VS Code's SecretStorage: the "Set Provider API Key"
 * and "Remove Provider API Key" commands, the offer to move keys found in
 * `nexa.runs.providerSettings` (then removed from settings), and the answer
 * to the server's `nexa/providerSecret` request. Values are never logged,
 * never written to settings, and never handed out in an untrusted workspace.
 */

import * as vscode from "vscode";
import {
  addRef,
  defaultSecretName,
  KNOWN_PROVIDERS,
  planMove,
  removeRef,
  storageKey,
  type SecretRef,
} from "./logic/secrets";

const INDEX_KEY = "nexa.providerSecrets";

export class ProviderSecrets {
  constructor(
    private readonly storage: vscode.SecretStorage,
    private readonly state: vscode.Memento,
    private readonly log: (line: string) => void,
  ) {}

  /** References (names, never values) of the stored keys. */
  list(): SecretRef[] {
    return this.state.get<SecretRef[]>(INDEX_KEY, []);
  }

  async store(ref: SecretRef, value: string): Promise<void> {
    await this.storage.store(storageKey(ref), value);
    await this.state.update(INDEX_KEY, addRef(this.list(), ref));
    this.log(`stored ${ref.name}${ref.provider !== "" ? ` for ${ref.provider}` : ""} in the secret storage`);
  }

  get(ref: SecretRef): Thenable<string | undefined> {
    return this.storage.get(storageKey(ref));
  }

  async remove(ref: SecretRef): Promise<void> {
    await this.storage.delete(storageKey(ref));
    await this.state.update(INDEX_KEY, removeRef(this.list(), ref));
    this.log(`removed ${ref.name} from the secret storage`);
  }

  /**
   * The answer to `nexa/providerSecret {provider, name}`: `{value}` or null.
   * Null in an untrusted workspace, whatever is stored.
   */
  async answer(ref: SecretRef | undefined): Promise<{ value: string } | null> {
    if (ref === undefined || !vscode.workspace.isTrusted) return null;
    // A key stored for provider "" (a plain API_KEY moved from settings) answers any provider.
    const value = (await this.get(ref)) ?? (ref.provider !== "" ? await this.get({ provider: "", name: ref.name }) : undefined);
    return value !== undefined && value !== "" ? { value } : null;
  }

  /** Command: asks for the provider, the setting name and the key (hidden input). */
  async setCommand(): Promise<void> {
    const other = "Other provider...";
    const pick = await vscode.window.showQuickPick(
      [...KNOWN_PROVIDERS, other].map((label) => ({ label })),
      { title: "Set Provider API Key: which provider?", placeHolder: "Provider" },
    );
    if (pick === undefined) return;
    const picked = pick.label;
    const provider =
      picked === other
        ? await vscode.window.showInputBox({ title: "Provider name", prompt: "As the run's provider is named (e.g. openrouter)", ignoreFocusOut: true })
        : picked;
    if (provider === undefined || provider.trim() === "") return;
    const name = await vscode.window.showInputBox({
      title: `API key for ${provider}`,
      prompt: "The setting the runtime looks up (docs/runs.md)",
      value: defaultSecretName(provider),
      ignoreFocusOut: true,
      validateInput: (v) => (v.trim() === "" ? "The name cannot be empty." : undefined),
    });
    if (name === undefined) return;
    const value = await vscode.window.showInputBox({
      title: `${name.trim().toUpperCase()} for ${provider}`,
      prompt: "Stored in VS Code's secret storage (the system keychain), never in settings.json",
      password: true,
      ignoreFocusOut: true,
      validateInput: (v) => (v.trim() === "" ? "The key cannot be empty." : undefined),
    });
    if (value === undefined) return;
    const ref = { provider: provider.trim().toLowerCase(), name: name.trim().toUpperCase() };
    await this.store(ref, value.trim());
    void vscode.window.showInformationMessage(`Nexa: ${ref.name} for ${ref.provider} is stored in the secret storage.`);
  }

  /** Command: removes one stored key, picked by name. */
  async removeCommand(): Promise<void> {
    const refs = this.list();
    if (refs.length === 0) {
      void vscode.window.showInformationMessage("Nexa: no provider API key is stored.");
      return;
    }
    const pick = await vscode.window.showQuickPick(
      refs.map((ref) => ({ label: ref.name, description: ref.provider, ref })),
      { title: "Remove which provider API key?" },
    );
    if (pick !== undefined) await this.remove(pick.ref);
  }

  /**
   * Keys written in `nexa.runs.providerSettings` (user settings: the setting is
   * machine-scoped) are offered to move; once stored, they are removed from settings.
   */
  async offerMove(): Promise<void> {
    const config = vscode.workspace.getConfiguration("nexa");
    const plan = planMove(config.inspect<Record<string, unknown>>("runs.providerSettings")?.globalValue);
    if (plan.secrets.length === 0) return;
    const names = plan.secrets.map((s) => s.name).join(", ");
    const move = "Move to Secret Storage";
    const choice = await vscode.window.showWarningMessage(
      `Nexa: ${plan.secrets.length === 1 ? "an API key is" : `${plan.secrets.length} API keys are`} in settings.json as plain text (nexa.runs.providerSettings: ${names}). ` +
        "Move to VS Code's secret storage (the system keychain) and remove from settings?",
      move,
      "Not Now",
    );
    if (choice !== move) return;
    for (const secret of plan.secrets) {
      await this.store({ provider: secret.provider, name: secret.name }, secret.value);
      if ((await this.get(secret)) !== secret.value) throw new Error(`${secret.name} could not be stored; settings left unchanged`);
    }
    await config.update("runs.providerSettings", plan.keep, vscode.ConfigurationTarget.Global);
    void vscode.window.showInformationMessage(`Nexa: moved ${names} to the secret storage and removed ${plan.secrets.length === 1 ? "it" : "them"} from settings.json.`);
  }
}
