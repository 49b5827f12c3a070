"""A scripted model for demos and example notebooks that must run without an API key.

``offline_unless_api_key(script)`` starts a :class:`~nbagent.testing.FakeAnthropicServer`
answering from ``script`` and points ``ANTHROPIC_BASE_URL`` at it, unless a real
``ANTHROPIC_API_KEY`` is set, in which case nothing changes and Claude answers.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from nbagent.testing import FakeAnthropicServer, ScriptItem

OFFLINE_KEY = "offline-scripted-model"
"""The placeholder API key set while the scripted model answers."""

_server: FakeAnthropicServer | None = None


def offline_unless_api_key(script: Iterable[ScriptItem]) -> FakeAnthropicServer | None:
    """Answer with a scripted model unless ``ANTHROPIC_API_KEY`` holds a real key.

    Calling it again replaces the script of the running offline server.

    Args:
        script: The replies, in order (see :mod:`nbagent.testing`).

    Returns:
        The offline server, or ``None`` when Claude answers.
    """
    global _server
    key = os.environ.get("ANTHROPIC_API_KEY")
    if key and key != OFFLINE_KEY:
        print("ANTHROPIC_API_KEY is set: Claude answers, not the scripted model.")
        return None
    from nbagent.testing import FakeAnthropicServer

    if _server is None:
        _server = FakeAnthropicServer().start()
    _server.replace_script(script)
    os.environ["ANTHROPIC_API_KEY"] = OFFLINE_KEY
    os.environ["ANTHROPIC_BASE_URL"] = _server.url
    print(
        f"Offline: no ANTHROPIC_API_KEY, so a scripted model at {_server.url} answers. "
        "Set ANTHROPIC_API_KEY to talk to Claude."
    )
    return _server
