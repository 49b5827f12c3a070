"""Tests of nbagent.policy.combining: a tool's hook and the policy make one decision."""

from __future__ import annotations

from pathlib import Path

import pytest

from nbagent.core.tool import Tool
from nbagent.policy.combining import decide
from nbagent.policy.decisions import allow, ask, deny, explain
from nbagent.policy.permissions import PermissionPolicy
from tests.policy.helpers import FETCH, READ, WRITE


def hooked(decision: object) -> Tool:
    return Tool(name="RunCode", check_permission=lambda _input: decision)


def test_decisions_combine_deny_then_explicit_allow_then_strictest() -> None:
    assert decide(hooked(None), {}, None) == allow()
    asked = decide(hooked(ask("sure?")), {}, lambda t, i: allow("mode default"))
    assert asked.behavior == "ask" and asked.always == "RunCode"
    assert (
        decide(hooked(ask("sure?")), {}, lambda t, i: allow("rule", explicit=True)).rule == "rule"
    )
    assert decide(hooked(deny("no")), {}, lambda t, i: allow("rule", explicit=True)).message == "no"
    assert decide(hooked(True), {}, None).behavior == "allow"
    assert decide(hooked(False), {}, None).behavior == "deny"
    with pytest.raises(TypeError, match="return a PermissionDecision"):
        decide(hooked("yes"), {}, None)


def test_a_hook_that_explains_adds_its_words_to_a_question_and_decides_nothing(
    tmp_path: Path,
) -> None:
    words = explain("```python\nx = 1\n```", "insert a code cell")
    explained = Tool(name="NotebookEdit", check_permission=lambda _input: words)
    asked = decide(explained, {}, PermissionPolicy("default", root=tmp_path))
    assert (asked.behavior, asked.rule, asked.always) == ("ask", "mode default", "NotebookEdit")
    assert (asked.message, asked.request) == (words.message, "insert a code cell")
    outside = decide(explained, {}, lambda t, i: ask("Outside the folder.", "outside", "E(x)"))
    assert outside.message == "Outside the folder.\n\n```python\nx = 1\n```"
    assert (outside.rule, outside.always) == ("outside", "E(x)")
    allowed = decide(explained, {}, PermissionPolicy("acceptEdits", root=tmp_path))
    assert allowed == allow("mode acceptEdits")
    assert decide(explained, {}, None) == allow()
    assert decide(explained, {}, lambda t, i: deny("no", "rule")) == deny("no", "rule")


def test_without_a_policy_credentials_and_the_working_folder_still_hold(
    home: Path, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(project)
    assert decide(READ, {"file_path": "~/.ssh/id_rsa"}, None).behavior == "deny"
    assert decide(READ, {"file_path": "../elsewhere.txt"}, None).behavior == "ask"
    assert decide(WRITE, {"file_path": "notes.txt"}, None).behavior == "allow"
    assert decide(FETCH, {"url": "http://127.0.0.1/"}, None).behavior == "deny"
