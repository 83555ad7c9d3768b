"""libcst's tree made from CPython's (aliaslint/converted.py): node for node what libcst's
parser makes, whitespace aside, and the same findings as a check on the parsed tree."""

from __future__ import annotations

import ast
import dataclasses
import random
import re
from pathlib import Path

import libcst as cst
from libcst._nodes.base import CSTCodegenError
import pytest

from aliaslint import converted as converted_module
from aliaslint import engine
from aliaslint.config import CliOptions
from aliaslint.converted import LAYOUT, NeedsText, is_converted, module_from_ast, nodes_of
from aliaslint.engine import check_paths, check_source
from aliaslint.parsing import parse_module
from aliaslint.rule import Context

ROOT = Path(__file__).resolve().parent.parent
SOURCES = sorted([*ROOT.glob("fixtures/**/*.py"), *ROOT.glob("tests/rules/*.py"),
                  *ROOT.glob("benchmarks/conformance/*.py"),
                  *ROOT.glob("benchmarks/programs/*/*/*.py"), *ROOT.glob("aliaslint/**/*.py")])


def difference(made: object, parsed: object, path: str = "module") -> str | None:
    """Where two trees differ in anything but layout; None if nowhere."""
    if type(made) is not type(parsed) and not (
            isinstance(made, cst.Module) and type(parsed) is cst.Module):
        return f"{path}: {type(made).__name__} for {type(parsed).__name__}"
    if isinstance(made, cst.CSTNode):
        for field in dataclasses.fields(made):
            if field.name in LAYOUT or "whitespace" in field.name:
                continue
            ours, theirs = getattr(made, field.name), getattr(parsed, field.name)
            if isinstance(ours, (list, tuple)) and isinstance(theirs, (list, tuple)):
                if len(ours) != len(theirs):
                    return f"{path}.{field.name}: {len(ours)} items for {len(theirs)}"
                for index, (a, b) in enumerate(zip(ours, theirs)):
                    found = difference(a, b, f"{path}.{field.name}[{index}]")
                    if found:
                        return found
            else:
                found = difference(ours, theirs, f"{path}.{field.name}")
                if found:
                    return found
        return None
    if isinstance(made, cst.MaybeSentinel):
        return None
    return None if made == parsed else f"{path}: {made!r} for {parsed!r}"


def assert_same_tree(source: str) -> None:
    made = module_from_ast(ast.parse(source), source)
    assert made is not None and is_converted(made)
    assert difference(made, parse_module(source)) is None
    assert_each_node_once(made)


def assert_each_node_once(made: cst.Module) -> None:
    """No node object stands in two places (a position is looked up by node)."""
    nodes = nodes_of(made)
    assert len({id(node) for node in nodes}) == len(nodes)


TRICKY = [
    # strings: plain, raw, bytes, triple-quoted, joined, f-strings (with `=`, specs)
    "a = 'x'\nb = r'\\d'\nc = b'\\x00'\nd = '''one\n'' two'''\ne = 'a' 'b' \\\n  'c'\n",
    "f = f'{x!r:>{w}} {y=}' 'tail'\ng = ('joined'\n     f'{z}')\nh = u'u' + rb'\\''\n",
    "s = \"it's\"\nu = '''a'''  '''b'''\n" + 't = """x"y\\""""\n',  # the last one is x"y"
    # numbers
    "n = [0x1F, 1_000, 0o7, 0b1, 1.5e-3, 3j, .5, 1.]\nm = -1\n",
    # subscripts: bare tuples are several indices, parenthesised ones one
    "x[1, 2]\nx[(1, 2)]\nx[(1), 2]\nx[((1), 2)]\nx[()]\nx[1,]\nx[:, None, ::2]\n"
    "x[a:b:c, ...]\nx[(a)]\nx[*idx]\n",
    # statements sharing a line, suites on the header's line, elif and else-if
    "a = 1; b = 2\nif a: b = 3; c = 4\nelif b: pass\nelse:\n    if c: pass\n    elif d:\n"
    "        pass\n",
    "for i in range(3): x += i\nelse: y = 1\nwhile x: break\nwhile y:\n    continue\nelse:\n"
    "    pass\n",
    # definitions
    "@dec\n@dec2(x)\nasync def f(a, /, b: int = 1, *c, d, e=2, **g) -> 'T':\n"
    "    async with m as (p, q), n:\n        await p\n    async for i in j: yield i\n"
    "    yield from k\n    return lambda u, *, v=1: u\n",
    "def g(*, k): pass\ndef h(a, b=1, /, c=2): pass\nclass A(B, *bases, metaclass=M, **kw):\n"
    "    x: int = 1\n    y: str\n    def m(self): return self\n",
    # calls: keywords before and after stars
    "f(a, *b, c=1, **d)\nf(c=1, *b)\nf(**a, **b)\nf(x for x in y)\nprint(*args, sep='')\n",
    # expressions
    "a = b if c else d\nv = not a and b or c and d and e\nw = a < b <= c is not d not in e\n"
    "z = (y := 3) + -x ** ~2 @ m // 3 % 2 << 1 >> 2 & 3 | 4 ^ 5\n",
    "c = {k: v for k, v in d.items() if k if v}\ns = {*a, 1}\nl = [*a, *b]\nt = (*a,)\n"
    "g = (x async for x in y)\nd = {**a, 'b': 1}\nn = [[y for y in x] for x in z]\n",
    # other statements
    "import a.b.c as d, e\nfrom . import x\nfrom ..p.q import (r as s, t)\nfrom m import *\n"
    "global g\ndel a, b[0]\ndel (c)\nassert x, 'msg'\nraise E from e\nraise\n",
    "try:\n    pass\nexcept (A, B) as e:\n    pass\nexcept C:\n    pass\nelse:\n    pass\n"
    "finally:\n    pass\ndef f():\n    nonlocal_ = 1\n    def g():\n        nonlocal nonlocal_\n",
    # non-ASCII before a node: CPython's columns count bytes; identifiers already normal
    "s = 'é' + x[1, 2]\nt = ('ü', f'{y}') ; u = 'ß' 'ö'\nnaïve = größe.ŝ  # …，\n",
    # lines continued by a backslash
    "a = 1; \\\n  b = 2\nif x: \\\n  y = 1\nz = 3\n",
    "def f(x): \\\n    return x\nclass C: \\\n    pass\n",
    # identifiers CPython normalises (NFKC): their statements parsed by libcst
    "ŀ = 1\nprint(l·)\nx.ŉ = 2\ny = ŀ  # µs\nz = 'µ'\n",
    # libcst's own parse for what is not converted
    "match x:\n    case [a, *b]: pass\n    case _: pass\ny = 1\n",
    "try:\n    pass\nexcept* ValueError:\n    pass\n",
    "def f():\n    match x:\n        case 1: pass\n",
]


def test_a_plain_string_is_told_as_the_pattern_tells_it():
    # The shortcut for the usual literal agrees with the pattern on any text made of quotes,
    # prefixes, backslashes, line breaks and letters (one literal, two joined, unclosed).
    hypothesis = pytest.importorskip("hypothesis")
    from hypothesis import strategies

    parts = strategies.sampled_from(["'", '"', "'" * 3, '"' * 3, "\\", "\n", "\r", "a", " ", "f"])

    @hypothesis.settings(max_examples=2000, deadline=None, derandomize=True)
    @hypothesis.given(strategies.lists(parts, max_size=12).map("".join))
    def same(text):
        assert converted_module._one_plain_string(text) == bool(
            converted_module._SIMPLE_STRING.fullmatch(text))

    same()


def test_the_words_beyond_ascii_are_the_patterns_matches():
    # Found from their non-ASCII letters; the pattern they replace, tried at every word, is
    # the reference: the same words for any text (mixed scripts, digits, `_`, combining
    # marks, letters at either end of a word and of the text).
    hypothesis = pytest.importorskip("hypothesis")
    from hypothesis import strategies

    pattern = re.compile(r"\w*[^\W\x00-\x7f]\w*")
    letters = strategies.sampled_from(list("ab_9 .\n(é·ŀµ²٣\u0301ßİ") + ["\U0001d400"])

    @hypothesis.settings(max_examples=500, deadline=None, derandomize=True)
    @hypothesis.given(strategies.lists(letters).map("".join) | strategies.text())
    def same(text):
        assert converted_module._words_beyond_ascii(text) == set(pattern.findall(text))

    same()
    for source in TRICKY:
        assert converted_module._words_beyond_ascii(source) == set(pattern.findall(source))


@pytest.mark.parametrize("source", TRICKY, ids=range(len(TRICKY)))
def test_tricky_code_converts_to_what_libcst_parses(source):
    assert_same_tree(source)
    assert_same_tree(source.replace("\n", "\r\n"))


@pytest.mark.slow
def test_every_source_of_this_repository_converts_to_what_libcst_parses():
    checked = 0
    for path in SOURCES:
        source = path.read_text(encoding="utf-8")
        made = module_from_ast(ast.parse(source), source)
        assert made is not None, path
        assert difference(made, parse_module(source)) is None, path
        assert_each_node_once(made)
        checked += 1
    assert checked > 300


def test_random_statement_orders_convert_to_what_libcst_parses():
    # The fixtures' top-level statements shuffled, some joined on one line with `;`.
    rng = random.Random(7)
    statements = []
    for path in sorted(ROOT.glob("fixtures/**/*.py")):
        source = path.read_text(encoding="utf-8")
        for node in ast.parse(source).body:
            statements.append(ast.get_source_segment(source, node, padded=True))
    for _ in range(20):
        chosen = rng.sample(statements, 12)
        source = ""
        for text in chosen:
            simple = text is not None and "\n" not in text.strip()
            source += text + ("; " if simple and rng.random() < 0.3 else "\n")
        source += "\n"
        try:
            ast.parse(source)
        except SyntaxError:
            continue
        assert_same_tree(source)


@pytest.mark.parametrize("source", [
    "if x:\n\ty = 1\n",  # a tab in the indentation
    "if x:\n        y = 1\n\tz = 2\n",
    "x = 1\n\\\ny = 2\n",  # a line of only a backslash
    # a tab that starts a row between two strings joined in brackets is whitespace there,
    # outside any string's text
    "def f(x):\n    return (\"a\"\n\t\"b\")\n",
    # rows inside a docstring, and the rows that indent code
    "def f(x):\n\t\"\"\"Doc.\n\tmore\n\t\"\"\"\n\treturn x\n",
    "def f():\n    a = [1,\n    \\\n    2]\n",
])
def test_text_libcst_may_read_otherwise_is_left_to_it(source):
    # libcst refuses some of these where CPython reads them, or reads them once repaired:
    # the check reports or repairs them as it does without conversion.
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return
    assert module_from_ast(tree, source) is None
    assert check_source(source, "t.py", converted=True) == check_source(source, "t.py")


def test_a_tab_inside_a_strings_text_is_not_indentation():
    # A docstring or a multi-line literal whose continuation rows start with tabs (text
    # pasted in): no tokenizer reads indentation there, so the tree is made as for any file.
    source = (
        "import torch\n\n\n"
        "class Healer(torch.nn.Module):\n"
        "    def forward(self, ids):\n"
        "        \"\"\"Heal the prompt's tail.\n"
        "\t\tThe bias is keyed by token ids.\n"
        "\t\t\"\"\"\n"
        "        bias = {(1,): 10.0}\n"
        "        template = b\'\'\'\n\tbytes\'\'\'\n"
        "        tail = ids[-1:]\n"
        "        tail.add_(1)\n"
        "        return ids, bias, template\n")
    assert_same_tree(source)
    assert check_source(source, "t.py", converted=True) == check_source(source, "t.py")


def test_a_converted_tree_has_no_positions_or_text():
    source = "import torch\nx = torch.zeros(3)\n"
    made = module_from_ast(ast.parse(source), source)
    context = Context(made, None, source)
    node = made.body[1]
    for ask in (lambda: context.location(node), lambda: context.parent(node),
                lambda: context.exact(node), lambda: made.code):
        with pytest.raises(NeedsText):
            ask()


@pytest.mark.parametrize("source", [
    *TRICKY,
    # a form feed (libcst counts columns after it short of CPython), a statement over lines
    "import torch\n\f\nclass Head(torch.nn.Module):\n    def forward(self, x):\n"
    "        y = (x\n             .t())  # a view\n\f\n        return y.mul_(2)\n",
    (ROOT / "fixtures" / "sharing" / "explore_views.py").read_text(encoding="utf-8"),
])
def test_a_twinned_tree_reads_positions_and_text_from_libcsts_parse(source):
    made = module_from_ast(ast.parse(source), source)
    if made is None:  # left to libcst whole
        return
    parsed = parse_module(source)
    twinned, reference = Context(made, None, source, twinned=True), Context(parsed, None, source)
    ours, theirs = nodes_of(made), nodes_of(parsed)
    assert len(ours) == len(theirs) > 3
    for node, twin in zip(ours, theirs):
        assert twinned.holds(node) and not twinned.holds(twin)
        assert twinned.location(node) == reference.location(twin)
        assert _text(twinned.source, node) == _text(reference.source, twin)
        assert _text(twinned.exact, node) == _text(reference.exact, twin)
    with pytest.raises(NeedsText):  # only a fix asks, in the checked file's own tree
        twinned.parent(ours[-1])
    # Nodes of another tree are in none of its positions.
    with pytest.raises(KeyError):
        twinned.span(theirs[-1])


def _text(read, node: cst.CSTNode) -> str:
    try:
        text: str = read(node)
    except CSTCodegenError as error:  # some nodes print only within their parent
        return repr(error)
    return text


def test_trees_that_differ_in_shape_have_no_twins():
    source = "import torch\nx = torch.zeros(3)\ny = x.t()\n"
    made = module_from_ast(ast.parse(source), source)
    assert converted_module.twins(made, parse_module(source)) is not None
    assert converted_module.twins(made, parse_module(source.replace("x.t()", "x.t"))) is None
    context = Context(made, None, source.replace("x.t()", "x[0]"), twinned=True)
    with pytest.raises(NeedsText):
        context.location(made.body[2])


class _Recording(Context):
    """A context that notes whether a check asked a position or a node's text."""

    asked = False

    @property
    def positions(self):
        self.asked = True
        return Context.positions.fget(self)

    def source(self, node):
        self.asked = True
        return super().source(node)

    def exact(self, node):
        self.asked = True
        return super().exact(node)


@pytest.mark.slow
def test_a_check_reads_text_only_for_what_it_reports():
    # On a converted tree a position or a node's text means parsing the file and analysing
    # it again: a check asks them only for a finding it makes (its message, its related
    # locations), not to decide whether it makes one.
    from aliaslint import registry
    from aliaslint.analysis import analyse

    engine._load_checking(every_rule=True)
    asked: dict[str, str] = {}
    events = 0
    for path in sorted([*ROOT.glob("fixtures/**/*.py"), *ROOT.glob("tests/rules/*.py"),
                        *ROOT.glob("benchmarks/conformance/*.py")]):
        source = path.read_text(encoding="utf-8")
        try:
            module = parse_module(source)
        except cst.ParserSyntaxError:
            continue
        context = _Recording(module, None, source)
        for event in analyse(module, source, None).events:
            for code, brief in registry.briefs().items():
                if type(event).__name__ not in brief.events:
                    continue
                rule = registry.get(code)
                for check in rule.checks if rule is not None else ():
                    if check.event is not type(event):
                        continue
                    context.asked = False
                    events += 1
                    if not list(check.run(event, context)) and context.asked:
                        asked.setdefault(code, str(path.relative_to(ROOT)))
    assert events > 1000
    assert asked == {}


_PROGRAM = {
    "augment.py": (
        "import torch\n\n\n"
        "def add_noise(x: torch.Tensor, std: float) -> torch.Tensor:\n"
        "    \"\"\"Gaussian noise on a batch of images.\"\"\"\n"
        "    return x.add_(torch.randn_like(x) * std)\n"),
    "layers.py": (
        "import torch\nfrom torch import nn\n\n\n"
        "class Block(nn.Module):\n"
        "    def __init__(self, dim: int) -> None:\n"
        "        super().__init__()\n"
        "        self.norm = nn.LayerNorm(dim)\n"
        "        self.proj = nn.Linear(dim, dim)\n\n"
        "    def forward(self, x: torch.Tensor) -> torch.Tensor:\n"
        "        return x + torch.relu(self.proj(self.norm(x)))\n\n\n"
        "class Encoder(nn.Module):\n"
        "    def __init__(self, dim: int, depth: int) -> None:\n"
        "        super().__init__()\n"
        "        self.blocks = nn.ModuleList([Block(dim) for _ in range(depth)])\n\n"
        "    def forward(self, x: torch.Tensor) -> torch.Tensor:\n"
        "        for block in self.blocks:\n"
        "            x = block(x)\n"
        "        return x\n"),
    "train.py": (
        "import torch\n\nfrom augment import add_noise\nfrom layers import Encoder\n\n\n"
        "def denoising_step(model: Encoder, clean: torch.Tensor) -> torch.Tensor:\n"
        "    noisy = add_noise(clean, 0.1)  # writes `clean` too\n"
        "    restored = model(noisy)\n"
        "    return (restored - clean).pow(2).mean()\n\n\n"
        "model = Encoder(16, 2)\n"
        "loss = denoising_step(model, torch.rand(8, 16))\n"
        "loss.backward()\n"),
}


def test_a_recheck_parses_only_the_files_its_findings_point_into(monkeypatch, tmp_path):
    # train.py's finding lies in augment.py (the write inside `add_noise`); layers.py is
    # read by the analysis too, and stays a converted tree.
    for name, text in _PROGRAM.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    log = tmp_path.parent / f"{tmp_path.name}.parses"  # the workers' parses, one per line
    real = parse_module

    def counted(text, *args, **kwargs):
        with log.open("a", encoding="utf-8") as out:
            out.write(next(name for name, source in _PROGRAM.items() if source == text) + "\n")
        return real(text, *args, **kwargs)

    monkeypatch.setattr("aliaslint.parsing.parse_module", counted)
    monkeypatch.setattr("aliaslint.rule.parse_module", counted)  # a twin's parse
    found = _program_findings(tmp_path, True, monkeypatch)
    assert [(path, code) for path, _, code, *_ in found] == [("augment.py", "AL208")]
    assert sorted(log.read_text().split()) == ["augment.py", "train.py"]
    log.unlink()
    assert found == _program_findings(tmp_path, False, monkeypatch)
    assert "layers.py" in log.read_text().split()  # libcst's trees throughout


@pytest.mark.parametrize("path", [
    *sorted([*ROOT.glob("fixtures/**/*.py"), *ROOT.glob("tests/rules/*.py")]),
    *(pytest.param(path, marks=pytest.mark.slow)
      for path in sorted(ROOT.glob("benchmarks/conformance/*.py")))],
    ids=lambda path: str(path.relative_to(ROOT)))
def test_a_check_on_the_converted_tree_finds_what_the_parsed_one_does(path):
    # Low confidence: the findings that rest on assumptions too, each checked again.
    source = path.read_text(encoding="utf-8")
    assert check_source(source, str(path), converted=True, confidence="low") == \
        check_source(source, str(path), confidence="low")


def _program_findings(directory: Path, converted: bool, monkeypatch) -> list:
    monkeypatch.setattr(engine, "_CONVERTED", converted)
    monkeypatch.setattr(engine, "_CONVERTED_FROM", 0)  # small files too
    result = check_paths([str(directory)], CliOptions(isolated=True, confidence="low"),
                         jobs=1, cwd=directory)
    return [(d.filename, d.location, d.code, d.message, d.related, d.fix)
            for d in result.diagnostics]


@pytest.mark.slow
def test_programs_checked_on_converted_trees_find_what_parsed_ones_do(monkeypatch, tmp_path):
    # Findings made in another file of the program, through its functions: the files are
    # read as converted trees first, then parsed where the importer has findings.
    directories = sorted(path for path in ROOT.glob("benchmarks/programs/*/*") if path.is_dir())
    assert len(directories) > 50
    made = tmp_path / "made"  # the workers' conversions, one line each
    real = converted_module.module_from_ast

    def counted(tree, source):
        module = real(tree, source)
        with made.open("a") as log:
            log.write(f"{module is not None}\n")
        return module

    monkeypatch.setattr(converted_module, "module_from_ast", counted)
    found = 0
    for directory in directories:
        converted = _program_findings(directory, True, monkeypatch)
        assert converted == _program_findings(directory, False, monkeypatch), directory
        found += len(converted)
    assert found >= 30 and made.read_text().split().count("True") > 100


@pytest.mark.fuzz
def test_generated_programs_convert_to_what_libcst_parses():
    # Programs made from Python's grammar (hypothesmith): whatever CPython and libcst both
    # read converts to libcst's tree, or is left to libcst whole.
    hypothesis = pytest.importorskip("hypothesis")
    hypothesmith = pytest.importorskip("hypothesmith")

    @hypothesis.settings(max_examples=300, deadline=None, derandomize=True,
                         suppress_health_check=list(hypothesis.HealthCheck))
    @hypothesis.given(hypothesmith.from_grammar() | hypothesmith.from_node())
    def converts(source: str) -> None:
        try:
            tree = ast.parse(source)
            parsed = parse_module(source)
        except (SyntaxError, ValueError, RecursionError, cst.ParserSyntaxError):
            return
        made = module_from_ast(tree, source)
        if made is not None:
            assert difference(made, parsed) is None, source

    converts()
