"""An agent's state: what it knows of its conversation, taken out and put back whole.

:meth:`~nbagent.loop.agent.Agent.snapshot` gives an :class:`AgentState`;
:meth:`~nbagent.loop.agent.Agent.restore` checks one (:func:`check_state`) and takes it.
Saving a conversation writes the state beside the history, and resuming one restores it
(:mod:`nbagent.store.recorder`, :mod:`nbagent.store.resume`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field

from nbagent.core.errors import NbAgentError
from nbagent.core.events import Usage
from nbagent.loop.history import Message

ROLES = ("user", "assistant")
"""The roles of a history's messages."""


class StateError(NbAgentError, ValueError):
    """A state that does not fit the agent it was to be restored into."""


@dataclass(frozen=True)
class AgentState:
    """What an agent knows of its conversation: enough to take it up again.

    The messages are the agent's own objects, which it never changes in place (it replaces
    a message to merge into it): copy one before changing it.
    """

    messages: tuple[Message, ...] = ()
    """The history, oldest first: ``{"role": "user" | "assistant", "content": ...}``."""
    loaded: tuple[str, ...] = ()
    """The deferred tools the model loaded in this conversation, in order."""
    expanded: tuple[str, ...] = ()
    """The loaded tools sent in full since a compaction dropped the references that loaded
    them (each one also in :attr:`loaded`)."""
    preloaded: tuple[str, ...] = ()
    """The loaded tools preloaded for the first prompt, sent in full (each one also in
    :attr:`loaded`; a saved conversation does not keep them)."""
    prompt_tokens: int = 0
    """Input tokens of the last request: how full the context is."""
    usage: Usage = field(default_factory=Usage)
    """Tokens used in the conversation."""
    valid: int = 0
    """How many first messages are those of a valid history, as the agent's last repair
    left them (:func:`~nbagent.loop.history.repaired`): the next repair reads only what
    follows them."""


def check_state(state: AgentState, available: Mapping[str, object]) -> None:
    """Check that a state fits an agent.

    Args:
        state: The state to restore.
        available: The tools the agent can take as loaded, by name (the deferred tools of its
            registry, and any stand-ins given).

    Raises:
        StateError: A message is not a ``user`` or ``assistant`` message with a text or a list
            of blocks; a loaded tool is not available; an expanded or preloaded tool is not
            loaded; a count is negative. The message says which, and where.
    """
    plain = all(  # a history of plain messages, checked in one quick pass (under half the time)
        type(message) is dict
        and message.get("role") in ROLES
        and type(message.get("content")) in (str, list)
        for message in state.messages
    )
    for index, message in enumerate(() if plain else state.messages):
        role = message.get("role") if isinstance(message, Mapping) else None
        if role not in ROLES:
            raise StateError(f"Message {index} of the state is not a user or assistant message.")
        if not isinstance(message.get("content"), str | list):
            raise StateError(f"Message {index} of the state has no text or list of blocks.")
    missing = [name for name in state.loaded if name not in available]
    if missing:
        raise StateError(
            f"The state's loaded tools {', '.join(missing)} are not deferred tools of this "
            "agent's registry, and no stand-in was given for them."
        )
    for kind, names in (("expanded", state.expanded), ("preloaded", state.preloaded)):
        stray = [name for name in names if name not in state.loaded]
        if stray:
            raise StateError(f"The state's {kind} tools {', '.join(stray)} are not loaded.")
    if state.valid > len(state.messages):
        raise StateError(
            f"The state says {state.valid} messages are valid, but it has {len(state.messages)}."
        )
    counts = {"prompt_tokens": state.prompt_tokens, "valid": state.valid, **asdict(state.usage)}
    negative = [name for name, value in counts.items() if value < 0]
    if negative:
        raise StateError(f"The state's {', '.join(negative)} cannot be negative.")
