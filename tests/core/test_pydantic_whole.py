"""Tests of nbagent.core.pydantic_whole: pydantic imported whole, one thread at a time."""

from __future__ import annotations

import subprocess
import sys

THREADS = """
import threading

errors = []


def whole():
    import nbagent.core.pydantic_whole
    import pydantic

    pydantic.create_model("M", a=(int, 1)).model_json_schema()


def store():
    import nbagent.store.records


def run(target):
    try:
        target()
    except Exception as exc:
        errors.append(repr(exc))


threads = [threading.Thread(target=run, args=(f,)) for f in (store, whole, store, whole)]
for thread in threads:
    thread.start()
for thread in threads:
    thread.join()
print(errors)
"""


def test_threads_importing_pydantic_through_it_at_once_each_get_it_whole() -> None:
    for _ in range(3):
        result = subprocess.run(
            [sys.executable, "-c", THREADS], capture_output=True, text=True, check=True
        )
        assert result.stdout.strip() == "[]", result.stdout + result.stderr
