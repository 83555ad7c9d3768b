"""Turn diagnostics into text: one small renderer per output format.

Diagnostics reach ``render`` filtered, sorted, and with paths already relative to
the working directory; each renderer returns the whole text to print.  Summary
lines ("Found N findings") belong to the command line, not to a format.

A low-confidence finding (reported with ``--confidence low``) says so in every format:
``(low confidence)`` after the code in ``full`` and ``concise``, ``"confidence": "low"``
in JSON and SARIF, a warning rather than an error in SARIF and GitHub annotations, and
severity ``minor`` rather than ``major`` in a GitLab Code Quality report, ``(low confidence)``
after the code in the HTML report.
"""

from __future__ import annotations

import json
import os
import re
import unicodedata
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePath
from typing import TYPE_CHECKING
from urllib.parse import quote

from aliaslint.registry import rule_url
from aliaslint.diagnostics import Diagnostic, Position
from aliaslint.headline import HEADLINE_LENGTH

if TYPE_CHECKING:
    # The rule documents (SARIF) and fingerprints (GitLab) are loaded by the formats that
    # need them: the terminal's report of one file does not.
    from aliaslint.catalog import RuleDoc

FORMATS = ("full", "concise", "json", "sarif", "github", "gitlab", "html")

HOMEPAGE = "https://github.com/aliaslint/aliaslint"
SARIF_SCHEMA = (
    "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
)
# Relative paths in SARIF are resolved against this base, which the log maps to the cwd.
SRCROOT = "%SRCROOT%"
# What `full` and `concise` put after the code of a low-confidence finding.
LOW_CONFIDENCE = "(low confidence)"
# Source lines are shown with tabs widened to this many columns, so carets line up.
TAB_WIDTH = 4

# Called as ``source_lines(filename)``, or ``source_lines(filename, cell)`` for the rows of
# one notebook cell; returns the lines, or None when they cannot be shown.
SourceLines = Callable[..., "list[str] | None"]


def render(
    fmt: str,
    diagnostics: Sequence[Diagnostic],
    *,
    source_lines: SourceLines,
    color: bool = False,
    cwd: Path | None = None,
    notes: Mapping[int, str] | None = None,
    command: str = "aliaslint",
) -> str:
    """The text for ``diagnostics`` in output format ``fmt`` (one of ``FORMATS``); the
    ``html`` page shows the ``notes`` on static findings (by ``id`` of the finding) and is
    titled after ``command``."""
    if fmt == "full":
        return _render_full(diagnostics, _remembering(source_lines), _Palette(color))
    if fmt == "concise":
        return _render_concise(diagnostics, _Palette(color))
    if fmt == "json":
        return json.dumps([d.to_json() for d in diagnostics], indent=2) + "\n"
    if fmt == "sarif":
        return _render_sarif(diagnostics, Path.cwd() if cwd is None else cwd)
    if fmt == "github":
        return "".join(_github_command(d) + "\n" for d in diagnostics)
    if fmt == "gitlab":
        return json.dumps(_gitlab_issues(diagnostics, _remembering(source_lines)), indent=2) + "\n"
    if fmt == "html":
        from aliaslint import html_report

        return html_report.render(diagnostics, source_lines, notes, command)
    raise ValueError(f"unknown output format {fmt!r}; expected one of {', '.join(FORMATS)}")


def render_statistics(diagnostics: Sequence[Diagnostic], fmt: str = "full",
                      applies: Callable[[Diagnostic], bool] | None = None) -> str:
    """How often each code fired, most frequent first (like ``ruff --statistics``): a table,
    or with ``fmt`` ``json`` a list of ``{code, name, count, fixable}`` objects.

    A code is fixable when this run's settings would apply a fix of one of its findings
    (``applies``; by default, a safe fix): ``[*]`` before its name, as ruff marks it.  Unsafe
    fixes left out by the settings are counted under the table."""
    applies = applies or _safe_fix
    counts = Counter(d.code for d in diagnostics)
    names = {d.code: d.name for d in diagnostics}
    rows = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    fixable = {d.code for d in diagnostics if applies(d)}
    if fmt == "json":
        return json.dumps([{"code": code, "name": names[code], "count": count,
                            "fixable": code in fixable} for code, count in rows], indent=2) + "\n"
    if not counts:
        return ""
    count_width = len(str(rows[0][1]))
    code_width = max(len(code) for code in counts)
    marks = {code: ("[*] " if code in fixable else "[ ] ") if fixable else "" for code in counts}
    table = "".join(
        f"{count:>{count_width}}\t{code:<{code_width}}\t{marks[code]}{names[code]}\n"
        for code, count in rows
    )
    if fixable:
        table += "[*] fixable with the `--fix` option\n"
    hidden = hidden_fixes(diagnostics, applies)
    if hidden:
        table += f"{hidden_fixes_note(hidden)}.\n"
    return table


def _safe_fix(d: Diagnostic) -> bool:
    return d.fix is not None and d.fix.applicability == "safe"


def hidden_fixes(diagnostics: Sequence[Diagnostic], applies: Callable[[Diagnostic], bool]) -> int:
    """How many findings have an unsafe fix that ``applies`` (this run's settings) leaves out."""
    return sum(1 for d in diagnostics
               if d.fix is not None and d.fix.applicability == "unsafe" and not applies(d))


def hidden_fixes_note(hidden: int) -> str:
    """"2 hidden fixes can be enabled with the `--unsafe-fixes` option", as ruff says it."""
    return (f"{hidden} hidden fix{'es' if hidden != 1 else ''} can be enabled with the "
            "`--unsafe-fixes` option")


# --- shared pieces --------------------------------------------------------------------------


def _where(filename: str, location: Position, cell: int | None = None) -> str:
    """``path:row:col``, or just ``path`` for findings about a whole file (row 0); in a
    notebook ``path:cell N:row:col``, the row counted within the cell."""
    if cell is not None:
        filename = f"{filename}:cell {cell}"
    if location.row < 1:
        return filename
    return f"{filename}:{location.row}:{location.column}"


def _shown_where(filename: str, location: Position, cell: int | None = None) -> str:
    """``_where`` for a terminal: the file name with what it cannot show escaped."""
    return _where(shown_path(filename), location, cell)


def shown_path(filename: str) -> str:
    """A file name as the text formats print it: control characters (newlines, escape
    sequences), bidi overrides, line separators and undecodable bytes written as ``%XX``
    (UTF-8 bytes), and then ``%`` too, as GitHub's workflow commands escape their text, so a
    name can neither break a line nor act on the terminal; a name with none of these (``100%.py``
    included) is printed as it is."""
    if not any(unicodedata.category(ch) in _UNSHOWABLE for ch in filename):
        return filename
    return _percent_escaped(filename, lambda ch: unicodedata.category(ch) in _UNSHOWABLE)


def _percent_escaped(text: str, escape: Callable[[str], bool]) -> str:
    """``text`` with ``%`` and every character ``escape`` picks written as ``%XX``."""
    return "".join(_percent(ch) if ch == "%" or escape(ch) else ch for ch in text)


def _percent(ch: str) -> str:
    try:  # an undecodable byte of a file name comes back as the byte it was
        data = ch.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        data = ch.encode("utf-8", "surrogatepass")
    return "".join(f"%{byte:02X}" for byte in data)


def _message_lines(message: str) -> list[str]:
    return [line.strip() for line in message.splitlines() if line.strip()]


def _level(diagnostic: Diagnostic) -> str:
    return "error" if diagnostic.confidence == "high" else "warning"


def _code(d: Diagnostic, palette: _Palette, name: bool = False) -> str:
    """The code as the text formats show it (``AL201``), the rule's name in brackets after it
    when ``name``, and after those ``(low confidence)`` for a low-confidence finding."""
    high = d.confidence == "high"
    text = palette.code(d.code) if high else palette.low(d.code)
    if name:
        text += f" [{d.name}]"
    return text if high else f"{text} {palette.low(LOW_CONFIDENCE)}"


def _remembering(source_lines: SourceLines) -> SourceLines:
    """``source_lines`` asked at most once per file (or cell), however many findings it holds."""
    seen: dict[tuple[str, int | None], list[str] | None] = {}

    def lines(filename: str, cell: int | None = None) -> list[str] | None:
        if (filename, cell) not in seen:
            seen[filename, cell] = (
                source_lines(filename) if cell is None else source_lines(filename, cell)
            )
        return seen[filename, cell]

    return lines


class _Palette:
    """ANSI styling that is the identity when color is off."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled

    def _paint(self, text: str, sgr: str) -> str:
        return f"\x1b[{sgr}m{text}\x1b[0m" if self.enabled and text else text

    def strong(self, text: str) -> str:
        return self._paint(text, "1")

    def code(self, text: str) -> str:
        return self._paint(text, "1;31")

    def low(self, text: str) -> str:
        return self._paint(text, "1;33")

    def gutter(self, text: str) -> str:
        return self._paint(text, "1;36")

    def primary(self, text: str) -> str:
        return self._paint(text, "1;31")

    def secondary(self, text: str) -> str:
        return self._paint(text, "1;34")


# --- concise --------------------------------------------------------------------------------


# A headline longer than this (one not written to fit, such as a run-time finding's) loses
# its details: quoted code is cut, then asides, then what follows a colon.
CONCISE_LENGTH = HEADLINE_LENGTH
# Quoted code in such a headline is cut to this many characters.
CONCISE_CODE = 30


def _render_concise(diagnostics: Sequence[Diagnostic], palette: _Palette) -> str:
    return "".join(
        f"{palette.strong(_shown_where(d.filename, d.location, d.cell))}: {_code(d, palette)} "
        f"{concise_message(d.message)}{_processes(d)}\n"
        for d in diagnostics
    )


def _processes(d: Diagnostic) -> str:
    """The processes of a job (ranks, DataLoader workers) that hit a runtime finding."""
    return f" (in {', '.join(d.processes)})" if d.processes else ""


def concise_message(message: str) -> str:
    """A message's headline, for one line: its first part (up to the first `` · ``: what
    follows says why and what to do, which ``full`` and the rule's documentation keep). The
    rules write headlines that fit (``aliaslint.headline``); a longer one has its quoted code
    cut short, then loses parenthesised asides, then the explanation after its first colon.
    ASCII punctuation only."""
    lines = _message_lines(message)
    headline = lines[0].split(" · ")[0] if lines else ""
    pieces = headline.split("`")
    if len(pieces) % 2 == 0:  # an unpaired backtick: no code to tell apart
        pieces = [headline.replace("`", "'")]
    if len(headline) > CONCISE_LENGTH:
        for index in range(1, len(pieces), 2):
            code = pieces[index].replace("…", "...")
            pieces[index] = code if len(code) <= CONCISE_CODE else \
                code[:CONCISE_CODE - 3] + "..."
    for shorten in (_without_asides, _before_colon):
        if len("`".join(pieces)) <= CONCISE_LENGTH:
            break
        pieces = shorten(pieces)
    text = " ".join("`".join(pieces).split())
    return text.replace(" ,", ",").replace("…", "...").replace("·", "-").rstrip(" ,;")


def _without_asides(pieces: list[str]) -> list[str]:
    """The pieces (prose, then code, alternately) without what parentheses in the prose
    enclose, code inside them included."""
    kept, depth = [], 0
    for index, piece in enumerate(pieces):
        if index % 2:
            kept.append(piece if depth == 0 else None)
            continue
        prose = []
        for char in piece:
            if char == "(":
                depth += 1
            elif char == ")" and depth:
                depth -= 1
            elif depth == 0:
                prose.append(char)
        kept.append("".join(prose))
    # Code that was inside an aside goes, with the prose around it joined up.
    joined: list[str] = [kept[0] or ""]
    for index in range(1, len(kept), 2):
        if kept[index] is None:
            joined[-1] += kept[index + 1] or ""
        else:
            joined += [kept[index] or "", kept[index + 1] or ""]
    return joined


def _before_colon(pieces: list[str]) -> list[str]:
    for index in range(0, len(pieces), 2):
        cut = pieces[index].find(": ")
        if cut >= 0:
            return [*pieces[:index], pieces[index][:cut]]
    return pieces


# --- full -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Span:
    filename: str
    location: Position
    end_location: Position
    label: str
    primary: bool
    cell: int | None = None


@dataclass(frozen=True)
class _Mark:
    """An underline on one row, from 1-based column ``start`` up to (not including) ``end``."""

    row: int
    start: int
    end: int
    label: str
    primary: bool


def _render_full(
    diagnostics: Sequence[Diagnostic], source_lines: SourceLines, palette: _Palette
) -> str:
    # A blank line closes every finding, so the command's summary follows without its own.
    return "".join(_full_block(d, source_lines, palette) + "\n\n" for d in diagnostics)


def _full_block(d: Diagnostic, source_lines: SourceLines, palette: _Palette) -> str:
    title, *explanation = _message_lines(d.message) or [""]
    out = [
        f"{palette.strong(_shown_where(d.filename, d.location, d.cell))}: "
        f"{_code(d, palette, name=True)} {palette.strong(title)}{_processes(d)}"
    ]
    spans = [_Span(d.filename, d.location, d.end_location, d.code, True, d.cell)]
    spans += sorted(
        (_Span(r.filename, r.location, r.end_location, r.message, False, r.cell)
         for r in d.related),
        key=lambda span: (span.cell or 0, span.location, span.end_location),
    )
    width = len(str(max(max(s.location.row, s.end_location.row) for s in spans)))
    pad = " " * width

    # The primary file (or notebook cell) first, then the others a finding points into.
    primary = (d.filename, d.cell)
    files = sorted({(s.filename, s.cell) for s in spans},
                   key=lambda key: (key != primary, key[0], key[1] or 0))
    unshown: list[_Span] = []
    for filename, cell in files:
        file_spans = [s for s in spans if (s.filename, s.cell) == (filename, cell)]
        # A file reported only as a whole (row 0) may be unreadable or huge: leave it unread.
        has_rows = any(s.location.row >= 1 for s in file_spans)
        lines = (source_lines(filename, cell) if has_rows else None) or []
        shown: list[_Span] = []
        marks: list[_Mark] = []
        for span in file_spans:
            span_marks = _marks(lines, span)
            if span_marks is None:
                unshown.append(span)
            else:
                shown.append(span)
                marks += span_marks
        if not shown:
            continue
        if (filename, cell) != primary:
            first = min(s.location for s in shown)
            out.append(pad + palette.gutter("::: ") + _shown_where(filename, first, cell))
        out.append(palette.gutter(pad + " |"))
        out += _snippet(lines, marks, width, palette)
        out.append(palette.gutter(pad + " |"))

    # What no frame can show is still said, so a related location is never lost.
    notes = [
        ("note", f"{_shown_where(s.filename, s.location, s.cell)}: {s.label}")
        for s in unshown if not s.primary
    ]
    for line in explanation:
        kind, colon, rest = line.partition(":")
        notes.append((kind, rest.strip()) if colon and kind in ("help", "note") else ("note", line))
    if d.fix is not None and d.fix.edits:
        how = {"safe": "`--fix`", "unsafe": "`--fix --unsafe-fixes`"}.get(d.fix.applicability)
        notes.append(("help", f"{d.fix.message} ({d.fix.applicability} fix"
                      + (f", applied by {how})" if how else ", not applied automatically)")))
    for kind, text in notes:
        out.append(f"{pad} {palette.gutter('=')} {palette.strong(kind)}: {text}")
    return "\n".join(line.rstrip() for line in out)


def _marks(lines: list[str], span: _Span) -> list[_Mark] | None:
    """The underlines for ``span``, or None when its lines are not in ``lines``.

    A span over several rows underlines its first row to the end and its last row from
    the indentation; the rows between are left to ``_snippet``.
    """
    start, end = span.location, max(span.end_location, span.location)
    if not 1 <= start.row <= len(lines):  # row 0, a missing file, or a stale line number
        return None
    if end.row > len(lines):
        end = Position(len(lines), len(lines[-1]) + 1)
    if end.row > start.row and end.column == 1:
        # A span that ends at the start of a row really ends with the row before.
        end = Position(end.row - 1, len(lines[end.row - 2]) + 1)
    if end.row == start.row:
        return [_Mark(start.row, start.column, end.column, span.label, span.primary)]
    last = lines[end.row - 1]
    indent = len(last) - len(last.lstrip()) + 1
    return [
        _Mark(start.row, start.column, len(lines[start.row - 1]) + 1, "", span.primary),
        _Mark(end.row, min(indent, end.column), end.column, span.label, span.primary),
    ]


def _snippet(lines: list[str], marks: list[_Mark], width: int, palette: _Palette) -> list[str]:
    out: list[str] = []
    previous = None
    for row in sorted({mark.row for mark in marks}):
        if previous is not None and row - previous == 2:
            out.append(_source_row(previous + 1, lines[previous], width, palette))
        elif previous is not None and row - previous > 2:
            out.append(palette.gutter("..."))
        out.append(_source_row(row, lines[row - 1], width, palette))
        row_marks = sorted(
            (m for m in marks if m.row == row), key=lambda m: (m.start, not m.primary)
        )
        out += [_underline(lines[row - 1], mark, width, palette) for mark in row_marks]
        previous = row
    return out


def _source_row(row: int, line: str, width: int, palette: _Palette) -> str:
    return palette.gutter(f"{row:>{width}} |") + " " + _printable(line)


def _underline(line: str, mark: _Mark, width: int, palette: _Palette) -> str:
    padded = line + " " * max(0, mark.end - 1 - len(line))
    offset = _display_width(padded[: mark.start - 1])
    length = max(1, _display_width(padded[mark.start - 1 : mark.end - 1]))
    paint = palette.primary if mark.primary else palette.secondary
    underline = ("^" if mark.primary else "-") * length
    text = f"{underline} {mark.label}" if mark.label else underline
    return palette.gutter(" " * width + " |") + " " * (offset + 1) + paint(text)


def _printable(text: str) -> str:
    """``text`` as the terminal is given it: tabs widened, and control characters, bidi
    overrides, line separators and lone surrogates shown as U+FFFD so they cannot act."""
    return "".join(
        " " * TAB_WIDTH if ch == "\t"
        else "\ufffd" if unicodedata.category(ch) in _UNSHOWABLE
        else ch
        for ch in text
    )


_UNSHOWABLE = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp"})


def _display_width(text: str) -> int:
    return sum(
        0 if unicodedata.combining(ch) else 2 if unicodedata.east_asian_width(ch) in "WF" else 1
        for ch in _printable(text)
    )


# --- github ---------------------------------------------------------------------------------


def _github_command(d: Diagnostic) -> str:
    """A GitHub Actions ``::error``/``::warning`` workflow command that annotates the diff."""
    properties: dict[str, object] = {
        "title": f"aliaslint ({d.code})", "file": PurePath(d.filename).as_posix()}
    # Rows in a notebook count within a cell, not in the file's JSON: GitHub could only
    # misplace them, so the cell and row go into the message instead.
    if d.location.row >= 1 and d.cell is None:
        end = max(d.end_location, d.location)
        properties.update(
            line=d.location.row, col=d.location.column, endLine=end.row, endColumn=end.column
        )
    # Annotations have no related locations, so they are spelled out under the message.
    where = f"{_where('', d.location, d.cell).lstrip(':')}: " if d.cell is not None else ""
    text = "\n".join(
        [f"{where}{d.code} {d.message}{_processes(d)}"]
        + [f"{_where(r.filename, r.location, r.cell)}: {r.message}" for r in d.related]
    )
    rendered = ",".join(
        f"{key}={_github_escape(str(value), True)}" for key, value in properties.items()
    )
    return f"::{_level(d)} {rendered}::{_github_escape(text, False)}"


def _github_escape(text: str, is_property: bool) -> str:
    special = "\r\n:," if is_property else "\r\n"
    return _percent_escaped(text, special.__contains__)


# --- gitlab ---------------------------------------------------------------------------------

def _gitlab_issues(diagnostics: Sequence[Diagnostic], source_lines: SourceLines) -> list[dict]:
    """A GitLab Code Quality report: one issue per finding, its severity from its confidence."""
    issues = []
    import hashlib

    from aliaslint.baseline import fingerprints

    for d, print_ in zip(diagnostics, fingerprints(diagnostics, source_lines)):
        path = PurePath(d.filename).as_posix()
        # Rows in a notebook count within a cell: the cell and row go into the description,
        # and the issue points at the file's first line (as for findings about a whole file).
        where = f"{_where('', d.location, d.cell).lstrip(':')}: " if d.cell is not None else ""
        # Code Quality issues have no related locations: they are spelled out instead.
        description = " - ".join(
            [f"{where}{d.code} {' - '.join(_message_lines(d.message))}"]
            + [f"{_where(r.filename, r.location, r.cell)}: {r.message}" for r in d.related]
        )
        if d.location.row >= 1 and d.cell is None:
            lines = {"begin": d.location.row, "end": max(d.end_location, d.location).row}
        else:
            lines = {"begin": 1}
        # The baseline's fingerprint (the same wherever the finding's line moves), made
        # unique in the project by the file.
        fingerprint = hashlib.sha256(f"{path}\0{print_}".encode("utf-8", "surrogatepass")
                                     ).hexdigest()[:32]
        issues.append({
            "description": description,
            "check_name": d.code,
            "fingerprint": fingerprint,
            "severity": "major" if d.confidence == "high" else "minor",
            "location": {"path": path, "lines": lines},
        })
    return issues


# --- sarif ----------------------------------------------------------------------------------


def _render_sarif(diagnostics: Sequence[Diagnostic], cwd: Path) -> str:
    from aliaslint import catalog

    docs = catalog.load_docs()
    # Only rules with results are described: each carries its whole documentation, and a
    # log that lists every rule would grow with the catalog rather than with the findings.
    codes = sorted({d.code for d in diagnostics})
    rule_index = {code: index for index, code in enumerate(codes)}
    root = Path(cwd).absolute().as_uri()
    root = root if root.endswith("/") else root + "/"
    log = {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "aliaslint",
                        "version": _tool_version(),
                        "informationUri": HOMEPAGE,
                        "rules": [_sarif_rule(code, docs.get(code)) for code in codes],
                    }
                },
                "originalUriBaseIds": {SRCROOT: {"uri": root}},
                # Columns count characters (code points), as Python strings do.
                "columnKind": "unicodeCodePoints",
                "results": [_sarif_result(d, rule_index[d.code]) for d in diagnostics],
            }
        ],
    }
    return json.dumps(log, indent=2) + "\n"


def _tool_version() -> str:
    try:
        from aliaslint import __version__
    except ImportError:
        import importlib.metadata  # only SARIF says which version made it

        try:
            return importlib.metadata.version("aliaslint")
        except importlib.metadata.PackageNotFoundError:
            return "0"
    return __version__


def _sarif_rule(code: str, rule: RuleDoc | None) -> dict:
    descriptor: dict = {"id": code}
    if rule is not None:
        descriptor.update(
            name=rule.name,
            shortDescription={"text": rule.summary},
            fullDescription={"text": _lead_paragraph(rule)},
            help={"text": rule.text, "markdown": rule.text},
        )
    descriptor.update(helpUri=rule_url(code), defaultConfiguration={"level": "error"})
    return descriptor


def _lead_paragraph(rule: RuleDoc) -> str:
    """The first paragraph of the rule's first section ("What it does"), else its summary."""
    _, heading, body = rule.text.partition("\n## ")
    if heading:
        section = body.partition("\n")[2].strip()
        paragraph = " ".join(section.partition("\n\n")[0].split())
        if paragraph:
            return paragraph
    return rule.summary


def _sarif_result(d: Diagnostic, rule_index: int) -> dict:
    result: dict = {
        "ruleId": d.code,
        "ruleIndex": rule_index,
        "level": _level(d),
        "message": {"text": d.message},
        "locations": [_sarif_location(d.filename, d.location, d.end_location, d.cell)],
    }
    if d.related:
        result["relatedLocations"] = [
            {
                "id": index,
                "message": {"text": r.message},
                **_sarif_location(r.filename, r.location, r.end_location, r.cell),
            }
            for index, r in enumerate(d.related)
        ]
    if d.fix is not None and d.fix.edits:
        result["fixes"] = [
            {
                "description": {"text": d.fix.message},
                "artifactChanges": [
                    {
                        "artifactLocation": _sarif_artifact(d.filename),
                        "replacements": [
                            {
                                "deletedRegion": _sarif_region(edit.location, edit.end_location),
                                "insertedContent": {"text": edit.content},
                            }
                            for edit in d.fix.edits
                        ],
                    }
                ],
                "properties": {"applicability": d.fix.applicability},
            }
        ]
    result["properties"] = {"confidence": d.confidence}
    if d.status is not None:
        result["properties"]["status"] = d.status
    if d.cell is not None:
        result["properties"]["cell"] = d.cell
    if d.processes:
        result["properties"]["processes"] = list(d.processes)
    return result


def _sarif_location(filename: str, location: Position, end_location: Position,
                    cell: int | None) -> dict:
    """A SARIF location; in a notebook the rows count within ``cell``, which the region's
    properties and a logical location name."""
    physical: dict = {"artifactLocation": _sarif_artifact(filename)}
    if location.row >= 1:
        physical["region"] = _sarif_region(location, end_location)
        if cell is not None:
            physical["region"]["properties"] = {"cell": cell}
    sarif: dict = {"physicalLocation": physical}
    if cell is not None:
        sarif["logicalLocations"] = [{
            "name": f"cell {cell}",
            "fullyQualifiedName": f"{PurePath(filename).as_posix()}:cell {cell}",
            "kind": "module",
        }]
    return sarif


def _sarif_artifact(filename: str) -> dict:
    path = PurePath(filename)
    if path.is_absolute():
        return {"uri": Path(filename).as_uri()}
    # The name's own bytes, quoted (as `as_uri` does): a name the file system's encoding
    # does not decode holds a lone surrogate, which has no UTF-8 of its own.
    return {"uri": quote(os.fsencode(path.as_posix())), "uriBaseId": SRCROOT}


def _sarif_region(location: Position, end_location: Position) -> dict:
    # Both count from 1 and end one past the last character, so positions map as they are.
    end = max(end_location, location)
    return {
        "startLine": location.row,
        "startColumn": location.column,
        "endLine": end.row,
        "endColumn": end.column,
    }
