"""The Markdown -> plain text renderer for plaintext-only clients."""

from __future__ import annotations

import pytest

from nexa_lsp.server.plain_text import markdown_to_plain


def test_a_declaration_hover_reads_as_plain_text() -> None:
    markdown = (
        "```nexa\nagent Analyst uses Lookup, Formatter implements Report\n```\n\n"
        "**model** `scripted/demo`  \n**role** Careful analyst  \n"
        "**tools** `Lookup`, `Formatter`\n\n> Look the record up. 请用中文回答。"
    )
    assert markdown_to_plain(markdown) == (
        "agent Analyst uses Lookup, Formatter implements Report\n\n"
        "model scripted/demo\nrole Careful analyst\ntools Lookup, Formatter\n\n"
        "Look the record up. 请用中文回答。"
    )


def test_code_is_kept_exactly_inside_fences_and_spans() -> None:
    markdown = "```nexa\nx = **a** * `b` > c\n    > d\n```\nuse `**not bold**` and `` a`b ``"
    assert markdown_to_plain(markdown) == "x = **a** * `b` > c\n    > d\nuse **not bold** and a`b"


@pytest.mark.parametrize(
    ("markdown", "plain"),
    [
        ("*declared in* `lib.nxlib`", "declared in lib.nxlib"),
        ("**parameters**\n* `id`: string\n* `limit`: int", "parameters\n- id: string\n- limit: int"),
        ("2 * 3 * 4 and a*b", "2 * 3 * 4 and a*b"),
        ("see [the spec](https://example.org/spec) 🙂", "see the spec (https://example.org/spec) 🙂"),
        ("## Heading\ntext\\*with\\_escapes", "Heading\ntext*with_escapes"),
        (">\n> 引用\n>> nested", "\n引用\nnested"),
        ("snake_case_name stays", "snake_case_name stays"),
        ("~~~\n**raw**\n~~~\n**bold**", "**raw**\nbold"),
    ],
)
def test_inline_and_block_markup(markdown: str, plain: str) -> None:
    assert markdown_to_plain(markdown) == plain


def test_an_unclosed_fence_keeps_the_rest_as_code() -> None:
    assert markdown_to_plain("```\n**x**") == "**x**"
