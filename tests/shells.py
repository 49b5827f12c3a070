"""A real InteractiveShell with nbagent loaded, against FakeAnthropicServer, and its helpers.

Its fixtures (``shell``, ``ip``, ``asked``) reach every test through ``pytest_plugins`` in
conftest.py; tests import ``run`` and ``error_of`` and run cells through ``run_cell``.
"""

from __future__ import annotations

import builtins
import re
from collections.abc import Iterator
from typing import Any

import pytest
from IPython.core.interactiveshell import InteractiveShell
from IPython.utils.capture import capture_output

import nbagent
from nbagent.core.tool import Tool
from nbagent.testing import FakeAnthropicServer

FORECAST = "mcp__weather__forecast"


@pytest.fixture(scope="module")
def shell() -> InteractiveShell:
    """The process's InteractiveShell."""
    return InteractiveShell.instance()


@pytest.fixture
def ip(
    shell: InteractiveShell, fake_api: FakeAnthropicServer, monkeypatch: pytest.MonkeyPatch
) -> Iterator[InteractiveShell]:
    """The shell with nbagent loaded, talking to the fake API, with a deferred MCP tool."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", fake_api.url)
    tool = Tool(
        name=FORECAST,
        description="Weather forecast for a city.",
        is_mcp=True,
        server="weather",
        input_schema={"type": "object", "properties": {"city": {"type": "string"}}},
        handler=lambda city: f"Sunny in {city}",
    )
    nbagent.registry.register(tool, replace=True)
    shell.run_line_magic("config", 'NbAgent.allow_rules = ["mcp__weather__*"]')
    shell.run_line_magic("load_ext", "nbagent")
    yield shell
    shell.run_line_magic("unload_ext", "nbagent")
    shell.run_line_magic("config", "NbAgent.allow_rules = []")
    nbagent.registry.unregister_many([FORECAST])
    shell.user_ns.pop("result", None)


@pytest.fixture
def asked(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every prompt put to the person on stdin (each answered "n")."""
    prompts: list[str] = []

    def answer(prompt: object = "") -> str:
        prompts.append(str(prompt))
        return "n"

    monkeypatch.setattr(builtins, "input", answer)
    return prompts


def run(ip: InteractiveShell, cell: str) -> tuple[Any, str]:
    """Run a cell; return its result and every text it displayed (markdown or plain)."""
    with capture_output() as captured:
        result = ip.run_cell(cell)
    texts = [o.data.get("text/markdown") or o.data.get("text/plain", "") for o in captured.outputs]
    return result, "\n".join(texts) + captured.stdout


def error_of(result: Any) -> BaseException | None:
    """The error a cell raised, before or during its execution."""
    return result.error_in_exec or result.error_before_exec


def shown(markdown: str) -> str:
    """Markdown as it reads once rendered, as far as escapes and the span that keeps a text
    from MathJax go (``\\$5`` reads ``$5``);
    an escaped pipe stays escaped, so that table rows still split into their cells."""
    text = re.sub(r'<span class="tex2jax_ignore">|</span>', "", markdown)
    return re.sub(r"\\([\\`*_\[\]<>$])", r"\1", text)
