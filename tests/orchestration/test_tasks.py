"""The task list through the loop: found by ToolSearch, updated over turns, shown live."""

from __future__ import annotations

import pytest

from nbagent.catalogue.registry import ToolRegistry
from nbagent.catalogue.toolsearch import ToolSearch
from nbagent.core.errors import ToolError
from nbagent.core.events import TaskListChanged, ToolProgress
from nbagent.loop.agent import Agent
from nbagent.orchestration.tasks import TaskBoard, task_tools
from nbagent.testing import FakeAnthropicServer, Reply
from tests.orchestration.conversation import tool_results


def test_the_model_keeps_a_task_list_over_several_turns(fake_api: FakeAnthropicServer) -> None:
    board = TaskBoard()
    registry = ToolRegistry(task_tools(board))
    fake_api.enqueue(
        Reply.tool_use("ToolSearch", {"query": "todo checklist"}),
        Reply.tool_uses(
            ("TaskCreate", {"subject": "Load the data"}), ("TaskCreate", {"subject": "Plot it"})
        ),
        Reply.tool_use("TaskUpdate", {"task_id": "1", "status": "completed"}),
        Reply.tool_use("TaskUpdate", {"task_id": "9", "status": "completed"}),
        Reply.tool_use("TaskList"),
        Reply.text("Half done."),
    )
    agent = Agent(registry=registry, client=fake_api.client())
    events = list(agent.events("Plan and track."))
    changes = [
        e.event
        for e in events
        if isinstance(e, ToolProgress) and isinstance(e.event, TaskListChanged)
    ]
    assert [[t.status for t in c.tasks] for c in changes] == [
        ["pending"],
        ["pending", "pending"],
        ["completed", "pending"],
    ]
    results = tool_results(agent.messages)
    assert results[-2].startswith("No task '9'; the tasks are: 1, 2.")
    assert results[-1] == "[x] 1. Load the data\n[ ] 2. Plot it"
    assert [t.subject for t in board.snapshot()] == ["Load the data", "Plot it"]


def test_natural_words_find_the_task_tools() -> None:
    search = ToolSearch(ToolRegistry(task_tools(TaskBoard())))
    for query in ("todo", "checklist", "track progress"):
        assert {h.name for h in search.search(query)} >= {"TaskCreate", "TaskUpdate", "TaskList"}


def test_board_rules() -> None:
    board = TaskBoard()
    with pytest.raises(ToolError, match="needs a subject"):
        board.create("  ")
    task = board.create(" Write ")
    assert task.subject == "Write" and task.id == "1"
    assert board.update("1", subject="Write it").subject == "Write it"
    board.clear()
    assert board.render() == "The task list is empty."
