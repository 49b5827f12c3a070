"""Tests of nbagent.policy.calls: what a permission question says a call would do."""

from __future__ import annotations

from nbagent.core.tool import Tool
from nbagent.policy.calls import describe_request
from tests.policy.helpers import BASH, EDIT, FETCH, RESOURCES


def test_a_request_reads_as_the_command_the_path_or_the_input() -> None:
    assert describe_request(BASH, {"command": "git status", "timeout": 5}) == "git status"
    assert describe_request(EDIT, {"file_path": "a.py", "old_string": "x"}) == "a.py"
    assert describe_request(Tool(name="T"), {"city": "Rome", "days": 3}) == "city='Rome', days=3"


def test_a_question_names_what_the_call_touches() -> None:
    assert describe_request(FETCH, {"url": "https://docs.python.org/3/"}) == (
        "https://docs.python.org/3/"
    )
    assert describe_request(RESOURCES, {"server": "github", "uri": "x"}) == "github"
