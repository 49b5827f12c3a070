"""The API's tools: the tools the Messages API runs itself (its "server tools"), offered
through the registry.

A :class:`ServerTool` is a :class:`~nbagent.core.tool.Tool` without a handler: its definition is
the API's typed entry (``{"type": "web_search_20260318", "name": "web_search", ...}``), the
API runs each call inside its own answer (a ``server_tool_use`` block and its result block,
kept in the history as they came), and nothing runs in the kernel. It is deferred like any
other tool, and its local description and search hint are what ToolSearch matches: a
``tool_reference`` to it makes the API load it.

The API runs a server tool without asking, and bills each use, so none is on by default:
``c.NbAgent.server_tools = ["web_search"]`` turns web search on, and ``c.NbAgent.web_search``
holds its options, checked when set (:func:`web_search_options`)::

    c.NbAgent.server_tools = ["web_search"]
    c.NbAgent.web_search = {"max_uses": 5, "allowed_domains": ["docs.python.org"]}

>>> tool = server_tool("web_search", {"max_uses": 3})
>>> tool.definition()
{'type': 'web_search_20260318', 'name': 'web_search', 'max_uses': 3}
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from nbagent.api.pricing import WEB_SEARCH_PRICE
from nbagent.api.quoted import WEB_SEARCH_EXAMPLE
from nbagent.core.errors import ConfigurationError, ToolError
from nbagent.core.tool import Tool, ToolResult

WEB_SEARCH_NAME = "web_search"
"""The name the API gives its web search tool."""

WEB_SEARCH_TYPE = "web_search_20260318"
"""The type of the API's web search tool that nbagent sends (GA)."""

WEB_SEARCH_DESCRIPTION = (
    "Search the web for current information: news, recent events, the latest documentation "
    "and releases, facts past your training data. The Anthropic API runs the search and "
    "gives you the results (title, page, link) to read and cite; each search is billed."
)
"""What ToolSearch matches web search by (the API's typed entry has no description)."""

WEB_SEARCH_HINT = "internet online lookup latest news current docs documentation browse"
"""Extra words ToolSearch matches web search by."""

USER_LOCATION_FIELDS = ("type", "city", "region", "country", "timezone")
"""The fields of web search's ``user_location`` (its ``type`` is ``approximate``)."""


@dataclass(frozen=True, eq=False, repr=False)
class ServerTool(Tool):
    """A tool the API runs: a typed definition and no handler; deferred unless configured.

    Raises:
        ToolDefinitionError: As :class:`~nbagent.core.tool.Tool` does.
    """

    should_defer: bool = True
    """Offer the name only; the model loads the definition with ToolSearch."""
    api_type: str = ""
    """The API's type of the tool, e.g. ``web_search_20260318``."""
    options: Mapping[str, Any] = field(default_factory=dict)
    """The fields sent beside ``type`` and ``name`` (checked for the tool's kind)."""

    @property
    def source(self) -> str:
        """``api``: the Messages API runs the tool."""
        return "api"

    def definition(self) -> dict[str, Any]:
        """Return the API's typed entry: ``type``, ``name`` and the options.

        Returns:
            A new dict; callers may add ``defer_loading`` or ``cache_control`` to it.
        """
        return {"type": self.api_type, "name": self.name, **copy.deepcopy(dict(self.options))}

    def call(self, tool_input: Mapping[str, Any]) -> ToolResult:
        """Refuse: the API runs this tool, in its own answer.

        Raises:
            ToolError: Always, saying so.
        """
        raise ToolError(
            f"{self.name} runs on the Anthropic API, not in the kernel: use it as the API's "
            "server tool (it needs no tool_result)."
        )


@dataclass(frozen=True)
class ServerToolKind:
    """A server tool nbagent can offer, and how its options are checked."""

    name: str
    """The tool's name, as ``c.NbAgent.server_tools`` lists it."""
    api_type: str
    """The API's type."""
    description: str
    """The local description ToolSearch matches."""
    search_hint: str
    """The local search hint."""
    check_options: Callable[[Mapping[str, Any]], dict[str, Any]]
    """Checks a configuration's options; returns the fields to send."""
    price_note: str
    """What it costs, in a few words (for ``%agent status``)."""

    def tool(self, options: Mapping[str, Any]) -> ServerTool:
        """Build the tool with options.

        Args:
            options: The options from configuration.

        Returns:
            The tool.

        Raises:
            ConfigurationError: An option is unusable; the message says what to write.
        """
        return ServerTool(
            name=self.name,
            description=self.description,
            search_hint=self.search_hint,
            read_only=True,
            concurrency_safe=True,
            api_type=self.api_type,
            options=self.check_options(options),
        )


def web_search_options(value: Mapping[str, Any]) -> dict[str, Any]:
    """Check the options of web search (``c.NbAgent.web_search``).

    Args:
        value: ``max_uses`` (searches per request, at least 1), ``allowed_domains`` or
            ``blocked_domains`` (host names without ``https://``, not both) and
            ``user_location`` (``city``, ``region``, ``country``, ``timezone``).

    Returns:
        The fields to send (``user_location`` with its ``type``).

    Raises:
        ConfigurationError: A field is unknown or unusable; the message names it and says
            what to write instead.
    """
    if not isinstance(value, Mapping):
        raise ConfigurationError(
            f"c.NbAgent.web_search must be a dict, e.g. {WEB_SEARCH_EXAMPLE}; got {value!r}."
        )
    known = ("max_uses", "allowed_domains", "blocked_domains", "user_location")
    for key in value:
        if key not in known:
            raise ConfigurationError(
                f"c.NbAgent.web_search has the unknown option {key!r}; its options are "
                f"{', '.join(known)}, e.g. {WEB_SEARCH_EXAMPLE}."
            )
    options: dict[str, Any] = {}
    if "max_uses" in value:
        uses = value["max_uses"]
        if isinstance(uses, bool) or not isinstance(uses, int) or uses < 1:
            raise ConfigurationError(
                f"c.NbAgent.web_search max_uses is {uses!r}; write the most searches one "
                'request may make, a whole number of at least 1, e.g. {"max_uses": 5}.'
            )
        options["max_uses"] = uses
    if "allowed_domains" in value and "blocked_domains" in value:
        raise ConfigurationError(
            "c.NbAgent.web_search has both allowed_domains and blocked_domains, which the API "
            "refuses together; keep one of them."
        )
    for key in ("allowed_domains", "blocked_domains"):
        if key in value:
            options[key] = _domains(key, value[key])
    if "user_location" in value:
        options["user_location"] = _user_location(value["user_location"])
    return options


def _domains(key: str, domains: Any) -> list[str]:
    """Check a list of domains: host names (with an optional path), no scheme."""
    if isinstance(domains, str) or not isinstance(domains, Sequence) or not domains:
        raise ConfigurationError(
            f"c.NbAgent.web_search {key} is {domains!r}; write a list of domains, e.g. "
            f'{{"{key}": ["docs.python.org", "example.com/blog"]}}.'
        )
    for domain in domains:
        if not isinstance(domain, str) or not domain.strip() or " " in domain.strip():
            raise ConfigurationError(
                f"c.NbAgent.web_search {key} has {domain!r}; write each domain as a host "
                'name, e.g. "docs.python.org".'
            )
        if "://" in domain:
            host = domain.split("://", 1)[1]
            raise ConfigurationError(
                f"c.NbAgent.web_search {key} has {domain!r}; write the domain without its "
                f'scheme: "{host}".'
            )
    return [domain.strip() for domain in domains]


def _user_location(location: Any) -> dict[str, Any]:
    """Check a user location: city, region, country (two letters), timezone."""
    example = '{"city": "Oslo", "country": "NO", "timezone": "Europe/Oslo"}'
    if not isinstance(location, Mapping):
        raise ConfigurationError(
            f"c.NbAgent.web_search user_location is {location!r}; write a dict, e.g. {example}."
        )
    checked: dict[str, Any] = {"type": "approximate"}
    for key, text in location.items():
        if key not in USER_LOCATION_FIELDS:
            raise ConfigurationError(
                f"c.NbAgent.web_search user_location has the unknown field {key!r}; its "
                f"fields are {', '.join(USER_LOCATION_FIELDS[1:])}, e.g. {example}."
            )
        if key == "type" and text != "approximate":
            raise ConfigurationError(
                f'c.NbAgent.web_search user_location type is {text!r}; the API takes "approximate" '
                "only (leave it out: nbagent adds it)."
            )
        if not isinstance(text, str) or not text.strip():
            raise ConfigurationError(
                f"c.NbAgent.web_search user_location {key} is {text!r}; write it as text, "
                f"e.g. {example}."
            )
        if key == "country" and not (len(text) == 2 and text.isalpha()):
            raise ConfigurationError(
                f"c.NbAgent.web_search user_location country is {text!r}; write its two-letter "
                'ISO code, e.g. "NO".'
            )
        checked[key] = text
    return checked


SERVER_TOOLS: dict[str, ServerToolKind] = {
    WEB_SEARCH_NAME: ServerToolKind(
        name=WEB_SEARCH_NAME,
        api_type=WEB_SEARCH_TYPE,
        description=WEB_SEARCH_DESCRIPTION,
        search_hint=WEB_SEARCH_HINT,
        check_options=web_search_options,
        price_note=f"${WEB_SEARCH_PRICE * 1000:g} per 1,000 searches, billed by the API",
    ),
}
"""The server tools nbagent can offer, by name."""


def check_names(names: Sequence[str]) -> list[str]:
    """Check a list of server tool names (``c.NbAgent.server_tools``).

    Args:
        names: The names.

    Returns:
        The names, each once, in order.

    Raises:
        ConfigurationError: A name is not a server tool nbagent offers; the message lists
            those it does.
    """
    for name in names:
        if name not in SERVER_TOOLS:
            raise ConfigurationError(
                f"Unknown server tool {name!r}; c.NbAgent.server_tools takes: "
                f'{", ".join(SERVER_TOOLS)} (e.g. ["web_search"]), or [] for none.'
            )
    return list(dict.fromkeys(names))


def server_tool(name: str, options: Mapping[str, Any]) -> ServerTool:
    """Build a server tool by name with its options.

    Args:
        name: A key of :data:`SERVER_TOOLS`.
        options: Its options from configuration.

    Returns:
        The tool.

    Raises:
        ConfigurationError: The name is unknown, or an option unusable.
    """
    check_names([name])
    return SERVER_TOOLS[name].tool(options)


def options_line(tool: ServerTool) -> str:
    """A server tool's options and price in a few words (``%agent status``).

    Args:
        tool: The tool.

    Returns:
        E.g. ``at most 5 searches a request · only docs.python.org · $10 per 1,000
        searches, billed by the API``.
    """
    options = tool.options
    parts = []
    if "max_uses" in options:
        parts.append(f"at most {options['max_uses']} uses a request")
    if "allowed_domains" in options:
        parts.append(f"only {', '.join(options['allowed_domains'])}")
    if "blocked_domains" in options:
        parts.append(f"never {', '.join(options['blocked_domains'])}")
    if "user_location" in options:
        place = [v for k, v in options["user_location"].items() if k != "type"]
        parts.append(f"near {', '.join(place)}")
    kind = SERVER_TOOLS.get(tool.name)
    return " · ".join([*parts, *([kind.price_note] if kind else [])])
