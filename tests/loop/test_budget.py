"""A run's cost budget: it stops cleanly at the first turn boundary past the budget, says
so, and the next run goes on from there."""

from __future__ import annotations

from typing import Any

from nbagent.api.pricing import PRICES, estimate
from nbagent.catalogue.registry import ToolRegistry
from nbagent.core.events import Notice, Usage
from nbagent.loop.agent import Agent
from nbagent.loop.budget import budget_notice, unpriced_budget
from nbagent.testing import FakeAnthropicServer, Reply
from tests.loop.test_agent import echo
from tests.shells import error_of, run

MODEL = "claude-sonnet-5-5"


def test_the_run_stops_past_its_budget_and_the_next_goes_on(
    fake_api: FakeAnthropicServer,
) -> None:
    agent = Agent(registry=ToolRegistry([echo]), client=fake_api.client(), cell_budget=1e-6)
    fake_api.enqueue(Reply.tool_use("echo", {"text": "one"}))
    events: list[Any] = []
    result = agent.run("Echo twice.", on_event=events.append)
    assert result.stop_reason == "budget"
    assert len(fake_api.requests) == 1 and fake_api.pending == 0  # stopped at the boundary
    (notice,) = [e for e in events if isinstance(e, Notice)]
    assert notice.level == "warning" and notice.message.startswith("Stopped at the cell's budget")
    assert agent.messages[-1]["content"][0]["type"] == "tool_result"
    agent.cell_budget = None
    fake_api.enqueue(Reply.text("Done."))
    assert agent.run("Go on.").text == "Done."
    last = fake_api.requests[-1].body["messages"][-1]["content"]
    assert [b["type"] for b in last][:2] == ["tool_result", "text"]  # one valid user turn
    fake_api.assert_no_errors()


def test_under_the_budget_nothing_stops(fake_api: FakeAnthropicServer) -> None:
    agent = Agent(registry=ToolRegistry([echo]), client=fake_api.client(), cell_budget=5.0)
    fake_api.enqueue(Reply.tool_use("echo", {"text": "one"}), Reply.text("Done."))
    assert agent.run("Echo.").stop_reason == "end_turn"


def test_the_notice_prices_the_usage() -> None:
    usage = Usage(input_tokens=100_000, output_tokens=10_000)
    spent = estimate(usage, MODEL, PRICES)
    assert spent is not None and spent > 0
    assert budget_notice(usage, MODEL, None, PRICES) is None
    assert budget_notice(usage, MODEL, spent * 2, PRICES) is None
    notice = budget_notice(usage, MODEL, spent / 2, PRICES)
    assert notice is not None and f"${spent:.3f}" in notice and f"${spent / 2:.2f}" in notice
    assert budget_notice(usage, "unpriced-model", 0.01, {}) is None


def test_the_budget_option_of_a_cell(ip: Any, fake_api: FakeAnthropicServer) -> None:
    """--budget stops that cell only; the setting applies to cells without it."""
    fake_api.enqueue(Reply.tool_use("Glob", {"pattern": "*.nothing"}))
    result, shown = run(ip, "%%agent --budget 0.000001\nList the files.")
    assert result.success, error_of(result)
    assert "Stopped at the cell's budget" in shown
    fake_api.enqueue(Reply.text("Nothing there."))
    result, shown = run(ip, "%%agent\nGo on.")
    assert "Nothing there." in shown and "budget" not in shown
    result, _ = run(ip, "%%agent --budget 0\nGo on.")
    assert "--budget must be more than 0 dollars" in str(error_of(result))
    ip.run_line_magic("config", "NbAgent.cell_budget = 0.5")
    _, status = run(ip, "%agent status")
    assert "**effort** `default` · **thinking** `adaptive` · **cell budget** $0.50" in status
    ip.run_line_magic("config", "NbAgent.cell_budget = 0.000001")
    fake_api.enqueue(Reply.tool_use("Glob", {"pattern": "*.nothing"}))
    _, shown = run(ip, "%%agent\nAgain.")
    assert "Stopped at the cell's budget" in shown
    ip.run_line_magic("config", "NbAgent.cell_budget = 0")


def test_a_budget_without_a_price_is_said(fake_api: FakeAnthropicServer) -> None:
    """A model with no price cannot be held to a budget: the run says so and goes on."""
    assert unpriced_budget(MODEL, 1.0, PRICES) is None
    assert unpriced_budget("claude-unpriced", None, PRICES) is None
    agent = Agent(
        registry=ToolRegistry([echo]),
        client=fake_api.client(),
        model="claude-unpriced",
        cell_budget=1e-6,
    )
    fake_api.enqueue(Reply.tool_use("echo", {"text": "one"}), Reply.text("Done."))
    events: list[Any] = []
    assert agent.run("Echo.", on_event=events.append).stop_reason == "end_turn"
    (notice,) = [e for e in events if isinstance(e, Notice)]
    assert notice.message.startswith("No price is known for claude-unpriced")
    assert "c.NbAgent.prices" in notice.message
