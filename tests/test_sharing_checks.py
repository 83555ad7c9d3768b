"""AL401–AL404: sharing tested the wrong way, and the code that must stay quiet."""

import pytest

from conftest import lint

FIRES = [
    pytest.param(
        """
        import torch
        a = torch.zeros(4)
        b = a[1:]
        same = id(a) == id(b)
        """,
        [(5, "AL401")],
        id="id-of-tensors",
    ),
    pytest.param(
        """
        import torch as t
        a = t.ones(2, 3)
        if id(a.t()) != id(a):
            pass
        """,
        [(4, "AL401")],
        id="id-not-equal-import-alias",
    ),
    pytest.param(
        """
        import torch
        x = torch.randn(3, requires_grad=True)
        y = x * 2
        print(id(x.data) == id(y))
        """,
        [(5, "AL401")],
        id="id-of-data",
    ),
    pytest.param(
        """
        import torch
        a = torch.zeros(4)
        print(id(a.storage()) == id(a[2:].storage()))
        """,
        [(4, "AL401"), (4, "AL404"), (4, "AL404")],
        id="id-of-typed-storage",
    ),
    pytest.param(
        """
        from torch import Tensor
        def same(a: Tensor, b: Tensor) -> bool:
            return a is b or a.untyped_storage() is not b.untyped_storage()
        """,
        [(4, "AL402")],
        id="is-and-is-not",
    ),
    pytest.param(
        """
        import torch
        from torch import nn
        class Block(nn.Module):
            def forward(self, x, residual):
                if residual is x:
                    return x
                return x + residual
        """,
        [(6, "AL402")],
        id="forward-parameters",
    ),
    pytest.param(
        """
        import torch
        base = torch.arange(10)
        window = base.narrow(0, 2, 4)
        assert window.data_ptr() != base.data_ptr()
        """,
        [(5, "AL403")],
        id="data-ptr",
    ),
    pytest.param(
        """
        import torch
        x = torch.zeros(3)
        n = x.storage().size()
        s = torch.FloatStorage(3)
        c = torch.cuda.HalfStorage
        t = torch.TypedStorage(4)
        from torch import DoubleStorage
        """,
        [(4, "AL404"), (5, "AL404"), (6, "AL404"), (7, "AL404"), (8, "AL404")],
        id="typed-storage",
    ),
    pytest.param(
        """
        import torch
        x = torch.zeros(3)
        if True:
            y = x.view(3)
        else:
            y = x.clone()
        print(x is y)
        """,
        [(8, "AL402")],
        id="join-of-two-tensors",
    ),
    pytest.param(
        """
        import torch
        x = torch.zeros(3)
        found = [i for i, t in enumerate([x]) if id(x) == id(x[0:])]
        """,
        [(4, "AL401")],
        id="inside-comprehension",
    ),
]

FIRES.append(pytest.param(
    """
    import torch
    x = torch.zeros(3)
    def later():
        return id(x) == id(x[1:])
    """,
    [(5, "AL401")],
    id="global-bound-once",
))

QUIET = [
    pytest.param(
        """
        import torch
        def f(a: torch.Tensor, b: torch.Tensor):
            # One Python object per storage since torch 2.2: identity is meaningful.
            return id(a.untyped_storage()) == id(b.untyped_storage()) or (
                a.untyped_storage() is b.untyped_storage())
        """,
        id="untyped-storage-identity",
    ),
    pytest.param(
        """
        import torch
        a = torch.zeros(3)
        n = 3
        print(id(n) == id(3), a is None, a is not None)
        """,
        id="non-tensor-and-none",
    ),
    pytest.param(
        """
        import torch
        from torch import nn
        class M(nn.Module):
            def forward(self, x):
                cache = {id(self): x}
                return id(self) == id(x)
        """,
        id="id-of-self",
    ),
    pytest.param(
        """
        import torch
        def tied(model) -> bool:
            return model.head.weight is model.embed.weight
        """,
        id="unknown-attributes",
    ),
    pytest.param(
        """
        import torch
        x = torch.zeros(3)
        x = 5
        print(id(x) == id(5))
        """,
        id="rebound-to-int",
    ),
    pytest.param(
        """
        import torch
        def torch_free(torch, a, b):
            return id(torch.zeros(1)) == id(b)
        """,
        id="shadowed-torch-parameter",
    ),
    pytest.param(
        """
        import torch
        a = torch.zeros(3)
        b = a[1:]
        print(a.untyped_storage().data_ptr() == b.untyped_storage().data_ptr())
        s = torch.UntypedStorage(8)
        """,
        id="recommended-forms",
    ),
    pytest.param(
        """
        import torch
        def f(x):
            y = torch.zeros(3)
            return x is y
        """,
        id="one-side-unknown",
    ),
    pytest.param(
        """
        import torch
        x = torch.zeros(3)
        def later():
            return id(x) == id(x[1:])
        x = None
        """,
        id="global-rebound-before-call",
    ),
    pytest.param(
        """
        import torch
        x = torch.zeros(3)
        for x in range(3):
            pass
        print(x is 1)
        """,
        id="loop-rebinding",
    ),
    pytest.param(
        """
        import numpy
        class Bucket:
            def storage(self):
                return numpy.zeros(3)
        b = Bucket()
        b.storage()
        """,
        id="storage-method-of-other-class",
    ),
    pytest.param(
        """
        x = 1
        print(id(x) == id(x))
        """,
        id="no-torch-in-file",
    ),
]


@pytest.mark.parametrize(("source", "expected"), FIRES)
def test_fires(source, expected):
    assert lint(source) == expected


@pytest.mark.parametrize("source", QUIET)
def test_quiet(source):
    assert lint(source) == []


def test_message_names_the_operands_and_the_fix():
    from aliaslint import check_source

    (finding,) = check_source(
        "import torch\nw = torch.ones(2)\nv = w.t()\nprint(id(w) == id(v))\n", "m.py", {"AL401"}
    )
    assert "`w.untyped_storage().data_ptr() == v.untyped_storage().data_ptr()`" in finding.message
    assert "`aliaslint.shares_memory(w, v)`" in finding.message
    assert (finding.location.row, finding.location.column) == (4, 7)
    assert (finding.end_location.row, finding.end_location.column) == (4, 21)
