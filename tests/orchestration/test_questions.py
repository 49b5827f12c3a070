"""AskUserQuestion through the loop: answered, waited for, interrupted, no stdin."""

from __future__ import annotations

import time
from collections.abc import Sequence

import pytest
from IPython.core.error import StdinNotImplementedError

from nbagent.catalogue.registry import ToolRegistry
from nbagent.catalogue.toolsearch import ToolSearch
from nbagent.loop.agent import Agent
from nbagent.orchestration.questions import ask_user_question_tool
from nbagent.testing import FakeAnthropicServer, Reply


def ask(api: FakeAnthropicServer, answerer, call_timeout: float = 300) -> str:  # type: ignore[no-untyped-def]
    registry = ToolRegistry([ask_user_question_tool(answerer)])
    api.enqueue(
        Reply.tool_use("ToolSearch", {"query": "select:AskUserQuestion"}),
        Reply.tool_use(
            "AskUserQuestion", {"question": "Which colour?", "options": ["red", "blue"]}
        ),
        Reply.text("ok"),
    )
    agent = Agent(registry=registry, client=api.client())
    agent.runner.call_timeout = call_timeout
    agent.run("Ask me.")
    return agent.messages[-2]["content"][0]["content"]


def test_the_answer_goes_back_to_the_model(fake_api: FakeAnthropicServer) -> None:
    seen: list[tuple[str, Sequence[str]]] = []

    def answerer(question: str, options: Sequence[str]) -> str:
        seen.append((question, options))
        return "blue"

    assert ask(fake_api, answerer) == "The user answered: blue"
    assert seen == [("Which colour?", ["red", "blue"])]


def test_a_question_waits_for_the_person_beyond_the_call_time_limit(
    fake_api: FakeAnthropicServer,
) -> None:
    def answerer(question: str, options: Sequence[str]) -> str:
        time.sleep(0.5)  # longer than the time limit below: a person thinks
        return "red"

    assert ask(fake_api, answerer, call_timeout=0.1) == "The user answered: red"


def test_stop_while_a_question_waits_ends_the_run(fake_api: FakeAnthropicServer) -> None:
    def answerer(question: str, options: Sequence[str]) -> str:
        raise KeyboardInterrupt

    registry = ToolRegistry([ask_user_question_tool(answerer)])
    fake_api.enqueue(
        Reply.tool_use("ToolSearch", {"query": "select:AskUserQuestion"}),
        Reply.tool_use("AskUserQuestion", {"question": "Which colour?"}),
    )
    agent = Agent(registry=registry, client=fake_api.client())
    result = agent.run("Ask me.")
    assert result.stop_reason == "interrupted"
    assert result.tool_calls[-1].status == "interrupted"


def test_without_stdin_the_model_decides_alone(fake_api: FakeAnthropicServer) -> None:
    def answerer(question: str, options: Sequence[str]) -> str:
        raise StdinNotImplementedError("no stdin")

    assert ask(fake_api, answerer).startswith("No one can answer questions here")


def test_ask_user_is_found_by_natural_words() -> None:
    search = ToolSearch(ToolRegistry([ask_user_question_tool()]))
    assert search.search("ask user")[0].name == "AskUserQuestion"


@pytest.mark.slow
def test_a_question_answered_through_a_real_kernels_stdin(fake_api: FakeAnthropicServer) -> None:
    from tests.kernels import execute, kernel

    fake_api.enqueue(
        Reply.tool_use("ToolSearch", {"query": "select:AskUserQuestion"}),
        Reply.tool_use(
            "AskUserQuestion", {"question": "Which colour?", "options": ["red", "blue"]}
        ),
        Reply.text("Blue it is."),
    )
    prompts: list[str] = []

    def answer(prompt: str) -> str:
        prompts.append(prompt)
        return "2"

    env = {"ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": fake_api.url}
    with kernel(env) as (_, client):
        execute(client, "%load_ext nbagent")
        run = execute(client, "%%agent -o r\nAsk me a colour.", stdin=answer)
        assert run.status == "ok" and "Blue it is." in run.text
        check = execute(client, "print(r.messages[-2]['content'][0]['content'])")
    assert check.text.strip() == "The user answered: blue"
    assert prompts == ["Which colour?\n  1. red\n  2. blue\n> "]
