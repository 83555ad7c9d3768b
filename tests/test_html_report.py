"""The HTML report: what it draws, that it escapes everything the program wrote, and what a
real browser makes of it (Debian's Chromium, headless)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from html.parser import HTMLParser
from pathlib import Path

import pytest

from aliaslint import html_report
from aliaslint.cli import main
from aliaslint.diagnostics import Diagnostic, Position, Related
from aliaslint.evidence import Event, Evidence, Process, Storage, View

ROOT = Path(__file__).resolve().parent.parent
DRIVER = ROOT / "tests" / "data" / "run_fixtures.py"
HOSTILE = "<script>alert(1)</script>\x1b[31m\x00\u2028\u202e&\"'"
# Elements HTML closes itself (inline SVG's are closed by `/>` or their end tag).
VOID = {"meta", "br", "img", "input", "link", "hr", "wbr", "col", "area", "base", "source"}


class Node:
    def __init__(self, tag: str, attrs: dict[str, str | None]) -> None:
        self.tag, self.attrs = tag, attrs
        self.children: list[Node] = []
        self.text: list[str] = []

    def walk(self):
        yield self
        for child in self.children:
            yield from child.walk()

    def content(self) -> str:
        return "".join(self.text) + "".join(child.content() for child in self.children)

    def find(self, attribute: str) -> list[Node]:
        return [node for node in self.walk() if attribute in node.attrs]


class Tree(HTMLParser):
    """The document as a tree; every end tag must close the innermost open element."""

    def __init__(self, text: str) -> None:
        super().__init__(convert_charrefs=True)
        self.root = Node("#document", {})
        self.open = [self.root]
        self.feed(text)
        self.close()
        assert [node.tag for node in self.open] == ["#document"], "unclosed elements"

    def handle_starttag(self, tag, attrs):
        node = Node(tag, dict(attrs))
        self.open[-1].children.append(node)
        if tag not in VOID:
            self.open.append(node)

    def handle_startendtag(self, tag, attrs):
        self.open[-1].children.append(Node(tag, dict(attrs)))

    def handle_endtag(self, tag):
        if tag in VOID:
            return
        assert self.open[-1].tag == tag, f"</{tag}> closes <{self.open[-1].tag}>"
        self.open.pop()

    def handle_data(self, data):
        self.open[-1].text.append(data)


def hostile_finding(filename: str) -> Diagnostic:
    evidence = Evidence(
        storages=(Storage(0, 48, 4, "float32", "cpu"),),
        views=(View(0, f"saved by {HOSTILE}", 0, (4, 3), (3, 1), 4),
               View(0, "written", 1, (3,), (3,), 4)),
        events=(Event("saved", filename, 1, 0, HOSTILE), Event("written", filename, 2, 1, "mul_"),
                Event("read", filename, 3, 1, "backward")),
        processes=(Process(1234, 1, 0),))
    return Diagnostic(code="AL101", message=f"in-place {HOSTILE} writes", filename=filename,
                      location=Position(2, 1), end_location=Position(2, 9),
                      related=(Related(HOSTILE, filename, Position(1, 1), Position(1, 4)),),
                      status="runtime", processes=("rank 1 worker 0",), evidence=evidence)


def test_everything_the_program_wrote_is_escaped_and_the_page_is_well_formed():
    filename = f"dir/{HOSTILE}.py"
    static = Diagnostic(code="AL201", message=HOSTILE, filename=filename, location=Position(3, 1),
                        end_location=Position(3, 2), status="refuted")
    findings = [hostile_finding(filename), static]
    page = html_report.render(findings, lambda name, cell=None: [f"x = '{HOSTILE}'"] * 3,
                              {id(static): HOSTILE}, command=f"aliaslint {HOSTILE}")
    assert "<script" not in page.lower() and "alert(1)</" not in page
    for character in "\x1b\x00\u2028\u202e":
        assert character not in page, repr(character)
    # Shown, not dropped: the escape and the control pictures.
    assert "&lt;script&gt;alert(1)&lt;/script&gt;\u241b[31m\u2400\\u2028\\u202e&amp;" in page
    tree = Tree(page).root
    [finding] = tree.find("data-finding")
    assert len(finding.find("data-storage")) == 1 and len(finding.find("data-view")) == 2
    assert [(m.attrs["data-marker"], m.attrs["data-line"]) for m in finding.find("data-marker")
            ] == [("saved", "1"), ("written", "2"), ("read", "3")]
    assert "rank 1 worker 0" in finding.content() and "pid 1234" in finding.content()
    [listed] = tree.find("data-static")
    assert listed.attrs["data-status"] == "refuted"


def test_a_view_covers_the_bytes_its_elements_span():
    assert View(0, "", 2, (2, 3), (3, 1), 4).byte_extent == (8, 32)  # elements 2..7
    assert View(0, "", 5, (4,), (0,), 8).byte_extent == (40, 48)  # expanded: one element
    assert View(0, "", 9, (3,), (-2,), 2).byte_extent == (10, 20)  # elements 5..9
    assert View(0, "", 3, (0, 4), (4, 1), 4).byte_extent == (12, 12)


def test_evidence_round_trips_through_json_and_old_records_still_read():
    finding = hostile_finding("prog.py")
    assert Diagnostic.from_json(json.loads(json.dumps(finding.to_json()))).evidence == \
        finding.evidence
    data = finding.to_json()
    del data["evidence"]
    assert Diagnostic.from_json(data).evidence is None


def test_static_check_renders_its_findings_without_drawings(tmp_path, monkeypatch):
    (tmp_path / "prog.py").write_text(
        "import torch\n\nx = torch.randn(3, requires_grad=True)\ny = x.sigmoid()\n"
        "y.mul_(2)\ny.sum().backward()\n")
    monkeypatch.chdir(tmp_path)
    assert main(["check", "--isolated", "--no-cache", "--output-format", "html", "-o",
                 "report.html", "prog.py"]) == 1
    tree = Tree((tmp_path / "report.html").read_text(encoding="utf-8")).root
    assert not tree.find("data-finding")
    [listed] = tree.find("data-static")
    assert (listed.attrs["data-code"], listed.attrs["data-status"]) == ("AL101", "none")
    assert "y.mul_(2)" in listed.content()


# --- the fixtures' report ------------------------------------------------------------------


def _aliaslint(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])])}
    return subprocess.run([sys.executable, "-m", "aliaslint", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=600)


@pytest.fixture(scope="module")
def fixtures_report(tmp_path_factory):
    """The fixtures traced twice at once: the HTML report, and the JSON one to check it by."""
    pytest.importorskip("torch")
    out = tmp_path_factory.mktemp("report")
    with ThreadPoolExecutor(2) as pool:
        runs = [pool.submit(_aliaslint, "trace", "--output-format", fmt, "-o",
                            str(out / f"report.{fmt}"), str(DRIVER), cwd=ROOT)
                for fmt in ("html", "json")]
        for run in runs:
            assert run.result().returncode == 1, run.result().stderr[-2000:]
    return out / "report.html", json.loads((out / "report.json").read_text(encoding="utf-8"))


# The tests that read the report run on one worker, so the fixtures are traced once.
@pytest.mark.slow
@pytest.mark.xdist_group("fixtures_report")
def test_the_fixtures_report_is_small_self_contained_and_draws_each_finding(fixtures_report):
    path, findings = fixtures_report
    page = path.read_text(encoding="utf-8")
    assert path.stat().st_size < 500_000
    # Nothing to fetch: no script, no stylesheet or font link, no image source, no url().
    assert not re.search(r"<script|<link|<img|<iframe|\bsrc=|\bhref=\"(?!#)|url\(|@import",
                         page, re.IGNORECASE)
    tree = Tree(page).root
    drawn = tree.find("data-finding")
    assert len(drawn) == len(findings) >= 10
    assert all(f["evidence"]["storages"] and f["evidence"]["events"] for f in findings)


def _chromium() -> str:
    for name in ("chromium", "chromium-browser"):
        found = shutil.which(name)
        if found:
            return found
    pytest.fail("Chromium is not installed: `.ci/run` installs Debian's chromium package")


@pytest.mark.slow
@pytest.mark.xdist_group("fixtures_report")
def test_a_browser_renders_every_storage_view_and_version_event(fixtures_report):
    path, findings = fixtures_report
    dom = subprocess.run([_chromium(), "--headless", "--no-sandbox", "--disable-gpu",
                          "--dump-dom", path.as_uri()], capture_output=True, text=True,
                         timeout=120)
    assert dom.returncode == 0, dom.stderr[-2000:]
    drawn = Tree(dom.stdout).root.find("data-finding")
    assert len(drawn) == len(findings)
    for article, finding in zip(drawn, findings):
        evidence = finding["evidence"]
        assert article.attrs["data-code"] == finding["code"]
        storages = [n for n in article.find("data-storage") if n.tag == "g"]
        assert len(storages) == len(evidence["storages"]), finding["message"]
        views = [n for n in article.find("data-view") if n.tag == "g"]
        assert len(views) == len(evidence["views"])
        for node, view in zip(views, evidence["views"]):
            shape = (f"offset={view['offset']} sizes={tuple(view['sizes'])} "
                     f"strides={tuple(view['strides'])}")
            assert shape in node.content(), (shape, node.content())
            assert node.attrs["data-on-storage"] == str(view["storage"])
        markers = [(n.attrs["data-marker"], n.attrs["data-line"], n.content())
                   for n in article.find("data-marker")]
        assert [(kind, line) for kind, line, _ in markers] == [
            (e["kind"], str(e["line"])) for e in evidence["events"]]
        assert all(f"line {line}" in text for _, line, text in markers)
        if finding["code"] == "AL101":  # saved, written, read by backward: the whole story
            kinds = [kind for kind, _, _ in markers]
            assert kinds[0] == "saved" and "written" in kinds and kinds[-1] == "read"
