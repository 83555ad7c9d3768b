"""read → cache → prefilter → parse → analyse → checks → suppressions, for each file.

Every problem with one file becomes a finding for that file (AL902 for a
file that cannot be read, decoded or parsed; AL903 for an exception inside
the analysis or a rule), so one bad file never stops the run.  Notebooks
(``.ipynb``) are checked as the module their code cells make, and their
findings point into cells.
"""

from __future__ import annotations

import ast
import json
import multiprocessing
import os
import sys
import threading
import time
from stat import S_ISREG
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Iterable, NamedTuple

from aliaslint import heap, registry, stages, verbose
from aliaslint.cache import (
    DEFAULT_CACHE_DIR,
    Binding,
    Cache,
    content_hash,
    Extent,
    extent_of,
    with_dependencies,
)
from aliaslint.config import (
    CliOptions,
    Resolver,
    Settings,
    excluded_anywhere,
    resolve_rules,
)
from aliaslint.diagnostics import (
    FILE_NOT_CHECKED,
    INTERNAL_ERROR,
    UNUSED_SUPPRESSION,
    Confidence,
    Diagnostic,
    Position,
    Related,
    display_path,
    distinct,
)
from aliaslint.reading import file_error as _file_error
from aliaslint.reading import internal as _internal
from aliaslint.reading import decode, read_file
from aliaslint.outline import Outline, outline
from aliaslint.quiet import WRITING_EVENTS
from aliaslint.quiet import enabled as quiet_enabled
from aliaslint.quiet import quiet as is_quiet
from aliaslint.screen import (
    PARSE_BUDGET,
    RUNNING,
    Screened,
    Version,
    compile_error,
    deeply,
    budget_error,
    python_tree,
    screen,
    without_lone_backslashes,
)
from aliaslint.walk import walk
from aliaslint.workers import run_all

if TYPE_CHECKING:
    # The parse and what follows it load libcst, the analysis and the rules: imported where
    # a file is parsed, so that a run that parses nothing never loads them.
    import libcst as cst

    from aliaslint.incremental import StatementCache
    from aliaslint.notebooks import Notebook
    from aliaslint.project import Link, Loader, Program
    from aliaslint.rule import Context, Finding

# Told (files done, files in all) as a run goes.
Progress = Callable[[int, int], None]

# Files that never mention torch cannot create a tensor: skip them unparsed.
PREFILTER = "torch"

@dataclass(frozen=True)
class Result:
    diagnostics: list[Diagnostic]
    # Each file checked, with the settings it was checked with (what `--fix` needs again).
    checked: list[tuple[Path, Settings]]
    # Findings left out because a baseline records them.
    baselined: int = 0
    # The checked files as one program (None for one file or standard input): `--fix` and
    # `--add-noqa` check a file again within it, so that they see what the check saw.
    program: Program | None = None
    # The AL901 findings a file's own check makes for suppressions another file's check
    # used (a caller's check found a write inside this helper): left out of
    # ``diagnostics``, and out of the file's findings when `--fix` checks it again.
    used_elsewhere: frozenset[Diagnostic] = frozenset()

    @property
    def files(self) -> list[Path]:
        return [path for path, _ in self.checked]

    @property
    def could_not_check(self) -> int:
        # A notebook cell that does not parse is reported, but the notebook's
        # other cells were checked: only whole files count here.
        return len({d.filename for d in self.diagnostics
                    if d.code == INTERNAL_ERROR or d.code == FILE_NOT_CHECKED and d.cell is None})


def _text(source: str | bytes, filename: str) -> str | Diagnostic:
    return decode(source, filename) if isinstance(source, bytes) else source


def check_source(source: str | bytes, filename: str = "<string>",
                 rules: Iterable[str] | None = None, *,
                 report_unused_suppressions: bool = False,
                 confidence: Confidence = "high",
                 target_version: Version | None = None,
                 statements: StatementCache | None = None,
                 parse_budget: int = PARSE_BUDGET,
                 link: Link | None = None,
                 converted: bool = False) -> list[Diagnostic]:
    """Check one module's source; the findings come back sorted.

    ``rules`` are the codes to run (default: the default selection); ``target_version``
    the Python whose grammar the source is checked against (default: the running one);
    ``statements`` the statements parsed in earlier checks of the same buffer, to parse
    only what an edit changed; ``parse_budget`` the parse work (predicted from CPython's
    tree) beyond which the file is AL902 instead of parsed; ``link`` the program the file
    is part of (its findings may then lie in the other files it calls into); ``converted``:
    the file (and the other files it reads) is first analysed on a tree made from CPython's
    (aliaslint/converted.py), and on libcst's own only where that finds something.
    """
    enabled = _enabled(rules, report_unused_suppressions)
    text = _text(source, filename)
    if isinstance(text, Diagnostic):
        return [text]
    if PREFILTER not in text:
        return []
    if link is not None:
        link.converted = converted
    # The program's loader may have CPython's tree of this content already (an importer's
    # star import or quiet proof read it); it is told what this screen passed, so that an
    # importer's load of the file later does not screen it again.
    loader = link.loader if link is not None and target_version is None else None
    digest = content_hash(source if isinstance(source, bytes) else
                          text.encode("utf-8", "surrogatepass")) if loader else ""
    tree = loader.take_syntax(link.path, digest) if loader and link else None
    # Screened already (an importer loaded it): it compiles, its parse work is within the
    # budget, and its outline says what the quiet proof reads of CPython's tree, so the
    # tree is not made again.
    own = loader.known_outline(link.path, digest) if loader and link and tree is None and \
        statements is None else None
    if own is not None:
        screened = Screened()
    else:
        if tree is None and statements is not None and target_version is None:
            tree = statements.syntax(text)  # an edited buffer: only what changed is parsed
        # A syntax error is reported even where no rule could fire.
        screened = screen(text, filename, target_version, tree=tree,
                          compiles=bool(loader and link and loader.compiles(link.path, digest)),
                          statements=statements.compiled if statements is not None else None)
        if screened.error is not None:
            return [screened.error]
        if statements is not None and target_version is None and screened.tree is not None:
            statements.keep_syntax(text, screened.tree)
        if loader and link and screened.tree is not None:
            own = loader.outlined(link.path, digest, screened.tree)
    if not may_find(text, enabled, partial(_quiet, screened.tree, own, link),
                    writes=own is not None and not own.writes_nothing):
        return []
    late = screened.over_budget(text, filename, parse_budget)
    if late is not None:
        return [late]
    if loader and link:
        loader.screened(link.path, digest, parse_budget)

    def parse_and_check() -> list[Diagnostic]:
        parsed = _parse_again(statements, text, screened.tree)
        if parsed is not None:
            from aliaslint.incremental import ChunkPositions

            return _checked(parsed[0], text, filename, enabled, confidence,
                            ChunkPositions(*parsed), link)
        # A file other checked files import may have been parsed already for one of them
        # in this process; its own tree is kept for them in turn.  (Not where the grammar
        # is another Python's: an import is read with the running one's.)
        keep = partial(loader.remember, link.path, text) if loader and link else None
        module = loader.share(link.path, text, converted) if loader and link else None
        if module is None:
            syntax = screened.tree if screened.tree is not None or own is None else \
                python_tree(text)  # (not made by the screen: it knew the file)
            parsed_here = _parse(text, filename, keep=keep, syntax=syntax
                                 if converted and target_version is None else None)
            if isinstance(parsed_here, Diagnostic):
                return [parsed_here]
            module = parsed_here
        if converted:
            from aliaslint.converted import is_converted

            if is_converted(module):
                found = _checked_converted(module, text, filename, enabled, confidence, link)
                if found is not None:
                    return found
                with stages.stage("parse"):  # checked again: only libcst's tree says where
                    parsed_here = _parse_here(text, filename, keep)
                if isinstance(parsed_here, Diagnostic):
                    return [parsed_here]
                module = parsed_here
                if link is not None:
                    return _checked_twinned(module, text, filename, enabled, confidence, link)
        return _checked(module, text, filename, enabled, confidence, link=link)

    return deeply(parse_and_check)


def _checked_converted(module: cst.Module, text: str, filename: str, enabled: frozenset[str],
                       confidence: Confidence, link: Link | None) -> list[Diagnostic] | None:
    """The findings of a check on a tree made from CPython's (and on such trees of the other
    files it reads) where it finds none; None where it finds some, or asks for a position or
    a node's text: only libcst's own trees say where they are (and what a fix changes), so
    the file is then checked again on those."""
    from aliaslint.converted import NeedsText

    try:
        found = _checked(module, text, filename, enabled, confidence, link=link)
        if not found:
            return found
    except NeedsText:
        pass
    if link is not None:
        link.restart(twinned=True)
    return None


def _checked_twinned(module: cst.Module, text: str, filename: str, enabled: frozenset[str],
                     confidence: Confidence, link: Link) -> list[Diagnostic]:
    """The findings of a check on libcst's tree of the file, the other files it reads still
    on converted trees: a position or text asked of one is read from libcst's parse of
    that file alone (rule.Context), so only the files findings point into are parsed.
    Where that cannot answer (a fix's scopes asked in another file), the other files are
    read on libcst's trees too."""
    from aliaslint.converted import NeedsText

    try:
        return _checked(module, text, filename, enabled, confidence, link=link)
    except NeedsText:
        link.restart()
        return _checked(module, text, filename, enabled, confidence, link=link)


def _checked(module: cst.Module, source: str, filename: str, enabled: frozenset[str],
             confidence: Confidence, positions=None, link: Link | None = None
             ) -> list[Diagnostic]:
    """The parsed module's findings (aliaslint/checking.py, loaded with the first of them)."""
    if "aliaslint.checking" not in sys.modules:
        _load_checking(every_rule=False)  # the rules this file's events need load later
    from aliaslint.checking import check_module

    return check_module(module, source, filename, enabled, confidence, positions, link)


def _parse_again(statements: StatementCache | None, text: str, tree: ast.Module | None = None):
    """The module from the statements parsed before and those an edit changed; None when
    there is no cache or libcst's parser rejects a part (the full parse says where).
    ``tree``: CPython's tree of ``text``, which says where its statements are."""
    if statements is None:
        return None
    import libcst as cst

    try:
        return statements.parse(text, tree)
    except (cst.ParserSyntaxError, RecursionError):
        return None


def may_find(source: str, enabled: frozenset[str],
             quiet: Callable[[], bool] | None = None, *, writes: bool = False) -> bool:
    """False only if no enabled rule can fire in ``source`` (the cheap prefilter).
    ``quiet()`` proves that no rule without words can (aliaslint/quiet.py); ``writes``: the
    file itself spells a write (its outline says so), so that proof fails at its first step."""
    if PREFILTER not in source:
        return False
    briefs = registry.briefs()
    rules = [briefs[code] for code in enabled if code in briefs]
    wordless = [rule for rule in rules if rule.words is None and rule.events]
    if wordless and (quiet is None or writes or
                     not all(WRITING_EVENTS.issuperset(rule.events) for rule in wordless)):
        return True  # a rule that may fire in any torch file (or in this one)
    # Each rule's words are a test of the raw text (strings and comments included), so a
    # match may be spurious but a real occurrence is never missed.
    if any(rule.words(source) for rule in rules if rule.words is not None):
        return True
    return bool(wordless) and quiet is not None and not quiet()


def _quiet(tree: ast.Module | None, own: Outline | None, link: Link | None) -> bool:
    """Is the module quiet (aliaslint/quiet.py), within its program where it has one?
    ``own``: its outline, where the program's loader keeps it; else ``tree`` tells."""
    if not quiet_enabled():
        return False
    if own is None:
        if tree is None:
            return False
        own = outline(tree)
    if link is None:
        return is_quiet(own, None, None, lambda path: None)
    return is_quiet(own, link.path, link.program, link.outline)


def check_notebook(source: str | bytes, filename: str = "<notebook>",
                   rules: Iterable[str] | None = None, *,
                   report_unused_suppressions: bool = False,
                   confidence: Confidence = "high",
                   target_version: Version | None = None,
                   parse_budget: int = PARSE_BUDGET) -> list[Diagnostic]:
    """Check a Jupyter notebook (its JSON text); findings carry the cell they are in.

    Each code cell must compile alone, as IPython compiles it (top-level ``await``
    allowed); a cell that does not is one AL902 finding and is left out, and the other
    cells are still checked.
    """
    from aliaslint.notebooks import NotebookError, in_cell, is_python_notebook, load_notebook

    enabled = _enabled(rules, report_unused_suppressions)
    document = _text(source, filename)
    if isinstance(document, Diagnostic):
        return [document]
    try:
        notebook = load_notebook(document)
    except NotebookError as error:
        return [_file_error(filename, str(error))]
    if not is_python_notebook(document):
        return []
    text = notebook.module()
    if PREFILTER not in text:
        return []
    errors, broken = _cell_syntax_errors(notebook, filename, target_version)
    diagnostics = errors
    if may_find(text, enabled):
        text = notebook.module(broken)
        late = budget_error(text, filename, top_level_await=True, budget=parse_budget)

        def parse_and_check() -> list[Diagnostic]:
            module = _parse(text, filename)
            if isinstance(module, Diagnostic):  # only the cells together fail: say where
                return [module]
            return _checked(module, text, filename, enabled, confidence)

        diagnostics = errors + ([late] if late is not None else deeply(parse_and_check))
    return sorted((in_cell(d, notebook) for d in diagnostics), key=lambda d: d.sort_key)


def _enabled(rules: Iterable[str] | None, report_unused_suppressions: bool) -> frozenset[str]:
    if rules is not None:
        return frozenset(rules)
    return resolve_rules((), report_unused_suppressions)


def _parse(source: str, filename: str, keep: Callable[[cst.Module], None] | None = None,
           syntax: ast.Module | None = None) -> cst.Module | Diagnostic:
    """The CST of source the screen passed; libcst's own error where its parser differs.
    ``keep`` is given the tree when it is that of ``source`` itself (not of a repair).
    ``syntax``: CPython's tree of ``source``, to make the tree from where it can be
    (aliaslint/converted.py)."""
    with stages.stage("parse"):
        if syntax is not None:
            from aliaslint.converted import module_from_ast

            module = module_from_ast(syntax, source)
            if module is not None:
                heap.parsed()
                if keep is not None:
                    keep(module)
                return module
        return _parse_here(source, filename, keep)


def _parse_here(source: str, filename: str, keep: Callable[[cst.Module], None] | None
                ) -> cst.Module | Diagnostic:
    import libcst as cst

    from aliaslint.parsing import parse_module

    try:
        try:
            module = parse_module(source)
            heap.parsed()
            if keep is not None:
                keep(module)
            return module
        except cst.ParserSyntaxError:
            repaired = without_lone_backslashes(source)
            if repaired == source:
                raise
            return parse_module(repaired)
    except cst.ParserSyntaxError as error:
        return _file_error(filename, f"syntax error (libcst's parser): {error.message}",
                           error.raw_line, error.raw_column + 1)
    except RecursionError:
        return _file_error(filename, "file is nested too deeply to parse")


def _cell_syntax_errors(notebook: Notebook, filename: str, target: Version | None
                        ) -> tuple[list[Diagnostic], frozenset[int]]:
    """An AL902 finding for each code cell that does not compile alone, with module rows,
    and the numbers of those cells."""
    errors, broken = [], set()
    for cell in notebook.cells:
        screened = compile_error(cell.masked, filename, target, top_level_await=True)
        if screened is None:
            continue
        broken.add(cell.number)
        shift = cell.first_row - 1
        errors.append(replace(
            screened,
            location=Position(screened.location.row + shift, screened.location.column),
            end_location=Position(screened.end_location.row + shift,
                                  screened.end_location.column),
        ))
    return errors, frozenset(broken)


NOTEBOOK_SUFFIX = ".ipynb"


def check_file(path: Path, filename: str, settings: Settings,
               cache: Cache | None = None) -> list[Diagnostic]:
    """Check one file on disk; every failure is a finding, never an exception."""
    return _check_file(path, filename, settings, cache).diagnostics


class Checked(NamedTuple):
    """One file's check in a run."""

    diagnostics: list[Diagnostic]
    seen: Seen | None  # what the cache's index may remember of it
    # AL901 findings of other files' checks this check shows to be wrong (Link.used_elsewhere)
    used_elsewhere: tuple[Diagnostic, ...] = ()
    spent: dict[str, float] | None = None  # CPU seconds by stage (stages.enabled)


# A run's files are analysed first on trees made from CPython's (aliaslint/converted.py);
# set ALIASLINT_CONVERTED=0 to parse every file with libcst, the reference it is measured
# and tested against.  A small file checked alone is parsed: in a fresh process (pre-commit
# given one file) loading the converter costs more than the parse.
_CONVERTED = os.environ.get("ALIASLINT_CONVERTED", "") in ("", "1")
_CONVERTED_FROM = 4096  # bytes, for a file outside a program


def _check_file(path: Path, filename: str, settings: Settings, cache: Cache | None,
                program: Program | None = None) -> Checked:
    """The findings, and the (size, mtime) stat, content hash and extent the cache may
    remember.  With a ``program``, the file is analysed with the checked files it imports."""
    read = read_file(path, filename, settings.max_file_size)
    if isinstance(read, Diagnostic):
        return Checked([read], None)
    data, stat = read
    regular = S_ISREG(stat.st_mode)
    rules = settings.rules_for(path)
    notebook = path.suffix == NOTEBOOK_SUFFIX
    link = program_link(program, path, settings)
    if cache is not None:
        digest = content_hash(data)
        kind = "notebook" if notebook else "python"
        key = _settings_key(rules, settings)
        extent = extent_of(data, notebook)
        # The last result's dependencies, with the contents they have now: a helper
        # edited since then makes this a miss.
        reads = _dependency_digests(cache.dependencies(str(path))) if link is not None else {}
        used = {key: digest for key, (_, digest) in reads.items()}
        binding = Binding(with_dependencies(digest, used), kind, key)
        # A stream's size and mtime say nothing about its next content.
        cached = cache.load(binding, filename, extent)
        if cached is not None:
            verbose.note(f"cache hit {filename} (same content"
                         f"{', and of the files it uses' if used else ''})")
            return Checked(cached, Seen(stat, digest, extent, _flat(reads), hit=True,
                                        without_findings=None if cached else cache.key(binding))
                           if regular else None)
    diagnostics = check_buffer(data, path, filename, settings, rules, link=link,
                               converted=_CONVERTED and (
                                   program is not None or len(data) >= _CONVERTED_FROM))
    if any(d.code == INTERNAL_ERROR for d in diagnostics):
        # A crash is not a result worth remembering: retry next time.
        return Checked(diagnostics, None)
    used_elsewhere = tuple(link.used_elsewhere) if link is not None else ()
    if cache is None:
        return Checked(diagnostics, None, used_elsewhere)
    reads = link.dependency_digests() if link is not None else {}
    used = {key: digest for key, (_, digest) in reads.items()}
    if used_elsewhere or any(d.filename != filename for d in diagnostics):
        # A finding in another file (or a suppression there used), made by this file's
        # call: the entry holds one file's findings, so this file is analysed again next
        # time.
        return Checked(diagnostics, None, used_elsewhere)
    binding = Binding(with_dependencies(digest, used), kind, key)
    cache.store(binding, diagnostics, extent)
    return Checked(diagnostics, Seen(stat, digest, extent, _flat(reads), without_findings=None
                                     if diagnostics else cache.key(binding))
                   if regular else None)


def _dependency_digests(dependencies: Iterable[tuple[str, str]]
                        ) -> dict[tuple[str, str], tuple[str, str]]:
    """Each (kind, path) with the content hash of the file as it is now and its digest of
    that kind."""
    from aliaslint.project import digest_of

    found = {}
    for kind, other in dependencies:
        try:
            data: bytes | None = Path(other).read_bytes()
        except OSError:
            data = None
        found[(kind, other)] = (content_hash(data) if data is not None else "",
                                digest_of(other, kind, data) if data is not None else "")
    return found


def _flat(read: dict[tuple[str, str], tuple[str, str]]) -> list[tuple[str, str, str, str]]:
    return sorted((kind, path, content, digest)
                  for (kind, path), (content, digest) in read.items())


class Seen(NamedTuple):
    """What the cache's index remembers of a checked file."""

    stat: os.stat_result
    digest: str  # of its own content
    extent: Extent
    # The other files its result was computed with: (kind, path, the content hash of what
    # was read, its digest of that kind).
    dependencies: list[tuple[str, str, str, str]]
    hit: bool = False  # the result came from the cache
    without_findings: str | None = None  # the key of its entry, where that holds no finding


def check_buffer(data: str | bytes, path: Path, filename: str, settings: Settings,
                 rules: frozenset[str] | None = None,
                 statements: StatementCache | None = None,
                 link: Link | None = None, converted: bool = False) -> list[Diagnostic]:
    """Check text as if it were the file at ``path`` (a notebook's JSON for ``.ipynb``), with
    the settings that apply there: what standard input and the language server check.
    Every failure is a finding, never an exception.  ``converted``: see ``check_source``."""
    check = check_notebook if path.suffix == NOTEBOOK_SUFFIX else \
        partial(check_source, statements=statements, link=link, converted=converted)
    try:
        with stages.stage("screen"):  # and what the stages inside it do not count
            found = check(data, filename, settings.rules_for(path) if rules is None else rules,
                          report_unused_suppressions=settings.report_unused_suppressions,
                          confidence=settings.confidence,
                          target_version=settings.target_version,
                          parse_budget=settings.parse_budget)
    except Exception as error:  # never let one file stop the run (or the server)
        return [_file_error(filename, _internal("the engine", error), code=INTERNAL_ERROR)]
    if not any(d.fix is not None for d in found):
        return found
    from aliaslint import fixes

    return fixes.under(settings.fixes, found)


def _settings_key(rules: frozenset[str], settings: Settings) -> str:
    return (f"{','.join(sorted(rules))}|{settings.confidence}|"
            f"{settings.report_unused_suppressions}|{settings.target_version or RUNNING}|"
            f"{settings.fixes}|{settings.parse_budget}")


# Set in each worker process by the pool's initializer.
_worker_cache: Cache | None = None
_worker_program: Program | None = None
_loaders: dict[tuple[int, int], Loader] = {}  # (id(program), parse budget) -> its loader


def program_link(program: Program | None, path: Path, settings: Settings) -> Link | None:
    """The view of ``program`` the analysis of ``path`` gets; None outside a program."""
    if program is None or str(path) not in program.packages:
        return None
    from aliaslint.project import Link, Loader

    key = (id(program), settings.parse_budget)
    loader = _loaders.get(key)
    if loader is None:
        _loaders.clear()  # one program per run
        loader = _loaders[key] = Loader(program, settings.parse_budget, _decoded)
    return Link(program, loader, str(path))


def _decoded(data: bytes) -> str | None:
    text = decode(data, "")
    return text if isinstance(text, str) else None


def _start_worker(cache: Cache | None, parent: int | None = None,
                  program: Program | None = None) -> None:
    global _worker_cache, _worker_program
    _worker_cache = cache
    _worker_program = program
    if parent is not None:
        end_with_parent(parent)


def end_with_parent(parent: int) -> None:
    """Make this worker end when the process that started it does (``kill -9`` included):
    a forked worker keeps the pipe to itself open, so it would never see the parent go."""
    if sys.platform == "linux":
        import ctypes
        import signal

        PR_SET_PDEATHSIG = 1
        try:
            ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
        except (OSError, AttributeError):
            pass
        else:
            if os.getppid() != parent:  # the parent was gone before the request
                os._exit(1)
            return

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(1)
        os._exit(1)

    threading.Thread(target=watch, name="aliaslint-parent-watch", daemon=True).start()


def check_paths(paths=(".",), cli: CliOptions = CliOptions(), *, jobs: int | None = None,
                cwd: Path | None = None, cache: bool | Path = False,
                progress: Progress | None = None) -> Result:
    """Check files and directories; findings come back sorted whatever ``jobs`` is.

    ``cache``: True to use the configured cache directory, or a directory; either is
    refused (ConfigError) when it is not one aliaslint may use (``verify_directory``).
    ``progress(done, total)`` is called as files are done (cached ones at once).
    Raises ``ConfigError`` for a broken configuration: there is nothing
    sensible to check against then.
    """
    resolver = Resolver(cli, cwd)
    files, problems = walk(paths, resolver)
    jobs_list = [(path, display_path(path, resolver.cwd), settings) for path, settings in files]
    program = _program([path for path, _ in files], source_roots(resolver),
                         {str(path): shown for path, shown, _ in jobs_list})
    diagnostics = [_file_error(display_path(path, resolver.cwd), reason, row=0, column=0)
                   for path, reason in problems]
    store = None
    if cache is not False:
        directory, setting = cache_location(resolver) if cache is True else \
            (resolver.cwd / cache, f"cache={os.fspath(cache)!r}")
        store = Cache.open(directory, setting, [
            *cache_keep(resolver),
            *((resolver.cwd / path, f"the checked path {path}") for path in paths)])
        jobs_list = _from_cache(store, jobs_list, diagnostics, program)
    if progress is not None:
        total, cached = len(files), len(files) - len(jobs_list)
        progress(cached, total)
        done = progress

        def progress(count: int, total: int = total) -> None:
            done(cached + count, total)
    hits = len(files) - len(jobs_list)
    used_elsewhere: set[Diagnostic] = set()
    for job, (found, seen, withdrawn, spent) in zip(jobs_list,
                                                    _run(jobs_list, jobs, store, progress,
                                                         program)):
        stages.add(spent)
        diagnostics.extend(found)
        used_elsewhere.update(withdrawn)
        if seen is not None and store is not None:
            hits += seen.hit
            store.remember(str(job[0]), seen.stat, seen.digest, seen.extent,
                           seen.dependencies, seen.without_findings)
    if store is not None:
        verbose.note(f"{len(files) - hits} analysed, {hits} from cache")
    if store is not None:
        store.save_index()
    return Result(distinct([d for d in diagnostics if d.code != UNUSED_SUPPRESSION
                            or d not in used_elsewhere]), files,
                  program=program, used_elsewhere=frozenset(used_elsewhere))


def _program(paths: list[Path], roots: tuple[Path, ...], shown: dict[str, str]
             ) -> Program | None:
    """``Program.of``; a run of one Python file has none, and does not load the module."""
    if sum(path.suffix == ".py" for path in paths) < 2:
        return None
    from aliaslint.project import Program

    return Program.of(paths, roots, shown)


def source_roots(resolver: Resolver) -> tuple[Path, ...]:
    """The configured source roots: the project's `src` directory where it has one."""
    settings = resolver.for_directory(resolver.cwd)
    src = settings.root / "src"
    return (src,) if src.is_dir() else ()


def check_stdin(data: bytes, path: Path | None, cli: CliOptions = CliOptions(), *,
                cwd: Path | None = None) -> Result:
    """Check standard input as if it were the file at ``path`` (relative to ``cwd``): its
    configuration, per-file-ignores and, with ``force_exclude``, excludes apply; a
    ``.ipynb`` path reads notebook JSON.  Without a path: the working directory's
    configuration, shown as ``-``."""
    target = stdin_target(path, cli, cwd)
    if target is None:
        return Result([], [])
    absolute, filename, settings = target
    return Result(check_buffer(data, absolute, filename, settings), [(absolute, settings)])


def stdin_target(path: Path | None, cli: CliOptions = CliOptions(), cwd: Path | None = None
                 ) -> tuple[Path, str, Settings] | None:
    """What standard input is checked as: (path, name shown, settings); None when
    ``force_exclude`` excludes that path."""
    resolver = Resolver(cli, cwd)
    if path is None:
        return resolver.cwd / "-", "-", resolver.for_directory(resolver.cwd)
    absolute = path if path.is_absolute() else resolver.cwd / path
    settings = resolver.for_file(absolute)
    if cli.force_exclude and excluded_anywhere(absolute, settings):
        return None
    return absolute, display_path(absolute, resolver.cwd), settings


def cache_location(resolver: Resolver) -> tuple[Path, str]:
    """``cache-dir`` from the configuration of the working directory, else
    ``.aliaslint_cache`` beside that configuration (or in the working directory); and
    where that was set, as error messages name it."""
    settings = resolver.for_directory(resolver.cwd)
    if settings.cache_dir is not None:
        source, value = settings.cache_dir_source or (settings.source, str(settings.cache_dir))
        where = display_path(source, resolver.cwd) if source else "the configuration"
        return settings.cache_dir, f"{where}: [tool.aliaslint] cache-dir = {json.dumps(value)}"
    directory = (settings.root if settings.source else resolver.cwd) / DEFAULT_CACHE_DIR
    return directory, (f"the default cache directory {display_path(directory, resolver.cwd)} "
                       "(`cache-dir` moves it)")


def cache_keep(resolver: Resolver) -> list[tuple[Path, str]]:
    """The directories a cache directory must neither be nor contain, besides the checked
    paths: the project root and the working directory."""
    settings = resolver.for_directory(resolver.cwd)
    return [*([(settings.root, "the project root")] if settings.source else []),
            (resolver.cwd, "the working directory")]


def _from_cache(store: Cache, jobs_list: list, diagnostics: list,
                program: Program | None = None) -> list:
    """Add the cached findings of files whose size and mtime are unchanged (and those of
    the files of ``program`` their result depends on); the other jobs."""
    remaining = []
    stats: dict[str, os.stat_result | None] = {}

    def stat_of(other: str) -> os.stat_result | None:
        if other not in stats:
            try:
                stats[other] = os.stat(other)
            except OSError:
                stats[other] = None
        return stats[other]

    for job in jobs_list:
        path, filename, settings = job
        try:
            stat = os.stat(path)
        except OSError:
            remaining.append(job)
            continue
        known = store.known(str(path), stat) if S_ISREG(stat.st_mode) else None
        uses = ""
        if known is None and S_ISREG(stat.st_mode) and program is not None \
                and str(path) in program.packages:
            with_others = store.known_with_dependencies(str(path), stat, stat_of)
            if with_others is not None:
                digest, extent, used = with_others
                known = with_dependencies(digest, used), extent
                uses = ", and of the files it uses"
        cached: list[Diagnostic] | None = None
        if known is not None and stat.st_size <= settings.max_file_size:
            kind = "notebook" if path.suffix == NOTEBOOK_SUFFIX else "python"
            binding = Binding(known[0], kind, _settings_key(settings.rules_for(path), settings))
            # Most files have no finding: the index says so, and no entry is read.
            entry = store.key(binding)
            if store.without_findings(str(path)) == entry:
                cached = []
            else:
                cached = store.load(binding, filename, known[1])
                if cached == []:
                    store.note_without_findings(str(path), entry)
        if cached is None:
            remaining.append(job)
        else:
            verbose.note(f"cache hit {filename} (same size and modification time{uses})")
            diagnostics.extend(cached)
    return remaining


def _run(jobs_list: list, jobs: int | None, store: Cache | None,
         progress: Callable[[int], None] | None = None, program: Program | None = None
         ) -> list:
    """Each job's result, in order, from worker processes (one with ``-j 1``): a file that
    takes longer than its `file-timeout` is stopped with its process, which libcst's parse
    (native code, uninterruptible on a thread) needs; ``progress`` is told how many are
    done."""
    if not jobs_list:
        return []
    workers = min(jobs or os.cpu_count() or 1, len(jobs_list))
    if workers > 1:
        # Loaded once here, where the workers share it, instead of by each of them.
        _load_checking()
    # The walk's order checks a package's files together, so the modules they share stay
    # among the trees a worker keeps (timm + lightning, one worker: 841 parses for 797
    # files, against 945 largest first).  Several workers each take their own stretch of
    # it, after the largest files, which go first so that no worker is left with a big
    # file at the end while the others idle.  Results go back in the original order.
    order = list(range(len(jobs_list)))
    largest = 8 * workers if workers > 1 else 0
    if largest:
        first = sorted(order, key=lambda i: -_size(jobs_list[i][0]))[:largest]
        order = first + sorted(set(order) - set(first))
    results = run_all([jobs_list[i] for i in order], _check_job, workers,
                      timeout=lambda job: job[2].file_timeout, failure=_not_in_time,
                      context=worker_context(), initializer=_start_worker,
                      initargs=(store, os.getpid(), program), done=progress,
                      shared=largest)
    ordered: list = [None] * len(jobs_list)
    for index, result in zip(order, results):
        ordered[index] = result
    return ordered


def _check_job(job) -> Checked:
    path, filename, settings = job
    before = stages.snapshot() if stages.enabled else None
    with heap.one_check():
        checked = _check_file(path, filename, settings, _worker_cache, _worker_program)
    return checked if before is None else checked._replace(spent=stages.since(before))


def _load_checking(every_rule: bool = True) -> None:
    """The parse's side (libcst, the analysis, the rules), loaded in this process: workers
    forked after it start with it."""
    from aliaslint import checking  # noqa: F401

    if every_rule:
        registry.rules()
    heap.imported()


def _not_in_time(job, why: str, overran: bool) -> Checked:
    _, filename, settings = job
    if overran:
        # Its worker is replaced by a fork of this process: with the parse's side loaded
        # here first, the next file's time is its own check's, not the imports the worker
        # it replaces had done already.
        _load_checking()
    return Checked([not_checked(filename, settings, why, overran)], None)


def not_checked(filename: str, settings: Settings, why: str, overran: bool) -> Diagnostic:
    """The AL902 finding for a file whose worker overran the `file-timeout` or died."""
    if overran:
        return _file_error(filename, f"not checked within the `file-timeout` of "
                           f"{settings.file_timeout:g} s per file (raise it to check this "
                           "file)")
    return _file_error(filename, f"not checked: {why}")


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def worker_context():
    # fork is cheapest (the tables are already loaded) where it is safe.
    if sys.platform == "linux":
        return multiprocessing.get_context("fork")
    return multiprocessing.get_context()
