"""benchmarks/real_traces.py: its workloads name pinned corpora, its tiny data is what the
programs read, and its record names files relative to the sources.  The runs themselves need
the checkouts (benchmarks/real_traces.md)."""

import struct

from conftest import benchmark_script

real_traces = benchmark_script("real_traces")
corpora = benchmark_script("corpora")


def test_every_workload_runs_a_pinned_corpus():
    pins = {c.name: c for c in corpora.load_pins()}
    names = [w.name for w in real_traces.WORKLOADS]
    assert len(names) == len(set(names)) >= 8
    assert {w.corpus for w in real_traces.WORKLOADS} == {
        "nanoGPT", "minGPT", "pytorch-examples", "timm"}
    for workload in real_traces.WORKLOADS:
        assert pins[workload.corpus].kind == "git" and pins[workload.corpus].commit
    assert any(w.workers > 0 for w in real_traces.WORKLOADS)


def test_list_needs_no_sources(capsys):
    assert real_traces.main(["--list", "--only", "nanogpt-train,timm-vit-workers"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split()[0] for line in lines] == ["nanogpt-train", "timm-vit-workers"]


def test_mnist_files_are_idx_files_of_the_asked_sizes(tmp_path):
    real_traces.write_mnist(tmp_path, train=5, test=3)
    raw = tmp_path / "MNIST" / "raw"
    for prefix, count in (("train", 5), ("t10k", 3)):
        images = (raw / f"{prefix}-images-idx3-ubyte").read_bytes()
        labels = (raw / f"{prefix}-labels-idx1-ubyte").read_bytes()
        assert struct.unpack(">IIII", images[:16]) == (0x803, count, 28, 28)
        assert len(images) == 16 + count * 28 * 28
        assert struct.unpack(">II", labels[:8]) == (0x801, count)
        assert all(label < 10 for label in labels[8:]) and len(labels) == 8 + count


def test_findings_name_files_relative_to_the_sources(tmp_path):
    sources, work = tmp_path / "sources", tmp_path / "work"
    cwd = work / "mnist" / "run"
    finding = {"filename": "../../../sources/timm/timm/data/random_erasing.py",
               "related": [{"filename": str(work / "mnist" / "prog.py"), "message": "here"}],
               "evidence": {"events": [{"filename": "<stdin>", "line": 1}]}}
    [fixed] = real_traces.relative_findings([finding], cwd, sources, work)
    assert fixed["filename"] == "SOURCES/timm/timm/data/random_erasing.py"
    assert fixed["related"] == [{"filename": "WORK/mnist/prog.py", "message": "here"}]
    assert fixed["evidence"]["events"][0]["filename"] == "<stdin>"
