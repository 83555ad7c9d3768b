"""AL901 unused-suppression: reported by the engine after the other rules ran."""

from __future__ import annotations

import re

from aliaslint.diagnostics import UNUSED_SUPPRESSION
from aliaslint.rule import Rule

RULE = Rule(
    UNUSED_SUPPRESSION, "unused-suppression",
    "A suppression comment names an aliaslint code that it does not suppress.",
    default=False,
    words=re.compile(r"noqa|aliaslint:", re.IGNORECASE).search,
)
