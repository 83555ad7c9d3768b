"""A finding's headline: the one line that says what is wrong, with the code it quotes cut
short at token boundaries so that the line fits.

Quoted code is shortened by eliding what brackets and long string literals enclose, innermost
first (`torch.randn(4, requires_grad=True).tanh()` → `torch.randn(...).tanh()`), so that the
operation a finding is about, usually the last call of a chain, stays in view; only code with
nothing left to elide is cut, after a whole token. The marker is ASCII `...` (Python's own
ellipsis), so the headline reads the same in every output format.
"""

from __future__ import annotations

import io
import tokenize
from dataclasses import dataclass

# What `concise`, GitHub and GitLab annotations, SARIF's message and the editor show.
HEADLINE_LENGTH = 120
# Code no shorter than this is never cut further: below it a quote no longer says which code.
SHORTEST = 12
_OPENERS = {"(": ")", "[": "]", "{": "}"}
# A string literal longer than this may lose its contents: `"..."`.
_LONG_STRING = 8
# What stands for elided code: Python's own ellipsis, so only longer code is elided.
_MARK = "..."


@dataclass(frozen=True)
class Code:
    """Source text a headline quotes (in backticks), which may be shortened to fit."""
    text: str


def shortened(text: str) -> list[str]:
    """``text`` and its successively shorter forms, each eliding one more bracketed part
    (or long string), innermost first and of those the longest; the last forms cut after a
    whole token."""
    elided, cut = _shortened(text)
    return elided + cut


def _shortened(text: str) -> tuple[list[str], list[str]]:
    """The forms that elide (first the text itself), and the forms that cut."""
    spans = _spans(text)
    if spans is None:
        return [text], _cuts(text, None)
    forms: list[str] = [text]
    elided: list[tuple[int, int]] = []
    while True:
        # Innermost first (the arguments of `torch.zeros(...)` before the list around it), and
        # of those the longest.
        open_spans = [s for s in spans if s[1] - s[0] > len(_MARK) and not _inside(s, elided)]
        leaves = [s for s in open_spans if not any(
            t != s and s[0] <= t[0] and t[1] <= s[1] for t in open_spans)]
        if not leaves:
            break
        start, end = max(leaves, key=lambda s: (s[1] - s[0], -s[0]))
        elided = [s for s in elided if not (start <= s[0] and s[1] <= end)] + [(start, end)]
        form = _render(text, elided)
        if len(form) < len(forms[-1]):
            forms.append(form)
    return forms, _cuts(forms[-1], _token_ends(forms[-1]))


def fit(*variants: list[str | Code], limit: int = HEADLINE_LENGTH) -> str:
    """The first variant (pieces, each ``Code`` in backticks) that fits in ``limit``
    characters once what brackets enclose is elided from its quotes (the longest quote
    first), its first quote, the finding's own code, kept whole (its arguments may be the
    point: `nn.ReLU(inplace=True)`); else the first that fits with that one elided too; else
    the last one with its quotes also cut short, as far as needed and possible. Variants go
    from the most to the least said."""
    for keep in (True, False):
        for variant in variants:
            text = _fit(variant, limit, cut=False, keep_first=keep)
            if len(text) <= limit:
                return text
    return _fit(variants[-1], limit, cut=True, keep_first=False)


def _fit(pieces: list[str | Code], limit: int, cut: bool, keep_first: bool) -> str:
    stages = {index: _shortened(piece.text) for index, piece in enumerate(pieces)
              if isinstance(piece, Code)}
    forms = {index: elided for index, (elided, _) in stages.items()}
    if keep_first and forms:
        first = min(forms)
        forms[first] = forms[first][:1]

    def render() -> str:
        return "".join(f"`{forms[i][0]}`" if i in forms else str(piece)
                       for i, piece in enumerate(pieces))

    text = render()
    for stage in ((0, 1) if cut else (0,)):
        if stage:
            forms = {i: [forms[i][0], *cuts] for i, (_, cuts) in stages.items()}
        while len(text) > limit:
            movable = [i for i in forms if len(forms[i]) > 1]
            if not movable:
                break
            longest = max(movable, key=lambda i: (len(forms[i][0]), -i))
            forms[longest] = forms[longest][1:]
            text = render()
    return text


def _spans(text: str) -> list[tuple[int, int]] | None:
    """(start, end) offsets of what each bracket pair encloses and of each long string's
    contents; None when the text does not tokenize as Python."""
    spans, stack = [], []
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(text).readline))
    except (tokenize.TokenError, SyntaxError):
        return None
    for token in tokens:
        if token.start[0] != 1:  # one line only: the text was joined onto one
            continue
        start, end = token.start[1], token.end[1]
        if token.type == tokenize.OP and token.string in _OPENERS:
            stack.append((token.string, end))
        elif token.type == tokenize.OP and token.string in _OPENERS.values():
            if not stack or _OPENERS[stack[-1][0]] != token.string:
                return None
            spans.append((stack.pop()[1], start))
        elif token.type == tokenize.STRING and end - start > _LONG_STRING:
            quote = _quote_length(token.string)
            spans.append((start + quote, end - quote if token.string.endswith(
                token.string[quote - 1] * (3 if quote >= 3 else 1)) else end))
    return spans


def _inside(span: tuple[int, int], elided: list[tuple[int, int]]) -> bool:
    return any(a <= span[0] and span[1] <= b for a, b in elided)


def _quote_length(literal: str) -> int:
    """How many characters open a string literal: its prefix and its quotes."""
    prefix = len(literal) - len(literal.lstrip("rRbBfFuU"))
    body = literal[prefix:]
    return prefix + (3 if body[:3] in ('"""', "'''") else 1)


def _render(text: str, elided: list[tuple[int, int]]) -> str:
    out, at = [], 0
    for start, end in sorted(elided):
        out += [text[at:start], _MARK]
        at = end
    return "".join(out + [text[at:]])


def _token_ends(text: str) -> list[int] | None:
    """Where a cut may go: after a name, number, string or closing bracket that leaves no
    bracket open."""
    ends, depth = [], 0
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.start[0] != 1:
                continue
            if token.type == tokenize.OP and token.string in _OPENERS:
                depth += 1
            elif token.type == tokenize.OP and token.string in _OPENERS.values():
                depth -= 1
            if depth == 0 and (token.type in (tokenize.NAME, tokenize.NUMBER, tokenize.STRING)
                               or token.string in _OPENERS.values()):
                ends.append(token.end[1])
    except (tokenize.TokenError, SyntaxError):
        return None
    return ends


def _cuts(text: str, ends: list[int] | None) -> list[str]:
    """``text``, then cut after ever fewer whole tokens (or characters, when it is not
    Python) followed by `...`, down to ``SHORTEST`` characters."""
    points = ends if ends is not None else list(range(len(text) - 1, 0, -1))
    cuts = sorted({end for end in points if SHORTEST <= end < len(text)}, reverse=True)
    return [text] + [text[:end].rstrip() + "..." for end in cuts]
