"""An agent's state taken out (Agent.snapshot) and put back (Agent.restore), checked."""

from __future__ import annotations

import dataclasses

import pytest

from nbagent.core.events import Usage
from nbagent.core.tool import Tool
from nbagent.loop.state import AgentState, StateError
from nbagent.testing import FakeAnthropicServer, Reply
from tests.loop.test_agent import FORECAST, SEARCH_THEN_CALL, agent_for, bodies


@pytest.fixture(autouse=True)
def _replies(fake_api: FakeAnthropicServer) -> None:
    fake_api.enqueue(*SEARCH_THEN_CALL)


def test_a_restored_state_goes_on_as_the_agent_it_was_taken_from(
    fake_api: FakeAnthropicServer,
) -> None:
    original = agent_for(fake_api)
    original.run("Weather in Paris?")
    state = original.snapshot()
    assert state.loaded == (FORECAST,) and len(state.messages) == 6
    assert state.usage == original.usage and state.usage.output_tokens > 0
    assert state.prompt_tokens == original.last_prompt_tokens > 0

    restored = agent_for(fake_api)
    restored.restore(state)
    assert restored.snapshot() == state
    assert restored.loaded_names == [FORECAST]

    fake_api.enqueue(Reply.text("Rain in Oslo."), Reply.text("Rain in Oslo."))
    original.run("And in Oslo?")
    restored.run("And in Oslo?")
    went_on, from_restored = bodies(fake_api)[-2:]
    assert from_restored == went_on
    # the same history and tools; only the cache's counts differ (the second request hits it)
    after, restored_after = original.snapshot(), restored.snapshot()
    assert dataclasses.replace(after, usage=Usage()) == dataclasses.replace(
        restored_after, usage=Usage()
    )
    assert after.usage.output_tokens == restored_after.usage.output_tokens


def test_a_snapshot_is_not_changed_by_the_next_run(fake_api: FakeAnthropicServer) -> None:
    agent = agent_for(fake_api)
    agent.run("Weather in Paris?")
    state = agent.snapshot()
    before = dataclasses.replace(state)
    fake_api.enqueue(Reply.text("Rain in Oslo."))
    agent.run("And in Oslo?")
    assert state == before and len(agent.snapshot().messages) == len(state.messages) + 2


@pytest.mark.parametrize(
    ("state", "error"),
    [
        (
            AgentState(loaded=("mcp__gone__tool",)),
            "loaded tools mcp__gone__tool are not deferred tools of this agent's registry",
        ),
        (AgentState(loaded=("echo",)), "loaded tools echo are not deferred tools"),
        (
            AgentState(loaded=(FORECAST,), expanded=(FORECAST, "other")),
            "expanded tools other are not loaded",
        ),
        (AgentState(preloaded=(FORECAST,)), "preloaded tools mcp__weather__forecast are not"),
        (
            AgentState(messages=({"role": "system", "content": "be brief"},)),
            "Message 0 of the state is not a user or assistant message",
        ),
        (
            AgentState(messages=({"role": "user", "content": None},)),
            "Message 0 of the state has no text or list of blocks",
        ),
        (AgentState(prompt_tokens=-1), "prompt_tokens cannot be negative"),
        (AgentState(usage=Usage(output_tokens=-5)), "output_tokens cannot be negative"),
    ],
)
def test_a_state_that_does_not_fit_is_refused_and_the_agent_kept(
    fake_api: FakeAnthropicServer, state: AgentState, error: str
) -> None:
    agent = agent_for(fake_api)
    agent.run("Weather in Paris?")
    before = agent.snapshot()
    with pytest.raises(StateError, match=error):
        agent.restore(state)
    assert agent.snapshot() == before


def test_a_stand_in_takes_the_place_of_a_tool_the_registry_lacks(
    fake_api: FakeAnthropicServer,
) -> None:
    gone = Tool(name="mcp__gone__tool", description="Not available.")
    agent = agent_for(fake_api)
    agent.restore(AgentState(loaded=(FORECAST, gone.name)), {gone.name: gone})
    assert agent.loaded_names == [FORECAST, gone.name]
    # the registry's own tool is taken over a stand-in of its name
    agent.restore(AgentState(loaded=(FORECAST,)), {FORECAST: gone})
    assert agent.snapshot().loaded == (FORECAST,)
    agent.run("Weather in Paris?")
    sent = {t["name"]: t for t in bodies(fake_api)[0]["tools"]}
    assert sent[FORECAST]["description"] == "Weather forecast for a city."


def test_reset_restores_the_empty_state(fake_api: FakeAnthropicServer) -> None:
    agent = agent_for(fake_api)
    agent.run("Weather in Paris?")
    agent.reset()
    assert agent.snapshot() == AgentState()
