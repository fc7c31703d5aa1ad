import { strict as assert } from "node:assert";
import { spawnSync } from "node:child_process";
import { describe, it } from "node:test";
import {
  candidateInterpreters,
  classifyModuleCheck,
  describeInterpreter,
  expandPath,
  findInterpreter,
  formatCommandLine,
  importStrategy,
  installCommandLine,
  isSupportedPython,
  moduleCheckCommandLine,
  noPythonMessage,
  parsePythonVersion,
  serverCommandLine,
  versionCheckCommandLine,
  type CommandLine,
  type Interpreter,
  type ProcessResult,
} from "../../src/logic/interpreter";
import { runProcess } from "../../src/logic/process";

const active = (...command: string[]) => async (): Promise<string[]> => command;

describe("candidateInterpreters", () => {
  it("the setting is the only candidate when set", async () => {
    let asked = false;
    const c = await candidateInterpreters({
      configured: "/opt/py/bin/python",
      pythonExtension: async () => {
        asked = true;
        return ["/env/python"];
      },
    });
    assert.deepEqual(c, [{ command: "/opt/py/bin/python", prefixArgs: [], source: "setting" }]);
    assert.equal(asked, false, "the Python extension is not consulted when the setting is set");
  });

  it("expands ${workspaceFolder} and ~ in the setting", async () => {
    const [i] = await candidateInterpreters({
      configured: "${workspaceFolder}/.venv/bin/python",
      pathContext: { workspaceFolder: "/work/proj", home: "/home/u" },
    });
    assert.equal(i?.command, "/work/proj/.venv/bin/python");
    const [j] = await candidateInterpreters({ configured: "~/py/bin/python", pathContext: { home: "/home/u" } });
    assert.equal(j?.command, "/home/u/py/bin/python");
  });

  it("a blank setting is unset: the Python extension's interpreter, then python3 and python on PATH", async () => {
    const c = await candidateInterpreters({ configured: "   ", pythonExtension: active("/env/bin/python3.12") });
    assert.deepEqual(
      c.map((i) => [i.command, i.source]),
      [
        ["/env/bin/python3.12", "python-extension"],
        ["python3", "default"],
        ["python", "default"],
      ],
    );
  });

  it("keeps a multi-part command from the Python extension", async () => {
    const [i] = await candidateInterpreters({ configured: "", pythonExtension: active("conda", "run", "-n", "nx", "python") });
    assert.ok(i);
    assert.deepEqual(i, { command: "conda", prefixArgs: ["run", "-n", "nx", "python"], source: "python-extension" });
    assert.deepEqual(serverCommandLine(i), { command: "conda", args: ["run", "-n", "nx", "python", "-m", "nexa_lsp"] });
  });

  it("PATH only without the Python extension, or when it has nothing or fails", async () => {
    const none = await candidateInterpreters({ configured: "", pythonExtension: async () => undefined });
    assert.deepEqual(none.map((i) => i.command), ["python3", "python"]);
    const broken = await candidateInterpreters({
      configured: "",
      pythonExtension: async () => {
        throw new Error("activation failed");
      },
    });
    assert.deepEqual(broken.map((i) => i.command), ["python3", "python"]);
    assert.deepEqual((await candidateInterpreters({ configured: undefined })).map((i) => i.source), ["default", "default"]);
  });
});

/** A fake `run` answering the version check per interpreter command. */
function versions(table: Record<string, string | "ENOENT">): (line: CommandLine) => Promise<ProcessResult> {
  return async (line) => {
    const v = table[line.command];
    if (v === undefined || v === "ENOENT") return { code: null, stdout: "", stderr: "", errorCode: "ENOENT", errorMessage: `spawn ${line.command} ENOENT` };
    return { code: 0, stdout: `${v}\n`, stderr: "" };
  };
}

describe("findInterpreter: the first Python 3.11+", () => {
  const cands: Interpreter[] = [
    { command: "/env/bin/python", prefixArgs: [], source: "python-extension" },
    { command: "python3", prefixArgs: [], source: "default" },
    { command: "python", prefixArgs: [], source: "default" },
  ];

  it("skips an interpreter that is too old or missing", async () => {
    const r = await findInterpreter(cands, versions({ "/env/bin/python": "3.9.18", python3: "ENOENT", python: "3.12.4" }));
    assert.equal(r.chosen?.command, "python");
    assert.equal(r.chosen?.version, "3.12.4");
    assert.deepEqual(
      r.tried.map((t) => t.problem),
      ["Python 3.9.18 is older than 3.11", "not found", undefined],
    );
  });

  it("stops at the first that fits", async () => {
    const r = await findInterpreter(cands, versions({ "/env/bin/python": "3.11.0", python3: "3.13.1" }));
    assert.equal(r.chosen?.command, "/env/bin/python");
    assert.equal(r.tried.length, 1);
  });

  it("none fits: one message naming what was tried and what to install", async () => {
    const r = await findInterpreter(cands, versions({ "/env/bin/python": "3.10.2", python3: "ENOENT", python: "2.7.18" }));
    assert.equal(r.chosen, undefined);
    const msg = noPythonMessage(r.tried);
    assert.match(msg, /needs Python 3\.11 or newer/);
    assert.match(msg, /\/env\/bin\/python \(Python 3\.10\.2 is older than 3\.11\)/);
    assert.match(msg, /python3 \(not found\)/);
    assert.match(msg, /Install Python 3\.11\+/);
    assert.match(msg, /nexa\.server\.pythonPath/);
  });

  it("parses the version check and compares with 3.11", () => {
    assert.deepEqual(parsePythonVersion("3.12.1\n"), [3, 12, 1]);
    assert.equal(parsePythonVersion("Python 3.12"), undefined);
    assert.equal(isSupportedPython([3, 11, 0]), true);
    assert.equal(isSupportedPython([3, 10, 9]), false);
    assert.equal(isSupportedPython([4, 0, 0]), true);
    assert.deepEqual(versionCheckCommandLine({ command: "py", prefixArgs: ["-3"], source: "setting" }).args.slice(0, 2), ["-3", "-c"]);
  });

  it("importStrategy defaults to useBundled", () => {
    assert.equal(importStrategy(undefined), "useBundled");
    assert.equal(importStrategy("nonsense"), "useBundled");
    assert.equal(importStrategy("fromEnvironment"), "fromEnvironment");
  });
});

describe("command lines", () => {
  const py: Interpreter = { command: "/p/python", prefixArgs: [], source: "setting" };

  it("starts the server as <python> -m nexa_lsp from the environment", () => {
    assert.deepEqual(serverCommandLine(py), { command: "/p/python", args: ["-m", "nexa_lsp"] });
  });

  it("starts the bundled server as <python> <launcher>", () => {
    assert.deepEqual(serverCommandLine(py, { launcher: "/ext/bundled/tool/launch_server.py" }), {
      command: "/p/python",
      args: ["/ext/bundled/tool/launch_server.py"],
    });
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
    assert.match(describeInterpreter({ command: "python3", prefixArgs: [], source: "default" }), /on PATH/);
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

describe("version check against a real interpreter", { skip: !python3 && "python3 not found" }, () => {
  it("reads the version of python3", async () => {
    const r = await findInterpreter([{ command: "python3", prefixArgs: [], source: "default" }], runProcess);
    assert.match(r.tried[0]?.version ?? "", /^3\.\d+\.\d+$/);
  });
});

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
