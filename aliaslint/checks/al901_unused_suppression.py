"""AL901 unused-suppression: reported by the engine after the other rules ran."""

from __future__ import annotations

from aliaslint.checks import words
from aliaslint.diagnostics import UNUSED_SUPPRESSION
from aliaslint.rule import Rule

RULE = Rule(
    UNUSED_SUPPRESSION, "unused-suppression",
    "A suppression comment names an aliaslint code that it does not suppress.",
    default=False,
    words=words.SUPPRESSION,
)
