"""Settings as the command line reads and shows them: ``--per-file-ignores PATTERN:CODES``
and ``--show-settings``."""

from __future__ import annotations

import json
from pathlib import Path

from aliaslint import patterns
from aliaslint.config import ConfigError, Settings, validate_selectors
from aliaslint.diagnostics import display_path
from aliaslint.screen import RUNNING


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


def settings_text(path: Path, settings: Settings, cwd: Path, is_file: bool,
                  cache_dir: Path | None) -> str:
    """What ``--show-settings`` prints: where the settings came from, then the value each
    configuration key resolves to, as TOML ``key = value`` lines (the cache directory the
    run uses, or that it uses none; the Python version files are checked against; for a
    file, the rules once per-file-ignores apply)."""
    lines = [f"Resolved settings for: {display_path(path, cwd)}",
             "Settings path: " + (display_path(settings.source, cwd) if settings.source
                                  else "(no configuration file: the defaults apply)")]
    for base in settings.extends:
        lines.append(f"Extends: {display_path(base, cwd)}")
    fixes = settings.fixes
    target = settings.target_version or RUNNING
    values: list[tuple[str, object]] = [
        ("exclude", settings.exclude), ("extend-exclude", settings.extend_exclude),
        ("include", settings.include), ("extend-include", settings.extend_include),
        ("per-file-ignores", dict(settings.per_file_ignores)),
        ("respect-gitignore", settings.respect_gitignore),
        ("cache-dir", display_path(cache_dir, cwd) if cache_dir is not None else False),
        ("max-file-size", settings.max_file_size), ("confidence", settings.confidence),
        ("report-unused-suppressions", settings.report_unused_suppressions),
        ("target-version", f"py{target[0]}{target[1]}"),
        ("unsafe-fixes", fixes.unsafe_fixes), ("fixable", fixes.fixable),
        ("unfixable", fixes.unfixable), ("extend-safe-fixes", fixes.extend_safe),
        ("extend-unsafe-fixes", fixes.extend_unsafe),
    ]
    if settings.baseline is not None:
        values.append(("baseline", display_path(settings.baseline, cwd)))
    rules = settings.rules_for(path) if is_file else settings.rules
    values.append(("rules", sorted(rules)))
    lines += [f"{key} = {_value(value)}" for key, value in values]
    return "\n".join(lines) + "\n"


def _value(value: object) -> str:
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{json.dumps(key)} = {_value(item)}"
                                for key, item in value.items()) + " }" if value else "{}"
    if isinstance(value, (tuple, list)):
        return "[" + ", ".join(_value(item) for item in value) + "]"
    if isinstance(value, bool):
        return "true" if value else "false"
    return json.dumps(value if isinstance(value, (str, int)) else str(value))
