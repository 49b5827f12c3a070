"""File stamps (to notice changes made behind the model's back) and atomic writes."""

from __future__ import annotations

import contextlib
import hashlib
import os
import secrets
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class FileStamp:
    """What a file was at one moment: its modification time and a hash of its bytes."""

    mtime_ns: int
    """The modification time, in nanoseconds."""
    sha256: str
    """The SHA-256 of the content, in hex."""

    @classmethod
    def of_bytes(cls, path: Path, data: bytes) -> FileStamp:
        """Stamp a file whose content is already in memory.

        Args:
            path: The file.
            data: Its content.
        """
        return cls(path.stat().st_mtime_ns, hashlib.sha256(data).hexdigest())

    @classmethod
    def of(cls, path: Path) -> FileStamp:
        """Stamp a file, reading it in chunks.

        Args:
            path: The file.
        """
        digest = hashlib.sha256()
        mtime = path.stat().st_mtime_ns
        with path.open("rb") as stream:
            for chunk in iter(lambda: stream.read(1 << 20), b""):
                digest.update(chunk)
        return cls(mtime, digest.hexdigest())

    def still_matches(self, path: Path) -> bool:
        """Tell whether the file still has this content (a new mtime alone is no change).

        Args:
            path: The file.
        """
        try:
            if path.stat().st_mtime_ns == self.mtime_ns:
                return True
            return FileStamp.of(path).sha256 == self.sha256
        except OSError:
            return False


def atomic_write(path: Path, data: bytes) -> None:
    """Replace a file's content at once: write a temporary file beside it, then rename it.

    A reader never sees half a file, and a failed write leaves the old file whole. An
    existing file's permission bits are kept.

    Args:
        path: The file to create or replace.
        data: The new content.

    Raises:
        OSError: The folder cannot be written.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        mode: int | None = path.stat().st_mode & 0o7777
    except FileNotFoundError:
        mode = None
    temp = path.parent / f".{path.name}.{secrets.token_hex(6)}.tmp"
    # 0o666 through the umask: a new file gets the permissions any other new file would.
    handle = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        with os.fdopen(handle, "wb") as stream:
            stream.write(data)
            stream.flush()
            os.fsync(stream.fileno())
        if mode is not None:
            os.chmod(temp, mode)
        os.replace(temp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise
