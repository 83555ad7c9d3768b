"""Sample arguments for calling an ATen overload on tiny CPU tensors (shared with the torch tests)."""

from __future__ import annotations

from typing import Any

from aliaslint.ops.generate.schema import is_tensor_list, is_tensor_type


SHAPE = (4, 3, 5)


def sample_worlds(torch: Any) -> list[dict[str, Any]]:
    """Tensor worlds tried in order: shape and dtype of every tensor argument."""
    return [
        {"shape": SHAPE, "dtype": torch.float32},
        {"shape": (3, 3), "dtype": torch.float32},
        {"shape": (6,), "dtype": torch.float32},
        {"shape": (1, 3, 5), "dtype": torch.float32},
        {"shape": (2, 3, 4, 5), "dtype": torch.float32},
        {"shape": SHAPE, "dtype": torch.complex64},
        {"shape": SHAPE, "dtype": torch.int64},
        {"shape": SHAPE, "dtype": torch.bool},
        # uniform sizes: weight and input agree for conv3d / conv_transpose*
        {"shape": (2, 2, 2), "dtype": torch.float32},
        {"shape": (2, 2, 2, 2), "dtype": torch.float32},
        {"shape": (2, 2, 2, 2, 2), "dtype": torch.float32},
    ]


def _int_candidates(name: str, all_names: set[str], ndim: int) -> list[Any]:
    if name in ("dim0", "axis0", "source"):
        return [0]
    if name == "dim1":
        return [0] if "dim2" in all_names else [1]
    if name in ("dim2", "axis1", "destination"):
        return [1]
    if name in ("dim", "dimension", "start_dim"):
        return [0, 1]
    if name == "end_dim":
        return [1, -1]
    if name in ("size", "length", "step", "chunks", "sections", "split_size", "repeats", "n", "k"):
        return [2, 1]
    if name in ("index", "start", "offset", "storage_offset"):
        return [1, 0]
    return [1, 0, 2]


def _intlist_candidates(name: str, x_shape: tuple[int, ...], names: set[str] | frozenset[str] = frozenset()) -> list[Any]:
    nd = len(x_shape)
    if name == "size" and "stride" in names:
        return [[2, 2], [2]]
    if "shape" in name and name != "shape":
        return [[x_shape[-1]], list(x_shape[1:])]
    if name in ("size", "shape"):
        return [[-1], [2, *x_shape], list(x_shape), [x_shape[0], -1]]
    if name in ("dims", "dim", "perm"):
        return [list(range(nd))[::-1], [0], [1, 0]]
    if name == "stride":
        # a transposed layout of the first two dims of a (2, 2) window
        return [[1, 2], [1]]
    if name in ("split_sizes", "split_size"):
        return [[1, x_shape[0] - 1], [1, 1]]
    if name in ("indices", "tensor_indices_or_sections"):
        return [[1], [1, 2]]
    if name == "source":
        return [[0], [0, 1]]
    if name == "destination":
        return [[1], [1, 0]]
    return [[1], [0], [2, 1]]


def _scalar_candidates(name: str) -> list[Any]:
    return [2, 0.5, 1]


def _arg_candidates(torch: Any, a: Any, schema: Any, world: dict[str, Any], tensors: list[Any], x: Any) -> list[Any]:
    from torchgen.model import BaseTy, BaseType, ListType, OptionalType

    t = a.type
    names = {b.name for b in schema.arguments.flat_all}
    if isinstance(t, OptionalType):
        if is_tensor_type(t.elem):
            return [None]
        return [None]
    if isinstance(t, ListType):
        if is_tensor_type(t.elem):
            return [[x, x.clone()]]
        if isinstance(t.elem, BaseType) and t.elem.name in (BaseTy.int, BaseTy.SymInt):
            return _intlist_candidates(a.name, tuple(x.shape), names)
        if isinstance(t.elem, BaseType) and t.elem.name == BaseTy.bool:
            return [[True, True, True]]
        if isinstance(t.elem, BaseType) and t.elem.name == BaseTy.float:
            return [[1.0]]
        return []
    if isinstance(t, BaseType):
        n = t.name
        if n == BaseTy.Tensor:
            if not tensors:
                return [x]
            if a.name in ("index", "indices", "target"):
                idx = torch.randint(0, 2, world["shape"], generator=torch.Generator().manual_seed(0))
                return [idx, torch.tensor([0, 1]), torch.tensor(1)]
            return [_make_tensor(torch, world, a.name), torch.tensor(1)]
        if n in (BaseTy.int, BaseTy.SymInt):
            return _int_candidates(a.name, names, x.dim())
        if n == BaseTy.bool:
            return [False, True]
        if n == BaseTy.float:
            return [0.5]
        if n == BaseTy.Scalar:
            return _scalar_candidates(a.name)
        if n == BaseTy.ScalarType:
            return [world["dtype"], torch.float64]
        if n == BaseTy.str:
            return ["mean", "none"]
        if n == BaseTy.Device:
            return ["cpu"]
        if n == BaseTy.MemoryFormat:
            return [torch.contiguous_format]
        if n == BaseTy.Layout:
            return [torch.strided]
    return []


_TEMPLATES: dict[Any, Any] = {}


def _make_tensor(torch: Any, world: dict[str, Any], name: str = "") -> Any:
    """A fresh contiguous sample tensor (same values every time)."""
    key = (world["shape"], world["dtype"])
    t = _TEMPLATES.get(key)
    if t is None:
        t = _TEMPLATES[key] = _new_tensor(torch, world)
    return t.clone()


def _new_tensor(torch: Any, world: dict[str, Any]) -> Any:
    shape, dtype = world["shape"], world["dtype"]
    g = torch.Generator().manual_seed(0)
    if dtype == torch.bool:
        return torch.rand(shape, generator=g) > 0.5
    if dtype.is_floating_point or dtype.is_complex:
        return torch.rand(shape, generator=g, dtype=dtype) + 0.5
    return torch.randint(0, 2, shape, generator=g, dtype=dtype)


#: ATen ops that crash the process (segfault) on arbitrary sample arguments instead of raising;
#: never called with samples (by the generator or the tests).
CRASHERS = {
    "native_batch_norm": "segfaults with running stats None and training=False",
}


def callable_by_sample(schema: Any) -> bool:
    """Sample calls are built only for schemas without Tensor[] arguments: the RNN kernels
    (lstm, gru, rnn_*) take flat weight lists and corrupt memory when given arbitrary lists."""
    if str(schema.name.name.base) in CRASHERS:
        return False
    return not any(is_tensor_list(a.type) for a in schema.arguments.flat_all)


def sample_calls(torch: Any, schema: Any, max_tries: int = 3):
    """Yield (world, positional args, kwargs) candidates for an overload's required arguments.

    The first tensor argument is a fresh contiguous tensor of the world's shape and dtype.
    Arguments with defaults are left to their defaults.
    """
    if not callable_by_sample(schema):
        return
    args = schema.arguments
    out_names = {a.name for a in args.out}
    required_pos = [a for a in args.flat_positional if a.default is None]
    required_kw = [a for a in args.flat_kwarg_only if a.default is None and a.name not in out_names]
    for world in sample_worlds(torch):
        for k in range(max_tries):
            x = _make_tensor(torch, world)  # fresh: a failed in-place call may leave x broken
            tensors: list[Any] = []
            pos: list[Any] = []
            kw: dict[str, Any] = {}
            ok = True
            for a in required_pos + required_kw:
                cands = _arg_candidates(torch, a, schema, world, tensors, x)
                if not cands:
                    ok = False
                    break
                v = cands[min(k, len(cands) - 1)]
                if is_tensor_type(a.type) and not is_tensor_list(a.type) and v is not None:
                    tensors.append(v)
                if a in required_pos:
                    pos.append(v)
                else:
                    kw[a.name] = v
            if not ok:
                return
            yield world, x, pos, kw


def call_aten(torch: Any, aten: str, pos: list[Any], kw: dict[str, Any]) -> Any:
    base, _, ovl = aten.partition(".")
    packet = getattr(torch.ops.aten, base)
    return getattr(packet, ovl or "default")(*pos, **kw)


def tensors_of(v: Any) -> list[Any]:
    import torch

    if isinstance(v, torch.Tensor):
        return [v]
    if isinstance(v, (list, tuple)):
        return [t for t in v if isinstance(t, torch.Tensor)]
    return []


def shares_storage(a: Any, b: Any) -> bool:
    try:
        return a.untyped_storage().data_ptr() == b.untyped_storage().data_ptr() and a.untyped_storage().nbytes() > 0
    except Exception:
        return False



def input_variants(torch: Any, x: Any) -> list[Any]:
    """Contiguous sample, a transposed (non-contiguous) view, and conj / neg-bit views."""
    out = [x]
    if x.dim() >= 2:
        out.append(x.transpose(0, 1))
    elif x.shape[0] > 1:
        out.append(x[::2])
    if x.is_complex():
        out.append(x.conj())
    if x.is_floating_point() or x.is_complex():
        out.append(torch._neg_view(x))
    return out

