"""Settings as the command line reads and shows them: ``--per-file-ignores PATTERN:CODES``
and ``--show-settings``."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from aliaslint import patterns
from aliaslint.config import ConfigError, Settings, validate_selectors
from aliaslint.diagnostics import display_path


def per_file_option(values: list[str], option: str, cwd: Path
                    ) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """``PATTERN:CODES`` values, as ruff takes them: ``tests/*:AL401,AL402`` or
    ``tests/*:AL401,tests/*:AL402``, the option repeated for more; each pattern relative
    to ``cwd``."""
    pairs: list[tuple[str, list[str]]] = []
    for value in values:
        for part in (p.strip() for p in value.split(",")):
            if not part:
                continue
            pattern, colon, code = part.rpartition(":")
            if colon and pattern.strip():
                pairs.append((pattern.strip(), [code]))
            elif pairs and not colon:  # a further code for the pattern before it
                pairs[-1][1].append(part)
            else:
                raise ConfigError(f"{option}: expected PATTERN:CODES (like 'tests/*:AL401'), "
                                  f"got {value!r}")
    return tuple((patterns.anchor(pattern, cwd), validate_selectors(codes, f"{option} {pattern}"))
                 for pattern, codes in pairs)


def settings_text(path: Path, settings: Settings, cwd: Path, is_file: bool) -> str:
    """What ``--show-settings`` prints: where the settings came from, then each one as a
    TOML-like ``key = value`` line; for a file, the rules once per-file-ignores apply."""
    lines = [f"Resolved settings for: {display_path(path, cwd)}",
             "Settings path: " + (display_path(settings.source, cwd) if settings.source
                                  else "none (the defaults)")]
    for base in settings.extends:
        lines.append(f"Extends: {display_path(base, cwd)}")
    for field in dataclasses.fields(settings):
        if field.name in ("source", "extends", "rules"):
            continue
        lines.append(f"{field.name.replace('_', '-')} = {_value(getattr(settings, field.name))}")
    rules = settings.rules_for(path) if is_file else settings.rules
    lines.append(f"rules = {_value(sorted(rules))}")
    return "\n".join(lines) + "\n"


def _value(value: object) -> str:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return "{ " + ", ".join(f"{field.name.replace('_', '-')} = "
                                f"{_value(getattr(value, field.name))}"
                                for field in dataclasses.fields(value)) + " }"
    if isinstance(value, (tuple, list)):
        return "[" + ", ".join(_value(item) for item in value) + "]"
    if isinstance(value, Path):
        return json.dumps(str(value))
    if value is None:
        return "none"
    if isinstance(value, (str, bool, int)):
        return json.dumps(value)
    return json.dumps(str(value))
