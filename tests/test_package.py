"""Tests of the package root: its names are imported on first use, and stay what they are.

Each check runs in a new Python process, where nothing of nbagent was imported before it.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

import nbagent


def run(code: str) -> None:
    """Run code in a new Python process; its assertions fail the test.

    Args:
        code: The statements.
    """
    completed = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=False
    )
    assert completed.returncode == 0, completed.stderr


def test_the_server_extension_imports_no_more_than_its_modules() -> None:
    run(
        "import sys\n"
        "before = set(sys.modules)\n"
        "import nbagent.frontend.server\n"
        "new = set(sys.modules) - before\n"
        "ours = {m for m in new if m.split('.')[0] == 'nbagent'}\n"
        "server = {'nbagent.frontend', 'nbagent.frontend.server'}\n"
        "assert ours == {'nbagent', 'nbagent.core', 'nbagent.core.version'} | server, ours\n"
        "heavy = new & {'typing', 'pydantic', 'tokenizers', 'anthropic', 'IPython', 'asyncio'}\n"
        "assert not heavy, heavy\n"
    )


def test_the_registry_and_the_decorator_are_names_not_modules() -> None:
    run(
        "import nbagent\n"
        "from nbagent import registry, tool\n"
        "from nbagent.catalogue.registry import ToolRegistry\n"
        "assert isinstance(registry, ToolRegistry) and registry is nbagent.registry\n"
        "assert 'ToolSearch' in registry\n"
        "assert tool is nbagent.tool and tool.__module__ == 'nbagent.core.tool'\n"
        "import importlib.util\n"
        "assert importlib.util.find_spec('nbagent.registry') is None\n"
        "assert importlib.util.find_spec('nbagent.tool') is None\n"
    )


def test_the_public_names_are_the_documented_ones() -> None:
    run(
        "import nbagent\n"
        "from nbagent.core.errors import ModelAPIError\n"
        "from nbagent.loop.agent import Agent, AgentResult\n"
        "assert (nbagent.Agent, nbagent.AgentResult) == (Agent, AgentResult)\n"
        "assert nbagent.ModelAPIError is ModelAPIError\n"
        "assert all(getattr(nbagent, name) is not None for name in nbagent.__all__)\n"
        "assert set(nbagent.__all__) <= set(dir(nbagent))\n"
    )


def test_threads_asking_first_share_one_registry() -> None:
    run(
        "import threading, nbagent\n"
        "seen, start = [], threading.Barrier(8)\n"
        "def ask():\n"
        "    start.wait()\n"
        "    seen.append(nbagent.registry)\n"
        "threads = [threading.Thread(target=ask) for _ in range(8)]\n"
        "for t in threads: t.start()\n"
        "for t in threads: t.join()\n"
        "assert len(seen) == 8 and all(r is seen[0] for r in seen)\n"
    )


def test_reloading_the_package_keeps_the_registry() -> None:
    run(
        "import importlib, nbagent\n"
        "registry = nbagent.registry\n"
        "importlib.reload(nbagent)\n"
        "assert nbagent.registry is registry\n"
        "from nbagent.catalogue.registry import ToolRegistry\n"
        "assert nbagent.ToolRegistry is ToolRegistry\n"
    )


def test_every_public_name_is_there_and_listed() -> None:
    assert set(nbagent.__all__) <= set(dir(nbagent))
    assert all(getattr(nbagent, name) is not None for name in nbagent.__all__)
    assert nbagent.NbAgentError.__module__ == "nbagent.core.errors"
    assert nbagent.ToolSearch.__module__ == "nbagent.catalogue.toolsearch"
    assert callable(nbagent.load_ipython_extension)
    with pytest.raises(AttributeError, match="not_a_name"):
        nbagent.not_a_name  # noqa: B018
