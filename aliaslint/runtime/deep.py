"""What ``trace(deep=True)`` does with the ops its dispatch mode hands over.

The dispatch mode (``aliaslint.runtime.dispatch``) sees every ATen op, writes torch makes
from C++ among them, but passes most of them straight through: only ops whose schema writes
or makes a view come here, and every op while some part waits for a read.  Each such op is
taken apart into what it writes, reads and makes, and handed to the parts that follow those.
Unlike a wrapped call's, an op's write is settled later, since autograd moves the version
counter above the mode, after the op has returned.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from aliaslint.runtime.dispatch import OpEvent, OpFacts, written
from aliaslint.runtime.observer import inputs_of
from aliaslint.runtime.sites import LazySite
from aliaslint.runtime.storages import NO_STORAGE
from aliaslint.runtime.trace_state import TraceState
from aliaslint.runtime.views import Views
from aliaslint.runtime.writes import Writes


class DeepObserver:
    """The deep mode's side of the tracer: what each op's schema says, learnt once per op
    (``facts``), and the handling of the ops that write, make views or are read."""

    def __init__(self, shared: TraceState, writes: Writes, views: Views,
                 wrapped_caller_is_user: Callable[[], bool | None]) -> None:
        self.shared = shared
        self.facts: dict[Any, OpFacts | None] = {}
        # Inside a wrapped write the wrapper knows whether user code called it.
        self._wrapped_caller_is_user = wrapped_caller_is_user
        self._writes = writes
        self._views = views

    def observe(self, op, facts: OpFacts | None, args: tuple, kwargs: dict):
        """Everything but the dispatch mode's fast path: writes, views, reads, watches."""
        shared = self.shared
        torch = shared.torch
        if not shared.open or torch.compiler.is_compiling():
            return op(*args, **kwargs)
        tensor_type = shared.tensor_type
        site = LazySite(self._wrapped_caller_is_user())
        unresolved = self._writes.unresolved
        with shared.lock:
            if unresolved:
                self._writes.resolve()
            writes = written(facts, args, kwargs, tensor_type)
            written_ids = {id(w) for w in writes}
            inputs = [t for t in inputs_of(args, kwargs, tensor_type, writes)
                      if id(t) not in written_ids]
            if not (facts is not None and facts.makes_view):
                self._writes.reads(inputs, site,
                                   facts.name if facts else op.overloadpacket.__name__)
            if writes and facts is not None:
                try:
                    note = self._writes.before_write(facts.name, writes, site, facts.data,
                                                     lambda: inputs)
                except NO_STORAGE:
                    note = None  # sparse, nested and subclass tensors are skipped
                if note is not None and (note.pending or note.shares):
                    # The version counter moves after the kernel, above this mode: settled
                    # later, so the line is found now.
                    site()
                    unresolved.append(note)
            shared.update_attention()
        result = op(*args, **kwargs)
        if facts is not None and facts.makes_view:
            self._views.record(facts.name, args, result, site)
        if shared.watches:
            where = site()
            if where is not None:
                for callback in shared.watches.get((where.filename, where.line), ()):
                    callback(OpEvent(op.overloadpacket.__name__, args, kwargs, result, where,
                                     tuple(writes), op))
        return result
