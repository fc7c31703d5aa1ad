"""Range formatting: only the lines of the range change, by the whole-file rules, idempotently."""

from __future__ import annotations

from pathlib import Path

import pytest

from nexa_lsp.syntax import parse_source
from nexa_lsp.syntax.formatting import FormatOptions, RangeEdit, format_range, format_source
from tests.syntax.test_formatting import shape

CORPUS = Path(__file__).resolve().parents[2].parent / "shared" / "corpus" / "nexa-2.x"
CORPUS_FILES = sorted(CORPUS.rglob("*.nx"))

TEXT = (
    "flow 主流程 {\n"
    'r = 作家.run("写一首诗 😀")   \n'
    'if (r != "") {\n'
    "print(r)\n"
    "}\n"
    "}\n"
    "agent 作家 {\n"
    '  prompt: "请用中文回答"\n'
    "}\n"
)


def apply(text: str, edit: RangeEdit | None) -> str:
    return text if edit is None else text[: edit.start] + edit.new_text + text[edit.end :]


def line_range(text: str, first: int, last: int) -> tuple[int, int]:
    """Offsets from the start of line ``first`` to the start of the line after ``last``."""
    starts = [0] + [i + 1 for i, ch in enumerate(text) if ch == "\n"]
    return starts[first], starts[last + 1] if last + 1 < len(starts) else len(text)


def test_only_the_lines_of_the_range_change() -> None:
    start, end = line_range(TEXT, 1, 2)
    formatted = apply(TEXT, format_range(TEXT, start, end))
    lines, before = formatted.split("\n"), TEXT.split("\n")
    assert lines[1] == '    r = 作家.run("写一首诗 😀")'
    assert lines[2] == '    if (r != "") {'
    assert lines[0] == before[0] and lines[3:] == before[3:]  # `print(r)` stays unindented: outside the range


def test_a_range_ending_at_a_line_start_leaves_that_line_alone() -> None:
    start, end = line_range(TEXT, 3, 3)
    formatted = apply(TEXT, format_range(TEXT, start, end))
    assert formatted.split("\n")[3] == "        print(r)"
    assert formatted.split("\n")[4] == "}"  # the next line was not in the range


def test_a_range_in_a_formatted_file_gives_no_edit() -> None:
    formatted = format_source(TEXT)
    assert format_range(formatted, 0, len(formatted)) is None
    assert format_range(formatted, 5, 40) is None


def test_blank_lines_count_the_run_before_the_range() -> None:
    text = 'agent A {\n    prompt: "p"\n}\n\n\n\n\nflow f {\n}\n'
    start, end = line_range(text, 5, 6)  # the 3rd and 4th blank lines of a run of four
    formatted = apply(text, format_range(text, start, end))
    assert formatted == 'agent A {\n    prompt: "p"\n}\n\n\nflow f {\n}\n'


def test_crlf_files_keep_their_line_breaks_and_tabs_follow_the_options() -> None:
    text = TEXT.replace("\n", "\r\n")
    start, end = line_range(text, 1, 3)
    formatted = apply(text, format_range(text, start, end, FormatOptions(indent="\t")))
    assert "\r\n" in formatted and "\n" not in formatted.replace("\r\n", "")
    assert formatted.split("\r\n")[3] == "\t\tprint(r)"


@pytest.mark.parametrize("path", CORPUS_FILES, ids=lambda p: p.name)
def test_corpus_ranges_keep_meaning_are_idempotent_and_agree_with_the_whole_file(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    line_count = text.count("\n") + 1
    pieces = [(0, line_count // 3), (line_count // 3 + 1, 2 * line_count // 3), (2 * line_count // 3 + 1, line_count)]
    result = text
    for first, last in pieces:
        if first >= result.count("\n") + 1:
            continue
        start, end = line_range(result, first, min(last, result.count("\n")))
        edit = format_range(result, start, end)
        changed = apply(result, edit)
        if edit is not None:
            assert changed[: edit.start] == result[: edit.start]  # nothing before the range changes
            assert changed[edit.start + len(edit.new_text) :] == result[edit.end :]  # nor after it
            assert format_range(changed, edit.start, edit.start + len(edit.new_text)) is None  # idempotent
        result = changed
    assert shape(parse_source(result).items) == shape(parse_source(text).items)
    assert format_source(result) == format_source(text)
    whole = apply(text, format_range(text, 0, len(text)))
    assert whole.strip("\n") == format_source(text).strip("\n")
