"""The checked files as one program: each way Python imports a name from another file, and
the cache keyed by what a file used from the others.

Every case is the same hazard split over two files: a training step in one file saves a
tensor (`sigmoid` keeps its result for backward), a helper in another file scales it in
place, and the step's backward then raises "modified by an inplace operation".  The finding
is where the write is, in the helper's file; only the import differs from case to case.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from aliaslint.config import CliOptions
from aliaslint.engine import check_paths

HELPER = '''\
import torch


def rescale(t):
    """Scale by two."""
    t.mul_(2)
'''
WRITE_ROW = 6  # `t.mul_(2)` in HELPER

STEP = '''\
import torch
{imports}

w = torch.randn(3, requires_grad=True)


def step():
    y = w.sigmoid()
    {call}(y)
    y.sum().backward()


if __name__ == "__main__":
    step()
'''


def _write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))


def _findings(root: Path, paths=(".",)) -> list[tuple[str, str, int]]:
    result = check_paths(paths, CliOptions(isolated=True), jobs=1, cwd=root)
    return [(d.code, d.filename, d.location.row) for d in result.diagnostics]


def _step(imports: str, call: str) -> str:
    return STEP.format(imports=imports, call=call)


# name → (files, the helper's path): one case per import form.
FORMS = {
    "from-script-dir": ({"train.py": _step("from utils import rescale", "rescale"),
                         "utils.py": HELPER}, "utils.py"),
    "import-module": ({"train.py": _step("import utils", "utils.rescale"),
                       "utils.py": HELPER}, "utils.py"),
    "import-as": ({"train.py": _step("import utils as u", "u.rescale"),
                   "utils.py": HELPER}, "utils.py"),
    "relative": ({"pkg/__init__.py": "", "pkg/train.py": _step("from .ops import rescale", "rescale"),
                  "pkg/ops.py": HELPER}, "pkg/ops.py"),
    "relative-module": ({"pkg/__init__.py": "",
                         "pkg/train.py": _step("from . import ops", "ops.rescale"),
                         "pkg/ops.py": HELPER}, "pkg/ops.py"),
    "relative-parent": ({"pkg/__init__.py": "", "pkg/sub/__init__.py": "",
                         "pkg/sub/train.py": _step("from ..ops import rescale", "rescale"),
                         "pkg/ops.py": HELPER}, "pkg/ops.py"),
    "package-reexport": ({"pkg/__init__.py": "from .ops import rescale\n",
                          "main.py": _step("from pkg import rescale", "rescale"),
                          "pkg/ops.py": HELPER}, "pkg/ops.py"),
    "dotted-import": ({"pkg/__init__.py": "", "main.py": _step("import pkg.ops", "pkg.ops.rescale"),
                       "pkg/ops.py": HELPER}, "pkg/ops.py"),
    "star-with-all": ({"main.py": _step("from ops import *", "rescale"),
                       "ops.py": HELPER + '\n__all__ = ["rescale"]\n'}, "ops.py"),
    "star-public": ({"main.py": _step("from ops import *", "rescale"),
                     "ops.py": HELPER}, "ops.py"),
    "namespace-package": ({"main.py": _step("from ns.ops import rescale", "rescale"),
                           "ns/ops.py": HELPER}, "ns/ops.py"),
    "src-layout": ({"pyproject.toml": "[project]\nname = 'demo'\n",
                    "src/demo/__init__.py": "", "src/demo/ops.py": HELPER,
                    "scripts/train.py": _step("from demo.ops import rescale", "rescale")},
                   "src/demo/ops.py"),
    "circular": ({"train.py": _step("from utils import rescale", "rescale"),
                  "utils.py": "from train import w  # noqa: F401\n" + HELPER},
                 "utils.py"),
}


@pytest.mark.parametrize("name", sorted(FORMS))
def test_a_helper_imported_from_another_file_is_followed(tmp_path, name):
    files, helper = FORMS[name]
    _write(tmp_path, files)
    row = WRITE_ROW + (1 if name == "circular" else 0)
    assert _findings(tmp_path) == [("AL101", helper, row)], name


def test_the_split_hazard_raises_under_torch(tmp_path):
    torch = pytest.importorskip("torch")
    del torch
    files, _ = FORMS["relative"]
    _write(tmp_path, files)
    run = subprocess.run([sys.executable, "-m", "pkg.train"], cwd=tmp_path,
                         capture_output=True, text=True,
                         env={**os.environ, "PYTHONPATH": str(tmp_path)})
    assert "modified by an inplace operation" in run.stderr


def test_a_file_checked_alone_keeps_its_imports_unknown(tmp_path):
    files, _ = FORMS["from-script-dir"]
    _write(tmp_path, files)
    assert _findings(tmp_path, ("train.py",)) == []


def test_a_module_outside_the_checked_files_stays_unknown(tmp_path):
    files, _ = FORMS["from-script-dir"]
    _write(tmp_path, {**files, "other.py": "x = 1\n"})
    # utils.py is not checked: its function is unknown, as an installed library's is.
    assert _findings(tmp_path, ("train.py", "other.py")) == []


def test_a_name_two_roots_could_load_is_not_guessed(tmp_path):
    # `import utils` from a script loads the utils.py beside it: the one in the other
    # directory, which writes nothing, must not be taken for it, nor the reverse.
    _write(tmp_path, {"a/train.py": _step("from utils import rescale", "rescale"),
                      "a/utils.py": "def rescale(t):\n    return t * 2\n",
                      "b/utils.py": HELPER})
    assert _findings(tmp_path) == []


def test_torch_is_never_read_from_checked_files(tmp_path):
    # A checked tree holding a `torch` package (PyTorch's own sources) does not replace
    # what the op tables say `torch.sigmoid` does.
    _write(tmp_path, {"torch/__init__.py": "def sigmoid(x):\n    return x\n",
                      "main.py": "import torch\n"
                                 "w = torch.randn(3, requires_grad=True)\n"
                                 "y = torch.sigmoid(w)\n"
                                 "y.mul_(2)\n"
                                 "y.sum().backward()\n"})
    assert _findings(tmp_path) == [("AL101", "main.py", 4)]


def test_a_suppression_in_the_helper_silences_the_finding(tmp_path):
    files, _ = FORMS["from-script-dir"]
    _write(tmp_path, {**files, "utils.py": HELPER.replace(
        "t.mul_(2)", "t.mul_(2)  # noqa: AL101")})
    assert _findings(tmp_path) == []


def test_findings_do_not_depend_on_order_jobs_or_cache(tmp_path):
    files, _ = FORMS["relative"]
    _write(tmp_path, {**files, "pkg/eval.py": _step("from .ops import rescale", "rescale")})
    runs = []
    for jobs in (1, 2):
        for cache in (False, True, True):  # cold, then warm
            result = check_paths(["pkg"], CliOptions(isolated=True), jobs=jobs, cwd=tmp_path,
                                 cache=cache)
            runs.append([(d.code, d.filename, d.location.row, d.message)
                         for d in result.diagnostics])
    order = check_paths(["pkg/train.py", "pkg/ops.py", "pkg/eval.py", "pkg/__init__.py"],
                        CliOptions(isolated=True), jobs=1, cwd=tmp_path)
    runs.append([(d.code, d.filename, d.location.row, d.message) for d in order.diagnostics])
    assert runs[0] and all(run == runs[0] for run in runs)
    # Two callers reach the same write: one finding.
    assert [(code, name, row) for code, name, row, _ in runs[0]] == [
        ("AL101", "pkg/ops.py", WRITE_ROW)]


CLEAN_HELPER = '''\
import torch


def standardize(x):
    return (x - x.mean()) / x.std()
'''


def _analysed(tmp_path: Path) -> str:
    run = subprocess.run([sys.executable, "-m", "aliaslint", "check", "-v", "."],
                         cwd=tmp_path, capture_output=True, text=True,
                         env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    (line,) = [line for line in run.stderr.splitlines() if "analysed" in line]
    return line.removeprefix("aliaslint: ")


def test_an_edit_re_checks_only_the_files_whose_helpers_changed(tmp_path):
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    caller = _step("from utils import standardize", "standardize").replace(
        "standardize(y)", "y = standardize(y)")
    _write(tmp_path, {"utils.py": CLEAN_HELPER, "unrelated.py": "import torch\n",
                      **{f"model{i}.py": caller for i in range(5)}})
    assert _analysed(tmp_path) == "7 analysed, 0 from cache"
    assert _analysed(tmp_path) == "0 analysed, 7 from cache"
    helper = tmp_path / "utils.py"
    helper.write_text(CLEAN_HELPER + "# normalise per batch\n")
    assert _analysed(tmp_path) == "1 analysed, 6 from cache"  # a comment: the helper alone
    helper.write_text(CLEAN_HELPER.replace("return (x - x.mean())", "x.sub_(x.mean())\n"
                                           "    return x"))
    assert _analysed(tmp_path) == "6 analysed, 1 from cache"  # its code: its callers too


def test_a_function_defined_inside_another_files_function_sees_that_files_globals(tmp_path):
    _write(tmp_path, {
        "train.py": _step("from utils import apply_scale", "apply_scale"),
        "utils.py": "import torch\n\nSCALE = 2.0\n\n\n"
                    "def apply_scale(t):\n"
                    "    def rescale(u):\n"
                    "        u.mul_(SCALE)\n"
                    "    rescale(t)\n",
    })
    assert _findings(tmp_path) == [("AL101", "utils.py", 8)]


def _loader(tmp_path: Path, files: dict[str, str]):
    from aliaslint.engine import _decoded, source_roots
    from aliaslint.config import Resolver
    from aliaslint.project import Loader, Program

    _write(tmp_path, files)
    paths = [tmp_path / name for name in files]
    program = Program.of(paths, source_roots(Resolver(cwd=tmp_path)))
    assert program is not None
    return Loader(program, 10**9, _decoded), [str(p) for p in paths]


def test_a_tree_is_parsed_once_per_process_for_its_check_and_its_importers(tmp_path):
    loader, (helper, _) = _loader(tmp_path, {"utils.py": HELPER, "train.py": "import utils\n"})
    imported, text, _ = loader.tree(helper)
    assert imported is not None and loader.share(helper, text) is imported
    assert loader.share(helper, text + "\n") is None  # another text: parsed on its own

    loader, (helper, _) = _loader(tmp_path, {"utils.py": HELPER, "train.py": "import utils\n"})
    own = libcst_parse(HELPER)
    loader.remember(helper, HELPER, own)
    assert loader.tree(helper)[0] is own
    # A text the file no longer holds is not kept under its name.
    loader.remember(helper, HELPER + "x = 1\n", libcst_parse(HELPER + "x = 1\n"))
    assert loader.tree(helper)[0] is own


def test_a_file_is_compiled_once_per_process_for_its_check_and_its_importers(tmp_path,
                                                                            monkeypatch):
    """Whichever comes first, a file's check or an importer's load of it, CPython compiles
    its content once in the process; an edited content is compiled again, and a syntax
    error is still the check's finding."""
    import builtins

    from aliaslint import project, screen
    from aliaslint.engine import check_source
    from aliaslint.project import Link

    compiled: list[str] = []
    real = builtins.compile

    def counting(source, filename, mode, flags=0, *args, **kwargs):
        if not flags & screen.ast.PyCF_ONLY_AST:
            compiled.append(filename)
        return real(source, filename, mode, flags, *args, **kwargs)

    monkeypatch.setattr(screen, "compile", counting, raising=False)
    edited = HELPER.replace("t.mul_(2)", "t.mul_(3)")
    for check_first in (True, False):
        loader, (helper, train) = _loader(tmp_path, {"utils.py": HELPER,
                                                     "train.py": "import utils\n"})
        link = Link(loader.program, loader, helper)
        compiled.clear()
        steps = [lambda: check_source(HELPER.encode(), "utils.py", link=link),
                 lambda: loader.tree(helper)]
        for step in steps if check_first else reversed(steps):
            step()
            # The parsed tree let go (as past the kept trees' budget): only the screen's
            # verdict is remembered.
            loader._trees = project.KeptTrees(project._KEEP_LINES)
        assert len(compiled) == 1
        # An edit: the new content is compiled, once more.
        (tmp_path / "utils.py").write_text(edited)
        check_source(edited.encode(), "utils.py", link=link)
        assert len(compiled) == 2 and loader.tree(helper)[1] == edited
        assert len(compiled) == 2
        # Content that does not compile is reported, whatever was screened before.
        (error,) = check_source(b"import torch\ndef f(:\n", "utils.py", link=link)
        assert error.code == "AL902"
    assert project.screen is screen.screen


def test_a_file_is_parsed_by_cpython_once_for_its_check_its_importers_and_its_outline(
        tmp_path, monkeypatch):
    """Whichever comes first, a file's check or an importer's load of it, CPython's parser
    reads its content once in the process: the screen that parses it keeps its outline
    (what the quiet proof and a star import read), and the other does not parse it again."""
    from aliaslint import screen
    from aliaslint.engine import check_source
    from aliaslint.project import Link

    parsed: list[str] = []
    real = screen.compile if hasattr(screen, "compile") else compile

    def counting(source, filename, mode, flags=0, *args, **kwargs):
        if flags & screen.ast.PyCF_ONLY_AST:
            parsed.append(filename)
        return real(source, filename, mode, flags, *args, **kwargs)

    monkeypatch.setattr(screen, "compile", counting, raising=False)
    for check_first in (True, False):
        loader, (helper, _) = _loader(tmp_path, {"utils.py": HELPER, "train.py": "import utils\n"})
        link = Link(loader.program, loader, helper, converted=True)
        parsed.clear()
        steps = [lambda: check_source(HELPER.encode(), "utils.py", link=link, converted=True),
                 lambda: loader.tree(helper, converted=True)]
        for step in steps if check_first else reversed(steps):
            step()
        found, _ = loader.outline(helper)
        assert len(parsed) == 1 and found is not None and not found.writes_nothing
        assert found.bound.keys() >= {"torch", "rescale"}


def test_kept_trees_are_bounded_by_lines(tmp_path, monkeypatch):
    from aliaslint import project

    monkeypatch.setattr(project, "_KEEP_LINES", 30)
    files = {f"m{i}.py": "x = 1\n" * 20 for i in range(3)}
    loader, paths = _loader(tmp_path, files)
    first = loader.tree(paths[0])[0]
    loader.tree(paths[1])
    loader.tree(paths[2])
    assert loader._trees.lines <= 30 and len(loader._trees) == 1  # the oldest went first
    assert loader.tree(paths[0])[0] is not first  # parsed again


def test_a_tree_loaded_again_outlives_the_trees_kept_once():
    """The layers many files import stay while file after file is checked and kept."""
    from aliaslint.project import KeptTrees

    kept = KeptTrees(100)
    kept.keep("layers.py", "layers", 30)
    kept.used_again("layers.py")  # a second importer: proven
    for index in range(10):  # ten checked files, each kept once, never imported
        kept.keep(f"model{index}.py", f"model{index}", 30)
    assert kept.get("layers.py") == "layers"
    assert kept.get("model9.py") == "model9" and kept.get("model0.py") is None
    assert kept.lines <= 100

    # Proven trees keep at most their share: past it the oldest go back on probation.
    kept = KeptTrees(100)
    for name in ("a", "b", "c"):
        kept.keep(name, name, 30)
        kept.used_again(name)
    assert kept.lines == 90 and len(kept) == 3
    kept.keep("d", "d", 30)  # over the budget: "a" was demoted, the oldest on probation
    assert kept.get("a") is None and kept.get("d") == "d" and kept.lines == 90

    kept = KeptTrees(10)  # one tree larger than the budget is still kept, alone
    kept.keep("big.py", "big", 50)
    assert kept.get("big.py") == "big" and len(kept) == 1


def libcst_parse(text: str):
    import libcst

    return libcst.parse_module(text)


# A block whose behaviour its builder, in another file, chooses through the constructor: the
# block's own file cannot see the choice; the builder's check runs the block's methods with
# the values it passed, and reports what happens inside them there.
CONFIGURED_BLOCK = '''\
from torch import nn


class ResidualMLP(nn.Module):
    def __init__(self, dim, activation):
        super().__init__()
        self.activation = activation
        self.fc = nn.Linear(dim, dim)

    def forward(self, x):
        h = self.activation(x)
        return x + self.fc(h)
'''
CONFIGURED_BUILDER = '''\
import torch
from torch import nn

from blocks import ResidualMLP


def build(dim, depth):
    return nn.Sequential(*[ResidualMLP(dim, activation={activation}) for _ in range(depth)])


x = torch.randn(4, 8)
model = build(8, 2)
with torch.no_grad():
    first = model[0]
    expected = x + first.fc(torch.relu(x))
    out = first(x.clone())
assert torch.allclose(out, expected), "the shortcut added relu(x)"
'''


@pytest.mark.parametrize("activation, found", [("torch.relu_", [("AL105", "blocks.py", 11)]),
                                               ("torch.relu", [])])
def test_a_class_in_another_file_runs_with_what_its_builder_gave(tmp_path, torch_python, activation,
                                                                 found):
    _write(tmp_path, {"blocks.py": CONFIGURED_BLOCK,
                      "train.py": CONFIGURED_BUILDER.format(activation=activation)})
    assert _findings(tmp_path) == found
    assert _findings(tmp_path, ("blocks.py",)) == []  # alone, the block's file cannot know
    run = torch_python.run(tmp_path, "train.py")
    assert (run.returncode != 0) == bool(found), run.stderr
    if found:
        assert "the shortcut added relu(x)" in run.stderr


# A backbone in one file returns the list of its stage outputs (each a ReLU output that ReLU
# saved); a loss helper in another file gets the list from the training loop in a third and
# hands it back.  Writing the elements in place, even through a shallow copy of the list,
# writes the backbone's tensors.
FEATURE_BACKBONE = '''\
from torch import nn


class Backbone(nn.Module):
    def __init__(self, width=8, depth=3):
        super().__init__()
        self.stem = nn.Linear(4, width)
        self.stages = nn.ModuleList(
            nn.Sequential(nn.Linear(width, width), nn.ReLU()) for _ in range(depth))

    def forward(self, x):
        x = self.stem(x)
        features = []
        for stage in self.stages:
            x = stage(x)
            features.append(x)
        return features
'''
FEATURE_LOSSES = '''\
def normalize(features):
    {body}


def total(features):
    return sum(f.pow(2).mean() for f in features)
'''
FEATURE_TRAIN = '''\
import torch

from losses import normalize, total
from models import Backbone

model = Backbone()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(2):
    feats = normalize(model(torch.randn(5, 4)))
    loss = total(feats)
    opt.zero_grad()
    loss.backward()
    opt.step()
'''


@pytest.mark.parametrize("body, found", [
    ("for f in features:\n        f.div_(f.norm(dim=1, keepdim=True) + 1e-6)\n"
     "    return features", [("AL101", "losses.py", 3)]),
    ("out = features[:]\n    for f in out:\n        f.div_(f.norm(dim=1, keepdim=True) + 1e-6)\n"
     "    return out", [("AL101", "losses.py", 4)]),
    ("out = list(features)\n    for f in out:\n        f.div_(f.norm(dim=1, keepdim=True) + 1e-6)\n"
     "    return out", [("AL101", "losses.py", 4)]),
    ("return [f / (f.norm(dim=1, keepdim=True) + 1e-6) for f in features]", []),
    ("out = [f.clone() for f in features]\n    for f in out:\n"
     "        f.mul_(0.5)\n    return out", []),
])
def test_a_feature_list_keeps_its_tensors_through_calls_in_other_files(tmp_path, torch_python, body,
                                                                       found):
    _write(tmp_path, {"models.py": FEATURE_BACKBONE,
                      "losses.py": FEATURE_LOSSES.format(body=body),
                      "train.py": FEATURE_TRAIN})
    assert _findings(tmp_path) == found
    run = torch_python.run(tmp_path, "train.py")
    assert (run.returncode != 0) == bool(found), run.stderr
    if found:
        assert "modified by an inplace operation" in run.stderr


# A public augmentation in one file works on a copy of the batch dict; the training step in
# another reads the batch after it.  A shallow copy holds the caller's tensors, so blending
# the images in place writes the weak view the step reads (AL208); a deep copy does not.
AUGMENT = '''\
import copy

import torch


def strong_view(batch, lam=0.7):
    out = copy.{copy}(batch)
    images = out["image"]
    images.mul_(lam).add_(images.flip(0) * (1.0 - lam))
    return out
'''
AUGMENT_STEP = '''\
import torch

from augment import strong_view


def views(batch):
    strong = strong_view(batch)
    return batch["image"], strong["image"]


batch = {"image": torch.arange(4.0).reshape(4, 1), "label": torch.zeros(4)}
weak, strong = views(batch)
assert not torch.equal(weak, strong), "the weak view was blended too"
'''


@pytest.mark.parametrize("copy, found", [("copy", [("AL208", "augment.py", 9)]),
                                         ("deepcopy", [])])
def test_a_shallow_copy_of_a_batch_passed_to_another_file_shares_its_tensors(tmp_path, torch_python,
                                                                             copy,
                                                                            found):
    _write(tmp_path, {"augment.py": AUGMENT.format(copy=copy), "train.py": AUGMENT_STEP})
    assert _findings(tmp_path) == found
    run = torch_python.run(tmp_path, "train.py")
    assert (run.returncode != 0) == bool(found), run.stderr
    if found:
        assert "the weak view was blended too" in run.stderr


# The same across files with a dict: an encoder's layers put in an OrderedDict under computed
# names, a function in the model's file keeps the activations it is asked for by name, and a
# loss helper in another file normalises the dict's tensors in place or into new ones.
FEATURE_ENCODER = '''\
from collections import OrderedDict

from torch import nn


class Encoder(nn.Module):
    def __init__(self, dims=(6, 8, 8)):
        super().__init__()
        layers = OrderedDict()
        for i, (d_in, d_out) in enumerate(zip(dims[:-1], dims[1:])):
            layers[f"fc{i}"] = nn.Linear(d_in, d_out)
            layers[f"relu{i}"] = nn.ReLU()
        self.body = nn.Sequential(layers)


def extract(encoder, x, keep=("relu0", "relu1")):
    feats = {}
    for name, layer in encoder.body.named_children():
        x = layer(x)
        if name in keep:
            feats[name] = x
    return feats
'''
FEATURE_DICT_LOSSES = '''\
def l2_normalize(feats, eps=1e-6):
    for name, v in feats.items():
        {body}
    return feats
'''
FEATURE_DICT_TRAIN = '''\
import torch

from losses import l2_normalize
from models import Encoder, extract

encoder = Encoder()
feats = l2_normalize(extract(encoder, torch.randn(5, 6)))
sum(v.sum() for v in feats.values()).backward()
'''


@pytest.mark.parametrize("body, found", [
    ("v.div_(v.norm(dim=1, keepdim=True) + eps)", [("AL101", "losses.py", 3)]),
    ("feats[name] = v / (v.norm(dim=1, keepdim=True) + eps)", []),
])
def test_a_feature_dict_keeps_its_tensors_through_calls_in_other_files(tmp_path, torch_python, body,
                                                                       found):
    _write(tmp_path, {"models.py": FEATURE_ENCODER,
                      "losses.py": FEATURE_DICT_LOSSES.format(body=body),
                      "train.py": FEATURE_DICT_TRAIN})
    assert _findings(tmp_path) == found
    run = torch_python.run(tmp_path, "train.py")
    assert (run.returncode != 0) == bool(found), run.stderr
    if found:
        assert "modified by an inplace operation" in run.stderr


# Modules built by factories and held in module containers, over three files as model code
# is laid out: factories in layers.py, the model in models.py, training in train.py.  Each
# hazard's twin differs in the one argument that decides it, and stays clean.
NORM_LAYERS = '''\
from torch import nn


def make_norm(kind, dim):
    """A norm layer by name; "identity" keeps the shape without normalising."""
    if kind == "batch":
        return nn.BatchNorm1d(dim)
    if kind == "identity":
        return nn.Identity()
    raise ValueError(kind)


class PreActBlock(nn.Module):
    def __init__(self, dim, norm="batch"):
        super().__init__()
        self.norm = make_norm(norm, dim)
        self.act = nn.ReLU(inplace=True)
        self.fc = nn.Linear(dim, dim)

    def forward(self, x):
        return x + self.fc(self.act(self.norm(x)))
'''
NORM_MODELS = '''\
from torch import nn

from layers import PreActBlock


class ResidualMLP(nn.Module):
    def __init__(self, dim, depth, norm):
        super().__init__()
        self.blocks = nn.ModuleList([PreActBlock(dim, norm=norm) for _ in range(depth)])

    def forward(self, x):
        for block in self.blocks:
            x = block(x)
        return x
'''
NORM_TRAIN = '''\
import torch

from models import ResidualMLP

model = ResidualMLP(8, 2, norm="{norm}")
x = torch.randn(4, 8)
kept = x.clone()
model(x).sum().backward()
assert torch.equal(x, kept), "the first block rectified its input"
'''

HEAD_LAYERS = '''\
from torch import nn


def build_head(task, dim):
    if task == "logits":
        return nn.Linear(dim, 10)
    if task == "score":
        return nn.Sequential({score})
    raise KeyError(task)
'''
HEAD_MODELS = '''\
from torch import nn

from layers import build_head


class MultiHead(nn.Module):
    def __init__(self, dim, tasks):
        super().__init__()
        self.trunk = nn.Linear(dim, dim)
        self.heads = nn.ModuleDict({task: build_head(task, dim) for task in tasks})

    def forward(self, x):
        feats = self.trunk(x)
        outputs = {}
        for task, head in self.heads.items():
            outputs[task] = head(feats)
        return outputs
'''
HEAD_TRAIN = '''\
import torch

from models import MultiHead

model = MultiHead(8, ["logits", "score"])
out = model(torch.randn(4, 8))
loss = out["logits"].logsumexp(-1).mean() + out["score"].mean()
loss.backward()
'''

STAGE_LAYERS = '''\
from torch import nn


class Stage(nn.Sequential):
    """activation -> linear, repeated."""

    @classmethod
    def build(cls, widths):
        layers = []
        for c_in, c_out in zip(widths[:-1], widths[1:]):
            layers.append(nn.{act}(True))
            layers.append(nn.Linear(c_in, c_out))
        return cls(*layers)
'''
STAGE_MODELS = '''\
from torch import nn

from layers import Stage


class DeepSupervised(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Linear(4, 8)
        self.aux = nn.Linear(8, 2)
        self.stage = Stage.build([8, 8, 8])

    def forward(self, x):
        feats = self.stem(x)
        aux = self.aux(feats)
        return self.stage(feats), aux
'''
STAGE_TRAIN = '''\
import torch

from models import DeepSupervised

model = DeepSupervised()
out, aux = model(torch.randn(4, 4))
(out.sum() + aux.sum()).backward()
'''


@pytest.mark.parametrize("files, found, message", [
    # The literal "identity" reaches the factory two calls away: the in-place ReLU then
    # writes the block input the shortcut adds.  A BatchNorm makes a new tensor first.
    ({"layers.py": NORM_LAYERS, "models.py": NORM_MODELS,
      "train.py": NORM_TRAIN.format(norm="identity")}, [("AL105", "layers.py", 17)],
     "the first block rectified its input"),
    ({"layers.py": NORM_LAYERS, "models.py": NORM_MODELS,
      "train.py": NORM_TRAIN.format(norm="batch")}, [], None),
    # The heads of a ModuleDict run in insertion order over the same features: the
    # score head's leading in-place ReLU rewrites what the logits head's Linear saved.
    # After a Linear of its own it writes a new tensor.
    ({"layers.py": HEAD_LAYERS.format(score="nn.ReLU(inplace=True), nn.Linear(dim, 1)"),
      "models.py": HEAD_MODELS, "train.py": HEAD_TRAIN}, [("AL105", "layers.py", 8)],
     "modified by an inplace operation"),
    ({"layers.py": HEAD_LAYERS.format(
        score="nn.Linear(dim, dim), nn.ReLU(inplace=True), nn.Linear(dim, 1)"),
      "models.py": HEAD_MODELS, "train.py": HEAD_TRAIN}, [], None),
    # A classmethod of another file builds the stage; `nn.ReLU(True)` is in place by
    # position, `nn.LeakyReLU(True)` is a slope of True.
    ({"layers.py": STAGE_LAYERS.format(act="ReLU"), "models.py": STAGE_MODELS,
      "train.py": STAGE_TRAIN}, [("AL105", "layers.py", 11)],
     "modified by an inplace operation"),
    ({"layers.py": STAGE_LAYERS.format(act="LeakyReLU"), "models.py": STAGE_MODELS,
      "train.py": STAGE_TRAIN}, [], None),
], ids=["identity-norm", "batch-norm", "dict-heads", "dict-heads-after-linear",
        "classmethod-relu-true", "classmethod-leaky-true"])
def test_modules_built_by_factories_of_another_file(tmp_path, torch_python, files, found, message):
    _write(tmp_path, files)
    assert _findings(tmp_path) == found
    run = torch_python.run(tmp_path, "train.py")
    assert (run.returncode != 0) == bool(found), run.stderr
    if message is not None:
        assert message in run.stderr


# A KL penalty against a reference policy (the RLHF / PPO shape) whose helper keeps the
# policy object itself, not a frozen copy: every optimiser step of `fit` moves the
# "reference" too, and the divergence the script measures is zero.
REFERENCE_HELPER = '''\
import copy

import torch.nn.functional as F


class KLPenalty:
    """KL divergence from a frozen reference policy."""

    def __init__(self, policy, coef=0.1):
        self.reference = {kept}
        self.coef = coef

    def __call__(self, logits, x):
        ref = F.log_softmax(self.reference(x), dim=-1)
        return self.coef * F.kl_div(ref, F.log_softmax(logits, dim=-1), log_target=True)
'''
REFERENCE_TRAIN = '''\
import torch
import torch.nn.functional as F
from torch import nn

from penalty import KLPenalty


def fit(policy, steps=5):
    opt = torch.optim.SGD(policy.parameters(), lr=0.5)
    for _ in range(steps):
        x, y = torch.randn(16, 4), torch.randint(0, 3, (16,))
        loss = F.cross_entropy(policy(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()


torch.manual_seed(0)
policy = nn.Linear(4, 3)
penalty = KLPenalty(policy)
fit(policy)
x = torch.randn(8, 4)
{use}
'''
MEASURED = '''\
with torch.no_grad():
    drift = (penalty.reference(x) - policy(x)).abs().max().item()
if drift == 0.0:
    raise SystemExit("the reference moved with the policy")'''


@pytest.mark.parametrize("kept, use, found", [
    ("policy", MEASURED, [("AL207", "penalty.py", 10)]),
    ("copy.deepcopy(policy)", MEASURED, []),
    # Kept and used, never set against the policy itself: a helper's handle on the model.
    ("policy", "torch.save(penalty.reference.state_dict(), 'reference.pt')", []),
])
def test_an_object_that_keeps_the_trained_module_is_no_frozen_copy(tmp_path, torch_python, kept,
                                                                   use, found):
    _write(tmp_path, {"penalty.py": REFERENCE_HELPER.format(kept=kept),
                      "train.py": REFERENCE_TRAIN.format(use=use)})
    assert _findings(tmp_path) == found
    run = torch_python.run(tmp_path, "train.py")
    assert (run.returncode != 0) == bool(found), run.stderr
