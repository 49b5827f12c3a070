"""Checkpoints on disk: one notebook's, in nbagent's folder of it, beside its conversations.

::

    ~/.nbagent/conversations/<notebook stem>-<hash of its path>/checkpoints.json
    ~/.nbagent/conversations/<notebook stem>-<hash of its path>/checkpoint-files/<sha256>

The log is one JSON file written atomically; the contents of the files the agent changed are
kept once each by their SHA-256 (a file edited in many cells costs one copy per version).

The log names the paths an undo writes and the notes the model is told as the person's, so it
is signed with the key that signs conversations (:mod:`nbagent.store.key`): a log nbagent did
not write (or one changed since) is not read. A content is read only under its own digest, and
only when its bytes still have that digest.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import re
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from nbagent.store.folders import notebook_folder
from nbagent.store.key import ConversationKeyError, conversation_key
from nbagent.tools.checkpoints.recording import CheckpointLog

LOG_NAME = "checkpoints.json"
"""The log's file name in the notebook's folder."""

CONTENTS = "checkpoint-files"
"""The folder of the kept file contents, in the notebook's folder."""

SIGNATURE = "signature"
"""The log's field holding its HMAC (by the conversations' key)."""

_DIGEST = re.compile(r"[0-9a-f]{64}")


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
            ValueError: The file is not a log, or not one nbagent signed.
        """
        try:
            text = (self.folder / LOG_NAME).read_text(encoding="utf-8")
        except FileNotFoundError:
            return None
        data = json.loads(text)
        if not isinstance(data, dict):
            raise ValueError(f"{self.folder / LOG_NAME} is not a checkpoint log")
        signature = data.pop(SIGNATURE, None)
        key = conversation_key()
        if (
            key is None
            or not isinstance(signature, str)
            or not hmac.compare_digest(signature, self._sign(key, data))
        ):
            raise ValueError(f"{self.folder / LOG_NAME} is not signed by nbagent: not read")
        return data

    def save(self, data: dict[str, Any]) -> None:
        """Write the log atomically, signed (unsigned when no key can be kept: then it is
        not read back, and undo reaches only this kernel's checkpoints)."""
        try:
            key = conversation_key(create=True)
        except ConversationKeyError:
            key = None
        signed = {**data, SIGNATURE: self._sign(key, data)} if key is not None else data
        _write(self.folder / LOG_NAME, json.dumps(signed, separators=(",", ":")).encode())

    def _sign(self, key: bytes, data: dict[str, Any]) -> str:
        body = json.dumps(data, sort_keys=True, separators=(",", ":")).encode()
        place = str(self.folder / LOG_NAME).encode("utf-8", "surrogatepass")
        return hmac.new(key, b"nbagent checkpoints\0" + place + b"\0" + body, "sha256").hexdigest()

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
            OSError: It is not kept, or what is kept under its name is not it.
        """
        if not isinstance(digest, str) or not _DIGEST.fullmatch(digest):
            raise FileNotFoundError(f"not a content digest: {digest!r}")
        data = (self.folder / CONTENTS / digest).read_bytes()
        if hashlib.sha256(data).hexdigest() != digest:
            raise OSError(f"the content kept as {digest[:12]} was changed on disk")
        return data

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
