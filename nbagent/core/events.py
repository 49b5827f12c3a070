"""What the agent does, as plain dataclasses: the only thing displays and tests consume.

An :class:`~nbagent.loop.agent.Agent` run is a stream of these events. A front end (widgets, a
terminal, a test) renders them without knowing the loop that made them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

CallStatus = Literal["ok", "error", "denied", "interrupted"]
StopReason = Literal[
    "end_turn",
    "max_tokens",
    "stop_sequence",
    "tool_use",
    "pause_turn",
    "compaction",
    "refusal",
    "model_context_window_exceeded",
]
"""Why the model stopped a message: the Messages API's stop reasons, the beta API's included
(the SDK's ``anthropic.types.beta.BetaStopReason``)."""
RunStopReason = Literal[
    "end_turn", "stop_sequence", "max_tokens", "refusal", "max_turns", "interrupted", "budget"
]
"""Why a run ended: the model's last message stopped it, the turn limit, an interruption, or
the run's cost budget."""


@dataclass(frozen=True)
class Usage:
    """Tokens of one model response, or summed over several."""

    input_tokens: int = 0
    """Input tokens neither read from nor written to the cache."""
    output_tokens: int = 0
    """Tokens the model wrote."""
    cache_read_input_tokens: int = 0
    """Input tokens read from the prompt cache."""
    cache_creation_input_tokens: int = 0
    """Input tokens written to the prompt cache."""
    web_search_requests: int = 0
    """Web searches the API ran (``usage.server_tool_use``), each billed."""

    def __add__(self, other: Usage) -> Usage:
        """Sum two usages field by field."""
        return Usage(
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
            self.cache_read_input_tokens + other.cache_read_input_tokens,
            self.cache_creation_input_tokens + other.cache_creation_input_tokens,
            self.web_search_requests + other.web_search_requests,
        )

    @property
    def total_input_tokens(self) -> int:
        """All input tokens: uncached, read from the cache and written to it."""
        return self.input_tokens + self.cache_read_input_tokens + self.cache_creation_input_tokens

    @property
    def cache_read_share(self) -> float:
        """The share of input tokens read from the cache (0 to 1)."""
        total = self.total_input_tokens
        return self.cache_read_input_tokens / total if total else 0.0


@dataclass(frozen=True)
class TurnStarted:
    """The agent is about to send a request to the model."""

    turn: int
    """1 for the first request of the run."""


@dataclass(frozen=True)
class TextDelta:
    """A piece of the model's answer, as it streams in."""

    text: str
    """The new text."""


@dataclass(frozen=True)
class ToolCallStarted:
    """The agent is about to run a tool the model called."""

    id: str
    """The tool_use id."""
    name: str
    """The tool's name."""
    input: dict[str, Any]
    """The input the model gave."""


@dataclass(frozen=True)
class ToolCallFinished:
    """A tool call ended (or was refused, or interrupted)."""

    id: str
    """The tool_use id."""
    name: str
    """The tool's name."""
    status: CallStatus
    """How it ended."""
    content: str | list[dict[str, Any]]
    """What was sent back to the model."""
    duration: float
    """Seconds spent running it (0 when it did not run)."""
    permission: str = ""
    """The permission decision and the rule that made it, when one applied."""
    summary: str = ""
    """The result in a few words (``42 lines``), when the tool gives one
    (``ToolResult.metadata["summary"]``)."""
    review: str = ""
    """What the card opens on: the change as a diff (words and fenced blocks), when the tool
    gives one (``ToolResult.metadata["review"]``)."""


@dataclass(frozen=True)
class PermissionRequested:
    """A tool call waits for the user's answer before it runs."""

    id: str
    """The tool_use id."""
    name: str
    """The tool's name."""
    request: str
    """What the call would do, as the user reads it: a command, a path, a cell."""
    reason: str = ""
    """Why it needs approval, when the policy said."""
    always: str = ""
    """The allow rule that answering "always" adds (``Bash(git status:*)``)."""


@dataclass(frozen=True)
class PermissionAnswered:
    """The user answered a permission question (the call then runs, or is refused)."""

    id: str
    """The tool_use id."""
    answer: Literal["yes", "no", "always"]
    """What the user answered."""
    rule: str = ""
    """The allow rule added, for "always"."""


@dataclass(frozen=True)
class ToolSearchResults:
    """The model searched for deferred tools."""

    id: str
    """The tool_use id of the search."""
    query: str
    """The query the model sent."""
    hits: tuple[Any, ...]
    """The SearchHits, best first."""
    loaded: tuple[str, ...]
    """Names whose definitions this search loaded into the model's context."""
    fallback: str = ""
    """How the hits were ranked when the ranker could not yet use its full scoring, e.g.
    ``bm25 (loading the embedding models)``; empty otherwise."""


@dataclass(frozen=True)
class ToolSetAnnounced:
    """The model was told that deferred tools appeared or went away."""

    added: tuple[str, ...]
    """Names now available through ToolSearch."""
    removed: tuple[str, ...]
    """Names no longer available."""
    text: str
    """The exact text the model was sent."""
    initial: bool = False
    """The conversation's first announcement (the tools there are from the start), not a
    change during it."""


@dataclass(frozen=True)
class WebPage:
    """One result of a web search."""

    title: str
    """The page's title, as the search gave it (text from the web)."""
    url: str
    """Its address, as the search gave it (not checked: only http and https become links)."""
    page_age: str = ""
    """How old the page is, when the search said (``3 days``)."""


@dataclass(frozen=True)
class WebSearched:
    """The API searched the web for the model, inside its answer (a server tool)."""

    id: str
    """The server_tool_use id."""
    query: str
    """The query the model sent."""
    pages: tuple[WebPage, ...]
    """The results, in the API's order."""
    error: str = ""
    """The API's ``error_code`` when the search failed (``max_uses_exceeded``, ...)."""


@dataclass(frozen=True)
class Citation:
    """A web page that a piece of the answer cites."""

    url: str
    """The page's address."""
    title: str
    """Its title (empty when the API gave none)."""
    cited_text: str
    """The words of the page cited."""


@dataclass(frozen=True)
class TextCited:
    """The text streamed last (one text block of the answer) cites web pages."""

    citations: tuple[Citation, ...]
    """Its citations, in order."""


@dataclass(frozen=True)
class UsageReported:
    """Token usage of one model response."""

    usage: Usage
    """The response's usage."""


@dataclass(frozen=True)
class Notice:
    """Something worth telling the user that is not part of the answer (a retry, a limit)."""

    message: str
    """What happened."""
    level: Literal["info", "warning"] = "info"
    """How much it matters."""
    detail: str = ""
    """More, shown folded under the message (the summary of the model's thinking)."""


@dataclass(frozen=True)
class TaskItem:
    """One entry of the agent's task list."""

    id: str
    """The task's id (``1``, ``2``, ...)."""
    subject: str
    """What is to be done."""
    status: Literal["pending", "in_progress", "completed"] = "pending"
    """Where it stands."""


@dataclass(frozen=True)
class TaskListChanged:
    """The agent's task list changed."""

    tasks: tuple[TaskItem, ...]
    """The whole list, in order."""


@dataclass(frozen=True)
class ToolProgress:
    """Something that happened inside a running tool call (e.g. a sub-agent's own events)."""

    id: str
    """The tool_use id of the call it happened in."""
    event: Event
    """What happened."""


@dataclass(frozen=True)
class RunFinished:
    """The run ended; the last event of every run."""

    stop_reason: RunStopReason
    """Why it ended."""
    text: str
    """The final answer's text."""
    usage: Usage = field(default_factory=Usage)
    """Usage summed over the run."""


Event = (
    TurnStarted
    | TextDelta
    | ToolCallStarted
    | ToolCallFinished
    | PermissionRequested
    | PermissionAnswered
    | ToolSearchResults
    | ToolSetAnnounced
    | WebSearched
    | TextCited
    | UsageReported
    | Notice
    | TaskListChanged
    | ToolProgress
    | RunFinished
)
"""Any event of a run."""
