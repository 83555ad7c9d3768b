"""AL204 write-to-copy-lost."""

from __future__ import annotations

from aliaslint.analysis import LostWrite
from aliaslint.checks.common import writer
from aliaslint.rule import Context, Rule

RULE = Rule(
    "AL204", "write-to-copy-lost",
    "A write goes into the copy made by advanced indexing or a gathering operation and is lost.",
    confirm="copy-write",
)


@RULE.check(LostWrite)
def write_to_copy_lost(event: LostWrite, ctx: Context):
    write = event.write
    copy = write.target.copied_at if write.target is not None else None
    if copy is None:
        return
    yield RULE.finding(
        write.node, write.stmt,
        f"{ctx.code(copy)} is a new tensor (advanced indexing and ops such as "
        "`index_select` or `masked_select` copy), so the in-place "
        f"{writer(write, ctx)} changes only that copy, which is then dropped · write the "
        "source directly: `x[idx] = v`, `x.index_fill_(...)`, `x.masked_fill_(...)`, or "
        "combine the indices into one `x[...] = v`",
        (("the copy is made here", copy),),
    )

