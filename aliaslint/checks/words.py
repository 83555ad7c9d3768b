"""The words of the rules that declare them: a cheap test of a file's raw text (strings and
comments included) that is False only where the rule cannot fire.  Here, apart from the rules'
own modules, so that the engine can screen a file before it loads the rules, the parser and
the analysis (``registry.briefs``)."""

from __future__ import annotations

import re

DATA_ASSIGNED = re.compile(r"\.data\s*=[^=]").search  # AL209
ID = re.compile(r"\bid\b").search  # AL401
DATA_PTR = re.compile(r"data_ptr").search  # AL403
STORAGE = re.compile(r"[sS]torage").search  # AL404
SUPPRESSION = re.compile(r"noqa|aliaslint:", re.IGNORECASE).search  # AL901


# The rule needs an `is` in code whose right side is not None/True/False; `is` in docstrings
# and comments is everywhere, so strings and comments are skipped.  Every alternative
# starts with a literal character so the regex engine can skip ahead between them; the
# empty named groups say which one matched.
_STRING_BODIES = (
    r"'''(?:[^'\\]|\\.|'(?!''))*'''",
    r'"""(?:[^"\\]|\\.|"(?!""))*"""',
    r"'(?:[^'\\\n]|\\.)*'",
    r'"(?:[^"\\\n]|\\.)*"',
)
_STRINGS_AND_IS = re.compile("|".join((
    r"#[^\n]*",
    *_STRING_BODIES,
    *(rf"{first}(?P<fstring{n}>)(?:{second})(?:{'|'.join(_STRING_BODIES)})"
      for n, (first, second) in enumerate((("f", "[rR]?"), ("F", "[rR]?"),
                                           ("r", "[fF]"), ("R", "[fF]")))),
    r"'(?P<quote1>)", r'"(?P<quote2>)',
    r"is\b(?<!\wis)(?!\s+(?:not\s+)?(?:None|True|False)\b)(?P<is>)",
)), re.DOTALL)

def code_has_is(source: str) -> bool:
    """Is there an `is` comparison outside strings and comments (or text too odd to tell)?"""
    if "is" not in source:
        return False
    for match in _STRINGS_AND_IS.finditer(source):
        kind = match.lastgroup or ""
        if kind == "is" or kind.startswith("quote"):  # a quote that opens no string: be safe
            return True
        if kind.startswith("fstring") and "{" in match.group():
            fields = _replacement_fields(match.group())
            # A field the match cut short (Python 3.12 lets fields reuse the quote) counts.
            if fields is None or re.search(r"\bis\b", fields):
                return True
    return False


def _replacement_fields(fstring: str) -> str | None:
    """The code inside an f-string's braces, or None when the braces do not balance."""
    depth, code = 0, []
    for char in fstring.replace("{{", "").replace("}}", ""):
        if char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
            if depth < 0:
                return None
        if depth:
            code.append(char)
    return None if depth else "".join(code) + " "
