"""Start-up hook of a traced job: imported by ``site`` in every Python process the job starts.

The launcher puts this directory first on ``PYTHONPATH``.  Nothing here may break a process:
an interpreter that cannot import aliaslint (another Python, another environment) runs as
if the hook were not there, and a ``sitecustomize`` of the user's own still runs after it.
"""


def _start() -> None:
    try:
        from aliaslint.runtime import child
    except Exception:  # not our interpreter or environment: leave the process alone
        return
    child.start(__file__)


_start()
del _start
