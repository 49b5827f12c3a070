"""Resuming a saved conversation: its history repaired, and the agent's state restored.

:func:`~nbagent.loop.repair.repaired` makes a saved history one the API accepts
again (every ``tool_use`` answered, an unanswered one as interrupted; roles alternating from a
user message; a compaction block whose summary lost a secret, and so its signature, replaced by
that summary), and :func:`resume` puts it into an agent with the state of the last record.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from nbagent.api.server_tools import SERVER_TOOLS
from nbagent.core.events import Usage
from nbagent.core.tool import Tool
from nbagent.loop.repair import Repair, loaded_in, repaired
from nbagent.store.records import State
from nbagent.store.saved import SavedConversation, UnsignedConversationError, unsigned_message

UNAVAILABLE = (
    "Not available in this kernel: it was loaded in a conversation resumed after a restart, "
    "and no tool of this name is registered now."
)
"""The description of a tool the resumed history loaded that is gone."""


def resume(agent: Any, saved: SavedConversation, trust: bool = False) -> Repair:
    """Replace an agent's conversation by a saved one, repaired.

    The agent's state is that of the last record
    (:func:`~nbagent.store.recorder.agent_state`): the tools the model loaded (and those
    the history's ``tool_reference`` blocks load) count as loaded again, the tokens used
    and how full the context was are restored. A loaded tool gone from the registry is kept
    as a placeholder, sent deferred, because the API refuses a history that references a
    tool it is not given; a call of it is told the tool is not available (until a tool of
    its name is registered again). The next user turn announces the deferred tools that
    changed since the history's own announcements (:mod:`nbagent.catalogue.delta` reads
    those back from the history).

    Args:
        agent: The :class:`~nbagent.loop.agent.Agent`.
        saved: The conversation.
        trust: Resume it even if nbagent did not write it (unsigned or changed).

    Returns:
        What was repaired.

    Raises:
        UnsignedConversationError: nbagent did not write it, and ``trust`` is not set.
    """
    if not (trust or saved.signed):
        raise UnsignedConversationError(unsigned_message(saved))
    repair = repaired(saved.messages)
    state = State.model_construct(**saved.state)  # its right fields, checked on reading
    agent.reset()
    agent.messages = repair.messages
    for name in dict.fromkeys([*state.loaded, *loaded_in(repair.messages)]):
        if name in agent.registry:
            agent._load(name)  # noqa: SLF001 - an Agent.restore() would say it better
        elif name not in agent._loaded:  # noqa: SLF001
            agent._loaded[name] = placeholder(name)  # noqa: SLF001
    if hasattr(agent, "_expanded"):
        # what a compaction took the references of is sent in full; all of it when the
        # history now starts from a summary of ours
        expanded = agent.loaded_names if repair.summarised else state.expanded
        agent._expanded = [n for n in expanded if n in agent._loaded]  # noqa: SLF001
    if "prompt_tokens" in state.model_fields_set and hasattr(agent, "last_prompt_tokens"):
        agent.last_prompt_tokens = state.prompt_tokens
    if "usage" in state.model_fields_set:
        fields = {f.name for f in dataclasses.fields(Usage)}
        agent.usage = Usage(**{k: v for k, v in state.usage.items() if k in fields})
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
