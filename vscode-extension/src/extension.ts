/** Entry point of the Nexa extension. */

import * as vscode from "vscode";
import { Commands } from "./commands";
import { CLIENT_COMMANDS, CONTEXT_KEYS, OUTPUT_CHANNEL_NAME } from "./logic/constants";
import { RESTART_KEYS } from "./logic/settings";
import { onDidChangePythonInterpreter } from "./pythonExtension";
import { RunPanel } from "./runPanel";
import { RunProgress } from "./runProgress";
import { RunsView } from "./runsView";
import { MigrationView } from "./migrationView";
import { SafeOutputChannel } from "./output";
import { ProviderSecrets } from "./secrets";
import { ServerManager } from "./server";
import { VersionStatusBar } from "./statusBar";

let server: ServerManager | undefined;

export function activate(context: vscode.ExtensionContext): void {
  const output = new SafeOutputChannel(vscode.window.createOutputChannel(OUTPUT_CHANNEL_NAME));
  server = new ServerManager(output, context.extensionPath);
  const runs = new RunsView(server);
  const status = new VersionStatusBar(server);
  const migration = new MigrationView(server);
  // Disposed in this order: the views and the server first, the channel last.
  context.subscriptions.push(status, runs, migration, server, output);
  void vscode.commands.executeCommand("setContext", CONTEXT_KEYS.extensionActive, true);

  new Commands(server, runs, status).register(context);
  migration.register(context);
  const panel = new RunPanel(server, runs);
  panel.register(context);
  const progress = new RunProgress();
  context.subscriptions.push(panel, progress);

  const secrets = new ProviderSecrets(context.secrets, context.globalState, (line) => output.appendLine(`[client] ${line}`));
  server.setProviderSecretSource((ref) => secrets.answer(ref));
  const offerMove = (): void => {
    secrets.offerMove().catch((err: unknown) => {
      output.appendLine(`[client] moving the API keys failed: ${err instanceof Error ? err.message : String(err)}`);
      void vscode.window.showErrorMessage(`Nexa: moving the API keys failed: ${err instanceof Error ? err.message : String(err)}`);
    });
  };
  context.subscriptions.push(
    vscode.commands.registerCommand(CLIENT_COMMANDS.setProviderApiKey, () => secrets.setCommand()),
    vscode.commands.registerCommand(CLIENT_COMMANDS.removeProviderApiKey, () => secrets.removeCommand()),
    vscode.workspace.onDidChangeConfiguration((e) => {
      if (e.affectsConfiguration("nexa.runs.providerSettings")) offerMove();
    }),
  );
  offerMove();

  const srv = server;
  context.subscriptions.push(
    srv.onRunsChanged(() => runs.scheduleRefresh()),
    srv.onDidStart(() => runs.scheduleRefresh(0)),
    srv.onDidStart(() => migration.scheduleRefresh(0)),
    srv.onDidStop(() => runs.scheduleRefresh(0)),
    // Runs' progress as a notification with Cancel (after the client's own progress feature).
    srv.onDidStart(() => {
      if (srv.languageClient !== undefined) progress.attach(srv.languageClient);
    }),
    srv.onDidStop(() => progress.clear()),
    vscode.workspace.onDidChangeConfiguration((e) => {
      if (RESTART_KEYS.some((key) => e.affectsConfiguration(key))) {
        output.appendLine("[client] nexa.server settings changed: restarting the server");
        void srv.restart();
      } else if (e.affectsConfiguration("nexa")) {
        srv.notifyConfigurationChanged();
        runs.scheduleRefresh();
      }
    }),
    vscode.workspace.onDidGrantWorkspaceTrust(() => {
      output.appendLine("[client] workspace trusted: runs enabled");
      // The server interpreter may now come from workspace settings.
      void srv.restart();
    }),
  );

  void onDidChangePythonInterpreter(() => {
    if (srv.currentInterpreter?.source === "python-extension" || srv.currentInterpreter?.source === "default") {
      output.appendLine("[client] the Python interpreter changed: restarting the server");
      void srv.restart();
    }
  }).then((d) => {
    if (d !== undefined) context.subscriptions.push(d);
  });

  void srv.start();
}

export async function deactivate(): Promise<void> {
  const s = server;
  server = undefined;
  if (s !== undefined) await s.stop();
}
