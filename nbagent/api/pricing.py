"""What a cell's tokens cost: a price table per model and an estimate in dollars.

The figures are the Claude API's standard list prices, in US dollars per million tokens, read
on 2026-12-01 from Anthropic's pricing page (:data:`PRICES_SOURCE`), with the rows added or
changed since that page's stored copy taken from Anthropic's model pages
(``https://platform.claude.com/docs/en/models/<model>/overview``) and release notes
(https://platform.claude.com/docs/en/release-notes/overview):

=========================================  =====  ======  ===========  ==========
model                                      input  output  cache write  cache read
=========================================  =====  ======  ===========  ==========
Fable 5.2, Mythos 5.2 (from 2026-11-09)     8.00   40.00        10.00        0.20
Fable 5.1, Mythos 5.1                      10.00   50.00        12.50        0.25
Fable 5, Mythos 5                          10.00   50.00        12.50        1.00
Opus 5.5                                    4.00   20.00         5.00        0.20
Opus 5, 4.8, 4.7, 4.6, 4.5                  5.00   25.00         6.25        0.50
Sonnet 5.5 (cache reads cut on 2026-10-07)  2.00   10.00         2.50        0.10
Sonnet 5                                    2.00   10.00         2.50        0.20
Sonnet 4.6, 4.5                             3.00   15.00         3.75        0.30
Haiku 4.5                                   1.00    5.00         1.25        0.10
=========================================  =====  ======  ===========  ==========

Fable 5.2's input and output prices are in the release notes of 2026-11-09; its cache prices
come from third-party listings that quote the pricing page.

A cache write here is a 5-minute write, 1.25 times the input price. Cache reads are 0.1 times
input on most models but less on some (0.05 on Opus 5.5 and Sonnet 5.5, 0.025 on Fable 5.1
and 5.2), so the table gives every figure rather than deriving them.

Web search, a server tool, costs :data:`WEB_SEARCH_PRICE` a search on every model (10 dollars
per 1,000 searches), beside the tokens its results take. An estimate
leaves out what a :class:`~nbagent.core.events.Usage` cannot show: Batch API discounts, fast mode,
US-only inference (1.1 times), 1-hour cache writes (2 times input) and the fees of other
server tools.

Claude Haiku 5.5 is not in the table: its price depends on each request's prompt length
(five times the rate above 100,000 tokens), which a cell's summed usage does not tell, so its
cost shows as unknown. Add it to a price table of your own if your prompts stay under that
length: ``{"claude-haiku-5-5": {"input": 0.1, "output": 0.5, "cache_write": 0.125,
"cache_read": 0.01}}``.

>>> from nbagent.core.events import Usage
>>> cost_text(estimate(Usage(input_tokens=3_000, output_tokens=500), "claude-sonnet-5-5"))
'≈ $0.011'
>>> cost_text(estimate(Usage(input_tokens=3_000), "my-model"))
'cost unknown'
>>> cost_text(estimate(Usage(input_tokens=3_000, web_search_requests=2), "claude-sonnet-5-5"))
'≈ $0.026'
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from nbagent.api.quoted import PRICES_DATE as PRICES_DATE  # where the table comes from
from nbagent.api.quoted import PRICES_SOURCE as PRICES_SOURCE
from nbagent.core.errors import ConfigurationError
from nbagent.core.events import Usage

WEB_SEARCH_PRICE = 10 / 1000
"""US dollars per web search (``Usage.web_search_requests``): $10 per 1,000 searches."""

CACHE_WRITE_MULTIPLIER = 1.25
"""A 5-minute cache write costs this many times the input price on the Claude API."""
CACHE_READ_MULTIPLIER = 0.1
"""A cache read costs this many times the input price on most Claude models."""

_PER = 1_000_000
_FIELDS = ("input", "output", "cache_write", "cache_read")
_EXAMPLE_FIGURES = {"input": 3, "output": 15, "cache_write": 3.75, "cache_read": 0.3}
_EXAMPLE = json.dumps(_EXAMPLE_FIGURES)
_SNAPSHOT_DATE = re.compile(r"-\d{8}$")
_T = TypeVar("_T")


@dataclass(frozen=True)
class Price:
    """What one model charges, in US dollars per million tokens."""

    input: float
    """Per million uncached input tokens (``Usage.input_tokens``)."""
    output: float
    """Per million output tokens, thinking included (``Usage.output_tokens``)."""
    cache_write: float
    """Per million input tokens written to the prompt cache for 5 minutes
    (``Usage.cache_creation_input_tokens``); 1.25 times ``input`` on the Claude API."""
    cache_read: float
    """Per million input tokens read from the prompt cache (``Usage.cache_read_input_tokens``);
    0.1 times ``input`` on most models, less on some."""


_FABLE_5_2 = Price(input=8.0, output=40.0, cache_write=10.0, cache_read=0.2)
_FABLE_5_1 = Price(input=10.0, output=50.0, cache_write=12.5, cache_read=0.25)
_FABLE_5 = Price(input=10.0, output=50.0, cache_write=12.5, cache_read=1.0)
_OPUS_5_5 = Price(input=4.0, output=20.0, cache_write=5.0, cache_read=0.2)
_OPUS_5 = Price(input=5.0, output=25.0, cache_write=6.25, cache_read=0.5)
_SONNET_5_5 = Price(input=2.0, output=10.0, cache_write=2.5, cache_read=0.1)
_SONNET_5 = Price(input=2.0, output=10.0, cache_write=2.5, cache_read=0.2)
_SONNET_4_6 = Price(input=3.0, output=15.0, cache_write=3.75, cache_read=0.3)
_HAIKU_4_5 = Price(input=1.0, output=5.0, cache_write=1.25, cache_read=0.1)

PRICES: dict[str, Price] = {
    "claude-fable-5-2": _FABLE_5_2,
    "claude-mythos-5-2": _FABLE_5_2,
    "claude-fable-5-1": _FABLE_5_1,
    "claude-mythos-5-1": _FABLE_5_1,
    "claude-fable-5": _FABLE_5,
    "claude-mythos-5": _FABLE_5,
    "claude-opus-5-5": _OPUS_5_5,
    "claude-opus-5": _OPUS_5,
    "claude-opus-4-8": _OPUS_5,
    "claude-opus-4-7": _OPUS_5,
    "claude-opus-4-6": _OPUS_5,
    "claude-opus-4-5": _OPUS_5,
    "claude-sonnet-5-5": _SONNET_5_5,
    "claude-sonnet-5": _SONNET_5,
    "claude-sonnet-4-6": _SONNET_4_6,
    "claude-sonnet-4-5": _SONNET_4_6,
    "claude-haiku-4-5": _HAIKU_4_5,
}
"""The Claude API's list prices of the current models, by model id or alias (see the module
docstring for the source)."""


def model_entry(model: str, table: Mapping[str, _T]) -> _T | None:
    """Find a model's entry in a table by model: by its exact id, else by its id without a
    snapshot date.

    A dated snapshot such as ``claude-sonnet-4-5-20250929`` takes the entry of its alias
    ``claude-sonnet-4-5``. Nothing wider is tried: ``claude-opus-5-9`` does not take the entry
    of ``claude-opus-5``, since a new version may differ.

    Args:
        model: The model id the request named.
        table: Entries by model id or alias.

    Returns:
        The entry, or ``None`` when the table has none for the model.
    """
    if model in table:
        return table[model]
    return table.get(_SNAPSHOT_DATE.sub("", model))


def price_for(model: str, prices: Mapping[str, Price] = PRICES) -> Price | None:
    """Find a model's price (:func:`model_entry`).

    Args:
        model: The model id the request named.
        prices: The price table.

    Returns:
        The price, or ``None`` when the table has no entry for the model.
    """
    return model_entry(model, prices)


def estimate(usage: Usage, model: str, prices: Mapping[str, Price] = PRICES) -> float | None:
    """Estimate what some usage cost at a model's list price.

    Args:
        usage: Tokens of one response or summed over several (a cell's, say).
        model: The model id the requests named.
        prices: The price table (:data:`PRICES`, or it updated with :func:`parse_prices`).

    Returns:
        US dollars, web searches included, or ``None`` when the model's price is unknown.
    """
    price = price_for(model, prices)
    if price is None:
        return None
    tokens = (
        usage.input_tokens * price.input
        + usage.output_tokens * price.output
        + usage.cache_creation_input_tokens * price.cache_write
        + usage.cache_read_input_tokens * price.cache_read
    ) / _PER
    return tokens + usage.web_search_requests * WEB_SEARCH_PRICE


def cost_text(dollars: float | None) -> str:
    """Write an estimated cost for display beside the token counts.

    Args:
        dollars: An :func:`estimate`, or ``None`` when there is none.

    Returns:
        ``$0`` for nothing; ``< $0.001`` below a tenth of a cent; else an approximation to
        three decimals below $0.10 (``≈ $0.012``), to the cent below $100 (``≈ $0.46``,
        ``≈ $12.35``) and to the dollar above (``≈ $1,234``); ``cost unknown`` for ``None``.
    """
    if dollars is None:
        return "cost unknown"
    if dollars == 0:
        return "$0"
    if dollars < 0.001:
        return "< $0.001"
    decimals = 3 if dollars < 0.1 else 2 if dollars < 100 else 0
    return f"≈ ${dollars:,.{decimals}f}"


def parse_prices(value: Mapping[str, Mapping[str, float]]) -> dict[str, Price]:
    """Check a user's price table and build its prices.

    The table maps a model id to its dollars per million tokens, as a ``Dict`` setting holds
    it: ``{"my-model": {"input": 3, "output": 15, "cache_write": 3.75, "cache_read": 0.3}}``.
    ``input`` and ``output`` are required; a missing ``cache_write`` is 1.25 times ``input``
    and a missing ``cache_read`` 0.1 times, the Claude API's multipliers. Merge the result
    over the built-in table to use it: ``PRICES | parse_prices(value)``.

    Args:
        value: The table.

    Returns:
        The price of each model in the table.

    Raises:
        ConfigurationError: The table, a model id, an entry or a figure is unusable; the
            message names the model and the field, and says what to write instead.
    """
    if not isinstance(value, Mapping):
        raise ConfigurationError(
            "The price table must map model ids to prices in dollars per million tokens, "
            f'e.g. {{"my-model": {_EXAMPLE}}}; got {value!r}.'
        )
    return {_model_id(model): _price(model, entry) for model, entry in value.items()}


def _model_id(model: Any) -> str:
    """Return a table key checked as a model id."""
    if not isinstance(model, str) or not model or model != model.strip():
        raise ConfigurationError(
            f"The price table has the key {model!r}; write each model id as a string, exactly "
            'as the API names the model, e.g. "claude-sonnet-5-5".'
        )
    return model


def _price(model: str, entry: Any) -> Price:
    """Build one model's price from its entry in a user's table."""
    if not isinstance(entry, Mapping):
        raise ConfigurationError(
            f"The price of model {model!r} is {entry!r}; write a dict of dollars per million "
            f"tokens, e.g. {_EXAMPLE}."
        )
    unknown = sorted(str(key) for key in entry if key not in _FIELDS)
    if unknown:
        raise ConfigurationError(
            f"The price of model {model!r} has the unknown field {unknown[0]!r}; its fields "
            f"are {', '.join(_FIELDS)}, e.g. {_EXAMPLE}."
        )
    for required in ("input", "output"):
        if required not in entry:
            raise ConfigurationError(
                f"The price of model {model!r} has no {required!r} field; write its dollars "
                f"per million {required} tokens, e.g. {_EXAMPLE}."
            )
    figures = {field: _figure(model, field, entry[field]) for field in entry}
    figures.setdefault("cache_write", figures["input"] * CACHE_WRITE_MULTIPLIER)
    figures.setdefault("cache_read", figures["input"] * CACHE_READ_MULTIPLIER)
    return Price(**figures)


def _figure(model: str, field: str, figure: Any) -> float:
    """Return one figure of a user's price entry, checked as a number of dollars."""
    if (
        isinstance(figure, bool)
        or not isinstance(figure, int | float)
        or not math.isfinite(figure)
        or figure < 0
    ):
        raise ConfigurationError(
            f"The price of model {model!r} has {field!r}: {figure!r}; write dollars per "
            f'million tokens as a number, 0 or more, e.g. "{field}": {_EXAMPLE_FIGURES[field]}.'
        )
    return float(figure)
