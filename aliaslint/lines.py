"""What a line is, for every part that counts rows and columns.

CPython's tokenizer breaks lines at ``\\r\\n``, a lone ``\\r`` and ``\\n``, and nowhere else:
a form feed, a vertical tab, ``\\x1c``-``\\x1e``, ``\\x85`` and the Unicode line and paragraph
separators are ordinary characters of a line (in a comment or a string), though
:meth:`str.splitlines` breaks at all of them.  libcst and the language server protocol
break lines the same way CPython does.  Every row a finding carries is 1-based in this
sense, and every column a 1-based count of code points from the start of its row (the
byte-order mark, which decoding removes, is not part of the text).

Positions past the end of a row or of the text clamp to it, so an edit can never land
outside the text it was computed for.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections import Counter
from collections.abc import Sequence

LINE_BREAK = re.compile(r"\r\n|\r|\n")


def split(text: str) -> list[str]:
    """The rows of ``text`` without their line breaks; a text that ends with a line break
    has an empty last row (as an editor shows it)."""
    return LINE_BREAK.split(text)


# What `str.splitlines` breaks at besides CPython's three line breaks.
_OTHER_BREAKS = re.compile(r"[\v\f\x1c-\x1e\x85\u2028\u2029]")


def split_keepends(text: str) -> list[str]:
    """The rows of ``text``, each with its own line break; no empty last row."""
    if not text:
        return []
    if _OTHER_BREAKS.search(text) is None:
        return text.splitlines(keepends=True)  # the same rows, in half the time
    ends = [match.end() for match in LINE_BREAK.finditer(text)]
    bounds = [0, *ends]
    if bounds[-1] != len(text):
        bounds.append(len(text))
    return [text[a:b] for a, b in zip(bounds, bounds[1:])]


# The rows of the text split last: a check splits one text in several places (the screen's
# compile and budget by statement, the language server's chunks and trees).
_last_rows: tuple[str, tuple[str, ...]] = ("", ())


def rows(text: str) -> tuple[str, ...]:
    """``split_keepends(text)``, as a tuple: the last text's rows are not split again."""
    global _last_rows
    last = _last_rows
    if last[0] is text or last[0] == text:
        return last[1]
    found = tuple(split_keepends(text))
    _last_rows = (text, found)
    return found


def normalise_line_breaks(text: str) -> str:
    """``text`` with every line break made ``\\n``: the same rows and columns, for tools
    that break lines at ``\\n`` only (the ``tokenize`` module, notebook cells)."""
    return LINE_BREAK.sub("\n", text)


def starts(text: str) -> list[int]:
    """The offset in ``text`` of each row's first character (row 1 at index 0)."""
    return [0, *(match.end() for match in LINE_BREAK.finditer(text))]


def first_break(text: str) -> str:
    """The text's first line break, which is what libcst writes new lines with; ``\\n``
    when it has none."""
    match = LINE_BREAK.search(text)
    return match.group() if match else "\n"


def usual_break(text: str) -> str:
    """The line break ``text`` uses most (the first of those used as often), for the
    lines a fix adds; ``\\n`` when it has none."""
    counts = Counter(match.group() for match in LINE_BREAK.finditer(text))
    return counts.most_common(1)[0][0] if counts else "\n"


class Lines:
    """Row/column ↔ offset conversion for one text."""

    def __init__(self, text: str):
        self.text = text
        self.starts: Sequence[int] = starts(text)

    def end_of_row(self, row: int) -> int:
        """The offset of row ``row``'s line break (or the text's end)."""
        if row >= len(self.starts):
            return len(self.text)
        following = self.starts[row]
        # Step back over the break: "\r\n" is two characters, "\r" and "\n" one.
        if self.text.startswith("\r\n", following - 2):
            return following - 2
        return following - 1

    def offset(self, row: int, column: int) -> int:
        """The offset of 1-based ``row`` and ``column``; a column past its row's end is the
        row's end, a row past the text's last is the text's end, a row before the first is
        the start."""
        if row < 1:
            return 0
        if row > len(self.starts):
            return len(self.text)
        start = self.starts[row - 1]
        return min(start + max(column, 1) - 1, self.end_of_row(row))

    def position(self, offset: int) -> tuple[int, int]:
        """The 1-based row and column of ``offset``."""
        offset = min(max(offset, 0), len(self.text))
        row = bisect_right(self.starts, offset)
        return row, offset - self.starts[row - 1] + 1


def libcst_column_shifts(source: str, parsed: str) -> dict[int, int]:
    """Rows whose columns libcst counts short, and by how much: libcst drops the form feeds
    in the indentation of a line that starts a statement (``parsed``, the code of its
    module, lacks them) where CPython counts them as characters of the row.  Rows are
    the same in both: a form feed is not a line break."""
    shifts = {}
    for row, (original, kept) in enumerate(zip(split(source), split(parsed)), 1):
        if original != kept and len(original) > len(kept) and \
                original.replace("\f", "", len(original) - len(kept)) == kept:
            shifts[row] = len(original) - len(kept)
    return shifts
