"""What a rule module declares: its ``Rule``, its checks over events, and the ``Finding``s
they make.

A rule lives in one module of ``aliaslint.checks`` named after its code
(``al201_write_through_view.py``)::

    RULE = Rule("AL201", "write-through-view", "An in-place write through ...",
                confirm=SHARED_WRITE)  # from aliaslint.runtime.predicates

    @RULE.check(StaleRead)
    def write_through_view(event: StaleRead, ctx: Context) -> Iterator[Finding]:
        ...
        yield RULE.finding(write.node, write.stmt, message, related, witness=...)

The registry (``aliaslint.registry``) collects the modules; ``rules/ALnnn.md`` documents
the rule and holds its examples.  A check reads the events the analysis recorded and never
walks the tree itself.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Iterator

import libcst as cst
from libcst.metadata import (
    CodeRange,
    MetadataWrapper,
    ParentNodeProvider,
    PositionProvider,
    ScopeProvider,
)

from aliaslint import ops
from aliaslint.converted import NeedsText, is_converted, nodes_of, twins
from aliaslint.headline import Code, shortened
from aliaslint.diagnostics import Applicability, Confidence, Operand, Position, Witness
from aliaslint.lines import libcst_column_shifts
from aliaslint.parsing import parse_module

if TYPE_CHECKING:
    from aliaslint.runtime.hazards import Hazard
    from aliaslint.runtime.predicates import Predicate


@dataclass(frozen=True)
class FixPlan:
    """A rewrite that removes a finding: each node's source replaced by new text, and the
    modules the new text needs imported (`copy`).  ``applicability`` is its class: "safe"
    keeps what the program computes except a failure that was certain, "unsafe" may change
    it (usually the intended bug fix), "display-only" is shown and never applied."""

    message: str
    applicability: Applicability
    replacements: tuple[tuple[cst.CSTNode, str], ...]
    # Each `import` the new text needs: a module (`copy`), or a module under another name
    # where its own is taken in the scope of the edit (`copy as _copy`).
    imports: tuple[str, ...] = ()


@dataclass(frozen=True)
class Finding:
    """A hazard a check found: where (the node a fix would change), why, and what explains it.

    ``stmt`` is the statement whose first line a suppression comment may sit on;
    ``related`` pairs a label with each other node the finding depends on.
    """

    code: str
    node: cst.CSTNode
    stmt: cst.CSTNode
    message: str
    related: tuple[tuple[str, cst.CSTNode], ...] = ()
    witness: Witness | None = None
    confidence: Confidence = "high"
    fix: FixPlan | None = None


class Context:
    """What a check may ask about the module beyond the event itself."""

    def __init__(self, module: cst.Module, positions: Any = None, source: str | None = None,
                 *, twinned: bool = False):
        self.module = module
        # A tree made from CPython's (aliaslint/converted.py) knows no positions or text:
        # a check that asks for them is run again on libcst's own tree.  ``twinned``: or
        # they are read from libcst's parse of ``source``, node for node (another file of
        # the program, read by a check whose own tree is libcst's: only a file a finding
        # points into is parsed).
        self._converted = is_converted(module)
        self._twinned = twinned and self._converted and source is not None
        self._source = source
        self._held: set[int] | None = None  # a twinned tree's nodes, by id
        self._twins: tuple[cst.Module, dict[int, cst.CSTNode]] | None = None
        # Rows whose columns libcst counts short of CPython's (form feeds it drops).
        self._shifts: dict[int, int] = {}
        if source is not None and "\f" in source and not self._converted:
            self._shifts = libcst_column_shifts(source, module.code)
        # A mapping node -> CodeRange; given when a part of it can be kept from a check of
        # an earlier version of the text (the language server's re-check).
        self._positions: Any = positions
        self._parents: Any = None
        self._scopes: Any = None
        # The other files of the program whose nodes an event may hold (a write inside a
        # helper of `utils.py`), by the name findings in them are reported under.
        self.others: dict[str, Context] = {}

    @property
    def positions(self) -> Any:
        """Node → CodeRange, computed on first use: only files with findings pay for it."""
        if self._converted and not self._twinned:
            raise NeedsText("positions")
        if self._positions is None:
            if self._twinned:
                parsed, nodes = self._twin()
                self._positions = _Twinned(nodes, _positions_of(parsed))
            else:
                self._positions = _positions_of(self.module)
        return self._positions

    @property
    def located(self) -> bool:
        """Were positions in this module computed (a finding or message points into it)?"""
        return self._positions is not None

    def _twin(self) -> tuple[cst.Module, dict[int, cst.CSTNode]]:
        """libcst's parse of a twinned tree's text, and each node's twin in it."""
        if self._twins is None:
            assert self._source is not None
            try:
                parsed = parse_module(self._source)
            except (cst.ParserSyntaxError, RecursionError):
                raise NeedsText("positions") from None
            nodes = twins(self.module, parsed)
            if nodes is None:
                raise NeedsText("positions")
            if "\f" in self._source:
                self._shifts = libcst_column_shifts(self._source, parsed.code)
            self._twins = parsed, nodes
        return self._twins

    def _text_of(self, node: cst.CSTNode) -> tuple[cst.Module, cst.CSTNode]:
        """The module whose text holds ``node``, and the node there: a node of a twinned
        tree is read from its twin."""
        if not self._twinned:
            return self.module, node
        parsed, nodes = self._twin()
        twin = nodes.get(id(node))
        if twin is None:
            raise NeedsText("a node's text")
        return parsed, twin

    def _home(self, node: cst.CSTNode) -> Context:
        """The context that reads ``node``'s text: this one, or a twinned other file's."""
        if self._twinned or not any(other._twinned for other in self.others.values()) \
                or self.holds(node):
            return self
        for other in self.others.values():
            if other._twinned and other.holds(node):
                return other
        return self

    def span(self, node: cst.CSTNode) -> CodeRange:
        try:
            span: CodeRange = self.positions[node]
        except KeyError:
            for other in self.others.values():
                if other.holds(node):
                    return other.span(node)
            if any(other._twinned for other in self.others.values()):
                raise NeedsText("positions") from None  # in none of them: parse them all
            raise
        return span

    def holds(self, node: cst.CSTNode) -> bool:
        """Is ``node`` in this module (not in another file of the program)?"""
        if self._twinned:
            if self._held is None:
                self._held = {id(each) for each in nodes_of(self.module)}
            return id(node) in self._held
        try:
            self.positions[node]  # a mapping by node; some have no `in`
        except KeyError:
            return False
        return True

    def file_of(self, node: cst.CSTNode) -> str | None:
        """The name of the other file of the program ``node`` is in; None for this one."""
        if self.holds(node):
            return None
        for name, other in self.others.items():
            if other.holds(node):
                return name
        return None

    def place(self, node: cst.CSTNode) -> str:
        """`line 12`, or `line 12 of utils.py` for a node of another file."""
        elsewhere = self.file_of(node)
        line = f"line {self.line(node)}"
        return line if elsewhere is None else f"{line} of {elsewhere}"

    def location(self, node: cst.CSTNode) -> tuple[Position, Position]:
        """The node's start and end as findings count them: 1-based rows and columns."""
        span = self.span(node)
        shifts = self._shifts
        return (Position(span.start.line, span.start.column + 1 + shifts.get(span.start.line, 0)),
                Position(span.end.line, span.end.column + 1 + shifts.get(span.end.line, 0)))

    def line(self, node: cst.CSTNode) -> int:
        return self.span(node).start.line

    def rows(self, node: cst.CSTNode) -> tuple[int, ...]:
        """Every line ``node`` spans."""
        span = self.span(node)
        return tuple(range(span.start.line, span.end.line + 1))

    def exact(self, node: cst.CSTNode) -> str:
        """The node's source exactly as written (line breaks and comments kept), for the
        text of a fix."""
        module, node = self._home(node)._text_of(node)
        return module.code_for_node(node)

    def parent(self, node: cst.CSTNode) -> cst.CSTNode | None:
        """The node that contains ``node``, computed on first use."""
        if self._converted:
            raise NeedsText("parents")  # twinned too: only fixes ask, in the checked file
        if self._parents is None:
            # A batchable provider: only `resolve` runs its visitor.
            wrapper = MetadataWrapper(self.module, unsafe_skip_copy=True)
            self._parents = wrapper.resolve(ParentNodeProvider)
        parent: cst.CSTNode | None = self._parents.get(node)
        return parent

    def scope(self, node: cst.CSTNode) -> Any:
        """libcst's scope of ``node`` (None where it has none), computed on first use: only
        fixes that bring in a name ask."""
        if self._converted:
            raise NeedsText("scopes")
        if self._scopes is None:
            wrapper = MetadataWrapper(self.module, unsafe_skip_copy=True)
            self._scopes = wrapper.resolve(ScopeProvider)
        current: cst.CSTNode | None = node
        while current is not None:
            scope = self._scopes.get(current)
            if scope is not None:
                return scope
            current = self.parent(current)
        return None

    def source(self, node: cst.CSTNode) -> str:
        """The node's source text on one line, for messages: a statement without the
        comments and blank lines above it, which libcst counts as part of it."""
        return _one_line(*self._home(node)._text_of(node))

    def code(self, node: cst.CSTNode, limit: int = 60) -> str:
        """The node's source in backticks, shortened at token boundaries to ``limit``
        characters where it can be (``aliaslint.headline``)."""
        forms = shortened(self.source(node))
        return f"`{next((form for form in forms if len(form) <= limit), forms[-1])}`"

    def quote(self, node: cst.CSTNode) -> Code:
        """The node's source, for a headline that shortens it to fit (``headline.fit``)."""
        return Code(self.source(node))

    def operand(self, node: cst.CSTNode) -> Operand:
        """``node`` as the tracer will read it: a name or attribute chain, and what the
        code derives from it over the same memory (views, ``.data``, storages, indexing)."""
        text = self.source(node)
        derived: list[str] = []
        while True:
            if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) \
                    and node.func.attr.value in ops.deriving_methods():
                derived.append(f".{node.func.attr.value}()")
                node = node.func.value
            elif isinstance(node, cst.Attribute) and node.attr.value in ops.deriving_attributes():
                derived.append(f".{node.attr.value}")
                node = node.value
            elif isinstance(node, cst.Subscript):
                derived.append("[...]")
                node = node.value
            else:
                break
        return Operand(text, chain(node), "".join(reversed(derived)))


def _one_line(module: cst.Module, node: cst.CSTNode) -> str:
    """``Context.source`` of ``node``, a node of ``module``'s text."""
    if isinstance(node, cst.For):
        # A loop stands for its header: `for row in batch`.
        return f"for {_one_line(module, node.target)} in {_one_line(module, node.iter)}"
    if isinstance(node, cst.SimpleStatementLine):
        # Its statements without the comment at the end of the line.
        return " ".join("; ".join(module.code_for_node(statement).strip().rstrip(";")
                                  for statement in node.body).split())
    if isinstance(node, cst.BaseCompoundStatement) and node.leading_lines:
        node = node.with_changes(leading_lines=())
    text = module.code_for_node(node).strip()
    return " ".join(text.split())


def _positions_of(module: cst.Module) -> Any:
    """Node → CodeRange over ``module``."""
    wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
    try:
        # The provider alone: `wrapper.resolve` also walks the whole tree once for the
        # batchable providers it has none of, which doubles the cost (and the language
        # server's re-check time).
        return PositionProvider()._gen(wrapper)
    except (AttributeError, TypeError):  # a libcst whose internals differ
        return wrapper.resolve(PositionProvider)


class _Twinned:
    """Positions of a converted tree's nodes: their twins' in libcst's parse."""

    def __init__(self, nodes: dict[int, cst.CSTNode], positions: Any) -> None:
        self._nodes, self._positions = nodes, positions

    def __getitem__(self, node: cst.CSTNode) -> CodeRange:
        twin = self._nodes.get(id(node))
        if twin is None:
            raise KeyError(node)
        found: CodeRange = self._positions[twin]
        return found


def chain(node: cst.CSTNode) -> tuple[str, ...] | None:
    """``a.b.c`` → ("a", "b", "c"); None for anything else."""
    names: list[str] = []
    while isinstance(node, cst.Attribute):
        names.append(node.attr.value)
        node = node.value
    if not isinstance(node, cst.Name):
        return None
    names.append(node.value)
    return tuple(reversed(names))




CheckFn = Callable[[Any, Context], Iterator[Finding]]


@dataclass(frozen=True)
class Check:
    """One check of a rule: the kind of event it reads and the function that reads it."""

    event: type
    run: CheckFn


@dataclass
class Rule:
    """A rule: its code and name, whether it is on by default, and how to find it.

    ``words`` is a cheap test of the raw source (strings and comments included): False
    means the rule cannot fire in that file, which is then not parsed for it; None means
    any file that mentions torch may hold a finding.  ``confirm`` is the runtime
    predicate that confirms a finding, imported by name from ``aliaslint.runtime.predicates``
    (the rule's run-time half); None for the codes that describe the linter itself.
    ``assumption`` is what a low-confidence finding of the rule takes for granted (None:
    the rule makes only high ones).
    """

    code: str
    name: str
    summary: str
    default: bool = True
    words: Callable[[str], object] | None = None
    confirm: Predicate | None = None
    assumption: str | None = None
    # What the tracer sees that it reports under this rule's code (``aliaslint trace``).
    traced: tuple[Hazard, ...] = ()
    # What else the tracer sees that, at a finding's rows, confirms it (the tracer reports
    # the write a backward pass then reads as a saved tensor written).
    confirmed_by: tuple[Hazard, ...] = ()
    always_on: bool = False  # reported whatever the selection (files that cannot be checked)
    # The class of the rule's fixes ("safe", "unsafe", "display-only", or a mix such as
    # "safe or unsafe"), with the reason; "none" when it has no fix.
    fix: str = "none"
    checks: list[Check] = field(default_factory=list)

    @property
    def events(self) -> tuple[type, ...]:
        return tuple(dict.fromkeys(check.event for check in self.checks))

    def check(self, event: type) -> Callable[[CheckFn], CheckFn]:
        """Register the decorated function as a check of ``event``s."""

        def register(function: CheckFn) -> CheckFn:
            self.checks.append(Check(event, function))
            return function

        return register

    def witness(self, **facts: Any) -> Witness:
        """The claim a finding of this rule makes, for the rule's runtime predicate."""
        if self.confirm is None:
            raise ValueError(f"{self.code} has no runtime predicate to claim anything for")
        return Witness(self.confirm, **facts)

    def finding(self, node: cst.CSTNode, stmt: cst.CSTNode, message: str,
                related: tuple[tuple[str, cst.CSTNode], ...] = (), *,
                witness: Witness | None = None, confidence: Confidence = "high",
                fix: FixPlan | None = None) -> Finding:
        if witness is None and self.confirm is not None:
            witness = self.witness()
        return Finding(self.code, node, stmt, message, related, witness, confidence, fix)
