"""Workspace migration figures through the language server, beside the CLI's.

Usage: scripts/migration_report.py [FOLDER] [--migrate]   (default: ../shared/corpus/nexa-2.x)

FOLDER is copied to a temporary folder first (nothing is written into it). The script
starts ``python -m nexa_lsp`` over stdio with the copy as its workspace folder, asks
``nexa/migrationStatus``, runs ``nexa-lsp check --migrate --dry-run --format json`` on the
same copy, and prints both counts side by side with the files whose state differs.

With ``--migrate`` it also runs the ``nexa.migrateWorkspace`` command on a second copy,
applying the workspace edit the server sends to the files, and reports the files migrated
and blocked, the new errors of the migrated files (``nexa-lsp check --format json`` before
and after) and how many edits a second run sends (both must be 0). Exit status 1 when the
counts differ, a migrated file gains an error or a second run changes something.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import threading
from collections import Counter
from pathlib import Path
from queue import Queue
from typing import Any
from urllib.parse import unquote, urlparse

ROOT = Path(__file__).resolve().parent.parent
SERVER = [sys.executable, "-m", "nexa_lsp"]
CLI = [sys.executable, "-m", "nexa_lsp", "check"]
TIMEOUT = 600.0


def uri_of(path: Path) -> str:
    return path.resolve().as_uri()


def path_of(uri: str) -> Path:
    return Path(unquote(urlparse(uri).path))


class StdioClient:
    """A minimal LSP client: requests out, answers and server requests in (a reader thread)."""

    def __init__(self, folder: Path) -> None:
        self.proc = subprocess.Popen(SERVER, stdin=subprocess.PIPE, stdout=subprocess.PIPE, cwd=ROOT)
        self.folder = folder
        self.answers: dict[int, Queue[dict[str, Any]]] = {}
        self.messages: list[str] = []  # window/showMessage texts
        self.applied: list[dict[str, Any]] = []  # workspace/applyEdit params
        self._next = 0
        self._write = threading.Lock()
        threading.Thread(target=self._read, daemon=True).start()

    def _send(self, message: dict[str, Any]) -> None:
        body = json.dumps({"jsonrpc": "2.0", **message}).encode()
        assert self.proc.stdin is not None
        with self._write:
            self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
            self.proc.stdin.flush()

    def _read(self) -> None:
        out = self.proc.stdout
        assert out is not None
        while True:
            length = 0
            while True:
                line = out.readline()
                if not line:
                    return
                if line in (b"\r\n", b"\n"):
                    break
                name, _, value = line.decode().partition(":")
                if name.lower() == "content-length":
                    length = int(value)
            message = json.loads(out.read(length))
            if "method" in message and "id" in message:
                self._send({"id": message["id"], "result": self._serve(message["method"], message.get("params"))})
            elif "method" in message:
                if message["method"] == "window/showMessage":
                    self.messages.append(message["params"]["message"])
            elif message.get("id") in self.answers:
                self.answers[message["id"]].put(message)

    def _serve(self, method: str, params: Any) -> Any:
        if method == "workspace/applyEdit":
            self.applied.append(params)
            apply_workspace_edit(params["edit"])
            return {"applied": True}
        if method == "workspace/configuration":
            return [None for _ in params["items"]]
        return None

    def request(self, method: str, params: Any) -> Any:
        self._next += 1
        number = self._next
        self.answers[number] = Queue()
        self._send({"id": number, "method": method, "params": params})
        answer = self.answers[number].get(timeout=TIMEOUT)
        if "error" in answer:
            raise RuntimeError(f"{method}: {answer['error']}")
        return answer["result"]

    def __enter__(self) -> StdioClient:
        capabilities = {
            "workspace": {
                "workspaceEdit": {"documentChanges": True, "changeAnnotationSupport": {"groupsOnLabel": True}},
                "workspaceFolders": True,
            }
        }
        folder = {"uri": uri_of(self.folder), "name": self.folder.name}
        self.request(
            "initialize",
            {"processId": None, "rootUri": folder["uri"], "workspaceFolders": [folder], "capabilities": capabilities},
        )
        self._send({"method": "initialized", "params": {}})
        return self

    def __exit__(self, *_exc: object) -> None:
        self.request("shutdown", None)
        self._send({"method": "exit"})
        self.proc.wait(timeout=30)


def apply_workspace_edit(edit: dict[str, Any]) -> None:
    """Write the edits of a workspace edit to the files (UTF-16 positions, as LSP counts)."""
    per_file: dict[str, list[dict[str, Any]]] = dict(edit.get("changes") or {})
    for change in edit.get("documentChanges") or []:
        per_file.setdefault(change["textDocument"]["uri"], []).extend(change["edits"])
    for uri, edits in per_file.items():
        path = path_of(uri)
        text = path.read_text(encoding="utf-8")
        starts = [0]
        for index, char in enumerate(text):
            if char == "\n":
                starts.append(index + 1)

        def offset(pos: dict[str, int], text: str = text, starts: list[int] = starts) -> int:
            at, units = starts[pos["line"]], 0
            while units < pos["character"] and at < len(text) and text[at] != "\n":
                units += 2 if ord(text[at]) > 0xFFFF else 1
                at += 1
            return at

        spans = sorted((offset(e["range"]["start"]), offset(e["range"]["end"]), e["newText"]) for e in edits)
        out, cursor = [], 0
        for start, end, new in spans:
            out.append(text[cursor:start] + new)
            cursor = end
        out.append(text[cursor:])
        path.write_text("".join(out), encoding="utf-8")


def cli_json(*args: str | Path) -> dict[str, Any]:
    done = subprocess.run([*CLI, *map(str, args)], capture_output=True, text=True, cwd=ROOT, check=False)
    if done.returncode not in (0, 1):
        raise RuntimeError(f"nexa-lsp check failed ({done.returncode}): {done.stderr}")
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def states(files: list[dict[str, Any]]) -> dict[Path, str]:
    return {Path(f["path"]).resolve(): f["state"] for f in files}


def compare(folder: Path) -> bool:
    with StdioClient(folder) as client:
        server = client.request("nexa/migrationStatus", {})
    cli = cli_json("--migrate", "--dry-run", "--format", "json", folder)
    print(f"{'':10} {'server':>8} {'CLI':>8}")
    for state in ("ready", "blocked", "done"):
        print(f"{state:10} {server['counts'][state]:>8} {cli['counts'][state]:>8}")
    print(f"{'files':10} {len(server['files']):>8} {len(cli['files']):>8}")
    ours, theirs = states(server["files"]), states(cli["files"])
    differ = sorted(p for p in ours.keys() | theirs.keys() if ours.get(p) != theirs.get(p))
    for path in differ:
        print(f"  differs: {path.relative_to(folder)}: server {ours.get(path)}, CLI {theirs.get(path)}")
    same = not differ and server["counts"] == cli["counts"]
    print("the same per file" if same else "NOT the same")
    return same


def errors_by_file(folder: Path) -> Counter[Path]:
    report = cli_json("--format", "json", folder)
    return Counter(
        Path(f["path"]).resolve() for f in report["files"] for d in f["diagnostics"] if d["severity"] == "error"
    )


def migrate(folder: Path) -> bool:
    before = errors_by_file(folder)
    texts = {p: p.read_bytes() for p in folder.rglob("*") if p.is_file()}
    with StdioClient(folder) as client:
        first = client.request("workspace/executeCommand", {"command": "nexa.migrateWorkspace", "arguments": []})
        edits_first = len(client.applied)
        second = client.request("workspace/executeCommand", {"command": "nexa.migrateWorkspace", "arguments": []})
        edits_second = len(client.applied) - edits_first
        messages = list(client.messages)
    migrated = {path_of(u) for u in first["migrated"]}
    after = errors_by_file(folder)
    new_errors = sum(max(0, after[p] - before[p]) for p in migrated)
    changed_blocked = [p for p in map(path_of, first["blocked"]) if p.read_bytes() != texts[p]]
    untouched_changed = [p for p, data in texts.items() if p.resolve() not in migrated and p.read_bytes() != data]
    print(f"files migrated: {len(migrated)}, blocked: {len(first['blocked'])} (workspace edits sent: {edits_first})")
    print(f"re-check after migrating: {first['after']['counts']}")
    print(f"new errors in migrated files: {new_errors}")
    print(f"blocked files changed: {len(changed_blocked)}, other files changed: {len(untouched_changed)}")
    print(f"second run: {len(second['migrated'])} migrated, {edits_second} workspace edits")
    print(f"server said: {messages[0] if messages else '(nothing)'}")
    return not new_errors and not changed_blocked and not untouched_changed and edits_second == 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", nargs="?", type=Path, default=ROOT.parent / "shared" / "corpus" / "nexa-2.x")
    parser.add_argument("--migrate", action="store_true", help="also migrate a copy via nexa.migrateWorkspace")
    args = parser.parse_args()
    ok = True
    with tempfile.TemporaryDirectory(prefix="nexa-migration-") as tmp:
        copy = Path(tmp).resolve() / "status"
        shutil.copytree(args.folder, copy)
        ok = compare(copy)
        if args.migrate:
            target = Path(tmp).resolve() / "migrate"
            shutil.copytree(args.folder, target)
            ok = migrate(target) and ok
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
