"""The API's facts that the settings' help quotes, apart from the modules that use them.

The price table's source and date (:mod:`nbagent.api.pricing`) and web search's options as a
person writes them (:mod:`nbagent.api.api_tools`): ``c.NbAgent``'s help names them
(:mod:`nbagent.jupyter.config`), and ``%load_ext nbagent`` need not import those modules.
"""

from __future__ import annotations

PRICES_SOURCE = "https://platform.claude.com/docs/en/about-claude/pricing"
"""Where the figures of :data:`~nbagent.api.pricing.PRICES` come from."""

PRICES_DATE = "2026-12-01"
"""The day the figures of :data:`~nbagent.api.pricing.PRICES` were read (ISO 8601)."""

WEB_SEARCH_EXAMPLE = '{"max_uses": 5, "allowed_domains": ["docs.python.org"]}'
"""The options of web search as a person writes them, for messages."""
