"""The HTML report: one self-contained page that draws what a traced run showed.

For each runtime finding it draws the storages involved as byte ranges with the tensors over
them (offset, sizes and strides), the version counter's history (saved, written, read by
backward) on a timeline, the code at each line, and the processes it happened in; static
findings with the status a run gave them (``check --trace``) are listed beside.

The page is built from strings with the standard library: inline CSS and SVG, no script, no
link, no font, so it opens offline and shows nothing it did not write.  Every text that comes
from the program (file names, lines of code, messages, tensor names) goes through ``_text``:
escaped for HTML, with control characters, line and paragraph separators, bidirectional
overrides and lone surrogates shown as visible escapes rather than passed on.  The
``data-`` attributes (``data-finding``, ``data-storage``, ``data-view``, ``data-marker``,
``data-line``) are for tools that read the page, the browser test among them.
"""

from __future__ import annotations

import html
import itertools
import unicodedata
from collections.abc import Callable, Iterable, Mapping, Sequence

from aliaslint.diagnostics import Diagnostic
from aliaslint.evidence import Event, Evidence, Storage, View

# Called as ``source_lines(filename)``: the file's lines, or None when they cannot be shown.
SourceLines = Callable[..., "list[str] | None"]

STATIC_STATUSES = ("confirmed", "refuted", "not-reached", "could-not-evaluate")
# A view with at most this many elements is drawn element by element (a strided or expanded
# view shows its pattern); a larger one as the byte range it spans.
_MAX_CELLS = 512
# Lines of code longer than this are cut: the page stays small whatever the program.
_MAX_LINE = 300

_INDENT = " \t"
_WIDTH = 760  # of each drawing, in SVG units
_LEFT = 10
_BAR = _WIDTH - 2 * _LEFT

_CSS = """
body{font:14px/1.45 system-ui,sans-serif;margin:24px;color:#1d1f21;background:#fff}
h1{font-size:20px;margin:0 0 4px}h2{font-size:16px;margin:0 0 6px}
h3{font-size:13px;margin:12px 0 4px;color:#555;text-transform:uppercase;letter-spacing:.04em}
.columns{display:grid;grid-template-columns:minmax(0,3fr) minmax(0,2fr);gap:24px}
.finding,.static-finding{border:1px solid #d0d4d8;border-radius:6px;padding:12px;margin:0 0 16px}
.code-id{font-weight:700;color:#b00020}.where{color:#555;font-family:monospace}
.message{margin:4px 0}.muted{color:#666}
pre,code,.source{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:12.5px}
table.lines{border-collapse:collapse;width:100%}
table.lines td{padding:2px 6px;vertical-align:top;border-top:1px solid #eee}
td.kind{width:38%;font-weight:600;word-break:break-all}td.kind .where{font-weight:400}td.source{white-space:pre-wrap;word-break:break-all}
.status{display:inline-block;padding:0 6px;border-radius:8px;font-size:12px;font-weight:600}
.status.confirmed{background:#fde2e1;color:#a3001b}.status.refuted{background:#dff3e4;color:#1b6e35}
.status.not-reached,.status.could-not-evaluate,.status.none{background:#eceff1;color:#455a64}
svg{display:block;width:100%;max-width:760px;height:auto;overflow:hidden}svg text{font:11px ui-monospace,Menlo,Consolas,monospace;fill:#1d1f21}
.bar{fill:#eceff1;stroke:#90a4ae}.extent{fill:none;stroke-dasharray:3 2}
.cell{fill-opacity:.55}.tick{stroke:#b0bec5}
.v0 .extent{stroke:#1565c0}.v0 .cell{fill:#1565c0}.v1 .extent{stroke:#c62828}.v1 .cell{fill:#c62828}
.v2 .extent{stroke:#2e7d32}.v2 .cell{fill:#2e7d32}.v3 .extent{stroke:#6a1b9a}.v3 .cell{fill:#6a1b9a}
.axis{stroke:#90a4ae;stroke-width:2}
.marker circle{stroke:#fff;stroke-width:2}.marker.saved circle{fill:#1565c0}
.marker.written circle{fill:#c62828}.marker.read circle{fill:#2e7d32}
.marker.view circle{fill:#6a1b9a}.marker.shared circle{fill:#ef6c00}
"""


def render(diagnostics: Sequence[Diagnostic], source_lines: SourceLines,
           notes: Mapping[int, str] | None = None, command: str = "aliaslint") -> str:
    """The page for ``diagnostics`` (paths as shown to the user); ``notes`` are what the run
    showed about each static finding, by ``id`` of the finding."""
    notes = notes or {}
    lines = _Lines(source_lines)
    runtime = [d for d in diagnostics if d.status == "runtime"]
    static = [d for d in diagnostics if d.status != "runtime"]
    # Drawn: what the tracer found, static findings it confirmed included (with its evidence).
    drawn = {id(d): number for number, d in enumerate(
        (d for d in diagnostics if d.status == "runtime" or d.evidence is not None), 1)}
    parts = ["<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n",
             f"<title>{_text(command)} report</title>\n<style>{_CSS}</style>\n</head>\n<body>\n",
             f"<h1>{_text(command)} report</h1>\n<p class=\"muted\">"
             f"{_text(_summary(runtime, static, len(drawn)))}</p>\n",
             f"<div class=\"{'columns' if static else 'single'}\">\n<section class=\"runtime\">\n"]
    if drawn:
        parts.append("<h2>Seen at run time</h2>\n")
        parts += [_finding(drawn[id(d)], d, lines) for d in diagnostics if id(d) in drawn]
    elif runtime or any(d.status in STATIC_STATUSES for d in diagnostics):
        parts.append("<p class=\"muted\">No finding was made at run time.</p>\n")
    parts.append("</section>\n")
    if static:
        parts.append("<aside class=\"static\">\n<h2>Static findings</h2>\n")
        parts += [_static(number, d, notes.get(id(d), ""), lines, drawn.get(id(d)))
                  for number, d in enumerate(static, 1)]
        parts.append("</aside>\n")
    parts.append("</div>\n</body>\n</html>\n")
    return "".join(parts)


def _summary(runtime: Sequence[Diagnostic], static: Sequence[Diagnostic], drawn: int) -> str:
    def count(number: int, what: str) -> str:
        return f"{number} {what}{'s' if number != 1 else ''}"

    if not static:
        return f"{count(len(runtime), 'finding')} seen at run time."
    statuses = ", ".join(f"{number} {status.replace('-', ' ')}" for status, number in (
        (status, sum(1 for d in static if d.status == status)) for status in STATIC_STATUSES)
        if number)
    text = f"{count(len(static), 'static finding')}" + (f" ({statuses})" if statuses else "")
    if any(d.status in STATIC_STATUSES for d in static):
        confirmed = drawn - len(runtime)
        text += (f", {confirmed} of them drawn from what the tracer saw; "
                 f"{count(len(runtime), 'finding')} seen only at run time")
    return text + "."


# --- text ----------------------------------------------------------------------------------


def _visible(character: str) -> str:
    """A character that would act rather than show (a control, a separator, a bidirectional
    override, a lone surrogate) as a visible stand-in; any other character as it is."""
    code = ord(character)
    if character == "\t":
        return character
    if code < 0x20:
        return chr(0x2400 + code)  # the Control Pictures block: ␀ … ␟
    if code == 0x7F:
        return "\u2421"  # ␡
    category = unicodedata.category(character)
    # Format characters include the bidirectional overrides; the zero-width joiner of
    # emoji sequences is the one kept.
    if category in ("Cc", "Cs", "Co", "Cn", "Zl", "Zp") or (
            category == "Cf" and character != "\u200d"):
        return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"
    return character


def _text(value: object) -> str:
    """``value`` as HTML text (element content or an attribute value), every special
    character escaped and every invisible one made visible."""
    text = str(value)
    if not text.isprintable():
        text = "".join(_visible(c) for c in text)
    return html.escape(text, quote=True)


class _Lines:
    """The lines of the files the report shows, each file read once."""

    def __init__(self, source_lines: SourceLines) -> None:
        self._read = source_lines
        self._files: dict[tuple[str, int | None], list[str] | None] = {}

    def get(self, filename: str, row: int, cell: int | None = None) -> str | None:
        key = (filename, cell)
        if key not in self._files:
            try:
                self._files[key] = (self._read(filename) if cell is None
                                    else self._read(filename, cell))
            except (OSError, ValueError):
                self._files[key] = None
        lines = self._files[key]
        if lines is None or not 1 <= row <= len(lines):
            return None
        line = lines[row - 1].rstrip("\r\n")
        return line if len(line) <= _MAX_LINE else line[:_MAX_LINE] + " …"


def _where(filename: str, row: int, column: int | None = None) -> str:
    return f"{filename}:{row}" + (f":{column}" if column is not None else "")


# --- runtime findings ----------------------------------------------------------------------


def _finding(number: int, d: Diagnostic, lines: _Lines) -> str:
    evidence = d.evidence or Evidence()
    parts = [f"<article class=\"finding\" id=\"finding-{number}\" data-finding=\"{number}\" "
             f"data-code=\"{_text(d.code)}\">\n",
             f"<h2>{_status(d)}<span class=\"code-id\">{_text(d.code)}</span> {_text(d.name)} "
             f"<span class=\"where\">{_text(_where(d.filename, d.location.row, d.location.column))}"
             "</span></h2>\n", f"<p class=\"message\">{_text(d.message)}</p>\n",
             _processes(d, evidence)]
    if evidence.storages:
        parts += ["<h3>Memory</h3>\n", _memory(evidence)]
    if evidence.events:
        parts += ["<h3>Version counter</h3>\n", _timeline(evidence.events)]
    parts += ["<h3>Code</h3>\n", _code(d, evidence.events, lines), "</article>\n"]
    return "".join(parts)


def _processes(d: Diagnostic, evidence: Evidence) -> str:
    """The processes that hit the finding: their labels in the job (``rank 1 worker 0``) and
    the pid, rank and worker each one's evidence names."""
    labels = ", ".join(d.processes) if d.processes else "the program's process"
    seen = "; ".join(p.describe() for p in evidence.processes)
    return (f"<p class=\"process\" data-processes=\"{_text(len(evidence.processes))}\">"
            f"Process: {_text(labels)}" + (f" ({_text(seen)})" if seen else "") + "</p>\n")


def _memory(evidence: Evidence) -> str:
    """An SVG: each storage a bar of its bytes, each view on it a row below: its byte range
    and, when small enough, each of its elements."""
    rows: list[str] = []
    y = 6
    views = list(enumerate(evidence.views))
    for storage in evidence.storages:
        on_it = [(index, view) for index, view in views if view.storage == storage.id]
        block, y = _storage(storage, on_it, y)
        rows.append(block)
    return (f"<svg class=\"memory\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{_WIDTH}\" "
            f"height=\"{y}\" viewBox=\"0 0 {_WIDTH} {y}\" role=\"img\">\n"
            + "".join(rows) + "</svg>\n")


def _storage(storage: Storage, views: Sequence[tuple[int, View]], y: int) -> tuple[str, int]:
    nbytes = max(storage.nbytes, 1)
    scale = _BAR / nbytes
    label = (f"storage {storage.id}: {storage.nbytes} bytes, "
             f"{storage.nbytes // max(storage.element_size, 1)} × {storage.dtype} "
             f"({storage.element_size} bytes each) on {storage.device}")
    parts = [f"<g class=\"storage\" data-storage=\"{storage.id}\" "
             f"data-nbytes=\"{storage.nbytes}\">\n",
             f"<text x=\"{_LEFT}\" y=\"{y + 11}\">{_text(label)}</text>\n",
             f"<rect class=\"bar\" x=\"{_LEFT}\" y=\"{y + 16}\" width=\"{_BAR}\" height=\"16\"/>\n"]
    elements = storage.nbytes // max(storage.element_size, 1)
    if 1 < elements <= 64:  # element boundaries, where they can be told apart
        step = storage.element_size * scale
        parts += [f"<line class=\"tick\" x1=\"{_LEFT + i * step:.1f}\" y1=\"{y + 16}\" "
                  f"x2=\"{_LEFT + i * step:.1f}\" y2=\"{y + 32}\"/>" for i in range(1, elements)]
        parts.append("\n")
    parts.append(f"<text x=\"{_LEFT}\" y=\"{y + 44}\">0</text><text x=\"{_LEFT + _BAR}\" "
                 f"y=\"{y + 44}\" text-anchor=\"end\">{storage.nbytes}</text>\n")
    y += 50
    for index, view in views:
        parts.append(_view(index, view, scale, y))
        y += 48
    parts.append("</g>\n")
    return "".join(parts), y + 8


def _view(index: int, view: View, scale: float, y: int) -> str:
    first, end = view.byte_extent
    x, width = _LEFT + first * scale, max((end - first) * scale, 1.5)
    shape = (f"offset={view.offset} sizes={_tuple(view.sizes)} "
             f"strides={_tuple(view.strides)}")
    parts = [f"<g class=\"view v{index % 4}\" data-view=\"{index}\" "
             f"data-on-storage=\"{view.storage}\" data-offset=\"{view.offset}\" "
             f"data-sizes=\"{_text(_tuple(view.sizes))}\" "
             f"data-strides=\"{_text(_tuple(view.strides))}\" "
             f"data-bytes=\"{first}-{end}\">\n",
             f"<rect class=\"extent\" x=\"{x:.1f}\" y=\"{y}\" width=\"{width:.1f}\" "
             "height=\"12\"/>\n"]
    cells = _cells(view)
    if cells is not None:
        size = max(view.element_size * scale, 1.0)
        parts += [f"<rect class=\"cell\" x=\"{_LEFT + byte * scale:.1f}\" y=\"{y + 2}\" "
                  f"width=\"{size:.1f}\" height=\"8\"/>" for byte in cells]
        parts.append("\n")
    parts.append(f"<text class=\"name\" x=\"{_LEFT}\" y=\"{y + 25}\">{_text(view.name)}</text>"
                 f"<text class=\"shape\" x=\"{_LEFT}\" y=\"{y + 39}\">{_text(shape)} "
                 f"(bytes {first}–{end})</text>\n</g>\n")
    return "".join(parts)


def _tuple(values: tuple[int, ...]) -> str:
    return str(tuple(values))


def _cells(view: View) -> list[int] | None:
    """The first byte of each distinct element of a small view, else None."""
    count = 1
    for size in view.sizes:
        count *= size
    if count > _MAX_CELLS:
        return None
    offsets = {view.offset + sum(i * s for i, s in zip(index, view.strides))
               for index in itertools.product(*(range(size) for size in view.sizes))}
    return sorted(offset * view.element_size for offset in offsets)


def _timeline(events: Sequence[Event]) -> str:
    """An SVG: the finding's moments in the order they happened, each a marker with what
    happened, the line, and the version counter after it."""
    gap = (_BAR - 120) / max(len(events) - 1, 1)
    parts = [f"<svg class=\"timeline\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{_WIDTH}\" "
             f"height=\"86\" viewBox=\"0 0 {_WIDTH} 86\" role=\"img\">\n",
             f"<line class=\"axis\" x1=\"{_LEFT}\" y1=\"30\" x2=\"{_LEFT + _BAR}\" y2=\"30\"/>\n"]
    for index, event in enumerate(events):
        x = _LEFT + 60 + index * gap
        version = "" if event.version is None else f"version {event.version}"
        parts.append(
            f"<g class=\"marker {event.kind}\" data-marker=\"{event.kind}\" "
            f"data-line=\"{event.line}\" data-file=\"{_text(event.filename)}\""
            + ("" if event.version is None else f" data-version=\"{event.version}\"") + ">"
            f"<circle cx=\"{x:.1f}\" cy=\"30\" r=\"8\"/>"
            f"<text x=\"{x:.1f}\" y=\"14\" text-anchor=\"middle\">{_text(_kind(event))}</text>"
            f"<text class=\"line\" x=\"{x:.1f}\" y=\"54\" text-anchor=\"middle\">"
            f"line {event.line}</text>"
            f"<text x=\"{x:.1f}\" y=\"70\" text-anchor=\"middle\">{_text(version)}</text></g>\n")
    parts.append("</svg>\n")
    return "".join(parts)


_KIND_WORDS = {"saved": "saved", "written": "written", "read": "read", "view": "view made",
               "shared": "shared"}


def _kind(event: Event) -> str:
    word = _KIND_WORDS[event.kind]
    if event.kind == "read" and event.what == "backward":
        return "read by backward"
    return f"{word} ({event.what})" if event.what else word


def _code(d: Diagnostic, events: Sequence[Event], lines: _Lines) -> str:
    """The line of each moment, or of the finding and its related spans when the run
    recorded no moments."""
    rows: Iterable[tuple[str, str, int]]
    if events:
        rows = [(_kind(e), e.filename, e.line) for e in events]
    else:
        rows = [("here", d.filename, d.location.row)] + [
            (r.message, r.filename, r.location.row) for r in d.related]
    return _table(rows, lines)


def _table(rows: Iterable[tuple[str, str, int]], lines: _Lines, cell: int | None = None) -> str:
    parts = ["<table class=\"lines\">\n"]
    for label, filename, row in rows:
        line = lines.get(filename, row, cell)
        # Indentation is left out: the column is narrow, and the line is what matters.
        source = (f"<td class=\"source\">{_text(line.lstrip(_INDENT))}</td>" if line is not None
                  else "<td class=\"source muted\">(source not available)</td>")
        parts.append(f"<tr data-line=\"{row}\"><td class=\"kind\">{_text(label)}<br>"
                     f"<span class=\"where\">{_text(_where(filename, row))}</span></td>"
                     f"{source}</tr>\n")
    parts.append("</table>\n")
    return "".join(parts)


# --- static findings -----------------------------------------------------------------------


def _status(d: Diagnostic) -> str:
    """The status badge of a static finding (none for the tracer's own)."""
    if d.status == "runtime":
        return ""
    status = d.status or "none"
    shown = d.status.replace("-", " ") if d.status else "not run"
    return f"<span class=\"status {_text(status)}\">{_text(shown)}</span> "


def _static(number: int, d: Diagnostic, note: str, lines: _Lines, drawn: int | None) -> str:
    status = d.status or "none"
    link = f" <a href=\"#finding-{drawn}\">drawing</a>" if drawn is not None else ""
    parts = [f"<div class=\"static-finding\" data-static=\"{number}\" "
             f"data-status=\"{_text(status)}\" data-code=\"{_text(d.code)}\">\n",
             f"<p>{_status(d)}<span class=\"code-id\">{_text(d.code)}</span> "
             + ("(low confidence) " if d.confidence == "low" else "")
             + f"<span class=\"where\">{_text(_where(d.filename, d.location.row))}</span>"
             f"{link}</p>\n",
             f"<p class=\"message\">{_text(d.message)}</p>\n"]
    if note:
        parts.append(f"<p class=\"muted note\">Run time: {_text(note)}</p>\n")
    parts += [_table([("here", d.filename, d.location.row)], lines, d.cell), "</div>\n"]
    return "".join(parts)
