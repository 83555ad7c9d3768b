"""AL902 file-not-checked: reported by the engine for a file it cannot read or parse."""

from __future__ import annotations

from aliaslint.diagnostics import FILE_NOT_CHECKED
from aliaslint.rule import Rule

RULE = Rule(
    FILE_NOT_CHECKED, "file-not-checked",
    "A file could not be checked, so none of its hazards are reported.",
    always_on=True,
)
