"""Resuming a saved conversation: its history repaired, and the agent's state restored.

:func:`~nbagent.loop.history.repaired` makes a saved history one the API accepts
again (every ``tool_use`` answered, an unanswered one as interrupted; roles alternating from a
user message; a compaction block whose summary lost a secret, and so its signature, replaced by
that summary), and :func:`resume` puts it into an agent with the state of the last record.
"""

from __future__ import annotations

import dataclasses

from nbagent.api.api_tools import SERVER_TOOLS
from nbagent.core.events import Usage
from nbagent.core.tool import Tool
from nbagent.loop.agent import Agent
from nbagent.loop.history import Repair, loaded_in, repaired
from nbagent.loop.state import AgentState
from nbagent.store.records import State
from nbagent.store.saved import SavedConversation, UnsignedConversationError, unsigned_message

UNAVAILABLE = (
    "Not available in this kernel: it was loaded in a conversation resumed after a restart, "
    "and no tool of this name is registered now."
)
"""The description of a tool the resumed history loaded that is gone."""


def resume(agent: Agent, saved: SavedConversation, trust: bool = False) -> Repair:
    """Replace an agent's conversation by a saved one, repaired.

    The agent's state (:meth:`~nbagent.loop.agent.Agent.restore`) is that of the last
    record (:func:`~nbagent.store.recorder.state_record`): the tools the model loaded (and those
    the history's ``tool_reference`` blocks load) count as loaded again, the tokens used
    and how full the context was are restored. A loaded tool gone from the registry is kept
    as a placeholder, sent deferred, because the API refuses a history that references a
    tool it is not given; a call of it is told the tool is not available (until a tool of
    its name is registered again). The next user turn announces the deferred tools that
    changed since the history's own announcements (:mod:`nbagent.catalogue.delta` reads
    those back from the history).

    Args:
        agent: The agent.
        saved: The conversation.
        trust: Resume it even if nbagent did not write it (unsigned or changed).

    Returns:
        What was repaired.

    Raises:
        UnsignedConversationError: nbagent did not write it, and ``trust`` is not set.
    """
    if not (trust or saved.signed):
        raise UnsignedConversationError(unsigned_message(saved))
    # a signed file's last state says how far its history was valid, and the state's loaded
    # tools hold those its messages loaded that far: only what follows is read again
    valid = saved.valid if saved.signed else 0
    compactions = saved.compactions if saved.signed else None
    repair = repaired(saved.messages, valid=valid, compactions=compactions)
    saved_state = State.model_construct(**saved.state)  # its right fields, checked on reading
    registry = agent.registry
    referenced = loaded_in(repair.messages[max(repair.valid - 1, 0) :])
    loaded = [
        name
        for name in dict.fromkeys([*saved_state.loaded, *referenced])
        if name not in registry or registry.is_deferred(registry.get(name))
    ]
    # what a compaction took the references of is sent in full; all of it when the history
    # now starts from a summary of ours
    expanded = loaded if repair.summarised else saved_state.expanded
    known = {f.name for f in dataclasses.fields(Usage)}
    state = AgentState(
        messages=tuple(repair.messages),
        loaded=tuple(loaded),
        expanded=tuple(name for name in expanded if name in loaded),
        prompt_tokens=saved_state.prompt_tokens,
        usage=Usage(**{k: v for k, v in saved_state.usage.items() if k in known}),
        valid=len(repair.messages),
    )
    agent.restore(state, {name: placeholder(name) for name in loaded if name not in registry})
    return repair


def placeholder(name: str) -> Tool:
    """The tool sent for one the history loaded that the registry no longer has.

    A server tool (web search) stays itself, with its default options: the history holds
    its blocks, which the API takes only with its definition. Any other is a definition
    that says it is unavailable.

    Args:
        name: The tool's name.
    """
    if name in SERVER_TOOLS:
        return SERVER_TOOLS[name].tool({})
    return Tool(name=name, description=UNAVAILABLE)
