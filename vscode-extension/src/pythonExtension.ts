/** The Python extension (ms-python.python), when it is installed, through @vscode/python-extension. */

import { PythonExtension } from "@vscode/python-extension";
import * as vscode from "vscode";
import { PYTHON_EXTENSION_ID } from "./logic/constants";

export function isPythonExtensionInstalled(): boolean {
  return vscode.extensions.getExtension(PYTHON_EXTENSION_ID) !== undefined;
}

/** How long the server start waits for the Python extension before trying PATH. */
const PYTHON_EXTENSION_TIMEOUT_MS = 15_000;

async function readyApi(): Promise<PythonExtension> {
  const api = await PythonExtension.api();
  await api.ready;
  return api;
}

/** The API once ready; undefined when the extension is absent, fails or is too slow. */
export async function loadPythonExtension(): Promise<PythonExtension | undefined> {
  if (!isPythonExtensionInstalled()) return undefined;
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), PYTHON_EXTENSION_TIMEOUT_MS);
  });
  try {
    return await Promise.race([readyApi(), timeout]);
  } catch {
    return undefined;
  } finally {
    clearTimeout(timer);
  }
}

/** The active interpreter for a resource as a command (its executable), if the extension has one. */
export async function activePythonCommand(resource: vscode.Uri | undefined): Promise<string[] | undefined> {
  const api = await loadPythonExtension();
  if (api === undefined) return undefined;
  const active = api.environments.getActiveEnvironmentPath(resource);
  const resolved = await api.environments.resolveEnvironment(active);
  const executable = resolved?.executable.uri?.fsPath ?? (active.path !== "" ? active.path : undefined);
  return executable !== undefined ? [executable] : undefined;
}

/** Fires when the interpreter selected in the Python extension changes. */
export async function onDidChangePythonInterpreter(listener: () => void): Promise<vscode.Disposable | undefined> {
  const api = await loadPythonExtension();
  return api?.environments.onDidChangeActiveEnvironmentPath(() => listener());
}
