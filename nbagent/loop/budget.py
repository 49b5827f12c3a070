"""A cost budget per run (``%%agent --budget 0.50``, ``c.NbAgent.cell_budget``).

At each turn boundary (the tool results of a turn appended, so that the history is one the
API accepts), what the run has cost so far is priced from the price table
(:func:`~nbagent.api.pricing.estimate`); once it reaches the budget the run stops, saying so.
The next run goes on from there: its prompt joins the last tool results.
"""

from __future__ import annotations

from collections.abc import Mapping

from nbagent.api.pricing import Price, estimate
from nbagent.core.events import Usage


def budget_notice(
    usage: Usage, model: str, budget: float | None, prices: Mapping[str, Price]
) -> str | None:
    """Whether a run has spent its budget, and what to say if it has.

    Args:
        usage: The run's tokens so far.
        model: The model its requests named.
        budget: Dollars the run may spend; None for no budget.
        prices: The price table.

    Returns:
        The message saying the run stopped, or None to go on (no budget, not reached, or no
        price known for the model).
    """
    if budget is None:
        return None
    spent = estimate(usage, model, prices)
    if spent is None or spent < budget:
        return None
    return (
        f"Stopped at the cell's budget: about ${spent:.3f} spent of ${budget:.2f}. Run another "
        "%%agent cell to go on (--budget sets this cell's, c.NbAgent.cell_budget the default)."
    )


def unpriced_budget(model: str, budget: float | None, prices: Mapping[str, Price]) -> str | None:
    """What to say when a run has a budget that cannot be counted (no price for its model).

    Args:
        model: The model.
        budget: The run's budget, or None.
        prices: The price table.
    """
    if budget is None or estimate(Usage(), model, prices) is not None:
        return None
    return (
        f"No price is known for {model}, so the ${budget:.2f} budget cannot be counted: give "
        'its price in c.NbAgent.prices (e.g. {"' + model + '": {"input": 3, "output": 15, '
        '"cache_write": 3.75, "cache_read": 0.3}}).'
    )
