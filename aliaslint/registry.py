"""The rules, collected from the modules of ``aliaslint.checks``.

Every module there named after a code (``al201_write_through_view.py``) declares one
``RULE``; nothing else lists the rules.  A module dropped into the package (or into a
directory added to its ``__path__``) is a rule as soon as the registry is (re)loaded.

Loading the rules loads the analysis and libcst with them, which is most of a small
check's time; what the engine asks before it parses a file (which codes exist, which are
on, which words a rule needs, which events it reads) is answered by ``briefs``, a copy of
those facts kept here (tests/test_registry_briefs.py holds it to the rules' own).  Where
the package's modules are not the ones it describes, the rules are loaded after all.
"""

from __future__ import annotations

import importlib
import pkgutil
import re
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Callable

from aliaslint.checks import words

if TYPE_CHECKING:
    from aliaslint.rule import Rule

CHECKS_PACKAGE = "aliaslint.checks"
DOCS_BASE = "https://github.com/aliaslint/aliaslint/blob/main/rules/"

_RULE_MODULE = re.compile(r"^al(\d{3})_[a-z0-9_]+$")


class RegistryError(Exception):
    """A rule module that breaks the registry's conventions (a bug in aliaslint)."""


@cache
def rules() -> dict[str, Rule]:
    """Every rule by code, in code order."""
    from aliaslint.rule import Rule  # with the rules come libcst and the analysis

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
        _module_names[rule.code] = info.name
    return dict(sorted(found.items()))


_module_names: dict[str, str] = {}  # code -> the module of ``aliaslint.checks`` declaring it


def reload() -> None:
    """Forget the collected rules; the next query collects them again."""
    rules.cache_clear()
    briefs.cache_clear()


@dataclass(frozen=True)
class Brief:
    """What the engine needs of a rule before any file is parsed."""

    code: str
    name: str
    module: str  # in ``aliaslint.checks``
    events: tuple[str, ...] = ()  # the names of the event classes its checks read
    words: Callable[[str], object] | None = None
    default: bool = True
    always_on: bool = False


_BRIEFS = (
    Brief("AL101", "inplace-on-saved-tensor", "al101_inplace_on_saved_tensor", ("SavedWrite",)),
    Brief("AL102", "inplace-on-leaf", "al102_inplace_on_leaf", ("InplaceWrite",)),
    Brief("AL103", "data-bypasses-autograd", "al103_data_bypasses_autograd", ("SavedWrite",)),
    Brief("AL104", "detached-alias-write", "al104_detached_alias_write", ("SavedWrite",)),
    Brief("AL105", "inplace-activation-clobbers-input",
          "al105_inplace_activation_clobbers_input", ("SavedWrite", "StaleRead")),
    Brief("AL106", "inplace-on-forbidden-view", "al106_inplace_on_forbidden_view",
          ("InplaceWrite", "PackHookWrite")),
    Brief("AL201", "write-through-view", "al201_write_through_view", ("StaleRead",)),
    Brief("AL202", "view-of-noncontiguous", "al202_view_of_noncontiguous",
          ("NonContiguousView",)),
    Brief("AL203", "overlapping-write", "al203_overlapping_write", ("InplaceWrite",)),
    Brief("AL204", "write-to-copy-lost", "al204_write_to_copy_lost", ("LostWrite",)),
    Brief("AL205", "ambiguous-alias-write", "al205_ambiguous_alias_write",
          ("InplaceWrite", "StaleRead")),
    Brief("AL206", "replicated-tensor", "al206_replicated_tensor", ("InplaceWrite",)),
    Brief("AL207", "snapshot-by-reference", "al207_snapshot_by_reference", ("StaleRead",)),
    Brief("AL208", "argument-written", "al208_argument_written", ("StaleRead",)),
    Brief("AL209", "data-assigned-to-temporary", "al209_data_assigned_to_temporary",
          ("DataOnTemporary",), words.DATA_ASSIGNED),
    Brief("AL301", "numpy-shared-write", "al301_numpy_shared_write", ("StaleRead",)),
    Brief("AL401", "id-sharing-check", "al401_id_sharing_check", ("Compare",), words.ID),
    Brief("AL402", "is-sharing-check", "al402_is_sharing_check", ("Compare",),
          words.code_has_is),
    Brief("AL403", "data-ptr-sharing-check", "al403_data_ptr_sharing_check", ("Compare",),
          words.DATA_PTR),
    Brief("AL404", "typed-storage", "al404_typed_storage", ("Call", "Reference"),
          words.STORAGE),
    Brief("AL901", "unused-suppression", "al901_unused_suppression", (), words.SUPPRESSION,
          default=False),
    Brief("AL902", "file-not-checked", "al902_file_not_checked", always_on=True),
    Brief("AL903", "internal-error", "al903_internal_error", always_on=True),
)


def brief_of(rule: Rule, module: str) -> Brief:
    """The brief of a loaded rule."""
    return Brief(rule.code, rule.name, module, tuple(event.__name__ for event in rule.events),
                 rule.words, rule.default, rule.always_on)


@cache
def briefs() -> dict[str, Brief]:
    """Every rule's brief by code, in code order, without loading the rules where the
    package holds exactly the modules the briefs describe."""
    package = importlib.import_module(CHECKS_PACKAGE)
    modules = {info.name for info in pkgutil.iter_modules(package.__path__)
               if _RULE_MODULE.match(info.name)}
    if modules == {brief.module for brief in _BRIEFS}:
        return {brief.code: brief for brief in _BRIEFS}
    return {code: brief_of(rule, _module_names[code]) for code, rule in rules().items()}


def codes() -> tuple[str, ...]:
    """Every rule's code, in code order."""
    return tuple(briefs())


def get(code: str) -> Rule | None:
    """The rule of ``code``, loading its module alone where the briefs describe the package
    (the other rules' modules are loaded when something asks for all of them)."""
    if rules.cache_info().currsize:
        return rules().get(code)
    brief = briefs().get(code)
    if brief is None or code not in {b.code for b in _BRIEFS}:
        return rules().get(code)
    rule = importlib.import_module(f"{CHECKS_PACKAGE}.{brief.module}").RULE
    _module_names[code] = brief.module
    return rule


def always_on() -> frozenset[str]:
    return frozenset(code for code, brief in briefs().items() if brief.always_on)


def rule_url(code: str) -> str:
    return f"{DOCS_BASE}{code}.md"
