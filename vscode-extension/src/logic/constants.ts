/**
 * Identifiers shared by the extension and its tests. No `vscode` import here:
 * everything under src/logic runs in plain Node.
 */

export const LANGUAGE_ID = "nexa";
/** `.nxs` settings files (the server checks them too). */
export const SECRETS_LANGUAGE_ID = "nexa-secrets";
export const CLIENT_ID = "nexa";
export const OUTPUT_CHANNEL_NAME = "Nexa Language Server";
export const PYTHON_MODULE = "nexa_lsp";
export const PIP_PACKAGE = "nexa-lsp";
export const PYTHON_EXTENSION_ID = "ms-python.python";
export const RUNS_VIEW_ID = "nexaRuns";
export const MIGRATION_VIEW_ID = "nexaMigration";

/** Commands the server registers (docs/commands.md). The language client
 * registers each of them in VS Code, so the extension's own commands use
 * the `nexa.client.*` ids below. */
export const SERVER_COMMANDS = {
  execute: "nexa.execute",
  resume: "nexa.resume",
  continue: "nexa.continue",
  approve: "nexa.approve",
  deny: "nexa.deny",
  cancel: "nexa.cancel",
  recover: "nexa.recover",
  showRun: "nexa.showRun",
  listRuns: "nexa.listRuns",
  migrateFile: "nexa.migrateFile",
  migrationStatus: "nexa.migrationStatus",
  migrateWorkspace: "nexa.migrateWorkspace",
} as const;
export type ServerCommand = (typeof SERVER_COMMANDS)[keyof typeof SERVER_COMMANDS];

/** Palette, context-menu and view commands contributed by the extension. */
export const CLIENT_COMMANDS = {
  executeAgent: "nexa.client.executeAgent",
  continueRun: "nexa.client.continueRun",
  resumeRun: "nexa.client.resumeRun",
  approve: "nexa.client.approve",
  deny: "nexa.client.deny",
  cancelRun: "nexa.client.cancelRun",
  recoverToolCall: "nexa.client.recoverToolCall",
  showRun: "nexa.client.showRun",
  migrateFile: "nexa.client.migrateFile",
  restartServer: "nexa.client.restartServer",
  refreshRuns: "nexa.client.refreshRuns",
  showOutput: "nexa.client.showOutput",
  versionStatusClicked: "nexa.client.versionStatusClicked",
  setProviderApiKey: "nexa.client.setProviderApiKey",
  removeProviderApiKey: "nexa.client.removeProviderApiKey",
  migrateWorkspace: "nexa.client.migrateWorkspace",
  refreshMigration: "nexa.client.refreshMigration",
  showRunPanel: "nexa.client.showRunPanel",
} as const;
export type ClientCommand = (typeof CLIENT_COMMANDS)[keyof typeof CLIENT_COMMANDS];

/** Server -> client notification sent after a run changes state. */
export const RUNS_CHANGED_NOTIFICATION = "nexa/runsChanged";

/** Context keys set by the extension (used in `when` clauses of package.json). */
export const CONTEXT_KEYS = {
  extensionActive: "nexa.extensionActive",
  /** The server says the active file's migration to Nexa 3.0 is ready (safe automatic fixes). */
  activeFileCanMigrate: "nexa.activeFileCanMigrate",
} as const;

/** Documents the language client syncs with the server: Nexa sources and `.nxs` settings files. */
export const DOCUMENT_SELECTOR: readonly { scheme: string; language: string }[] = [
  { scheme: "file", language: LANGUAGE_ID },
  { scheme: "untitled", language: LANGUAGE_ID },
  { scheme: "file", language: SECRETS_LANGUAGE_ID },
  { scheme: "untitled", language: SECRETS_LANGUAGE_ID },
];
