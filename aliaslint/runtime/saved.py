"""The tracer's record of a tensor autograd saved, and autograd's own error about it."""

from __future__ import annotations

import weakref
from typing import Any

from aliaslint.runtime.evidence import Layout, Moment, Named
from aliaslint.runtime.sites import Site


class Saved:
    """The object autograd stores instead of a saved tensor while a trace is open.

    It lives exactly as long as autograd's saved variable (the graph owns it), so
    "this record is alive" means "a backward pass may still read this tensor".  Under the
    program's own saved-tensor hooks it wraps what those hooks packed (``inner``) and keeps
    only a weak reference to the tensor, so that it holds no memory they meant to free.
    """

    __slots__ = ("tensor", "original", "inner", "version", "site", "requires_grad",
                 "is_output", "node_name", "output_nr", "modified_at", "modified_op",
                 "modified_detached", "detach_site", "overwritten_at", "overwritten_op",
                 "modified_layout", "modified_version", "overwritten_layout", "__weakref__")

    def __init__(self, tensor, original, inner, version, site, requires_grad, is_output,
                 node_name, output_nr):
        # For an input this is the original tensor, which autograd holds anyway; for an
        # output it is a detached alias (same storage and version counter), because the
        # original refers to the node that owns this record and would make a cycle.
        self.tensor = tensor
        self.original: weakref.ref | None = original
        self.inner = inner
        self.version = version
        self.site: Site | None = site
        self.requires_grad = requires_grad
        self.is_output = is_output
        self.node_name = node_name
        self.output_nr = output_nr
        # The first write that moved the version counter, and through what.
        self.modified_at: Site | None = None
        self.modified_op = ""
        self.modified_detached = False
        self.detach_site: Site | None = None
        # The tensor written and the version it made, for the report's drawing.
        self.modified_layout: Layout | None = None
        self.modified_version: int | None = None
        # A write through an alias with its own version counter (`.data`) over its bytes.
        self.overwritten_at: Site | None = None
        self.overwritten_op = ""
        self.overwritten_layout: Layout | None = None

    def current(self):
        """The saved tensor (or, under the program's hooks, the original) if alive."""
        return self.tensor if self.original is None else self.original()


def history(record: Saved, backward: Site | None) -> dict[str, Any]:
    """The saved tensor's story as a finding's evidence (``TraceState.report``'s keywords):
    saved at its version, written (through what, making which version), read by backward."""
    saved = record.current()
    # Only an output's node is the op that saved it (an input's is the op that made it).
    saver = forward_op_name(record.node_name) if record.is_output and record.node_name else ""
    views: list[Named] = [(f"saved for backward by `{saver}`" if saver
                           else "saved for backward", saved)]
    events: list[Moment] = [("saved", record.site, record.version, saver)]
    if record.detach_site is not None:
        events.append(("view", record.detach_site, None, "detach"))
    if record.modified_at is not None:
        views.append((f"written by `{record.modified_op}`", record.modified_layout))
        events.append(("written", record.modified_at, record.modified_version,
                       record.modified_op))
    if record.overwritten_at is not None:
        # Through `.data`: the counter autograd checks did not move.
        views.append((f"written by `{record.overwritten_op}` (through `.data`)",
                      record.overwritten_layout))
        events.append(("written", record.overwritten_at, record.version, record.overwritten_op))
    events.append(("read", backward, saved._version if saved is not None else None, "backward"))
    return {"views": views, "events": events}


def forward_op_name(node_name: str) -> str:
    """``SigmoidBackward0`` → ``Sigmoid``, ``AddBackward1`` → ``Add1``, as autograd names them."""
    position = node_name.rfind("Backward")
    if position < 0:
        return node_name
    suffix = node_name[position + len("Backward"):]
    if not suffix.isdigit() and suffix:
        return node_name
    return node_name[:position] + ("" if suffix in ("", "0") else suffix)


def version_error(record: Saved, anomaly_mode: bool) -> str:
    """Autograd's own message (torch/csrc/autograd/saved_variable.cpp), then the lines."""
    tensor = record.tensor
    shape = ", ".join(str(size) for size in tensor.shape)
    message = ("one of the variables needed for gradient computation has been modified "
               f"by an inplace operation: [{tensor.type()} [{shape}]]")
    if record.is_output:
        node_name = record.node_name
    else:
        node = tensor.grad_fn
        node_name = node.name() if node is not None else ""
    if node_name:
        message += f", which is output {record.output_nr} of {forward_op_name(node_name)},"
    message += (f" is at version {tensor._version}; expected version {record.version} "
                "instead.")
    if anomaly_mode:
        message += (" Hint: the backtrace further above shows the operation that failed "
                    "to compute its gradient. The variable in question was changed in "
                    "there or anywhere later. Good luck!")
    else:
        message += (" Hint: enable anomaly detection to find the operation that failed to "
                    "compute its gradient, with torch.autograd.set_detect_anomaly(True, "
                    "check_nan=False).")
    saved = record.site.describe() if record.site else "an unknown location"
    modified = record.modified_at.describe() if record.modified_at else "an unknown location"
    return f"{message} aliaslint: saved at {saved}; modified at {modified}."
