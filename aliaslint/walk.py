"""From the paths on the command line to the files to check, each with its settings.

A directory walk skips what the settings exclude and, inside a git repository and unless
``respect-gitignore = false``, what git ignores: the ``.gitignore`` files of the
repository (those above the directory walked included), ``.git/info/exclude`` and the
global excludes file (``core.excludesFile``, else ``~/.config/git/ignore``), with git's
precedence (a deeper ``.gitignore`` overrides a shallower one, the last matching line of
a file wins, a file below an ignored directory stays ignored).  A file named on the
command line is checked whatever excludes or ignores it, unless ``--force-exclude``
applies the excludes; a directory named there is walked even when a pattern excludes it.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from aliaslint import patterns, verbose
from aliaslint.config import Resolver, Settings, excluded_anywhere
from aliaslint.diagnostics import display_path

Problems = list[tuple[Path, str]]


def walk(paths, resolver: Resolver) -> tuple[list[tuple[Path, Settings]], Problems]:
    """Expand the paths into (file, settings) pairs; also returns each path that cannot be
    checked, with the reason: a name that does not exist, a directory that cannot be read
    (named or met on the way down).

    A file named on the command line is checked whatever it is: a FIFO or a process
    substitution (``<(git show HEAD:x.py)``) is read as a stream.
    """
    files: list[tuple[Path, Settings]] = []
    problems: Problems = []
    for raw in paths:
        path = Path(raw)
        absolute = path if path.is_absolute() else resolver.cwd / path
        try:
            is_directory = stat.S_ISDIR(absolute.stat().st_mode)
        except OSError as error:
            problems.append((absolute, _unreachable(error)))
            continue
        if is_directory:
            _Walk(absolute, resolver, files, problems).run()
            continue
        # A file named on the command line is checked even if excluded,
        # unless --force-exclude (pre-commit passes every staged file).
        settings = resolver.for_file(absolute)
        if resolver.cli.force_exclude and excluded_anywhere(absolute, settings):
            verbose.note(f"skipped {display_path(absolute, resolver.cwd)}: excluded "
                         f"(--force-exclude, {_config_name(settings, resolver.cwd)})")
        else:
            files.append((absolute, settings))
    unique: dict[str, tuple[Path, Settings]] = {}
    for path, settings in files:
        unique.setdefault(os.path.normpath(path), (Path(os.path.normpath(path)), settings))
    return sorted(unique.values(), key=lambda item: str(item[0])), sorted(problems)


class WriteScope:
    """Which checked files ``--fix`` may write.

    Symbolic links to files are checked wherever they point, whether named on the
    command line or met in a walk (a walk follows no link to a directory, and skips a
    link whose target is not a regular file: dangling, a loop, a directory, a FIFO).  A
    fix may write a file named on the command line, or one whose real path (links
    resolved) lies inside a directory named there: a link in the tree to a file elsewhere
    is checked but not written.
    """

    def __init__(self, paths, cwd: Path):
        self.roots: list[str] = []
        self.named: set[str] = set()
        for raw in paths:
            absolute = os.path.normpath(os.path.join(cwd, raw))
            if os.path.isdir(absolute):
                self.roots.append(os.path.realpath(absolute))
            else:
                self.named.add(absolute)

    def refusal(self, path: Path) -> str | None:
        """Why ``path`` may not be written, or None."""
        if os.path.normpath(path) in self.named:
            return None
        real = os.path.realpath(path)
        if any(real == root or real.startswith(root.rstrip(os.sep) + os.sep)
               for root in self.roots):
            return None
        return (f"it is a symbolic link to {real}, outside the checked directories "
                "(name the link on the command line to fix it there)")


def _unreachable(error: OSError) -> str:
    if isinstance(error, FileNotFoundError):
        return "no such file or directory"
    return f"cannot access: {error.strerror or error}"


def _config_name(settings: Settings, cwd: Path) -> str:
    return display_path(settings.source, cwd) if settings.source else "the defaults"


@dataclass(frozen=True)
class Ignores:
    """What git ignores below a directory: its patterns over absolute paths, lowest
    precedence first, with the file and line each came from."""

    lines: tuple[str, ...] = ()
    origins: tuple[str, ...] = ()
    repository: Path | None = None

    def with_file(self, file: Path) -> Ignores:
        """These, then the patterns of the ignore file ``file`` (relative to its directory,
        or to the repository for .git/info/exclude and the global file)."""
        base = file.parent if file.name == ".gitignore" else self.repository or file.parent
        lines, origins = list(self.lines), list(self.origins)
        for number, line in _pattern_lines(file):
            lines.append(patterns.anchor(line, base, names_anywhere=False))
            origins.append(f"{file}:{number}")
        return Ignores(tuple(lines), tuple(origins), self.repository)


def _pattern_lines(file: Path) -> list[tuple[int, str]]:
    try:
        text = file.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    found = []
    for number, line in enumerate(text.splitlines(), 1):
        # Trailing spaces do not count unless escaped; a `#` line is a comment.
        line = line.rstrip(" ") if not line.endswith("\\ ") else line
        if line and not line.startswith("#"):
            found.append((number, line))
    return found


def repository_ignores(repository: Path) -> Ignores:
    """The global excludes file and .git/info/exclude of the repository at ``repository``."""
    ignores = Ignores(repository=repository)
    global_file = _global_excludes_file()
    if global_file is not None:
        ignores = ignores.with_file(global_file)
    git_dir = _git_dir(repository)
    if git_dir is not None:
        ignores = ignores.with_file(git_dir / "info" / "exclude")
    return ignores


def _git_dir(repository: Path) -> Path | None:
    """The directory that holds info/exclude: ``.git``, or for a worktree or submodule
    (a ``.git`` file saying ``gitdir: ...``) that directory's common directory."""
    dot_git = repository / ".git"
    if os.path.isdir(dot_git):
        return dot_git
    try:
        text = dot_git.read_text(encoding="utf-8").strip()
    except OSError:
        return None
    if not text.startswith("gitdir:"):
        return None
    git_dir = (repository / text[len("gitdir:"):].strip()).resolve()
    try:
        common = (git_dir / "commondir").read_text(encoding="utf-8").strip()
    except OSError:
        return git_dir
    return (git_dir / common).resolve()


@cache
def _global_excludes_file() -> Path | None:
    """``core.excludesFile`` of the user's git configuration, else git's default."""
    home = Path.home()
    xdg = Path(os.environ.get("XDG_CONFIG_HOME") or home / ".config")
    configured = None
    for config in (xdg / "git" / "config", home / ".gitconfig"):  # the later one wins
        configured = _excludes_file_setting(config) or configured
    path = Path(os.path.expanduser(configured)) if configured else xdg / "git" / "ignore"
    return path if os.path.isfile(path) else None


def _excludes_file_setting(config: Path) -> str | None:
    """A plain reading of ``[core] excludesFile = PATH`` (no includes or conditions)."""
    try:
        text = config.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    section, found = "", None
    for raw in text.splitlines():
        line = raw.strip()
        if line.startswith("["):
            section = line.strip("[]").strip().lower()
        elif section == "core" and "=" in line:
            name, _, value = line.partition("=")
            if name.strip().lower() == "excludesfile":
                found = value.strip().strip('"')
    return found


def ignores_above(directory: Path) -> Ignores:
    """What git ignores in ``directory`` from the files above it: those of the repository
    it is in (nothing outside one), and the .gitignore files from the repository's top
    down to its parent."""
    chain = [directory, *directory.parents]
    for index, folder in enumerate(chain):
        if os.path.exists(folder / ".git"):  # False also where it cannot be searched
            ignores = repository_ignores(folder)
            for above in reversed(chain[1:index + 1]):
                if os.path.isfile(above / ".gitignore"):
                    ignores = ignores.with_file(above / ".gitignore")
            return ignores
    return Ignores()


class _Walk:
    """One directory named on the command line, walked."""

    def __init__(self, root: Path, resolver: Resolver, out: list, problems: Problems):
        self.root, self.resolver, self.out, self.problems = root, resolver, out, problems
        self._excludes: dict[tuple[str, ...], tuple[str, ...]] = {}

    def run(self) -> None:
        ignores = ignores_above(self.root)
        # Patterns that ignore the named directory itself do not apply below it.
        lines = patterns.without_matches_of(ignores.lines, self.root)
        if lines != ignores.lines:
            kept = [index for index, line in enumerate(ignores.lines) if line in lines]
            ignores = Ignores(lines, tuple(ignores.origins[i] for i in kept),
                              ignores.repository)
        self.directory(self.root, ignores)

    def excludes(self, settings: Settings) -> tuple[str, ...]:
        found = self._excludes.get(settings.excludes)
        if found is None:
            found = patterns.without_matches_of(settings.excludes, self.root, self.root)
            self._excludes[settings.excludes] = found
        return found

    def directory(self, directory: Path, ignores: Ignores) -> None:
        settings = self.resolver.for_directory(directory)
        try:
            entries = sorted(os.scandir(directory), key=lambda e: e.name)
        except OSError as error:
            self.problems.append((directory, f"cannot read directory: {error.strerror or error}"))
            return
        names = {entry.name for entry in entries}
        if ".git" in names and directory != ignores.repository:
            ignores = repository_ignores(directory)  # a repository of its own
        if ".gitignore" in names and ignores.repository is not None:
            ignores = ignores.with_file(directory / ".gitignore")
        excludes = self.excludes(settings)
        exclude_spec = patterns.spec(excludes, self.root)
        include_spec = patterns.spec(settings.includes, self.root)
        ignore_spec = patterns.spec(ignores.lines) if settings.respect_gitignore and \
            ignores.lines else None
        for entry in entries:
            path = Path(entry.path)
            try:
                is_dir = entry.is_dir(follow_symlinks=False)
                key = patterns.key(path, is_dir)
                if exclude_spec.match_file(key):
                    self.skipped(path, is_dir, settings, excludes)
                elif ignore_spec is not None and ignore_spec.match_file(key):
                    self.skipped(path, is_dir, settings, None, ignores)
                elif is_dir:
                    self.directory(path, ignores)
                elif include_spec.match_file(key) and self.regular_file(entry):
                    self.out.append((path, settings))
            except OSError as error:
                self.problems.append((path, _unreachable(error)))

    def regular_file(self, entry: os.DirEntry) -> bool:
        """Is the entry a regular file, or a symbolic link to one?  A link that leads
        nowhere (dangling, a loop) or to anything else is skipped, as a directory link is."""
        if not entry.is_symlink():
            return entry.is_file(follow_symlinks=False)
        try:
            regular = stat.S_ISREG(os.stat(entry.path).st_mode)
        except OSError as error:
            verbose.note(f"skipped {display_path(entry.path, self.resolver.cwd)}: a symbolic "
                         f"link that leads nowhere ({error.strerror or error})")
            return False
        if not regular:
            verbose.note(f"skipped {display_path(entry.path, self.resolver.cwd)}: a symbolic "
                         "link to something other than a file")
        return regular

    def skipped(self, path: Path, is_dir: bool, settings: Settings, excludes,
                ignores: Ignores | None = None) -> None:
        if not verbose.enabled:
            return
        shown = display_path(path, self.resolver.cwd) + ("/" if is_dir else "")
        if ignores is not None:
            spec = patterns.spec(ignores.lines).check_file(patterns.key(path, is_dir))
            where = ignores.origins[spec.index] if spec.index is not None else "git"
            verbose.note(f"skipped {shown}: ignored by {where}")
        else:
            pattern = patterns.which(excludes, path, is_dir, self.root)
            verbose.note(f"skipped {shown}: excluded by {pattern!r} "
                         f"({_config_name(settings, self.resolver.cwd)})")
