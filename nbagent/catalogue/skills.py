"""Skills as deferred tools: folders holding a ``SKILL.md`` found by ToolSearch.

A skill is written as Anthropic's Agent Skills are: a folder with a ``SKILL.md`` that opens
with YAML front matter naming it and saying when to use it, then its instructions; other
files beside it (scripts, templates, references) are read when the instructions say so::

    ---
    name: plot-style
    description: House style for matplotlib figures (fonts, colours, sizes) in reports.
    ---
    Use the `report.mplstyle` file of this folder ...

Each skill becomes a deferred tool, ``skill__<name>`` (:func:`skill_tool`), whose description
is the skill's: ToolSearch ranks it with the other deferred tools, so a hundred skills cost
their names until one is found. Calling it (no input) gives the model the instructions and
the paths of the skill's files, which Read opens.

Skills are looked for in ``~/.nbagent/skills`` and in the project's ``skills/`` and
``.claude/skills/`` folders (:func:`skill_folders`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from nbagent.catalogue.registry import ToolRegistry
from nbagent.core.tool import Tool, ToolResult

SKILL_FILE = "SKILL.md"
"""The file that makes a folder a skill."""

PREFIX = "skill__"
"""What a skill's tool name starts with."""

USER_SKILLS = Path("~/.nbagent/skills")
"""The user's own skills, for every project."""

FOLDER_NAME = "skills"
"""The name of a skills folder: where writing a ``SKILL.md`` asks in every mode but bypass."""

PROJECT_SKILLS = (FOLDER_NAME, f".claude/{FOLDER_NAME}")
"""Where a project keeps its skills, from its root."""

MAX_FILES = 200
"""Files of a skill listed at most."""

MAX_SKILL_BYTES = 256 * 1024
"""The largest SKILL.md read (a bigger one is refused: it is read at every cell)."""

MAX_DESCRIPTION = 1024
"""Characters of a skill's description kept at most (Agent Skills' own limit)."""

_SCALARS = (str, int, float)
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")

_FRONT_MATTER = re.compile(r"\A---[ \t]*\r?\n(.*?)\r?\n---[ \t]*(?:\r?\n|\Z)", re.DOTALL)
_UNSAFE = re.compile(r"[^a-zA-Z0-9_-]+")


@dataclass(frozen=True)
class Skill:
    """One skill, as read from its folder."""

    name: str
    """Its name (front matter ``name``, else the folder's)."""
    description: str
    """When to use it (front matter ``description``)."""
    folder: Path
    """Its folder."""
    instructions: str
    """``SKILL.md`` after the front matter."""


class SkillError(ValueError):
    """A SKILL.md that cannot be used; the message says what to fix."""


def read_skill(folder: Path) -> Skill:
    """Read a skill's folder.

    Args:
        folder: A folder holding ``SKILL.md``.

    Raises:
        SkillError: The front matter is missing, is not YAML, or lacks a description.
    """
    path = folder / SKILL_FILE
    # A link could read any file of the person's, or make a file the agent may write without
    # asking (docs/x.md) a skill: the file may not be one, and a linked folder must lead to
    # a skill folder in another skills folder (where writing SKILL.md asks too).
    linked_away = folder.is_symlink() and folder.resolve().parent.name != FOLDER_NAME
    if path.is_symlink() or linked_away or not path.is_file():
        raise SkillError(
            f"{path} is a link, in a folder linked out of a {FOLDER_NAME} folder, or not a "
            f"file: make it a file in a folder of its own in a {FOLDER_NAME} folder."
        )
    with path.open("rb") as file:
        data = file.read(MAX_SKILL_BYTES + 1)
    if len(data) > MAX_SKILL_BYTES:
        raise SkillError(f"{path} is over {MAX_SKILL_BYTES // 1024} KiB: keep SKILL.md short.")
    text = data.decode("utf-8", errors="replace")
    match = _FRONT_MATTER.match(text)
    if match is None:
        raise SkillError(
            f"{path} has no front matter: start it with '---', 'name: ...', 'description: "
            "...', '---'."
        )
    meta = _front_matter(match.group(1), path)
    description, name = meta.get("description") or "", meta.get("name") or folder.name
    if not isinstance(description, _SCALARS) or not isinstance(name, _SCALARS):
        raise SkillError(f"{path}: its front matter's 'name' and 'description' must be text.")
    description = _CONTROL.sub("", str(description)).strip()[:MAX_DESCRIPTION]
    if not description:
        raise SkillError(f"{path}: its front matter needs a 'description' saying when to use it.")
    name = _CONTROL.sub("", str(name)).strip()
    return Skill(name, description, folder, text[match.end() :].strip())


def _front_matter(text: str, path: Path) -> dict[str, object]:
    """The front matter's fields: YAML, else (a description with an unquoted ``: ``, as
    hand-written ones often have) one ``key: value`` a line."""
    import yaml  # only when there is a skill to read

    try:
        meta = yaml.safe_load(text) or {}
    except yaml.YAMLError as exc:
        lines = [line.partition(":") for line in text.splitlines() if line.strip()]
        if not all(
            sep and key.strip() and not key.startswith((" ", "\t")) for key, sep, _ in lines
        ):
            raise SkillError(f"{path}: its front matter is not valid YAML ({exc}).") from None
        return {key.strip(): value.strip() for key, _, value in lines}
    return meta if isinstance(meta, dict) else {}


def tool_name(skill_name: str) -> str:
    """The tool name of a skill: ``skill__`` and its name, in the API's characters."""
    return (PREFIX + _UNSAFE.sub("-", skill_name).strip("-"))[:64]


def skill_tool(skill: Skill) -> Tool:
    """The deferred tool that stands for a skill.

    Args:
        skill: The skill.
    """

    def load() -> ToolResult:
        files = sorted(p for p in skill.folder.rglob("*") if p.is_file() and p.name != SKILL_FILE)
        listed = [f"- {p}" for p in files[:MAX_FILES]]
        if len(files) > MAX_FILES:
            listed.append(f"- … and {len(files) - MAX_FILES} more (Glob lists them)")
        text = (
            f'<skill name="{skill.name}" folder="{skill.folder}">\n{skill.instructions}\n'
            + ("Its files (open them with Read):\n" + "\n".join(listed) if listed else "")
            + "\n</skill>"
        )
        return ToolResult(text, metadata={"summary": f"skill {skill.name}"})

    return Tool(
        name=tool_name(skill.name),
        description=f"Skill: {skill.description} Call it (no input) for its instructions "
        "and files.",
        handler=load,
        read_only=True,
        concurrency_safe=True,
        should_defer=True,
        search_hint=f"skill {skill.name.replace('-', ' ')}",
    )


def skill_folders(project_root: Path | None, user_folder: Path | None = USER_SKILLS) -> list[Path]:
    """The folders skills are looked for in, the user's first.

    Args:
        project_root: The project's root (the notebook's repository), or None.
        user_folder: The user's skills folder, or None.
    """
    folders = [user_folder.expanduser()] if user_folder is not None else []
    if project_root is not None:
        folders += [project_root / sub for sub in PROJECT_SKILLS]
    return [folder for folder in folders if folder.is_dir()]


def find_skills(folders: list[Path]) -> tuple[list[Skill], list[str]]:
    """The skills in some folders (each a sub-folder holding SKILL.md); a later folder's
    skill of the same name wins.

    Args:
        folders: Where to look (:func:`skill_folders`).

    Returns:
        The skills by name order, and what was wrong with the ones left out.
    """
    found: dict[str, Skill] = {}
    problems: list[str] = []
    for folder in folders:
        if folder.is_symlink() and folder.resolve().name != FOLDER_NAME:
            problems.append(
                f"{folder} links to {folder.resolve()}, whose SKILL.md files the agent may "
                f"write without asking: make it a folder, or a link to a folder named "
                f"{FOLDER_NAME}."
            )
            continue
        for path in sorted(folder.glob(f"*/{SKILL_FILE}")):
            try:
                skill = read_skill(path.parent)
            except (SkillError, OSError) as exc:
                problems.append(str(exc))
                continue
            found[tool_name(skill.name)] = skill
    return [found[name] for name in sorted(found)], problems


class SkillSet:
    """Keeps a registry's skill tools those of the skill folders, registering again only what
    changed.

    Args:
        user_folder: The user's skills folder, or None.
    """

    def __init__(self, user_folder: Path | None = USER_SKILLS) -> None:
        self.user_folder = user_folder
        self.names: list[str] = []
        """The tool names of the skills registered."""
        self.problems: list[str] = []
        """What was wrong with the skills left out, at the last sync."""
        self._seen: dict[str, Skill] = {}

    def sync(self, registry: ToolRegistry, project_root: Path | None) -> None:
        """Register the skills found now, drop those gone.

        Args:
            registry: The tools.
            project_root: The project's root, or None.
        """
        skills, self.problems = find_skills(skill_folders(project_root, self.user_folder))
        wanted = {tool_name(s.name): s for s in skills}
        gone = [name for name in self.names if name not in wanted]
        changed = [s for name, s in wanted.items() if self._seen.get(name) != s]
        if gone:
            registry.unregister_many(gone)
        if changed:
            registry.register_many([skill_tool(s) for s in changed], replace=True)
        self._seen, self.names = wanted, list(wanted)
