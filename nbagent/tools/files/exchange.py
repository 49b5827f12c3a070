"""Swapping two paths in one step: Linux ``renameat2(RENAME_EXCHANGE)``, macOS ``renamex_np``.

A plain rename replaces whatever is at the target, so a writer that checks the target first
and renames after can overwrite a save made between the two. Swapping instead keeps the
displaced file: the writer then checks *that* file, and swaps back when it is not the one it
expected. Where the kernel or the filesystem cannot swap (NFS, FUSE, older kernels, other
systems), :func:`exchange` says so and the caller falls back to a rename.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import functools
import os
import sys
from collections.abc import Callable
from pathlib import Path

_AT_FDCWD = -100
_RENAME_EXCHANGE = 2
"""``renameat2`` flag (linux/fs.h)."""
_RENAME_SWAP = 2
"""``renamex_np`` flag (sys/stdio.h on macOS)."""
_UNSUPPORTED = {errno.EINVAL, errno.ENOSYS, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EXDEV}
"""Errors that mean "this system or filesystem cannot swap", not "this swap failed"."""


@functools.cache
def _swapper() -> Callable[[bytes, bytes], int] | None:
    """Return the C function that swaps two paths (0 on success, -1 with errno), or None."""
    library = ctypes.util.find_library("c")
    try:
        libc = ctypes.CDLL(library, use_errno=True)
    except OSError:
        return None
    if sys.platform.startswith("linux") and hasattr(libc, "renameat2"):
        renameat2 = libc.renameat2
        renameat2.argtypes = [
            ctypes.c_int,
            ctypes.c_char_p,
            ctypes.c_int,
            ctypes.c_char_p,
            ctypes.c_uint,
        ]
        renameat2.restype = ctypes.c_int
        return lambda a, b: renameat2(_AT_FDCWD, a, _AT_FDCWD, b, _RENAME_EXCHANGE)
    if sys.platform == "darwin" and hasattr(libc, "renamex_np"):
        renamex_np = libc.renamex_np
        renamex_np.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_uint]
        renamex_np.restype = ctypes.c_int
        return lambda a, b: renamex_np(a, b, _RENAME_SWAP)
    return None


def exchange(first: Path, second: Path) -> bool:
    """Swap two existing paths atomically: each name then points at the other's file.

    Args:
        first: A path.
        second: Another path on the same filesystem.

    Returns:
        True when they were swapped; False when this system or filesystem cannot swap
        (nothing was changed then).

    Raises:
        OSError: The swap failed for another reason, e.g. one of the paths does not exist
            (``FileNotFoundError``).
    """
    swap = _swapper()
    if swap is None:
        return False
    if swap(os.fsencode(first), os.fsencode(second)) == 0:
        return True
    code = ctypes.get_errno()
    if code in _UNSUPPORTED:
        return False
    raise OSError(code, os.strerror(code), str(first), None, str(second))
