"""File stamps (to notice changes made behind the model's back) and atomic writes."""

from __future__ import annotations

import contextlib
import glob
import hashlib
import os
import secrets
from dataclasses import dataclass
from pathlib import Path

from nbagent.tools.files.exchange import exchange
from nbagent.tools.notebook.pids import process_exists

_TEMP_TAG = "nbagent"
"""Marks the temporary files :func:`atomic_write` makes, so that only those are ever removed."""


@dataclass(frozen=True)
class FileStamp:
    """What a file held at one moment: its size and a hash of its bytes.

    Modification times are not part of it: a touch is no change, and a coarse filesystem
    clock (1-2 s on FAT, SMB, HFS+) can leave the time of a changed file as it was.
    """

    size: int
    """The size in bytes."""
    sha256: str
    """The SHA-256 of the content, in hex."""

    @classmethod
    def of_bytes(cls, data: bytes) -> FileStamp:
        """Stamp content that is already in memory.

        Args:
            data: The file's content.
        """
        return cls(len(data), hashlib.sha256(data).hexdigest())

    @classmethod
    def of(cls, path: Path) -> FileStamp:
        """Stamp a file, reading it in chunks.

        Args:
            path: The file.

        Raises:
            OSError: The file cannot be read.
        """
        digest = hashlib.sha256()
        size = 0
        with path.open("rb") as stream:
            for chunk in iter(lambda: stream.read(1 << 20), b""):
                digest.update(chunk)
                size += len(chunk)
        return cls(size, digest.hexdigest())

    def still_matches(self, path: Path) -> bool:
        """Tell whether the file still holds this content (False when it is gone).

        Args:
            path: The file.
        """
        try:
            return path.stat().st_size == self.size and FileStamp.of(path) == self
        except OSError:
            return False


class ChangedOnDisk(Exception):
    """The file was not the expected one when the new content was to replace it.

    The file holds what the other writer saved: either the new content was never in place,
    or (``maybe_kept``) it was, for an instant, and the other writer saved over it; that save
    may have been made from the new content and so include it.
    """

    def __init__(self, path: Path, maybe_kept: bool = False) -> None:
        """Describe the refused write.

        Args:
            path: The file.
            maybe_kept: Another writer saved over the new content while it was in place.
        """
        super().__init__(str(path))
        self.path = path
        """The file."""
        self.maybe_kept = maybe_kept
        """Another writer saved over the new content while it was in place."""


def atomic_write(path: Path, data: bytes, expect: FileStamp | None = None) -> None:
    """Replace a file's content at once: write a temporary file beside it, then rename it.

    A reader never sees half a file, and a failed write leaves the old file whole. An
    existing file's permission bits are kept. Temporary files left by a process that was
    killed mid-write are removed first.

    With ``expect``, the file is replaced only if it still holds that content at the moment
    of the replacement: the new file is swapped in (Linux ``renameat2``, macOS
    ``renamex_np``), the file it displaced is checked, and it is swapped back when another
    writer saved in between. Where the filesystem cannot swap, the file is checked just
    before a plain rename, which leaves a window of microseconds instead of none.

    Args:
        path: The file to create or replace.
        data: The new content.
        expect: The content the file must still hold, or None to replace it whatever it holds.

    Raises:
        ChangedOnDisk: ``expect`` was given and the file held something else (or was gone).
        OSError: The folder cannot be written.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    _remove_orphans(path)
    try:
        mode: int | None = path.stat().st_mode & 0o7777
    except FileNotFoundError:
        mode = None
    temp = path.parent / f".{path.name}.{_TEMP_TAG}-{os.getpid()}-{secrets.token_hex(4)}.tmp"
    # 0o666 through the umask: a new file gets the permissions any other new file would.
    handle = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    swapped = False
    try:
        with os.fdopen(handle, "wb") as stream:
            stream.write(data)
            stream.flush()
            os.fsync(stream.fileno())
        if mode is not None:
            os.chmod(temp, mode)
        if expect is None:
            os.replace(temp, path)
            return
        swapped = _swap_in(temp, path, expect)
        if not swapped:
            os.replace(temp, path)
            return
        if expect.still_matches(temp):
            os.unlink(temp)
            return
        raise ChangedOnDisk(path, maybe_kept=_swap_back(temp, path, FileStamp.of_bytes(data)))
    except BaseException:
        if not swapped:  # once swapped, the temporary name may hold the other writer's file
            with contextlib.suppress(OSError):
                os.unlink(temp)
        raise


def _swap_in(temp: Path, path: Path, expect: FileStamp) -> bool:
    """Swap the new file in; False when the filesystem cannot swap (``path`` is then unchanged).

    The file is checked first, so that a change made before the write began never shows the
    new content to other programs, even for an instant.

    Raises:
        ChangedOnDisk: The file is gone or holds something else.
    """
    if not expect.still_matches(path):
        raise ChangedOnDisk(path)
    try:
        return exchange(temp, path)
    except FileNotFoundError:
        raise ChangedOnDisk(path) from None


def _swap_back(temp: Path, path: Path, ours: FileStamp) -> bool:
    """Give ``path`` back the file that the swap displaced, and remove the new one.

    A save that landed on the new file between the two swaps is newer than the displaced
    file, so it is swapped in again and the displaced file goes instead.

    Returns:
        True when such a save landed on the new file.
    """
    exchange(temp, path)
    saved_over = not ours.still_matches(temp)
    if saved_over:
        exchange(temp, path)
    os.unlink(temp)
    return saved_over


def _remove_orphans(path: Path) -> None:
    """Remove temporary files for ``path`` left by processes that no longer run."""
    pattern = f".{glob.escape(path.name)}.{_TEMP_TAG}-*-*.tmp"
    for orphan in path.parent.glob(pattern):
        pid = orphan.name[len(path.name) + len(_TEMP_TAG) + 3 :].split("-")[0]
        if pid.isdigit() and not process_exists(int(pid)):
            with contextlib.suppress(OSError):
                orphan.unlink()
