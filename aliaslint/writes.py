"""Writing a user's file: all of the new content or none of it.

The new content goes to a temporary file in the file's own directory, is flushed to disk
and its size checked, takes the file's mode (and owner and group, where the user may set
them), and is renamed over the file: a reader sees the old content or the new, never a
part, and a failure on the way (a file-size limit, a full disk, a read-only directory)
leaves the file as it was and removes the temporary file.

The file is not written, and it says why, when it is no longer what was read (it changed
on disk during the run), when it is read-only, or when it has other hard links: a rename
would leave those names holding the old content, and writing in place could leave a
half-written file, so such a file is left for the user to fix.
"""

from __future__ import annotations

import os
import stat
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

# Where the temporary file's name starts: hidden, and its origin recognisable.
_PREFIX = ".aliaslint-"


@dataclass(frozen=True)
class NotWritten:
    """Why a file was not written: ``failed`` when writing it failed (an I/O error, a
    read-only file or directory), otherwise it was refused and left as it was."""

    reason: str
    failed: bool = False


def _never() -> None:
    return None


def replace_content(path: Path, expected: bytes, data: bytes,
                    before_replace: Callable[[], None] = _never) -> NotWritten | None:
    """Write ``data`` to ``path`` (a symbolic link's target) if it still holds ``expected``;
    None when written.  ``before_replace`` runs just before the comparison that precedes
    the rename (a test's way in to the race)."""
    real = Path(os.path.realpath(path))
    try:
        status = os.stat(real)
    except OSError as error:
        return NotWritten(f"cannot write the file: {error.strerror or error}", failed=True)
    if not stat.S_ISREG(status.st_mode):
        return NotWritten("it is not a regular file")
    if status.st_nlink > 1:
        return NotWritten(f"it has {status.st_nlink} hard links, which a new file would "
                          "split and writing in place could leave half written")
    # The permission bits, not only access(): the superuser may write anything, but a file
    # or directory without a write bit says it is not to be changed.
    if not status.st_mode & 0o222 or not os.access(real, os.W_OK):
        return NotWritten("the file is read-only", failed=True)
    directory = real.parent
    try:
        folder = os.stat(directory)
    except OSError as error:
        return NotWritten(f"cannot write the file: {error.strerror or error}", failed=True)
    if not folder.st_mode & 0o222 or not os.access(directory, os.W_OK | os.X_OK):
        return NotWritten("its directory is read-only, so no new file can be made there",
                          failed=True)
    temporary: str | None = None
    try:
        handle, temporary = tempfile.mkstemp(prefix=f"{_PREFIX}{real.name}.", dir=directory)
        with os.fdopen(handle, "wb") as out:
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
            if os.fstat(out.fileno()).st_size != len(data):
                return NotWritten("cannot write the file: the new content was cut short",
                                  failed=True)
            # The owner first: changing it clears the set-user-ID and set-group-ID bits.
            _keep_owner(out.fileno(), status)
            os.fchmod(out.fileno(), stat.S_IMODE(status.st_mode))
        before_replace()
        if _changed(real, status, expected):
            return NotWritten("the file changed on disk while it was being fixed")
        os.replace(temporary, real)
        temporary = None
        _sync_directory(directory)
    except OSError as error:
        return NotWritten(f"cannot write the file: {error.strerror or error}", failed=True)
    finally:
        if temporary is not None:
            try:
                os.unlink(temporary)
            except OSError:
                pass
    return None


def _keep_owner(handle: int, status: os.stat_result) -> None:
    """The original's owner and group where this user may give them (the superuser; the
    owner, for a group it belongs to); otherwise the new file keeps this user's."""
    for uid in (status.st_uid, -1):
        try:
            os.fchown(handle, uid, status.st_gid)
            return
        except OSError:
            continue


def _changed(path: Path, status: os.stat_result, expected: bytes) -> bool:
    try:
        now = os.stat(path)
        if (now.st_ino, now.st_dev, now.st_size) != (status.st_ino, status.st_dev,
                                                       status.st_size):
            return True
        return path.read_bytes() != expected
    except OSError:
        return True


def _sync_directory(directory: Path) -> None:
    """Make the rename itself durable (where a directory can be opened and synced)."""
    try:
        handle = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(handle)
    except OSError:
        pass
    finally:
        os.close(handle)
