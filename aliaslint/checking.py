"""The parsed side of a file's check: the analysis, the rules' checks over its events, the
findings located and suppressed.  Loaded with libcst, the analysis and the rules, only when a
file is parsed (aliaslint/engine.py screens every file before)."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

import libcst as cst

from aliaslint import fixes, registry, stages
from aliaslint.analysis import StaleRead, analyse
from aliaslint.converted import NeedsText
from aliaslint.diagnostics import (
    INTERNAL_ERROR,
    UNUSED_SUPPRESSION,
    Confidence,
    Diagnostic,
    Related,
)
from aliaslint.incremental import ChunkPositions
from aliaslint.reading import file_error as _file_error
from aliaslint.reading import internal as _internal
from aliaslint.rule import Context, Finding
from aliaslint.suppressions import parse_suppressions, unsuppressed, unused_findings

if TYPE_CHECKING:
    from aliaslint.project import Link


def check_module(module: cst.Module, source: str, filename: str, enabled: frozenset[str],
                  confidence: Confidence, positions: ChunkPositions | None = None,
                  link: Link | None = None) -> list[Diagnostic]:
    context = Context(module, positions, source)
    texts: dict[str, str] = {}
    if link is not None:
        # Filled as the analysis loads the files this one imports.
        link.contexts = context.others
        link.texts = texts
    with stages.stage("rules"):
        findings, errors = _run_checks(context, enabled, filename, source, link)
        located = _locate(context, findings, filename, confidence)
    diagnostics = [diagnostic for diagnostic, _ in located if diagnostic.filename == filename]
    if diagnostics or UNUSED_SUPPRESSION in enabled:
        diagnostics = _apply_suppressions(source, [
            (d, row) for d, row in located if d.filename == filename], enabled, filename)
    for shown, text in texts.items():
        # A finding in another file, made by this file's call: that file's comments
        # suppress it; its unused suppressions are that file's own check's to report.
        elsewhere = [(d, row) for d, row in located if d.filename == shown]
        if elsewhere:
            suppressions = parse_suppressions(text)
            diagnostics += unsuppressed(suppressions, elsewhere)
            if link is not None and UNUSED_SUPPRESSION in enabled:
                # That file's own check, blind to this call, calls them unused: the run
                # withdraws those findings (`Result.used_elsewhere`).
                link.used_elsewhere += unused_findings(suppressions, enabled, shown,
                                                        used=True)
    return sorted(errors + diagnostics, key=lambda d: d.sort_key)


def _run_checks(context: Context, enabled: frozenset[str], filename: str, source: str,
                link: Link | None = None):
    errors: list[Diagnostic] = []
    try:
        with stages.stage("analysis"):
            analysis = analyse(context.module, source, link)
    except RecursionError:
        return [], [_file_error(filename, "file is nested too deeply to analyse")]
    except NeedsText:
        raise  # checked again on libcst's own tree
    except Exception as error:  # a bug in aliaslint: report it, keep going
        return [], [_file_error(filename, _internal("the analysis", error), code=INTERNAL_ERROR)]
    by_event: dict[type, list] = {}
    for event in analysis.events:
        by_event.setdefault(type(event), []).append(event)
    findings: dict[tuple, Finding] = {}
    ranks: dict[tuple, tuple[bool, bool, bool]] = {}  # how each kept finding ranks
    low = analysis.low  # (asked only when some event is: an event's hash walks its values)
    occurred = {kind.__name__ for kind in by_event}
    briefs = registry.briefs()
    for code in sorted(enabled):
        brief = briefs.get(code)
        if brief is None or occurred.isdisjoint(brief.events):
            continue  # none of the events its checks read: its module need not be loaded
        rule = registry.get(code)
        if rule is None:
            continue
        try:
            for check in rule.checks:
                for event in by_event.get(check.event, ()):
                    assumed = bool(low) and event in low
                    for finding in check.run(event, context):
                        if assumed:  # it rests on the values a call site passes
                            finding = replace(finding, confidence="low")
                        # One write may dirty several saves, and one call site may be
                        # reached several times: a rule reports a node once, with the
                        # best of its explanations, the first of equals: high confidence
                        # before low, then one with a fix, then a read of the written
                        # tensor inside the function that writes it before a caller's
                        # read after the call (the hazard where it is made, which the
                        # run-time confirmation checks).
                        key = (finding.code, id(finding.node))
                        rank = (finding.confidence != "low", finding.fix is not None,
                                isinstance(event, StaleRead) and event.write.callee is None)
                        if key not in ranks or rank > ranks[key]:
                            findings[key], ranks[key] = finding, rank
        except NeedsText:
            raise
        except Exception as error:
            errors.append(_file_error(filename, _internal(code, error), code=INTERNAL_ERROR))
    return _first_links(findings), errors


def _first_links(findings: dict[tuple, Finding]) -> list[Finding]:
    """The findings, one per chain of in-place methods: `y.mul_(2).add_(1)` writes one tensor
    twice (an in-place method returns its receiver), so a rule that reports the first link
    has said it; a later link reported again would name the chain as its subject, and its
    fix would leave the first write in place."""
    kept = []
    for (code, _), finding in findings.items():
        node = finding.node
        chained = False
        while isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute):
            inner = node.func.value
            if not (isinstance(inner, cst.Call) and isinstance(inner.func, cst.Attribute)
                    and inner.func.attr.value.endswith("_")
                    and not inner.func.attr.value.endswith("__")):
                break
            if (code, id(inner)) in findings:
                chained = True
                break
            node = inner
        if not chained:
            kept.append(finding)
    return kept


def _locate(context: Context, findings: list[Finding], filename: str,
            confidence: Confidence) -> list[tuple[Diagnostic, int]]:
    """Each finding as a Diagnostic, with the first row of its statement.  A node of
    another file of the program is placed in that file."""
    if not findings:
        return []

    def where(node: cst.CSTNode) -> tuple[Context, str]:
        elsewhere = context.file_of(node)
        return (context, filename) if elsewhere is None else \
            (context.others[elsewhere], elsewhere)

    located = []
    for finding in findings:
        home, shown = where(finding.node)
        start, end = home.location(finding.node)
        related = []
        for message, node in finding.related:
            place, name = where(node)
            related.append(Related(message, name, *place.location(node)))
        if shown != filename:
            # The fix would edit another file, which that file's own check owns.
            fix = None
            row = home.location(finding.stmt)[0].row if home.holds(finding.stmt) else start.row
        else:
            fix = fixes.located(finding, context)
            row = context.location(finding.stmt)[0].row
        # A witness names rows of the checked module; one in another file has none here.
        diagnostic = Diagnostic(finding.code, finding.message, shown, start, end,
                                tuple(related), fix=fix, confidence=finding.confidence,
                                witness=finding.witness if shown == filename else None)
        if confidence == "low" or diagnostic.confidence == "high":
            located.append((diagnostic, row))
    return located


def _apply_suppressions(source: str, located: list[tuple[Diagnostic, int]], enabled,
                        filename: str) -> list[Diagnostic]:
    suppressions = parse_suppressions(source)
    kept = unsuppressed(suppressions, located)
    if UNUSED_SUPPRESSION in enabled:
        kept += unused_findings(suppressions, enabled, filename)
    return kept
