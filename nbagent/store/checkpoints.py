"""Checkpoints on disk: one notebook's, in nbagent's folder of it, beside its conversations.

::

    ~/.nbagent/conversations/<notebook stem>-<hash of its path>/checkpoints.json
    ~/.nbagent/conversations/<notebook stem>-<hash of its path>/checkpoint-files/<sha256>

The log is one JSON file written atomically; the contents of the files the agent changed are
kept once each by their SHA-256 (a file edited in many cells costs one copy per version).
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from nbagent.store.folders import notebook_folder
from nbagent.tools.checkpoints.recording import CheckpointLog

LOG_NAME = "checkpoints.json"
"""The log's file name in the notebook's folder."""

CONTENTS = "checkpoint-files"
"""The folder of the kept file contents, in the notebook's folder."""


class FileCheckpointStore:
    """A :class:`~nbagent.tools.checkpoints.recording.CheckpointStore` in a notebook's folder.

    Args:
        folder: The notebook's folder (:func:`~nbagent.store.folders.notebook_folder`).
    """

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        """The notebook's folder."""

    def load(self) -> dict[str, Any] | None:
        """The log as last saved, or None when there is none.

        Raises:
            ValueError: The file is not a log.
        """
        try:
            text = (self.folder / LOG_NAME).read_text(encoding="utf-8")
        except FileNotFoundError:
            return None
        data = json.loads(text)
        if not isinstance(data, dict):
            raise ValueError(f"{self.folder / LOG_NAME} is not a checkpoint log")
        return data

    def save(self, data: dict[str, Any]) -> None:
        """Write the log atomically."""
        _write(self.folder / LOG_NAME, json.dumps(data, separators=(",", ":")).encode())

    def put(self, data: bytes) -> str:
        """Keep a file's content (once per content); return its digest."""
        digest = hashlib.sha256(data).hexdigest()
        path = self.folder / CONTENTS / digest
        if not path.exists():
            _write(path, data)
        return digest

    def get(self, digest: str) -> bytes:
        """A content kept by :meth:`put`.

        Raises:
            OSError: It is not kept.
        """
        return (self.folder / CONTENTS / digest).read_bytes()

    def keep(self, digests: set[str]) -> None:
        """Remove every kept content but these."""
        folder = self.folder / CONTENTS
        if not folder.is_dir():
            return
        for path in folder.iterdir():
            if path.name not in digests and not path.name.startswith("."):
                path.unlink(missing_ok=True)


def _write(path: Path, data: bytes) -> None:
    """Write a file by renaming a complete temporary file over it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temp = tempfile.mkstemp(dir=path.parent, prefix=".", suffix=".tmp")
    try:
        with os.fdopen(handle, "wb") as stream:
            stream.write(data)
        os.replace(temp, path)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise


def notebook_checkpoints(
    notebook: Callable[[], str], limit: Callable[[], int], root: Path | None = None
) -> CheckpointLog:
    """The checkpoint log of a kernel's notebook, kept in the notebook's folder.

    Args:
        notebook: Gives the notebook's path (asked when the log is first used).
        limit: Gives how many checkpoints are kept at most (``c.NbAgent.checkpoints``).
        root: The folder of all conversations; the default one otherwise.
    """
    return CheckpointLog(lambda: FileCheckpointStore(notebook_folder(notebook(), root)), limit)
