"""Every view op of the generated table, traced: a write through the view, then a read of its
base that the default tracer sees (the base saved for backward by a product with a tensor
that requires grad), reported at the write.  Writes and reads of disjoint element sets of one
storage, one case per family of views, are not.  A view op the table lists with neither a
recipe nor an exemption here fails the test, so a view op a new torch adds is traced before
it is counted as covered."""

from __future__ import annotations

import contextlib
import io
import runpy
import textwrap
from pathlib import Path

import pytest

import aliaslint
from aliaslint import ops

torch = pytest.importorskip("torch")

BASE = "torch.randn(4, 6)"
COMPLEX = "torch.randn(4, 6, dtype=torch.cfloat)"

# A view op by name (the same for `torch.X`, `torch.Tensor.X` and `torch.linalg.X`): its base
# and its arguments after the input, `[0]` at the end picking the first of several outputs.
# A name listed with neither runs on a `(4, 6)` float base with no arguments.
RECIPES: dict[str, tuple[str | None, str]] = {
    "as_strided": (None, "(2, 3), (6, 1), 1"),
    "broadcast_to": (None, "(1, 4, 6)"),  # no stride 0: a broadcast dim is AL203's
    "chunk": (None, "2, [0]"),
    "conj": (COMPLEX, ""),
    "_conj": (COMPLEX, ""),
    "dsplit": ("torch.randn(2, 3, 4)", "2, [0]"),
    "expand": (None, "(1, 4, 6)"),
    "expand_as": (None, "torch.empty(1, 4, 6)"),
    "hsplit": (None, "2, [0]"),
    "imag": (COMPLEX, ""),
    "moveaxis": (None, "0, 1"),
    "movedim": (None, "0, 1"),
    "narrow": (None, "0, 1, 2"),
    "permute": (None, "(1, 0)"),
    "real": (COMPLEX, ""),
    "select": (None, "0, 1"),
    "split": (None, "2, [0]"),
    "split_with_sizes": (None, "[1, 3], [0]"),
    "squeeze": ("torch.randn(4, 1, 6)", ""),
    "swapaxes": (None, "0, 1"),
    "swapdims": (None, "0, 1"),
    "tensor_split": (None, "2, [0]"),
    "transpose": (None, "0, 1"),
    "unbind": (None, "[0]"),
    "unflatten": (None, "1, (2, 3)"),
    "unfold": (None, "1, 2, 2"),
    "unsqueeze": (None, "0"),
    "view": (None, "3, 8"),
    "view_as": (None, "torch.empty(3, 8)"),
    "view_as_complex": ("torch.randn(4, 6, 2)", ""),
    "view_as_real": (COMPLEX, ""),
    "vsplit": (None, "2, [0]"),
}
# Simple views with no arguments, on a `(4, 6)` float base.
UNARY = frozenset({"H", "T", "mH", "mT", "_neg_view", "adjoint", "diagonal", "t",
                   "_test_autograd_multiple_dispatch_view"})

# Whole programs, where the view is not made from its base alone.
PROGRAMS: dict[str, tuple[str, str]] = {
    # The view `slice_inverse` makes is of its second argument.
    "slice_inverse": ("AL201", """\
        import torch

        w = torch.ones((), requires_grad=True)
        base = torch.randn(4, 6)
        view = {call}
        view.mul_(2.0)
        out = base * w
    """),
    # A detached alias written after autograd saved its tensor: backward reads the new values.
    "detach": ("AL104", """\
        import torch

        w = torch.ones((), requires_grad=True)
        base = torch.randn(4, 6, requires_grad=True)
        out = base * w
        view = {call}
        view.mul_(2.0)
        try:
            out.sum().backward()
        except RuntimeError:
            print("refused")
    """),
}
SLICE_INVERSE = {"torch.Tensor.slice_inverse": "base[:2].slice_inverse(base, 0, 0, 2)",
                 "torch.slice_inverse": "torch.slice_inverse(base[:2], base, 0, 0, 2)"}

# View ops of the table that are not traced here, each with the reason.
EXEMPT: dict[str, str] = {
    "torch.Tensor._indices": "needs a sparse COO tensor",
    "torch.Tensor._values": "needs a sparse COO tensor",
    "torch.Tensor.indices": "needs a coalesced sparse COO tensor",
    "torch.Tensor.values": "needs a coalesced sparse COO tensor",
    "torch.Tensor.crow_indices": "needs a sparse CSR/BSR tensor",
    "torch.Tensor.col_indices": "needs a sparse CSR/BSR tensor",
    "torch.Tensor.ccol_indices": "needs a sparse CSC/BSC tensor",
    "torch.Tensor.row_indices": "needs a sparse CSC/BSC tensor",
    "torch._sparse_broadcast_to": "needs a sparse tensor",
    "torch._make_dual": "forward-mode AD: a dual tensor exists only inside a dual level",
    "torch._unpack_dual": "forward-mode AD: unpacks a dual tensor",
    "torch._nested_get_values": "needs a nested (jagged) tensor",
    "torch._nested_view_from_buffer": "makes a nested tensor, which has no strided layout",
    "torch._nested_view_from_jagged": "makes a nested (jagged) tensor",
    "torch.Tensor.positive": "returns its input object itself: no view object to write through",
    "torch.positive": "returns its input object itself: no view object to write through",
    "torch.Tensor.__pos__": "returns its input object itself: no view object to write through",
    "torch.Tensor._autocast_to_full_precision":
        "private; its input itself outside autocast, a copy inside it",
    "torch.nn.functional.unfold":
        "the table names it after ATen's `unfold` view; `F.unfold` is im2col, a new tensor",
}


def view_ops() -> list[str]:
    return sorted(name for name in ops.names("ops") if ops.lookup(name).kind == "view")


def view_call(qualified: str) -> tuple[str, str] | None:
    """(base, the expression that makes the view) for a table view op, None without a
    recipe."""
    owner, _, name = qualified.rpartition(".")
    if name == "slice_inverse":
        return BASE, SLICE_INVERSE[qualified]
    if name == "__pos__":
        return None
    if name in RECIPES:
        base, arguments = RECIPES[name]
    elif name in UNARY or name == "detach":
        base, arguments = None, ""
    else:
        return None
    base = base or BASE
    op = ops.lookup(qualified)
    if op is not None and op.is_property:
        return base, f"base.{name}"
    pick = ""
    if arguments.endswith("[0]"):
        arguments, pick = arguments[:-3].rstrip(", "), "[0]"
    if owner == "torch.Tensor":
        return base, f"base.{name}({arguments}){pick}"
    return base, f"{owner}.{name}(base{', ' if arguments else ''}{arguments}){pick}"


def program(qualified: str) -> tuple[str, str, int]:
    """(the program, the code expected, the row of the write)."""
    name = qualified.rpartition(".")[2]
    made = view_call(qualified)
    assert made is not None
    base, call = made
    if name in PROGRAMS:
        code, text = PROGRAMS[name]
        source = textwrap.dedent(text).replace("{call}", call)
    else:
        code, source = "AL201", textwrap.dedent(f"""\
            import torch

            w = torch.ones((), requires_grad=True)
            base = {base}
            view = {call}
            view.mul_(2.0)
            out = base * w
        """)
    row = next(n for n, line in enumerate(source.splitlines(), 1) if "view.mul_" in line)
    return source, code, row


def run(path: Path, deep: bool) -> tuple[list, BaseException | None]:
    tracer = aliaslint.trace(deep=deep)
    error = None
    with contextlib.redirect_stdout(io.StringIO()):
        try:
            with tracer:
                runpy.run_path(str(path), run_name="__main__")
        except Exception as caught:  # reported below
            error = caught
    return tracer.findings, error


def findings(tmp_path: Path, source: str) -> list[tuple[str, int, str]]:
    """(code, row, message) of the default tracer's findings; the deep tracer finds the
    same codes at the same rows."""
    path = tmp_path / "prog.py"
    path.write_text(source)
    found, error = run(path, deep=False)
    assert error is None, error
    deep, error = run(path, deep=True)
    assert error is None, error
    result = [(d.code, d.location.row, d.message) for d in found]
    assert [(d.code, d.location.row) for d in deep] == [r[:2] for r in result]
    return result


def test_every_table_view_op_has_a_recipe_or_an_exemption():
    names = view_ops()
    assert len(names) > 80  # the table is read
    missing = [name for name in names if name not in EXEMPT and view_call(name) is None]
    assert missing == [], f"view ops with neither a recipe nor an exemption: {missing}"
    stale = sorted(set(EXEMPT) - set(names))
    assert stale == [], f"exempted names the table no longer lists as views: {stale}"


@pytest.mark.parametrize("qualified", [n for n in view_ops() if n not in EXEMPT])
def test_write_through_view_then_base_read(tmp_path, qualified):
    source, code, row = program(qualified)
    found = findings(tmp_path, source)
    assert [(c, r) for c, r, _ in found] == [(code, row)], source


@pytest.mark.parametrize("qualified", ["torch.positive", "torch.Tensor.positive",
                                       "torch.Tensor.__pos__",
                                       "torch.Tensor._autocast_to_full_precision"])
def test_exempt_views_return_their_input(qualified):
    """What the exemptions above say of the ops that return their input object."""
    x = torch.randn(3)
    name = qualified.rpartition(".")[2]
    if name == "__pos__":
        assert (+x) is x
    elif name == "_autocast_to_full_precision":
        assert x._autocast_to_full_precision(True, True) is x
    else:
        assert eval(qualified)(x) is x


def test_functional_unfold_is_no_view():
    x = torch.randn(1, 1, 4, 4)
    assert not torch.nn.functional.unfold(x, 2)._is_view()


# --- disjoint element sets of one storage: no finding --------------------------------------------

# (family, base, the view written, the view read afterwards).
DISJOINT = [
    ("slicing phases", "torch.randn(8, 6)", "base[::2]", "base[1::2]"),
    ("slicing columns", "torch.randn(4, 6)", "base[:, ::2]", "base[:, 1::2]"),
    ("narrow", BASE, "base.narrow(0, 0, 2)", "base.narrow(0, 2, 2)"),
    ("select", BASE, "base.select(1, 0)", "base.select(1, 5)"),
    ("split", BASE, "base.split(2)[0]", "base.split(2)[1]"),
    ("split_with_sizes", BASE, "base.split_with_sizes([1, 5], 1)[0]",
     "base.split_with_sizes([1, 5], 1)[1]"),
    ("chunk", BASE, "torch.chunk(base, 3, 1)[0]", "torch.chunk(base, 3, 1)[2]"),
    ("tensor_split", BASE, "base.tensor_split(3, 1)[1]", "base.tensor_split(3, 1)[2]"),
    ("hsplit", BASE, "torch.hsplit(base, 2)[0]", "torch.hsplit(base, 2)[1]"),
    ("vsplit", BASE, "base.vsplit(2)[0]", "base.vsplit(2)[1]"),
    ("dsplit", "torch.randn(2, 3, 4)", "base.dsplit(2)[0]", "base.dsplit(2)[1]"),
    ("unbind", BASE, "base.unbind(1)[0]", "base.unbind(1)[3]"),
    ("diagonal", "torch.randn(5, 5)", "base.diagonal()", "torch.diagonal(base, 1)"),
    ("linalg.diagonal", "torch.randn(5, 5)", "torch.linalg.diagonal(base)",
     "torch.linalg.diagonal(base, offset=-1)"),
    ("transpose", BASE, "base.t()[0]", "base.transpose(0, 1)[1]"),
    ("permute", "torch.randn(2, 3, 4)", "base.permute(2, 0, 1)[0]",
     "base.movedim(2, 0)[3]"),
    ("unfold", "torch.randn(3, 8)", "base.unfold(1, 2, 4)", "base[:, 2:4]"),
    ("as_strided", "torch.randn(24)", "base.as_strided((3, 2), (8, 1), 0)",
     "base.as_strided((3, 2), (8, 1), 4)"),
    ("view", BASE, "base.view(2, 12)[0]", "base.view(12, 2)[6:]"),
    ("unflatten", BASE, "base.unflatten(1, (2, 3))[:, 0]",
     "base.unflatten(1, (3, 2))[:, 2]"),
    ("unsqueeze / squeeze", "torch.randn(4, 1, 6)", "base.squeeze(1)[:2]",
     "base.unsqueeze(0)[0, 2:]"),
    ("real / imag", COMPLEX, "base.real", "torch.imag(base)"),
    ("view_as_real", COMPLEX, "torch.view_as_real(base)[..., 0]",
     "torch.view_as_real(base)[..., 1]"),
    ("view_as_complex", "torch.randn(4, 6, 2)", "torch.view_as_complex(base)[:2]",
     "base[2:]"),
]


def disjoint_program(base: str, written: str, read: str) -> str:
    return textwrap.dedent(f"""\
        import torch

        w = torch.ones((), requires_grad=True)
        base = {base}
        view = {written}
        view.mul_(2.0)
        out = {read} * w
    """)


@pytest.mark.parametrize(("family", "base", "written", "read"), DISJOINT,
                         ids=[case[0] for case in DISJOINT])
def test_write_and_read_of_disjoint_elements(tmp_path, family, base, written, read):
    x = eval(base.replace("torch.randn", "torch.zeros"), {"torch": torch})
    assert not aliaslint.shares_memory(eval(written, {"torch": torch, "base": x}),
                                       eval(read, {"torch": torch, "base": x}))
    assert findings(tmp_path, disjoint_program(base, written, read)) == []


@pytest.mark.parametrize(("family", "base", "written", "read"), [
    ("slicing", "torch.randn(8, 6)", "base[::2]", "base[2:3]"),
    ("diagonal", "torch.randn(5, 5)", "base.diagonal()", "base[1:2, 1:]"),
    ("real / view_as_real", COMPLEX, "base.real", "torch.view_as_real(base)[1]"),
])
def test_write_and_read_of_intersecting_views(tmp_path, family, base, written, read):
    """The disjoint cases' counterparts: another view over one written element is a read."""
    assert [(c, r) for c, r, _ in findings(tmp_path, disjoint_program(base, written, read))] \
        == [("AL201", 6)]


def test_write_through_an_empty_view_changes_nothing(tmp_path):
    source = disjoint_program(BASE, "base[4:]", "base")
    assert findings(tmp_path, source) == []


# --- more than two strided dims: exact when small, sampled beyond ---------------------------------


def test_exact_or_sampled_beyond_two_strided_dims(monkeypatch):
    from aliaslint.runtime import regions
    from aliaslint.runtime.regions import Region

    x = torch.zeros(16, 16, 16, 16)
    pairs = [
        # Four strided dims each (none merge), interleaved phases.
        (x[::2, ::2, ::2, :5], x[1::2, 1::2, 1::2, :5], False),
        (x[::2, ::2, ::2, :5], x[::2, ::4, ::2, 3:7], True),
        # Dims reordered.
        (x[::2, ::3, :, :7].permute(3, 1, 0, 2), x[1::2, :, 1::2, :7], False),
        (x[::2, ::3, :, :7].permute(3, 1, 0, 2), x[::4, 3::6, ::2, 2:9], True),
    ]
    for written, read, shared in pairs:
        region, other = Region.of(written), Region.of(read)
        assert region is not None and other is not None
        assert len(region.canonical()[2]) + len(other.canonical()[2]) > regions.EXACT_DIMS
        assert aliaslint.shares_memory(written, read) is shared
        # Few elements: listed exactly.
        monkeypatch.setattr(regions, "EXACT_ELEMENTS", 1 << 20)
        exact = region.overlap(other)
        assert (exact.found, exact.sampled) == (shared, 0)
        # Many: sampled, deterministically, and said so.
        monkeypatch.setattr(regions, "EXACT_ELEMENTS", 0)
        sampled = region.overlap(other)
        assert sampled.found is shared
        assert sampled.sampled == region.overlap(other).sampled > 0
        assert sampled.of == written.numel()
        assert (sampled.note() != "") and "sampling" in sampled.note()
    # Two strided dims each: exact whatever the size.
    monkeypatch.setattr(regions, "EXACT_ELEMENTS", 0)
    flat = torch.zeros(1 << 16)
    answer = Region.of(flat[::2]).overlap(Region.of(flat[1::2]))
    assert (answer.found, answer.sampled) == (False, 0)


def test_a_sampled_finding_says_so(tmp_path, monkeypatch):
    from aliaslint.runtime import regions

    monkeypatch.setattr(regions, "EXACT_ELEMENTS", 0)
    base = "torch.randn(8, 8, 8, 8)"
    source = disjoint_program(base, "base[::2, ::2, ::2]", "base[::2, ::4, ::2, 3:5]")
    [(code, row, message)] = findings(tmp_path, source)
    assert (code, row) == ("AL201", 6)
    assert "overlap found by sampling" in message and "sampling 256 of 512 elements" in message
    quiet = disjoint_program(base, "base[::2, ::2, ::2]", "base[1::2, 1::2, 1::2]")
    assert findings(tmp_path, quiet) == []
