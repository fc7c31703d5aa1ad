/** Access to the Python extension (ms-python.python), when it is installed. */

import * as vscode from "vscode";
import { PYTHON_EXTENSION_ID } from "./logic/constants";
import type { PythonExtensionApi } from "./logic/interpreter";

interface PythonExtensionExports extends PythonExtensionApi {
  ready?: Promise<void>;
  environments?: PythonExtensionApi["environments"] & {
    onDidChangeActiveEnvironmentPath?: vscode.Event<unknown>;
  };
}

export function isPythonExtensionInstalled(): boolean {
  return vscode.extensions.getExtension(PYTHON_EXTENSION_ID) !== undefined;
}

/** How long the server start waits for the Python extension before using python3. */
const PYTHON_EXTENSION_TIMEOUT_MS = 15_000;

async function activatePythonExtension(): Promise<PythonExtensionExports | undefined> {
  const ext = vscode.extensions.getExtension<PythonExtensionExports>(PYTHON_EXTENSION_ID);
  if (ext === undefined) return undefined;
  const api = ext.isActive ? ext.exports : await ext.activate();
  if (api?.ready !== undefined) await api.ready;
  return api;
}

/** Activates the Python extension and returns its API; undefined when absent or too slow. */
export async function loadPythonExtension(): Promise<PythonExtensionExports | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), PYTHON_EXTENSION_TIMEOUT_MS);
  });
  try {
    return await Promise.race([activatePythonExtension(), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** Fires when the interpreter selected in the Python extension changes. */
export async function onDidChangePythonInterpreter(listener: () => void): Promise<vscode.Disposable | undefined> {
  try {
    const api = await loadPythonExtension();
    const event = api?.environments?.onDidChangeActiveEnvironmentPath;
    return event !== undefined ? event(() => listener()) : undefined;
  } catch {
    return undefined;
  }
}
