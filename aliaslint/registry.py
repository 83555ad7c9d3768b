"""The rules, collected from the modules of ``aliaslint.checks``.

Every module there named after a code (``al201_write_through_view.py``) declares one
``RULE``; nothing else lists the rules.  A module dropped into the package (or into a
directory added to its ``__path__``) is a rule as soon as the registry is (re)loaded.
"""

from __future__ import annotations

import importlib
import pkgutil
import re
from functools import cache

from aliaslint.rule import Rule

CHECKS_PACKAGE = "aliaslint.checks"
DOCS_BASE = "https://github.com/aliaslint/aliaslint/blob/main/rules/"

_RULE_MODULE = re.compile(r"^al(\d{3})_[a-z0-9_]+$")


class RegistryError(Exception):
    """A rule module that breaks the registry's conventions (a bug in aliaslint)."""


@cache
def rules() -> dict[str, Rule]:
    """Every rule by code, in code order."""
    package = importlib.import_module(CHECKS_PACKAGE)
    found: dict[str, Rule] = {}
    for info in pkgutil.iter_modules(package.__path__):
        match = _RULE_MODULE.match(info.name)
        if match is None:
            continue
        module = importlib.import_module(f"{CHECKS_PACKAGE}.{info.name}")
        rule = getattr(module, "RULE", None)
        if not isinstance(rule, Rule):
            raise RegistryError(f"{module.__name__} declares no RULE")
        if rule.code != f"AL{match.group(1)}":
            raise RegistryError(f"{module.__name__} declares {rule.code}")
        if rule.code in found:
            raise RegistryError(f"{rule.code} is declared twice")
        found[rule.code] = rule
    return dict(sorted(found.items()))


def reload() -> None:
    """Forget the collected rules; the next query collects them again."""
    rules.cache_clear()


def get(code: str) -> Rule | None:
    return rules().get(code)


def always_on() -> frozenset[str]:
    return frozenset(code for code, rule in rules().items() if rule.always_on)


def rule_url(code: str) -> str:
    return f"{DOCS_BASE}{code}.md"
