"""The API's memory tool (``memory_20250818``), implemented by the kernel over a folder per
project.

The model sees the API's typed entry ``{"type": "memory_20250818", "name": "memory"}`` (beta
``context-management-2025-06-27``) and calls it with the commands the SDK types
(``BetaMemoryTool20250818Command``): ``view``, ``create``, ``str_replace``, ``insert``,
``delete``, ``rename``, on paths under ``/memories``. Here each ``/memories/...`` path is a
path in the project's memory folder, ``~/.nbagent/memory/<project>-<hash>/``
(:func:`memory_folder`); a path that leaves it (``..``, a link pointing out, anything not
under ``/memories``) is refused, whatever the permission mode: every spelling of the target
(as written and with its links resolved, :func:`~nbagent.policy.pathrules.spellings`) must
lie inside the folder.

Memory is off unless ``c.NbAgent.memory = True``; ``%agent memory`` lists what it holds.
"""

from __future__ import annotations

import hashlib
import re
import shutil
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from nbagent.core.access import Touch
from nbagent.core.errors import ToolError
from nbagent.core.tool import Tool, ToolResult
from nbagent.policy.decisions import PermissionDecision, allow, deny
from nbagent.policy.pathrules import inside, spellings

MEMORY_TYPE = "memory_20250818"
"""The API's type of the memory tool."""

MEMORY_NAME = "memory"
"""The name the API gives it."""

ROOT = "/memories"
"""The folder the model's paths start with."""

MEMORY_HOME = Path("~/.nbagent/memory")
"""Where every project's memory folder is."""

MAX_VIEW_CHARS = 16_000
"""Characters of a file ``view`` shows at most."""

MAX_FILE_CHARS = 100_000
"""Characters a memory file may hold at most (create, str_replace and insert refuse more)."""

COMMANDS = ("view", "create", "str_replace", "insert", "delete", "rename")
"""The memory tool's commands."""

_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "command": {"type": "string", "enum": list(COMMANDS)},
        "path": {"type": "string"},
        "view_range": {"type": "array", "items": {"type": "integer"}},
        "file_text": {"type": "string"},
        "old_str": {"type": "string"},
        "new_str": {"type": "string"},
        "insert_line": {"type": "integer"},
        "insert_text": {"type": "string"},
        "old_path": {"type": "string"},
        "new_path": {"type": "string"},
    },
    "required": ["command"],
}
"""The commands' fields, checked locally (the API defines the tool's own schema)."""


def memory_folder(project_root: Path, home: Path = MEMORY_HOME) -> Path:
    """The memory folder of a project: its name and a hash of its path, under ``home``.

    Args:
        project_root: The project's root folder.
        home: Where memory folders are.
    """
    digest = hashlib.sha256(str(project_root.resolve()).encode()).hexdigest()[:12]
    name = re.sub(r"[^A-Za-z0-9_.-]+", "-", project_root.name) or "project"
    return home.expanduser() / f"{name}-{digest}"


@dataclass(frozen=True, eq=False, repr=False)
class MemoryTool(Tool):
    """The memory tool: the API's typed entry, run by the kernel."""

    store_folder: Path | None = None
    """The folder its calls work in."""

    def definition(self) -> dict[str, Any]:
        """The API's typed entry (``BetaMemoryTool20250818Param``)."""
        return {"type": MEMORY_TYPE, "name": MEMORY_NAME}


class MemoryStore:
    """The commands of the memory tool over one folder.

    Args:
        folder: The project's memory folder (made on first write).
    """

    def __init__(self, folder: Path) -> None:
        self.folder = folder.expanduser()

    def local(self, path: str | None) -> Path:
        """The file or folder a ``/memories/...`` path names.

        Raises:
            ToolError: The path is not under /memories, or leaves the folder.
        """
        if not isinstance(path, str) or not (path == ROOT or path.startswith(ROOT + "/")):
            raise ToolError(f"Memory paths start with {ROOT}/ (got {path!r}).")
        relative = path[len(ROOT) :].lstrip("/")
        self.folder.mkdir(parents=True, exist_ok=True)
        root = self.folder.resolve()
        try:
            targets = spellings(relative or ".", root)
        except ValueError as exc:
            raise ToolError(f"Invalid memory path {path!r}: {exc}.") from None
        if not all(inside(t, root) for t in targets):
            raise ToolError(f"{path} leaves the memory folder; use paths under {ROOT}/.")
        return Path(targets[-1])

    def run(self, command: str, **fields: Any) -> str:
        """Run one command; what the model is told.

        Raises:
            ToolError: The command failed (a missing file, text not found...), saying why.
        """
        handler = getattr(self, f"_{command}", None)
        if command not in COMMANDS or handler is None:
            raise ToolError(f"Unknown memory command {command!r}; use one of {COMMANDS}.")
        return str(handler(**fields))

    def listing(self) -> list[tuple[str, int]]:
        """Every file of the folder, as ``/memories/...`` paths with their sizes."""
        if not self.folder.is_dir():
            return []
        return [
            (f"{ROOT}/{p.relative_to(self.folder).as_posix()}", p.stat().st_size)
            for p in sorted(self.folder.rglob("*"))
            if p.is_file()
        ]

    def _view(self, path: str, view_range: list[int] | None = None) -> str:
        target = self.local(path)
        if target.is_dir():
            under = path.rstrip("/") + "/"
            entries = [
                f"{size:>8}  {name}" for name, size in self.listing() if name.startswith(under)
            ]
            return f"Files in {path}:\n" + ("\n".join(entries) if entries else "(none yet)")
        if not target.is_file():
            raise ToolError(f"{path} does not exist (view {ROOT} to list the files).")
        lines = target.read_text(encoding="utf-8").splitlines()
        start, end = (view_range[0], view_range[-1]) if view_range else (1, len(lines))
        end = len(lines) if end == -1 else min(end, len(lines))
        shown = "\n".join(f"{n:6}\t{lines[n - 1]}" for n in range(max(1, start), end + 1))
        return shown[:MAX_VIEW_CHARS] or "(empty file)"

    def _create(self, path: str, file_text: str) -> str:
        target = self.local(path)
        if target.is_dir() or path == ROOT:
            raise ToolError(f"{path} is a folder; give a file path.")
        _bounded(path, file_text)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(file_text, encoding="utf-8")
        return f"File created successfully at {path}"

    def _str_replace(self, path: str, old_str: str, new_str: str) -> str:
        target = self._file(path)
        text = target.read_text(encoding="utf-8")
        count = text.count(old_str)
        if count != 1:
            found = "not found" if count == 0 else f"found {count} times; make it unique"
            raise ToolError(f"The text to replace was {found} in {path}.")
        target.write_text(_bounded(path, text.replace(old_str, new_str)), encoding="utf-8")
        return f"The memory file {path} has been edited."

    def _insert(self, path: str, insert_line: int, insert_text: str) -> str:
        target = self._file(path)
        lines = target.read_text(encoding="utf-8").splitlines(keepends=True)
        if not 0 <= insert_line <= len(lines):
            raise ToolError(f"insert_line must be 0 to {len(lines)} for {path}.")
        text = insert_text if insert_text.endswith("\n") else insert_text + "\n"
        lines.insert(insert_line, text)
        target.write_text(_bounded(path, "".join(lines)), encoding="utf-8")
        return f"Text inserted at line {insert_line} of {path}."

    def _delete(self, path: str) -> str:
        target = self.local(path)
        if path.rstrip("/") == ROOT or target == self.folder.resolve():
            raise ToolError(f"{ROOT} itself cannot be deleted; delete the files in it.")
        if target.is_dir():
            shutil.rmtree(target)
        elif target.exists():
            target.unlink()
        else:
            raise ToolError(f"{path} does not exist.")
        return f"Deleted {path}."

    def _rename(self, old_path: str, new_path: str) -> str:
        source, target = self.local(old_path), self.local(new_path)
        if not source.exists():
            raise ToolError(f"{old_path} does not exist.")
        if target.exists():
            raise ToolError(f"{new_path} already exists.")
        target.parent.mkdir(parents=True, exist_ok=True)
        source.rename(target)
        return f"Renamed {old_path} to {new_path}."

    def _file(self, path: str) -> Path:
        target = self.local(path)
        if not target.is_file():
            raise ToolError(f"{path} is not a memory file (view {ROOT} to list them).")
        return target


def _bounded(path: str, text: str) -> str:
    """The text a memory file is to hold, if within :data:`MAX_FILE_CHARS`.

    Raises:
        ToolError: It is longer.
    """
    if len(text) > MAX_FILE_CHARS:
        raise ToolError(
            f"{path} would be too large ({len(text):,} characters): a memory file holds at most "
            f"{MAX_FILE_CHARS:,}. Keep notes short, or split them into files."
        )
    return text


def memory_tool(store: MemoryStore) -> MemoryTool:
    """The memory tool over a store.

    Args:
        store: The project's memory.
    """

    def memory(command: str, **fields: Any) -> ToolResult:
        text = store.run(command, **fields)
        target = fields.get("path") or fields.get("new_path") or ROOT
        return ToolResult(text, metadata={"summary": f"{command} {target}"})

    def paths(tool_input: Mapping[str, Any]) -> list[str]:
        return [
            tool_input[key]
            for key in ("path", "old_path", "new_path")
            if isinstance(tool_input.get(key), str)
        ]

    def touches(tool_input: Mapping[str, Any]) -> list[Touch]:
        """The memory files a call reads or writes, where they really are: deny rules and
        credentials hold for them as for any path."""
        access: Literal["read", "write"] = (
            "read" if tool_input.get("command") == "view" else "write"
        )
        try:
            return [Touch(access, str(store.local(p))) for p in paths(tool_input)]
        except ToolError:
            return []

    def check(tool_input: Mapping[str, Any]) -> PermissionDecision:
        """Refuse a path that leaves the memory folder; allow the rest (memory is on because
        the user turned it on), unless the policy denies it."""
        for path in paths(tool_input):
            try:
                store.local(path)
            except ToolError as exc:
                return deny(str(exc), "memory folder")
        return allow("c.NbAgent.memory", explicit=True)

    return MemoryTool(
        name=MEMORY_NAME,
        description=f"Your memory for this project: notes kept across conversations, under {ROOT}.",
        input_schema=_SCHEMA,
        handler=memory,
        always_load=True,
        check_permission=check,
        touches=touches,
        store_folder=store.folder,
    )
