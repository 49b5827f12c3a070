"""Skills as deferred tools: SKILL.md folders read, registered deferred, ranked by ToolSearch
from a paraphrase, loaded and called for their instructions and files."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from nbagent.catalogue.registry import ToolRegistry
from nbagent.catalogue.skills import (
    SkillError,
    SkillSet,
    find_skills,
    read_skill,
    skill_folders,
    skill_tool,
    tool_name,
)
from nbagent.catalogue.toolsearch import ToolSearch
from nbagent.testing import FakeAnthropicServer, Reply
from tests.catalogue.rankers.test_init import needs_models
from tests.shells import error_of, run

PLOT_STYLE = (
    "---\nname: plot-style\ndescription: House style for matplotlib figures in reports: "
    "fonts, colours and sizes.\n---\nApply `report.mplstyle` from this folder with "
    "plt.style.use before plotting.\n"
)


def write_skill(folder: Path, text: str, files: dict[str, str] | None = None) -> Path:
    """A skill folder with its SKILL.md and other files."""
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(text)
    for name, content in (files or {}).items():
        (folder / name).write_text(content)
    return folder


def filler(folder: Path, count: int) -> None:
    """``count`` unrelated skills."""
    topics = ["invoices", "emails", "tickets", "calendars", "contracts", "slides", "surveys"]
    for k in range(count):
        topic = topics[k % len(topics)]
        write_skill(
            folder / f"s{k}",
            f"---\nname: {topic}-{k}\ndescription: Templates for {topic} number {k}.\n---\nx\n",
        )


def test_a_skill_is_read_from_its_front_matter(tmp_path: Path) -> None:
    folder = write_skill(tmp_path / "plot", PLOT_STYLE, {"report.mplstyle": "font.size: 9"})
    skill = read_skill(folder)
    assert skill.name == "plot-style" and skill.description.startswith("House style")
    assert skill.instructions.startswith("Apply `report.mplstyle`")
    tool = skill_tool(skill)
    assert tool.name == "skill__plot-style" and tool.should_defer and tool.read_only
    result = tool.call({})
    assert "plt.style.use" in result.content
    assert f"- {folder / 'report.mplstyle'}" in result.content


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("Just text.", "has no front matter"),
        ("---\nname: x\n---\nbody", "needs a 'description'"),
        ("---\nname: [x\n  - y\n---\nbody", "is not valid YAML"),
    ],
)
def test_a_broken_skill_says_what_to_fix(tmp_path: Path, text: str, problem: str) -> None:
    with pytest.raises(SkillError, match=problem):
        read_skill(write_skill(tmp_path / "bad", text))
    skills, problems = find_skills([tmp_path])
    assert skills == [] and problem in problems[0]


def test_the_folders_and_a_later_skill_of_the_same_name_wins(tmp_path: Path) -> None:
    user, project = tmp_path / "user", tmp_path / "project"
    write_skill(user / "plot", PLOT_STYLE)
    write_skill(project / ".claude" / "skills" / "plot", PLOT_STYLE.replace("House", "Our"))
    folders = skill_folders(project, user)
    assert folders == [user, project / ".claude" / "skills"]
    (skill,) = find_skills(folders)[0]
    assert skill.description.startswith("Our style")
    assert tool_name("a b/c") == "skill__a-b-c"


def test_a_skill_set_registers_and_drops_skills(tmp_path: Path) -> None:
    registry = ToolRegistry()
    skills = SkillSet(user_folder=None)
    write_skill(tmp_path / "skills" / "plot", PLOT_STYLE)
    skills.sync(registry, tmp_path)
    assert skills.names == ["skill__plot-style"]
    assert registry.is_deferred(registry.get("skill__plot-style"))
    version = registry.version
    skills.sync(registry, tmp_path)
    assert registry.version == version  # nothing changed, nothing registered again
    (tmp_path / "skills" / "plot" / "SKILL.md").unlink()
    skills.sync(registry, tmp_path)
    assert "skill__plot-style" not in registry and skills.names == []


def test_bm25_finds_a_skill_among_a_hundred_from_its_words(tmp_path: Path) -> None:
    write_skill(tmp_path / "plot", PLOT_STYLE)
    filler(tmp_path, 100)
    skills, _ = find_skills([tmp_path])
    search = ToolSearch(ToolRegistry([skill_tool(s) for s in skills]), ranker="bm25")
    assert search.search("matplotlib fonts for report figures", 1)[0].name == "skill__plot-style"


@needs_models
def test_a_paraphrase_finds_the_skill(tmp_path: Path) -> None:
    """The hybrid ranker finds it from words the description does not use."""
    write_skill(tmp_path / "plot", PLOT_STYLE)
    filler(tmp_path, 100)
    skills, _ = find_skills([tmp_path])
    search = ToolSearch(ToolRegistry([skill_tool(s) for s in skills]), ranker="hybrid")
    assert search.wait(120) and search.ranker.ranking == "hybrid"
    hits = search.search("make my charts look like the company's documents", 3)
    assert "skill__plot-style" in [h.name for h in hits]


def test_in_a_cell_toolsearch_loads_a_project_skill_and_the_model_calls_it(
    ip: Any, fake_api: FakeAnthropicServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = tmp_path / "repo"
    (project / ".git").mkdir(parents=True)
    write_skill(project / "skills" / "plot", PLOT_STYLE, {"report.mplstyle": "font.size: 9"})
    monkeypatch.setitem(ip.user_ns, "__session__", str(project / "analysis.ipynb"))
    fake_api.enqueue(
        Reply.tool_use("ToolSearch", {"query": "select:skill__plot-style"}),
        Reply.tool_use("skill__plot-style", {}),
        Reply.text("Styled."),
    )
    result, shown = run(ip, "%%agent\nPlot in our house style.")
    assert result.success, error_of(result)
    first = fake_api.requests[0].body
    deferred = [t["name"] for t in first["tools"] if t.get("defer_loading")]
    assert "skill__plot-style" in deferred
    answered = fake_api.requests[-1].body["messages"][-1]["content"][0]
    assert "plt.style.use" in str(answered["content"]) and "report.mplstyle" in str(
        answered["content"]
    )
    fake_api.assert_no_errors()


def test_a_linked_skill_file_or_folder_is_refused_saying_what_to_do(tmp_path: Path) -> None:
    """A SKILL.md that is a link, or in a linked folder, could make a file the agent may
    write without asking (docs/) a skill: refused, the other skills kept."""
    docs = write_skill(tmp_path / "docs" / "deploy", PLOT_STYLE.replace("plot-style", "deploy"))
    skills = tmp_path / "skills"
    write_skill(skills / "plot", PLOT_STYLE)
    (skills / "deploy").symlink_to(docs)
    (skills / "notes").mkdir()
    (skills / "notes" / "SKILL.md").symlink_to(docs / "SKILL.md")
    found, problems = find_skills([skills])
    assert [skill.name for skill in found] == ["plot-style"]
    assert len(problems) == 2
    assert all("make it a file in a folder of its own" in p for p in problems)


def test_a_skills_folder_linked_elsewhere_than_a_skills_folder_is_refused(tmp_path: Path) -> None:
    """A project's skills/ linked to docs/ would make docs/*/SKILL.md, which the agent may
    write without asking, skills; linked to another folder named skills, it is read."""
    project = tmp_path / "project"
    write_skill(project / "docs" / "plot", PLOT_STYLE)
    (project / "skills").symlink_to(project / "docs")
    found, problems = find_skills(skill_folders(project, None))
    assert found == [] and "make it a folder, or a link to a folder named skills" in problems[0]
    (project / "skills").unlink()
    (project / "shared" / "skills").mkdir(parents=True)
    write_skill(project / "shared" / "skills" / "plot", PLOT_STYLE)
    (project / "skills").symlink_to(project / "shared" / "skills")
    found, problems = find_skills(skill_folders(project, None))
    assert [skill.name for skill in found] == ["plot-style"] and problems == []
