"""The per-file cache of the workspace status (what makes a second ``nexa/migrationStatus`` cheap)."""

from __future__ import annotations

from pathlib import Path

from nexa_lsp.analysis.engine import CheckSettings
from nexa_lsp.analysis.migration.workspace import StatusCache, migrate_workspace, workspace_status
from nexa_lsp.syntax import Severity

ROOT = Path("/workspace")
LIB = 'agent Critic { prompt: "评 😀" }\n'
PROTOCOL_LIB = 'agent Critic implements Review { prompt: "评 😀" }\nprotocol Review { score: int }\n'
FILES = {
    ROOT / "lib.nx": LIB,
    ROOT / "main.nx": 'include "lib.nx";\nflow main {\n    r = Critic.run("rate 😀")\n    print(r == "5")\n}\n',
    ROOT / "other.nx": 'agent W { prompt: "p" }\nflow main {\n    a = W.run("x")\n    b = W.run("y")\n}\n',
    ROOT / "done.nx": 'nexa 3.0;\nagent A { prompt: "p" }\nflow main { r = A.execute("x") }\n',
}


def states(files: dict[Path, str], cache: StatusCache | None = None, **kw: object) -> dict[str, str]:
    status = workspace_status(files, cache=cache, **kw)  # type: ignore[arg-type]
    return {f.path.name: f.state for f in status.files}


def test_a_second_status_of_an_unchanged_workspace_computes_nothing() -> None:
    cache = StatusCache()
    first = workspace_status(FILES, cache=cache)
    computed = cache.computed
    assert computed > 0
    second = workspace_status(dict(FILES), cache=cache)
    assert cache.computed == computed
    assert second.as_json() == first.as_json() == workspace_status(FILES).as_json()


def test_a_changed_include_recomputes_the_files_that_include_it_only() -> None:
    cache = StatusCache()
    assert states(FILES, cache) == {"lib.nx": "ready", "main.nx": "ready", "other.nx": "ready", "done.nx": "done"}
    computed = cache.computed
    changed = {**FILES, ROOT / "lib.nx": PROTOCOL_LIB}  # Critic now has a protocol result
    assert (
        states(changed, cache)
        == states(changed)
        == {
            "lib.nx": "ready",
            "main.nx": "blocked",
            "other.nx": "ready",
            "done.nx": "done",
        }
    )
    # lib.nx and main.nx are planned and checked again; other.nx comes from the cache
    redone = cache.computed - computed
    assert 0 < redone < computed
    assert states(FILES, cache) == states(FILES)  # and back


def test_other_settings_are_not_answered_from_the_cache() -> None:
    cache = StatusCache()
    workspace_status(FILES, cache=cache)
    computed = cache.computed
    strict = CheckSettings(severity_overrides={"NX140": Severity.ERROR})
    assert (
        workspace_status(FILES, settings=strict, cache=cache).as_json()
        == workspace_status(FILES, settings=strict).as_json()
    )
    assert cache.computed > computed


def test_migrate_workspace_with_a_cache_gives_the_same_texts() -> None:
    cache = StatusCache()
    workspace_status(FILES, cache=cache)
    assert migrate_workspace(FILES, cache=cache)[1] == migrate_workspace(FILES)[1]


def test_results_of_texts_no_longer_in_the_workspace_are_dropped() -> None:
    cache = StatusCache()
    workspace_status(FILES, cache=cache)
    size = len(cache)
    for n in range(5):  # a long session editing one file
        edited = {**FILES, ROOT / "other.nx": FILES[ROOT / "other.nx"] + f"// edit {n}\n"}
        workspace_status(edited, cache=cache)
    assert len(cache) == size
