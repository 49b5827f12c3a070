"""Where saved conversations are kept: the folder of all of them, and one notebook's.

A conversation is an append-only JSON Lines file (:mod:`nbagent.store.journal`) under the
user's nbagent folder, never inside the notebook::

    ~/.nbagent/conversations/<notebook stem>-<hash of its path>/<started>-<id>.jsonl

(``NBAGENT_CONVERSATIONS`` names another folder). The notebook is the kernel's (the
``__session__`` that ipykernel sets from ``JPY_SESSION_NAME``, or ``JPY_SESSION_NAME``
itself), else the working folder.
"""

from __future__ import annotations

import functools
import hashlib
import os
import re
from pathlib import Path
from typing import Any

FOLDER_ENV = "NBAGENT_CONVERSATIONS"
"""The environment variable naming the folder of saved conversations."""

DEFAULT_FOLDER = Path("~/.nbagent/conversations")
"""Where conversations are saved unless ``NBAGENT_CONVERSATIONS`` says otherwise."""


def conversations_folder() -> Path:
    """The folder of every notebook's saved conversations."""
    return Path(os.environ.get(FOLDER_ENV) or DEFAULT_FOLDER).expanduser()


def notebook_path(shell: Any = None) -> str:
    """The notebook a kernel runs, as the key of its conversations.

    Args:
        shell: The IPython shell (its ``__session__`` is read), or None.

    Returns:
        The notebook's absolute path (``__session__``, else ``JPY_SESSION_NAME``; a relative
        one is found from the working folder), else the working folder's.
    """
    namespace = getattr(shell, "user_ns", None) or {}
    for candidate in (namespace.get("__session__"), os.environ.get("JPY_SESSION_NAME")):
        if isinstance(candidate, str) and candidate.strip():
            return _resolved(candidate, os.getcwd())
    return _resolved("", os.getcwd())


_RESOLVED: dict[tuple[str, str], str] = {}
"""Paths :func:`_resolved` found, each of a file or folder that exists (asked at every save)."""


def _resolved(candidate: str, cwd: str) -> str:
    """The absolute path of a notebook named ``candidate`` (the working folder when empty),
    found from ``cwd``; kept once it is of something that exists."""
    known = _RESOLVED.get((candidate, cwd))
    if known is not None:
        return known
    if not candidate:
        found = Path(cwd)
    else:
        path = Path(candidate).expanduser()
        options = [path] if path.is_absolute() else [Path(cwd) / path, Path(cwd) / path.name]
        found = next((o for o in options if o.exists()), options[0])
    resolved = found.resolve()
    if resolved.exists():
        _RESOLVED[candidate, cwd] = str(resolved)
    return str(resolved)


def notebook_folder(notebook: str, root: Path | None = None) -> Path:
    """The folder of one notebook's conversations: its stem and a hash of its path.

    Args:
        notebook: The notebook's path (:func:`notebook_path`).
        root: The folder of all conversations; :func:`conversations_folder` by default.
    """
    return (root or conversations_folder()) / _folder_name(notebook)


@functools.lru_cache(maxsize=64)
def _folder_name(notebook: str) -> str:
    """A notebook's folder name: its stem and a hash of its path (asked at every save)."""
    digest = hashlib.sha256(notebook.encode("utf-8", "surrogatepass")).hexdigest()[:16]
    stem = re.sub(r"[^A-Za-z0-9._-]+", "_", Path(notebook).stem)[:40].strip("._") or "notebook"
    return f"{stem}-{digest}"
