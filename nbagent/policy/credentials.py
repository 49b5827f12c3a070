"""Credentials as the permission policy guards them: the refusal the model is told, a
credential named by its place under a home folder, and the programs that read a whole folder
holding credentials.

Where credentials are is :func:`~nbagent.policy.pathrules.credential_paths`.
"""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from nbagent.policy.decisions import PermissionDecision, deny
from nbagent.policy.pathrules import HOME_CREDENTIALS, credential_paths, spellings

RECURSIVE_READERS: dict[str, tuple[str, ...] | None] = {
    "grep": ("-r", "-R", "--recursive", "--dereference-recursive", "--directories=recurse"),
    "egrep": ("-r", "-R", "--recursive"),
    "fgrep": ("-r", "-R", "--recursive"),
    "rg": None,
    "ag": None,
    "ack": None,
    "find": None,
    "tar": None,
    "zip": ("-r", "--recurse-paths"),
    "cp": ("-r", "-R", "-a", "--recursive", "--archive"),
    "scp": ("-r",),
    "rsync": None,
}
"""Programs that read a whole folder (with these options; None: always): given a folder that
holds credentials (the home folder, or a working folder that is the home folder), they would
read or list them, so such a line is asked about whatever the rules, unless sandboxed."""


def credential_refusal(target: str) -> PermissionDecision:
    """Return the refusal of a call that touches a credential.

    Args:
        target: The path the call touches.

    Returns:
        A deny naming the allow rule that would unlock that path.
    """
    return deny(
        f"{target} holds credentials (keys, tokens or passwords): no tool may touch it, in any "
        f"mode. Only an allow rule naming that very path unlocks it, e.g. "
        f'c.NbAgent.allow_rules = ["Read({target})"].',
        "credentials",
    )


def names_home_credential(word: str) -> bool:
    """Tell whether a word names a credential by its place under a home folder
    (``.ssh/id_rsa`` after a ``cd ~``, ``/home/other/.aws/credentials``).

    Args:
        word: A word of a command line.
    """
    parts = [p for p in os.path.normpath(word).split("/") if p not in ("", ".")]
    for entry in HOME_CREDENTIALS:
        wanted = entry.split("/")
        for start in range(len(parts) - len(wanted) + 1):
            if all(fnmatch.fnmatchcase(parts[start + i], w) for i, w in enumerate(wanted)):
                return True
    return False


def has_flag(word: str, flags: tuple[str, ...]) -> bool:
    """Tell whether a word gives one of the flags, alone or among combined short options
    (``-rn``).

    Args:
        word: A word of a command line.
        flags: The flags, as :data:`RECURSIVE_READERS` lists them.
    """
    if word in flags or any(f.startswith("--") and word.startswith(f + "=") for f in flags):
        return True
    short = {f[1] for f in flags if len(f) == 2 and f[0] == "-"}
    return word.startswith("-") and not word.startswith("--") and bool(short & set(word[1:]))


def walked_credential_folder(commands: Iterable[Any], root: Path) -> str:
    """Return the folder holding credentials that a recursive reader in a line walks, if any.

    Args:
        commands: The line's commands (:mod:`nbagent.policy.commandline`), each with its
            ``words``.
        root: The working folder relative paths start from.

    Returns:
        The word naming the folder (``.`` when the reader names none), or "".
    """
    for command in commands:
        words = command.words
        flags = RECURSIVE_READERS.get(words[0]) if words else ()
        if words and words[0] in RECURSIVE_READERS:
            if flags is not None and not any(has_flag(w, flags) for w in words[1:]):
                continue
            operands = [w for w in words[1:] if not w.startswith("-")]
            existing = [w for w in operands if os.path.exists(spellings(w, root)[-1])]
            for word in existing or ["."]:
                if holds_credentials(spellings(word, root), root):
                    return word
    return ""


def holds_credentials(names: Sequence[str], root: Path) -> bool:
    """Tell whether a folder holds a credential place (or is one).

    Args:
        names: The folder's spellings (:func:`~nbagent.policy.pathrules.spellings`).
        root: The working folder.
    """
    for pattern in credential_paths(root):
        for fixed in pattern.fixed:
            if any(fixed == n or fixed.startswith(n.rstrip("/") + "/") for n in names):
                return True
    return False
