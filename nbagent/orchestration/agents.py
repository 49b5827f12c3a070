"""How an orchestration tool reaches the agent it acts on.

A tool is given its agent, or a callable that gives the agent when the tool runs: a session
registers its tools before its agent is built (it is built at its first use), so that they
are listed from the start without the agent loop imported at ``%load_ext``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, TypeAlias

if TYPE_CHECKING:
    from nbagent.loop.agent import Agent

AgentSource: TypeAlias = "Agent | Callable[[], Agent]"
"""An agent, or a callable that gives it (built, if need be, when called)."""


def agent_of(source: AgentSource) -> Agent:
    """The agent a tool acts on.

    Args:
        source: The agent, or a callable that gives it.

    Returns:
        The agent (the callable's, called now).
    """
    return source() if callable(source) else source
