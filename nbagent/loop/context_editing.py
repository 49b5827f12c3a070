"""Old tool results cleared as they age: the API's context editing, or nbagent's where the
endpoint lacks it.

Each turn's request carries the edit ``clear_tool_uses_20250919`` (beta
``context-management-2025-06-27``): once a request passes ``trigger`` input tokens, the API
replaces the results of the oldest tool uses by a placeholder, all but the last ``keep``,
before the model reads it. The client's history stays whole (a resumed or compacted
conversation still has everything); the answer's ``context_management.applied_edits`` says
what was cleared, which the context line shows. Never cleared: ToolSearch's results (their
``tool_reference`` blocks are what keeps the tools it loaded loaded) and the tools of
:attr:`ContextEditing.exclude`.

Where the endpoint refuses the edit, nbagent clears the same tool results itself in the
request it builds (:meth:`ContextEditor.messages`), from the turn after a request past the
trigger; it also keeps the latest NotebookRead of each notebook (the API's edit can only
spare whole tools, by name).
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from nbagent.catalogue.registry import TOOL_SEARCH_NAME
from nbagent.core.errors import ModelAPIError
from nbagent.core.events import Event, Notice

if TYPE_CHECKING:
    from nbagent.api.anthropic import ModelResponse
    from nbagent.loop.agent import Agent

CONTEXT_BETA = "context-management-2025-06-27"
"""The beta of context editing (and of the memory tool)."""

MEMORY_TYPE = "memory_20250818"
"""The memory tool's type, which needs the same beta (:mod:`nbagent.tools.memory`)."""

MEMORY_NAME = "memory"
"""The memory tool's name (:mod:`nbagent.tools.memory`)."""

CLEAR_EDIT = "clear_tool_uses_20250919"
"""The edit that clears old tool uses."""

CLEARED_TEXT = "[Old tool result cleared to save context; run the tool again if you need it.]"
"""What a tool result cleared by nbagent itself becomes."""

NOTEBOOK_READ = "NotebookRead"
"""Its latest result for each notebook is kept when nbagent clears results itself."""

ALWAYS_KEPT = (TOOL_SEARCH_NAME,)
"""Tools whose results are never cleared: ToolSearch's load the tools it found."""


@dataclass(frozen=True)
class ContextEditing:
    """How old tool results are cleared (``c.NbAgent.clear_*``).

    Attributes:
        trigger: Input tokens of a request past which old tool results are cleared.
        keep: The most recent tool uses kept whole.
        clear_at_least: Clear only when this many input tokens can be freed (keeps the
            prompt cache from being broken for little); 0 for any amount.
        exclude: Tools whose results are never cleared, besides ToolSearch.
    """

    trigger: int = 60_000
    keep: int = 4
    clear_at_least: int = 10_000
    exclude: tuple[str, ...] = ()

    def edit(self) -> dict[str, Any]:
        """The ``clear_tool_uses_20250919`` edit (``BetaClearToolUses20250919EditParam``)."""
        edit: dict[str, Any] = {
            "type": CLEAR_EDIT,
            "trigger": {"type": "input_tokens", "value": self.trigger},
            "keep": {"type": "tool_uses", "value": self.keep},
            "exclude_tools": [*ALWAYS_KEPT, *(n for n in self.exclude if n not in ALWAYS_KEPT)],
        }
        if self.clear_at_least:
            edit["clear_at_least"] = {"type": "input_tokens", "value": self.clear_at_least}
        return edit


@dataclass(frozen=True)
class Clearing:
    """What the last request had cleared."""

    tool_uses: int
    """Tool uses whose results were cleared."""
    tokens: int
    """Input tokens that freed (0 when nbagent cleared them and cannot count)."""
    by: str
    """``api`` or ``nbagent``."""


class ContextEditor:
    """Asks the API to clear an agent's old tool results, or clears them itself.

    Args:
        agent: The agent; its ``context_editing`` (a :class:`ContextEditing`, or None when
            off) is read at each use.
    """

    def __init__(self, agent: Agent) -> None:
        self.agent = agent
        self.on_server = True
        """False once the endpoint refused the edit."""
        self.last: Clearing | None = None
        """What the last request had cleared, if anything."""
        self._copies: dict[int, tuple[dict[str, Any], dict[str, Any]]] = {}
        """Cleared copies of messages, by the original's id (the original kept alive with
        it), so that the requests share them (:mod:`nbagent.api.body`)."""

    @property
    def settings(self) -> ContextEditing | None:
        """The agent's clearing settings; None when clearing is off."""
        return getattr(self.agent, "context_editing", None)

    def edits(self) -> list[dict[str, Any]]:
        """The edits a turn's request carries (none when off or done by nbagent)."""
        settings = self.settings
        return [settings.edit()] if settings is not None and self.on_server else []

    def betas(self, request: dict[str, Any]) -> tuple[str, ...]:
        """The beta a request needs for its edits, or for the memory tool."""
        edits = (request.get("context_management") or {}).get("edits", ())
        clears = any(e["type"] == CLEAR_EDIT for e in edits)
        return (CONTEXT_BETA,) if clears or self._has_memory() else ()

    def _has_memory(self) -> bool:
        """Whether the agent may send the memory tool: it is registered, or the model loaded
        it. Looked up by name (names are unique in a request), never by walking the request's
        tools: those are the whole catalogue, 10,000 deferred ones at every request."""
        registry = self.agent.registry
        if MEMORY_NAME in registry:
            return registry.get(MEMORY_NAME).definition().get("type") == MEMORY_TYPE
        return MEMORY_NAME in self.agent.loaded_names

    def ask(
        self, stream_turn: Callable[[], Generator[Event, None, ModelResponse]]
    ) -> Generator[Event, None, ModelResponse]:
        """Stream one response; an endpoint that refuses the edit is asked again without it,
        and nbagent clears old results itself from then on."""
        try:
            return (yield from stream_turn())
        except ModelAPIError as exc:
            if not (self.edits() and _refuses_clearing(exc)):
                raise
        self.on_server = False
        yield Notice(
            "This endpoint has no context editing; nbagent will clear old tool results itself.",
            level="warning",
        )
        return (yield from stream_turn())

    def after_response(self, response: ModelResponse) -> Iterator[Event]:
        """Note what the API cleared for this turn's request."""
        applied = [e for e in response.applied_edits if e.get("type") == CLEAR_EDIT]
        if not self.on_server:
            return
        uses = sum(int(e.get("cleared_tool_uses", 0)) for e in applied)
        tokens = sum(int(e.get("cleared_input_tokens", 0)) for e in applied)
        before, self.last = self.last, Clearing(uses, tokens, "api") if uses else None
        if self.last is not None and (before is None or before.tool_uses < uses):
            yield Notice(
                f"Cleared the results of {uses} old tool calls ({tokens:,} tokens) from what "
                "the model reads; the conversation keeps them."
            )

    def messages(self, messages: Sequence[dict[str, Any]]) -> Sequence[dict[str, Any]]:
        """The history as a request sends it: whole, unless nbagent clears old tool results
        itself (the endpoint lacks context editing) and the last request passed the trigger.

        Args:
            messages: The history; not modified.
        """
        settings = self.settings
        if settings is None or self.on_server:
            return messages
        if self.agent.last_prompt_tokens <= settings.trigger and not self._copies:
            return messages
        cleared = old_tool_uses(messages, settings)
        if not cleared:
            return messages
        self.last = Clearing(len(cleared), 0, "nbagent")
        return [self._cleared(m, cleared) for m in messages]

    def _cleared(self, message: dict[str, Any], ids: set[str]) -> dict[str, Any]:
        """A message with the cleared results replaced (the same copy as last time if the
        same results were cleared)."""
        content = message.get("content")
        if message.get("role") != "user" or not isinstance(content, list):
            return message
        hit = [b for b in content if b.get("type") == "tool_result" and b["tool_use_id"] in ids]
        if not hit:
            return message
        kept = self._copies.get(id(message))
        if kept is not None and kept[0] is message and _same_clearing(kept[1], ids):
            return kept[1]
        blocks = [
            {**b, "content": CLEARED_TEXT}
            if b.get("type") == "tool_result" and b["tool_use_id"] in ids
            else b
            for b in content
        ]
        copy = {**message, "content": blocks}
        self._copies[id(message)] = (message, copy)
        return copy


def old_tool_uses(messages: Sequence[dict[str, Any]], settings: ContextEditing) -> set[str]:
    """The ids of the tool uses whose results are cleared: all but the last ``keep``, less
    those of the tools always kept, the latest NotebookRead of each notebook (what the
    model knows of a notebook's cells) and the errors (a call the person refused among them:
    a cleared result says to run the tool again).

    Args:
        messages: The history.
        settings: The clearing settings.
    """
    uses = [
        block
        for message in messages
        if message.get("role") == "assistant" and isinstance(message.get("content"), list)
        for block in message["content"]
        if block.get("type") == "tool_use"
    ]
    spared = {*ALWAYS_KEPT, *settings.exclude}
    latest_reads = {
        str(b.get("input", {}).get("notebook_path")): b["id"]
        for b in uses
        if b.get("name") == NOTEBOOK_READ
    }
    errors = {
        block.get("tool_use_id")
        for message in messages
        if message.get("role") == "user" and isinstance(message.get("content"), list)
        for block in message["content"]
        if block.get("type") == "tool_result" and block.get("is_error")
    }
    kept = {*latest_reads.values(), *errors}
    old = uses[: max(0, len(uses) - settings.keep)]
    return {b["id"] for b in old if b.get("name") not in spared and b["id"] not in kept}


def _same_clearing(copy: dict[str, Any], ids: set[str]) -> bool:
    """Whether a cleared copy cleared exactly the results among ``ids`` it holds."""
    return all(
        (b.get("content") == CLEARED_TEXT) == (b["tool_use_id"] in ids)
        for b in copy["content"]
        if b.get("type") == "tool_result"
    )


def _refuses_clearing(exc: ModelAPIError) -> bool:
    """Whether an API error refuses the clear edit (not the conversation)."""
    text = str(exc).lower()
    return exc.status == 400 and (CLEAR_EDIT in text or CONTEXT_BETA in text)
