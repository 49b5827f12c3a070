"""The agent's own task list: TaskCreate, TaskUpdate, TaskList (deferred).

Each change is reported as a :class:`~nbagent.core.events.TaskListChanged` event, so the cell shows
the list as a live checklist.
"""

from __future__ import annotations

import threading
from dataclasses import replace
from typing import Literal

from nbagent.core.errors import ToolError
from nbagent.core.events import TaskItem, TaskListChanged
from nbagent.core.tool import Tool, tool
from nbagent.loop.execution import emit

Status = Literal["pending", "in_progress", "completed"]


class TaskBoard:
    """A numbered list of tasks, safe to change from several threads."""

    def __init__(self) -> None:
        self._tasks: dict[str, TaskItem] = {}
        self._lock = threading.Lock()

    def create(self, subject: str) -> TaskItem:
        """Add a pending task.

        Args:
            subject: What is to be done.

        Returns:
            The new task.

        Raises:
            ToolError: The subject is empty.
        """
        if not subject.strip():
            raise ToolError("A task needs a subject.")
        with self._lock:
            task = TaskItem(str(len(self._tasks) + 1), subject.strip())
            self._tasks[task.id] = task
        return task

    def update(
        self, task_id: str, status: Status | None = None, subject: str | None = None
    ) -> TaskItem:
        """Change a task's status or subject.

        Args:
            task_id: The task's id.
            status: The new status.
            subject: The new subject.

        Returns:
            The changed task.

        Raises:
            ToolError: No task has that id.
        """
        with self._lock:
            if task_id not in self._tasks:
                known = ", ".join(self._tasks) or "none yet"
                raise ToolError(f"No task {task_id!r}; the tasks are: {known}.")
            task = self._tasks[task_id]
            task = replace(
                task, status=status or task.status, subject=(subject or task.subject).strip()
            )
            self._tasks[task_id] = task
        return task

    def snapshot(self) -> tuple[TaskItem, ...]:
        """The tasks, in order."""
        with self._lock:
            return tuple(self._tasks.values())

    def clear(self) -> None:
        """Forget every task (a new conversation)."""
        with self._lock:
            self._tasks.clear()

    def render(self) -> str:
        """The list as the model reads it: ``[x] 1. subject`` lines."""
        marks = {"pending": "[ ]", "in_progress": "[>]", "completed": "[x]"}
        rows = [f"{marks[t.status]} {t.id}. {t.subject}" for t in self.snapshot()]
        return "\n".join(rows) or "The task list is empty."


def task_tools(board: TaskBoard) -> list[Tool]:
    """Build the task-list tools over a board.

    Args:
        board: The task list.

    Returns:
        TaskCreate, TaskUpdate and TaskList.
    """
    hint = "todo to-do checklist task list plan steps progress track"

    @tool(
        name="TaskCreate",
        read_only=True,
        concurrency_safe=False,
        should_defer=True,
        search_hint=hint,
    )
    def task_create(subject: str) -> str:
        """Add a task to your own to-do list, to track long work step by step.

        Args:
            subject: What is to be done, in a few words.
        """
        task = board.create(subject)
        emit(TaskListChanged(board.snapshot()))
        return f"Task {task.id} created.\n{board.render()}"

    @tool(
        name="TaskUpdate",
        read_only=True,
        concurrency_safe=False,
        should_defer=True,
        search_hint=hint,
    )
    def task_update(task_id: str, status: Status | None = None, subject: str | None = None) -> str:
        """Mark a task of your to-do list in progress or completed, or rename it.

        Args:
            task_id: The task's id, as TaskCreate gave it.
            status: pending, in_progress or completed.
            subject: A new subject.
        """
        board.update(task_id, status, subject)
        emit(TaskListChanged(board.snapshot()))
        return board.render()

    @tool(name="TaskList", read_only=True, should_defer=True, search_hint=hint)
    def task_list() -> str:
        """Show your to-do list with each task's status."""
        return board.render()

    return [task_create, task_update, task_list]
