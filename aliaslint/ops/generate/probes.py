"""What torch does on sample calls: views' layout, version bumps, fills, aliasing, Python-level conversions."""

from __future__ import annotations

import inspect
import warnings
from collections.abc import Callable, Iterator
from typing import Any

from aliaslint.ops.generate.decompose import decomposition_saves
from aliaslint.ops.generate.samples import (
    CRASHERS,
    call_aten,
    input_variants,
    sample_calls,
    shares_storage,
    tensors_of,
)
from aliaslint.ops.generate.schema import Overload, base_name, is_tensor_list, is_tensor_type


def probe_view_noncontiguous(torch: Any, ov: Overload) -> bool | None:
    """Is the view's result non-contiguous when applied to a contiguous sample with generic args?"""
    for world, x, pos, kw in sample_calls(torch, ov.schema):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                r = call_aten(torch, ov.aten, pos, kw)
        except Exception:
            continue
        outs = [t for t in tensors_of(r) if t.numel() > 1]
        if not outs:
            continue
        return any(not t.is_contiguous() for t in outs)
    return None


def probe_version_bump(torch: Any, ov: Overload) -> bool | None:
    """Does the in-place op bump the written tensor's version counter (what autograd checks)?

    False for requires_grad_ / detach_ (metadata only); None when not callable on samples."""
    seen: tuple[Any, bool] | None = None
    for world, x, pos, kw in sample_calls(torch, ov.schema):
        if seen is not None and world is not seen[0]:
            break  # every argument try of the first world that works
        v0 = x._version
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                call_aten(torch, ov.aten, pos, kw)
        except Exception:
            continue
        seen = (world, (seen[1] if seen else False) or x._version > v0)
    return None if seen is None else seen[1]



def _quiet_call(torch: Any, aten: str, pos: list[Any], kw: dict[str, Any]) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return call_aten(torch, aten, pos, kw)


def probe_self_overlap(torch: Any, ov: Overload) -> bool | None:
    """Can the view's result have elements that are one memory location (a stride 0 on a
    dimension of size > 1, what torch calls internal overlap)?

    Every sample call of every world is tried, also with the first tensor narrowed to size 1 in
    its first dimension (so ``expand_as`` / ``broadcast_to`` have something to broadcast)."""
    called = False
    for world, x, pos, kw in sample_calls(torch, ov.schema):
        for xin in [x] + ([x[:1]] if x.dim() and x.shape[0] > 1 else []):
            p = [xin if v is x else v for v in pos]
            k = {n: (xin if v is x else v) for n, v in kw.items()}
            try:
                r = _quiet_call(torch, ov.aten, p, k)
            except Exception:
                continue
            called = True
            for t in tensors_of(r):
                if any(st == 0 and sz > 1 for sz, st in zip(t.shape, t.stride())):
                    return True
    return False if called else None


def _results(torch: Any, ov: Overload,
             swap: Callable[[Any, Any], Any]) -> Iterator[tuple[list[Any], list[Any]]]:
    """The arguments and tensor results of each sample call that succeeds, every argument
    ``v`` of the call (whose first tensor is ``x``) passed as ``swap(v, x)``."""
    for world, x, pos, kw in sample_calls(torch, ov.schema):
        p = [swap(v, x) for v in pos]
        k = {n: swap(v, x) for n, v in kw.items()}
        try:
            r = _quiet_call(torch, ov.aten, p, k)
        except Exception:
            continue
        outs = tensors_of(r)
        if outs:
            yield [*p, *k.values()], outs


def probe_multi_output(torch: Any, ov: Overload) -> bool | None:
    """Are the view's results outputs of one autograd node that returns several views
    (``unbind``, ``split``, ``chunk``), which autograd forbids writing in place under grad
    mode?  ``tensor_split`` and ``hsplit`` return slices, which it allows.

    The sample input is made a non-leaf that requires grad and a result is written in
    place: the error says "returns multiple views" exactly for those nodes."""
    def swap(v: Any, x: Any) -> Any:
        return v.detach().requires_grad_() * 1 if v is x and x.is_floating_point() else v

    for _, outs in _results(torch, ov, swap):
        outs = [t for t in outs if t.requires_grad]
        if not outs:
            continue
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                outs[-1].add_(1)
        except RuntimeError as error:
            return "returns multiple views" in str(error)
        return False
    return None


def probe_differentiable(torch: Any, ov: Overload) -> bool | None:
    """Can the result require grad?  Every floating tensor argument is made a leaf that
    requires grad: a result that still does not (``zeros_like``, ``randn_like``, ``eq``,
    ``argmax``) comes from no differentiable input, whatever the inputs were."""
    def swap(v: Any, x: Any) -> Any:
        floating = isinstance(v, torch.Tensor) and v.is_floating_point()
        return v.detach().requires_grad_() if floating else v

    for args, outs in _results(torch, ov, swap):
        if any(isinstance(v, torch.Tensor) and v.requires_grad for v in args):
            return any(t.requires_grad for t in outs)
    return None


def _dims(t: Any) -> list[tuple[int, int]]:
    """(size, stride) of the dimensions that matter for the layout (size > 1)."""
    return [(sz, st) for sz, st in zip(t.shape, t.stride()) if sz > 1]


def probe_reorders_dims(torch: Any, ov: Overload) -> bool | None:
    """Does the view reorder its input's dimensions: on every sample call (every world) each
    result has exactly the input's dimensions (size and stride; size-1 ones ignored), and on
    some call in another order?  (transpose, permute, movedim, t, T, mT ...; not expand,
    view, diagonal, unfold, which make other dimensions.)"""
    called = reordered = False
    for world, x, pos, kw in sample_calls(torch, ov.schema):
        try:
            r = _quiet_call(torch, ov.aten, pos, kw)
        except Exception:
            continue
        outs = tensors_of(r)
        if not outs:
            continue
        called = True
        src = _dims(x)
        for t in outs:
            dims = _dims(t)
            if sorted(dims) != sorted(src):
                return False
            reordered = reordered or dims != src
    return reordered if called else None


def _unlike(torch: Any, t: Any) -> Any:
    """A tensor of t's shape, dtype and layout whose values are unlike the samples' (which are
    positive, below 2 and never 0): whole numbers in [-100, 100), every third one 0."""
    g = torch.Generator().manual_seed(1)
    if t.dtype == torch.bool:
        other = ~t
    else:
        other = torch.randint(-100, 100, t.shape, generator=g).to(t.dtype)
        other.view(-1)[::3] = 0
    out = torch.empty_strided(t.shape, t.stride(), dtype=t.dtype)
    return out.copy_(other)


def _same_values(torch: Any, a: Any, b: Any) -> bool:
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    same = a == b
    if a.is_floating_point() or a.is_complex():
        same = same | (torch.isnan(a) & torch.isnan(b))
    return bool(same.all())


def probe_fill(torch: Any, ov: Overload) -> bool | None:
    """Does the in-place op overwrite all of its destination whatever it held?

    The op runs on two destinations with very different values (the random generator reseeded
    before each call, so random fills count), with the sample's other tensor arguments and
    again with unlike ones (zeros included: ``logical_or_`` fills only for a nonzero other).
    It fills when, for every argument try of the first world where it works, both destinations
    end with the same values, the same shape and their own memory (``set_`` / ``resize_``
    rebind or reallocate instead).  None when not callable on samples."""
    schema = ov.schema
    written = ov.writes[0] if ov.writes else "self"
    names = [a.name for a in schema.arguments.flat_positional if a.default is None]
    if written not in names:
        return None
    i = names.index(written)
    seen_world = None
    fills = True
    for world, x, pos, kw in sample_calls(torch, schema):
        if seen_world is not None and world is not seen_world:
            break  # every argument try of the first world that works
        dest = pos[i]
        if not isinstance(dest, torch.Tensor):
            return None
        for remake in (torch.clone, lambda v: _unlike(torch, v)):
            def arg(v: Any) -> Any:
                return remake(v) if isinstance(v, torch.Tensor) else v

            ends = []
            for d in (dest.clone(), _unlike(torch, dest)):
                ptr, shape = d.untyped_storage().data_ptr(), tuple(d.shape)
                p = [d if j == i else arg(v) for j, v in enumerate(pos)]
                k = {n: arg(v) for n, v in kw.items()}
                torch.manual_seed(0)
                try:
                    _quiet_call(torch, ov.aten, p, k)
                except Exception:
                    break
                if d.untyped_storage().data_ptr() != ptr or tuple(d.shape) != shape:
                    return False
                ends.append(d)
            if not ends:
                continue
            seen_world = world
            fills = fills and len(ends) == 2 and _same_values(torch, *ends)
    return fills if seen_world is not None else None

def probe_alias(torch: Any, fn: Any, schema: Any, all_worlds: bool = False) -> tuple[bool, bool] | None:
    """(alias seen, copy seen) over sample calls: contiguous / transposed / conj / neg-bit input,
    same / other dtype.  Only the first world that works is used unless all_worlds (then every
    world is tried until both outcomes are seen: resolve_conj copies only complex inputs)."""
    seen = probe_alias_outcomes(torch, fn, schema, all_worlds)
    return None if seen is None else (seen[0], seen[1])


def probe_alias_outcomes(torch: Any, fn: Any, schema: Any,
                         all_worlds: bool = False) -> tuple[bool, bool, bool] | None:
    """As probe_alias, and a third fact: every result that shared memory with an input was
    that input object itself (`contiguous`, `to`: the input or a copy, never a view)."""
    seen_alias = seen_copy = False
    only_input = True
    called = False
    called_world = None
    worked: list[tuple[Any, list, dict]] = []
    for world, x, pos, kw in sample_calls(torch, schema):
        if called_world is not None and world is not called_world and not all_worlds:
            break  # the first world that works decides; its other argument tries still count
        for xin in input_variants(torch, x):
            p = [xin if v is x else v for v in pos]
            r = _attempt(fn, p, kw)
            if r is _FAILED:
                continue
            called = True
            called_world = world
            worked.append((x, pos, kw))
            for t in tensors_of(r):
                inputs = [xin, *[v for v in p if hasattr(v, "untyped_storage")]]
                if any(t is i or shares_storage(t, i) for i in inputs):
                    seen_alias = True
                    only_input = only_input and any(t is i for i in inputs)
                else:
                    seen_copy = True
        if called and seen_alias and seen_copy:
            break
    if seen_alias and only_input:
        only_input = _input_at_every_rank(torch, fn, worked)
    return (seen_alias, seen_copy, seen_alias and only_input) if called else None


_FAILED = object()  # what _attempt answers for a call that raised


def _attempt(fn: Any, pos: list, kw: dict) -> Any:
    """``fn(*pos, **kw)`` with its warnings silenced, or ``_FAILED`` where it raises."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return fn(*pos, **kw)
        except Exception:
            return _FAILED


def _input_at_every_rank(torch: Any, fn: Any, worked: list[tuple[Any, list, dict]]) -> bool:
    """The calls that worked, again with inputs of fewer and more dimensions (a 0-d, a 1-d
    and a leading dim of 1): does every result that shares memory with its input stay that
    input itself (`atleast_2d` returns a 1-d input's view)?  The random state is kept."""
    with torch.random.fork_rng(devices=[]):
        for x, pos, kw in worked:
            flat = x.detach().reshape(-1)
            for other in (flat[:1].reshape(()).clone(), flat.clone(), x.detach()[None].clone()):
                r = _attempt(fn, [other if v is x else v for v in pos], kw)
                if r is _FAILED:
                    continue
                for t in tensors_of(r):
                    if t is not other and shares_storage(t, other):
                        return False
    return True



def probe_conversion(torch: Any, mname: str) -> tuple[bool, bool, str | None, bool, bool] | None:
    """A Tensor method called without arguments on a tensor of every dtype: (returned its
    input or a view of it for some dtype, returned a copy for some, the dtype every result has
    when they all have one, the result was its input exactly when the dtype was already that
    one, every result sharing memory with the input was the input itself)."""
    seen_alias = seen_copy = False
    only_input = True
    called = False
    results: set[str] = set()
    same_iff_unchanged = True
    dtypes = (
        torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.complex64,
        torch.complex128, torch.int8, torch.uint8, torch.int16, torch.int32, torch.int64, torch.bool,
    )
    outcomes = []
    for dtype in dtypes:
        x = torch.ones(2, 3, dtype=dtype)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                r = getattr(x, mname)()
        except Exception:
            continue
        if not isinstance(r, torch.Tensor):
            return None
        called = True
        results.add(dtype_name(r.dtype))
        if r is x or shares_storage(r, x):
            seen_alias = True
            only_input = only_input and r is x
        else:
            seen_copy = True
        outcomes.append((dtype, r is x))
    if not called:
        return None
    to = next(iter(results)) if len(results) == 1 else None
    if to is not None:
        same_iff_unchanged = all(same == (dtype_name(dtype) == to) for dtype, same in outcomes)
    return seen_alias, seen_copy, to, same_iff_unchanged and to is not None, \
        seen_alias and only_input


def dtype_name(dtype: Any) -> str:
    """torch.float32 -> "float32"."""
    return str(dtype).removeprefix("torch.")


def probe_dtypes(torch: Any) -> dict[str, Any]:
    """The ``dtypes`` section: what each dtype name of torch and NumPy denotes, the dtype torch
    gives a Python scalar, and the default float dtype of a factory."""
    import numpy as np

    out: dict[str, Any] = {}
    for name in sorted(dir(torch)):
        value = getattr(torch, name, None)
        if isinstance(value, torch.dtype):
            out[f"torch.{name}"] = dtype_name(value)
    for name in sorted(dir(np)):
        value = getattr(np, name, None)
        if not isinstance(value, type) or not issubclass(value, np.generic) or value in (np.generic,):
            continue
        try:
            tensor = torch.from_numpy(np.zeros(1, dtype=value))
        except Exception:
            continue  # a NumPy dtype torch cannot share (str_, object_, datetime64 ...)
        out[f"numpy.{name}"] = dtype_name(tensor.dtype)
        out[f"numpy.{np.dtype(value).name}"] = dtype_name(tensor.dtype)
    out["python scalar"] = {
        "int": dtype_name(torch.tensor(1).dtype),
        "float": dtype_name(torch.tensor(1.0).dtype),
        "bool": dtype_name(torch.tensor(True).dtype),
    }
    out["numpy default"] = {
        "float": dtype_name(torch.from_numpy(np.zeros(1)).dtype),
        "int": dtype_name(torch.from_numpy(np.arange(1)).dtype),
    }
    out["default float"] = dtype_name(torch.get_default_dtype())
    # The legacy typed constructors (`torch.LongTensor([...])`): the dtype each makes.
    for name in sorted(dir(torch)):
        value = getattr(torch, name, None)
        if not name.endswith("Tensor") or name == "Tensor" or not isinstance(value, type):
            continue
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                made = value([0])
        except Exception:
            continue
        if isinstance(made, torch.Tensor):
            out[f"constructor torch.{name}"] = dtype_name(made.dtype)
    # NumPy's allocating factories (a `shape` first, a `dtype` to choose): the dtype each
    # gives when none is chosen, as the torch dtype of a tensor sharing the array.
    factories = {}
    for name in sorted(dir(np)):
        fn = getattr(np, name, None)
        if not callable(fn):
            continue
        try:
            params = list(inspect.signature(fn).parameters)
        except (TypeError, ValueError):
            continue
        if params[:1] != ["shape"] or "dtype" not in params:
            continue
        try:
            result = fn((2,))
        except Exception:
            continue
        if isinstance(result, np.ndarray) and result.shape == (2,):
            factories[f"numpy.{name}"] = dtype_name(torch.from_numpy(np.ascontiguousarray(
                result)).dtype)
    out["numpy factories"] = factories
    out.update(probe_numpy_generator(np))
    return out


def probe_numpy_generator(np: Any) -> dict[str, Any]:
    """NumPy's random `Generator`: the calls that make one from a seed
    (`np.random.default_rng(0)`), and its sampling methods that take a `size` and a `dtype`
    and, given a size, return a new array of exactly the dtype asked for, each with where
    `size` and `dtype` sit among its positional parameters (without a size they return a
    scalar)."""
    makers = []
    for name in sorted(dir(np.random)):
        fn = getattr(np.random, name, None)
        if isinstance(fn, type) or not callable(fn):
            continue
        try:  # only the functions that take a seed are called (`np.random.test` runs tests)
            if list(inspect.signature(fn).parameters)[:1] != ["seed"]:
                continue
            made = fn(0)
        except Exception:
            continue
        if isinstance(made, np.random.Generator):
            makers.append(f"numpy.random.{name}")
    candidates = (np.bool_, np.int8, np.uint8, np.int16, np.int32, np.int64, np.float16,
                  np.float32, np.float64)
    samplers = {}
    rng = np.random.default_rng(0)
    for name in sorted(dir(np.random.Generator)):
        if name.startswith("_"):
            continue
        try:
            params = list(inspect.signature(getattr(np.random.Generator, name)).parameters.values())[1:]
        except (TypeError, ValueError):
            continue
        names = [param.name for param in params]
        if "size" not in names or "dtype" not in names:
            continue
        needed = [1 for param in params if param.default is inspect.Parameter.empty]
        results = []
        for dtype in candidates:
            try:
                first = getattr(rng, name)(*needed, size=(2,), dtype=dtype)
                second = getattr(rng, name)(*needed, size=(2,), dtype=dtype)
            except Exception:
                continue  # a dtype the method does not offer
            results.append(isinstance(first, np.ndarray) and isinstance(second, np.ndarray)
                           and first.dtype == np.dtype(dtype) and first.flags.owndata
                           and not np.shares_memory(first, second))
        if results and all(results):
            samplers[name] = {"size": names.index("size"), "dtype": names.index("dtype")}
    return {"numpy generator makers": makers, "numpy generator samplers": samplers}


def probe_factory_dtype(torch: Any, fn: Any) -> str | None:
    """The dtype of ``fn((2,))`` (a factory taking its size first): "default" when it is the
    default float dtype (it follows `torch.set_default_dtype`); None when it is not callable so."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            result = fn((2,))
            previous = torch.get_default_dtype()
            torch.set_default_dtype(torch.float64)
            try:
                moved = fn((2,))
            finally:
                torch.set_default_dtype(previous)
    except Exception:
        return None
    if not isinstance(result, torch.Tensor) or not isinstance(moved, torch.Tensor):
        return None
    if result.dtype == previous and moved.dtype == torch.float64:
        return "default"
    return dtype_name(result.dtype) if result.dtype == moved.dtype else None


def probe_constant(torch: Any, fn: Any, *args: Any) -> bool:
    """Does ``fn(*args)`` make a tensor whose elements are all one value, the same on every
    call and seed (`zeros`, `full`, `ones_like`; `empty` too, whose memory deterministic mode
    fills with NaN): a placeholder to be filled, not data?"""
    deterministic: Any = __import__("torch.utils.deterministic", fromlist=["_"])

    previous = (torch.are_deterministic_algorithms_enabled(),
                deterministic.fill_uninitialized_memory)
    results = []
    try:
        torch.use_deterministic_algorithms(True)
        deterministic.fill_uninitialized_memory = True
        for seed in (1, 2):
            torch.manual_seed(seed)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                results.append(fn(*args))
    except Exception:
        return False
    finally:
        torch.use_deterministic_algorithms(previous[0])
        deterministic.fill_uninitialized_memory = previous[1]
    first, second = results
    if not isinstance(first, torch.Tensor) or not isinstance(second, torch.Tensor) or \
            first.numel() < 2:
        return False
    flat = first.reshape(-1)
    if first.dtype.is_complex:
        return bool(torch.equal(first, second) and (flat == flat[0]).all())
    flat = flat.double()
    same = torch.equal(first, second) or bool(torch.isnan(first).all() and torch.isnan(second).all())
    return same and (bool(torch.isnan(flat).all()) or bool((flat == flat[0]).all()))


def probe_value_dtype(torch: Any, fn: Any) -> str | None:
    """How a factory's dtype follows its Python scalar arguments: "args" (`arange(3)` is int64,
    `arange(3.0)` the default float), "fill" (`full(size, value)`), "data" (`tensor([...])`), or
    None when it does not."""
    shapes = {"args": lambda v: (v,), "fill": lambda v: ((2,), v), "data": lambda v: ([v],)}
    for how, make in shapes.items():
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                got = [fn(*make(v)).dtype for v in (3, 3.0, True)]
        except Exception:
            continue
        if got == [torch.tensor(3).dtype, torch.tensor(3.0).dtype, torch.tensor(True).dtype] \
                or got[:2] == [torch.tensor(3).dtype, torch.tensor(3.0).dtype] and how == "args":
            return how
    return None


def _plain(v: Any, torch: Any) -> bool:
    """A plain Python value holding no tensor memory (numbers, strings, sizes, lists of them)."""
    if isinstance(v, (bool, int, float, complex, str)):
        return True
    if isinstance(v, (list, tuple, torch.Size)):
        return all(_plain(i, torch) for i in v)
    return False


def probe_non_tensor_result(torch: Any, mname: str) -> tuple[str, str] | None:
    """What a Tensor method called without arguments returns when it is not a tensor:
    ("storage" | "typed_storage" | "value", the Python type's name), or None (a tensor, None,
    something else, or the call raises).  A storage counts only if it is the sample's memory."""
    x = torch.ones(2, 3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # TypedStorage is deprecated
        try:
            r = getattr(x, mname)()
        except Exception:
            return None
        own = x.untyped_storage().data_ptr()
        if isinstance(r, torch.UntypedStorage):
            return ("storage", type(r).__name__) if r.data_ptr() == own else None
        if isinstance(r, torch.TypedStorage):
            return ("typed_storage", type(r).__name__) if r.data_ptr() == own else None
    if _plain(r, torch):
        return "value", type(r).__name__
    return None


def probe_overloads(
    torch: Any, ovs: list[Overload], by_aten: dict[str, Overload], visible: set[str], probe: bool = True
) -> tuple[dict[str, dict[str, Any]], dict[str, str]]:
    """Per-overload facts refined by probes: (facts by ATen name, probe notes by ATen name).

    Fills in the saves of composite overloads (``Overload.saves``) from their decomposition."""
    # per-overload kind refinement: probes (only ops reachable from a user-visible name)
    facts: dict[str, dict[str, Any]] = {o.aten: {"kind": o.kind, "aliases": o.aliases} for o in ovs}
    probe_notes: dict[str, str] = {}
    if probe:
        torch.manual_seed(0)
        for o in ovs:
            if o.base not in visible or "backward" in o.base:
                continue
            if o.kind == "view" and o.composite_implicit:
                # alias annotation on a composite op means "may alias" (reshape, contiguous, to,
                # flatten ...): a view only if no sample call returns a copy.
                res = probe_alias_outcomes(
                    torch, lambda *a, _n=o.aten, **k: call_aten(torch, _n, list(a), k), o.schema, all_worlds=True
                )
                device_arg = any(base_name(a.type) == "Device" for a in o.schema.arguments.flat_all)
                if res is None or res[1] or device_arg:
                    facts[o.aten]["kind"] = "sometimes_alias"
                    if res is not None and res[2]:
                        facts[o.aten]["returns_input"] = True  # the input itself or a copy
                    probe_notes[o.aten] = (
                        "composite op with an alias annotation: "
                        + ("not callable on samples, treated as may-alias" if res is None
                           else "a copy was observed for some samples" if res[1]
                           else "copies when the device differs (not observable on CPU)")
                    )
                else:
                    facts[o.aten]["noncontiguous"] = probe_view_noncontiguous(torch, o)
            elif o.kind == "view":
                facts[o.aten]["noncontiguous"] = probe_view_noncontiguous(torch, o)
            elif o.kind == "inplace" and not o.base.startswith("_") and o.base not in CRASHERS:
                facts[o.aten]["bumps_version"] = probe_version_bump(torch, o)
            elif (
                o.kind == "functional"
                and o.returns in ("tensor", "tensors")
                and not o.base.startswith("_")
                and o.base not in CRASHERS
                and o.schema.arguments.flat_positional
                and is_tensor_type(o.schema.arguments.flat_positional[0].type)
                and not is_tensor_list(o.schema.arguments.flat_positional[0].type)
            ):
                res = probe_alias_outcomes(
                    torch, lambda *a, _n=o.aten, **k: call_aten(torch, _n, list(a), k), o.schema)
                if res and res[0]:
                    facts[o.aten]["kind"] = "sometimes_alias"
                    if res[2]:
                        facts[o.aten]["returns_input"] = True
                    facts[o.aten]["aliases"] = o.params[0]
                    probe_notes[o.aten] = "returns its input or a view of it for some arguments" + (
                        ", a copy for others" if res[1] else " (a copy was not observed on CPU)"
                    )
        # composite saves
        for o in ovs:
            if o.saves is None and o.composite_implicit and not o.is_out and o.base in visible:
                o.saves = decomposition_saves(torch, o, by_aten)
                if o.saves is not None:
                    o.saves_source = "decomposition"
        # layout and fill facts (after the probes above: their random state stays as it was)
        with torch.random.fork_rng(devices=[]):
            for o in ovs:
                if o.base not in visible or "backward" in o.base:
                    continue
                if facts[o.aten]["kind"] == "view":
                    facts[o.aten]["self_overlapping"] = probe_self_overlap(torch, o)
                    facts[o.aten]["reorders_dims"] = probe_reorders_dims(torch, o)
                    if o.returns == "tensors":
                        facts[o.aten]["multi_output"] = probe_multi_output(torch, o)
                elif o.kind == "inplace" and not o.base.startswith("_") and o.base not in CRASHERS:
                    facts[o.aten]["fills"] = probe_fill(torch, o)
                elif (facts[o.aten]["kind"] == "functional" and o.returns in ("tensor", "tensors")
                      and not o.base.startswith("_") and o.base not in CRASHERS and not o.is_out):
                    facts[o.aten]["differentiable"] = probe_differentiable(torch, o)
    return facts, probe_notes


def probe_metadata(torch: Any) -> dict[str, dict[str, str]]:
    """Tensor attributes and argument-free methods that answer from a tensor's metadata alone
    (sizes, strides, dtype, device, flags): those that work on a tensor on the meta device,
    which has no data, and return a plain value there.  What raises there (``item``,
    ``tolist``, ``is_nonzero``) reads the values."""
    x = torch.empty(2, 3, device="meta")
    kinds = (torch.dtype, torch.device, torch.layout, torch.memory_format)
    found: dict[str, dict[str, str]] = {}
    for name in sorted(set(dir(torch.Tensor))):
        if name.startswith("_") or name.endswith("_"):
            continue
        static = inspect.getattr_static(torch.Tensor, name, None)
        method = type(static).__name__ in ("method_descriptor", "function")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                value = getattr(x, name)() if method else getattr(x, name)
            except Exception:
                continue
        if isinstance(value, kinds) or _plain(value, torch):
            found[name] = {"kind": "method" if method else "attribute",
                           "type": type(value).__name__}
    return found
