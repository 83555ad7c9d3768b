"""torch's refusals of aliasing writes, reported as findings (the table of them is
``aliaslint.runtime.refusals``), and custom Functions that write their inputs unannounced.

torch raises before such a write reaches any hook, so these hazards are learnt from the
exception on its way to the program (a wrapper sees it go by; an error that ends the traced
block is read from its traceback).  What makes a refusal worth reading is the earlier line
that explains it: where the view written, or the input overlapping, was made.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from aliaslint.runtime.evidence import Named, made_then
from aliaslint.runtime.hazards import Hazard
from aliaslint.runtime.observer import Call
from aliaslint.runtime.refusals import Refusal, refusal
from aliaslint.runtime.sites import Site
from aliaslint.runtime.trace_state import TraceState
from aliaslint.runtime.usercode import is_user_file
from aliaslint.runtime.views import Views


class Refusals:
    """Reports what torch refused, with the line that made the view or input involved."""

    def __init__(self, shared: TraceState, views: Views) -> None:
        self._shared = shared
        self._views = views

    def refused(self, call: Call, error: BaseException) -> None:
        """A wrapped write raised: if torch refused it as an aliasing hazard, report it."""
        case = refusal(error)
        if case is None or not self._shared.open:
            return
        with self._shared.lock:
            self._report(case, call.spec.name, call.site(), call.targets, call.inputs)

    def _report(self, case: Refusal, op: str, site: Site | None, targets: list[Any],
                inputs: Callable[[], list[Any]], origin: Site | None = None) -> None:
        related: list[tuple[str, Site | None]] = []
        views: list[Named] = [(f"written by `{op}`" if op else "written", t) for t in targets]
        made = None
        if case.kind in ("view", "overlap"):
            for tensor in targets:
                made = self._views.view_site(tensor)
                if made is not None:
                    related.append((f"`{made[1]}` made the view here", made[0]))
                    break
        elif case.kind == "input":
            for tensor in inputs():
                made = self._views.view_site(tensor)
                if made is not None:
                    related.append((f"`{made[1]}` made the overlapping input here", made[0]))
                    views.append((f"overlapping input, made by `{made[1]}`", tensor))
                    break
        elif case.kind == "out" and any(
                t.is_leaf and t.requires_grad for t in targets):
            # `out=` a leaf that requires grad: the write the leaf rule is about, though
            # torch names the `out=` argument first.
            case = case._replace(hazard=Hazard.LEAF_REFUSED)
        events = made_then(made, "written", site, op)
        if case.kind == "function":
            if origin is not None:
                related.append(("its `forward` is defined here", origin))
            what = f" `{op}`" if op else ""
            self._shared.report(case.hazard, site, f"torch refused the outputs of the custom "
                                f"`autograd.Function`{what}: {case.explanation}", related, views,
                                events)
            return
        name = f"`{op}`" if op else "an in-place operation"
        call = "call" if case.kind == "out" else "in-place"
        self._shared.report(case.hazard, site,
                            f"torch refused the {call} {name}: {case.explanation}", related,
                            views, events)

    def function_refused(self, name: str, site: Site | None, error: BaseException,
                         forward: Site | None) -> None:
        """``Function.apply`` raised: if torch refused the Function's outputs as an aliasing
        hazard (an input marked dirty and not returned), report it at the call."""
        case = refusal(error)
        if case is None or not self._shared.open:
            return
        with self._shared.lock:
            self._report(case, name, site, [], list, forward)

    def function_wrote_input(self, name: str, op: str, write: Site | None,
                             call: Site | None) -> None:
        """A custom Function's ``forward`` wrote an input that requires grad and did not
        mark it dirty: autograd still describes the input by its old history."""
        if not self._shared.open:
            return
        with self._shared.lock:
            where = write or call
            related = [("the Function is applied here", call)] if write is not None else []
            self._shared.report(
                Hazard.FUNCTION_INPUT_WRITTEN, where,
                f"the `forward` of the custom `autograd.Function` `{name}` writes an input "
                f"that requires grad in place (`{op}`) without `ctx.mark_dirty`: autograd "
                "keeps the input's old history, so gradients through it are silently wrong; "
                "call `ctx.mark_dirty(input)` and return it, or write a clone",
                related, events=[("written", where, None, op)])

    def refused_at_exit(self, error: BaseException | None) -> None:
        """A refusal that ended the traced block without passing a wrapper (a write torch
        made from C++ code): its innermost user frame is the write."""
        case = refusal(error)
        if case is None or error is None:
            return
        site = None
        tb = error.__traceback__
        while tb is not None:
            code = tb.tb_frame.f_code
            if is_user_file(code.co_filename):
                filename = code.co_filename
                if not filename.startswith("<"):
                    filename = os.path.abspath(filename)
                site = Site(filename, tb.tb_lineno, code, tb.tb_lasti)
            tb = tb.tb_next
        with self._shared.lock:
            # An `out=` refusal the wrapper saw may have been reported as the leaf's.
            if not self._shared.reported(case.hazard, site) and not (
                    case.kind == "out" and self._shared.reported(Hazard.LEAF_REFUSED, site)):
                self._report(case, "", site, [], list)

