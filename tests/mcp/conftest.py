"""Fixtures for the MCP tests: managers that are always closed, with timeouts for busy CI, and
approvals of project servers kept in the test's own file."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from nbagent.catalogue.registry import ToolRegistry
from nbagent.mcp import McpManager, RestartPolicy

CONNECT_TIMEOUT = 60.0
"""Seconds a fixture may take to start (a Python server imports the SDK: 1.5 s when idle)."""

READY = 120.0
"""Seconds to wait for a manager's servers to settle."""

FAST_RESTART = RestartPolicy(max_restarts=3, initial_delay=0.2, max_delay=1.0, reset_after=60.0)
"""Restarts quick enough for tests."""


@pytest.fixture
def make_manager() -> Iterator[Callable[..., McpManager]]:
    """Build managers (fresh registry, test timeouts) that are closed at teardown."""
    managers: list[McpManager] = []

    def make(registry: ToolRegistry | None = None, **options: Any) -> McpManager:
        options.setdefault("connect_timeout", CONNECT_TIMEOUT)
        options.setdefault("restart", FAST_RESTART)
        manager = McpManager(registry if registry is not None else ToolRegistry(), **options)
        managers.append(manager)
        return manager

    yield make
    for manager in managers:
        manager.close()
