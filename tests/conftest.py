"""Shared fixtures."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from nbagent.testing import FakeAnthropicServer

pytest_plugins = ["tests.shells"]


@pytest.fixture
def fake_api() -> Iterator[FakeAnthropicServer]:
    """A started FakeAnthropicServer with an empty script.

    Enqueue replies with ``fake_api.enqueue(...)``. The test fails at teardown if a script
    error is left in ``fake_api.errors`` (take the expected ones with ``take_errors()``).
    """
    with FakeAnthropicServer() as server:
        yield server
    server.assert_no_errors()
