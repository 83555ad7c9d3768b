"""AL208: what a finding proposes, and that it works where the method cannot be renamed."""

import textwrap

import pytest

from aliaslint import check_source

MODULE = textwrap.dedent('''\
    import torch
    from torch import nn


    class Scale(nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
    {body}


    images = torch.rand(4, 3)
    before = images.clone()
    out = Scale()(images)
    changed = not torch.equal(images, before)
    ''')
WRITES = "        return x.mul_(2)"


def _al208(source: str) -> list[str]:
    return [d.message for d in check_source(source, "m.py", {"AL208"})]


def test_a_function_is_told_to_take_a_trailing_underscore():
    (message,) = _al208("import torch\n"
                        "def bump(t: torch.Tensor) -> torch.Tensor:\n"
                        "    return t.add_(1)\n"
                        "b = torch.randn(4)\n"
                        "out = bump(b)\n"
                        "print(b)\n")
    assert message.endswith(" · return a new tensor instead, pass a `.clone()`, or name the "
                            "function `bump_`")


def test_forward_is_told_what_works_instead_of_a_rename():
    (message,) = _al208(MODULE.format(body=WRITES))
    assert message.endswith(
        " · return a new tensor instead (out-of-place ops, or clone the argument at the top of "
        "`forward`), pass a `.clone()`, or say in `forward`'s docstring that it modifies its "
        "argument in place (a method called by its name cannot become `forward_`)")
    assert "name the function" not in message


def test_each_proposal_for_forward_works():
    torch = pytest.importorskip("torch")
    renamed = MODULE.format(body=WRITES).replace("def forward(", "def forward_(")
    runs = {}
    for name, source in (
            ("as reported", MODULE.format(body=WRITES)),
            ("cloned at the top", MODULE.format(body="        x = x.clone()\n" + WRITES)),
            ("out of place", MODULE.format(body="        return x.mul(2)")),
            ("renamed", renamed)):
        namespace: dict = {}
        try:
            exec(compile(source, name, "exec"), namespace)  # noqa: S102  (our own programs)
            runs[name] = namespace["changed"]
        except NotImplementedError as error:  # nn.Module without a `forward`
            runs[name] = type(error).__name__
        assert torch.is_tensor(namespace.get("images"))
    assert runs == {"as reported": True, "cloned at the top": False, "out of place": False,
                    "renamed": "NotImplementedError"}
    for fixed in ("        x = x.clone()\n" + WRITES, "        return x.mul(2)",
                  '        """Doubles `x` in place."""\n' + WRITES):
        assert _al208(MODULE.format(body=fixed)) == []
