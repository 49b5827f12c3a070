"""Fixtures of the ranker tests: a tiny deterministic embedder (test modules take it as a
fixture rather than importing this file, whose module name other test folders share)."""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Sequence

import numpy as np
import pytest

from nbagent.catalogue.rankers.fields import tokens


class HashingEmbedder:
    """A bag-of-tokens embedder: texts sharing tokens are similar. Counts its calls."""

    model_id = "test/hashing"
    dimension = 64
    multilingual = False

    def __init__(self) -> None:
        self.embedded: list[str] = []

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.embedded += texts
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        for row, text in enumerate(texts):
            for token in tokens(text):
                digest = hashlib.blake2b(token.encode(), digest_size=2).digest()
                out[row, int.from_bytes(digest) % self.dimension] += 1
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return out / np.where(norms == 0, 1, norms)


@pytest.fixture
def hashing() -> HashingEmbedder:
    """A fresh hashing embedder."""
    return HashingEmbedder()


@pytest.fixture
def new_hashing() -> type[HashingEmbedder]:
    """The hashing embedder's class, to make more of them."""
    return HashingEmbedder


class RefusingEmbedder:
    """Embeds like a :class:`HashingEmbedder` but raises for texts starting with ``prefix``."""

    dimension = 64
    multilingual = False

    def __init__(self, prefix: str, error: Exception) -> None:
        self.model_id = f"test/refusing-{prefix}"
        self.prefix, self.error = prefix, error
        self.inner = HashingEmbedder()

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if any(t.startswith(self.prefix) for t in texts):
            raise self.error
        return self.inner.embed(texts)


@pytest.fixture
def refusing() -> type[RefusingEmbedder]:
    """The refusing embedder's class: ``refusing(prefix, error)``."""
    return RefusingEmbedder


class GatedEmbedder:
    """Wraps an embedder: texts holding ``marker`` wait for :attr:`gate`; :attr:`entered` is
    set when one waits (tool texts hold ``server:``, queries do not)."""

    def __init__(self, inner: HashingEmbedder, marker: str = ":") -> None:
        self.inner, self.marker = inner, marker
        self.model_id = f"{inner.model_id}-gated-{marker}"
        self.dimension, self.multilingual = inner.dimension, inner.multilingual
        self.gate, self.entered = threading.Event(), threading.Event()

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if any(self.marker in t for t in texts):
            self.entered.set()
            assert self.gate.wait(30)
        return self.inner.embed(texts)


@pytest.fixture
def gated() -> type[GatedEmbedder]:
    """The gated embedder's class: ``gated(inner, marker=":")``."""
    return GatedEmbedder
