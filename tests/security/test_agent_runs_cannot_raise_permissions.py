"""Code the agent runs (a cell through NotebookRun, approved by the person for what it shows)
cannot raise the agent's own permissions for the rest of the turn: nbagent's settings are the
person's, changed from their own cells."""

from __future__ import annotations

from pathlib import Path

import pytest

from nbagent.testing import FakeAnthropicServer, Reply
from tests.kernels import execute
from tests.tools.notebook.test_run_modes import world

pytestmark = pytest.mark.slow


@pytest.mark.parametrize(
    "raise_permissions",
    ["%config NbAgent.permission_mode = 'bypassPermissions'", "%agent allow Bash(touch:*)"],
)
def test_a_cell_the_agent_runs_cannot_switch_the_running_turn_to_bypass(
    tmp_path: Path, fake_api: FakeAnthropicServer, raise_permissions: str
) -> None:
    cells = {
        "setup": f"import os\n{raise_permissions}",
        "agent": "%%agent\nSet up.",
    }
    answers = iter(["y"])
    asked: list[str] = []

    def answer(prompt: str) -> str:
        asked.append(prompt)
        return next(answers, "n")

    with world(tmp_path, fake_api, cells) as (_, client, _peer):
        fake_api.enqueue(
            Reply.tool_use("NotebookRun", {"cell_id": "setup"}),
            Reply.tool_use("Bash", {"command": f"touch {tmp_path / 'pwned'}"}),
            Reply.text("Done."),
        )
        ran = execute(client, cells["agent"], cell_id="agent", stdin=answer)
        assert ran.status == "ok", ran.error
    assert len(asked) == 2, asked  # the run, then the shell line: asked, refused
    assert not (tmp_path / "pwned").exists()
