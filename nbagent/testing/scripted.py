"""A scripted model for demos and example notebooks that must run without an API key.

``offline_unless_api_key(script)`` returns an :class:`OfflineModel` answering from ``script``,
unless a real ``ANTHROPIC_API_KEY`` is set: then it returns None, changes nothing, and Claude
answers. The model is a :class:`~nbagent.testing.FakeAnthropicServer` on 127.0.0.1. What points
the agent at it are the SDK's own environment variables, ``ANTHROPIC_API_KEY`` and
``ANTHROPIC_BASE_URL``: :meth:`OfflineModel.use` sets them in this process and says so,
:meth:`OfflineModel.close` sets them back and stops the server. Nothing else is kept: the
model is the object returned, and each call makes its own.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from types import TracebackType
from typing import TYPE_CHECKING, Self

if TYPE_CHECKING:
    from nbagent.testing import ScriptItem

OFFLINE_KEY = "offline-scripted-model"
"""The placeholder API key set while the scripted model answers."""


class OfflineModel:
    """A scripted model on 127.0.0.1, and the environment that points the SDK at it.

    Made, it is only a server: :meth:`use` points the process's SDK clients made from then on
    (the agent's among them) at it, :meth:`close` undoes that. As a context manager it is
    used on entry and closed on exit.

    Args:
        script: The replies, in order (see :mod:`nbagent.testing`).
    """

    def __init__(self, script: Iterable[ScriptItem]) -> None:
        from nbagent.testing import FakeAnthropicServer

        self.server = FakeAnthropicServer(script).start()
        """The server answering from the script (``replace_script`` gives it another)."""
        self._previous: dict[str, str | None] | None = None

    @property
    def environment(self) -> dict[str, str]:
        """The environment variables that point the SDK at the model."""
        return {"ANTHROPIC_API_KEY": OFFLINE_KEY, "ANTHROPIC_BASE_URL": self.server.url}

    def use(self) -> Self:
        """Set :attr:`environment` in this process, saying so (a no-op when it is set).

        Returns:
            The model.
        """
        if self._previous is None:
            self._previous = {name: os.environ.get(name) for name in self.environment}
            os.environ.update(self.environment)
            print(
                f"Offline: no ANTHROPIC_API_KEY, so a scripted model at {self.server.url} "
                "answers (ANTHROPIC_BASE_URL now points at it). Set ANTHROPIC_API_KEY to talk "
                "to Claude."
            )
        return self

    def close(self) -> None:
        """Set the environment back to what it was before :meth:`use`, and stop the server."""
        if self._previous is not None:
            for name, value in self._previous.items():
                if value is None:
                    os.environ.pop(name, None)
                else:
                    os.environ[name] = value
            self._previous = None
        self.server.stop()

    def __enter__(self) -> Self:
        """Use the model."""
        return self.use()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        """Close the model."""
        self.close()


def offline_unless_api_key(script: Iterable[ScriptItem]) -> OfflineModel | None:
    """Answer with a scripted model unless ``ANTHROPIC_API_KEY`` holds a real key.

    A key left by another offline model is not a real one: calling it again (a demo's first
    cell run again) makes a new model, which the agent's next request goes to (an agent given
    no client builds its client again when the variables change); the one before keeps its
    server until it is closed.

    Args:
        script: The replies, in order (see :mod:`nbagent.testing`).

    Returns:
        The offline model, in use (:meth:`OfflineModel.close` undoes it); None when Claude
        answers.
    """
    key = os.environ.get("ANTHROPIC_API_KEY")
    if key and key != OFFLINE_KEY:
        print("ANTHROPIC_API_KEY is set: Claude answers, not the scripted model.")
        return None
    return OfflineModel(script).use()
