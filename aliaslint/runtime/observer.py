"""The interface between the wrappers on torch's entry points (``aliaslint.runtime.patches``)
and whatever observes the calls they see (the tracer): the calls as the wrappers hand them
over, and ``EntryPointObserver``, what an observer answers to.

It sits apart from both sides so that neither imports the other: the wrappers know only
this protocol, and a tracer is one implementation of it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

from aliaslint.runtime.dispatch import tensors_in
from aliaslint.runtime.evidence import Moment, Named
from aliaslint.runtime.sites import LazySite, Site

# What an observer learns before a write and wants back once the write has run.
Note = TypeVar("Note")

SavedTensorHook = Callable[[Any], Any]

_RECEIVER = ((0, "self"),)


@dataclass(frozen=True)
class WriteSpec:
    """Where a writing call's written tensors are among its arguments."""

    name: str
    # (position, keyword) of each written argument; position -1: keyword only.
    places: tuple[tuple[int, str], ...]
    # The call writes only when this keyword is given a true value (``out=``, ``inplace=``),
    # found at this position when passed positionally (-1: keyword only).
    switch: tuple[int, str] | None = None
    # False for calls that change only sizes, strides or the storage (``set_``, ``t_``).
    data: bool = True

    def targets(self, args: tuple[Any, ...], kwargs: dict[str, Any],
                tensor_type: type) -> list[Any]:
        if self.places == _RECEIVER and self.switch is None:  # most calls: `x.add_(y)`
            return [args[0]] if args and isinstance(args[0], tensor_type) else []
        if self.switch is not None:
            position, keyword = self.switch
            value = args[position] if 0 <= position < len(args) else kwargs.get(keyword)
            # Never the truth of a tensor (`out=t` of several elements has none): the
            # switch is off when absent, None or False.
            if value is None or isinstance(value, int) and not value:
                return []
            if keyword == "out":
                return list(tensors_in((value,), tensor_type))
        found: list[Any] = []
        for position, keyword in self.places:
            value = args[position] if 0 <= position < len(args) else kwargs.get(keyword)
            if value is not None:
                found += tensors_in((value,), tensor_type)
        return found


def any_view(args: tuple[Any, ...], kwargs: dict[str, Any], tensor_type: Any) -> bool:
    """Is any tensor argument (one level into lists) a view?  (The written ones too.)"""
    for value in (*args, *kwargs.values()) if kwargs else args:
        if isinstance(value, tensor_type):
            if value._is_view():
                return True
        elif isinstance(value, (list, tuple)):
            for item in value:
                if isinstance(item, tensor_type) and item._is_view():
                    return True
    return False


def inputs_of(args: tuple[Any, ...], kwargs: dict[str, Any], tensor_type: type,
              written: list[Any]) -> list[Any]:
    """The tensors a call reads: its tensor arguments (one level into lists), less those
    it writes."""
    ids = {id(t) for t in written}
    return [t for t in tensors_in((*args, *kwargs.values()), tensor_type) if id(t) not in ids]


class Call:
    """One wrapped writing call: the call, the tensors it writes, and its user line."""

    __slots__ = ("spec", "args", "kwargs", "targets", "site")

    def __init__(self, spec: WriteSpec, args: tuple[Any, ...], kwargs: dict[str, Any],
                 targets: list[Any]) -> None:
        self.spec, self.args, self.kwargs, self.targets = spec, args, kwargs, targets
        # The user line that made the call (the stack is walked once, on demand).
        self.site = LazySite()

    def inputs(self) -> list[Any]:
        return inputs_of(self.args, self.kwargs, type(self.targets[0]), self.targets)


class EntryPointObserver(Protocol[Note]):
    """What the wrappers on torch's entry points tell each open observer, in the order the
    program makes the calls.  Every method runs on the program's thread, in the middle of
    its call, so each returns at once when it has nothing to follow."""

    def will_write(self, spec: WriteSpec, args: tuple[Any, ...], kwargs: dict[str, Any],
                   targets: list[Any]) -> Note | None:
        """A wrapped call is about to write ``targets``; what is returned comes back to
        ``wrote`` once the call has run (None: nothing to settle)."""

    def wrote(self, note: Note) -> None:
        """The write ``will_write`` announced has run (version counters have moved)."""

    def refused(self, call: Call, error: BaseException) -> None:
        """A wrapped write raised ``error`` (re-raised to the program afterwards)."""

    def made_view(self, op: str, source: Any, result: Any, site: Site | None,
                  args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        """A wrapped call (or a custom Function) returned a view: ``result``."""

    def function_refused(self, name: str, site: Site | None, error: BaseException,
                         forward: Site | None) -> None:
        """A custom Function's ``apply`` raised ``error``."""

    def function_wrote_input(self, name: str, op: str, write: Site | None,
                             call: Site | None) -> None:
        """A custom Function's ``forward`` wrote an input that requires grad without
        ``ctx.mark_dirty``."""

    def shared_with_numpy(self, tensor: Any, array: Any, site: Site | None,
                          from_numpy: bool) -> None:
        """``tensor`` and the NumPy ``array`` now share memory."""

    def nest_hooks(self, pack: SavedTensorHook,
                   unpack: SavedTensorHook) -> tuple[SavedTensorHook, SavedTensorHook]:
        """The program pushes saved-tensor hooks of its own: the pair to push instead."""

    def snapshot_overwritten(self, site: Site | None, message: str,
                             related: list[tuple[str, Site | None]], views: list[Named],
                             events: list[Moment]) -> None:
        """A snapshot kept by reference (``aliaslint.runtime.snapshots``) was read after its
        owner wrote it."""
