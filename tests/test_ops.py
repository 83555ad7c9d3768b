"""aliaslint.ops: the loader and a few facts of the shipped tables (no torch needed)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from aliaslint import ops


def test_no_torch_import():
    code = "import sys, aliaslint.ops as o; o.lookup('torch.add'); o.module('torch.nn.ReLU'); print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_lazy_index_matches_json():
    data = json.loads(ops.DATA_PATH.read_text())
    assert set(ops.names()) == set(data["ops"])
    assert set(ops.names("modules")) == set(data["modules"])
    assert ops.meta() == data["meta"]
    for name in ("torch.add", "torch.Tensor.T", "copy.deepcopy"):
        assert ops.lookup(name).kind == data["ops"][name]["kind"]


def test_meta():
    m = ops.meta()
    assert m["torch"].startswith("2.")
    assert len(m["native_functions.yaml sha256"]) == 64
    assert len(m["derivatives.yaml sha256"]) == 64


def test_unknown_names():
    assert ops.lookup("torch.no_such_op") is None
    assert ops.method("no_such_method") is None
    assert ops.module("torch.nn.NoSuchModule") is None


def test_transpose_is_noncontiguous_view():
    op = ops.lookup("torch.transpose")
    assert op.kind == "view" and op.is_view
    assert op.aliases == "input"
    assert op.noncontiguous
    assert op.params[:3] == ("input", "dim0", "dim1")
    m = ops.method("transpose")
    assert m.kind == "view" and m.aliases == "self" and m.noncontiguous
    assert m.params[:2] == ("dim0", "dim1")


@pytest.mark.parametrize("name", ["t", "permute", "expand", "diagonal", "unfold", "as_strided", "T", "mT", "movedim"])
def test_known_noncontiguous_views(name):
    op = ops.method(name)
    assert op.kind == "view" and op.noncontiguous, name


@pytest.mark.parametrize("name", ["view", "unsqueeze", "squeeze", "select", "narrow", "detach", "split", "chunk", "unbind"])
def test_other_views(name):
    op = ops.method(name)
    assert op.kind == "view", (name, op.kind)


def test_add_inplace_twin():
    op = ops.method("add_")
    assert op.kind == "inplace" and op.writes == ("self",) and op.aliases == "self"
    assert op.twin == "add"
    assert op.twin_op().kind == "functional"
    assert ops.method("add").twin == "add_"
    assert ops.method("__iadd__").kind == "inplace"
    assert ops.method("__iadd__").aten == "add_"


def test_out_overloads():
    op = ops.lookup("torch.add")
    assert op.kind == "functional" and op.has_out
    assert not ops.method("add").has_out


def test_saves():
    assert ops.lookup("torch.relu").saves_must == {"result"}
    assert ops.lookup("torch.sigmoid").saves_must == {"result"}
    assert ops.lookup("torch.tanh").saves_must == {"result"}
    assert ops.lookup("torch.exp").saves_must == {"result"}
    mul = ops.method("mul")
    assert mul.overloads["Tensor"].saves == {"self", "other"}
    assert mul.saves_may == {"self", "other"}
    assert ops.lookup("torch.mul").overloads["Tensor"].saves == {"input", "other"}
    assert ops.lookup("torch.transpose").saves_must == frozenset()
    assert {"input", "weight"} <= ops.lookup("torch.nn.functional.linear").saves_must
    assert ops.lookup("torch.nn.functional.softmax").saves_must == {"result"}
    # in-place: the original self is cloned by autograd, the result (= self after) is saved
    assert ops.method("relu_").saves_must == {"result"}
    assert ops.method("mul_").overloads["Tensor"].saves == {"other"}


def test_sometimes_alias():
    for name in ("reshape", "contiguous", "to", "flatten", "float", "double", "type_as", "cpu", "resolve_conj", "resolve_neg", "reshape_as"):
        op = ops.method(name)
        assert op.kind == "sometimes_alias", (name, op.kind)
        assert op.aliases == "self"
    assert ops.lookup("torch.reshape").kind == "sometimes_alias"


def test_returns_input_or_a_copy():
    # The input itself or a new tensor, never a view of it: probed, and by hand for cpu/cuda.
    for name in ("to", "contiguous", "float", "double", "type_as", "cpu", "cuda", "type"):
        assert ops.method(name).extra.get("returns_input") is True, name
    # A view for some inputs: reshape of a contiguous tensor, atleast_2d of a 1-d one.
    for name in ("torch.Tensor.reshape", "torch.Tensor.flatten", "torch.reshape",
                 "torch.atleast_1d", "torch.atleast_2d", "torch.atleast_3d"):
        assert ops.lookup(name).extra.get("returns_input") is None, name


def test_properties():
    t = ops.method("T")
    assert t.kind == "view" and t.is_property and t.aliases == "self" and t.noncontiguous
    for p in ("mT", "H", "mH", "real"):
        assert ops.method(p).is_property, p
    d = ops.method("data")
    assert d.kind == "detached_alias" and d.aliases == "self"


def test_returns():
    assert ops.lookup("torch.zeros").returns == "tensor"
    assert ops.lookup("torch.zeros").returns_tensor
    assert ops.lookup("torch.split").returns == "tensors"
    assert ops.method("add_").returns == "tensor"
    assert ops.method("numel").returns == "other"
    assert ops.method("__setitem__").returns == "none"


def test_getitem_setitem():
    g = ops.method("__getitem__")
    assert g.kind == "indexing" and g.aliases == "self"
    s = ops.method("__setitem__")
    assert s.kind == "inplace" and s.writes == ("self",)


def test_functional_inplace_kwarg():
    r = ops.lookup("torch.nn.functional.relu")
    assert r.inplace_kwarg == "inplace" and r.twin == "relu_"
    assert r.params == ("input", "inplace")
    assert ops.lookup("torch.nn.functional.dropout").inplace_kwarg == "inplace"
    assert ops.lookup("torch.nn.functional.conv2d").inplace_kwarg is None


def test_modules():
    m = ops.module("torch.nn.ReLU")
    assert m.op == "relu" and m.inplace_kwarg == "inplace" and m.inplace_op == "relu_"
    assert m.saves == {"result"}
    assert m.inplace().kind == "inplace"
    lin = ops.module("torch.nn.Linear")
    assert lin.op == "linear" and "input" in lin.saves and lin.inplace_kwarg is None
    assert ops.module("torch.nn.Sequential").container
    assert ops.module("torch.nn.LSTM").opaque
    assert ops.module("torch.nn.Identity").identity
    assert ops.module("torch.nn.Sigmoid").saves == {"result"}
    assert ops.module("torch.nn.Conv2d").saves >= {"input", "weight"}


def test_module_constructor_positions():
    """Where `inplace` sits among a constructor's positional parameters, per class."""
    assert ops.module("torch.nn.ReLU").init_params == ("inplace",)
    assert ops.module("torch.nn.Dropout").init_params == ("p", "inplace")
    assert ops.module("torch.nn.LeakyReLU").init_params == ("negative_slope", "inplace")
    assert ops.module("torch.nn.ELU").init_params == ("alpha", "inplace")
    assert ops.module("torch.nn.Hardtanh").init_params[:3] == ("min_val", "max_val", "inplace")
    assert ops.module("torch.nn.Sequential").init_params is None  # `*args`
    assert ops.module("torch.nn.BatchNorm2d").writes == ("running_mean", "running_var")
    assert ops.module("torch.nn.Linear").has_params and ops.module("torch.nn.LSTM").has_params
    assert ops.module("torch.nn.ReLU").has_params is False
    assert ops.module("torch.nn.Sequential").has_params is None


def test_hand_apis():
    assert ops.lookup("torch.from_numpy").kind == "numpy_share"
    assert ops.lookup("numpy.asarray").kind == "numpy_share"
    assert ops.method("numpy").kind == "numpy_share"
    assert ops.lookup("copy.deepcopy").kind == "deepcopy"
    assert ops.lookup("torch.nn.Module.state_dict").kind == "reference"
    assert ops.lookup("torch.optim.Optimizer.step").kind == "optimizer_step"
    assert ops.method("backward").extra["retain_kwarg"] == "retain_graph"
    assert ops.lookup("torch.autograd.grad").kind == "backward"
    assert ops.lookup("torch.no_grad").extra["grad_enabled"] is False
    assert ops.lookup("torch.set_grad_enabled").extra["mode_arg"] == "mode"


def test_kinds_are_known():
    for name in ops.names():
        op = ops.lookup(name)
        assert op.kind in ops.KINDS, (name, op.kind)
        assert op.returns in ("tensor", "tensors", "none", "other"), name
        if op.kind == "inplace":
            assert op.writes, name
        if op.saves_must is not None and op.saves_may is not None:
            assert op.saves_must <= op.saves_may, name


def test_frozen():
    op = ops.lookup("torch.add")
    with pytest.raises(Exception):
        op.kind = "view"  # type: ignore[misc]
    assert ops.lookup("torch.add") is op  # cached


def test_load_time():
    code = (
        "import time, aliaslint.ops as o; t=time.perf_counter(); o.lookup('torch.add'); "
        "o.method('transpose'); o.module('torch.nn.ReLU'); print(time.perf_counter()-t)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert float(out.stdout) < 0.1  # measured ~4 ms (read + index); generous bound for loaded machines


def test_version_bumps():
    assert ops.method("add_").bumps_version is True
    assert ops.method("__iadd__").bumps_version is True
    assert ops.method("__setitem__").bumps_version is True
    assert ops.method("requires_grad_").bumps_version is False
    assert ops.method("t_").metadata_only and ops.method("t_").bumps_version
    assert not ops.method("add_").metadata_only


def test_loader_accepts_reformatted_json(tmp_path, monkeypatch):
    data = json.loads(ops.DATA_PATH.read_text())
    p = tmp_path / "ops.json"
    p.write_text(json.dumps(data, indent=2))
    monkeypatch.setattr(ops, "DATA_PATH", p)
    monkeypatch.setattr(ops, "_raw", None)
    monkeypatch.setattr(ops, "_ops", {})
    monkeypatch.setattr(ops, "_modules", {})
    assert ops.lookup("torch.transpose").kind == "view"
    assert ops.module("torch.nn.ReLU").inplace_op == "relu_"
    assert ops.meta()["torch"] == data["meta"]["torch"]


def test_conversions_sometimes_alias():
    for name in ("float", "double", "half", "bfloat16", "int", "long", "short", "bool", "byte", "char", "cfloat", "type"):
        assert ops.method(name).kind == "sometimes_alias", name


def test_self_overlapping_views():
    for name in ("expand", "expand_as", "broadcast_to"):
        assert ops.method(name).self_overlapping, name
    assert ops.lookup("torch.Tensor.expand").self_overlapping
    assert ops.lookup("torch.broadcast_to").self_overlapping
    for name in ("transpose", "t", "T", "view", "unfold", "as_strided", "diagonal", "select", "add_", "reshape"):
        assert not ops.method(name).self_overlapping, name


def test_reordering_views():
    for name in ("transpose", "swapaxes", "swapdims", "t", "T", "mT", "mH", "H", "permute", "movedim", "moveaxis",
                 "adjoint"):
        op = ops.method(name)
        assert op.kind == "view" and op.reorders_dims, name
    assert ops.lookup("torch.transpose").reorders_dims and ops.lookup("torch.permute").reorders_dims
    for name in ("expand", "expand_as", "view", "diagonal", "unfold", "as_strided", "narrow", "unsqueeze", "squeeze",
                 "select", "detach", "split", "reshape", "contiguous"):
        assert not ops.method(name).reorders_dims, name


def test_fills():
    for name in ("copy_", "fill_", "zero_", "normal_", "uniform_", "random_"):
        op = ops.method(name)
        assert op.kind == "inplace" and op.fills, name
    assert ops.lookup("torch.zero_").fills and ops.lookup("torch.fill_").fills
    for name in ("add_", "mul_", "clamp_", "relu_", "masked_fill_", "index_fill_", "fill_diagonal_", "logical_or_",
                 "set_", "resize_", "t_", "requires_grad_", "__setitem__", "__iadd__"):
        assert not ops.method(name).fills, name
    assert not ops.method("add").fills


def test_fact_keys_only_where_true():
    data = json.loads(ops.DATA_PATH.read_text())
    for name, entry in data["ops"].items():
        for key in ("self_overlapping", "reorders_dims", "fills"):
            assert entry.get(key, True) is True, (name, key)
        op = ops.lookup(name)
        assert not (op.self_overlapping or op.reorders_dims) or op.kind == "view", name
        assert not op.fills or op.kind == "inplace", name
        assert not {"self_overlapping", "reorders_dims", "fills"} & set(op.extra), name


def test_non_tensor_methods():
    m = ops.non_tensor_methods()
    assert set(m) == set(ops.names("non_tensor_methods"))
    assert set(m.values()) <= {"value", "storage", "typed_storage"}
    assert m["untyped_storage"] == "storage"
    assert m["storage"] == "typed_storage" and m["_typed_storage"] == "typed_storage"
    for name in ("data_ptr", "item", "tolist", "dim", "numel", "size", "stride", "storage_offset", "is_contiguous",
                 "element_size", "nelement"):
        assert m[name] == "value", name
    for name in ("add", "view", "float", "numpy", "T", "data", "is_leaf", "type", "clone"):
        assert name not in m, name


def test_sometimes_alias_methods():
    names = ops.sometimes_alias_methods()
    assert {"float", "double", "half", "bfloat16", "int", "long", "to", "type", "contiguous", "reshape",
            "reshape_as", "flatten", "cpu", "cuda"} <= names
    for name in names:
        assert ops.method(name).kind == "sometimes_alias", name
    assert not {"view", "clone", "add", "detach", "data"} & names


def test_deriving_methods_and_attributes():
    methods = ops.deriving_methods()
    assert {"storage", "untyped_storage", "_typed_storage", "detach", "view", "t", "view_as", "reshape", "flatten",
            "contiguous", "expand", "narrow", "transpose", "permute", "squeeze", "unsqueeze", "select",
            "as_strided"} <= methods
    for name in methods:
        op = ops.method(name)
        if op is None:
            assert ops.non_tensor_methods()[name] in ("storage", "typed_storage"), name
        else:
            assert op.kind in ops.DERIVING_KINDS and not op.is_property and op.aliases == "self", name
    assert not {"clone", "add", "add_", "numpy", "T", "data", "data_ptr", "item"} & methods
    assert ops.deriving_attributes() == {"data", "T", "mT", "H", "mH", "real", "imag"}
    assert ops.method("data").is_property and ops.method("grad").is_property


def test_ndarray_writers():
    writers = ops.ndarray_writers()
    assert writers == {"fill", "sort", "put", "partition", "resize", "itemset", "byteswap", "setfield"}
    for name in writers - {"byteswap"}:
        op = ops.lookup("numpy.ndarray." + name)
        assert op.kind == "inplace" and op.writes == ("self",) and op.note, name
    byteswap = ops.lookup("numpy.ndarray.byteswap")
    assert byteswap.kind == "functional" and byteswap.inplace_kwarg == "inplace"
    assert ops.lookup("numpy.ndarray.copy") is None


def test_numpy_generator_samplers():
    # Only the sampling methods that take both a size and a dtype, and where they sit.
    assert "numpy.random.default_rng" in ops.dtype_fact("numpy generator makers")
    samplers = ops.dtype_fact("numpy generator samplers")
    assert samplers["integers"] == {"size": 2, "dtype": 3}
    assert samplers["random"] == {"size": 0, "dtype": 1}
    assert "normal" not in samplers and "permutation" not in samplers


def test_parameter_methods():
    assert ops.parameter_methods() == {"parameters", "named_parameters"}
    assert ops.lookup("torch.nn.Module.buffers").extra["yields"] == "buffers"
    for name in ("parameters", "named_parameters", "buffers"):
        assert ops.lookup("torch.nn.Module." + name).kind == "reference"


def test_metadata_reads_are_those_a_meta_tensor_answers():
    """`ops.metadata()`: what a tensor on the meta device (no data) answers; a read of it sees
    no in-place write of the values."""
    found = ops.metadata()
    assert {"shape", "dtype", "device", "ndim", "size", "dim", "numel", "stride",
            "is_contiguous", "requires_grad"} <= found
    assert not {"item", "tolist", "is_nonzero", "sum", "data", "T", "grad"} & found
