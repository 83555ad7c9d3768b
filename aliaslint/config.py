"""Settings: the nearest ``[tool.aliaslint]`` above each checked file, plus the command line.

Rule selection follows ruff: a layer (the config file, then the command
line) may replace the selection (``select``), add to it (``extend-select``)
and remove from it (``ignore``); within a layer the most specific selector
wins and ``ignore`` wins a tie.  ``per-file-ignores`` applies last.
"""

from __future__ import annotations

import fnmatch
import os
import re
import stat
import sys
from dataclasses import dataclass, field, replace
from functools import cache
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on older Pythons only
    import tomli as tomllib

from aliaslint import registry
from aliaslint.diagnostics import UNUSED_SUPPRESSION, Applicability, Confidence
from aliaslint.screen import Version, parse_target_version

DEFAULT_EXCLUDE = (
    ".bzr", ".direnv", ".eggs", ".git", ".git-rewrite", ".hg", ".ipynb_checkpoints",
    ".mypy_cache", ".nox", ".pants.d", ".pyenv", ".pytest_cache", ".pytype", ".ruff_cache",
    ".svn", ".tox", ".venv", ".vscode", "__pypackages__", "__pycache__", "_build",
    "buck-out", "build", "dist", "node_modules", "site-packages", "venv",
)
# Files a directory walk picks up; `include` replaces these, `extend-include` adds to them.
DEFAULT_INCLUDE = ("*.py", "*.pyi", "*.ipynb")
DEFAULT_MAX_FILE_SIZE = 2 * 1024 * 1024
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
    cache_dir: Path | None = None  # as configured, resolved against ``root``
    max_file_size: int = DEFAULT_MAX_FILE_SIZE
    confidence: Confidence = "high"
    report_unused_suppressions: bool = False
    # The Python whose grammar files are checked against; None: the running interpreter.
    target_version: Version | None = None
    fixes: FixPolicy = FixPolicy()
    rules: frozenset[str] = field(default=frozenset(), compare=False)

    def rules_for(self, path: Path) -> frozenset[str]:
        """The codes enabled for ``path`` once per-file-ignores apply."""
        rules = self.rules
        relative = _relative(path, self.root)
        always = registry.always_on()
        for pattern, selectors in self.per_file_ignores:
            if _glob_match(pattern, relative, path.name):
                rules = frozenset(
                    code for code in rules
                    if code in always or _specificity(code, selectors) < 0
                )
        return rules

    def is_excluded(self, path: Path) -> bool:
        relative = _relative(path, self.root)
        return any(
            _glob_match(pattern, relative, path.name)
            for pattern in (*self.exclude, *self.extend_exclude)
        )

    def is_included(self, path: Path) -> bool:
        """Is ``path`` a file a directory walk should check?"""
        relative = _relative(path, self.root)
        return any(
            _glob_match(pattern, relative, path.name)
            for pattern in (*self.include, *self.extend_include)
        )


def _specificity(code: str, selectors) -> int:
    best = -1
    for selector in selectors:
        if selector == "ALL":
            best = max(best, 0)
        elif code.startswith(selector):
            best = max(best, len(selector))
    return best


def resolve_rules(layers: tuple[Selection, ...], report_unused: bool = False) -> frozenset[str]:
    rules = registry.rules()
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
    rules = registry.rules()
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
    "include", "extend-include", "cache-dir", "max-file-size", "confidence",
    "report-unused-suppressions", "target-version", "unsafe-fixes", "fixable", "unfixable",
    "extend-fixable", "extend-safe-fixes", "extend-unsafe-fixes",
}


def find_config_file(directory: Path) -> Path | None:
    """The nearest aliaslint.toml, or pyproject.toml with [tool.aliaslint], at or above."""
    for folder in (directory, *directory.parents):
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
        with pyproject.open("rb") as handle:
            data = handle.read(MAX_CONFIG_BYTES + 1)
    except OSError:
        return False
    # Cheap test first; only a real [tool.aliaslint] table counts.  A file that mentions
    # aliaslint is read as strictly as aliaslint.toml (not UTF-8, too large: an error).
    if b"aliaslint" not in data:
        return False
    return "aliaslint" in _read_toml(pyproject).get("tool", {})


# Far above any real configuration; bounds the parser's time and memory on hostile input.
MAX_CONFIG_BYTES = 1 << 20


def _read_toml(path: Path) -> dict:
    try:
        with path.open("rb") as handle:
            data = handle.read(MAX_CONFIG_BYTES + 1)
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
        if key not in _KEYS:
            hint = _closest(key)
            raise ConfigError(
                f"{path}: {prefix} unknown key {key!r}" + (f" (did you mean {hint!r}?)" if hint else "")
            )
    return options


def _closest(key: str) -> str | None:
    return close_match(key, _KEYS)


def close_match(given: str, choices) -> str | None:
    """The choice ``given`` was most likely meant to be, if one is close enough."""
    import difflib

    matches = difflib.get_close_matches(given, sorted(choices), n=1)
    return matches[0] if matches else None


def settings_from_options(options: dict, source: Path | None, root: Path,
                          cli: CliOptions) -> Settings:
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
    per_file = options.get("per-file-ignores", {})
    if not isinstance(per_file, dict):
        raise ConfigError(f"{where} per-file-ignores: expected a table of glob = [codes]")
    per_file_ignores = tuple(
        (pattern, validate_selectors(codes, f"{where} per-file-ignores.{pattern!r}"))
        for pattern, codes in per_file.items()
    )
    max_size = options.get("max-file-size", DEFAULT_MAX_FILE_SIZE)
    if isinstance(max_size, bool) or not isinstance(max_size, int) or max_size <= 0:
        raise ConfigError(f"{where} max-file-size: expected a positive number of bytes")
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
        layers=(file_layer, cli.selection),
        per_file_ignores=per_file_ignores,
        exclude=strings("exclude", DEFAULT_EXCLUDE),
        extend_exclude=strings("extend-exclude", ()),
        include=strings("include", DEFAULT_INCLUDE),
        extend_include=strings("extend-include", ()),
        cache_dir=root / Path(cache_dir).expanduser() if cache_dir else None,
        max_file_size=cli.max_file_size or max_size,
        confidence=cli.confidence or confidence,
        report_unused_suppressions=cli.report_unused_suppressions or unused,
        target_version=cli.target_version or target_version,
        fixes=policy,
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
            if not path.is_file():
                raise ConfigError(f"{cli.config}: config file not found")
            self._fixed = settings_from_options(load_config(path), path, path.parent, cli)
        elif cli.isolated:
            self._fixed = settings_from_options({}, None, self.cwd, cli)
        self._by_config = cache(self._load)
        self._by_dir: dict[Path, Settings] = {}

    def _load(self, config: Path | None) -> Settings:
        if config is None:
            return settings_from_options({}, None, self.cwd, self.cli)
        return settings_from_options(load_config(config), config, config.parent, self.cli)

    def for_directory(self, directory: Path) -> Settings:
        if self._fixed is not None:
            return self._fixed
        settings = self._by_dir.get(directory)
        if settings is None:
            settings = self._by_config(find_config_file(directory))
            self._by_dir[directory] = settings
        return settings

    def for_file(self, path: Path) -> Settings:
        return self.for_directory(path.parent)


def _relative(path: Path, root: Path) -> str:
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return path.as_posix()


def _glob_match(pattern: str, relative: str, name: str) -> bool:
    """A pattern without a slash matches the file or directory name; one with a
    slash matches the path relative to the config's directory (``*`` crosses
    directories, as in ruff's globs)."""
    pattern = pattern.rstrip("/")
    if "/" not in pattern:
        return fnmatch.fnmatchcase(name, pattern)
    pattern = pattern.removeprefix("./")
    if pattern.startswith("**/"):
        pattern = pattern[3:]
        return fnmatch.fnmatchcase(relative, pattern) or fnmatch.fnmatchcase(
            relative, "*/" + pattern
        )
    return fnmatch.fnmatchcase(relative, pattern)


def walk(paths, resolver: Resolver) -> tuple[list[tuple[Path, Settings]], list[tuple[Path, str]]]:
    """Expand the paths into (file, settings) pairs; also returns each path that cannot be
    checked, with the reason: a name that does not exist, a directory that cannot be read
    (named or met on the way down).

    A file named on the command line is checked whatever it is: a FIFO or a process
    substitution (``<(git show HEAD:x.py)``) is read as a stream.
    """
    files: list[tuple[Path, Settings]] = []
    problems: list[tuple[Path, str]] = []
    for raw in paths:
        path = Path(raw)
        absolute = path if path.is_absolute() else resolver.cwd / path
        try:
            is_directory = stat.S_ISDIR(absolute.stat().st_mode)
        except OSError as error:
            problems.append((absolute, _unreachable(error)))
            continue
        if is_directory:
            _walk_directory(absolute, resolver, files, problems)
            continue
        # A file named on the command line is checked even if excluded,
        # unless --force-exclude (pre-commit passes every staged file).
        settings = resolver.for_file(absolute)
        if not (resolver.cli.force_exclude and excluded_anywhere(absolute, settings)):
            files.append((absolute, settings))
    unique: dict[str, tuple[Path, Settings]] = {}
    for path, settings in files:
        unique.setdefault(os.path.normpath(path), (Path(os.path.normpath(path)), settings))
    return sorted(unique.values(), key=lambda item: str(item[0])), sorted(problems)


def _unreachable(error: OSError) -> str:
    if isinstance(error, FileNotFoundError):
        return "no such file or directory"
    return f"cannot access: {error.strerror or error}"


def excluded_anywhere(path: Path, settings: Settings) -> bool:
    """Is the file, or a directory between it and the config's root, excluded?"""
    try:
        parts = path.relative_to(settings.root).parts
    except ValueError:
        return settings.is_excluded(path)
    candidate = settings.root
    for part in parts:
        candidate = candidate / part
        if settings.is_excluded(candidate):
            return True
    return False


def _walk_directory(directory: Path, resolver: Resolver, out: list, problems: list) -> None:
    settings = resolver.for_directory(directory)
    try:
        entries = sorted(os.scandir(directory), key=lambda e: e.name)
    except OSError as error:
        problems.append((directory, f"cannot read directory: {error.strerror or error}"))
        return
    for entry in entries:
        path = Path(entry.path)
        if settings.is_excluded(path):
            continue
        try:
            if entry.is_dir(follow_symlinks=False):
                _walk_directory(path, resolver, out, problems)
            elif settings.is_included(path) and entry.is_file():
                out.append((path, settings))
        except OSError as error:
            problems.append((path, _unreachable(error)))
