"""Symbols, references and name resolution across a file and its includes.

What a name means is decided in two steps:

* per chunk (see :mod:`nexa_lsp.syntax.chunks`): every name a top-level item
  mentions, with the *role* its position gives it (the receiver of ``A.run`` must
  be an agent, a ``uses`` entry a tool or agent, ``implements P`` a protocol ...),
  and the local variables of flows. This depends only on the chunk's text, so it
  is cached per parsed chunk and reused while an edit leaves the chunk alone;
* per file: the chunk facts are put together and resolved against the file's
  own declarations and those of the files it includes (one level, as in 2.x).

Spans stay anchored to their chunk, so cached facts remain correct when an edit
earlier in the document moves the chunk.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from itertools import takewhile
from operator import is_
from pathlib import Path

from nexa_lsp.analysis.name_collector import NameCollector
from nexa_lsp.analysis.names import (
    BUILTIN_NAMES,
    BUILTIN_TYPES,
    RUN_MEMBERS,
    ChunkCache,
    DeclKind,
    LocalVar,
    NameRef,
    RefRole,
    declared_kind,
)
from nexa_lsp.analysis.workspace import IncludeResolver
from nexa_lsp.syntax import tree as t
from nexa_lsp.syntax.source import ParsedChunk, SourceFile
from nexa_lsp.syntax.tree import Span

__all__ = [
    "BUILTIN_NAMES",
    "BUILTIN_TYPES",
    "RUN_MEMBERS",
    "Analysis",
    "ChunkCache",
    "ChunkFacts",
    "DeclKind",
    "FileSymbols",
    "IncludeLocator",
    "IncludedFile",
    "LocalVar",
    "NameRef",
    "Occurrence",
    "RefRole",
    "Symbol",
    "analyze",
    "chunk_facts",
    "declared_kind",
    "file_symbols",
    "is_identifier",
    "locator_from_resolver",
]


@dataclass(slots=True)
class ChunkFacts:
    """What one chunk declares and mentions (depends on the chunk's text only)."""

    refs: list[NameRef]
    locals: list[LocalVar]
    symbols: list[Symbol]  # the chunk's named declarations
    decl_hash: int  # summarises (name, kind) of the declarations


def _collect_chunk(chunk: ParsedChunk) -> ChunkFacts:
    collector = NameCollector()
    symbols: list[Symbol] = []
    for item in chunk.items:
        collector.item(item)
        kind = declared_kind(item)
        if kind is not None and item.name:
            symbols.append(Symbol(item, kind, None))
    decl_hash = hash(tuple((sym.name, sym.kind.value) for sym in symbols)) if symbols else 0
    return ChunkFacts(collector.refs, collector.locals, symbols, decl_hash)


_FACTS: ChunkCache[ChunkFacts] = ChunkCache(_collect_chunk)


def chunk_facts(chunk: ParsedChunk) -> ChunkFacts:
    """Names mentioned by one chunk (cached while the chunk is reused)."""
    return _FACTS.get(chunk)


# ---------------------------------------------------------------------- one file


@dataclass(slots=True, eq=False)
class FileSymbols:
    """The declarations and name uses of one parsed file."""

    source: SourceFile
    declarations: dict[str, list[t.Decl]]
    refs: list[NameRef]
    locals: list[LocalVar]
    symbols: dict[str, list[Symbol]]  # the same declarations as symbols of this file
    signature: int  # changes when a declared name or kind changes (not when a body does)


@dataclass(slots=True, eq=False)
class _Join:
    """A file's symbols with how many refs and locals each chunk gave, to join the next
    version from (see :func:`_join_edit`)."""

    source: SourceFile
    result: FileSymbols
    ref_counts: list[int]
    local_counts: list[int]


_FILE_MEMO: OrderedDict[int, _Join] = OrderedDict()
_MEMO_SIZE = 64
_HASH_MASK = (1 << 64) - 1
#: At most this many changed chunks (old and new together) are joined into the previous result.
_JOIN_WINDOW = 32


def file_symbols(source: SourceFile, incremental: bool = True) -> FileSymbols:
    """Declarations and references of ``source`` (memoised per parsed version).

    When the last file joined shares all but a few chunks with ``source`` and the changed
    chunks declare the same names in the same order (an edit inside bodies), the result
    is that file's with the changed chunks' parts swapped; else every chunk is joined.
    Both give the same result (``tests/analysis/test_symbol_join.py``).
    """
    entry = _FILE_MEMO.get(id(source))
    if entry is not None and entry.source is source:
        _FILE_MEMO.move_to_end(id(source))
        return entry.result
    join = None
    if incremental and _FILE_MEMO:
        join = _join_edit(next(reversed(_FILE_MEMO.values())), source)
    if join is None:
        join = _join_all(source)
    _FILE_MEMO[id(source)] = join
    while len(_FILE_MEMO) > _MEMO_SIZE:
        _FILE_MEMO.popitem(last=False)
    return join.result


def fresh_file_symbols(source: SourceFile) -> FileSymbols:
    """The symbols of ``source`` joined from every chunk, nothing kept (for tests)."""
    return _join_all(source).result


def _join_all(source: SourceFile) -> _Join:
    declarations: dict[str, list[t.Decl]] = {}
    symbols: dict[str, list[Symbol]] = {}
    refs: list[NameRef] = []
    local_vars: list[LocalVar] = []
    ref_counts: list[int] = []
    local_counts: list[int] = []
    signature = 0
    for chunk in source.chunks:
        facts = chunk_facts(chunk)
        for symbol in facts.symbols:
            declarations.setdefault(symbol.name, []).append(symbol.decl)
            symbols.setdefault(symbol.name, []).append(symbol)
        signature = (signature + facts.decl_hash) & _HASH_MASK
        refs.extend(facts.refs)
        local_vars.extend(facts.locals)
        ref_counts.append(len(facts.refs))
        local_counts.append(len(facts.locals))
    result = FileSymbols(source, declarations, refs, local_vars, symbols, signature)
    return _Join(source, result, ref_counts, local_counts)


_WINDOW_MEMO: list[tuple[SourceFile, SourceFile, tuple[int, int]]] = []


def chunk_window(old: SourceFile, new: SourceFile) -> tuple[int, int]:
    """How many chunks ``old`` and ``new`` share (the same objects) at the start and at the
    end; the chunks between are the ones an edit changed. The last answer is kept."""
    if _WINDOW_MEMO and _WINDOW_MEMO[0][0] is old and _WINDOW_MEMO[0][1] is new:
        return _WINDOW_MEMO[0][2]
    before, after = old.chunks, new.chunks
    head = len(list(takewhile(bool, map(is_, before, after))))  # in C: this runs on every edit
    tail = len(list(takewhile(bool, map(is_, reversed(before), reversed(after)))))
    window = head, min(tail, min(len(before), len(after)) - head)
    _WINDOW_MEMO[:] = [(old, new, window)]
    return window


def _join_edit(previous: _Join, source: SourceFile) -> _Join | None:
    """``source``'s symbols from ``previous`` when only a few chunks changed and those
    declare the same names in the same order; None otherwise."""
    old, new = previous.source.chunks, source.chunks
    head, tail = chunk_window(previous.source, source)
    if len(old) + len(new) - 2 * (head + tail) > _JOIN_WINDOW:
        return None
    gone = [chunk_facts(c) for c in old[head : len(old) - tail]]
    came = [chunk_facts(c) for c in new[head : len(new) - tail]]
    gone_symbols = [sym for facts in gone for sym in facts.symbols]
    came_symbols = [sym for facts in came for sym in facts.symbols]
    if [sym.name for sym in gone_symbols] != [sym.name for sym in came_symbols]:
        return None
    before = previous.result
    declarations = dict(before.declarations)
    symbols = dict(before.symbols)
    swap = {id(old_sym.decl): new_sym for old_sym, new_sym in zip(gone_symbols, came_symbols, strict=True)}
    for name in {sym.name for sym in came_symbols}:
        listed = [swap.get(id(sym.decl), sym) for sym in before.symbols[name]]
        symbols[name] = listed
        declarations[name] = [sym.decl for sym in listed]
    signature = before.signature
    for facts in gone:
        signature -= facts.decl_hash
    for facts in came:
        signature += facts.decl_hash
    ref_end = len(previous.ref_counts) - tail
    refs_head, refs_tail = sum(previous.ref_counts[:head]), sum(previous.ref_counts[ref_end:])
    locals_head, locals_tail = sum(previous.local_counts[:head]), sum(previous.local_counts[ref_end:])
    refs = before.refs[:refs_head] + [ref for facts in came for ref in facts.refs]
    refs += before.refs[len(before.refs) - refs_tail :]
    local_vars = before.locals[:locals_head] + [var for facts in came for var in facts.locals]
    local_vars += before.locals[len(before.locals) - locals_tail :]
    ref_counts = previous.ref_counts[:head] + [len(f.refs) for f in came] + previous.ref_counts[ref_end:]
    local_counts = previous.local_counts[:head] + [len(f.locals) for f in came] + previous.local_counts[ref_end:]
    result = FileSymbols(source, declarations, refs, local_vars, symbols, signature & _HASH_MASK)
    return _Join(source, result, ref_counts, local_counts)


# ---------------------------------------------------------------------- a file with its includes

#: ``(include path as written, path of the including file) -> (resolved path, parsed file)``;
#: the parsed file is None when the include cannot be found or read.
IncludeLocator = Callable[[str, Path | None], tuple[Path | None, SourceFile | None]]

SECRETS_SUFFIX = ".nxs"


def locator_from_resolver(resolver: IncludeResolver) -> IncludeLocator:
    """Adapt a plain :data:`IncludeResolver` (no paths known)."""

    def locate(include: str, including: Path | None) -> tuple[Path | None, SourceFile | None]:
        return None, resolver(include, including)

    return locate


@dataclass(slots=True, eq=False)
class IncludedFile:
    """One ``include`` of the analysed file and what it resolved to."""

    include: t.Include
    path: Path | None
    symbols: FileSymbols | None
    secrets: bool = False  # `.nxs` files are read by the runtime, never parsed

    @property
    def missing(self) -> bool:
        return self.symbols is None and not self.secrets


class Symbol:
    """A named declaration, in the analysed file (``include`` None) or an included one."""

    __slots__ = ("decl", "include", "kind", "name")

    def __init__(self, decl: t.Decl, kind: DeclKind, include: IncludedFile | None) -> None:
        self.name = decl.name
        self.decl = decl
        self.kind = kind
        self.include = include

    @property
    def name_span(self) -> Span:
        return self.decl.name_span

    @property
    def source(self) -> SourceFile | None:
        return self.include.symbols.source if self.include and self.include.symbols else None

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Symbol) and other.decl is self.decl

    def __hash__(self) -> int:
        return id(self.decl)

    def __repr__(self) -> str:
        where = f" in {self.include.include.name}" if self.include else ""
        return f"Symbol({self.kind.value} {self.name}{where})"


@dataclass(slots=True, eq=False)
class Occurrence:
    """A name in the analysed file and what it stands for."""

    span: Span
    symbol: Symbol | None = None
    local: LocalVar | None = None
    role: RefRole | None = None
    is_declaration: bool = False


@dataclass(slots=True, eq=False)
class Analysis:
    """The analysed file, its includes, and every name visible in it."""

    file: FileSymbols
    includes: list[IncludedFile]
    scope: dict[str, list[Symbol]]
    signature: int  # changes when any visible declaration's name or kind changes
    _index: list[tuple[int, int, Occurrence]] | None = None
    _starts: list[int] | None = None

    @property
    def source(self) -> SourceFile:
        return self.file.source

    def lookup(self, name: str) -> Symbol | None:
        """The declaration ``name`` refers to (the file's own first, then the includes')."""
        found = self.scope.get(name)
        return found[0] if found else None

    def local_named(self, name: str, offset: int) -> LocalVar | None:
        """The variable or parameter ``name`` of the flow (tool function ...) holding ``offset``."""
        for var in self.file.locals:
            if var.name == name and var.owner.span.start <= offset <= var.owner.span.end:
                return var
        return None

    def symbols(self, kinds: Iterable[DeclKind] | None = None) -> Iterator[Symbol]:
        """Every visible declaration (first of each name), optionally of some kinds."""
        wanted = set(kinds) if kinds is not None else None
        for symbols in self.scope.values():
            symbol = symbols[0]
            if wanted is None or symbol.kind in wanted:
                yield symbol

    # -- positions

    def _build_index(self) -> list[tuple[int, int, Occurrence]]:
        entries: list[tuple[int, int, Occurrence]] = []
        for ref in self.file.refs:
            symbol = self.lookup(ref.name)
            entries.append((ref.span.start, ref.span.end, Occurrence(ref.span, symbol, role=ref.role)))
        for var in self.file.locals:
            for span, binds in var.occurrences():
                entries.append((span.start, span.end, Occurrence(span, local=var, is_declaration=binds)))
        for item in self.source.items:
            kind = declared_kind(item)
            if kind is not None and item.name:
                symbol = Symbol(item, kind, None)
                span = item.name_span
                entries.append((span.start, span.end, Occurrence(span, symbol, is_declaration=True)))
        entries.sort(key=lambda entry: (entry[0], entry[1]))
        return entries

    def occurrences(self) -> list[tuple[int, int, Occurrence]]:
        if self._index is None:
            self._index = self._build_index()
            self._starts = [entry[0] for entry in self._index]
        return self._index

    def occurrence_at(self, offset: int) -> Occurrence | None:
        """The name at ``offset`` (a cursor right after a name still counts)."""
        import bisect

        index = self.occurrences()
        assert self._starts is not None
        pos = bisect.bisect_right(self._starts, offset)
        best: Occurrence | None = None
        for i in range(max(0, pos - 3), min(len(index), pos + 1)):
            start, end, occ = index[i]
            if start <= offset <= end and (best is None or start >= best.span.start):
                best = occ
        return best

    def references_to(self, symbol: Symbol) -> list[Span]:
        """Spans in the analysed file that name ``symbol`` (declaration excluded)."""
        return [ref.span for ref in self.file.refs if ref.name == symbol.name and self.lookup(ref.name) == symbol]


_ANALYSIS_MEMO: OrderedDict[tuple[int, ...], tuple[SourceFile, list[SourceFile | None], Analysis]] = OrderedDict()


def analyze(source: SourceFile, path: Path | None = None, locate: IncludeLocator | None = None) -> Analysis:
    """Resolve the names of ``source`` against its declarations and its includes.

    ``locate`` finds included files; without it, includes are not followed (and
    not reported missing).
    """
    own = file_symbols(source)
    includes: list[IncludedFile] = []
    for item in _header_items(source):
        if not isinstance(item, t.Include) or not item.name:
            continue
        if item.name.endswith(SECRETS_SUFFIX):
            includes.append(IncludedFile(item, None, None, secrets=True))
            continue
        if locate is None:
            continue
        inc_path, inc_source = locate(item.name, path)
        if inc_source is source:
            inc_source = None  # a file including itself adds nothing
        includes.append(IncludedFile(item, inc_path, file_symbols(inc_source) if inc_source else None))
    key = (id(source), *(id(i.symbols.source) if i.symbols else 0 for i in includes))
    memo = _ANALYSIS_MEMO.get(key)
    if memo is not None and memo[0] is source:
        previous = memo[2]
        if [i.path for i in previous.includes] == [i.path for i in includes]:
            _ANALYSIS_MEMO.move_to_end(key)
            return previous
    # the file's own dict and lists are shared, never changed (a copy only when includes add names)
    scope: dict[str, list[Symbol]] = own.symbols
    if any(inc.symbols is not None for inc in includes):
        scope = dict(own.symbols)
    include_facts: list[tuple[str, str, int | None, bool]] = []
    for inc in includes:
        include_facts.append(
            (inc.include.name, str(inc.path), inc.symbols.signature if inc.symbols else None, inc.secrets)
        )
        if inc.symbols is None:
            continue
        for name, decls in inc.symbols.declarations.items():
            added = [Symbol(d, kind, inc) for d in decls if (kind := declared_kind(d)) is not None]
            scope[name] = [*scope.get(name, ()), *added]
    signature = hash((own.signature, tuple(include_facts)))
    analysis = Analysis(own, includes, scope, signature)
    _ANALYSIS_MEMO[key] = (source, [i.symbols.source if i.symbols else None for i in includes], analysis)
    while len(_ANALYSIS_MEMO) > _MEMO_SIZE:
        _ANALYSIS_MEMO.popitem(last=False)
    return analysis


def _header_items(source: SourceFile) -> Iterator[t.TopItem]:
    """The items of the chunks that hold version / include / use items (every item when
    the parse did not list those chunks)."""
    headers = source._header_chunks
    if headers is None:
        yield from source.items
        return
    for chunk in headers:
        yield from chunk.items


def is_identifier(text: str) -> bool:
    """Whether a name the user types (e.g. for rename) is a Nexa name: ASCII letters, digits
    and ``_``, not starting with a digit (the grammar's IDENT token)."""
    return text.isascii() and text.isidentifier()
