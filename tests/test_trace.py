"""The runtime tracer: each rule on a small realistic program, clean programs, semantics."""

from __future__ import annotations

import gc
import json
import os
import runpy
import subprocess
import sys
import textwrap
import threading
import types
import weakref
from pathlib import Path

import pytest

import aliaslint
from aliaslint.cli import main
from aliaslint.runtime.tracer import forward_op_name

ROOT = Path(__file__).resolve().parent.parent

torch = pytest.importorskip("torch")

pytest_plugins = ["pytester"]

ALIASLINT = [sys.executable, "-m", "aliaslint"]


@pytest.fixture(autouse=True)
def _in_tmp_path(tmp_path, monkeypatch):
    """Programs run from their own directory, so paths in messages are short."""
    monkeypatch.chdir(tmp_path)


def run(tmp_path: Path, source: str, traced: bool, name: str = "prog.py", deep: bool = False):
    """Run ``source`` as ``__main__``; (globals, exception, findings)."""
    path = tmp_path / name
    path.write_text(textwrap.dedent(source))
    error = None
    namespace: dict = {}
    tracer = aliaslint.trace(deep=deep) if traced else None
    torch.manual_seed(0)
    try:
        if tracer is not None:
            with tracer:
                namespace = runpy.run_path(str(path), run_name="__main__")
        else:
            namespace = runpy.run_path(str(path), run_name="__main__")
    except Exception as caught:  # the program's own error, compared below
        error = caught
    return namespace, error, (tracer.findings if tracer is not None else [])


def summary(findings) -> list[tuple]:
    """(code, row, ((related message, row), ...)) of each finding."""
    return [(d.code, d.location.row, tuple((r.message, r.location.row) for r in d.related))
            for d in findings]


def both(tmp_path: Path, source: str):
    """Run untraced and traced (by default and with ``deep``, which must find the same);
    the exceptions must agree in type and (prefix of) text."""
    plain_ns, plain_error, _ = run(tmp_path, source, traced=False)
    _, deep_error, deep_findings = run(tmp_path, source, traced=True, deep=True)
    traced_ns, traced_error, findings = run(tmp_path, source, traced=True)
    assert type(plain_error) is type(traced_error) is type(deep_error)
    if plain_error is not None:
        assert str(traced_error).startswith(str(plain_error))
        assert str(traced_error) == str(deep_error)
    assert summary(deep_findings) == summary(findings)
    assert all(d.status == "runtime" for d in findings)
    return plain_ns, traced_ns, plain_error, traced_error, findings


# --- AL101 ----------------------------------------------------------------------------------

GATE = """\
import torch
import torch.nn as nn


class Gate(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        gate = torch.sigmoid(self.proj(x))
        gate.mul_(2.0)
        return x * gate


model = Gate(8)
loss = model(torch.randn(4, 8)).sum()
loss.backward()
"""


def test_write_to_saved_result_is_reported_and_backward_raises_like_autograd(tmp_path):
    *_, plain_error, traced_error, findings = both(tmp_path, GATE)
    assert summary(findings) == [
        ("AL101", 12, (("saved for backward here", 11), ("backward runs here", 18)))]
    assert findings[0].location.column == 9  # `gate.mul_(2.0)`
    assert "which is output 0 of Sigmoid, is at version 1; expected version 0" in str(plain_error)
    assert str(traced_error) == (
        f"{plain_error} aliaslint: saved at prog.py:11; modified at prog.py:12."
    )


GAN = """\
import torch
import torch.nn as nn

G = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 2))
D = nn.Sequential(nn.Linear(2, 16), nn.LeakyReLU(0.2), nn.Linear(16, 1))
opt_g = torch.optim.Adam(G.parameters(), lr=1e-3)
opt_d = torch.optim.Adam(D.parameters(), lr=1e-3)
bce = nn.BCEWithLogitsLoss()
real = torch.randn(32, 2)
fake = G(torch.randn(32, 4))
d_loss = bce(D(real), torch.ones(32, 1)) + bce(D(fake.detach()), torch.zeros(32, 1))
g_loss = bce(D(fake), torch.ones(32, 1))
opt_d.zero_grad()
d_loss.backward()
opt_d.step()
opt_g.zero_grad()
g_loss.backward()
opt_g.step()
"""


def test_gan_optimizer_step_before_generator_backward(tmp_path):
    *_, plain_error, traced_error, findings = both(tmp_path, GAN)
    assert plain_error is not None
    assert [(code, row) for code, row, _ in summary(findings)] == [("AL101", 15)]
    assert ("saved for backward here", 12) in summary(findings)[0][2]
    assert str(traced_error).endswith("saved at prog.py:12; modified at prog.py:15.")


def test_write_to_saved_tensor_that_no_backward_reads_is_not_reported(tmp_path):
    """The hazard is the backward pass reading changed values; without one there is none."""
    source = """\
        import torch
        w = torch.randn(3, 3, requires_grad=True)
        a = torch.randn(2, 3)
        out = a @ w
        a.add_(1.0)
        print(out.shape)
    """
    *_, plain_error, _, findings = both(tmp_path, source)
    assert plain_error is None
    assert findings == []


# --- AL102, AL103, AL104 ------------------------------------------------------------------


def test_data_write_to_saved_tensor_is_silent_in_torch_and_reported(tmp_path):
    source = """\
        import torch
        import torch.nn as nn

        log_scale = nn.Parameter(torch.ones(4))
        scale = torch.exp(log_scale)
        scale.data.clamp_(max=1.5)
        (torch.ones(2, 4) * scale).sum().backward()
        grad = log_scale.grad
    """
    plain, traced, plain_error, _, findings = both(tmp_path, source)
    assert plain_error is None
    assert torch.equal(plain["grad"], traced["grad"])
    assert summary(findings) == [
        ("AL103", 6, (("saved for backward here", 5), ("backward runs here", 7)))]


def test_write_through_detached_alias(tmp_path):
    source = """\
        import torch

        x = torch.randn(5, requires_grad=True)
        h = torch.tanh(x)
        frozen = h.detach()
        frozen.zero_()
        h.sum().backward()
    """
    *_, plain_error, traced_error, findings = both(tmp_path, source)
    assert "is at version 1; expected version 0" in str(plain_error)
    assert summary(findings) == [
        ("AL104", 6, (("saved for backward here", 4), ("detached here", 5),
                      ("backward runs here", 7)))
    ]
    assert str(traced_error).endswith("saved at prog.py:4; modified at prog.py:6.")


def test_data_update_of_parameter_is_not_a_leaf_write(tmp_path):
    """The update PyTorch's own examples used before `no_grad`: `.data` writes are allowed."""
    source = """\
        import torch
        import torch.nn as nn

        layer = nn.Linear(3, 1)
        layer(torch.randn(4, 3)).sum().backward()
        for p in layer.parameters():
            p.data.add_(-0.1 * p.grad)
        with torch.no_grad():
            for p in layer.parameters():
                p.add_(-0.1 * p.grad)
        weight = layer.weight
    """
    plain, traced, *_, findings = both(tmp_path, source)
    assert torch.equal(plain["weight"], traced["weight"])
    assert summary(findings) == []


def test_ema_update_through_detach_and_init_through_data_are_clean(tmp_path):
    """The idioms of training code that write parameters behind autograd's back on purpose:
    initialisation through `.data` (`_init_weights` by `self.apply`) and an EMA copy updated
    through `.detach()` after the optimizer step; no graph holds what they write."""
    source = """\
        import copy

        import torch
        import torch.nn as nn


        class Net(nn.Module):
            def __init__(self) -> None:
                super().__init__()
                self.body = nn.Sequential(nn.Linear(8, 16), nn.GELU(), nn.LayerNorm(16))
                self.head = nn.Linear(16, 1)
                self.apply(self._init_weights)

            def _init_weights(self, m: nn.Module) -> None:
                if isinstance(m, nn.Linear):
                    m.weight.data.normal_(0, 0.02)
                    m.bias.data.zero_()

            def forward(self, x: torch.Tensor) -> torch.Tensor:
                return self.head(self.body(x))


        model = Net()
        ema = copy.deepcopy(model)
        optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
        for step in range(3):
            x, y = torch.randn(4, 8), torch.randn(4, 1)
            loss = nn.functional.mse_loss(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            for e, p in zip(ema.parameters(), model.parameters()):
                e.detach().mul_(0.99).add_(p.detach(), alpha=0.01)
            with torch.no_grad():
                ema_loss = nn.functional.mse_loss(ema(x), y)
        weight = ema.head.weight
    """
    plain, traced, plain_error, _, findings = both(tmp_path, source)
    assert plain_error is None
    assert torch.equal(plain["weight"], traced["weight"])
    assert summary(findings) == []


def test_weight_clipping_through_data_before_backward(tmp_path):
    """The bad twin of a `.data` write: WGAN's weight clipping put between the forward pass
    and `backward()`; the second layer's weight was saved (for the gradient of its input),
    so the gradient is computed from the clipped values and torch says nothing (AL103)."""
    source = """\
        import torch
        import torch.nn as nn

        critic = nn.Sequential(nn.Linear(8, 16), nn.LeakyReLU(0.2), nn.Linear(16, 1))
        optimizer = torch.optim.RMSprop(critic.parameters(), lr=5e-5)
        for step in range(2):
            real, fake = torch.randn(4, 8), torch.randn(4, 8)
            loss = critic(fake).mean() - critic(real).mean()
            for p in critic.parameters():
                p.data.clamp_(-0.01, 0.01)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        weight = critic[0].weight
    """
    plain, traced, plain_error, _, findings = both(tmp_path, source)
    assert plain_error is None
    assert torch.equal(plain["weight"], traced["weight"])
    assert summary(findings) == [
        ("AL103", 10, (("saved for backward here", 8), ("backward runs here", 12)))]


def test_ema_update_through_detach_before_backward(tmp_path):
    """The bad twin of the EMA update: the model's own parameters written through
    `.detach()` between the forward pass and `backward()`; the alias shares the version
    counter, so backward raises (AL104)."""
    source = """\
        import copy

        import torch
        import torch.nn as nn

        model = nn.Sequential(nn.Linear(8, 16), nn.Tanh(), nn.Linear(16, 1))
        ema = copy.deepcopy(model)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        x, y = torch.randn(4, 8), torch.randn(4, 1)
        loss = nn.functional.mse_loss(model(x), y)
        for e, p in zip(ema.parameters(), model.parameters()):
            p.detach().mul_(0.99).add_(e.detach(), alpha=0.01)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    """
    *_, plain_error, traced_error, findings = both(tmp_path, source)
    assert "modified by an inplace operation" in str(plain_error)
    assert summary(findings) == [
        ("AL104", 12, (("saved for backward here", 10), ("detached here", 12),
                       ("backward runs here", 14)))]


@pytest.mark.slow
def test_leaf_write_that_torch_refuses_is_reported_where_it_raised(tmp_path):
    script = tmp_path / "update.py"
    script.write_text(textwrap.dedent("""\
        import torch

        w = torch.randn(3, requires_grad=True)
        (w * w).sum().backward()
        w -= 0.1 * w.grad
    """))
    result = subprocess.run([sys.executable, "-m", "aliaslint", "trace", "--output-format",
                             "concise", str(script)], cwd=tmp_path, capture_output=True,
                            text=True, timeout=120, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert result.returncode == 1
    assert "update.py:5:1: AL102" in result.stderr, result.stderr


# --- AL201, AL203 ---------------------------------------------------------------------------


def test_write_through_named_view_then_base_read(tmp_path):
    source = """\
        import torch
        import torch.nn as nn

        model = nn.Linear(8, 2)
        features = torch.rand(16, 8)
        preview = features[:4]
        preview.mul_(255.0)
        logits = model(features)
    """
    plain, traced, *_, findings = both(tmp_path, source)
    assert torch.equal(plain["logits"], traced["logits"])
    assert summary(findings) == [
        ("AL201", 7, (("view created here", 6), ("base read here", 8)))
    ]


def test_writes_into_part_of_a_tensor_on_one_line_are_not_reported(tmp_path):
    source = """\
        import torch

        grid = torch.zeros(4, 4)
        grid[:, 0] = 1.0
        grid[1].add_(2.0)
        rest = grid[2:]
        head = grid[:2]
        head.zero_()
        total = rest.sum()
    """
    *_, findings = both(tmp_path, source)
    # `head` and `rest` share no element, so reading `rest` does not see the write.
    assert findings == []


def test_write_to_expanded_tensor(tmp_path):
    source = """\
        import torch

        tokens = torch.randint(1, 100, (2, 6))
        positions = torch.arange(6).expand(2, -1)
        positions.mul_(tokens != 0)
    """
    *_, plain_error, _, findings = both(tmp_path, source)
    assert "single memory location" in str(plain_error)
    assert summary(findings) == [("AL203", 5, (("`expand` made it here", 4),))]


def test_input_partially_overlapping_destination(tmp_path):
    source = """\
        import torch

        a = torch.arange(6.0)
        shifted = a[:-1]
        a[1:].copy_(shifted)
    """
    *_, findings = both(tmp_path, source)
    assert summary(findings) == [("AL203", 5, (("overlapping view created here", 4),))]


# --- AL301 ----------------------------------------------------------------------------------


def test_write_to_tensor_sharing_a_live_numpy_array(tmp_path):
    source = """\
        import numpy as np
        import torch

        raw = np.full((16, 3), 200.0, dtype=np.float32)
        features = torch.from_numpy(raw)
        features.div_(255.0)
        private = torch.from_numpy(np.ones(3, dtype=np.float32))
        private.add_(1.0)
        t = torch.zeros(3)
        view = t.numpy()
        t.add_(1.0)
        peak = float(raw.max())
    """
    plain, traced, *_, findings = both(tmp_path, source)
    assert plain["peak"] == traced["peak"]
    # `private`'s array is held by torch alone: nobody else sees the write.
    assert summary(findings) == [
        ("AL301", 6, (("shared with NumPy here", 5),)),
        ("AL301", 11, (("shared with NumPy here", 10),)),
    ]
    assert isinstance(torch.from_numpy, types.BuiltinFunctionType)  # unwrapped again


# --- clean programs, semantics --------------------------------------------------------------

CNN_STEP = """\
import torch
import torch.nn as nn
import torch.nn.functional as F

model = nn.Sequential(
    nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(inplace=True), nn.MaxPool2d(2),
    nn.Conv2d(8, 16, 3, padding=1), nn.ReLU(inplace=True), nn.AdaptiveAvgPool2d(1),
    nn.Flatten(), nn.Linear(16, 10),
)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, weight_decay=1e-4)
images, labels = torch.randn(8, 3, 16, 16), torch.randint(0, 10, (8,))
losses = []
for _ in range(3):
    optimizer.zero_grad()
    loss = F.cross_entropy(model(images), labels)
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
model.eval()
with torch.inference_mode():
    prediction = model(images).argmax(1)
with torch.no_grad():
    model[0].weight.mul_(0.5)
params = [p.detach().clone() for p in model.parameters()]
"""

RNN_LOOP = """\
import torch
import torch.nn as nn

cell = nn.GRUCell(4, 8)
head = nn.Linear(8, 1)
optimizer = torch.optim.Adam([*cell.parameters(), *head.parameters()], lr=1e-2)
sequence = torch.randn(6, 2, 4)
outputs = torch.zeros(6, 2, 8)
h = torch.zeros(2, 8)
for t in range(sequence.shape[0]):
    h = cell(sequence[t], h)
    outputs[t] = h.detach()
loss = head(h).pow(2).mean()
optimizer.zero_grad()
loss.backward()
optimizer.step()
params = [p.detach().clone() for p in cell.parameters()]
"""

GAN_FIXED = GAN.replace(
    "opt_d.zero_grad()\nd_loss.backward()\nopt_d.step()\nopt_g.zero_grad()\ng_loss.backward()\n",
    "opt_d.zero_grad()\nopt_g.zero_grad()\nd_loss.backward()\ng_loss.backward()\nopt_d.step()\n",
)


@pytest.mark.parametrize("source", [CNN_STEP, RNN_LOOP, GAN_FIXED], ids=["cnn", "rnn", "gan"])
def test_clean_programs_report_nothing_and_compute_the_same(tmp_path, source):
    plain, traced, plain_error, _, findings = both(tmp_path, source)
    assert plain_error is None
    assert findings == []
    for name in ("losses", "params", "prediction"):
        if name in plain:
            expected, actual = plain[name], traced[name]
            if isinstance(expected, list) and expected and isinstance(expected[0], torch.Tensor):
                assert all(torch.equal(a, b) for a, b in zip(expected, actual))
            elif isinstance(expected, torch.Tensor):
                assert torch.equal(expected, actual)
            else:
                assert expected == actual


TRANSFORMER_SAVED_WHOLE = """\
import io

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
encoder = nn.TransformerEncoder(nn.TransformerEncoderLayer(8, 2, dim_feedforward=16), 2)
relu_default = [layer.activation is F.relu for layer in encoder.layers]
fast_path = [layer.activation_relu_or_gelu for layer in encoder.layers]
buffer = io.BytesIO()
torch.save(encoder, buffer)  # the whole module, as word_language_model saves its model
buffer.seek(0)
loaded = torch.load(buffer, weights_only=False)
x = torch.randn(5, 3, 8)
encoder.eval(), loaded.eval()
same = torch.equal(encoder(x), loaded(x))
"""


def test_a_transformer_built_with_the_default_activation_pickles_as_untraced(tmp_path):
    """`nn.TransformerEncoderLayer(activation=F.relu)`: the default, taken when torch was
    imported, is the function the trace wraps; a module holding it is still saved whole by
    `torch.save` (pickle refuses a function that is not what its name gives) and still sees
    `activation is F.relu`."""
    plain, traced, plain_error, traced_error, findings = both(tmp_path, TRANSFORMER_SAVED_WHOLE)
    assert plain_error is None and findings == []
    for name in ("relu_default", "fast_path", "same"):
        assert traced[name] == plain[name]
    assert traced["relu_default"] == [True, True] and traced["same"] is True
    layer = torch.nn.TransformerEncoderLayer(8, 2)
    assert layer.activation is torch.nn.functional.relu  # restored after the trace


def test_user_tensors_are_not_kept_alive():
    with aliaslint.trace():
        x = torch.randn(4, requires_grad=True)
        y = torch.sigmoid(x)
        view = y[:2]
        array = view.detach().numpy()
        ref = weakref.ref(y)
        del y, view, array
        gc.collect()
        assert ref() is None


def test_ops_in_threads_started_during_the_trace_are_traced():
    errors = []

    def work() -> None:
        x = torch.randn(3, requires_grad=True)
        y = x.exp()
        y.add_(1.0)
        try:
            y.sum().backward()
        except RuntimeError as error:
            errors.append(str(error))

    with aliaslint.trace() as tracer:
        thread = threading.Thread(target=work)
        thread.start()
        thread.join()
    assert [d.code for d in tracer.findings] == ["AL101"]
    assert errors and "aliaslint: saved at" in errors[0]


def test_compiled_function_runs_unchanged_under_the_trace():
    def f(x):
        return (x.sin() * 2).relu().sum()

    compiled = torch.compile(f, backend="eager")
    x = torch.randn(8, requires_grad=True)
    expected = f(x)
    with aliaslint.trace() as tracer:
        result = compiled(x)
        result.backward()
    assert torch.equal(result, expected)
    assert tracer.findings == []


def test_watch_calls_back_for_ops_at_a_line():
    seen = []
    with aliaslint.trace() as tracer:
        tracer.watch(__file__, sys._getframe().f_lineno + 2, lambda event: seen.append(event))
        x = torch.ones(3)
        x.add_(1.0)  # the watched line
        x.mul_(2.0)
    assert [event.name for event in seen] == ["add_"]
    assert seen[0].site.filename == os.path.abspath(__file__)


def test_installed_package_writes_are_reported_at_the_user_line(tmp_path, monkeypatch):
    """A write inside site-packages is attributed to the user line that called into it."""
    library = tmp_path / "site-packages"
    library.mkdir()
    (library / "helperlib.py").write_text("def double(t):\n    t.mul_(2.0)\n")
    monkeypatch.syspath_prepend(str(library))
    monkeypatch.delitem(sys.modules, "helperlib", raising=False)
    _, error, findings = run(tmp_path, """\
        import torch
        import helperlib

        x = torch.randn(3, requires_grad=True)
        y = torch.sigmoid(x)
        helperlib.double(y)
        y.sum().backward()
    """, traced=True)
    assert isinstance(error, RuntimeError)
    assert summary(findings) == [
        ("AL101", 6, (("saved for backward here", 5), ("backward runs here", 7)))]


def test_forward_op_name_follows_autograd():
    assert forward_op_name("SigmoidBackward0") == "Sigmoid"
    assert forward_op_name("AddBackward1") == "Add1"
    assert forward_op_name("MyFnBackward") == "MyFn"
    assert forward_op_name("AccumulateGrad") == "AccumulateGrad"


def test_importing_aliaslint_does_not_import_torch():
    code = "import sys, aliaslint; aliaslint.Diagnostic; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


# --- command line -----------------------------------------------------------------------------


@pytest.mark.slow
def test_cli_runs_script_with_arguments_and_keeps_its_exit_code(tmp_path):
    (tmp_path / "prog.py").write_text(
        "import sys\nimport torch\nprint('args', sys.argv[1:], __name__)\nsys.exit(3)\n"
    )
    out = subprocess.run([*ALIASLINT, "trace", "prog.py", "-x", "--flag"], cwd=tmp_path,
                         capture_output=True, text=True)
    assert out.returncode == 3
    assert out.stdout == "args ['-x', '--flag'] __main__\n"


@pytest.mark.slow
def test_cli_reports_findings_as_json_and_fails(tmp_path, capsys):
    _, plain_error, _ = run(tmp_path, GATE, traced=False)
    status = main(["trace", "--output-format", "json", "-o", "report.json", "prog.py"])
    assert status == 1
    # The program's traceback ends with autograd's message and the two lines.
    last = capsys.readouterr().err.strip().splitlines()[-1]
    assert last.startswith(f"RuntimeError: {plain_error} aliaslint: saved at prog.py:11")
    report = json.loads((tmp_path / "report.json").read_text())
    assert [(d["code"], d["filename"], d["location"]["row"], d["status"]) for d in report] == [
        ("AL101", "prog.py", 12, "runtime")
    ]
    assert report[0]["related"][0]["location"]["row"] == 11


@pytest.mark.slow
def test_cli_fail_on(tmp_path, capsys):
    (tmp_path / "prog.py").write_text(
        "import torch\nx = torch.randn(3, requires_grad=True)\ny = x.exp()\ny.add_(1)\n"
        "try:\n    y.sum().backward()\nexcept RuntimeError:\n    print('caught')\n"
    )
    assert main(["trace", "prog.py"]) == 1
    assert "prog.py:4:1: AL101" in capsys.readouterr().err
    assert main(["trace", "--fail-on", "never", "prog.py"]) == 0


@pytest.mark.slow
def test_cli_runs_pytest_as_a_module(tmp_path):
    (tmp_path / "test_model.py").write_text(textwrap.dedent("""\
        import pytest
        import torch

        def test_saved_write():
            x = torch.randn(3, requires_grad=True)
            y = torch.sigmoid(x)
            y.mul_(2.0)
            with pytest.raises(RuntimeError):
                y.sum().backward()
    """))
    out = subprocess.run(
        [*ALIASLINT, "trace", "--output-format", "concise", "-m", "pytest", "-q", "-p",
         "no:cacheprovider", "test_model.py"],
        cwd=tmp_path, capture_output=True, text=True,
        env={**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"},
    )
    assert "1 passed" in out.stdout
    assert "test_model.py:7:5: AL101" in out.stderr
    assert out.returncode == 1


# --- pytest plugin ----------------------------------------------------------------------------

PLUGIN_TESTS = """\
import sys

import pytest
import torch


def test_hazard():
    x = torch.randn(3, requires_grad=True)
    y = torch.sigmoid(x)
    y.mul_(2.0)
    with pytest.raises(RuntimeError):
        y.sum().backward()


def test_clean():
    assert torch.ones(2).sum() == 2


def test_tracer_not_loaded_without_the_flag(request):
    if not request.config.getoption("aliaslint_trace"):
        assert "aliaslint.runtime.tracer" not in sys.modules
        assert not request.config.pluginmanager.has_plugin("aliaslint-trace")
"""


def test_plugin_reports_per_test(pytester):
    pytester.makepyfile(test_models=PLUGIN_TESTS)
    result = pytester.runpytest("--aliaslint-trace", "--aliaslint-fail-on=any",
                                "-p", "no:cacheprovider")
    result.assert_outcomes(passed=3)
    result.stdout.fnmatch_lines([
        "*aliaslint trace*",
        "test_models.py::test_hazard",
        "  test_models.py:10:5: AL101 *",
        "      test_models.py:9: saved for backward here",
        "1 runtime finding in 1 test",
    ])
    assert "test_models.py::test_clean" not in result.stdout.str()
    assert result.ret == pytest.ExitCode.TESTS_FAILED  # --aliaslint-fail-on=any


@pytest.mark.slow
def test_plugin_is_inert_without_the_flag(pytester):
    pytester.makepyfile(test_models=PLUGIN_TESTS)
    # A fresh process, so that nothing imported by this test session hides an import.
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=3)
    assert "aliaslint trace" not in result.stdout.str()
    assert "--aliaslint-trace" in pytester.runpytest("--help").stdout.str()


@pytest.mark.parametrize("command", [["trace"], ["check", "--trace"]])
def test_without_torch_the_program_is_not_run_and_the_error_says_what_to_install(
        tmp_path, command):
    shadow = tmp_path / "shadow" / "torch"
    shadow.mkdir(parents=True)
    (shadow / "__init__.py").write_text("raise ModuleNotFoundError(\"No module named 'torch'\")\n")
    (tmp_path / "script.py").write_text("print('the program ran')\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path / "shadow"), str(ROOT)])}
    result = subprocess.run([sys.executable, "-m", "aliaslint", *command, "script.py"],
                            cwd=tmp_path, capture_output=True, text=True, timeout=120, env=env)
    assert result.returncode == 2
    assert "the program ran" not in result.stdout
    assert "needs torch" in result.stderr and "pip install 'aliaslint[trace]'" in result.stderr
    assert "Traceback" not in result.stderr


def test_an_out_tensor_is_never_asked_for_its_truth():
    # DataLoader's collate stacks into a shared-memory `out=` tensor: the wrapper that finds
    # what a call writes must not evaluate `bool(out)`, which raises for several elements.
    buffer = torch.empty(2, 3)
    with aliaslint.trace() as tracer:
        torch.stack([torch.ones(3), torch.zeros(3)], 0, out=buffer)
        torch.add(torch.ones(3), 1, out=torch.empty(3))
    assert buffer.sum().item() == 3.0 and tracer.findings == []
