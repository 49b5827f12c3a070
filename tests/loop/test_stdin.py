"""Answers on a real kernel's stdin (jupyter_client) reach only the question they were typed
for: a reply to a withdrawn question's box does nothing and says so. nbagent's requests are
marked for its JupyterLab extension; a withdrawn question is said on the front end that shows
its box when that front end has the extension, else in the cell."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from nbagent.loop import stdin
from nbagent.orchestration.subagent import SUBAGENT_SYSTEM
from nbagent.testing import FakeAnthropicServer, Reply
from tests.frontend_peer import FrontEndPeer
from tests.kernels import answer_request, execute
from tests.orchestration.test_subagent_kernel import load, results_in, started

WITHDRAWN = (
    "(Question withdrawn: its call reached its time limit. An answer typed now does nothing.)"
)


def test_outside_a_kernel_a_question_is_plain_input(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("builtins.input", lambda prompt: f"typed at {prompt}")
    assert stdin.ask("? ") == "typed at ? "


def withdrawn_then_asked(body: dict[str, Any]) -> Reply:
    """A sub-agent asks about one command and is abandoned at its time limit; then the agent
    itself asks about another."""
    if body.get("system") == SUBAGENT_SYSTEM:
        return Reply.tool_use("Bash", {"command": "echo first"})
    if not results_in(body):
        return Reply.tool_use("Agent", {"description": "first", "prompt": "Run it."})
    if len(body["messages"]) == 3:
        return Reply.tool_use("Bash", {"command": "rm -rf data"})
    return Reply.text("Done.")


@pytest.mark.slow
def test_an_answer_typed_in_a_withdrawn_questions_box_does_not_answer_the_next_question(
    fake_api: FakeAnthropicServer, tmp_path: Path
) -> None:
    """Before: ipykernel gave the stale "y" to the open question, and ``rm -rf data`` ran."""
    fake_api.enqueue(*[withdrawn_then_asked] * 4)
    requests: list[dict[str, Any]] = []

    def person(prompt: str, request: dict[str, Any]) -> str | None:
        requests.append(request)
        if len(requests) == 1:
            return None  # the first question is left until it is withdrawn
        stale = requests[0]
        answer_request(execute_client, "y", stale)  # typed into the first box, still on screen
        return "n"

    with started(fake_api, tmp_path) as (_, client):
        execute_client = client
        load(client)
        assert execute(client, "%config NbAgent.call_timeout = 2").status == "ok"
        run = execute(client, "%%agent -o result\nGo.", stdin=person)
        assert run.status == "ok", run.error
        check = execute(client, "print(ran, [c.status for c in result.tool_calls])")
    prompts = [r["content"]["prompt"].split("?")[0] for r in requests]
    assert prompts == ["Allow Bash: echo first", "Allow Bash: rm -rf data"]
    assert all(r["metadata"] == stdin.METADATA for r in requests)  # the extension knows them
    assert check.text.strip() == "[] ['error', 'denied']", check.text  # abandoned, refused
    assert WITHDRAWN in run.text  # no front end with the extension shows it on the box
    assert "Your answer 'y' to 'Allow Bash: echo first?' did nothing" in run.text
    assert "Done." in run.text


@pytest.mark.slow
def test_a_front_end_with_the_extension_shows_the_withdrawn_question_the_cell_does_not(
    fake_api: FakeAnthropicServer, tmp_path: Path
) -> None:
    """The front end that runs the cell (and shows the boxes) is told which request was
    withdrawn and why; the cell's output keeps no line about it, and the card says it."""
    fake_api.enqueue(*[withdrawn_then_asked] * 4)
    requests: list[dict[str, Any]] = []

    def person(prompt: str, request: dict[str, Any]) -> str | None:
        requests.append(request)
        return None if len(requests) == 1 else "n"

    notebook = tmp_path / "withdrawn.ipynb"
    notebook.write_text('{"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}')
    with started(fake_api, tmp_path) as (manager, client):
        load(client)
        assert execute(client, "%config NbAgent.call_timeout = 2").status == "ok"
        peer = FrontEndPeer(manager, notebook)
        try:
            client.session.session = peer.client_id  # the page runs the cell and shows it
            run = execute(client, "%%agent\nGo.", stdin=person)
        finally:
            peer.close()
    assert run.status == "ok", run.error
    withdrawn = [r for r in peer.requests if r["op"] == "withdrawn"]
    first = requests[0]["header"]["msg_id"]
    assert [(r["request"], r["reason"]) for r in withdrawn] == [
        (first, "its call reached its time limit")
    ]
    assert "Question withdrawn" not in run.text
    assert "Bash echo first → interrupted · question withdrawn" in run.text
    assert "asked: echo first · withdrawn before an answer" in run.text
    assert "Done." in run.text


@pytest.mark.slow
def test_a_reply_that_names_no_request_answers_the_open_question(
    fake_api: FakeAnthropicServer, tmp_path: Path
) -> None:
    """A console's reply carries no parent header: it answers the question asked."""
    fake_api.enqueue(Reply.tool_use("Bash", {"command": "echo hi"}), Reply.text("Done."))

    def console(prompt: str, request: dict[str, Any]) -> None:
        execute_client.input("y")

    with started(fake_api, tmp_path) as (_, client):
        execute_client = client
        load(client)
        run = execute(client, "%%agent\nGo.", stdin=console)
        assert run.status == "ok", run.error
        check = execute(client, "print(ran)")
    assert check.text.strip() == "[('echo hi', True)]"
