"""Real training and example scripts, run for a few steps under ``aliaslint trace``.

    python benchmarks/real_traces.py --sources DIR [--work WORKDIR] [--only NAME,...]
                                     [--python PY] [--json FILE] [--repeat N]
                                     [--no-untraced] [--list]

DIR holds the pinned checkouts, laid out as ``benchmarks/corpora.py fetch`` lays them out
(``DIR/pytorch-examples``, ``DIR/timm``, ``DIR/nanoGPT``, ``DIR/minGPT``)::

    python benchmarks/corpora.py fetch DIR pytorch-examples timm nanoGPT minGPT

Each workload runs a project's own script, unchanged, on the CPU with a small model chosen by
the script's own command-line flags or config overrides, on tiny data the harness writes into
the workload's scratch directory (MNIST files in the IDX format torchvision reads, a folder of
generated images, generated text, slices of the text a project bundles), so nothing is
downloaded.  Each is run untraced (``python SCRIPT ARGS``) and traced (``python -m aliaslint
trace --output-format json -o FILE --fail-on never [OPTIONS] SCRIPT ARGS``), in turn,
``--repeat`` times each (default 1), with the same working directory, environment and arguments;
the wall time and the CPU time of the whole process tree
(``resource.getrusage(RUSAGE_CHILDREN)``, so DataLoader workers and other children count) are
taken for each, and the medians reported (the CPU ratio is the median of the pairs' ratios).  A
program that only imports torch is timed the same way first: the fixed part of every ratio.  The
expected number of findings is 0 everywhere: a finding is triaged like a static one
(benchmarks/real_traces.md).

``--python`` is the interpreter the programs run with (default: this one); it needs torch,
torchvision, timm's dependencies (PyYAML, huggingface_hub, safetensors), requests, six,
tiktoken and matplotlib, and must import this tree's aliaslint (the harness puts this tree first
on ``PYTHONPATH``).  Every run has ``OMP_NUM_THREADS=1``, no CUDA device, ``MPLBACKEND=Agg``,
``WANDB_MODE=disabled`` and ``HF_HUB_OFFLINE=1``.

Prints a Markdown table (workload, pin, steps, untraced and traced CPU seconds, their ratio,
findings) and, with ``--json FILE``, writes every measurement with the findings themselves (file
names made relative to DIR as ``SOURCES/...``).  Exit status: 0 when every workload ran (both
runs exited 0) with no finding, 1 otherwise, 2 for a usage error.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import random
import resource
import shlex
import statistics
import struct
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent


def _corpora():
    spec = importlib.util.spec_from_file_location("corpora", HERE / "corpora.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("corpora", module)
    spec.loader.exec_module(module)
    return module


# --------------------------------------------------------------------------- tiny data


def write_mnist(root: Path, train: int = 256, test: int = 128, seed: int = 0) -> None:
    """``root/MNIST/raw``: the four IDX files torchvision's MNIST reads, with ``train`` and
    ``test`` 28x28 images (a bright stroke per class on noise) and their labels.  torchvision
    checks only that the files exist, so it downloads nothing."""
    raw = root / "MNIST" / "raw"
    raw.mkdir(parents=True, exist_ok=True)
    rng = random.Random(seed)
    for prefix, count in (("train", train), ("t10k", test)):
        labels = bytes(rng.randrange(10) for _ in range(count))
        images = bytearray()
        for label in labels:
            image = bytearray(rng.randrange(40) for _ in range(28 * 28))
            row = 4 + 2 * label
            for column in range(6, 22):
                image[row * 28 + column] = 255
            images += image
        (raw / f"{prefix}-images-idx3-ubyte").write_bytes(
            struct.pack(">IIII", 0x803, count, 28, 28) + bytes(images))
        (raw / f"{prefix}-labels-idx1-ubyte").write_bytes(
            struct.pack(">II", 0x801, count) + labels)


WORDS = ("the of and to in a is that for it as was with be by on not he this are or his from "
         "at which but have an they you were her she there been one all we their has would when "
         "tensor memory view storage stride gradient version saved backward forward").split()


def write_text(path: Path, chars: int = 40_000, seed: int = 0) -> None:
    """Generated prose of about ``chars`` characters: lines of words from a small vocabulary."""
    rng = random.Random(seed)
    lines, size = [], 0
    while size < chars:
        words = [rng.choice(WORDS) for _ in range(rng.randrange(4, 14))]
        line = " ".join(words).capitalize() + rng.choice(".,;!?") + "\n"
        lines.append(line)
        size += len(line)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(lines), encoding="utf-8")


def write_images(folder: Path, count: int, size: int, seed: int, ext: str = "png") -> None:
    """``count`` RGB images of ``size`` x ``size`` pixels (noise over a colour gradient)."""
    from PIL import Image  # only where a workload needs images; the programs need PIL anyway

    rng = random.Random(seed)
    folder.mkdir(parents=True, exist_ok=True)
    for index in range(count):
        base = [rng.randrange(256) for _ in range(3)]
        pixels = bytes(
            (base[c] + x * 3 + y + rng.randrange(32)) % 256
            for y in range(size) for x in range(size) for c in range(3))
        Image.frombytes("RGB", (size, size), pixels).save(folder / f"img{index:03d}.{ext}")


def write_image_folder(root: Path, splits: dict[str, int], classes: int = 2,
                       size: int = 40) -> None:
    """``root/<split>/class<k>/imgNNN.png``: an ImageFolder per split, ``count`` per class."""
    for s, (split, count) in enumerate(splits.items()):
        for k in range(classes):
            write_images(root / split / f"class{k}", count, size, seed=100 * s + k)


def slice_lines(source: Path, target: Path, start: int, stop: int) -> None:
    lines = source.read_text(encoding="utf-8").splitlines(keepends=True)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text("".join(lines[start:stop]), encoding="utf-8")


# --------------------------------------------------------------------------- workloads


@dataclass
class Context:
    source: Path  # the corpus checkout
    work: Path  # this workload's scratch directory (the programs' working directory)
    python: str
    env: dict[str, str]


@dataclass
class Workload:
    name: str
    corpus: str  # a name of benchmarks/corpora.toml, the directory under --sources
    script: str  # relative to the corpus
    args: list[str]  # "{src}" and "{work}" are replaced by the two directories
    steps: str  # what the run does, in the project's terms
    prepare: Callable[[Context], None] | None = None
    pythonpath: tuple[str, ...] = ()  # directories of the corpus the script imports from
    trace_options: tuple[str, ...] = ()
    workers: int = 0  # DataLoader worker processes (or other children) of the run
    env: tuple[tuple[str, str], ...] = ()  # set for both runs
    timeout: float = 900.0

    def argv(self, ctx: Context) -> list[str]:
        return [a.format(src=ctx.source, work=ctx.work) for a in self.args]


def _nanogpt_data(ctx: Context) -> None:
    """nanoGPT's own prepare script on generated text (it downloads only when its input.txt is
    missing): train.bin, val.bin and meta.pkl in data/shakespeare_char of the working directory."""
    data = ctx.work / "data" / "shakespeare_char"
    data.mkdir(parents=True, exist_ok=True)
    write_text(data / "input.txt")
    prepare = data / "prepare.py"
    prepare.write_bytes((ctx.source / "data" / "shakespeare_char" / "prepare.py").read_bytes())
    subprocess.run([ctx.python, str(prepare)], cwd=data, env=ctx.env, check=True,
                   stdout=subprocess.DEVNULL)
    # train.py reads configurator.py and the config file from its working directory.
    for name in ("configurator.py", "config"):
        link = ctx.work / name
        if not link.exists():
            link.symlink_to(ctx.source / name)


NANOGPT_MODEL = ["--device=cpu", "--compile=False", "--dtype=float32", "--n_layer=2",
                 "--n_head=2", "--n_embd=64", "--block_size=64", "--batch_size=8",
                 "--dropout=0.1"]


def _nanogpt_checkpoint(ctx: Context) -> None:
    """A checkpoint for sample.py: nanoGPT's train.py, untraced, 2 iterations."""
    _nanogpt_data(ctx)
    subprocess.run([ctx.python, str(ctx.source / "train.py"), "config/train_shakespeare_char.py",
                    *NANOGPT_MODEL, "--max_iters=2", "--eval_interval=2", "--eval_iters=1",
                    "--always_save_checkpoint=True", "--out_dir=" + str(ctx.work / "out")],
                   cwd=ctx.work, env=ctx.env, check=True, stdout=subprocess.DEVNULL)


def _mingpt_text(ctx: Context) -> None:
    write_text(ctx.work / "input.txt", chars=20_000)


def _mnist(ctx: Context) -> None:
    """The examples read MNIST from ../data (mnist_forward_forward from ./data): both exist."""
    write_mnist(ctx.work / "data")
    (ctx.work / "run").mkdir(exist_ok=True)
    (ctx.work / "run" / "data").mkdir(exist_ok=True)
    if not (ctx.work / "run" / "data" / "MNIST").exists():
        (ctx.work / "run" / "data" / "MNIST").symlink_to(ctx.work / "data" / "MNIST")
    (ctx.work / "run" / "results").mkdir(exist_ok=True)  # vae saves its samples there


def _wikitext_slices(ctx: Context) -> None:
    """train/valid/test.txt cut from the WikiText-2 text word_language_model bundles."""
    bundled = ctx.source / "word_language_model" / "data" / "wikitext-2" / "valid.txt"
    for name, (start, stop) in {"train": (0, 400), "valid": (400, 500),
                                "test": (500, 600)}.items():
        slice_lines(bundled, ctx.work / "wikitext-tiny" / f"{name}.txt", start, stop)


def _bsds(ctx: Context) -> None:
    """dataset/BSDS300/images/{train,test}: present, so data.py downloads nothing."""
    images = ctx.work / "dataset" / "BSDS300" / "images"
    write_images(images / "train", 8, 96, seed=1, ext="jpg")
    write_images(images / "test", 4, 96, seed=2, ext="jpg")


def _sine(ctx: Context) -> None:
    """traindata.pt from the example's own generate_sine_wave.py (a deterministic sine set)."""
    subprocess.run([ctx.python, str(ctx.source / "time_sequence_prediction" /
                                    "generate_sine_wave.py")],
                   cwd=ctx.work, env=ctx.env, check=True, stdout=subprocess.DEVNULL)


def _timm_images(ctx: Context) -> None:
    write_image_folder(ctx.work / "images", {"train": 4, "validation": 2})


def _in(sub: str) -> str:
    return "{work}/" + sub


TIMM_COMMON = ["--data-dir", _in("images"), "--device", "cpu", "--num-classes", "2",
               "--img-size", "32", "-b", "4", "--epochs", "1", "--warmup-epochs", "0",
               "--log-interval", "1", "--output", _in("out"), "--checkpoint-hist", "1"]

WORKLOADS: list[Workload] = [
    Workload("nanogpt-train", "nanoGPT", "train.py",
             ["config/train_shakespeare_char.py", *NANOGPT_MODEL, "--max_iters=3",
              "--eval_interval=3", "--eval_iters=1", "--log_interval=1",
              "--gradient_accumulation_steps=2", "--always_save_checkpoint=True",
              "--out_dir=" + _in("out")],
             "4 optimizer steps (iterations 0-3) x 2 micro-batches, evals at 0 and 3, "
             "checkpoint", _nanogpt_data),
    Workload("nanogpt-sample", "nanoGPT", "sample.py",
             ["--device=cpu", "--compile=False", "--dtype=float32", "--num_samples=2",
              "--max_new_tokens=40", "--out_dir=" + _in("out")],
             "2 samples x 40 tokens from the checkpoint", _nanogpt_checkpoint),
    Workload("mingpt-chargpt", "minGPT", "projects/chargpt/chargpt.py",
             ["--model.model_type=gpt-nano", "--data.block_size=32", "--trainer.batch_size=8",
              "--trainer.max_iters=4", "--trainer.num_workers=2", "--trainer.device=cpu",
              "--system.work_dir=out"],
             "4 iterations (generate 500 chars at iteration 0), 2 DataLoader workers",
             _mingpt_text, pythonpath=(".",), workers=2),
    Workload("mingpt-adder", "minGPT", "projects/adder/adder.py",
             ["--data.ndigit=1", "--trainer.batch_size=16", "--trainer.max_iters=3",
              "--trainer.num_workers=0", "--trainer.device=cpu",
              "--system.work_dir=out"],
             "3 iterations, evaluation of both splits at iteration 0", pythonpath=(".",)),
    Workload("examples-mnist", "pytorch-examples", "mnist/main.py",
             ["--epochs", "1", "--no-accel", "--batch-size", "64", "--test-batch-size", "64",
              "--save-model"],
             "1 epoch: 4 steps (256 images), test on 128", _mnist),
    Workload("examples-vae", "pytorch-examples", "vae/main.py",
             ["--epochs", "1", "--no-accel", "--batch-size", "64"],
             "1 epoch: 4 steps, test, sample", _mnist),
    Workload("examples-siamese", "pytorch-examples", "siamese_network/main.py",
             ["--epochs", "1", "--no-accel", "--batch-size", "32", "--test-batch-size", "64"],
             "1 epoch: 8 steps on image pairs, test", _mnist),
    Workload("examples-mnist-rnn", "pytorch-examples", "mnist_rnn/main.py",
             ["--epochs", "1", "--batch-size", "64", "--test-batch-size", "64"],
             "1 epoch: 4 LSTM steps, test", _mnist),
    Workload("examples-mnist-ff", "pytorch-examples", "mnist_forward_forward/main.py",
             ["--epochs", "3", "--no_accel", "--train_size", "256", "--test_size", "128",
              "--log-interval", "1"],
             "forward-forward: 2 layers x 3 epochs on 256 images", _mnist),
    Workload("examples-mnist-hogwild", "pytorch-examples", "mnist_hogwild/main.py",
             ["--epochs", "1", "--num-processes", "2", "--batch-size", "64",
              "--test-batch-size", "64"],
             "2 training processes (shared parameters) x 4 steps, test",
             _mnist, trace_options=("--follow-children",), workers=2),
    Workload("examples-dcgan", "pytorch-examples", "dcgan/main.py",
             ["--dataset", "fake", "--dry-run", "--workers", "2", "--batchSize", "8",
              "--ngf", "8", "--ndf", "8", "--nz", "16", "--niter", "1", "--outf", _in("out"),
              "--manualSeed", "1"],
             "1 D + G step (GAN), 2 DataLoader workers", workers=2),
    Workload("examples-regression", "pytorch-examples", "regression/main.py", [],
             "until the loss is below 1e-3 (param.data updates)"),
    Workload("examples-word-lm-lstm", "pytorch-examples", "word_language_model/main.py",
             ["--data", _in("wikitext-tiny"), "--model", "LSTM", "--emsize", "32", "--nhid",
              "32", "--nlayers", "2", "--epochs", "1", "--bptt", "16", "--batch_size", "8",
              "--log-interval", "5", "--save", _in("model.pt")],
             "1 epoch on 400 lines of the bundled WikiText-2 (truncated BPTT)", _wikitext_slices),
    Workload("examples-word-lm-transformer", "pytorch-examples", "word_language_model/main.py",
             ["--data", _in("wikitext-tiny"), "--model", "Transformer", "--emsize", "32",
              "--nhid", "32", "--nlayers", "2", "--nhead", "2", "--epochs", "1", "--bptt",
              "16", "--batch_size", "8", "--log-interval", "5", "--use-optimizer", "--lr",
              "0.001",
              "--save", _in("model.pt")],
             "1 epoch, nn.TransformerEncoder, AdamW", _wikitext_slices),
    Workload("examples-super-resolution", "pytorch-examples", "super_resolution/main.py",
             ["--upscale_factor", "3", "--batchSize", "4", "--testBatchSize", "4",
              "--nEpochs", "1", "--threads", "2"],
             "1 epoch: 2 steps, test, checkpoint; 2 DataLoader workers", _bsds, workers=2),
    Workload("examples-time-sequence", "pytorch-examples", "time_sequence_prediction/train.py",
             ["--steps", "1"],
             "1 LBFGS step (up to 20 closure evaluations over 97 sequences x 999), predict",
             _sine,
             # The example torch.save()s a NumPy array and torch.load()s it with torch's
             # default, weights_only since torch 2.6, which refuses it.
             env=(("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", "1"),)),
    Workload("timm-resnet10t", "timm", "train.py",
             [*TIMM_COMMON, "--model", "resnet10t", "--opt", "sgd", "--lr", "0.01", "-j", "1"],
             # `-j 0` fails untraced at this pin: create_loader passes persistent_workers=True
             # to a DataLoader without workers, which raises ValueError.
             "1 epoch: 2 steps + validation, SGD, 1 DataLoader worker", _timm_images,
             workers=1),
    Workload("timm-vit-workers", "timm", "train.py",
             [*TIMM_COMMON, "--model", "test_vit", "--opt", "adamw", "--lr", "1e-3",
              "--clip-grad", "1.0", "--model-ema", "--mixup", "0.2", "--cutmix", "1.0",
              "--smoothing", "0.1", "--reprob", "0.25", "--aa", "rand-m9-mstd0.5", "-j", "2"],
             "1 epoch: 2 steps + validation, AdamW, EMA, mixup/cutmix, random erasing, "
             "RandAugment, 2 DataLoader workers", _timm_images, workers=2),
]


# --------------------------------------------------------------------------- running


@dataclass
class Run:
    returncode: int
    wall: float
    cpu: float
    log: str  # the tail of the combined output


@dataclass
class Result:
    workload: Workload
    pin: str
    pin_status: str
    command: str
    untraced_runs: list[Run] = field(default_factory=list)
    traced_runs: list[Run] = field(default_factory=list)
    findings: list[dict] = field(default_factory=list)
    error: str = ""

    @property
    def untraced(self) -> Run | None:
        return median_run(self.untraced_runs)

    @property
    def traced(self) -> Run | None:
        return median_run(self.traced_runs)

    @property
    def ok(self) -> bool:
        return (not self.error and self.traced is not None and self.traced.returncode == 0
                and (self.untraced is None or self.untraced.returncode == 0))

    def ratio(self) -> float | None:
        """The median over the pairs of runs of traced CPU / untraced CPU."""
        pairs = [t.cpu / u.cpu for u, t in zip(self.untraced_runs, self.traced_runs) if u.cpu > 0]
        return statistics.median(pairs) if pairs else None


def median_run(runs: list[Run]) -> Run | None:
    """Median wall and CPU times of ``runs``; the first failing exit status, else 0."""
    if not runs:
        return None
    code = next((r.returncode for r in runs if r.returncode), 0)
    return Run(code, statistics.median(r.wall for r in runs),
               statistics.median(r.cpu for r in runs), runs[-1].log)


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed(argv: list[str], cwd: Path, env: dict[str, str], timeout: float, log: Path) -> Run:
    before_cpu, before = children_cpu(), time.perf_counter()
    with open(log, "wb") as out:
        try:
            code = subprocess.run(argv, cwd=cwd, env=env, stdout=out, stderr=subprocess.STDOUT,
                                  stdin=subprocess.DEVNULL, timeout=timeout).returncode
        except subprocess.TimeoutExpired:
            code = -9
    wall, cpu = time.perf_counter() - before, children_cpu() - before_cpu
    tail = log.read_bytes()[-3000:].decode("utf-8", "replace")
    return Run(code, wall, cpu, tail)


def environment(python_path: list[Path]) -> dict[str, str]:
    env = dict(os.environ)
    for name in ("ALIASLINT_TRACE_RUN", "PYTHONSTARTUP", "PYTHONHOME"):
        env.pop(name, None)
    parts = [str(p) for p in python_path] + [p for p in env.get("PYTHONPATH", "").split(
        os.pathsep) if p]
    env.update(PYTHONPATH=os.pathsep.join(parts), OMP_NUM_THREADS="1", MKL_NUM_THREADS="1",
               CUDA_VISIBLE_DEVICES="", MPLBACKEND="Agg", WANDB_MODE="disabled",
               HF_HUB_OFFLINE="1", PYTHONHASHSEED="0", NO_COLOR="1", PYTHONUNBUFFERED="1")
    return env


def relative_findings(findings: list[dict], cwd: Path, sources: Path, work: Path) -> list[dict]:
    """The findings with their file names (relative to the program's working directory, or
    absolute) made relative to the sources (``SOURCES/...``) or the scratch directory
    (``WORK/...``), so that the record does not depend on where they were."""
    def fix(value, key=""):
        if isinstance(value, dict):
            return {k: fix(v, k) for k, v in value.items()}
        if isinstance(value, list):
            return [fix(v) for v in value]
        if key == "filename" and isinstance(value, str) and not value.startswith("<"):
            path = Path(os.path.normpath(os.path.join(cwd, value)))
            for base, label in ((sources, "SOURCES"), (work, "WORK")):
                try:
                    return f"{label}/{path.relative_to(base).as_posix()}"
                except ValueError:
                    continue
        return value
    return [fix(f) for f in findings]


def run_workload(workload: Workload, sources: Path, work_root: Path, python: str,
                 pins: dict, untraced: bool, repeat: int = 1) -> Result:
    corpora = _corpora()
    source = sources / workload.corpus
    corpus = pins[workload.corpus]
    pin = corpus.commit or f"{corpus.project} {corpus.version}"
    status, _detail, _found = corpora.check(corpus, source)
    work = work_root / workload.name
    work.mkdir(parents=True, exist_ok=True)
    env = environment([ROOT, *(source / p for p in workload.pythonpath)])
    env.update(workload.env)
    ctx = Context(source.resolve(), work.resolve(), python, env)
    script = str(ctx.source / workload.script)
    program = [script, *workload.argv(ctx)]
    traced_argv = [python, "-m", "aliaslint", "trace", "--output-format", "json", "-o",
                   str(work / "findings.json"), "--fail-on", "never", *workload.trace_options,
                   *program]
    shown = ["aliaslint", "trace", *workload.trace_options, f"{workload.corpus}/{workload.script}",
             *[a.replace(str(ctx.work), "WORK") for a in workload.argv(ctx)]]
    result = Result(workload, pin, status, shlex.join(shown))
    if status == "missing":
        result.error = f"{source} is missing: python benchmarks/corpora.py fetch {sources} " \
                       f"{workload.corpus}"
        return result
    cwd = work / "run" if (work / "run").is_dir() else work
    try:
        if workload.prepare is not None:
            workload.prepare(ctx)
            cwd = work / "run" if (work / "run").is_dir() else work
    except (subprocess.CalledProcessError, OSError) as error:
        result.error = f"prepare failed: {error}"
        return result
    seen: set[str] = set()
    for _ in range(repeat):  # untraced and traced in turn
        if untraced:
            result.untraced_runs.append(timed([python, *program], cwd, env, workload.timeout,
                                              work / "untraced.log"))
        (work / "findings.json").unlink(missing_ok=True)
        result.traced_runs.append(timed(traced_argv, cwd, env, workload.timeout,
                                        work / "traced.log"))
        try:
            findings = json.loads((work / "findings.json").read_text(encoding="utf-8"))
        except (OSError, ValueError) as error:
            result.error = f"no report: {error}"
            return result
        for finding in relative_findings(findings, cwd, sources.resolve(), work.resolve()):
            key = json.dumps([finding.get(k) for k in ("code", "filename", "location")])
            if key not in seen:  # the same finding in every run is listed once
                seen.add(key)
                result.findings.append(finding)
    return result


def startup(work_root: Path, python: str, repeat: int) -> dict:
    """CPU seconds of a program that only imports torch, untraced and traced: the fixed
    part of every ratio (the tracer's start: importing it, installing the wrappers)."""
    script = work_root / "import_torch.py"
    script.write_text("import torch\n", encoding="utf-8")
    env = environment([ROOT])
    plain, traced = [], []
    for _ in range(repeat):
        plain.append(timed([python, str(script)], work_root, env, 300, work_root / "startup.log"))
        traced.append(timed([python, "-m", "aliaslint", "trace", "--fail-on", "never",
                             str(script)], work_root, env, 300, work_root / "startup.log"))
    return {"untraced_cpu_s": round(statistics.median(r.cpu for r in plain), 2),
            "traced_cpu_s": round(statistics.median(r.cpu for r in traced), 2)}


# --------------------------------------------------------------------------- report


def table(results: list[Result]) -> str:
    rows = ["| workload | pin | steps | untraced CPU s | traced CPU s | traced / untraced CPU "
            "| findings |", "|---|---|---|---|---|---|---|"]
    for r in results:
        w = r.workload
        pin = f"{w.corpus} @ `{r.pin[:7]}`" + ("" if r.pin_status == "ok" else f" ({r.pin_status})")
        plain = f"{r.untraced.cpu:.1f}" if r.untraced else "—"
        traced = f"{r.traced.cpu:.1f}" if r.traced else "—"
        ratio = r.ratio()
        failed = []
        if r.untraced and r.untraced.returncode:
            failed.append(f"untraced exit {r.untraced.returncode}")
        if r.traced and r.traced.returncode:
            failed.append(f"traced exit {r.traced.returncode}")
        if r.error:
            failed.append(r.error)
        findings = str(len(r.findings)) if not failed else "; ".join(failed)
        rows.append(f"| {w.name} | {pin} | {w.steps} | {plain} | {traced} | "
                    f"{'—' if ratio is None else f'{ratio:.2f}'} | {findings} |")
    return "\n".join(rows)


def as_json(result: Result) -> dict:
    def run(r: Run | None):
        return None if r is None else {"returncode": r.returncode, "wall_s": round(r.wall, 2),
                                       "cpu_s": round(r.cpu, 2)}
    w = result.workload
    return {"workload": w.name, "project": w.corpus, "pin": result.pin,
            "pin_status": result.pin_status, "command": result.command, "steps": w.steps,
            "workers": w.workers, "untraced": run(result.untraced), "traced": run(result.traced),
            "untraced_cpu_s": [round(r.cpu, 2) for r in result.untraced_runs],
            "traced_cpu_s": [round(r.cpu, 2) for r in result.traced_runs],
            "cpu_ratio": None if result.ratio() is None else round(result.ratio(), 3),
            "findings_count": len(result.findings), "findings": result.findings,
            "error": result.error or None}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sources", type=Path, metavar="DIR",
                        help="the pinned checkouts (corpora.py fetch DIR pytorch-examples timm "
                             "nanoGPT minGPT)")
    parser.add_argument("--work", type=Path, metavar="WORKDIR",
                        help="scratch directory (default: a temporary one, removed after)")
    parser.add_argument("--only", metavar="NAMES", help="comma-separated workload names")
    parser.add_argument("--python", default=sys.executable,
                        help="the interpreter the programs run with (default: this one)")
    parser.add_argument("--json", type=Path, metavar="FILE", help="write the results here")
    parser.add_argument("--no-untraced", action="store_true",
                        help="skip the untraced runs (no CPU ratio)")
    parser.add_argument("--repeat", type=int, default=1, metavar="N",
                        help="run each workload N times each way, in turn; medians")
    parser.add_argument("--list", action="store_true", help="list the workloads and exit")
    args = parser.parse_args(argv)
    selected = WORKLOADS
    if args.only:
        names = [n.strip() for n in args.only.split(",") if n.strip()]
        known = {w.name: w for w in WORKLOADS}
        unknown = [n for n in names if n not in known]
        if unknown:
            parser.error(f"unknown workload {', '.join(unknown)} (known: {', '.join(known)})")
        selected = [known[n] for n in names]
    if args.list:
        for w in selected:
            print(f"{w.name:30} {w.corpus}/{w.script}  {w.steps}")
        return 0
    if args.sources is None:
        parser.error("--sources DIR is needed (python benchmarks/corpora.py fetch DIR "
                      "pytorch-examples timm nanoGPT minGPT)")
    pins = {c.name: c for c in _corpora().load_pins()}
    temporary = None
    if args.work is None:
        temporary = tempfile.TemporaryDirectory(prefix="real-traces-")
        args.work = Path(temporary.name)
    args.work.mkdir(parents=True, exist_ok=True)
    results: list[Result] = []
    base: dict = {}
    try:
        if not args.no_untraced:
            print("start-up (a program that imports torch) ...", file=sys.stderr, flush=True)
            base = startup(args.work.resolve(), args.python, max(1, args.repeat))
            print(f"  untraced {base['untraced_cpu_s']} s CPU, traced {base['traced_cpu_s']} s "
                  "CPU", file=sys.stderr, flush=True)
        for workload in selected:
            print(f"{workload.name} ...", file=sys.stderr, flush=True)
            result = run_workload(workload, args.sources, args.work.resolve(), args.python, pins,
                                  not args.no_untraced, max(1, args.repeat))
            results.append(result)
            for run, label in ((result.untraced, "untraced"), (result.traced, "traced")):
                if run is not None:
                    print(f"  {label}: exit {run.returncode}, {run.wall:.1f} s wall, "
                          f"{run.cpu:.1f} s CPU", file=sys.stderr, flush=True)
                    if run.returncode:
                        print("  " + run.log[-1500:].replace("\n", "\n  "), file=sys.stderr)
            print(f"  findings: {len(result.findings)}" + (f"; {result.error}" if result.error
                                                           else ""), file=sys.stderr, flush=True)
            if args.json:
                record = {"python": sys.version.split()[0], "repeat": max(1, args.repeat),
                          "startup": base, "workloads": [as_json(r) for r in results]}
                args.json.write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
    finally:
        if temporary is not None:
            temporary.cleanup()
    if base:
        print(f"Start-up, a program that only imports torch: {base['untraced_cpu_s']} s CPU "
              f"untraced, {base['traced_cpu_s']} s traced.\n")
    print(table(results))
    return 0 if all(r.ok and not r.findings for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
