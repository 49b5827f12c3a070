"""Calling tools in tests the way the agent loop does."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import pytest

from nbagent.core.errors import ToolError
from nbagent.core.tool import Tool, ToolResult
from nbagent.tools import ToolContext, builtin_tools
from nbagent.tools.files import exchange as exchange_module
from nbagent.tools.files import stamps as fsutil


def call(tool: Tool, **tool_input: Any) -> ToolResult:
    """Call a tool as the agent does, validating the input against its schema."""
    return tool.call(tool_input)


def text(tool: Tool, **tool_input: Any) -> str:
    """Call a tool and return its text (the call must succeed)."""
    result = call(tool, **tool_input)
    assert isinstance(result.content, str) and not result.is_error, result.content
    return result.content


def summary(tool: Tool, **tool_input: Any) -> str:
    """Call a tool and return the few words its result gives the transcript."""
    return call(tool, **tool_input).metadata["summary"]


FILE_NOTE = re.compile(r" \[Read from the file, saved \d+ s ago\.\]")
"""The note a read of a notebook's file adds to the header (the age of the save varies)."""


def without_file_note(said: str) -> str:
    """A notebook read's text without the note that it was read from the file, saved N s ago."""
    return FILE_NOTE.sub("", said, count=1)


def error(tool: Tool, **tool_input: Any) -> str:
    """Call a tool that must fail with a ToolError, and return what the model is told."""
    with pytest.raises(ToolError) as caught:
        call(tool, **tool_input)
    return str(caught.value)


class LazyTools(dict[str, Tool]):
    """The built-in tools over one context, each built when a test first asks for it."""

    def __init__(self, context: ToolContext) -> None:
        super().__init__()
        self.context = context

    def __missing__(self, name: str) -> Tool:
        [built] = builtin_tools(self.context, [name])
        self[name] = built
        return built


def save_around_the_swap(
    path: Path, monkeypatch: pytest.MonkeyPatch, before: bytes | None, after: bytes | None
) -> list[int]:
    """Make another writer save ``path`` just before and just after the first swap.

    Returns the list that counts the swaps made.
    """
    swaps: list[int] = []

    def save(content: bytes | None) -> None:
        if content is not None and len(swaps) == 1:
            other = path.with_name("other-writer.tmp")
            other.write_bytes(content)
            os.replace(other, path)

    def exchange_between_saves(first: Path, second: Path) -> bool:
        swaps.append(1)
        save(before)
        swapped = exchange_module.exchange(first, second)
        save(after)
        return swapped

    monkeypatch.setattr(fsutil, "exchange", exchange_between_saves)
    return swaps
