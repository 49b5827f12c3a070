"""Values derived only from installed files, kept on disk between kernels.

Some start-up work gives the same result in every kernel until a package changes: the Python
code ``fastjsonschema`` generates for the JSON Schema meta-schema, for one. :func:`cached`
keeps such a value in ``$NBAGENT_CACHE_DIR`` (by default ``$XDG_CACHE_HOME/nbagent`` or
``~/.cache/nbagent``), in a file named by a hash of everything the value depends on (the
package versions, the source it is made from, the Python version), written with
:mod:`marshal`. An entry that is missing, unreadable or of the wrong shape is ignored and made
again; a folder that cannot be written only means the value is made each time.
"""

from __future__ import annotations

import hashlib
import marshal
import os
import sys
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TypeVar

CACHE_ENV = "NBAGENT_CACHE_DIR"
"""The environment variable naming the cache folder."""

FORMAT = "1"
"""The cache's own format, part of every key (a new one leaves old entries unread)."""

T = TypeVar("T")


def cache_folder() -> Path:
    """The folder of the cache (not made until something is written)."""
    named = os.environ.get(CACHE_ENV)
    if named:
        return Path(named).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join("~", ".cache")
    return Path(base).expanduser() / "nbagent"


def entry_path(kind: str, key: Sequence[str]) -> Path:
    """Where the value of a kind and key is kept.

    Args:
        kind: What the value is (a folder of the cache).
        key: Everything the value depends on, as texts.

    Returns:
        The file's path.
    """
    digest = hashlib.sha256()
    for part in (FORMAT, sys.implementation.cache_tag or "", sys.version, *key):
        digest.update(part.encode("utf-8", "surrogatepass"))
        digest.update(b"\0")
    return cache_folder() / kind / f"{digest.hexdigest()}.marshal"


def cached(
    kind: str, key: Sequence[str], make: Callable[[], T], valid: Callable[[object], bool]
) -> T:
    """A value from the disk cache, or made (and kept) when it has none that is valid.

    Args:
        kind: What the value is (a folder of the cache).
        key: Everything the value depends on, as texts.
        make: Makes the value: only :mod:`marshal`'s types (code objects, tuples, strings...).
        valid: Whether a value read back has the shape :func:`make` gives.

    Returns:
        The value.
    """
    path = entry_path(kind, key)
    try:
        found = marshal.loads(path.read_bytes())
    except (OSError, EOFError, ValueError, TypeError):
        found = None
    if found is not None and valid(found):
        return found  # type: ignore[no-any-return]
    value = make()
    _write(path, marshal.dumps(value))
    return value


def _write(path: Path, data: bytes) -> None:
    """Write an entry whole or not at all (a kernel reading it meanwhile sees the old file)."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=path.parent, delete=False, suffix=".tmp") as out:
            out.write(data)
        os.replace(out.name, path)
    except OSError:
        return
