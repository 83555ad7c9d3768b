"""The checked files as one program: which file an import names, and its parsed tree.

`check PATH…` analyses a file together with the checked files it imports, so that a helper
in `utils.py` that writes its argument is known where `train.py` calls it.  Python decides
what `import m` loads from `sys.path`; here the candidates are the roots a program run from
the project would have on it:

* the directory above the outermost regular package of each file (a directory holding
  `__init__.py`), so `from pkg.sub import f` names `pkg/sub.py`;
* the directory of each checked file, since `python train.py` puts it first on `sys.path`
  (a script beside `utils.py` imports `utils`); this also covers namespace packages below it;
* the configured source roots (the `src` setting, as ruff's), for `src/` layouts.

A name that two different files could be is ambiguous and resolves to nothing: an
import that might load either file says nothing certain about either.  Names under
`torch` and `numpy` never resolve into checked files: the engine's op tables, not the
library's source, say what those do.

A file outside the checked set stays unknown, and a single checked file has no program
around it: its imports stay unknown as before.
"""

from __future__ import annotations

import ast
import os
import sys
from collections import OrderedDict
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from aliaslint import stages
from aliaslint.cache import content_hash
from aliaslint.diagnostics import Diagnostic
from aliaslint.outline import Outline, outline
from aliaslint.screen import python_tree, screen

if TYPE_CHECKING:
    import libcst as cst

# Libraries whose behaviour comes from the generated tables, never from their source.
_MODELLED = frozenset({"torch", "numpy", "functorch"})
# Lines of parsed files one process keeps at most (about 1.2 kB of tree a line): a large
# program's trees stay bounded, the least recently used going first.
_KEEP_LINES = 100_000
# Lines of other files one analysis may load (see Link.allows).
LOADED_LINES = 6000


@dataclass(frozen=True)
class Program:
    """The module names of the checked files under each root; a value every job of a run
    shares."""

    roots: dict[str, dict[str, str]]  # root -> dotted module name -> path
    searched: dict[str, tuple[str, ...]]  # path -> the roots its imports search, in order
    packages: dict[str, str]  # path -> the dotted name of the package the file is in
    tops: dict[str, frozenset[str]]  # root -> the first parts of its module names
    shown: dict[str, str]  # path -> the name findings in it are reported under

    @cached_property
    def ordered(self) -> dict[str, list[str]]:
        """Each root's module names in sorted order: the names below a dotted prefix are
        one run of them (quiet.reached)."""
        return {root: sorted(names) for root, names in self.roots.items()}

    @staticmethod
    def of(paths: list[Path], source_roots: tuple[Path, ...] = (),
           shown: dict[str, str] | None = None) -> Program | None:
        """The program the checked ``paths`` make; None for fewer than two Python files.
        ``shown``: the name each file's findings are reported under (default its path)."""
        files = [p for p in paths if p.suffix == ".py"]
        if len(files) < 2:
            return None
        searched: dict[str, tuple[str, ...]] = {}
        packages: dict[str, str] = {}
        # Per directory, not per file: the files of one directory share all of this.
        directories: dict[Path, tuple[tuple[str, ...], str, tuple[str, ...]]] = {}
        package_roots: dict[Path, Path] = {}
        for path in files:
            known = directories.get(path.parent)
            if known is None:
                top = _package_root(path, package_roots)
                order: list[Path] = []
                if top == path.parent:
                    # Not in a package: run as a script, its directory comes first.
                    order.append(path.parent)
                order.append(top)
                order.extend(source_roots)
                known = directories[path.parent] = (
                    tuple(dict.fromkeys(map(str, order))), _dotted(path.parent, top) or "",
                    _compared(path.parent))
            searched[str(path)] = known[0]
            packages[str(path)] = known[1]
        in_directory: dict[Path, list[int]] = {}  # the files of each, by their order
        for index, path in enumerate(files):
            in_directory.setdefault(path.parent, []).append(index)
        roots: dict[str, dict[str, str]] = {}
        for root in dict.fromkeys(r for order in searched.values() for r in order):
            base = _compared(Path(root))
            # The package each directory under the root is (None: not one), as `_dotted`
            # says; its files are then named in their order.
            package: dict[Path, str | None] = {}
            under: list[int] = []
            for directory, (_, _, parts) in directories.items():
                if parts[:len(base)] == base:
                    inner = directory.parts[len(base):]
                    package[directory] = ".".join(inner) \
                        if all(part.isidentifier() for part in inner) else None
                    under += in_directory[directory]
            names: dict[str, str] = {}
            for index in sorted(under):
                path = files[index]
                name = _named(package[path.parent], path.stem)
                if name is not None and name.split(".")[0] not in _MODELLED:
                    names[name] = str(path)
            roots[root] = names
        tops = {root: frozenset(name.split(".")[0] for name in names)
                for root, names in roots.items()}
        return Program(roots, searched, packages, tops, shown or {})

    def module_of(self, qualname: str, importer: str) -> tuple[str, tuple[str, ...]] | None:
        """The checked file a dotted name imported by ``importer`` is in, and the attribute
        path inside it: ``pkg.utils.helper`` → (``pkg/utils.py``, ``("helper",)``).  The
        roots are searched in order, as `sys.path` is; in a root the longest module name
        that matches wins, as Python's import of a submodule does."""
        parts = qualname.split(".")
        for root in self.searched.get(importer, ()):
            if parts[0] not in self.tops[root]:
                continue
            names = self.roots[root]
            for cut in range(len(parts), 0, -1):
                path = names.get(".".join(parts[:cut]))
                if path is not None:
                    return path, tuple(parts[cut:])
            return None  # the package is here, the module is not a checked file
        return None

    def absolute(self, importer: str, level: int, module: str | None) -> str | None:
        """The absolute module name of ``from <level dots><module> import …`` in ``importer``."""
        package = self.packages.get(importer)
        if package is None:
            return None
        parts = package.split(".") if package else []
        if level > len(parts):
            return None  # beyond the top-level package: Python raises ImportError
        base = parts[:len(parts) - (level - 1)]
        return ".".join(base + ([module] if module else []))


def _package_root(path: Path, known: dict[Path, Path] | None = None) -> Path:
    """The directory above the outermost regular package holding ``path``; ``known``: the
    answers for directories already asked about (the files of a tree share parents)."""
    known = {} if known is None else known
    directory = path.parent
    below = []
    while directory not in known and (directory / "__init__.py").is_file() \
            and directory.parent != directory:
        below.append(directory)
        directory = directory.parent
    top = known.get(directory, directory)
    for folder in below:
        known[folder] = top
    known[directory] = top
    return top


def _dotted(directory: Path, root: Path) -> str | None:
    try:
        parts = directory.relative_to(root).parts
    except ValueError:
        return None
    if not all(part.isidentifier() for part in parts):
        return None
    return ".".join(parts)


def _named(package: str | None, stem: str) -> str | None:
    """The module name of the file ``stem``.py in ``package`` (None: not in one)."""
    if package is None or not stem.isidentifier():
        return None
    if stem == "__init__":
        return package or None
    return f"{package}.{stem}" if package else stem


def _compared(directory: Path) -> tuple[str, ...]:
    """The parts of a path as ``Path.relative_to`` compares them (case-folded on Windows)."""
    return tuple(map(os.path.normcase, directory.parts))


@dataclass
class Loader:
    """Parses the checked files other files import, once per process; what each analysis
    used is recorded so that its result can be cached against their contents."""

    program: Program
    parse_budget: int
    decode: Callable[[bytes], str | None]  # PEP 263 decoding; None where it fails
    _trees: KeptTrees = field(default_factory=lambda: KeptTrees(_KEEP_LINES))
    # path -> the text an editor holds for it, unsaved edits included: read instead of the
    # file, as the program the editor shows is made of its buffers.
    overlay: dict[str, str] = field(default_factory=dict)
    # path -> (content digest, what CPython's tree of it tells, its size and mtime when read)
    _outlines: dict[str, tuple[str, Outline | None, tuple[int, int] | None]] = \
        field(default_factory=dict)
    # path -> (content digest, CPython's tree) made for an outline, kept until the file's
    # screen takes it (a parse saved), no longer: trees kept for every file outlined would
    # take hundreds of megabytes.
    _unscreened: dict[str, tuple[str, ast.Module]] = field(default_factory=dict)
    # path -> (content digest, parse budget) of what this process screened of the file (its
    # own check, or a load for an importer): CPython compiles it, and its parse work is
    # within that budget.  Neither screens it again.
    _screened: dict[str, tuple[str, int]] = field(default_factory=dict)

    def read(self, path: str) -> bytes | None:
        """The bytes the program has at ``path`` (an open buffer's, as UTF-8); None where it
        cannot be read."""
        buffer = self.overlay.get(path)
        if buffer is not None:
            return buffer.encode("utf-8", "surrogatepass")
        try:
            return Path(path).read_bytes()
        except OSError:
            return None

    def tree(self, path: str, converted: bool = False) -> tuple[cst.Module | None, str, str]:
        """The parsed module (None for a file that cannot be read or parsed: it is checked,
        and reported, on its own), its text and its content digest ("" if unreadable).
        ``converted``: a tree made from CPython's (aliaslint/converted.py) will do."""
        kept = self._trees.get(path)
        # A converted tree kept will not do where libcst's own is wanted: that one is
        # parsed (for a file with findings, checked again) and not kept.
        keep = converted or kept is None or not _converted(kept[1])
        if not keep:
            kept = None
        signature = self._signature(path)
        if kept is not None and signature is not None and kept[3] == signature:
            # The file is as it was when read (the cache's rule: same size and mtime).
            self._trees.used_again(path)
            return kept[1], kept[2], kept[0]
        data = self.read(path)
        if data is None:
            return None, "", ""
        digest = content_hash(data)
        if kept is not None and kept[0] == digest:
            self._trees.used_again(path)
            return kept[1], kept[2], digest
        # A buffer is text already: its coding cookie says how the file is saved.
        buffer = self.overlay.get(path)
        decoded = buffer if buffer is not None else self.decode(data)
        text = decoded or ""
        module = None
        if decoded is not None:
            # One parse by CPython screens it, none where `outline` made its tree already,
            # or where the file's own check screened this content.  (Its tree is not kept:
            # CPython's trees of every file loaded would outweigh the parse they save.)
            syntax = self.take_syntax(path, digest)
            passed = self._passed(path, digest)
            if not passed:
                screened = screen(text, path, tree=syntax)
                passed = screened.error is None and \
                    screened.over_budget(text, path, self.parse_budget) is None
                if passed:
                    self.screened(path, digest, self.parse_budget)
                    syntax = screened.tree
                    if syntax is not None:
                        self.outlined(path, digest, syntax)
            if passed:
                module = _parsed(text, syntax, converted)
        if keep:
            self._keep(path, digest, module, text, signature)
        return module, text, digest

    def screened(self, path: str, digest: str, budget: int) -> None:
        """The content with ``digest`` was screened: it compiles, and its parse work is
        within ``budget``."""
        if len(self._screened) >= 4096:
            self._screened.clear()
        self._screened[path] = (digest, budget)

    def compiles(self, path: str, digest: str) -> bool:
        """Has this process screened the content with ``digest`` and found it compiles?"""
        kept = self._screened.get(path)
        return kept is not None and kept[0] == digest

    def _passed(self, path: str, digest: str) -> bool:
        """``compiles``, and within this loader's parse budget too."""
        return self.compiles(path, digest) and self._screened[path][1] <= self.parse_budget

    def _signature(self, path: str) -> tuple[int, int] | None:
        """The file's size and modification time (None for an open buffer, or a file that
        cannot be read); taken before it is read, so a change while reading shows."""
        if path in self.overlay:
            return None
        try:
            stat = os.stat(path)
        except OSError:
            return None
        return stat.st_size, stat.st_mtime_ns

    def outline(self, path: str) -> tuple[Outline | None, str]:
        """What CPython's tree of the file tells (a tenth of libcst's parse: enough to list
        what it binds and imports) and its content digest ("" if unreadable); None where it
        does not parse."""
        kept = self._outlines.get(path)
        signature = self._signature(path)
        if kept is not None and signature is not None and kept[2] == signature:
            return kept[1], kept[0]  # as it was when read (the cache's rule)
        data = self.read(path)
        if data is None:
            return None, ""
        digest = content_hash(data)
        if kept is not None and kept[0] == digest:
            return kept[1], digest
        buffer = self.overlay.get(path)
        text = buffer if buffer is not None else self.decode(data)
        tree = python_tree(text, path) if text is not None else None
        found = outline(tree) if tree is not None else None
        self._keep_outline(path, digest, found, signature)
        if tree is not None and not self.compiles(path, digest):
            if len(self._unscreened) >= 1024:
                self._unscreened.clear()
            self._unscreened[path] = (digest, tree)
        return found, digest

    def outlined(self, path: str, digest: str, tree: ast.Module) -> Outline:
        """The outline of the content with ``digest``, CPython's ``tree`` of which a screen
        just made: kept, so that neither an importer's outline nor the file's own check
        (aliaslint/engine.py) parses it again for it."""
        kept = self._outlines.get(path)
        if kept is not None and kept[0] == digest and kept[1] is not None:
            return kept[1]
        found = outline(tree)
        # (No size and mtime: the content was read elsewhere; a later ask reads it again.)
        self._keep_outline(path, digest, found, None)
        return found

    def _keep_outline(self, path: str, digest: str, found: Outline | None,
                      signature: tuple[int, int] | None) -> None:
        if len(self._outlines) >= 4096:
            self._outlines.clear()
        self._outlines[path] = (digest, found, signature)

    def known_outline(self, path: str, digest: str) -> Outline | None:
        """The outline kept of the content with ``digest``, where this process screened it
        and it passed within this loader's budget (it compiles, its parse work is within
        the budget): what a check of it needs of CPython's tree, without the tree."""
        kept = self._outlines.get(path)
        if kept is None or kept[0] != digest or not self._passed(path, digest):
            return None
        return kept[1]

    def take_syntax(self, path: str, digest: str) -> ast.Module | None:
        """CPython's tree of the file, where ``outline`` made one of the content with
        ``digest`` and no screen has taken it yet; it is no longer kept."""
        kept = self._unscreened.pop(path, None)
        return kept[1] if kept is not None and kept[0] == digest else None

    def share(self, path: str, text: str, converted: bool = False) -> cst.Module | None:
        """The tree this process parsed from exactly ``text`` for ``path``, as another file's
        import: the file's own check then does not parse it again.  ``converted``: as for
        ``tree``."""
        kept = self._trees.get(path)
        if kept is None or kept[2] != text or kept[1] is None or \
                not converted and _converted(kept[1]):
            return None
        self._trees.used(path)
        return kept[1]

    def remember(self, path: str, text: str, module: cst.Module) -> None:
        """Keep the tree a file's own check parsed from ``text``, for the files that import
        it; only while the file still holds that text (it is read again to key it)."""
        signature = self._signature(path)
        data = self.read(path)
        if data is None or path in self.overlay or self.decode(data) != text:
            return
        self._keep(path, content_hash(data), module, text, signature)

    def _keep(self, path: str, digest: str, module: cst.Module | None, text: str,
              signature: tuple[int, int] | None) -> None:
        self._trees.keep(path, (digest, module, text, signature), text.count("\n"))


class KeptTrees:
    """The parsed trees a process keeps, at most ``budget`` lines of them, as a segmented
    least-recently-used cache: a tree enters on probation and is proven when another file
    loads it again.  The trees of the files checked one after another (each kept in case a
    later file imports it, most never are) then push out each other, not the modules many
    files import (a package's layers, its utilities), which a plain LRU lost to them: on a
    program of 280,000 lines it parsed a fifth of its lines twice."""

    _PROVEN_SHARE = 0.8  # of the budget, at most, for proven trees

    def __init__(self, budget: int) -> None:
        self.budget = budget
        # path -> (entry, lines), oldest first.  (Ordered dicts: a plain dict's oldest key
        # is found past the slots of all those removed before it.)
        self._probation: OrderedDict[str, tuple[Any, int]] = OrderedDict()
        self._proven: OrderedDict[str, tuple[Any, int]] = OrderedDict()
        self._lines = [0, 0]  # lines on probation, proven

    def __len__(self) -> int:
        return len(self._probation) + len(self._proven)

    @property
    def lines(self) -> int:
        return sum(self._lines)

    def get(self, path: str) -> Any:
        kept = self._probation.get(path) or self._proven.get(path)
        return kept[0] if kept is not None else None

    def used(self, path: str) -> None:
        """``path``'s tree was used: it is now the most recent of its segment."""
        (self._proven if path in self._proven else self._probation).move_to_end(path)

    def used_again(self, path: str) -> None:
        """Another file loaded ``path``'s tree again: it is proven."""
        if path in self._probation:
            entry = self._probation.pop(path)
            self._lines[0] -= entry[1]
            self._proven[path] = entry
            self._lines[1] += entry[1]
            self._fit()
        else:
            self.used(path)

    def keep(self, path: str, entry: Any, lines: int) -> None:
        for index, segment in enumerate((self._probation, self._proven)):
            old = segment.pop(path, None)
            if old is not None:
                self._lines[index] -= old[1]
        self._probation[path] = (entry, lines)
        self._lines[0] += lines
        self._fit()

    def _fit(self) -> None:
        # Proven trees past their share go back on probation, as its most recent; the
        # oldest on probation go first (a proven one only when none is left).
        while self._lines[1] > self.budget * self._PROVEN_SHARE and len(self._proven) > 1:
            path, entry = self._proven.popitem(last=False)
            self._lines[1] -= entry[1]
            self._probation[path] = entry
            self._lines[0] += entry[1]
        while sum(self._lines) > self.budget and \
                len(self._probation) + len(self._proven) > 1:
            index, segment = (0, self._probation) if self._probation else (1, self._proven)
            self._lines[index] -= segment.popitem(last=False)[1][1]


@dataclass
class Link:
    """One file's view of its program: the analysis of ``path`` asks it for the other
    files, and it records each one read with its content digest (what the file's result
    depends on)."""

    program: Program
    loader: Loader
    path: str
    used: dict[str, str] = field(default_factory=dict)  # path -> content digest read
    lines: int = 0  # lines of the other files read so far
    # Where each file read goes, for locating findings made in it: its checking context
    # (by the name its findings are shown under) and its text.
    contexts: dict[str, Any] = field(default_factory=dict)
    texts: dict[str, str] = field(default_factory=dict)
    # Suppressions in those files that silenced findings made here, as the AL901 findings
    # their own checks report (``Result.used_elsewhere``).
    used_elsewhere: list[Diagnostic] = field(default_factory=list)
    # The other files' trees may be made from CPython's (aliaslint/converted.py): the
    # file's own tree is, until a check on it asks for a position or text.
    converted: bool = False
    # Their positions and text are read from libcst's parse of each file a check asks
    # them of (the check of a file whose own tree is libcst's: rule.Context).
    twinned: bool = False

    def restart(self, twinned: bool = False) -> None:
        """Forget what an analysis read: the file is analysed again on libcst's own tree,
        the other files on theirs too, or (``twinned``) still on converted trees, each
        parsed only where a finding points into it."""
        self.used, self.lines, self.contexts, self.texts = {}, 0, {}, {}
        self.used_elsewhere = []
        self.converted = self.twinned = twinned

    def allows(self, path: str) -> bool:
        """May the analysis load ``path`` too?  Each analysis reads at most ``LOADED_LINES``
        lines of other files: a file that imports a whole library (a package whose
        `__init__` star-imports every model) gets the part its calls reach first, and its
        time stays that of a few files."""
        if path in self.used:
            return True
        return self.lines < LOADED_LINES

    def tree(self, path: str) -> cst.Module | None:
        with stages.stage("summaries"):
            module, text, digest = self.loader.tree(path, self.converted)
        if path not in self.used:
            self.lines += text.count("\n")
        self.used[path] = digest
        if module is None:
            return None
        shown = self.program.shown.get(path, path)
        if shown not in self.contexts:
            from aliaslint.rule import Context  # the rules' view of a file; loaded with them

            self.contexts[shown] = Context(module, None, text, twinned=self.twinned)
            self.texts[shown] = text
        return module

    def outline(self, path: str) -> Outline | None:
        """What CPython's tree of another file tells: what it binds and imports, whether it
        spells a write (its code is not run)."""
        found, digest = self.loader.outline(path)
        self.used.setdefault(path, digest)
        return found

    def dependencies(self) -> dict[tuple[str, str], str]:
        """What this file's result was computed from in other files, as (kind, path) →
        digest: where the result holds no position in the file (no finding or message
        points into it), only its code matters ("code": a comment or blank line added
        there changes nothing here); else its exact content ("content")."""
        return {key: digest for key, (_, digest) in self.dependency_digests().items()}

    def dependency_digests(self) -> dict[tuple[str, str], tuple[str, str]]:
        """``dependencies``, each digest with the content hash of what it was made from
        (the cache's index trusts it for as long as that file's size and mtime hold)."""
        found: dict[tuple[str, str], tuple[str, str]] = {}
        for path, digest in self.used.items():
            context = self.contexts.get(self.program.shown.get(path, path))
            if context is not None and context.located:
                found[("content", path)] = (digest, digest)
            else:
                data = self.loader.read(path)
                content = content_hash(data) if data is not None else ""
                found[("code", path)] = (content, digest_of(path, "code", data))
        return found


def _converted(module: cst.Module | None) -> bool:
    if module is None or "aliaslint.converted" not in sys.modules:
        return False
    from aliaslint.converted import is_converted

    return is_converted(module)


def _parsed(text: str, syntax: ast.Module | None, converted: bool) -> cst.Module | None:
    """libcst's tree of ``text``, which the screen passed (``syntax``: CPython's tree of it,
    None if not at hand); with ``converted``, made from CPython's tree where it can be.
    None where libcst's parser rejects it."""
    import libcst as cst

    if converted:
        from aliaslint.converted import module_from_ast

        if syntax is None:
            syntax = python_tree(text)
        made = module_from_ast(syntax, text) if syntax is not None else None
        if made is not None:
            return made
    from aliaslint.parsing import parse_module

    try:
        return parse_module(text)
    except (cst.ParserSyntaxError, RecursionError):
        return None


# (path, content digest) -> the digest of its code, for files read again and again.
_CODE_DIGESTS: dict[tuple[str, str], str] = {}


def digest_of(path: str, kind: str, data: bytes | None = None) -> str:
    """A file's digest of one kind (see ``Link.dependencies``); "" where it cannot be read.
    The code digest is of CPython's tree without positions: comments, blank lines and
    formatting do not change it.  ``data``: its content, where it is not the file's (an
    editor's buffer)."""
    if data is None:
        try:
            data = Path(path).read_bytes()
        except OSError:
            return ""
    content = content_hash(data)
    if kind == "content":
        return content
    known = _CODE_DIGESTS.get((path, content))
    if known is not None:
        return known
    try:
        meaning = ast.dump(ast.parse(data, path))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        meaning = content  # not Python this version reads: its bytes are all there is
    digest = content_hash(meaning.encode("utf-8", "surrogatepass"))
    if len(_CODE_DIGESTS) > 4096:
        _CODE_DIGESTS.clear()
    _CODE_DIGESTS[(path, content)] = digest
    return digest
