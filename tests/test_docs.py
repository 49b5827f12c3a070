"""The README and the documentation say what the code does: the README is short, its links
stay in the repository, its commands are the ones CI runs, and the examples of the docs run.
(The site itself is built, warnings as errors, by .ci/run.)"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from nbagent.mcp.config_file import parse_config

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()
CI = (ROOT / ".ci" / "run").read_text()
DOCS = ROOT / "docs"


def fenced(text: str, language: str) -> list[str]:
    """The bodies of the fenced blocks of one language in a Markdown text."""
    return re.findall(rf"^```{language}\n(.*?)^```", text, flags=re.S | re.M)


def test_the_readme_is_short() -> None:
    assert len(README.splitlines()) <= 200


@pytest.mark.parametrize(
    "target", sorted(set(re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", README))), ids=str
)
def test_every_readme_link_is_a_file_of_the_repository(target: str) -> None:
    assert "://" not in target, "the README points only at files of the repository"
    assert (ROOT / target).exists()


def test_the_readme_test_command_is_the_one_ci_runs() -> None:
    assert "pytest" in [block.strip() for block in fenced(README, "bash")]
    assert re.search(r"^pytest \|\| status=\$\?$", CI, flags=re.M)


def test_the_readme_docs_command_is_the_one_ci_runs() -> None:
    build = "sphinx-build -W --keep-going"
    command = next(b.strip() for b in fenced(README, "bash") if "sphinx-build" in b)
    assert command == f"pip install -e '.[docs]' && {build} docs docs/_build/html"
    assert "-e '.[test,docs]'" in CI
    assert f"{build} -q -E -D nb_execution_mode=force docs docs/_build/html" in CI


def test_the_readme_states_the_supported_versions() -> None:
    assert "Python ≥ 3.11" in README
    assert "JupyterLab ≥ 4.4 or Notebook ≥ 7.4" in README


def test_the_mcp_configuration_example_is_valid(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SENTRY_TOKEN", "token")
    (example,) = fenced((DOCS / "how-to" / "mcp.md").read_text(), "json")
    config = parse_config(json.loads(example))
    assert config.problems == ()
    assert set(config.servers) == {"time", "notes", "sentry", "big"}
    assert config.disabled == ("old",)


def test_the_test_of_the_offline_how_to_passes() -> None:
    blocks = fenced((DOCS / "how-to" / "offline.md").read_text(), "python")
    (example,) = [block for block in blocks if "def test_" in block]
    namespace: dict[str, Any] = {}
    exec(compile(example, "docs/how-to/offline.md", "exec"), namespace)
    tests = [value for name, value in namespace.items() if name.startswith("test_")]
    assert tests
    for test in tests:
        test()
