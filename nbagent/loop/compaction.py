"""Keeping a long conversation inside the context window: the two compaction strategies.

- ``server``: each request carries the API's compaction edit (``context_management``); past
  the threshold the API replaces the earlier turns by a compaction block, and nbagent then
  sends in full the loaded tools the model no longer has.
- ``client``: where the API's compaction is off, refused or below its least trigger, nbagent
  asks the model for a summary itself before the next request and replaces the earlier turns
  by it.

An :class:`~nbagent.loop.agent.Agent` has one :class:`Compactor`, which reads the agent's
``compaction``, ``compact_threshold`` and ``server_min_trigger`` at each use.
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Iterator
from typing import TYPE_CHECKING, Any, Literal

from nbagent.api.anthropic import ModelResponse, StreamDropped, response_text, stream_response
from nbagent.catalogue.delta import COMPACTION
from nbagent.core.errors import ModelAPIError
from nbagent.core.events import Event, Notice, UsageReported
from nbagent.core.tokens import request_tokens
from nbagent.core.tracked import TrackedList
from nbagent.loop import cellthread
from nbagent.loop.history import SUMMARY_TAG, compaction_keeps, ends_with, role_of
from nbagent.loop.request import content_blocks

if TYPE_CHECKING:
    from nbagent.loop.agent import Agent

COMPACT_BETA = "compact-2026-01-12"
"""The beta of the API's server-side compaction."""

COMPACT_EDIT = "compact_20260112"
"""The context-management edit that compacts a conversation past a number of input tokens."""

SUMMARY_REQUEST = (
    "Write a summary of this conversation so far, for yourself to continue from it: what the "
    "user wants, what was done and found (names, paths, figures, decisions), and what is "
    "still open. Plain text, no preamble."
)
"""What the model is asked when nbagent compacts the conversation itself."""

SERVER_MIN_TRIGGER = 50_000
"""The smallest trigger the API's compaction takes: below it, nbagent compacts itself."""

SUMMARY_MAX_TOKENS = 4096
"""The output limit of a summary."""

Compaction = Literal["server", "client", "off"]
"""How a long conversation is kept inside the context window."""


class Compactor:
    """Compacts one agent's conversation, on the server or itself.

    Args:
        agent: The agent whose conversation it keeps inside the context window.
    """

    def __init__(self, agent: Agent) -> None:
        self.agent = agent
        self.server_compaction = True
        """False once the endpoint refused the API's compaction."""
        self.expanded: list[str] = []
        """The loaded tools sent in full since a compaction dropped the references that loaded
        them."""

    def on_server(self) -> bool:
        """Whether requests ask the API to compact."""
        agent = self.agent
        return (
            agent.compaction == "server"
            and self.server_compaction
            and agent.compact_threshold >= agent.server_min_trigger
        )

    def due(self) -> bool:
        """Whether nbagent must compact before the next request (its last one was too long)."""
        agent = self.agent
        client_side = agent.compaction == "client" or (
            agent.compaction == "server" and not self.on_server()
        )
        return client_side and agent.last_prompt_tokens >= agent.compact_threshold

    def edits(self) -> list[dict[str, Any]]:
        """The ``context_management`` edits of a turn's request: none unless the API compacts."""
        if not self.on_server():
            return []
        trigger = {"type": "input_tokens", "value": self.agent.compact_threshold}
        return [{"type": COMPACT_EDIT, "trigger": trigger}]

    def betas(self, request: dict[str, Any]) -> tuple[str, ...]:
        """The betas a request needs: compaction's, if it asks for it or the history holds a
        compaction block."""
        compacted = self.agent.announcements.last_compaction(self.agent.messages) is not None
        edits = (request.get("context_management") or {}).get("edits", ())
        asks = any(edit["type"] == COMPACT_EDIT for edit in edits)
        return (COMPACT_BETA,) if asks or compacted else ()

    def ask(
        self, stream_turn: Callable[[], Generator[Event, None, ModelResponse]]
    ) -> Generator[Event, None, ModelResponse]:
        """Stream one response; an endpoint that refuses server-side compaction is asked again
        without it, and the conversation is compacted by nbagent from then on.

        Args:
            stream_turn: Streams the turn's response.
        """
        try:
            return (yield from stream_turn())
        except ModelAPIError as exc:
            if not (self.on_server() and _refuses_compaction(exc)):
                raise
        self.server_compaction = False
        yield Notice(
            "This endpoint has no server-side compaction; nbagent will summarise the "
            "conversation itself when it grows long.",
            level="warning",
        )
        return (yield from stream_turn())

    def summarise(self) -> Generator[Event, None, None]:
        """Replace the earlier turns by the model's summary of them.

        Kept as they are: the last user turn, and the tool calls it answers (so that every
        tool_use keeps its result). The loaded tools are sent in full from then on (the
        tool_reference results that loaded them are gone), and the deferred names are
        announced again in the kept user turn.
        """
        agent = self.agent
        start = compaction_keeps(agent.messages)
        head, tail = agent.messages[:start], agent.messages[start:]
        if not head:
            yield Notice("Nothing to compact yet.")
            return
        ask = {"type": "text", "text": SUMMARY_REQUEST}
        if ends_with(head, "user"):
            last = head[-1]
            head = [*head[:-1], {**last, "content": [*content_blocks(last["content"]), ask]}]
        else:
            head = [*head, {"role": "user", "content": [ask]}]
        response = None
        cancel = cellthread.cancellation()
        with cellthread.acting(cancel):
            if cancel is not None:
                cancel.check()
            for item in stream_response(agent.client, agent._request(head), cancel=cancel):
                if isinstance(item, ModelResponse):
                    response = item
        if response is None:
            raise StreamDropped("The summary's stream ended without a message.")
        agent.usage += response.usage
        yield UsageReported(response.usage)
        text = f"<{SUMMARY_TAG}>\n{response_text(response)}\n</{SUMMARY_TAG}>"
        summary = {"type": "text", "text": text}
        if tail and role_of(tail[0]) == "user":
            first = tail[0]
            tail = [{**first, "content": [summary, *content_blocks(first["content"])]}, *tail[1:]]
        else:
            tail = [{"role": "user", "content": [summary]}, *tail]
        before, replaced = agent.last_prompt_tokens, start
        agent.messages = TrackedList(tail)
        self.expand_loaded(kept=set())
        if ends_with(agent.messages, "user"):
            yield from agent._add_user_content([])
        agent.last_prompt_tokens = request_tokens(agent._request())
        yield Notice(
            f"The conversation was compacted: the model's summary replaces {replaced} earlier "
            f"messages (the last request had {before:,} input tokens, the next about "
            f"{agent.last_prompt_tokens:,})."
        )

    def after_response(self, content: list[dict[str, Any]]) -> Iterator[Event]:
        """After the API compacted: keep callable the tools the model loaded before."""
        block = next((b for b in content if b.get("type") == COMPACTION), None)
        if block is None:
            return
        if not block.get("content"):
            yield Notice("The API's compaction failed; the conversation goes on uncompacted.")
            return
        kept = {
            change.get("tool", {}).get("name")
            for change in block.get("tool_changes") or ()
            if change.get("type") == "tool_addition"
        }
        expanded = self.expand_loaded(kept)
        note = f"; sent in full from now on: {', '.join(expanded)}" if expanded else ""
        yield Notice(
            "The API compacted the conversation: the model now works from a summary of the "
            f"earlier turns{note}."
        )

    def expand_loaded(self, kept: set[str]) -> list[str]:
        """Send in full the loaded tools the model no longer has (beyond those ``kept``)."""
        loaded = self.agent.loaded_names
        expanded = [n for n in loaded if n not in kept and n not in self.expanded]
        self.expanded += expanded
        return expanded


def _refuses_compaction(exc: ModelAPIError) -> bool:
    """Tell whether an API error refuses the compaction edit (not the conversation)."""
    text = str(exc).lower()
    return exc.status == 400 and (COMPACT_EDIT in text or COMPACT_BETA in text)
