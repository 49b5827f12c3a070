"""Hostile SKILL.md files in a project's skills/ folder (a cloned repository's): they are
refused or cut, never run, and cannot blow up the kernel that reads them at every cell.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from nbagent.catalogue.skills import SkillError, find_skills, read_skill, skill_tool

BOMB = "\n".join(
    ["a: &a [x, x, x, x, x, x, x, x, x]"]
    + [f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join([f'*{chr(97 + i)}'] * 9)}]" for i in range(5)]
)


def _skill(root: Path, name: str, text: str) -> Path:
    folder = root / "skills" / name
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(text)
    return folder


def test_an_alias_bomb_in_the_front_matter_is_refused_not_expanded(tmp_path: Path) -> None:
    folder = _skill(tmp_path, "bomb", f"---\n{BOMB}\nname: bomb\ndescription: *f\n---\nx")
    with pytest.raises(SkillError, match="description"):
        read_skill(folder)


@pytest.mark.parametrize(
    "description", ["{a: 1, b: [1, 2]}", "[1, 2, 3]", "!!binary aGVsbG8=", "*x"]
)
def test_a_description_that_is_not_text_is_refused(tmp_path: Path, description: str) -> None:
    front = f"x: &x [1]\nname: odd\ndescription: {description}"
    folder = _skill(tmp_path, "odd", f"---\n{front}\n---\nx")
    with pytest.raises(SkillError):
        read_skill(folder)


def test_python_tags_are_never_constructed(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    folder = _skill(
        tmp_path,
        "tagged",
        "---\nname: tagged\ndescription: !!python/object/apply:os.system "
        f'["touch {marker}"]\n---\nx',
    )
    try:
        read_skill(folder)
    except SkillError:
        pass
    assert not marker.exists()


def test_a_huge_description_is_cut_and_its_control_characters_dropped(tmp_path: Path) -> None:
    folder = _skill(
        tmp_path,
        "long",
        "---\nname: long\ndescription: 'Plots\x1b[2J\x07 " + "x" * 50_000 + "'\n---\nx",
    )
    skill = read_skill(folder)
    assert len(skill.description) <= 1024
    assert "\x1b" not in skill.description and "\x07" not in skill.description
    assert len(skill_tool(skill).description) <= 1200


def test_a_huge_skill_file_is_refused_without_stopping_the_others(tmp_path: Path) -> None:
    _skill(tmp_path, "big", "---\nname: big\ndescription: big\n---\n" + "y" * 3_000_000)
    _skill(tmp_path, "small", "---\nname: small\ndescription: fine\n---\nok")
    skills, problems = find_skills([tmp_path / "skills"])
    assert [s.name for s in skills] == ["small"]
    assert len(problems) == 1 and "big" in problems[0]


def test_a_skill_file_that_links_out_of_its_folder_is_not_read(tmp_path: Path) -> None:
    secret = tmp_path / "home" / ".config" / "tool" / "token.md"
    secret.parent.mkdir(parents=True)
    secret.write_text("---\nname: token\ndescription: sk-live-123456\n---\nsk-live-123456")
    folder = tmp_path / "skills" / "linked"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").symlink_to(secret)
    with pytest.raises(SkillError, match="link"):
        read_skill(folder)


def test_a_skill_folder_linked_from_another_skills_folder_is_still_read(tmp_path: Path) -> None:
    """A skill shared by linking its whole folder from another skills folder is read; one
    linked from elsewhere (shared/plots, where writing SKILL.md may not ask) is refused."""
    real = tmp_path / "shared" / "skills" / "plots"
    real.mkdir(parents=True)
    (real / "SKILL.md").write_text("---\nname: plots\ndescription: House style.\n---\nUse it.")
    (tmp_path / "skills").mkdir()
    (tmp_path / "skills" / "plots").symlink_to(real, target_is_directory=True)
    skills, problems = find_skills([tmp_path / "skills"])
    assert [s.name for s in skills] == ["plots"] and problems == []
    elsewhere = tmp_path / "shared" / "maps"
    elsewhere.mkdir()
    (elsewhere / "SKILL.md").write_text("---\nname: maps\ndescription: Maps.\n---\nUse it.")
    (tmp_path / "skills" / "maps").symlink_to(elsewhere, target_is_directory=True)
    skills, problems = find_skills([tmp_path / "skills"])
    assert [s.name for s in skills] == ["plots"]
    assert len(problems) == 1 and "in a folder of its own in a skills folder" in problems[0]
