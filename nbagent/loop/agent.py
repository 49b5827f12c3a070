"""The agent loop: one conversation with the model, its tool calls and their results.

Each turn builds a request (loaded tools, deferred tools marked, announcements of changes to
the deferred set), streams the answer, runs the tool calls and appends their results, until
the model stops or ``max_turns`` is reached. A run is a stream of
:mod:`nbagent.core.events`; :meth:`Agent.run` collects it into an :class:`AgentResult`.
"""

from __future__ import annotations

import dataclasses
import functools
import os
import time
from collections.abc import Callable, Generator, Iterator, Mapping
from contextlib import closing
from dataclasses import dataclass, field
from typing import Any

from nbagent.api.anthropic import ModelResponse, StreamDropped, response_text, stream_response
from nbagent.api.pricing import PRICES, Price
from nbagent.catalogue.delta import Announcements, Style
from nbagent.catalogue.registry import TOOL_SEARCH_NAME, ToolRegistry
from nbagent.catalogue.toolsearch import ToolSearch
from nbagent.core.cancellation import Cancelled
from nbagent.core.errors import ModelAPIError, ToolError
from nbagent.core.events import (
    Event,
    Notice,
    RunFinished,
    RunStopReason,
    TextDelta,
    ToolCallFinished,
    ToolCallStarted,
    ToolSearchResults,
    ToolSetAnnounced,
    TurnStarted,
    Usage,
    UsageReported,
)
from nbagent.core.identity import same_prefix
from nbagent.core.markup import model_markdown
from nbagent.core.tool import Tool, ToolResult
from nbagent.core.tracked import Since, TrackedList, equal_prefix_since
from nbagent.loop import cellthread
from nbagent.loop.budget import budget_notice, unpriced_budget
from nbagent.loop.compaction import (
    SERVER_MIN_TRIGGER,
    SUMMARY_MAX_TOKENS,
    Compaction,
    Compactor,
)
from nbagent.loop.context_editing import ContextEditing, ContextEditor
from nbagent.loop.context_window import CONTEXT_WINDOWS, window_of
from nbagent.loop.execution import CallOutcome, ToolRunner, interrupted, valid_unicode
from nbagent.loop.history import History, ends_with, last_answer, repaired_after
from nbagent.loop.options import DEFAULT_MODEL, DEFAULT_SYSTEM
from nbagent.loop.reasoning import check_effort, effort_not_sent, reasoning_fields
from nbagent.loop.request import Mode, build_messages, build_tools, check_mode
from nbagent.loop.request_messages import RequestMessages
from nbagent.loop.state import AgentState, check_state
from nbagent.policy.decisions import Asker, Policy

INTERRUPTED_TEXT = "[interrupted by the user]"
"""Closes an assistant message that the user interrupted mid-stream."""


@dataclass(frozen=True)
class ToolCallRecord:
    """One tool call of a run, for the result."""

    name: str
    """The tool's name."""
    input: dict[str, Any]
    """The input the model gave."""
    status: str
    """ok, error, denied or interrupted."""
    duration: float
    """Seconds spent running it."""
    error: str | None = None
    """The message sent to the model when the call failed."""


@dataclass
class AgentResult:
    """What a run produced."""

    text: str
    """The final answer's text."""
    stop_reason: RunStopReason
    """Why the run ended."""
    messages: History
    """The whole conversation so far: a new list of the agent's own messages, which it never
    changes in place (copy one before changing it)."""
    usage: Usage = field(default_factory=Usage)
    """Tokens summed over the run's turns, cache reads and writes included."""
    tool_calls: list[ToolCallRecord] = field(default_factory=list)
    """The tool calls made, in order of completion."""

    def _repr_markdown_(self) -> str:
        """Show the answer in a notebook, rendered as every answer is (no raw HTML, web links
        only: :func:`~nbagent.core.markup.model_markdown`)."""
        return model_markdown(self.text, "nbagent-answer")


class Agent:
    """A conversation with Claude that continues across runs until :meth:`reset`.

    Args:
        registry: The tools; ``nbagent.registry`` by default.
        client: An ``anthropic.Anthropic`` client; one built from the environment by default
            (``ANTHROPIC_API_KEY``, ``ANTHROPIC_BASE_URL``).
        model: The model.
        system: The system prompt.
        max_turns: Model requests per run at most.
        mode: ``native``, ``client``, ``server`` or ``off`` (see :mod:`nbagent.loop.request`).
        max_tokens: The output limit of one response.
        ranker: The ToolSearch ranker.
        policy: The permission policy.
        asker: Asks the user when the policy says ``ask``.
        announcement_style: ``plain`` or ``compact``.
        legacy_announcements: List every deferred tool at the head of the conversation
            instead of announcing changes (breaks the prompt cache; for comparison).
        server_search: ``bm25`` or ``regex``, in ``server`` mode.
        stream_retries: How often a turn whose stream broke off is sent again.
        preload_budget: Predictive preloading: before a conversation's first request, load
            the deferred tools the prompt clearly needs, within this many tokens; off when
            None (:mod:`nbagent.catalogue.preload`).
        usage_store: Usage-based promotion: a :class:`~nbagent.catalogue.promotion.UsageStore` that
            counts calls of deferred tools; tools used often are loaded from the start of a
            conversation. Off when None.
        compaction: ``server`` (the API compacts the conversation past ``compact_threshold``
            input tokens; where the endpoint refuses that, nbagent summarises instead),
            ``client`` (nbagent asks the model for a summary) or ``off``.
        compact_threshold: Input tokens of a request from which the conversation is
            compacted (by nbagent when below
            :data:`~nbagent.loop.compaction.SERVER_MIN_TRIGGER`, the API's least).
        context_windows: Context windows by model, over
            :data:`~nbagent.loop.context_window.CONTEXT_WINDOWS`.
        context_editing: How old tool results are cleared
            (:mod:`nbagent.loop.context_editing`); None to keep them all.
        cell_budget: Dollars one run may spend (:mod:`nbagent.loop.budget`, priced from
            ``prices``); None for no limit.
        effort: ``low`` to ``max`` (``output_config.effort``), or None for the model's own.
        thinking: ``adaptive`` (where the model has it, :mod:`nbagent.loop.reasoning`) or
            ``off``.

    Raises:
        ConfigurationError: The mode or ranker is unknown.
    """

    def __init__(
        self,
        registry: ToolRegistry | None = None,
        client: Any = None,
        model: str = DEFAULT_MODEL,
        system: str | None = DEFAULT_SYSTEM,
        max_turns: int = 25,
        mode: Mode = "native",
        *,
        max_tokens: int = 8192,
        ranker: str = "keyword",
        policy: Policy | None = None,
        asker: Asker | None = None,
        announcement_style: Style = "plain",
        legacy_announcements: bool = False,
        server_search: str = "bm25",
        stream_retries: int = 2,
        preload_budget: int | None = None,
        usage_store: Any = None,
        compaction: Compaction = "server",
        compact_threshold: int = 150_000,
        context_windows: Mapping[str, int] | None = None,
        context_editing: ContextEditing | None = ContextEditing(),  # noqa: B008 (frozen)
        cell_budget: float | None = None,
        effort: str | None = None,
        thinking: str = "adaptive",
    ) -> None:
        if registry is None:
            from nbagent.catalogue.process import process_registry

            registry = process_registry()
        self.registry = registry
        self._client = client
        self._default: tuple[tuple[str | None, ...], Any] | None = None
        """The client built from the environment, with the variables it was built from."""
        self.model = model
        self.system = system
        self.max_turns = max_turns
        self.mode = check_mode(mode)
        self.max_tokens = max_tokens
        self.search = ToolSearch(registry, ranker)
        self.announcement_style: Style = announcement_style
        self.legacy_announcements = legacy_announcements
        self.server_search = server_search
        self.stream_retries = stream_retries
        self.runner = ToolRunner(self._resolve, policy=policy, asker=asker)
        self.preload_budget = preload_budget
        self.usage_store = usage_store
        self.compaction: Compaction = compaction
        self.compact_threshold = compact_threshold
        self.context_windows: Mapping[str, int] = context_windows or CONTEXT_WINDOWS
        self.messages: History = TrackedList()
        """The conversation (an ``nbagent.core.tracked.TrackedList``, so that what reads it
        again reads only what changed)."""
        self.reminders: list[Callable[[History], str | None]] = []
        """Called with the history as a run starts: each text returned (a
        ``<system-reminder>``) goes into the new user message after the prompt."""
        self.usage = Usage()
        self.last_prompt_tokens = 0
        """Input tokens of the last request (cached ones included): how full the context is."""
        self._loaded: dict[str, Tool] = {}
        self.announcements = Announcements()
        """What the history announced and where it was last compacted, kept up to date."""
        self._repaired: list[dict[str, Any]] = []
        """The history as the last repair left it: valid, so that the next repair reads
        only what differs from it."""
        self._repaired_since = Since(self.messages)
        """The history as it was when :attr:`_repaired` was taken."""
        self._request_messages = RequestMessages()
        self._preloaded: list[str] = []
        self.compactor = Compactor(self)
        self.context_editing = context_editing
        self.editor = ContextEditor(self)
        self.cell_budget = cell_budget
        self.effort = check_effort(effort)
        self.thinking = thinking
        self.prices: Mapping[str, Price] = PRICES
        """The price table the budget is counted with."""
        self.server_min_trigger = SERVER_MIN_TRIGGER
        """Thresholds below this are compacted by nbagent, not the API."""

    @property
    def client(self) -> Any:
        """The API client given, else one built from the environment on first use and built
        again when the environment's key or address changed since (``%env
        ANTHROPIC_API_KEY=...``, an offline demo model started again)."""
        if self._client is not None:
            return self._client
        from nbagent.api.anthropic import CLIENT_VARIABLES, default_client

        seen = tuple(os.environ.get(name) for name in CLIENT_VARIABLES)
        if self._default is None or self._default[0] != seen:
            self._default = (seen, default_client())
        return self._default[1]

    @property
    def loaded_names(self) -> list[str]:
        """Deferred tools the model has loaded in this conversation, in order."""
        return list(self._loaded)

    @property
    def context_window(self) -> int:
        """The model's context window in tokens."""
        return window_of(self.model, self.context_windows)

    def announced_names(self) -> set[str]:
        """The deferred names the model has been told of, read back from the conversation."""
        return set(self.announcements.names(self.messages))

    def reset(self) -> None:
        """Forget the conversation and what it loaded."""
        self.restore(AgentState())

    def snapshot(self, *, history: bool = True) -> AgentState:
        """What the agent knows of its conversation, to save or to :meth:`restore` later.

        Args:
            history: False to leave the history out (no messages): for whoever reads the
                history itself and only what changed in it (the recorder), not a copy.

        Returns:
            The history (the agent's own message objects, in a new tuple), the deferred tools
            loaded, those sent in full, the last request's size, the tokens used and how many
            first messages the last repair left as they are.
        """
        return AgentState(
            messages=tuple(self.messages[:]) if history else (),  # a slice: at C speed
            loaded=tuple(self._loaded),
            expanded=tuple(self.compactor.expanded),
            preloaded=tuple(self._preloaded),
            prompt_tokens=self.last_prompt_tokens,
            usage=self.usage,
            valid=self._valid(),
        )

    def restore(self, state: AgentState, stand_ins: Mapping[str, Tool] | None = None) -> None:
        """Replace the agent's conversation by a state (:meth:`snapshot`'s, or a saved one's).

        The history is taken as it is: the next run repairs it first
        (:func:`~nbagent.loop.history.repaired`) if the API would refuse it, from the
        state's :attr:`~nbagent.loop.state.AgentState.valid` first messages on.

        Args:
            state: The state.
            stand_ins: Tools to take as loaded in place of those the registry does not have
                (a conversation resumed after the tools it loaded are gone), by name.

        Raises:
            StateError: The state does not fit this agent (:func:`~nbagent.loop.state.check_state`);
                the agent is then left as it was.
        """
        available: dict[str, Tool] = {}
        for name in state.loaded:
            tool = self.registry.get(name) if name in self.registry else None
            if tool is not None and self.registry.is_deferred(tool):
                available[name] = tool
            elif stand_ins is not None and name in stand_ins:
                available[name] = stand_ins[name]
        check_state(state, available)
        self.messages = TrackedList(state.messages)
        self._repaired = self.messages[: state.valid]
        self._repaired_since = Since(self.messages)
        self.usage = state.usage
        self.last_prompt_tokens = state.prompt_tokens
        self._loaded = {name: available[name] for name in state.loaded}
        self.compactor.expanded = list(state.expanded)
        self._preloaded = list(state.preloaded)

    def run(self, prompt: str, on_event: Callable[[Event], None] | None = None) -> AgentResult:
        """Run the agent on a prompt until the model stops.

        Args:
            prompt: The user's message.
            on_event: Called with every event as it happens (for a live display).

        Returns:
            The run's result.

        Raises:
            ModelAPIError: The API refused a request or failed after retries.
        """
        calls: list[ToolCallRecord] = []
        started: dict[str, ToolCallStarted] = {}
        events: list[Event] = []
        stream: Generator[Event, None, None] = self.events(prompt)
        try:
            for event in stream:
                events.append(event)
                if on_event is not None:
                    on_event(event)
        except KeyboardInterrupt:
            for event in self._interrupt(stream):
                events.append(event)
                if on_event is not None:
                    on_event(event)
        for event in events:
            if isinstance(event, ToolCallStarted):
                started[event.id] = event
            elif isinstance(event, ToolCallFinished):
                error = event.content if event.status != "ok" else None
                calls.append(
                    ToolCallRecord(
                        name=event.name,
                        input=started[event.id].input if event.id in started else {},
                        status=event.status,
                        duration=event.duration,
                        error=error if isinstance(error, str) else None,
                    )
                )
            elif isinstance(event, RunFinished):
                return AgentResult(
                    text=event.text,
                    stop_reason=event.stop_reason,
                    messages=self.messages[:],
                    usage=event.usage,
                    tool_calls=calls,
                )
        raise AssertionError("a run always ends with RunFinished")

    def _interrupt(self, stream: Generator[Event, None, None]) -> list[Event]:
        """Deliver an interrupt that hit the observer to the run, where it is handled.

        The run then closes its partial answer or answers its pending tool calls, as if the
        interrupt had come while it was working.

        Returns:
            The events the run yielded while it stopped, ending with RunFinished.
        """
        drained: list[Event] = []
        try:
            drained.append(stream.throw(KeyboardInterrupt))
            while not isinstance(drained[-1], RunFinished):
                drained.append(next(stream))
        except (KeyboardInterrupt, StopIteration):
            drained.append(RunFinished("interrupted", INTERRUPTED_TEXT, Usage()))
        stream.close()
        self._repair_history()
        return drained

    def _repair_history(self) -> None:
        """Make the history one the API accepts again (:func:`~nbagent.loop.history.repaired`):
        a run stopped between two steps leaves tool calls without results."""
        valid = self._valid()
        base, fixed = repaired_after(self.messages, valid)  # the messages from ``base`` on
        start = base + same_prefix(self.messages[base:], fixed)
        if start < max(base + len(fixed), len(self.messages)):
            self.messages[start:] = fixed[start - base :]
        kept = min(valid, start)
        del self._repaired[kept:]
        self._repaired += self.messages[kept:]
        self._repaired_since = Since(self.messages)

    def _valid(self) -> int:
        """How many first messages are as the last repair left them: those the history's
        marks show unchanged since, and the equal ones after them."""
        return equal_prefix_since(self._repaired, self.messages, self._repaired_since)

    def events(self, prompt: str) -> Generator[Event, None, None]:
        """Run the agent on a prompt, yielding what happens.

        Ctrl-C (KeyboardInterrupt) ends the run cleanly: the history stays valid (a partial
        answer is kept and marked, unfinished tool calls get an "interrupted" result) and a
        final :class:`RunFinished` with ``interrupted`` is yielded. So does the cancellation
        of the tool call a run belongs to (a sub-agent's, :mod:`nbagent.loop.cellthread`): it is
        checked before each model request and each tool call, and between streamed events.

        Args:
            prompt: The user's message.

        Yields:
            The run's events, ending with RunFinished.

        Raises:
            ModelAPIError: The API refused a request or failed after retries.
        """
        self._repair_history()
        if not self.messages:
            yield from self._prepare_conversation(prompt)
        history_length = len(self.messages)
        notes = [note for remind in self.reminders if (note := remind(self.messages))]
        yield from self._add_user_content(
            [{"type": "text", "text": valid_unicode(t)} for t in (prompt, *notes)]
        )
        if unpriced := unpriced_budget(self.model, self.cell_budget, self.prices):
            yield Notice(unpriced, level="warning")
        if unsent := effort_not_sent(self.model, self.effort):
            yield Notice(unsent, level="warning")
        usage = Usage()
        cancel = cellthread.cancellation()
        for turn in range(1, self.max_turns + 1):
            yield TurnStarted(turn)
            try:
                if cancel is not None:
                    cancel.check()
                if self.compactor.due():
                    yield from self.compactor.summarise()
                ask = functools.partial(self.compactor.ask, self._stream_turn)
                response = yield from self.editor.ask(ask)
            except (KeyboardInterrupt, Cancelled):
                yield RunFinished("interrupted", INTERRUPTED_TEXT, usage)
                return
            except ModelAPIError:
                if turn == 1:
                    del self.messages[history_length:]
                raise
            usage += response.usage
            self.usage += response.usage
            self.last_prompt_tokens = response.usage.total_input_tokens
            yield UsageReported(response.usage)
            yield from self.editor.after_response(response)
            self._add_assistant_content(response.content)
            self._note_server_search(response.content)
            yield from self.compactor.after_response(response.content)
            if response.stop_reason == "pause_turn":
                continue
            calls = [b for b in response.content if b.get("type") == "tool_use"]
            if not calls:
                yield RunFinished(
                    _stop_reason(response.stop_reason), response_text(response), usage
                )
                return
            finished = yield from self._run_tools(calls)
            if not finished:
                yield RunFinished("interrupted", INTERRUPTED_TEXT, usage)
                return
            if spent := budget_notice(usage, self.model, self.cell_budget, self.prices):
                yield Notice(spent, level="warning")
                yield RunFinished("budget", last_answer(self.messages), usage)
                return
        yield Notice(f"Stopped after {self.max_turns} turns (max_turns).", level="warning")
        yield RunFinished("max_turns", last_answer(self.messages), usage)

    def _stream_turn(self) -> Generator[Event, None, ModelResponse]:
        """Stream one response, sending the turn again if the stream breaks off."""
        cancel = cellthread.cancellation()
        for attempt in range(self.stream_retries + 1):
            request = self._request()
            betas = (*self.compactor.betas(request), *self.editor.betas(request))
            streamed: list[str] = []
            try:
                with cellthread.acting(cancel):
                    if cancel is not None:
                        cancel.check()
                    for item in stream_response(self.client, request, betas, cancel):
                        if isinstance(item, ModelResponse):
                            return item
                        if isinstance(item, TextDelta):
                            streamed.append(item.text)
                        yield item
                raise StreamDropped("The stream ended without a message.")
            except (KeyboardInterrupt, Cancelled):
                text = "".join(streamed).strip()
                content = f"{text}\n\n{INTERRUPTED_TEXT}" if text else INTERRUPTED_TEXT
                self.messages.append(
                    {"role": "assistant", "content": [{"type": "text", "text": content}]}
                )
                raise
            except StreamDropped as exc:
                if attempt == self.stream_retries:
                    raise
                yield Notice(f"{str(exc).rstrip('.')}. Sending the turn again.", level="warning")
        raise AssertionError("unreachable")

    def _request(self, messages: list[dict[str, Any]] | None = None) -> dict[str, Any]:
        """Build this turn's request (or a summary's, from other messages)."""
        build = build_messages if messages is not None else self._request_messages.build
        request: dict[str, Any] = {
            "model": self.model,
            "max_tokens": self.max_tokens if messages is None else SUMMARY_MAX_TOKENS,
            "messages": build(
                self.editor.messages(self.messages) if messages is None else messages,
                [t.name for t in self.registry.deferred()] if self.legacy_announcements else None,
            ),
            "tools": build_tools(
                self.registry,
                self.mode,
                self.search.tool,
                self.loaded_names,
                self._loaded,
                self.server_search,
                [*self._preloaded, *self.compactor.expanded],
            ),
        }
        if self.system:
            request["system"] = self.system
        if messages is None:
            request.update(reasoning_fields(self.model, self.effort, self.thinking))
        edits = [*self.editor.edits(), *self.compactor.edits()] if messages is None else []
        if edits:
            request["context_management"] = {"edits": edits}
        return request

    # -- keeping the conversation inside the context window ---------------------------------

    def compact(self) -> Generator[Event, None, None]:
        """Compact the conversation now: a summary by the model replaces the earlier turns.

        Yields:
            The events of the summary request (usage, a notice of what was compacted).

        Raises:
            ModelAPIError: The API refused the summary request.
        """
        self._repair_history()
        yield from self.compactor.summarise()

    def _run_tools(self, calls: list[dict[str, Any]]) -> Generator[Event, None, bool]:
        """Run one turn's tool calls and append their results; False if interrupted.

        On an interrupt (or the cancellation of the work the run belongs to), the calls that
        started and did not finish end as ``interrupted``.
        """
        outcomes: dict[str, CallOutcome] = {}
        started: dict[str, float] = {}
        try:
            # Closed on the way out, whatever the way: the calls it started are told to stop
            # before their cards end as interrupted.
            with closing(self.runner.run(calls, outcomes)) as events:
                for event in events:
                    if isinstance(event, ToolCallStarted):
                        started[event.id] = time.perf_counter()
                    yield event
                    outcome = outcomes.get(getattr(event, "id", ""))
                    if isinstance(event, ToolCallFinished) and outcome is not None:
                        yield from self._after_call(outcome)
        except (KeyboardInterrupt, Cancelled):
            stopped = time.perf_counter()
            results = [outcomes[c["id"]].block() for c in calls if c["id"] in outcomes]
            if results:
                self.messages.append({"role": "user", "content": results})
            self._repair_history()  # answers the calls that did not finish as interrupted
            for call in calls:
                if call["id"] in started and call["id"] not in outcomes:
                    yield interrupted(call, stopped - started[call["id"]]).finished()
            return False
        results = [outcomes[c["id"]].block() for c in calls]
        yield from self._add_user_content(results)
        return True

    def _prepare_conversation(self, prompt: str) -> Iterator[Event]:
        """Promote often-used tools and preload the ones the first prompt needs (if on)."""
        if self.usage_store is not None:
            deferred = [t.name for t in self.registry.deferred()]
            promoted = self.usage_store.promoted(candidates=deferred)
            for name in promoted:
                self.registry.override(name, deferred=False)
            if promoted:
                yield Notice(
                    f"Loaded from the start, as you use them often: {', '.join(promoted)}."
                )
        if self.preload_budget and self.mode != "off":
            from nbagent.catalogue.preload import preload

            chosen = preload(self.search, prompt, self.preload_budget)
            self._preloaded = [name for name in chosen.names if self._load(name)]
            if self._preloaded:
                picks = ", ".join(f"{p.name} ({p.reason})" for p in chosen.picks)
                yield Notice(f"Preloaded for this prompt ({chosen.tokens:,} tokens): {picks}.")

    def _after_call(self, outcome: CallOutcome) -> Iterator[Event]:
        """Count uses of deferred tools; note what a ToolSearch call loaded."""
        if (
            self.usage_store is not None
            and outcome.status == "ok"
            and outcome.name in self.registry
        ):
            if self.registry.is_deferred(self.registry.get(outcome.name)) or outcome.name in (
                self.registry.overrides()
            ):
                self.usage_store.record(outcome.name)
        if outcome.name != TOOL_SEARCH_NAME or outcome.status != "ok":
            return
        hits = tuple(outcome.result.metadata.get("hits", ()))
        loaded = tuple(h.name for h in hits if self._load(h.name))
        metadata = outcome.result.metadata
        yield ToolSearchResults(
            outcome.id, metadata.get("query", ""), hits, loaded, metadata.get("fallback", "")
        )

    def _load(self, name: str) -> bool:
        """Remember that the model loaded a deferred tool; True if it was not loaded before."""
        if name in self._loaded or name not in self.registry:
            return False
        tool = self.registry.get(name)
        if not self.registry.is_deferred(tool):
            return False
        self._loaded[name] = tool
        return True

    def _note_server_search(self, content: list[dict[str, Any]]) -> None:
        """Record the tools that the API's own tool search loaded."""
        for block in content:
            if block.get("type") == "tool_search_tool_result":
                for reference in block.get("content", {}).get("tool_references", []):
                    self._load(reference.get("tool_name", ""))

    def _add_assistant_content(self, blocks: list[dict[str, Any]]) -> None:
        """Append the model's answer; after a ``pause_turn`` it continues the paused message."""
        if ends_with(self.messages, "assistant"):
            last = self.messages[-1]
            self.messages[-1] = {**last, "content": [*last["content"], *blocks]}
        else:
            self.messages.append({"role": "assistant", "content": blocks})

    def _add_user_content(self, blocks: list[dict[str, Any]]) -> Iterator[Event]:
        """Append a user turn (merged into a trailing user turn), announcing tool-set changes."""
        if self.mode != "off" and not self.legacy_announcements:
            delta = self.announcements.delta(self.registry.deferred_names(), self.messages)
            if delta is not None:
                text = delta.render(self.announcement_style)
                blocks = [*blocks, {"type": "text", "text": text}]
                yield ToolSetAnnounced(
                    delta.added_names, delta.removed_names, text, initial=not self.messages
                )
        if ends_with(self.messages, "user"):
            last = self.messages[-1]
            self.messages[-1] = {**last, "content": [*last["content"], *blocks]}
        else:
            self.messages.append({"role": "user", "content": blocks})

    @functools.cached_property
    def _client_search_tool(self) -> Tool:
        """ToolSearch for endpoints without tool_reference: it names what it loaded."""

        def handler(query: str, max_results: int = 5) -> ToolResult:
            found = self.search.tool.call({"query": query, "max_results": max_results})
            if isinstance(found.content, str):
                return found
            names = ", ".join(block["tool_name"] for block in found.content)
            text = f"Loaded: {names}. Their definitions are in your tools from the next turn."
            return ToolResult(content=text, metadata=found.metadata)

        return dataclasses.replace(self.search.tool, handler=handler)

    def _resolve(self, name: str) -> Tool:
        """Find the tool the model called, or explain why it cannot be called."""
        if name == TOOL_SEARCH_NAME and self.mode == "native":
            return self.search.tool
        if name == TOOL_SEARCH_NAME and self.mode == "client":
            return self._client_search_tool
        if name not in self.registry:
            if name in self._loaded:
                raise ToolError(f"Tool {name} is no longer available (its server disconnected).")
            raise ToolError(f"No tool named {name!r} is available.")
        tool = self.registry.get(name)
        if self.mode != "off" and self.registry.is_deferred(tool) and name not in self._loaded:
            raise ToolError(
                f"Tool {name} is deferred and not loaded: call ToolSearch with "
                f'"select:{name}" first.'
            )
        return tool


def _stop_reason(reason: str) -> RunStopReason:
    """Map the API's stop reason onto the run's."""
    known: tuple[RunStopReason, ...] = ("end_turn", "stop_sequence", "max_tokens", "refusal")
    return reason if reason in known else "end_turn"  # type: ignore[return-value]
