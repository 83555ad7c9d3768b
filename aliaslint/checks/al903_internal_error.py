"""AL903 internal-error: reported by the engine when the analysis or a rule raises."""

from __future__ import annotations

from aliaslint.diagnostics import INTERNAL_ERROR
from aliaslint.rule import Rule

RULE = Rule(
    INTERNAL_ERROR, "internal-error",
    "A rule failed with an exception on one file; its findings for that file are missing.",
    always_on=True,
)
