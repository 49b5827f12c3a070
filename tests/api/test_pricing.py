"""Tests of nbagent.api.pricing: the price table, estimates, their text and users' price tables."""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from nbagent.api.pricing import (
    CACHE_READ_MULTIPLIER,
    CACHE_WRITE_MULTIPLIER,
    PRICES,
    PRICES_DATE,
    PRICES_SOURCE,
    Price,
    cost_text,
    estimate,
    parse_prices,
    price_for,
)
from nbagent.core.errors import ConfigurationError
from nbagent.core.events import Usage
from nbagent.loop.agent import DEFAULT_MODEL

COUNTS = st.integers(min_value=0, max_value=10**9)
USAGES = st.builds(Usage, COUNTS, COUNTS, COUNTS, COUNTS)
MODELS = st.sampled_from(sorted(PRICES))
FIELDS = [field.name for field in dataclasses.fields(Usage)]


def test_the_table_says_where_and_when_its_figures_were_read() -> None:
    assert PRICES_SOURCE.startswith("https://platform.claude.com/docs/")
    assert PRICES_DATE == "2026-12-01"


@pytest.mark.parametrize("model", [DEFAULT_MODEL, "claude-haiku-4-5", "claude-opus-5"])
def test_the_models_the_project_names_are_priced(model: str) -> None:
    assert price_for(model) is not None


def test_every_cache_write_is_the_5_minute_rate_and_no_cache_read_exceeds_a_tenth() -> None:
    for model, price in PRICES.items():
        assert price.cache_write == pytest.approx(price.input * CACHE_WRITE_MULTIPLIER), model
        assert price.cache_read <= price.input * CACHE_READ_MULTIPLIER + 1e-12, model
        assert 0 < price.input < price.output, model


@pytest.mark.parametrize(
    ("model", "usage", "dollars"),
    [
        # 10k uncached in at $2, 2k out at $10, 5k cache writes at $2.50, 50k reads at $0.10:
        # 0.02 + 0.02 + 0.0125 + 0.005.
        ("claude-sonnet-5-5", Usage(10_000, 2_000, 50_000, 5_000), 0.0575),
        # A million of each at $4 + $20 + $0.20 + $5.
        ("claude-opus-5-5", Usage(10**6, 10**6, 10**6, 10**6), 29.2),
        # 200k cache reads at $0.25 and 1k out at $50: 0.05 + 0.05.
        ("claude-fable-5-1", Usage(0, 1_000, 200_000, 0), 0.1),
        # 1k in at $8 and 1k cache reads at $0.20: 0.008 + 0.0002.
        ("claude-fable-5-2", Usage(1_000, 0, 1_000, 0), 0.0082),
        # 12,345 in at $3 and 678 out at $15: 0.037035 + 0.01017.
        ("claude-sonnet-4-5", Usage(12_345, 678), 0.047205),
        # A million out at $5.
        ("claude-haiku-4-5", Usage(output_tokens=10**6), 5.0),
        # 40k cache writes at $6.25 and 100k reads at $0.50: 0.25 + 0.05.
        ("claude-opus-4-8", Usage(0, 0, 100_000, 40_000), 0.3),
    ],
)
def test_estimates_match_the_hand_computed_figures(
    model: str, usage: Usage, dollars: float
) -> None:
    assert estimate(usage, model) == pytest.approx(dollars, rel=1e-12)


@pytest.mark.parametrize(
    ("model", "family"),
    [
        ("claude-sonnet-4-5-20250929", "claude-sonnet-4-5"),
        ("claude-opus-4-5-20251101", "claude-opus-4-5"),
        ("claude-haiku-4-5-20251001", "claude-haiku-4-5"),
        ("claude-opus-5-5", "claude-opus-5-5"),
        ("claude-opus-5", "claude-opus-5"),
    ],
)
def test_a_dated_snapshot_takes_the_price_of_its_alias(model: str, family: str) -> None:
    assert price_for(model) == PRICES[family]


def test_an_exact_id_is_preferred_over_its_family() -> None:
    prices = {"my-model": Price(1, 2, 3, 4), "my-model-20260101": Price(5, 6, 7, 8)}
    assert price_for("my-model-20260101", prices) == Price(5, 6, 7, 8)
    assert price_for("my-model-20270101", prices) == Price(1, 2, 3, 4)


@pytest.mark.parametrize(
    "model",
    [
        "claude-test",
        "claude-other",
        "claude-sonnet",
        "claude-opus-5-9",
        "claude-sonnet-5-5-fast",
        "claude-haiku-5-5",
        "gpt-nope",
        "",
    ],
)
def test_an_unknown_model_has_no_estimate(model: str) -> None:
    assert price_for(model) is None
    assert estimate(Usage(1_000, 1_000, 1_000, 1_000), model) is None
    assert cost_text(estimate(Usage(1_000), model)) == "cost unknown"


@given(USAGES, MODELS, st.sampled_from(FIELDS), COUNTS)
def test_cost_is_monotone_in_every_token_count(
    usage: Usage, model: str, field: str, more: int
) -> None:
    bigger = dataclasses.replace(usage, **{field: getattr(usage, field) + more})
    assert estimate(bigger, model) >= estimate(usage, model)


@given(USAGES, USAGES, MODELS)
def test_cost_is_additive_over_usage_sums(first: Usage, second: Usage, model: str) -> None:
    total = estimate(first + second, model)
    assert math.isclose(total, estimate(first, model) + estimate(second, model), rel_tol=1e-12)


@given(MODELS)
def test_zero_usage_costs_zero(model: str) -> None:
    assert estimate(Usage(), model) == 0.0
    assert cost_text(estimate(Usage(), model)) == "$0"


@pytest.mark.parametrize(
    ("dollars", "text"),
    [
        (None, "cost unknown"),
        (0.0, "$0"),
        (0.000_000_3, "< $0.001"),
        (0.000_999, "< $0.001"),
        (0.001, "≈ $0.001"),
        (0.0123, "≈ $0.012"),
        (0.0575, "≈ $0.058"),
        (0.456, "≈ $0.46"),
        (3.14159, "≈ $3.14"),
        (99.5, "≈ $99.50"),
        (1234.4, "≈ $1,234"),
    ],
)
def test_cost_text(dollars: float | None, text: str) -> None:
    assert cost_text(dollars) == text


@given(st.floats(min_value=0.001, max_value=1e7))
def test_cost_text_of_a_real_cost_is_it_rounded_to_the_last_digit_shown(dollars: float) -> None:
    text = cost_text(dollars)
    assert text.startswith("≈ $")
    shown = text.removeprefix("≈ $").replace(",", "")
    decimals = len(shown.partition(".")[2])
    assert decimals == (3 if dollars < 0.1 else 2 if dollars < 100 else 0)
    assert abs(float(shown) - dollars) <= 0.5 * 10**-decimals * (1 + 1e-9)


def test_a_users_table_is_parsed() -> None:
    table = {"my-model": {"input": 3, "output": 15, "cache_write": 3.75, "cache_read": 0.3}}
    assert parse_prices(table) == {"my-model": Price(3.0, 15.0, 3.75, 0.3)}
    assert parse_prices({}) == {}


def test_missing_cache_figures_follow_the_api_multipliers() -> None:
    [price] = parse_prices({"my-model": {"input": 4, "output": 20}}).values()
    assert price.cache_write == pytest.approx(5.0)
    assert price.cache_read == pytest.approx(0.4)
    [price] = parse_prices({"my-model": {"input": 4, "output": 20, "cache_read": 0.2}}).values()
    assert (price.cache_write, price.cache_read) == (pytest.approx(5.0), 0.2)


def test_a_users_table_overrides_and_extends_the_built_in_one() -> None:
    prices = PRICES | parse_prices(
        {"claude-sonnet-5-5": {"input": 1, "output": 1}, "my-model": {"input": 0, "output": 0}}
    )
    assert estimate(Usage(output_tokens=10**6), "claude-sonnet-5-5", prices) == 1.0
    assert estimate(Usage(output_tokens=10**6), "claude-sonnet-5-5-20261201", prices) == 1.0
    assert estimate(Usage(10**6, 10**6), "my-model", prices) == 0.0
    assert estimate(Usage(output_tokens=10**6), "claude-haiku-4-5", prices) == 5.0


@given(
    st.text(min_size=1).filter(lambda model: model == model.strip()),
    st.tuples(*[st.floats(min_value=0, max_value=1e6)] * 4),
)
def test_any_table_of_non_negative_figures_is_taken_as_written(
    model: str, figures: tuple[float, float, float, float]
) -> None:
    entry = dict(zip(("input", "output", "cache_write", "cache_read"), figures, strict=True))
    assert parse_prices({model: entry}) == {model: Price(*figures)}


@pytest.mark.parametrize(
    ("table", "fragments"),
    [
        ([("my-model", 3)], ["price table must map model ids", 'e.g. {"my-model": {"input"']),
        ({3: {"input": 3, "output": 15}}, ["the key 3", "as a string", '"claude-sonnet-5-5"']),
        ({"": {"input": 3, "output": 15}}, ["the key ''", "as a string"]),
        ({" my-model": {"input": 3, "output": 15}}, ["' my-model'", "exactly as the API names"]),
        ({"my-model": 3}, ["'my-model' is 3", "a dict of dollars", '"input": 3']),
        (
            {"my-model": {"input": 3, "output": 15, "cached_input": 0.3}},
            [
                "'my-model'",
                "unknown field 'cached_input'",
                "input, output, cache_write, cache_read",
            ],
        ),
        ({"my-model": {"input": 3}}, ["'my-model'", "no 'output' field", "output tokens"]),
        ({"my-model": {"output": 15}}, ["'my-model'", "no 'input' field", '"input": 3']),
        ({"my-model": {"input": "3", "output": 15}}, ["'my-model'", "'input': '3'", "as a number"]),
        ({"my-model": {"input": 3, "output": -1}}, ["'output': -1", "0 or more", '"output": 15']),
        ({"my-model": {"input": 3, "output": True}}, ["'output': True", "as a number"]),
        (
            {"my-model": {"input": math.inf, "output": 15}},
            ["'input': inf", "as a number", '"input": 3'],
        ),
        (
            {"my-model": {"input": 3, "output": 15, "cache_read": math.nan}},
            ["'cache_read': nan", '"cache_read": 0.3'],
        ),
        (
            {"my-model": {"input": 3, "output": 15, "cache_write": None}},
            ["'cache_write': None", '"cache_write": 3.75'],
        ),
    ],
)
def test_a_bad_table_names_the_model_and_field_and_what_to_write(
    table: Any, fragments: list[str]
) -> None:
    with pytest.raises(ConfigurationError) as raised:
        parse_prices(table)
    message = str(raised.value)
    for fragment in fragments:
        assert fragment in message
    assert isinstance(raised.value, ValueError)
