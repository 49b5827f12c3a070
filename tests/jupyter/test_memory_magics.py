"""Memory in a notebook: the tool registered only while c.NbAgent.memory is on, over the
project's folder, and %agent memory listing it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from nbagent.testing import FakeAnthropicServer, Reply
from tests.shells import error_of, run


def test_memory_in_a_notebook_is_opt_in_and_listed(
    ip: Any, fake_api: FakeAnthropicServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setitem(ip.user_ns, "__session__", str(tmp_path / "project" / "nb.ipynb"))
    _, shown = run(ip, "%agent memory")
    assert "Memory is off" in shown
    fake_api.enqueue(Reply.text("Hi."))
    run(ip, "%%agent\nHello.")
    assert all(t.get("name") != "memory" for t in fake_api.requests[-1].body["tools"])
    ip.run_line_magic("config", "NbAgent.memory = True")
    try:
        fake_api.enqueue(
            Reply.tool_use(
                "memory", {"command": "create", "path": "/memories/a.md", "file_text": "x"}
            ),
            Reply.text("Saved."),
        )
        result, _ = run(ip, "%%agent\nRemember x.")
        assert result.success, error_of(result)
        _, shown = run(ip, "%agent memory")
        assert "/memories/a.md" in shown and "(1 bytes)" in shown
    finally:
        ip.run_line_magic("config", "NbAgent.memory = False")
    fake_api.enqueue(Reply.text("Bye."))
    run(ip, "%%agent\nBye.")
    assert all(t.get("name") != "memory" for t in fake_api.requests[-1].body["tools"])
