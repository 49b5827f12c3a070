"""The key that signs saved conversations: made once, kept where only its user reads it.

The key is 32 random bytes, in hexadecimal, in the file ``conversations.key`` beside the
conversations folder: ``~/.nbagent/conversations.key`` (beside the folder
``NBAGENT_CONVERSATIONS`` names, when set; tests use that), of mode 0600 in a folder of mode
0700, made when the first conversation is saved (:func:`conversation_key`). What it signs is
described in :mod:`nbagent.store.journal`.
"""

from __future__ import annotations

import os
import re
import tempfile
from pathlib import Path

from nbagent.store.folders import FOLDER_ENV, conversations_folder

KEY_FILE = "conversations.key"
"""The file of the key that signs conversations, beside the conversations folder."""


class ConversationKeyError(OSError):
    """The key that signs conversations cannot be kept or read safely."""


def key_path() -> Path:
    """The key file: ``conversations.key`` beside the conversations folder."""
    return conversations_folder().parent / KEY_FILE


def conversation_key(create: bool = False) -> bytes | None:
    """The key that signs conversations, made on first use if asked.

    The folder must belong to the user and be writable by no one else (one of the user's
    that is open to others is made 0700), the file must belong to the user and be readable
    by no one else (0600); a new key is written whole before it appears (linked into place),
    so two kernels making one at once agree on the first.

    Args:
        create: Make the folder and the key when missing.

    Returns:
        The 32 bytes, or None when there is no key and none was to be made.

    Raises:
        ConversationKeyError: The folder or the file is open to others, another user's, or
            not a key; or the key could not be made.
    """
    path = key_path()
    folder = path.parent
    try:
        if create:
            folder.mkdir(parents=True, exist_ok=True, mode=0o700)
            info = folder.stat()
            if info.st_uid == os.getuid() and info.st_mode & 0o077:
                folder.chmod(0o700)
        info = folder.stat()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise ConversationKeyError(f"The conversation key's folder {folder}: {exc}") from exc
    if info.st_uid != os.getuid() or info.st_mode & 0o022:
        raise ConversationKeyError(
            f"The folder of the conversation key, {folder}, belongs to another user or others "
            "can write in it: nbagent keeps no key there (chmod 700 it, or set "
            f"{FOLDER_ENV} to a folder of yours)."
        )
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except FileNotFoundError:
        return _new_key(path) if create else None
    except OSError as exc:
        raise ConversationKeyError(f"The conversation key {path} cannot be read: {exc}") from exc
    with os.fdopen(fd, "rb") as file:
        info = os.fstat(file.fileno())
        text = file.read(200).strip()
    if info.st_uid != os.getuid() or info.st_mode & 0o077:
        raise ConversationKeyError(
            f"The conversation key {path} belongs to another user or others can read it "
            f"(mode {info.st_mode & 0o777:o}): it is not used (chmod 600 it, if it is yours)."
        )
    if not re.fullmatch(rb"[0-9a-f]{64}", text):
        raise ConversationKeyError(
            f"The conversation key {path} is not a key (64 hexadecimal digits): remove it, "
            "and conversations saved until now will be listed as not written by nbagent."
        )
    return bytes.fromhex(text.decode("ascii"))


def _new_key(path: Path) -> bytes | None:
    """Make the key file whole under another name, then link it into place."""
    handle, temp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        os.write(handle, os.urandom(32).hex().encode("ascii") + b"\n")
        os.fsync(handle)
        os.close(handle)
        try:
            os.link(temp, path)
        except FileExistsError:  # another kernel made it first: use theirs
            pass
    except OSError as exc:
        raise ConversationKeyError(f"The conversation key {path} cannot be made: {exc}") from exc
    finally:
        Path(temp).unlink(missing_ok=True)
    return conversation_key()
