"""Shared fixtures, and the mark for tests that need a real component (tests/components.py)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from nbagent.testing import FakeAnthropicServer
from tests.components import MARK, missing

pytest_plugins = ["tests.shells"]


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        f"{MARK}(present, what, how): needs a real component; skips without it, fails under "
        "CI=true (tests.components.needs)",
    )


def pytest_runtest_setup(item: pytest.Item) -> None:
    for mark in item.iter_markers(MARK):
        if not mark.kwargs["present"]:
            missing(mark.kwargs["what"], mark.kwargs["how"])


@pytest.fixture
def fake_api() -> Iterator[FakeAnthropicServer]:
    """A started FakeAnthropicServer with an empty script.

    Enqueue replies with ``fake_api.enqueue(...)``. The test fails at teardown if a script
    error is left in ``fake_api.errors`` (take the expected ones with ``take_errors()``).
    """
    with FakeAnthropicServer() as server:
        yield server
    server.assert_no_errors()
