"""Parsing one chunk with Lark's interactive LALR parser and error recovery.

The driver feeds tokens itself so that, at each syntax error, it can:

1. report it once, in words (`unexpected "=>": expected one of ...`);
2. try to repair it by inserting one token (a missing `}`, `)`, `;`, `,`, `:`,
   or a placeholder name/string) when that lets the offending token through;
3. otherwise drop the offending token and go on (panic mode), without
   reporting the tokens dropped right after it.

At the end of the chunk, unclosed brackets are closed by inserting their
closers, with a message naming what was left open and where
(`expected "}" to close agent Writer opened at 12:5`). Where it opened is a
related location; the message holds the marker :data:`WHERE`, which
:mod:`nexa_lsp.syntax.source` replaces by that location's current `line:column`
each time the document is parsed, so a chunk reused after an edit above it
never shows a stale position.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from lark import Token, Tree
from lark.exceptions import UnexpectedCharacters, UnexpectedInput, UnexpectedToken
from lark.parsers.lalr_analysis import Shift

from nexa_lsp.syntax.grammar import PathParser, base_terminal_name

MAX_ERRORS_PER_CHUNK = 101
#: Stands in a problem's message for the `line:column` of its ``where`` offset.
WHERE = "{where}"


_OPENERS = {"LBRACE": "RBRACE", "LPAR": "RPAR", "LSQB": "RSQB"}
_CLOSER_TEXT = {"RBRACE": "}", "RPAR": ")", "RSQB": "]"}
_OPENER_TEXT = {"LBRACE": "{", "LPAR": "(", "LSQB": "["}
# Tokens worth inserting to repair an error, in order of preference.
_INSERTABLE = ("SEMI", "RPAR", "RSQB", "RBRACE", "COMMA", "COLON", "IDENT", "STRING", "EQUAL", "LPAR")
_PLACEHOLDER_TEXT = {
    "IDENT": "",
    "STRING": '""',
    "SEMI": "",
    "COMMA": "",
    "COLON": "",
    "EQUAL": "",
    "LPAR": "",
}
_OWNER_WORDS = frozenset(
    {
        "agent",
        "tool",
        "flow",
        "protocol",
        "struct",
        "enum",
        "trait",
        "impl",
        "job",
        "server",
        "group",
        "if",
        "else",
        "for",
        "while",
        "loop",
        "try",
        "catch",
        "match",
        "autoloop",
        "with_context",
        "context_policy",
        "try_agent",
        "catch_correction",
        "unharnessed",
        "before_step",
        "after_step",
        "on_error",
        "before_tool",
        "after_tool",
        "perform",
        "on_failure",
        "context",
        "semantic_if",
        "test",
        "fn",
    }
)
_NAMED_OWNERS = frozenset({"agent", "tool", "flow", "protocol", "struct", "enum", "trait", "impl", "job", "fn", "test"})


@dataclass(slots=True)
class SyntaxProblem:
    """A syntax error inside a chunk (offsets relative to the chunk).

    When ``where`` is set, ``message`` contains :data:`WHERE`, to be replaced by
    the document position of chunk offset ``where``.
    """

    code: str
    message: str
    start: int
    end: int
    related: list[tuple[int, int, str]] = field(default_factory=list)
    where: int | None = None


@dataclass(slots=True)
class _Open:
    kind: str  # LBRACE / LPAR / LSQB
    start: int
    owner: str
    inserted: bool = False


@dataclass(slots=True)
class ChunkParse:
    tree: Tree[Token] | None
    problems: list[SyntaxProblem]
    total_errors: int = 0


class _Driver:
    def __init__(self, parser: PathParser, text: str) -> None:
        self.parser = parser
        self.text = text
        self.total_errors = 0
        self.repair_budget = 400  # repair searches per chunk
        self.problems: list[SyntaxProblem] = []
        self.open_stack: list[_Open] = []
        self.recent: list[Token] = []
        self.fed_since_error = 1
        self.last_token: Token | None = None
        self.term = parser.terminal_names

    # -- helpers -------------------------------------------------------------------

    def _t(self, base: str) -> str:
        return self.term.get(base, base)

    def _readable(self, names: set[str] | frozenset[str]) -> str:
        words = sorted({self.parser.readable.get(n, base_terminal_name(n)) for n in names})
        if len(words) > 8:
            words = [*words[:8], "..."]
        return ", ".join(words)

    def _report(self, problem: SyntaxProblem) -> None:
        if self.fed_since_error == 0:
            return  # still inside the same broken stretch
        self.fed_since_error = 0
        self.total_errors += 1
        if len(self.problems) < MAX_ERRORS_PER_CHUNK:
            self.problems.append(problem)

    def _owner_of_brace(self) -> str:
        """Describe what a `{` being opened belongs to, from the tokens before it."""
        words: list[str] = []
        for tok in reversed(self.recent[-12:]):
            base = base_terminal_name(tok.type)
            if base in ("LBRACE", "RBRACE", "SEMI"):
                break
            words.append(str(tok))
        words.reverse()
        for i, word in enumerate(words):
            if word in _NAMED_OWNERS and i + 1 < len(words):
                return f"{word} {words[i + 1]}"
        for word in reversed(words):
            if word in _OWNER_WORDS:
                return f"{word} block"
        return "block"

    def _track(self, tok: Token) -> None:
        base = base_terminal_name(tok.type)
        if base in _OPENERS:
            owner = self._owner_of_brace() if base == "LBRACE" else ""
            self.open_stack.append(_Open(base, tok.start_pos or 0, owner, tok.end_pos == tok.start_pos))
        elif base in _CLOSER_TEXT:
            for i in range(len(self.open_stack) - 1, -1, -1):
                if _OPENERS[self.open_stack[i].kind] == base:
                    del self.open_stack[i:]
                    break
        self.recent.append(tok)
        if len(self.recent) > 64:
            del self.recent[:32]

    def _placeholder(self, base: str, at: Token | None) -> Token:
        name = self._t(base)
        value = _PLACEHOLDER_TEXT.get(base, _CLOSER_TEXT.get(base, ""))
        pos = (at.start_pos if at is not None else len(self.text)) or 0
        tok = Token(name, value, start_pos=pos, end_pos=pos, line=1, column=1, end_line=1, end_column=1)
        return tok

    # -- feeding -------------------------------------------------------------------

    def feed(self, ip: object, tok: Token) -> None:
        from lark.parsers.lalr_interactive_parser import InteractiveParser

        assert isinstance(ip, InteractiveParser)
        if tok.type in self.parser.keyword_types and not _accepts(ip.parser_state, tok.type):
            # LALR merges states, so the contextual lexer can offer a keyword (`type`)
            # where, in this context, only a name fits: read it as that name.
            ident = self._t("IDENT")
            if _accepts(ip.parser_state, ident):
                tok = Token.new_borrow_pos(ident, str(tok), tok)
        try:
            ip.feed_token(tok)
        except UnexpectedToken as err:
            self._recover(ip, tok, err)
            return
        self._track(tok)
        self.fed_since_error += 1
        self.last_token = tok

    def _recover(self, ip: object, tok: Token, err: UnexpectedToken) -> None:
        from lark.parsers.lalr_interactive_parser import InteractiveParser

        assert isinstance(ip, InteractiveParser)
        start = tok.start_pos or 0
        end = tok.end_pos if tok.end_pos is not None else start
        shown = self.parser.readable.get(tok.type, f'"{tok}"')
        if base_terminal_name(tok.type) not in ("IDENT", "STRING", "MSTRING", "INT", "FLOAT"):
            shown = f'"{tok}"'
        else:
            shown = f'{shown} "{_shorten(str(tok))}"'
        # 1. a short run of inserted tokens that lets `tok` through (searched only at the
        # start of a broken stretch, or at a closer, and a bounded number of times, so
        # garbage input stays linear)
        closer = base_terminal_name(tok.type) in ("RBRACE", "RPAR", "RSQB")
        inserted = None
        if (self.fed_since_error > 0 or closer or start == 0) and self.repair_budget > 0:
            self.repair_budget -= 1
            inserted = self._repair_sequence(ip, tok.type, 6 if closer else 3)
        closes_own_insertion = bool(
            inserted
            and inserted[0] in _CLOSER_TEXT
            and self.open_stack
            and self.open_stack[-1].inserted
            and _OPENERS[self.open_stack[-1].kind] == inserted[0]
        )
        if not closes_own_insertion and self.fed_since_error > 0:
            self._report(
                SyntaxProblem(
                    "NX001",
                    f"unexpected {shown}: expected {self._readable(set(err.expected or ip.choices()))}",
                    start,
                    max(end, start + 1),
                )
            )
        if inserted is not None:
            for base in inserted:
                placeholder = self._placeholder(base, tok)
                ip.feed_token(placeholder)
                self._track(placeholder)
            ip.feed_token(tok)
            self._track(tok)
            self.fed_since_error += 1
            self.last_token = tok
            return
        # 2. panic mode: drop the token
        return

    def _repair_sequence(self, ip: object, target: str, depth: int) -> list[str] | None:
        """Shortest list of insertable tokens after which ``target`` is accepted."""
        from lark.parsers.lalr_interactive_parser import InteractiveParser

        assert isinstance(ip, InteractiveParser)
        states = ip.parser_state.parse_conf.states
        insertable = [(base, self._t(base)) for base in _INSERTABLE]
        frontier: list[tuple[list[int], list[str]]] = [(list(ip.parser_state.state_stack), [])]
        for _ in range(depth):
            next_frontier: list[tuple[list[int], list[str]]] = []
            for stack, path in frontier:
                for base, name in insertable:
                    if name not in states[stack[-1]] and not _accepts_stack(states, stack, name):
                        continue
                    moved = _shift(states, stack, name)
                    if moved is None:
                        continue
                    new_path = [*path, base]
                    if _accepts_stack(states, moved, target):
                        return new_path
                    next_frontier.append((moved, new_path))
            frontier = next_frontier[:64]
            if not frontier:
                break
        return None

    def finish(self, ip: object) -> Tree[Token] | None:
        from lark.parsers.lalr_interactive_parser import InteractiveParser

        assert isinstance(ip, InteractiveParser)
        end_pos = len(self.text.rstrip())
        last = self.last_token
        for _ in range(200):
            trial = ip.copy(deepcopy_values=False)
            try:
                result = trial.feed_eof(last)
                return result if isinstance(result, Tree) else None
            except UnexpectedInput:
                pass
            choices = set(ip.choices())
            inserted = None
            if self.open_stack:
                closer = _OPENERS[self.open_stack[-1].kind]
                if self._t(closer) in choices:
                    opened = self.open_stack[-1]
                    what = opened.owner if opened.kind == "LBRACE" else ""
                    text = _CLOSER_TEXT[closer]
                    message = (
                        f'expected "{text}" to close {what} opened at {WHERE}'
                        if what
                        else f'expected "{text}" to close "{_OPENER_TEXT[opened.kind]}" opened at {WHERE}'
                    )
                    anchor = last.start_pos if last is not None and last.start_pos is not None else end_pos
                    anchor_end = last.end_pos if last is not None and last.end_pos is not None else end_pos
                    if not opened.inserted:
                        self.fed_since_error = max(self.fed_since_error, 1)
                    self._report(
                        SyntaxProblem(
                            "NX003",
                            message,
                            anchor,
                            max(anchor_end, anchor + 1),
                            [(opened.start, opened.start + 1, f'"{_OPENER_TEXT[opened.kind]}" opened here')],
                            opened.start,
                        )
                    )
                    inserted = closer
            if inserted is None:
                for base in _INSERTABLE:
                    if self._t(base) in choices:
                        inserted = base
                        break
            if inserted is None:
                if self.fed_since_error:
                    self._report(
                        SyntaxProblem(
                            "NX001",
                            f"unexpected end of input: expected {self._readable(choices)}",
                            end_pos,
                            end_pos,
                        )
                    )
                return None
            if inserted not in _CLOSER_TEXT and self.fed_since_error:
                self._report(
                    SyntaxProblem(
                        "NX001",
                        f"unexpected end of input: expected {self._readable(choices)}",
                        max(0, end_pos - 1),
                        end_pos,
                    )
                )
            placeholder = self._placeholder(inserted, None)
            try:
                ip.feed_token(placeholder)
            except UnexpectedInput:
                return None
            self._track(placeholder)
        return None


def _accepts(state: object, token_type: str) -> bool:
    """Would the LALR state accept ``token_type`` next (after any reductions)?"""
    from lark.parsers.lalr_parser_state import ParserState

    assert isinstance(state, ParserState)
    return _accepts_stack(state.parse_conf.states, state.state_stack, token_type)


def _accepts_stack(states: Any, state_stack: list[int], token_type: str) -> bool:
    return _shift(states, state_stack, token_type) is not None


def _shift(states: Any, state_stack: list[int], token_type: str) -> list[int] | None:
    """The state stack after reading ``token_type``, or None when it is a syntax error."""
    stack = list(state_stack)
    for _ in range(10_000):
        action = states[stack[-1]].get(token_type)
        if action is None:
            return None
        kind, arg = action
        if kind is Shift:
            stack.append(arg)
            return stack
        size = len(arg.expansion)
        if size:
            del stack[-size:]
        stack.append(states[stack[-1]][arg.origin.name][1])
    return None


def _shorten(text: str, limit: int = 24) -> str:
    text = text.replace("\n", "\\n")
    return text if len(text) <= limit else text[: limit - 1] + "…"


def parse_chunk(parser: PathParser, text: str) -> ChunkParse:
    """Parse one chunk's text, recovering from errors; offsets are chunk-relative."""
    try:  # fast path: most chunks are valid, and Lark's own loop is quickest
        return ChunkParse(parser.lark.parse(text), [], 0)
    except UnexpectedInput:
        pass
    driver = _Driver(parser, text)
    ip = parser.lark.parse_interactive(text, start="start")
    lexer_thread = ip.lexer_thread
    state = ip.parser_state
    guard = 0
    while True:
        guard += 1
        if guard > len(text) + 10:
            break
        try:
            for tok in lexer_thread.lex(state):
                driver.feed(ip, tok)
            break
        except UnexpectedCharacters as err:
            pos = err.pos_in_stream or 0
            char = text[pos : pos + 1]
            driver._report(SyntaxProblem("NX002", _unexpected_character_message(text, pos), pos, pos + 1))
            skip = _skip_length(text, pos)
            assert lexer_thread.state is not None
            lexer_thread.state.line_ctr.feed(text[pos : pos + skip])
            if not char:
                break
        except UnexpectedToken as err:
            # The contextual lexer found a token that no state of this position accepts.
            tok = err.token
            driver._recover(ip, tok, err)
    tree = driver.finish(ip)
    return ChunkParse(tree, driver.problems, driver.total_errors)


def _skip_length(text: str, pos: int) -> int:
    """How much to skip after an unexpected character: a whole bad string or comment."""
    char = text[pos : pos + 1]
    if char == "'":
        end = text.find("'", pos + 1)
        newline = _line_end(text, pos + 1)
        if end != -1 and end < newline:
            return end - pos + 1
    if char == "#":
        return _line_end(text, pos) - pos
    return 1


def _line_end(text: str, pos: int) -> int:
    """Offset of the first line break (``\n`` or ``\r``) at or after ``pos``, or the text's end."""
    ends = [i for i in (text.find("\n", pos), text.find("\r", pos)) if i != -1]
    return min(ends) if ends else len(text)


def _unexpected_character_message(text: str, pos: int) -> str:
    char = text[pos : pos + 1]
    if char == "'":
        return 'single-quoted strings are not Nexa: use double quotes "..."'
    if char == "#":
        return "'#' does not start a comment in Nexa: use // or /* */"
    if char and not char.isascii():
        return f"unexpected character {char!r}: names must be ASCII; non-ASCII text belongs in strings or comments"
    if char == '"':
        return 'unterminated string: add the closing "'
    return f"unexpected character {char!r}"
