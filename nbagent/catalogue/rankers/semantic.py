"""Embedding similarity of a query to the searched tools, with the tools embedded off-thread.

A tool is embedded as one line of prose: its server, its name's words, search hint,
description and parameter names (:attr:`~nbagent.catalogue.rankers.fields.ToolFields.text`), by each
embedder (:data:`~nbagent.catalogue.rankers.embedder.DEFAULT_EMBEDDERS`: MiniLM and the multilingual
USE). A query's similarity to the tools is, for each embedder, the cosine standardised over
the catalogue (minus the mean, over the standard deviation: the models' cosines live on
different scales), averaged with the embedders' weights, then rescaled to [0, 1] (the worst
tool 0, the best 1). An English-only embedder sits out a query written in Chinese, Japanese
or Korean.

A long query (a task of several steps) asks for several tools, and one embedding of it, cut to
the model's length, blurs them or loses the later ones. So a query of more than
:data:`WINDOW` terms is also embedded window by window (:func:`query_texts`), and a tool's
similarity is ``(1 - WINDOW_SHARE) * whole + WINDOW_SHARE * best window`` (each one
standardised; :func:`pooled`): a tool close to one step of the task comes up even when the
whole text is about something else. A short query is embedded once, as before.

Nobody waits for a model. :meth:`SemanticIndex.index` returns at once; a thread of the
index's own loads the models and embeds the tools not in the cache (in memory and under
``~/.nbagent/embeddings``), in batches, dropping a batch's work for a tool set that a newer
call replaced. A change of the set (:meth:`SemanticIndex.place`, which the hybrid ranker calls
with the positions BM25 gave the tools added and removed) embeds the new texts only; the
thread then copies the previous matrices and changes the rows of those positions. Until the
vectors of the latest set are ready :meth:`SemanticIndex.similarity` answers ``None`` and the
rankers rank by BM25, saying so (:attr:`SemanticIndex.status`). A tool whose text no model
could embed gets no similarity (``NaN``), and the rankers score it by BM25 alone.
"""

from __future__ import annotations

import os
import threading
import weakref
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from nbagent.catalogue.rankers.embedder import (
    DEFAULT_CACHE_DIR,
    DEFAULT_EMBEDDERS,
    Embedder,
    EmbeddingCache,
)
from nbagent.catalogue.rankers.fields import ToolFields
from nbagent.catalogue.toolsearch import Term
from nbagent.core.secrets import get_logger
from nbagent.core.tool import Tool

if TYPE_CHECKING:
    import numpy as np

log = get_logger(__name__)

NICE = 19
"""The nice value of the embedding thread: the lowest priority."""

WINDOW = 16
"""A query of more terms than this is also embedded in windows of this many terms (fitted on
the dev sets, ``benchmarks/fit_weights.py``)."""

WINDOW_SHARE = 0.75
"""The best window's share of a long query's similarity (fitted on the dev sets)."""

EmbedderSource = Embedder | Callable[[], Embedder]
"""An embedder, or a function that builds one (called on the indexing thread)."""


@dataclass(frozen=True)
class Similarity:
    """A query's similarity to every tool of the indexed set."""

    values: np.ndarray
    """One similarity in [0, 1] per tool in indexing order (``NaN`` for a tool not embedded)."""
    windows: tuple[str, ...] = ()
    """A long query's windows (:func:`query_texts`); empty for a short query."""
    closest: np.ndarray | None = None
    """For a long query, the position in :attr:`windows` of each tool's closest window."""

    def closest_window(self, position: int) -> str | None:
        """The window of the query closest to one tool, or ``None`` for a short query.

        Args:
            position: The tool's position in indexing order.
        """
        return None if self.closest is None else self.windows[int(self.closest[position])]


@dataclass(frozen=True)
class _Job:
    """One tool set to embed."""

    generation: int
    """Counts the calls of ``index``; a newer job supersedes an older one."""
    texts: tuple[str | None, ...]
    """The tools' texts by position (``None`` for a free position)."""


@dataclass(frozen=True)
class _Vectors:
    """The vectors of one tool set, ready for queries."""

    generation: int
    """The job they belong to."""
    matrices: tuple[np.ndarray, ...]
    """One ``(tools, dimension)`` matrix per embedder (zero rows for tools not embedded)."""
    embedded: np.ndarray
    """Whether each tool has a vector from every embedder."""
    texts: tuple[str | None, ...]
    """The text at each position (``None`` for a free one)."""


class SemanticIndex:
    """Embeds the searched tools in the background and scores queries against them.

    Args:
        embedders: Embedders or factories of embedders;
            :data:`~nbagent.catalogue.rankers.embedder.DEFAULT_EMBEDDERS` when not given.
        weights: The weight of each embedder in the average; the fitted ones for the
            defaults, else equal weights.
        cache_dir: Where to persist tool vectors; ``None`` keeps them in memory only.
        background: Embed on the index's thread (``False``: inside :meth:`index`, for
            scripts that want the vectors at once).
    """

    def __init__(
        self,
        embedders: Sequence[EmbedderSource] | None = None,
        weights: Sequence[float] | None = None,
        cache_dir: Path | None = DEFAULT_CACHE_DIR,
        background: bool = True,
    ) -> None:
        if embedders is None:
            embedders = [factory for factory, _ in DEFAULT_EMBEDDERS]
            weights = weights or [weight for _, weight in DEFAULT_EMBEDDERS]
        self._sources = list(embedders)
        self._weights = list(weights or [1.0] * len(self._sources))
        self._cache_dir = cache_dir
        self._background = background
        self._caches: list[EmbeddingCache] = []
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._idle = threading.Event()
        self._job = _Job(0, ())
        self._texts: list[str | None] = []
        self._vectors: _Vectors | None = None
        self._done: list[int] = []
        self._error: str | None = None
        self._thread: threading.Thread | None = None

    @property
    def ready(self) -> bool:
        """Whether the vectors of the latest tool set are ready."""
        vectors = self._vectors
        return vectors is not None and vectors.generation == self._job.generation

    @property
    def status(self) -> str:
        """How far the index is: ``ready``, what it is doing, or why it cannot work."""
        if self._error:
            return f"embeddings unavailable: {self._error}"
        if self.ready:
            return "ready"
        if not self._caches:
            return "loading the embedding models"
        done = sum(self._done) / max(1, len(self._done))
        return f"embedding the tools: {done:.0f} of {len(set(self._job.texts) - {None})} done"

    @property
    def caches(self) -> list[EmbeddingCache]:
        """The vector cache of each embedder (empty until the models are loaded)."""
        return list(self._caches)

    def index(self, tools: Sequence[Tool]) -> None:
        """Make these tools the searched set, at positions ``0, 1, ...`` in their order; their
        vectors are computed on the index's thread.

        Args:
            tools: The deferred tools.
        """
        self._texts = [ToolFields.of(tool).text for tool in tools]
        self._submit()

    def place(self, size: int, changes: Mapping[int, Tool | None]) -> None:
        """Change the tools at some positions (the rest stay); vectors are computed for the new
        texts only, on the index's thread.

        Args:
            size: How many positions there are now (free ones included).
            changes: The tool now at each changed position, ``None`` where it became free.
        """
        del self._texts[size:]
        self._texts += [None] * (size - len(self._texts))
        for position, tool in changes.items():
            self._texts[position] = None if tool is None else ToolFields.of(tool).text
        self._submit()

    def _submit(self) -> None:
        """Make the current texts the newest job and wake the thread (or embed now)."""
        with self._lock:
            self._job = _Job(self._job.generation + 1, tuple(self._texts))
            self._idle.clear()
            self._wake.set()
            if self._background and self._thread is None:
                self._thread = threading.Thread(
                    target=_embed_in_background,
                    args=(weakref.ref(self), self._wake),
                    name="nbagent-embeddings",
                    daemon=True,
                )
                self._thread.start()
        if not self._background:
            self._wake.clear()
            self._work()

    def wait(self, timeout: float | None = None) -> bool:
        """Wait until the latest tool set is embedded (or the models failed to load).

        Args:
            timeout: The most seconds to wait; ``None`` for no limit.

        Returns:
            Whether the index is idle (ready, or failed: see :attr:`status`).
        """
        return self._idle.wait(timeout)

    def similarity(self, terms: Sequence[Term]) -> Similarity | None:
        """Compare the query with every tool of the latest set.

        Args:
            terms: The query's terms.

        Returns:
            The similarities (and, for a long query, each tool's closest window), or ``None``
            while the vectors are not ready or when no embedder applies (an English-only model
            and a CJK query).
        """
        import numpy as np

        vectors = self._vectors
        if vectors is None or vectors.generation != self._job.generation:
            return None
        chosen = [
            (cache, matrix, weight)
            for cache, matrix, weight in zip(
                self._caches, vectors.matrices, self._weights, strict=True
            )
            if weight > 0 and (cache.embedder.multilingual or not only_cjk(terms))
        ]
        if not chosen:
            return None
        embedded = vectors.embedded
        texts = query_texts(terms)
        total = np.zeros(len(embedded), dtype=np.float32)
        windows = np.zeros((len(texts) - 1, len(embedded)), dtype=np.float32)
        for cache, matrix, weight in chosen:
            query = getattr(cache.embedder, "embed_query", cache.embedder.embed)
            rows = [standardised(matrix @ v, embedded) for v in query(texts)]
            total += weight * pooled(rows)
            if len(rows) > 1:
                windows += weight * np.stack(rows[1:])
        total /= sum(weight for _, _, weight in chosen)
        values = rescaled(total, embedded)
        if len(texts) == 1:
            return Similarity(values)
        return Similarity(values, tuple(texts[1:]), windows.argmax(axis=0))

    def _work(self) -> None:
        """Load the models once, embed the newest job's texts, publish its vectors."""
        import numpy as np

        try:
            if not self._caches:
                self._caches = [
                    EmbeddingCache(
                        source if hasattr(source, "embed") else source(), self._cache_dir
                    )
                    for source in self._sources
                ]
        except Exception as exc:
            self._error = f"{type(exc).__name__}: {exc}"
            log.warning("ToolSearch ranks by BM25 alone: %s", self._error)
            self._idle.set()
            return
        job = self._job
        previous = self._vectors
        old = previous.texts if previous is not None else ()
        changed = [row for row, text in enumerate(job.texts) if row >= len(old) or text != old[row]]
        rows = [row for row in changed if job.texts[row] is not None]
        texts: list[str] = [job.texts[row] for row in rows]  # type: ignore[misc]
        distinct = list(dict.fromkeys(texts))
        kept = len(set(job.texts) - {None}) - len(distinct)
        self._done = [kept + sum(v is not None for v in c.lookup(distinct)) for c in self._caches]

        def superseded() -> bool:
            return self._job.generation != job.generation

        for position, cache in enumerate(self._caches):
            cache.fill(texts, stop=superseded, progress=partial(self._progress, position, kept))
        if superseded():
            return
        size, same = len(job.texts), min(len(job.texts), len(old))
        embedded = np.zeros(size, dtype=bool)
        matrices = []
        if previous is not None:
            embedded[:same] = previous.embedded[:same]
        embedded[changed] = False
        embedded[rows] = True
        for position, cache in enumerate(self._caches):
            matrix = np.zeros((size, cache.embedder.dimension), dtype=np.float32)
            if previous is not None:
                matrix[:same] = previous.matrices[position][:same]
            matrix[changed] = 0.0
            stacked, present = cache.stacked(texts)
            matrix[rows] = stacked
            matrices.append(matrix)
            embedded[rows] &= present
        with self._lock:
            if not superseded():
                self._vectors = _Vectors(job.generation, tuple(matrices), embedded, job.texts)
                self._idle.set()

    def _progress(self, position: int, kept: int, done: int) -> None:
        """Record an embedder's progress: the texts kept from before and those now done."""
        self._done[position] = kept + done


def _embed_in_background(reference: weakref.ref[SemanticIndex], wake: threading.Event) -> None:
    """The index's thread: embed each newest job, until the models fail to load or the index
    is collected (the thread holds it weakly, so an unloaded extension leaves nothing behind).
    """
    _lower_priority()
    while True:
        woken = wake.wait(60)
        index = reference()
        if index is None or index._error is not None:
            return
        if woken:
            wake.clear()
            index._work()
        del index


def _lower_priority() -> None:
    """Give the calling thread the lowest CPU priority, where the system allows it (Linux
    schedules threads by their own nice value), so the kernel's cells come first."""
    try:
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), NICE)
    except (AttributeError, OSError):
        pass


def only_cjk(terms: Sequence[Term]) -> bool:
    """Whether every term of a query is Chinese, Japanese or Korean (no spaced-script word)."""
    return all(not term.units.words for term in terms)


def query_texts(terms: Sequence[Term], window: int = WINDOW) -> list[str]:
    """The texts a query is embedded as: the whole of it, then its windows if it is long.

    Args:
        terms: The query's terms.
        window: The most terms a query has to be embedded once only; also each window's size.

    Returns:
        The terms joined by spaces; when there are more than ``window`` of them, followed by
        each run of ``window`` consecutive terms (the last one shorter).
    """
    words = [term.text for term in terms]
    whole = " ".join(words)
    if len(words) <= window:
        return [whole]
    return [whole, *(" ".join(words[i : i + window]) for i in range(0, len(words), window))]


def pooled(rows: Sequence[np.ndarray], share: float = WINDOW_SHARE) -> np.ndarray:
    """Combine a query's standardised similarities: the whole query's with its best window's.

    Args:
        rows: The whole query's similarities, then each window's (see :func:`query_texts`).
        share: The best window's share.

    Returns:
        ``rows[0]`` alone for a short query, else ``(1 - share) * rows[0] + share *`` the
        tool's highest similarity to any window.
    """
    import numpy as np

    if len(rows) == 1:
        return rows[0]
    return (1 - share) * rows[0] + share * np.max(rows[1:], axis=0)


def standardised(values: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Centre and scale values by the mean and standard deviation of those under the mask.

    Args:
        values: One value per tool.
        mask: The tools that count.

    Returns:
        The standardised values (zeros when they do not vary).
    """
    import numpy as np

    counted = values[mask]
    if counted.size == 0:
        return np.zeros_like(values)
    spread = float(counted.std())
    return (values - counted.mean()) / spread if spread > 0 else np.zeros_like(values)


def rescaled(values: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Map the values under the mask onto [0, 1] (lowest 0, highest 1); others become NaN.

    Args:
        values: One value per tool.
        mask: The tools that have a value.

    Returns:
        The rescaled values.
    """
    import numpy as np

    out = np.full(values.shape, np.nan, dtype=np.float32)
    counted = values[mask]
    if counted.size:
        low, high = float(counted.min()), float(counted.max())
        out[mask] = (counted - low) / (high - low) if high > low else 0.0
    return out
