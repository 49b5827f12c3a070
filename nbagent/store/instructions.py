"""Project instructions: ``AGENTS.md`` and ``CLAUDE.md`` files that go into the system prompt.

Read, in this order (the order never changes, so that the system prompt, and with it the
prompt cache, stays the same while the files do):

1. the user's own file, ``~/.nbagent/AGENTS.md``;
2. from the repository's root (the nearest folder above the notebook holding ``.git``; the
   notebook's folder when there is none) down to the notebook's folder: in each folder
   ``AGENTS.md``, then ``CLAUDE.md``.

Each file is quoted whole (up to :data:`MAX_FILE_CHARS`) in a ``<project-instructions>``
block after the system prompt, under its path. The files are read again only when their
size or modification time changed: an edited file applies from the next cell.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

NAMES = ("AGENTS.md", "CLAUDE.md")
"""The instruction files looked for in each folder, in order."""

USER_FILE = Path("~/.nbagent/AGENTS.md")
"""The user's own instructions, for every project."""

MAX_FILE_CHARS = 40_000
"""Characters of one file quoted at most (the rest is left out, saying so)."""

TAG = "project-instructions"
"""The element the files are quoted in."""


def repository_root(folder: Path) -> Path:
    """The nearest folder at or above ``folder`` holding ``.git``; ``folder`` if none does.

    Args:
        folder: The notebook's folder.
    """
    for candidate in (folder, *folder.parents):
        if (candidate / ".git").exists():
            return candidate
    return folder


def notebook_dir(notebook: str) -> Path:
    """The folder of a notebook (:func:`~nbagent.store.folders.notebook_path`, which is a
    folder itself when no notebook is known)."""
    path = Path(notebook)
    return path if path.is_dir() else path.parent


def instruction_files(folder: Path, user_file: Path | None = USER_FILE) -> list[Path]:
    """The instruction files that apply to a notebook's folder, in prompt order.

    Args:
        folder: The notebook's folder.
        user_file: The user's own file (None for none).

    Returns:
        The files that exist. A project's file that is a link is kept only when it leads to
        another of these files (``CLAUDE.md`` to ``AGENTS.md``): one leading out of the
        repository (to ``~/.aws/credentials``) would quote a secret, and one leading to
        another file of the repository (``docs/rules.md``) would make that file, which the
        agent may write without asking, the person's instructions.
    """
    places = project_places(folder)
    found = [user_file.expanduser()] if user_file is not None else []
    found += [path for path in places if path.resolve() in places]
    return [path for path in found if path.is_file()]


def project_places(folder: Path) -> dict[Path, None]:
    """Where a project's instruction files may be, in prompt order: each name in each folder
    from the repository's root down to the notebook's (links in the folders resolved).

    Args:
        folder: The notebook's folder.

    Returns:
        The paths, as the keys of a dict (quick to look a path up in).
    """
    folder = folder.resolve()
    root = repository_root(folder)
    chain = [folder, *folder.parents]
    return {d / name: None for d in reversed(chain[: chain.index(root) + 1]) for name in NAMES}


@dataclass(frozen=True)
class Instruction:
    """One file, as it was read."""

    path: Path
    """The file."""
    stamp: tuple[int, int]
    """Its modification time (ns) and size when read."""
    text: str
    """Its text (cut to :data:`MAX_FILE_CHARS`)."""


class ProjectInstructions:
    """Keeps the instruction files of a notebook's folder read, reading again only what
    changed.

    Args:
        user_file: The user's own file (None for none).
    """

    def __init__(self, user_file: Path | None = USER_FILE) -> None:
        self.user_file = user_file
        self._read: dict[Path, Instruction] = {}
        self._found: tuple[tuple[Any, ...], dict[Path, None], list[Path]] | None = None
        """The folders' stamps, where the project's files may be, and the files found last."""
        self.files: list[Path] = []
        """The files the last :meth:`system` quoted."""

    def system(self, base: str | None, folder: Path) -> str | None:
        """The system prompt with the instructions that apply to a folder.

        Args:
            base: The system prompt (``c.NbAgent.system_prompt``), or None.
            folder: The notebook's folder.

        Returns:
            ``base``, then the ``<project-instructions>`` block (if a file applies).
        """
        instructions = [self._instruction(path) for path in self._files(folder)]
        present = [i for i in instructions if i is not None and i.text.strip()]
        self.files = [i.path for i in present]
        if not present:
            return base
        quoted = "\n".join(f'<file path="{i.path}">\n{i.text.strip()}\n</file>' for i in present)
        block = (
            f"<{TAG}>\nInstructions for this project, from its AGENTS.md and CLAUDE.md files "
            f"(the later ones are more specific):\n{quoted}\n</{TAG}>"
        )
        return f"{base}\n\n{block}" if base else block

    def _files(self, folder: Path) -> list[Path]:
        """:func:`instruction_files`, looked for again only when a folder it depends on
        changed: a file made, removed, renamed or linked in one changes the folder's
        modification time (each folder up to the root is stat-ed: a ``.git`` made above
        moves the repository's root)."""
        real = folder.resolve()
        places = [real, *real.parents]
        if self.user_file is not None:
            places.append(self.user_file.expanduser().parent)
        stamp = (folder, self.user_file, *map(_modified, places))
        if self._found is None or self._found[0] != stamp:
            self._found = (stamp, project_places(real), instruction_files(real, self.user_file))
        _, allowed, files = self._found
        user = self.user_file.expanduser() if self.user_file is not None else None
        # Where each project file leads is checked again at each prompt: a link swapped within
        # one tick of the file system's clock leaves its folder's stamp as it was.
        return [p for p in files if p == user or p.resolve() in allowed]

    def _instruction(self, path: Path) -> Instruction | None:
        """A file's text, read again only when it changed; None if it cannot be read."""
        try:
            status = path.stat()
        except OSError:
            return None
        stamp = (status.st_mtime_ns, status.st_size)
        known = self._read.get(path)
        if known is not None and known.stamp == stamp:
            return known
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return None
        if len(text) > MAX_FILE_CHARS:
            text = text[:MAX_FILE_CHARS] + f"\n[… cut at {MAX_FILE_CHARS:,} characters]"
        self._read[path] = Instruction(path, stamp, text)
        return self._read[path]


def _modified(folder: Path) -> int | None:
    """A folder's modification time (ns), or None when it cannot be read."""
    try:
        return os.stat(folder).st_mtime_ns
    except OSError:
        return None


def instructions_line(notebook: str, user_file: Path | None = USER_FILE) -> str:
    """The instruction files that apply to a notebook, for ``%agent status``: paths under
    the home folder with ``~``.

    Args:
        notebook: The notebook's path.
        user_file: The user's own file (None for none).
    """
    files = instruction_files(notebook_dir(notebook), user_file)
    if not files:
        return "none (AGENTS.md or CLAUDE.md beside the notebook or up to the repository root)"
    home = os.path.expanduser("~")
    shown = [
        f"~{str(p)[len(home) :]}" if str(p).startswith(home + os.sep) else str(p) for p in files
    ]
    return ", ".join(shown)
