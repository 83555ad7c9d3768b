"""Settings: the nearest ``[tool.aliaslint]`` above each checked file, plus the command line.

Rule selection follows ruff: a layer (the config file, then the command
line) may replace the selection (``select``), add to it (``extend-select``)
and remove from it (``ignore``); within a layer the most specific selector
wins and ``ignore`` wins a tie.  ``per-file-ignores`` applies last.
"""

from __future__ import annotations

import os
import re
import stat
import sys
from dataclasses import dataclass, field, replace
from functools import cache
from pathlib import Path

from aliaslint import patterns, registry, verbose
from aliaslint.diagnostics import UNUSED_SUPPRESSION, Applicability, Confidence
from aliaslint.screen import PARSE_BUDGET, Version, parse_target_version

DEFAULT_EXCLUDE = (
    ".bzr", ".direnv", ".eggs", ".git", ".git-rewrite", ".hg", ".ipynb_checkpoints",
    ".mypy_cache", ".nox", ".pants.d", ".pyenv", ".pytest_cache", ".pytype", ".ruff_cache",
    ".svn", ".tox", ".venv", ".vscode", "__pypackages__", "__pycache__", "_build",
    "buck-out", "build", "dist", "node_modules", "site-packages", "venv",
)
# Files a directory walk picks up; `include` replaces these, `extend-include` adds to them.
DEFAULT_INCLUDE = ("*.py", "*.pyi", "*.ipynb")
DEFAULT_MAX_FILE_SIZE = 2 * 1024 * 1024
# Wall-clock seconds one file may take in a worker before it is stopped (AL902).
DEFAULT_FILE_TIMEOUT = 60.0
# Meta findings about the run itself: always reported, never deselected.

_SELECTOR = re.compile(r"^(ALL|AL\d{0,3})$")


class ConfigError(Exception):
    """A configuration problem; its message names the file and the key, and quotes what it
    shows of the value up to a readable length (a hostile value can be megabytes)."""

    def __str__(self) -> str:
        return _short(super().__str__())


@dataclass(frozen=True)
class Selection:
    """One layer of rule selection (a config file or the command line)."""

    select: tuple[str, ...] | None = None
    extend_select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()


@dataclass(frozen=True)
class FixPolicy:
    """Which rules' fixes may be applied, and how safe each counts: ruff's ``fixable``,
    ``unfixable``, ``extend-safe-fixes``, ``extend-unsafe-fixes`` and ``unsafe-fixes``."""

    unsafe_fixes: bool = False  # `--fix` applies unsafe fixes too
    fixable: tuple[str, ...] = ("ALL",)
    unfixable: tuple[str, ...] = ()
    extend_safe: tuple[str, ...] = ()
    extend_unsafe: tuple[str, ...] = ()

    def applicability(self, code: str, given: Applicability) -> Applicability:
        """A rule's fix class once the settings apply: an unfixable rule's fix is only
        shown; a listed rule's unsafe fix counts as safe or its safe fix as unsafe (the
        more specific selector wins, and unsafe a tie). A fix shown only stays so."""
        if given == "display-only":
            return given
        if _specificity(code, self.fixable) < 0 or _specificity(code, self.unfixable) >= 0:
            return "display-only"
        safe, unsafe = _specificity(code, self.extend_safe), _specificity(code, self.extend_unsafe)
        if safe < 0 and unsafe < 0:
            return given
        return "safe" if safe > unsafe else "unsafe"


@dataclass(frozen=True)
class Settings:
    """Everything that decides how one file is checked."""

    root: Path  # the directory relative paths in the config are resolved from
    source: Path | None  # the config file, if any
    layers: tuple[Selection, ...] = ()
    per_file_ignores: tuple[tuple[str, tuple[str, ...]], ...] = ()
    exclude: tuple[str, ...] = DEFAULT_EXCLUDE
    extend_exclude: tuple[str, ...] = ()
    include: tuple[str, ...] = DEFAULT_INCLUDE
    extend_include: tuple[str, ...] = ()
    # Skip what git ignores (.gitignore files, .git/info/exclude, the global excludes file).
    respect_gitignore: bool = True
    # The files ``source`` extends, nearest first.
    extends: tuple[Path, ...] = ()
    cache_dir: Path | None = None  # as configured, resolved against ``root``
    # Where ``cache_dir`` was set: the config file that says it, and what it says.
    cache_dir_source: tuple[Path, str] | None = field(default=None, compare=False)
    max_file_size: int = DEFAULT_MAX_FILE_SIZE
    parse_budget: int = PARSE_BUDGET  # the predicted parse work a file may need
    file_timeout: float = DEFAULT_FILE_TIMEOUT
    confidence: Confidence = "high"
    report_unused_suppressions: bool = False
    # The Python whose grammar files are checked against; None: the running interpreter.
    target_version: Version | None = None
    fixes: FixPolicy = FixPolicy()
    # The baseline file whose findings are left out, resolved against ``root``.
    baseline: Path | None = None
    rules: frozenset[str] = field(default=frozenset(), compare=False)

    def rules_for(self, path: Path) -> frozenset[str]:
        """The codes enabled for ``path`` once per-file-ignores apply."""
        rules = self.rules
        always = registry.always_on()
        floor = self.floor(path)
        for pattern, selectors in self.per_file_ignores:
            if patterns.matches_file(pattern, path, floor):
                rules = frozenset(
                    code for code in rules
                    if code in always or _specificity(code, selectors) < 0
                )
        return rules

    def floor(self, path: Path) -> Path:
        """Where patterns that name no directory begin to match for a file judged on its
        own: the config's directory, or the file's own directory outside it."""
        absolute = os.path.abspath(path)
        inside = absolute.startswith(os.path.join(os.path.abspath(self.root), ""))
        return self.root if inside else Path(absolute).parent

    @property
    def excludes(self) -> tuple[str, ...]:
        return (*self.exclude, *self.extend_exclude)

    @property
    def includes(self) -> tuple[str, ...]:
        return (*self.include, *self.extend_include)

    def is_excluded(self, path: Path, is_dir: bool = False, floor: Path | None = None) -> bool:
        """Does an exclude pattern match ``path`` or a directory between it and ``floor``?"""
        return patterns.matches(self.excludes, path, is_dir, floor or self.floor(path))

    def is_included(self, path: Path, floor: Path | None = None) -> bool:
        """Is ``path`` a file a directory walk should check?"""
        return patterns.matches(self.includes, path, False, floor or self.floor(path))


def _specificity(code: str, selectors) -> int:
    best = -1
    for selector in selectors:
        if selector == "ALL":
            best = max(best, 0)
        elif code.startswith(selector):
            best = max(best, len(selector))
    return best


def resolve_rules(layers: tuple[Selection, ...], report_unused: bool = False) -> frozenset[str]:
    rules = registry.briefs()
    enabled = {code for code, rule in rules.items() if rule.default}
    for layer in layers:
        chosen = (*(layer.select or ()), *layer.extend_select)
        for code in rules:
            selected = _specificity(code, chosen)
            ignored = _specificity(code, layer.ignore)
            if selected >= 0 or ignored >= 0:
                on = selected > ignored
            else:
                on = code in enabled and layer.select is None
            if on:
                enabled.add(code)
            else:
                enabled.discard(code)
    if report_unused:
        enabled.add(UNUSED_SUPPRESSION)
    return frozenset(enabled | registry.always_on())


def validate_selectors(selectors, where: str) -> tuple[str, ...]:
    """Check rule selectors; ``where`` names the file and key for the error."""
    if isinstance(selectors, str) or not isinstance(selectors, (list, tuple)):
        raise ConfigError(f"{where}: expected a list of rule codes, got {selectors!r}")
    rules = registry.codes()
    result = []
    for selector in selectors:
        if not isinstance(selector, str):
            raise ConfigError(f"{where}: expected a rule code, got {selector!r}")
        selector = selector.strip().upper()
        if not _SELECTOR.match(selector) or not any(
            selector == "ALL" or code.startswith(selector) for code in rules
        ):
            hint = close_match(selector, [*rules, *{code[:4] for code in rules}, "ALL"])
            raise ConfigError(f"{where}: unknown rule selector {selector!r}"
                              + (f" (did you mean {hint!r}?)" if hint else ""))
        result.append(selector)
    return tuple(result)


# ---------------------------------------------------------------------------
# Config files.

_KEYS = {
    "select", "ignore", "extend-select", "per-file-ignores", "exclude", "extend-exclude",
    "include", "extend-include", "cache-dir", "max-file-size", "parse-budget",
    "file-timeout", "confidence",
    "report-unused-suppressions", "target-version", "unsafe-fixes", "fixable", "unfixable",
    "extend-fixable", "extend-safe-fixes", "extend-unsafe-fixes", "baseline",
}


def _config_in(folder: Path) -> Path | None:
    """The folder's aliaslint.toml, else its pyproject.toml if that has [tool.aliaslint]."""
    candidate = folder / "aliaslint.toml"
    if _is_file(candidate):
        return candidate
    candidate = folder / "pyproject.toml"
    if _is_file(candidate) and _has_section(candidate):
        return candidate
    return None


def _is_file(path: Path) -> bool:
    # A folder that cannot be searched holds no configuration we can read; when it is
    # one being checked, the walk reports it.
    try:
        return path.is_file()
    except OSError:
        return False


def _has_section(pyproject: Path) -> bool:
    try:
        data = _read_bounded(pyproject)
    except OSError:
        return False
    # Cheap test first; only a real [tool.aliaslint] table counts.  A file that mentions
    # aliaslint is read as strictly as aliaslint.toml (not UTF-8, too large: an error).
    if b"aliaslint" not in data:
        return False
    return "aliaslint" in _read_toml(pyproject).get("tool", {})


# Far above any real configuration; bounds the parser's time and memory on hostile input.
MAX_CONFIG_BYTES = 1 << 20


def config_file_problem(path: Path) -> str | None:
    """Why ``path`` cannot be a config file (missing, a directory, a FIFO or a device), or
    None for a regular file (or one whose reading will say what is wrong)."""
    try:
        mode = os.stat(path).st_mode
    except (FileNotFoundError, NotADirectoryError):
        return "config file not found"
    except OSError:
        return None
    return _not_regular(mode)


_KINDS = ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))


def _not_regular(mode: int) -> str | None:
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISDIR(mode):
        return "is a directory, not a config file"
    kind = next((name for test, name in _KINDS if test(mode)), "")
    return "is not a regular file" + (f" ({kind})" if kind else "")


def _read_bounded(path: Path) -> bytes:
    """At most ``MAX_CONFIG_BYTES + 1`` bytes of ``path``, a regular file: opened without
    blocking and checked after opening, so a FIFO or a device put in its place is never read
    (reading would wait for a writer forever, or never end)."""
    descriptor = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0)
                         | getattr(os, "O_CLOEXEC", 0))
    with os.fdopen(descriptor, "rb") as handle:
        problem = _not_regular(os.fstat(descriptor).st_mode)
        if problem is not None:
            raise ConfigError(f"{path}: {problem}")
        return handle.read(MAX_CONFIG_BYTES + 1)


def _read_toml(path: Path) -> dict:
    # Imported here: a run that reads no configuration (`--isolated`) does not load it.
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - exercised on older Pythons only
        import tomli as tomllib

    try:
        data = _read_bounded(path)
        if len(data) > MAX_CONFIG_BYTES:
            raise ConfigError(f"{path}: larger than {MAX_CONFIG_BYTES >> 20} MiB, not read as "
                              "a configuration file")
        text = data.decode("utf-8")
        _check_key_lengths(path, text)
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"{path}: invalid TOML: {error}") from None
    except RecursionError:
        raise ConfigError(f"{path}: invalid TOML: arrays or tables nested too deeply") from None
    except (OSError, UnicodeDecodeError) as error:
        raise ConfigError(f"{path}: cannot read: {error}") from None


# tomllib's time grows with the square of a dotted key's parts (100,000 parts: minutes).
MAX_KEY_PARTS = 1000
# The `.part` runs of dotted keys (and of anything shaped like one); each run is matched once.
_DOTTED_RUN = re.compile(r"""(?:\.[ \t]*(?:[\w-]+|"[^"\n]*"|'[^'\n]*')[ \t]*)+""")


def _check_key_lengths(path: Path, text: str) -> None:
    for run in _DOTTED_RUN.finditer(text):
        if run.group().count(".") >= MAX_KEY_PARTS:
            row = text.count("\n", 0, run.start()) + 1
            raise ConfigError(f"{path}: line {row}: a dotted key of more than "
                              f"{MAX_KEY_PARTS:,} parts, not read as a configuration file")


def _short(text: str, limit: int = 500) -> str:
    """An error message with what it quotes cut to a readable length."""
    return text if len(text) <= limit else text[:limit] + " …"


def load_config(path: Path) -> dict:
    """The ``[tool.aliaslint]`` options of a config file, validated."""
    data = _read_toml(path)
    if path.name == "pyproject.toml":
        options = data.get("tool", {}).get("aliaslint", {})
        prefix = "[tool.aliaslint]"
    else:
        options = data.get("tool", {}).get("aliaslint", data)
        prefix = "[tool.aliaslint]" if "tool" in data else "option"
    if not isinstance(options, dict):
        raise ConfigError(f"{path}: {prefix} must be a table")
    for key in options:
        if key not in _KEYS and key not in _FILE_KEYS:
            hint = _closest(key)
            raise ConfigError(
                f"{path}: {prefix} unknown key {key!r}" + (f" (did you mean {hint!r}?)" if hint else "")
            )
    return options


def _closest(key: str) -> str | None:
    return close_match(key, _KEYS | _FILE_KEYS)


# Keys about which files and which other config files make up the settings.
_FILE_KEYS = {"extend", "extend-per-file-ignores", "respect-gitignore"}
_SELECTION_KEYS = ("select", "extend-select", "ignore")


def config_chain(path: Path) -> list[tuple[Path, dict]]:
    """The options of ``path`` and of each file it extends (``extend = "../base.toml"``,
    relative to the file that says it), the furthest base first."""
    chain: list[tuple[Path, dict]] = []
    current = path
    while True:
        if any(current == seen for seen, _ in chain):
            cycle = " -> ".join(str(seen) for seen, _ in chain[[p for p, _ in chain].index(current):])
            raise ConfigError(f"{chain[-1][0]}: extend: the files extend each other in a cycle: "
                              f"{cycle} -> {current}")
        options = load_config(current)
        chain.append((current, options))
        base = options.get("extend")
        if base is None:
            return chain[::-1]
        if not isinstance(base, str) or not base.strip():
            raise ConfigError(f"{current}: extend: expected the path of a config file, "
                              f"got {base!r}")
        target = current.parent / Path(os.path.expandvars(base)).expanduser()
        problem = config_file_problem(target)
        if problem is not None:
            raise ConfigError(f"{current}: extend: {base!r}: {problem}")
        current = Path(os.path.normpath(os.path.abspath(target)))


def merge_chain(chain: list[tuple[Path, dict]]) -> tuple[dict, tuple[Selection, ...]]:
    """One set of options from a chain of config files (the furthest base first), as ruff
    merges them: a nearer file's value replaces a base's, ``extend-*`` lists add up, and
    each file's rule selection is a layer of its own (the returned ones, for every file but
    the last).  Patterns and paths are anchored at the directory of the file that wrote them."""
    merged: dict = {}
    layers = []
    for index, (path, options) in enumerate(chain):
        where = f"{path}: [tool.aliaslint]"
        directory = path.parent
        for key, value in options.items():
            if key == "extend" or key in _SELECTION_KEYS and index < len(chain) - 1:
                continue
            if key in ("exclude", "include", "extend-exclude", "extend-include"):
                anchored = [patterns.anchor(p, directory) for p in _string_list(value, where, key)]
                merged[key] = [*merged.get(key, ()), *anchored] if key.startswith("extend-") \
                    else anchored
            elif key in ("per-file-ignores", "extend-per-file-ignores"):
                table = _per_file_table(value, where, key, directory)
                if key.startswith("extend-"):
                    for pattern, codes in merged.get(key, {}).items():
                        table[pattern] = (*codes, *table.get(pattern, ()))
                merged[key] = table
            elif key in ("cache-dir", "baseline") and isinstance(value, str) and value.strip():
                merged[key] = str(directory / Path(value).expanduser())
            elif key in ("extend-fixable", "extend-safe-fixes", "extend-unsafe-fixes") and \
                    isinstance(value, list) and isinstance(merged.get(key), list):
                merged[key] = [*merged[key], *value]
            else:
                merged[key] = value
        if index < len(chain) - 1:
            def selectors(key, options=options, where=where):
                return validate_selectors(options[key], f"{where} {key}") \
                    if key in options else None
            layers.append(Selection(selectors("select"), selectors("extend-select") or (),
                                    selectors("ignore") or ()))
    return merged, tuple(layers)


def _string_list(value, where: str, key: str) -> tuple[str, ...]:
    if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{where} {key}: expected a list of strings")
    return tuple(value)


def _per_file_table(value, where: str, key: str, directory: Path) -> dict:
    if not isinstance(value, dict):
        raise ConfigError(f"{where} {key}: expected a table of pattern = [codes]")
    return {patterns.anchor(pattern, directory):
            validate_selectors(codes, f"{where} {key}.{pattern!r}")
            for pattern, codes in value.items()}


def settings_for_config(path: Path, cli: CliOptions) -> Settings:
    """The settings a config file gives, with the files it extends and the command line."""
    chain = config_chain(path)
    verbose.note(f"config {path}" + "".join(f", extending {base}" for base, _ in chain[-2::-1]))
    options, inherited = merge_chain(chain)
    settings = settings_from_options(options, path, path.parent, cli, inherited)
    cache_dir_source = next(((source, given["cache-dir"]) for source, given in reversed(chain)
                             if isinstance(given.get("cache-dir"), str)), None)
    return replace(settings, extends=tuple(source for source, _ in chain[-2::-1]),
                   cache_dir_source=cache_dir_source)


def close_match(given: str, choices) -> str | None:
    """The choice ``given`` was most likely meant to be, if one is close enough."""
    import difflib

    matches = difflib.get_close_matches(given, sorted(choices), n=1)
    return matches[0] if matches else None


def settings_from_options(options: dict, source: Path | None, root: Path,
                          cli: CliOptions, inherited: tuple[Selection, ...] = ()) -> Settings:
    """Settings from one set of options whose patterns and paths are anchored already
    (``merge_chain``), below the rule selection layers of the files it extends."""
    where = f"{source}: [tool.aliaslint]" if source else "command line"

    def selectors(key):
        return validate_selectors(options[key], f"{where} {key}") if key in options else None

    def strings(key, default):
        value = options.get(key, default)
        if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
            raise ConfigError(f"{where} {key}: expected a list of strings")
        return tuple(value)

    file_layer = Selection(
        select=selectors("select"),
        extend_select=selectors("extend-select") or (),
        ignore=selectors("ignore") or (),
    )
    def per_file(key):
        table = options.get(key, {})
        if not isinstance(table, dict):
            raise ConfigError(f"{where} {key}: expected a table of pattern = [codes]")
        return tuple((pattern, validate_selectors(codes, f"{where} {key}.{pattern!r}"))
                     for pattern, codes in table.items())

    # As in ruff: --per-file-ignores replaces the configured table, the extend-* ones add.
    per_file_ignores = (
        *(cli.per_file_ignores if cli.per_file_ignores is not None
          else per_file("per-file-ignores")),
        *per_file("extend-per-file-ignores"), *cli.extend_per_file_ignores)
    respect_gitignore = options.get("respect-gitignore", True)
    if not isinstance(respect_gitignore, bool):
        raise ConfigError(f"{where} respect-gitignore: expected true or false")
    max_size = options.get("max-file-size", DEFAULT_MAX_FILE_SIZE)
    if isinstance(max_size, bool) or not isinstance(max_size, int) or max_size <= 0:
        raise ConfigError(f"{where} max-file-size: expected a positive number of bytes")
    parse_budget = options.get("parse-budget", PARSE_BUDGET)
    if isinstance(parse_budget, bool) or not isinstance(parse_budget, int) or parse_budget <= 0:
        raise ConfigError(f"{where} parse-budget: expected a positive number (parse work)")
    timeout = options.get("file-timeout", DEFAULT_FILE_TIMEOUT)
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) \
            or not 0 < timeout < 1e9:
        raise ConfigError(f"{where} file-timeout: expected a positive number of seconds")
    given = options.get("confidence", "high")
    if given not in ("high", "low"):
        raise ConfigError(f"{where} confidence: expected 'high' or 'low', got {given!r}")
    confidence: Confidence = "low" if given == "low" else "high"
    unused = options.get("report-unused-suppressions", False)
    if not isinstance(unused, bool):
        raise ConfigError(f"{where} report-unused-suppressions: expected true or false")
    cache_dir = options.get("cache-dir")
    if cache_dir is not None and (not isinstance(cache_dir, str) or not cache_dir.strip()):
        raise ConfigError(f"{where} cache-dir: expected a directory path")
    baseline = options.get("baseline")
    if baseline is not None and (not isinstance(baseline, str) or not baseline.strip()):
        raise ConfigError(f"{where} baseline: expected the path of a baseline file")
    target = options.get("target-version")
    target_version = parse_target_version(target) if target is not None else None
    if target is not None and target_version is None:
        raise ConfigError(f"{where} target-version: expected a Python version such as "
                          f"'py311', got {target!r}")
    unsafe_fixes = options.get("unsafe-fixes", False)
    if not isinstance(unsafe_fixes, bool):
        raise ConfigError(f"{where} unsafe-fixes: expected true or false")
    fixable = cli.fixable if cli.fixable is not None else selectors("fixable") or ("ALL",)
    policy = FixPolicy(
        unsafe_fixes=cli.unsafe_fixes if cli.unsafe_fixes is not None else unsafe_fixes,
        fixable=(*fixable, *(selectors("extend-fixable") or ()), *cli.extend_fixable),
        unfixable=(*(selectors("unfixable") or ()), *cli.unfixable),
        extend_safe=selectors("extend-safe-fixes") or (),
        extend_unsafe=selectors("extend-unsafe-fixes") or (),
    )
    settings = Settings(
        root=root,
        source=source,
        layers=(*inherited, file_layer, cli.selection),
        per_file_ignores=per_file_ignores,
        exclude=strings("exclude", DEFAULT_EXCLUDE),
        extend_exclude=strings("extend-exclude", ()),
        include=strings("include", DEFAULT_INCLUDE),
        extend_include=strings("extend-include", ()),
        respect_gitignore=respect_gitignore if cli.respect_gitignore is None
        else cli.respect_gitignore,
        cache_dir=root / Path(cache_dir).expanduser() if cache_dir else None,
        max_file_size=cli.max_file_size or max_size,
        parse_budget=parse_budget,
        file_timeout=float(timeout),
        confidence=cli.confidence or confidence,
        report_unused_suppressions=cli.report_unused_suppressions or unused,
        target_version=cli.target_version or target_version,
        fixes=policy,
        baseline=root / Path(baseline).expanduser() if baseline else None,
    )
    return replace(
        settings,
        rules=resolve_rules(settings.layers, settings.report_unused_suppressions),
    )


@dataclass(frozen=True)
class CliOptions:
    """Command-line options that override every config file."""

    selection: Selection = Selection()
    config: Path | None = None
    # (pattern, codes) pairs anchored at the working directory; None: the configured table.
    per_file_ignores: tuple[tuple[str, tuple[str, ...]], ...] | None = None
    extend_per_file_ignores: tuple[tuple[str, tuple[str, ...]], ...] = ()
    respect_gitignore: bool | None = None
    max_file_size: int | None = None
    confidence: Confidence | None = None
    report_unused_suppressions: bool = False
    isolated: bool = False
    force_exclude: bool = False
    target_version: Version | None = None
    unsafe_fixes: bool | None = None
    fixable: tuple[str, ...] | None = None  # replaces the configured list
    unfixable: tuple[str, ...] = ()  # added to it, as is extend_fixable
    extend_fixable: tuple[str, ...] = ()


class Resolver:
    """Finds and caches the settings for each directory."""

    def __init__(self, cli: CliOptions = CliOptions(), cwd: Path | None = None):
        self.cli = cli
        self.cwd = cwd or Path.cwd()
        self._fixed: Settings | None = None
        if cli.config is not None:
            path = cli.config.resolve()
            problem = config_file_problem(path)
            if problem is not None:
                raise ConfigError(f"{cli.config}: {problem}")
            self._fixed = settings_for_config(path, cli)
        elif cli.isolated:
            self._fixed = settings_from_options({}, None, self.cwd, cli)
        self._by_config = cache(self._load)
        self._by_dir: dict[Path, Settings] = {}
        self._nearest: dict[Path, Path | None] = {}  # directory -> its config file

    def _load(self, config: Path | None) -> Settings:
        if config is None:
            return settings_from_options({}, None, self.cwd, self.cli)
        return settings_for_config(config, self.cli)

    def for_directory(self, directory: Path) -> Settings:
        if self._fixed is not None:
            return self._fixed
        settings = self._by_dir.get(directory)
        if settings is None:
            settings = self._by_config(self._config_file(directory))
            self._by_dir[directory] = settings
        return settings

    def _config_file(self, directory: Path) -> Path | None:
        """The nearest aliaslint.toml, or pyproject.toml with [tool.aliaslint], at or above
        ``directory``; each folder is looked at once (a walk asks for every directory, and
        they share their parents)."""
        pending = []
        folder = directory
        while folder not in self._nearest:
            pending.append(folder)
            found = _config_in(folder)
            if found is not None or folder.parent == folder:
                self._nearest[folder] = found
                break
            folder = folder.parent
        nearest = self._nearest[folder]
        for below in pending:
            self._nearest[below] = nearest
        return nearest

    def for_file(self, path: Path) -> Settings:
        return self.for_directory(path.parent)


def excluded_anywhere(path: Path, settings: Settings) -> bool:
    """Is the file, or a directory between it and the config's root, excluded?"""
    return settings.is_excluded(path)
