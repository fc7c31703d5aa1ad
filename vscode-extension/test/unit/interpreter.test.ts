import { strict as assert } from "node:assert";
import { spawnSync } from "node:child_process";
import { describe, it } from "node:test";
import {
  classifyModuleCheck,
  describeInterpreter,
  expandPath,
  formatCommandLine,
  installCommandLine,
  interpreterFromPythonExtension,
  moduleCheckCommandLine,
  resolveInterpreter,
  serverCommandLine,
  type Interpreter,
  type PythonExtensionApi,
} from "../../src/logic/interpreter";
import { runProcess } from "../../src/logic/process";

const envApi = (path: string, resolved?: string): PythonExtensionApi => ({
  environments: {
    getActiveEnvironmentPath: () => ({ id: path, path }),
    resolveEnvironment: async () => (resolved === undefined ? undefined : { executable: { uri: { fsPath: resolved } } }),
  },
});

describe("resolveInterpreter", () => {
  it("the setting wins over everything", async () => {
    let asked = false;
    const i = await resolveInterpreter({
      configured: "/opt/py/bin/python",
      pythonExtension: async () => {
        asked = true;
        return envApi("/env/python");
      },
    });
    assert.deepEqual(i, { command: "/opt/py/bin/python", prefixArgs: [], source: "setting" });
    assert.equal(asked, false, "the Python extension is not consulted when the setting is set");
  });

  it("expands ${workspaceFolder} and ~ in the setting", async () => {
    const i = await resolveInterpreter({
      configured: "${workspaceFolder}/.venv/bin/python",
      pathContext: { workspaceFolder: "/work/proj", home: "/home/u" },
    });
    assert.equal(i.command, "/work/proj/.venv/bin/python");
    const j = await resolveInterpreter({ configured: "~/py/bin/python", pathContext: { home: "/home/u" } });
    assert.equal(j.command, "/home/u/py/bin/python");
  });

  it("a blank setting is unset", async () => {
    const i = await resolveInterpreter({ configured: "   ", pythonExtension: async () => envApi("/env/bin/python") });
    assert.equal(i.source, "python-extension");
  });

  it("uses the Python extension's resolved environment", async () => {
    const i = await resolveInterpreter({
      configured: "",
      pythonExtension: async () => envApi("/env", "/env/bin/python3.12"),
    });
    assert.deepEqual(i, { command: "/env/bin/python3.12", prefixArgs: [], source: "python-extension" });
  });

  it("falls back to the active path when the environment cannot be resolved", async () => {
    const i = await resolveInterpreter({ configured: undefined, pythonExtension: async () => envApi("/env/bin/python") });
    assert.equal(i.command, "/env/bin/python");
  });

  it("accepts the older getExecutionDetails API with a multi-part command", async () => {
    const api: PythonExtensionApi = {
      settings: { getExecutionDetails: () => ({ execCommand: ["conda", "run", "-n", "nx", "python"] }) },
    };
    const i = await resolveInterpreter({ configured: "", pythonExtension: async () => api });
    assert.deepEqual(i, { command: "conda", prefixArgs: ["run", "-n", "nx", "python"], source: "python-extension" });
    assert.deepEqual(serverCommandLine(i), { command: "conda", args: ["run", "-n", "nx", "python", "-m", "nexa_lsp"] });
  });

  it("defaults to python3 without the Python extension", async () => {
    const i = await resolveInterpreter({ configured: "" });
    assert.deepEqual(i, { command: "python3", prefixArgs: [], source: "default" });
  });

  it("defaults to python3 when the Python extension has no selection or fails", async () => {
    const none: PythonExtensionApi = { environments: { getActiveEnvironmentPath: () => undefined } };
    assert.equal((await resolveInterpreter({ configured: "", pythonExtension: async () => none })).source, "default");
    const broken = await resolveInterpreter({
      configured: "",
      pythonExtension: async () => {
        throw new Error("activation failed");
      },
    });
    assert.equal(broken.command, "python3");
    const throwing: PythonExtensionApi = {
      environments: {
        getActiveEnvironmentPath: () => {
          throw new Error("boom");
        },
      },
    };
    assert.equal(await interpreterFromPythonExtension(throwing), undefined);
  });
});

describe("command lines", () => {
  const py: Interpreter = { command: "/p/python", prefixArgs: [], source: "setting" };

  it("starts the server as <python> -m nexa_lsp", () => {
    assert.deepEqual(serverCommandLine(py), { command: "/p/python", args: ["-m", "nexa_lsp"] });
  });

  it("checks the module with -c import", () => {
    assert.deepEqual(moduleCheckCommandLine(py), { command: "/p/python", args: ["-c", "import nexa_lsp"] });
  });

  it("installs with <python> -m pip install nexa-lsp", () => {
    assert.deepEqual(installCommandLine(py), { command: "/p/python", args: ["-m", "pip", "install", "nexa-lsp"] });
  });

  it("quotes for display", () => {
    assert.equal(formatCommandLine({ command: "/a b/python", args: ["-c", "import x"] }, "linux"), "'/a b/python' -c 'import x'");
    assert.equal(formatCommandLine({ command: "C:\\Py 3\\python.exe", args: ["-m", "pip"] }, "win32"), '"C:\\Py 3\\python.exe" -m pip');
    assert.equal(formatCommandLine(installCommandLine(py), "linux"), "/p/python -m pip install nexa-lsp");
  });

  it("describes where the interpreter came from", () => {
    assert.match(describeInterpreter(py), /nexa\.server\.pythonPath/);
    assert.match(describeInterpreter({ command: "python3", prefixArgs: [], source: "default" }), /default/);
  });

  it("expandPath handles env variables", () => {
    assert.equal(expandPath("${env:PYHOME}/bin/python", { env: { PYHOME: "/opt/x" } }), "/opt/x/bin/python");
  });
});

describe("classifyModuleCheck", () => {
  it("exit 0 is ok", () => {
    assert.deepEqual(classifyModuleCheck({ code: 0, stdout: "", stderr: "" }), { status: "ok" });
  });

  it("ModuleNotFoundError is a missing module", () => {
    const r = classifyModuleCheck({
      code: 1,
      stdout: "",
      stderr: "Traceback (most recent call last):\n  File \"<string>\", line 1\nModuleNotFoundError: No module named 'nexa_lsp'\n",
    });
    assert.equal(r.status, "missing-module");
    assert.match((r as { detail: string }).detail, /No module named 'nexa_lsp'/);
  });

  it("ENOENT means the interpreter does not exist", () => {
    const r = classifyModuleCheck({ code: null, stdout: "", stderr: "", errorCode: "ENOENT", errorMessage: "spawn x ENOENT" });
    assert.equal(r.status, "interpreter-not-found");
  });

  it("another failure is reported with its last stderr line", () => {
    const r = classifyModuleCheck({ code: 1, stdout: "", stderr: "SyntaxError: bad\n" });
    assert.deepEqual(r, { status: "failed", detail: "SyntaxError: bad" });
  });
});

const python3 = spawnSync("python3", ["--version"]).status === 0;

describe("module check against a real interpreter", { skip: !python3 && "python3 not found" }, () => {
  const py: Interpreter = { command: "python3", prefixArgs: [], source: "default" };

  it("finds a module that exists", async () => {
    const r = classifyModuleCheck(await runProcess(moduleCheckCommandLine(py, "json")), "json");
    assert.equal(r.status, "ok");
  });

  it("reports a module that is missing", async () => {
    const name = "nexa_lsp_not_installed_anywhere";
    const r = classifyModuleCheck(await runProcess(moduleCheckCommandLine(py, name)), name);
    assert.equal(r.status, "missing-module");
  });

  it("reports an interpreter that does not exist", async () => {
    const missing: Interpreter = { command: "/nonexistent/bin/python3", prefixArgs: [], source: "setting" };
    const r = classifyModuleCheck(await runProcess(moduleCheckCommandLine(missing)));
    assert.equal(r.status, "interpreter-not-found");
  });
});
